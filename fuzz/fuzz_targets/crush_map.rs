//! The CRUSH map parser and mapper: any text gives a typed error or a map whose every rule maps
//! any input without panicking, within bounds: at most `n` results, each a device of the map
//! (or an `indep` hole), no device twice, a replicated pool's up set without holes, and the same
//! answer twice (no hidden state).
#![no_main]

use std::sync::Arc;

use hashroute::crush::{CrushMap, CrushRouter, Pool, Workspace, ITEM_NONE};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // First 4 bytes: the input x; the fifth: replicas and a reweight; the rest: the map text.
    if data.len() < 5 {
        return;
    }
    let x = u32::from_le_bytes([data[0], data[1], data[2], data[3]]);
    let n = usize::from(data[4] % 8) + 1;
    let text = String::from_utf8_lossy(&data[5..]);
    let Ok(map) = CrushMap::parse(&text) else { return };
    let map = Arc::new(map);
    let rules: Vec<u32> = map.rules().map(|(id, _)| id).collect();
    if map.devices().next().is_none() {
        return;
    }
    let (mut out, mut again, mut ws) = (Vec::new(), Vec::new(), Workspace::default());
    for rule in rules {
        let mut router = CrushRouter::new(map.clone(), &rule.to_string()).expect("a listed rule");
        if data[4] & 0x80 != 0 {
            let (_, first) = map.devices().next().expect("a device");
            let first = first.to_owned();
            router = router.with_reweight(&first, f64::from(data[4] & 0x7f) / 127.0).expect("a device of the map");
        }
        router.map_x(x, n, &mut out, &mut ws);
        assert!(out.len() <= n, "{} results for {n} replicas", out.len());
        let mut seen = Vec::new();
        for &d in &out {
            if d == ITEM_NONE {
                continue;
            }
            // A rule may emit a bucket (`choose ... type host` then `emit`): a valid item either way.
            assert!(d >= 0 && map.device_name(d).is_some() || d < 0, "item {d} is not in the map");
            assert!(!seen.contains(&d), "item {d} twice in {out:?}");
            seen.push(d);
        }
        router.map_x(x, n, &mut again, &mut ws);
        assert_eq!(out, again, "the same input mapped twice differently");
        let pool = Pool::new(map.clone(), 1, 64, n, &rule.to_string()).expect("pool");
        let ps = pool.object_pg(&data[..4]);
        assert!(ps < 64);
        pool.up(ps, &mut out, &mut ws);
        if !map.rule_is_erasure(rule) {
            assert!(!out.contains(&ITEM_NONE), "a replicated up set with a hole");
        }
    }
});

//! The decoder of the ring state stored in etcd (`hashroute_etcd::RingState::decode`): arbitrary
//! keys and values give a one-line error or a valid ring, never a panic and never a half-applied
//! ring. Two modes: raw entries (any bytes), and a valid state built through the public API,
//! encoded, then damaged (bytes flipped, cut or inserted in one record, a record dropped or
//! duplicated): the damaged state is refused or decodes to a ring that builds and routes, and
//! the undamaged one decodes back to the same routes. The valid states carry a change log (the
//! ids a writer reads back after a lost answer) of 0 to 4 entries, as the store writes it.
#![no_main]

use arbitrary::Arbitrary;
use hashroute::{Algorithm, Node, Router, RouterSpec};
use hashroute_etcd::RingState;
use libfuzzer_sys::fuzz_target;

const PREFIX: &str = "/fuzz/ring";

#[derive(Arbitrary, Debug)]
enum Input {
    Raw(Vec<(Vec<u8>, Vec<u8>)>),
    Damaged { algo: u8, members: Vec<(String, u8, bool)>, log: u8, damage: Vec<Damage> },
}

#[derive(Arbitrary, Debug)]
enum Damage {
    Flip { record: u8, at: u16, byte: u8 },
    Cut { record: u8, at: u16 },
    Insert { record: u8, at: u16, bytes: Vec<u8> },
    Drop(u8),
    Duplicate(u8),
    Rename { record: u8, suffix: Vec<u8> },
}

fuzz_target!(|input: Input| {
    match input {
        Input::Raw(entries) => {
            let entries = entries.into_iter().take(64).map(|(k, v)| {
                let mut key = format!("{PREFIX}/").into_bytes();
                key.extend_from_slice(&k);
                (key, v)
            });
            decode_and_check(entries.collect());
        }
        Input::Damaged { algo, members, log, damage } => {
            let Some(records) = valid_records(algo, &members, log) else { return };
            let mut records = records;
            for d in damage.iter().take(4) {
                apply(&mut records, d);
            }
            decode_and_check(records);
        }
    }
});

/// A valid state's records: a small ring of the chosen algorithm and members, with the ids of
/// its last `log % 5` changes in the config record.
fn valid_records(algo: u8, members: &[(String, u8, bool)], log: u8) -> Option<Vec<(Vec<u8>, Vec<u8>)>> {
    let spec = match algo % 4 {
        0 => RouterSpec::new(Algorithm::Ring).with_vnodes(8),
        1 => RouterSpec::new(Algorithm::TokenRing).with_tokens_per_node(4),
        2 => RouterSpec::new(Algorithm::Rendezvous),
        _ => RouterSpec::new(Algorithm::Maglev).with_table_size(101),
    };
    let mut state = RingState::new(spec).ok()?;
    for (name, weight, staged) in members.iter().take(8) {
        let node = Node::new(name.clone()).with_weight(f64::from(weight % 4 + 1));
        if let Ok(next) = state.with_member(&node, *staged) {
            state = next;
        }
    }
    let mut records = state.records(PREFIX).expect("a valid state encodes");
    with_change_log(&mut records[0].1, state.serial(), log % 5);
    // The undamaged records decode back to the same routes.
    let back = RingState::decode(PREFIX, records.iter().map(|(k, v)| (k.as_slice(), v.as_slice())))
        .expect("a state's own records decode");
    if let (Ok(a), Ok(b)) = (state.router(), back.router()) {
        assert_eq!(a.fingerprint(), b.fingerprint(), "decode changed the routes");
    }
    Some(records)
}

/// Adds `"changes":[{"id":…,"serial":…},…]` to a config record: the last `n` changes up to
/// `serial` (none before serial 2: init logs no id), as the store writes them.
fn with_change_log(config: &mut Vec<u8>, serial: u64, n: u8) {
    let first = serial.saturating_sub(u64::from(n)).saturating_add(1).max(2);
    let entries: Vec<String> =
        (first..=serial).map(|s| format!("{{\"id\":\"c{s:x}-fuzz\",\"serial\":{s}}}")).collect();
    if entries.is_empty() || config.last() != Some(&b'}') {
        return;
    }
    config.pop();
    config.extend_from_slice(format!(",\"changes\":[{}]}}", entries.join(",")).as_bytes());
}

fn apply(records: &mut Vec<(Vec<u8>, Vec<u8>)>, damage: &Damage) {
    if records.is_empty() {
        return;
    }
    let len = records.len();
    let pick = |i: u8| usize::from(i) % len;
    match damage {
        Damage::Flip { record, at, byte } => {
            let v = &mut records[pick(*record)].1;
            if !v.is_empty() {
                let i = usize::from(*at) % v.len();
                v[i] ^= byte | 1;
            }
        }
        Damage::Cut { record, at } => {
            let v = &mut records[pick(*record)].1;
            let i = usize::from(*at) % (v.len() + 1);
            v.truncate(i);
        }
        Damage::Insert { record, at, bytes } => {
            let v = &mut records[pick(*record)].1;
            let i = usize::from(*at) % (v.len() + 1);
            v.splice(i..i, bytes.iter().copied().take(32));
        }
        Damage::Drop(i) => {
            records.remove(pick(*i));
        }
        Damage::Duplicate(i) => {
            let r = records[pick(*i)].clone();
            records.push(r);
        }
        Damage::Rename { record, suffix } => {
            let i = pick(*record);
            let mut key = format!("{PREFIX}/").into_bytes();
            key.extend(suffix.iter().copied().take(32));
            records[i].0 = key;
        }
    }
}

/// Decodes; an error is one line; a decoded state builds a ring that routes, or refuses to in
/// one line; decoding is deterministic.
fn decode_and_check(entries: Vec<(Vec<u8>, Vec<u8>)>) {
    let decode = || RingState::decode(PREFIX, entries.iter().map(|(k, v)| (k.as_slice(), v.as_slice())));
    let state = match decode() {
        Ok(s) => s,
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.contains('\n') && !msg.is_empty(), "error is not one line: {msg:?}");
            return;
        }
    };
    match state.router() {
        Ok(router) => {
            let n = router.node_count();
            assert!(n >= 1);
            for k in 0..16u32 {
                assert!(router.route(&k.to_le_bytes()).index() < n);
            }
            let again = decode().expect("decoding twice agrees").router().expect("and builds twice");
            assert_eq!(router.fingerprint(), again.fingerprint(), "decoding is not deterministic");
        }
        Err(e) => assert!(!e.to_string().contains('\n'), "error is not one line: {e}"),
    }
}

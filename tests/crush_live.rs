//! Live comparison with Ceph's own tools: random CRUSH maps (random hierarchies, straw2,
//! uniform, list and tree buckets, device classes, reweighted items, tunable profiles, rules
//! of every shape) are compiled with `crushtool -c` and mapped by `crushtool --test
//! --show-mappings` with random reweight vectors, maps built by `crushtool --build` are
//! decompiled and mapped the same way, and pools are mapped by `osdmaptool
//! --test-map-pgs-dump`; hashroute must print the same devices for every input.
//!
//! Needs `crushtool` and `osdmaptool` (Debian `ceph-base`, `scripts/install_ceph.sh`): skipped
//! with a visible `SKIPPED:` line without them, a failure when `CI` is set. Quick by default
//! (`HASHROUTE_CRUSH_LIVE_MAPS`, default 12 maps, sets how many random maps).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hashroute::crush::{CrushMap, CrushRouter, Pool, Workspace};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// Whether Ceph's tools are here; prints `SKIPPED:` (or panics under `CI`) when not.
fn have_tools() -> bool {
    let found = ["crushtool", "osdmaptool"]
        .iter()
        .all(|t| Command::new(t).arg("--help").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok());
    if !found {
        if std::env::var_os("CI").is_some() {
            panic!("crushtool/osdmaptool not found and CI is set: run scripts/install_ceph.sh");
        }
        eprintln!("SKIPPED: crushtool/osdmaptool not found (install Debian ceph-base: scripts/install_ceph.sh)");
    }
    found
}

/// Runs a tool with a 120 s deadline (polled, then killed by its pid); its stdout. The pipes
/// are drained by threads while polling, so a large output cannot stall the tool.
fn tool(program: &str, args: &[&str]) -> String {
    let mut child = Command::new(program)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.read_to_end(&mut buf);
            buf
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("stderr")));
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().expect("poll tool") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{program} {args:?} took more than 120 s");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let (out, err) = (stdout.join().expect("stdout reader"), stderr.join().expect("stderr reader"));
    assert!(status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&err));
    String::from_utf8(out).expect("UTF-8 output")
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hashroute-crush-live-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

const WEIGHTS: [&str; 8] = ["1.000", "0.500", "2.000", "3.638", "7.277", "0.250", "1.500", "0.000"];
const ALGS: [&str; 4] = ["straw2", "uniform", "list", "tree"];

/// A random map in text form, and the number of its rules.
fn random_map(rng: &mut Pcg64, classes: bool) -> (String, usize) {
    let mut t = String::new();
    match rng.gen_range(0..5) {
        0 => {} // legacy (argonaut): no tunable lines
        1 => t.push_str("tunable choose_local_tries 0\ntunable choose_local_fallback_tries 0\ntunable choose_total_tries 50\ntunable chooseleaf_descend_once 1\ntunable chooseleaf_vary_r 1\ntunable chooseleaf_stable 0\n"),
        2 => t.push_str("tunable choose_local_tries 0\ntunable choose_local_fallback_tries 0\ntunable choose_total_tries 50\ntunable chooseleaf_descend_once 1\ntunable chooseleaf_vary_r 0\ntunable chooseleaf_stable 0\n"),
        3 => {
            let _ = writeln!(t, "tunable choose_local_tries {}", rng.gen_range(0..3));
            let _ = writeln!(t, "tunable choose_local_fallback_tries {}", rng.gen_range(0..6));
            let _ = writeln!(t, "tunable choose_total_tries {}", rng.gen_range(1..60));
            let _ = writeln!(t, "tunable chooseleaf_descend_once {}", rng.gen_range(0..2));
            let _ = writeln!(t, "tunable chooseleaf_vary_r {}", rng.gen_range(0..3));
            let _ = writeln!(t, "tunable chooseleaf_stable {}", rng.gen_range(0..2));
        }
        _ => t.push_str("tunable choose_local_tries 0\ntunable choose_local_fallback_tries 0\ntunable choose_total_tries 50\ntunable chooseleaf_descend_once 1\ntunable chooseleaf_vary_r 1\ntunable chooseleaf_stable 1\n"),
    }
    let racks = rng.gen_range(1..=4);
    let hosts: Vec<usize> = (0..racks).map(|_| rng.gen_range(1..=4)).collect();
    let per_host: Vec<Vec<usize>> = hosts.iter().map(|&h| (0..h).map(|_| rng.gen_range(1..=4)).collect()).collect();
    let devices: usize = per_host.iter().flatten().sum();
    let mut seen = [false; 2];
    for d in 0..devices {
        let ssd = rng.gen_bool(0.5);
        seen[usize::from(ssd)] = true;
        let class = if !classes {
            ""
        } else if ssd {
            " class ssd"
        } else {
            " class hdd"
        };
        let _ = writeln!(t, "device {d} osd.{d}{class}");
    }
    // Rules may only name classes some device has (crushtool refuses the others, as we do).
    let classes = classes && seen == [true, true];
    t.push_str("type 0 osd\ntype 1 host\ntype 2 rack\ntype 3 root\n");
    let mut next_dev = 0;
    let mut next_id = -1;
    let mut rack_items = Vec::new();
    for (r, hosts_in_rack) in per_host.iter().enumerate() {
        let mut host_items = Vec::new();
        for (h, &n) in hosts_in_rack.iter().enumerate() {
            // Ceph cannot copy a uniform bucket into a class's shadow tree (its rules with
            // `take ... class` are refused), so maps with classes leave uniform out.
            let pick = if classes { [0, 2, 3][rng.gen_range(0..3)] } else { rng.gen_range(0..4) };
            let alg = ALGS[if rng.gen_bool(0.6) { 0 } else { pick }];
            let name = format!("host{r}_{h}");
            let _ = writeln!(t, "host {name} {{\n\tid {next_id}\n\talg {alg}\n\thash 0");
            next_id -= 1;
            let uniform_w = WEIGHTS[rng.gen_range(0..7)];
            for _ in 0..n {
                let w = if alg == "uniform" { uniform_w } else { WEIGHTS[rng.gen_range(0..8)] };
                let _ = writeln!(t, "\titem osd.{next_dev} weight {w}");
                next_dev += 1;
            }
            t.push_str("}\n");
            host_items.push(name);
        }
        let alg = ALGS[if rng.gen_bool(0.7) || classes { 0 } else { rng.gen_range(0..4) }];
        let name = format!("rack{r}");
        let _ = writeln!(t, "rack {name} {{\n\tid {next_id}\n\talg {alg}\n\thash 0");
        next_id -= 1;
        for h in &host_items {
            // Default item weight: what the host holds (uniform buckets need equal weights).
            if alg == "uniform" {
                let _ = writeln!(t, "\titem {h} weight 2.000");
            } else {
                let _ = writeln!(t, "\titem {h}");
            }
        }
        t.push_str("}\n");
        rack_items.push(name);
    }
    let _ = writeln!(t, "root default {{\n\tid {next_id}\n\talg straw2\n\thash 0");
    for r in &rack_items {
        let _ = writeln!(t, "\titem {r}");
    }
    t.push_str("}\n");
    let mut rules = vec![
        "step take default\n\tstep chooseleaf firstn 0 type host\n\tstep emit".to_owned(),
        "step take default\n\tstep chooseleaf indep 0 type host\n\tstep emit".to_owned(),
        "step take default\n\tstep choose firstn 0 type rack\n\tstep chooseleaf firstn 1 type host\n\tstep emit".to_owned(),
        "step take default\n\tstep choose indep 2 type rack\n\tstep chooseleaf indep 2 type host\n\tstep emit".to_owned(),
        "step take default\n\tstep choose firstn 0 type osd\n\tstep emit".to_owned(),
        "step set_chooseleaf_tries 5\n\tstep set_choose_tries 100\n\tstep take default\n\tstep chooseleaf indep 0 type host\n\tstep emit".to_owned(),
        "step take default\n\tstep choose firstn 2 type host\n\tstep choose firstn -1 type osd\n\tstep emit".to_owned(),
        "step take rack0\n\tstep chooseleaf firstn 0 type osd\n\tstep emit".to_owned(),
    ];
    if classes {
        rules.push("step take default class ssd\n\tstep chooseleaf firstn 0 type host\n\tstep emit".to_owned());
        rules.push("step take default class hdd\n\tstep chooseleaf firstn 1 type host\n\tstep emit\n\tstep take default class ssd\n\tstep chooseleaf firstn -1 type host\n\tstep emit".to_owned());
    }
    for (i, body) in rules.iter().enumerate() {
        let kind = if body.contains("indep") { "erasure" } else { "replicated" };
        let _ = writeln!(t, "rule r{i} {{\n\tid {i}\n\ttype {kind}\n\tmin_size 1\n\tmax_size 10\n\t{body}\n}}");
    }
    (t, rules.len())
}

/// `crushtool --test --show-mappings` over x in 0..xs for every rule, against the router.
fn compare_mappings(
    bin: &Path,
    map: &Arc<CrushMap>,
    rules: usize,
    num_rep: usize,
    reweights: &[(i32, f64)],
    xs: u32,
    label: &str,
) {
    let mut args: Vec<String> =
        ["-i", s(bin), "--test", "--show-mappings", "--min-x", "0"].iter().map(|a| (*a).to_owned()).collect();
    args.extend(["--max-x".into(), (xs - 1).to_string(), "--num-rep".into(), num_rep.to_string()]);
    for (d, w) in reweights {
        args.extend(["--weight".into(), d.to_string(), w.to_string()]);
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = tool("crushtool", &refs);
    let mut routers = Vec::new();
    for r in 0..rules {
        let mut router = CrushRouter::new(map.clone(), &r.to_string()).expect("rule");
        for (d, w) in reweights {
            router = router.with_reweight(map.device_name(*d).expect("device"), *w).expect("reweight");
        }
        routers.push(router);
    }
    let (mut got, mut ws) = (Vec::new(), Workspace::default());
    let mut lines = 0;
    for line in out.lines().filter(|l| l.starts_with("CRUSH rule ")) {
        // CRUSH rule R x X [a,b,c]
        let f: Vec<&str> = line.split_whitespace().collect();
        let (rule, x): (usize, u32) = (f[2].parse().expect("rule"), f[4].parse().expect("x"));
        routers[rule].map_x(x, num_rep, &mut got, &mut ws);
        let mine = format!("[{}]", got.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(","));
        assert_eq!(mine, f[5], "{label}: rule {rule} x {x} num_rep {num_rep} reweights {reweights:?}");
        lines += 1;
    }
    assert_eq!(lines, rules * xs as usize, "{label}: crushtool printed {lines} mappings");
}

/// `osdmaptool --test-map-pgs-dump` for a pool over the map, with some devices out.
///
/// osdmaptool's `--mark-up-in` gives every device of CRUSH weight 0 the weight 1 (a tool
/// convenience a cluster does not do), so zero weights are raised to 0.5 in the map compared here.
fn compare_pgs(text: &str, devices: usize, out_devices: &[i32], dir: &Path, label: &str) {
    let text = text.replace(" weight 0.000", " weight 0.500");
    let (txt, bin) = (dir.join("pgmap.txt"), dir.join("pgmap.bin"));
    std::fs::write(&txt, &text).expect("write map");
    tool("crushtool", &["-c", s(&txt), "-o", s(&bin), "--enable-unsafe-tunables"]);
    let map = Arc::new(CrushMap::parse(&text).expect("map"));
    let bin = bin.as_path();
    let om = dir.join("osdmap");
    tool(
        "osdmaptool",
        &["--createsimple", &devices.to_string(), "--with-default-pool", "--pg-bits", "3", s(&om), "--clobber"],
    );
    tool("osdmaptool", &[s(&om), "--import-crush", s(bin)]);
    let mut args = vec![s(&om).to_owned(), "--mark-up-in".to_owned()];
    for d in out_devices {
        args.extend(["--mark-out".to_owned(), d.to_string()]);
    }
    args.extend(["--test-map-pgs-dump".into(), "--pool".into(), "1".into()]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = tool("osdmaptool", &refs);
    let pg_num = (devices << 3) as u32;
    let mut pool = Pool::new(map.clone(), 1, pg_num, 3, "0").expect("pool");
    for d in out_devices {
        pool = pool.with_reweight(map.device_name(*d).expect("device"), 0.0).expect("out");
    }
    let (mut up, mut ws) = (Vec::new(), Workspace::default());
    let mut seen = 0;
    for line in out.lines().filter(|l| l.starts_with("1.")) {
        let f: Vec<&str> = line.split('\t').collect();
        let ps = u32::from_str_radix(&f[0][2..], 16).expect("pg");
        pool.up(ps, &mut up, &mut ws);
        let mine = format!("[{}]", up.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(","));
        assert_eq!(mine, f[1], "{label}: pg {} out {out_devices:?}", f[0]);
        seen += 1;
    }
    assert_eq!(seen, pg_num, "{label}: osdmaptool printed {seen} pgs");
}

/// Up to three devices reweighted (0 = out). Never every device out: crushtool then prints no
/// mapping at all (a tool shortcut), so there would be nothing to compare.
fn random_reweights(rng: &mut Pcg64, devices: usize) -> Vec<(i32, f64)> {
    let n = rng.gen_range(0..=3usize.min(devices));
    let mut out: Vec<(i32, f64)> = (0..n)
        .map(|_| (rng.gen_range(0..devices) as i32, [0.0, 0.5, 0.25, 0.75][rng.gen_range(0..4)]))
        .collect::<std::collections::BTreeMap<_, _>>()
        .into_iter()
        .collect();
    if out.len() == devices && out.iter().all(|&(_, w)| w == 0.0) {
        out[0].1 = 0.5;
    }
    out
}

#[test]
fn random_maps_match_crushtool_and_osdmaptool() {
    if !have_tools() {
        return;
    }
    let maps: usize = std::env::var("HASHROUTE_CRUSH_LIVE_MAPS").ok().and_then(|v| v.parse().ok()).unwrap_or(12);
    let dir = scratch();
    let mut rng = Pcg64::seed_from_u64(0xC2C5);
    for m in 0..maps {
        let (text, rules) = random_map(&mut rng, m % 2 == 1);
        let (txt, bin) = (dir.join(format!("m{m}.txt")), dir.join(format!("m{m}.bin")));
        std::fs::write(&txt, &text).expect("write map");
        tool("crushtool", &["-c", s(&txt), "-o", s(&bin), "--enable-unsafe-tunables"]);
        let map = Arc::new(CrushMap::parse(&text).unwrap_or_else(|e| panic!("map {m}: {e}\n{text}")));
        // The decompiled form (shadow ids, computed weights as crushtool prints them) must
        // parse to the same mappings too.
        let dec = tool("crushtool", &["-d", s(&bin)]);
        let decompiled = Arc::new(CrushMap::parse(&dec).unwrap_or_else(|e| panic!("decompiled map {m}: {e}\n{dec}")));
        let devices = map.max_devices();
        for num_rep in [1, 3, 5] {
            let rw = random_reweights(&mut rng, devices);
            compare_mappings(&bin, &map, rules, num_rep, &rw, 200, &format!("map {m}"));
            compare_mappings(&bin, &decompiled, rules, num_rep, &rw, 50, &format!("map {m} decompiled"));
        }
        // osdmaptool marks one device out (its last --mark-out wins).
        let out: Vec<i32> = random_reweights(&mut rng, devices).into_iter().map(|(d, _)| d).take(1).collect();
        compare_pgs(&text, devices, &out, &dir, &format!("map {m}"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn built_maps_match_crushtool() {
    if !have_tools() {
        return;
    }
    let dir = scratch().join("built");
    std::fs::create_dir_all(&dir).expect("dir");
    let layouts: [&[&str]; 4] = [
        &["host", "straw2", "3", "rack", "straw2", "2", "root", "straw2", "0"],
        &["host", "uniform", "4", "root", "list", "0"],
        &["host", "tree", "3", "rack", "straw2", "3", "root", "tree", "0"],
        &["host", "list", "2", "root", "uniform", "0"],
    ];
    for (i, layout) in layouts.iter().enumerate() {
        let bin = dir.join(format!("b{i}.bin"));
        let num = if i == 1 { "16" } else { "18" };
        let mut args = vec!["-o", s(&bin), "--build", "--num_osds", num];
        args.extend_from_slice(layout);
        tool("crushtool", &args);
        let reweighted = dir.join(format!("b{i}r.bin"));
        tool("crushtool", &["-i", s(&bin), "--reweight-item", "osd.1", "0.5", "-o", s(&reweighted)]);
        let text = tool("crushtool", &["-d", s(&reweighted)]);
        let map = Arc::new(CrushMap::parse(&text).unwrap_or_else(|e| panic!("built map {i}: {e}\n{text}")));
        let rules = map.rules().count();
        for num_rep in [2, 3] {
            compare_mappings(&reweighted, &map, rules, num_rep, &[(2, 0.5)], 300, &format!("built {i}"));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

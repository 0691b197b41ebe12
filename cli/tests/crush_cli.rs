//! The CRUSH commands of the `hashroute` binary: `pg` against osdmaptool's vectors,
//! `replicas`/`route --crush-map` against crushtool's, `migrate --crush-map`, and the one-line
//! error contract for bad maps (`crush map PATH:LINE: ...`).

#[path = "../../tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_hashroute");

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(args: &[&str], stdin: &[u8]) -> Run {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn hashroute");
    let mut pipe = child.stdin.take().expect("stdin");
    let input = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait hashroute");
    writer.join().expect("stdin writer");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8(out.stdout).expect("UTF-8 output"),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn ok(args: &[&str], stdin: &[u8]) -> String {
    let r = run(args, stdin);
    assert_eq!(r.code, Some(0), "{args:?} failed: {}", r.stderr);
    assert!(r.stderr.is_empty(), "{args:?} wrote to stderr: {}", r.stderr);
    r.stdout
}

fn fails(args: &[&str], code: i32, needles: &[&str]) {
    let r = run(args, b"");
    assert_eq!(r.code, Some(code), "{args:?}: stderr {:?}", r.stderr);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: stderr {:?}", r.stderr);
    if code == 1 {
        assert!(lines[0].starts_with("hashroute: error: "), "{args:?}: {:?}", lines[0]);
    }
    for n in needles {
        assert!(lines[0].contains(n), "{args:?}: {:?} lacks {n:?}", lines[0]);
    }
}

fn map_path(name: &str) -> Option<String> {
    Some(common::vectors_dir()?.join("ceph").join(format!("{name}.crush.txt")).display().to_string())
}

/// Removes a test's temporary file, then the shared folder once it is empty (the other tests
/// may still hold files there).
fn remove(path: &PathBuf) {
    let _ = std::fs::remove_file(path);
    if let Some(dir) = path.parent() {
        let _ = std::fs::remove_dir(dir);
    }
}

/// A private temporary file holding `text`.
fn temp_file(tag: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hashroute-crush-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(tag);
    std::fs::write(&path, text).expect("write temp file");
    path
}

/// `[0,9,4]` to `osd.0,osd.9,osd.4` (the vector maps name device i `osd.i`).
fn names(result: &str) -> String {
    let inner = result.trim_start_matches('[').trim_end_matches(']');
    inner
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|d| if d == "2147483647" { "-".to_owned() } else { format!("osd.{d}") })
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn pg_matches_osdmaptool() {
    let Some(rows) = common::read_csv("ceph/object_mappings.csv") else { return };
    let map = map_path("hosts").expect("vectors present");
    let mut stdin = Vec::new();
    for row in &rows {
        assert_eq!(
            (row["map"].as_str(), row["pool"].as_str(), row["pg_num"].as_str(), row["out"].as_str()),
            ("hosts", "1", "768", "")
        );
        stdin.extend_from_slice(row["object"].as_bytes());
        stdin.push(b'\n');
    }
    let out = ok(&["pg", "--crush-map", &map, "--pool-id", "1", "--pg-num", "768"], &stdin);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), rows.len());
    for (line, row) in lines.iter().zip(&rows) {
        let want = format!("{}\t{}\t{}", row["object"], row["pgid"], names(&row["up"]));
        assert_eq!(*line, want);
    }
}

#[test]
fn replicas_and_route_match_crushtool() {
    let Some(rows) = common::read_csv("ceph/crush_mappings.csv") else { return };
    let mut groups: BTreeMap<(String, String, String), Vec<(String, String)>> = BTreeMap::new();
    for row in &rows {
        assert!(row["weights"].is_empty(), "vectors with reweights need --reweight here");
        let key = (row["map"].clone(), row["rule"].clone(), row["num_rep"].clone());
        groups.entry(key).or_default().push((row["x"].clone(), names(&row["result"])));
    }
    for ((map, rule, n), cases) in &groups {
        let path = map_path(map).expect("vectors present");
        let stdin: String = cases.iter().map(|(x, _)| format!("{x}\n")).collect();
        let out = ok(&["replicas", "--crush-map", &path, "--rule", rule, "-n", n, "--input", "u64"], stdin.as_bytes());
        for (line, (x, want)) in out.lines().zip(cases) {
            assert_eq!(line, format!("{x}\t{want}"), "{map} rule {rule}");
        }
        assert_eq!(out.lines().count(), cases.len());
        if rule == "0" {
            // Firstn rules: the route is the first replica.
            let out = ok(&["route", "--crush-map", &path, "--input", "u64"], stdin.as_bytes());
            for (line, (x, want)) in out.lines().zip(cases) {
                assert_eq!(line, format!("{x}\t{}", want.split(',').next().unwrap_or("-")), "{map} route");
            }
        }
    }
}

const SMALL_MAP: &str = "\
tunable choose_total_tries 50
tunable chooseleaf_descend_once 1
tunable chooseleaf_vary_r 1
tunable chooseleaf_stable 1
device 0 osd.0 class ssd
device 1 osd.1 class hdd
device 2 osd.2 class ssd
device 3 osd.3 class hdd
type 0 osd
type 1 host
type 2 root
host h0 {
	id -1
	alg straw2
	hash 0
	item osd.0 weight 1.000
	item osd.1 weight 1.000
}
host h1 {
	id -2
	alg straw2
	hash 0
	item osd.2 weight 1.000
	item osd.3 weight 1.000
}
root default {
	id -3
	alg straw2
	hash 0
	item h0 weight 2.000
	item h1 weight 2.000
}
rule wide {
	id 0
	type erasure
	step take default
	step chooseleaf indep 0 type host
	step emit
}
rule ssd {
	id 1
	type replicated
	step take default class ssd
	step chooseleaf firstn 0 type host
	step emit
}
";

#[test]
fn indep_holes_classes_and_reweights() {
    let path = temp_file("small.txt", SMALL_MAP);
    let p = path.to_str().expect("UTF-8 path");
    // Two hosts for four positions: positions 2 and 3 stay holes.
    let out = ok(&["replicas", "--crush-map", p, "--rule", "wide", "-n", "4", "k1", "k2"], b"");
    for line in out.lines() {
        let devices: Vec<&str> = line.split('\t').nth(1).expect("tab").split(',').collect();
        assert_eq!(devices.len(), 4, "{line}");
        assert_eq!(devices.iter().filter(|d| **d == "-").count(), 2, "{line}");
    }
    // The ssd class holds osd.0 and osd.2 only.
    let keys: String = (0..200).map(|i| format!("obj{i}\n")).collect();
    let out = ok(&["replicas", "--crush-map", p, "--rule", "ssd", "-n", "2"], keys.as_bytes());
    for line in out.lines() {
        let mut devices: Vec<&str> = line.split('\t').nth(1).expect("tab").split(',').collect();
        devices.sort_unstable();
        assert_eq!(devices, ["osd.0", "osd.2"], "{line}");
    }
    // osd.0 out: no key lands on it, and only its keys move.
    let before = ok(&["route", "--crush-map", p, "--rule", "ssd"], keys.as_bytes());
    let after = ok(&["route", "--crush-map", p, "--rule", "ssd", "--reweight", "osd.0=0"], keys.as_bytes());
    for (b, a) in before.lines().zip(after.lines()) {
        assert!(!a.ends_with("\tosd.0"), "{a}");
        if !b.ends_with("\tosd.0") {
            assert_eq!(a, b);
        }
    }
    // Fingerprints: equal for equal maps, different with a reweight.
    let f1 = ok(&["fingerprint", "--crush-map", p, "--rule", "ssd"], b"");
    let f2 = ok(&["fingerprint", "--crush-map", p, "--rule", "ssd", "--reweight", "osd.0=0.5"], b"");
    assert_eq!(f1.trim().len(), 32);
    assert_ne!(f1, f2);
    assert_eq!(f1, ok(&["fingerprint", "--crush-map", p, "--rule", "1"], b""));
    remove(&path);
}

#[test]
fn migrate_counts_every_placement_group() {
    let path = temp_file("migrate.txt", SMALL_MAP);
    let p = path.to_str().expect("UTF-8 path");
    let same = ok(
        &[
            "migrate",
            "--crush-map",
            p,
            "--to-crush-map",
            p,
            "--pool-id",
            "2",
            "--pg-num",
            "100",
            "-n",
            "2",
            "--rule",
            "ssd",
            "--summary",
        ],
        b"",
    );
    assert!(
        same.lines()
            .next()
            .expect("first line")
            .contains(" 0.0000% of placement groups change their device set (0 of 100)"),
        "{same}"
    );
    let smaller = SMALL_MAP.replace("item osd.2 weight 1.000", "item osd.2 weight 0.500");
    let path2 = temp_file("migrate2.txt", &smaller);
    let out = ok(
        &[
            "migrate",
            "--crush-map",
            p,
            "--to-crush-map",
            path2.to_str().expect("path"),
            "--pool-id",
            "2",
            "--pg-num",
            "100",
            "-n",
            "1",
            "--summary",
        ],
        b"",
    );
    let first = out.lines().next().expect("first line");
    assert!(first.contains("of placement groups change their device set"), "{out}");
    assert!(!first.contains("(0 of 100)"), "{out}");
    // Per device: before and after sum to the pool's PGs times its size.
    let rows: Vec<Vec<u64>> = out
        .lines()
        .skip(2)
        .map(|l| l.split_whitespace().skip(1).map(|v| v.parse().expect("count")).collect())
        .collect();
    assert_eq!(rows.iter().map(|r| r[0]).sum::<u64>(), 100);
    assert_eq!(rows.iter().map(|r| r[1]).sum::<u64>(), 100);
    assert_eq!(rows.iter().map(|r| r[2]).sum::<u64>(), rows.iter().map(|r| r[3]).sum::<u64>());
    remove(&path);
    remove(&path2);
}

#[test]
fn bad_maps_are_one_line_errors_with_file_and_line() {
    let cases: [(&str, String, &str); 7] = [
        (
            "syntax",
            SMALL_MAP.replace("alg straw2\n\thash 0\n\titem osd.2", "alg straw2\n\thash 0\n\titem osd.2 weight x"),
            ":23: weight `x` is not a number",
        ),
        (
            "straw",
            SMALL_MAP.replace("host h1 {\n\tid -2\n\talg straw2", "host h1 {\n\tid -2\n\talg straw"),
            "bucket h1: alg straw (v1) is not supported",
        ),
        (
            "missing",
            SMALL_MAP.replace("step take default class ssd", "step take nowhere"),
            "item `nowhere` is not defined",
        ),
        (
            "type",
            SMALL_MAP.replace("chooseleaf firstn 0 type host", "chooseleaf firstn 0 type rack"),
            "type `rack` is not defined",
        ),
        (
            "loop",
            SMALL_MAP
                .replace("\titem osd.3 weight 1.000\n", "\titem osd.3 weight 1.000\n\titem default weight 1.000\n"),
            "loop in the hierarchy",
        ),
        ("class", SMALL_MAP.replace("default class ssd", "default class nvme"), "device class `nvme` is not defined"),
        ("choose_args", format!("{SMALL_MAP}choose_args 0 {{\n}}\n"), "choose_args"),
    ];
    for (tag, text, needle) in &cases {
        let path = temp_file(&format!("bad-{tag}.txt"), text);
        let p = path.to_str().expect("UTF-8 path");
        fails(&["route", "--crush-map", p, "k"], 1, &[&format!("crush map {p}:"), needle]);
        fails(&["pg", "--crush-map", p, "--pool-id", "1", "--pg-num", "8", "obj"], 1, &[needle]);
        remove(&path);
    }
    let path = temp_file("good.txt", SMALL_MAP);
    let p = path.to_str().expect("UTF-8 path");
    fails(&["route", "--crush-map", p, "--rule", "nope", "k"], 1, &["--rule nope", "wide (0)"]);
    fails(&["route", "--crush-map", p, "--input", "u64", "4294967296"], 1, &["32-bit input"]);
    fails(&["route", "--crush-map", p, "--reweight", "osd.9=0", "k"], 1, &["osd.9"]);
    fails(&["route", "--crush-map", p, "--reweight", "osd.0=2", "k"], 1, &["between 0 and 1"]);
    fails(&["route", "--crush-map", "/nonexistent/map.txt", "k"], 1, &["crush map /nonexistent/map.txt"]);
    fails(&["route", "--crush-map", p, "--algo", "ring", "k"], 2, &["--algo"]);
    fails(&["pg", "--crush-map", p, "--pool-id", "1", "--pg-num", "0", "obj"], 1, &["pg_num"]);
    remove(&path);
}

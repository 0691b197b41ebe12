//! `hashroute resize`: the acceptance on the real output (4 → 8 nodes with the
//! defaults: one at a time at least 10 points above all at once), agreement with the library,
//! the flags' defaults, and one-line errors with exit 1 (bad input) or 2 (bad usage).

use std::path::PathBuf;
use std::process::{Command, Output};

use hashroute::{Algorithm, NodeSet, RouterSpec};
use hashroute_analysis::{simulate_resize, ResizeStrategy, Workload};

const BIN: &str = env!("CARGO_BIN_EXE_hashroute");

fn run(args: &[&str]) -> Output {
    Command::new(BIN).arg("resize").args(args).output().expect("spawn hashroute")
}

/// A call that must succeed silently; its stdout.
fn ok(args: &[&str]) -> String {
    let out = run(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.is_empty(), "{args:?}: {stderr}");
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// A call that must fail with `code` and one stderr line containing `needle`.
fn fails(args: &[&str], code: i32, needle: &str) {
    let out = run(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?} wrote to stdout");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    assert!(stderr.starts_with("hashroute: error: ") && stderr.contains(needle), "{args:?}: {stderr} lacks {needle}");
}

fn nodes_file(name: &str, nodes: &[&str]) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("resize-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    // Tests run in parallel and share these names: write a private file, then rename it into
    // place (atomic), so no test ever reads a half-written file.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let unique = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let private = dir.join(format!("{name}.{}.{unique}.tmp", std::process::id()));
    std::fs::write(&private, format!("# {name}\n{}\n", nodes.join("\n"))).unwrap();
    std::fs::rename(&private, &path).unwrap();
    path.to_str().unwrap().to_owned()
}

fn four_and_eight() -> (String, String) {
    let names: Vec<String> = (1..=8).map(|i| format!("cache-{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    (nodes_file("four.txt", &names[..4]), nodes_file("eight.txt", &names))
}

/// The summary line of `strategy` (exactly one line starts with its name) and its only
/// percentage.
fn summary(stdout: &str, strategy: &str) -> (String, f64) {
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with(strategy)).collect();
    assert_eq!(lines.len(), 1, "{strategy}: {lines:?}");
    let line = lines[0];
    let pcts: Vec<&str> = line.split_whitespace().filter(|w| w.contains('%')).collect();
    assert_eq!(pcts.len(), 1, "{line}");
    let pct = pcts[0].trim_end_matches(',').trim_end_matches('%');
    assert!(pct.contains('.') && pct.split('.').nth(1).unwrap().len() == 1, "NN.N%: {line}");
    (line.to_owned(), pct.parse().unwrap())
}

/// The acceptance on the CLI's real output: 4 → 8 nodes, `--algo ring --vnodes 160` and
/// the default workload. Measured: all at once about 63%, one at a time about 80% (the
/// incident: 92% fell to 61%). The output is the library's report byte for byte, its summary
/// lines first.
#[test]
fn one_at_a_time_stays_ten_points_above_all_at_once() {
    let (four, eight) = four_and_eight();
    let out = ok(&["--algo", "ring", "--vnodes", "160", "--from", &four, "--to", &eight]);
    let (all_line, all) = summary(&out, "all-at-once");
    let (one_line, one) = summary(&out, "one-at-a-time");
    assert!(one >= all + 10.0, "{one_line}\n{all_line}");
    assert!(all < 75.0, "a collapse, not a dip: {all_line}");
    for line in [&all_line, &one_line] {
        assert!(line.contains("recovers in ") && line.contains(" requests"), "{line}");
    }
    for s in ["warm-first", "fallback"] {
        assert!(summary(&out, s).1 > all + 10.0, "{out}");
    }
    let from = NodeSet::parse(&std::fs::read_to_string(&four).unwrap()).unwrap();
    let to = NodeSet::parse(&std::fs::read_to_string(&eight).unwrap()).unwrap();
    let spec = RouterSpec::new(Algorithm::Ring).with_vnodes(160);
    let lib = simulate_resize(&spec, &from, &to, &Workload::default(), &ResizeStrategy::ALL).unwrap();
    // The library's report, its summary lines moved first under a heading (issue: the
    // summary first).
    let full = lib.to_string();
    let body = full.strip_suffix(&lib.summary()).unwrap().trim_end();
    let (heading, rest) = out.split_once('\n').unwrap();
    assert!(heading.starts_with("resize 4 -> 8 nodes (ring, 160 vnodes): steady hit rate before "), "{heading}");
    assert_eq!(rest, format!("{}\n{body}\n", lib.summary()));
    // Step by step: a table row per step under each strategy's heading.
    let one_table = out.split("[one-at-a-time]").nth(1).unwrap().split("\n\n").next().unwrap();
    for (i, node) in (5..=8).enumerate() {
        assert!(one_table.lines().any(|l| l.starts_with(&format!("{}     +cache-{node}", i + 1))), "{one_table}");
    }
}

/// Defaults are the ring with 160 vnodes; the flags reach the library; `--strategy` picks and
/// orders the strategies.
#[test]
fn flags_reach_the_simulation() {
    let (four, eight) = four_and_eight();
    let small = ["--keys", "20000", "--requests-per-step", "40000", "--window", "500"];
    let with = |extra: &[&str]| {
        let mut args = vec!["--from", four.as_str(), "--to", eight.as_str()];
        args.extend_from_slice(&small);
        args.extend_from_slice(extra);
        ok(&args)
    };
    let plain = with(&[]);
    assert_eq!(plain, with(&["--algo", "ring", "--vnodes", "160", "--workload", "zipf:0.99", "--sim-seed", "0x5EED"]));
    assert!(plain.contains("\nresize 4 -> 8 nodes (ring, 160 vnodes): zipf:0.99 over 20000 keys"), "{plain}");
    assert_ne!(plain, with(&["--sim-seed", "1"]));
    assert_ne!(plain, with(&["--seed", "1"]), "--seed is the hasher's");
    assert_ne!(plain, with(&["--workload", "zipf:1.2"]));
    assert!(with(&["--cache-fraction", "0.25"]).contains("each weight-1 node caches 1250 keys"));
    let picked = with(&["--strategy", "fallback,all-at-once"]);
    let starts: Vec<&str> =
        picked.lines().filter(|l| l.starts_with("fallback") || l.starts_with("all-at-once")).collect();
    assert_eq!(starts.len(), 2, "{picked}");
    assert!(starts[0].starts_with("fallback") && !picked.contains("one-at-a-time"), "{picked}");
    let maglev = with(&["--algo", "maglev", "--strategy", "all-at-once"]);
    assert!(maglev.starts_with("resize 4 -> 8 nodes (maglev)"), "{maglev}");
    // Shrinking works too.
    let shrink = ok(&[
        "--from",
        &eight,
        "--to",
        &four,
        "--strategy",
        "one-at-a-time",
        "--keys",
        "20000",
        "--requests-per-step",
        "40000",
    ]);
    assert!(shrink.contains("-cache-8") && shrink.contains("-cache-5"), "{shrink}");
}

#[test]
fn help_states_the_defaults() {
    let help = ok(&["--help"]);
    for default in [
        "[default: ring]",
        "[default: 160]",
        "[default: zipf:0.99]",
        "[default: 100000]",
        "[default: 0.5]",
        "[default: 200000]",
        "[default: 1000]",
        "[default: all]",
    ] {
        assert!(help.contains(default), "--help lacks {default}");
    }
    assert!(help.contains("YCSB") && help.contains("92%"), "--help says why the defaults");
}

#[test]
fn bad_input_exits_1_and_bad_usage_2() {
    let (four, eight) = four_and_eight();
    let empty = nodes_file("empty.txt", &["# nothing"]);
    let missing = nodes_file("x.txt", &[]).replace("x.txt", "no-such-file.txt");
    let jump3 = nodes_file("jump3.txt", &["a", "b", "c"]);
    let jump2 = nodes_file("jump2.txt", &["a", "c"]);
    let base = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = ["--from", &four, "--to", &eight].iter().map(|s| s.to_string()).collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["--from".into(), missing.clone(), "--to".into(), eight.clone()], "no-such-file"),
        (vec!["--from".into(), four.clone(), "--to".into(), empty.clone()], "no nodes"),
        (vec!["--from".into(), four.clone(), "--to".into(), four.clone()], "nothing to resize"),
        (base(&["--workload", "uniform"]), "--workload"),
        (base(&["--workload", "zipf:abc"]), "zipf:S"),
        (base(&["--workload", "zipf:-1"]), "--workload"),
        (base(&["--strategy", "gradual"]), "--strategy"),
        (base(&["--strategy", "all-at-once,"]), "--strategy"),
        (base(&["--cache-fraction", "0"]), "cache fraction"),
        (base(&["--cache-fraction", "2"]), "cache fraction"),
        (base(&["--keys", "10", "--cache-fraction", "0.1"]), "would cache no key"),
        (base(&["--window", "0"]), "window"),
        (base(&["--requests-per-step", "0"]), "requests per step"),
        (base(&["--algo", "bogus"]), "bogus"),
        (base(&["--algo", "ring", "--table-size", "7"]), "table"),
        (
            vec!["--algo".into(), "jump".into(), "--from".into(), jump3, "--to".into(), jump2],
            "removing a node other than the last",
        ),
    ];
    for (args, needle) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        fails(&args, 1, needle);
    }
    fails(&["--from", &four], 2, "--to");
    fails(&["--to", &four], 2, "--from");
    fails(&["--from", &four, "--to", &eight, "--bogus"], 2, "--bogus");
    fails(&["--from", &four, "--to", &eight, "--keys", "many"], 2, "--keys");
    fails(&["--from", &four, "--to", &eight, "--nodes", "a,b"], 2, "--nodes");
}

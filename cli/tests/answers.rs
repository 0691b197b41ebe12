//! Answers a person takes in at a glance and a script can parse: `recommend` names its answer
//! first and fits a screen, `--format json` documents parse and carry the text's figures,
//! errors stay one stderr line, progress never reaches a pipe, `--plot` writes SVG, and the
//! completions and the man page come out of the same clap definitions.
//!
//! `recommend` runs in smoke mode (`HASHROUTE_QUICK=1`): lookups are not timed there, so two
//! runs give the same figures and the JSON run can be compared with the text run.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_hashroute");

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).env("HASHROUTE_QUICK", "1").stdin(Stdio::null()).output().expect("spawn hashroute")
}

/// Stdout of a successful run whose stderr stays empty (no progress in a pipe).
fn ok(args: &[&str]) -> String {
    let out = run(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?} failed: {stderr}");
    assert!(stderr.is_empty(), "{args:?} wrote to stderr: {stderr}");
    String::from_utf8(out.stdout).expect("utf-8 stdout")
}

/// The JSON document of a successful run, checked to be one object with `schema`.
fn json(args: &[&str], schema: &str) -> Value {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let text = ok(&all);
    let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {text}"));
    assert_eq!(doc["schema"], schema, "{text}");
    assert!(text.starts_with("{\n  \"schema\""), "schema is the first field: {text}");
    doc
}

/// A scratch directory for this test, emptied first.
fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hashroute-answers-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &std::path::Path, name: &str, lines: impl IntoIterator<Item = String>) -> String {
    let path = dir.join(name);
    let text: String = lines.into_iter().map(|l| l + "\n").collect();
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

fn nodes(dir: &std::path::Path, name: &str, count: usize) -> String {
    write(dir, name, (1..=count).map(|i| format!("cache-{i}")))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// `1.8 KiB` as the text prints bytes.
fn bytes(v: &Value) -> String {
    match v.as_u64() {
        None => "-".into(),
        Some(b) if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1 << 20) as f64),
        Some(b) if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        Some(b) => format!("{b} B"),
    }
}

fn opt(v: &Value, digits: usize) -> String {
    v.as_f64().map_or("-".into(), |x| format!("{x:.digits$}"))
}

/// Also draws `--plot` (the plot does not change what is printed). `--all` is held by
/// tests/cli.rs (`recommend_prints_the_library_recommendation`): the library's full table.
#[test]
fn recommend_names_the_answer_first_and_fits_forty_lines() {
    let dir = scratch("recommend");
    let svg = dir.join("tradeoff.svg");
    let text = ok(&["recommend", "--node-count", "10", "--plot", svg.to_str().unwrap()]);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() <= 40, "{} lines:\n{text}", lines.len());
    for (i, target) in ["1.05", "1.10", "1.25", "1.50"].iter().enumerate() {
        let line = lines[2 + i];
        assert!(line.starts_with(&format!("  {target}: ")) && line.contains(" — "), "{line}");
        assert!(line.contains("(rule: prefer latency"), "{line}");
    }
    // Rejections: one line per reason, each candidate once per line.
    let rejected: Vec<&&str> = lines.iter().filter(|l| l.starts_with("  rejected — ")).collect();
    assert!(rejected.iter().any(|l| l.starts_with("  rejected — lacks remove-any: jump,")), "{text}");
    let reasons: Vec<&str> = rejected.iter().map(|l| l.split(": ").next().unwrap()).collect();
    let mut unique = reasons.clone();
    unique.dedup();
    assert_eq!(reasons, unique, "{text}");
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("maglev") && svg.contains("target 1.25"), "labels and targets drawn");
    std::fs::remove_dir_all(dir).unwrap();
}

/// The JSON's answers and eligible candidates are the text's, figure for figure.
#[test]
fn recommend_json_carries_the_text_figures() {
    let args = ["recommend", "--node-count", "10", "--max-load", "1.10,1.50"];
    let (text, doc) = (ok(&args), json(&args, "hashroute.recommend/1"));
    assert_eq!(doc["node_count"], 10);
    let targets = doc["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 2);
    for t in targets {
        let max_load = f(&t["max_load"]);
        let answer = t["answer"].as_str().expect("an answer at 1.10 and 1.50");
        let line = text.lines().find(|l| l.starts_with(&format!("  {max_load:.2}: "))).unwrap();
        assert!(line.starts_with(&format!("  {max_load:.2}: {answer} — ")), "{line}");
        let eligible = t["eligible"].as_array().unwrap();
        assert!(eligible.iter().any(|c| c["candidate"] == answer));
        for c in eligible {
            let name = c["candidate"].as_str().unwrap();
            let row = text
                .lines()
                .find(|l| l.split_whitespace().next() == Some(name))
                .unwrap_or_else(|| panic!("{name} is eligible in JSON but not in the text:\n{text}"));
            let cells: Vec<&str> = row.split_whitespace().collect();
            assert_eq!(cells[1].trim_end_matches('*'), format!("{:.3}", f(&c["max_over_mean"])), "{row}");
            assert_eq!(format!("{} {}", cells[2], cells[3]), bytes(&c["memory_bytes"]), "{row}");
            let moved = [opt(&c["moved_plus"], 2), opt(&c["moved_minus"], 2)];
            assert!(row.contains(&format!(" {} ", moved[0])) && row.contains(&format!(" {} ", moved[1])), "{row}");
            assert!(row.contains(&format!("{max_load:.2}")), "{row} is eligible at {max_load}");
        }
        for r in t["rejected"].as_array().unwrap() {
            let (name, reason) = (r["candidate"].as_str().unwrap(), r["reason"].as_str().unwrap());
            assert!(!reason.is_empty());
            assert!(text.lines().any(|l| l.starts_with("  rejected — ") && l.contains(name)), "{name}:\n{text}");
        }
    }
}

#[test]
fn migrate_json_is_the_plan_as_fractions() {
    let dir = scratch("migrate");
    let (from, to) = (nodes(&dir, "from.txt", 6), nodes(&dir, "to.txt", 7));
    let args = ["migrate", "--algo", "ring", "--from", &from, "--to", &to];
    let text = ok(&args);
    let doc = json(&args, "hashroute.migrate/1");
    let first = text.lines().next().unwrap();
    let fraction = f(&doc["moved_fraction"]);
    assert!((0.0..=1.0).contains(&fraction));
    assert!(first.ends_with(&format!(": {:.4}% of keys move", 100.0 * fraction)), "{first} vs {fraction}");
    assert_eq!(doc["exact"], true);
    assert_eq!(doc["space"], "hash64");
    for node in doc["nodes"].as_array().unwrap() {
        let name = node["name"].as_str().unwrap();
        let row = text.lines().find(|l| l.split_whitespace().next() == Some(name)).unwrap();
        let want: Vec<String> = ["before", "after", "moved_in", "moved_out"]
            .iter()
            .map(|k| format!("{:.4}%", 100.0 * f(&node[*k])))
            .collect();
        assert_eq!(row.split_whitespace().skip(1).collect::<Vec<_>>(), want, "{row}");
    }
    let moves = doc["moves"].as_array().unwrap();
    assert!(text.contains(&format!("{} moving ranges", moves.len())), "{text}");
    let summary = json(&[&args[..], &["--summary"]].concat(), "hashroute.migrate/1");
    assert!(summary.get("moves").is_none() && summary["moved_fraction"] == doc["moved_fraction"]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn migrate_summary_of_a_big_cluster_leads_with_the_movers() {
    let dir = scratch("migrate-big");
    let (from, to) = (nodes(&dir, "from.txt", 60), nodes(&dir, "to.txt", 61));
    let args = ["migrate", "--algo", "ring", "--from", &from, "--to", &to, "--summary"];
    let text = ok(&args);
    assert!(text.lines().count() <= 30, "{text}");
    assert!(text.lines().next().unwrap().contains("% of keys move"), "{text}");
    // The node that was added takes in every moved key: it comes first.
    assert!(text.lines().nth(3).unwrap().starts_with("cache-61 "), "{text}");
    assert!(text.contains("36 more nodes"), "{text}");
    let all = ok(&[&args[..], &["--all"]].concat());
    assert_eq!(all.lines().count(), 2 + 61, "{all}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn resize_prints_the_summary_first_and_json_has_its_figures() {
    let dir = scratch("resize");
    let (from, to) = (nodes(&dir, "from.txt", 3), nodes(&dir, "to.txt", 5));
    let svg = dir.join("resize.svg");
    let args =
        ["resize", "--from", &from, "--to", &to, "--keys", "20000", "--requests-per-step", "20000", "--window", "500"];
    let text = ok(&[&args[..], &["--plot", svg.to_str().unwrap()]].concat());
    let doc = json(&args, "hashroute.resize/1");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("resize 3 -> 5 nodes"), "{text}");
    let runs = doc["strategies"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    for (i, run) in runs.iter().enumerate() {
        let line = lines[1 + i];
        assert!(line.starts_with(run["strategy"].as_str().unwrap()), "{line}");
        assert!(line.contains(&format!("lowest hit rate {:.1}%", 100.0 * f(&run["lowest"]))), "{line}");
        assert!(line.contains(&format!("{} requests)", run["requests"])), "{line}");
    }
    let steady = format!("steady hit rate before {:.1}%", 100.0 * f(&doc["steady_before"]));
    assert!(lines[0].contains(&steady), "{}", lines[0]);
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("one-at-a-time") && svg.contains("steady before"));
    let bad = run(&[&args[..], &["--plot", dir.join("no/dir/x.svg").to_str().unwrap()]].concat());
    assert_eq!(bad.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.starts_with("hashroute: error: --plot ") && stderr.lines().count() == 1, "{stderr}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn fingerprint_json_is_the_text_fingerprint() {
    let args = ["fingerprint", "--algo", "maglev", "--nodes", "a,b,c"];
    let text = ok(&args);
    let doc = json(&args, "hashroute.fingerprint/1");
    assert_eq!(doc["fingerprint"].as_str().unwrap(), text.trim_end());
    assert_eq!(doc["algorithm"], "maglev");
    assert_eq!(doc["nodes"], 3);
}

#[test]
fn errors_stay_one_stderr_line_in_json_mode() {
    let dir = scratch("errors");
    let missing = dir.join("no-such-file.txt");
    let missing = missing.to_str().unwrap();
    let cases: [(&[&str], i32); 5] = [
        (&["recommend", "--node-count", "0", "--format", "json"], 1),
        (&["migrate", "--algo", "ring", "--from", missing, "--to", missing, "--format", "json"], 1),
        (&["fingerprint", "--algo", "ring", "--format", "json"], 1),
        (&["fingerprint", "--algo", "ring", "--nodes", "a", "--format", "yaml"], 2),
        (&["resize", "--from", missing, "--to", missing, "--format", "json"], 1),
    ];
    for (args, code) in cases {
        let out = run(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("hashroute: error: "), "{stderr}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// The progress line is drawn on a terminal (a pty from `script`), never in a pipe.
#[test]
fn progress_shows_on_a_terminal_only() {
    let script = Command::new("script").arg("--version").output();
    if !script.is_ok_and(|o| o.status.success()) {
        assert!(std::env::var_os("CI").is_none(), "`script` (util-linux) is needed for the terminal test in CI");
        println!("SKIPPED: no `script` to run hashroute on a pseudo-terminal");
        return;
    }
    let command = format!("{BIN} recommend --node-count 8 --max-load 1.5 >/dev/null");
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env("HASHROUTE_QUICK", "1")
        .stdin(Stdio::null())
        .output()
        .expect("spawn script");
    let tty = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{tty}");
    assert!(tty.contains("measuring"), "no progress on the terminal: {tty:?}");
    // In a pipe: every `ok` above asserts an empty stderr.
}

#[test]
fn completions_parse_and_name_the_subcommands() {
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let script = ok(&["completions", shell]);
        assert!(script.contains("recommend") && script.contains("format"), "{shell}");
    }
    let dir = scratch("completions");
    let path = write(&dir, "hashroute.bash", [ok(&["completions", "bash"])]);
    match Command::new("bash").args(["-n", &path]).output() {
        Ok(out) => assert!(out.status.success(), "bash -n: {}", String::from_utf8_lossy(&out.stderr)),
        Err(e) => {
            assert!(std::env::var_os("CI").is_none(), "bash missing in CI: {e}");
            println!("SKIPPED: bash not found ({e})");
        }
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_man_page_is_generated_and_renders() {
    let page = ok(&["man"]);
    assert!(page.contains(".TH hashroute 1"), "{page}");
    assert!(page.contains("recommend") && page.contains("completions"));
    let dir = scratch("man");
    let out = ok(&["man", "--out-dir", dir.to_str().unwrap()]);
    assert!(out.is_empty());
    for page in ["hashroute.1", "hashroute-recommend.1", "hashroute-resize.1"] {
        assert!(dir.join(page).is_file(), "{page} not written");
    }
    let rendered = Command::new("man").arg("-l").arg(dir.join("hashroute-recommend.1")).env("MANPAGER", "cat").output();
    match rendered {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(text.contains("--node-count") || text.contains("node-count"), "{text}");
        }
        Ok(out) => panic!("man -l failed: {}", String::from_utf8_lossy(&out.stderr)),
        Err(e) => println!("SKIPPED: rendering check, no `man` here ({e})"),
    }
    std::fs::remove_dir_all(dir).unwrap();
}

//! The `hashroute` binary's contract: output format, agreement with the library, one-line
//! errors, streaming with flat memory, quiet exit on a closed stdout.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};

use hashroute::{
    Anchor, Jump, Ketama, KetamaVariant, KeyHasher, Maglev, Memento, Modulo, MultiProbe, Node, NodeSet, RedisSlots,
    Rendezvous, Ring, Router,
};

const BIN: &str = env!("CARGO_BIN_EXE_hashroute");

struct Output {
    status: ExitStatus,
    stdout: Vec<u8>,
    stderr: String,
}

fn run_os(args: &[OsString], stdin: &[u8]) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("RUST_BACKTRACE", "1")
        .spawn()
        .expect("spawn hashroute");
    let mut pipe = child.stdin.take().expect("stdin");
    let input = stdin.to_vec();
    // The child may exit before reading everything (an error on the first key): ignore EPIPE.
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait hashroute");
    writer.join().expect("stdin writer");
    Output { status: out.status, stdout: out.stdout, stderr: String::from_utf8_lossy(&out.stderr).into_owned() }
}

fn run(args: &[&str], stdin: &[u8]) -> Output {
    run_os(&args.iter().map(OsString::from).collect::<Vec<_>>(), stdin)
}

/// Runs a call that must succeed silently; returns stdout.
fn ok(args: &[&str], stdin: &[u8]) -> String {
    let out = run(args, stdin);
    assert!(out.status.success(), "{args:?} failed: {}", out.stderr);
    assert!(out.stderr.is_empty(), "{args:?} wrote to stderr: {}", out.stderr);
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// `KEY<TAB>VALUE` lines into pairs, checking the shape.
fn pairs(stdout: &str) -> Vec<(String, String)> {
    stdout
        .lines()
        .map(|l| {
            let (k, v) = l.split_once('\t').unwrap_or_else(|| panic!("no tab in {l:?}"));
            (k.to_owned(), v.to_owned())
        })
        .collect()
}

fn tmp_file(name: &str, contents: &[u8]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

fn keys(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("key-{i}")).collect()
}

/// The paper's reference loop (Lamping & Veach 2014, figure 1), written out here so the test does
/// not trust the library it checks.
fn paper_jump(mut key: u64, buckets: i64) -> i64 {
    let (mut b, mut j) = (-1i64, 0i64);
    while j < buckets {
        b = j;
        key = key.wrapping_mul(2862933555777941757).wrapping_add(1);
        j = ((b + 1) as f64 * ((1u64 << 31) as f64 / ((key >> 33) + 1) as f64)) as i64;
    }
    b
}

#[test]
fn malformed_calls_fail_with_one_line() {
    let weight_file = |name: &str, w: &str| tmp_file(name, format!("a 1\nb {w}\n").as_bytes()).display().to_string();
    let zero = weight_file("w-zero.txt", "0");
    let negative = weight_file("w-neg.txt", "-1");
    let nan = weight_file("w-nan.txt", "NaN");
    let inf = weight_file("w-inf.txt", "inf");
    let text_weight = weight_file("w-text.txt", "heavy");
    let extra_field = tmp_file("extra.txt", b"a 1 2\n").display().to_string();
    let only_comments = tmp_file("comments.txt", b"# nothing here\n\n").display().to_string();
    let not_utf8 = tmp_file("latin1.txt", b"caf\xe9 1\n").display().to_string();
    let duplicate_file = tmp_file("dup.txt", b"a\nb\na\n").display().to_string();
    let weighted = tmp_file("weighted.txt", b"a 1\nb 2\n").display().to_string();
    let directory = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).display().to_string();
    let missing = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-such-file").display().to_string();

    #[rustfmt::skip]
    let cases: Vec<(Vec<&str>, &[u8], &str)> = vec![
        (vec!["route", "--algo", "md6", "--nodes", "a", "k"], b"", "invalid algorithm: \"md6\""),
        (vec!["route", "--algo", "Ring", "--nodes", "a", "k"], b"", "invalid algorithm"),
        (vec!["route", "--nodes", "a", "k"], b"", "--algo"),
        (vec!["route", "--algo", "ring", "k"], b"", "no nodes"),
        (vec!["route", "--algo", "ring", "--nodes", "", "k"], b"", "empty node name"),
        (vec!["route", "--algo", "ring", "--nodes", "a,,b", "k"], b"", "empty node name"),
        (vec!["route", "--algo", "ring", "--nodes", "a,b,a", "k"], b"", "duplicate node name \"a\""),
        (vec!["route", "--algo", "ring", "--nodes-file", &duplicate_file, "k"], b"", "duplicate node name"),
        (vec!["route", "--algo", "ring", "--nodes-file", &zero, "k"], b"", "invalid weight 0"),
        (vec!["route", "--algo", "ketama", "--nodes-file", &negative, "k"], b"", "invalid weight -1"),
        (vec!["route", "--algo", "ring", "--nodes-file", &nan, "k"], b"", "invalid weight NaN"),
        (vec!["route", "--algo", "ring", "--nodes-file", &inf, "k"], b"", "invalid weight inf"),
        (vec!["route", "--algo", "ring", "--nodes-file", &text_weight, "k"], b"", "line 2: weight \"heavy\""),
        (vec!["route", "--algo", "ring", "--nodes-file", &extra_field, "k"], b"", "unexpected field"),
        (vec!["route", "--algo", "ring", "--nodes-file", &only_comments, "k"], b"", "no nodes"),
        (vec!["route", "--algo", "ring", "--nodes-file", &not_utf8, "k"], b"", "not valid UTF-8"),
        (vec!["route", "--algo", "ring", "--nodes-file", &missing, "k"], b"", "no-such-file"),
        (vec!["route", "--algo", "ring", "--nodes-file", &directory, "k"], b"", "nodes file"),
        (vec!["route", "--algo", "ring", "--nodes", "a", "--nodes-file", &weighted, "k"], b"", "cannot be used with"),
        (vec!["route", "--algo", "jump", "--nodes-file", &weighted, "k"], b"", "jump does not support weighted nodes"),
        (vec!["route", "--algo", "modulo", "--nodes-file", &weighted, "k"], b"", "modulo does not support weighted nodes"),
        (vec!["route", "--algo", "ring", "--nodes", "a", "--vnodes", "0", "k"], b"", "invalid vnode count 0"),
        (vec!["route", "--algo", "ring", "--nodes", "a", "--vnodes", "2000000", "k"], b"", "invalid vnode count 2000000"),
        (vec!["route", "--algo", "ring", "--nodes", "a", "--vnodes", "99999999999999999999999", "k"], b"", "--vnodes"),
        (vec!["route", "--algo", "ring", "--nodes", "a", "--vnodes", "ten", "k"], b"", "--vnodes"),
        (vec!["route", "--algo", "ring", "--nodes", "a", "--vnodes", "-5", "k"], b"", "-5"),
        (vec!["route", "--algo", "jump", "--nodes", "a", "--vnodes", "10", "k"], b"", "jump has no virtual nodes"),
        (vec!["route", "--algo", "ketama", "--nodes", "a", "--vnodes", "10", "k"], b"", "160"),
        (vec!["route", "--algo", "ketama", "--nodes", "a", "--hash", "xxh3", "k"], b"", "md5 only"),
        (vec!["route", "--algo", "ketama", "--nodes", "a", "--seed", "1", "k"], b"", "md5 takes no seed"),
        (vec!["route", "--algo", "slots", "--nodes", "a", "--hash", "md5", "k"], b"", "crc16 only"),
        (vec!["route", "--algo", "ring", "--nodes", "a", "--hash", "sha1", "k"], b"", "unknown hasher \"sha1\""),
        (vec!["route", "--algo", "ring", "--nodes", "a", "--hash", "murmur3", "--seed", "4294967296", "k"], b"", "32 bits"),
        (vec!["route", "--algo", "ring", "--nodes", "a", "--seed", "0x1g", "k"], b"", "--seed"),
        (vec!["route", "--algo", "ring", "--nodes", "a", "--variant", "uhashring", "k"], b"", "ketama only, not ring"),
        (vec!["route", "--algo", "ketama", "--nodes", "a", "--variant", "twemproxy2", "k"], b"", "\"twemproxy2\""),
        (vec!["route", "--algo", "ring", "--nodes", "a", "--input", "hex", "zz"], b"", "key argument 1: \"zz\" is not hex"),
        (vec!["route", "--algo", "ring", "--nodes", "a", "--input", "hex", "00", "abc"], b"", "key argument 2: \"abc\" has an odd number"),
        (vec!["route", "--algo", "ring", "--nodes", "a", "--input", "hex"], b"00\n\nabcd\n0x\n", "stdin line 4"),
        (vec!["route", "--algo", "jump", "--nodes", "a", "--input", "u64", "18446744073709551616"], b"", "does not fit in 64 bits"),
        (vec!["route", "--algo", "jump", "--nodes", "a", "--input", "u64"], b"1\n0x10000000000000000\n", "stdin line 2"),
        (vec!["route", "--algo", "jump", "--nodes", "a", "--input", "u64", "--", "-1"], b"", "is not a u64"),
        (vec!["route", "--algo", "jump", "--nodes", "a", "--input", "u64", ""], b"", "is not a u64"),
        (vec!["route", "--algo", "ketama", "--nodes", "a", "--input", "u64", "1"], b"", "ketama"),
        (vec!["route", "--algo", "slots", "--nodes", "a", "--input", "u64", "1"], b"", "slots"),
        (vec!["route", "--algo", "ring", "--nodes", "a", "--input", "base64", "k"], b"", "--input"),
        (vec!["route", "--algo", "jump", "--buckets", "0", "k"], b"", "bucket count must be at least 1"),
        (vec!["route", "--algo", "jump", "--buckets", "4294967296", "k"], b"", "--buckets"),
        (vec!["route", "--algo", "ring", "--buckets", "10", "k"], b"", "jumpback-anchor only, not ring"),
        (vec!["route", "--algo", "jump", "--buckets", "10", "--nodes", "a", "k"], b"", "cannot be used with"),
        (vec!["replicas", "--algo", "ring", "--nodes", "a,b", "-n", "3", "k"], b"", "asked for 3 replicas but the router has only 2 nodes"),
        (vec!["replicas", "--algo", "ring", "--nodes", "a,b", "-n", "0", "k"], b"", "at least 1 replica"),
        (vec!["replicas", "--algo", "ring", "--nodes", "a,b", "-n", "two", "k"], b"", "-n"),
        (vec!["replicas", "--algo", "ring", "--nodes", "a,b", "k"], b"", "-n <N>"),
        (vec!["replicas", "--algo", "slots", "--nodes", "a,b", "-n", "1", "k"], b"", "slots"),
        (vec!["replicas", "--algo", "ring", "--nodes", "a,b", "-n", "1", "--input", "u64", "1"], b"", "u64"),
        (vec!["replicas", "--algo", "jump", "--buckets", "2000000", "-n", "1", "k"], b"", "at most 1048576"),
        (vec!["slot", "--input", "u64", "1"], b"", "u64"),
        (vec!["slot", "--input", "hex", "7"], b"", "odd number"),
        (vec!["route", "--algo", "ring", "--nodes", "a", "--bogus", "k"], b"", "unexpected argument '--bogus'"),
        (vec!["route", "--algo", "ring", "--algo", "jump", "--nodes", "a"], b"", "--algo"),
        // Maglev, multiprobe, memento, anchor and their parameters.
        (vec!["route", "--algo", "maglev", "--nodes", "a", "--table-size", "65536", "k"], b"", "table size: 65536 is not a prime"),
        (vec!["route", "--algo", "maglev", "--nodes", "a,b,c,d", "--table-size", "3", "k"], b"", "3 is smaller than the node count 4"),
        (vec!["route", "--algo", "maglev", "--nodes", "a", "--table-size", "99999999999", "k"], b"", "exceeds the cap"),
        (vec!["route", "--algo", "maglev", "--nodes", "a", "--table-size", "ten", "k"], b"", "--table-size"),
        (vec!["route", "--algo", "maglev", "--nodes", "a", "--table-size", "-7", "k"], b"", "-7"),
        (vec!["route", "--algo", "ring", "--nodes", "a", "--table-size", "65537", "k"], b"", "maglev only, not ring"),
        (vec!["route", "--algo", "maglev", "--nodes", "a", "--vnodes", "10", "k"], b"", "maglev has no virtual nodes"),
        (vec!["route", "--algo", "maglev", "--nodes", "a", "--probes", "3", "k"], b"", "multiprobe only, not maglev"),
        (vec!["route", "--algo", "multiprobe", "--nodes", "a", "--probes", "0", "k"], b"", "probes: 0 must be between 1 and"),
        (vec!["route", "--algo", "multiprobe", "--nodes", "a", "--probes", "100000", "k"], b"", "must be between 1 and"),
        (vec!["route", "--algo", "multiprobe", "--nodes", "a", "--probes", "4294967296", "k"], b"", "--probes"),
        (vec!["route", "--algo", "multiprobe", "--nodes", "a", "--probes", "many", "k"], b"", "--probes"),
        (vec!["route", "--algo", "multiprobe", "--nodes", "a", "--table-size", "65537", "k"], b"", "maglev only, not multiprobe"),
        (vec!["route", "--algo", "multiprobe", "--nodes-file", &weighted, "k"], b"", "multiprobe does not support weighted nodes"),
        (vec!["route", "--algo", "memento", "--nodes-file", &weighted, "k"], b"", "memento does not support weighted nodes"),
        (vec!["route", "--algo", "memento", "--nodes", "a", "--capacity", "8", "k"], b"", "anchor only, not memento"),
        (vec!["route", "--algo", "memento", "--nodes", "a", "--variant", "uhashring", "k"], b"", "ketama only, not memento"),
        (vec!["route", "--algo", "anchor", "--nodes-file", &weighted, "k"], b"", "anchor does not support weighted nodes"),
        (vec!["route", "--algo", "anchor", "--nodes", "a,b,c", "--capacity", "2", "k"], b"", "capacity: 2 must be between the node count 3"),
        (vec!["route", "--algo", "anchor", "--nodes", "a", "--capacity", "0", "k"], b"", "capacity: 0"),
        (vec!["route", "--algo", "anchor", "--nodes", "a", "--capacity", "4294967295", "k"], b"", "capacity: 4294967295"),
        (vec!["route", "--algo", "anchor", "--nodes", "a", "--capacity", "1.5", "k"], b"", "--capacity"),
        (vec!["route", "--algo", "ring", "--nodes", "a", "--capacity", "8", "k"], b"", "anchor only, not ring"),
        (vec!["route", "--algo", "anchor", "--buckets", "8", "k"], b"", "jumpback-anchor only, not anchor"),
        (vec!["route", "--algo", "jumpback", "--generator", "pcg", "--buckets", "8", "k"], b"", "unknown generator"),
        (vec!["route", "--algo", "jump", "--generator", "splitmix64", "--buckets", "8", "k"], b"", "jumpback only, not jump"),
        (vec!["route", "--algo", "jump", "--buckets", "8", "--removed", "1", "k"], b"", "jumpback-anchor only, not jump"),
        (vec!["route", "--algo", "jumpback-anchor", "--buckets", "8", "--removed", "8", "k"], b"", "--removed 8"),
        (vec!["route", "--algo", "jumpback-anchor", "--buckets", "8", "--removed", "1,1", "k"], b"", "--removed 1"),
        (vec!["route", "--algo", "jumpback-anchor", "--buckets", "8", "--removed", "x", "k"], b"", "not a bucket id"),
        (vec!["route", "--algo", "power", "--buckets", "0", "k"], b"", "bucket count must be at least 1"),
        (vec!["replicas", "--algo", "maglev", "--nodes", "a,b", "-n", "3", "k"], b"", "asked for 3 replicas"),
        (vec!["replicas", "--algo", "anchor", "--nodes", "a,b", "-n", "1", "--capacity", "1", "k"], b"", "capacity"),
        // migrate
        (vec!["migrate", "--algo", "ring", "--to", &weighted], b"", "--from"),
        (vec!["migrate", "--algo", "ring", "--from", &weighted], b"", "--to"),
        (vec!["migrate", "--from", &weighted, "--to", &weighted], b"", "--algo"),
        (vec!["migrate", "--algo", "ring", "--from", &missing, "--to", &weighted], b"", "no-such-file"),
        (vec!["migrate", "--algo", "ring", "--from", &weighted, "--to", &duplicate_file], b"", "duplicate node name"),
        (vec!["migrate", "--algo", "ring", "--from", &weighted, "--to", &only_comments], b"", "no nodes"),
        (vec!["migrate", "--algo", "memento", "--from", &duplicate_file, "--to", &weighted], b"", "duplicate node name"),
        (vec!["migrate", "--algo", "memento", "--from", &extra_field, "--to", &weighted], b"", "unexpected field"),
        (vec!["migrate", "--algo", "memento", "--from", &weighted, "--to", &weighted], b"", "--from: memento does not support weighted"),
        (vec!["migrate", "--algo", "anchor", "--capacity", "2", "--from", &weighted, "--to", &weighted], b"", "weighted"),
        (vec!["migrate", "--algo", "maglev", "--table-size", "4", "--from", &weighted, "--to", &weighted], b"", "4 is not a prime"),
        (vec!["migrate", "--algo", "ring", "--nodes", "a", "--from", &weighted, "--to", &weighted], b"", "unexpected argument '--nodes'"),
        (vec!["migrate", "--algo", "ring", "--from", &weighted, "--to", &weighted, "k"], b"", "unexpected argument 'k'"),
        // fingerprint
        (vec!["fingerprint", "--algo", "ring"], b"", "no nodes"),
        (vec!["fingerprint", "--algo", "md6", "--nodes", "a"], b"", "invalid algorithm"),
        (vec!["fingerprint", "--algo", "maglev", "--nodes", "a", "--table-size", "10"], b"", "10 is not a prime"),
        (vec!["fingerprint", "--algo", "ring", "--nodes-file", &zero], b"", "invalid weight 0"),
        (vec!["fingerprint", "--algo", "ring", "--nodes", "a", "k"], b"", "unexpected argument 'k'"),
        // recommend
        (vec!["recommend"], b"", "--node-count"),
        (vec!["recommend", "--node-count", "0"], b"", "node count: 0"),
        (vec!["recommend", "--node-count", "-3"], b"", "-3"),
        (vec!["recommend", "--node-count", "8", "--max-load", "1.0"], b"", "max load: 1"),
        (vec!["recommend", "--node-count", "8", "--max-load", "NaN"], b"", "max load: NaN"),
        (vec!["recommend", "--node-count", "8", "--max-load", "ten"], b"", "--max-load"),
        (vec!["recommend", "--node-count", "8", "--algo", "ring"], b"", "unexpected argument '--algo'"),
        (vec!["recommend", "--node-count", "8", "--max-load", "1.05,0.9"], b"", "max load: 0.9"),
        (vec!["recommend", "--node-count", "8", "--require", "fast"], b"", "unknown requirement \"fast\""),
        (vec!["recommend", "--node-count", "8", "--compatible-with", "nutcracker"], b"", "unknown system \"nutcracker\""),
        (vec!["recommend", "--node-count", "8", "--max-lookup-ns=-1"], b"", "max lookup ns"),
        (vec!["recommend", "--node-count", "2000000"], b"", "node count: 2000000"),
        (vec!["recommend", "--nodes-file", &missing], b"", "no-such-file"),
        (vec!["recommend", "--nodes-file", &extra_field], b"", "unexpected field"),
        (vec!["recommend", "--nodes-file", &weighted, "--grow=-2"], b"", "--grow"),
        (vec!["recommend", "--nodes-file", &weighted, "--node-count", "3"], b"", "cannot be used with"),
        (vec!["reroute", "k"], b"", "unrecognized subcommand 'reroute'"),
        (vec![], b"", "missing subcommand"),
    ];
    assert!(cases.len() >= 20);
    for (args, stdin, needle) in &cases {
        let out = run(args, stdin);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(out.status.code().is_some(), "{args:?} was killed by a signal");
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?}: stderr is not one line: {:?}", out.stderr);
        assert!(out.stderr.ends_with('\n'));
        let line = lines[0];
        assert!(line.starts_with("hashroute: error: "), "{args:?}: {line}");
        assert!(!line.contains("panicked") && !line.contains("internal error"), "{args:?}: {line}");
        assert!(line.contains(needle), "{args:?}: {line:?} does not mention {needle:?}");
    }
}

/// Every algorithm's CLI output equals the library's route for the same configuration; the
/// library routers are built directly where they exist, bypassing `RouterSpec`.
#[test]
fn routing_agrees_with_library_for_each_algorithm() {
    let names = ["10.0.1.1:11211", "10.0.1.2:11211", "10.0.1.3:11211", "10.0.1.4:11211", "10.0.1.5:11211"];
    let node_list = names.join(",");
    let set = NodeSet::from_names(names).unwrap();
    let weighted_file = tmp_file(
        "servers.txt",
        b"# libketama server file\n10.0.1.1:11211\t600\n10.0.1.2:11211\t300\n\n10.0.1.3:11211 200 # small\n",
    );
    let weighted_set = NodeSet::new([
        Node::new("10.0.1.1:11211").with_weight(600.0),
        Node::new("10.0.1.2:11211").with_weight(300.0),
        Node::new("10.0.1.3:11211").with_weight(200.0),
    ])
    .unwrap();
    let keys = keys(400);
    let key_args: Vec<&str> = keys.iter().map(String::as_str).collect();

    let check = |flags: &[&str], router: &dyn Router| {
        let mut args = vec!["route"];
        args.extend_from_slice(flags);
        args.extend_from_slice(&key_args);
        let got = pairs(&ok(&args, b""));
        assert_eq!(got.len(), keys.len(), "{flags:?}");
        for ((k, node), want) in got.iter().zip(&keys) {
            assert_eq!(k, want, "{flags:?}: keys in input order");
            assert_eq!(node, router.node_name(router.route(k.as_bytes())), "{flags:?}: key {k}");
        }
    };
    let nodes = node_list.as_str();
    let file = weighted_file.to_str().unwrap();
    let ring =
        |h: KeyHasher, v: u64, s: &NodeSet| Ring::builder().vnodes(v).hasher(h).node_set(s.clone()).build().unwrap();
    check(&["--algo", "ring", "--nodes", nodes], &ring(KeyHasher::default(), 160, &set));
    check(
        &["--algo", "ring", "--nodes", nodes, "--vnodes", "7", "--hash", "xxh64", "--seed", "42"],
        &ring(KeyHasher::Xxh64 { seed: 42 }, 7, &set),
    );
    check(
        &["--algo", "ring", "--nodes", nodes, "--hash", "murmur3", "--seed", "0x9747b28c"],
        &ring(KeyHasher::Murmur3X64 { seed: 0x9747_b28c }, 160, &set),
    );
    check(&["--algo", "ring", "--nodes-file", file, "--vnodes", "40"], &ring(KeyHasher::default(), 40, &weighted_set));
    check(&["--algo", "ring", "--nodes", nodes, "--hash", "md5"], &ring(KeyHasher::Md5, 160, &set));
    check(
        &["--algo", "modulo", "--nodes", nodes],
        &Modulo::builder().node_set(set.clone()).hasher(KeyHasher::default()).build().unwrap(),
    );
    check(
        &["--algo", "modulo", "--nodes", nodes, "--seed", "7"],
        &Modulo::builder().node_set(set.clone()).hasher(KeyHasher::Xxh3 { seed: 7 }).build().unwrap(),
    );
    check(
        &["--algo", "jump", "--nodes", nodes],
        &Jump::builder().node_set(set.clone()).hasher(KeyHasher::default()).build().unwrap(),
    );
    check(
        &["--algo", "jump", "--nodes", nodes, "--hash", "murmur3"],
        &Jump::builder().node_set(set.clone()).hasher(KeyHasher::Murmur3X64 { seed: 0 }).build().unwrap(),
    );

    let ketama = |v: KetamaVariant, s: &NodeSet| Ketama::builder().node_set(s.clone()).variant(v).build().unwrap();
    check(&["--algo", "ketama", "--nodes", nodes], &ketama(KetamaVariant::Libketama, &set));
    check(&["--algo", "ketama", "--nodes-file", file], &ketama(KetamaVariant::Libketama, &weighted_set));
    check(&["--algo", "ketama", "--nodes", nodes, "--hash", "md5"], &ketama(KetamaVariant::Libketama, &set));
    for v in KetamaVariant::ALL {
        check(&["--algo", "ketama", "--nodes-file", file, "--variant", v.name()], &ketama(v, &weighted_set));
    }
    check(
        &["--algo", "rendezvous", "--nodes", nodes],
        &Rendezvous::builder().node_set(set.clone()).hasher(KeyHasher::default()).build().unwrap(),
    );
    check(
        &["--algo", "rendezvous", "--nodes-file", file],
        &Rendezvous::builder().node_set(weighted_set.clone()).hasher(KeyHasher::default()).build().unwrap(),
    );
    check(
        &["--algo", "rendezvous", "--nodes", nodes, "--hash", "xxh64", "--seed", "9"],
        &Rendezvous::builder().node_set(set.clone()).hasher(KeyHasher::Xxh64 { seed: 9 }).build().unwrap(),
    );
    check(&["--algo", "slots", "--nodes", nodes], &RedisSlots::builder().node_set(set.clone()).build().unwrap());

    // Maglev (weights honoured), multiprobe, memento, anchor (default capacity 2 × N).
    check(
        &["--algo", "maglev", "--nodes", nodes],
        &Maglev::builder().node_set(set.clone()).hasher(KeyHasher::default()).table_size(65537).build().unwrap(),
    );
    check(
        &["--algo", "maglev", "--nodes-file", file, "--table-size", "4099", "--hash", "murmur3", "--seed", "5"],
        &Maglev::builder()
            .node_set(weighted_set.clone())
            .hasher(KeyHasher::Murmur3X64 { seed: 5 })
            .table_size(4099)
            .build()
            .unwrap(),
    );
    check(
        &["--algo", "multiprobe", "--nodes", nodes],
        &MultiProbe::builder().node_set(set.clone()).hasher(KeyHasher::default()).probes(21).build().unwrap(),
    );
    check(
        &["--algo", "multiprobe", "--nodes", nodes, "--probes", "3", "--hash", "xxh64"],
        &MultiProbe::builder().node_set(set.clone()).hasher(KeyHasher::Xxh64 { seed: 0 }).probes(3).build().unwrap(),
    );
    check(
        &["--algo", "memento", "--nodes", nodes],
        &Memento::builder().node_set(set.clone()).hasher(KeyHasher::default()).build().unwrap(),
    );
    check(
        &["--algo", "memento", "--nodes", nodes, "--seed", "99"],
        &Memento::builder().node_set(set.clone()).hasher(KeyHasher::Xxh3 { seed: 99 }).build().unwrap(),
    );
    check(
        &["--algo", "anchor", "--nodes", nodes],
        &Anchor::builder().node_set(set.clone()).hasher(KeyHasher::default()).capacity(10).build().unwrap(),
    );
    check(
        &["--algo", "anchor", "--nodes", nodes, "--capacity", "5"],
        &Anchor::builder().node_set(set.clone()).hasher(KeyHasher::default()).capacity(5).build().unwrap(),
    );
    check(
        &["--algo", "anchor", "--nodes", nodes, "--capacity", "1000", "--hash", "md5"],
        &Anchor::builder().node_set(set.clone()).hasher(KeyHasher::Md5).capacity(1000).build().unwrap(),
    );
    // The capacity changes routes (keys start at `hash mod capacity`): the default is not
    // silently the node count.
    let five = Anchor::builder().node_set(set.clone()).hasher(KeyHasher::default()).capacity(5).build().unwrap();
    let ten = Anchor::builder().node_set(set.clone()).hasher(KeyHasher::default()).capacity(10).build().unwrap();
    assert!(keys.iter().any(|k| five.route(k.as_bytes()) != ten.route(k.as_bytes())));
}

/// Through the CLI, every Ketama variant answers what the real client library answered
/// (`ketama_assignments.csv`), from libketama server files.
#[test]
fn ketama_variants_match_real_clients() {
    let Some(rows) = common::read_csv("ketama_assignments.csv") else { return };
    // The configurations of `ketama_server_configs.json`, in libketama's server-file format.
    let eq3 = tmp_file("eq3.txt", b"127.0.0.1:11211\t1\n127.0.0.1:11212\t1\n127.0.0.1:11213\t1\n");
    let w1234 = tmp_file(
        "w1234.txt",
        b"# weights 1..4\n127.0.0.1:11211 1\n127.0.0.1:11212 2\n127.0.0.1:11213 3\n127.0.0.1:11214 4\n",
    );
    let columns = [
        ("libketama", "libketama"),
        ("uhashring_ketama", "uhashring"),
        ("libmemcached_ketama_weighted", "libmemcached"),
        ("libmemcached_ketama_spy", "spymemcached"),
        ("python_hash_ring", "python-hash-ring"),
    ];
    let mut checked = 0;
    for (config, file) in [("eq3", &eq3), ("w1234", &w1234)] {
        let rows: Vec<_> = rows.iter().filter(|r| r["config"] == config).collect();
        assert!(!rows.is_empty(), "{config}");
        let input: String = rows.iter().map(|r| format!("{}\n", r["key_utf8_hex"])).collect();
        for (column, variant) in columns {
            let args = [
                "route",
                "--algo",
                "ketama",
                "--variant",
                variant,
                "--nodes-file",
                file.to_str().unwrap(),
                "--input",
                "hex",
            ];
            let got = pairs(&ok(&args, input.as_bytes()));
            assert_eq!(got.len(), rows.len());
            for ((k, node), row) in got.iter().zip(&rows) {
                assert_eq!(k, &row["key_utf8_hex"]);
                if !row[column].is_empty() {
                    assert_eq!(node, &row[column], "{config} {variant} key {:?}", row["key"]);
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 1000, "{checked}");
}

#[test]
fn stdin_and_args_agree() {
    let keys = keys(300);
    let flags = ["route", "--algo", "ring", "--nodes", "a,b,c,d,e", "--vnodes", "50"];
    let mut args: Vec<&str> = flags.to_vec();
    args.extend(keys.iter().map(String::as_str));
    let from_args = ok(&args, b"");
    let from_stdin = ok(&flags, keys.join("\n").as_bytes());
    assert_eq!(from_args, from_stdin, "no trailing newline on stdin");
    assert_eq!(from_stdin, ok(&flags, format!("{}\n", keys.join("\n")).as_bytes()), "trailing newline");
    assert_eq!(from_stdin, ok(&flags, format!("{}\r\n", keys.join("\r\n")).as_bytes()), "CRLF line ends");
    assert_eq!(from_stdin.lines().count(), keys.len());

    // An empty line is the empty key; only one `\n` / `\r\n` is stripped; non-UTF-8 keys and
    // keys with spaces or tabs... come back byte for byte.
    let stdin: &[u8] = b"a\n\nb \r\r\n\xff\xfe\n c\n";
    let out = run(&flags, stdin);
    assert!(out.status.success(), "{}", out.stderr);
    let lines: Vec<&[u8]> = out.stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
    let keys_back: Vec<&[u8]> = lines.iter().map(|l| &l[..l.iter().rposition(|&b| b == b'\t').unwrap()]).collect();
    assert_eq!(keys_back, [&b"a"[..], b"", b"b \r", b"\xff\xfe", b" c"]);
    let ring = Ring::builder().vnodes(50).nodes(["a", "b", "c", "d", "e"]).build().unwrap();
    for (line, key) in lines.iter().zip(&keys_back) {
        let node = &line[key.len() + 1..];
        assert_eq!(node, ring.node_name(ring.route(key)).as_bytes());
    }

    // Keys that look like flags follow `--`.
    let dashed = ok(&["route", "--algo", "ring", "--nodes", "a,b,c,d,e", "--vnodes", "50", "--", "-k", "--help"], b"");
    let want =
        format!("-k\t{}\n--help\t{}\n", ring.node_name(ring.route(b"-k")), ring.node_name(ring.route(b"--help")));
    assert_eq!(dashed, want);

    // The same non-UTF-8 key as an argument.
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        let mut args: Vec<OsString> = flags.iter().map(OsString::from).collect();
        args.push(OsString::from_vec(b"\xff\xfe".to_vec()));
        let out = run_os(&args, b"");
        assert!(out.status.success(), "{}", out.stderr);
        assert_eq!(
            out.stdout,
            [&b"\xff\xfe\t"[..], ring.node_name(ring.route(b"\xff\xfe")).as_bytes(), b"\n"].concat()
        );
    }
}

#[test]
fn hex_input_routes_the_decoded_bytes() {
    let keys: Vec<Vec<u8>> = vec![b"".to_vec(), b"user:42".to_vec(), vec![0, 255, 10, 13], b"\t".to_vec()];
    let hex: Vec<String> = keys.iter().map(|k| k.iter().map(|b| format!("{b:02x}")).collect()).collect();
    let upper: Vec<String> = hex.iter().map(|h| h.to_uppercase()).collect();
    let flags = ["route", "--algo", "jump", "--nodes", "a,b,c,d,e,f,g", "--input", "hex"];
    let jump = Jump::from_names(["a", "b", "c", "d", "e", "f", "g"]).unwrap();
    for written in [&hex, &upper] {
        let out = pairs(&ok(&flags, format!("{}\n", written.join("\n")).as_bytes()));
        assert_eq!(out.len(), keys.len());
        for (((k, node), key), w) in out.iter().zip(&keys).zip(written.iter()) {
            assert_eq!(k, w, "the key is printed as given");
            assert_eq!(node, jump.node_name(jump.route(key)));
        }
    }
    // The empty key needs stdin (an empty argument works too).
    assert_eq!(
        ok(&["route", "--algo", "jump", "--nodes", "a,b,c,d,e,f,g", "--input", "hex", ""], b""),
        format!("\t{}\n", jump.node_name(jump.route(b"")))
    );
}

#[test]
fn u64_input_with_jump_equals_the_paper() {
    // The published vectors (go-jump, Guava), keys given as 0x hex and bucket counts as --buckets.
    if let Some(rows) = common::read_csv("jump_consistent_hash.csv") {
        let mut by_buckets: BTreeMap<u32, Vec<(String, String)>> = BTreeMap::new();
        for row in &rows {
            by_buckets
                .entry(row["num_buckets"].parse().unwrap())
                .or_default()
                .push((row["key_hex"].clone(), row["bucket"].clone()));
        }
        for (buckets, cases) in by_buckets {
            let n = buckets.to_string();
            let mut args = vec!["route", "--algo", "jump", "--buckets", &n, "--input", "u64"];
            args.extend(cases.iter().map(|(k, _)| k.as_str()));
            let got = pairs(&ok(&args, b""));
            assert_eq!(got, cases, "{buckets} buckets");
        }
    }
    // And the reference loop itself, for keys across the whole u64 range.
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let keys: Vec<u64> = (0..300)
        .map(|_| {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            rng
        })
        .chain([0, 1, u64::MAX, 1 << 63])
        .collect();
    let input: String = keys.iter().map(|k| format!("{k}\n")).collect();
    for buckets in [1u32, 2, 7, 1000, 65_536, 1 << 31, u32::MAX] {
        let n = buckets.to_string();
        let got = pairs(&ok(&["route", "--algo", "jump", "--buckets", &n, "--input", "u64"], input.as_bytes()));
        for ((k, b), key) in got.iter().zip(&keys) {
            assert_eq!(k, &key.to_string());
            assert_eq!(b, &paper_jump(*key, i64::from(buckets)).to_string(), "key {key}, {buckets} buckets");
        }
    }
    // With named nodes, bucket i is node i.
    let names: Vec<String> = (0..13).map(|i| format!("shard-{i}")).collect();
    let got = pairs(&ok(&["route", "--algo", "jump", "--nodes", &names.join(","), "--input", "u64"], input.as_bytes()));
    for ((_, node), key) in got.iter().zip(&keys) {
        assert_eq!(node, &names[paper_jump(*key, 13) as usize]);
    }
    // --buckets with byte keys hashes first, exactly as a node list of 0..N does.
    let text_keys = keys_input(200);
    let buckets = ok(&["route", "--algo", "jump", "--buckets", "13"], text_keys.as_bytes());
    let numbered: Vec<String> = (0..13).map(|i| i.to_string()).collect();
    assert_eq!(buckets, ok(&["route", "--algo", "jump", "--nodes", &numbered.join(",")], text_keys.as_bytes()));
}

fn keys_input(n: usize) -> String {
    keys(n).iter().map(|k| format!("{k}\n")).collect()
}

#[test]
fn u64_input_skips_the_hasher() {
    let set = NodeSet::from_names(["a", "b", "c"]).unwrap();
    let routers: Vec<(&str, Box<dyn Router>)> = vec![
        ("ring", Box::new(Ring::builder().node_set(set.clone()).build().unwrap())),
        (
            "rendezvous",
            Box::new(Rendezvous::builder().node_set(set.clone()).hasher(KeyHasher::default()).build().unwrap()),
        ),
        ("modulo", Box::new(Modulo::builder().node_set(set.clone()).hasher(KeyHasher::default()).build().unwrap())),
        ("jump", Box::new(Jump::builder().node_set(set.clone()).hasher(KeyHasher::default()).build().unwrap())),
        (
            "maglev",
            Box::new(
                Maglev::builder().node_set(set.clone()).hasher(KeyHasher::default()).table_size(65537).build().unwrap(),
            ),
        ),
        (
            "multiprobe",
            Box::new(
                MultiProbe::builder().node_set(set.clone()).hasher(KeyHasher::default()).probes(21).build().unwrap(),
            ),
        ),
        ("memento", Box::new(Memento::builder().node_set(set.clone()).hasher(KeyHasher::default()).build().unwrap())),
        (
            "anchor",
            Box::new(Anchor::builder().node_set(set.clone()).hasher(KeyHasher::default()).capacity(6).build().unwrap()),
        ),
    ];
    let hashes = [0u64, 1, 2, 3, 4, 5, 0xDEAD_BEEF, 1 << 63, u64::MAX - 1, u64::MAX];
    let input: String = hashes.iter().map(|h| format!("{h:#x}\n")).collect();
    for (algo, router) in routers {
        let got = pairs(&ok(&["route", "--algo", algo, "--nodes", "a,b,c", "--input", "u64"], input.as_bytes()));
        for ((k, node), h) in got.iter().zip(hashes) {
            assert_eq!(k, &format!("{h:#x}"));
            assert_eq!(node, router.node_name(router.route_hash(h).unwrap()), "{algo} {h}");
        }
    }
}

#[test]
fn replicas_agree_with_library() {
    let names: Vec<String> = (0..6).map(|i| format!("n{i}")).collect();
    let set = NodeSet::from_names(&names).unwrap();
    let routers: Vec<(&str, Box<dyn Router>)> = vec![
        ("ring", Box::new(Ring::builder().node_set(set.clone()).build().unwrap())),
        ("jump", Box::new(Jump::builder().node_set(set.clone()).hasher(KeyHasher::default()).build().unwrap())),
        ("modulo", Box::new(Modulo::builder().node_set(set.clone()).hasher(KeyHasher::default()).build().unwrap())),
        (
            "ketama",
            Box::new(Ketama::builder().node_set(set.clone()).variant(KetamaVariant::Libketama).build().unwrap()),
        ),
        (
            "rendezvous",
            Box::new(Rendezvous::builder().node_set(set.clone()).hasher(KeyHasher::default()).build().unwrap()),
        ),
        (
            "maglev",
            Box::new(
                Maglev::builder().node_set(set.clone()).hasher(KeyHasher::default()).table_size(65537).build().unwrap(),
            ),
        ),
        (
            "multiprobe",
            Box::new(
                MultiProbe::builder().node_set(set.clone()).hasher(KeyHasher::default()).probes(21).build().unwrap(),
            ),
        ),
        ("memento", Box::new(Memento::builder().node_set(set.clone()).hasher(KeyHasher::default()).build().unwrap())),
        (
            "anchor",
            Box::new(
                Anchor::builder().node_set(set.clone()).hasher(KeyHasher::default()).capacity(12).build().unwrap(),
            ),
        ),
    ];
    let input = keys_input(200);
    for (algo, router) in &routers {
        for n in [1usize, 3, 6] {
            let count = n.to_string();
            let out = ok(&["replicas", "--algo", algo, "--nodes", &names.join(","), "-n", &count], input.as_bytes());
            let got = pairs(&out);
            assert_eq!(got.len(), 200);
            for (key, list) in got {
                let want: Vec<&str> =
                    router.replicas(key.as_bytes(), n).unwrap().into_iter().map(|id| router.node_name(id)).collect();
                assert_eq!(list, want.join(","), "{algo} -n {n} {key}");
                assert_eq!(list.split(',').next().unwrap(), router.node_name(router.route(key.as_bytes())));
            }
        }
    }
    // --buckets turns into nodes named 0..N for replicas.
    let out = ok(&["replicas", "--algo", "jump", "--buckets", "4", "-n", "4", "k"], b"");
    let mut list: Vec<&str> = out.trim_end().split_once('\t').unwrap().1.split(',').collect();
    list.sort_unstable();
    assert_eq!(list, ["0", "1", "2", "3"]);
}

#[test]
fn slot_matches_redis() {
    let Some(rows) = common::read_csv("redis_keyslot.csv") else { return };
    let input: String = rows.iter().map(|r| format!("{}\n", r["key_hex"])).collect();
    let got = pairs(&ok(&["slot", "--input", "hex"], input.as_bytes()));
    assert_eq!(got.len(), rows.len());
    for ((k, slot), row) in got.iter().zip(&rows) {
        assert_eq!(k, &row["key_hex"]);
        assert_eq!(slot, &row["slot"], "key {k}");
    }
    let table = common::read_csv("redis_slot_table.csv").expect("vectors present");
    let keys: Vec<&str> = table.iter().step_by(97).map(|r| r["key"].as_str()).collect();
    let mut args = vec!["slot"];
    args.extend(&keys);
    let got = pairs(&ok(&args, b""));
    for ((_, slot), row) in got.iter().zip(table.iter().step_by(97)) {
        assert_eq!(slot, &row["slot"]);
    }
    // From the vectors' README and rows: CRC16("123456789") = 0x31C3; the tag is hashed alone;
    // an empty tag `{}` means the whole key is hashed.
    assert_eq!(
        ok(&["slot", "123456789", "{user1000}.followers", "{}a{b}"], b""),
        "123456789\t12739\n{user1000}.followers\t3443\n{}a{b}\t16175\n"
    );
}

/// Peak resident memory (KiB) of one `hashroute route` run fed `keys` generated keys, read
/// from the kernel's `wait4` accounting of exactly that child.
#[cfg(target_os = "linux")]
#[allow(clippy::zombie_processes)] // Reaped by `wait4`, which also returns its rusage.
fn peak_rss_kib(keys: u64) -> i64 {
    let mut child = Command::new(BIN)
        .args(["route", "--algo", "ring", "--nodes", "a,b,c,d,e,f,g,h"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn hashroute");
    let mut pipe = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let mut buf = std::io::BufWriter::with_capacity(1 << 16, &mut pipe);
        for i in 0..keys {
            writeln!(buf, "user:{i:016x}:session").expect("feed keys");
        }
        buf.flush().expect("flush keys");
    });
    writer.join().expect("writer");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: a zeroed `rusage` is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own unreaped child; `status` and `usage` are valid for writes. The
    // `Child` is not waited on afterwards (it is dropped without `wait`).
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid, "wait4: {}", std::io::Error::last_os_error());
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "hashroute failed on {keys} keys: {status}");
    usage.ru_maxrss
}

#[cfg(target_os = "linux")]
#[test]
fn streaming_keeps_memory_flat() {
    let small = peak_rss_kib(1_000);
    let large = peak_rss_kib(1_000_000);
    eprintln!("peak RSS: 1K keys {small} KiB, 1M keys {large} KiB");
    assert!(small > 0);
    assert!(large < 2 * small, "1M keys peaked at {large} KiB, 1K keys at {small} KiB");
}

#[test]
fn closed_stdout_exits_quietly() {
    let mut child = Command::new(BIN)
        .args(["route", "--algo", "ring", "--nodes", "a,b,c"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut pipe = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let mut buf = std::io::BufWriter::new(&mut pipe);
        for i in 0..2_000_000u32 {
            if writeln!(buf, "k{i}").is_err() {
                return;
            }
        }
        let _ = buf.flush();
    });
    let mut first = String::new();
    {
        let mut reader = BufReader::new(child.stdout.take().unwrap());
        reader.read_line(&mut first).unwrap();
    } // The reader goes away: the next write fails with EPIPE.
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    let status = child.wait().unwrap();
    writer.join().unwrap();
    assert!(first.starts_with("k0\t"), "{first:?}");
    assert!(stderr.is_empty(), "stderr: {stderr:?}");
    assert!(status.success(), "{status}");
}

#[test]
fn help_and_version_succeed() {
    for args in [
        &["--help"][..],
        &["--version"],
        &["route", "--help"],
        &["replicas", "--help"],
        &["slot", "--help"],
        &["migrate", "--help"],
        &["fingerprint", "--help"],
        &["recommend", "--help"],
    ] {
        let out = run(args, b"");
        assert!(out.status.success(), "{args:?}: {}", out.stderr);
        assert!(!out.stdout.is_empty());
    }
    let help = ok(&["route", "--help"], b"");
    for flag in [
        "--algo",
        "--nodes",
        "--nodes-file",
        "--vnodes",
        "--hash",
        "--seed",
        "--variant",
        "--table-size",
        "--probes",
        "--capacity",
        "--buckets",
        "--input",
    ] {
        assert!(help.contains(flag), "route --help lacks {flag}");
    }
    for algo in ["maglev", "multiprobe", "memento", "anchor"] {
        assert!(help.contains(algo), "route --help does not list {algo}");
    }
    let help = ok(&["migrate", "--help"], b"");
    for flag in ["--algo", "--from", "--to", "--table-size", "--summary"] {
        assert!(help.contains(flag), "migrate --help lacks {flag}");
    }
    assert!(!help.contains("--nodes"), "migrate takes its nodes from --from/--to");
}

/// The CLI reproduces the frozen routes of `tests/golden/` (keys given in hex, as stored).
#[test]
fn cli_reproduces_golden_routes() {
    let cluster = |n: usize| (0..n).map(|i| format!("10.0.0.{i}:6379")).collect::<Vec<_>>().join(",");
    let weighted: String = (0..6).map(|i| format!("cache-{i} {}\n", i + 1)).collect();
    let weighted_file = tmp_file("golden-weighted.txt", weighted.as_bytes());
    let weighted_file = weighted_file.to_str().unwrap();
    let (c10, c7, c5) = (cluster(10), cluster(7), cluster(5));
    let configs: Vec<(&str, Vec<&str>)> = vec![
        ("ring-v160-xxh3", vec!["--algo", "ring", "--vnodes", "160", "--nodes", &c10]),
        ("ring-v1-xxh3", vec!["--algo", "ring", "--vnodes", "1", "--nodes", &c10]),
        ("ring-v100-xxh3-seed7", vec!["--algo", "ring", "--vnodes", "100", "--seed", "7", "--nodes", &c7]),
        ("ring-v64-xxh64", vec!["--algo", "ring", "--vnodes", "64", "--hash", "xxh64", "--nodes", &c5]),
        ("ring-v64-murmur3", vec!["--algo", "ring", "--vnodes", "64", "--hash", "murmur3", "--nodes", &c5]),
        ("ring-v64-md5", vec!["--algo", "ring", "--vnodes", "64", "--hash", "md5", "--nodes", &c5]),
        ("ring-v160-weighted", vec!["--algo", "ring", "--nodes-file", weighted_file]),
        ("jump-xxh3", vec!["--algo", "jump", "--nodes", &c10]),
        ("modulo-xxh3", vec!["--algo", "modulo", "--hash", "xxh3", "--nodes", &c10]),
        ("rendezvous-xxh3", vec!["--algo", "rendezvous", "--nodes", &c10]),
        ("rendezvous-weighted", vec!["--algo", "rendezvous", "--nodes-file", weighted_file]),
        ("slots-redis-cli-5", vec!["--algo", "slots", "--nodes", &c5]),
        ("ketama-libketama-weighted", vec!["--algo", "ketama", "--nodes-file", weighted_file]),
        ("ketama-uhashring", vec!["--algo", "ketama", "--variant", "uhashring", "--nodes", &c10]),
        ("ketama-libmemcached", vec!["--algo", "ketama", "--variant", "libmemcached", "--nodes", &c10]),
        ("ketama-spymemcached", vec!["--algo", "ketama", "--variant", "spymemcached", "--nodes", &c10]),
        ("ketama-python-hash-ring", vec!["--algo", "ketama", "--variant", "python-hash-ring", "--nodes", &c10]),
        ("maglev-m65537", vec!["--algo", "maglev", "--table-size", "65537", "--nodes", &c10]),
        ("maglev-weighted-m4099", vec!["--algo", "maglev", "--table-size", "4099", "--nodes-file", weighted_file]),
        ("multiprobe-k21", vec!["--algo", "multiprobe", "--probes", "21", "--nodes", &c10]),
        // Not reachable from the CLI: memento-removed, anchor-removed (built by removals).
        // Not reachable from the CLI yet: rendezvous-go (Rendezvous::go_rendezvous has no flag).
    ];
    let dir = common::workspace_root().join("tests/golden");
    for (name, flags) in configs {
        let path = dir.join(format!("{name}.csv"));
        let frozen = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let rows: Vec<(String, String)> = frozen
            .lines()
            .skip(1)
            .map(|l| {
                let (k, n) = l.split_once(',').unwrap();
                (k.to_owned(), n.to_owned())
            })
            .collect();
        assert!(rows.len() > 500, "{name}");
        let input: String = rows.iter().map(|(k, _)| format!("{k}\n")).collect();
        let mut args = vec!["route", "--input", "hex"];
        args.extend(flags);
        assert_eq!(pairs(&ok(&args, input.as_bytes())), rows, "{name}");
    }
}

#[test]
fn exit_status_separates_usage_from_input_errors() {
    assert_eq!(run(&["route", "--algo", "ring", "--nodes", "a", "--bogus"], b"").status.code(), Some(2));
    assert_eq!(run(&["route", "--algo", "ring", "--nodes", "a,a", "k"], b"").status.code(), Some(1));
    assert_eq!(run(&["route", "--algo", "ring", "--nodes", "a", "--input", "hex"], b"0\n").status.code(), Some(1));
}

/// `migrate` prints exactly the library's plan for the same two routers; a ring going from 3 to
/// 4 nodes moves about a quarter of the keys, computed exactly.
#[test]
fn migrate_prints_the_library_plan() {
    let from = tmp_file("migrate-3.txt", b"# before\ncache-a\ncache-b\ncache-c\n");
    let to = tmp_file("migrate-4.txt", b"cache-a\ncache-b\ncache-c\ncache-d\n");
    let (from_s, to_s) = (from.to_str().unwrap(), to.to_str().unwrap());
    let three = NodeSet::from_names(["cache-a", "cache-b", "cache-c"]).unwrap();
    let four = NodeSet::from_names(["cache-a", "cache-b", "cache-c", "cache-d"]).unwrap();

    let ring = |s: &NodeSet| Ring::builder().node_set(s.clone()).build().unwrap();
    let plan = hashroute::migration::plan(&ring(&three), &ring(&four)).unwrap();
    assert!(plan.is_exact());
    let fraction = plan.moved_fraction();
    assert!((0.20..0.30).contains(&fraction), "3 -> 4 ring moved {fraction}");
    let out = ok(&["migrate", "--algo", "ring", "--from", from_s, "--to", to_s], b"");
    assert_eq!(out, plan.to_string());
    let first = out.lines().next().unwrap();
    assert!(first.contains("exact") && first.contains(&format!("{:.4}% of keys move", 100.0 * fraction)), "{first}");
    assert!(out.lines().any(|l| l.contains("-> cache-d")), "moving ranges are listed");
    let summary = ok(&["migrate", "--algo", "ring", "--from", from_s, "--to", to_s, "--summary"], b"");
    assert_eq!(summary, plan.summary().to_string());
    assert!(out.starts_with(&summary) && out.len() > summary.len());

    // Router flags apply to both sides.
    let ring40 = |s: &NodeSet| {
        Ring::builder().vnodes(40).hasher(KeyHasher::Xxh64 { seed: 3 }).node_set(s.clone()).build().unwrap()
    };
    let plan40 = hashroute::migration::plan(&ring40(&three), &ring40(&four)).unwrap();
    let args = [
        "migrate", "--algo", "ring", "--vnodes", "40", "--hash", "xxh64", "--seed", "3", "--from", from_s, "--to", to_s,
    ];
    assert_eq!(ok(&args, b""), plan40.to_string());
    assert_ne!(plan40.moved_units(), plan.moved_units());

    // Ketama is exact too; the newer algorithms are sampled, and still equal the library.
    let ketama = |s: &NodeSet| Ketama::builder().node_set(s.clone()).variant(KetamaVariant::Libketama).build().unwrap();
    let plan = hashroute::migration::plan(&ketama(&three), &ketama(&four)).unwrap();
    assert!(plan.is_exact());
    assert_eq!(
        ok(&["migrate", "--algo", "ketama", "--from", from_s, "--to", to_s, "--summary"], b""),
        plan.summary().to_string()
    );
    // No `Inspect` impl for the newer concrete types: go through `dyn Router`, as the CLI does.
    let maglev = |s: &NodeSet| -> Box<dyn Router> {
        Box::new(Maglev::builder().node_set(s.clone()).hasher(KeyHasher::default()).table_size(4099).build().unwrap())
    };
    let plan = hashroute::migration::plan(&*maglev(&three), &*maglev(&four)).unwrap();
    let args = ["migrate", "--algo", "maglev", "--table-size", "4099", "--from", from_s, "--to", to_s, "--summary"];
    assert_eq!(ok(&args, b""), plan.summary().to_string());
    let memento = |s: &NodeSet| -> Box<dyn Router> {
        Box::new(Memento::builder().node_set(s.clone()).hasher(KeyHasher::default()).build().unwrap())
    };
    let plan = hashroute::migration::plan(&*memento(&three), &*memento(&four)).unwrap();
    assert!((0.20..0.30).contains(&plan.moved_fraction()), "memento 3 -> 4 moved {}", plan.moved_fraction());
    assert_eq!(
        ok(&["migrate", "--algo", "memento", "--from", from_s, "--to", to_s, "--summary"], b""),
        plan.summary().to_string()
    );
}

/// `fingerprint` prints the library's fingerprint: 32 hex digits, independent of the node order
/// for order-independent algorithms, changed by a weight.
#[test]
fn fingerprint_ignores_node_order_but_not_weights() {
    let base = tmp_file("fp-base.txt", b"alpha 1\nbeta 2\ngamma 3\ndelta 1\n");
    let shuffled = tmp_file("fp-shuffled.txt", b"# same nodes\ndelta 1\ngamma 3\nalpha 1\nbeta 2\n");
    let reweighted = tmp_file("fp-reweighted.txt", b"alpha 1\nbeta 2\ngamma 3\ndelta 2\n");
    let fp = |algo: &str, file: &PathBuf| {
        let out = ok(&["fingerprint", "--algo", algo, "--nodes-file", file.to_str().unwrap()], b"");
        let line = out.strip_suffix('\n').expect("one line");
        assert!(line.len() == 32 && line.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()), "{line:?}");
        line.to_owned()
    };
    for algo in ["ring", "ketama", "rendezvous", "maglev"] {
        let a = fp(algo, &base);
        assert_eq!(a, fp(algo, &shuffled), "{algo}: node order changed the fingerprint");
        assert_ne!(a, fp(algo, &reweighted), "{algo}: a weight change kept the fingerprint");
    }
    let weighted = NodeSet::new([
        Node::new("alpha"),
        Node::new("beta").with_weight(2.0),
        Node::new("gamma").with_weight(3.0),
        Node::new("delta"),
    ])
    .unwrap();
    let ring = Ring::builder().node_set(weighted.clone()).build().unwrap();
    assert_eq!(fp("ring", &base), hashroute::fingerprint(&ring).to_string());
    let maglev: Box<dyn Router> =
        Box::new(Maglev::builder().node_set(weighted).hasher(KeyHasher::default()).table_size(65537).build().unwrap());
    assert_eq!(fp("maglev", &base), hashroute::fingerprint(&*maglev).to_string());

    // Unit-weight algorithms, from --nodes; router flags count.
    let fp_nodes = |args: &[&str]| {
        let mut all = vec!["fingerprint"];
        all.extend_from_slice(args);
        ok(&all, b"").trim_end().to_owned()
    };
    let names = ["n1", "n2", "n3", "n4", "n5"];
    let set = NodeSet::from_names(names).unwrap();
    let list = names.join(",");
    let cases: Vec<(Vec<&str>, Box<dyn Router>)> = vec![
        (
            vec!["--algo", "jump", "--nodes", &list],
            Box::new(Jump::builder().node_set(set.clone()).hasher(KeyHasher::default()).build().unwrap()),
        ),
        (
            vec!["--algo", "multiprobe", "--probes", "9", "--nodes", &list],
            Box::new(
                MultiProbe::builder().node_set(set.clone()).hasher(KeyHasher::default()).probes(9).build().unwrap(),
            ),
        ),
        (
            vec!["--algo", "memento", "--nodes", &list],
            Box::new(Memento::builder().node_set(set.clone()).hasher(KeyHasher::default()).build().unwrap()),
        ),
        (
            vec!["--algo", "anchor", "--nodes", &list],
            Box::new(
                Anchor::builder().node_set(set.clone()).hasher(KeyHasher::default()).capacity(10).build().unwrap(),
            ),
        ),
    ];
    for (args, router) in &cases {
        assert_eq!(fp_nodes(args), hashroute::fingerprint(&**router).to_string(), "{args:?}");
    }
    assert_ne!(
        fp_nodes(&["--algo", "ring", "--nodes", &list]),
        fp_nodes(&["--algo", "ring", "--vnodes", "100", "--nodes", &list])
    );
    assert_ne!(
        fp_nodes(&["--algo", "anchor", "--nodes", &list]),
        fp_nodes(&["--algo", "anchor", "--capacity", "11", "--nodes", &list])
    );
}

/// `recommend` in smoke mode (`HASHROUTE_QUICK=1`) prints exactly the library's recommendation
/// for the same request: its summary by default (the answer first), the full table with `--all`.
#[test]
fn recommend_prints_the_library_recommendation() {
    use hashroute_analysis::{recommend, Request};
    let stdout = |extra: &[&str]| {
        let out = Command::new(BIN)
            .args(["recommend", "--node-count", "8", "--max-load", "1.15"])
            .args(extra)
            .env("HASHROUTE_QUICK", "1")
            .stdin(Stdio::null())
            .output()
            .expect("spawn hashroute");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && stderr.is_empty(), "{stderr}");
        String::from_utf8(out.stdout).unwrap()
    };
    let (summary, all) = (stdout(&[]), stdout(&["--all"]));
    for text in [&summary, &all] {
        assert!(text.starts_with("recommendation for random clusters of 8 nodes"), "{text}");
    }
    assert!(summary.lines().nth(2).is_some_and(|l| l.starts_with("  1.15: ")), "{summary}");
    assert!(all.contains("answer: "), "{all}");
    let request = Request::for_node_count(8).targets(&[1.15]).smoke();
    let rec = recommend(&request).unwrap();
    assert_eq!(summary, rec.summary().to_string());
    assert_eq!(all, rec.to_string());
}

/// `--algo A --buckets N --input u64` for the jump family: every vector row through the
/// CLI, grouped by bucket count.
fn cli_bucket_rows(
    algo: &str,
    file: &str,
    extra: &[&str],
    keep: impl Fn(&std::collections::HashMap<String, String>) -> bool,
) {
    let Some(rows) = common::read_csv(file) else { return };
    let mut by_buckets: BTreeMap<u32, Vec<(String, String)>> = BTreeMap::new();
    for row in rows.iter().filter(|r| keep(r)) {
        by_buckets
            .entry(row["num_buckets"].parse().unwrap())
            .or_default()
            .push((row["key_u64"].clone(), row["bucket"].clone()));
    }
    assert!(!by_buckets.is_empty(), "{file}: no rows");
    for (buckets, cases) in by_buckets {
        let n = buckets.to_string();
        let mut args = vec!["route", "--algo", algo, "--buckets", &n, "--input", "u64"];
        args.extend_from_slice(extra);
        args.extend(cases.iter().map(|(k, _)| k.as_str()));
        assert_eq!(pairs(&ok(&args, b"")), cases, "{algo} {extra:?}: {buckets} buckets");
    }
}

#[test]
fn u64_input_with_the_jump_family_equals_the_vectors() {
    cli_bucket_rows("jumpback", "jumpback_hash.csv", &[], |r| r["generator"] == "splitmix64");
    cli_bucket_rows("jumpback", "jumpback_hash.csv", &["--generator", "xorshift-l7r9"], |r| {
        r["generator"] == "xorshift_l7r9"
    });
    cli_bucket_rows("fliphash", "fliphash.csv", &[], |_| true);
    cli_bucket_rows("power", "power_ch.csv", &[], |_| true);
    cli_bucket_rows("binomial", "binomial_hash_u64.csv", &[], |_| true);
    // With nothing removed, jumpback-anchor is jumpback (splitmix64).
    cli_bucket_rows("jumpback-anchor", "jumpback_hash.csv", &[], |r| {
        r["generator"] == "splitmix64" && r["num_buckets"].parse::<u32>().unwrap() < (1 << 31) - 1
    });
}

#[test]
fn jumpback_anchor_removed_buckets() {
    let keys: Vec<String> = (0..400u64).map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).to_string()).collect();
    let input: String = keys.iter().map(|k| format!("{k}\n")).collect();
    let route = |extra: &[&str]| {
        let mut args = vec!["route", "--algo", "jumpback-anchor", "--buckets", "10", "--input", "u64"];
        args.extend_from_slice(extra);
        pairs(&ok(&args, input.as_bytes()))
    };
    let all = route(&[]);
    let removed = route(&["--removed", "3,7"]);
    let mut set = hashroute::jumpback::JumpBackAnchorBucketSet::with_buckets(10).unwrap();
    assert!(set.remove_bucket(3) && set.remove_bucket(7));
    for ((k, before), (k2, after)) in all.iter().zip(&removed) {
        assert_eq!(k, k2);
        assert_eq!(after, &set.bucket(k.parse().unwrap()).unwrap().to_string());
        assert!(after != "3" && after != "7", "{k} went to a removed bucket");
        if before != "3" && before != "7" {
            assert_eq!(before, after, "{k} moved although its bucket stayed");
        }
    }
    // Replicas over --buckets with --removed never name a removed bucket.
    let out = ok(&["replicas", "--algo", "jumpback-anchor", "--buckets", "5", "--removed", "1", "-n", "4", "k"], b"");
    assert!(!out.contains("\t1,") && !out.ends_with(",1\n") && out.matches(',').count() == 3, "{out}");
}

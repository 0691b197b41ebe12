//! Hostile input through the `hashroute` binary: bytes that are not text, huge lines and node
//! files, extreme weights, point counts past the cap, and pipes closed early at either end.
//! Each gives correct output or one error line, never a panic, never a name, weight or key the
//! user did not write, and memory bounded as stated (RELIABILITY.md).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use hashroute::{Algorithm, Jump, Node, NodeSet, Ring, Router, RouterSpec};

const BIN: &str = env!("CARGO_BIN_EXE_hashroute");

struct Run {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
}

fn run(args: &[&str], stdin: Vec<u8>) -> Run {
    run_limited(args, stdin, None)
}

/// Runs the binary with `stdin`; with `limit`, under an address-space cap of that many bytes
/// (`RLIMIT_AS`, Linux), so a bound on memory is enforced rather than sampled: an allocation
/// past it aborts the child, which fails the test. (The child's `ru_maxrss` would not do:
/// Linux carries the parent's high-water mark across `exec`.)
fn run_limited(args: &[&str], stdin: Vec<u8>, limit: Option<u64>) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    #[cfg(target_os = "linux")]
    if let Some(bytes) = limit {
        use std::os::unix::process::CommandExt;
        let cap = libc::rlimit { rlim_cur: bytes, rlim_max: bytes };
        // SAFETY: the closure runs in the forked child before exec and only calls setrlimit,
        // which is async-signal-safe, on a value it owns; it allocates nothing.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setrlimit(libc::RLIMIT_AS, &cap) == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = limit;
    let mut child = cmd.spawn().expect("spawn hashroute");
    let mut pipe = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&stdin); // The child may stop reading at an error.
    });
    let out = child.wait_with_output().expect("wait hashroute");
    writer.join().expect("stdin writer");
    Run { code: out.status.code(), stdout: out.stdout, stderr: String::from_utf8_lossy(&out.stderr).into_owned() }
}

/// The run failed with exactly one `hashroute: error:` line containing `needle` (keys before
/// a bad one were already streamed to stdout; callers check that part).
fn one_line_error(r: &Run, needle: &str) {
    assert_eq!(r.code, Some(1), "expected exit 1, stderr {:?}", r.stderr);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "stderr: {:?}", r.stderr);
    assert!(lines[0].starts_with("hashroute: error: "), "{:?}", lines[0]);
    assert!(!lines[0].contains("internal error"), "a panic: {:?}", lines[0]);
    assert!(lines[0].contains(needle), "{:?} does not mention {needle:?}", lines[0]);
}

fn succeeded(r: &Run) {
    assert_eq!(r.code, Some(0), "stderr: {:?}", r.stderr);
    assert!(r.stderr.is_empty(), "stderr: {:?}", r.stderr);
}

fn tmp_file(name: &str, contents: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hashroute-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("write temp file");
    path
}

/// `KEY<TAB>NODE` lines split at the last tab (keys may contain tabs).
fn lines(stdout: &[u8]) -> Vec<(&[u8], &[u8])> {
    let body = stdout.strip_suffix(b"\n").unwrap_or(stdout);
    body.split(|&b| b == b'\n')
        .map(|l| {
            let tab = l.iter().rposition(|&b| b == b'\t').expect("a tab on every line");
            (&l[..tab], &l[tab + 1..])
        })
        .collect()
}

fn ring(names: &[&str]) -> Ring {
    Ring::from_names(names.iter().copied()).expect("ring")
}

#[test]
fn invalid_utf8_and_nul_keys_route_as_bytes() {
    let keys: Vec<&[u8]> = vec![b"\xff\xfe", b"a\0b", b"\0", b"\xc3\x28", b"tab\there", b"\r", b"\xed\xa0\x80"];
    let mut stdin = Vec::new();
    for k in &keys {
        stdin.extend_from_slice(k);
        stdin.push(b'\n');
    }
    let r = run(&["route", "--algo", "ring", "--nodes", "a,b,c,d"], stdin);
    succeeded(&r);
    let lib = ring(&["a", "b", "c", "d"]);
    let got = lines(&r.stdout);
    assert_eq!(got.len(), keys.len());
    for (k, (raw, node)) in keys.iter().zip(got) {
        // A lone `\r` line is `\r` stripped as a CRLF ending: the empty key.
        let key: &[u8] = if *k == b"\r" { b"" } else { k };
        assert_eq!(raw, key, "key not echoed exactly");
        assert_eq!(node, lib.node_name(lib.route(key)).as_bytes(), "key {k:?}");
    }
    // Invalid UTF-8 in a key argument is routed too (Unix arguments are bytes; NUL cannot be
    // in one).
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let out = Command::new(BIN)
            .args(["route", "--algo", "jump", "--nodes", "a,b"])
            .arg(std::ffi::OsStr::from_bytes(b"\xff\x01x"))
            .output()
            .expect("run");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let jump = Jump::from_names(["a", "b"]).unwrap();
        let want = format!("\t{}\n", jump.node_name(jump.route(b"\xff\x01x")));
        assert_eq!(out.stdout, [&b"\xff\x01x"[..], want.as_bytes()].concat());
    }
    // Non-hex and non-number bytes are one-line errors naming the line; the keys before it
    // were answered (output is streamed), none after.
    let r = run(&["route", "--algo", "ring", "--nodes", "a", "--input", "hex"], b"00\n\xff\xff\nff\n".to_vec());
    one_line_error(&r, "stdin line 2");
    assert_eq!(r.stdout, b"00\ta\n");
    let r = run(&["route", "--algo", "jump", "--nodes", "a", "--input", "u64"], b"1\n2\0\n3\n".to_vec());
    one_line_error(&r, "stdin line 2");
    assert_eq!(r.stdout, b"1\ta\n");
}

/// Bound: one line is held whole (the key is hashed in one piece), so memory is about twice the
/// longest line; it does not grow with the number of lines (tests/cli.rs holds that part).
#[test]
fn a_64_mb_line_routes_in_bounded_memory() {
    const LEN: usize = 64 << 20;
    // The line buffer (grown by doubling, realloc moves it without a second copy in practice:
    // 80 MB of address space suffices here) and the process itself; the 64 KiB output buffer
    // passes a write that large straight through.
    const LIMIT: u64 = 2 * LEN as u64 + (64 << 20);
    let mut key = vec![b'x'; LEN];
    key[LEN / 2] = b'\0';
    let mut stdin = key.clone();
    stdin.extend_from_slice(b"\nshort\n");
    let r = run_limited(&["route", "--algo", "ring", "--nodes", "a,b,c"], stdin, Some(LIMIT));
    succeeded(&r);
    let lib = ring(&["a", "b", "c"]);
    let got = lines(&r.stdout);
    assert_eq!(got.len(), 2);
    assert!(got[0].0 == key.as_slice(), "the 64 MB key was not echoed exactly");
    assert_eq!(got[0].1, lib.node_name(lib.route(&key)).as_bytes());
    assert_eq!(got[1], (&b"short"[..], lib.node_name(lib.route(b"short")).as_bytes()));
}

/// A million-node file: jump (O(1) per node) routes it; a ring at the default 160 points per
/// node (160 M points) is refused before the points are allocated.
#[test]
fn a_million_node_file() {
    let mut text = String::with_capacity(16 << 20);
    for i in 0..1_000_000 {
        text.push_str(&format!("node-{i:07}\n"));
    }
    let path = tmp_file("million.txt", text.as_bytes());
    let file = path.to_str().unwrap();
    let r = run(&["route", "--algo", "jump", "--nodes-file", file, "k1", "k2", "\u{1}"], Vec::new());
    succeeded(&r);
    let jump = Jump::builder().node_set(NodeSet::parse(&text).unwrap()).build().unwrap();
    for (raw, node) in lines(&r.stdout) {
        assert_eq!(node, jump.node_name(jump.route(raw)).as_bytes());
    }
    // 160 M points would be 1.9 GB (8-byte point + 4-byte owner each); the refusal holds only
    // the file and the node set (names, index): it must fit in 1 GB of address space.
    let r = run_limited(&["route", "--algo", "ring", "--nodes-file", file, "k1"], Vec::new(), Some(1 << 30));
    one_line_error(&r, "points");
    assert!(r.stdout.is_empty());
}

/// V × N past the point cap is refused from the counts alone.
#[test]
fn vnodes_times_nodes_past_the_cap_is_refused_before_allocating() {
    let names: Vec<String> = (0..1000).map(|i| format!("n{i}")).collect();
    // 1e8 points would be 1.2 GB; the refusal runs in 256 MB of address space.
    let list = names.join(",");
    let args = ["route", "--algo", "ring", "--vnodes", "100000", "--nodes", &list, "k"];
    let r = run_limited(&args, Vec::new(), Some(256 << 20));
    one_line_error(&r, "points");
    assert!(r.stdout.is_empty());
    let spec = RouterSpec::new(Algorithm::Ring).with_vnodes(100_000);
    assert!(matches!(spec.build(NodeSet::from_names(&names).unwrap()), Err(hashroute::Error::TooManyPoints { .. })));
}

/// Weights from 1e-300 to 1e300: every node keeps at least one point (ring, Ketama) or the
/// configuration is refused in one line; no overflow turns a share into a wrong answer.
#[test]
fn extreme_weights_keep_every_node_or_fail_clearly() {
    let weights = [1e-300, 1e-100, 1e-10, 1.0, 1e10, 1e100, 1e300];
    let nodes: Vec<Node> =
        weights.iter().enumerate().map(|(i, &w)| Node::new(format!("w{i}")).with_weight(w)).collect();
    let set = NodeSet::new(nodes.clone()).unwrap();
    let file: String = nodes.iter().map(|n| format!("{} {:e}\n", n.name(), n.weight())).collect();
    let path = tmp_file("weights.txt", file.as_bytes());
    // A nodes file carries no tokens, which the token ring needs (its tokens files are tested
    // with it).
    for &algo in Algorithm::ALL.iter().filter(|a| !a.needs_tokens()) {
        let cli =
            run(&["route", "--algo", algo.name(), "--nodes-file", path.to_str().unwrap(), "k1", "k2"], Vec::new());
        match RouterSpec::new(algo).build(set.clone()) {
            Ok(r) => {
                succeeded(&cli);
                for (raw, node) in lines(&cli.stdout) {
                    assert_eq!(node, r.node_name(r.route(raw)).as_bytes(), "{algo}");
                }
                // The 1e300 node dwarfs the rest: it owns essentially every key.
                let heavy = (0..200).filter(|i| r.node_name(r.route(format!("key{i}").as_bytes())) == "w6").count();
                assert!(heavy >= 190, "{algo}: the 1e300 node got {heavy} of 200 keys");
            }
            Err(e) => {
                // Ketama's f32 arithmetic, the proxies' own weight ranges (whole numbers
                // within what nginx, HAProxy and Envoy accept) and the ring's absolute weights
                // (V × weight points, under its cap) may refuse; no other weighted router may.
                let own_range = matches!(
                    algo,
                    Algorithm::Ketama | Algorithm::Nginx | Algorithm::Haproxy | Algorithm::EnvoyRing | Algorithm::Ring
                );
                assert!(!algo.supports_weights() || own_range, "{algo} refused: {e}");
                one_line_error(&cli, "weight");
            }
        }
    }
    // Every node keeps a point on the ring, however light (the ring's weights are absolute, so
    // the heavy ones past its point cap are left out here).
    let light: Vec<Node> = nodes.iter().filter(|n| n.weight() <= 1e3).cloned().collect();
    let set = NodeSet::new(light).unwrap();
    let weighted = Ring::builder().node_set(set.clone()).build().unwrap();
    for id in 0..set.len() as u32 {
        assert!(weighted.owners().contains(&id), "node {id} lost every point");
    }
    // Weights that each fit but sum past f64::MAX are refused, not silently flattened.
    let path = tmp_file("overflow.txt", b"a 1e308\nb 1e308\nc 1\n");
    for algo in ["ring", "maglev", "rendezvous", "ketama"] {
        one_line_error(
            &run(&["route", "--algo", algo, "--nodes-file", path.to_str().unwrap(), "k"], Vec::new()),
            "weights",
        );
    }
    // Equal huge weights: the ring's weights are absolute (V × weight points), so it refuses
    // them in one line naming the weight rather than overflowing or scaling them down.
    let path = tmp_file("huge.txt", b"a 1e307\nb 1e307\n");
    one_line_error(
        &run(&["route", "--algo", "ring", "--nodes-file", path.to_str().unwrap(), "k1"], Vec::new()),
        "weight",
    );
}

#[test]
fn stdin_closed_early() {
    // Closed before any byte: no keys, no output, success.
    let out = Command::new(BIN)
        .args(["route", "--algo", "ring", "--nodes", "a,b"])
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert!(out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    // Closed mid-line: the partial last line is a key like any other.
    let r = run(&["route", "--algo", "ring", "--nodes", "a,b"], b"k1\nk2-partial".to_vec());
    succeeded(&r);
    let lib = ring(&["a", "b"]);
    let got = lines(&r.stdout);
    assert_eq!(got.len(), 2);
    assert_eq!(got[1], (&b"k2-partial"[..], lib.node_name(lib.route(b"k2-partial")).as_bytes()));
}

/// Every key-printing subcommand stops quietly (exit 0, empty stderr) when its reader leaves.
#[test]
fn stdout_closed_early_exits_quietly() {
    for args in [
        &["replicas", "--algo", "rendezvous", "--nodes", "a,b,c", "-n", "2"][..],
        &["slot"],
        &["route", "--algo", "jump", "--buckets", "1000"],
        &["route", "--algo", "jump", "--nodes", "a,b", "--input", "u64"],
    ] {
        let mut child = Command::new(BIN)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let mut pipe = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            let mut buf = std::io::BufWriter::new(&mut pipe);
            for i in 0..2_000_000u32 {
                if writeln!(buf, "{i}").is_err() {
                    return;
                }
            }
            let _ = buf.flush();
        });
        let mut first = String::new();
        {
            let mut reader = BufReader::new(child.stdout.take().unwrap());
            reader.read_line(&mut first).unwrap();
        }
        let mut stderr = String::new();
        child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
        let status = child.wait().unwrap();
        writer.join().unwrap();
        assert!(first.starts_with("0\t"), "{args:?}: {first:?}");
        assert!(stderr.is_empty(), "{args:?}: stderr {stderr:?}");
        assert!(status.success(), "{args:?}: {status}");
    }
}

//! A file saved with a UTF-8 byte-order mark (Windows editors write one) reads exactly like the
//! same file without it, for every file reader: nodes files, tokens files, proxy configurations.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn file(name: &str, contents: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bom-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

/// `hashroute ARGS` with `keys` on stdin: stdout, or a panic with stderr.
fn routes(args: &[&str], keys: &str) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hashroute"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn hashroute");
    child.stdin.take().unwrap().write_all(keys.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn keys() -> String {
    (0..200).map(|i| format!("key-{i}\n")).collect()
}

/// Routes of `args` with the file written with and without a BOM, which must be equal; the
/// plain file's output must not mention U+FEFF.
fn same_with_and_without_bom(name: &str, contents: &str, args: impl Fn(&str) -> Vec<String>) {
    let plain = file(&format!("plain-{name}"), contents);
    let marked = file(&format!("bom-{name}"), &format!("\u{feff}{contents}"));
    let run = |p: &PathBuf| {
        let a = args(p.to_str().unwrap());
        routes(&a.iter().map(String::as_str).collect::<Vec<_>>(), &keys())
    };
    let (a, b) = (run(&plain), run(&marked));
    assert!(!b.contains('\u{feff}'), "{name}: a node name kept the byte-order mark");
    assert_eq!(a, b, "{name}: the byte-order mark changed the routes");
}

#[test]
fn nodes_file() {
    same_with_and_without_bom("nodes.txt", "a 2\nb\nc\n", |p| {
        ["route", "--algo", "ring", "--nodes-file", p].map(String::from).to_vec()
    });
}

#[test]
fn tokens_file() {
    let text = "a dc1 r1 -6000000000000000000\nb dc1 r1 0\nc dc1 r2 6000000000000000000\n";
    same_with_and_without_bom("tokens.txt", text, |p| ["route", "--tokens-file", p].map(String::from).to_vec());
}

#[test]
fn proxy_configs() {
    let nginx = "upstream backend {\n    hash $request_uri consistent;\n    server 10.0.0.1:80;\n    server 10.0.0.2:80 weight=2;\n}\n";
    same_with_and_without_bom("nginx.conf", nginx, |p| ["route", "--from-config", p].map(String::from).to_vec());
    let twemproxy = "alpha:\n  listen: 127.0.0.1:22121\n  hash: fnv1a_64\n  distribution: ketama\n  servers:\n   - 127.0.0.1:11211:1\n   - 127.0.0.1:11212:1\n";
    same_with_and_without_bom("nutcracker.yml", twemproxy, |p| {
        ["route", "--from-config", p].map(String::from).to_vec()
    });
}

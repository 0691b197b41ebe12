//! `hashroute migrate` between two configurations of one proxy (nginx, HAProxy: `--from-config`
//! / `--to-config`; Envoy's ring and Maglev: `--algo` with two nodes files) prints an exact
//! plan, computed from the routers' structure, not a sampled estimate.

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_hashroute");

fn ok(args: &[&str]) -> String {
    let out = Command::new(BIN).args(args).output().expect("run hashroute");
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// A scratch directory, removed on drop.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(tag: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("hashroute-exact-migrate-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

/// The first line of `migrate --summary`, checked to be exact in `how`, and the moved percentage.
fn exact_summary(args: &[&str], how: &str) -> f64 {
    let out = ok(args);
    let first = out.lines().next().unwrap_or_default();
    assert!(first.contains(&format!("(exact, {how})")), "{args:?}: {out}");
    assert!(!out.contains("estimated"), "{out}");
    let pct = first.rsplit(": ").next().unwrap().trim_end_matches("% of keys move");
    pct.parse().unwrap_or_else(|_| panic!("{first}"))
}

const NGINX: &str =
    "http {\n  upstream u {\n    hash $request_uri consistent;\n    server 127.0.0.1:18081;\n    server \
                     127.0.0.1:18082;\n    server 127.0.0.1:18083 weight=2;\n    server 127.0.0.1:18084;\n  }\n}\n";

const HAPROXY: &str = "defaults\n    mode http\n\nbackend b\n    balance uri\n    hash-type consistent\n    server s1 \
                       127.0.0.1:18081 weight 1\n    server s2 127.0.0.1:18082 weight 1\n    server s3 127.0.0.1:18083 \
                       weight 2\n    server s4 127.0.0.1:18084 weight 5\n";

#[test]
fn nginx_configs_migrate_exactly() {
    let dir = scratch("nginx");
    let before = write(&dir.0, "a.conf", NGINX);
    let added = NGINX.replace("  }\n}", "    server 127.0.0.1:18085;\n  }\n}");
    let after = write(&dir.0, "b.conf", &added);
    let moved =
        exact_summary(&["migrate", "--from-config", &before, "--to-config", &after, "--summary"], "32-bit hash circle");
    // The new server takes its share (1 of 6 weight units), give or take its points' spread.
    assert!(moved > 5.0 && moved < 30.0, "{moved}");
    let full = ok(&["migrate", "--from-config", &before, "--to-config", &after]);
    assert!(full.contains("moving ranges") && full.contains(" -> 127.0.0.1:18085\n"), "{full}");
}

#[test]
fn haproxy_configs_migrate_exactly() {
    let dir = scratch("haproxy");
    let before = write(&dir.0, "a.cfg", HAPROXY);
    let after = write(&dir.0, "b.cfg", &HAPROXY.replace("s3 127.0.0.1:18083 weight 2", "s3 127.0.0.1:18083 weight 4"));
    let moved =
        exact_summary(&["migrate", "--from-config", &before, "--to-config", &after, "--summary"], "32-bit hash circle");
    assert!(moved > 0.0 && moved < 50.0, "{moved}");
}

#[test]
fn envoy_and_maglev_node_lists_migrate_exactly() {
    let dir = scratch("envoy");
    let before = write(&dir.0, "a.txt", "10.0.0.1:80\n10.0.0.2:80\n10.0.0.3:80\n");
    let after = write(&dir.0, "b.txt", "10.0.0.1:80\n10.0.0.2:80\n10.0.0.3:80\n10.0.0.4:80\n");
    let envoy = ["migrate", "--algo", "envoy-ring", "--from", &before, "--to", &after, "--summary"];
    let moved = exact_summary(&envoy, "64-bit hash circle");
    assert!(moved > 10.0 && moved < 40.0, "{moved}");
    let maglev = ["migrate", "--algo", "maglev", "--from", &before, "--to", &after, "--summary"];
    let moved = exact_summary(&maglev, "65537-entry table");
    assert!(moved > 20.0 && moved < 35.0, "{moved}");
}

//! The `hashroute` binary's proxy contract: `--from-config FILE [--pool NAME]` on
//! route, replicas, fingerprint, migrate and recommend; `--algo kafka --partitions N`; the
//! proxy-compatible algorithm and variant names; one-line errors naming file and line.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_hashroute");

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run hashroute")
}

fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Runs a call that must fail with `code` and exactly one stderr line containing `needle`.
fn fails(args: &[&str], code: i32, needle: &str) {
    let out = run(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr:?}");
    assert!(stderr.contains(needle), "{args:?}: {stderr}");
}

/// A scratch directory for config files, removed on drop.
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(tag: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("hashroute-cli-proxies-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

const NUTCRACKER: &str = "named:\n  listen: 127.0.0.1:22123\n  hash: md5\n  distribution: ketama\n  servers:\n   - \
                          127.0.0.1:11211:1 alpha\n   - 127.0.0.1:11212:1 beta\n   - 127.0.0.1:11213:1 gamma\n   - \
                          127.0.0.1:11214:10 delta\n   - 127.0.0.1:11215:12 epsilon\n";

const NGINX: &str = "http {\n  upstream u {\n    hash $request_uri consistent;\n    server 127.0.0.1;\n    server \
                     127.0.0.1:18082;\n    server 127.0.0.1:18083;\n    server 127.0.0.1:18084;\n  }\n}\n";

const HAPROXY: &str = "defaults\n    mode http\n\nbackend b\n    balance uri\n    hash-type consistent\n    server s1 \
                       127.0.0.1:18081 weight 1\n    server s2 127.0.0.1:18082 weight 1\n    server s3 127.0.0.1:18083 \
                       weight 2\n    server s4 127.0.0.1:18084 weight 5\n";

/// The rows of a vectors file for one config: (key as given, server).
fn rows(file: &str, config: &str, key_col: &str, server_col: &str) -> Option<Vec<(String, String)>> {
    let rows = common::read_csv(file)?;
    Some(
        rows.iter()
            .filter(|r| r["config"] == config && !r[key_col].is_empty())
            .map(|r| (r[key_col].clone(), r[server_col].clone()))
            .collect(),
    )
}

/// `route --from-config` answers every vector row of that config, keys given in hex.
fn check_route(config_path: &str, vectors: Option<Vec<(String, String)>>) {
    let Some(vectors) = vectors else { return };
    assert!(vectors.len() >= 100);
    let mut args = vec!["route", "--from-config", config_path, "--input", "hex"];
    args.extend(vectors.iter().map(|(k, _)| k.as_str()));
    let out = ok(&args);
    let got: Vec<(&str, &str)> = out.lines().map(|l| l.split_once('\t').unwrap()).collect();
    assert_eq!(got.len(), vectors.len());
    for ((key, server), (k, s)) in vectors.iter().zip(got) {
        assert_eq!((k, s), (key.as_str(), server.as_str()));
    }
}

#[test]
fn route_from_config_matches_the_proxies() {
    let dir = scratch("route");
    let nut = write(&dir, "nutcracker.yml", NUTCRACKER);
    check_route(&nut, rows("twemproxy_ketama.csv", "md5_named5", "key_hex", "server"));
    let ngx = write(&dir, "nginx.conf", NGINX);
    check_route(&ngx, rows("nginx_hash_consistent.csv", "nginx_port80", "uri_hex", "backend"));
    let hap = write(&dir, "haproxy.cfg", HAPROXY);
    check_route(&hap, rows("haproxy_consistent.csv", "haproxy_default_w1125", "uri_hex", "server"));
    // Text keys, the kind given explicitly, and the pool named.
    assert_eq!(
        ok(&["route", "--from-config", &hap, "--config-kind", "haproxy", "--pool", "b", "/key-0"]),
        "/key-0\ts4\n"
    );
    assert_eq!(ok(&["route", "--from-config", &ngx, "/key-1"]), "/key-1\t127.0.0.1\n");
    // Replicas and fingerprints from the same file.
    let reps = ok(&["replicas", "--from-config", &hap, "-n", "4", "/key-0"]);
    let (key, list) = reps.trim_end().split_once('\t').unwrap();
    assert_eq!(key, "/key-0");
    let mut names: Vec<&str> = list.split(',').collect();
    assert_eq!(names[0], "s4");
    names.sort_unstable();
    assert_eq!(names, ["s1", "s2", "s3", "s4"]);
    let fp = ok(&["fingerprint", "--from-config", &nut]);
    assert_eq!(fp.trim_end().len(), 32);
    assert_ne!(fp, ok(&["fingerprint", "--from-config", &ngx]));
}

#[test]
fn kafka_partitions() {
    let Some(rows) = common::read_csv("kafka_murmur2.csv") else { return };
    let keys: Vec<&str> = rows.iter().map(|r| r["key_hex"].as_str()).filter(|k| !k.is_empty()).collect();
    let mut args = vec!["route", "--algo", "kafka", "--partitions", "12", "--input", "hex"];
    args.extend(&keys);
    let out = ok(&args);
    let want: Vec<String> = rows
        .iter()
        .filter(|r| !r["key_hex"].is_empty())
        .map(|r| format!("{}\t{}", r["key_hex"], r["partition_12"]))
        .collect();
    assert_eq!(out.lines().collect::<Vec<_>>(), want);
    assert_eq!(ok(&["route", "--algo", "kafka", "--partitions", "1000", "key-0"]), "key-0\t41\n");
}

#[test]
fn proxy_algorithms_by_name() {
    let out = ok(&[
        "route",
        "--algo",
        "ketama",
        "--variant",
        "twemproxy",
        "--hash",
        "fnv1a-32",
        "--nodes",
        "127.0.0.1:11211,127.0.0.1:11212",
        "a",
    ]);
    assert!(out.starts_with("a\t127.0.0.1:1121"), "{out}");
    ok(&["route", "--algo", "ketama", "--variant", "libmemcached-oaat", "--nodes", "a,b", "k"]);
    ok(&["route", "--algo", "nginx", "--nodes", "127.0.0.1:1,127.0.0.1:2", "/k"]);
    ok(&["route", "--algo", "haproxy", "--hash", "sdbm", "--nodes", "s1,s2", "/k"]);
    let envoy = ok(&[
        "route",
        "--algo",
        "envoy-ring",
        "--min-ring-size",
        "12",
        "--nodes",
        "127.0.0.1:90,127.0.0.1:91,127.0.0.1:92,127.0.0.1:93,127.0.0.1:94,127.0.0.1:95",
        "--input",
        "u64",
        "3551244743356806947",
        "3551244743356806948",
    ]);
    assert_eq!(envoy, "3551244743356806947\t127.0.0.1:95\n3551244743356806948\t127.0.0.1:93\n");
    ok(&["route", "--algo", "envoy-ring", "--hash", "murmur64a-envoy", "--nodes", "a,b", "k"]);
}

#[test]
fn migrate_between_configs() {
    let dir = scratch("migrate");
    let before = write(&dir, "before.cfg", HAPROXY);
    let after = write(&dir, "after.cfg", &format!("{HAPROXY}    server s5 127.0.0.1:18085 weight 2\n"));
    let out = ok(&["migrate", "--from-config", &before, "--to-config", &after, "--summary"]);
    assert!(out.starts_with("migration haproxy -> haproxy"), "{out}");
    assert!(out.contains("s5"), "{out}");
    let renamed = write(&dir, "renamed.cfg", &HAPROXY.replace("backend b", "backend c"));
    ok(&[
        "migrate",
        "--from-config",
        &before,
        "--to-config",
        &renamed,
        "--from-pool",
        "b",
        "--to-pool",
        "c",
        "--summary",
    ]);
    let ngx = write(&dir, "nginx.conf", NGINX);
    fails(&["migrate", "--from-config", &before, "--to-config", &ngx], 1, "a migration compares one proxy's layouts");
}

#[test]
fn usage_and_config_errors() {
    let dir = scratch("errors");
    let hap = write(&dir, "haproxy.cfg", HAPROXY);
    let two = write(&dir, "two.yml", &format!("{NUTCRACKER}other:\n  servers:\n   - 127.0.0.1:1:1\n"));
    fails(&["route", "--from-config", &hap, "--algo", "ring", "k"], 2, "cannot be used with '--algo");
    fails(&["route", "--from-config", &hap, "--nodes", "a", "k"], 2, "cannot be used with");
    fails(&["migrate", "--from-config", &hap, "--to-config", &hap, "--algo", "ring"], 2, "cannot be used with");
    fails(
        &["route", "--pool", "b", "--algo", "ring", "--nodes", "a", "k"],
        1,
        "--pool and --config-kind need --from-config",
    );
    fails(&["route", "--pool", "b", "--nodes", "a", "k"], 2, "--from-config");
    fails(&["route", "--from-config", &two, "k"], 1, "2 pools (named, other): name one with --pool");
    fails(&["route", "--from-config", &hap, "--pool", "nope", "k"], 1, "no backend named \"nope\"");
    fails(&["route", "--from-config", &hap, "--config-kind", "envoy", "k"], 1, "config kind");
    let missing = dir.join("missing.cfg");
    fails(&["route", "--from-config", missing.to_str().unwrap(), "k"], 1, "missing.cfg");
    let bad_weight = write(&dir, "bad.cfg", &HAPROXY.replace("weight 5", "weight five"));
    fails(&["route", "--from-config", &bad_weight, "k"], 1, "bad.cfg:10: server s4: weight \"five\"");
    let bad_addr = write(&dir, "bad.yml", &NUTCRACKER.replace("127.0.0.1:11213:1", "127.0.0.1:113x:1"));
    fails(&["route", "--from-config", &bad_addr, "k"], 1, "bad.yml:8: server address");
    let hostname = write(&dir, "host.conf", &NGINX.replace("server 127.0.0.1:18082", "server cache.example:18082"));
    fails(&["route", "--from-config", &hostname, "k"], 1, "host.conf:5: server address \"cache.example:18082\"");
    let modula = write(&dir, "modula.yml", &NUTCRACKER.replace("distribution: ketama", "distribution: modula"));
    fails(&["route", "--from-config", &modula, "k"], 1, "modula.yml:4: distribution: modula is not modelled");
    let unparsable = write(&dir, "junk.conf", "upstream u {\n  hash $x consistent;\n  server 1.2.3.4\n");
    fails(&["route", "--from-config", &unparsable, "k"], 1, "junk.conf:");
    fails(&["route", "--algo", "ring", "--partitions", "3", "k"], 1, "--partitions applies to kafka only");
    fails(&["route", "--algo", "kafka", "--partitions", "0", "k"], 1, "--partitions 0");
    fails(
        &["replicas", "--algo", "kafka", "--partitions", "3", "-n", "1", "k"],
        1,
        "kafka does not support preference lists",
    );
}

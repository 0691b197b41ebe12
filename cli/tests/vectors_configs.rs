//! The proxies' configuration readers against the compatibility vectors: each config text of
//! `twemproxy_configs.json`, `nginx_configs.json` and `haproxy_configs.json` (in
//! `../shared/vectors/`) read into a router that routes every row of the proxy's vector file as
//! the proxy did.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::collections::HashMap;

use hashroute::{AnyRouter, Router};
use hashroute_cli::proxy::ProxyConfig;

use common::{read_csv, unhex};

fn json(name: &str) -> Option<serde_json::Value> {
    let path = common::vectors_dir()?.join(name);
    Some(
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
            .unwrap(),
    )
}

/// Routes every row of `csv` through the router the reader makes of each config's text.
fn check_configs(
    configs_file: &str,
    csv: &str,
    text_field: &str,
    pool_of: impl Fn(&str) -> String,
    key_col: &str,
    server_col: &str,
) -> Option<usize> {
    let doc = json(configs_file)?;
    let rows = read_csv(csv)?;
    let mut routers: HashMap<String, AnyRouter> = HashMap::new();
    for (name, config) in doc.as_object().unwrap() {
        let Some(text) = config.get(text_field).and_then(|t| t.as_str()) else { continue };
        let parsed = ProxyConfig::parse(text, configs_file, None, Some(&pool_of(name)))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        // The reader keeps every server as the config writes it, in order.
        let want: Vec<&str> =
            config["servers"].as_array().unwrap().iter().map(|s| s["server"].as_str().unwrap()).collect();
        let got: Vec<&str> = parsed.nodes.iter().map(|(_, n)| n.name()).collect();
        assert_eq!(got, want, "{name}");
        routers.insert(name.clone(), parsed.router().unwrap());
    }
    let mut checked = 0;
    for row in &rows {
        let r = &routers[&row["config"]];
        let key = unhex(&row[key_col]);
        assert_eq!(r.node_name(r.route(&key)), row[server_col], "{row:?}");
        checked += 1;
    }
    Some(checked)
}

#[test]
fn twemproxy_configs_read() {
    let Some(n) = check_configs(
        "twemproxy_configs.json",
        "twemproxy_ketama.csv",
        "pool_yaml",
        |p| p.to_owned(),
        "key_hex",
        "server",
    ) else {
        return;
    };
    assert_eq!(n, 900);
}

#[test]
fn nginx_configs_read() {
    let Some(n) = check_configs(
        "nginx_configs.json",
        "nginx_hash_consistent.csv",
        "http_blocks",
        |p| format!("u_{p}"),
        "uri_hex",
        "backend",
    ) else {
        return;
    };
    assert_eq!(n, 900);
}

#[test]
fn haproxy_configs_read() {
    let Some(n) = check_configs(
        "haproxy_configs.json",
        "haproxy_consistent.csv",
        "sections",
        |p| format!("b_{p}"),
        "uri_hex",
        "server",
    ) else {
        return;
    };
    assert_eq!(n, 1200);
}

//! The nodes-file parser, `ClusterConfig` JSON/TOML and the proxy-configuration readers
//! (nutcracker, nginx, HAProxy): any bytes give a typed error or a
//! value that holds only what the text said (no invented name or weight), and a parsed
//! configuration round-trips through its own writer.
#![no_main]

use hashroute::{ClusterConfig, NodeSet, Router};
use hashroute_cli::proxy::ConfigKind;
use hashroute_cli::proxy::ProxyConfig;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    match which % 6 {
        0 => nodes_file(&text),
        1 => config(&text, ClusterConfig::from_json, ClusterConfig::to_json),
        2 => config(&text, ClusterConfig::from_toml, ClusterConfig::to_toml),
        3 => proxy(&text, ConfigKind::Twemproxy),
        4 => proxy(&text, ConfigKind::Nginx),
        _ => proxy(&text, ConfigKind::Haproxy),
    }
});

/// A proxy configuration (nutcracker YAML, nginx `upstream`, HAProxy `backend`): a typed error
/// naming the file, or servers whose names are in the text, with usable weights, that build.
fn proxy(text: &str, kind: ConfigKind) {
    let parsed = match ProxyConfig::parse(text, "fuzz.conf", Some(kind), None) {
        Ok(p) => p,
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.contains("fuzz.conf"), "error does not name the file: {msg}");
            assert!(!msg.contains('\n'), "error is not one line: {msg}");
            return;
        }
    };
    for (_, node) in parsed.nodes.iter() {
        assert!(!node.name().is_empty(), "empty server name accepted");
        assert!(text.contains(node.name()), "server {:?} is not in the text", node.name());
        assert!(node.weight().is_finite() && node.weight() > 0.0, "weight {} accepted", node.weight());
    }
    // A build costs O(points), and nginx gives 160 points per weight unit (HAProxy 16): one
    // server of weight 220,699 made 35M points, 39 s under ASan (a timeout this target found; not
    // a bug: the library refuses weights above 1e6 and rings above its point cap). Configurations
    // that heavy are parsed and checked here, not built.
    let total_weight: f64 = parsed.nodes.iter().map(|(_, n)| n.weight()).sum();
    if parsed.nodes.len() <= 64 && total_weight <= 4096.0 {
        if let Ok(router) = parsed.router() {
            let id = router.route(b"/index.html");
            assert!(id.index() < router.node_count());
        }
    }
}

fn nodes_file(text: &str) {
    let Ok(set) = NodeSet::parse(text) else { return };
    for (_, node) in set.iter() {
        assert!(!node.name().is_empty(), "empty node name accepted");
        assert!(text.contains(node.name()), "node {:?} is not in the text", node.name());
        let w = node.weight();
        assert!(w.is_finite() && w > 0.0, "weight {w} accepted for {:?}", node.name());
        assert!(!node.name().contains('#') && !node.name().contains(char::is_whitespace), "bad name {:?}", node.name());
    }
    // Writing the set back in the same format parses to the same set.
    let written: String = set.iter().map(|(_, n)| format!("{} {:?}\n", n.name(), n.weight())).collect();
    let again = NodeSet::parse(&written).expect("a written node set parses");
    assert_eq!(again.as_slice().len(), set.len());
    for ((_, a), (_, b)) in again.iter().zip(set.iter()) {
        assert_eq!((a.name(), a.weight().to_bits()), (b.name(), b.weight().to_bits()));
    }
}

fn config(
    text: &str,
    read: fn(&str) -> hashroute::Result<ClusterConfig>,
    write: fn(&ClusterConfig) -> hashroute::Result<String>,
) {
    let Ok(cfg) = read(text) else { return };
    let Ok(out) = write(&cfg) else { return };
    let again = read(&out).unwrap_or_else(|e| panic!("own output does not parse: {e}\n{out}"));
    assert_eq!(again, cfg, "round trip changed the configuration");
    // Validation answers without building; a valid small configuration builds.
    if cfg.validate().is_ok() {
        let set = cfg.node_set().expect("validated nodes");
        let small = set.len() <= 64 && cfg_is_small(&out);
        if small {
            let _ = cfg.build();
        }
    }
}

/// Builds only configurations whose numbers are small (a valid ring of 10^6 vnodes is
/// legitimate, just too slow per fuzz input).
fn cfg_is_small(written: &str) -> bool {
    written.split(|c: char| !c.is_ascii_digit()).all(|d| d.len() <= 4)
}

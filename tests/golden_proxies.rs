//! Frozen routes of the proxy-compatible routers, in files of their own so that every
//! earlier golden file stays byte-identical. Written once by `scripts/gen_golden.sh`.

use std::fmt::Write as _;

#[path = "frozen/mod.rs"]
mod frozen;
use frozen::*;

use hashroute::{EnvoyRing, Haproxy, Kafka, Ketama, KetamaVariant, KeyHasher, Nginx, Router};

/// Every frozen proxy configuration: (column name, router).
fn routers() -> Vec<(&'static str, Box<dyn Router>)> {
    let ketama = |v: KetamaVariant, h: KeyHasher, weighted: bool| -> Box<dyn Router> {
        let set = if weighted { weighted_cluster() } else { cluster(10) };
        Box::new(Ketama::builder().variant(v).key_hasher(h).node_set(set).build().unwrap())
    };
    vec![
        ("ketama-twemproxy-md5-weighted", ketama(KetamaVariant::Twemproxy, KeyHasher::Md5, true)),
        ("ketama-twemproxy-fnv1a", ketama(KetamaVariant::Twemproxy, KeyHasher::Fnv1a32, false)),
        ("ketama-libmemcached-oaat", ketama(KetamaVariant::LibmemcachedOaat, KeyHasher::Oaat, false)),
        ("ketama-libmemcached-oaat-weighted", ketama(KetamaVariant::LibmemcachedOaat, KeyHasher::Oaat, true)),
        ("nginx", Box::new(Nginx::builder().node_set(cluster(10)).build().unwrap())),
        ("nginx-weighted", Box::new(Nginx::builder().node_set(weighted_cluster()).build().unwrap())),
        (
            "haproxy-weighted",
            Box::new(Haproxy::builder().hasher(KeyHasher::SdbmAvalanche).node_set(weighted_cluster()).build().unwrap()),
        ),
        ("haproxy-sdbm", Box::new(Haproxy::builder().hasher(KeyHasher::Sdbm).node_set(cluster(10)).build().unwrap())),
        ("envoy-ring", Box::new(EnvoyRing::builder().node_set(cluster(10)).build().unwrap())),
        (
            "envoy-ring-murmur-weighted",
            Box::new(
                EnvoyRing::builder()
                    .hasher(KeyHasher::Murmur64aEnvoy)
                    .min_ring_size(64)
                    .node_set(weighted_cluster())
                    .build()
                    .unwrap(),
            ),
        ),
        ("kafka-12", Box::new(Kafka::partitions(12).unwrap())),
    ]
}

#[test]
fn proxy_routes_are_frozen() {
    let routers = routers();
    let mut out = String::from("key_hex");
    for (name, _) in &routers {
        write!(out, ",{name}").unwrap();
    }
    out.push('\n');
    for key in golden_keys() {
        out.push_str(&hex(&key));
        for (_, r) in &routers {
            write!(out, ",{}", r.node_name(r.route(&key))).unwrap();
        }
        out.push('\n');
    }
    check_or_write("proxies.csv", &out);
}

/// Preference lists decide where a failed server's keys go: frozen for the routers that have one.
#[test]
fn proxy_preferences_are_frozen() {
    let mut out = String::from("router,key_hex,replicas\n");
    for (name, r) in routers().iter().filter(|(n, _)| !n.starts_with("kafka")) {
        for key in golden_keys().iter().take(128) {
            let names: Vec<&str> = r.replicas(key, 3).unwrap().into_iter().map(|id| r.node_name(id)).collect();
            writeln!(out, "{name},{},{}", hex(key), names.join(" ")).unwrap();
        }
    }
    check_or_write("proxies-replicas.csv", &out);
}

/// Fingerprints of the proxy routers (their own file: `fingerprints.csv` stays as it was).
#[test]
fn proxy_fingerprints_are_frozen() {
    let mut out = String::from("name,fingerprint,canonical_len\n");
    for (name, r) in routers() {
        writeln!(out, "{name},{},{}", hashroute::fingerprint(&*r), r.canonical_bytes().len()).unwrap();
    }
    // Every proxy algorithm through RouterSpec::build with its defaults, as the sweep builds it.
    for algo in [
        hashroute::Algorithm::Nginx,
        hashroute::Algorithm::Haproxy,
        hashroute::Algorithm::EnvoyRing,
        hashroute::Algorithm::Kafka,
    ] {
        let r = hashroute::RouterSpec::new(algo).build(cluster(10)).unwrap();
        writeln!(out, "spec-{algo}-default-n10,{},{}", hashroute::fingerprint(&*r), r.canonical_bytes().len()).unwrap();
    }
    let frozen = check_or_write("proxies-fingerprints.csv", &out);
    assert_eq!(frozen.lines().count(), 1 + routers().len() + 4);
}

/// The JSON and TOML texts of configurations with every proxy option, frozen, and each parsing
/// back to a router with the same routes.
#[cfg(feature = "serde")]
#[test]
fn proxy_config_texts_are_frozen() {
    use hashroute::{Algorithm, ClusterConfig, NodeConfig, RouterSpec};
    let nodes = |n: usize| -> Vec<NodeConfig> { (0..n).map(|i| NodeConfig::new(format!("10.0.0.{i}:6379"))).collect() };
    let weighted = || -> Vec<NodeConfig> {
        (0..5).map(|i| NodeConfig::new(format!("cache-{i}")).with_weight(f64::from(i + 1))).collect()
    };
    let configs = [
        ("nginx", ClusterConfig::new(RouterSpec::new(Algorithm::Nginx), weighted())),
        (
            "haproxy-sdbm-whole",
            ClusterConfig::new(
                RouterSpec::new(Algorithm::Haproxy).with_hasher(KeyHasher::Sdbm).with_uri_whole(true),
                weighted(),
            ),
        ),
        (
            "haproxy-ids",
            ClusterConfig::new(
                RouterSpec::new(Algorithm::Haproxy),
                vec![
                    NodeConfig::new("s1"),
                    NodeConfig::new("s2").with_label(Haproxy::ID_LABEL, "7"),
                    NodeConfig::new("s3"),
                ],
            ),
        ),
        (
            "envoy-ring-murmur-12-64",
            ClusterConfig::new(
                RouterSpec::new(Algorithm::EnvoyRing)
                    .with_hasher(KeyHasher::Murmur64aEnvoy)
                    .with_ring_size(Some(12), Some(64)),
                nodes(6),
            ),
        ),
        ("kafka", ClusterConfig::new(RouterSpec::new(Algorithm::Kafka), nodes(12))),
        (
            "ketama-twemproxy-fnv1a",
            ClusterConfig::new(
                RouterSpec::new(Algorithm::Ketama)
                    .with_ketama_variant(KetamaVariant::Twemproxy)
                    .with_hasher(KeyHasher::Fnv1a32),
                weighted(),
            ),
        ),
        (
            "ketama-libmemcached-oaat",
            ClusterConfig::new(
                RouterSpec::new(Algorithm::Ketama).with_ketama_variant(KetamaVariant::LibmemcachedOaat),
                nodes(4),
            ),
        ),
    ];
    let mut out = String::new();
    for (name, config) in &configs {
        let json = config.to_json().unwrap();
        let toml = config.to_toml().unwrap();
        for (format, text, parsed) in [
            ("json", &json, ClusterConfig::from_json(&json).unwrap()),
            ("toml", &toml, ClusterConfig::from_toml(&toml).unwrap()),
        ] {
            assert_eq!(&parsed, config, "{name} {format}");
            let (a, b) = (config.build().unwrap(), parsed.build().unwrap());
            for key in golden_keys() {
                assert_eq!(a.route(&key), b.route(&key), "{name} {format}");
            }
            out.push_str(&format!("=== {name} {format} ===\n{}\n", text.trim_end()));
        }
    }
    check_or_write("proxies-config.txt", &out);
}

//! Frozen routes of the proxy-compatible routers (issue 15), in files of their own so that every
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

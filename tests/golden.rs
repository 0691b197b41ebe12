//! Frozen routes: hashroute's own stability contract.
//!
//! Every default hasher and every router configuration below has its answers for a fixed key
//! list committed under `tests/golden/`. A change to any route — a new point derivation, a
//! different tie rule, a hasher upgrade — fails here, visibly. Files are written once by
//! `scripts/gen_golden.sh` (which sets `HASHROUTE_WRITE_GOLDEN=1`) and never edited by hand; a
//! missing file is a failure, not a skip.

use std::fmt::Write as _;

#[path = "frozen/mod.rs"]
mod frozen;
use frozen::*;

use hashroute::{
    Anchor, Jump, Ketama, KetamaVariant, KeyHasher, Maglev, Memento, Modulo, MultiProbe, NodeSet, RedisSlots,
    Rendezvous, Ring, Router,
};

fn routes_csv(router: &dyn Router) -> String {
    let mut out = String::from("key_hex,node\n");
    for key in golden_keys() {
        writeln!(out, "{},{}", hex(&key), router.node_name(router.route(&key))).unwrap();
    }
    out
}

/// Every frozen configuration: (file name, router).
fn routers() -> Vec<(&'static str, Box<dyn Router>)> {
    let ring = |v: u64, h: KeyHasher, set: NodeSet| -> Box<dyn Router> {
        Box::new(Ring::builder().vnodes(v).hasher(h).node_set(set).build().unwrap())
    };
    vec![
        ("ring-v160-xxh3", ring(160, KeyHasher::default(), cluster(10))),
        ("ring-v1-xxh3", ring(1, KeyHasher::default(), cluster(10))),
        ("ring-v100-xxh3-seed7", ring(100, KeyHasher::Xxh3 { seed: 7 }, cluster(7))),
        ("ring-v64-xxh64", ring(64, KeyHasher::Xxh64 { seed: 0 }, cluster(5))),
        ("ring-v64-murmur3", ring(64, KeyHasher::Murmur3X64 { seed: 0 }, cluster(5))),
        ("ring-v64-md5", ring(64, KeyHasher::Md5, cluster(5))),
        ("ring-v160-weighted", ring(160, KeyHasher::default(), weighted_cluster())),
        ("jump-xxh3", Box::new(Jump::builder().node_set(cluster(10)).hasher(KeyHasher::default()).build().unwrap())),
        (
            "modulo-xxh3",
            Box::new(Modulo::builder().node_set(cluster(10)).hasher(KeyHasher::default()).build().unwrap()),
        ),
        (
            "rendezvous-xxh3",
            Box::new(Rendezvous::builder().node_set(cluster(10)).hasher(KeyHasher::default()).build().unwrap()),
        ),
        (
            "rendezvous-weighted",
            Box::new(Rendezvous::builder().node_set(weighted_cluster()).hasher(KeyHasher::default()).build().unwrap()),
        ),
        ("rendezvous-go", Box::new(Rendezvous::builder().node_set(cluster(10)).go_rendezvous().build().unwrap())),
        ("slots-redis-cli-5", Box::new(RedisSlots::builder().node_set(cluster(5)).build().unwrap())),
        (
            "ketama-libketama-weighted",
            Box::new(Ketama::builder().node_set(weighted_cluster()).variant(KetamaVariant::Libketama).build().unwrap()),
        ),
        (
            "ketama-uhashring",
            Box::new(Ketama::builder().node_set(cluster(10)).variant(KetamaVariant::Uhashring).build().unwrap()),
        ),
        (
            "ketama-libmemcached",
            Box::new(Ketama::builder().node_set(cluster(10)).variant(KetamaVariant::Libmemcached).build().unwrap()),
        ),
        (
            "ketama-spymemcached",
            Box::new(Ketama::builder().node_set(cluster(10)).variant(KetamaVariant::Spymemcached).build().unwrap()),
        ),
        (
            "maglev-m65537",
            Box::new(
                Maglev::builder().node_set(cluster(10)).hasher(KeyHasher::default()).table_size(65537).build().unwrap(),
            ),
        ),
        (
            "maglev-weighted-m4099",
            Box::new(
                Maglev::builder()
                    .node_set(weighted_cluster())
                    .hasher(KeyHasher::default())
                    .table_size(4099)
                    .build()
                    .unwrap(),
            ),
        ),
        (
            "multiprobe-k21",
            Box::new(
                MultiProbe::builder().node_set(cluster(10)).hasher(KeyHasher::default()).probes(21).build().unwrap(),
            ),
        ),
        (
            "memento-removed",
            Box::new(
                Memento::builder()
                    .node_set(cluster(10))
                    .hasher(KeyHasher::default())
                    .build()
                    .unwrap()
                    .without_node("10.0.0.3:6379")
                    .unwrap()
                    .without_node("10.0.0.7:6379")
                    .unwrap(),
            ),
        ),
        (
            "anchor-removed",
            Box::new(
                Anchor::builder()
                    .node_set(cluster(10))
                    .hasher(KeyHasher::default())
                    .capacity(16)
                    .build()
                    .unwrap()
                    .without_node("10.0.0.3:6379")
                    .unwrap()
                    .without_node("10.0.0.7:6379")
                    .unwrap(),
            ),
        ),
        (
            "ketama-python-hash-ring",
            Box::new(Ketama::builder().node_set(cluster(10)).variant(KetamaVariant::PythonHashRing).build().unwrap()),
        ),
    ]
}

#[test]
fn hashers_are_frozen() {
    let hashers = [
        (KeyHasher::Xxh3 { seed: 0 }, 0),
        (KeyHasher::Xxh3 { seed: 42 }, 42),
        (KeyHasher::Xxh64 { seed: 0 }, 0),
        (KeyHasher::Xxh64 { seed: 42 }, 42),
        (KeyHasher::Murmur3X64 { seed: 0 }, 0),
        (KeyHasher::Murmur3X64 { seed: 42 }, 42),
        (KeyHasher::Murmur3X86_32 { seed: 0 }, 0),
        (KeyHasher::Md5, 0),
        (KeyHasher::Crc16, 0),
    ];
    let mut out = String::from("hasher,seed,key_hex,hash\n");
    for (h, seed) in hashers {
        assert_eq!(KeyHasher::from_name(h.name(), seed).unwrap(), h);
        for key in golden_keys().iter().take(100) {
            writeln!(out, "{},{seed},{},{:#018x}", h.name(), hex(key), h.hash(key)).unwrap();
        }
    }
    check_or_write("hashers.csv", &out);
}

/// The hashers added after `hashers.csv` was frozen, in their own file so that one stays untouched.
#[test]
fn new_hashers_are_frozen() {
    let hashers = [
        (KeyHasher::Xxh32 { seed: 0 }, 0),
        (KeyHasher::Xxh32 { seed: 42 }, 42),
        (KeyHasher::Crc32, 0),
        (KeyHasher::Sdbm, 0),
        (KeyHasher::SdbmAvalanche, 0),
        (KeyHasher::Murmur2Kafka, 0),
        (KeyHasher::Murmur64aEnvoy, 0),
        (KeyHasher::Oaat, 0),
        (KeyHasher::Fnv1a32, 0),
    ];
    let mut out = String::from("hasher,seed,key_hex,hash\n");
    for (h, seed) in hashers {
        assert_eq!(KeyHasher::from_name(h.name(), seed).unwrap(), h);
        for key in golden_keys().iter().take(100) {
            writeln!(out, "{},{seed},{},{:#018x}", h.name(), hex(key), h.hash(key)).unwrap();
        }
    }
    check_or_write("hashers-2.csv", &out);
}

#[test]
fn routes_are_frozen() {
    for (name, router) in routers() {
        check_or_write(&format!("{name}.csv"), &routes_csv(&*router));
    }
}

/// The jump family, all in one new file: `router,key_hex,node` for every golden key
/// on each router (and the bucket-level functions on u64 keys in `jump-family-buckets.csv`).
#[test]
fn jump_family_routes_are_frozen() {
    use hashroute::jumpback::JumpBackGenerator;
    use hashroute::{BinomialHash, FlipHash, JumpBack, JumpBackAnchor, PowerCh};
    let anchor = JumpBackAnchor::builder().node_set(cluster(10)).build().unwrap();
    let anchor_removed = anchor.without_node("10.0.0.3:6379").unwrap().without_node("10.0.0.7:6379").unwrap();
    let routers: Vec<(&str, Box<dyn Router>)> = vec![
        ("jumpback-xxh3", Box::new(JumpBack::builder().node_set(cluster(10)).build().unwrap())),
        (
            "jumpback-xorshift-l7r9-xxh3",
            Box::new(
                JumpBack::builder().generator(JumpBackGenerator::XorshiftL7R9).node_set(cluster(10)).build().unwrap(),
            ),
        ),
        ("fliphash-xxh3", Box::new(FlipHash::builder().node_set(cluster(10)).build().unwrap())),
        ("power-xxh3", Box::new(PowerCh::builder().node_set(cluster(10)).build().unwrap())),
        ("binomial-xxh3", Box::new(BinomialHash::builder().node_set(cluster(10)).build().unwrap())),
        (
            "binomial-xxh32",
            Box::new(
                BinomialHash::builder().hasher(KeyHasher::Xxh32 { seed: 0 }).node_set(cluster(10)).build().unwrap(),
            ),
        ),
        ("jumpback-anchor-xxh3", Box::new(anchor)),
        ("jumpback-anchor-xxh3-removed-3-7", Box::new(anchor_removed)),
    ];
    let mut out = String::from("router,key_hex,node\n");
    for (name, router) in &routers {
        for key in golden_keys() {
            writeln!(out, "{name},{},{}", hex(&key), router.node_name(router.route(&key))).unwrap();
        }
    }
    check_or_write("jump-family.csv", &out);

    let mut out = String::from("function,key_u64,buckets,bucket\n");
    let mut x = 0x5EED_2024u64;
    let keys: Vec<u64> = (0..64)
        .map(|_| {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            x ^ (x >> 29)
        })
        .collect();
    for n in [1u32, 2, 3, 10, 1000, 1 << 20, u32::MAX] {
        for &k in &keys {
            let rows = [
                ("jumpback", hashroute::jumpback::bucket(k, n)),
                (
                    "jumpback-xorshift-l7r9",
                    hashroute::jumpback::try_bucket_with(k, n, JumpBackGenerator::XorshiftL7R9).unwrap(),
                ),
                ("fliphash", hashroute::fliphash::bucket(k, n)),
                ("fliphash-seed7", hashroute::fliphash::bucket_seeded(k, 7, n).unwrap()),
                ("power", hashroute::power::bucket(k, n)),
                ("binomial", hashroute::binomial::bucket(k, n)),
            ];
            for (f, b) in rows {
                writeln!(out, "{f},{k},{n},{b}").unwrap();
            }
        }
    }
    check_or_write("jump-family-buckets.csv", &out);
}

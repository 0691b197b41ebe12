//! Frozen routes: hashroute's own stability contract.
//!
//! Every default hasher and every router configuration below has its answers for a fixed key
//! list committed under `tests/golden/`. A change to any route — a new point derivation, a
//! different tie rule, a hasher upgrade — fails here, visibly. Files are written once by
//! `scripts/gen_golden.sh` (which sets `HASHROUTE_WRITE_GOLDEN=1`) and never edited by hand; a
//! missing file is a failure, not a skip.

use std::fmt::Write as _;
use std::path::PathBuf;

use hashroute::{
    Hasher, Jump, Ketama, KetamaVariant, KeyHasher, Modulo, Node, NodeSet, RedisSlots, Rendezvous, Ring, Router,
};

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// 512 text keys, the empty key, and 64 binary keys (all byte values appear).
fn golden_keys() -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = (0..512).map(|i| format!("key-{i}").into_bytes()).collect();
    keys.push(Vec::new());
    keys.extend((0u16..64).map(|i| (0..(i % 17 + 1)).map(|j| (i * 37 + j * 101) as u8).collect()));
    keys
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn check_or_write(name: &str, contents: &str) {
    let path = golden_dir().join(format!("{name}.csv"));
    if std::env::var_os("HASHROUTE_WRITE_GOLDEN").is_some() {
        std::fs::create_dir_all(golden_dir()).unwrap();
        std::fs::write(&path, contents).unwrap();
        eprintln!("wrote {}", path.display());
        return;
    }
    let frozen = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("golden file {} is missing ({e}); generate it with scripts/gen_golden.sh", path.display())
    });
    if frozen != contents {
        let first = frozen.lines().zip(contents.lines()).position(|(a, b)| a != b);
        panic!(
            "routes of {name} changed (first differing line {:?}); a route change breaks the stability \
             contract — if intended, bump the major version and regenerate with scripts/gen_golden.sh",
            first.map(|i| i + 1)
        );
    }
}

fn routes_csv(router: &dyn Router) -> String {
    let mut out = String::from("key_hex,node\n");
    for key in golden_keys() {
        writeln!(out, "{},{}", hex(&key), router.node_name(router.route(&key))).unwrap();
    }
    out
}

fn cluster(n: usize) -> NodeSet {
    NodeSet::from_names((0..n).map(|i| format!("10.0.0.{i}:6379"))).unwrap()
}

fn weighted_cluster() -> NodeSet {
    NodeSet::new((0..6).map(|i| Node::new(format!("cache-{i}")).with_weight(f64::from(i + 1)))).unwrap()
}

/// Every frozen configuration: (file name, router).
fn routers() -> Vec<(&'static str, Box<dyn Router>)> {
    let ring = |v: u64, h: Hasher, set: NodeSet| -> Box<dyn Router> {
        Box::new(Ring::builder().vnodes(v).hasher(h).node_set(set).build().unwrap())
    };
    vec![
        ("ring-v160-xxh3", ring(160, Hasher::default(), cluster(10))),
        ("ring-v1-xxh3", ring(1, Hasher::default(), cluster(10))),
        ("ring-v100-xxh3-seed7", ring(100, Hasher::Xxh3 { seed: 7 }, cluster(7))),
        ("ring-v64-xxh64", ring(64, Hasher::Xxh64 { seed: 0 }, cluster(5))),
        ("ring-v64-murmur3", ring(64, Hasher::Murmur3X64 { seed: 0 }, cluster(5))),
        ("ring-v64-md5", ring(64, Hasher::Md5, cluster(5))),
        ("ring-v160-weighted", ring(160, Hasher::default(), weighted_cluster())),
        ("jump-xxh3", Box::new(Jump::new(cluster(10), Hasher::default()).unwrap())),
        ("modulo-xxh3", Box::new(Modulo::new(cluster(10), Hasher::default()))),
        ("rendezvous-xxh3", Box::new(Rendezvous::new(cluster(10), Hasher::default()).unwrap())),
        ("rendezvous-weighted", Box::new(Rendezvous::new(weighted_cluster(), Hasher::default()).unwrap())),
        ("rendezvous-go", Box::new(Rendezvous::go_rendezvous(cluster(10)).unwrap())),
        ("slots-redis-cli-5", Box::new(RedisSlots::new(cluster(5)).unwrap())),
        ("ketama-libketama-weighted", Box::new(Ketama::new(weighted_cluster(), KetamaVariant::Libketama).unwrap())),
        ("ketama-uhashring", Box::new(Ketama::new(cluster(10), KetamaVariant::Uhashring).unwrap())),
        ("ketama-libmemcached", Box::new(Ketama::new(cluster(10), KetamaVariant::Libmemcached).unwrap())),
        ("ketama-spymemcached", Box::new(Ketama::new(cluster(10), KetamaVariant::Spymemcached).unwrap())),
        ("ketama-python-hash-ring", Box::new(Ketama::new(cluster(10), KetamaVariant::PythonHashRing).unwrap())),
    ]
}

#[test]
fn hashers_are_frozen() {
    let hashers = [
        (Hasher::Xxh3 { seed: 0 }, 0),
        (Hasher::Xxh3 { seed: 42 }, 42),
        (Hasher::Xxh64 { seed: 0 }, 0),
        (Hasher::Xxh64 { seed: 42 }, 42),
        (Hasher::Murmur3X64 { seed: 0 }, 0),
        (Hasher::Murmur3X64 { seed: 42 }, 42),
        (Hasher::Murmur3X86_32 { seed: 0 }, 0),
        (Hasher::Md5, 0),
        (Hasher::Crc16, 0),
    ];
    let mut out = String::from("hasher,seed,key_hex,hash\n");
    for (h, seed) in hashers {
        assert_eq!(Hasher::from_name(h.name(), seed).unwrap(), h);
        for key in golden_keys().iter().take(100) {
            writeln!(out, "{},{seed},{},{:#018x}", h.name(), hex(key), h.hash(key)).unwrap();
        }
    }
    check_or_write("hashers", &out);
}

#[test]
fn routes_are_frozen() {
    for (name, router) in routers() {
        check_or_write(name, &routes_csv(&*router));
    }
}

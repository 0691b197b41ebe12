//! Cross-cutting properties every router must keep, checked with proptest on random clusters.
//!
//! Each property is written once, generically, and applied to every router it holds for; a new
//! router joins by adding a line to the lists at the bottom.

use std::collections::HashSet;

use hashroute::{
    Failover, Jump, Ketama, KetamaVariant, KeyHasher, Modulo, Node, NodeId, NodeSet, Rendezvous, Ring, Router,
};
use proptest::prelude::*;

type Build = fn(&NodeSet) -> hashroute::Result<Box<dyn Router>>;

fn ring(set: &NodeSet) -> hashroute::Result<Box<dyn Router>> {
    Ok(Box::new(Ring::builder().vnodes(40).node_set(set.clone()).build()?))
}
fn naive_ring(set: &NodeSet) -> hashroute::Result<Box<dyn Router>> {
    Ok(Box::new(Ring::builder().vnodes(1).node_set(set.clone()).build()?))
}
fn ring_md5(set: &NodeSet) -> hashroute::Result<Box<dyn Router>> {
    Ok(Box::new(Ring::builder().vnodes(20).hasher(KeyHasher::Md5).node_set(set.clone()).build()?))
}
fn jump(set: &NodeSet) -> hashroute::Result<Box<dyn Router>> {
    Ok(Box::new(Jump::builder().node_set(set.clone()).hasher(KeyHasher::default()).build()?))
}
fn ketama(set: &NodeSet) -> hashroute::Result<Box<dyn Router>> {
    Ok(Box::new(Ketama::builder().node_set(set.clone()).variant(KetamaVariant::Libketama).build()?))
}
fn ketama_uhashring(set: &NodeSet) -> hashroute::Result<Box<dyn Router>> {
    Ok(Box::new(Ketama::builder().node_set(set.clone()).variant(KetamaVariant::Uhashring).build()?))
}
fn rendezvous(set: &NodeSet) -> hashroute::Result<Box<dyn Router>> {
    Ok(Box::new(Rendezvous::builder().node_set(set.clone()).hasher(KeyHasher::default()).build()?))
}
/// Rendezvous with unequal weights (the logarithmic method), from the same names.
fn rendezvous_weighted(set: &NodeSet) -> hashroute::Result<Box<dyn Router>> {
    let weighted =
        NodeSet::new(set.iter().map(|(_, n)| Node::new(n.name()).with_weight(1.0 + (n.name().len() % 3) as f64)))?;
    Ok(Box::new(Rendezvous::builder().node_set(weighted).hasher(KeyHasher::default()).build()?))
}
fn modulo(set: &NodeSet) -> hashroute::Result<Box<dyn Router>> {
    Ok(Box::new(Modulo::builder().node_set(set.clone()).hasher(KeyHasher::default()).build().unwrap()))
}

fn jumpback(set: &NodeSet) -> hashroute::Result<Box<dyn Router>> {
    Ok(Box::new(hashroute::JumpBack::builder().node_set(set.clone()).build()?))
}
fn jumpback_xorshift(set: &NodeSet) -> hashroute::Result<Box<dyn Router>> {
    let g = hashroute::jumpback::JumpBackGenerator::XorshiftL7R9;
    Ok(Box::new(hashroute::JumpBack::builder().generator(g).node_set(set.clone()).build()?))
}
fn fliphash(set: &NodeSet) -> hashroute::Result<Box<dyn Router>> {
    Ok(Box::new(hashroute::FlipHash::builder().node_set(set.clone()).build()?))
}
fn power(set: &NodeSet) -> hashroute::Result<Box<dyn Router>> {
    Ok(Box::new(hashroute::PowerCh::builder().node_set(set.clone()).build()?))
}
fn binomial(set: &NodeSet) -> hashroute::Result<Box<dyn Router>> {
    Ok(Box::new(hashroute::BinomialHash::builder().node_set(set.clone()).build()?))
}
fn jumpback_anchor(set: &NodeSet) -> hashroute::Result<Box<dyn Router>> {
    Ok(Box::new(hashroute::JumpBackAnchor::builder().node_set(set.clone()).build()?))
}
/// JumpBackAnchor over the set plus two extra nodes, then those two removed (one in the middle),
/// so removal state is exercised by every generic property.
fn jumpback_anchor_removed(set: &NodeSet) -> hashroute::Result<Box<dyn Router>> {
    let mut nodes: Vec<Node> = set.iter().map(|(_, n)| n.clone()).collect();
    nodes.insert(nodes.len() / 2, Node::new("~extra-mid"));
    nodes.push(Node::new("~extra-end"));
    let r = hashroute::JumpBackAnchor::builder().node_set(NodeSet::new(nodes)?).build()?;
    Ok(Box::new(r.without_node("~extra-end")?.without_node("~extra-mid")?))
}

/// A token ring whose nodes carry 8 tokens each, the Cassandra tokens of `"{name}-{i}"`, so the
/// generic properties (built from names) apply to it.
fn token_ring(set: &NodeSet) -> hashroute::Result<Box<dyn Router>> {
    let token = |name: &str, i: u32| hashroute::cassandra::murmur3_token(format!("{name}-{i}").as_bytes());
    let nodes = set.iter().map(|(_, n)| n.clone().with_tokens((0..8).map(|i| token(n.name(), i))));
    Ok(Box::new(hashroute::TokenRing::from_nodes(nodes.collect::<Vec<_>>())?))
}

/// Routers whose routes do not depend on node order, and which move keys minimally when an
/// arbitrary node joins or leaves.
const ORDER_FREE: &[(&str, Build)] = &[
    ("ring", ring),
    ("naive-ring", naive_ring),
    ("ring-md5", ring_md5),
    ("ketama", ketama),
    ("ketama-uhashring", ketama_uhashring),
    ("rendezvous", rendezvous),
    ("rendezvous-weighted", rendezvous_weighted),
    ("token-ring", token_ring),
];
/// Every router with a preference list.
const ALL: &[(&str, Build)] = &[
    ("ring", ring),
    ("naive-ring", naive_ring),
    ("ring-md5", ring_md5),
    ("ketama", ketama),
    ("ketama-uhashring", ketama_uhashring),
    ("rendezvous", rendezvous),
    ("rendezvous-weighted", rendezvous_weighted),
    ("jump", jump),
    ("modulo", modulo),
    ("jumpback", jumpback),
    ("jumpback-xorshift", jumpback_xorshift),
    ("fliphash", fliphash),
    ("power", power),
    ("binomial", binomial),
    ("jumpback-anchor", jumpback_anchor),
    ("jumpback-anchor-removed", jumpback_anchor_removed),
    ("token-ring", token_ring),
];

fn names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

fn keys(seed: u64, count: usize) -> Vec<Vec<u8>> {
    (0..count as u64).map(|i| (seed ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).to_le_bytes().to_vec()).collect()
}

fn route_names(r: &dyn Router, keys: &[Vec<u8>]) -> Vec<String> {
    keys.iter().map(|k| r.node_name(r.route(k)).to_owned()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn adding_a_node_moves_keys_only_to_it(n in 1usize..12, seed: u64, prefix in "[a-z]{1,6}") {
        let base = names(&prefix, n);
        let ks = keys(seed, 600);
        for (label, build) in ORDER_FREE {
            let before = build(&NodeSet::from_names(&base).unwrap()).unwrap();
            let mut grown = base.clone();
            grown.push(format!("{prefix}-new"));
            let after = build(&NodeSet::from_names(&grown).unwrap()).unwrap();
            for ((k, was), now) in ks.iter().zip(route_names(&*before, &ks)).zip(route_names(&*after, &ks)) {
                prop_assert!(was == now || now == format!("{prefix}-new"), "{label}: key {k:?} moved {was} -> {now}");
            }
        }
    }

    #[test]
    fn removing_a_node_moves_only_its_keys(n in 2usize..12, victim in 0usize..12, seed: u64) {
        let base = names("n", n);
        let victim = format!("n{}", victim % n);
        let ks = keys(seed, 600);
        for (label, build) in ORDER_FREE {
            let set = NodeSet::from_names(&base).unwrap();
            let before = build(&set).unwrap();
            let after = build(&set.without_node(&victim).unwrap()).unwrap();
            for (was, now) in route_names(&*before, &ks).into_iter().zip(route_names(&*after, &ks)) {
                prop_assert!(was == victim || was == now, "{label}: {was} -> {now} though {victim} left");
            }
        }
    }

    #[test]
    fn shuffled_nodes_route_the_same(n in 1usize..16, seed: u64, rot in 0usize..16) {
        let base = names("node-", n);
        let mut shuffled = base.clone();
        shuffled.rotate_left(rot % n);
        shuffled.reverse();
        let ks = keys(seed, 400);
        for (label, build) in ORDER_FREE {
            let a = build(&NodeSet::from_names(&base).unwrap()).unwrap();
            let b = build(&NodeSet::from_names(&shuffled).unwrap()).unwrap();
            prop_assert_eq!(route_names(&*a, &ks), route_names(&*b, &ks), "{}", label);
        }
    }

    #[test]
    fn batch_and_parallel_equal_single(n in 1usize..40, seed: u64, count in 0usize..300) {
        let set = NodeSet::from_names(names("s", n)).unwrap();
        let ks = keys(seed, count);
        let refs: Vec<&[u8]> = ks.iter().map(Vec::as_slice).collect();
        for (label, build) in ALL {
            let r = build(&set).unwrap();
            let single: Vec<NodeId> = refs.iter().map(|k| r.route(k)).collect();
            let mut batch = vec![NodeId::default(); refs.len()];
            r.route_batch(&refs, &mut batch);
            prop_assert_eq!(&batch, &single, "{}", label);
            #[cfg(feature = "parallel")]
            {
                use hashroute::ParRouteBatch;
                let mut par = vec![NodeId::default(); refs.len()];
                r.par_route_batch(&refs, &mut par);
                prop_assert_eq!(&par, &single, "{}", label);
            }
        }
    }

    #[test]
    fn replicas_are_distinct_and_start_with_route(n in 1usize..20, want in 0usize..20, seed: u64) {
        let set = NodeSet::from_names(names("r", n)).unwrap();
        for (label, build) in ALL {
            let r = build(&set).unwrap();
            for k in keys(seed, 20) {
                match r.replicas(&k, want) {
                    Ok(reps) => {
                        prop_assert!(want <= n);
                        prop_assert_eq!(reps.len(), want);
                        if want > 0 {
                            prop_assert_eq!(reps[0], r.route(&k), "{}", label);
                        }
                        prop_assert_eq!(reps.iter().collect::<HashSet<_>>().len(), want, "{}", label);
                    }
                    Err(e) => prop_assert!(want > n, "{label}: {e}"),
                }
            }
        }
    }

    #[test]
    fn down_then_up_restores_the_mapping(n in 2usize..12, victim in 0usize..12, seed: u64) {
        let set = NodeSet::from_names(names("d", n)).unwrap();
        let victim = format!("d{}", victim % n);
        let ks = keys(seed, 400);
        for (label, build) in ALL {
            let mut f = Failover::new(build(&set).unwrap()).unwrap();
            let before = route_names(&f, &ks);
            f.mark_down(&victim).unwrap();
            for (was, now) in before.iter().zip(route_names(&f, &ks)) {
                prop_assert_ne!(&now, &victim, "{}", label);
                prop_assert!(*was == victim || *was == now, "{label}: {was} -> {now}");
            }
            f.mark_up(&victim).unwrap();
            prop_assert_eq!(route_names(&f, &ks), before, "{}", label);
        }
    }

    #[test]
    fn jump_growth_moves_keys_only_to_the_new_bucket(n in 1u32..2000, key: u64) {
        let a = hashroute::jump::bucket(key, n);
        let b = hashroute::jump::bucket(key, n + 1);
        prop_assert!(a == b || b == n);
        prop_assert!(a < n);
    }

    #[test]
    fn route_hash_matches_route(n in 1usize..30, seed: u64) {
        let set = NodeSet::from_names(names("h", n)).unwrap();
        for (label, build) in ALL {
            let r = build(&set).unwrap();
            let hasher = match *label {
                "ring-md5" => KeyHasher::Md5,
                "token-ring" => KeyHasher::CassandraMurmur3,
                l if l.starts_with("ketama") => {
                    prop_assert!(r.route_hash(1).is_err(), "ketama's key hash is 32 bits");
                    continue;
                }
                _ => KeyHasher::default(),
            };
            for k in keys(seed, 50) {
                prop_assert_eq!(r.route_hash(hasher.hash(&k)).unwrap(), r.route(&k), "{}", label);
            }
        }
    }
}

#[test]
fn edge_hashes_route_somewhere_valid() {
    let set = NodeSet::from_names(names("e", 5)).unwrap();
    for (label, build) in ALL.iter().filter(|(l, _)| !l.starts_with("ketama")) {
        let r = build(&set).unwrap();
        for h in [0, 1, u64::MAX - 1, u64::MAX] {
            assert!(r.route_hash(h).unwrap().index() < 5, "{label}");
        }
        assert!(r.route(b"").index() < 5, "{label}");
    }
}

// ---- The jump family ----

/// The bucket-level functions of the only-last-bucket family.
/// A bucket function on (key, buckets).
type BucketFn = fn(u64, u32) -> u32;
/// A bucket function with the bucket count bound in.
type KeyFn = Box<dyn Fn(u64) -> u32>;

const BUCKET_FNS: &[(&str, BucketFn)] = &[
    ("jump", hashroute::jump::bucket),
    ("jumpback", hashroute::jumpback::bucket),
    ("jumpback-xorshift", |k, n| {
        hashroute::jumpback::try_bucket_with(k, n, hashroute::jumpback::JumpBackGenerator::XorshiftL7R9).unwrap()
    }),
    ("fliphash", hashroute::fliphash::bucket),
    ("power", hashroute::power::bucket),
    ("binomial", hashroute::binomial::bucket),
    ("jumpback-anchor", |k, n| {
        hashroute::jumpback::JumpBackAnchorBucketSet::with_buckets(n).unwrap().bucket(k).unwrap()
    }),
];

/// Adversarial bucket counts: powers of two and their neighbours, the u32 edges.
fn edge_counts() -> Vec<u32> {
    let mut out = vec![1, 2, 3, (1 << 31) - 1, 1 << 31, (1 << 31) + 1, u32::MAX - 1];
    for b in 2..31 {
        out.extend([(1u32 << b) - 1, 1 << b, (1 << b) + 1]);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Monotone growth: n -> n+1 moves a key only to the new bucket n; always in range.
    #[test]
    fn jump_family_growth_moves_keys_only_to_the_new_bucket(n in 1u32..5000, key: u64, edge in 0usize..64) {
        let counts = edge_counts();
        let big = counts[edge % counts.len()];
        for (label, f) in BUCKET_FNS {
            // JumpBackAnchor's ids are Java ints.
            if *label == "jumpback-anchor" && big >= (1 << 31) - 1 {
                continue;
            }
            for n in [n, big] {
                let a = f(key, n);
                let b = f(key, n + 1);
                prop_assert!(a < n, "{label}: {a} >= {n}");
                prop_assert!(a == b || b == n, "{label}: key {key} moved {a} -> {b} growing {n} -> {}", n + 1);
            }
        }
    }

    /// JumpBackAnchor: a removal moves only the removed bucket's keys, and re-adding (LIFO)
    /// restores the exact mapping; the state bytes round-trip.
    #[test]
    fn jumpback_anchor_removal_and_restore(n in 2u32..200, picks in proptest::collection::vec(any::<u32>(), 1..40), seed: u64) {
        let ks: Vec<u64> = (0..300u64).map(|i| seed ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
        let mut set = hashroute::jumpback::JumpBackAnchorBucketSet::with_buckets(n).unwrap();
        let mut history = vec![(set.clone(), ks.iter().map(|&k| set.bucket(k).unwrap()).collect::<Vec<_>>())];
        for p in picks {
            let working = set.working_buckets();
            if working.len() == 1 {
                break;
            }
            let victim = working[p as usize % working.len()];
            let before = &history.last().unwrap().1;
            prop_assert!(set.remove_bucket(victim));
            prop_assert!(!set.remove_bucket(victim), "removing twice");
            let after: Vec<u32> = ks.iter().map(|&k| set.bucket(k).unwrap()).collect();
            for (&was, &now) in before.iter().zip(&after) {
                prop_assert!(now != victim && set.is_working(now));
                prop_assert!(was == victim || was == now, "{was} -> {now} though {victim} left");
            }
            let restored = hashroute::jumpback::JumpBackAnchorBucketSet::from_state(&set.state()).unwrap();
            prop_assert_eq!(&restored, &set);
            history.push((set.clone(), after));
        }
        // Restore in LIFO order: every intermediate mapping comes back exactly.
        history.pop();
        while let Some((want_set, want)) = history.pop() {
            set.add_bucket();
            let got: Vec<u32> = ks.iter().map(|&k| set.bucket(k).unwrap()).collect();
            prop_assert_eq!(&got, &want);
            prop_assert_eq!(set.working_buckets(), want_set.working_buckets());
        }
    }

    /// The JumpBackAnchor router: removing any node moves only its keys; re-adding it restores
    /// every key.
    #[test]
    fn jumpback_anchor_router_remove_any_and_restore(n in 2usize..16, victim in 0usize..16, seed: u64) {
        let set = NodeSet::from_names(names("n", n)).unwrap();
        let victim = format!("n{}", victim % n);
        let ks = keys(seed, 500);
        let before = hashroute::JumpBackAnchor::builder().node_set(set).build().unwrap();
        let after = before.without_node(&victim).unwrap();
        let back = after.with_node(Node::new(victim.as_str())).unwrap();
        let (b, a, r) = (route_names(&before, &ks), route_names(&after, &ks), route_names(&back, &ks));
        for ((was, now), again) in b.iter().zip(&a).zip(&r) {
            prop_assert!(now != &victim);
            prop_assert!(was == &victim || was == now, "{was} -> {now} though {victim} left");
            prop_assert_eq!(was, again);
        }
    }
}

#[test]
fn jumpback_anchor_state_rejects_bad_bytes() {
    use hashroute::jumpback::JumpBackAnchorBucketSet as S;
    for bad in [&b""[..], &[1, 0, 0], &[2, 0, 0, 0, 5, 0, 0, 0], &[3, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0], &[0xff; 4]] {
        assert!(matches!(S::from_state(bad), Err(hashroute::Error::Malformed(_))), "{bad:?}");
    }
    // Removing every bucket but one is allowed; the last one cannot be in a state.
    assert!(S::from_state(&[2, 0, 0, 0, 0, 0, 0, 0]).is_ok());
    assert!(S::from_state(&[2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0]).is_err());
    assert_eq!(S::new().bucket(7), None);
    assert_eq!(S::from_state(&[0; 4]).unwrap(), S::new());
}

/// Balance: with 200 000 keys (splitmix64 of 0..200000, i.e. uniform hashes) over 100 buckets,
/// each load is Binomial(200000, 1/100) with standard deviation ≈ 44.5; the measured standard
/// deviation of the loads must be below 1.5× that (a 100-sample estimate of σ is within ±20% at
/// 4σ, so this fails only for a real imbalance).
#[test]
fn jump_family_balance_within_sampling_noise() {
    let n = 100u32;
    let keys = 200_000u64;
    let sigma = (keys as f64 * (1.0 / 100.0) * (99.0 / 100.0)).sqrt();
    let mut anchor_removed = hashroute::jumpback::JumpBackAnchorBucketSet::with_buckets(110).unwrap();
    for id in [3, 17, 29, 41, 55, 62, 70, 88, 95, 104] {
        assert!(anchor_removed.remove_bucket(id));
    }
    let mut fns: Vec<(&str, KeyFn)> =
        BUCKET_FNS.iter().map(|&(l, f)| (l, Box::new(move |k| f(k, n)) as KeyFn)).collect();
    fns.push(("jumpback-anchor-10-removed", Box::new(move |k| anchor_removed.bucket(k).unwrap())));
    for (label, f) in fns {
        let mut loads = std::collections::HashMap::<u32, u64>::new();
        let mut s = 0u64;
        for _ in 0..keys {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            *loads.entry(f(z ^ (z >> 31))).or_default() += 1;
        }
        assert_eq!(loads.len(), n as usize, "{label}: every bucket gets keys");
        let mean = keys as f64 / f64::from(n);
        let var = loads.values().map(|&l| (l as f64 - mean).powi(2)).sum::<f64>() / f64::from(n);
        assert!(var.sqrt() < 1.5 * sigma, "{label}: load std dev {} vs sampling {sigma}", var.sqrt());
    }
}

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

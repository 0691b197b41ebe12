//! Properties of the proxy-compatible routers on random node sets and keys: minimal
//! movement where the proxy's own arithmetic keeps other servers' points (nginx, HAProxy with
//! pinned ids, twemproxy and libmemcached one-at-a-time at equal weights), node-order freedom
//! where names alone place points, batch = single, distinct preference lists starting with the
//! route. Envoy's ring is left out of the movement properties on purpose: a new host changes
//! every host's entry count (the scale is shared), so keys also move between old hosts.

use proptest::prelude::*;

use hashroute::{EnvoyRing, Haproxy, Kafka, Ketama, KetamaVariant, KeyHasher, Nginx, Node, NodeSet, Router};

type Build = fn(&NodeSet) -> Box<dyn Router>;

fn nginx(set: &NodeSet) -> Box<dyn Router> {
    Box::new(Nginx::builder().node_set(set.clone()).build().unwrap())
}
fn haproxy(set: &NodeSet) -> Box<dyn Router> {
    Box::new(Haproxy::builder().hasher(KeyHasher::SdbmAvalanche).node_set(set.clone()).build().unwrap())
}
fn twemproxy_md5(set: &NodeSet) -> Box<dyn Router> {
    Box::new(Ketama::builder().variant(KetamaVariant::Twemproxy).node_set(set.clone()).build().unwrap())
}
fn twemproxy_fnv(set: &NodeSet) -> Box<dyn Router> {
    let b = Ketama::builder().variant(KetamaVariant::Twemproxy).key_hasher(KeyHasher::Fnv1a32);
    Box::new(b.node_set(set.clone()).build().unwrap())
}
fn oaat(set: &NodeSet) -> Box<dyn Router> {
    Box::new(Ketama::builder().variant(KetamaVariant::LibmemcachedOaat).node_set(set.clone()).build().unwrap())
}
fn envoy(set: &NodeSet) -> Box<dyn Router> {
    Box::new(EnvoyRing::builder().min_ring_size(64).node_set(set.clone()).build().unwrap())
}

/// Routers whose points depend on names only (order-free, minimal movement at equal weights).
const BY_NAME: &[(&str, Build)] =
    &[("nginx", nginx), ("twemproxy-md5", twemproxy_md5), ("twemproxy-fnv1a", twemproxy_fnv), ("oaat", oaat)];

/// Every proxy router with a preference list.
const ALL: &[(&str, Build)] = &[
    ("nginx", nginx),
    ("haproxy", haproxy),
    ("twemproxy-md5", twemproxy_md5),
    ("twemproxy-fnv1a", twemproxy_fnv),
    ("oaat", oaat),
    ("envoy-ring", envoy),
];

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("10.1.0.{i}:11211")).collect()
}

fn keys(seed: u64, count: usize) -> Vec<Vec<u8>> {
    (0..count as u64)
        .map(|i| {
            let x = seed ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            format!("/k/{x:x}?q={}", x % 7).into_bytes()
        })
        .collect()
}

fn route_names(r: &dyn Router, keys: &[Vec<u8>]) -> Vec<String> {
    keys.iter().map(|k| r.node_name(r.route(k)).to_owned()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn adding_a_server_moves_keys_only_to_it(n in 1usize..12, seed: u64) {
        let ks = keys(seed, 500);
        let base = NodeSet::from_names(names(n)).unwrap();
        let new = "10.9.9.9:11300";
        for (label, build) in BY_NAME.iter().chain(&[("haproxy", haproxy as Build)]) {
            // HAProxy: the new server is declared last, so the others keep their ids.
            let before = build(&base);
            let after = build(&base.with_node(Node::new(new)).unwrap());
            for (was, now) in route_names(&*before, &ks).into_iter().zip(route_names(&*after, &ks)) {
                prop_assert!(was == now || now == new, "{}: {} -> {}", label, was, now);
            }
        }
    }

    #[test]
    fn removing_a_server_moves_only_its_keys(n in 2usize..12, victim in 0usize..12, seed: u64) {
        let ks = keys(seed, 500);
        let set = NodeSet::from_names(names(n)).unwrap();
        let victim = names(n)[victim % n].clone();
        for (label, build) in BY_NAME {
            let before = build(&set);
            let after = build(&set.without_node(&victim).unwrap());
            for (was, now) in route_names(&*before, &ks).into_iter().zip(route_names(&*after, &ks)) {
                prop_assert!(was == victim || was == now, "{}: {} -> {} though {} left", label, was, now, victim);
            }
        }
        // HAProxy through without_node, which pins the remaining servers' ids.
        let h = Haproxy::builder().node_set(set.clone()).build().unwrap();
        let smaller = h.without_node(&victim).unwrap();
        for (was, now) in route_names(&h, &ks).into_iter().zip(route_names(&smaller, &ks)) {
            prop_assert!(was == victim || was == now, "haproxy: {} -> {}", was, now);
        }
    }

    #[test]
    fn name_placed_routers_ignore_node_order(n in 1usize..12, seed: u64, rot in 0usize..12) {
        let ks = keys(seed, 300);
        let base = names(n);
        let mut shuffled = base.clone();
        shuffled.rotate_left(rot % n);
        shuffled.reverse();
        for (label, build) in BY_NAME {
            let a = build(&NodeSet::from_names(&base).unwrap());
            let b = build(&NodeSet::from_names(&shuffled).unwrap());
            prop_assert_eq!(route_names(&*a, &ks), route_names(&*b, &ks), "{}", label);
        }
    }

    #[test]
    fn batch_equals_single_and_replicas_are_distinct(n in 1usize..16, seed: u64, weights in proptest::collection::vec(1u32..6, 16)) {
        let ks = keys(seed, 200);
        let set = NodeSet::new(names(n).into_iter().zip(&weights).map(|(name, &w)| Node::new(name).with_weight(f64::from(w)))).unwrap();
        for (label, build) in ALL {
            let r = build(&set);
            let refs: Vec<&[u8]> = ks.iter().map(Vec::as_slice).collect();
            let mut out = vec![hashroute::NodeId::default(); refs.len()];
            r.route_batch(&refs, &mut out);
            for (k, id) in refs.iter().zip(&out) {
                prop_assert_eq!(*id, r.route(k), "{}", label);
                let reps = r.replicas(k, n).unwrap();
                prop_assert_eq!(reps[0], *id, "{}", label);
                let mut sorted = reps.clone();
                sorted.sort();
                sorted.dedup();
                prop_assert_eq!(sorted.len(), n, "{}", label);
            }
        }
    }

    #[test]
    fn kafka_is_murmur2_modulo(n in 1u32..5000, key in proptest::collection::vec(any::<u8>(), 0..64)) {
        let k = Kafka::partitions(n).unwrap();
        let want = (KeyHasher::Murmur2Kafka.hash(&key) as u32 & 0x7fff_ffff) % n;
        prop_assert_eq!(k.route(&key).index() as u32, want);
        prop_assert_eq!(k.node_name(k.route(&key)), want.to_string());
    }

    #[test]
    fn envoy_route_hash_matches_route(n in 1usize..12, seed: u64) {
        let r = EnvoyRing::builder().node_set(NodeSet::from_names(names(n)).unwrap()).build().unwrap();
        for k in keys(seed, 100) {
            prop_assert_eq!(r.route(&k), r.route_hash(KeyHasher::Xxh64 { seed: 0 }.hash(&k)).unwrap());
        }
    }
}

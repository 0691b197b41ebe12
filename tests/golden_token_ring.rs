//! Frozen routes, replica lists, tokens files, fingerprints and configuration texts of the token
//! ring, in files of their own so that every earlier golden file stays byte-identical.
//!
//! - `token-ring.csv`: for every golden key, its Cassandra token and, on two fixed rings, its
//!   owner and its SimpleStrategy and NetworkTopologyStrategy replica lists.
//! - `token-ring-file.txt`: the tokens file of the random-token ring (the writer's format).
//! - `token-ring-fingerprints.csv`: fingerprints of the rings (concrete, `dyn`, through
//!   `RouterSpec`, after a membership change).
//! - `token-ring-config.txt` (feature `serde`): a `ClusterConfig` of the ring as JSON and TOML.
//! - `token-ring-allocated.txt`: the tokens the allocator chooses, step by step through additions
//!   (equal and weighted), a removal and weight changes, and the tokens file of a ring built with
//!   `tokens_per_node` and no tokens: allocated tokens are part of the stability contract too.
//!
//! Same rules as `tests/golden.rs`: written once by `scripts/gen_golden.sh`
//! (`HASHROUTE_WRITE_GOLDEN=1`), never edited by hand; a missing file is a failure.

use std::fmt::Write as _;

#[path = "frozen/mod.rs"]
mod frozen;
use frozen::*;

use hashroute::cassandra::murmur3_token;
use hashroute::token_ring::TokenAllocator;
use hashroute::{fingerprint, Node, NodeId, Replication, Router, TokenRing};

/// Ten nodes over two datacenters and three racks, 16 tokens each from a fixed SplitMix64
/// stream: what a cluster with `num_tokens: 16` and random tokens looks like.
fn random_ring() -> TokenRing {
    let mut x = 0x7075_6d70_6b69_6e73u64;
    let mut next = || {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) as i64
    };
    let nodes: Vec<Node> = (0..10)
        .map(|i| {
            Node::new(format!("10.0.0.{i}:9042"))
                .with_label("zone", if i < 6 { "dc1" } else { "dc2" })
                .with_label("rack", format!("rack{}", i % 3 + 1))
                .with_tokens((0..16).map(|_| next()).collect::<Vec<_>>())
        })
        .collect();
    TokenRing::from_nodes(nodes).unwrap()
}

/// Six nodes, one evenly spaced token each (`nodetool`'s initial tokens for six nodes).
fn even_ring() -> TokenRing {
    let step = (u64::MAX / 6) as i128;
    let nodes = (0..6).map(|i| {
        let token = (i64::MIN as i128 + i as i128 * step) as i64;
        Node::new(format!("cass-{i}")).with_label("zone", "dc1").with_label("rack", "rack1").with_tokens([token])
    });
    TokenRing::from_nodes(nodes.collect::<Vec<_>>()).unwrap()
}

fn joined(ring: &TokenRing, ids: &[NodeId]) -> String {
    ids.iter().map(|&id| ring.node_name(id)).collect::<Vec<_>>().join(";")
}

#[test]
fn token_ring_routes_are_frozen() {
    let (random, even) = (random_ring(), even_ring());
    let simple: Replication = "simple:3".parse().unwrap();
    let nts: Replication = "nts:dc1=3,dc2=2".parse().unwrap();
    let mut out = String::from("key_hex,token,random_owner,random_simple3,random_nts_dc1_3_dc2_2,even_owner\n");
    for key in golden_keys() {
        writeln!(
            out,
            "{},{},{},{},{},{}",
            hex(&key),
            murmur3_token(&key),
            random.node_name(random.route(&key)),
            joined(&random, &random.replicas_with(&key, &simple).unwrap()),
            joined(&random, &random.replicas_with(&key, &nts).unwrap()),
            even.node_name(even.route(&key)),
        )
        .unwrap();
    }
    check_or_write("token-ring.csv", &out);
    let file = random.to_tokens_file().unwrap();
    let frozen = check_or_write("token-ring-file.txt", &file);
    let reread = TokenRing::parse(&frozen).unwrap();
    assert_eq!((reread.positions(), reread.owners()), (random.positions(), random.owners()));
}

#[test]
fn token_ring_fingerprints_are_frozen() {
    let (random, even) = (random_ring(), even_ring());
    let mut rows: Vec<(String, TokenRing)> = vec![
        ("random".into(), random.clone()),
        ("even".into(), even.clone()),
        ("random-without-10.0.0.3".into(), random.without_node("10.0.0.3:9042").unwrap()),
        ("even-with-cass-6".into(), even.with_node(Node::new("cass-6").with_tokens([1, 2, 3])).unwrap()),
    ];
    // A weight change moves ranges between that node and the others (the allocator).
    rows.push(("random-weighted".into(), random.with_weight("10.0.0.1:9042", 4.0).unwrap()));
    let mut out = String::from("name,fingerprint_concrete,fingerprint_dyn,canonical_len\n");
    for (name, ring) in &rows {
        let boxed: Box<dyn Router> = Box::new(ring.clone());
        assert_eq!(fingerprint(&*boxed), fingerprint(ring), "{name}: the dyn view encodes exactly");
        writeln!(out, "{name},{},{},{}", fingerprint(ring), fingerprint(&*boxed), ring.canonical_bytes().len())
            .unwrap();
    }
    let spec = hashroute::RouterSpec::new(hashroute::Algorithm::TokenRing).build(random.nodes().clone()).unwrap();
    writeln!(out, "spec-random,{},{},{}", fingerprint(&*spec), fingerprint(&*spec), spec.canonical_bytes().len())
        .unwrap();
    let frozen = check_or_write("token-ring-fingerprints.csv", &out);
    let column = |name: &str| frozen.lines().find(|l| l.starts_with(&format!("{name},"))).unwrap().split(',').nth(1);
    assert_ne!(column("random"), column("random-weighted"));
    assert_eq!(column("random"), column("spec-random"));
    assert_ne!(column("random"), column("random-without-10.0.0.3"));
}

/// Same names, different tokens: different fingerprints; same tokens, any node order: equal.
#[test]
fn fingerprints_cover_the_tokens() {
    let a = TokenRing::from_nodes([Node::new("x").with_tokens([1, 5]), Node::new("y").with_tokens([3])]).unwrap();
    let b = TokenRing::from_nodes([Node::new("x").with_tokens([1, 6]), Node::new("y").with_tokens([3])]).unwrap();
    let swapped = TokenRing::from_nodes([Node::new("x").with_tokens([3]), Node::new("y").with_tokens([1, 5])]).unwrap();
    let reordered =
        TokenRing::from_nodes([Node::new("y").with_tokens([3]), Node::new("x").with_tokens([5, 1])]).unwrap();
    assert_ne!(fingerprint(&a), fingerprint(&b));
    assert_ne!(fingerprint(&a), fingerprint(&swapped));
    assert_eq!(fingerprint(&a), fingerprint(&reordered));
    let labelled = TokenRing::builder()
        .node(Node::new("x").with_tokens([1, 5]).with_label("zone", "dc9"))
        .node(Node::new("y").with_tokens([3]))
        .build()
        .unwrap();
    assert_eq!(fingerprint(&a), fingerprint(&labelled), "labels do not change routes");
    // A ring over the same names with points from hashing differs from any token ring.
    let ring = hashroute::Ring::builder().vnodes(2).nodes(["x", "y"]).build().unwrap();
    assert_ne!(fingerprint(&ring), fingerprint(&a));
}

#[cfg(feature = "serde")]
#[test]
fn token_ring_config_texts_are_frozen() {
    use hashroute::{Algorithm, ClusterConfig, RouterSpec};
    let ring = even_ring();
    let mut nodes = ring.nodes().clone();
    nodes = nodes.with_weight("cass-2", 2.5).unwrap();
    let config = ClusterConfig::from_node_set(RouterSpec::new(Algorithm::TokenRing), &nodes);
    let (json, toml) = (config.to_json().unwrap(), config.to_toml().unwrap());
    let frozen = check_or_write("token-ring-config.txt", &format!("=== json ===\n{json}\n=== toml ===\n{toml}"));
    let (json_part, toml_part) = frozen.split_once("=== toml ===\n").unwrap();
    let json_part = json_part.strip_prefix("=== json ===\n").unwrap();
    for loaded in [ClusterConfig::from_json(json_part).unwrap(), ClusterConfig::from_toml(toml_part).unwrap()] {
        assert_eq!(loaded, config);
        let built = loaded.build().unwrap();
        assert_eq!(fingerprint(&*built), fingerprint(&ring));
        for key in golden_keys() {
            assert_eq!(built.node_name(built.route(&key)), ring.node_name(ring.route(&key)));
        }
    }
    assert!(json.contains("\"tokens\": ["), "{json}");
    // Nodes without tokens write no `tokens` field at all.
    let plain = ClusterConfig::from_node_set(RouterSpec::new(Algorithm::Ring), &cluster(3));
    assert!(!plain.to_json().unwrap().contains("tokens") && !plain.to_toml().unwrap().contains("tokens"));
    let err = ClusterConfig::from_node_set(RouterSpec::new(Algorithm::TokenRing), &cluster(3)).build().err();
    assert!(err.expect("no tokens").to_string().contains("needs every node's tokens"));
}

/// The allocator's choices, frozen: a later version that allocates differently would give an
/// operator who reruns `hashroute tokens add` other tokens than the ones already deployed.
#[test]
fn allocated_tokens_are_frozen() {
    let mut alloc = TokenAllocator::new();
    let mut out = String::new();
    let mut step = |alloc: &TokenAllocator, what: &str| {
        writeln!(out, "# {what}: {} tokens, balance {:.6}", alloc.token_count(), alloc.balance()).unwrap();
        for (token, owner) in alloc.tokens() {
            writeln!(out, "{owner} {token}").unwrap();
        }
    };
    for i in 0..6 {
        let rack = format!("rack{}", i % 3 + 1);
        alloc.add_node(&format!("node-{i}"), 1.0, "dc1", &rack, 16).unwrap();
        step(&alloc, &format!("add node-{i}"));
    }
    alloc.add_node("heavy", 3.0, "dc1", "rack1", 16).unwrap();
    step(&alloc, "add heavy (weight 3)");
    alloc.remove_node("node-2").unwrap();
    step(&alloc, "remove node-2");
    alloc.set_weight("node-4", 2.0).unwrap();
    step(&alloc, "node-4 to weight 2");
    alloc.set_weight("heavy", 0.5).unwrap();
    step(&alloc, "heavy to weight 0.5");
    let mut builder = TokenRing::builder().tokens_per_node(8);
    for i in 0..4 {
        builder = builder.node(Node::new(format!("cass-{i}")).with_label("zone", "dc1").with_label("rack", "r1"));
    }
    let built = builder.build().unwrap();
    writeln!(out, "# TokenRing::builder().tokens_per_node(8), four nodes without tokens").unwrap();
    out.push_str(&built.to_tokens_file().unwrap());
    let frozen = check_or_write("token-ring-allocated.txt", &out);
    // What could go wrong without a diff: every step lists its tokens, and the removed node is gone.
    assert_eq!(frozen.lines().filter(|l| l.starts_with("# ") && !l.starts_with("# NAME")).count(), 11);
    let after_removal = frozen.split("# remove node-2").nth(1).unwrap();
    assert!(!after_removal.lines().any(|l| l.starts_with("node-2 ")));
}

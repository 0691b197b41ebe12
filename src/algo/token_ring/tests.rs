//! Unit and property tests of the token ring: routing against a sorted-list oracle, membership
//! changes, ownership, replica placement against a transliteration of the driver's loop, and
//! the tokens file.

use std::collections::BTreeSet;

use proptest::prelude::*;

use super::*;
use crate::hash::cassandra::murmur3_token;
use crate::Router;

fn node(name: &str, zone: &str, rack: &str, tokens: &[i64]) -> Node {
    Node::new(name).with_label("zone", zone).with_label("rack", rack).with_tokens(tokens.iter().copied())
}

fn small() -> TokenRing {
    TokenRing::builder()
        .node(node("a", "dc1", "r1", &[-100, 50]))
        .node(node("b", "dc1", "r2", &[0, 200]))
        .node(node("c", "dc2", "r1", &[-50, i64::MAX]))
        .build()
        .unwrap()
}

/// The owner by definition: the first token `>=` the key's token, else the smallest.
fn oracle(ring: &TokenRing, token: i64) -> NodeId {
    let tokens: Vec<(i64, NodeId)> = ring.tokens().collect();
    tokens.iter().find(|(t, _)| *t >= token).unwrap_or(&tokens[0]).1
}

#[test]
fn routes_to_the_first_token_at_or_after() {
    let r = small();
    let name = |t: i64| r.node_name(r.route_token(t));
    assert_eq!(
        [name(i64::MIN), name(-100), name(-99), name(0), name(1), name(50), name(51), name(201), name(i64::MAX)],
        ["a", "a", "c", "b", "a", "a", "b", "c", "c"]
    );
    assert_eq!(r.route_hash(token_to_position(-99)).unwrap(), r.route_token(-99));
    for k in 0..500u32 {
        let key = k.to_le_bytes();
        assert_eq!(r.route(&key), oracle(&r, murmur3_token(&key)));
    }
    assert_eq!(r.algorithm(), crate::Algorithm::TokenRing);
    assert_eq!(r.hasher(), KeyHasher::CassandraMurmur3);
    assert_eq!(r.token_count(), 6);
    assert_eq!(r.tokens_of(r.nodes().require("c").unwrap()), &[-50, i64::MAX]);
    assert_eq!(r.datacenters().collect::<Vec<_>>(), ["dc1", "dc2"]);
}

#[test]
fn refuses_bad_rings() {
    // A node without tokens is given the allocator's (at most 16 by default: fewer where a few
    // cuts of a small ring already give it its share); one with tokens keeps them.
    let mixed = TokenRing::builder().node(Node::new("a").with_tokens([1])).node(Node::new("b")).build().unwrap();
    assert_eq!(mixed.tokens_of(NodeId::from_index(0)), [1]);
    assert!((1..=16).contains(&mixed.tokens_of(NodeId::from_index(1)).len()));
    assert!((mixed.ownership()[1] - 0.5).abs() < 0.01, "{:?}", mixed.ownership());
    let err = TokenRing::builder().tokens_per_node(0).nodes(["a"]).build().unwrap_err();
    assert!(matches!(err, Error::InvalidVnodes { vnodes: 0, .. }), "{err}");
    let err = TokenRing::from_nodes([Node::new("a").with_tokens([1, 7]), Node::new("b").with_tokens([7])]).unwrap_err();
    assert_eq!(err.to_string(), "invalid tokens: token 7 is given twice: by node \"a\" and by node \"b\"");
    let err = TokenRing::from_nodes([Node::new("a").with_tokens([3, 3])]).unwrap_err();
    assert!(err.to_string().contains("token 3 is given twice by node \"a\""), "{err}");
    assert_eq!(TokenRing::from_nodes([]).unwrap_err(), Error::NoNodes);
    assert_eq!(TokenRing::builder().nodes(["a"]).build().unwrap().token_count(), 16);
    // with_node checks the newcomer's tokens against the ring and against themselves.
    let r = small();
    let err = r.with_node(Node::new("d").with_tokens([5, 200])).unwrap_err();
    assert!(err.to_string().contains("token 200 is given twice: by node \"b\" and by node \"d\""), "{err}");
    let err = r.with_node(Node::new("d").with_tokens([5, 5])).unwrap_err();
    assert!(err.to_string().contains("token 5 is given twice by node \"d\""), "{err}");

    assert!(matches!(r.with_node(Node::new("a").with_tokens([9])), Err(Error::DuplicateNode { .. })));
    let one = TokenRing::from_nodes([Node::new("a").with_tokens([1])]).unwrap();
    assert_eq!(one.without_node("a").unwrap_err(), Error::NoNodes);
    assert!(matches!(one.without_node("x"), Err(Error::UnknownNode { .. })));
}

#[test]
fn ownership_is_exact() {
    let one = TokenRing::from_nodes([Node::new("a").with_tokens([42])]).unwrap();
    assert_eq!(one.owned_lengths(), [1u128 << 64]);
    assert_eq!(one.ownership(), [1.0]);
    // a at -2^62 and 2^62, b at 0 and MAX.
    let q = 1i64 << 62;
    let r = TokenRing::from_nodes([Node::new("a").with_tokens([-q, q]), Node::new("b").with_tokens([0, i64::MAX])])
        .unwrap();
    let owned = r.owned_lengths();
    assert_eq!(owned.iter().sum::<u128>(), 1u128 << 64);
    // Each token owns (previous token, itself]; a's -2^62 wraps from MAX.
    let len = |from: i64, to: i64| u128::from((to as u64).wrapping_sub(from as u64));
    assert_eq!(owned[0], len(i64::MAX, -q) + len(0, q));
    assert_eq!(owned[1], len(-q, 0) + len(q, i64::MAX));
    let f = r.ownership();
    assert!((f[0] + f[1] - 1.0).abs() < 1e-15);
}

#[test]
fn membership_changes_match_fresh_builds_and_move_only_their_keys() {
    let r = small();
    let keys: Vec<Vec<u8>> = (0..3000u32).map(|i| format!("k{i}").into_bytes()).collect();
    let added = r.with_node(node("d", "dc2", "r9", &[-75, 100, 300])).unwrap();
    let fresh = TokenRing::builder().node_set(added.nodes().clone()).build().unwrap();
    assert_eq!((added.positions(), added.owners()), (fresh.positions(), fresh.owners()));
    assert_eq!(added.datacenters().collect::<Vec<_>>(), fresh.datacenters().collect::<Vec<_>>());
    for k in &keys {
        let (before, after) = (r.node_name(r.route(k)), added.node_name(added.route(k)));
        assert!(before == after || after == "d", "{k:?}: {before} -> {after}");
    }
    // A removal hands b's ranges to the others through the allocator: b's keys move, no other.
    let removed = r.without_node("b").unwrap();
    let fresh = TokenRing::builder().node_set(removed.nodes().clone()).build().unwrap();
    assert_eq!((removed.positions(), removed.owners()), (fresh.positions(), fresh.owners()));
    assert!(removed.nodes().id_of("b").is_none());
    for k in &keys {
        let (before, after) = (r.node_name(r.route(k)), removed.node_name(removed.route(k)));
        assert!(before == after || before == "b", "{k:?}: {before} -> {after}");
    }
    // A weight change moves keys only between that node and the others.
    let heavier = r.with_weight("a", 3.0).unwrap();
    assert_eq!(heavier.nodes().weight(NodeId::from_index(0)), 3.0);
    let mut moved = 0;
    for k in &keys {
        let (before, after) = (r.node_name(r.route(k)), heavier.node_name(heavier.route(k)));
        assert!(before == after || before == "a" || after == "a", "{k:?}: {before} -> {after}");
        moved += usize::from(before != after);
    }
    assert!(moved > 0, "tripling a's weight moved nothing");
    assert!(r.with_weight("a", 0.0).is_err());
    // A node without tokens gets the allocator's tokens_per_node of them; keys move only to it.
    let allocated = r.with_node(Node::new("e")).unwrap();
    let e = allocated.nodes().require("e").unwrap();
    assert!((1..=TokenRing::DEFAULT_TOKENS_PER_NODE as usize).contains(&allocated.tokens_of(e).len()));
    for k in &keys {
        let (before, after) = (r.node_name(r.route(k)), allocated.node_name(allocated.route(k)));
        assert!(before == after || after == "e", "{k:?}: {before} -> {after}");
    }
}

#[test]
fn layouts_route_identically() {
    let nodes: Vec<Node> = (0..300u64)
        .map(|i| Node::new(format!("n{i}")).with_tokens((0..8).map(|j| crate::mix::mix64(i * 8 + j) as i64)))
        .collect();
    let base = TokenRing::from_nodes(nodes).unwrap();
    assert_eq!(base.layout(), Layout::Radix);
    let keys: Vec<Vec<u8>> = (0..2000u32).map(|i| format!("key-{i}").into_bytes()).collect();
    let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
    for layout in [Layout::Oracle, Layout::Branchless, Layout::Tree, Layout::Radix, Layout::Eytzinger] {
        let r = base.with_layout(layout);
        for len in [0usize, 1, 31, 32, 33, 64, 65, refs.len()] {
            let mut out = vec![NodeId::from_index(u32::MAX); len];
            r.route_batch(&refs[..len], &mut out);
            for (k, o) in refs[..len].iter().zip(&out) {
                assert_eq!(*o, oracle(&base, murmur3_token(k)), "{layout:?}");
            }
        }
    }
}

#[test]
fn memory_counts_the_circle_and_the_datacenter_lists() {
    let one_dc =
        TokenRing::from_nodes((0..64).map(|i| node(&format!("n{i}"), "dc1", "r1", &[i * 1000, i * 1000 + 1]))).unwrap();
    let two_dcs = TokenRing::from_nodes(
        (0..64).map(|i| node(&format!("n{i}"), ["dc1", "dc2"][i as usize % 2], "r1", &[i * 1000, i * 1000 + 1])),
    )
    .unwrap();
    let own = |r: &TokenRing| r.memory_bytes() - r.nodes().memory_bytes();
    // One datacenter holding every token stores no index list; two store 4 bytes per token.
    assert!(own(&two_dcs) >= own(&one_dc) + 128 * 4, "{} vs {}", own(&two_dcs), own(&one_dc));
    assert!(own(&one_dc) >= 128 * 12);
}

#[test]
fn replication_specs_parse_and_print() {
    for text in ["simple:3", "simple:0", "nts:dc1=3", "nts:dc1=3,dc2=0,eu-west=2"] {
        let r: Replication = text.parse().unwrap();
        assert_eq!(r.to_string(), text);
    }
    assert_eq!(" simple:2 ".parse::<Replication>().unwrap(), Replication::Simple { replication_factor: 2 });
    assert_eq!(
        "nts:a=1,b=2".parse::<Replication>().unwrap(),
        Replication::NetworkTopology(vec![("a".into(), 1), ("b".into(), 2)])
    );
    assert_eq!("nts:a=1,b=2".parse::<Replication>().unwrap().max_replicas(), 3);
    for (bad, needle) in [
        ("", "no strategy"),
        ("3", "no strategy"),
        ("simple:", "not a whole number"),
        ("simple:-1", "not a whole number"),
        ("simple:+1", "not a whole number"),
        ("simple:3x", "not a whole number"),
        ("simple:99999999999", "not a whole number"),
        ("nts:", "is not DC=RF"),
        ("nts:dc1", "is not DC=RF"),
        ("nts:dc1=3,", "is not DC=RF"),
        ("nts:=3", "empty or has spaces"),
        ("nts:dc 1=3", "empty or has spaces"),
        ("nts:dc1=3,dc1=2", "given twice"),
        ("nts:dc1=x", "not a whole number"),
        ("network:dc1=3", "unknown strategy"),
    ] {
        let err = bad.parse::<Replication>().unwrap_err().to_string();
        assert!(err.contains(needle) && !err.contains('\n'), "{bad:?}: {err}");
        assert!(err.starts_with("invalid replication: "), "{err}");
    }
}

/// The DataStax driver's `NetworkTopologyStrategy.make_token_replica_map` for the one ring
/// token at index `i`, written out as the driver writes it (over the whole ring, no
/// precomputation), with one change: a node is set aside once (see the replication module).
fn driver_nts(ring: &TokenRing, i: usize, rfs: &[(&str, u32)]) -> Vec<NodeId> {
    let owners = ring.owners();
    let zone = |o: u32| ring.nodes().get(NodeId::from_index(o)).label("zone").map(str::to_owned);
    let rack = |o: u32| ring.nodes().get(NodeId::from_index(o)).label("rack").unwrap_or("").to_owned();
    let mut dc_order: Vec<String> = Vec::new();
    let mut offsets: Vec<Vec<usize>> = Vec::new();
    for (t, &o) in owners.iter().enumerate() {
        let Some(z) = zone(o) else { continue };
        let d = dc_order.iter().position(|x| *x == z).unwrap_or_else(|| {
            dc_order.push(z.clone());
            offsets.push(Vec::new());
            dc_order.len() - 1
        });
        offsets[d].push(t);
    }
    let mut replicas: Vec<u32> = Vec::new();
    for (d, dc) in dc_order.iter().enumerate() {
        let Some(&(_, rf)) = rfs.iter().find(|(n, _)| n == dc) else { continue };
        if rf == 0 {
            continue;
        }
        let dc_nodes: BTreeSet<u32> = offsets[d].iter().map(|&t| owners[t]).collect();
        let dc_racks: BTreeSet<String> = dc_nodes.iter().map(|&o| rack(o)).collect();
        let toks = &offsets[d];
        let index = toks.iter().position(|&t| t >= i).unwrap_or(toks.len());
        let (mut remaining, mut placed) = (rf, 0usize);
        let (mut skipped, mut racks_placed): (Vec<u32>, BTreeSet<String>) = (Vec::new(), BTreeSet::new());
        for k in index..index + toks.len() {
            let host = owners[toks[k % toks.len()]];
            if remaining == 0 || placed == dc_nodes.len() {
                break;
            }
            if replicas.contains(&host) || skipped.contains(&host) {
                continue;
            }
            if racks_placed.contains(&rack(host)) && racks_placed.len() < dc_racks.len() {
                skipped.push(host);
                continue;
            }
            replicas.push(host);
            placed += 1;
            remaining -= 1;
            racks_placed.insert(rack(host));
            if racks_placed.len() == dc_racks.len() {
                for &h in &skipped {
                    if remaining == 0 {
                        break;
                    }
                    replicas.push(h);
                    remaining -= 1;
                }
                skipped.clear();
            }
        }
    }
    replicas.into_iter().map(NodeId::from_index).collect()
}

#[test]
fn set_aside_nodes_follow_once_every_rack_has_one() {
    // dc1: a, b, c in rack r1, d in r2; ring order a b c d (one token each).
    let r = TokenRing::from_nodes([
        node("a", "dc1", "r1", &[10]),
        node("b", "dc1", "r1", &[20]),
        node("c", "dc1", "r1", &[30]),
        node("d", "dc1", "r2", &[40]),
    ])
    .unwrap();
    let names = |v: Vec<NodeId>| v.into_iter().map(|id| r.node_name(id).to_owned()).collect::<Vec<_>>();
    let nts = |rf: u32| Replication::NetworkTopology(vec![("dc1".into(), rf)]);
    assert_eq!(names(r.replicas_for_token(5, &nts(3)).unwrap()), ["a", "d", "b"]);
    assert_eq!(names(r.replicas_for_token(5, &nts(4)).unwrap()), ["a", "d", "b", "c"]);
    assert_eq!(names(r.replicas_for_token(5, &nts(9)).unwrap()), ["a", "d", "b", "c"]);
    assert_eq!(names(r.replicas_for_token(35, &nts(2)).unwrap()), ["d", "a"]);
    assert_eq!(r.replicas_for_token(5, &nts(0)).unwrap(), []);
    assert_eq!(
        names(r.replicas_for_token(5, &Replication::Simple { replication_factor: 3 }).unwrap()),
        ["a", "b", "c"]
    );
    assert_eq!(r.replicas_for_token(5, &Replication::Simple { replication_factor: 0 }).unwrap(), []);
    assert_eq!(r.replicas_for_token(5, &Replication::Simple { replication_factor: 9 }).unwrap().len(), 4);
    let err = r.replicas_for_token(5, &"nts:dc1=1,dc9=0".parse().unwrap()).unwrap_err().to_string();
    assert!(err.contains("datacenter \"dc9\" is not in the ring") && err.contains("datacenters: dc1"), "{err}");
    // b's second token comes before d: the driver would set b aside twice and list it twice.
    let twice = TokenRing::from_nodes([
        node("a", "dc1", "r1", &[10]),
        node("b", "dc1", "r1", &[20, 25]),
        node("c", "dc1", "r1", &[30]),
        node("d", "dc1", "r2", &[40]),
    ])
    .unwrap();
    let got: Vec<String> =
        twice.replicas_for_token(5, &nts(5)).unwrap().into_iter().map(|id| twice.node_name(id).to_owned()).collect();
    assert_eq!(got, ["a", "d", "b", "c"]);
}

/// Large datacenters and replication factors (walks that mark more than a few nodes and
/// racks), against the driver's loop, for every length of the shared pass.
#[test]
fn long_walks_match_the_driver() {
    let nodes: Vec<Node> = (0..60u64)
        .map(|i| {
            let tokens = (0..5).map(|j| crate::mix::mix64(i * 5 + j) as i64);
            node(&format!("n{i}"), ["dc1", "dc2"][(i % 7 == 0) as usize], &format!("r{}", i % 13), &[])
                .with_tokens(tokens)
        })
        .collect();
    let ring = TokenRing::from_nodes(nodes).unwrap();
    let spec = [("dc1", 40u32), ("dc2", 6)];
    let owned: Vec<(String, u32)> = spec.iter().map(|(d, r)| ((*d).to_owned(), *r)).collect();

    for i in (0..ring.token_count()).step_by(7) {
        let want = driver_nts(&ring, i, &spec);
        assert_eq!(want.len(), 40 + 6);
        for shared in [0, 3, 64, ring.token_count()] {
            let walks = ring.datacenter_walks(&owned).unwrap();
            assert_eq!(ring.network_topology_replicas(i, walks, shared), want, "start {i} shared {shared}");
        }
    }
}

/// Random rings: 1-12 nodes, 1-6 distinct tokens each, three zones (or none) and three racks.
fn arb_ring() -> impl Strategy<Value = TokenRing> {
    (
        1usize..12,
        proptest::collection::btree_set(any::<i64>(), 72),
        proptest::collection::vec((0u8..4, 0u8..3, 1usize..7), 12),
    )
        .prop_map(|(n, tokens, shapes)| {
            let tokens: Vec<i64> = tokens.into_iter().collect();
            let mut at = 0;
            let nodes = (0..n).map(|i| {
                let (zone, rack, count) = shapes[i];
                let mut node = Node::new(format!("n{i}")).with_tokens(tokens[at..at + count].iter().copied());
                at += count;
                if zone < 3 {
                    node = node.with_label("zone", format!("dc{zone}"));
                }
                node.with_label("rack", format!("r{rack}"))
            });
            TokenRing::from_nodes(nodes.collect::<Vec<_>>()).unwrap()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn routes_match_the_oracle_and_batches_match_routes(ring in arb_ring(), keys in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..24), 0..80)) {
        let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
        let mut out = vec![NodeId::default(); refs.len()];
        ring.route_batch(&refs, &mut out);
        for (k, o) in refs.iter().zip(&out) {
            let want = oracle(&ring, murmur3_token(k));
            prop_assert_eq!(ring.route(k), want);
            prop_assert_eq!(*o, want);
        }
        for (t, _) in ring.tokens() {
            prop_assert_eq!(ring.route_token(t), oracle(&ring, t));
            prop_assert_eq!(ring.route_token(t.wrapping_add(1)), oracle(&ring, t.wrapping_add(1)));
        }
    }

    #[test]
    fn replicas_follow_the_driver(ring in arb_ring(), token in any::<i64>(), rf in proptest::collection::vec(0u32..5, 3)) {
        let spec: Vec<(String, u32)> = ring.datacenters().map(|d| (d.to_owned(), rf[d[2..].parse::<usize>().unwrap()])).collect();
        let repl = Replication::NetworkTopology(spec.clone());
        let got = ring.replicas_for_token(token, &repl).unwrap();
        let i = ring.circle.successor(token_to_position(token));
        let refs: Vec<(&str, u32)> = spec.iter().map(|(d, r)| (d.as_str(), *r)).collect();
        prop_assert_eq!(&got, &driver_nts(&ring, i, &refs));
        // However long the shared pass, the lists are the same.
        for shared in [0, 1, 2, 5, ring.token_count() - 1, ring.token_count()] {
            let walks = ring.datacenter_walks(&spec).unwrap();
            prop_assert_eq!(&ring.network_topology_replicas(i, walks, shared), &got, "shared {}", shared);
        }
        // Distinct, and per datacenter min(RF, its nodes).
        let distinct: BTreeSet<NodeId> = got.iter().copied().collect();
        prop_assert_eq!(distinct.len(), got.len());
        for (dc, rf) in &spec {
            let in_dc = |id: &NodeId| ring.nodes().get(*id).label("zone") == Some(dc.as_str());
            let nodes = ring.nodes().iter().filter(|(id, _)| in_dc(id)).count();
            prop_assert_eq!(got.iter().filter(|id| in_dc(id)).count(), (*rf as usize).min(nodes));
        }
        for rf in [1u32, 2, 3, 20] {
            let simple = ring.replicas_for_token(token, &Replication::Simple { replication_factor: rf }).unwrap();
            prop_assert_eq!(simple[0], ring.route_token(token));
            prop_assert_eq!(simple.len(), (rf as usize).min(ring.node_count()));
            let distinct: BTreeSet<NodeId> = simple.iter().copied().collect();
            prop_assert_eq!(distinct.len(), simple.len());
        }
    }

    /// `with_node` moves keys only to the newcomer and `without_node` only the leaver's, each
    /// identical to a fresh build of the new node set.
    #[test]
    fn membership_changes_move_only_the_expected_keys(
        ring in arb_ring(),
        extra in proptest::collection::btree_set(any::<i64>(), 1..6),
        victim in any::<prop::sample::Index>(),
        keys in proptest::collection::vec(any::<u64>(), 200),
    ) {
        let keys: Vec<[u8; 8]> = keys.iter().map(|k| k.to_le_bytes()).collect();
        let names = |r: &TokenRing| keys.iter().map(|k| r.node_name(r.route(k)).to_owned()).collect::<Vec<_>>();
        let before = names(&ring);
        let taken: BTreeSet<i64> = ring.tokens().map(|(t, _)| t).collect();
        let newcomer = Node::new("new").with_tokens(extra.iter().copied());
        match ring.with_node(newcomer) {
            Ok(grown) => {
                prop_assert!(extra.is_disjoint(&taken));
                let fresh = TokenRing::builder().node_set(grown.nodes().clone()).build().unwrap();
                prop_assert_eq!((grown.positions(), grown.owners()), (fresh.positions(), fresh.owners()));
                for (was, now) in before.iter().zip(names(&grown)) {
                    prop_assert!(*was == now || now == "new", "{} -> {}", was, now);
                }
            }
            Err(e) => prop_assert!(!extra.is_disjoint(&taken), "{}", e),
        }
        if ring.node_count() > 1 {
            let gone = ring.node_name(NodeId::from_index(victim.index(ring.node_count()) as u32)).to_owned();
            let shrunk = ring.without_node(&gone).unwrap();
            let fresh = TokenRing::builder().node_set(shrunk.nodes().clone()).build().unwrap();
            prop_assert_eq!((shrunk.positions(), shrunk.owners()), (fresh.positions(), fresh.owners()));
            for (was, now) in before.iter().zip(names(&shrunk)) {
                prop_assert!(*was == now || *was == gone, "{} -> {} though {} left", was, now, gone);
            }
        }
    }

    #[test]
    fn tokens_files_round_trip_in_any_line_order(ring in arb_ring(), seed in any::<u64>()) {
        let labelled = NodeSet::new(ring.nodes().iter().map(|(_, n)| {
            let zone = n.label("zone").unwrap_or("none").to_owned();
            n.clone().with_label("zone", zone).with_weight(1.0 + (n.tokens()[0] as u64 % 4) as f64 / 2.0)
        })).unwrap();
        let ring = TokenRing::builder().node_set(labelled).build().unwrap();
        let text = ring.to_tokens_file().unwrap();
        let back = TokenRing::parse(&text).unwrap();
        prop_assert_eq!(back.to_tokens_file().unwrap(), text.clone());
        // Nodes are numbered by name on reading, so compare by name.
        for (id, n) in ring.nodes().iter() {
            let other = back.nodes().get(back.nodes().require(n.name()).unwrap());
            prop_assert_eq!(other, n, "{:?}", id);
        }
        let mut lines: Vec<&str> = text.lines().collect();
        let mut x = seed;
        for i in (1..lines.len()).rev() {
            x = crate::mix::mix64(x.wrapping_add(i as u64));
            lines.swap(i, (x % (i as u64 + 1)) as usize);
        }
        let shuffled = TokenRing::parse(&lines.join("\n")).unwrap();
        prop_assert_eq!(shuffled.nodes(), back.nodes());
        prop_assert_eq!((shuffled.positions(), shuffled.owners()), (back.positions(), back.owners()));
    }
}

#[test]
fn tokens_file_reads_and_refuses() {
    let text = "# ring\n\na dc1 r1 -5\nb dc1 r2 7 2.5 # heavy\n  a dc1 r1 9 \nb\tdc1\tr2\t-9223372036854775808 2.5\n";
    let r = TokenRing::parse(text).unwrap();
    assert_eq!(r.node_count(), 2);
    let b = r.nodes().require("b").unwrap();
    assert_eq!(r.nodes().weight(b), 2.5);
    assert_eq!(r.tokens_of(b), &[i64::MIN, 7]);
    assert_eq!(r.nodes().get(b).label("rack"), Some("r2"));
    let written = r.to_tokens_file().unwrap();
    assert_eq!(
        written,
        "# NAME ZONE RACK TOKEN [WEIGHT]\nb dc1 r2 -9223372036854775808 2.5\na dc1 r1 -5\nb dc1 r2 7 2.5\na dc1 r1 9\n"
    );
    for (bad, needle) in [
        ("a dc1 r1", "line 1: expected NAME ZONE RACK TOKEN [WEIGHT], got 3 fields"),
        ("a dc1 r1 1 1 1", "line 1: expected NAME ZONE RACK TOKEN [WEIGHT], got 6 fields"),
        ("a dc1 r1 9223372036854775808", "line 1: token \"9223372036854775808\" is not a signed 64-bit integer"),
        ("a dc1 r1 1.5", "line 1: token \"1.5\" is not a signed 64-bit integer"),
        (
            "a dc1 r1 5\n#\nb dc1 r1 5",
            "line 3: token 5 is given twice: on line 1 (node \"a\") and on line 3 (node \"b\")",
        ),
        ("a dc1 r1 5\na dc2 r1 6", "line 2: node \"a\" has zone \"dc2\", but line 1 gave it zone \"dc1\""),
        ("a dc1 r1 5\na dc1 r2 6", "line 2: node \"a\" has rack \"r2\", but line 1 gave it rack \"r1\""),
        ("a dc1 r1 5 2\na dc1 r1 6 3", "line 2: node \"a\" has weight 3, but line 1 gave it weight 2"),
        ("a dc1 r1 5 0", "line 1: weight 0 of node \"a\" must be finite and greater than 0"),
        ("a dc1 r1 5 -1", "line 1: weight -1 of node \"a\" must be finite"),
        ("a dc1 r1 5 inf", "line 1: weight inf of node \"a\" must be finite"),
        ("a dc1 r1 5 NaN", "must be finite"),
        ("a dc1 r1 5 x", "line 1: weight \"x\" is not a number"),
    ] {
        let err = TokenRing::parse(bad).unwrap_err().to_string();
        assert!(err.contains(needle) && !err.contains('\n'), "{bad:?}: {err}");
    }
    assert_eq!(TokenRing::parse("# nothing\n").unwrap_err(), Error::NoNodes);
    // The same weight given twice, or once, is fine.
    assert!(TokenRing::parse("a dc1 r1 5 2\na dc1 r1 6 2.0\na dc1 r1 7").is_ok());
    // What the format cannot carry is refused on writing.
    let unlabelled = TokenRing::from_nodes([Node::new("a").with_tokens([1])]).unwrap();
    assert!(unlabelled.to_tokens_file().unwrap_err().to_string().contains("no zone label"));
    let spaced = TokenRing::from_nodes([node("a b", "dc1", "r1", &[1])]).unwrap();
    assert!(spaced.to_tokens_file().unwrap_err().to_string().contains("cannot be written"));
    let tiny = TokenRing::from_nodes([node("a", "dc1", "r1", &[1]).with_weight(1e-300)]).unwrap();
    let text = tiny.to_tokens_file().unwrap();
    assert!(text.contains("1e-300"), "{text}");
    assert_eq!(TokenRing::parse(&text).unwrap().nodes().weight(NodeId::from_index(0)), 1e-300);
}

/// Two token rings get the exact plan (ranges over the 64-bit circle): adding a node moves
/// exactly the ranges it now owns.
#[test]
fn migration_plans_are_exact() {
    let r = small();
    let added = r.with_node(node("d", "dc2", "r9", &[-75, 100, 300])).unwrap();
    let plan = crate::migration::plan(&r, &added).unwrap();
    assert!(plan.is_exact());
    let d = added.nodes().require("d").unwrap();
    assert_eq!(plan.moved_units(), added.owned_lengths()[d.index()]);
    let boxed: Box<dyn Router> = Box::new(added.clone());
    assert_eq!(crate::migration::plan(&r, &*boxed).unwrap().moved_units(), plan.moved_units());
}

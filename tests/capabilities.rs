//! Every algorithm's row in the facts table ([`Algorithm::facts`]) against what its router
//! does: weights, removal of any node, minimal movement, replicas, exact arcs, the options and
//! hashers it takes. A claim that is false, or a capability the row denies but the router has,
//! fails here. The crate docs' table (`src/algorithms.md`) is checked against the facts too.

use hashroute::{Algorithm, AnyRouter, KeyHasher, Node, NodeSet, Param, Router, RouterSpec};

const NODES: usize = 8;
const KEYS: u64 = 20_000;

fn names() -> Vec<String> {
    (1..=NODES).map(|i| format!("10.0.0.{i}:11211")).collect()
}

fn spec(algo: Algorithm) -> RouterSpec {
    let spec = RouterSpec::new(algo);
    if algo.needs_tokens() {
        spec.with_tokens_per_node(16)
    } else {
        spec
    }
}

fn build(algo: Algorithm, weights: &[f64]) -> hashroute::Result<AnyRouter> {
    let nodes = names().into_iter().zip(weights).map(|(n, &w)| Node::new(n).with_weight(w));
    spec(algo).build(NodeSet::new(nodes)?)
}

fn unit(algo: Algorithm) -> AnyRouter {
    build(algo, &[1.0; NODES]).unwrap_or_else(|e| panic!("{algo}: {e}"))
}

fn key(i: u64) -> [u8; 8] {
    i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes()
}

/// Per key: (owner before, owner after), as names, over the sample.
fn moves<'a>(a: &'a AnyRouter, b: &'a AnyRouter) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
    (0..KEYS).map(move |i| (a.node_name(a.route(&key(i))), b.node_name(b.route(&key(i)))))
}

/// Whether every moved key moved to or from `node`.
fn only_node_moves(a: &AnyRouter, b: &AnyRouter, node: &str) -> bool {
    moves(a, b).all(|(x, y)| x == y || x == node || y == node)
}

fn moved_fraction(a: &AnyRouter, b: &AnyRouter) -> f64 {
    moves(a, b).filter(|(x, y)| x != y).count() as f64 / KEYS as f64
}

#[test]
fn the_docs_table_is_generated_from_the_facts() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/algorithms.md");
    let on_disk = std::fs::read_to_string(path).unwrap();
    assert_eq!(on_disk, Algorithm::markdown_table(), "regenerate src/algorithms.md from Algorithm::markdown_table()");
}

#[test]
fn every_row_names_its_algorithm() {
    for &algo in Algorithm::ALL {
        let facts = algo.facts();
        assert_eq!(facts.algorithm, algo);
        assert_eq!(unit(algo).algorithm(), algo, "{algo}");
        assert_eq!(Algorithm::from_name(facts.name).unwrap(), algo);
    }
}

#[test]
fn weights_are_what_the_row_says() {
    for &algo in Algorithm::ALL {
        let claims = algo.supports_weights();
        let mut weights = [1.0; NODES];
        weights[2] = 3.0;
        let built = build(algo, &weights);
        let reweighed = unit(algo).with_weight(&names()[2], 3.0);
        assert_eq!(built.is_ok(), claims, "{algo}: weighted build {:?}", built.err());
        assert_eq!(reweighed.is_ok(), claims, "{algo}: with_weight {:?}", reweighed.err());
        if let Ok(r) = reweighed {
            assert!(moved_fraction(&unit(algo), &r) > 0.0, "{algo}: a weight change moved nothing");
        }
    }
}

/// `router` without `name`: `without_node`, after handing the node's slots to the next node
/// for Redis slots (Redis forgets only a master that serves no slot).
fn removed(router: &AnyRouter, name: &str) -> hashroute::Result<AnyRouter> {
    let AnyRouter::Slots(slots) = router else { return router.without_node(name) };
    let id = slots.nodes().require(name)?;
    let heir = slots.node_name(hashroute::NodeId::from_index((id.as_u32() + 1) % NODES as u32)).to_owned();
    let mut table = slots.clone();
    for (range, owner) in slots.ranges() {
        if owner == id {
            table = table.move_slots(range, &heir)?;
        }
    }
    AnyRouter::from(table).without_node(name)
}

#[test]
fn removal_is_what_the_row_says() {
    for &algo in Algorithm::ALL {
        let before = unit(algo);
        let middle = &names()[NODES / 2];
        // Its own keys (1/8) must move; a router that moves under twice that removes well
        // (Maglev moves a few others' keys too, which its `moves` column says).
        let does = match removed(&before, middle) {
            Ok(after) => moved_fraction(&before, &after) < 2.0 / NODES as f64,
            Err(_) => false,
        };
        assert_eq!(does, algo.removes_any_node(), "{algo}: remove a middle node, about its keys move");
    }
}

#[test]
fn minimal_movement_is_what_the_row_says() {
    for &algo in Algorithm::ALL {
        // Redis slots: a new `redis-cli` layout over one more node (`with_node` adds a master
        // with no slot, which moves nothing by definition); the others' `with_node`.
        let before = unit(algo);
        let after = if algo == Algorithm::Slots {
            let mut more = names();
            more.push("10.0.0.99:11211".into());
            spec(algo).build(NodeSet::from_names(more).unwrap()).unwrap()
        } else {
            before.with_node(Node::new("10.0.0.99:11211")).unwrap()
        };
        let moved = moved_fraction(&before, &after);
        // Ideal 1/9 ≈ 0.11; consistent algorithms stay well under twice that.
        let consistent = moved < 2.0 / (NODES as f64 + 1.0);
        assert_eq!(consistent, algo.is_consistent(), "{algo}: adding one node moved {moved:.3}");
    }
}

#[test]
fn weighted_changes_move_what_the_row_says() {
    for &algo in Algorithm::ALL.iter().filter(|a| a.supports_weights()) {
        let weights: Vec<f64> = (0..NODES).map(|i| 1.0 + (i % 3) as f64).collect();
        let before = build(algo, &weights).unwrap();
        let name = &names()[3];
        let reweighed = before.with_weight(name, 4.0).unwrap();
        let joined = before.with_node(Node::new("10.0.0.99:11211").with_weight(2.0)).unwrap();
        let left = before.without_node(name).unwrap();
        let only = only_node_moves(&before, &reweighed, name)
            && only_node_moves(&before, &joined, "10.0.0.99:11211")
            && only_node_moves(&before, &left, name);
        assert_eq!(
            only,
            algo.facts().weight_changes_move_only_the_node,
            "{algo}: weighted join, leave and reweigh move keys only to or from the changed node"
        );
    }
}

#[test]
fn replicas_and_arcs_are_what_the_row_says() {
    for &algo in Algorithm::ALL {
        let r = unit(algo);
        assert_eq!(r.replicas(b"key", 3).is_ok(), algo.has_preference_list(), "{algo}: replicas");
        assert_eq!(r.arcs().is_some(), algo.facts().exact_arcs, "{algo}: arcs");
    }
}

#[test]
fn options_build_only_where_the_row_takes_them() {
    for &algo in Algorithm::ALL {
        for &param in Param::ALL.iter().filter(|&&p| p != Param::Hasher) {
            let s = spec(algo);
            let s = match param {
                Param::Vnodes => s.with_vnodes(100),
                Param::KetamaVariant => s.with_ketama_variant(hashroute::KetamaVariant::Libketama),
                Param::TableSize => s.with_table_size(65_537),
                Param::Probes => s.with_probes(5),
                Param::Capacity => s.with_capacity(32),
                Param::Generator => s.with_generator(Default::default()),
                Param::RingSize => s.with_ring_size(Some(1024), None),
                Param::UriWhole => s.with_uri_whole(true),
                Param::TokensPerNode => s.with_tokens_per_node(8),
                _ => unreachable!("a new option needs a value here"),
            };
            let built = s.build(NodeSet::from_names(names()).unwrap());
            assert_eq!(built.is_ok(), algo.takes(param), "{algo} with {}: {:?}", param.name(), built.err());
        }
    }
}

#[test]
fn hashers_build_only_where_the_row_takes_them() {
    for &algo in Algorithm::ALL {
        let fixed = algo.fixed_hashers();
        for hasher in KeyHasher::ALL {
            let built = spec(algo).with_hasher(hasher).build(NodeSet::from_names(names()).unwrap());
            let allowed = algo.takes_hasher() || (fixed.contains(&hasher) && algo != Algorithm::Ketama);
            if algo == Algorithm::Ketama {
                // Each variant takes its own subset; the row is their union.
                continue;
            }
            assert_eq!(built.is_ok(), allowed, "{algo} with {}: {:?}", hasher.name(), built.err());
        }
        assert_eq!(spec(algo).build(NodeSet::from_names(names()).unwrap()).unwrap().algorithm(), algo);
    }
    let mut union: Vec<KeyHasher> = hashroute::KetamaVariant::ALL.iter().flat_map(|v| v.hashers().to_vec()).collect();
    union.dedup();
    for h in Algorithm::Ketama.fixed_hashers() {
        assert!(union.contains(h), "ketama's row lists {} that no variant takes", h.name());
    }
    for h in &union {
        assert!(Algorithm::Ketama.fixed_hashers().contains(h), "a variant takes {} that ketama's row lacks", h.name());
    }
}

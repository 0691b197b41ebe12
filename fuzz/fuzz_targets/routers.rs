//! Every router: build from an arbitrary node list and configuration, route arbitrary keys,
//! then add, remove and reweigh a node. Errors are allowed; panics and wrong answers are not.
#![no_main]

use arbitrary::Arbitrary;
use fuzz_common::{
    check_router, exact_movement, incremental_is_rebuild, keys, nodes, owners, too_costly, with_node, with_weight,
    without_node, FuzzNode, FuzzSpec, Weight,
};
use hashroute::internals::{rendezvous_with_isa, Isa};
use hashroute::{Algorithm, AnyRouter, Node, NodeSet, Router};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    spec: FuzzSpec,
    nodes: Vec<FuzzNode>,
    keys: Vec<Vec<u8>>,
    replicas: u8,
    added: String,
    removed: u8,
    reweighed: u8,
    weight: Weight,
}

fuzz_target!(|input: Input| {
    let list = nodes(&input.nodes);
    let spec = input.spec.spec(list.len());
    if too_costly(&spec, &list) {
        return;
    }
    let Ok(set) = NodeSet::new(list.clone()) else { return };
    let Ok(router) = spec.build(set.clone()) else { return };
    let keys = keys(&input.keys);
    check_router(&*router, &spec, &keys, usize::from(input.replicas % 8));
    simd_paths(&router, &keys);
    let before = owners(&*router, &keys);

    // Add a node.
    if !too_costly(&spec, &[list.as_slice(), &[Node::new(input.added.clone())]].concat()) {
        if let Some(Ok(grown)) = with_node(&router, Node::new(input.added.clone())) {
            check_router(&*grown, &spec, &keys, 2);
            let after = owners(&*grown, &keys);
            if exact_movement(spec.algorithm, &set) {
                for (b, a) in before.iter().zip(&after) {
                    assert!(a == b || *a == input.added, "adding {:?} moved a key from {b} to {a}", input.added);
                }
            }
            if incremental_is_rebuild(spec.algorithm) {
                let fresh = spec.build(set.with_node(Node::new(input.added.clone())).unwrap()).expect("rebuild");
                assert_eq!(after, owners(&*fresh, &keys), "with_node differs from a fresh build");
            }
        }
    }

    // Remove a node.
    let gone = set.as_slice()[usize::from(input.removed) % set.len()].name().to_owned();
    if let Some(Ok(shrunk)) = without_node(&router, &gone) {
        assert!(shrunk.nodes().id_of(&gone).is_none(), "removed node still present");
        check_router(&*shrunk, &spec, &keys, 2);
        let after = owners(&*shrunk, &keys);
        assert!(after.iter().all(|a| *a != gone), "a key still routes to the removed node");
        if exact_movement(spec.algorithm, &set) {
            for (b, a) in before.iter().zip(&after) {
                assert!(b == a || *b == gone, "removing {gone} moved a key from {b} to {a}");
            }
        }
        if incremental_is_rebuild(spec.algorithm) {
            let fresh = spec.build(set.without_node(&gone).unwrap()).expect("rebuild");
            assert_eq!(after, owners(&*fresh, &keys), "without_node differs from a fresh build");
        }
    }

    // Reweigh a node.
    let name = set.as_slice()[usize::from(input.reweighed) % set.len()].name().to_owned();
    let w = input.weight.value();
    if let Ok(reweighed_set) = set.with_weight(&name, w) {
        if too_costly(&spec, reweighed_set.as_slice()) {
            return;
        }
        if let Some(Ok(re)) = with_weight(&router, &name, w) {
            check_router(&*re, &spec, &keys, 2);
            let after = owners(&*re, &keys);
            if spec.algorithm == Algorithm::TokenRing {
                // The allocator changes only that node's ranges; a fresh allocation differs.
                for (b, a) in before.iter().zip(&after) {
                    assert!(a == b || *a == name || *b == name, "reweighing {name} moved a key from {b} to {a}");
                }
            } else {
                let fresh = spec.build(reweighed_set).expect("rebuild with the new weight");
                assert_eq!(after, owners(&*fresh, &keys), "with_weight differs from a fresh build");
            }
        }
    }
});

/// Rendezvous keeps an ISA per router: every path the CPU has must answer alike.
fn simd_paths(router: &AnyRouter, keys: &[Vec<u8>]) {
    let AnyRouter::Rendezvous(r) = router else { return };
    let portable = rendezvous_with_isa(r, Isa::Portable).expect("portable always runs");
    for isa in Isa::ALL {
        if !isa.is_supported() {
            continue;
        }
        let on = rendezvous_with_isa(r, isa).expect("supported ISA");
        for k in keys {
            assert_eq!(on.route(k), portable.route(k), "rendezvous {} differs from portable", isa.name());
        }
    }
}

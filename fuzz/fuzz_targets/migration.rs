//! Migration plans between two arbitrary routers: shares and moved fractions add up, the plan is
//! exact exactly when both routers have arcs that place keys alike, and every sampled key that
//! changes owner lies in a moving range with the right owners at its arcs position (exact
//! plans), or is counted (sampled plans).
#![no_main]

use arbitrary::Arbitrary;
use fuzz_common::{keys, nodes, owners, too_costly, FuzzNode, FuzzSpec, Weight};
use hashroute::arcs::Arcs;
use hashroute::migration::{plan, plan_sampled, KeySpace};
use hashroute::{AnyRouter, MigrationPlan, Node, NodeSet, Router};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Edit {
    Add(String),
    Remove(u8),
    Reweigh(u8, Weight),
}

#[derive(Arbitrary, Debug)]
struct Input {
    spec: FuzzSpec,
    /// A second configuration for the after side (different algorithm, hasher, vnodes...).
    other: Option<FuzzSpec>,
    nodes: Vec<FuzzNode>,
    edits: Vec<Edit>,
    keys: Vec<Vec<u8>>,
    /// Selects the inputs whose sampled `plan` is computed too (see `check_plan`).
    sample_plan: u8,
}

fuzz_target!(|input: Input| {
    let list = nodes(&input.nodes);
    let Ok(before_set) = NodeSet::new(list.clone()) else { return };
    let mut after_set = before_set.clone();
    for edit in input.edits.iter().take(4) {
        let next = match edit {
            Edit::Add(name) => after_set.with_node(Node::new(name.clone())),
            Edit::Remove(i) => {
                let name = after_set.as_slice()[usize::from(*i) % after_set.len()].name().to_owned();
                after_set.without_node(&name)
            }
            Edit::Reweigh(i, w) => {
                let name = after_set.as_slice()[usize::from(*i) % after_set.len()].name().to_owned();
                after_set.with_weight(&name, w.value())
            }
        };
        if let Ok(next) = next {
            after_set = next;
        }
    }
    let spec_a = input.spec.spec(before_set.len());
    let spec_b = input.other.as_ref().unwrap_or(&input.spec).spec(after_set.len());
    if too_costly(&spec_a, before_set.as_slice()) || too_costly(&spec_b, after_set.as_slice()) {
        return;
    }
    let (Ok(a), Ok(b)) = (spec_a.build(before_set), spec_b.build(after_set)) else { return };
    let keys = keys(&input.keys);
    check_plan(&a, &b, &keys, input.sample_plan % 16 == 1);
});

/// Checks `plan(a, b)` and a plan over `keys`. When the routers' arcs differ, `plan` estimates
/// from `DEFAULT_SAMPLE` (100,000) keys, tens of milliseconds an input, which held this target
/// near 13 inputs a second; that path runs only with `sample_plan` (one input in 16), exact
/// plans always.
fn check_plan(a: &AnyRouter, b: &AnyRouter, keys: &[Vec<u8>], sample_plan: bool) {
    let (before, after) = (owners(a, keys), owners(b, keys));
    // Exact exactly when both cut the key space into arcs that place keys alike.
    let arcs = a.arcs().zip(b.arcs()).filter(|(x, y)| x.places_keys_like(y));
    if arcs.is_some() || sample_plan {
        let plan = plan(a, b).expect("a plan between two valid routers");
        assert_eq!(plan.is_exact(), arcs.is_some(), "{} -> {}: exactness", a.algorithm(), b.algorithm());
        sums(&plan);
        if let Some((arcs, _)) = arcs {
            exact_plan_places_keys(&plan, &arcs, keys, &before, &after);
        }
    }
    let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    let sampled = plan_sampled(a, b, &refs).expect("non-empty sample");
    assert_eq!(sampled.space(), KeySpace::Sample { keys: keys.len() });
    sums(&sampled);
    let moved = before.iter().zip(&after).filter(|(x, y)| x != y).count();
    assert_eq!(sampled.moved_units(), moved as u128, "sampled plan miscounts moved keys");
}

/// An exact plan's moving ranges: sorted, disjoint, adding up to the moved units, and every key
/// that changes owner lies in a range with exactly its old and new owner (none that stays does).
fn exact_plan_places_keys(
    plan: &MigrationPlan,
    arcs: &Arcs<'_>,
    keys: &[Vec<u8>],
    before: &[String],
    after: &[String],
) {
    let moves: Vec<_> = plan.moves().collect();
    let total: u128 = moves.iter().map(|m| m.len()).sum();
    assert_eq!(total, plan.moved_units(), "moving ranges do not add up to the moved units");
    for pair in moves.windows(2) {
        assert!(pair[0].end < pair[1].start, "ranges overlap or are unsorted");
    }
    assert!(moves.iter().all(|m| m.from != m.to && m.start <= m.end));
    for ((key, x), y) in keys.iter().zip(before).zip(after) {
        let p = arcs.position(key);
        let i = moves.partition_point(|m| m.end < p);
        let hit = moves.get(i).filter(|m| m.start <= p);
        match hit {
            Some(m) => assert!(
                m.from == x && m.to == y,
                "key {key:?} at {p}: plan says {} -> {}, routers say {x} -> {y}",
                m.from,
                m.to
            ),
            None => assert_eq!(x, y, "key {key:?} at {p} moved {x} -> {y} outside every range"),
        }
    }
}

/// Shares: before and after each sum to 1; moved in = moved out = the moved fraction.
fn sums(plan: &MigrationPlan) {
    let f = plan.moved_fraction();
    assert!((0.0..=1.0).contains(&f), "moved fraction {f}");
    let total = |g: fn(&hashroute::migration::NodeShare) -> f64| plan.shares().iter().map(g).sum::<f64>();
    let close = |x: f64, y: f64, what: &str| assert!((x - y).abs() < 1e-9, "{what}: {x} vs {y}");
    close(total(|s| s.before), 1.0, "before shares");
    close(total(|s| s.after), 1.0, "after shares");
    close(total(|s| s.moved_in), f, "moved in");
    close(total(|s| s.moved_out), f, "moved out");
    for s in plan.shares() {
        assert!(s.moved_in <= s.after + 1e-12 && s.moved_out <= s.before + 1e-12, "share of {}: {s:?}", s.name);
    }
}

//! The token allocator (`hashroute::token_ring::TokenAllocator`) under any sequence of
//! additions, removals and weight changes: every step moves keys only to the added node, only
//! off the removed one, or only between the reweighed node and the others; no node holds more
//! than its token cap; the same sequence replayed gives the same tokens; and in the cases the
//! token-ring issue states (additions from an empty ring at 16 tokens per node) the busiest node
//! stays within 1.06 of its share with equal weights, and within 1.10 of its weighted share with
//! weights 1 to 4.
#![no_main]

use arbitrary::Arbitrary;
use hashroute::token_ring::TokenAllocator;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug, Clone)]
enum Op {
    Add { weight: u8 },
    Remove(u8),
    Reweigh(u8, u8),
}

#[derive(Arbitrary, Debug)]
struct Input {
    tokens_per_node: u8,
    ops: Vec<Op>,
}

/// Operations per input: each costs O(T log T) for T tokens.
const MAX_OPS: usize = 48;
/// The balance bound of the growth scenario with equal weights.
const GROWTH_BOUND: f64 = 1.06;
/// The bound with weights 1 to 4. Random orders stay within 1.06 (worst 1.0587 over 1000 draws
/// of the allocator study's growth figures, `cargo run --release -p hashroute-bench --example
/// allocator_study`), but an adversarial order can exceed it: a
/// node of weight 4 joining ten or more nodes of weight 1 needs more cuts than its cap of `2V`
/// tokens allows (the module docs of `token_ring::allocate`; 1.06 to 1.089 measured by the
/// same study's heavy-node figures). 1.10 holds that limit with a margin.
const WEIGHTED_GROWTH_BOUND: f64 = 1.10;

fuzz_target!(|input: Input| {
    let v = u32::from(input.tokens_per_node % 32) + 1;
    let ops: Vec<Op> = input.ops.into_iter().take(MAX_OPS).collect();
    let first = run(v, &ops);
    let second = run(v, &ops);
    assert_eq!(first, second, "the same operations gave different tokens");
});

/// Applies `ops`, checking each step; returns the final tokens (ring order, with owners).
fn run(v: u32, ops: &[Op]) -> Vec<(i64, String)> {
    let mut alloc = TokenAllocator::new();
    let mut next = 0u32;
    let mut only_growth = true;
    let mut equal_weights = true;
    for op in ops {
        let before = snapshot(&alloc);
        let names: Vec<String> = alloc.nodes().map(|n| n.name().to_owned()).collect();
        let pick = |i: u8| names.get(usize::from(i) % names.len().max(1)).cloned();
        let (who, result) = match op {
            Op::Add { weight } => {
                next += 1;
                let name = format!("n{next}");
                let w = f64::from(weight % 4 + 1);
                equal_weights &= w == 1.0;
                (Some(name.clone()), alloc.add_node(&name, w, "dc1", "rack1", v))
            }
            Op::Remove(i) => {
                only_growth = false;
                let Some(name) = pick(*i) else { continue };
                (Some(name.clone()), alloc.remove_node(&name))
            }
            Op::Reweigh(i, w) => {
                only_growth = false;
                let Some(name) = pick(*i) else { continue };
                (Some(name.clone()), alloc.set_weight(&name, f64::from(w % 4 + 1)))
            }
        };
        let who = who.expect("every op names a node");
        match result {
            Ok(()) => check_step(&before, &alloc, &who),
            Err(e) => {
                assert!(!e.to_string().contains('\n'), "error is not one line: {e}");
                assert_eq!(snapshot(&alloc), before, "a refused operation changed the ring");
            }
        }
        if only_growth && v == 16 && !alloc.is_empty() {
            let (b, bound) = (alloc.balance(), if equal_weights { GROWTH_BOUND } else { WEIGHTED_GROWTH_BOUND });
            assert!(
                b <= bound,
                "growth at 16 tokens per node reached balance {b} > {bound} with {} nodes",
                alloc.len()
            );
        }
    }
    snapshot(&alloc)
}

fn snapshot(alloc: &TokenAllocator) -> Vec<(i64, String)> {
    alloc.tokens().map(|(t, n)| (t, n.to_owned())).collect()
}

/// The owner of `position` in a snapshot: the first token `>=` it, wrapping.
fn owner(ring: &[(i64, String)], position: i64) -> Option<&str> {
    if ring.is_empty() {
        return None;
    }
    let i = ring.partition_point(|(t, _)| *t < position);
    Some(ring.get(i).unwrap_or(&ring[0]).1.as_str())
}

/// Positions change owner only to or from `who`; every node within its cap; ownership exact.
fn check_step(before: &[(i64, String)], alloc: &TokenAllocator, who: &str) {
    let after = snapshot(alloc);
    let probes = before.iter().chain(&after).flat_map(|(t, _)| [*t, t.wrapping_add(1), t.wrapping_sub(1)]);
    let fixed = (0..256u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) as i64);
    for p in probes.chain(fixed) {
        if let (Some(a), Some(b)) = (owner(before, p), owner(&after, p)) {
            assert!(a == b || a == who || b == who, "position {p} moved {a} -> {b}, not involving {who}");
        }
    }
    let mut owned = 0u128;
    for n in alloc.nodes() {
        assert!(
            n.tokens().len() <= n.token_cap(),
            "{} holds {} tokens over its cap {}",
            n.name(),
            n.tokens().len(),
            n.token_cap()
        );
        owned += n.owned();
    }
    if !alloc.is_empty() {
        assert_eq!(owned, 1u128 << 64, "ownership does not sum to the ring");
    }
}

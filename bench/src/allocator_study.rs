//! The token allocator's study figures (the report's "allocated token rings" background): how
//! long allocation takes, how many random tokens reach a balance the allocator reaches with
//! 16, and how the allocator's worst steps spread over many draws of names and weights.
//!
//! Figures, not assertions: the kernel's own tests (`src/algo/token_ring/allocate/tests.rs`)
//! assert the bounds on the same scenarios, with the internal bookkeeping checks these figures
//! do not need. Everything here goes through the public [`TokenAllocator`] API. Print them with
//! `cargo run --release -p hashroute-bench --example allocator_study [FIGURE...]`
//! ([`FIGURES`] names them).

use std::fmt::Write as _;
use std::time::Instant;

use hashroute::token_ring::{RingNode, TokenAllocator};

/// A figure: its name and the function that measures it and returns its text.
pub type Figure = (&'static str, fn() -> String);

/// Every figure.
pub const FIGURES: [Figure; 5] = [
    ("allocation_time", allocation_time),
    ("random_tokens", random_tokens),
    ("scenarios_over_draws", scenarios_over_draws),
    ("growth_over_1000_draws", growth_over_1000_draws),
    ("heavy_node_joining_light_ones", heavy_node_joining_light_ones),
];

/// Positions on the ring (the whole `i64` range) as a float: exact, a power of two.
const RING_F: f64 = 18_446_744_073_709_551_616.0;

/// SplitMix64: the deterministic draws of the scenarios (the kernel's tests draw the same way,
/// so the figures describe the scenarios the tests bound).
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Node `i` of draw `seed`: a drawn prefix puts the names, and so the ties the allocator breaks
/// by name, in a different order in every draw.
fn name(seed: u64, i: u64) -> String {
    format!("{:04x}-{i:03}", mix(seed.wrapping_mul(0x1_0000) ^ i) & 0xffff)
}

/// 1.0, or a weight drawn from 1..=4 by `seed`.
fn weight(i: u64, weighted: bool, seed: u64) -> f64 {
    if weighted {
        (mix(i ^ (seed << 32)) % 4 + 1) as f64
    } else {
        1.0
    }
}

/// What a scenario measured after each step: the balance, and the tokens per node.
#[derive(Debug, Default)]
struct Trace {
    balance: Vec<f64>,
    tokens: Vec<f64>,
}

impl Trace {
    fn step(&mut self, a: &TokenAllocator) {
        self.balance.push(a.balance());
        self.tokens.push(a.token_count() as f64 / a.len() as f64);
    }
}

/// Adds nodes 0..n of draw `seed` one at a time.
fn grow(n: u64, weighted: bool, seed: u64, v: u32) -> (TokenAllocator, Trace) {
    let mut a = TokenAllocator::new();
    let mut trace = Trace::default();
    for i in 0..n {
        a.add_node(&name(seed, i), weight(i, weighted, seed), "dc1", "rack1", v).expect("a valid node");
        trace.step(&a);
    }
    (a, trace)
}

/// Removes every fifth node of a 120-node ring of draw `seed` (24 nodes, 20 %).
fn shrink(a: &mut TokenAllocator, seed: u64) -> Trace {
    let mut trace = Trace::default();
    for k in 0..24u64 {
        a.remove_node(&name(seed, (k * 5 + seed) % 120)).expect("a member");
        trace.step(a);
    }
    trace
}

/// Changes the weight of 12 of the remaining nodes (10 % of 120) to a draw from 1..=4.
fn reweigh(a: &mut TokenAllocator, seed: u64) -> Trace {
    let mut trace = Trace::default();
    for k in 0..12u64 {
        let who = name(seed, (k * 10 + 1 + seed) % 120);
        if a.node(&who).is_none() {
            continue;
        }
        a.set_weight(&who, (mix(k + 1000 + seed) % 4 + 1) as f64).expect("a valid weight");
        trace.step(a);
    }
    trace
}

/// Each node's range lengths (positions from the previous token, wrapping; a lone token owns
/// the whole ring), from the public token list.
fn range_lengths(a: &TokenAllocator) -> Vec<(String, Vec<u128>)> {
    let ring: Vec<(i64, &str)> = a.tokens().collect();
    let mut out: Vec<(String, Vec<u128>)> = a.nodes().map(|n| (n.name().to_string(), Vec::new())).collect();
    out.sort_by(|x, y| x.0.cmp(&y.0));
    for (k, &(t, owner)) in ring.iter().enumerate() {
        let prev = ring[(k + ring.len() - 1) % ring.len()].0;
        let len = match (t as u64).wrapping_sub(prev as u64) {
            0 => 1u128 << 64,
            d => u128::from(d),
        };
        let at = out.binary_search_by(|(n, _)| n.as_str().cmp(owner)).expect("every owner is a node");
        out[at].1.push(len);
    }
    out
}

/// The fewest cuts (each taking all but one position of a range, the largest first) that bring
/// every node of `a` to at most `ratio` times its share once `weight` joins.
fn fewest_cuts(a: &TokenAllocator, weight: f64, ratio: f64) -> usize {
    let total = a.total_weight() + weight;
    range_lengths(a)
        .into_iter()
        .map(|(name, mut lens)| {
            let n = a.node(&name).expect("a member");
            lens.sort_unstable_by(|x, y| y.cmp(x));
            let allowed = ratio * n.weight() / total * RING_F;
            let mut owned = n.owned() as f64;
            let mut cuts = 0;
            while owned > allowed && cuts < lens.len() {
                owned -= (lens[cuts] - 1) as f64;
                cuts += 1;
            }
            if owned > allowed {
                usize::MAX / 4
            } else {
                cuts
            }
        })
        .sum()
}

fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(0.0, f64::max)
}

/// `label: median M worst W (K of N over target)` of the per-draw figures `v`.
fn stat(label: &str, v: &mut [f64], target: f64) -> String {
    v.sort_by(f64::total_cmp);
    let over = v.iter().filter(|&&x| x > target).count();
    format!("{label} median {:.4} worst {:.4} ({over} of {} over {target})", v[v.len() / 2], v[v.len() - 1], v.len())
}

/// Adding 1,000, 10,000 and 100,000 nodes one at a time (V = 16), equal weights and weights
/// 1–4: wall time and the final balance.
pub fn allocation_time() -> String {
    let mut out = String::new();
    for n in [1_000u64, 10_000, 100_000] {
        let start = Instant::now();
        let mut a = TokenAllocator::new();
        for i in 0..n {
            a.add_node(&format!("node-{i}"), 1.0, "dc1", "rack1", 16).expect("a valid node");
        }
        let elapsed = start.elapsed();
        let start = Instant::now();
        let mut b = TokenAllocator::new();
        for i in 0..n {
            b.add_node(&format!("node-{i}"), (mix(i) % 4 + 1) as f64, "dc1", "rack1", 16).expect("a valid node");
        }
        let _ = writeln!(
            out,
            "{n} nodes one at a time, V = 16: {elapsed:.2?} (balance {:.4}); weights 1-4: {:.2?} (balance {:.4})",
            a.balance(),
            start.elapsed(),
            b.balance()
        );
    }
    out
}

/// Median balance of `seeds` rings of 120 nodes with `v` random tokens each (`v × weight` when
/// weighted).
fn random_median(v: u64, weighted: bool, seeds: u64) -> f64 {
    let mut out: Vec<f64> = (0..seeds)
        .map(|seed| {
            let nodes = (0..120u64).map(|i| {
                let w = if weighted { mix(i ^ 0xABCD ^ (seed << 40)) % 4 + 1 } else { 1 };
                let tokens = (0..v * w).map(|k| mix((seed << 48) ^ (i << 24) ^ k) as i64).collect();
                RingNode { name: format!("n{i}"), weight: w as f64, zone: "dc1".into(), rack: "r1".into(), tokens }
            });
            TokenAllocator::from_ring(nodes, 16).map_or(f64::NAN, |a| a.balance())
        })
        .collect();
    out.sort_by(f64::total_cmp);
    out[out.len() / 2]
}

/// Random tokens on 120 nodes: the median balance per V, and the V random tokens need for a
/// median balance of 1.06 (the allocator's target with 16).
pub fn random_tokens() -> String {
    let seeds = 21;
    let mut out = format!("random tokens, 120 nodes, median over {seeds} seeds:\n");
    for v in [16, 64, 256, 1024, 4096] {
        let _ = writeln!(
            out,
            "  V = {v}: balance {:.4} (weights 1-4 with V x weight tokens: {:.4})",
            random_median(v, false, seeds),
            random_median(v, true, seeds)
        );
    }
    // The smallest V whose median reaches 1.06, by bisection between powers of two.
    let (mut lo, mut hi) = (16u64, 16u64);
    while random_median(hi, false, seeds) > 1.06 {
        (lo, hi) = (hi, hi * 2);
    }
    while hi - lo > hi / 32 {
        let mid = (lo + hi) / 2;
        if random_median(mid, false, seeds) > 1.06 {
            lo = mid
        } else {
            hi = mid
        }
    }
    let _ = writeln!(out, "  equal weights: V ~ {hi} random tokens per node for a median balance <= 1.06");
    out
}

/// The kernel tests' scenarios over 100 draws of names (and weights): per draw, the worst
/// balance over the 120 additions, the 24 removals and the 12 weight changes, and the most
/// tokens per node at any step; their median and worst over the draws.
pub fn scenarios_over_draws() -> String {
    let draws = 100;
    let mut out = String::new();
    for weighted in [false, true] {
        let (mut g, mut r, mut w, mut t) = (vec![], vec![], vec![], vec![]);
        for seed in 0..draws {
            let (mut a, grown) = grow(120, weighted, seed, 16);
            let removed = shrink(&mut a, seed);
            let changed = reweigh(&mut a, seed);
            g.push(max(&grown.balance));
            r.push(max(&removed.balance));
            w.push(max(&changed.balance));
            t.push(max(&[grown.tokens, removed.tokens, changed.tokens].concat()));
        }
        let _ = writeln!(out, "{}, {draws} draws, V = 16:", if weighted { "weights 1-4" } else { "equal weights" });
        let _ = writeln!(out, "  {}", stat("growth to 120 nodes, worst step:", &mut g, 1.06));
        let _ = writeln!(out, "  {}", stat("removing 24 of them, worst step:", &mut r, 1.10));
        let _ = writeln!(out, "  {}", stat("then changing 12 weights, worst step:", &mut w, 1.10));
        let _ = writeln!(out, "  {}", stat("tokens per node, most at any step:", &mut t, 32.0));
    }
    out
}

/// Growth alone over 1000 draws of weights 1–4: the tail of the distribution.
pub fn growth_over_1000_draws() -> String {
    let mut worst: Vec<(f64, u64, usize)> = (0..1000)
        .map(|seed| {
            let (_, trace) = grow(120, true, seed, 16);
            let (at, b) =
                trace.balance.iter().enumerate().fold((0, 0.0), |m, (i, &b)| if b > m.1 { (i, b) } else { m });
            (b, seed, at + 1)
        })
        .collect();
    worst.sort_by(|x, y| y.0.total_cmp(&x.0));
    let mut all: Vec<f64> = worst.iter().map(|w| w.0).collect();
    let mut out =
        format!("weights 1-4, {}\n", stat("growth to 120 nodes over 1000 draws, worst step:", &mut all, 1.06));
    for (b, seed, nodes) in &worst[..5] {
        let _ = writeln!(out, "  draw {seed}: {b:.4} at {nodes} nodes");
    }
    out
}

/// A node of weight 4 joining `k` nodes of weight 1: its 2V tokens against the fewest cuts that
/// could bring every old node within 1.06 of its share, and the best balance 2V single cuts
/// allow.
pub fn heavy_node_joining_light_ones() -> String {
    let mut out = String::new();
    for k in [4, 7, 10, 12, 14, 16, 24, 32] {
        let mut a = TokenAllocator::new();
        for i in 0..k {
            a.add_node(&format!("light-{i:02}"), 1.0, "dc1", "r1", 16).expect("a valid node");
        }
        let needed = fewest_cuts(&a, 4.0, 1.06);
        let bound = (1000..=1200).map(|r| f64::from(r) / 1000.0).find(|&r| fewest_cuts(&a, 4.0, r) <= 32);
        a.add_node("heavy", 4.0, "dc1", "r1", 16).expect("a valid node");
        let heavy = a.node("heavy").expect("just added");
        let _ = writeln!(
            out,
            "{k:2} light nodes + weight 4: cuts needed for 1.06: {needed:3}; best with 32: {:.3}; allocator {:.4} ({} tokens, heavy at {:.4})",
            bound.unwrap_or(f64::NAN),
            a.balance(),
            heavy.tokens().len(),
            heavy.load_ratio()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The public-API range lengths cover the ring exactly once and match each node's ownership.
    #[test]
    fn range_lengths_cover_the_ring() {
        let (a, _) = grow(12, true, 3, 16);
        let lens = range_lengths(&a);
        let total: u128 = lens.iter().flat_map(|(_, l)| l).sum();
        assert_eq!(total, 1u128 << 64);
        for (name, l) in &lens {
            assert_eq!(l.iter().sum::<u128>(), a.node(name).unwrap().owned(), "{name}");
        }
    }
}

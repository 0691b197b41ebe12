//! Scenario drivers and exact checks shared by the allocator's tests.

use super::*;

/// SplitMix64: the deterministic draws of the scenarios (weights, random tokens, probes).
pub(super) fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Node `i` of draw `seed`: a drawn prefix puts the names, and so the ties the allocator
/// breaks by name, in a different order in every draw (equal weights vary only by that).
pub(super) fn name(seed: u64, i: u64) -> String {
    format!("{:04x}-{i:03}", mix(seed.wrapping_mul(0x1_0000) ^ i) & 0xffff)
}

/// The weights of the scenarios: 1.0, or drawn from 1..=4 by `seed`.
pub(super) fn weight(i: u64, weighted: bool, seed: u64) -> f64 {
    if weighted {
        (mix(i ^ (seed << 32)) % 4 + 1) as f64
    } else {
        1.0
    }
}

pub(super) type Snapshot = Vec<(i64, String)>;

pub(super) fn snapshot(a: &TokenAllocator) -> Snapshot {
    a.tokens().map(|(t, n)| (t, n.to_string())).collect()
}

/// The owner of position `x` in a snapshot: the first token >= x, wrapping.
pub(super) fn owner_in(ring: &Snapshot, x: i64) -> &str {
    let i = ring.partition_point(|(t, _)| *t < x);
    &ring[if i == ring.len() { 0 } else { i }].1
}

/// Exact overlay of two rings: positions that changed owner, as `(from, to) -> positions`.
pub(super) fn moved(before: &Snapshot, after: &Snapshot) -> BTreeMap<(String, String), u128> {
    let cuts: BTreeSet<i64> = before.iter().chain(after).map(|(t, _)| *t).collect();
    let cuts: Vec<i64> = cuts.into_iter().collect();
    let mut out = BTreeMap::new();
    for (k, &u) in cuts.iter().enumerate() {
        // Every position of (previous cut, u] has the same owner in both rings.
        let prev = cuts[(k + cuts.len() - 1) % cuts.len()];
        let (from, to) = (owner_in(before, u), owner_in(after, u));
        if from != to {
            *out.entry((from.to_string(), to.to_string())).or_insert(0) += dist(prev, u);
        }
    }
    out
}

/// Owners of pseudo-random probe positions (a sampled check beside the exact overlay).
pub(super) fn probes(a: &TokenAllocator, seed: u64) -> Vec<String> {
    (0..2000).map(|i| a.owner(mix(seed ^ i) as i64).unwrap().to_string()).collect()
}

/// The internal bookkeeping agrees with the ring, and no node exceeds its token cap.
pub(super) fn check(a: &TokenAllocator) {
    let mut total = 0u128;
    let ring: Vec<(i64, u32)> = a.tokens.iter().map(|(&t, &s)| (t, s)).collect();
    for (k, &(t, slot)) in ring.iter().enumerate() {
        let prev = ring[(k + ring.len() - 1) % ring.len()].0;
        let node = a.slot(slot);
        assert_eq!(node.ranges[node.index(t)].1, dist(prev, t), "range length of token {t}");
        total += dist(prev, t);
    }
    assert_eq!(total, RING);
    assert_eq!(a.load.len(), a.len());
    for (name, &slot) in &a.by_name {
        let node = a.slot(slot);
        assert!(!node.ranges.is_empty(), "{name} has no token");
        assert_eq!(node.owned, node.ranges.iter().map(|r| r.1).sum::<u128>());
        assert_eq!(node.filed.to_bits(), node.load().to_bits(), "{name} filed under a stale load");
        assert!(node.ranges.len() <= node.cap, "{name} has {} tokens", node.ranges.len());
        assert!(node.cap >= 2 * node.nominal as usize);
        assert!(node.ranges.iter().all(|&(t, _)| a.tokens[&t] == slot));
    }
    let owned: usize = a.by_name.values().map(|&s| a.slot(s).ranges.len()).sum();
    assert_eq!(owned, a.token_count());
}

/// What a scenario measured after each step: the balance, and the tokens per node.
#[derive(Debug, Default)]
pub(super) struct Trace {
    pub(super) balance: Vec<f64>,
    pub(super) tokens: Vec<f64>,
}

impl Trace {
    /// Records the step, checking the token bound: at most 2V per node on average (the sum
    /// of the nodes' caps; every node here has the same V).
    fn step(&mut self, a: &TokenAllocator) {
        let bound: usize = a.nodes().map(|n| 2 * n.nominal_tokens() as usize).sum();
        assert!(a.token_count() <= bound, "{} tokens over {} nodes", a.token_count(), a.len());
        self.balance.push(a.balance());
        self.tokens.push(a.token_count() as f64 / a.len() as f64);
    }
}

/// Adds nodes 0..n of draw `seed` one at a time, checking movement and token counts.
pub(super) fn grow(n: u64, weighted: bool, seed: u64, v: u32) -> (TokenAllocator, Trace) {
    let mut a = TokenAllocator::new();
    let mut trace = Trace::default();
    for i in 0..n {
        let (who, w) = (name(seed, i), weight(i, weighted, seed));
        let before = snapshot(&a);
        a.add_node(&who, w, "dc1", "rack1", v).unwrap();
        if !before.is_empty() {
            let moves = moved(&before, &snapshot(&a));
            assert!(moves.keys().all(|(_, to)| *to == who), "addition of {who} moved {moves:?}");
            assert_eq!(moves.values().sum::<u128>(), a.node(&who).unwrap().owned());
        }
        // The budget: V times the weight over the mean weight, within 1..=2V.
        let budget = token_budget(v, w, a.len(), a.total_weight());
        let expected = if before.is_empty() { budget } else { budget.min(before.len()) };
        assert_eq!(a.node(&who).unwrap().tokens().len(), expected);
        trace.step(&a);
    }
    check(&a);
    (a, trace)
}

/// Removes every fifth node of a 120-node ring of draw `seed` (24 nodes, 20 %), checking
/// movement each time.
pub(super) fn shrink(a: &mut TokenAllocator, seed: u64) -> Trace {
    let mut trace = Trace::default();
    for k in 0..24u64 {
        let gone = name(seed, (k * 5 + seed) % 120);
        let before = snapshot(a);
        a.remove_node(&gone).unwrap();
        let moves = moved(&before, &snapshot(a));
        assert!(moves.keys().all(|(from, _)| *from == gone), "removal of {gone} moved {moves:?}");
        trace.step(a);
    }
    check(a);
    trace
}

/// Changes the weight of 12 of the remaining nodes (10 % of 120) to a draw from 1..=4.
pub(super) fn reweigh(a: &mut TokenAllocator, seed: u64) -> Trace {
    let mut trace = Trace::default();
    for k in 0..12u64 {
        let who = name(seed, (k * 10 + 1 + seed) % 120);
        if a.node(&who).is_none() {
            continue;
        }
        let before = snapshot(a);
        a.set_weight(&who, (mix(k + 1000 + seed) % 4 + 1) as f64).unwrap();
        let moves = moved(&before, &snapshot(a));
        assert!(moves.keys().all(|(f, t)| *f == who || *t == who), "reweighing {who} moved {moves:?}");
        trace.step(a);
    }
    check(a);
    trace
}

/// The fewest cuts (each taking all but one position of a range, the largest first) that
/// bring every node of `a` to at most `ratio` times its share once `weight` joins.
pub(super) fn fewest_cuts(a: &TokenAllocator, weight: f64, ratio: f64) -> usize {
    let total = a.total_weight() + weight;
    a.nodes()
        .map(|n| {
            let mut lens: Vec<u128> = n.node.ranges.iter().map(|r| r.1).collect();
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

pub(super) fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(0.0, f64::max)
}

//! Cross-checks of the analysis code on cases with exact answers, and exact-vs-sampled
//! agreement on real routers.

use hashroute::{jump, Jump, Modulo, NodeSet, Ring};
use hashroute_analysis::partition::Partition;
use hashroute_analysis::sweep::{cluster_names, modulo_movement, sampled_movement};
use hashroute_analysis::{CacheSim, Lru};
use proptest::prelude::*;

/// SplitMix64 (the analysis crate's own generator is private): fixed, well-spread test draws.
struct SplitMix64(u64);

impl SplitMix64 {
    fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn set(names: &[String]) -> NodeSet {
    NodeSet::from_names(names).unwrap()
}

/// Modulo 3 -> 4 over a uniform key space: key hash x stays on the same node only when
/// x mod 3 == x mod 4. Over one period lcm(3, 4) = 12 that is x ∈ {0, 1, 2} (x mod 12 < 3), so
/// 3 of 12 stay and exactly 9/12 = 3/4 move. The exact counter must say 0.75, and routing
/// real keys through two `Modulo` routers must agree within sampling noise.
#[test]
fn modulo_three_to_four_moves_three_quarters() {
    let names = cluster_names(11, 4);
    let (a, b) = (set(&names[..3]), set(&names[..4]));
    let exact = modulo_movement(&a, &b);
    assert_eq!(exact.moved, 0.75);
    let stays = (0..12u64).filter(|x| x % 3 == x % 4).count();
    assert_eq!(stays, 3);
    let ra = Modulo::builder().node_set(a).hasher(Default::default()).build().unwrap();
    let rb = Modulo::builder().node_set(b).hasher(Default::default()).build().unwrap();
    let sampled = sampled_movement(&ra, &rb, 100_000, 1);
    // Binomial sd at 100k keys is 0.14 points; allow 5 sd.
    assert!((sampled.moved - 0.75).abs() < 0.007, "{sampled:?}");
}

/// Jump n -> n+1: every key either stays or moves to the new bucket n, never between old ones.
#[test]
fn jump_moves_only_to_the_new_bucket() {
    let mut rng = SplitMix64::new(99);
    for n in [1u32, 2, 3, 7, 10, 100, 999] {
        let mut moved = 0u32;
        for _ in 0..20_000 {
            let h = rng.next_u64();
            let (x, y) = (jump::bucket(h, n), jump::bucket(h, n + 1));
            if x != y {
                assert_eq!(y, n, "n={n}: key moved {x} -> {y}");
                moved += 1;
            }
        }
        let expect = 20_000.0 / f64::from(n + 1);
        assert!(
            (f64::from(moved) - expect).abs() < 6.0 * expect.sqrt() + 1.0,
            "n={n}: moved {moved}, expected {expect}"
        );
    }
}

/// A hand-built partition with known arcs gives known loads; a one-node ring owns everything.
#[test]
fn known_arcs_known_loads() {
    let names: Vec<String> = ["a", "b", "c", "d"].iter().map(|s| s.to_string()).collect();
    let e = 1u64 << 61; // an eighth of the circle
                        // a: (7e, 2^64) ∪ [0, e] = 2/8; b: (e, 4e] = 3/8; c: (4e, 5e] = 1/8; d: (5e, 7e] = 2/8.
    let p = Partition::new(set(&names), vec![e, 4 * e, 5 * e, 7 * e], vec![0, 1, 2, 3]);
    assert_eq!(p.loads(), vec![0.25, 0.375, 0.125, 0.25]);
    let one = Ring::builder().vnodes(10).nodes(["solo"]).build().unwrap();
    assert_eq!(Partition::from_ring(&one).loads(), vec![1.0]);
}

/// Exact ring movement (overlaying arcs, matching owners by name) agrees with routing keys.
#[test]
fn exact_ring_movement_matches_sampled() {
    let names = cluster_names(5, 12);
    let a = Ring::builder().vnodes(40).node_set(set(&names[..8])).build().unwrap();
    let b = Ring::builder().vnodes(40).node_set(set(&names[..12])).build().unwrap();
    let exact = Partition::from_ring(&a).movement(&Partition::from_ring(&b));
    let sampled = sampled_movement(&a, &b, 200_000, 3);
    assert!((exact.moved - sampled.moved).abs() < 0.006, "exact {exact:?} sampled {sampled:?}");
    assert!((exact.ideal - 4.0 / 12.0).abs() < 1e-12);
    // Shrinking: removed nodes' keys go only to survivors, and exact spread matches sampled.
    let back = Partition::from_ring(&b).movement(&Partition::from_ring(&a));
    assert!((back.moved - exact.moved).abs() < 1e-12, "movement by name is symmetric");
    assert!(back.failure_spread.unwrap() > 1.0 / 8.0 - 1e-9);
}

/// Jump growth through the `Router` interface: exact ideal and measured agree.
#[test]
fn jump_router_growth_is_near_ideal() {
    let names = cluster_names(8, 11);
    let a = Jump::builder().node_set(set(&names[..10])).hasher(Default::default()).build().unwrap();
    let b = Jump::builder().node_set(set(&names[..11])).hasher(Default::default()).build().unwrap();
    let m = sampled_movement(&a, &b, 100_000, 4);
    assert!((m.ideal - 1.0 / 11.0).abs() < 1e-12);
    assert!((m.moved - 1.0 / 11.0).abs() < 0.005, "{m:?}");
}

/// The LRU on a tiny trace, and the simulator with an unchanged router.
#[test]
fn lru_trace_and_unchanged_simulation() {
    let mut c = Lru::new(3);
    let trace = [1, 2, 3, 1, 4, 2, 5, 1];
    // 1m 2m 3m 1h 4m(evict 2) 2m(evict 3) 5m(evict 1) 1m(evict 4)
    let hits: Vec<bool> = trace.iter().map(|&k| c.access(k)).collect();
    assert_eq!(hits, [false, false, false, true, false, false, false, false]);
    let sim = CacheSim {
        universe: 2_000,
        capacity_per_node: 100,
        before: 10_000,
        after: 2_000,
        window: 1_000,
        ..CacheSim::quick()
    };
    let r = Modulo::from_names(["x", "y"]).unwrap();
    let t = sim.run(&r, &r);
    assert_eq!(t.hit_rate.len(), 12);
    assert!(t.dip() > 0.9 * t.steady_before(), "{t:?}");
}

fn arb_partition(max_nodes: usize) -> impl Strategy<Value = (Vec<u64>, Vec<u32>, usize)> {
    (1..=max_nodes).prop_flat_map(|n| {
        (prop::collection::vec(any::<u64>(), 1..64), prop::collection::vec(0..n as u32, 64), Just(n)).prop_map(
            |(mut pts, owners, n)| {
                pts.sort_unstable();
                let owners = owners[..pts.len()].to_vec();
                (pts, owners, n)
            },
        )
    })
}

fn named(n: usize) -> NodeSet {
    NodeSet::from_names((0..n).map(|i| format!("n{i}"))).unwrap()
}

proptest! {
    /// Loads are fractions of the whole circle: they sum to 1 for any points, including
    /// adversarial ones (duplicates, 0, u64::MAX).
    #[test]
    fn loads_sum_to_one((pts, owners, n) in arb_partition(6), edge in prop::sample::select(vec![0u64, 1, u64::MAX])) {
        let mut pts = pts;
        pts[0] = edge;
        pts.sort_unstable();
        let p = Partition::new(named(n), pts, owners);
        let total: f64 = p.loads().iter().sum();
        prop_assert!((total - 1.0).abs() < 1e-9);
    }

    /// A partition never moves keys to itself, and movement by name is symmetric.
    #[test]
    fn movement_identity_and_symmetry((pa, oa, n) in arb_partition(5), (pb, ob, m) in arb_partition(5)) {
        let a = Partition::new(named(n), pa, oa);
        let b = Partition::new(named(m), pb, ob);
        prop_assert_eq!(a.movement(&a).moved, 0.0);
        let (x, y) = (a.movement(&b).moved, b.movement(&a).moved);
        prop_assert!((x - y).abs() < 1e-12);
        prop_assert!((0.0..=1.0 + 1e-12).contains(&x));
    }

    /// Exact loads agree with routing sampled hashes (scalar twin of the arc sum).
    #[test]
    fn loads_match_point_lookup((pts, owners, n) in arb_partition(4), seed in any::<u64>()) {
        let p = Partition::new(named(n), pts.clone(), owners.clone());
        let exact = p.loads();
        let mut counts = vec![0f64; n];
        let mut rng = SplitMix64::new(seed);
        let k = 20_000;
        for _ in 0..k {
            let h = rng.next_u64();
            let i = pts.partition_point(|&x| x < h);
            counts[owners[if i == pts.len() { 0 } else { i }] as usize] += 1.0;
        }
        for i in 0..n {
            prop_assert!((counts[i] / k as f64 - exact[i]).abs() < 0.02, "node {}: {} vs {}", i, counts[i] / k as f64, exact[i]);
        }
    }
}

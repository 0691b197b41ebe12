//! Exact load and key-movement arithmetic from a router's structure, read through the kernel's
//! [`Router::arcs`]: one engine, in integers, for every router that divides its key space
//! (ring, Ketama, token ring, Redis slots, the nginx, HAProxy and Envoy rings, Maglev's table).
//!
//! With uniformly distributed key hashes a node's expected load is exactly the size of what it
//! owns (arcs of a 64- or 32-bit circle, slots, table entries), and the fraction of keys that
//! move between two routers that place keys alike is exactly the part of the space where their
//! owners' *names* differ. Computing these from the structure replaces sampling noise with
//! exact answers and costs O(points) instead of O(keys).

use hashroute::arcs::{Arcs, Placement};
use hashroute::migration::KeySpace;
use hashroute::{KeyHasher, NodeSet, Ring, Router};

/// A router's [`Arcs`] (owned) with the node set their owners index into.
#[derive(Clone, Debug)]
pub struct Partition {
    nodes: NodeSet,
    arcs: Arcs<'static>,
}

impl Partition {
    /// The exact partition of any router with [`Router::arcs`]; `None` for the others. Costs
    /// what `arcs()` costs plus a copy of the points (12 bytes per point).
    pub fn of<R: Router + ?Sized>(router: &R) -> Option<Partition> {
        let arcs = router.arcs()?.into_owned();
        Some(Partition { nodes: router.nodes().clone(), arcs })
    }

    /// A partition of the 64-bit circle from sorted `points` and their `owners` (indices into
    /// `nodes`): point `i` owns `(points[i-1], points[i]]`, point 0 also the wrap.
    ///
    /// # Panics
    /// If `points` is empty, the lengths differ, `points` is not sorted, or an owner is out of
    /// range (for hand-built partitions in tests; routers' come from [`Partition::of`]).
    pub fn new(nodes: NodeSet, points: Vec<u64>, owners: Vec<u32>) -> Partition {
        assert!(owners.iter().all(|&o| (o as usize) < nodes.len()), "Partition::new: owner out of range");
        let placement = Placement::hashed(KeyHasher::default());
        let arcs = Arcs::new(KeySpace::Hash64, points, owners, placement).expect("Partition::new: valid arcs");
        Partition { nodes, arcs }
    }

    /// The exact partition of a [`Ring`] (copies its points: 12 bytes per point).
    pub fn from_ring(ring: &Ring) -> Partition {
        Partition::of(ring).expect("a ring has arcs")
    }

    /// The node set the owners index into.
    pub fn nodes(&self) -> &NodeSet {
        &self.nodes
    }

    /// The kernel's arcs this partition reads.
    pub fn arcs(&self) -> &Arcs<'static> {
        &self.arcs
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.arcs.points().len()
    }

    /// Always `false`: a partition has at least one point.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Each node's exact share of uniformly hashed keys (fractions summing to 1): what it owns
    /// over the size of the space, from integer counts. O(points).
    pub fn loads(&self) -> Vec<f64> {
        let size = self.arcs.space().size() as f64;
        self.arcs.owned(self.nodes.len()).into_iter().map(|a| a as f64 / size).collect()
    }

    /// Exactly how keys move from `self` to `other`, matching nodes by **name** (ids differ
    /// between node sets); `None` when the two place keys differently (another space or key
    /// hash: compare by sampling). O(P + Q).
    pub fn try_movement(&self, other: &Partition) -> Option<Movement> {
        exact_movement_of((&self.arcs, &self.nodes), (&other.arcs, &other.nodes))
    }

    /// [`Partition::try_movement`] for two partitions known to place keys alike (the sweep's:
    /// one candidate built over two node sets).
    ///
    /// # Panics
    /// If they place keys differently.
    pub fn movement(&self, other: &Partition) -> Movement {
        self.try_movement(other).expect("Partition::movement: the two place keys differently")
    }
}

/// A router whose structure is a lookup table indexed by `hash mod M` (Maglev): entry `i` owns
/// the key hashes `≡ i (mod M)`, so a node's load is its entry count over `M` (the `2^64 mod M`
/// bias is below `M / 2^64`) and two tables of the same size move exactly the entries whose
/// owner's name differs. A [`Partition`] over a [`KeySpace::Table`].
#[derive(Clone, Debug)]
pub struct ModTable(Partition);

impl ModTable {
    /// The table of a router whose [`Router::arcs`] are over a [`KeySpace::Table`]; `None` for
    /// the others. O(M).
    pub fn of<R: Router + ?Sized>(router: &R) -> Option<ModTable> {
        let p = Partition::of(router)?;
        matches!(p.arcs.space(), KeySpace::Table { .. }).then_some(ModTable(p))
    }

    /// A table of owners (indices into `nodes`).
    ///
    /// # Panics
    /// If `table` is empty or an owner is out of range.
    pub fn new(nodes: NodeSet, table: Vec<u32>) -> ModTable {
        assert!(table.iter().all(|&o| (o as usize) < nodes.len()), "ModTable::new: owner out of range");
        let arcs = Arcs::from_table(&table, Placement::hashed(KeyHasher::default())).expect("ModTable::new: entries");
        ModTable(Partition { nodes, arcs })
    }

    /// The node set the owners index into.
    pub fn nodes(&self) -> &NodeSet {
        self.0.nodes()
    }

    /// Each node's exact share of uniformly hashed keys. O(M).
    pub fn loads(&self) -> Vec<f64> {
        self.0.loads()
    }

    /// Exactly how keys move between two tables of the same size and key hash, matching nodes
    /// by name. `None` when they differ (then keys must be sampled).
    pub fn movement(&self, other: &ModTable) -> Option<Movement> {
        self.0.try_movement(&other.0)
    }
}

/// Exactly how keys move between two routers' structures, matching nodes by name: `None` unless
/// both have [`Router::arcs`] that place keys alike. O(P + Q).
pub(crate) fn exact_movement(before: &dyn Router, after: &dyn Router) -> Option<Movement> {
    let (a, b) = (before.arcs()?, after.arcs()?);
    exact_movement_of((&a, before.nodes()), (&b, after.nodes()))
}

/// The movement between two arcs over their node sets, by name; `None` unless they place keys
/// alike. Walks the common refinement of both ([`Arcs::overlay`]) in integers. O(P + Q).
fn exact_movement_of(before: (&Arcs<'_>, &NodeSet), after: (&Arcs<'_>, &NodeSet)) -> Option<Movement> {
    let ((a, a_nodes), (b, b_nodes)) = (before, after);
    if !a.places_keys_like(b) {
        return None;
    }
    let to_a: Vec<Option<u32>> = b_nodes.iter().map(|(_, n)| a_nodes.id_of(n.name()).map(|id| id.as_u32())).collect();
    let gone: Vec<bool> = a_nodes.iter().map(|(_, n)| b_nodes.id_of(n.name()).is_none()).collect();
    let (mut moved, mut lost) = (0u128, 0u128);
    let mut lost_to = vec![0u128; b_nodes.len()];
    a.overlay(b, |start, end, oa, ob| {
        let len = u128::from(end) - u128::from(start) + 1;
        if to_a[ob as usize] != Some(oa) {
            moved += len;
        }
        if gone[oa as usize] {
            lost += len;
            lost_to[ob as usize] += len;
        }
    })
    .ok()?;
    let max_taken = lost_to.iter().copied().max().unwrap_or(0);
    Some(Movement {
        moved: moved as f64 / a.space().size() as f64,
        ideal: ideal_movement(&shares_by_name(a_nodes), &shares_by_name(b_nodes)),
        failure_spread: (lost > 0).then(|| max_taken as f64 / lost as f64),
    })
}

/// The fraction of keys that moved between two routers, against the least any algorithm could
/// move, and how a removed node's keys spread.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Movement {
    /// Fraction of all keys whose owner (by name) changed.
    pub moved: f64,
    /// The minimum fraction any router must move: the total-variation distance between the
    /// fair shares before and after (`1/(N+1)` for one added node, `1/N` for one removed).
    pub ideal: f64,
    /// When nodes were removed: the largest fraction of their keys that one survivor took
    /// (`1/(N−1)` is a perfect spread, 1.0 means one neighbour takes everything).
    pub failure_spread: Option<f64>,
}

impl Movement {
    /// `moved / ideal` (1.0 is optimal); infinity when nothing should move but something did.
    pub fn ratio(&self) -> f64 {
        if self.ideal > 0.0 {
            self.moved / self.ideal
        } else if self.moved > 0.0 {
            f64::INFINITY
        } else {
            1.0
        }
    }
}

/// Fair shares (weight over total weight) by node name.
pub(crate) fn shares_by_name(nodes: &NodeSet) -> Vec<(String, f64)> {
    let total = nodes.total_weight();
    nodes.iter().map(|(_, n)| (n.name().to_string(), n.weight() / total)).collect()
}

/// Σ max(0, after − before) over node names: the key mass that must change owner.
pub(crate) fn ideal_movement(before: &[(String, f64)], after: &[(String, f64)]) -> f64 {
    let old: std::collections::HashMap<&str, f64> = before.iter().map(|(n, s)| (n.as_str(), *s)).collect();
    after.iter().map(|(n, s)| (s - old.get(n.as_str()).copied().unwrap_or(0.0)).max(0.0)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&str]) -> NodeSet {
        NodeSet::from_names(names).unwrap()
    }

    #[test]
    fn hand_built_arcs_give_known_loads() {
        // q is a quarter of the circle: a owns (3q, 2^64) ∪ [0, q], half; b owns (q, 2q]; c (2q, 3q].
        let q = 1u64 << 62;
        let p = Partition::new(set(&["a", "b", "c"]), vec![q, 2 * q, 3 * q], vec![0, 1, 2]);
        assert_eq!(p.loads(), vec![0.5, 0.25, 0.25]);
        let single = Partition::new(set(&["a"]), vec![12345], vec![0]);
        assert_eq!(single.loads(), vec![1.0]);
    }

    #[test]
    fn overlay_counts_moved_arcs_by_name() {
        let q = 1u64 << 62;
        let before = Partition::new(set(&["a", "b"]), vec![q, 3 * q], vec![0, 1]);
        // Same names in another order, plus c taking (q, 2q] from b.
        let after = Partition::new(set(&["c", "b", "a"]), vec![q, 2 * q, 3 * q], vec![2, 0, 1]);
        let m = before.movement(&after);
        assert_eq!(m.moved, 0.25);
        assert!((m.ideal - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(m.failure_spread, None);
        // Removing b: its half goes entirely to a.
        let without_b = Partition::new(set(&["a"]), vec![q], vec![0]);
        let r = before.movement(&without_b);
        assert_eq!((r.moved, r.ideal, r.failure_spread), (0.5, 0.5, Some(1.0)));
    }

    #[test]
    fn mod_table_loads_and_movement() {
        let t = ModTable::new(set(&["a", "b"]), vec![0, 0, 1, 0, 1]);
        assert_eq!(t.loads(), vec![0.6, 0.4]);
        let u = ModTable::new(set(&["b", "a", "c"]), vec![1, 1, 0, 2, 0]);
        let m = t.movement(&u).unwrap();
        assert!((m.moved - 0.2).abs() < 1e-12, "{m:?}");
        assert!(t.movement(&ModTable::new(set(&["a"]), vec![0])).is_none());
    }

    #[test]
    fn tables_and_32_bit_circles_come_from_the_kernel() {
        let m = hashroute::Maglev::builder().table_size(101).nodes(["a", "b", "c"]).build().unwrap();
        let t = ModTable::of(&m).unwrap();
        let counts: Vec<f64> =
            (0..3u32).map(|i| m.table().iter().filter(|&&o| o == i).count() as f64 / 101.0).collect();
        assert_eq!(t.loads(), counts);
        assert!(ModTable::of(&Ring::from_names(["a"]).unwrap()).is_none());
        let n = hashroute::Nginx::from_names(["a:1", "b:2"]).unwrap();
        let p = Partition::of(&n).unwrap();
        assert_eq!(p.arcs().space(), KeySpace::Hash32);
        assert!((p.loads().iter().sum::<f64>() - 1.0).abs() < 1e-12);
        // Two routers that place keys differently have no exact movement.
        assert!(p.try_movement(&Partition::from_ring(&Ring::from_names(["a:1"]).unwrap())).is_none());
    }

    #[test]
    fn ring_loads_match_sampled_routes() {
        use hashroute::Router;
        let ring = Ring::builder().vnodes(4).nodes(["x", "y", "z"]).build().unwrap();
        let exact = Partition::from_ring(&ring).loads();
        let mut counts = [0f64; 3];
        let n = 200_000u64;
        let mut rng = crate::rng::SplitMix64::new(3);
        for _ in 0..n {
            counts[ring.route_hash(rng.next_u64()).unwrap().index()] += 1.0;
        }
        for i in 0..3 {
            // Binomial noise at 200k samples is below 0.3 percentage points (3 sigma).
            assert!((counts[i] / n as f64 - exact[i]).abs() < 0.004, "{i}: {} vs {}", counts[i], exact[i]);
        }
    }
}

#[cfg(test)]
mod partition_tests {
    use super::*;
    use hashroute::{AnyRouter, EnvoyRing, Haproxy, Maglev, Nginx, Node};

    /// The analysis's exact movement is the kernel's exact migration plan: one engine.
    #[test]
    fn movement_is_the_kernels_plan() {
        let names = ["10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80", "10.0.0.4:80"];
        let routers: [AnyRouter; 4] = [
            Nginx::from_names(names).unwrap().into(),
            Haproxy::from_names(names).unwrap().into(),
            EnvoyRing::from_names(names).unwrap().into(),
            Maglev::builder().table_size(1009).nodes(names).build().unwrap().into(),
        ];
        for a in routers {
            let b = a.with_node(Node::new("10.0.0.5:80")).unwrap();
            let plan = hashroute::migration::plan(&a, &b).unwrap();
            assert!(plan.is_exact(), "{}", a.algorithm());
            let m = crate::movement(&a, &b, 1).unwrap();
            assert_eq!(m.moved, plan.moved_fraction(), "{}", a.algorithm());
            let loads = Partition::of(&b).unwrap().loads();
            let after: Vec<f64> = b.nodes().iter().map(|(_, n)| plan.share(n.name()).unwrap().after).collect();
            assert_eq!(loads, after, "{}", a.algorithm());
        }
    }

    /// Each node's exact arc load equals the share of uniformly random hashes it is routed
    /// (within sampling noise), for every proxy ring.
    #[test]
    fn partitions_agree_with_routes() {
        let nodes = NodeSet::new((0..7).map(|i| Node::new(format!("10.0.0.{i}:80")).with_weight(f64::from(i % 3 + 1))))
            .unwrap();
        let h = Haproxy::builder().hasher(KeyHasher::Sdbm).node_set(nodes.clone()).build().unwrap();
        let n = Nginx::builder().node_set(nodes.clone()).build().unwrap();
        let e = EnvoyRing::builder().min_ring_size(64).node_set(nodes.clone()).build().unwrap();
        const SAMPLES: u32 = 400_000;
        let mut counts = [[0f64; 7]; 3];
        let mut x = 0x1234_5678u64;
        for _ in 0..SAMPLES {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            counts[0][h.route_hash32(z as u32).index()] += 1.0;
            counts[1][n.route_hash32(z as u32).index()] += 1.0;
            counts[2][e.route_hash(z).unwrap().index()] += 1.0;
        }
        let routers: [hashroute::AnyRouter; 3] = [h.clone().into(), n.clone().into(), e.clone().into()];
        for (r, counts) in routers.iter().zip(&counts) {
            let loads = Partition::of(r).unwrap().loads();
            let total: f64 = loads.iter().sum();
            for (i, (&load, &c)) in loads.iter().zip(counts).enumerate() {
                let sampled = c / f64::from(SAMPLES);
                assert!(
                    (load / total - sampled).abs() < 0.004,
                    "{} node {i}: exact {load} sampled {sampled}",
                    r.algorithm()
                );
            }
        }
    }
}

//! Exact load and key-movement arithmetic for routers that cut the hash circle into arcs.
//!
//! A ring-like router (ring, Ketama, Redis slots) owns a key when the key's hash falls in one
//! of its arcs, so with uniformly distributed key hashes a node's expected load is exactly the
//! total length of its arcs, and the fraction of keys that move between two routers is exactly
//! the length of the circle where their owners' *names* differ. Computing these from the points
//! replaces sampling noise with exact answers and costs O(points) instead of O(keys).

use hashroute::arcs::{Arcs, Placement};
use hashroute::migration::KeySpace;
use hashroute::{AnyRouter, KeyHasher, NodeSet, Ring, Router};

/// The circle `[0, 2^64)` as a sorted list of points; point `i` owns `(points[i-1], points[i]]`
/// and point 0 also owns everything after the last point (the wrap), exactly like
/// [`Ring::point_index`]. Equal points: the first one owns the arc, the others own nothing.
#[derive(Clone, Debug)]
pub struct Partition {
    nodes: NodeSet,
    points: Vec<u64>,
    owners: Vec<u32>,
}

/// The circle's length, 2^64, as a float.
const CIRCLE: f64 = 18_446_744_073_709_551_616.0;

impl Partition {
    /// A partition from sorted `points` and their `owners` (indices into `nodes`).
    ///
    /// # Panics
    /// If `points` is empty, the lengths differ, `points` is not sorted, or an owner is out of
    /// range — the callers build these from routers that guarantee all four.
    pub fn new(nodes: NodeSet, points: Vec<u64>, owners: Vec<u32>) -> Partition {
        assert!(!points.is_empty(), "Partition::new: no points");
        assert_eq!(points.len(), owners.len(), "Partition::new: one owner per point");
        assert!(points.windows(2).all(|w| w[0] <= w[1]), "Partition::new: points must be sorted");
        assert!(owners.iter().all(|&o| (o as usize) < nodes.len()), "Partition::new: owner out of range");
        Partition { nodes, points, owners }
    }

    /// The exact partition of a [`Ring`] (copies its points: 12 bytes per point).
    pub fn from_ring(ring: &Ring) -> Partition {
        Partition::new(ring.nodes().clone(), ring.points().to_vec(), ring.owners().to_vec())
    }

    /// A router's [`Arcs`] on the 64-bit circle: 32-bit positions `p` own up to
    /// `p · 2^32 + 2^32 − 1`, slot `s` of 16384 owns the `s`-th 1/16384 of the circle.
    pub fn from_arcs(nodes: NodeSet, arcs: &Arcs<'_>) -> Partition {
        let scale = |p: u64| match arcs.space() {
            KeySpace::Hash32 => (p << 32) | 0xFFFF_FFFF,
            KeySpace::Slots => ((p + 1) << 50).wrapping_sub(1),
            _ => p,
        };
        Partition::new(nodes, arcs.points().iter().map(|&p| scale(p)).collect(), arcs.owners().to_vec())
    }

    /// A partition from points on a 32-bit circle (Ketama). With `strict == false` a point `p`
    /// owns the 32-bit key hashes `h <= p` (libketama), which on the 64-bit circle is everything
    /// up to `p · 2^32 + 2^32 − 1`; with `strict == true` it owns `h < p` (uhashring, Python
    /// hash_ring), i.e. up to `p · 2^32 − 1` (a point at 0 then owns only what wraps to it, which
    /// the mapping rounds to one 2^-64 sliver).
    ///
    /// # Panics
    /// As [`Partition::new`].
    pub fn from_u32_points(nodes: NodeSet, points: &[u32], owners: Vec<u32>, strict: bool) -> Partition {
        let points = points
            .iter()
            .map(|&p| if strict { (u64::from(p) << 32).saturating_sub(1) } else { (u64::from(p) << 32) | 0xFFFF_FFFF })
            .collect();
        Partition::new(nodes, points, owners)
    }

    /// A partition from a slot table (Redis Cluster's 16384 slots): slot `s` of `S` owns the
    /// `s`-th `1/S` of the circle. `S` must be a power of two so the arcs are exact.
    ///
    /// # Panics
    /// If `slot_owners` is empty or its length is not a power of two; as [`Partition::new`].
    pub fn from_slots(nodes: NodeSet, slot_owners: &[u32]) -> Partition {
        let s = slot_owners.len();
        assert!(s.is_power_of_two(), "Partition::from_slots: slot count must be a power of two");
        let shift = 64 - s.trailing_zeros();
        let points =
            (0..s as u64).map(|i| if shift == 64 { u64::MAX } else { ((i + 1) << shift).wrapping_sub(1) }).collect();
        Partition::new(nodes, points, slot_owners.to_vec())
    }

    /// The node set the owners index into.
    pub fn nodes(&self) -> &NodeSet {
        &self.nodes
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Always `false`: a partition has at least one point.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Length of the arc owned by point `i`, out of 2^64.
    #[inline]
    fn arc(&self, i: usize) -> u128 {
        if i == 0 {
            (1u128 << 64) + u128::from(self.points[0]) - u128::from(self.points[self.points.len() - 1])
        } else {
            u128::from(self.points[i] - self.points[i - 1])
        }
    }

    /// Each node's exact share of uniformly hashed keys (fractions summing to 1). O(points).
    pub fn loads(&self) -> Vec<f64> {
        let mut acc = vec![0u128; self.nodes.len()];
        for i in 0..self.points.len() {
            acc[self.owners[i] as usize] += self.arc(i);
        }
        acc.into_iter().map(|a| a as f64 / CIRCLE).collect()
    }

    /// Visits the common refinement of two partitions: every maximal arc on which both have a
    /// single owner, as `(length, owner in self, owner in other)` ([`overlay`]; the arc that
    /// wraps past 2^64 comes as two pieces). O(P + Q).
    fn overlay(&self, other: &Partition, mut f: impl FnMut(u128, u32, u32)) {
        fn arcs(p: &Partition) -> Arcs<'_> {
            let placement = Placement::hashed(KeyHasher::default());
            Arcs::new(KeySpace::Hash64, &p.points[..], &p.owners[..], placement).expect("a partition is valid arcs")
        }
        let visit = |start: u64, end: u64, oa, ob| f(u128::from(end) - u128::from(start) + 1, oa, ob);
        arcs(self).overlay(&arcs(other), visit).expect("both on the 64-bit circle");
    }

    /// Exactly how keys move from `self` to `other`, matching nodes by **name** (ids differ
    /// between node sets). O(P + Q).
    pub fn movement(&self, other: &Partition) -> Movement {
        let to_self: Vec<Option<u32>> =
            other.nodes.iter().map(|(_, n)| self.nodes.id_of(n.name()).map(|id| id.as_u32())).collect();
        let mut moved = 0u128;
        let mut lost_to = vec![0u128; other.nodes.len()];
        let mut lost = 0u128;
        let gone: Vec<bool> = self.nodes.iter().map(|(_, n)| other.nodes.id_of(n.name()).is_none()).collect();
        self.overlay(other, |len, oa, ob| {
            if to_self[ob as usize] != Some(oa) {
                moved += len;
            }
            if gone[oa as usize] {
                lost += len;
                lost_to[ob as usize] += len;
            }
        });
        let max_taken = lost_to.iter().copied().max().unwrap_or(0);
        Movement {
            moved: moved as f64 / CIRCLE,
            ideal: ideal_movement(&shares_by_name(&self.nodes), &shares_by_name(&other.nodes)),
            failure_spread: if lost > 0 { Some(max_taken as f64 / lost as f64) } else { None },
        }
    }
}

/// A lookup table indexed by `hash mod M` (Maglev): entry `i` owns the key hashes `≡ i (mod M)`,
/// so a node's load is its entry count over `M` (the `2^64 mod M` bias is below `M / 2^64`) and
/// two tables of the same size move exactly the entries whose owner's name differs.
#[derive(Clone, Debug)]
pub struct ModTable {
    nodes: NodeSet,
    table: Vec<u32>,
}

impl ModTable {
    /// A table of owners (indices into `nodes`).
    ///
    /// # Panics
    /// If `table` is empty or an owner is out of range.
    pub fn new(nodes: NodeSet, table: Vec<u32>) -> ModTable {
        assert!(!table.is_empty(), "ModTable::new: empty table");
        assert!(table.iter().all(|&o| (o as usize) < nodes.len()), "ModTable::new: owner out of range");
        ModTable { nodes, table }
    }

    /// The node set the owners index into.
    pub fn nodes(&self) -> &NodeSet {
        &self.nodes
    }

    /// Each node's exact share of uniformly hashed keys. O(M).
    pub fn loads(&self) -> Vec<f64> {
        let mut counts = vec![0u64; self.nodes.len()];
        for &o in &self.table {
            counts[o as usize] += 1;
        }
        counts.into_iter().map(|c| c as f64 / self.table.len() as f64).collect()
    }

    /// Exactly how keys move between two tables of the same size, matching nodes by name.
    /// `None` when the sizes differ (then keys must be sampled).
    pub fn movement(&self, other: &ModTable) -> Option<Movement> {
        if self.table.len() != other.table.len() {
            return None;
        }
        let to_self: Vec<Option<u32>> =
            other.nodes.iter().map(|(_, n)| self.nodes.id_of(n.name()).map(|id| id.as_u32())).collect();
        let gone: Vec<bool> = self.nodes.iter().map(|(_, n)| other.nodes.id_of(n.name()).is_none()).collect();
        let (mut moved, mut lost) = (0u64, 0u64);
        let mut lost_to = vec![0u64; other.nodes.len()];
        for (&a, &b) in self.table.iter().zip(&other.table) {
            if to_self[b as usize] != Some(a) {
                moved += 1;
            }
            if gone[a as usize] {
                lost += 1;
                lost_to[b as usize] += 1;
            }
        }
        Some(Movement {
            moved: moved as f64 / self.table.len() as f64,
            ideal: ideal_movement(&shares_by_name(&self.nodes), &shares_by_name(&other.nodes)),
            failure_spread: (lost > 0).then(|| *lost_to.iter().max().unwrap_or(&0) as f64 / lost as f64),
        })
    }
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

/// The exact arc partition of the proxy rings, for uniformly distributed key hashes: nginx and
/// Envoy own the arc up to each point; HAProxy's nearest-node rule makes node i own the hashes
/// from just past the midpoint before it up to the midpoint after it,
/// `p_i + ⌊(p_{i+1} − p_i) / 2⌋` (ties to the earlier node, as the lookup breaks them).
/// `None` for other routers.
pub(crate) fn of_proxy(router: &AnyRouter) -> Option<Partition> {
    let r = match router {
        AnyRouter::Nginx(r) => {
            return Some(Partition::from_u32_points(r.nodes().clone(), r.points(), r.owners().to_vec(), false))
        }
        AnyRouter::EnvoyRing(r) => {
            return Some(Partition::new(r.nodes().clone(), r.points().to_vec(), r.owners().to_vec()))
        }
        AnyRouter::Haproxy(r) => r,
        _ => return None,
    };
    let (points, owners) = (r.points(), r.owners());
    let len = points.len();
    let mut pairs: Vec<(u32, u32)> = (0..len)
        .map(|i| {
            let gap = points[(i + 1) % len].wrapping_sub(points[i]);
            // A single node (gap 0 to itself) owns the whole circle.
            let gap = if len == 1 { u32::MAX } else { gap };
            (points[i].wrapping_add(gap / 2), owners[i])
        })
        .collect();
    pairs.sort_by_key(|&(b, _)| b);
    let (bounds, owners): (Vec<u32>, Vec<u32>) = pairs.into_iter().unzip();
    Some(Partition::from_u32_points(r.nodes().clone(), &bounds, owners, false))
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
    fn slots_and_u32_points_scale_exactly() {
        let s = Partition::from_slots(set(&["a", "b"]), &[0, 0, 0, 1]);
        assert_eq!(s.loads(), vec![0.75, 0.25]);
        let k = Partition::from_u32_points(set(&["a", "b"]), &[u32::MAX / 2, u32::MAX], vec![0, 1], false);
        let l = k.loads();
        assert!((l[0] - 0.5).abs() < 1e-9 && (l[1] - 0.5).abs() < 1e-9);
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
    use hashroute::{EnvoyRing, Haproxy, Nginx, Node};

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
        let routers: [AnyRouter; 3] = [h.clone().into(), n.clone().into(), e.clone().into()];
        for (r, counts) in routers.iter().zip(&counts) {
            let loads = of_proxy(r).unwrap().loads();
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

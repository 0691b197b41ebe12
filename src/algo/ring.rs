//! A consistent-hash ring over a sorted array of points.
//!
//! Each node gets V virtual nodes (points) on a 64-bit circle; a key belongs to the first point
//! at or after its hash, wrapping to the first point. V = 1 is the naive ring (cheap, badly
//! balanced); V = 100-200 balances within a few percent at the cost of V points per node.
//!
//! Layout: struct-of-arrays, `points: Vec<u64>` sorted ascending and `owners: Vec<u32>` beside
//! it, 12 bytes per point. Never a tree map: the sorted array is what the search kernels run on.

use std::ops::ControlFlow;

use crate::algo::Visited;
use crate::error::{Error, Result};
use crate::hash::{Hasher, KeyHasher};
use crate::node::{Node, NodeId, NodeSet};
use crate::router::Router;

/// The largest vnode count per (weight-1) node a ring accepts.
pub const MAX_VNODES: u32 = 1 << 20;
/// The largest total number of points a ring accepts (≈ 800 MB of points and owners).
pub const MAX_POINTS: u64 = 1 << 26;
/// The vnode count used when the builder is not given one (Ketama's 160).
pub const DEFAULT_VNODES: u32 = 160;

/// A consistent-hash ring with virtual nodes and weights.
///
/// - **Points**: node `name`'s `i`-th point is `hasher.hash("{name}-{i}")` (the name, a `-`, `i`
///   in decimal). A node of weight `w` gets `max(1, round(V · N · w / Σw))` points, so with equal
///   weights every node has exactly V.
/// - **Equal points** are ordered by node name, and the first wins, so the ring's routes do not
///   depend on the order the nodes were given in; [`Ring::collisions`] counts them.
/// - **Cost**: `route` = one hash + one binary search over `V·N` points, O(log(V·N)). Memory:
///   12 bytes per point plus the node set. Build: O(P log P) for P points.
#[derive(Clone, Debug)]
pub struct Ring {
    nodes: NodeSet,
    hasher: Hasher,
    vnodes: u32,
    points: Vec<u64>,
    owners: Vec<u32>,
    collisions: usize,
}

/// Configures a [`Ring`]. Obtain one from [`Ring::builder`].
#[derive(Clone, Debug, Default)]
#[must_use]
pub struct RingBuilder {
    vnodes: Option<u64>,
    hasher: Hasher,
    nodes: Vec<Node>,
    set: Option<NodeSet>,
}

impl RingBuilder {
    /// Virtual nodes per weight-1 node, 1..=[`MAX_VNODES`] (default [`DEFAULT_VNODES`]).
    pub fn vnodes(mut self, vnodes: u64) -> RingBuilder {
        self.vnodes = Some(vnodes);
        self
    }

    /// The key and point hasher (default xxh3, seed 0).
    pub fn hasher(mut self, hasher: Hasher) -> RingBuilder {
        self.hasher = hasher;
        self
    }

    /// Adds weight-1 nodes by name.
    pub fn nodes<I>(mut self, names: I) -> RingBuilder
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        self.nodes.extend(names.into_iter().map(|n| Node::new(n.as_ref())));
        self
    }

    /// Adds one node (with its weight and labels).
    pub fn node(mut self, node: Node) -> RingBuilder {
        self.nodes.push(node);
        self
    }

    /// Adds `(name, weight)` pairs.
    pub fn weighted_nodes<I, S>(mut self, nodes: I) -> RingBuilder
    where
        I: IntoIterator<Item = (S, f64)>,
        S: AsRef<str>,
    {
        self.nodes.extend(nodes.into_iter().map(|(n, w)| Node::new(n.as_ref()).with_weight(w)));
        self
    }

    /// Uses an already validated node set (replacing any nodes added so far).
    pub fn node_set(mut self, set: NodeSet) -> RingBuilder {
        self.set = Some(set);
        self.nodes.clear();
        self
    }

    /// Builds the ring.
    ///
    /// # Errors
    /// The [`NodeSet::new`] errors, [`Error::InvalidVnodes`], [`Error::TooManyPoints`].
    pub fn build(self) -> Result<Ring> {
        let nodes = match self.set {
            Some(set) => set,
            None => NodeSet::new(self.nodes)?,
        };
        let vnodes = self.vnodes.unwrap_or(u64::from(DEFAULT_VNODES));
        if vnodes == 0 || vnodes > u64::from(MAX_VNODES) {
            return Err(Error::InvalidVnodes { vnodes, max: MAX_VNODES });
        }
        Ring::from_parts(nodes, self.hasher, vnodes as u32)
    }
}

impl Ring {
    /// A builder: `Ring::builder().vnodes(160).nodes(names).build()`.
    pub fn builder() -> RingBuilder {
        RingBuilder::default()
    }

    fn from_parts(nodes: NodeSet, hasher: Hasher, vnodes: u32) -> Result<Ring> {
        let counts = point_counts(&nodes, vnodes)?;
        let total: usize = counts.iter().map(|&c| c as usize).sum();
        // Rank of each node's name: equal points are ordered by name, not by input order.
        let mut by_name: Vec<u32> = (0..nodes.len() as u32).collect();
        by_name.sort_unstable_by(|&a, &b| nodes.name(NodeId::from_index(a)).cmp(nodes.name(NodeId::from_index(b))));
        let mut rank = vec![0u32; nodes.len()];
        for (r, &id) in by_name.iter().enumerate() {
            rank[id as usize] = r as u32;
        }
        let mut pairs: Vec<(u64, u32)> = Vec::with_capacity(total);
        let mut buf = Vec::with_capacity(64);
        for (id, node) in nodes.iter() {
            for i in 0..counts[id.index()] {
                pairs.push((point_hash(&hasher, &mut buf, node.name(), i), rank[id.index()]));
            }
        }
        pairs.sort_unstable();
        let mut collisions = 0;
        let mut points = Vec::with_capacity(total);
        let mut owners = Vec::with_capacity(total);
        for (i, &(p, r)) in pairs.iter().enumerate() {
            if i > 0 && pairs[i - 1].0 == p {
                collisions += 1;
            }
            points.push(p);
            owners.push(by_name[r as usize]);
        }
        Ok(Ring { nodes, hasher, vnodes, points, owners, collisions })
    }

    /// Virtual nodes per weight-1 node.
    pub fn vnodes(&self) -> u32 {
        self.vnodes
    }

    /// The hasher in use (for keys and points).
    pub fn hasher(&self) -> Hasher {
        self.hasher
    }

    /// The sorted points.
    pub fn points(&self) -> &[u64] {
        &self.points
    }

    /// The owner (node index) of each point, parallel to [`Ring::points`].
    pub fn owners(&self) -> &[u32] {
        &self.owners
    }

    /// How many points equal the point before them (hash collisions between vnodes). The later
    /// of two equal points never owns a key.
    pub fn collisions(&self) -> usize {
        self.collisions
    }

    /// Index of the point that owns `hash`: the first point `>= hash`, wrapping to 0.
    #[inline]
    pub fn point_index(&self, hash: u64) -> usize {
        let i = self.points.partition_point(|&p| p < hash);
        if i == self.points.len() {
            0
        } else {
            i
        }
    }

    /// A new ring with `node` added (same vnodes and hasher).
    ///
    /// # Errors
    /// As [`NodeSet::with_node`] and [`RingBuilder::build`].
    pub fn with_node(&self, node: Node) -> Result<Ring> {
        Ring::from_parts(self.nodes.with_node(node)?, self.hasher, self.vnodes)
    }

    /// A new ring without the node named `name`.
    ///
    /// # Errors
    /// [`Error::UnknownNode`], [`Error::NoNodes`] for the last node.
    pub fn without_node(&self, name: &str) -> Result<Ring> {
        Ring::from_parts(self.nodes.without_node(name)?, self.hasher, self.vnodes)
    }

    /// A new ring with node `name`'s weight changed.
    ///
    /// # Errors
    /// [`Error::UnknownNode`], [`Error::InvalidWeight`], [`Error::TooManyPoints`].
    pub fn with_weight(&self, name: &str, weight: f64) -> Result<Ring> {
        Ring::from_parts(self.nodes.with_weight(name, weight)?, self.hasher, self.vnodes)
    }
}

/// Points per node: `max(1, round(V · N · w / Σw))`, exactly V for equal weights.
fn point_counts(nodes: &NodeSet, vnodes: u32) -> Result<Vec<u32>> {
    let n = nodes.len() as f64;
    let total_weight = nodes.total_weight();
    let mut counts = Vec::with_capacity(nodes.len());
    let mut total = 0u64;
    for (_, node) in nodes.iter() {
        let c = if nodes.all_unit_weight() {
            f64::from(vnodes)
        } else {
            (f64::from(vnodes) * n * node.weight() / total_weight).round().max(1.0)
        };
        if c > MAX_POINTS as f64 {
            return Err(Error::TooManyPoints { points: c as u64, max: MAX_POINTS });
        }
        total += c as u64;
        counts.push(c as u32);
    }
    if total > MAX_POINTS {
        return Err(Error::TooManyPoints { points: total, max: MAX_POINTS });
    }
    Ok(counts)
}

/// `hasher.hash("{name}-{i}")`, formatting into a reused buffer.
#[inline]
fn point_hash(hasher: &Hasher, buf: &mut Vec<u8>, name: &str, i: u32) -> u64 {
    use std::io::Write;
    buf.clear();
    buf.extend_from_slice(name.as_bytes());
    // Writing to a Vec cannot fail.
    let _ = write!(buf, "-{i}");
    hasher.hash(buf)
}

impl Router for Ring {
    fn algorithm(&self) -> &'static str {
        "ring"
    }
    fn nodes(&self) -> &NodeSet {
        &self.nodes
    }
    #[inline]
    fn route(&self, key: &[u8]) -> NodeId {
        NodeId::from_index(self.owners[self.point_index(self.hasher.hash(key))])
    }
    fn route_hash(&self, hash: u64) -> Result<NodeId> {
        Ok(NodeId::from_index(self.owners[self.point_index(hash)]))
    }
    /// Dynamo's preference list: walk clockwise from the key's point, skipping nodes already
    /// produced.
    fn preference(&self, key: &[u8], visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) -> Result<()> {
        walk_clockwise(&self.owners, self.point_index(self.hasher.hash(key)), self.nodes.len(), visit);
        Ok(())
    }
    fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Ring>() - std::mem::size_of::<NodeSet>()
            + self.points.capacity() * 8
            + self.owners.capacity() * 4
            + self.nodes.memory_bytes()
    }
}

/// Visits distinct owners clockwise from `start` until every node is produced or `visit` breaks.
pub(crate) fn walk_clockwise(
    owners: &[u32],
    start: usize,
    node_count: usize,
    visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>,
) {
    let mut seen = Visited::new(node_count);
    let mut produced = 0;
    let len = owners.len();
    for step in 0..len {
        let id = NodeId::from_index(owners[(start + step) % len]);
        if seen.insert(id) {
            produced += 1;
            if visit(id).is_break() || produced == node_count {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(names: &[&str], v: u64) -> Ring {
        Ring::builder().vnodes(v).nodes(names).build().unwrap()
    }

    #[test]
    fn rejects_bad_config() {
        assert_eq!(
            Ring::builder().vnodes(0).nodes(["a"]).build().unwrap_err(),
            Error::InvalidVnodes { vnodes: 0, max: MAX_VNODES }
        );
        assert!(matches!(
            Ring::builder().vnodes(u64::from(MAX_VNODES) + 1).nodes(["a"]).build(),
            Err(Error::InvalidVnodes { .. })
        ));
        assert_eq!(Ring::builder().nodes(Vec::<&str>::new()).build().unwrap_err(), Error::NoNodes);
        assert!(matches!(
            Ring::builder().vnodes(1 << 20).nodes((0..100).map(|i| i.to_string())).build(),
            Err(Error::TooManyPoints { .. })
        ));
    }

    #[test]
    fn wraps_and_counts_points() {
        let r = ring(&["a", "b", "c"], 10);
        assert_eq!(r.points().len(), 30);
        assert!(r.points().windows(2).all(|w| w[0] <= w[1]));
        let last = *r.points().last().unwrap();
        if last < u64::MAX {
            assert_eq!(r.route_hash(last + 1).unwrap(), r.route_hash(0).unwrap());
        }
        assert_eq!(r.route_hash(u64::MAX).unwrap(), NodeId::from_index(r.owners()[r.point_index(u64::MAX)]));
        assert_eq!(r.point_index(r.points()[5]), r.points().partition_point(|&p| p < r.points()[5]));
    }

    #[test]
    fn weights_scale_point_counts() {
        let r = Ring::builder().vnodes(100).weighted_nodes([("a", 1.0), ("b", 3.0)]).build().unwrap();
        let a = r.owners().iter().filter(|&&o| o == 0).count();
        assert_eq!((a, r.points().len() - a), (50, 150));
    }

    #[test]
    fn order_independent() {
        let a = ring(&["x", "y", "z", "w"], 50);
        let b = ring(&["w", "z", "y", "x"], 50);
        for k in 0..2000u32 {
            let key = k.to_le_bytes();
            assert_eq!(a.node_name(a.route(&key)), b.node_name(b.route(&key)));
        }
    }

    #[test]
    fn replicas_are_distinct() {
        let r = ring(&["a", "b", "c", "d"], 8);
        let reps = r.replicas(b"k", 4).unwrap();
        let mut s = reps.clone();
        s.sort();
        s.dedup();
        assert_eq!(s.len(), 4);
        assert_eq!(reps[0], r.route(b"k"));
        assert_eq!(r.replicas(b"k", 5).unwrap_err(), Error::TooManyReplicas { requested: 5, available: 4 });
    }
}

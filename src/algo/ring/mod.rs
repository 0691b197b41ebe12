//! A consistent-hash ring over a sorted array of points.
//!
//! Each node gets V virtual nodes (points) on a 64-bit circle; a key belongs to the first point
//! at or after its hash, wrapping to the first point. V = 1 is the naive ring (cheap, badly
//! balanced); V = 100-200 balances within a few percent at the cost of V points per node.
//!
//! Layout: struct-of-arrays, `points: Vec<u64>` sorted ascending and `owners: Vec<u32>` beside
//! it, 12 bytes per point, plus a small search index on top of the points chosen by size
//! ([`Layout`]): ≤ 12.75 bytes per point in total by default. Never a tree map: the sorted array
//! is what the search kernels ([`crate::search`]) run on.

//!
//! The sorted arrays and their search live in [`Circle`] (shared with Ketama and multi-probe);
//! this module is the router: [`build`] makes the points, [`rebuild`] reuses them across
//! membership changes.

mod build;
mod rebuild;

use std::ops::ControlFlow;

use crate::algo::builder::Configure;
use crate::algorithm::Algorithm;
use crate::arcs::{Arcs, Placement};
pub(crate) use crate::circle::Layout;
use crate::circle::{Circle, Index};
use crate::error::{Error, Result};
use crate::hash::KeyHasher;
use crate::migration::KeySpace;
use crate::node::{NodeId, NodeSet};
use crate::router::Router;
use crate::Builder;
pub(crate) use build::radix_sort;
use build::{generate_sorted, point_counts};

pub(crate) use crate::circle::MAX_POINTS;
pub(crate) const MAX_VNODES: u32 = 1 << 20;
pub(crate) const DEFAULT_VNODES: u32 = 160;

/// A consistent-hash ring with virtual nodes and weights.
///
/// - **Points**: node `name`'s `i`-th point is `hasher.hash("{name}-{i}")` (the name, a `-`, `i`
///   in decimal). A node of weight `w` gets `max(1, round(V · w))` points: weight 1 is the
///   unit (V points), so equal weights of 1 give every node exactly V, and a node's points never
///   depend on the other members: a join, a leave or a weight change moves keys only to or from
///   that node. Weights are therefore absolute (2.0 means twice a weight-1 node's points), and
///   `V · Σw` points must fit under the ring's cap.
/// - **Equal points** are ordered by node name, and the first wins, so the ring's routes do not
///   depend on the order the nodes were given in; [`Ring::collisions`] counts them.
/// - **Cost**: `route` = one hash + one search over `V·N` points, O(log(V·N)) (see [`Layout`]);
///   `route_batch` interleaves the searches of many keys. Memory: 12 bytes per point plus the
///   layout's index (≤ 0.75 bytes per point by default) plus the node set. Build: O(P) radix sort
///   for P points; adding or removing a node merges into the existing arrays in O(P).
#[derive(Clone, Debug)]
pub struct Ring {
    nodes: NodeSet,
    params: Params,
    circle: Circle<u64, Index>,
    collisions: usize,
}

/// How a ring was built: what its points depend on (hasher, vnodes) and how it searches and
/// builds them (layout, threads), kept for its incremental rebuilds.
#[derive(Clone, Copy, Debug)]
struct Params {
    hasher: KeyHasher,
    vnodes: u32,
    layout: Layout,
    /// Build on the rayon pool: only when the caller asked ([`Builder::<Ring>::parallel`]).
    parallel: bool,
}

impl Ring {
    /// A builder for this router (see [`Builder`]).
    pub fn builder() -> Builder<Ring> {
        Builder::default()
    }

    /// A router over weight-1 nodes named `names`, with the default options.
    ///
    /// # Errors
    /// As [`NodeSet::from_names`](crate::NodeSet::from_names) and the builder's `build`.
    pub fn from_names<I>(names: I) -> Result<Ring>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        Ring::builder().nodes(names).build()
    }
}

/// The options of [`Builder<Ring>`].
#[derive(Clone, Debug, Default)]
pub struct RingOptions {
    pub(crate) hasher: KeyHasher,
    pub(crate) vnodes: Option<u64>,
    pub(crate) layout: Layout,
    pub(crate) parallel: bool,
}

impl Configure for Ring {
    type Options = RingOptions;
}

impl Builder<Ring> {
    /// The key hasher; default xxh3 with seed 0.
    pub fn hasher(mut self, hasher: KeyHasher) -> Builder<Ring> {
        self.options.hasher = hasher;
        self
    }
}

impl Builder<Ring> {
    /// Virtual nodes per weight-1 node, 1..=[`Ring::MAX_VNODES`] (default
    /// [`Ring::DEFAULT_VNODES`] = 160).
    pub fn vnodes(mut self, vnodes: u64) -> Builder<Ring> {
        self.options.vnodes = Some(vnodes);
        self
    }

    /// The search layout (default [`Layout::Auto`]). Routes do not depend on it.
    pub fn layout(mut self, layout: Layout) -> Builder<Ring> {
        self.options.layout = layout;
        self
    }

    /// Builds big rings (from 64Ki points) on the current rayon pool, here and in the ring's
    /// `with_node` / `without_node` / `with_weight` (default `false`: the caller's thread only).
    /// Routes do not depend on it.
    #[cfg(feature = "parallel")]
    pub fn parallel(mut self, parallel: bool) -> Builder<Ring> {
        self.options.parallel = parallel;
        self
    }

    /// Builds the ring.
    ///
    /// # Errors
    /// The [`NodeSet::new`] errors, [`Error::InvalidVnodes`], [`Error::TooManyPoints`].
    pub fn build(mut self) -> Result<Ring> {
        let nodes = self.take_nodes()?;
        let vnodes = self.options.vnodes.unwrap_or(u64::from(DEFAULT_VNODES));
        if vnodes == 0 || vnodes > u64::from(MAX_VNODES) {
            return Err(Error::InvalidVnodes { vnodes, max: MAX_VNODES });
        }
        let o = &self.options;
        Ring::from_parts(
            nodes,
            Params { hasher: o.hasher, vnodes: vnodes as u32, layout: o.layout, parallel: o.parallel },
        )
    }
}

impl Ring {
    /// The largest vnode count per (weight-1) node a ring accepts.
    pub const MAX_VNODES: u32 = MAX_VNODES;
    /// The largest total number of points a ring accepts (≈ 800 MB of points and owners).
    pub const MAX_POINTS: u64 = MAX_POINTS;
    /// The vnode count used when the builder is not given one (Ketama's 160).
    pub const DEFAULT_VNODES: u32 = DEFAULT_VNODES;

    fn from_parts(nodes: NodeSet, params: Params) -> Result<Ring> {
        let counts = point_counts(&nodes, params.vnodes)?;
        let by_name = nodes.ids_by_name();
        let (points, owners) = generate_sorted(&nodes, &params.hasher, &counts, &by_name, params.parallel);
        Ok(Ring::assemble(nodes, params, points, owners))
    }

    fn assemble(nodes: NodeSet, params: Params, points: Vec<u64>, owners: Vec<u32>) -> Ring {
        let circle = Circle::with_layout(points, owners, params.layout);
        let collisions = circle.count_collisions();
        Ring { nodes, params, circle, collisions }
    }

    /// The same ring searched with `layout`: a clone of the points and owners (O(P) time and
    /// memory) with the index rebuilt for `layout` (O(P / 16) for the tree and the radix index).
    /// Routes do not change.
    pub fn with_layout(&self, layout: Layout) -> Ring {
        let mut ring = self.clone();
        ring.params.layout = layout;
        ring.circle.set_layout(layout);
        ring
    }

    /// The concrete layout in use ([`Layout::resolve`] of the requested one).
    pub fn layout(&self) -> Layout {
        self.circle.layout()
    }

    /// Virtual nodes per weight-1 node.
    pub fn vnodes(&self) -> u32 {
        self.params.vnodes
    }

    /// The hasher in use (for keys and points).
    pub fn hasher(&self) -> KeyHasher {
        self.params.hasher
    }

    /// The sorted points.
    pub fn points(&self) -> &[u64] {
        self.circle.points()
    }

    /// The owner (node index) of each point, parallel to [`Ring::points`].
    pub fn owners(&self) -> &[u32] {
        self.circle.owners()
    }

    /// How many points equal the point before them (hash collisions between vnodes). The later
    /// of two equal points never owns a key.
    pub fn collisions(&self) -> usize {
        self.collisions
    }

    fn heap_bytes(&self) -> usize {
        self.circle.heap_bytes()
    }

    /// The owner of `hash`'s point. The radix index prefetches the owner line as soon as it
    /// knows the key's block, so the two cache misses overlap instead of queueing.
    #[inline]
    fn owner(&self, hash: u64) -> NodeId {
        self.circle.owner_prefetching(hash)
    }

    /// Index of the point that owns `hash`: the first point `>= hash`, wrapping to 0.
    #[inline]
    pub fn point_index(&self, hash: u64) -> usize {
        self.circle.successor(hash)
    }

    /// [`Ring::point_index`] for many hashes at once, interleaving the searches (radix, tree and
    /// branchless layouts) so their cache misses overlap.
    ///
    /// # Panics
    /// If `hashes.len() != out.len()`.
    pub fn point_index_batch(&self, hashes: &[u64], out: &mut [usize]) {
        self.circle.successor_batch(hashes, out);
    }
}

impl Router for Ring {
    fn algorithm(&self) -> Algorithm {
        Algorithm::Ring
    }
    fn nodes(&self) -> &NodeSet {
        &self.nodes
    }
    fn memory_bytes(&self) -> usize {
        crate::algo::memory_bytes::<Self>(self.heap_bytes(), &self.nodes)
    }
    #[inline]
    fn route(&self, key: &[u8]) -> NodeId {
        self.owner(self.params.hasher.hash(key))
    }
    fn route_hash(&self, hash: u64) -> Result<NodeId> {
        Ok(self.owner(hash))
    }
    /// Software-pipelined over the circle (see `Circle::route_batch_pipelined`): hashes and
    /// searches one chunk while the owner lines of the previous one arrive.
    fn route_batch(&self, keys: &[&[u8]], out: &mut [NodeId]) {
        self.circle.route_batch_pipelined(keys, out, |ks, hs| self.params.hasher.hash_batch(ks, hs));
    }
    /// Dynamo's preference list: walk clockwise from the key's point, skipping nodes already
    /// produced.
    fn preference(&self, key: &[u8], visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) -> Result<()> {
        self.circle.walk_clockwise(self.point_index(self.params.hasher.hash(key)), self.nodes.len(), visit);
        Ok(())
    }
    /// The ring's own points and owners, borrowed.
    fn arcs(&self) -> Option<Arcs<'_>> {
        Some(Arcs::trusted(KeySpace::Hash64, self.points(), self.owners(), Placement::hashed(self.params.hasher)))
    }
    fn canonical_bytes(&self) -> Vec<u8> {
        crate::fingerprint::ring_encoding(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search;
    use crate::Router;

    fn ring(names: &[&str], v: u64) -> Ring {
        Ring::builder().vnodes(v).nodes(names).build().unwrap()
    }

    #[test]
    fn layouts_route_identically() {
        let names: Vec<String> = (0..200).map(|i| format!("n{i}")).collect();
        let base = Ring::builder().vnodes(100).nodes(&names).build().unwrap();
        assert_eq!(base.layout(), Layout::Radix);
        let hashes: Vec<u64> = (0..5000u64).map(crate::mix::mix64).chain([0, u64::MAX]).collect();
        let want: Vec<usize> = hashes.iter().map(|&h| search::oracle(base.points(), h)).collect();
        for layout in [Layout::Auto, Layout::Oracle, Layout::Branchless, Layout::Tree, Layout::Radix, Layout::Eytzinger]
        {
            let r = base.clone().with_layout(layout);
            let got: Vec<usize> = hashes.iter().map(|&h| r.point_index(h)).collect();
            assert_eq!(got, want, "{layout:?}");
            let mut batch = vec![0; hashes.len()];
            r.point_index_batch(&hashes, &mut batch);
            assert_eq!(batch, want, "{layout:?} batch");
            let keys: Vec<Vec<u8>> = (0..1000u32).map(|i| i.to_le_bytes().to_vec()).collect();
            let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
            let mut out = vec![NodeId::default(); refs.len()];
            r.route_batch(&refs, &mut out);
            for (k, o) in refs.iter().zip(&out) {
                assert_eq!(*o, base.route(k));
            }
        }
        let small = Ring::builder().vnodes(10).nodes(["a", "b"]).build().unwrap();
        assert_eq!(small.layout(), Layout::Oracle);
    }

    #[test]
    fn pipelined_route_batch_matches_route_at_chunk_edges() {
        let names: Vec<String> = (0..50).map(|i| format!("n{i}")).collect();
        for hasher in [KeyHasher::default(), KeyHasher::Xxh3 { seed: 7 }, KeyHasher::Murmur3X64 { seed: 0 }] {
            let r = Ring::builder().vnodes(100).hasher(hasher).nodes(&names).build().unwrap();
            for len in [0usize, 1, 255, 256, 257, 512, 513, 1000] {
                let keys: Vec<Vec<u8>> = (0..len as u32).map(|i| format!("k{i}").into_bytes()).collect();
                let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
                let mut out = vec![NodeId::from_index(u32::MAX); len];
                r.route_batch(&refs, &mut out);
                let want: Vec<NodeId> = refs.iter().map(|k| r.route(k)).collect();
                assert_eq!(out, want, "{hasher:?} len {len}");
            }
        }
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

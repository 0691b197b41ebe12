//! Rendezvous (highest random weight) hashing: every node scores the key, the highest wins.
//!
//! No ring and no table: O(N) per key, 8 bytes per node, and removing a node moves only the
//! keys it owned (each key's runner-up takes over). Weighted nodes use the logarithmic method,
//! which gives each node a share of keys proportional to its weight and still moves the
//! minimum on changes.
//!
//! # Frozen scoring (part of the routes)
//! - Node hash `n = hasher.hash(name)`, key hash `k = hasher.hash(key)`, computed once per key.
//! - Unweighted (all weights equal): `score = mix64(k ^ n)` with `mix64` the SplitMix64
//!   finalizer, compared as `u64`. `mix64` is a bijection, so two nodes tie only when their
//!   node hashes are equal.
//! - Weighted: `x = mix64(k ^ n)`, `u = (2·(x >> 12) + 1) / 2^53` (the midpoint of one of 2^52
//!   equal cells: exact in `f64`, never 0 or 1), `score = -w / ln(u)`. Since `-1/ln(u)` for
//!   uniform `u` is the inverse of an exponential variable, `P(node i wins) = w_i / Σw`.
//! - Ties go to the node with the smaller name (byte-wise), so routes never depend on the order
//!   nodes were given in. Internally nodes are kept in name order and the first maximum wins.
//!
//! [`Rendezvous::go_rendezvous`] instead reproduces dgryski/go-rendezvous (used by go-redis):
//! XXH64 seed 0, `score = xorshiftMult64(k ^ n)`, ties to the earlier node *in the given order*
//! (that library's definition).

use std::ops::ControlFlow;

mod kernel;

use crate::algo::builder::Configure;
use crate::algorithm::Algorithm;
use crate::arch::{Isa, Kernels};
use crate::error::{Error, Result};
use crate::hash::KeyHasher;
use crate::mix::{mix64, xorshift_mult64};
use crate::node::{Node, NodeId, NodeSet};
use crate::router::Router;
use crate::Builder;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scoring {
    /// `mix64(k ^ n)`, ties to the smaller name.
    Mix64,
    /// go-rendezvous: `xorshiftMult64(k ^ n)`, ties to the earlier node in the given order.
    GoXorshift,
}

/// Highest-random-weight routing over a node set.
///
/// - **Cost**: `route` = one key hash + N scores (a xor and a 64-bit mix each; weighted adds a
///   `ln` and a division), no allocation. Unweighted scores run on the widest SIMD path the CPU
///   has that pays at this node count (8 nodes per instruction with AVX-512, 4 with
///   AVX2 from 64 nodes), every path choosing the same node. Memory: 8 bytes per node (node hashes, name-ordered,
///   struct-of-arrays) + 4 bytes per node (ids) + 8 per node when weighted, plus the node set.
/// - **Preference list**: nodes by descending score (O(N log N) and one allocation per call).
///
/// ```
/// use hashroute::{Node, Rendezvous, Router};
/// let hrw = Rendezvous::builder().nodes(["a", "c"]).node(Node::new("b").with_weight(2.0)).build()?;
/// let owner = hrw.route(b"user:42");
/// assert_eq!(hrw.replicas(b"user:42", 2)?[0], owner);
/// // Removing another node never moves this key.
/// let other = ["a", "b", "c"].into_iter().find(|n| *n != hrw.node_name(owner)).unwrap();
/// let fewer = hrw.without_node(other)?;
/// assert_eq!(fewer.node_name(fewer.route(b"user:42")), hrw.node_name(owner));
/// # Ok::<(), hashroute::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Rendezvous {
    nodes: NodeSet,
    hasher: KeyHasher,
    scoring: Scoring,
    /// Node hashes in scan order (name order, or given order for go-rendezvous).
    hashes: Vec<u64>,
    /// Node id of each scan position.
    ids: Vec<u32>,
    /// Weights in scan order; `None` when all are equal (the unweighted fast path).
    weights: Option<Vec<f64>>,
    /// The unweighted kernels' path, chosen at build time (`kernel::kernels_for`).
    kernel: Kernels,
}

/// The unweighted score of a key hash against a node hash (the scalar reference).
#[inline]
pub(crate) fn score(key_hash: u64, node_hash: u64) -> u64 {
    mix64(key_hash ^ node_hash)
}

/// The weighted score (logarithmic method) of a key hash against a node hash and weight.
#[inline]
pub(crate) fn weighted_score(key_hash: u64, node_hash: u64, weight: f64) -> f64 {
    -weight / unit_interval(score(key_hash, node_hash)).ln()
}

/// `(2·(x >> 12) + 1) / 2^53`: uniform in (0, 1), exact, never 0 or 1.
#[inline]
fn unit_interval(x: u64) -> f64 {
    const SCALE: f64 = 1.0 / (1u64 << 53) as f64;
    (((x >> 12) << 1) | 1) as f64 * SCALE
}

impl Rendezvous {
    /// A builder for this router (see [`Builder`]).
    pub fn builder() -> Builder<Rendezvous> {
        Builder::default()
    }

    /// A router over weight-1 nodes named `names`, with the default options.
    ///
    /// # Errors
    /// As [`NodeSet::from_names`](crate::NodeSet::from_names) and the builder's `build`.
    pub fn from_names<I>(names: I) -> Result<Rendezvous>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        Rendezvous::builder().nodes(names).build()
    }
}

/// The options of [`Builder<Rendezvous>`].
#[derive(Clone, Debug, Default)]
pub struct RendezvousOptions {
    pub(crate) hasher: KeyHasher,
    pub(crate) go_rendezvous: bool,
}

impl Configure for Rendezvous {
    type Options = RendezvousOptions;
}

impl Builder<Rendezvous> {
    /// The key hasher; default xxh3 with seed 0.
    pub fn hasher(mut self, hasher: KeyHasher) -> Builder<Rendezvous> {
        self.options.hasher = hasher;
        self
    }
}

impl Builder<Rendezvous> {
    /// Reproduce dgryski/go-rendezvous (`rendezvous.New(nodes, xxhash.Sum64String)`, as go-redis
    /// uses it): XXH64 seed 0 whatever the hasher option says, `xorshiftMult64` scores, ties to
    /// the earlier node in the given order. Same node for every key, given the same node list
    /// in the same order.
    pub fn go_rendezvous(mut self) -> Builder<Rendezvous> {
        self.options.go_rendezvous = true;
        self
    }

    /// Builds the router: N name hashes and a sort by name, O(N log N).
    ///
    /// # Errors
    /// The [`NodeSet::new`] errors; [`Error::Unsupported`] for weighted nodes in go-rendezvous
    /// mode (go-rendezvous has no weights).
    pub fn build(mut self) -> Result<Rendezvous> {
        let nodes = self.take_nodes()?;
        if self.options.go_rendezvous {
            Rendezvous::go_rendezvous(nodes)
        } else {
            Rendezvous::new(nodes, self.options.hasher)
        }
    }
}

impl Rendezvous {
    fn new(nodes: NodeSet, hasher: KeyHasher) -> Result<Rendezvous> {
        let order = nodes.ids_by_name();
        Ok(Rendezvous::build(nodes, hasher, Scoring::Mix64, order))
    }

    fn go_rendezvous(nodes: NodeSet) -> Result<Rendezvous> {
        if !nodes.all_unit_weight() {
            return Err(Error::Unsupported { algorithm: "rendezvous", operation: "weights in go-rendezvous mode" });
        }
        let order = (0..nodes.len() as u32).collect();
        Ok(Rendezvous::build(nodes, KeyHasher::Xxh64 { seed: 0 }, Scoring::GoXorshift, order))
    }

    fn build(nodes: NodeSet, hasher: KeyHasher, scoring: Scoring, order: Vec<u32>) -> Rendezvous {
        let hashes = order.iter().map(|&i| hasher.hash(nodes.name(NodeId::from_index(i)).as_bytes())).collect();
        let first = nodes.weight(NodeId::from_index(0));
        let equal = nodes.iter().all(|(_, n)| n.weight() == first);
        let weights = (!equal).then(|| order.iter().map(|&i| nodes.weight(NodeId::from_index(i))).collect());
        let kernel = kernel::kernels_for(nodes.len());
        Rendezvous { nodes, hasher, scoring, hashes, ids: order, weights, kernel }
    }

    /// The same router running the unweighted kernels on `isa` instead of the dispatched one:
    /// for the crate's benchmarks and tests (every path routes every key identically). O(N)
    /// clone.
    ///
    /// # Errors
    /// [`Error::Unsupported`] when this CPU cannot run `isa`.
    pub(crate) fn with_isa(&self, isa: Isa) -> Result<Rendezvous> {
        let kernel = Kernels::new(isa)
            .ok_or(Error::Unsupported { algorithm: "rendezvous", operation: "a SIMD path this CPU lacks" })?;
        Ok(Rendezvous { kernel, ..self.clone() })
    }

    /// The path the unweighted kernels (`mix64`, and go-rendezvous's mixer) run on (the
    /// process's path, portable instead of AVX2 below 64 nodes, unless set by
    /// [`with_isa`](Rendezvous::with_isa)). Weighted routers score in scalar code whatever this
    /// says.
    pub(crate) fn isa(&self) -> Isa {
        self.kernel.isa()
    }

    /// The hasher in use.
    pub fn hasher(&self) -> KeyHasher {
        self.hasher
    }

    /// Whether the router scores with weights (some weights differ).
    pub fn is_weighted(&self) -> bool {
        self.weights.is_some()
    }

    /// The winner for key hash `k`: scan position of the highest score, the first on ties.
    #[inline]
    fn winner(&self, k: u64) -> usize {
        match (&self.weights, self.scoring) {
            (None, Scoring::Mix64) => self.kernel.argmax_mix64(&self.hashes, k),
            (None, Scoring::GoXorshift) => self.kernel.argmax_go(&self.hashes, k),
            // Kept scalar on purpose: std's `ln` is the frozen definition and a vector `ln` is
            // not bit-identical to it. An error-bounded approximation with an exact fallback on
            // near ties chose identically but was no faster than this loop (tried and reverted).
            (Some(w), _) => {
                let mut best = 0;
                let mut best_score = weighted_score(k, self.hashes[0], w[0]);
                for (i, (&n, &w)) in self.hashes.iter().zip(w).enumerate().skip(1) {
                    let s = weighted_score(k, n, w);
                    if s > best_score {
                        best = i;
                        best_score = s;
                    }
                }
                best
            }
        }
    }

    /// The plain scalar twin of the routing kernel (what `route_hash` must equal).
    #[cfg(test)]
    fn winner_scalar(&self, k: u64) -> usize {
        let mut best = 0;
        for i in 1..self.hashes.len() {
            let better = match (&self.weights, self.scoring) {
                (None, Scoring::Mix64) => score(k, self.hashes[i]) > score(k, self.hashes[best]),
                (None, Scoring::GoXorshift) => {
                    xorshift_mult64(k ^ self.hashes[i]) > xorshift_mult64(k ^ self.hashes[best])
                }
                (Some(w), _) => weighted_score(k, self.hashes[i], w[i]) > weighted_score(k, self.hashes[best], w[best]),
            };
            if better {
                best = i;
            }
        }
        best
    }

    #[inline]
    fn owner(&self, hash: u64) -> NodeId {
        NodeId::from_index(self.ids[self.winner(hash)])
    }

    fn heap_bytes(&self) -> usize {
        self.hashes.capacity() * 8 + self.ids.capacity() * 4 + self.weights.as_ref().map_or(0, |w| w.capacity() * 8)
    }

    fn rebuild(&self, nodes: NodeSet) -> Result<Rendezvous> {
        match self.scoring {
            Scoring::Mix64 => Rendezvous::new(nodes, self.hasher),
            Scoring::GoXorshift => Rendezvous::go_rendezvous(nodes),
        }
    }

    /// A new router with `node` added: only keys that now score highest on it move.
    ///
    /// # Errors
    /// As [`NodeSet::with_node`].
    pub fn with_node(&self, node: Node) -> Result<Rendezvous> {
        self.rebuild(self.nodes.with_node(node)?)
    }

    /// A new router without the node named `name`: only its keys move.
    ///
    /// # Errors
    /// [`Error::UnknownNode`], [`Error::NoNodes`] for the last node.
    pub fn without_node(&self, name: &str) -> Result<Rendezvous> {
        self.rebuild(self.nodes.without_node(name)?)
    }

    /// A new router with node `name`'s weight changed.
    ///
    /// # Errors
    /// [`Error::UnknownNode`], [`Error::InvalidWeight`].
    pub fn with_weight(&self, name: &str, weight: f64) -> Result<Rendezvous> {
        self.rebuild(self.nodes.with_weight(name, weight)?)
    }
}

impl Router for Rendezvous {
    fn algorithm(&self) -> Algorithm {
        Algorithm::Rendezvous
    }
    fn nodes(&self) -> &NodeSet {
        &self.nodes
    }
    fn memory_bytes(&self) -> usize {
        crate::algo::memory_bytes::<Self>(self.heap_bytes(), &self.nodes)
    }
    #[inline]
    fn route(&self, key: &[u8]) -> NodeId {
        self.owner(self.hasher.hash(key))
    }
    fn route_hash(&self, hash: u64) -> Result<NodeId> {
        Ok(self.owner(hash))
    }
    /// Hashes the keys a chunk at a time through
    /// [`KeyHasher::hash_batch`](crate::KeyHasher::hash_batch), then looks each hash up.
    fn route_batch(&self, keys: &[&[u8]], out: &mut [NodeId]) {
        crate::algo::route_batch_by_hash(&self.hasher, keys, out, |h| self.owner(h));
    }
    /// Nodes by descending score, ties as in `route`. Allocates one score per node.
    fn preference(&self, key: &[u8], visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) -> Result<()> {
        let k = self.hasher.hash(key);
        let mut order: Vec<usize> = (0..self.hashes.len()).collect();
        match (&self.weights, self.scoring) {
            (None, scoring) => {
                let s: Vec<u64> = self
                    .hashes
                    .iter()
                    .map(|&n| if scoring == Scoring::Mix64 { score(k, n) } else { xorshift_mult64(k ^ n) })
                    .collect();
                order.sort_by(|&a, &b| s[b].cmp(&s[a]).then(a.cmp(&b)));
            }
            (Some(w), _) => {
                let s: Vec<f64> = self.hashes.iter().zip(w).map(|(&n, &w)| weighted_score(k, n, w)).collect();
                order.sort_by(|&a, &b| s[b].total_cmp(&s[a]).then(a.cmp(&b)));
            }
        }
        for i in order {
            if visit(NodeId::from_index(self.ids[i])).is_break() {
                break;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Router;
    use proptest::prelude::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("node-{i}")).collect()
    }

    fn hrw(n: usize) -> Rendezvous {
        Rendezvous::new(NodeSet::from_names(names(n)).unwrap(), KeyHasher::default()).unwrap()
    }

    #[test]
    fn unit_interval_bounds() {
        assert!(unit_interval(0) > 0.0);
        assert!(unit_interval(u64::MAX) < 1.0);
        assert_eq!(unit_interval(0), 1.0 / (1u64 << 53) as f64);
        assert!(weighted_score(0, 0, 1.0).is_finite());
        assert!(weighted_score(u64::MAX, 0, 1.0).is_finite());
    }

    #[test]
    fn frozen_scores() {
        // Freezes the formula: a change here re-routes keys for every user.
        assert_eq!(score(0, 0), mix64(0));
        assert_eq!(score(1, 2), mix64(3));
        // By hand: 1 -> 1 -> 1 | 1 << 25 -> unchanged by >> 27 -> times the constant.
        assert_eq!(xorshift_mult64(1), 0x0200_0001u64.wrapping_mul(2685821657736338717));
        let r = hrw(10);
        let k = KeyHasher::default().hash(b"user:42");
        let expect = (0..10)
            .max_by(|&a, &b| {
                let (na, nb) = (format!("node-{a}"), format!("node-{b}"));
                let (sa, sb) = (
                    score(k, KeyHasher::default().hash(na.as_bytes())),
                    score(k, KeyHasher::default().hash(nb.as_bytes())),
                );
                sa.cmp(&sb).then(nb.cmp(&na))
            })
            .unwrap();
        assert_eq!(r.node_name(r.route(b"user:42")), format!("node-{expect}"));
    }

    #[test]
    fn golden_routes() {
        // Frozen outputs (node-0..node-9; weighted: node-i has weight i + 1). A change here
        // re-routes users' keys: only with a major version.
        let names = names(10);
        let r = hrw(10);
        let w = Rendezvous::new(
            NodeSet::new(names.iter().enumerate().map(|(i, n)| Node::new(n.clone()).with_weight(1.0 + i as f64)))
                .unwrap(),
            KeyHasher::default(),
        )
        .unwrap();
        let g = Rendezvous::go_rendezvous(NodeSet::from_names(&names).unwrap()).unwrap();
        let golden = [
            ("a", "node-0", "node-0", "node-0"),
            ("b", "node-7", "node-7", "node-5"),
            ("c", "node-5", "node-6", "node-2"),
            ("user:42", "node-3", "node-3", "node-2"),
            ("", "node-2", "node-7", "node-1"),
        ];
        for (key, hrw_node, weighted_node, go_node) in golden {
            let k = key.as_bytes();
            assert_eq!(
                (r.node_name(r.route(k)), w.node_name(w.route(k)), g.node_name(g.route(k))),
                (hrw_node, weighted_node, go_node),
                "{key:?}"
            );
        }
    }

    #[test]
    fn ties_go_to_smaller_name() {
        // Equal node hashes only arise from equal names under a real hasher, so check the rule
        // on the internal scan order instead: it is name order.
        let r = Rendezvous::new(NodeSet::from_names(["c", "a", "b"]).unwrap(), KeyHasher::default()).unwrap();
        let names: Vec<&str> = r.ids.iter().map(|&i| r.nodes.name(NodeId::from_index(i))).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(crate::arch::generic::argmax_blocks(&[5, 9, 9, 1], |h| h), 1);
        assert_eq!(crate::arch::generic::argmax_blocks(&[7; 20], |h| h), 0);
    }

    #[test]
    fn go_rendezvous_definition() {
        let nodes = NodeSet::from_names(["redis-a:6379", "redis-b:6379", "redis-c:6379"]).unwrap();
        let r = Rendezvous::go_rendezvous(nodes).unwrap();
        let x = |s: &str| xxhash_rust::xxh64::xxh64(s.as_bytes(), 0);
        for key in ["a", "user:1", ""] {
            let k = x(key);
            let mut best = 0;
            for (i, n) in ["redis-a:6379", "redis-b:6379", "redis-c:6379"].iter().enumerate() {
                if xorshift_mult64(k ^ x(n))
                    > xorshift_mult64(k ^ x(["redis-a:6379", "redis-b:6379", "redis-c:6379"][best]))
                {
                    best = i;
                }
            }
            assert_eq!(r.route(key.as_bytes()), NodeId::from_index(best as u32));
        }
        let weighted = NodeSet::new([Node::new("a").with_weight(2.0), Node::new("b")]).unwrap();
        assert!(matches!(Rendezvous::go_rendezvous(weighted), Err(Error::Unsupported { .. })));
    }

    #[test]
    fn kernel_follows_the_node_count() {
        for n in [1usize, 3, kernel::AVX2_MIN_NODES - 1, kernel::AVX2_MIN_NODES, 100] {
            let r =
                Rendezvous::new(NodeSet::from_names((0..n).map(|i| format!("n{i}"))).unwrap(), KeyHasher::default())
                    .unwrap();
            assert_eq!(r.isa(), kernel::kernels_for(n).isa(), "{n} nodes");
            assert!(r.isa() != Isa::Avx2 || n >= kernel::AVX2_MIN_NODES);
        }
    }

    #[test]
    fn membership_errors() {
        let r = hrw(2);
        assert!(matches!(r.without_node("x"), Err(Error::UnknownNode { .. })));
        assert!(matches!(r.with_weight("node-0", f64::NAN), Err(Error::InvalidWeight { .. })));
        assert!(matches!(r.with_node(Node::new("node-1")), Err(Error::DuplicateNode { .. })));
        assert!(matches!(hrw(1).without_node("node-0"), Err(Error::NoNodes)));
        assert_eq!(r.replicas(b"k", 3), Err(Error::TooManyReplicas { requested: 3, available: 2 }));
    }

    #[test]
    fn weighted_shares_follow_weights() {
        let weights = [1.0, 2.0, 3.0, 4.0];
        let nodes =
            NodeSet::new(weights.iter().enumerate().map(|(i, &w)| Node::new(format!("n{i}")).with_weight(w))).unwrap();
        let r = Rendezvous::new(nodes, KeyHasher::default()).unwrap();
        assert!(r.is_weighted());
        let samples = 200_000u64;
        let mut counts = [0u64; 4];
        for i in 0..samples {
            counts[r.route_hash(mix64(i)).unwrap().index()] += 1;
        }
        for (i, &w) in weights.iter().enumerate() {
            let p = w / 10.0;
            // 5 standard deviations of a binomial share: fails by chance with p < 1e-6.
            let tol = 5.0 * (p * (1.0 - p) / samples as f64).sqrt();
            let share = counts[i] as f64 / samples as f64;
            assert!((share - p).abs() < tol, "node {i}: share {share} vs {p} ± {tol}");
        }
    }

    #[test]
    fn equal_weights_take_the_fast_path() {
        let nodes = NodeSet::new([Node::new("a").with_weight(3.0), Node::new("b").with_weight(3.0)]).unwrap();
        let r = Rendezvous::new(nodes, KeyHasher::default()).unwrap();
        assert!(!r.is_weighted());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn kernel_equals_scalar(n in 1usize..40, k in any::<u64>(), adversarial in any::<bool>(), w in any::<bool>()) {
            let mut r = hrw(n);
            if adversarial {
                // Many equal node hashes: exercises first-maximum tie handling across blocks.
                for (i, h) in r.hashes.iter_mut().enumerate() {
                    *h = (i % 3) as u64;
                }
            }
            if w {
                r.weights = Some((0..n).map(|i| 1.0 + (i % 4) as f64).collect());
            }
            prop_assert_eq!(r.winner(k), r.winner_scalar(k));
            let mut go = r.clone();
            go.scoring = Scoring::GoXorshift;
            go.weights = None;
            prop_assert_eq!(go.winner(k), go.winner_scalar(k));
        }

        #[test]
        fn batch_equals_route(keys in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..16), 0..30)) {
            let r = hrw(9);
            let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
            let mut out = vec![NodeId::default(); refs.len()];
            r.route_batch(&refs, &mut out);
            for (k, id) in refs.iter().zip(&out) {
                prop_assert_eq!(*id, r.route(k));
                prop_assert_eq!(*id, r.route_hash(KeyHasher::default().hash(k)).unwrap());
            }
        }

        #[test]
        fn order_independent(seed in any::<u64>(), weighted in any::<bool>()) {
            use rand::seq::SliceRandom;
            use rand::SeedableRng;
            let mk = |ns: &[String]| {
                let set = NodeSet::new(ns.iter().map(|n| {
                    let w = if weighted { 1.0 + (n.len() % 3) as f64 + n.as_bytes()[n.len() - 1] as f64 / 100.0 } else { 1.0 };
                    Node::new(n.clone()).with_weight(w)
                })).unwrap();
                Rendezvous::new(set, KeyHasher::default()).unwrap()
            };
            let a = names(12);
            let mut b = a.clone();
            b.shuffle(&mut rand_pcg::Pcg64::seed_from_u64(seed));
            let (ra, rb) = (mk(&a), mk(&b));
            for i in 0..200u32 {
                let key = i.to_le_bytes();
                prop_assert_eq!(ra.node_name(ra.route(&key)), rb.node_name(rb.route(&key)));
                let pa: Vec<&str> = ra.replicas(&key, 12).unwrap().into_iter().map(|id| ra.node_name(id)).collect();
                let pb: Vec<&str> = rb.replicas(&key, 12).unwrap().into_iter().map(|id| rb.node_name(id)).collect();
                prop_assert_eq!(pa, pb);
            }
        }

        #[test]
        fn minimal_movement(n in 2usize..12, victim in 0usize..12, keys in proptest::collection::vec(any::<u64>(), 100), weighted in any::<bool>()) {
            let victim = format!("node-{}", victim % n);
            let set = NodeSet::new(names(n).into_iter().enumerate().map(|(i, s)| {
                Node::new(s).with_weight(if weighted { 1.0 + i as f64 } else { 1.0 })
            })).unwrap();
            let full = Rendezvous::new(set, KeyHasher::default()).unwrap();
            let less = full.without_node(&victim).unwrap();
            for k in keys {
                let before = full.node_name(full.route_hash(k).unwrap());
                let after = less.node_name(less.route_hash(k).unwrap());
                // Removing moves only the victim's keys; adding it back moves only keys to it.
                prop_assert!(before == after || before == victim);
                let first = full.replicas(&k.to_le_bytes(), 2).unwrap();
                prop_assert_eq!(first[0], full.route(&k.to_le_bytes()));
            }
        }
    }
}

//! AnchorHash (Mendelson, Vargaftik, Barabash, Lorenz, Keslassy & Orda, IEEE/ACM ToN 2021,
//! arXiv:1812.09674): consistent hashing over a fixed-capacity *anchor* of buckets with
//! arbitrary removal.
//!
//! Every bucket of the anchor `0..a` is working or removed. A key starts at `hash mod a`; on a
//! removed bucket `b` it re-hashes into `W_b`, the working set as it was right after `b`'s
//! removal (kept implicitly in the arrays `A`, `K`, `W`, `L`, the paper's Algorithm 3), until it
//! lands on a working bucket. Removing a bucket moves only its keys; adding restores the most
//! recently removed bucket, bringing its keys back exactly. Unlike [`Memento`](crate::Memento)
//! the capacity is fixed up front: lookups slow down as the working share of the anchor falls
//! (expected `1 + ln(a/w)` re-hashes).

use std::ops::ControlFlow;

use crate::algo::bucket_preference;
use crate::algo::builder::Configure;
use crate::algorithm::Algorithm;
use crate::error::{Error, Result};
use crate::hash::KeyHasher;
use crate::mix::mix64;
use crate::node::{Node, NodeId, NodeSet, MAX_NODES};
use crate::router::Router;
use crate::Builder;

const NONE: u32 = u32::MAX;

/// The seeded re-hash `h_b(k)` of a key that landed on removed bucket `b`. Frozen.
#[inline]
fn rehash(hash: u64, b: u32) -> u64 {
    mix64(hash.wrapping_add(mix64(u64::from(b) ^ 0xA076_1D64_78BD_642F)))
}

/// AnchorHash over unit-weight nodes, with a fixed bucket capacity.
///
/// - **Buckets**: [`Anchor::builder`] gives node `i` bucket `i`; buckets `N..capacity` start
///   removed. [`Anchor::without_node`] frees any node's bucket; [`Anchor::with_node`] takes the
///   most recently removed bucket (initially `N`, `N + 1`, …).
/// - **Cost**: `route` = one hash, `hash % a`, and expected `1 + ln(a/w)` re-hashes for `w`
///   working buckets. Memory: 24 bytes per anchor bucket (`A`, `K`, `W`, `L`, the removal stack
///   and the owner table, all `u32`) plus the node set.
/// - **Preference list**: the route, then the routes of `mix64(h + i)` for i = 1..=4N skipping
///   nodes already produced, then the remaining nodes in bucket order.
#[derive(Clone, Debug)]
#[allow(non_snake_case)] // the paper's array names
pub struct Anchor {
    nodes: NodeSet,
    hasher: KeyHasher,
    /// `A[b]`: 0 while `b` works, else `|W_b|`, the working count right after its removal.
    A: Vec<u32>,
    /// `K[b]`: the bucket that took `b`'s place in `W` when `b` was removed (else `b`).
    K: Vec<u32>,
    /// `W[0..n]`: the working buckets; `L[b]`: `b`'s position in `W`.
    W: Vec<u32>,
    L: Vec<u32>,
    /// Removed buckets, most recent last.
    R: Vec<u32>,
    /// Per bucket: the owning node id, `NONE` when removed.
    owner: Vec<u32>,
}

impl Anchor {
    /// A builder for this router (see [`Builder`]).
    pub fn builder() -> Builder<Anchor> {
        Builder::default()
    }

    /// A router over weight-1 nodes named `names`, with the default options.
    ///
    /// # Errors
    /// As [`NodeSet::from_names`](crate::NodeSet::from_names) and the builder's `build`.
    pub fn from_names<I>(names: I) -> Result<Anchor>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        Anchor::builder().nodes(names).build()
    }
}

/// The options of [`Builder<Anchor>`].
#[derive(Clone, Debug, Default)]
pub struct AnchorOptions {
    pub(crate) hasher: KeyHasher,
    pub(crate) capacity: Option<u32>,
}

impl Configure for Anchor {
    type Options = AnchorOptions;
}

impl Builder<Anchor> {
    /// The key hasher; default xxh3 with seed 0.
    pub fn hasher(mut self, hasher: KeyHasher) -> Builder<Anchor> {
        self.options.hasher = hasher;
        self
    }
}

impl Builder<Anchor> {
    /// Room for `capacity` buckets in total (default: twice the node count). Lookups cost
    /// O(1 + ln(capacity / nodes)); nodes can be added until every bucket is in use.
    pub fn capacity(mut self, capacity: u32) -> Builder<Anchor> {
        self.options.capacity = Some(capacity);
        self
    }

    /// Builds the router.
    ///
    /// # Errors
    /// The [`NodeSet::new`] errors; [`Error::InvalidParameter`] (`capacity`) when the capacity
    /// is below the node count or above the node-count cap; [`Error::Unsupported`] if any
    /// weight differs from 1.
    pub fn build(mut self) -> Result<Anchor> {
        let nodes = self.take_nodes()?;
        let capacity = self.options.capacity.unwrap_or_else(|| Anchor::default_capacity(nodes.len()));
        Anchor::new(nodes, self.options.hasher, capacity)
    }
}

impl Anchor {
    /// The capacity used when none is given: twice the node count, capped at the node limit.
    pub(crate) fn default_capacity(nodes: usize) -> u32 {
        (2 * nodes).min(MAX_NODES) as u32
    }

    #[allow(non_snake_case)] // the paper's array names
    pub(crate) fn new(nodes: NodeSet, hasher: KeyHasher, capacity: u32) -> Result<Anchor> {
        if !nodes.all_unit_weight() {
            return Err(Error::Unsupported { algorithm: "anchor", operation: "weighted nodes" });
        }
        let w = nodes.len() as u32;
        if capacity < w || capacity as usize > MAX_NODES {
            return Err(Error::InvalidParameter {
                name: "capacity",
                reason: format!("{capacity} must be between the node count {w} and {MAX_NODES}"),
            });
        }
        let a = capacity;
        let mut A = vec![0u32; a as usize];
        let mut R = Vec::with_capacity((a - w) as usize);
        for b in (w..a).rev() {
            R.push(b);
            A[b as usize] = b;
        }
        let owner = (0..a).map(|b| if b < w { b } else { NONE }).collect();
        Ok(Anchor { nodes, hasher, A, K: (0..a).collect(), W: (0..a).collect(), L: (0..a).collect(), R, owner })
    }

    /// The anchor capacity `a`.
    pub fn capacity(&self) -> u32 {
        self.A.len() as u32
    }

    /// The hasher in use.
    pub fn hasher(&self) -> KeyHasher {
        self.hasher
    }

    /// The bucket of node `id`. O(capacity).
    ///
    /// # Panics
    /// If `id` does not belong to this router.
    pub fn bucket_of(&self, id: NodeId) -> u32 {
        self.owner.iter().position(|&o| o == id.as_u32()).expect("foreign NodeId") as u32
    }

    /// A new router without node `name`: only its keys move. O(capacity) (the router is cloned).
    ///
    /// # Errors
    /// [`Error::UnknownNode`]; [`Error::NoNodes`] when `name` is the last node.
    pub fn without_node(&self, name: &str) -> Result<Anchor> {
        let id = self.nodes.require(name)?;
        let nodes = self.nodes.without_node(name)?;
        let b = self.bucket_of(id);
        let mut next = Anchor { nodes, ..self.clone() };
        for o in next.owner.iter_mut() {
            if *o != NONE && *o > id.as_u32() {
                *o -= 1;
            }
        }
        next.owner[b as usize] = NONE;
        let n = next.nodes.len() as u32; // the working count after removal
        let (bi, last) = (b as usize, next.W[n as usize]);
        next.R.push(b);
        next.A[bi] = n;
        next.W[next.L[bi] as usize] = last;
        next.K[bi] = last;
        next.L[last as usize] = next.L[bi];
        Ok(next)
    }

    /// A new router with weight-1 `node` on the most recently removed bucket: re-adding the
    /// node removed last restores its keys exactly. O(capacity).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] (`capacity`) when every bucket is in use;
    /// [`Error::DuplicateNode`], [`Error::EmptyNodeName`] (as [`NodeSet::with_node`]);
    /// [`Error::Unsupported`] for a weight other than 1.
    pub fn with_node(&self, node: Node) -> Result<Anchor> {
        let nodes = self.nodes.with_node(node)?;
        if !nodes.all_unit_weight() {
            return Err(Error::Unsupported { algorithm: "anchor", operation: "weighted nodes" });
        }
        let mut next = Anchor { nodes, ..self.clone() };
        let Some(b) = next.R.pop() else {
            return Err(Error::InvalidParameter {
                name: "capacity",
                reason: format!("all {} anchor buckets are in use; build with a larger capacity", self.capacity()),
            });
        };
        let n = self.nodes.len() as u32; // the working count before adding
        let bi = b as usize;
        next.A[bi] = 0;
        let displaced = next.W[n as usize];
        next.L[displaced as usize] = n;
        next.W[next.L[bi] as usize] = b;
        next.K[bi] = b;
        next.owner[bi] = (next.nodes.len() - 1) as u32;
        Ok(next)
    }

    /// The working bucket for a key hash (the paper's GETBUCKET).
    #[inline]
    pub fn bucket(&self, hash: u64) -> u32 {
        let mut b = (hash % self.A.len() as u64) as u32;
        while self.A[b as usize] > 0 {
            let ab = self.A[b as usize];
            let mut h = (rehash(hash, b) % u64::from(ab)) as u32;
            while self.A[h as usize] >= ab {
                h = self.K[h as usize];
            }
            b = h;
        }
        b
    }

    #[inline]
    fn owner(&self, hash: u64) -> NodeId {
        NodeId::from_index(self.owner[self.bucket(hash) as usize])
    }

    fn heap_bytes(&self) -> usize {
        let arrays = [&self.A, &self.K, &self.W, &self.L, &self.R, &self.owner];
        arrays.iter().map(|v| v.capacity()).sum::<usize>() * 4
    }
}

impl Router for Anchor {
    fn algorithm(&self) -> Algorithm {
        Algorithm::Anchor
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
    /// The route, then routes of `mix64(h + i)` for i = 1..=4N (skipping repeats), then the rest
    /// in bucket order. Frozen: it decides where failover sends a down node's keys.
    fn preference(&self, key: &[u8], visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) -> Result<()> {
        bucket_preference(self.hasher.hash(key), &self.owner, self.nodes.len(), |h| self.owner(h), visit);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Router;
    use proptest::prelude::*;

    /// The oracle: the paper's definition (Algorithm 1) with every `W_b` stored explicitly as
    /// a snapshot of the working array, instead of Algorithm 3's implicit `A`/`K` encoding.
    struct Naive {
        a: u32,
        w: Vec<u32>,
        /// (removed bucket, working array before its removal); `W_b` is kept beside it.
        stack: Vec<(u32, Vec<u32>)>,
        snapshots: std::collections::HashMap<u32, Vec<u32>>,
    }

    impl Naive {
        fn new(a: u32, w: u32) -> Naive {
            let mut s = Naive { a, w: (0..a).collect(), stack: Vec::new(), snapshots: Default::default() };
            for b in (w..a).rev() {
                s.remove(b);
            }
            s
        }
        fn remove(&mut self, b: u32) {
            let before = self.w.clone();
            let pos = self.w.iter().position(|&x| x == b).unwrap();
            let last = self.w.pop().unwrap();
            if pos < self.w.len() {
                self.w[pos] = last;
            }
            self.snapshots.insert(b, self.w.clone());
            self.stack.push((b, before));
        }
        fn add(&mut self) {
            let (b, before) = self.stack.pop().unwrap();
            self.snapshots.remove(&b);
            self.w = before;
        }
        fn bucket(&self, hash: u64) -> u32 {
            let mut b = (hash % u64::from(self.a)) as u32;
            while let Some(wb) = self.snapshots.get(&b) {
                b = wb[(rehash(hash, b) % wb.len() as u64) as usize];
            }
            b
        }
    }

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("n{i}")).collect()
    }

    #[test]
    fn errors() {
        let set = NodeSet::from_names(["a", "b"]).unwrap();
        assert!(matches!(Anchor::new(set.clone(), KeyHasher::default(), 1), Err(Error::InvalidParameter { .. })));
        let full = Anchor::new(set, KeyHasher::default(), 2).unwrap();
        assert!(matches!(full.with_node(Node::new("c")), Err(Error::InvalidParameter { name: "capacity", .. })));
        assert_eq!(full.without_node("a").unwrap().without_node("b").unwrap_err(), Error::NoNodes);
        assert!(matches!(full.without_node("zz"), Err(Error::UnknownNode { .. })));
    }

    #[test]
    fn balance_with_half_the_anchor_removed() {
        let r = Anchor::new(NodeSet::from_names(names(50)).unwrap(), KeyHasher::default(), 100).unwrap();
        let mut counts = [0u32; 50];
        let keys = 200_000u64;
        for k in 0..keys {
            counts[r.route_hash(mix64(k)).unwrap().index()] += 1;
        }
        let mean = keys as f64 / 50.0;
        let (lo, hi) = (*counts.iter().min().unwrap() as f64 / mean, *counts.iter().max().unwrap() as f64 / mean);
        assert!(lo > 0.85 && hi < 1.15, "{lo} {hi}");
    }

    proptest! {
        #[test]
        fn matches_oracle_and_moves_minimum(
            n in 1usize..30,
            spare in 0u32..20,
            script in prop::collection::vec((any::<bool>(), any::<u32>()), 0..30),
            hashes in prop::collection::vec(any::<u64>(), 64),
        ) {
            let cap = n as u32 + spare;
            let mut r = Anchor::new(NodeSet::from_names(names(n)).unwrap(), KeyHasher::default(), cap).unwrap();
            let mut naive = Naive::new(cap, n as u32);
            let mut fresh = n;
            for (remove, pick) in script {
                let before: Vec<String> = hashes.iter().map(|&h| r.node_name(r.route_hash(h).unwrap()).to_owned()).collect();
                if remove && r.node_count() > 1 {
                    let id = NodeId::from_index(pick % r.node_count() as u32);
                    let name = r.node_name(id).to_owned();
                    naive.remove(r.bucket_of(id));
                    let smaller = r.without_node(&name).unwrap();
                    let restored = smaller.with_node(Node::new(name.as_str())).unwrap();
                    for (&h, b) in hashes.iter().zip(&before) {
                        let after = smaller.node_name(smaller.route_hash(h).unwrap());
                        if *b != name { prop_assert_eq!(after, b.as_str()); }
                        prop_assert_eq!(restored.node_name(restored.route_hash(h).unwrap()), b.as_str());
                    }
                    r = smaller;
                } else if r.node_count() < cap as usize {
                    let name = format!("n{fresh}");
                    fresh += 1;
                    naive.add();
                    let bigger = r.with_node(Node::new(name.as_str())).unwrap();
                    for (&h, b) in hashes.iter().zip(&before) {
                        let after = bigger.node_name(bigger.route_hash(h).unwrap());
                        if after != name { prop_assert_eq!(after, b.as_str()); }
                    }
                    r = bigger;
                }
                for &h in &hashes {
                    prop_assert_eq!(r.bucket(h), naive.bucket(h));
                }
            }
            let mut seen = Vec::new();
            r.preference(b"key", &mut |id| { seen.push(id.as_u32()); ControlFlow::Continue(()) }).unwrap();
            prop_assert_eq!(seen[0], r.route(b"key").as_u32());
            seen.sort_unstable();
            prop_assert_eq!(seen, (0..r.node_count() as u32).collect::<Vec<_>>());
        }
    }
}

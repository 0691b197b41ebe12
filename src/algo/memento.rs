//! MementoHash (Coluzzi, Brocco, Antonucci & Leidi 2023, arXiv:2306.09783): jump hash that can
//! remove **any** node.
//!
//! Jump hash maps keys onto buckets `0..n` with no memory but can only drop the last bucket.
//! Memento keeps jump over the whole "b-array" and remembers each removed bucket `b` with its
//! *replacer* `r` (the working-bucket count right after the removal). A key that jumps onto a
//! removed bucket is re-hashed into `0..r`; landing on a bucket removed *earlier* (whose
//! replacer is `>= r`) follows the replacement chain. Only the removed bucket's keys move, and
//! re-adding restores the most recently removed bucket first, which brings those keys back
//! exactly.
//!
//! Removing the last bucket while nothing else is removed shrinks the b-array, like jump.

use std::ops::ControlFlow;

use crate::algo::builder::Configure;
use crate::algo::{bucket_preference, jump};
use crate::algorithm::Algorithm;
use crate::error::{Error, Result};
use crate::hash::KeyHasher;
use crate::mix::mix64;
use crate::node::{Node, NodeId, NodeSet};
use crate::router::Router;
use crate::Builder;

const NONE: u32 = u32::MAX;

/// The seeded re-hash of a key that landed on removed bucket `b`. Frozen: part of the routes.
#[inline]
fn rehash(hash: u64, b: u32) -> u64 {
    mix64(hash ^ mix64(u64::from(b) + 1))
}

/// MementoHash over unit-weight nodes with arbitrary removal.
///
/// - **Buckets**: [`Memento::builder`] gives node `i` bucket `i`. [`Memento::without_node`] frees
///   a node's bucket; [`Memento::with_node`] gives the new node the most recently removed bucket
///   (or a new one at the end when none is removed).
/// - **Cost**: `route` = one hash + jump (O(ln n)) + one re-hash per removed bucket met on the
///   chain (expected O(1) while few are removed; the paper bounds it by O(ln²(n/w))). Memory:
///   12 bytes per bucket of the b-array (replacer, previous removal, owner) plus the node set.
/// - **Preference list**: the route, then the routes of `mix64(h + i)` for i = 1..=4N skipping
///   nodes already produced, then the remaining nodes in bucket order.
#[derive(Clone, Debug)]
pub struct Memento {
    nodes: NodeSet,
    hasher: KeyHasher,
    /// Per bucket: `NONE` while working, else the working count right after its removal.
    replacer: Vec<u32>,
    /// Per removed bucket: the bucket removed before it (the restore stack's next link).
    prev_removed: Vec<u32>,
    /// Per bucket: the owning node id, `NONE` when removed.
    owner: Vec<u32>,
    last_removed: u32,
    removed: u32,
}

impl Memento {
    /// A builder for this router (see [`Builder`]).
    pub fn builder() -> Builder<Memento> {
        Builder::default()
    }

    /// A router over weight-1 nodes named `names`, with the default options.
    ///
    /// # Errors
    /// As [`NodeSet::from_names`](crate::NodeSet::from_names) and the builder's `build`.
    pub fn from_names<I>(names: I) -> Result<Memento>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        Memento::builder().nodes(names).build()
    }
}

/// The options of [`Builder<Memento>`].
#[derive(Clone, Debug, Default)]
pub struct MementoOptions {
    pub(crate) hasher: KeyHasher,
}

impl Configure for Memento {
    type Options = MementoOptions;
}

impl Builder<Memento> {
    /// The key hasher; default xxh3 with seed 0.
    pub fn hasher(mut self, hasher: KeyHasher) -> Builder<Memento> {
        self.options.hasher = hasher;
        self
    }
}

impl Builder<Memento> {
    /// Builds the router (bucket `i` = node `i`, nothing removed: routes equal
    /// [`Jump`](crate::Jump)'s).
    ///
    /// # Errors
    /// The [`NodeSet::new`] errors; [`Error::Unsupported`] if any weight differs from 1.
    pub fn build(mut self) -> Result<Memento> {
        Memento::new(self.take_nodes()?, self.options.hasher)
    }
}

impl Memento {
    /// Bucket `i` = node `i`, nothing removed: routes equal [`Jump`](crate::Jump)'s.
    fn new(nodes: NodeSet, hasher: KeyHasher) -> Result<Memento> {
        if !nodes.all_unit_weight() {
            return Err(Error::Unsupported { algorithm: "memento", operation: "weighted nodes" });
        }
        let n = nodes.len() as u32;
        Ok(Memento {
            nodes,
            hasher,
            replacer: vec![NONE; n as usize],
            prev_removed: vec![NONE; n as usize],
            owner: (0..n).collect(),
            last_removed: n,
            removed: 0,
        })
    }

    /// The hasher in use.
    pub fn hasher(&self) -> KeyHasher {
        self.hasher
    }

    /// Size of the b-array (working plus removed buckets).
    pub fn bucket_count(&self) -> u32 {
        self.owner.len() as u32
    }

    /// Number of removed buckets remembered.
    pub fn removed_count(&self) -> u32 {
        self.removed
    }

    /// The bucket of node `id`. O(b-array).
    ///
    /// # Panics
    /// If `id` does not belong to this router.
    pub fn bucket_of(&self, id: NodeId) -> u32 {
        self.owner.iter().position(|&o| o == id.as_u32()).expect("foreign NodeId") as u32
    }

    /// A new router without node `name`: only that node's keys move. O(N) (the node set is
    /// rebuilt; ids after `name`'s shift down by one).
    ///
    /// # Errors
    /// [`Error::UnknownNode`]; [`Error::NoNodes`] when `name` is the last node.
    pub fn without_node(&self, name: &str) -> Result<Memento> {
        let id = self.nodes.require(name)?;
        let nodes = self.nodes.without_node(name)?;
        let b = self.bucket_of(id);
        let mut next = Memento { nodes, ..self.clone() };
        for o in next.owner.iter_mut() {
            if *o != NONE && *o > id.as_u32() {
                *o -= 1;
            }
        }
        let size = next.owner.len() as u32;
        if next.removed == 0 && b == size - 1 {
            // Jump's own case: drop the tail bucket.
            for v in [&mut next.replacer, &mut next.prev_removed, &mut next.owner] {
                v.truncate(b as usize);
            }
            next.last_removed = b;
        } else {
            let working_after = size - next.removed - 1;
            next.replacer[b as usize] = working_after;
            next.prev_removed[b as usize] = next.last_removed;
            next.owner[b as usize] = NONE;
            next.last_removed = b;
            next.removed += 1;
        }
        Ok(next)
    }

    /// A new router with weight-1 `node` added on the most recently removed bucket (or a new
    /// bucket at the end): re-adding the node removed last restores its keys exactly. O(N).
    ///
    /// # Errors
    /// [`Error::DuplicateNode`], [`Error::EmptyNodeName`] (as [`NodeSet::with_node`]);
    /// [`Error::Unsupported`] for a weight other than 1.
    pub fn with_node(&self, node: Node) -> Result<Memento> {
        let nodes = self.nodes.with_node(node)?;
        if !nodes.all_unit_weight() {
            return Err(Error::Unsupported { algorithm: "memento", operation: "weighted nodes" });
        }
        let new_id = (nodes.len() - 1) as u32;
        let mut next = Memento { nodes, ..self.clone() };
        let bucket = next.last_removed;
        if next.removed == 0 {
            debug_assert_eq!(bucket as usize, next.owner.len());
            next.last_removed = bucket + 1;
        } else {
            next.last_removed = next.prev_removed[bucket as usize];
            next.replacer[bucket as usize] = NONE;
            next.prev_removed[bucket as usize] = NONE;
            next.removed -= 1;
        }
        if bucket as usize >= next.owner.len() {
            next.replacer.push(NONE);
            next.prev_removed.push(NONE);
            next.owner.push(NONE);
        }
        next.owner[bucket as usize] = new_id;
        Ok(next)
    }

    /// The working bucket for a key hash (the paper's lookup).
    #[inline]
    pub fn bucket(&self, hash: u64) -> u32 {
        let mut b = jump::bucket_unchecked_nonzero(hash, self.owner.len() as u32);
        let mut r = self.replacer[b as usize];
        while r != NONE {
            // `r >= 1`: a removal always leaves a working bucket.
            b = (rehash(hash, b) % u64::from(r)) as u32;
            let mut rr = self.replacer[b as usize];
            while rr != NONE && rr >= r {
                b = rr;
                rr = self.replacer[b as usize];
            }
            r = rr;
        }
        b
    }

    #[inline]
    fn owner(&self, hash: u64) -> NodeId {
        NodeId::from_index(self.owner[self.bucket(hash) as usize])
    }

    fn heap_bytes(&self) -> usize {
        (self.replacer.capacity() + self.prev_removed.capacity() + self.owner.capacity()) * 4
    }
}

impl Router for Memento {
    fn algorithm(&self) -> Algorithm {
        Algorithm::Memento
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

    /// The oracle: the paper's lookup over a plain list of (bucket, replacer) removals, rebuilt
    /// from the operation history on every call, with linear searches and no shortcuts.
    struct Naive {
        size: u32,
        removals: Vec<(u32, u32)>,
    }

    impl Naive {
        fn replay(n: u32, ops: &[Op]) -> Naive {
            let mut s = Naive { size: n, removals: Vec::new() };
            for op in ops {
                match *op {
                    Op::Remove(b) => {
                        if s.removals.is_empty() && b == s.size - 1 {
                            s.size -= 1;
                        } else {
                            let working = s.size - s.removals.len() as u32;
                            s.removals.push((b, working - 1));
                        }
                    }
                    Op::Add => {
                        if s.removals.pop().is_none() {
                            s.size += 1;
                        }
                    }
                }
            }
            s
        }
        fn replacer(&self, b: u32) -> Option<u32> {
            self.removals.iter().find(|r| r.0 == b).map(|r| r.1)
        }
        fn bucket(&self, hash: u64) -> u32 {
            let mut b = jump::bucket(hash, self.size);
            while let Some(r) = self.replacer(b) {
                b = (rehash(hash, b) % u64::from(r)) as u32;
                while let Some(rr) = self.replacer(b).filter(|&rr| rr >= r) {
                    b = rr;
                }
            }
            b
        }
    }

    #[derive(Clone, Copy, Debug)]
    enum Op {
        Remove(u32),
        Add,
    }

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("n{i}")).collect()
    }

    #[test]
    fn equals_jump_without_removals() {
        let m = Memento::from_names(names(37)).unwrap();
        for h in (0..5000u64).map(mix64) {
            assert_eq!(m.route_hash(h).unwrap().as_u32(), jump::bucket(h, 37));
        }
    }

    #[test]
    fn errors() {
        let m = Memento::from_names(["a"]).unwrap();
        assert_eq!(m.without_node("a").unwrap_err(), Error::NoNodes);
        assert!(matches!(m.without_node("zz"), Err(Error::UnknownNode { .. })));
        assert!(matches!(m.with_node(Node::new("a")), Err(Error::DuplicateNode { .. })));
        let weighted = NodeSet::new([Node::new("a").with_weight(2.0)]).unwrap();
        assert!(matches!(Memento::new(weighted, KeyHasher::default()), Err(Error::Unsupported { .. })));
    }

    #[test]
    fn balance_after_removing_a_third() {
        let n = 60;
        let mut m = Memento::from_names(names(n)).unwrap();
        for i in (0..n).step_by(3) {
            m = m.without_node(&format!("n{i}")).unwrap();
        }
        let live = m.node_count();
        let mut counts = vec![0u32; live];
        let keys = 400_000u64;
        for k in 0..keys {
            counts[m.route_hash(mix64(k)).unwrap().index()] += 1;
        }
        let mean = keys as f64 / live as f64;
        let peak = f64::from(*counts.iter().max().unwrap()) / mean;
        let low = f64::from(*counts.iter().min().unwrap()) / mean;
        assert!(peak < 1.25 && low > 0.75, "peak {peak}, low {low}");
    }

    proptest! {
        /// Random remove/add sequences: the router agrees with the naive replay, removing moves
        /// only the removed node's keys, and re-adding the last removed restores them exactly.
        #[test]
        fn matches_oracle_and_moves_minimum(n in 1usize..40, script in prop::collection::vec((any::<bool>(), any::<u32>()), 0..30), hashes in prop::collection::vec(any::<u64>(), 64)) {
            let mut m = Memento::from_names(names(n)).unwrap();
            let mut ops = Vec::new();
            let mut next_name = n;
            for (remove, pick) in script {
                let before: Vec<String> = hashes.iter().map(|&h| m.node_name(m.route_hash(h).unwrap()).to_owned()).collect();
                if remove && m.node_count() > 1 {
                    let id = NodeId::from_index(pick % m.node_count() as u32);
                    let name = m.node_name(id).to_owned();
                    ops.push(Op::Remove(m.bucket_of(id)));
                    let smaller = m.without_node(&name).unwrap();
                    for (&h, b) in hashes.iter().zip(&before) {
                        let after = smaller.node_name(smaller.route_hash(h).unwrap());
                        if *b != name { prop_assert_eq!(after, b.as_str()); }
                    }
                    // Restore: the same name comes back on the same bucket with the same keys.
                    let restored = smaller.with_node(Node::new(name.as_str())).unwrap();
                    for (&h, b) in hashes.iter().zip(&before) {
                        prop_assert_eq!(restored.node_name(restored.route_hash(h).unwrap()), b.as_str());
                    }
                    m = smaller;
                } else {
                    let name = format!("n{next_name}");
                    next_name += 1;
                    ops.push(Op::Add);
                    let bigger = m.with_node(Node::new(name.as_str())).unwrap();
                    for (&h, b) in hashes.iter().zip(&before) {
                        let after = bigger.node_name(bigger.route_hash(h).unwrap());
                        if after != name { prop_assert_eq!(after, b.as_str()); }
                    }
                    m = bigger;
                }
                let naive = Naive::replay(n as u32, &ops);
                for &h in &hashes {
                    prop_assert_eq!(m.bucket(h), naive.bucket(h));
                }
            }
            let mut seen = Vec::new();
            m.preference(b"key", &mut |id| { seen.push(id.as_u32()); ControlFlow::Continue(()) }).unwrap();
            prop_assert_eq!(seen[0], m.route(b"key").as_u32());
            seen.sort_unstable();
            prop_assert_eq!(seen, (0..m.node_count() as u32).collect::<Vec<_>>());
        }
    }
}

//! JumpBackAnchor (hash4j 2025, `ConsistentJumpBackAnchorBucketSetHasher`): JumpBackHash plus
//! AnchorHash/Memento-style removal of **any** bucket, bit-exact with hash4j 0.31 over whole
//! add/remove histories, including its `getState` bytes.
//!
//! State: `a` bucket ids handed out so far, a stack of removed ids, and per removed id `b` the
//! working count right after its removal (`A[b] >= 1`) and a replacement id (`K[b]`). A key
//! runs JumpBackHash over `0..a`; landing on a removed id it draws a uniform index below
//! `A[b]` from the *same* random stream and follows replacements. Only the removed bucket's
//! keys move; re-adding pops the stack (LIFO) and restores the previous mapping exactly.

use std::ops::ControlFlow;

use crate::algo::bucket_preference;
use crate::algo::builder::Configure;
use crate::algorithm::Algorithm;
use crate::arch::generic::{jumpback_with, RandomSequence, SplitMix64};
use crate::error::{Error, Result};
use crate::hash::KeyHasher;
use crate::node::{Node, NodeId, NodeSet};
use crate::router::Router;
use crate::Builder;

const NONE: u32 = u32::MAX;

/// hash4j's `uniformInt(s)` (Lemire's method on the low 32 bits of each draw): a uniform value
/// in `0..s`, `s >= 1`.
#[inline]
fn uniform<R: RandomSequence>(rng: &mut R, s: u32) -> u32 {
    let mut m = u64::from(rng.next_u64() as u32) * u64::from(s);
    if (m as u32) < s {
        let t = s.wrapping_neg() % s;
        while (m as u32) < t {
            m = u64::from(rng.next_u64() as u32) * u64::from(s);
        }
    }
    (m >> 32) as u32
}

/// The bucket-level JumpBackAnchor state: hash4j's `ConsistentJumpBackAnchorBucketSetHasher`
/// with the splitmix64 generator. Memory: 8 bytes per id handed out plus 4 per removed id.
///
/// Lookups cost one JumpBackHash (expected O(1)) plus, when the key lands on a removed id, a
/// uniform draw and a replacement walk per removed id met (expected O(1 + ln(a / working))).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JumpBackAnchorBucketSet {
    /// Ids handed out (hash4j's historic maximum id count).
    a: u32,
    /// Removed ids, bottom to top.
    stack: Vec<u32>,
    /// Per id: 0 while working, else the working count right after its removal.
    removed_at: Vec<u32>,
    /// Per removed id: its replacement.
    replacement: Vec<u32>,
}

impl JumpBackAnchorBucketSet {
    /// No buckets.
    pub fn new() -> JumpBackAnchorBucketSet {
        JumpBackAnchorBucketSet::default()
    }

    /// Buckets `0..n`, nothing removed: lookups equal [`jumpback::bucket`](crate::jumpback::bucket).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `n > i32::MAX` (hash4j's ids are Java ints).
    pub fn with_buckets(n: u32) -> Result<JumpBackAnchorBucketSet> {
        if n > i32::MAX as u32 {
            return Err(Error::InvalidParameter { name: "buckets", reason: format!("{n} exceeds 2^31-1") });
        }
        let mut s = JumpBackAnchorBucketSet::new();
        s.a = n;
        s.removed_at = vec![0; n as usize];
        s.replacement = vec![0; n as usize];
        Ok(s)
    }

    /// Working buckets (hash4j's `getNumBuckets`).
    pub fn num_buckets(&self) -> u32 {
        self.a - self.stack.len() as u32
    }

    /// Ids handed out so far: every working id is below it.
    pub fn id_count(&self) -> u32 {
        self.a
    }

    /// Whether `id` is a working bucket.
    pub fn is_working(&self, id: u32) -> bool {
        id < self.a && self.removed_at[id as usize] == 0
    }

    /// Working ids, ascending (hash4j's `getBuckets`). O(a).
    pub fn working_buckets(&self) -> Vec<u32> {
        (0..self.a).filter(|&b| self.removed_at[b as usize] == 0).collect()
    }

    /// The removed ids, bottom (removed first) to top (re-added first).
    pub fn removed(&self) -> &[u32] {
        &self.stack
    }

    /// Adds a bucket and returns its id (hash4j's `addBucket`): the most recently removed id
    /// if any (restoring exactly the keys it had), else a new id `a`.
    ///
    /// # Panics
    /// If `2^31 - 1` ids are already handed out (hash4j's int limit).
    pub fn add_bucket(&mut self) -> u32 {
        match self.stack.pop() {
            Some(b) => {
                self.removed_at[b as usize] = 0;
                self.replacement[b as usize] = 0;
                b
            }
            None => {
                assert!(self.a < i32::MAX as u32, "JumpBackAnchorBucketSet: 2^31-1 ids exhausted");
                self.a += 1;
                self.removed_at.push(0);
                self.replacement.push(0);
                self.a - 1
            }
        }
    }

    /// Removes bucket `id` (hash4j's `removeBucket`): only its keys move. False (and nothing
    /// changes) when `id` was never handed out or is already removed. Removing the last
    /// working bucket empties the set; removing the highest id while nothing else is removed
    /// shrinks the id range as jump would.
    pub fn remove_bucket(&mut self, id: u32) -> bool {
        if !self.is_working(id) {
            return false;
        }
        if self.num_buckets() == 1 {
            *self = JumpBackAnchorBucketSet::new();
        } else if id == self.a - 1 && self.stack.is_empty() {
            self.a -= 1;
            self.removed_at.pop();
            self.replacement.pop();
        } else {
            self.push_removed(id);
        }
        true
    }

    /// The stack path of a removal (also the replay of [`from_state`](Self::from_state)).
    fn push_removed(&mut self, id: u32) {
        self.stack.push(id);
        let n = self.num_buckets();
        self.removed_at[id as usize] = n;
        self.replacement[id as usize] = self.view(n, n + 1);
    }

    /// Follows replacements from `b` while they were removed when `v` or more buckets worked.
    #[inline]
    fn view(&self, mut b: u32, v: u32) -> u32 {
        while self.removed_at[b as usize] >= v {
            b = self.replacement[b as usize];
        }
        b
    }

    /// The working bucket of a 64-bit key hash (hash4j's `getBucket`); `None` when the set is
    /// empty (hash4j throws).
    #[inline]
    pub fn bucket(&self, key: u64) -> Option<u32> {
        match self.a {
            0 => None,
            1 => Some(0),
            a => Some(self.bucket_nonempty(key, a)),
        }
    }

    /// [`bucket`](Self::bucket) for `a >= 2`.
    #[inline]
    fn bucket_nonempty(&self, key: u64, a: u32) -> u32 {
        let mut rng = SplitMix64(key);
        let mut b = jumpback_with(&mut rng, a);
        while self.removed_at[b as usize] != 0 {
            let v = self.removed_at[b as usize];
            b = self.view(uniform(&mut rng, v), v);
        }
        b
    }

    /// hash4j's `getState`: `a` as a little-endian i32, then the removed stack bottom to top.
    pub fn state(&self) -> Vec<u8> {
        std::iter::once(self.a).chain(self.stack.iter().copied()).flat_map(u32::to_le_bytes).collect()
    }

    /// The set a [`state`](Self::state) (or hash4j's `getState`) describes (hash4j's
    /// `setState`): two processes with the same bytes route every key the same way.
    ///
    /// # Errors
    /// [`Error::Malformed`] when the length is not a positive multiple of 4, `a` exceeds
    /// `2^31 - 1`, a removed id is `>= a` or repeated, or every id is removed.
    pub fn from_state(bytes: &[u8]) -> Result<JumpBackAnchorBucketSet> {
        if bytes.is_empty() || !bytes.len().is_multiple_of(4) {
            return Err(Error::Malformed(format!("jumpback-anchor state: {} bytes is not 4 + 4k", bytes.len())));
        }
        let mut words = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
        let a = words.next().unwrap_or(0);
        let mut set = JumpBackAnchorBucketSet::with_buckets(a)
            .map_err(|_| Error::Malformed(format!("jumpback-anchor state: id count {a} exceeds 2^31-1")))?;
        for id in words {
            if !set.is_working(id) || set.num_buckets() == 1 {
                return Err(Error::Malformed(format!(
                    "jumpback-anchor state: removed id {id} is out of range, repeated, or the last working one"
                )));
            }
            set.push_removed(id);
        }
        Ok(set)
    }

    fn heap_bytes(&self) -> usize {
        (self.stack.capacity() + self.removed_at.capacity() + self.replacement.capacity()) * 4
    }
}

/// JumpBackAnchor over unit-weight named nodes, with arbitrary removal.
///
/// - **Ids**: [`JumpBackAnchor::builder`] gives node `i` bucket id `i`.
///   [`without_node`](Self::without_node) removes a node's id;
///   [`with_node`](Self::with_node) gives the new node the id the removal stack hands back
///   (the most recently removed one, else a new id). Re-adding the most recently removed node
///   therefore restores its exact keys; adding a *different* node at that point gives it the
///   removed node's id and so exactly the removed node's former keys (a node re-added out of
///   LIFO order gets whatever id is on top of the stack, not its old one).
/// - **Cost**: one key hash, JumpBackHash over the ids handed out, and, for a key on a removed
///   id, a draw and a replacement walk. Memory: 12 bytes per id (state and owner) plus the
///   node set.
/// - **Preference list**: the route, then the routes of `mix64(h + i)` for i = 1..=4N skipping
///   nodes already produced, then the remaining nodes in id order.
#[derive(Clone, Debug)]
pub struct JumpBackAnchor {
    nodes: NodeSet,
    hasher: KeyHasher,
    set: JumpBackAnchorBucketSet,
    /// Per id: the owning node id, `NONE` when removed.
    owner: Vec<u32>,
}

impl JumpBackAnchor {
    /// A builder for this router (see [`Builder`]).
    pub fn builder() -> Builder<JumpBackAnchor> {
        Builder::default()
    }

    /// A router over weight-1 nodes named `names`, with the default options.
    ///
    /// # Errors
    /// As [`NodeSet::from_names`](crate::NodeSet::from_names) and the builder's `build`.
    pub fn from_names<I>(names: I) -> Result<JumpBackAnchor>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        JumpBackAnchor::builder().nodes(names).build()
    }
}

/// The options of [`Builder<JumpBackAnchor>`].
#[derive(Clone, Debug, Default)]
pub struct JumpBackAnchorOptions {
    pub(crate) hasher: KeyHasher,
}

impl Configure for JumpBackAnchor {
    type Options = JumpBackAnchorOptions;
}

impl Builder<JumpBackAnchor> {
    /// The key hasher; default xxh3 with seed 0.
    pub fn hasher(mut self, hasher: KeyHasher) -> Builder<JumpBackAnchor> {
        self.options.hasher = hasher;
        self
    }
}

impl Builder<JumpBackAnchor> {
    /// Builds the router (id `i` = node `i`, nothing removed: routes equal
    /// [`JumpBack`](crate::JumpBack)'s with splitmix64).
    ///
    /// # Errors
    /// The [`NodeSet::new`] errors; [`Error::Unsupported`] if any weight differs from 1.
    pub fn build(mut self) -> Result<JumpBackAnchor> {
        let nodes = self.take_nodes()?;
        if !nodes.all_unit_weight() {
            return Err(Error::Unsupported { algorithm: "jumpback-anchor", operation: "weighted nodes" });
        }
        let set = JumpBackAnchorBucketSet::with_buckets(nodes.len() as u32)?;
        let owner = (0..nodes.len() as u32).collect();
        Ok(JumpBackAnchor { nodes, hasher: self.options.hasher, set, owner })
    }
}

impl JumpBackAnchor {
    /// The hasher in use.
    pub fn hasher(&self) -> KeyHasher {
        self.hasher
    }

    /// The bucket-level state (ids, removal stack; [`JumpBackAnchorBucketSet::state`] exports
    /// it in hash4j's format).
    pub fn bucket_set(&self) -> &JumpBackAnchorBucketSet {
        &self.set
    }

    /// The bucket id of node `id`. O(ids).
    ///
    /// # Panics
    /// If `id` does not belong to this router.
    pub fn bucket_of(&self, id: NodeId) -> u32 {
        self.owner.iter().position(|&o| o == id.as_u32()).expect("foreign NodeId") as u32
    }

    /// The working bucket id for a key hash.
    #[inline]
    pub fn bucket(&self, hash: u64) -> u32 {
        // A router always has a node, so the set is never empty.
        self.set.bucket(hash).unwrap_or(0)
    }

    /// A new router without node `name`: only that node's keys move. O(N) (the node set is
    /// rebuilt; node ids after `name`'s shift down by one, bucket ids do not change).
    ///
    /// # Errors
    /// [`Error::UnknownNode`]; [`Error::NoNodes`] when `name` is the last node.
    pub fn without_node(&self, name: &str) -> Result<JumpBackAnchor> {
        let id = self.nodes.require(name)?;
        let nodes = self.nodes.without_node(name)?;
        let b = self.bucket_of(id);
        let mut next = JumpBackAnchor { nodes, ..self.clone() };
        for o in next.owner.iter_mut() {
            if *o != NONE && *o > id.as_u32() {
                *o -= 1;
            }
        }
        let removed = next.set.remove_bucket(b);
        debug_assert!(removed, "a node's bucket is working");
        next.owner.truncate(next.set.id_count() as usize);
        if let Some(o) = next.owner.get_mut(b as usize) {
            *o = NONE;
        }
        Ok(next)
    }

    /// A new router with weight-1 `node` on the id the removal stack hands back (the most
    /// recently removed, else a new one): re-adding the node removed last restores its keys
    /// exactly. O(N).
    ///
    /// # Errors
    /// [`Error::DuplicateNode`], [`Error::EmptyNodeName`] (as [`NodeSet::with_node`]);
    /// [`Error::Unsupported`] for a weight other than 1.
    pub fn with_node(&self, node: Node) -> Result<JumpBackAnchor> {
        let nodes = self.nodes.with_node(node)?;
        if !nodes.all_unit_weight() {
            return Err(Error::Unsupported { algorithm: "jumpback-anchor", operation: "weighted nodes" });
        }
        let new_id = (nodes.len() - 1) as u32;
        let mut next = JumpBackAnchor { nodes, ..self.clone() };
        let b = next.set.add_bucket();
        if b as usize >= next.owner.len() {
            next.owner.resize(b as usize + 1, NONE);
        }
        next.owner[b as usize] = new_id;
        Ok(next)
    }

    #[inline]
    fn owner(&self, hash: u64) -> NodeId {
        NodeId::from_index(self.owner[self.bucket(hash) as usize])
    }

    fn heap_bytes(&self) -> usize {
        self.set.heap_bytes() + self.owner.capacity() * 4
    }
}

impl Router for JumpBackAnchor {
    fn algorithm(&self) -> Algorithm {
        Algorithm::JumpBackAnchor
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
    /// in id order. Frozen: it decides where failover sends a down node's keys.
    fn preference(&self, key: &[u8], visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) -> Result<()> {
        bucket_preference(self.hasher.hash(key), &self.owner, self.nodes.len(), |h| self.owner(h), visit);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Router;

    #[test]
    fn hash4j_readme_example() {
        let keys = [0x48ac_5021_66f7_61a8u64, 0x9b71_93f9_7ec9_cb79, 0x6ce8_8bf7_de8c_06c2];
        let mut set = JumpBackAnchorBucketSet::new();
        assert_eq!([set.add_bucket(), set.add_bucket(), set.add_bucket()], [0, 1, 2]);
        assert_eq!(keys.map(|k| set.bucket(k).unwrap()), [1, 0, 2]);
        assert!(set.remove_bucket(1));
        assert_eq!(keys.map(|k| set.bucket(k).unwrap()), [2, 0, 2]);
        assert_eq!(set.state(), [3, 0, 0, 0, 1, 0, 0, 0]);
    }

    #[test]
    fn router_ids_follow_the_stack() {
        let r = JumpBackAnchor::from_names(["a", "b", "c", "d"]).unwrap();
        let r2 = r.without_node("b").unwrap();
        assert_eq!(r2.bucket_set().removed(), &[1]);
        // A different node added now takes b's id, and so exactly b's former keys.
        let r3 = r2.with_node(Node::new("e")).unwrap();
        for i in 0..200u64 {
            let h = crate::mix::mix64(i);
            let (before, after) = (r.route_hash(h).unwrap(), r3.route_hash(h).unwrap());
            let name = |x: &JumpBackAnchor, id| x.node_name(id).to_owned();
            if name(&r, before) == "b" {
                assert_eq!(name(&r3, after), "e");
            } else {
                assert_eq!(name(&r, before), name(&r3, after));
            }
        }
        assert!(matches!(r.without_node("zz"), Err(Error::UnknownNode { .. })));
        assert!(JumpBackAnchor::from_names(["a"]).unwrap().without_node("a").is_err());
    }
}

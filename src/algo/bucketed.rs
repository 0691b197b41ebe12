//! One router for the memory-free bucket functions (jump, JumpBack, FlipHash, power CH,
//! BinomialHash): node `i` is bucket `i`, a route is a pure function of (key hash, node
//! count), and only the last node can be removed.
//!
//! [`Bucketed<F>`] is written once, generic over the [`BucketFn`] `F`; [`Jump`](crate::Jump),
//! [`JumpBack`](crate::JumpBack), [`FlipHash`](crate::FlipHash), [`PowerCh`](crate::PowerCh)
//! and [`BinomialHash`](crate::BinomialHash) are its instances, so the five cannot drift apart
//! and each `route` compiles to the key hash plus its own bucket function.

use std::fmt::Debug;
use std::ops::ControlFlow;

use crate::algo::builder::Configure;
use crate::algo::rehash_preference;
use crate::algorithm::Algorithm;
use crate::error::{Error, Result};
use crate::hash::KeyHasher;
use crate::node::{Node, NodeId, NodeSet};
use crate::router::Router;
use crate::Builder;

/// A bucket function: maps a 64-bit key hash and a bucket count `n >= 1` to a bucket in
/// `0..n`, with no state but its own parameters (JumpBack's generator). Implemented by the
/// kernels of the crate's bucket routers (sealed).
pub trait BucketFn: Copy + Debug + Default + Send + Sync + sealed::Sealed {
    /// The algorithm the router over this function is.
    const ALGORITHM: Algorithm;

    /// Whether the fingerprint encodes the hasher and the names in order (exact) rather than
    /// probing routes: jump's frozen encoding; the others probe.
    const EXACT_FINGERPRINT: bool = false;

    /// The bucket of `hash` among `n >= 1` buckets.
    fn bucket(&self, hash: u64, n: u32) -> u32;

    /// `out[i] = self.bucket(hashes[i], n)`; a SIMD kernel where the function has one.
    fn bucket_batch(&self, hashes: &[u64], n: u32, out: &mut [u32]) {
        for (o, &h) in out.iter_mut().zip(hashes) {
            *o = self.bucket(h, n);
        }
    }
}

pub(crate) mod sealed {
    /// Keeps [`BucketFn`](super::BucketFn) to the crate's kernels.
    pub trait Sealed {}
}

/// A router over named nodes where node `i` is bucket `i` of the bucket function `F`: hash the
/// key bytes with the configured hasher, then `F`'s bucket.
///
/// Append nodes at the end (and remove from the end) to move the minimum: an addition moves
/// only the keys that land in the new bucket. Weights must all be 1. Cost: one key hash plus
/// the bucket function; no memory beyond the node set. Use the type aliases:
/// [`Jump`](crate::Jump), [`JumpBack`](crate::JumpBack), [`FlipHash`](crate::FlipHash),
/// [`PowerCh`](crate::PowerCh), [`BinomialHash`](crate::BinomialHash).
#[derive(Clone, Debug)]
pub struct Bucketed<F: BucketFn> {
    nodes: NodeSet,
    hasher: KeyHasher,
    f: F,
}

/// The options of a [`Builder`] of a bucket router: the hasher and the function's parameters.
#[derive(Clone, Debug, Default)]
pub struct BucketedOptions<F> {
    pub(crate) hasher: KeyHasher,
    pub(crate) f: F,
}

impl<F: BucketFn> Configure for Bucketed<F> {
    type Options = BucketedOptions<F>;
}

impl<F: BucketFn> Bucketed<F> {
    /// A builder for this router (see [`Builder`]).
    pub fn builder() -> Builder<Bucketed<F>> {
        Builder::default()
    }

    /// A router over weight-1 nodes named `names` (bucket `i` = the `i`-th name), with the
    /// default options.
    ///
    /// # Errors
    /// As [`NodeSet::from_names`] and the builder's `build`.
    pub fn from_names<I>(names: I) -> Result<Bucketed<F>>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        Bucketed::builder().nodes(names).build()
    }

    fn new(nodes: NodeSet, hasher: KeyHasher, f: F) -> Result<Bucketed<F>> {
        if !nodes.all_unit_weight() {
            return Err(Error::Unsupported { algorithm: F::ALGORITHM.name(), operation: "weighted nodes" });
        }
        Ok(Bucketed { nodes, hasher, f })
    }

    /// The hasher in use.
    pub fn hasher(&self) -> KeyHasher {
        self.hasher
    }

    /// The bucket (node index) for a pre-computed 64-bit key hash.
    #[inline]
    pub fn bucket(&self, hash: u64) -> u32 {
        self.f.bucket(hash, self.nodes.len() as u32)
    }

    /// A new router with `node` appended as bucket N: only the keys that now land in it move.
    ///
    /// # Errors
    /// As [`NodeSet::with_node`]; [`Error::Unsupported`] for a weight other than 1.
    pub fn with_node(&self, node: Node) -> Result<Bucketed<F>> {
        Bucketed::new(self.nodes.with_node(node)?, self.hasher, self.f)
    }

    /// A new router without the node named `name`, which must be the last one: these
    /// algorithms can only shrink at the end (use [`Memento`](crate::Memento) or
    /// [`JumpBackAnchor`](crate::JumpBackAnchor) to remove any node).
    ///
    /// # Errors
    /// [`Error::UnknownNode`], [`Error::NoNodes`] for the only node, [`Error::Unsupported`] when
    /// `name` is not the last node.
    pub fn without_node(&self, name: &str) -> Result<Bucketed<F>> {
        let id = self.nodes.require(name)?;
        if id.index() + 1 != self.nodes.len() {
            return Err(Error::Unsupported {
                algorithm: F::ALGORITHM.name(),
                operation: "removing a node other than the last",
            });
        }
        Bucketed::new(self.nodes.without_node(name)?, self.hasher, self.f)
    }

    /// The bucket function (its parameters).
    pub fn function(&self) -> F {
        self.f
    }

    #[inline]
    fn owner(&self, hash: u64) -> NodeId {
        NodeId::from_index(self.bucket(hash))
    }
}

impl<F: BucketFn> Builder<Bucketed<F>> {
    /// The key hasher; default xxh3 with seed 0.
    pub fn hasher(mut self, hasher: KeyHasher) -> Builder<Bucketed<F>> {
        self.options.hasher = hasher;
        self
    }

    /// Builds the router (bucket `i` = node `i`).
    ///
    /// # Errors
    /// The [`NodeSet::new`] errors; [`Error::Unsupported`] if any weight differs from 1 (these
    /// algorithms have no weights).
    pub fn build(mut self) -> Result<Bucketed<F>> {
        Bucketed::new(self.take_nodes()?, self.options.hasher, self.options.f)
    }
}

impl<F: BucketFn> Router for Bucketed<F> {
    fn algorithm(&self) -> Algorithm {
        F::ALGORITHM
    }
    fn nodes(&self) -> &NodeSet {
        &self.nodes
    }
    fn memory_bytes(&self) -> usize {
        crate::algo::memory_bytes::<Self>(0, &self.nodes)
    }
    // Always inlined: the body is one hash and one O(1) bucket function, and an out-of-line
    // call here measured as much as the bucket function itself (the report's dispatch section).
    #[inline(always)]
    fn route(&self, key: &[u8]) -> NodeId {
        self.owner(self.hasher.hash(key))
    }
    fn route_hash(&self, hash: u64) -> Result<NodeId> {
        Ok(self.owner(hash))
    }
    /// Hashes a chunk of keys ([`KeyHasher::hash_batch`]), then runs the bucket function's
    /// batch kernel over the hashes.
    fn route_batch(&self, keys: &[&[u8]], out: &mut [NodeId]) {
        let n = self.nodes.len() as u32;
        let mut buckets = [0u32; 256];
        crate::algo::route_chunks::<u64, 256>(
            keys,
            out,
            |ks, hs| self.hasher.hash_batch(ks, hs),
            |hs, os| {
                let bs = &mut buckets[..hs.len()];
                self.f.bucket_batch(hs, n, bs);
                for (o, &b) in os.iter_mut().zip(bs.iter()) {
                    *o = NodeId::from_index(b);
                }
            },
        );
    }
    /// Preference list: `bucket(h)`, then `bucket(mix64(h + i))` for i = 1, 2, … skipping
    /// buckets already produced; after `4 N` probes the nodes not yet produced follow in index
    /// order. Frozen: it decides where failover sends a down node's keys.
    fn preference(&self, key: &[u8], visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) -> Result<()> {
        let n = self.nodes.len() as u32;
        let rest = (0..n).map(NodeId::from_index);
        rehash_preference(self.hasher.hash(key), n as usize, |h| self.owner(h), rest, visit);
        Ok(())
    }
    fn canonical_bytes(&self) -> Vec<u8> {
        if F::EXACT_FINGERPRINT {
            crate::fingerprint::bucket_encoding(F::ALGORITHM, self.hasher, &self.nodes)
        } else {
            crate::fingerprint::probe_encoding(self)
        }
    }
}

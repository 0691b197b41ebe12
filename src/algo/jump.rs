//! Jump consistent hash (Lamping & Veach 2014), paper-exact.
//!
//! No memory, O(ln N) per key, perfect balance in expectation, and the minimum movement when
//! buckets are **appended or removed at the end**. It cannot remove an arbitrary node: a
//! failure in the middle needs [`Failover`](crate::failover::Failover) (or an arbitrary-removal
//! algorithm), and weights are not supported.

use std::ops::ControlFlow;

use crate::algo::builder::{hashed_router_basics, router_plumbing};
use crate::algo::rehash_preference;
use crate::arch::{Isa, Kernels};
use crate::error::{Error, Result};
use crate::hash::KeyHasher;
use crate::node::{Node, NodeId, NodeSet};
use crate::Builder;

/// The bucket in `0..buckets` for `key`, exactly as the paper's reference code.
///
/// O(ln buckets) iterations of one multiply and one float division; no memory.
///
/// # Panics
/// If `buckets == 0` (see [`try_bucket`] for the checked version).
#[inline]
pub fn bucket(key: u64, buckets: u32) -> u32 {
    assert!(buckets > 0, "jump::bucket: buckets must be at least 1");
    bucket_unchecked_nonzero(key, buckets)
}

/// Like [`bucket`], but returns [`Error::ZeroBuckets`] instead of panicking.
///
/// # Errors
/// [`Error::ZeroBuckets`] when `buckets == 0`.
#[inline]
pub fn try_bucket(key: u64, buckets: u32) -> Result<u32> {
    if buckets == 0 {
        Err(Error::ZeroBuckets)
    } else {
        Ok(bucket_unchecked_nonzero(key, buckets))
    }
}

/// The scalar reference loop. `buckets >= 1` (checked by callers, not unsafe to violate: it
/// then returns `u32::MAX` as the paper's `-1`).
#[inline]
pub(crate) fn bucket_unchecked_nonzero(key: u64, buckets: u32) -> u32 {
    crate::arch::generic::jump_bucket(key, buckets)
}

/// [`bucket`] for every key: `out[i] = bucket(keys[i], buckets)`, bit-identical, several keys
/// per SIMD register (AVX2: 4 lanes, AVX-512: 8 lanes, two registers interleaved) on the
/// process's SIMD path; the portable path is the scalar loop.
///
/// Cost: a group of lanes runs as many iterations as its slowest key (≈ ln buckets + a few),
/// so SIMD gains grow with lane count and shrink for tiny bucket counts.
///
/// # Panics
/// If `buckets == 0` or `keys.len() != out.len()`.
pub fn bucket_batch(keys: &[u64], buckets: u32, out: &mut [u32]) {
    bucket_batch_on(Kernels::active(), keys, buckets, out);
}

/// [`bucket_batch`] on an explicit ISA path (tests and benchmarks call each path).
///
/// # Panics
/// If `buckets == 0`, `keys.len() != out.len()`, or the CPU lacks `isa`.
pub fn bucket_batch_with(isa: Isa, keys: &[u64], buckets: u32, out: &mut [u32]) {
    let k = Kernels::new(isa).unwrap_or_else(|| panic!("jump: ISA {} is not supported on this CPU", isa.name()));
    bucket_batch_on(k, keys, buckets, out);
}

fn bucket_batch_on(k: Kernels, keys: &[u64], buckets: u32, out: &mut [u32]) {
    assert!(buckets > 0, "jump::bucket_batch: buckets must be at least 1");
    assert_eq!(keys.len(), out.len(), "jump::bucket_batch: keys and out must have the same length");
    k.jump_batch(keys, buckets, out);
}

/// Jump hash over named nodes: hash the key bytes with the configured hasher, then jump.
///
/// Node `i` of the set is bucket `i`, so append nodes at the end (and remove from the end) to
/// move the minimum. Weights must all be 1.
#[derive(Clone, Debug)]
pub struct Jump {
    nodes: NodeSet,
    hasher: KeyHasher,
}

hashed_router_basics!(Jump);

impl Builder<Jump> {
    /// Builds the router (bucket `i` = node `i`).
    ///
    /// # Errors
    /// The [`NodeSet::new`] errors; [`Error::Unsupported`] if any weight differs from 1 (jump
    /// has no weights).
    pub fn build(mut self) -> Result<Jump> {
        Jump::new(self.take_nodes()?, self.hasher)
    }
}

impl Jump {
    fn new(nodes: NodeSet, hasher: KeyHasher) -> Result<Jump> {
        if !nodes.all_unit_weight() {
            return Err(Error::Unsupported { algorithm: "jump", operation: "weighted nodes" });
        }
        Ok(Jump { nodes, hasher })
    }

    /// The hasher in use.
    pub fn hasher(&self) -> KeyHasher {
        self.hasher
    }

    /// The bucket (node index) for a pre-computed hash.
    #[inline]
    pub fn bucket(&self, hash: u64) -> u32 {
        bucket_unchecked_nonzero(hash, self.nodes.len() as u32)
    }

    /// A new router with `node` appended as bucket N: only the keys that now land in it move.
    ///
    /// # Errors
    /// As [`NodeSet::with_node`]; [`Error::Unsupported`] for a weight other than 1.
    pub fn with_node(&self, node: Node) -> Result<Jump> {
        Jump::new(self.nodes.with_node(node)?, self.hasher)
    }

    /// A new router without the node named `name`, which must be the last one: jump can only
    /// shrink at the end (use [`Memento`](crate::Memento) to remove any node).
    ///
    /// # Errors
    /// [`Error::UnknownNode`], [`Error::NoNodes`] for the only node, [`Error::Unsupported`] when
    /// `name` is not the last node.
    pub fn without_node(&self, name: &str) -> Result<Jump> {
        let id = self.nodes.id_of(name).ok_or_else(|| Error::UnknownNode { name: name.to_string() })?;
        if id.index() + 1 != self.nodes.len() {
            return Err(Error::Unsupported { algorithm: "jump", operation: "removing a node other than the last" });
        }
        Jump::new(self.nodes.without_node(name)?, self.hasher)
    }

    #[inline]
    fn owner(&self, hash: u64) -> NodeId {
        NodeId::from_index(self.bucket(hash))
    }

    fn heap_bytes(&self) -> usize {
        0
    }
}

router_plumbing!(Jump, "jump", own_batch {
    /// Hashes a chunk of keys, then jumps them all with [`bucket_batch`].
    fn route_batch(&self, keys: &[&[u8]], out: &mut [NodeId]) {
        assert_eq!(keys.len(), out.len(), "route_batch: keys and out must have the same length");
        const CHUNK: usize = 256;
        let mut hashes = [0u64; CHUNK];
        let mut buckets = [0u32; CHUNK];
        let n = self.nodes.len() as u32;
        for (ks, os) in keys.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
            let m = ks.len();
            self.hasher.hash_batch(ks, &mut hashes[..m]);
            bucket_batch(&hashes[..m], n, &mut buckets[..m]);
            for (o, &b) in os.iter_mut().zip(&buckets[..m]) {
                *o = NodeId::from_index(b);
            }
        }
    }
    /// Preference list: `bucket(h)`, then `bucket(mix64(h + i))` for i = 1, 2, … skipping
    /// buckets already produced; after `4 N` probes the nodes not yet produced follow in index
    /// order. Frozen: it decides where failover sends a down node's keys.
    fn preference(&self, key: &[u8], visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) -> Result<()> {
        preference_from_hash(self.hasher.hash(key), self.nodes.len() as u32, visit);
        Ok(())
    }
});

fn preference_from_hash(hash: u64, n: u32, visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) {
    let route = |h: u64| NodeId::from_index(bucket_unchecked_nonzero(h, n));
    rehash_preference(hash, n as usize, route, (0..n).map(NodeId::from_index), visit);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mix::mix64;

    #[test]
    fn paper_values() {
        // From the reference implementation (dgryski/go-jump's table).
        assert_eq!(bucket(0, 1), 0);
        assert_eq!(bucket(1, 1), 0);
        assert_eq!(try_bucket(42, 0), Err(Error::ZeroBuckets));
        for key in [0u64, 1, 0xDEAD_BEEF, u64::MAX] {
            assert!(bucket(key, 1000) < 1000);
        }
    }

    fn check_batch(keys: &[u64], buckets: u32) {
        let want: Vec<u32> = keys.iter().map(|&k| bucket(k, buckets)).collect();
        for isa in Isa::ALL {
            if !isa.is_supported() {
                eprintln!("SKIPPED: jump batch on {} (CPU lacks it)", isa.name());
                continue;
            }
            let mut out = vec![0u32; keys.len()];
            bucket_batch_with(isa, keys, buckets, &mut out);
            assert_eq!(out, want, "{isa:?} buckets={buckets}");
        }
    }

    #[test]
    fn batch_matches_scalar_edges() {
        let mut keys: Vec<u64> = vec![0, 1, u64::MAX, u64::MAX - 1, 1 << 63, 1 << 33, (1 << 33) - 1];
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..200 {
            x = mix64(x);
            keys.push(x);
        }
        for buckets in [1u32, 2, 3, 7, 8, 1000, 65_536, 1 << 31, (1 << 31) + 1, u32::MAX - 1, u32::MAX] {
            for len in [0, 1, 7, 8, 15, 16, 17, keys.len()] {
                check_batch(&keys[..len], buckets);
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn batch_matches_scalar(keys in proptest::collection::vec(proptest::prelude::any::<u64>(), 0..70), buckets in 1u32..=u32::MAX) {
            check_batch(&keys, buckets);
        }
    }

    #[test]
    #[should_panic(expected = "buckets must be at least 1")]
    fn zero_buckets_panics() {
        bucket(1, 0);
    }

    #[test]
    fn preference_visits_all_nodes_once() {
        for n in [1u32, 2, 3, 10, 200] {
            for h in [0u64, 7, u64::MAX] {
                let mut seen = Vec::new();
                preference_from_hash(h, n, &mut |id| {
                    seen.push(id.as_u32());
                    ControlFlow::Continue(())
                });
                assert_eq!(seen[0], bucket(h, n));
                seen.sort_unstable();
                assert_eq!(seen, (0..n).collect::<Vec<_>>());
            }
        }
    }
}

//! Jump consistent hash (Lamping & Veach 2014), paper-exact.
//!
//! No memory, O(ln N) per key, perfect balance in expectation, and the minimum movement when
//! buckets are **appended or removed at the end**. It cannot remove an arbitrary node: a
//! failure in the middle needs [`Failover`](crate::failover::Failover) (or an arbitrary-removal
//! algorithm), and weights are not supported.

use crate::algo::bucketed::{BucketFn, Bucketed};
use crate::algorithm::Algorithm;
use crate::arch::{Isa, Kernels};
use crate::error::{Error, Result};

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

/// Jump's bucket function, the kernel of [`Jump`]: [`bucket`], and [`bucket_batch`] for
/// batches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct JumpBucket;

impl crate::algo::bucketed::sealed::Sealed for JumpBucket {}

impl BucketFn for JumpBucket {
    const ALGORITHM: Algorithm = Algorithm::Jump;
    const EXACT_FINGERPRINT: bool = true;

    #[inline]
    fn bucket(&self, hash: u64, n: u32) -> u32 {
        bucket_unchecked_nonzero(hash, n)
    }

    fn bucket_batch(&self, hashes: &[u64], n: u32, out: &mut [u32]) {
        bucket_batch(hashes, n, out);
    }
}

/// Jump hash over named nodes: hash the key bytes with the configured hasher, then jump.
///
/// Node `i` of the set is bucket `i`, so append nodes at the end (and remove from the end) to
/// move the minimum. Weights must all be 1. See [`Bucketed`] for the methods.
pub type Jump = Bucketed<JumpBucket>;

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
        use crate::Router;
        for n in [1u32, 2, 3, 10, 200] {
            let jump = Jump::from_names((0..n).map(|i| format!("n{i}"))).unwrap();
            for key in [&b""[..], b"a", b"user:42"] {
                let mut seen = Vec::new();
                jump.preference(key, &mut |id| {
                    seen.push(id.as_u32());
                    std::ops::ControlFlow::Continue(())
                })
                .unwrap();
                assert_eq!(seen[0], jump.route(key).as_u32());
                seen.sort_unstable();
                assert_eq!(seen, (0..n).collect::<Vec<_>>());
            }
        }
    }
}

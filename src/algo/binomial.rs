//! BinomialHash (Coluzzi, Brocco, Antonucci & Leidi 2024, arXiv:2406.19836): O(1), memory-free,
//! bit-exact with SUPSI's `BinomialEngine` (java-consistent-hashing-algorithms `68803f8`).
//!
//! The engine hashes the key string itself: its default is XXH32 of the UTF-8 bytes with seed
//! 0, zero-extended to 64 bits, which is `KeyHasher::Xxh32 { seed: 0 }` here; the free
//! functions take the 64-bit hash (the engine with a caller's hash function). Minimum movement
//! when buckets are appended or removed at the end only.

use crate::error::{Error, Result};
use crate::mix::jump_lcg;

/// The engine's `rehash(v, seed)`: `(lcg(v)^2 * seed) >> 32`.
#[inline(always)]
fn rehash(v: u64, seed: u64) -> u64 {
    let h = jump_lcg(v);
    h.wrapping_mul(h).wrapping_mul(seed) >> 32
}

/// The engine's `relocateWithinLevel`: a random position in `b`'s level of the binary tree.
#[inline(always)]
fn relocate(b: u64, hash: u64) -> u64 {
    if b < 2 {
        return b;
    }
    let base = 1u64 << (63 - b.leading_zeros());
    let filter = base - 1;
    base + (rehash(hash, filter) & filter)
}

/// `buckets >= 1` is the caller's precondition (0 returns 0).
///
/// Split in two like FlipHash's kernel: a router's `route` inlines the first relocation, which
/// decides unless it lands in `n..2^r`; the redraws stay out of line in
/// [`bucket_beyond_n`], so the whole is small enough for the compiler to inline.
#[inline(always)]
pub(crate) fn bucket_unchecked(hash: u64, buckets: u32) -> u32 {
    if buckets < 2 {
        return 0;
    }
    let n = u64::from(buckets);
    let enclosing = n.next_power_of_two() - 1;
    // The engine masks `(int) hash`, the low 32 bits; every filter is below 2^32.
    let b = relocate(hash & 0xFFFF_FFFF & enclosing, hash);
    if b < n {
        return b as u32;
    }
    bucket_beyond_n(hash, n, enclosing)
}

/// The rest of [`bucket_unchecked`] once the first relocation landed at or past `n`: up to four
/// redraws in the top half, else the lower power of two.
#[inline(never)]
#[cold]
fn bucket_beyond_n(hash: u64, n: u64, enclosing: u64) -> u32 {
    let minor = enclosing >> 1;
    let mut h = hash;
    for _ in 0..4 {
        h = rehash(h, enclosing);
        let b = relocate(h & enclosing, h);
        if b <= minor {
            break;
        }
        if b < n {
            return b as u32;
        }
    }
    relocate(hash & 0xFFFF_FFFF & minor, hash) as u32
}

/// The BinomialHash bucket in `0..buckets` for a 64-bit key hash, as SUPSI's engine with a
/// hash function returning `hash`. Constant time (at most 5 candidate draws), no memory.
///
/// # Panics
/// If `buckets == 0` (see [`try_bucket`]).
#[inline]
pub fn bucket(hash: u64, buckets: u32) -> u32 {
    assert!(buckets > 0, "binomial::bucket: buckets must be at least 1");
    bucket_unchecked(hash, buckets)
}

/// Like [`bucket`], but returns [`Error::ZeroBuckets`] instead of panicking.
///
/// # Errors
/// [`Error::ZeroBuckets`] when `buckets == 0`.
#[inline]
pub fn try_bucket(hash: u64, buckets: u32) -> Result<u32> {
    if buckets == 0 {
        Err(Error::ZeroBuckets)
    } else {
        Ok(bucket_unchecked(hash, buckets))
    }
}

/// BinomialHash's bucket function, the kernel of [`BinomialHash`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct BinomialBucket;

impl crate::algo::bucketed::sealed::Sealed for BinomialBucket {}

impl crate::algo::bucketed::BucketFn for BinomialBucket {
    const ALGORITHM: crate::Algorithm = crate::Algorithm::Binomial;

    #[inline(always)]
    fn bucket(&self, hash: u64, n: u32) -> u32 {
        bucket_unchecked(hash, n)
    }
}

/// BinomialHash over named nodes: hash the key bytes with the configured hasher, then
/// [`bucket`]. With `KeyHasher::Xxh32 { seed: 0 }` the routes equal SUPSI's
/// `BinomialEngine` with its default hash function on the same (UTF-8) key bytes.
///
/// Node `i` is bucket `i`: append nodes at the end (and remove from the end) to move the
/// minimum. Weights must all be 1. Cost: one key hash plus at most five candidate draws;
/// no memory beyond the node set. See [`Bucketed`](crate::algo::bucketed::Bucketed) for the methods.
pub type BinomialHash = crate::algo::bucketed::Bucketed<BinomialBucket>;

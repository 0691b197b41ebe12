//! FlipHash (Masson & Lee 2024, DataDog's `fliphash` crate): a constant-time, memory-free
//! consistent hash onto `0..n`, bit-exact with `fliphash::fliphash_64(key, ..=n - 1)`.
//!
//! Like jump it has no memory, perfect balance in expectation and minimum movement when buckets
//! are **appended or removed at the end** only; unlike jump it costs O(1) expected (a few
//! multiply-xorshift hashes, at most 64 draws) instead of O(ln n) float divisions.

use crate::error::{Error, Result};

/// The crate's keyed hash `H(key, seed, b, i)`: two multiply-xorshift rounds keyed by the
/// level `b` and the draw number `i`.
#[inline(always)]
fn keyed(key: u64, seed: u64, b: u32, i: u32) -> u64 {
    let mut k = (key ^ seed).wrapping_mul(2 * u64::from(b) + 1);
    k = (k ^ (k >> 27)).wrapping_mul(0x3C79_AC49_2BA7_B653);
    k = k.wrapping_mul(2 * u64::from(i) + 1);
    k = (k ^ (k >> 33)).wrapping_mul(0x1C69_B3F7_4AC4_AE35);
    k ^ (k >> 27)
}

/// The bucket in `0..2^r` (`mask = 2^r - 1`) that the power-of-two FlipHash gives `h`: flip
/// the bits below the highest set bit of `h & mask` with a hash keyed by that bit.
#[inline(always)]
fn pow2(key: u64, seed: u64, h: u64, mask: u64) -> u64 {
    let m = h & mask;
    if m == 0 {
        return 0;
    }
    let level = 63 - m.leading_zeros();
    // `level <= 31`, so the shift is in range even for m == 1.
    m ^ (keyed(key, seed, level, 0) & ((1u64 << level) - 1))
}

/// FlipHash with an explicit seed: `fliphash::fliphash_64` generalised to a seed (seed 0 is
/// the crate's `fliphash_64`). `buckets >= 1` is the caller's precondition (0 returns 0).
///
/// Split in two so that a router's `route` inlines only the draw that usually decides (the
/// power-of-two bucket lands below `buckets` with probability > 1/2, and > 97% for
/// `buckets` = 1,000): the loop stays out of line in [`bucket_beyond_end`]. Inlined whole, the
/// kernel was too big for the compiler to inline into `route`, and an `AnyRouter` paid a call
/// per key that the bare crate does not (the report's dispatch section).
#[inline(always)]
pub(crate) fn bucket_seeded_unchecked(key: u64, seed: u64, buckets: u32) -> u32 {
    if buckets <= 1 {
        return 0;
    }
    let end = u64::from(buckets - 1);
    let r = 64 - end.leading_zeros();
    let mask = u64::MAX >> (64 - r);
    let h = keyed(key, seed, 0, 0);
    let c = pow2(key, seed, h, mask);
    if c <= end {
        return c as u32;
    }
    bucket_beyond_end(key, seed, h, end, r)
}

/// The rest of [`bucket_seeded_unchecked`] once the power-of-two bucket fell at or past `end`
/// (`r` bits, `h` the first keyed hash): redraw in the top half, else fall back to the lower
/// power of two.
#[inline(never)]
#[cold]
fn bucket_beyond_end(key: u64, seed: u64, h: u64, end: u64, r: u32) -> u32 {
    let mask = u64::MAX >> (64 - r);
    for i in 1..=64 {
        let d = keyed(key, seed, r - 1, i) & mask;
        if d <= mask >> 1 {
            break;
        }
        if d <= end {
            return d as u32;
        }
    }
    pow2(key, seed, h, mask >> 1) as u32
}

/// The FlipHash bucket in `0..buckets` for `key` (seed 0): bit-exact with
/// `fliphash::fliphash_64(key, ..=buckets - 1)`.
///
/// Expected O(1): one or two keyed hashes usually, at most 66. No memory.
///
/// # Panics
/// If `buckets == 0` (see [`try_bucket`]).
#[inline]
pub fn bucket(key: u64, buckets: u32) -> u32 {
    assert!(buckets > 0, "fliphash::bucket: buckets must be at least 1");
    bucket_seeded_unchecked(key, 0, buckets)
}

/// Like [`bucket`], but returns [`Error::ZeroBuckets`] instead of panicking.
///
/// # Errors
/// [`Error::ZeroBuckets`] when `buckets == 0`.
#[inline]
pub fn try_bucket(key: u64, buckets: u32) -> Result<u32> {
    bucket_seeded(key, 0, buckets)
}

/// [`bucket`] with a seed (the crate's seeded FlipHash, `fliphash_64` with that seed); seed 0
/// is [`bucket`].
///
/// # Errors
/// [`Error::ZeroBuckets`] when `buckets == 0`.
#[inline]
pub fn bucket_seeded(key: u64, seed: u64, buckets: u32) -> Result<u32> {
    if buckets == 0 {
        Err(Error::ZeroBuckets)
    } else {
        Ok(bucket_seeded_unchecked(key, seed, buckets))
    }
}

/// FlipHash's bucket function with seed 0, the kernel of [`FlipHash`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FlipHashBucket;

impl crate::algo::bucketed::sealed::Sealed for FlipHashBucket {}

impl crate::algo::bucketed::BucketFn for FlipHashBucket {
    const ALGORITHM: crate::Algorithm = crate::Algorithm::FlipHash;

    #[inline(always)]
    fn bucket(&self, hash: u64, n: u32) -> u32 {
        bucket_seeded_unchecked(hash, 0, n)
    }
}

/// FlipHash over named nodes: hash the key bytes with the configured hasher, then
/// [`bucket`] (seed 0).
///
/// Node `i` is bucket `i`: append nodes at the end (and remove from the end) to move the
/// minimum. Weights must all be 1. Cost: one key hash plus expected O(1) integer steps; no
/// memory beyond the node set. See [`Bucketed`](crate::algo::bucketed::Bucketed) for the methods.
pub type FlipHash = crate::algo::bucketed::Bucketed<FlipHashBucket>;

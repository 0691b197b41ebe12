//! Power consistent hashing (Leu 2023, the `power-consistent-hash` crate): O(1) expected,
//! memory-free, bit-exact with `PowerConsistentHasher::try_new(n)?.hash_u64(key)` for
//! `2 <= n <= 2^31`.
//!
//! **n = 1**: the crate rejects it (`NotEnoughBuckets`); here every key goes to bucket 0, the
//! only possible answer, and growing to 2 buckets then moves exactly the keys the crate puts
//! in bucket 1. Bucket counts above 2^31 (which the crate rejects) run the same formulas in
//! 64-bit arithmetic; no reference exists for them. Minimum movement when buckets are appended
//! or removed at the end only.

use crate::error::{Error, Result};

const PCG_MUL: u64 = 6_364_136_223_846_793_005;

/// The crate's PCG32 (XSH-RR): `out` reads the current state without advancing.
#[derive(Clone, Copy)]
struct Pcg32 {
    state: u64,
    inc: u64,
}

impl Pcg32 {
    #[inline(always)]
    fn new(state: u64, stream: u64) -> Pcg32 {
        let inc = (stream << 1) | 1;
        let st = state.wrapping_add(inc).wrapping_mul(PCG_MUL).wrapping_add(inc);
        Pcg32 { state: st, inc }
    }

    #[inline(always)]
    fn out(&self) -> u32 {
        let rot = (self.state >> 59) as u32;
        let x = (((self.state >> 18) ^ self.state) >> 27) as u32;
        x.rotate_right(rot)
    }

    #[inline(always)]
    fn step(&mut self) {
        self.state = self.state.wrapping_mul(PCG_MUL).wrapping_add(self.inc);
    }
}

/// The power-of-two part `f(key, m - 1)`: the key's bucket below `m` (a power of two) and the
/// generator it seeded (`None` for bucket 0, which draws nothing).
#[inline(always)]
fn f(key: u64, mask: u64) -> (u64, Option<Pcg32>) {
    let b = key & mask;
    if b == 0 {
        return (0, None);
    }
    let j = 63 - b.leading_zeros();
    let g = Pcg32::new(key, u64::from(j));
    let h = 1u64 << j;
    (h + (u64::from(g.out()) & (h - 1)), Some(g))
}

/// The crate's `G(n, s, g)`: the largest jump point below `n` reached from `s`.
#[inline(always)]
fn g_walk(n: u64, s: u64, mut g: Pcg32) -> u64 {
    let mut x = s;
    loop {
        let sx = (x + 1) * 0xFFFF_FFFF;
        let u = u64::from(g.out()) + 1;
        if n * u <= sx {
            return x;
        }
        g.step();
        x = sx / u;
    }
}

/// `buckets >= 1` is the caller's precondition (0 returns 0).
///
/// Split in two so that a router's `route` inlines only the first draw, which decides unless it
/// lands in `n..m` (probability `(m - n) / m` < 1/2): the walk stays out of line in
/// [`bucket_beyond_n`]. Inlined whole, the kernel was too big for the compiler to inline into
/// `route`, and an `AnyRouter` paid a call per key that the bare crate does not (the report's
/// dispatch section).
#[inline(always)]
pub(crate) fn bucket_unchecked(key: u64, buckets: u32) -> u32 {
    if buckets <= 1 {
        return 0;
    }
    let n = u64::from(buckets);
    // m - 1 for m the smallest power of two >= n (n >= 2), without a branch.
    let m_minus_one = u64::MAX >> (n - 1).leading_zeros();
    let (r1, g) = f(key, m_minus_one);
    if r1 < n {
        return r1 as u32;
    }
    // r1 >= n > 0, so f drew a generator.
    let Some(g) = g else { return 0 };
    bucket_beyond_n(key, n, m_minus_one, g)
}

/// The rest of [`bucket_unchecked`] once the first draw landed in `n..m`: walk the generator
/// `g` down from `m/2 - 1`, else fall back to the lower power of two.
#[inline(never)]
#[cold]
fn bucket_beyond_n(key: u64, n: u64, m_minus_one: u64, mut g: Pcg32) -> u32 {
    g.step();
    let half = m_minus_one >> 1;
    let r2 = g_walk(n, half, g);
    if r2 > half {
        return r2 as u32;
    }
    f(key, half).0 as u32
}

/// The power-CH bucket in `0..buckets` for `key`: bit-exact with the `power-consistent-hash`
/// crate for `2 <= buckets <= 2^31`; `buckets == 1` gives 0 (the crate rejects it).
///
/// Expected O(1): one PCG32 seeding and a few steps. No memory.
///
/// # Panics
/// If `buckets == 0` (see [`try_bucket`]).
#[inline]
pub fn bucket(key: u64, buckets: u32) -> u32 {
    assert!(buckets > 0, "power_ch::bucket: buckets must be at least 1");
    bucket_unchecked(key, buckets)
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
        Ok(bucket_unchecked(key, buckets))
    }
}

/// Power consistent hashing's bucket function, the kernel of [`PowerCh`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PowerBucket;

impl crate::algo::bucketed::sealed::Sealed for PowerBucket {}

impl crate::algo::bucketed::BucketFn for PowerBucket {
    const ALGORITHM: crate::Algorithm = crate::Algorithm::Power;

    #[inline(always)]
    fn bucket(&self, hash: u64, n: u32) -> u32 {
        bucket_unchecked(hash, n)
    }
}

/// Power consistent hashing over named nodes: hash the key bytes with the configured
/// hasher, then [`bucket`].
///
/// Node `i` is bucket `i`: append nodes at the end (and remove from the end) to move the
/// minimum. Weights must all be 1. A single node takes every key (the reference crate
/// rejects one bucket). Cost: one key hash plus expected O(1) integer steps; no memory
/// beyond the node set. See [`Bucketed`](crate::algo::bucketed::Bucketed) for the methods.
pub type PowerCh = crate::algo::bucketed::Bucketed<PowerBucket>;

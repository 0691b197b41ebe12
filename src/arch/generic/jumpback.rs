//! JumpBackHash (Ertl 2024, hash4j's `JumpBackHash`): the scalar reference, bit-exact with
//! hash4j 0.31, and the portable twin of the SIMD batches.

use crate::mix::mix64;

/// SplitMix64's increment: hash4j's `splitMix64_V1` adds it before every mix.
pub(crate) const SPLITMIX_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// hash4j's pseudo-random sequences, seeded by the key hash.
pub(crate) trait RandomSequence {
    /// The next 64-bit value.
    fn next_u64(&mut self) -> u64;
}

/// hash4j's `splitMix64_V1`: `s += GAMMA; mix64(s)`, the first value already mixed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SplitMix64(pub(crate) u64);

impl RandomSequence for SplitMix64 {
    #[inline(always)]
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(SPLITMIX_GAMMA);
        mix64(self.0)
    }
}

/// hash4j's `xorshift L7 R9`: the first value is the key itself, then `t = r ^ r << 7;
/// r = t ^ t >> 9`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct XorshiftL7R9 {
    state: u64,
    first: bool,
}

impl XorshiftL7R9 {
    /// The sequence that starts with `key`.
    pub(crate) const fn new(key: u64) -> XorshiftL7R9 {
        XorshiftL7R9 { state: key, first: true }
    }
}

/// One xorshift L7 R9 step.
#[inline(always)]
pub(crate) const fn xorshift_l7r9(r: u64) -> u64 {
    let t = r ^ (r << 7);
    t ^ (t >> 9)
}

impl RandomSequence for XorshiftL7R9 {
    #[inline(always)]
    fn next_u64(&mut self) -> u64 {
        if self.first {
            self.first = false;
        } else {
            self.state = xorshift_l7r9(self.state);
        }
        self.state
    }
}

/// JumpBackHash over any of hash4j's sequences; the caller keeps the sequence (JumpBackAnchor
/// continues drawing from it). `buckets >= 1` is the caller's precondition (0 returns 0).
///
/// hash4j's `r >>> (bitCount(x) << 5)` is a Java shift with the count masked to 6 bits, i.e.
/// the high half of `r0` when `x` has odd popcount and the low half otherwise; written out here
/// so no shift by 64 happens.
///
/// Split in two like FlipHash's kernel: the first candidate, which decides unless it lands at
/// or past `buckets`, is inlined into a router's `route`; the redraws stay out of line in
/// [`jumpback_beyond`], so the whole is small enough for the compiler to inline.
#[inline(always)]
pub(crate) fn jumpback_with<R: RandomSequence>(rng: &mut R, buckets: u32) -> u32 {
    if buckets <= 1 {
        return 0;
    }
    let r0 = rng.next_u64();
    let (low, high) = (r0 as u32, (r0 >> 32) as u32);
    let mask = u32::MAX >> (buckets - 1).leading_zeros();
    let x = (low ^ high) & mask;
    if x == 0 {
        return 0;
    }
    let b = candidate(x, low, high);
    if b < buckets {
        return b;
    }
    jumpback_beyond(rng, buckets, x, low, high)
}

/// The candidate for the highest set bit `lo` of `x`: `lo` plus the low bits of the half of
/// `r0` that `x`'s popcount picks.
#[inline(always)]
fn candidate(x: u32, low: u32, high: u32) -> u32 {
    let lo = 1u32 << (31 - x.leading_zeros());
    let half = if x.count_ones() & 1 == 1 { high } else { low };
    lo + (half & (lo - 1))
}

/// The rest of [`jumpback_with`] once the first candidate (for `x`'s highest bit) fell at or
/// past `buckets`: redraw within that bit's range, then go down `x`'s lower bits.
#[inline(never)]
fn jumpback_beyond<R: RandomSequence>(rng: &mut R, buckets: u32, mut x: u32, low: u32, high: u32) -> u32 {
    loop {
        let lo = 1u32 << (31 - x.leading_zeros());
        let hi = lo.wrapping_add(lo).wrapping_sub(1);
        'draws: loop {
            let r = rng.next_u64();
            for w in [r as u32, (r >> 32) as u32] {
                let b = w & hi;
                if b < lo {
                    break 'draws;
                }
                if b < buckets {
                    return b;
                }
            }
        }
        x ^= lo;
        if x == 0 {
            return 0;
        }
        let b = candidate(x, low, high);
        if b < buckets {
            return b;
        }
    }
}

/// JumpBackHash with the splitmix64 sequence (hash4j's default): the scalar reference.
#[inline]
pub(crate) fn jumpback_bucket(key: u64, buckets: u32) -> u32 {
    jumpback_with(&mut SplitMix64(key), buckets)
}

/// JumpBackHash with the xorshift L7 R9 sequence.
#[inline]
pub(crate) fn jumpback_xorshift_bucket(key: u64, buckets: u32) -> u32 {
    jumpback_with(&mut XorshiftL7R9::new(key), buckets)
}

/// [`jumpback_bucket`] (or the xorshift twin) for every key: the portable twin of the SIMD
/// batches.
pub(crate) fn jumpback_batch(keys: &[u64], buckets: u32, xorshift: bool, out: &mut [u32]) {
    for (o, &k) in out.iter_mut().zip(keys) {
        *o = if xorshift { jumpback_xorshift_bucket(k, buckets) } else { jumpback_bucket(k, buckets) };
    }
}

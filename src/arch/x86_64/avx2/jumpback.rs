//! JumpBackHash, 4 keys per vector (two vectors interleaved): the first candidate of every
//! lane in SIMD, the rare lanes whose first candidate is out of range finished by the scalar
//! reference from scratch (the sequence is a pure function of the key, so recomputing is
//! bit-exact).
//!
//! The first candidate is `lo + (half & (lo - 1))` with `lo` the highest set bit of
//! `x = (low32(r0) ^ high32(r0)) & mask` and `half` chosen by the parity of `x`: AVX2 has no
//! lane lzcnt or popcount, so `lo` comes from the exponent of `x` converted exactly to a double
//! (`x < 2^32`) and the parity from xor-folding.

use std::arch::x86_64::*;

use super::{halves, mul64, small_u64_to_f64};
use crate::arch::generic::{self, SPLITMIX_GAMMA};
use crate::mix::{MIX64_C1, MIX64_C2};

/// `mix64` per lane.
#[inline]
#[target_feature(enable = "avx2")]
fn mix64v(mut z: __m256i) -> __m256i {
    z = mul64(_mm256_xor_si256(z, _mm256_srli_epi64::<30>(z)), halves(MIX64_C1));
    z = mul64(_mm256_xor_si256(z, _mm256_srli_epi64::<27>(z)), halves(MIX64_C2));
    _mm256_xor_si256(z, _mm256_srli_epi64::<31>(z))
}

/// The first candidate per lane and the lanes it resolves (all-ones lanes): `x == 0` gives 0,
/// else the candidate when it is `< n`.
#[inline]
#[target_feature(enable = "avx2")]
fn first(keys: __m256i, xorshift: bool, mask: __m256i, n: __m256i) -> (__m256i, __m256i) {
    let r0 = if xorshift { keys } else { mix64v(_mm256_add_epi64(keys, _mm256_set1_epi64x(SPLITMIX_GAMMA as i64))) };
    let low32 = _mm256_set1_epi64x(0xffff_ffff);
    let low = _mm256_and_si256(r0, low32);
    let high = _mm256_srli_epi64::<32>(r0);
    let x = _mm256_and_si256(_mm256_xor_si256(low, high), mask);
    let zero = _mm256_setzero_si256();
    let one = _mm256_set1_epi64x(1);
    let is_zero = _mm256_cmpeq_epi64(x, zero);
    // Highest set bit: the unbiased exponent of x as a double (exact, x < 2^32). For x == 0
    // the shift count is out of range and gives 0; that lane is resolved to 0 below.
    let exp =
        _mm256_sub_epi64(_mm256_srli_epi64::<52>(_mm256_castpd_si256(small_u64_to_f64(x))), _mm256_set1_epi64x(1023));
    let lo = _mm256_sllv_epi64(one, exp);
    let mut p = _mm256_xor_si256(x, _mm256_srli_epi64::<16>(x));
    p = _mm256_xor_si256(p, _mm256_srli_epi64::<8>(p));
    p = _mm256_xor_si256(p, _mm256_srli_epi64::<4>(p));
    p = _mm256_xor_si256(p, _mm256_srli_epi64::<2>(p));
    p = _mm256_xor_si256(p, _mm256_srli_epi64::<1>(p));
    let odd = _mm256_cmpeq_epi64(_mm256_and_si256(p, one), one);
    let half = _mm256_blendv_epi8(low, high, odd);
    let b = _mm256_add_epi64(lo, _mm256_and_si256(half, _mm256_sub_epi64(lo, one)));
    // Both sides are below 2^33, so the signed compare is the unsigned one.
    let in_range = _mm256_cmpgt_epi64(n, b);
    let b = _mm256_andnot_si256(is_zero, b);
    (b, _mm256_or_si256(is_zero, in_range))
}

/// Writes 4 lanes: resolved ones from the vector, the others from the scalar reference.
#[inline]
#[target_feature(enable = "avx2")]
fn finish(keys: &[u64], b: __m256i, resolved: __m256i, buckets: u32, xorshift: bool, out: &mut [u32]) {
    let bits = _mm256_movemask_pd(_mm256_castsi256_pd(resolved));
    let mut lanes = [0u64; 4];
    // SAFETY: `lanes` is 4 writable u64 = one unaligned 32-byte store.
    unsafe { _mm256_storeu_si256(lanes.as_mut_ptr() as *mut __m256i, b) };
    for (i, (o, &k)) in out.iter_mut().zip(keys).enumerate() {
        *o = if bits & (1 << i) != 0 {
            lanes[i] as u32
        } else if xorshift {
            generic::jumpback_xorshift_bucket(k, buckets)
        } else {
            generic::jumpback_bucket(k, buckets)
        };
    }
}

#[target_feature(enable = "avx2,popcnt")]
pub(crate) fn jumpback_batch(keys: &[u64], buckets: u32, xorshift: bool, out: &mut [u32]) {
    if buckets <= 1 {
        out.fill(0);
        return;
    }
    let mask = _mm256_set1_epi64x(i64::from(u32::MAX >> (buckets - 1).leading_zeros()));
    let n = _mm256_set1_epi64x(i64::from(buckets));
    let mut kc = keys.chunks_exact(8);
    let mut oc = out.chunks_exact_mut(8);
    for (k, o) in (&mut kc).zip(&mut oc) {
        // SAFETY: `k` is 8 readable u64: two unaligned 32-byte loads.
        let (k0, k1) = unsafe {
            (_mm256_loadu_si256(k.as_ptr() as *const __m256i), _mm256_loadu_si256(k.as_ptr().add(4) as *const __m256i))
        };
        let (b0, r0) = first(k0, xorshift, mask, n);
        let (b1, r1) = first(k1, xorshift, mask, n);
        let (o0, o1) = o.split_at_mut(4);
        finish(&k[..4], b0, r0, buckets, xorshift, o0);
        finish(&k[4..], b1, r1, buckets, xorshift, o1);
    }
    generic::jumpback_batch(kc.remainder(), buckets, xorshift, oc.into_remainder());
}

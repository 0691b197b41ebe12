//! JumpBackHash, 8 keys per vector: the first candidate of every lane in SIMD (see
//! `avx2/jumpback.rs` for the method), the rare out-of-range lanes finished by the scalar
//! reference from scratch. Native 64-bit multiplies (DQ), exact u64 → double conversion for
//! the highest set bit (no AVX-512 CD lzcnt is assumed), mask registers for the lane choices.

use std::arch::x86_64::*;

use crate::arch::generic::{self, SPLITMIX_GAMMA};
use crate::mix::{MIX64_C1, MIX64_C2};

/// `mix64` per lane.
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
fn mix64v(mut z: __m512i) -> __m512i {
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64::<30>(z)), _mm512_set1_epi64(MIX64_C1 as i64));
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64::<27>(z)), _mm512_set1_epi64(MIX64_C2 as i64));
    _mm512_xor_si512(z, _mm512_srli_epi64::<31>(z))
}

/// The first candidate per lane and the mask of lanes it resolves (`x == 0` gives 0, else
/// the candidate when it is `< n`).
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
fn first(keys: __m512i, xorshift: bool, mask: __m512i, n: __m512i) -> (__m512i, __mmask8) {
    let r0 = if xorshift { keys } else { mix64v(_mm512_add_epi64(keys, _mm512_set1_epi64(SPLITMIX_GAMMA as i64))) };
    let low = _mm512_and_si512(r0, _mm512_set1_epi64(0xffff_ffff));
    let high = _mm512_srli_epi64::<32>(r0);
    let x = _mm512_and_si512(_mm512_xor_si512(low, high), mask);
    let one = _mm512_set1_epi64(1);
    let is_zero = _mm512_cmpeq_epu64_mask(x, _mm512_setzero_si512());
    // Highest set bit from the exponent of x as a double (exact: x < 2^32). x == 0 lanes get an
    // out-of-range shift (0) and are resolved to 0 below.
    let exp =
        _mm512_sub_epi64(_mm512_srli_epi64::<52>(_mm512_castpd_si512(_mm512_cvtepu64_pd(x))), _mm512_set1_epi64(1023));
    let lo = _mm512_sllv_epi64(one, exp);
    let mut p = _mm512_xor_si512(x, _mm512_srli_epi64::<16>(x));
    p = _mm512_xor_si512(p, _mm512_srli_epi64::<8>(p));
    p = _mm512_xor_si512(p, _mm512_srli_epi64::<4>(p));
    p = _mm512_xor_si512(p, _mm512_srli_epi64::<2>(p));
    p = _mm512_xor_si512(p, _mm512_srli_epi64::<1>(p));
    let odd = _mm512_test_epi64_mask(p, one);
    let half = _mm512_mask_blend_epi64(odd, low, high);
    let b = _mm512_add_epi64(lo, _mm512_and_si512(half, _mm512_sub_epi64(lo, one)));
    let in_range = _mm512_cmplt_epu64_mask(b, n);
    (_mm512_maskz_mov_epi64(!is_zero, b), is_zero | in_range)
}

#[target_feature(enable = "avx512f,avx512dq,avx512vl,popcnt")]
pub(crate) fn jumpback_batch(keys: &[u64], buckets: u32, xorshift: bool, out: &mut [u32]) {
    if buckets <= 1 {
        out.fill(0);
        return;
    }
    let mask = _mm512_set1_epi64(i64::from(u32::MAX >> (buckets - 1).leading_zeros()));
    let n = _mm512_set1_epi64(i64::from(buckets));
    let mut kc = keys.chunks_exact(8);
    let mut oc = out.chunks_exact_mut(8);
    for (k, o) in (&mut kc).zip(&mut oc) {
        // SAFETY: `k` is 8 readable u64 = one unaligned 64-byte load.
        let v = unsafe { _mm512_loadu_si512(k.as_ptr() as *const _) };
        let (b, resolved) = first(v, xorshift, mask, n);
        // The buckets are below 2^32: narrow the lanes to u32.
        let narrow = _mm512_cvtepi64_epi32(b);
        // SAFETY: `o` is 8 writable u32 = one unaligned 32-byte store.
        unsafe { _mm256_storeu_si256(o.as_mut_ptr() as *mut __m256i, narrow) };
        if resolved != 0xff {
            for (i, (o, &k)) in o.iter_mut().zip(k).enumerate() {
                if resolved & (1 << i) == 0 {
                    *o = if xorshift {
                        generic::jumpback_xorshift_bucket(k, buckets)
                    } else {
                        generic::jumpback_bucket(k, buckets)
                    };
                }
            }
        }
    }
    generic::jumpback_batch(kc.remainder(), buckets, xorshift, oc.into_remainder());
}

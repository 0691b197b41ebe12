//! Jump consistent hash, several keys per SIMD register (AVX2: 2×4 lanes, AVX-512: 2×8 lanes).
//!
//! Bit-identical to the paper's scalar loop: every lane runs the same IEEE-754 operations in the
//! same order (`(b + 1) * (2^31 / ((key >> 33) + 1))`, both operands exact in a double), and the
//! loop test `j < buckets` is done on the double, which is equivalent because `buckets` is an
//! integer. Lanes that finished keep their bucket while the others keep jumping. Two
//! independent vectors are interleaved so one's division overlaps the other's.
//!
//! Hand-written: no maintained crate vectorizes jump hash.

use std::arch::x86_64::*;

const MUL: u64 = 2862933555777941757;
const TWO31: f64 = (1u64 << 31) as f64;
/// 2^52 as a double: OR-ing an integer < 2^52 into its mantissa and subtracting converts it
/// exactly without AVX-512's u64 conversion.
const MAGIC: f64 = 4503599627370496.0;

#[inline]
#[target_feature(enable = "avx2")]
fn mul64_avx2(a: __m256i, c: __m256i) -> __m256i {
    // (a_lo + a_hi·2^32)(c_lo + c_hi·2^32) mod 2^64 = a_lo·c_lo + ((a_hi·c_lo + a_lo·c_hi) << 32).
    let lo = _mm256_mul_epu32(a, c);
    let cross = _mm256_add_epi64(
        _mm256_mul_epu32(_mm256_srli_epi64::<32>(a), c),
        _mm256_mul_epu32(a, _mm256_srli_epi64::<32>(c)),
    );
    _mm256_add_epi64(lo, _mm256_slli_epi64::<32>(cross))
}

/// Exact for 0 <= x < 2^52.
#[inline]
#[target_feature(enable = "avx2")]
fn small_u64_to_f64(x: __m256i) -> __m256d {
    let magic = _mm256_set1_pd(MAGIC);
    _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(x, _mm256_castpd_si256(magic))), magic)
}

/// One jump step for 4 lanes; returns the new `j` (already truncated) and updates `key`.
#[inline]
#[target_feature(enable = "avx2")]
fn step_avx2(key: &mut __m256i, b: __m256d) -> __m256d {
    let one = _mm256_set1_epi64x(1);
    *key = _mm256_add_epi64(mul64_avx2(*key, _mm256_set1_epi64x(MUL as i64)), one);
    let x = small_u64_to_f64(_mm256_add_epi64(_mm256_srli_epi64::<33>(*key), one));
    let j = _mm256_mul_pd(_mm256_add_pd(b, _mm256_set1_pd(1.0)), _mm256_div_pd(_mm256_set1_pd(TWO31), x));
    _mm256_round_pd::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(j)
}

#[target_feature(enable = "avx2")]
fn batch_avx2_impl(keys: &[u64], buckets: u32, out: &mut [u32]) {
    let bd = _mm256_set1_pd(f64::from(buckets));
    let magic = _mm256_set1_pd(MAGIC);
    let mut kc = keys.chunks_exact(8);
    let mut oc = out.chunks_exact_mut(8);
    for (k, o) in (&mut kc).zip(&mut oc) {
        // SAFETY: `k` is 8 readable u64: two unaligned 32-byte loads.
        let (mut k0, mut k1) = unsafe {
            (_mm256_loadu_si256(k.as_ptr() as *const __m256i), _mm256_loadu_si256(k.as_ptr().add(4) as *const __m256i))
        };
        // The first iteration always sets b = 0 (0 < buckets).
        let mut b0 = _mm256_setzero_pd();
        let mut b1 = _mm256_setzero_pd();
        let mut j0 = step_avx2(&mut k0, b0);
        let mut j1 = step_avx2(&mut k1, b1);
        loop {
            let a0 = _mm256_cmp_pd::<_CMP_LT_OQ>(j0, bd);
            let a1 = _mm256_cmp_pd::<_CMP_LT_OQ>(j1, bd);
            if _mm256_movemask_pd(_mm256_or_pd(a0, a1)) == 0 {
                break;
            }
            b0 = _mm256_blendv_pd(b0, j0, a0);
            b1 = _mm256_blendv_pd(b1, j1, a1);
            // Finished lanes keep computing (harmlessly) but their b no longer changes.
            let n0 = step_avx2(&mut k0, b0);
            let n1 = step_avx2(&mut k1, b1);
            // A finished lane must stay finished: pin its j at `buckets`.
            j0 = _mm256_blendv_pd(bd, n0, a0);
            j1 = _mm256_blendv_pd(bd, n1, a1);
        }
        // b < 2^32: adding 2^52 leaves the integer in the low mantissa bits.
        let mut lanes = [0u64; 8];
        // SAFETY: `lanes` is 8 writable u64: two unaligned 32-byte stores.
        unsafe {
            _mm256_storeu_si256(lanes.as_mut_ptr() as *mut __m256i, _mm256_castpd_si256(_mm256_add_pd(b0, magic)));
            _mm256_storeu_si256(
                lanes.as_mut_ptr().add(4) as *mut __m256i,
                _mm256_castpd_si256(_mm256_add_pd(b1, magic)),
            );
        }
        for (o, l) in o.iter_mut().zip(lanes) {
            *o = l as u32;
        }
    }
    for (o, &k) in oc.into_remainder().iter_mut().zip(kc.remainder()) {
        *o = crate::algo::jump::bucket_unchecked_nonzero(k, buckets);
    }
}

#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
fn step_avx512(key: &mut __m512i, b: __m512d) -> __m512d {
    let one = _mm512_set1_epi64(1);
    *key = _mm512_add_epi64(_mm512_mullo_epi64(*key, _mm512_set1_epi64(MUL as i64)), one);
    let x = _mm512_cvtepu64_pd(_mm512_add_epi64(_mm512_srli_epi64::<33>(*key), one));
    let j = _mm512_mul_pd(_mm512_add_pd(b, _mm512_set1_pd(1.0)), _mm512_div_pd(_mm512_set1_pd(TWO31), x));
    _mm512_roundscale_pd::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(j)
}

#[target_feature(enable = "avx512f,avx512dq")]
fn batch_avx512_impl(keys: &[u64], buckets: u32, out: &mut [u32]) {
    let bd = _mm512_set1_pd(f64::from(buckets));
    let mut kc = keys.chunks_exact(16);
    let mut oc = out.chunks_exact_mut(16);
    for (k, o) in (&mut kc).zip(&mut oc) {
        // SAFETY: `k` is 16 readable u64: two unaligned 64-byte loads.
        let (mut k0, mut k1) =
            unsafe { (_mm512_loadu_si512(k.as_ptr() as *const _), _mm512_loadu_si512(k.as_ptr().add(8) as *const _)) };
        let mut b0 = _mm512_setzero_pd();
        let mut b1 = _mm512_setzero_pd();
        let mut a0: __mmask8 = 0xff;
        let mut a1: __mmask8 = 0xff;
        let mut j0 = step_avx512(&mut k0, b0);
        let mut j1 = step_avx512(&mut k1, b1);
        loop {
            a0 &= _mm512_cmp_pd_mask::<_CMP_LT_OQ>(j0, bd);
            a1 &= _mm512_cmp_pd_mask::<_CMP_LT_OQ>(j1, bd);
            if a0 | a1 == 0 {
                break;
            }
            b0 = _mm512_mask_mov_pd(b0, a0, j0);
            b1 = _mm512_mask_mov_pd(b1, a1, j1);
            j0 = step_avx512(&mut k0, b0);
            j1 = step_avx512(&mut k1, b1);
        }
        let mut lanes = [0u32; 16];
        // SAFETY: `lanes` is 16 writable u32: two unaligned 32-byte stores.
        unsafe {
            _mm256_storeu_si256(lanes.as_mut_ptr() as *mut __m256i, _mm512_cvttpd_epu32(b0));
            _mm256_storeu_si256(lanes.as_mut_ptr().add(8) as *mut __m256i, _mm512_cvttpd_epu32(b1));
        }
        o.copy_from_slice(&lanes);
    }
    for (o, &k) in oc.into_remainder().iter_mut().zip(kc.remainder()) {
        *o = crate::algo::jump::bucket_unchecked_nonzero(k, buckets);
    }
}

/// Batched jump on `isa`. `buckets >= 1`, equal lengths (checked by the caller).
///
/// # Panics
/// If the CPU lacks `isa`.
pub(crate) fn bucket_batch(isa: crate::search::Isa, keys: &[u64], buckets: u32, out: &mut [u32]) {
    use crate::search::Isa;
    assert!(super::x86::supported(isa), "jump: ISA {} is not supported on this CPU", isa.name());
    match isa {
        // SAFETY: the CPU has AVX-512 F+DQ (checked above).
        Isa::Avx512 => unsafe { batch_avx512_impl(keys, buckets, out) },
        // SAFETY: the CPU has AVX2 (checked above).
        Isa::Avx2 => unsafe { batch_avx2_impl(keys, buckets, out) },
        Isa::Portable => crate::algo::jump::bucket_batch_portable(keys, buckets, out),
    }
}

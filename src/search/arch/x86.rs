//! x86_64 AVX2 / AVX-512 node counters and the per-ISA instantiations of the tree kernels.
//!
//! Hand-written because no maintained crate offers "count u64 lanes below h" with runtime
//! dispatch; each `unsafe` block is one load or one call into a `target_feature` function whose
//! feature was checked at dispatch.

use std::arch::x86_64::*;

use crate::search::radix::{radix_batch_generic, radix_lookup_generic};
use crate::search::{tree_batch_generic, tree_lookup_generic, Group, Isa, Radix, Tree, LEAF, NODE};

/// Cache hint for the line holding `p`.
#[inline(always)]
pub(crate) fn prefetch_ptr(p: *const i8) {
    // SAFETY: prefetch is a hint that never faults, and SSE is part of the x86_64 baseline; the
    // pointer comes from a live reference.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(p) }
}

pub(crate) fn supported(isa: Isa) -> bool {
    match isa {
        Isa::Portable => true,
        Isa::Avx2 => is_x86_feature_detected!("avx2") && is_x86_feature_detected!("popcnt"),
        Isa::Avx512 => {
            is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512dq")
                && is_x86_feature_detected!("avx512vl")
                && is_x86_feature_detected!("popcnt")
        }
    }
}

#[inline]
#[target_feature(enable = "avx2,popcnt")]
fn count8_avx2(g: &[u64; NODE], h: u64) -> usize {
    let sign = _mm256_set1_epi64x(i64::MIN);
    let hv = _mm256_set1_epi64x((h ^ (1 << 63)) as i64);
    // SAFETY: `g` is 8 readable u64; two unaligned 32-byte loads stay inside it.
    let (a, b) = unsafe {
        (_mm256_loadu_si256(g.as_ptr() as *const __m256i), _mm256_loadu_si256(g.as_ptr().add(4) as *const __m256i))
    };
    // Unsigned k < h  <=>  signed (k ^ sign) < (h ^ sign).
    let lt_a = _mm256_cmpgt_epi64(hv, _mm256_xor_si256(a, sign));
    let lt_b = _mm256_cmpgt_epi64(hv, _mm256_xor_si256(b, sign));
    let m = _mm256_movemask_pd(_mm256_castsi256_pd(lt_a)) | (_mm256_movemask_pd(_mm256_castsi256_pd(lt_b)) << 4);
    m.count_ones() as usize
}

#[inline]
#[target_feature(enable = "avx2,popcnt")]
fn count16_avx2(g: &[u64; LEAF], h: u64) -> usize {
    let (lo, hi) = g.split_at(NODE);
    let lo: &[u64; NODE] = lo.try_into().unwrap_or(&[0; NODE]);
    let hi: &[u64; NODE] = hi.try_into().unwrap_or(&[0; NODE]);
    count8_avx2(lo, h) + count8_avx2(hi, h)
}

#[inline]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,popcnt")]
fn count8_avx512(g: &[u64; NODE], h: u64) -> usize {
    // SAFETY: `g` is 8 readable u64 = one unaligned 64-byte load.
    let a = unsafe { _mm512_loadu_si512(g.as_ptr() as *const _) };
    _mm512_cmplt_epu64_mask(a, _mm512_set1_epi64(h as i64)).count_ones() as usize
}

#[inline]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,popcnt")]
fn count16_avx512(g: &[u64; LEAF], h: u64) -> usize {
    let hv = _mm512_set1_epi64(h as i64);
    // SAFETY: `g` is 16 readable u64 = two unaligned 64-byte loads.
    let (a, b) =
        unsafe { (_mm512_loadu_si512(g.as_ptr() as *const _), _mm512_loadu_si512(g.as_ptr().add(8) as *const _)) };
    let m = u32::from(_mm512_cmplt_epu64_mask(a, hv)) | (u32::from(_mm512_cmplt_epu64_mask(b, hv)) << 8);
    m.count_ones() as usize
}

#[target_feature(enable = "avx2,popcnt")]
fn lookup_avx2(t: &Tree, points: &[u64], h: u64) -> usize {
    tree_lookup_generic(t, points, h, |g, h| count8_avx2(g, h), |g, h| count16_avx2(g, h))
}

#[target_feature(enable = "avx512f,avx512dq,avx512vl,popcnt")]
fn lookup_avx512(t: &Tree, points: &[u64], h: u64) -> usize {
    tree_lookup_generic(t, points, h, |g, h| count8_avx512(g, h), |g, h| count16_avx512(g, h))
}

#[target_feature(enable = "avx2,popcnt")]
fn batch_avx2(t: &Tree, points: &[u64], hashes: &[u64], out: &mut [usize]) {
    tree_batch_generic(t, points, hashes, out, |g, h| count8_avx2(g, h), |g, h| count16_avx2(g, h))
}

#[target_feature(enable = "avx512f,avx512dq,avx512vl,popcnt")]
fn batch_avx512(t: &Tree, points: &[u64], hashes: &[u64], out: &mut [usize]) {
    tree_batch_generic(t, points, hashes, out, |g, h| count8_avx512(g, h), |g, h| count16_avx512(g, h))
}

#[target_feature(enable = "avx2,popcnt")]
fn radix_lookup_avx2(r: &Radix, points: &[u64], side: &[u32], h: u64) -> usize {
    radix_lookup_generic(r, points, side, h, |g, h| count8_avx2(g, h), |g, h| count16_avx2(g, h))
}

#[target_feature(enable = "avx512f,avx512dq,avx512vl,popcnt")]
fn radix_lookup_avx512(r: &Radix, points: &[u64], side: &[u32], h: u64) -> usize {
    radix_lookup_generic(r, points, side, h, |g, h| count8_avx512(g, h), |g, h| count16_avx512(g, h))
}

#[target_feature(enable = "avx2,popcnt")]
fn radix_batch_avx2(r: &Radix, points: &[u64], hashes: &[u64], out: &mut [usize]) {
    radix_batch_generic(r, points, hashes, out, |g, h| count8_avx2(g, h), |g, h| count16_avx2(g, h))
}

#[target_feature(enable = "avx512f,avx512dq,avx512vl,popcnt")]
fn radix_batch_avx512(r: &Radix, points: &[u64], hashes: &[u64], out: &mut [usize]) {
    radix_batch_generic(r, points, hashes, out, |g, h| count8_avx512(g, h), |g, h| count16_avx512(g, h))
}

/// Radix lookup of `h <= last` on `isa` (`require`d unless it is the active one).
#[inline]
pub(crate) fn radix_lookup(isa: Isa, r: &Radix, points: &[u64], side: &[u32], h: u64) -> usize {
    if isa != crate::search::active() {
        require(isa);
    }
    match isa {
        // SAFETY: `isa` is the active path (checked at detection) or `require` just checked it.
        Isa::Avx512 => unsafe { radix_lookup_avx512(r, points, side, h) },
        // SAFETY: as above.
        Isa::Avx2 => unsafe { radix_lookup_avx2(r, points, side, h) },
        Isa::Portable => {
            radix_lookup_generic(r, points, side, h, crate::search::count8_portable, crate::search::count16_portable)
        }
    }
}

pub(crate) fn radix_batch(isa: Isa, r: &Radix, points: &[u64], hashes: &[u64], out: &mut [usize]) {
    require(isa);
    match isa {
        // SAFETY: `require` checked the CPU has the features.
        Isa::Avx512 => unsafe { radix_batch_avx512(r, points, hashes, out) },
        // SAFETY: as above.
        Isa::Avx2 => unsafe { radix_batch_avx2(r, points, hashes, out) },
        Isa::Portable => {
            radix_batch_generic(r, points, hashes, out, crate::search::count8_portable, crate::search::count16_portable)
        }
    }
}

fn require(isa: Isa) {
    assert!(supported(isa), "search: ISA {} is not supported on this CPU", isa.name());
}

/// Lookup on `isa`, checking the CPU first (for explicit-path callers).
#[inline]
pub(crate) fn tree_lookup(isa: Isa, t: &Tree, points: &[u64], h: u64) -> usize {
    require(isa);
    // SAFETY: `require` just checked the CPU has `isa`.
    unsafe { tree_lookup_trusted(isa, t, points, h) }
}

/// Lookup on the path chosen by `active()`, which only ever returns a supported ISA (so the
/// hot path pays no second feature check).
#[inline]
pub(crate) fn tree_lookup_active(t: &Tree, points: &[u64], h: u64) -> usize {
    // SAFETY: `active()` returns only ISAs that `supported` confirmed at detection.
    unsafe { tree_lookup_trusted(crate::search::active(), t, points, h) }
}

/// # Safety
/// The CPU must support `isa`.
#[inline]
unsafe fn tree_lookup_trusted(isa: Isa, t: &Tree, points: &[u64], h: u64) -> usize {
    match isa {
        // SAFETY: the caller guarantees the CPU has AVX-512.
        Isa::Avx512 => unsafe { lookup_avx512(t, points, h) },
        // SAFETY: the caller guarantees the CPU has AVX2.
        Isa::Avx2 => unsafe { lookup_avx2(t, points, h) },
        Isa::Portable => {
            tree_lookup_generic(t, points, h, crate::search::count8_portable, crate::search::count16_portable)
        }
    }
}

pub(crate) fn tree_batch(isa: Isa, t: &Tree, points: &[u64], hashes: &[u64], out: &mut [usize]) {
    require(isa);
    match isa {
        // SAFETY: `require` checked the CPU has the features.
        Isa::Avx512 => unsafe { batch_avx512(t, points, hashes, out) },
        // SAFETY: as above.
        Isa::Avx2 => unsafe { batch_avx2(t, points, hashes, out) },
        Isa::Portable => {
            tree_batch_generic(t, points, hashes, out, crate::search::count8_portable, crate::search::count16_portable)
        }
    }
}

#[allow(dead_code)]
fn _group_is_one_line() {
    const _: () = assert!(std::mem::size_of::<Group>() == 64);
}

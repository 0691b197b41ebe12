//! AVX-512 F + DQ + VL (+ POPCNT): eight `u64` lanes, native 64-bit multiplies and unsigned
//! compares into mask registers.
//!
//! Every `pub(crate)` function here is a `#[target_feature]` function: the dispatch in
//! `arch/mod.rs` calls it only through a `Kernels` proving the CPU has these features.

use std::arch::x86_64::*;

pub(crate) use super::md5_avx512::md5_batch;

use crate::arch::generic::{self, RadixView, TreeView, LEAF, NODE};
use crate::mix::{JUMP_LCG, MIX64_C1, MIX64_C2, XORSHIFT_MULT};

// ---- search: node counters and the instantiated lookups ----

#[inline]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,popcnt")]
fn count8(g: &[u64; NODE], h: u64) -> usize {
    // SAFETY: `g` is 8 readable u64 = one unaligned 64-byte load.
    let a = unsafe { _mm512_loadu_si512(g.as_ptr() as *const _) };
    _mm512_cmplt_epu64_mask(a, _mm512_set1_epi64(h as i64)).count_ones() as usize
}

#[inline]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,popcnt")]
fn count16(g: &[u64; LEAF], h: u64) -> usize {
    let hv = _mm512_set1_epi64(h as i64);
    // SAFETY: `g` is 16 readable u64 = two unaligned 64-byte loads.
    let (a, b) =
        unsafe { (_mm512_loadu_si512(g.as_ptr() as *const _), _mm512_loadu_si512(g.as_ptr().add(8) as *const _)) };
    let m = u32::from(_mm512_cmplt_epu64_mask(a, hv)) | (u32::from(_mm512_cmplt_epu64_mask(b, hv)) << 8);
    m.count_ones() as usize
}

#[target_feature(enable = "avx512f,avx512dq,avx512vl,popcnt")]
pub(crate) fn tree_lookup(t: &TreeView<'_>, points: &[u64], h: u64) -> usize {
    generic::tree_lookup(t, points, h, |g, h| count8(g, h), |g, h| count16(g, h))
}

#[target_feature(enable = "avx512f,avx512dq,avx512vl,popcnt")]
pub(crate) fn tree_batch(t: &TreeView<'_>, points: &[u64], hashes: &[u64], out: &mut [usize]) {
    generic::tree_batch(t, points, hashes, out, |g, h| count8(g, h), |g, h| count16(g, h))
}

#[target_feature(enable = "avx512f,avx512dq,avx512vl,popcnt")]
pub(crate) fn radix_lookup(r: &RadixView<'_>, points: &[u64], side: &[u32], h: u64) -> usize {
    generic::radix_lookup(r, points, side, h, |g, h| count8(g, h), |g, h| count16(g, h))
}

#[target_feature(enable = "avx512f,avx512dq,avx512vl,popcnt")]
pub(crate) fn radix_batch(r: &RadixView<'_>, points: &[u64], hashes: &[u64], out: &mut [usize]) {
    generic::radix_batch(r, points, hashes, out, |g, h| count8(g, h), |g, h| count16(g, h))
}

// ---- jump hash: 2 × 8 lanes (see avx2.rs for why every lane is bit-exact) ----

const TWO31: f64 = (1u64 << 31) as f64;

#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
fn jump_step(key: &mut __m512i, b: __m512d) -> __m512d {
    let one = _mm512_set1_epi64(1);
    *key = _mm512_add_epi64(_mm512_mullo_epi64(*key, _mm512_set1_epi64(JUMP_LCG as i64)), one);
    let x = _mm512_cvtepu64_pd(_mm512_add_epi64(_mm512_srli_epi64::<33>(*key), one));
    let j = _mm512_mul_pd(_mm512_add_pd(b, _mm512_set1_pd(1.0)), _mm512_div_pd(_mm512_set1_pd(TWO31), x));
    _mm512_roundscale_pd::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(j)
}

/// Jump hash of 16 keys, two interleaved vectors of 8.
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
fn jump16(k: &[u64; 16], bd: __m512d) -> [u32; 16] {
    // SAFETY: `k` is 16 readable u64: two unaligned 64-byte loads.
    let (mut k0, mut k1) =
        unsafe { (_mm512_loadu_si512(k.as_ptr() as *const _), _mm512_loadu_si512(k.as_ptr().add(8) as *const _)) };
    let mut b0 = _mm512_setzero_pd();
    let mut b1 = _mm512_setzero_pd();
    let mut a0: __mmask8 = 0xff;
    let mut a1: __mmask8 = 0xff;
    let mut j0 = jump_step(&mut k0, b0);
    let mut j1 = jump_step(&mut k1, b1);
    loop {
        a0 &= _mm512_cmp_pd_mask::<_CMP_LT_OQ>(j0, bd);
        a1 &= _mm512_cmp_pd_mask::<_CMP_LT_OQ>(j1, bd);
        if a0 | a1 == 0 {
            break;
        }
        b0 = _mm512_mask_mov_pd(b0, a0, j0);
        b1 = _mm512_mask_mov_pd(b1, a1, j1);
        j0 = jump_step(&mut k0, b0);
        j1 = jump_step(&mut k1, b1);
    }
    let mut lanes = [0u32; 16];
    // SAFETY: `lanes` is 16 writable u32: two unaligned 32-byte stores.
    unsafe {
        _mm256_storeu_si256(lanes.as_mut_ptr() as *mut __m256i, _mm512_cvttpd_epu32(b0));
        _mm256_storeu_si256(lanes.as_mut_ptr().add(8) as *mut __m256i, _mm512_cvttpd_epu32(b1));
    }
    lanes
}

#[target_feature(enable = "avx512f,avx512dq,avx512vl,popcnt")]
pub(crate) fn jump_batch(keys: &[u64], buckets: u32, out: &mut [u32]) {
    let bd = _mm512_set1_pd(f64::from(buckets));
    let mut kc = keys.chunks_exact(16);
    let mut oc = out.chunks_exact_mut(16);
    for (k, o) in (&mut kc).zip(&mut oc) {
        o.copy_from_slice(&jump16(k.try_into().unwrap_or(&[0; 16]), bd));
    }
    generic::jump_batch(kc.remainder(), buckets, oc.into_remainder());
}

// ---- rendezvous: argmax of a 64-bit mix over node hashes, 2 × 8 lanes ----

/// `GO` selects the mixer: `mix64` (false) or go-rendezvous's `xorshift_mult64` (true).
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
fn score<const GO: bool>(h: __m512i, k: __m512i) -> __m512i {
    let mut z = _mm512_xor_si512(h, k);
    if GO {
        z = _mm512_xor_si512(z, _mm512_srli_epi64::<12>(z));
        z = _mm512_xor_si512(z, _mm512_slli_epi64::<25>(z));
        z = _mm512_xor_si512(z, _mm512_srli_epi64::<27>(z));
        return _mm512_mullo_epi64(z, _mm512_set1_epi64(XORSHIFT_MULT as i64));
    }
    z = _mm512_xor_si512(z, _mm512_srli_epi64::<30>(z));
    z = _mm512_mullo_epi64(z, _mm512_set1_epi64(MIX64_C1 as i64));
    z = _mm512_xor_si512(z, _mm512_srli_epi64::<27>(z));
    z = _mm512_mullo_epi64(z, _mm512_set1_epi64(MIX64_C2 as i64));
    _mm512_xor_si512(z, _mm512_srli_epi64::<31>(z))
}

/// Scan position of the first maximum score over non-empty `hashes`; two accumulators (16
/// nodes per iteration) hide the compare-and-select latency, and masked loads handle the tail.
#[target_feature(enable = "avx512f,avx512dq,avx512vl,popcnt")]
pub(crate) fn argmax<const GO: bool>(hashes: &[u64], key_hash: u64) -> usize {
    let k = _mm512_set1_epi64(key_hash as i64);
    // Lane j starts as (score 0, index j): a real node only replaces it with a strictly larger
    // score, and if the global maximum is 0 the reduction picks index 0, the right answer.
    let (mut best_a, mut best_b) = (_mm512_setzero_si512(), _mm512_setzero_si512());
    let (mut idx_a, mut idx_b) =
        (_mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7), _mm512_setr_epi64(8, 9, 10, 11, 12, 13, 14, 15));
    let (mut cur_a, mut cur_b) = (idx_a, idx_b);
    let step = _mm512_set1_epi64(16);
    let mut chunks = hashes.chunks_exact(16);
    for chunk in &mut chunks {
        // SAFETY: `chunk` has 16 u64 = two 64-byte vectors; loadu has no alignment requirement.
        let (ha, hb) =
            unsafe { (_mm512_loadu_si512(chunk.as_ptr().cast()), _mm512_loadu_si512(chunk.as_ptr().add(8).cast())) };
        let (sa, sb) = (score::<GO>(ha, k), score::<GO>(hb, k));
        let (ga, gb) = (_mm512_cmpgt_epu64_mask(sa, best_a), _mm512_cmpgt_epu64_mask(sb, best_b));
        best_a = _mm512_mask_mov_epi64(best_a, ga, sa);
        best_b = _mm512_mask_mov_epi64(best_b, gb, sb);
        idx_a = _mm512_mask_mov_epi64(idx_a, ga, cur_a);
        idx_b = _mm512_mask_mov_epi64(idx_b, gb, cur_b);
        cur_a = _mm512_add_epi64(cur_a, step);
        cur_b = _mm512_add_epi64(cur_b, step);
    }
    // Tail of 0..=15 nodes: up to two masked vectors, each lane still seeing increasing indices.
    let rest = chunks.remainder();
    for (part, (best, idx, cur)) in
        rest.chunks(8).zip([(&mut best_a, &mut idx_a, cur_a), (&mut best_b, &mut idx_b, cur_b)])
    {
        let valid: __mmask8 = (1u16 << part.len()).wrapping_sub(1) as u8;
        // SAFETY: the masked load reads only the `part.len()` valid lanes, all inside `part`;
        // masked-off lanes are not accessed (no fault) and read as 0.
        let h = unsafe { _mm512_maskz_loadu_epi64(valid, part.as_ptr().cast()) };
        let s = score::<GO>(h, k);
        let g = _mm512_mask_cmpgt_epu64_mask(valid, s, *best);
        *best = _mm512_mask_mov_epi64(*best, g, s);
        *idx = _mm512_mask_mov_epi64(*idx, g, cur);
    }
    // The maximum over both accumulators, then the smallest index among lanes holding it.
    let max = _mm512_max_epu64(best_a, best_b);
    let top = _mm512_set1_epi64(_mm512_reduce_max_epu64(max) as i64);
    let min_a = _mm512_mask_reduce_min_epu64(_mm512_cmpeq_epu64_mask(best_a, top), idx_a);
    let min_b = _mm512_mask_reduce_min_epu64(_mm512_cmpeq_epu64_mask(best_b, top), idx_b);
    min_a.min(min_b) as usize
}

// ---- JumpBackHash: in `jumpback.rs` beside this file ----

mod jumpback;
pub(crate) use jumpback::jumpback_batch;

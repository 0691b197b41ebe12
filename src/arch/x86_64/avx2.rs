//! AVX2 (+ POPCNT): four `u64` lanes per instruction.
//!
//! AVX2 has no 64-bit lane multiply and no unsigned 64-bit compare: [`mul64`] emulates the
//! first with three `vpmuludq`, and compares flip the sign bit and compare signed.
//!
//! Every `pub(crate)` function here is a `#[target_feature]` function: the dispatch in
//! `arch/mod.rs` calls it only through a `Kernels` proving the CPU has AVX2 and POPCNT.

use std::arch::x86_64::*;

pub(crate) use super::md5_avx2::md5_batch;

use crate::arch::generic::{self, RadixView, TreeView, LEAF, NODE};
use crate::mix::{mix64, xorshift_mult64, JUMP_LCG, MIX64_C1, MIX64_C2, XORSHIFT_MULT};

// ---- search: node counters and the instantiated lookups ----

#[inline]
#[target_feature(enable = "avx2,popcnt")]
fn count8(g: &[u64; NODE], h: u64) -> usize {
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
fn count16(g: &[u64; LEAF], h: u64) -> usize {
    let (lo, hi) = g.split_at(NODE);
    let lo: &[u64; NODE] = lo.try_into().unwrap_or(&[0; NODE]);
    let hi: &[u64; NODE] = hi.try_into().unwrap_or(&[0; NODE]);
    count8(lo, h) + count8(hi, h)
}

#[target_feature(enable = "avx2,popcnt")]
pub(crate) fn tree_lookup(t: &TreeView<'_>, points: &[u64], h: u64) -> usize {
    generic::tree_lookup(t, points, h, |g, h| count8(g, h), |g, h| count16(g, h))
}

#[target_feature(enable = "avx2,popcnt")]
pub(crate) fn tree_batch(t: &TreeView<'_>, points: &[u64], hashes: &[u64], out: &mut [usize]) {
    generic::tree_batch(t, points, hashes, out, |g, h| count8(g, h), |g, h| count16(g, h))
}

#[target_feature(enable = "avx2,popcnt")]
pub(crate) fn radix_lookup(r: &RadixView<'_>, points: &[u64], side: &[u32], h: u64) -> usize {
    generic::radix_lookup(r, points, side, h, |g, h| count8(g, h), |g, h| count16(g, h))
}

#[target_feature(enable = "avx2,popcnt")]
pub(crate) fn radix_batch(r: &RadixView<'_>, points: &[u64], hashes: &[u64], out: &mut [usize]) {
    generic::radix_batch(r, points, hashes, out, |g, h| count8(g, h), |g, h| count16(g, h))
}

// ---- the shared 64-bit lane multiply ----

/// A 64-bit constant split into the 32-bit halves [`mul64`] takes, broadcast to every lane.
#[inline]
#[target_feature(enable = "avx2")]
fn halves(c: u64) -> (__m256i, __m256i) {
    (_mm256_set1_epi64x((c & 0xffff_ffff) as i64), _mm256_set1_epi64x((c >> 32) as i64))
}

/// `a * c mod 2^64` per lane, `(c_lo, c_hi)` from [`halves`]:
/// `lo(a)·lo(c) + ((hi(a)·lo(c) + lo(a)·hi(c)) << 32)`.
#[inline]
#[target_feature(enable = "avx2")]
fn mul64(a: __m256i, (c_lo, c_hi): (__m256i, __m256i)) -> __m256i {
    let lo = _mm256_mul_epu32(a, c_lo);
    let cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64::<32>(a), c_lo), _mm256_mul_epu32(a, c_hi));
    _mm256_add_epi64(lo, _mm256_slli_epi64::<32>(cross))
}

// ---- jump hash: 2 × 4 lanes ----
//
// Bit-identical to the paper's scalar loop: every lane runs the same IEEE-754 operations in the
// same order (`(b + 1) * (2^31 / ((key >> 33) + 1))`, both operands exact in a double), and the
// loop test `j < buckets` is done on the double, which is equivalent because `buckets` is an
// integer. Lanes that finished keep their bucket while the others keep jumping. Two
// independent vectors are interleaved so one's division overlaps the other's.

const TWO31: f64 = (1u64 << 31) as f64;
/// 2^52 as a double: OR-ing an integer < 2^52 into its mantissa and subtracting converts it
/// exactly without AVX-512's u64 conversion.
const MAGIC: f64 = 4503599627370496.0;

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
fn jump_step(key: &mut __m256i, b: __m256d) -> __m256d {
    let one = _mm256_set1_epi64x(1);
    *key = _mm256_add_epi64(mul64(*key, halves(JUMP_LCG)), one);
    let x = small_u64_to_f64(_mm256_add_epi64(_mm256_srli_epi64::<33>(*key), one));
    let j = _mm256_mul_pd(_mm256_add_pd(b, _mm256_set1_pd(1.0)), _mm256_div_pd(_mm256_set1_pd(TWO31), x));
    _mm256_round_pd::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(j)
}

/// Jump hash of 8 keys, two interleaved vectors of 4.
#[inline]
#[target_feature(enable = "avx2")]
fn jump8(k: &[u64; 8], bd: __m256d) -> [u64; 8] {
    // SAFETY: `k` is 8 readable u64: two unaligned 32-byte loads.
    let (mut k0, mut k1) = unsafe {
        (_mm256_loadu_si256(k.as_ptr() as *const __m256i), _mm256_loadu_si256(k.as_ptr().add(4) as *const __m256i))
    };
    // The first iteration always sets b = 0 (0 < buckets).
    let mut b0 = _mm256_setzero_pd();
    let mut b1 = _mm256_setzero_pd();
    let mut j0 = jump_step(&mut k0, b0);
    let mut j1 = jump_step(&mut k1, b1);
    loop {
        let a0 = _mm256_cmp_pd::<_CMP_LT_OQ>(j0, bd);
        let a1 = _mm256_cmp_pd::<_CMP_LT_OQ>(j1, bd);
        if _mm256_movemask_pd(_mm256_or_pd(a0, a1)) == 0 {
            break;
        }
        b0 = _mm256_blendv_pd(b0, j0, a0);
        b1 = _mm256_blendv_pd(b1, j1, a1);
        // Finished lanes keep computing (harmlessly) but their b no longer changes.
        let n0 = jump_step(&mut k0, b0);
        let n1 = jump_step(&mut k1, b1);
        // A finished lane must stay finished: pin its j at `buckets`.
        j0 = _mm256_blendv_pd(bd, n0, a0);
        j1 = _mm256_blendv_pd(bd, n1, a1);
    }
    // b < 2^32: adding 2^52 leaves the integer in the low mantissa bits.
    let magic = _mm256_set1_pd(MAGIC);
    let mut lanes = [0u64; 8];
    // SAFETY: `lanes` is 8 writable u64: two unaligned 32-byte stores.
    unsafe {
        _mm256_storeu_si256(lanes.as_mut_ptr() as *mut __m256i, _mm256_castpd_si256(_mm256_add_pd(b0, magic)));
        _mm256_storeu_si256(lanes.as_mut_ptr().add(4) as *mut __m256i, _mm256_castpd_si256(_mm256_add_pd(b1, magic)));
    }
    lanes
}

#[target_feature(enable = "avx2,popcnt")]
pub(crate) fn jump_batch(keys: &[u64], buckets: u32, out: &mut [u32]) {
    let bd = _mm256_set1_pd(f64::from(buckets));
    let mut kc = keys.chunks_exact(8);
    let mut oc = out.chunks_exact_mut(8);
    for (k, o) in (&mut kc).zip(&mut oc) {
        let lanes = jump8(k.try_into().unwrap_or(&[0; 8]), bd);
        for (o, l) in o.iter_mut().zip(lanes) {
            *o = l as u32;
        }
    }
    generic::jump_batch(kc.remainder(), buckets, oc.into_remainder());
}

// ---- rendezvous: argmax of a 64-bit mix over node hashes, 2 × 4 lanes ----

/// `GO` selects the mixer: `mix64` (false) or go-rendezvous's `xorshift_mult64` (true); the
/// lanes hold scores with the sign bit flipped so the signed compare orders them unsigned.
#[inline]
#[target_feature(enable = "avx2")]
fn score<const GO: bool>(h: __m256i, k: __m256i) -> __m256i {
    let bias = _mm256_set1_epi64x(i64::MIN);
    let mut z = _mm256_xor_si256(h, k);
    if GO {
        z = _mm256_xor_si256(z, _mm256_srli_epi64::<12>(z));
        z = _mm256_xor_si256(z, _mm256_slli_epi64::<25>(z));
        z = _mm256_xor_si256(z, _mm256_srli_epi64::<27>(z));
        return _mm256_xor_si256(mul64(z, halves(XORSHIFT_MULT)), bias);
    }
    z = _mm256_xor_si256(z, _mm256_srli_epi64::<30>(z));
    z = mul64(z, halves(MIX64_C1));
    z = _mm256_xor_si256(z, _mm256_srli_epi64::<27>(z));
    z = mul64(z, halves(MIX64_C2));
    z = _mm256_xor_si256(z, _mm256_srli_epi64::<31>(z));
    _mm256_xor_si256(z, bias)
}

/// Per-lane running maxima and their indices: two accumulators of 4 lanes.
#[derive(Clone, Copy)]
struct Best {
    score: [__m256i; 2],
    index: [__m256i; 2],
}

impl Best {
    /// Folds 8 node hashes whose indices are `at` into the maxima (strictly greater replaces).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn fold<const GO: bool>(&mut self, chunk: &[u64; 8], k: __m256i, at: [__m256i; 2]) {
        // SAFETY: `chunk` has 8 u64 = two 32-byte vectors; loadu has no alignment requirement.
        let h =
            unsafe { [_mm256_loadu_si256(chunk.as_ptr().cast()), _mm256_loadu_si256(chunk.as_ptr().add(4).cast())] };
        for v in 0..2 {
            let s = score::<GO>(h[v], k);
            let gt = _mm256_cmpgt_epi64(s, self.score[v]);
            self.score[v] = _mm256_blendv_epi8(self.score[v], s, gt);
            self.index[v] = _mm256_blendv_epi8(self.index[v], at[v], gt);
        }
    }

    /// The maximum score (sign bit restored) with the smallest index, reduced in registers: a
    /// scalar loop over the lanes branches unpredictably (measured ~25 ns per key at 100 nodes).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn reduce(self) -> (u64, usize) {
        // Take lane 2 where its score is larger, or equal with a smaller index (indices are
        // non-negative, so the signed compare orders them).
        let better = |(s1, i1): (__m256i, __m256i), (s2, i2): (__m256i, __m256i)| {
            let take = _mm256_or_si256(
                _mm256_cmpgt_epi64(s2, s1),
                _mm256_and_si256(_mm256_cmpeq_epi64(s2, s1), _mm256_cmpgt_epi64(i1, i2)),
            );
            (_mm256_blendv_epi8(s1, s2, take), _mm256_blendv_epi8(i1, i2, take))
        };
        let v = better((self.score[0], self.index[0]), (self.score[1], self.index[1]));
        let swap_halves = |x| _mm256_permute4x64_epi64::<0b01_00_11_10>(x);
        let v = better(v, (swap_halves(v.0), swap_halves(v.1)));
        let swap_pairs = |x| _mm256_permute4x64_epi64::<0b10_11_00_01>(x);
        let v = better(v, (swap_pairs(v.0), swap_pairs(v.1)));
        ((_mm256_extract_epi64::<0>(v.0) as u64) ^ (1 << 63), _mm256_extract_epi64::<0>(v.1) as usize)
    }
}

/// Scan position of the first maximum score over non-empty `hashes` (see [`score`]).
#[target_feature(enable = "avx2,popcnt")]
pub(crate) fn argmax<const GO: bool>(hashes: &[u64], key_hash: u64) -> usize {
    let k = _mm256_set1_epi64x(key_hash as i64);
    // Lane j starts as (score 0, index j): a real node only replaces it with a strictly larger
    // score, and if the global maximum is 0 the reduction picks index 0, the right answer.
    let bias = _mm256_set1_epi64x(i64::MIN);
    let first = [_mm256_setr_epi64x(0, 1, 2, 3), _mm256_setr_epi64x(4, 5, 6, 7)];
    let mut best = Best { score: [bias, bias], index: first };
    let mut at = first;
    let step = _mm256_set1_epi64x(8);
    let mut chunks = hashes.chunks_exact(8);
    for chunk in &mut chunks {
        best.fold::<GO>(chunk.try_into().unwrap_or(&[0; 8]), k, at);
        at = [_mm256_add_epi64(at[0], step), _mm256_add_epi64(at[1], step)];
    }
    let mut tail = chunks.remainder();
    if !tail.is_empty() && hashes.len() >= 8 {
        // The last 8 nodes again, overlapping the blocks already scored: a node scored twice
        // carries its own index both times, so the maximum and its first index are unchanged,
        // and the tail costs one vector step instead of up to 7 scalar scores.
        let base = (hashes.len() - 8) as i64;
        let at = |j: i64| _mm256_setr_epi64x(base + j, base + j + 1, base + j + 2, base + j + 3);
        let last: &[u64; 8] = hashes[hashes.len() - 8..].try_into().unwrap_or(&[0; 8]);
        best.fold::<GO>(last, k, [at(0), at(4)]);
        tail = &[];
    }
    let (mut best_score, mut best_index) = best.reduce();
    let base = hashes.len() - tail.len();
    for (j, &h) in tail.iter().enumerate() {
        let s = if GO { xorshift_mult64(key_hash ^ h) } else { mix64(key_hash ^ h) };
        if s > best_score {
            (best_score, best_index) = (s, base + j);
        }
    }
    best_index
}

// ---- JumpBackHash: in `jumpback.rs` beside this file ----

mod jumpback;
pub(crate) use jumpback::jumpback_batch;

//! AVX2 kernel: 4 lanes of u64, two independent accumulators (8 nodes per iteration).
//!
//! AVX2 has no 64-bit multiply: `a * c mod 2^64` is emulated as
//! `lo(a)·lo(c) + ((hi(a)·lo(c) + lo(a)·hi(c)) << 32)` with three `vpmuludq`. It has no unsigned
//! 64-bit compare either: scores are kept with the sign bit flipped and compared signed.

use std::arch::x86_64::*;

use crate::algo::mix64;
use crate::algo::rendezvous::xorshift_mult64;

/// Proof that the running CPU has AVX2 (only [`Avx2::detect`] creates one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Avx2(());

impl Avx2 {
    /// `Some` when the CPU supports AVX2 (std caches the detection; this is a cheap load).
    pub(crate) fn detect() -> Option<Avx2> {
        std::arch::is_x86_feature_detected!("avx2").then_some(Avx2(()))
    }

    /// Scan position of the first maximum of `mix64(key_hash ^ h)`; `hashes` must be non-empty.
    #[inline]
    pub(crate) fn argmax(self, hashes: &[u64], key_hash: u64) -> usize {
        // SAFETY: `self` exists only if `detect` saw AVX2 on this CPU, the kernel's one feature.
        unsafe { argmax::<false>(hashes, key_hash) }
    }

    /// As [`Avx2::argmax`] with go-rendezvous's `xorshift_mult64` as the mixer.
    #[inline]
    pub(crate) fn argmax_go(self, hashes: &[u64], key_hash: u64) -> usize {
        // SAFETY: `self` exists only if `detect` saw AVX2 on this CPU, the kernel's one feature.
        unsafe { argmax::<true>(hashes, key_hash) }
    }
}

const C1: u64 = 0xbf58_476d_1ce4_e5b9;
const C2: u64 = 0x94d0_49bb_1331_11eb;
const GO_C: u64 = 2685821657736338717;

/// `a * c` per 64-bit lane (wrapping), `c_lo`/`c_hi` holding the constant's 32-bit halves.
#[inline]
#[target_feature(enable = "avx2")]
fn mullo(a: __m256i, c_lo: __m256i, c_hi: __m256i) -> __m256i {
    let lo = _mm256_mul_epu32(a, c_lo);
    let cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64::<32>(a), c_lo), _mm256_mul_epu32(a, c_hi));
    _mm256_add_epi64(lo, _mm256_slli_epi64::<32>(cross))
}

/// `GO` selects the mixer: `mix64` (false) or go-rendezvous's `xorshift_mult64` (true).
#[target_feature(enable = "avx2")]
fn argmax<const GO: bool>(hashes: &[u64], key_hash: u64) -> usize {
    let k = _mm256_set1_epi64x(key_hash as i64);
    let (c1_lo, c1_hi) = (_mm256_set1_epi64x((C1 & 0xffff_ffff) as i64), _mm256_set1_epi64x((C1 >> 32) as i64));
    let (c2_lo, c2_hi) = (_mm256_set1_epi64x((C2 & 0xffff_ffff) as i64), _mm256_set1_epi64x((C2 >> 32) as i64));
    let (go_lo, go_hi) = (_mm256_set1_epi64x((GO_C & 0xffff_ffff) as i64), _mm256_set1_epi64x((GO_C >> 32) as i64));
    let bias = _mm256_set1_epi64x(i64::MIN);
    let score = |h: __m256i| {
        let mut z = _mm256_xor_si256(h, k);
        if GO {
            z = _mm256_xor_si256(z, _mm256_srli_epi64::<12>(z));
            z = _mm256_xor_si256(z, _mm256_slli_epi64::<25>(z));
            z = _mm256_xor_si256(z, _mm256_srli_epi64::<27>(z));
            return _mm256_xor_si256(mullo(z, go_lo, go_hi), bias);
        }
        z = _mm256_xor_si256(z, _mm256_srli_epi64::<30>(z));
        z = mullo(z, c1_lo, c1_hi);
        z = _mm256_xor_si256(z, _mm256_srli_epi64::<27>(z));
        z = mullo(z, c2_lo, c2_hi);
        z = _mm256_xor_si256(z, _mm256_srli_epi64::<31>(z));
        _mm256_xor_si256(z, bias) // unsigned order as signed order
    };
    // Lane j starts as (score 0, index j): a real node only replaces it with a strictly larger
    // score, and if the global maximum is 0 the reduction picks index 0, the right answer.
    let (mut best_a, mut best_b) = (bias, bias);
    let (mut idx_a, mut idx_b) = (_mm256_setr_epi64x(0, 1, 2, 3), _mm256_setr_epi64x(4, 5, 6, 7));
    let (mut cur_a, mut cur_b) = (idx_a, idx_b);
    let step = _mm256_set1_epi64x(8);
    let mut step_block = |chunk: &[u64], cur_a: __m256i, cur_b: __m256i| {
        debug_assert_eq!(chunk.len(), 8);
        let chunk: &[u64; 8] = chunk.try_into().unwrap_or(&[0; 8]);
        // SAFETY: `chunk` has 8 u64 = two 32-byte vectors; loadu has no alignment requirement.
        let (ha, hb) =
            unsafe { (_mm256_loadu_si256(chunk.as_ptr().cast()), _mm256_loadu_si256(chunk.as_ptr().add(4).cast())) };
        let (sa, sb) = (score(ha), score(hb));
        let (ga, gb) = (_mm256_cmpgt_epi64(sa, best_a), _mm256_cmpgt_epi64(sb, best_b));
        best_a = _mm256_blendv_epi8(best_a, sa, ga);
        best_b = _mm256_blendv_epi8(best_b, sb, gb);
        idx_a = _mm256_blendv_epi8(idx_a, cur_a, ga);
        idx_b = _mm256_blendv_epi8(idx_b, cur_b, gb);
    };
    let mut chunks = hashes.chunks_exact(8);
    for chunk in &mut chunks {
        step_block(chunk, cur_a, cur_b);
        cur_a = _mm256_add_epi64(cur_a, step);
        cur_b = _mm256_add_epi64(cur_b, step);
    }
    let mut tail = chunks.remainder();
    if !tail.is_empty() && hashes.len() >= 8 {
        // The last 8 nodes again, overlapping the blocks already scored: a node scored twice
        // carries its own index both times, so the maximum and its first index are unchanged,
        // and the tail costs one vector step instead of up to 7 scalar scores.
        let base = (hashes.len() - 8) as i64;
        let at = |j: i64| _mm256_setr_epi64x(base + j, base + j + 1, base + j + 2, base + j + 3);
        step_block(&hashes[hashes.len() - 8..], at(0), at(4));
        tail = &[];
    }
    // Reduce the 8 lanes to the maximum score with the smallest index, in registers: a scalar
    // loop over the lanes branches unpredictably (measured ~25 ns per key at 100 nodes).
    let better = |(s1, i1): (__m256i, __m256i), (s2, i2): (__m256i, __m256i)| {
        // Take lane 2 where its score is larger, or equal with a smaller index (indices are
        // non-negative, so the signed compare orders them).
        let take = _mm256_or_si256(
            _mm256_cmpgt_epi64(s2, s1),
            _mm256_and_si256(_mm256_cmpeq_epi64(s2, s1), _mm256_cmpgt_epi64(i1, i2)),
        );
        (_mm256_blendv_epi8(s1, s2, take), _mm256_blendv_epi8(i1, i2, take))
    };
    let v = better((best_a, idx_a), (best_b, idx_b));
    let v = better(v, (_mm256_permute4x64_epi64::<0b01_00_11_10>(v.0), _mm256_permute4x64_epi64::<0b01_00_11_10>(v.1)));
    let v = better(v, (_mm256_permute4x64_epi64::<0b10_11_00_01>(v.0), _mm256_permute4x64_epi64::<0b10_11_00_01>(v.1)));
    let mut best_score = (_mm256_extract_epi64::<0>(v.0) as u64) ^ (1 << 63);
    let mut best = _mm256_extract_epi64::<0>(v.1) as usize;
    let base = hashes.len() - tail.len();
    for (j, &h) in tail.iter().enumerate() {
        let s = if GO { xorshift_mult64(key_hash ^ h) } else { mix64(key_hash ^ h) };
        if s > best_score {
            (best_score, best) = (s, base + j);
        }
    }
    best
}

//! AVX-512 kernel: 8 lanes of u64 with native `vpmullq` (AVX-512DQ) and unsigned compares
//! into mask registers (AVX-512F); two accumulators (16 nodes per iteration) hide the
//! compare-and-select latency, and a masked load handles the tail without a scalar loop.

use std::arch::x86_64::*;

/// Proof that the running CPU has AVX-512F and AVX-512DQ (only [`Avx512::detect`] creates one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Avx512(());

impl Avx512 {
    /// `Some` when the CPU supports AVX-512F and AVX-512DQ.
    pub(crate) fn detect() -> Option<Avx512> {
        (std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512dq"))
            .then_some(Avx512(()))
    }

    /// Scan position of the first maximum of `mix64(key_hash ^ h)`; `hashes` must be non-empty.
    #[inline]
    pub(crate) fn argmax(self, hashes: &[u64], key_hash: u64) -> usize {
        // SAFETY: `self` exists only if `detect` saw AVX-512F and -DQ, the kernel's features.
        unsafe { argmax::<false>(hashes, key_hash) }
    }

    /// As [`Avx512::argmax`] with go-rendezvous's `xorshift_mult64` as the mixer.
    #[inline]
    pub(crate) fn argmax_go(self, hashes: &[u64], key_hash: u64) -> usize {
        // SAFETY: `self` exists only if `detect` saw AVX-512F and -DQ, the kernel's features.
        unsafe { argmax::<true>(hashes, key_hash) }
    }
}

/// `GO` selects the mixer: `mix64` (false) or go-rendezvous's `xorshift_mult64` (true).
#[target_feature(enable = "avx512f,avx512dq")]
fn argmax<const GO: bool>(hashes: &[u64], key_hash: u64) -> usize {
    let k = _mm512_set1_epi64(key_hash as i64);
    let c1 = _mm512_set1_epi64(0xbf58_476d_1ce4_e5b9u64 as i64);
    let c2 = _mm512_set1_epi64(0x94d0_49bb_1331_11ebu64 as i64);
    let go = _mm512_set1_epi64(2685821657736338717);
    let score = |h: __m512i| {
        let mut z = _mm512_xor_si512(h, k);
        if GO {
            z = _mm512_xor_si512(z, _mm512_srli_epi64::<12>(z));
            z = _mm512_xor_si512(z, _mm512_slli_epi64::<25>(z));
            z = _mm512_xor_si512(z, _mm512_srli_epi64::<27>(z));
            return _mm512_mullo_epi64(z, go);
        }
        z = _mm512_xor_si512(z, _mm512_srli_epi64::<30>(z));
        z = _mm512_mullo_epi64(z, c1);
        z = _mm512_xor_si512(z, _mm512_srli_epi64::<27>(z));
        z = _mm512_mullo_epi64(z, c2);
        _mm512_xor_si512(z, _mm512_srli_epi64::<31>(z))
    };
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
        let (sa, sb) = (score(ha), score(hb));
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
        let s = score(h);
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

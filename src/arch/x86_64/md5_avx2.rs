//! AVX2 multi-buffer MD5: 8 `u32` lanes per vector, `VECS` interleaved vectors per call.
//!
//! One vector of 8 lanes is bound by the latency of MD5's serial step chain (each step needs
//! the previous one's result), not by throughput; two independent vectors per step fill the
//! idle ports. The lane scheduler and the padding are the portable ones
//! ([`generic::md5_lanes`]); this file only moves the blocks into word-major order (two 8×8
//! transposes per vector) and runs the 64 steps. Two vectors measured best overall: one
//! leaves ports idle, three gain little on large batches and lose on small ones (24 lanes).

use std::arch::x86_64::*;

use crate::arch::generic::{self, md5_steps};

/// Independent vectors per step: a second one fills the ports one step chain leaves idle.
const VECS: usize = 2;

/// Lanes per call of [`compress`].
const LANES: usize = 8 * VECS;

/// Transposes 8 rows of 8 `u32` (row = lane) into 8 vectors of one word across the lanes.
#[inline]
#[target_feature(enable = "avx2")]
fn transpose8(r: [__m256i; 8]) -> [__m256i; 8] {
    let t0 = _mm256_unpacklo_epi32(r[0], r[1]);
    let t1 = _mm256_unpackhi_epi32(r[0], r[1]);
    let t2 = _mm256_unpacklo_epi32(r[2], r[3]);
    let t3 = _mm256_unpackhi_epi32(r[2], r[3]);
    let t4 = _mm256_unpacklo_epi32(r[4], r[5]);
    let t5 = _mm256_unpackhi_epi32(r[4], r[5]);
    let t6 = _mm256_unpacklo_epi32(r[6], r[7]);
    let t7 = _mm256_unpackhi_epi32(r[6], r[7]);
    let u0 = _mm256_unpacklo_epi64(t0, t2);
    let u1 = _mm256_unpackhi_epi64(t0, t2);
    let u2 = _mm256_unpacklo_epi64(t1, t3);
    let u3 = _mm256_unpackhi_epi64(t1, t3);
    let u4 = _mm256_unpacklo_epi64(t4, t6);
    let u5 = _mm256_unpackhi_epi64(t4, t6);
    let u6 = _mm256_unpacklo_epi64(t5, t7);
    let u7 = _mm256_unpackhi_epi64(t5, t7);
    [
        _mm256_permute2x128_si256::<0x20>(u0, u4),
        _mm256_permute2x128_si256::<0x20>(u1, u5),
        _mm256_permute2x128_si256::<0x20>(u2, u6),
        _mm256_permute2x128_si256::<0x20>(u3, u7),
        _mm256_permute2x128_si256::<0x31>(u0, u4),
        _mm256_permute2x128_si256::<0x31>(u1, u5),
        _mm256_permute2x128_si256::<0x31>(u2, u6),
        _mm256_permute2x128_si256::<0x31>(u3, u7),
    ]
}

/// The 16 message words of the 8 lanes `rows`, word-major.
#[inline]
#[target_feature(enable = "avx2")]
fn message8(rows: &[[u8; 64]]) -> [__m256i; 16] {
    let half = |off: usize| {
        // SAFETY: `rows[l]` is a bounds-checked `[u8; 64]` and `off` is 0 or 32, so the
        // unaligned 32-byte load stays inside that block.
        std::array::from_fn(|l| unsafe { _mm256_loadu_si256(rows[l].as_ptr().add(off).cast()) })
    };
    let lo = transpose8(half(0));
    let hi = transpose8(half(32));
    std::array::from_fn(|w| if w < 8 { lo[w] } else { hi[w - 8] })
}

/// `x`, hidden from the optimizer: as in the scalar `compress_words`, so that the step constant
/// is added off the step chain instead of after the round function.
#[inline]
#[target_feature(enable = "avx2")]
fn opaque(mut x: __m256i) -> __m256i {
    // SAFETY: an empty assembly block that only claims to read and write `x` in a vector
    // register (enabled by this function's target features): no memory, stack or flags.
    unsafe { std::arch::asm!("/* {0} */", inout(ymm_reg) x, options(pure, nomem, nostack, preserves_flags)) };
    x
}

/// One MD5 compression in each of the lanes (see [`generic::md5_lanes`] for the layout).
#[inline]
#[target_feature(enable = "avx2")]
fn compress(state: &mut [[u32; LANES]; 4], rows: &[[u8; 64]; LANES]) {
    let m: [[__m256i; 16]; VECS] = std::array::from_fn(|v| message8(&rows[8 * v..8 * v + 8]));
    let load = |w: &[u32; LANES]| -> [__m256i; VECS] {
        // SAFETY: each state row is `LANES` = 8 * VECS u32, and `v < VECS`: the unaligned
        // 32-byte load at `8 * v` stays inside it.
        std::array::from_fn(|v| unsafe { _mm256_loadu_si256(w.as_ptr().add(8 * v).cast()) })
    };
    let init = [load(&state[0]), load(&state[1]), load(&state[2]), load(&state[3])];
    let [mut a, mut b, mut c, mut d] = init;
    let ones = _mm256_set1_epi32(-1);
    macro_rules! step {
        (f, $a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $s:expr, $k:expr) => {
            step!(@ $a, $b, $m, $s, $k, |h: usize| _mm256_xor_si256(
                $d[h],
                _mm256_and_si256($b[h], _mm256_xor_si256($c[h], $d[h]))
            ))
        };
        (g, $a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $s:expr, $k:expr) => {
            step!(@ $a, $b, $m, $s, $k, |h: usize| _mm256_or_si256(
                _mm256_and_si256($b[h], $d[h]),
                _mm256_andnot_si256($d[h], $c[h])
            ))
        };
        (h, $a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $s:expr, $k:expr) => {
            step!(@ $a, $b, $m, $s, $k, |h: usize| _mm256_xor_si256(_mm256_xor_si256($c[h], $d[h]), $b[h]))
        };
        (i, $a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $s:expr, $k:expr) => {
            step!(@ $a, $b, $m, $s, $k, |h: usize| _mm256_xor_si256(
                $c[h],
                _mm256_or_si256($b[h], _mm256_xor_si256($d[h], ones))
            ))
        };
        (@ $a:ident, $b:ident, $m:expr, $s:expr, $k:expr, $fun:expr) => {{
            let fun = $fun;
            let k = _mm256_set1_epi32({
                let k: u32 = $k;
                k as i32
            });
            for h in 0..VECS {
                let t = opaque(_mm256_add_epi32(_mm256_add_epi32($a[h], k), m[h][$m]));
                let t = _mm256_add_epi32(t, fun(h));
                let r = _mm256_or_si256(_mm256_slli_epi32::<$s>(t), _mm256_srli_epi32::<{ 32 - $s }>(t));
                $a[h] = _mm256_add_epi32(r, $b[h]);
            }
        }};
    }
    md5_steps!(step, a, b, c, d);
    for (w, (v, v0)) in state.iter_mut().zip([a, b, c, d].into_iter().zip(init)) {
        for h in 0..VECS {
            // SAFETY: `w[8h..8h + 8]` is inside the `LANES`-word row: one unaligned 32-byte store.
            unsafe { _mm256_storeu_si256(w.as_mut_ptr().add(8 * h).cast(), _mm256_add_epi32(v[h], v0[h])) };
        }
    }
}

/// MD5 state words of every key, `LANES` lanes at a time (`keys.len() == out.len()`, checked by the
/// dispatching caller).
#[target_feature(enable = "avx2,popcnt")]
pub(crate) fn md5_batch(keys: &[&[u8]], out: &mut [[u32; 4]]) {
    generic::md5_lanes::<LANES>(keys, out, |s, r| compress(s, r));
}

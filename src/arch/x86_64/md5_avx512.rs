//! AVX-512 multi-buffer MD5: 16 `u32` lanes per vector, `VECS` interleaved vectors per call.
//!
//! `vpternlogd` computes each round function in one instruction and `vprold` rotates in one,
//! so a step is five instructions. The lane scheduler and the padding are the portable ones
//! ([`generic::md5_lanes`]); this file only moves the blocks into word-major order (a 16×16
//! transpose per vector) and runs the 64 steps.

use std::arch::x86_64::*;

use crate::arch::generic::{self, md5_steps};

/// Independent vectors per step: a second one hides the step chain's latency.
const VECS: usize = 2;

/// Lanes per call of [`compress`].
const LANES: usize = 16 * VECS;

/// The round functions as `vpternlogd` truth tables of (b, c, d): F = b ? c : d,
/// G = d ? b : c, H = b ^ c ^ d, I = c ^ (b | !d).
const TERN_F: i32 = 0xca;
const TERN_G: i32 = 0xe4;
const TERN_H: i32 = 0x96;
const TERN_I: i32 = 0x39;

/// The 16 message words of the 16 lanes `rows`, word-major: a 16×16 `u32` transpose.
#[inline]
#[target_feature(enable = "avx512f")]
fn message16(rows: &[[u8; 64]]) -> [__m512i; 16] {
    // SAFETY: `rows[l]` is a bounds-checked `[u8; 64]`: the unaligned 64-byte load is exactly
    // that block.
    let r: [__m512i; 16] = std::array::from_fn(|l| unsafe { _mm512_loadu_si512(rows[l].as_ptr().cast()) });
    // Within each 128-bit chunk, as in a 4×4 transpose: u[4g + j], chunk q = word 4q + j of
    // rows 4g..4g + 4.
    let mut u = [_mm512_setzero_si512(); 16];
    for g in 0..4 {
        let t0 = _mm512_unpacklo_epi32(r[4 * g], r[4 * g + 1]);
        let t1 = _mm512_unpackhi_epi32(r[4 * g], r[4 * g + 1]);
        let t2 = _mm512_unpacklo_epi32(r[4 * g + 2], r[4 * g + 3]);
        let t3 = _mm512_unpackhi_epi32(r[4 * g + 2], r[4 * g + 3]);
        u[4 * g] = _mm512_unpacklo_epi64(t0, t2);
        u[4 * g + 1] = _mm512_unpackhi_epi64(t0, t2);
        u[4 * g + 2] = _mm512_unpacklo_epi64(t1, t3);
        u[4 * g + 3] = _mm512_unpackhi_epi64(t1, t3);
    }
    // Then a 4×4 transpose of 128-bit chunks: word 4q + j, chunk g = u[4g + j], chunk q.
    let mut m = [_mm512_setzero_si512(); 16];
    for j in 0..4 {
        let v0 = _mm512_shuffle_i32x4::<0x44>(u[j], u[4 + j]);
        let v1 = _mm512_shuffle_i32x4::<0xee>(u[j], u[4 + j]);
        let v2 = _mm512_shuffle_i32x4::<0x44>(u[8 + j], u[12 + j]);
        let v3 = _mm512_shuffle_i32x4::<0xee>(u[8 + j], u[12 + j]);
        m[j] = _mm512_shuffle_i32x4::<0x88>(v0, v2);
        m[4 + j] = _mm512_shuffle_i32x4::<0xdd>(v0, v2);
        m[8 + j] = _mm512_shuffle_i32x4::<0x88>(v1, v3);
        m[12 + j] = _mm512_shuffle_i32x4::<0xdd>(v1, v3);
    }
    m
}

/// `x`, hidden from the optimizer: as in the scalar `compress_words`, so that the step constant
/// is added off the step chain instead of after the round function.
#[inline]
#[target_feature(enable = "avx512f")]
fn opaque(mut x: __m512i) -> __m512i {
    // SAFETY: an empty assembly block that only claims to read and write `x` in a vector
    // register (enabled by this function's target features): no memory, stack or flags.
    unsafe { std::arch::asm!("/* {0} */", inout(zmm_reg) x, options(pure, nomem, nostack, preserves_flags)) };
    x
}

/// One MD5 compression in each of the lanes (see [`generic::md5_lanes`] for the layout).
#[inline]
#[target_feature(enable = "avx512f")]
fn compress(state: &mut [[u32; LANES]; 4], rows: &[[u8; 64]; LANES]) {
    let m: [[__m512i; 16]; VECS] = std::array::from_fn(|v| message16(&rows[16 * v..16 * v + 16]));
    let load = |w: &[u32; LANES]| -> [__m512i; VECS] {
        // SAFETY: each state row is `LANES` = 16 * VECS u32, and `v < VECS`: the unaligned
        // 64-byte load at `16 * v` stays inside it.
        std::array::from_fn(|v| unsafe { _mm512_loadu_si512(w.as_ptr().add(16 * v).cast()) })
    };
    let init = [load(&state[0]), load(&state[1]), load(&state[2]), load(&state[3])];
    let [mut a, mut b, mut c, mut d] = init;
    macro_rules! step {
        ($fun:ident, $a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $s:expr, $k:expr) => {
            let k = _mm512_set1_epi32({
                let k: u32 = $k;
                k as i32
            });
            for v in 0..VECS {
                let t = opaque(_mm512_add_epi32(_mm512_add_epi32($a[v], k), m[v][$m]));
                let f = step!(@ $fun, $b[v], $c[v], $d[v]);
                $a[v] = _mm512_add_epi32(_mm512_rol_epi32::<$s>(_mm512_add_epi32(t, f)), $b[v]);
            }
        };
        (@ f, $b:expr, $c:expr, $d:expr) => { _mm512_ternarylogic_epi32::<TERN_F>($b, $c, $d) };
        (@ g, $b:expr, $c:expr, $d:expr) => { _mm512_ternarylogic_epi32::<TERN_G>($b, $c, $d) };
        (@ h, $b:expr, $c:expr, $d:expr) => { _mm512_ternarylogic_epi32::<TERN_H>($b, $c, $d) };
        (@ i, $b:expr, $c:expr, $d:expr) => { _mm512_ternarylogic_epi32::<TERN_I>($b, $c, $d) };
    }
    md5_steps!(step, a, b, c, d);
    for (w, (x, x0)) in state.iter_mut().zip([a, b, c, d].into_iter().zip(init)) {
        for v in 0..VECS {
            // SAFETY: `w[16v..16v + 16]` is inside the row: one unaligned 64-byte store.
            unsafe { _mm512_storeu_si512(w.as_mut_ptr().add(16 * v).cast(), _mm512_add_epi32(x[v], x0[v])) };
        }
    }
}

/// MD5 state words of every key, `LANES` lanes at a time (`keys.len() == out.len()`, checked
/// by the dispatching caller).
#[target_feature(enable = "avx512f,avx512dq,avx512vl,popcnt")]
pub(crate) fn md5_batch(keys: &[&[u8]], out: &mut [[u32; 4]]) {
    generic::md5_lanes::<LANES>(keys, out, |s, r| compress(s, r));
}

//! The weighted kernel: `argmax_i -w_i / ln(u_i)` choosing exactly what the scalar oracle
//! ([`weighted_score`] with std's `ln`) chooses, at a fraction of the cost of N `ln` calls.
//!
//! A vectorized or polynomial `ln` is not bit-identical to std's, so it cannot decide close
//! calls by itself. Instead one pass computes approximate scores `a_i` with a proven relative
//! error bound and keeps the best and the runner-up. If the runner-up is below the best by more
//! than the combined error, the best is the unique exact maximum, so it is the oracle's answer;
//! otherwise (a near tie, rare: probability about `N · 1e-5`) the exact scalar scan decides.
//!
//! Error bound. `u = 2^E · m` with `m` in `[√½, √2)` (exact bit manipulation),
//! `ln u = E·ln 2 + ln m`, `ln m = 2·atanh(t) = 2(t + t³/3 + t⁵/5 + t⁷/7 + …)` with
//! `t = (m−1)/(m+1)`, `|t| ≤ (√2−1)/(√2+1) < 0.1716`. Truncating after `t⁷` leaves a relative
//! error `≤ t⁸/(9(1−t²)) < 9e-8` in `ln m`; when `E ≠ 0`, `|E·ln 2 + ln m| ≥ ln 2 − 0.347 >
//! 0.34 ≥ |ln m|`, so the relative error of the sum is below `1e-7` too. Floating-point
//! rounding adds ~1e-15, std's `ln` and the divisions below 1e-15 each. So
//! `|a_i / s_i − 1| < 1.1e-7`, checked empirically by a test, and [`MARGIN`] allows 4e-6
//! (36× the bound).

use super::{score, unit_interval, weighted_score};

/// Accept the approximate winner only if the runner-up scores below `best · (1 − MARGIN)`.
/// Needs `MARGIN > 2ε/(1+ε)` for the relative error bound `ε ≈ 1.1e-7` (see module docs).
const MARGIN: f64 = 4e-6;

/// Below this, approximate scores may be subnormal and lose their relative error bound.
const MIN_NORMAL_SCORE: f64 = 1e-290;

const BLOCK: usize = 8;

/// `-ln(u)` for `u` in (0, 1) within relative error 1e-7 (see the module docs), no `ln` call.
#[inline(always)]
pub(crate) fn neg_ln_approx(u: f64) -> f64 {
    const LN2: f64 = std::f64::consts::LN_2;
    const SQRT2: f64 = std::f64::consts::SQRT_2;
    let bits = u.to_bits();
    // u is normal (≥ 2^-53), so the biased exponent is in 1..=1022.
    let mut e = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mut m = f64::from_bits((bits & ((1u64 << 52) - 1)) | (1023u64 << 52)); // [1, 2)
    if m >= SQRT2 {
        m *= 0.5; // exact
        e += 1;
    }
    let f = m - 1.0; // exact (Sterbenz)
    let t = f / (m + 1.0);
    let t2 = t * t;
    let ln_m = t * (2.0 + t2 * (2.0 / 3.0 + t2 * (2.0 / 5.0 + t2 * (2.0 / 7.0))));
    -(e as f64 * LN2 + ln_m)
}

/// Approximate weighted score (see [`neg_ln_approx`]).
#[inline(always)]
fn approx_score(key_hash: u64, node_hash: u64, weight: f64) -> f64 {
    weight / neg_ln_approx(unit_interval(score(key_hash, node_hash)))
}

/// The scalar oracle: first maximum of [`weighted_score`].
pub(crate) fn argmax_exact(hashes: &[u64], weights: &[f64], key_hash: u64) -> usize {
    let mut best = 0;
    let mut best_score = weighted_score(key_hash, hashes[0], weights[0]);
    for (i, (&n, &w)) in hashes.iter().zip(weights).enumerate().skip(1) {
        let s = weighted_score(key_hash, n, w);
        if s > best_score {
            best = i;
            best_score = s;
        }
    }
    best
}

/// Same answer as [`argmax_exact`] (proof in the module docs), usually without any `ln`.
#[inline]
pub(crate) fn argmax(hashes: &[u64], weights: &[f64], key_hash: u64) -> usize {
    debug_assert_eq!(hashes.len(), weights.len());
    let (mut best, mut best_score, mut second) = (0usize, -1.0f64, -1.0f64);
    let mut consider = |i: usize, a: f64| {
        if a > best_score {
            second = best_score;
            best_score = a;
            best = i;
        } else if a > second {
            second = a;
        }
    };
    let mut hc = hashes.chunks_exact(BLOCK);
    let mut wc = weights.chunks_exact(BLOCK);
    let mut base = 0;
    for (h, w) in (&mut hc).zip(&mut wc) {
        // Straight-line block of scores the compiler can vectorize, then the branchy top-2.
        let mut a = [0.0f64; BLOCK];
        for j in 0..BLOCK {
            a[j] = approx_score(key_hash, h[j], w[j]);
        }
        for (j, &s) in a.iter().enumerate() {
            consider(base + j, s);
        }
        base += BLOCK;
    }
    for (j, (&h, &w)) in hc.remainder().iter().zip(wc.remainder()).enumerate() {
        consider(base + j, approx_score(key_hash, h, w));
    }
    let clear = best_score.is_finite() && best_score >= MIN_NORMAL_SCORE && second < best_score * (1.0 - MARGIN);
    if clear {
        best
    } else {
        argmax_exact(hashes, weights, key_hash)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::mix64;
    use proptest::prelude::*;

    #[test]
    fn approx_ln_error_bound() {
        // The proof's bound (1.1e-7), checked on the extremes, the normalization boundary and
        // a million spread inputs.
        let rel = |u: f64| (neg_ln_approx(u) / -u.ln() - 1.0).abs();
        let mut worst = 0.0f64;
        for x in [0, 1, u64::MAX, u64::MAX - 4096, 1 << 63, (1 << 63) - 1] {
            worst = worst.max(rel(unit_interval(x)));
        }
        let s = std::f64::consts::FRAC_1_SQRT_2;
        for d in -1000i64..1000 {
            // u around 1/√2 and 1/(2√2): both sides of the m ≥ √2 switch.
            for base in [s, s / 2.0] {
                worst = worst.max(rel(f64::from_bits((base.to_bits() as i64 + d) as u64)));
            }
        }
        for i in 0..1_000_000u64 {
            worst = worst.max(rel(unit_interval(mix64(i))));
        }
        eprintln!("neg_ln_approx worst relative error: {worst:e}");
        assert!(worst < 1.1e-7, "relative error {worst:e} breaks the proof's bound");
        assert!(worst > 0.0, "a vacuous check");
    }

    #[test]
    fn near_ties_fall_back() {
        // Identical hashes and weights: exact ties, the first index must win.
        assert_eq!(argmax(&[5; 20], &[2.0; 20], 77), 0);
        // Equal hashes, weights 1 ulp apart: the approximation cannot separate them.
        let w = [1.0, f64::from_bits(1.0f64.to_bits() + 1), 1.0];
        assert_eq!(argmax(&[9; 3], &w, 3), argmax_exact(&[9; 3], &w, 3));
        assert_eq!(argmax(&[9; 3], &w, 3), 1);
        // Extreme weights: overflowing and tiny scores go to the exact scan.
        for w in [f64::MAX, 1e300, f64::MIN_POSITIVE, 5e-324] {
            let h: Vec<u64> = (0..10).collect();
            let ws: Vec<f64> = (0..10).map(|i| if i % 2 == 0 { w } else { 1.0 }).collect();
            assert_eq!(argmax(&h, &ws, 1), argmax_exact(&h, &ws, 1), "w = {w:e}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn weighted_equals_oracle(
            hw in proptest::collection::vec((any::<u64>(), 1e-6f64..1e6), 1..70),
            k in prop_oneof![Just(0u64), Just(u64::MAX), any::<u64>()],
        ) {
            let (h, w): (Vec<u64>, Vec<f64>) = hw.into_iter().unzip();
            prop_assert_eq!(argmax(&h, &w, k), argmax_exact(&h, &w, k));
        }

        #[test]
        fn weighted_equals_oracle_ties(n in 1usize..40, distinct in 1u64..4, k in any::<u64>(), wd in 1u64..3) {
            // Few distinct hashes and weights: exact and near ties everywhere.
            let h: Vec<u64> = (0..n as u64).map(|i| i % distinct).collect();
            let w: Vec<f64> = (0..n as u64).map(|i| 1.0 + (i % wd) as f64).collect();
            prop_assert_eq!(argmax(&h, &w, k), argmax_exact(&h, &w, k));
        }
    }
}

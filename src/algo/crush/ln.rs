//! Ceph's fixed-point natural logarithm for straw2 draws (`crush_ln`): `2^44 · log2(u + 1)` for
//! a 16-bit `u`, from two lookup tables ([`super::ln_table`]) and one 64-bit multiply. Every
//! cluster draws with exactly these numbers, table quirks included, so this is the only
//! logarithm a compatible straw2 may use.

use super::ln_table::{LL, RH_LH};

/// `2^44 · log2(xin + 1)` for `xin <= 0xffff`, as Ceph computes it.
#[inline]
pub(crate) fn crush_ln(xin: u32) -> u64 {
    let mut x = xin + 1;
    // Normalize so bit 15 or 16 is the top bit; `iexpon` is the binary exponent.
    let lz = (x & 0x1_ffff).leading_zeros();
    // x <= 0x10000: 15 - shifts, where shifts brings the top bit to 15 (none when bit 16 is set).
    let shift = if x & 0x1_8000 != 0 { 0 } else { lz - 16 };
    x <<= shift;
    let iexpon = 15 - shift as u64;
    let index1 = ((x >> 8) << 1) as usize;
    // RH ~ 2^56 / index1, LH ~ 2^48 · log2(index1 / 256).
    let rh = RH_LH[index1 - 256];
    let lh = RH_LH[index1 + 1 - 256];
    // x · RH ~ 2^48 · (2^15 + xf) with xf < 2^8; Ceph multiplies as signed 64-bit and the
    // product can reach 2^63 (u = 0xffff), which wraps to the same bits as this unsigned one.
    let x1 = ((x as u64).wrapping_mul(rh) >> 48) as usize;
    let ll = LL[x1 & 0xff];
    (iexpon << 44) + ((lh + ll) >> 4)
}

/// The straw2 draw of an item of 16.16 weight `weight` (non-zero) for hash `u`: `ln(u) /
/// weight` in Ceph's fixed point, truncated toward zero like C's `div64_s64`.
///
/// The reference the mapper's [`straw2_draw_fast`] is tested against.
#[cfg(test)]
pub(crate) fn straw2_draw(u: u32, weight: u32) -> i64 {
    let ln = crush_ln(u & 0xffff) as i64 - 0x1_0000_0000_0000;
    ln / i64::from(weight)
}

/// Division by a fixed straw2 weight without a hardware divide: `floor(a / w)` for `a <= 2^48`
/// as one 64×64→128-bit multiply and a shift (the divide is the costliest step of a draw).
///
/// With `l = ceil(log2 w)`, `k = 49 + l` and `m = floor(2^k / w) + 1 < 2^51`, `a·m / 2^k`
/// exceeds `a / w` by less than `2^48 / 2^(49+l) <= 1/(2w)`, while the fractional part of
/// `a / w` is at most `1 - 1/w`: the floor is exact (checked exhaustively on edges in tests).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Divisor {
    m: u64,
    k: u32,
}

impl Divisor {
    /// The divisor for weight `w` (non-zero).
    pub(crate) fn new(w: u32) -> Divisor {
        let l = 32 - (w - 1).leading_zeros().min(32);
        let k = 49 + l;
        let m = ((1u128 << k) / u128::from(w) + 1) as u64;
        Divisor { m, k }
    }

    /// `floor(a / w)` for `a <= 2^48`.
    #[inline(always)]
    pub(crate) fn div(self, a: u64) -> u64 {
        ((u128::from(a) * u128::from(self.m)) >> self.k) as u64
    }
}

/// [`straw2_draw`] with the weight's [`Divisor`]: the same value, no hardware divide.
#[inline(always)]
pub(crate) fn straw2_draw_fast(u: u32, d: Divisor) -> i64 {
    // crush_ln(u) - 2^48 is in [-2^48, 0]; C's truncating division of a negative number by a
    // positive one is minus the floor of the magnitudes' quotient.
    let a = 0x1_0000_0000_0000 - crush_ln(u & 0xffff);
    -(d.div(a) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn divisor_is_exact() {
        let weights = [
            1u32,
            2,
            3,
            7,
            0x8000,
            0x10000,
            0x10001,
            32768 + 1,
            238_419,
            476_905,
            6_553_600,
            0x7fff_ffff,
            0xffff_ffff,
            0xffff_fffe,
        ];
        let mut dividends: Vec<u64> = vec![0, 1, 2, (1 << 48) - 1, 1 << 48, (1 << 28), 0xffff_f000_0000];
        let mut v = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            v ^= v << 13;
            v ^= v >> 7;
            v ^= v << 17;
            dividends.push(v & ((1 << 48) - 1));
        }
        for &w in &weights {
            let d = Divisor::new(w);
            for &a in &dividends {
                assert_eq!(d.div(a), a / u64::from(w), "a={a} w={w}");
                // Multiples of w and their neighbours: where a floor would slip.
                let q = a / u64::from(w);
                for b in [q * u64::from(w), (q * u64::from(w)).saturating_sub(1), q * u64::from(w) + u64::from(w) - 1] {
                    if b <= 1 << 48 {
                        assert_eq!(d.div(b), b / u64::from(w), "b={b} w={w}");
                    }
                }
            }
        }
        for u in (0..=0xffffu32).step_by(7) {
            for &w in &weights {
                assert_eq!(straw2_draw_fast(u, Divisor::new(w)), straw2_draw(u, w), "u={u} w={w}");
            }
        }
    }

    #[test]
    fn ends_of_the_range() {
        // u = 0: ln(1/65536) maps to 0; u = 0xffff: ln(1) maps to just under 2^48 (the table's
        // last LH entry is 2^48 - 2^32, not 2^48).
        assert_eq!(crush_ln(0), 0);
        assert_eq!(crush_ln(0xffff), 0xffff_f000_0000);
        // Monotone over the whole input range, up to the shipped table's quirks, which never
        // reverse the order by more than one table step.
        let mut prev = 0;
        let mut reversals = 0;
        for u in 1..=0xffff {
            let v = crush_ln(u);
            if v < prev {
                reversals += 1;
            }
            prev = v;
        }
        assert!(reversals < 2000, "{reversals}");
    }

    #[test]
    fn close_to_the_real_logarithm() {
        for u in [1u32, 2, 100, 1000, 0x7fff, 0x8000, 0xfffe] {
            let want = ((u + 1) as f64).log2() * (1u64 << 44) as f64;
            let got = crush_ln(u) as f64;
            assert!((got - want).abs() / want < 1e-3, "u={u} got={got} want={want}");
        }
    }
}

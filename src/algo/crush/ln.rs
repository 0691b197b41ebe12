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
#[inline]
pub(crate) fn straw2_draw(u: u32, weight: u32) -> i64 {
    let ln = crush_ln(u & 0xffff) as i64 - 0x1_0000_0000_0000;
    ln / i64::from(weight)
}

#[cfg(test)]
mod tests {
    use super::*;

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

//! A small deterministic generator for the sweep's random clusters and request traces.
//!
//! Hand-written (SplitMix64, a dozen lines) so the library does not depend on `rand` for its
//! analysis code: the sweep must give the same clusters on every machine and every run for a
//! given seed, which a fixed, frozen generator guarantees.

/// SplitMix64: 64 bits of state, full period 2^64, passes BigCrush; plenty for picking node
/// names and sampling keys. Not cryptographic.
#[derive(Clone, Debug)]
pub(crate) struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator seeded with `seed` (every seed is fine, including 0).
    pub(crate) fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    #[inline]
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform float in `[0, 1)` (53 random bits); `Zipf::sample` consumes a draw the same way.
    #[cfg(test)]
    #[inline]
    pub(crate) fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform integer in `0..n` (Lemire's multiply-shift; the bias is below 2^-32 for the
    /// sizes used here). Returns 0 when `n == 0`.
    #[inline]
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_in_range() {
        let mut a = SplitMix64::new(7);
        let mut b = SplitMix64::new(7);
        for _ in 0..1000 {
            let (x, y) = (a.next_u64(), b.next_u64());
            assert_eq!(x, y);
        }
        let mut r = SplitMix64::new(1);
        for _ in 0..1000 {
            assert!(r.below(10) < 10);
            let f = r.next_f64();
            assert!((0.0..1.0).contains(&f));
        }
        assert_eq!(r.below(0), 0);
    }

    #[test]
    fn first_output_of_seed_zero_is_the_reference_value() {
        // SplitMix64's published first output for seed 0.
        assert_eq!(SplitMix64::new(0).next_u64(), 0xe220_a839_7b1d_cdaf);
    }
}

//! Frozen scalar mixers: the leaf of the crate's dependency graph.
//!
//! Every function here is part of the routes (preference probes, rendezvous scores, jump's
//! random sequence), so none may ever change. The SIMD kernels in [`crate::arch`] compute the
//! same functions lane by lane and are tested against these.

/// SplitMix64's finalizer: a bijective 64-bit mixer used to derive independent hashes
/// (preference probes, rendezvous scores, multi-probe probes) from one key hash.
#[inline]
pub(crate) const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(MIX64_C1);
    z = (z ^ (z >> 27)).wrapping_mul(MIX64_C2);
    z ^ (z >> 31)
}

/// [`mix64`]'s first multiplier.
pub(crate) const MIX64_C1: u64 = 0xbf58_476d_1ce4_e5b9;
/// [`mix64`]'s second multiplier.
pub(crate) const MIX64_C2: u64 = 0x94d0_49bb_1331_11eb;

/// dgryski/go-rendezvous's mixer: `x ^= x >> 12; x ^= x << 25; x ^= x >> 27; x * 2685821657736338717`.
#[inline]
pub(crate) const fn xorshift_mult64(mut x: u64) -> u64 {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    x.wrapping_mul(XORSHIFT_MULT)
}

/// [`xorshift_mult64`]'s multiplier.
pub(crate) const XORSHIFT_MULT: u64 = 2685821657736338717;

/// The multiplier of jump hash's linear congruential step `key = key * JUMP_LCG + 1`.
pub(crate) const JUMP_LCG: u64 = 2862933555777941757;

/// One step of jump hash's generator (Lamping & Veach 2014).
#[inline(always)]
pub(crate) const fn jump_lcg(key: u64) -> u64 {
    key.wrapping_mul(JUMP_LCG).wrapping_add(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frozen_values() {
        // Values computed once; a change here changes routes.
        assert_eq!(mix64(0), 0);
        assert_eq!(mix64(1), 0x5692_161d_100b_05e5);
        assert_eq!(mix64(0xDEAD_BEEF), 0x4e06_2702_ec92_9eea);
        assert_eq!(xorshift_mult64(1), 0x47e4_ce4b_896c_dd1d);
        assert_eq!(jump_lcg(0), 1);
        assert_eq!(jump_lcg(1), JUMP_LCG + 1);
    }
}

//! MurmurHash3 (x64_128 and x86_32) on byte slices.
//!
//! Written here rather than called through the `murmur3` crate: that crate reads its input
//! through `std::io::Read` in 16- or 4-byte `read_exact` calls, whose per-call cost is most of
//! the time of a short key (`hash/murmur3-*` in the benchmarks compares the two). This is
//! Austin Appleby's reference algorithm over slices; the tests pin it to the crate bit for bit
//! on every length 0..=300 and to the vectors in `murmur3.csv`.

const C1_64: u64 = 0x87c3_7b91_1142_53d5;
const C2_64: u64 = 0x4cf5_ad43_2745_937f;

#[inline(always)]
fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

#[inline(always)]
fn mix_k1(k1: u64) -> u64 {
    k1.wrapping_mul(C1_64).rotate_left(31).wrapping_mul(C2_64)
}

#[inline(always)]
fn mix_k2(k2: u64) -> u64 {
    k2.wrapping_mul(C2_64).rotate_left(33).wrapping_mul(C1_64)
}

/// Up to 8 bytes read little-endian, missing high bytes zero. A byte loop rather than a
/// variable-length copy into a buffer, which compiles to a `memcpy` call.
#[inline(always)]
fn le_partial(bytes: &[u8]) -> u64 {
    debug_assert!(bytes.len() <= 8);
    bytes.iter().rev().fold(0, |v, &b| v << 8 | u64::from(b))
}

/// MurmurHash3 x64_128 of `key`: `(h1, h2)`, the low and high halves of the 128-bit value.
#[inline]
pub(crate) fn x64_128(key: &[u8], seed: u32) -> (u64, u64) {
    x64_128_with(key, seed, le_partial)
}

/// MurmurHash3 x64_128 with the tail (the up to 15 bytes after the last 16-byte block) read by
/// `tail_word`, 8 bytes at a time: [`le_partial`] for the reference algorithm, a sign-extending
/// reader for Cassandra's variant (`hash/cassandra.rs`). Generic so each caller gets its own
/// inlined copy of the one block loop.
#[inline(always)]
pub(crate) fn x64_128_with(key: &[u8], seed: u32, tail_word: impl Fn(&[u8]) -> u64) -> (u64, u64) {
    let mut h1 = u64::from(seed);
    let mut h2 = u64::from(seed);
    let mut blocks = key.chunks_exact(16);
    for b in &mut blocks {
        let k1 = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
        let k2 = u64::from_le_bytes(b[8..].try_into().expect("8 bytes"));
        h1 ^= mix_k1(k1);
        h1 = h1.rotate_left(27).wrapping_add(h2).wrapping_mul(5).wrapping_add(0x52dc_e729);
        h2 ^= mix_k2(k2);
        h2 = h2.rotate_left(31).wrapping_add(h1).wrapping_mul(5).wrapping_add(0x3849_5ab5);
    }
    let tail = blocks.remainder();
    if tail.len() > 8 {
        h2 ^= mix_k2(tail_word(&tail[8..]));
    }
    if !tail.is_empty() {
        h1 ^= mix_k1(tail_word(&tail[..tail.len().min(8)]));
    }
    let len = key.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    (h1, h2)
}

const C1_32: u32 = 0xcc9e_2d51;
const C2_32: u32 = 0x1b87_3593;

#[inline(always)]
fn mix_k32(k: u32) -> u32 {
    k.wrapping_mul(C1_32).rotate_left(15).wrapping_mul(C2_32)
}

/// MurmurHash3 x86_32 of `key`.
#[inline]
pub(crate) fn x86_32(key: &[u8], seed: u32) -> u32 {
    let mut h = seed;
    let mut blocks = key.chunks_exact(4);
    for b in &mut blocks {
        h ^= mix_k32(u32::from_le_bytes(b.try_into().expect("4 bytes")));
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        h ^= mix_k32(le_partial(tail) as u32);
    }
    h ^= key.len() as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn crate_x64_128(key: &[u8], seed: u32) -> (u64, u64) {
        let v = ::murmur3::murmur3_x64_128(&mut &key[..], seed).expect("slice read");
        (v as u64, (v >> 64) as u64)
    }

    fn crate_x86_32(key: &[u8], seed: u32) -> u32 {
        ::murmur3::murmur3_32(&mut &key[..], seed).expect("slice read")
    }

    #[test]
    fn every_length_matches_the_murmur3_crate() {
        let data: Vec<u8> = (0..320u32).map(|i| (i.wrapping_mul(0x9E37_79B9) >> 11) as u8).collect();
        for len in 0..=300 {
            for seed in [0, 1, 0x9747_b28c, u32::MAX] {
                let d = &data[3..3 + len];
                assert_eq!(x64_128(d, seed), crate_x64_128(d, seed), "x64_128 len {len} seed {seed}");
                assert_eq!(x86_32(d, seed), crate_x86_32(d, seed), "x86_32 len {len} seed {seed}");
            }
        }
    }

    #[test]
    fn adversarial_bytes_match_the_crate() {
        for fill in [0x00u8, 0xFF, 0x80] {
            for len in [1, 3, 4, 5, 8, 9, 15, 16, 17, 31, 32, 33, 250] {
                let d = vec![fill; len];
                assert_eq!(x64_128(&d, 7), crate_x64_128(&d, 7));
                assert_eq!(x86_32(&d, 7), crate_x86_32(&d, 7));
            }
        }
    }

    proptest! {
        #[test]
        fn random_inputs_match_the_crate(d in proptest::collection::vec(any::<u8>(), 0..300), seed in any::<u32>()) {
            prop_assert_eq!(x64_128(&d, seed), crate_x64_128(&d, seed));
            prop_assert_eq!(x86_32(&d, seed), crate_x86_32(&d, seed));
        }
    }
}

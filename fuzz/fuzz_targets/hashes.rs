//! The hash kernels and JumpBack's batch kernel against their references on
//! arbitrary keys: the multi-lane MD5 on every ISA path this CPU has = the scalar `md5_words` =
//! the md-5 crate; CRC16 and the Redis key slot = the crc crate over the tag rule; Murmur3 =
//! the murmur3 crate; `KeyHasher::hash_batch` = `hash` for every hasher; JumpBack's batch on
//! every path = its scalar function. Keys are copied into exact-size allocations so a load past
//! a key's end is an AddressSanitizer report.
#![no_main]

use arbitrary::Arbitrary;
use hashroute::internals::{
    crc16_xmodem, jumpback_bucket_batch_with, md5_batch_with, md5_words, murmur3_x64_128, murmur3_x86_32, Isa,
};
use hashroute::jumpback::JumpBackGenerator as Generator;
use libfuzzer_sys::fuzz_target;
use md5::{Digest, Md5};

const CRC_TABLE1: crc::Crc<u16> = crc::Crc::<u16>::new(&crc::CRC_16_XMODEM);

#[derive(Arbitrary, Debug)]
struct Input {
    keys: Vec<Vec<u8>>,
    seed: u32,
    buckets: u32,
    xorshift: bool,
}

/// The md-5 crate's digest as the four little-endian state words.
fn md5_reference(key: &[u8]) -> [u32; 4] {
    let d = Md5::digest(key);
    std::array::from_fn(|i| u32::from_le_bytes(d[4 * i..4 * i + 4].try_into().unwrap()))
}

/// Redis's tag rule, byte by byte.
fn hashed_part_bytewise(key: &[u8]) -> &[u8] {
    if let Some(open) = key.iter().position(|&b| b == b'{') {
        if let Some(len) = key[open + 1..].iter().position(|&b| b == b'}') {
            if len > 0 {
                return &key[open + 1..open + 1 + len];
            }
        }
    }
    key
}

fuzz_target!(|input: Input| {
    // Bounded so one input stays fast under ASan.
    let owned: Vec<Vec<u8>> = input.keys.iter().take(40).map(|k| k[..k.len().min(600)].to_vec()).collect();
    let keys: Vec<&[u8]> = owned.iter().map(|k| &k[..]).collect();
    let want: Vec<[u32; 4]> = keys.iter().map(|k| md5_reference(k)).collect();
    for (k, w) in keys.iter().zip(&want) {
        assert_eq!(md5_words(k), *w, "scalar md5, len {}", k.len());
    }
    for isa in Isa::ALL.into_iter().filter(|i| i.is_supported()) {
        let mut out = vec![[0u32; 4]; keys.len()];
        md5_batch_with(isa, &keys, &mut out);
        assert_eq!(out, want, "md5 batch on {}", isa.name());
    }
    for k in &keys {
        assert_eq!(crc16_xmodem(k), CRC_TABLE1.checksum(k));
        assert_eq!(hashroute::slots::hashed_part(k), hashed_part_bytewise(k));
        assert_eq!(hashroute::slots::key_slot(k), CRC_TABLE1.checksum(hashed_part_bytewise(k)) & 0x3FFF);
        let m = murmur3::murmur3_x64_128(&mut &k[..], input.seed).unwrap();
        assert_eq!(murmur3_x64_128(k, input.seed), (m as u64, (m >> 64) as u64));
        assert_eq!(murmur3_x86_32(k, input.seed), murmur3::murmur3_32(&mut &k[..], input.seed).unwrap());
    }
    let mut slots = vec![0u16; keys.len()];
    hashroute::slots::key_slot_batch(&keys, &mut slots);
    assert!(keys.iter().zip(&slots).all(|(k, &s)| s == hashroute::slots::key_slot(k)));
    for pick in 0..15u8 {
        let h = fuzz_common::hasher(pick, u64::from(input.seed));
        let mut out = vec![0u64; keys.len()];
        h.hash_batch(&keys, &mut out);
        for (k, &o) in keys.iter().zip(&out) {
            assert_eq!(o, h.hash(k), "{} batch", h.name());
        }
    }
    jumpback(&keys, input.buckets.max(1), if input.xorshift { Generator::XorshiftL7R9 } else { Generator::SplitMix64 });
});

/// JumpBack's batch on every path against its scalar function, over the keys' xxh3 hashes.
fn jumpback(keys: &[&[u8]], buckets: u32, generator: Generator) {
    let hashes: Vec<u64> = keys.iter().map(|k| hashroute::KeyHasher::default().hash(k)).collect();
    let want: Vec<u32> =
        hashes.iter().map(|&h| hashroute::jumpback::try_bucket_with(h, buckets, generator).unwrap()).collect();
    for isa in Isa::ALL.into_iter().filter(|i| i.is_supported()) {
        let mut out = vec![0u32; hashes.len()];
        jumpback_bucket_batch_with(isa, &hashes, buckets, generator, &mut out);
        assert_eq!(out, want, "jumpback batch on {}", isa.name());
    }
}

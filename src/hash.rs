//! Key hashers: bytes in, 64 bits out.
//!
//! Hashing is separate from searching: a router holds a [`KeyHasher`] and its kernels only ever see
//! the `u64` it produces. Every variant of [`KeyHasher`] is **stable**: the same bytes and seed give
//! the same value on every run, machine, CPU and crate version, which golden tests freeze.
//!
//! | hasher | cost (16-byte key, ≈) | use |
//! |---|---|---|
//! | [`KeyHasher::Xxh3`] (default) | a few ns | everything new |
//! | [`KeyHasher::Xxh64`] | a few ns | compatibility (Maglev/Envoy, go-rendezvous) |
//! | [`KeyHasher::Murmur3X64`] | tens of ns | compatibility with Murmur3-based clients (h1 of x64_128) |
//! | [`KeyHasher::Murmur3X86_32`] | tens of ns | compatibility (Guava, many Java clients) |
//! | [`KeyHasher::Md5`] | ~100 ns | Ketama (first 8 bytes, little-endian) |
//! | [`KeyHasher::Crc16`] | tens of ns | Redis Cluster slots (16 bits only) |
//!
//! No process-randomized hasher exists here: a route must never depend on the process.

use md5::{Digest, Md5};

/// The stable hashers a router can be configured with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KeyHasher {
    /// XXH3-64 with a seed (seed 0 is XXH3's default secret). The default.
    Xxh3 {
        /// The seed.
        seed: u64,
    },
    /// XXH64 with a seed.
    Xxh64 {
        /// The seed.
        seed: u64,
    },
    /// MurmurHash3 x64_128, first 64 bits (`h1`).
    Murmur3X64 {
        /// The seed.
        seed: u32,
    },
    /// MurmurHash3 x86_32, zero-extended to 64 bits.
    Murmur3X86_32 {
        /// The seed.
        seed: u32,
    },
    /// MD5, first 8 digest bytes read little-endian (Ketama reads the first 4 of them).
    Md5,
    /// CRC16-XMODEM (Redis Cluster's key hash), zero-extended to 64 bits.
    Crc16,
}

impl Default for KeyHasher {
    fn default() -> KeyHasher {
        KeyHasher::Xxh3 { seed: 0 }
    }
}

impl KeyHasher {
    /// The hasher's short name, as the CLI spells it (`xxh3`, `xxh64`, `murmur3`, `murmur3-32`,
    /// `md5`, `crc16`).
    pub fn name(&self) -> &'static str {
        match self {
            KeyHasher::Xxh3 { .. } => "xxh3",
            KeyHasher::Xxh64 { .. } => "xxh64",
            KeyHasher::Murmur3X64 { .. } => "murmur3",
            KeyHasher::Murmur3X86_32 { .. } => "murmur3-32",
            KeyHasher::Md5 => "md5",
            KeyHasher::Crc16 => "crc16",
        }
    }

    /// The hasher named `name` (as in [`KeyHasher::name`]) with `seed`.
    ///
    /// # Errors
    /// [`crate::Error::InvalidParameter`] for an unknown name, or a seed that does not fit the
    /// hasher (Murmur3 takes 32-bit seeds; MD5 and CRC16 take none, so only 0 is accepted).
    pub fn from_name(name: &str, seed: u64) -> crate::Result<KeyHasher> {
        let seed32 = || {
            u32::try_from(seed).map_err(|_| crate::Error::InvalidParameter {
                name: "seed",
                reason: format!("{seed} does not fit in 32 bits, which {name} requires"),
            })
        };
        let unseeded = |h: KeyHasher| {
            if seed == 0 {
                Ok(h)
            } else {
                Err(crate::Error::InvalidParameter {
                    name: "seed",
                    reason: format!("{name} takes no seed (got {seed})"),
                })
            }
        };
        match name {
            "xxh3" => Ok(KeyHasher::Xxh3 { seed }),
            "xxh64" => Ok(KeyHasher::Xxh64 { seed }),
            "murmur3" => Ok(KeyHasher::Murmur3X64 { seed: seed32()? }),
            "murmur3-32" => Ok(KeyHasher::Murmur3X86_32 { seed: seed32()? }),
            "md5" => unseeded(KeyHasher::Md5),
            "crc16" => unseeded(KeyHasher::Crc16),
            other => Err(crate::Error::InvalidParameter {
                name: "hash",
                reason: format!("unknown hasher {other:?} (expected xxh3, xxh64, murmur3, murmur3-32, md5 or crc16)"),
            }),
        }
    }
}

impl KeyHasher {
    /// The 64-bit hash of `key`: a pure function of the key bytes and the variant (with its
    /// seed), the same on every run, machine, CPU and crate version.
    #[inline]
    pub fn hash(&self, key: &[u8]) -> u64 {
        match *self {
            KeyHasher::Xxh3 { seed: 0 } => xxhash_rust::xxh3::xxh3_64(key),
            KeyHasher::Xxh3 { seed } => xxhash_rust::xxh3::xxh3_64_with_seed(key, seed),
            KeyHasher::Xxh64 { seed } => xxhash_rust::xxh64::xxh64(key, seed),
            KeyHasher::Murmur3X64 { seed } => murmur3_x64_h1(key, seed),
            KeyHasher::Murmur3X86_32 { seed } => u64::from(murmur3_x86_32(key, seed)),
            KeyHasher::Md5 => {
                let d = md5_digest(key);
                u64::from_le_bytes(d[..8].try_into().expect("16-byte digest"))
            }
            KeyHasher::Crc16 => u64::from(crc16_xmodem(key)),
        }
    }
}

/// MurmurHash3 x64_128 of `key`, returned as `(h1, h2)`.
pub fn murmur3_x64_128(key: &[u8], seed: u32) -> (u64, u64) {
    let mut reader = key;
    // Reading from a byte slice cannot fail.
    let v = murmur3::murmur3_x64_128(&mut reader, seed).expect("reading a slice cannot fail");
    (v as u64, (v >> 64) as u64)
}

fn murmur3_x64_h1(key: &[u8], seed: u32) -> u64 {
    murmur3_x64_128(key, seed).0
}

/// MurmurHash3 x86_32 of `key`.
pub fn murmur3_x86_32(key: &[u8], seed: u32) -> u32 {
    let mut reader = key;
    murmur3::murmur3_32(&mut reader, seed).expect("reading a slice cannot fail")
}

/// The MD5 digest of `key`.
pub fn md5_digest(key: &[u8]) -> [u8; 16] {
    Md5::digest(key).into()
}

const CRC16_XMODEM: crc::Crc<u16> = crc::Crc::<u16>::new(&crc::CRC_16_XMODEM);

/// CRC16-XMODEM (poly 0x1021, init 0, no reflection, no xorout): Redis Cluster's key hash.
/// `crc16_xmodem(b"123456789") == 0x31C3`.
pub fn crc16_xmodem(key: &[u8]) -> u16 {
    CRC16_XMODEM.checksum(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        assert_eq!(crc16_xmodem(b"123456789"), 0x31C3);
        assert_eq!(KeyHasher::Xxh64 { seed: 0 }.hash(b""), 0xEF46DB3751D8E999);
        assert_eq!(KeyHasher::Xxh3 { seed: 0 }.hash(b""), 0x2D06800538D394C2);
        assert_eq!(KeyHasher::Murmur3X86_32 { seed: 1 }.hash(b""), 0x514E28B7);
        assert_eq!(murmur3_x64_128(b"", 1), (0x4610ABE56EFF5CB5, 0x51622DAA78F83583));
    }

    #[test]
    fn names_round_trip() {
        for h in [
            KeyHasher::Xxh3 { seed: 7 },
            KeyHasher::Xxh64 { seed: 7 },
            KeyHasher::Murmur3X64 { seed: 7 },
            KeyHasher::Murmur3X86_32 { seed: 7 },
        ] {
            assert_eq!(KeyHasher::from_name(h.name(), 7).unwrap(), h);
        }
        assert!(KeyHasher::from_name("md5", 1).is_err());
        assert!(KeyHasher::from_name("murmur3", 1 << 40).is_err());
        assert!(KeyHasher::from_name("sha1", 0).is_err());
    }
}

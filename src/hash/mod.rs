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
//! | [`KeyHasher::Murmur3X64`] | a few ns | compatibility with Murmur3-based clients (h1 of x64_128) |
//! | [`KeyHasher::Murmur3X86_32`] | a few ns | compatibility (Guava, many Java clients) |
//! | [`KeyHasher::Md5`] | ~100 ns | Ketama (first 8 bytes, little-endian) |
//! | [`KeyHasher::Crc16`] | a few ns (slicing-by-16) | Redis Cluster slots (16 bits only) |
//! | [`KeyHasher::Xxh32`] | a few ns | compatibility (commons-codec / BinomialHash, 32 bits) |
//! | [`KeyHasher::Crc32`] | tens of ns | nginx `hash ... consistent` (32 bits) |
//! | [`KeyHasher::Sdbm`] | ~1 ns/byte | HAProxy `hash-type ... sdbm` (32 bits) |
//! | [`KeyHasher::SdbmAvalanche`] | ~1 ns/byte | HAProxy `hash-type consistent` default (32 bits) |
//! | [`KeyHasher::Murmur2Kafka`] | a few ns | Kafka's keyed partitioner (32 bits) |
//! | [`KeyHasher::Murmur64aEnvoy`] | a few ns | Envoy ring hash `MURMUR_HASH_2` |
//! | [`KeyHasher::Oaat`] | ~1 ns/byte | libmemcached's default one-at-a-time (32 bits) |
//! | [`KeyHasher::Fnv1a32`] | ~1 ns/byte | twemproxy `hash: fnv1a_64` (32 bits) |
//! | [`KeyHasher::CassandraMurmur3`] | a few ns | Cassandra's `Murmur3Partitioner` token, as a circle position |
//!
//! The 32-bit hashers are zero-extended: their `u64` has the upper 32 bits clear.
//!
//! [`KeyHasher::hash_batch`] hashes many keys at once; every router's `route_batch` goes through
//! it, so a router configured with MD5 gets the multi-lane kernel without asking.
//!
//! No process-randomized hasher exists here: a route must never depend on the process.

pub(crate) mod cassandra;
mod crc16;
mod murmur3;

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
    /// XXH32 with a seed, zero-extended to 64 bits. Apache commons-codec's `XXHash32` (and with
    /// it the BinomialHash reference engine) hashes keys with XXH32 seed 0. A few ns per key;
    /// slower than XXH3 on long keys.
    Xxh32 {
        /// The seed.
        seed: u32,
    },
    /// zlib CRC-32 (`CRC_32_ISO_HDLC`: reflected poly 0x04C11DB7, init and xorout 0xFFFFFFFF),
    /// zero-extended to 64 bits: nginx's `hash $key consistent` key hash. `"123456789"` gives
    /// 0xCBF43926. Table-driven, tens of ns for a short key.
    Crc32,
    /// HAProxy's sdbm (`h = c + (h << 6) + (h << 16) - h` over unsigned bytes, u32 wrapping),
    /// zero-extended to 64 bits: `hash-type consistent sdbm` (no avalanche). One multiply-free
    /// step per byte; poorly mixed, so use it only for HAProxy compatibility.
    Sdbm,
    /// HAProxy's sdbm followed by its avalanche `full_hash` (Bob Jenkins' 6-shift integer hash,
    /// then `* 3221225473`, u32 wrapping), zero-extended to 64 bits: what `hash-type consistent`
    /// uses when no function is named (and `sdbm avalanche`). sdbm's cost plus a few ns.
    SdbmAvalanche,
    /// Kafka's `Utils.murmur2`: 32-bit MurmurHash2, seed 0x9747b28c, unsigned bytes, as Java
    /// computes it (the empty key is hashed too), zero-extended to 64 bits (the unsigned value
    /// of Java's int). The keyed partition is `(h & 0x7fffffff) % partitions`. A few ns.
    Murmur2Kafka,
    /// The 64-bit MurmurHash2 of libstdc++'s `std::_Hash_bytes` with seed 0xc70f6907: Envoy's
    /// ring hash with `hash_function: MURMUR_HASH_2` (not Murmur3, not the 32-bit MurmurHash2).
    /// A few ns per key.
    Murmur64aEnvoy,
    /// Bob Jenkins' one-at-a-time hash over *signed* chars (each byte sign-extended to 32 bits
    /// before it is added), zero-extended to 64 bits: libmemcached's default key hash
    /// (`hashkit_one_at_a_time`, used by `MEMCACHED_BEHAVIOR_KETAMA` without weighting). Three
    /// shifts per byte.
    Oaat,
    /// twemproxy's `hash: fnv1a_64`, which is really a 32-bit FNV-1a with init 0x84222325 and
    /// prime 0x1b3, each byte XOR-ed in as a sign-extended char; zero-extended to 64 bits. One
    /// multiply per byte. Not the standard FNV-1a-32 (different init and prime).
    Fnv1a32,
    /// Cassandra's `Murmur3Partitioner` token ([`cassandra::murmur3_token`]: h1 of MurmurHash3
    /// x64_128 seed 0, tail bytes sign-extended, `i64::MIN` mapped to `i64::MAX`) as an
    /// order-preserving unsigned position, `token as u64 ^ (1 << 63)`
    /// ([`cassandra::token_to_position`]): signed token order is unsigned position order, so a
    /// circle over positions routes as Cassandra's ring over tokens. The key hash of
    /// [`TokenRing`](crate::TokenRing). A few ns per key. No seed.
    CassandraMurmur3,
}

impl Default for KeyHasher {
    fn default() -> KeyHasher {
        KeyHasher::Xxh3 { seed: 0 }
    }
}

impl KeyHasher {
    /// Every hasher (seeded ones with seed 0), in the order lists of hashers show them: the one
    /// table of hasher names with [`KeyHasher::name`].
    pub const ALL: [KeyHasher; 15] = [
        KeyHasher::Xxh3 { seed: 0 },
        KeyHasher::Xxh64 { seed: 0 },
        KeyHasher::Murmur3X64 { seed: 0 },
        KeyHasher::Murmur3X86_32 { seed: 0 },
        KeyHasher::Md5,
        KeyHasher::Crc16,
        KeyHasher::Xxh32 { seed: 0 },
        KeyHasher::Crc32,
        KeyHasher::Sdbm,
        KeyHasher::SdbmAvalanche,
        KeyHasher::Murmur2Kafka,
        KeyHasher::Murmur64aEnvoy,
        KeyHasher::Oaat,
        KeyHasher::Fnv1a32,
        KeyHasher::CassandraMurmur3,
    ];

    /// The hasher's short name, as the CLI and configurations spell it.
    pub fn name(&self) -> &'static str {
        match self {
            KeyHasher::Xxh3 { .. } => "xxh3",
            KeyHasher::Xxh64 { .. } => "xxh64",
            KeyHasher::Murmur3X64 { .. } => "murmur3",
            KeyHasher::Murmur3X86_32 { .. } => "murmur3-32",
            KeyHasher::Md5 => "md5",
            KeyHasher::Crc16 => "crc16",
            KeyHasher::Xxh32 { .. } => "xxh32",
            KeyHasher::Crc32 => "crc32",
            KeyHasher::Sdbm => "sdbm",
            KeyHasher::SdbmAvalanche => "sdbm-avalanche",
            KeyHasher::Murmur2Kafka => "murmur2-kafka",
            KeyHasher::Murmur64aEnvoy => "murmur64a-envoy",
            KeyHasher::Oaat => "oaat",
            KeyHasher::Fnv1a32 => "fnv1a-32",
            KeyHasher::CassandraMurmur3 => "cassandra-murmur3",
        }
    }

    /// The seed of a seeded hasher (widened to 64 bits), `None` for the unseeded ones.
    pub(crate) fn seed(&self) -> Option<u64> {
        match *self {
            KeyHasher::Xxh3 { seed } | KeyHasher::Xxh64 { seed } => Some(seed),
            KeyHasher::Murmur3X64 { seed } | KeyHasher::Murmur3X86_32 { seed } | KeyHasher::Xxh32 { seed } => {
                Some(u64::from(seed))
            }
            KeyHasher::Md5
            | KeyHasher::Crc16
            | KeyHasher::Crc32
            | KeyHasher::Sdbm
            | KeyHasher::SdbmAvalanche
            | KeyHasher::Murmur2Kafka
            | KeyHasher::Murmur64aEnvoy
            | KeyHasher::Oaat
            | KeyHasher::Fnv1a32
            | KeyHasher::CassandraMurmur3 => None,
        }
    }

    /// The hasher named `name` (as in [`KeyHasher::name`]) with `seed`.
    ///
    /// # Errors
    /// [`crate::Error::InvalidParameter`] for an unknown name (naming every hasher of
    /// [`KeyHasher::ALL`]), or a seed that does not fit the hasher (Murmur3 and XXH32 take
    /// 32-bit seeds; the others take none, so only 0 is accepted).
    pub fn from_name(name: &str, seed: u64) -> crate::Result<KeyHasher> {
        let Some(&unseeded) = KeyHasher::ALL.iter().find(|h| h.name() == name) else {
            let names = crate::algorithm::names_list(KeyHasher::ALL.iter().map(KeyHasher::name));
            return Err(crate::Error::InvalidParameter {
                name: "hash",
                reason: format!("unknown hasher {name:?} (expected {names})"),
            });
        };
        let seed32 = || {
            u32::try_from(seed).map_err(|_| crate::Error::InvalidParameter {
                name: "seed",
                reason: format!("{seed} does not fit in 32 bits, which {name} requires"),
            })
        };
        match unseeded {
            KeyHasher::Xxh3 { .. } => Ok(KeyHasher::Xxh3 { seed }),
            KeyHasher::Xxh64 { .. } => Ok(KeyHasher::Xxh64 { seed }),
            KeyHasher::Murmur3X64 { .. } => Ok(KeyHasher::Murmur3X64 { seed: seed32()? }),
            KeyHasher::Murmur3X86_32 { .. } => Ok(KeyHasher::Murmur3X86_32 { seed: seed32()? }),
            KeyHasher::Xxh32 { .. } => Ok(KeyHasher::Xxh32 { seed: seed32()? }),
            _ if seed == 0 => Ok(unseeded),
            _ => Err(crate::Error::InvalidParameter {
                name: "seed",
                reason: format!("{name} takes no seed (got {seed})"),
            }),
        }
    }
}

impl KeyHasher {
    /// The 64-bit hash of `key`: a pure function of the key bytes and the variant (with its
    /// seed), the same on every run, machine, CPU and crate version.
    #[inline]
    pub fn hash(&self, key: &[u8]) -> u64 {
        // The default hasher inline in every router's `route`; the others through one call.
        if let KeyHasher::Xxh3 { seed: 0 } = *self {
            return xxhash_rust::xxh3::xxh3_64(key);
        }
        self.hash_other(key)
    }

    /// [`KeyHasher::hash`] for every hasher but xxh3 with seed 0.
    fn hash_other(&self, key: &[u8]) -> u64 {
        match *self {
            KeyHasher::Xxh3 { seed: 0 } => xxhash_rust::xxh3::xxh3_64(key),
            KeyHasher::Xxh3 { seed } => xxhash_rust::xxh3::xxh3_64_with_seed(key, seed),
            KeyHasher::Xxh64 { seed } => xxhash_rust::xxh64::xxh64(key, seed),
            KeyHasher::Murmur3X64 { seed } => murmur3_x64_h1(key, seed),
            KeyHasher::Murmur3X86_32 { seed } => u64::from(murmur3_x86_32(key, seed)),
            KeyHasher::Md5 => {
                let w = md5_words(key);
                u64::from(w[0]) | u64::from(w[1]) << 32
            }
            KeyHasher::Crc16 => u64::from(crc16_xmodem(key)),
            KeyHasher::Xxh32 { seed } => u64::from(xxhash_rust::xxh32::xxh32(key, seed)),
            KeyHasher::Crc32 => u64::from(crc32(key)),
            KeyHasher::Sdbm => u64::from(sdbm(key)),
            KeyHasher::SdbmAvalanche => u64::from(haproxy_full_hash(sdbm(key))),
            KeyHasher::Murmur2Kafka => u64::from(murmur2_kafka(key)),
            KeyHasher::Murmur64aEnvoy => murmur64a_envoy(key),
            KeyHasher::Oaat => u64::from(one_at_a_time_signed(key)),
            KeyHasher::Fnv1a32 => u64::from(fnv1a_32_twemproxy(key)),
            KeyHasher::CassandraMurmur3 => cassandra::position(key),
        }
    }
}

impl KeyHasher {
    /// Hashes every key of `keys` into the same position of `out`: `out[i] == self.hash(keys[i])`,
    /// bit for bit. This is the entry point every router's `route_batch` hashes through.
    ///
    /// The variant is dispatched once per batch rather than once per key, and MD5 hashes many
    /// keys at once with the multi-lane kernel of the CPU's widest instruction set (8 lanes with
    /// AVX2, 16 with AVX-512, the scalar twin otherwise), so a batch of short keys costs a
    /// fraction of hashing them one by one. No allocation.
    ///
    /// # Panics
    /// If `keys.len() != out.len()`.
    pub fn hash_batch(&self, keys: &[&[u8]], out: &mut [u64]) {
        assert_eq!(keys.len(), out.len(), "hash_batch: keys and out must have the same length");
        /// One loop per variant: the match is outside, the hash inlines into the loop body.
        fn each(keys: &[&[u8]], out: &mut [u64], hash: impl Fn(&[u8]) -> u64) {
            for (o, k) in out.iter_mut().zip(keys) {
                *o = hash(k);
            }
        }
        match *self {
            KeyHasher::Xxh3 { seed: 0 } => each(keys, out, xxhash_rust::xxh3::xxh3_64),
            KeyHasher::Xxh3 { seed } => each(keys, out, |k| xxhash_rust::xxh3::xxh3_64_with_seed(k, seed)),
            KeyHasher::Xxh64 { seed } => each(keys, out, |k| xxhash_rust::xxh64::xxh64(k, seed)),
            KeyHasher::Murmur3X64 { seed } => each(keys, out, |k| murmur3_x64_h1(k, seed)),
            KeyHasher::CassandraMurmur3 => each(keys, out, cassandra::position),
            KeyHasher::Md5 => md5_batch_u64(keys, out),
            KeyHasher::Crc16 => each(keys, out, |k| u64::from(crc16::crc16_xmodem(k))),
            other => each(keys, out, |k| other.hash(k)),
        }
    }
}

/// MD5 of many keys, the first 8 digest bytes of each read little-endian (what
/// [`KeyHasher::Md5`] returns).
fn md5_batch_u64(keys: &[&[u8]], out: &mut [u64]) {
    const CHUNK: usize = 64;
    let mut words = [[0u32; 4]; CHUNK];
    for (ks, os) in keys.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
        md5_words_batch(ks, &mut words[..ks.len()]);
        for (o, w) in os.iter_mut().zip(&words) {
            *o = u64::from(w[0]) | u64::from(w[1]) << 32;
        }
    }
}

/// The MD5 state words (A, B, C, D) of each key: the digest is their little-endian bytes. The
/// multi-lane kernel of the CPU's widest instruction set (see [`crate::arch`]).
#[inline]
pub(crate) fn md5_words_batch(keys: &[&[u8]], out: &mut [[u32; 4]]) {
    crate::arch::Kernels::active().md5_batch(keys, out);
}

/// The MD5 state words of one key: the crate's scalar MD5 (a one-block fast path for keys of
/// up to 55 bytes), bit-identical with the md-5 crate.
#[inline]
pub(crate) fn md5_words(key: &[u8]) -> [u32; 4] {
    crate::arch::generic::md5_words(key)
}

/// MurmurHash3 x64_128 of `key`, returned as `(h1, h2)`.
pub fn murmur3_x64_128(key: &[u8], seed: u32) -> (u64, u64) {
    murmur3::x64_128(key, seed)
}

#[inline]
fn murmur3_x64_h1(key: &[u8], seed: u32) -> u64 {
    murmur3::x64_128(key, seed).0
}

/// MurmurHash3 x86_32 of `key`.
pub fn murmur3_x86_32(key: &[u8], seed: u32) -> u32 {
    murmur3::x86_32(key, seed)
}

/// The MD5 digest of `key` (the crate's own scalar MD5, bit-identical with the md-5 crate).
pub fn md5_digest(key: &[u8]) -> [u8; 16] {
    let w = md5_words(key);
    let mut d = [0u8; 16];
    for (chunk, word) in d.chunks_exact_mut(4).zip(w) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    d
}

/// CRC16-XMODEM (poly 0x1021, init 0, no reflection, no xorout): Redis Cluster's key hash.
/// `crc16_xmodem(b"123456789") == 0x31C3`. Slicing-by-16: one table step per 16 bytes.
#[inline]
pub fn crc16_xmodem(key: &[u8]) -> u16 {
    crc16::crc16_xmodem(key)
}

const CRC32_ZLIB: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC);

/// zlib CRC-32 (nginx's `ngx_crc32_long`). `crc32(b"123456789") == 0xCBF43926`.
fn crc32(key: &[u8]) -> u32 {
    CRC32_ZLIB.checksum(key)
}

/// HAProxy's `hash_sdbm`: unsigned bytes, u32 wrapping.
fn sdbm(key: &[u8]) -> u32 {
    key.iter().fold(0u32, |h, &c| u32::from(c).wrapping_add(h << 6).wrapping_add(h << 16).wrapping_sub(h))
}

/// HAProxy's `full_hash` (avalanche): Bob Jenkins' 6-shift integer hash, then `* 3221225473`.
pub(crate) fn haproxy_full_hash(mut a: u32) -> u32 {
    a = a.wrapping_add(0x7ed5_5d16).wrapping_add(a << 12);
    a = (a ^ 0xc761_c23c) ^ (a >> 19);
    a = a.wrapping_add(0x1656_67b1).wrapping_add(a << 5);
    a = a.wrapping_add(0xd3a2_646c) ^ (a << 9);
    a = a.wrapping_add(0xfd70_46c5).wrapping_add(a << 3);
    a = (a ^ 0xb55a_4f09) ^ (a >> 16);
    a.wrapping_mul(3_221_225_473)
}

/// Kafka's `Utils.murmur2`: 32-bit MurmurHash2, seed 0x9747b28c, unsigned bytes.
fn murmur2_kafka(key: &[u8]) -> u32 {
    const M: u32 = 0x5bd1_e995;
    let mut h: u32 = 0x9747_b28c ^ key.len() as u32;
    let mut blocks = key.chunks_exact(4);
    for b in &mut blocks {
        let mut k = u32::from_le_bytes(b.try_into().expect("4-byte block"));
        k = k.wrapping_mul(M);
        k ^= k >> 24;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M) ^ k;
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate().rev() {
            h ^= u32::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^ (h >> 15)
}

/// libstdc++ `std::_Hash_bytes` (64-bit MurmurHash2) with Envoy's seed 0xc70f6907.
fn murmur64a_envoy(key: &[u8]) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    let shift_mix = |v: u64| v ^ (v >> 47);
    let mut h: u64 = 0xc70f_6907 ^ (key.len() as u64).wrapping_mul(M);
    let mut blocks = key.chunks_exact(8);
    for b in &mut blocks {
        let d = u64::from_le_bytes(b.try_into().expect("8-byte block"));
        let d = shift_mix(d.wrapping_mul(M)).wrapping_mul(M);
        h = (h ^ d).wrapping_mul(M);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let d = tail.iter().rev().fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
        h = (h ^ d).wrapping_mul(M);
    }
    shift_mix(shift_mix(h).wrapping_mul(M))
}

/// libmemcached's `hashkit_one_at_a_time`: Jenkins one-at-a-time over signed chars.
fn one_at_a_time_signed(key: &[u8]) -> u32 {
    let mut v = key.iter().fold(0u32, |mut v, &b| {
        v = v.wrapping_add(b as i8 as i32 as u32);
        v = v.wrapping_add(v << 10);
        v ^ (v >> 6)
    });
    v = v.wrapping_add(v << 3);
    v ^= v >> 11;
    v.wrapping_add(v << 15)
}

/// twemproxy's `hash_fnv1a_64`: 32-bit FNV-1a, init 0x84222325, prime 0x1b3, sign-extended chars.
fn fnv1a_32_twemproxy(key: &[u8]) -> u32 {
    key.iter().fold(0x8422_2325u32, |h, &b| (h ^ (b as i8 as i32 as u32)).wrapping_mul(0x1b3))
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
            KeyHasher::Xxh32 { seed: 7 },
        ] {
            assert_eq!(KeyHasher::from_name(h.name(), 7).unwrap(), h);
        }
        assert!(KeyHasher::from_name("md5", 1).is_err());
        assert!(KeyHasher::from_name("murmur3", 1 << 40).is_err());
        assert!(KeyHasher::from_name("xxh32", 1 << 32).is_err());
        assert!(KeyHasher::from_name("sha1", 0).is_err());
        for h in UNSEEDED_NEW {
            assert_eq!(KeyHasher::from_name(h.name(), 0).unwrap(), h);
            assert!(KeyHasher::from_name(h.name(), 1).is_err(), "{h:?} takes no seed");
        }
        let err = KeyHasher::from_name("nope", 0).unwrap_err().to_string();
        for h in UNSEEDED_NEW {
            assert!(err.contains(h.name()), "{err} lists {}", h.name());
        }
        assert!(err.contains("xxh32"));
    }

    impl KeyHasher {
        /// Whether the hasher's values are 32 bits wide (zero-extended).
        fn is_32_bit(self) -> bool {
            !matches!(self, KeyHasher::Murmur64aEnvoy | KeyHasher::CassandraMurmur3)
        }
    }

    const UNSEEDED_NEW: [KeyHasher; 8] = [
        KeyHasher::CassandraMurmur3,
        KeyHasher::Crc32,
        KeyHasher::Sdbm,
        KeyHasher::SdbmAvalanche,
        KeyHasher::Murmur2Kafka,
        KeyHasher::Murmur64aEnvoy,
        KeyHasher::Oaat,
        KeyHasher::Fnv1a32,
    ];

    /// Inputs for the independent reference implementations: lengths 0..=20 of a byte pattern
    /// that includes bytes >= 0x80 (sign extension), a 1 KB input, and a few strings.
    fn inputs() -> Vec<Vec<u8>> {
        let pattern: Vec<u8> = (0..1024u32).map(|i| (i.wrapping_mul(151).wrapping_add(7) % 256) as u8).collect();
        let mut out: Vec<Vec<u8>> = (0..=20).map(|n| pattern[..n].to_vec()).collect();
        out.push(pattern.clone());
        for s in ["", "a", "foo", "key-0", "/index.html", "\u{e9}", "\u{65e5}\u{672c}"] {
            out.push(s.as_bytes().to_vec());
        }
        out.extend([vec![0x80], vec![0xff], vec![0xff; 9], vec![0x7f, 0x80, 0x81]]);
        out
    }

    /// Every hasher, with a seed where it takes one.
    fn every_hasher() -> Vec<KeyHasher> {
        let names = [
            "xxh3",
            "xxh64",
            "murmur3",
            "murmur3-32",
            "md5",
            "crc16",
            "xxh32",
            "crc32",
            "sdbm",
            "sdbm-avalanche",
            "murmur2-kafka",
            "murmur64a-envoy",
            "oaat",
            "fnv1a-32",
            "cassandra-murmur3",
        ];
        let mut out: Vec<KeyHasher> = names.iter().map(|n| KeyHasher::from_name(n, 0).unwrap()).collect();
        out.extend([
            KeyHasher::Xxh3 { seed: 7 },
            KeyHasher::Xxh64 { seed: 7 },
            KeyHasher::Murmur3X64 { seed: 7 },
            KeyHasher::Murmur3X86_32 { seed: 7 },
            KeyHasher::Xxh32 { seed: 7 },
        ]);
        out
    }

    #[test]
    fn hash_batch_equals_hash_for_every_hasher_and_length() {
        let pattern: Vec<u8> = (0..400u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u8).collect();
        // Every length 0..=300, interleaved so one batch mixes short and long keys.
        let keys: Vec<&[u8]> = (0..=300).map(|n| &pattern[(n * 7) % 50..(n * 7) % 50 + n]).collect();
        for h in every_hasher() {
            for batch in [0, 1, 7, 64, 65, keys.len()] {
                let ks = &keys[..batch];
                let mut out = vec![0u64; batch];
                h.hash_batch(ks, &mut out);
                for (k, &o) in ks.iter().zip(&out) {
                    assert_eq!(o, h.hash(k), "{} len {}", h.name(), k.len());
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn hash_batch_equals_hash_on_random_batches(
            keys in proptest::collection::vec(proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300), 0..70),
            which in 0usize..20,
        ) {
            let h = every_hasher()[which];
            let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
            let mut out = vec![0u64; refs.len()];
            h.hash_batch(&refs, &mut out);
            for (k, &o) in refs.iter().zip(&out) {
                proptest::prop_assert_eq!(o, h.hash(k));
            }
        }
    }

    #[test]
    #[should_panic(expected = "same length")]
    fn hash_batch_rejects_mismatched_lengths() {
        KeyHasher::default().hash_batch(&[b"a"], &mut []);
    }

    #[test]
    fn zero_extended() {
        for h in UNSEEDED_NEW.into_iter().filter(|h| h.is_32_bit()).chain([KeyHasher::Xxh32 { seed: 9 }]) {
            for key in inputs() {
                assert_eq!(h.hash(&key) >> 32, 0, "{h:?} {key:?}");
            }
        }
    }

    #[test]
    fn crc32_reference() {
        // The CRC catalogue's check value for CRC-32/ISO-HDLC (zlib).
        assert_eq!(KeyHasher::Crc32.hash(b"123456789"), 0xCBF4_3926);
        assert_eq!(KeyHasher::Crc32.hash(b""), 0);
        // zlib crc32("a") and crc32("The quick brown fox jumps over the lazy dog").
        assert_eq!(KeyHasher::Crc32.hash(b"a"), 0xE8B7_BE43);
        assert_eq!(KeyHasher::Crc32.hash(b"The quick brown fox jumps over the lazy dog"), 0x414F_A339);
    }

    #[test]
    fn sdbm_reference() {
        // Straight from the definition: h = c + (h << 6) + (h << 16) - h, unsigned bytes, u32.
        fn reference(key: &[u8]) -> u32 {
            let mut h: u64 = 0;
            for &c in key {
                h = (u64::from(c) + (h << 6) + (h << 16)).wrapping_sub(h) & 0xffff_ffff;
            }
            h as u32
        }
        for key in inputs() {
            assert_eq!(KeyHasher::Sdbm.hash(&key), u64::from(reference(&key)), "{key:?}");
        }
        // By hand: "a" = 97; "ab" = 98 + 97 * 65599 = 6363201; 0xff is 255, not -1.
        assert_eq!(KeyHasher::Sdbm.hash(b"a"), 97);
        assert_eq!(KeyHasher::Sdbm.hash(b"ab"), 98 + 97 * 65599);
        assert_eq!(KeyHasher::Sdbm.hash(&[0xff]), 255);
        assert_eq!(KeyHasher::Sdbm.hash(b""), 0);
    }

    #[test]
    fn sdbm_avalanche_reference() {
        // HAProxy's full_hash, written with u64 arithmetic masked to 32 bits.
        fn full_hash(a: u32) -> u32 {
            const MASK: u64 = 0xffff_ffff;
            let mut a = u64::from(a);
            a = ((a + 0x7ed55d16) + (a << 12)) & MASK;
            a = ((a ^ 0xc761c23c) ^ (a >> 19)) & MASK;
            a = ((a + 0x165667b1) + (a << 5)) & MASK;
            a = ((a + 0xd3a2646c) ^ (a << 9)) & MASK;
            a = ((a + 0xfd7046c5) + (a << 3)) & MASK;
            a = ((a ^ 0xb55a4f09) ^ (a >> 16)) & MASK;
            ((a * 3221225473) & MASK) as u32
        }
        for key in inputs() {
            let want = full_hash(sdbm(&key));
            assert_eq!(KeyHasher::SdbmAvalanche.hash(&key), u64::from(want), "{key:?}");
        }
        assert_eq!(haproxy_full_hash(0), full_hash(0));
        assert_eq!(haproxy_full_hash(u32::MAX), full_hash(u32::MAX));
    }

    #[test]
    fn murmur64a_envoy_reference() {
        // Envoy's own checks (test/common/common/hash_test.cc), quoted in the vectors README.
        assert_eq!(KeyHasher::Murmur64aEnvoy.hash(b"foo"), 9631199822919835226);
        assert_eq!(KeyHasher::Murmur64aEnvoy.hash(b""), 6142509188972423790);
        // The README's step list, written out with u128 arithmetic reduced mod 2^64.
        fn reference(key: &[u8]) -> u64 {
            let m: u128 = 0xc6a4a7935bd1e995;
            let w = |v: u128| v % (1u128 << 64);
            let shift_mix = |v: u128| v ^ (v >> 47);
            let mut h = w(0xc70f6907 ^ w(key.len() as u128 * m));
            let full = key.len() / 8 * 8;
            for i in (0..full).step_by(8) {
                let mut d: u128 = 0;
                for j in 0..8 {
                    d |= u128::from(key[i + j]) << (8 * j);
                }
                d = w(shift_mix(w(d * m)) * m);
                h = w((h ^ d) * m);
            }
            if key.len() > full {
                let mut d: u128 = 0;
                for (j, &b) in key[full..].iter().enumerate() {
                    d |= u128::from(b) << (8 * j);
                }
                h = w((h ^ d) * m);
            }
            h = w(shift_mix(h) * m);
            shift_mix(h) as u64
        }
        for key in inputs() {
            assert_eq!(KeyHasher::Murmur64aEnvoy.hash(&key), reference(&key), "len {}", key.len());
        }
    }

    #[test]
    fn oaat_reference() {
        // hashkit_one_at_a_time: `uint32_t val = (uint32_t) *ptr` with a signed `char`.
        fn reference(key: &[u8]) -> u32 {
            const MASK: u64 = 0xffff_ffff;
            let mut v: u64 = 0;
            for &b in key {
                let c: i64 = if b >= 0x80 { i64::from(b) - 256 } else { i64::from(b) };
                v = (v + (c as u64 & MASK)) & MASK;
                v = (v + (v << 10)) & MASK;
                v ^= v >> 6;
            }
            v = (v + (v << 3)) & MASK;
            v ^= v >> 11;
            v = (v + (v << 15)) & MASK;
            v as u32
        }
        for key in inputs() {
            assert_eq!(KeyHasher::Oaat.hash(&key), u64::from(reference(&key)), "{key:?}");
        }
        // The signed-char trap: 0x80 is added as 0xFFFFFF80, so it differs from an unsigned OAAT.
        assert_ne!(KeyHasher::Oaat.hash(&[0x80]), u64::from(reference_unsigned(&[0x80])));
        assert_eq!(KeyHasher::Oaat.hash(b"a"), u64::from(reference_unsigned(b"a")));
        // Bob Jenkins' published check (unsigned bytes, ASCII so no sign difference):
        // one_at_a_time("a") = 0xCA2E9442, ("The quick brown fox jumps over the lazy dog") = 0x519E91F5.
        assert_eq!(KeyHasher::Oaat.hash(b"a"), 0xCA2E_9442);
        assert_eq!(KeyHasher::Oaat.hash(b"The quick brown fox jumps over the lazy dog"), 0x519E_91F5);

        fn reference_unsigned(key: &[u8]) -> u32 {
            let mut v = 0u32;
            for &b in key {
                v = v.wrapping_add(u32::from(b));
                v = v.wrapping_add(v << 10);
                v ^= v >> 6;
            }
            v = v.wrapping_add(v << 3);
            v ^= v >> 11;
            v.wrapping_add(v << 15)
        }
    }

    #[test]
    fn fnv1a_32_reference() {
        // twemproxy hash_fnv1a_64: init 0x84222325, prime 0x1b3, `hash ^= (uint32_t) key[x]` with
        // a signed char, `hash *= prime`, all in u32.
        fn reference(key: &[u8]) -> u32 {
            const MASK: u64 = 0xffff_ffff;
            let mut h: u64 = 0x84222325;
            for &b in key {
                let c: u64 = if b >= 0x80 { u64::from(b) | 0xffff_ff00 } else { u64::from(b) };
                h = ((h ^ c) * 0x1b3) & MASK;
            }
            h as u32
        }
        for key in inputs() {
            assert_eq!(KeyHasher::Fnv1a32.hash(&key), u64::from(reference(&key)), "{key:?}");
        }
        // By hand: "" = init; "a" = (0x84222325 ^ 0x61) * 0x1b3 mod 2^32;
        // [0x80] = (0x84222325 ^ 0xFFFFFF80) * 0x1b3 mod 2^32.
        assert_eq!(KeyHasher::Fnv1a32.hash(b""), 0x8422_2325);
        assert_eq!(KeyHasher::Fnv1a32.hash(b"a"), (0x8422_2344u64 * 0x1b3) & 0xffff_ffff);
        assert_eq!(KeyHasher::Fnv1a32.hash(&[0x80]), (0x7BDD_DCA5u64 * 0x1b3) & 0xffff_ffff);
    }

    #[test]
    fn murmur2_kafka_reference() {
        // Kafka's UtilsTest.testMurmur2 values quoted in kafka_murmur2_upstream.csv's first rows
        // ("21" -> -973932308, "foobar" -> -790332482) and the README's empty key (275646681).
        assert_eq!(KeyHasher::Murmur2Kafka.hash(b"21"), u64::from((-973932308i32) as u32));
        assert_eq!(KeyHasher::Murmur2Kafka.hash(b"foobar"), u64::from((-790332482i32) as u32));
        assert_eq!(KeyHasher::Murmur2Kafka.hash(b""), 275646681);
    }
}

//! Cassandra's `Murmur3Partitioner` token of a partition key, as the DataStax drivers compute it,
//! and the order-preserving map between signed tokens and unsigned circle positions.
//!
//! The token is `h1` of MurmurHash3 x64_128 with seed 0, with two differences from the
//! reference algorithm: the tail bytes (after the last full 16-byte block) are sign-extended
//! before they are shifted in (Cassandra's Java port reads them as signed `byte`s; the drivers
//! copy it), and a hash equal to `i64::MIN` becomes `i64::MAX`, because the partitioner reserves
//! its minimum token. Keys whose tail bytes are all below 0x80 hash as standard Murmur3 does.
//! The block loop is the crate's own ([`super::murmur3::x64_128_with`]); only the tail reader
//! differs.

use super::murmur3;

/// Up to 8 tail bytes, each sign-extended to 64 bits and shifted to its little-endian place,
/// XOR-ed together: `k ^= (int64_t)(int8_t) tail[i] << (8 * i)` as the drivers' C code does.
/// Written as one shift-and-XOR per byte from the last (shifts distribute over XOR), the same
/// loop shape as the unsigned reader, which measured faster than shifting each byte by `8 * i`.
#[inline(always)]
fn le_partial_sign_extended(bytes: &[u8]) -> u64 {
    debug_assert!(bytes.len() <= 8);
    bytes.iter().rev().fold(0u64, |k, &b| (k << 8) ^ (b as i8 as i64 as u64))
}

/// Cassandra's `Murmur3Partitioner` token of `key` (the raw partition-key bytes), as the
/// DataStax drivers compute it for token-aware routing: a signed 64-bit value in
/// `i64::MIN + 1 ..= i64::MAX`. The empty key gives 0, as the drivers compute it (the server's
/// partitioner answers its reserved minimum token for it, but refuses an empty partition key in a
/// write, so no stored row is routed by that answer).
///
/// Cost: one MurmurHash3 x64_128 (a few ns for a short key). Stable: a pure function of the
/// bytes, frozen by the driver's vectors and the crate's golden files.
#[inline]
pub fn murmur3_token(key: &[u8]) -> i64 {
    let h1 = murmur3::x64_128_with(key, 0, le_partial_sign_extended).0 as i64;
    if h1 == i64::MIN {
        i64::MAX
    } else {
        h1
    }
}

/// The unsigned circle position of a signed token: `token as u64 ^ (1 << 63)`. Order-preserving
/// (`a < b` as tokens exactly when `token_to_position(a) < token_to_position(b)`), so the
/// first token `>=` a key's token is the first position `>=` the key's position; `i64::MIN`
/// maps to 0 and `i64::MAX` to `u64::MAX`. The inverse of [`position_to_token`].
#[inline]
pub const fn token_to_position(token: i64) -> u64 {
    (token as u64) ^ (1 << 63)
}

/// The signed token of an unsigned circle position: the inverse of [`token_to_position`].
#[inline]
pub const fn position_to_token(position: u64) -> i64 {
    (position ^ (1 << 63)) as i64
}

/// [`KeyHasher::CassandraMurmur3`](super::KeyHasher::CassandraMurmur3): the key's token as a
/// circle position.
#[inline]
pub(crate) fn position(key: &[u8]) -> u64 {
    token_to_position(murmur3_token(key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn crate_h1(key: &[u8]) -> i64 {
        ::murmur3::murmur3_x64_128(&mut &key[..], 0).expect("slice read") as u64 as i64
    }

    #[test]
    fn known_tokens() {
        // From cassandra_murmur3_tokens.csv (the DataStax Python driver).
        assert_eq!(murmur3_token(b""), 0);
        assert_eq!(murmur3_token(b"hello"), -3758069500696749310);
        assert_eq!(murmur3_token(&[0x80]), -5284281814142962636);
    }

    #[test]
    fn positions_preserve_order() {
        let tokens = [i64::MIN, i64::MIN + 1, -2, -1, 0, 1, i64::MAX - 1, i64::MAX];
        for w in tokens.windows(2) {
            assert!(token_to_position(w[0]) < token_to_position(w[1]), "{w:?}");
        }
        assert_eq!(token_to_position(i64::MIN), 0);
        assert_eq!(token_to_position(0), 1 << 63);
        assert_eq!(token_to_position(i64::MAX), u64::MAX);
        for t in tokens {
            assert_eq!(position_to_token(token_to_position(t)), t);
        }
    }

    #[test]
    fn sign_extension_is_what_differs_from_standard_murmur3() {
        // A tail byte >= 0x80 changes the hash; the same key with the byte inside a full block
        // does not (blocks are read unsigned).
        assert_ne!(murmur3_token(&[0x80]), crate_h1(&[0x80]));
        let block = [0xffu8; 16];
        assert_eq!(murmur3_token(&block), crate_h1(&block));
        for len in 0..=40usize {
            let low: Vec<u8> = (0..len).map(|i| (i * 37 % 128) as u8).collect();
            assert_eq!(murmur3_token(&low), crate_h1(&low), "len {len}");
        }
    }

    proptest! {
        /// Keys whose tail bytes are all below 0x80 (any block bytes) hash as the murmur3 crate.
        #[test]
        fn low_tail_bytes_match_the_murmur3_crate(
            blocks in 0usize..4,
            body in proptest::collection::vec(any::<u8>(), 64),
            tail in proptest::collection::vec(0u8..0x80, 0..16),
        ) {
            let mut key = body[..blocks * 16].to_vec();
            key.extend_from_slice(&tail);
            let want = crate_h1(&key);
            prop_assert_eq!(murmur3_token(&key), if want == i64::MIN { i64::MAX } else { want });
        }

        #[test]
        fn position_round_trips(p in any::<u64>()) {
            prop_assert_eq!(token_to_position(position_to_token(p)), p);
        }
    }
}

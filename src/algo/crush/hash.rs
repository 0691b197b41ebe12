//! Ceph's hashes: CRUSH's `rjenkins1` (Robert Jenkins' 96-bit mix over 32-bit words, seeded) and
//! `ceph_str_hash_rjenkins`, the object-name hash (Jenkins' lookup2 over bytes).

/// CRUSH's seed, xored into every `rjenkins1` hash.
const SEED: u32 = 1_315_423_911;
/// The two fixed words `rjenkins1` mixes in.
const X: u32 = 231_232;
const Y: u32 = 1232;

/// Jenkins' 96-bit mix; `c` carries the result.
#[inline(always)]
fn mix(mut a: u32, mut b: u32, mut c: u32) -> (u32, u32, u32) {
    a = a.wrapping_sub(b).wrapping_sub(c) ^ (c >> 13);
    b = b.wrapping_sub(c).wrapping_sub(a) ^ (a << 8);
    c = c.wrapping_sub(a).wrapping_sub(b) ^ (b >> 13);
    a = a.wrapping_sub(b).wrapping_sub(c) ^ (c >> 12);
    b = b.wrapping_sub(c).wrapping_sub(a) ^ (a << 16);
    c = c.wrapping_sub(a).wrapping_sub(b) ^ (b >> 5);
    a = a.wrapping_sub(b).wrapping_sub(c) ^ (c >> 3);
    b = b.wrapping_sub(c).wrapping_sub(a) ^ (a << 10);
    c = c.wrapping_sub(a).wrapping_sub(b) ^ (b >> 15);
    (a, b, c)
}

/// `crush_hash32_rjenkins1_2(a, b)`: the reweight test and the `hashpspool` placement seed.
#[inline]
pub(crate) fn hash2(a: u32, b: u32) -> u32 {
    let h = SEED ^ a ^ b;
    let (a, b, h) = mix(a, b, h);
    let (_, _, h) = mix(X, a, h);
    let (_, _, h) = mix(b, Y, h);
    h
}

/// `crush_hash32_rjenkins1_3(a, b, c)`: the straw2 draw, `(x, item, r)`, and the uniform
/// bucket's permutation, `(x, bucket, p)`.
#[inline]
pub(crate) fn hash3(a: u32, b: u32, c: u32) -> u32 {
    let h = SEED ^ a ^ b ^ c;
    let (a, b, h) = mix(a, b, h);
    let (c, x, h) = mix(c, X, h);
    let (y, a, h) = mix(Y, a, h);
    let (b, x, h) = mix(b, x, h);
    let (_, _, h) = mix(y, c, h);
    let _ = (a, b, x);
    h
}

/// `crush_hash32_rjenkins1_4(a, b, c, d)`: the list and tree buckets' draws.
#[inline]
pub(crate) fn hash4(a: u32, b: u32, c: u32, d: u32) -> u32 {
    let h = SEED ^ a ^ b ^ c ^ d;
    let (a, b, h) = mix(a, b, h);
    let (c, d, h) = mix(c, d, h);
    let (a, x, h) = mix(a, X, h);
    let (y, b, h) = mix(Y, b, h);
    let (c, x, h) = mix(c, x, h);
    let (_, _, h) = mix(y, d, h);
    let _ = (a, b, c, x);
    h
}

/// `ceph_str_hash_rjenkins`: the object-name hash a pool with `object_hash rjenkins` (every
/// pool Ceph creates) files objects by.
pub(crate) fn str_hash(key: &[u8]) -> u32 {
    let word = |k: &[u8]| u32::from_le_bytes([k[0], k[1], k[2], k[3]]);
    let (mut a, mut b, mut c) = (0x9e37_79b9u32, 0x9e37_79b9u32, 0u32);
    let mut k = key;
    while k.len() >= 12 {
        a = a.wrapping_add(word(&k[0..4]));
        b = b.wrapping_add(word(&k[4..8]));
        c = c.wrapping_add(word(&k[8..12]));
        (a, b, c) = mix(a, b, c);
        k = &k[12..];
    }
    // The length is Ceph's `unsigned`: keys longer than 4 GiB wrap as they do there.
    c = c.wrapping_add(key.len() as u32);
    // The tail: bytes 8..11 go to c's upper three bytes (its low byte holds the length).
    let mut tail = [0u8; 12];
    tail[..k.len()].copy_from_slice(k);
    a = a.wrapping_add(word(&tail[0..4]));
    b = b.wrapping_add(word(&tail[4..8]));
    c = c.wrapping_add(u32::from_le_bytes([0, tail[8], tail[9], tail[10]]));
    mix(a, b, c).2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn str_hash_tail_bytes() {
        // Zero tail bytes add nothing, so a key and the key padded with zeros differ only by
        // the length word: a check that the length, not the padding, is mixed in.
        assert_ne!(str_hash(b"a"), str_hash(b"a\0"));
        assert_ne!(str_hash(b""), str_hash(b"\0"));
        // The 12-byte block path and the tail path agree on where bytes go.
        assert_ne!(str_hash(b"abcdefghijkl"), str_hash(b"abcdefghijk"));
    }
}

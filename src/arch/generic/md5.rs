//! MD5 (RFC 1321): the scalar compression, a one-block fast path for short keys, and the lane
//! scheduler every multi-lane kernel shares.
//!
//! The 64 steps are listed once ([`md5_steps!`]); each ISA supplies its own `step!` (scalar
//! `u32` here, 2 × 8 lanes in `x86_64/md5_avx2.rs`, 16 lanes in `x86_64/md5_avx512.rs`), so
//! every path computes the same function by construction and the tests check it against the
//! md-5 crate. Padding is built on the fly per 64-byte block ([`block_bytes`]): no key is ever
//! copied whole, nothing is allocated, and no load reads past a key's end.

/// The initial state (A, B, C, D).
pub(crate) const IV: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];

/// The 64 steps: `$step!(function, a, b, c, d, message word, rotation, constant)`, with the
/// state variables rotating one place per step as RFC 1321 writes them.
macro_rules! md5_steps {
    ($step:ident, $a:ident, $b:ident, $c:ident, $d:ident) => {
        $step!(f, $a, $b, $c, $d, 0, 7, 0xd76a_a478);
        $step!(f, $d, $a, $b, $c, 1, 12, 0xe8c7_b756);
        $step!(f, $c, $d, $a, $b, 2, 17, 0x2420_70db);
        $step!(f, $b, $c, $d, $a, 3, 22, 0xc1bd_ceee);
        $step!(f, $a, $b, $c, $d, 4, 7, 0xf57c_0faf);
        $step!(f, $d, $a, $b, $c, 5, 12, 0x4787_c62a);
        $step!(f, $c, $d, $a, $b, 6, 17, 0xa830_4613);
        $step!(f, $b, $c, $d, $a, 7, 22, 0xfd46_9501);
        $step!(f, $a, $b, $c, $d, 8, 7, 0x6980_98d8);
        $step!(f, $d, $a, $b, $c, 9, 12, 0x8b44_f7af);
        $step!(f, $c, $d, $a, $b, 10, 17, 0xffff_5bb1);
        $step!(f, $b, $c, $d, $a, 11, 22, 0x895c_d7be);
        $step!(f, $a, $b, $c, $d, 12, 7, 0x6b90_1122);
        $step!(f, $d, $a, $b, $c, 13, 12, 0xfd98_7193);
        $step!(f, $c, $d, $a, $b, 14, 17, 0xa679_438e);
        $step!(f, $b, $c, $d, $a, 15, 22, 0x49b4_0821);

        $step!(g, $a, $b, $c, $d, 1, 5, 0xf61e_2562);
        $step!(g, $d, $a, $b, $c, 6, 9, 0xc040_b340);
        $step!(g, $c, $d, $a, $b, 11, 14, 0x265e_5a51);
        $step!(g, $b, $c, $d, $a, 0, 20, 0xe9b6_c7aa);
        $step!(g, $a, $b, $c, $d, 5, 5, 0xd62f_105d);
        $step!(g, $d, $a, $b, $c, 10, 9, 0x0244_1453);
        $step!(g, $c, $d, $a, $b, 15, 14, 0xd8a1_e681);
        $step!(g, $b, $c, $d, $a, 4, 20, 0xe7d3_fbc8);
        $step!(g, $a, $b, $c, $d, 9, 5, 0x21e1_cde6);
        $step!(g, $d, $a, $b, $c, 14, 9, 0xc337_07d6);
        $step!(g, $c, $d, $a, $b, 3, 14, 0xf4d5_0d87);
        $step!(g, $b, $c, $d, $a, 8, 20, 0x455a_14ed);
        $step!(g, $a, $b, $c, $d, 13, 5, 0xa9e3_e905);
        $step!(g, $d, $a, $b, $c, 2, 9, 0xfcef_a3f8);
        $step!(g, $c, $d, $a, $b, 7, 14, 0x676f_02d9);
        $step!(g, $b, $c, $d, $a, 12, 20, 0x8d2a_4c8a);

        $step!(h, $a, $b, $c, $d, 5, 4, 0xfffa_3942);
        $step!(h, $d, $a, $b, $c, 8, 11, 0x8771_f681);
        $step!(h, $c, $d, $a, $b, 11, 16, 0x6d9d_6122);
        $step!(h, $b, $c, $d, $a, 14, 23, 0xfde5_380c);
        $step!(h, $a, $b, $c, $d, 1, 4, 0xa4be_ea44);
        $step!(h, $d, $a, $b, $c, 4, 11, 0x4bde_cfa9);
        $step!(h, $c, $d, $a, $b, 7, 16, 0xf6bb_4b60);
        $step!(h, $b, $c, $d, $a, 10, 23, 0xbebf_bc70);
        $step!(h, $a, $b, $c, $d, 13, 4, 0x289b_7ec6);
        $step!(h, $d, $a, $b, $c, 0, 11, 0xeaa1_27fa);
        $step!(h, $c, $d, $a, $b, 3, 16, 0xd4ef_3085);
        $step!(h, $b, $c, $d, $a, 6, 23, 0x0488_1d05);
        $step!(h, $a, $b, $c, $d, 9, 4, 0xd9d4_d039);
        $step!(h, $d, $a, $b, $c, 12, 11, 0xe6db_99e5);
        $step!(h, $c, $d, $a, $b, 15, 16, 0x1fa2_7cf8);
        $step!(h, $b, $c, $d, $a, 2, 23, 0xc4ac_5665);

        $step!(i, $a, $b, $c, $d, 0, 6, 0xf429_2244);
        $step!(i, $d, $a, $b, $c, 7, 10, 0x432a_ff97);
        $step!(i, $c, $d, $a, $b, 14, 15, 0xab94_23a7);
        $step!(i, $b, $c, $d, $a, 5, 21, 0xfc93_a039);
        $step!(i, $a, $b, $c, $d, 12, 6, 0x655b_59c3);
        $step!(i, $d, $a, $b, $c, 3, 10, 0x8f0c_cc92);
        $step!(i, $c, $d, $a, $b, 10, 15, 0xffef_f47d);
        $step!(i, $b, $c, $d, $a, 1, 21, 0x8584_5dd1);
        $step!(i, $a, $b, $c, $d, 8, 6, 0x6fa8_7e4f);
        $step!(i, $d, $a, $b, $c, 15, 10, 0xfe2c_e6e0);
        $step!(i, $c, $d, $a, $b, 6, 15, 0xa301_4314);
        $step!(i, $b, $c, $d, $a, 13, 21, 0x4e08_11a1);
        $step!(i, $a, $b, $c, $d, 4, 6, 0xf753_7e82);
        $step!(i, $d, $a, $b, $c, 11, 10, 0xbd3a_f235);
        $step!(i, $c, $d, $a, $b, 2, 15, 0x2ad7_d2bb);
        $step!(i, $b, $c, $d, $a, 9, 21, 0xeb86_d391);
    };
}
pub(crate) use md5_steps;

/// One MD5 compression of a 64-byte block into `state`.
#[inline]
pub(crate) fn compress(state: &mut [u32; 4], block: &[u8; 64]) {
    let mut m = [0u32; 16];
    for (w, c) in m.iter_mut().zip(block.chunks_exact(4)) {
        *w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    }
    compress_words(state, &m);
}

/// One MD5 compression of a block given as its 16 little-endian message words.
#[inline]
pub(crate) fn compress_words(state: &mut [u32; 4], m: &[u32; 16]) {
    let [mut a, mut b, mut c, mut d] = *state;
    // The round functions in the forms with the shortest dependency on `b` (the value the
    // previous step just produced); G's two terms have disjoint bits, so `+` equals `|` and
    // the `c & !d` half is off the critical path.
    macro_rules! step {
        (f, $a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $s:expr, $k:expr) => {
            step!(@ $a, $b, $m, $s, $k, $d ^ ($b & ($c ^ $d)))
        };
        (g, $a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $s:expr, $k:expr) => {
            step!(@ $a, $b, $m, $s, $k, ($c & !$d).wrapping_add($b & $d))
        };
        (h, $a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $s:expr, $k:expr) => {
            step!(@ $a, $b, $m, $s, $k, $b ^ $c ^ $d)
        };
        (i, $a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $s:expr, $k:expr) => {
            step!(@ $a, $b, $m, $s, $k, $c ^ ($b | !$d))
        };
        (@ $a:ident, $b:ident, $m:expr, $s:expr, $k:expr, $fun:expr) => {{
            let t = opaque($a.wrapping_add($k).wrapping_add(m[$m]));
            $a = t.wrapping_add($fun).rotate_left($s).wrapping_add($b)
        }};
    }
    md5_steps!(step, a, b, c, d);
    state[0] = state[0].wrapping_add(a);
    state[1] = state[1].wrapping_add(b);
    state[2] = state[2].wrapping_add(c);
    state[3] = state[3].wrapping_add(d);
}

/// `x`, hidden from the optimizer so it cannot reassociate the step's sum.
///
/// LLVM moves constants to the end of an addition chain, which puts the step constant after
/// the round function: one more add on MD5's serial step chain, every step. Adding it to the
/// message word and the old state first, then hiding that sum, keeps the chain at round
/// function, add, rotate, add.
#[inline(always)]
fn opaque(mut x: u32) -> u32 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: an empty assembly block that only claims to read and write `x` in a register: it
    // touches no memory, no stack and no flags' consumers, so `x` comes back unchanged.
    unsafe {
        std::arch::asm!("/* {0:e} */", inout(reg) x, options(pure, nomem, nostack, preserves_flags));
    }
    x
}

/// How many 64-byte blocks the padded message of a `len`-byte key has (the padding is one
/// `0x80` byte, zeros, then the 8-byte bit length).
#[inline]
pub(crate) fn block_count(len: usize) -> usize {
    (len + 8) / 64 + 1
}

/// Block `i` of the padded message of `key` (of [`block_count`]`(key.len())` blocks) into `buf`.
///
/// A block wholly inside the key is copied as is; the final one or two are built here, which is
/// the only place padding exists, so any length and any sub-slice works and nothing past the
/// key's end is ever read.
#[inline]
pub(crate) fn block_bytes(key: &[u8], i: usize, blocks: usize, buf: &mut [u8; 64]) {
    let start = i * 64;
    if let Some(full) = key.get(start..start + 64) {
        buf.copy_from_slice(full);
        return;
    }
    *buf = [0; 64];
    if let Some(rest) = key.get(start..) {
        copy_short(buf, rest);
        buf[rest.len()] = 0x80;
    }
    if i + 1 == blocks {
        buf[56..].copy_from_slice(&(key.len() as u64).wrapping_mul(8).to_le_bytes());
    }
}

/// Copies `src` (shorter than 64 bytes) to the front of `dst` with at most two overlapping
/// fixed-size moves, instead of a `memcpy` call whose setup costs more than the copy.
#[inline(always)]
fn copy_short(dst: &mut [u8; 64], src: &[u8]) {
    let n = src.len();
    if n >= 32 {
        dst[..32].copy_from_slice(&src[..32]);
        dst[n - 32..n].copy_from_slice(&src[n - 32..]);
    } else if n >= 16 {
        dst[..16].copy_from_slice(&src[..16]);
        dst[n - 16..n].copy_from_slice(&src[n - 16..]);
    } else if n >= 8 {
        dst[..8].copy_from_slice(&src[..8]);
        dst[n - 8..n].copy_from_slice(&src[n - 8..]);
    } else if n >= 4 {
        dst[..4].copy_from_slice(&src[..4]);
        dst[n - 4..n].copy_from_slice(&src[n - 4..]);
    } else {
        dst[..n].copy_from_slice(src);
    }
}

/// The MD5 state words (A, B, C, D) of `key`: the digest is their little-endian bytes in that
/// order, bit-identical to the md-5 crate.
///
/// Cost: one compression per 64-byte block of the padded key (`(len + 8) / 64 + 1` blocks),
/// so a key of up to 55 bytes is a single compression, with no hasher object, buffering or
/// finalization. No heap allocation. The scalar twin of `Kernels::md5_batch` and the
/// single-key path.
#[inline]
pub fn md5_words(key: &[u8]) -> [u32; 4] {
    let mut state = IV;
    let blocks = block_count(key.len());
    let mut chunks = key.chunks_exact(64);
    for c in &mut chunks {
        compress(&mut state, c.try_into().unwrap_or(&[0; 64]));
    }
    let mut m = [0u32; 16];
    for i in key.len() / 64..blocks {
        block_words(key, i, blocks, &mut m);
        compress_words(&mut state, &m);
    }
    state
}

/// [`block_bytes`] as message words, for the scalar paths.
///
/// Built in registers, not by byte stores into a buffer: a word load that spans a byte store
/// and an older store cannot be forwarded and waits for both to reach the cache, which cost
/// more than a fifth of a short key's hash, right at the start of the step chain.
#[inline]
pub(crate) fn block_words(key: &[u8], i: usize, blocks: usize, m: &mut [u32; 16]) {
    let start = i * 64;
    if let Some(full) = key.get(start..start + 64) {
        for (w, c) in m.iter_mut().zip(full.chunks_exact(4)) {
            *w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        return;
    }
    *m = [0; 16];
    if let Some(rest) = key.get(start..) {
        let whole = rest.len() / 4;
        for (w, c) in m.iter_mut().zip(rest.chunks_exact(4)) {
            *w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        m[whole] = tail_word(rest) | 0x80 << (8 * (rest.len() % 4));
    }
    if i + 1 == blocks {
        let bits = (key.len() as u64).wrapping_mul(8);
        m[14] = bits as u32;
        m[15] = (bits >> 32) as u32;
    }
}

/// The last `len % 4` bytes of `rest` as a little-endian word (0 when `len % 4 == 0`), read
/// without touching anything past the slice.
#[inline(always)]
fn tail_word(rest: &[u8]) -> u32 {
    let (n, r) = (rest.len(), rest.len() % 4);
    if r == 0 {
        0
    } else if n >= 4 {
        u32::from_le_bytes([rest[n - 4], rest[n - 3], rest[n - 2], rest[n - 1]]) >> (8 * (4 - r))
    } else {
        // 1..=3 bytes: first, middle and last (the same byte when r == 1).
        u32::from(rest[0]) | u32::from(rest[r / 2]) << (8 * (r / 2)) | u32::from(rest[r - 1]) << (8 * (r - 1))
    }
}

/// [`md5_words`] of every key: the portable twin of the SIMD batches (`keys.len() ==
/// out.len()`, checked by the caller).
pub(crate) fn md5_batch(keys: &[&[u8]], out: &mut [[u32; 4]]) {
    for (o, k) in out.iter_mut().zip(keys) {
        *o = md5_words(k);
    }
}

/// Where one lane of a multi-lane kernel stands: which key (and its place in the batch), and
/// which block of its padded message it is on. An idle lane has `blocks == 0`.
#[derive(Clone, Copy)]
struct Lane<'k> {
    key: &'k [u8],
    index: usize,
    block: usize,
    blocks: usize,
}

/// A lane with no key (batch exhausted): its state is computed and ignored.
const IDLE: Lane<'static> = Lane { key: &[], index: 0, block: 0, blocks: 0 };

/// When this few lanes are still busy and no key is waiting (or the whole batch is this
/// small), the scalar loop finishes them: a vector step of every lane costs about as much as
/// two to three scalar compressions, on AVX2 and AVX-512 alike.
const SCALAR_FINISH: usize = 2;

/// The lane scheduler of the multi-lane kernels, written once: `L` lanes each walk their own
/// key's padded blocks; when a key's last block is done its state goes to `out` and the lane
/// takes the next key. `compress` runs one compression in every lane: `state[w][lane]` is word
/// `w` of a lane's state, `rows[lane]` its current block. `keys.len() == out.len()` is the
/// caller's precondition (extra entries on either side are ignored).
///
/// Any mix of lengths works: lanes are independent, and a batch's last long key finishes on
/// the scalar path instead of running a nearly empty vector.
#[inline(always)]
pub(crate) fn md5_lanes<const L: usize>(
    keys: &[&[u8]],
    out: &mut [[u32; 4]],
    mut compress_lanes: impl FnMut(&mut [[u32; L]; 4], &[[u8; 64]; L]),
) {
    let n = keys.len().min(out.len());
    if n <= SCALAR_FINISH {
        return md5_batch(&keys[..n], &mut out[..n]);
    }
    let mut state = [[0u32; L]; 4];
    let mut rows = [[0u8; 64]; L];
    let mut lanes = [IDLE; L];
    let mut next = 0;
    for (l, (lane, row)) in lanes.iter_mut().zip(rows.iter_mut()).enumerate().take(n) {
        *lane = start_lane(&mut state, l, keys[next], next);
        block_bytes(lane.key, 0, lane.blocks, row);
        next += 1;
    }
    let mut busy = next;
    while busy > 0 {
        if busy <= SCALAR_FINISH && next == n {
            return finish_scalar(out, &state, &lanes);
        }
        compress_lanes(&mut state, &rows);
        // One pass: advance each lane, hand a finished key's state out and refill the lane,
        // then build the lane's next block.
        for (l, (lane, row)) in lanes.iter_mut().zip(rows.iter_mut()).enumerate() {
            if lane.blocks == 0 {
                continue;
            }
            lane.block += 1;
            if lane.block == lane.blocks {
                out[lane.index] = [state[0][l], state[1][l], state[2][l], state[3][l]];
                if next == n {
                    *lane = IDLE;
                    busy -= 1;
                    continue;
                }
                *lane = start_lane(&mut state, l, keys[next], next);
                next += 1;
            }
            block_bytes(lane.key, lane.block, lane.blocks, row);
        }
    }
}

/// Puts key number `index` into lane `l`: the initial state, block 0.
#[inline(always)]
fn start_lane<'k, const L: usize>(state: &mut [[u32; L]; 4], l: usize, key: &'k [u8], index: usize) -> Lane<'k> {
    for (w, iv) in state.iter_mut().zip(IV) {
        w[l] = iv;
    }
    Lane { key, index, block: 0, blocks: block_count(key.len()) }
}

/// Finishes every busy lane with the scalar compression, from its current state and block.
#[cold]
fn finish_scalar<const L: usize>(out: &mut [[u32; 4]], state: &[[u32; L]; 4], lanes: &[Lane<'_>; L]) {
    let mut m = [0u32; 16];
    for (l, lane) in lanes.iter().enumerate().filter(|(_, lane)| lane.blocks != 0) {
        let mut s = [state[0][l], state[1][l], state[2][l], state[3][l]];
        for b in lane.block..lane.blocks {
            block_words(lane.key, b, lane.blocks, &mut m);
            compress_words(&mut s, &m);
        }
        out[lane.index] = s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::{Isa, Kernels};
    use ::md5::{Digest, Md5};
    use proptest::prelude::*;

    fn reference(key: &[u8]) -> [u32; 4] {
        let d = Md5::digest(key);
        std::array::from_fn(|w| u32::from_le_bytes([d[4 * w], d[4 * w + 1], d[4 * w + 2], d[4 * w + 3]]))
    }

    /// Bytes that vary with position and length, so a misplaced or stale byte changes a digest.
    fn key_bytes(len: usize, seed: u8) -> Vec<u8> {
        (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed).wrapping_add((len >> 3) as u8)).collect()
    }

    /// The portable lane compression: the scheduler's reference instantiation.
    fn scalar_lanes<const L: usize>(state: &mut [[u32; L]; 4], rows: &[[u8; 64]; L]) {
        for (l, row) in rows.iter().enumerate() {
            let mut s = [state[0][l], state[1][l], state[2][l], state[3][l]];
            compress(&mut s, row);
            for (w, v) in state.iter_mut().zip(s) {
                w[l] = v;
            }
        }
    }

    /// Every path this CPU has, plus the scheduler on portable lanes of odd widths; the paths
    /// it lacks are reported as skipped, visibly.
    fn check_batch(keys: &[&[u8]]) {
        let want: Vec<[u32; 4]> = keys.iter().map(|k| reference(k)).collect();
        let mut out = vec![[0u32; 4]; keys.len()];
        md5_lanes::<3>(keys, &mut out, scalar_lanes::<3>);
        assert_eq!(out, want, "scheduler, 3 portable lanes, {} keys", keys.len());
        out.fill([0; 4]);
        md5_lanes::<8>(keys, &mut out, scalar_lanes::<8>);
        assert_eq!(out, want, "scheduler, 8 portable lanes, {} keys", keys.len());
        for isa in Isa::ALL {
            let Some(k) = Kernels::new(isa) else {
                eprintln!("SKIPPED: md5 batch on {} (this CPU lacks it)", isa.name());
                continue;
            };
            out.fill([0; 4]);
            k.md5_batch(keys, &mut out);
            assert_eq!(out, want, "md5 batch on {}, {} keys", isa.name(), keys.len());
        }
        out.fill([0; 4]);
        Kernels::active().md5_batch(keys, &mut out);
        assert_eq!(out, want, "md5 batch dispatched ({})", Isa::active().name());
    }

    #[test]
    fn known_answers() {
        // RFC 1321, appendix A.5.
        let hex = |k: &[u8]| {
            md5_words(k).iter().flat_map(|w| w.to_le_bytes()).map(|b| format!("{b:02x}")).collect::<String>()
        };
        assert_eq!(hex(b""), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(hex(b"abc"), "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(hex(b"message digest"), "f96b697d7cb7938d525a2f31aaf161d0");
        assert_eq!(
            hex(b"12345678901234567890123456789012345678901234567890123456789012345678901234567890"),
            "57edf4a22be3c955ac49da2e2107b67a"
        );
    }

    #[test]
    fn scalar_matches_md5_crate_on_every_length() {
        for len in 0..=300 {
            for seed in [0u8, 0xff] {
                let k = key_bytes(len, seed);
                assert_eq!(md5_words(&k), reference(&k), "len {len} seed {seed}");
            }
        }
    }

    #[test]
    fn batches_of_each_length() {
        for len in 0..=300 {
            let ks: Vec<Vec<u8>> = (0..19).map(|i| key_bytes(len, i as u8)).collect();
            let keys: Vec<&[u8]> = ks.iter().map(Vec::as_slice).collect();
            check_batch(&keys);
        }
    }

    #[test]
    fn batch_sizes_and_block_boundaries() {
        for n in [0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100] {
            for len in [0, 1, 55, 56, 63, 64, 119, 120, 127, 128, 250] {
                let ks: Vec<Vec<u8>> = (0..n).map(|i| key_bytes(len, i as u8)).collect();
                let keys: Vec<&[u8]> = ks.iter().map(Vec::as_slice).collect();
                check_batch(&keys);
            }
        }
    }

    #[test]
    fn adversarial_batches() {
        // All keys equal.
        let same = key_bytes(40, 7);
        check_batch(&vec![same.as_slice(); 50]);
        // One long key among short ones, at the start, the middle and the end.
        let long = key_bytes(300, 1);
        let short: Vec<Vec<u8>> = (0..40).map(|i| key_bytes(i % 17, i as u8)).collect();
        for at in [0, 20, 40] {
            let mut keys: Vec<&[u8]> = short.iter().map(Vec::as_slice).collect();
            keys.insert(at, &long);
            check_batch(&keys);
        }
        // Sub-slices at every alignment of one buffer, each ending at the buffer's end or not.
        let buf = key_bytes(400, 3);
        let keys: Vec<&[u8]> =
            (0..64).map(|o| &buf[o..o + (o * 5) % 260]).chain((0..64).map(|o| &buf[400 - o..])).collect();
        check_batch(&keys);
        // Lengths straddling the one- and two-block edges, interleaved.
        let ks: Vec<Vec<u8>> = [55, 56, 63, 64, 119, 120, 127, 128]
            .iter()
            .cycle()
            .take(67)
            .enumerate()
            .map(|(i, &l)| key_bytes(l, i as u8))
            .collect();
        let keys: Vec<&[u8]> = ks.iter().map(Vec::as_slice).collect();
        check_batch(&keys);
    }

    #[test]
    #[should_panic(expected = "same length")]
    fn batch_length_mismatch_panics() {
        Kernels::active().md5_batch(&[b"a"], &mut []);
    }

    proptest! {
        #[test]
        fn random_mixed_batches(ks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..=300), 0..=70)) {
            let keys: Vec<&[u8]> = ks.iter().map(Vec::as_slice).collect();
            check_batch(&keys);
        }
    }
}

//! CRC16-XMODEM (Redis Cluster's key hash) by slicing-by-16.
//!
//! Written here rather than taken from the `crc` crate: its default `Crc<u16>` reads one byte
//! per table step and its `Table<16>` mode pays a generic per-call setup that dominates a
//! 16-byte key (the `hash/crc16-*` benchmark group compares them). Slicing-by-16 folds 16
//! bytes with 16 independent table reads, so a short key is one or two dependent steps.
//! Tables are built at compile time (16 × 256 × 2 bytes = 8 KiB, L1-resident when hot).

/// Polynomial x^16 + x^12 + x^5 + 1, not reflected, init 0, no final XOR.
const POLY: u16 = 0x1021;

/// `TABLES[k][b]`: the CRC register contribution of byte `b` followed by `k` zero bytes.
static TABLES: [[u16; 256]; 16] = build_tables();

const fn build_tables() -> [[u16; 256]; 16] {
    let mut t = [[0u16; 256]; 16];
    let mut b = 0;
    while b < 256 {
        let mut crc = (b as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ POLY } else { crc << 1 };
            bit += 1;
        }
        t[0][b] = crc;
        b += 1;
    }
    let mut k = 1;
    while k < 16 {
        let mut b = 0;
        while b < 256 {
            let prev = t[k - 1][b];
            t[k][b] = (prev << 8) ^ t[0][(prev >> 8) as usize];
            b += 1;
        }
        k += 1;
    }
    t
}

/// CRC16-XMODEM of `data`: `crc16_xmodem(b"123456789") == 0x31C3`.
#[inline]
pub(crate) fn crc16_xmodem(data: &[u8]) -> u16 {
    let mut crc = 0u16;
    let mut blocks = data.chunks_exact(16);
    for block in &mut blocks {
        crc = fold16(crc, block.try_into().expect("16-byte block"));
    }
    let mut rest = blocks.remainder();
    if rest.len() >= 8 {
        crc = fold8(crc, rest[..8].try_into().expect("8-byte block"));
        rest = &rest[8..];
    }
    for &byte in rest {
        crc = (crc << 8) ^ TABLES[0][usize::from((crc >> 8) as u8 ^ byte)];
    }
    crc
}

/// One slicing-by-16 step: the register is folded into the block's first two bytes, then every
/// byte's contribution after the remaining bytes is read from its own table.
#[inline(always)]
fn fold16(crc: u16, b: &[u8; 16]) -> u16 {
    let t = &TABLES;
    let hi = usize::from(b[0] ^ (crc >> 8) as u8);
    let lo = usize::from(b[1] ^ crc as u8);
    (t[15][hi] ^ t[14][lo] ^ t[13][usize::from(b[2])] ^ t[12][usize::from(b[3])])
        ^ (t[11][usize::from(b[4])] ^ t[10][usize::from(b[5])] ^ t[9][usize::from(b[6])] ^ t[8][usize::from(b[7])])
        ^ (t[7][usize::from(b[8])] ^ t[6][usize::from(b[9])] ^ t[5][usize::from(b[10])] ^ t[4][usize::from(b[11])])
        ^ (t[3][usize::from(b[12])] ^ t[2][usize::from(b[13])] ^ t[1][usize::from(b[14])] ^ t[0][usize::from(b[15])])
}

/// The 8-byte step of the same scheme (tables 0..8).
#[inline(always)]
fn fold8(crc: u16, b: &[u8; 8]) -> u16 {
    let t = &TABLES;
    let hi = usize::from(b[0] ^ (crc >> 8) as u8);
    let lo = usize::from(b[1] ^ crc as u8);
    (t[7][hi] ^ t[6][lo] ^ t[5][usize::from(b[2])] ^ t[4][usize::from(b[3])])
        ^ (t[3][usize::from(b[4])] ^ t[2][usize::from(b[5])] ^ t[1][usize::from(b[6])] ^ t[0][usize::from(b[7])])
}

/// The bitwise definition, one bit at a time: the oracle the table code is tested against.
#[cfg(test)]
pub(crate) fn crc16_xmodem_bitwise(data: &[u8]) -> u16 {
    let mut crc = 0u16;
    for &byte in data {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ POLY } else { crc << 1 };
        }
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const CRC_TABLE1: crc::Crc<u16> = crc::Crc::<u16>::new(&crc::CRC_16_XMODEM);

    #[test]
    fn check_value() {
        assert_eq!(crc16_xmodem(b"123456789"), 0x31C3);
        assert_eq!(crc16_xmodem(b""), 0);
    }

    #[test]
    fn every_length_matches_the_bitwise_definition_and_the_crc_crate() {
        let data: Vec<u8> = (0..400u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        for len in 0..=300 {
            for start in [0, 1, 7] {
                let d = &data[start..start + len];
                assert_eq!(crc16_xmodem(d), crc16_xmodem_bitwise(d), "len {len} offset {start}");
                assert_eq!(crc16_xmodem(d), CRC_TABLE1.checksum(d), "len {len} offset {start}");
            }
        }
    }

    #[test]
    fn adversarial_bytes() {
        for fill in [0x00u8, 0xFF, 0x80, 0x01] {
            for len in [1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 250] {
                let d = vec![fill; len];
                assert_eq!(crc16_xmodem(&d), crc16_xmodem_bitwise(&d), "fill {fill:#x} len {len}");
            }
        }
    }

    proptest! {
        #[test]
        fn random_keys(d in proptest::collection::vec(any::<u8>(), 0..300)) {
            prop_assert_eq!(crc16_xmodem(&d), crc16_xmodem_bitwise(&d));
        }
    }
}

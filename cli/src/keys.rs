//! Where keys come from (arguments or stdin) and how they are written (text, hex, u64).
//!
//! Stdin is streamed: one `BufReader`, one reused line buffer and one reused decode buffer, so
//! memory stays flat however many keys are piped in.

use std::ffi::OsString;
use std::io::{self, BufRead, BufReader};

use crate::failure::Failure;

/// How each key is written on the command line or a stdin line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum InputFormat {
    /// The key's bytes as they are (any bytes, UTF-8 or not).
    Text,
    /// The hex of the key's bytes, two digits per byte, either case; empty = the empty key.
    Hex,
    /// The key's 64-bit hash, decimal or `0x` hex: the router's hasher is skipped.
    U64,
}

impl InputFormat {
    pub(crate) fn name(self) -> &'static str {
        match self {
            InputFormat::Text => "text",
            InputFormat::Hex => "hex",
            InputFormat::U64 => "u64",
        }
    }
}

/// clap value parser for `--input`.
pub(crate) fn parse_input_format(s: &str) -> Result<InputFormat, String> {
    match s {
        "text" => Ok(InputFormat::Text),
        "hex" => Ok(InputFormat::Hex),
        "u64" => Ok(InputFormat::U64),
        _ => Err("expected text, hex or u64".to_owned()),
    }
}

/// clap value parser for unsigned numbers written in decimal or `0x` hex.
pub(crate) fn parse_u64_arg(s: &str) -> Result<u64, String> {
    parse_u64(s.as_bytes()).map_err(|e| e.to_owned())
}

/// One decoded key.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Key<'a> {
    Bytes(&'a [u8]),
    Hash(u64),
}

/// Calls `each(raw, key)` for every key in order: `raw` is the key exactly as given (printed
/// back in the output), `key` its decoded form. Keys are the `args` when there are any, else the
/// lines of stdin with one trailing `\n` or `\r\n` removed.
///
/// # Errors
/// The first malformed key (named by argument position or stdin line number), a failed read
/// of stdin, or the first error `each` returns.
pub(crate) fn for_each_key<F>(args: &[OsString], format: InputFormat, mut each: F) -> Result<(), Failure>
where
    F: FnMut(&[u8], Key<'_>) -> Result<(), Failure>,
{
    let mut decoded = Vec::new();
    if !args.is_empty() {
        for (i, arg) in args.iter().enumerate() {
            let raw = os_bytes(arg).ok_or_else(|| Failure::msg(format!("key argument {}: not valid UTF-8", i + 1)))?;
            let key = decode(raw, format, &mut decoded)
                .map_err(|e| Failure::context(format!("key argument {}", i + 1), e))?;
            each(raw, key)?;
        }
        return Ok(());
    }
    let mut input = BufReader::with_capacity(1 << 16, io::stdin().lock());
    let mut line = Vec::with_capacity(256);
    let mut lineno = 0u64;
    loop {
        line.clear();
        let n = input.read_until(b'\n', &mut line).map_err(|e| Failure::context("reading stdin", e))?;
        if n == 0 {
            return Ok(());
        }
        lineno += 1;
        if line.last() == Some(&b'\n') {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
        }
        let key =
            decode(&line, format, &mut decoded).map_err(|e| Failure::context(format!("stdin line {lineno}"), e))?;
        each(&line, key)?;
    }
}

#[cfg(unix)]
fn os_bytes(arg: &OsString) -> Option<&[u8]> {
    use std::os::unix::ffi::OsStrExt;
    Some(arg.as_bytes())
}

#[cfg(not(unix))]
fn os_bytes(arg: &OsString) -> Option<&[u8]> {
    arg.to_str().map(str::as_bytes)
}

/// Decodes one key written in `format`; hex decodes into `buf` (reused between keys).
pub(crate) fn decode<'a>(raw: &'a [u8], format: InputFormat, buf: &'a mut Vec<u8>) -> Result<Key<'a>, String> {
    match format {
        InputFormat::Text => Ok(Key::Bytes(raw)),
        InputFormat::Hex => {
            unhex(raw, buf)?;
            Ok(Key::Bytes(buf))
        }
        InputFormat::U64 => parse_u64(raw).map(Key::Hash).map_err(|why| format!("{} {why}", shown(raw))),
    }
}

/// Hand-written: two table-free nibble lookups are all it takes, and no hex crate is a
/// dependency.
fn unhex(raw: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    out.clear();
    if !raw.len().is_multiple_of(2) {
        return Err(format!("{} has an odd number of hex digits ({})", shown(raw), raw.len()));
    }
    for (i, pair) in raw.chunks_exact(2).enumerate() {
        let nibble = |j: usize| {
            let c = pair[j];
            (c as char).to_digit(16).ok_or_else(|| {
                let what = if c.is_ascii_graphic() { format!("{:?}", c as char) } else { format!("byte 0x{c:02x}") };
                format!("{} is not hex: {what} at position {}", shown(raw), 2 * i + j + 1)
            })
        };
        out.push((nibble(0)? * 16 + nibble(1)?) as u8);
    }
    Ok(())
}

/// Parses a decimal or `0x`/`0X` hex `u64`; the error says why (empty, bad digit, too large).
fn parse_u64(raw: &[u8]) -> Result<u64, &'static str> {
    let s = std::str::from_utf8(raw).map_err(|_| "is not a number")?;
    let (digits, radix) = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => (h, 16),
        None => (s, 10),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err(if radix == 16 {
            "is not a u64 (expected decimal or 0x-prefixed hex digits)"
        } else {
            "is not a u64 (expected decimal digits or 0x-prefixed hex)"
        });
    }
    u64::from_str_radix(digits, radix).map_err(|_| "does not fit in 64 bits")
}

/// A key quoted for an error message, cut short so the message stays one readable line.
fn shown(raw: &[u8]) -> String {
    const MAX: usize = 40;
    let text = String::from_utf8_lossy(&raw[..raw.len().min(MAX)]);
    if raw.len() > MAX {
        format!("{:?}...", text)
    } else {
        format!("{text:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Result<Vec<u8>, String> {
        let mut buf = Vec::new();
        unhex(s.as_bytes(), &mut buf).map(|()| buf)
    }

    #[test]
    fn hex_decodes_and_rejects() {
        assert_eq!(hex("").unwrap(), b"");
        assert_eq!(hex("00fFa5").unwrap(), [0x00, 0xff, 0xa5]);
        assert!(hex("abc").unwrap_err().contains("odd number"));
        assert!(hex("zz").unwrap_err().contains("'z' at position 1"));
        assert!(hex("0g").unwrap_err().contains("'g' at position 2"));
        assert!(hex("+1").is_err());
    }

    #[test]
    fn u64_parses_and_rejects() {
        assert_eq!(parse_u64(b"0"), Ok(0));
        assert_eq!(parse_u64(b"18446744073709551615"), Ok(u64::MAX));
        assert_eq!(parse_u64(b"0xDEADbeef"), Ok(0xDEAD_BEEF));
        assert_eq!(parse_u64(b"0xffffffffffffffff"), Ok(u64::MAX));
        for bad in
            [&b""[..], b"18446744073709551616", b"0x1ffffffffffffffff", b"-1", b"+1", b"0x", b"1.5", b" 1", b"\xff"]
        {
            assert!(parse_u64(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn shown_is_short() {
        assert_eq!(shown(b"ab"), "\"ab\"");
        assert!(shown(&[b'x'; 100]).len() < 50);
    }
}

//! The CLI's key decoders (`--input text|hex|u64`), compiled from the binary's own source:
//! any bytes decode to exactly what they say or give a one-line error naming the problem.
#![no_main]
#![allow(dead_code)]

#[path = "../../cli/src/failure.rs"]
mod failure;
#[path = "../../cli/src/keys.rs"]
mod keys;

use keys::{decode, InputFormat, Key};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, raw)) = data.split_first() else { return };
    let mut buf = Vec::new();
    match which % 3 {
        0 => match decode(raw, InputFormat::Text, &mut buf) {
            Ok(Key::Bytes(b)) => assert_eq!(b, raw),
            other => panic!("text must pass bytes through: {other:?}"),
        },
        1 => {
            let ok = raw.len() % 2 == 0 && raw.iter().all(u8::is_ascii_hexdigit);
            match decode(raw, InputFormat::Hex, &mut buf) {
                Ok(Key::Bytes(b)) => {
                    assert!(ok, "accepted non-hex {raw:?}");
                    let back: String = b.iter().map(|x| format!("{x:02x}")).collect();
                    assert_eq!(back.as_bytes(), raw.to_ascii_lowercase(), "hex decoded wrong");
                }
                Ok(Key::Hash(_)) => panic!("hex gave a hash"),
                Err(e) => {
                    assert!(!ok, "refused valid hex {raw:?}: {e}");
                    one_line(&e);
                }
            }
        }
        _ => {
            let s = std::str::from_utf8(raw).ok();
            let want = s.and_then(|s| match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                Some(h) if !h.is_empty() && h.bytes().all(|c| c.is_ascii_hexdigit()) => u64::from_str_radix(h, 16).ok(),
                Some(_) => None,
                None if !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()) => s.parse::<u64>().ok(),
                None => None,
            });
            match decode(raw, InputFormat::U64, &mut buf) {
                Ok(Key::Hash(h)) => assert_eq!(Some(h), want, "u64 {raw:?}"),
                Ok(Key::Bytes(_)) => panic!("u64 gave bytes"),
                Err(e) => {
                    assert_eq!(want, None, "refused valid u64 {raw:?}: {e}");
                    one_line(&e);
                }
            }
        }
    }
});

/// An error message is one line of bounded length, whatever the key's length.
fn one_line(e: &str) {
    assert!(!e.contains('\n'), "multi-line error: {e:?}");
    assert!(e.len() < 600, "error of {} bytes", e.len());
}

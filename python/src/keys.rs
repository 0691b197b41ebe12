//! Keys from Python objects: raw bytes for [`Router`](crate::router::Router), Python's own
//! formatting for the drop-ins.

use std::borrow::Cow;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString};

/// A [`Router`](crate::router::Router) key: a `str` as UTF-8, `bytes`/`bytearray` as given.
///
/// # Errors
/// `TypeError` for anything else; `UnicodeEncodeError` for a `str` with lone surrogates.
pub(crate) fn key_bytes<'a>(key: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(s) = key.downcast::<PyString>() {
        return Ok(match utf8(s)? {
            Cow::Borrowed(b) => Cow::Owned(b.to_vec()),
            Cow::Owned(v) => Cow::Owned(v),
        });
    }
    if let Ok(b) = key.downcast::<PyBytes>() {
        return Ok(Cow::Borrowed(b.as_bytes()));
    }
    if let Ok(b) = key.downcast::<PyByteArray>() {
        return Ok(Cow::Owned(b.to_vec()));
    }
    Err(PyTypeError::new_err(format!("a key is str or bytes, not {}", key.get_type().name()?)))
}

/// The UTF-8 bytes of `s` (strict: lone surrogates raise, as `str.encode("utf-8")` does).
pub(crate) fn utf8<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, [u8]>> {
    Ok(match s.to_cow()? {
        Cow::Borrowed(b) => Cow::Borrowed(b.as_bytes()),
        Cow::Owned(o) => Cow::Owned(o.into_bytes()),
    })
}

/// `str(obj)` as UTF-8 (uhashring hashes `str(key).encode("utf-8")`).
pub(crate) fn str_utf8(obj: &Bound<'_, PyAny>, out: &mut Vec<u8>) -> PyResult<()> {
    out.clear();
    if let Ok(s) = obj.downcast_exact::<PyString>() {
        out.extend_from_slice(&utf8(s)?);
    } else {
        out.extend_from_slice(&utf8(&obj.str()?)?);
    }
    Ok(())
}

/// `format(obj, "")` (what an f-string writes), one byte per code point, each code point's low
/// 8 bits: the bytes pymemcache's pure-Python `murmur3_32` hashes (`ord(c) & 0xFF`; its
/// arithmetic keeps only the low 32 bits, so the unmasked top byte of a block reduces the same).
pub(crate) fn formatted_low_bytes(obj: &Bound<'_, PyAny>, out: &mut Vec<u8>) -> PyResult<()> {
    let formatted;
    let s = match obj.downcast_exact::<PyString>() {
        Ok(s) => s,
        Err(_) => {
            formatted = obj.call_method1(pyo3::intern!(obj.py(), "__format__"), ("",))?;
            formatted.downcast::<PyString>().map_err(|_| PyTypeError::new_err("__format__ must return a str"))?
        }
    };
    out.clear();
    match s.to_cow() {
        Ok(chars) => low_bytes(&chars, out),
        Err(_) => {
            // A lone surrogate (no UTF-8 form): its code points through Python (rare, slow).
            let ord = s.py().import("builtins")?.getattr("ord")?;
            for c in s.try_iter()? {
                let point: u32 = ord.call1((c?,))?.extract()?;
                out.push(point as u8);
            }
        }
    }
    Ok(())
}

/// Each char's low 8 bits.
fn low_bytes(chars: &str, out: &mut Vec<u8>) {
    if chars.is_ascii() {
        out.extend_from_slice(chars.as_bytes());
    } else {
        out.extend(chars.chars().map(|c| c as u32 as u8));
    }
}

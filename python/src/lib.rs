//! `hashroute._hashroute`: the kernel's routers for Python (PyO3), and the cores of the exact
//! drop-ins for uhashring's `HashRing` and pymemcache's `RendezvousHash` (the Python package in
//! `python/hashroute/` wraps them).
//!
//! Keys: a `str` is routed by its UTF-8 bytes and a `bytes` by itself (`hashroute.Router`); the drop-ins
//! format keys as the libraries they replace do (`str(key)`), so `b"k"` hashes as `"b'k'"`.
//! Errors are Python exceptions carrying the kernel's one-line messages; nothing here panics on
//! input.

mod compat;
mod errors;
mod keys;
mod router;

use pyo3::prelude::*;

/// The Cassandra token of `key` (Murmur3Partitioner): what the DataStax driver's
/// `Murmur3Token.from_key(key).value` returns. A `str` is hashed as its UTF-8 bytes. O(len).
#[pyfunction]
fn token(key: &Bound<'_, PyAny>) -> PyResult<i64> {
    let key = keys::key_bytes(key)?;
    Ok(hashroute::cassandra::murmur3_token(&key))
}

/// The Redis Cluster slot of `key` (CRC16-XMODEM of the hash tag or the key, mod 16384), as
/// `CLUSTER KEYSLOT` answers. A `str` is hashed as its UTF-8 bytes. O(len).
#[pyfunction]
fn slot(key: &Bound<'_, PyAny>) -> PyResult<u16> {
    let key = keys::key_bytes(key)?;
    Ok(hashroute::slots::key_slot(&key))
}

/// The extension module.
#[pymodule]
fn _hashroute(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(token, m)?)?;
    m.add_function(wrap_pyfunction!(slot, m)?)?;
    m.add_class::<router::Router>()?;
    m.add_class::<compat::UhashringCore>()?;
    m.add_class::<compat::RendezvousCore>()?;
    m.add("ALGORITHMS", hashroute::Algorithm::ALL.iter().map(|a| a.name()).collect::<Vec<_>>())?;
    m.add("HASHERS", hashroute::KeyHasher::ALL.iter().map(|h| h.name()).collect::<Vec<_>>())?;
    m.add("KETAMA_VARIANTS", hashroute::KetamaVariant::ALL.iter().map(|v| v.name()).collect::<Vec<_>>())?;
    Ok(())
}

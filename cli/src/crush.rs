//! The CRUSH commands behind `--crush-map`: route, replicas and fingerprint over a map's rule.

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};

use hashroute::crush::{object_hash, CrushRouter, Workspace, ITEM_NONE};

use crate::failure::Failure;
use crate::keys::{for_each_key, InputFormat, Key};
use crate::route::write_line;

/// CRUSH's input for a key: the Ceph object hash of its bytes, or `--input u64`'s value (32
/// bits).
pub(crate) fn input_of(key: Key<'_>) -> Result<u32, Failure> {
    match key {
        Key::Bytes(bytes) => Ok(object_hash(bytes)),
        Key::Hash(x) => {
            u32::try_from(x).map_err(|_| Failure::msg(format!("--input u64: {x} exceeds CRUSH's 32-bit input")))
        }
    }
}

/// Device names, comma-separated, a hole as `-`.
pub(crate) fn device_list(map: &hashroute::crush::CrushMap, devices: &[i32], into: &mut Vec<u8>) {
    into.clear();
    for (i, &d) in devices.iter().enumerate() {
        if i > 0 {
            into.push(b',');
        }
        match map.device_name(d).filter(|_| d != ITEM_NONE) {
            Some(name) => into.extend_from_slice(name.as_bytes()),
            None => into.push(b'-'),
        }
    }
}

/// `KEY<TAB>DEVICES` for `n` replicas per key (`route` is `n = 1`; nothing found prints `-`).
pub(crate) fn replicas(router: &CrushRouter, n: usize, keys: &[OsString], input: InputFormat) -> Result<(), Failure> {
    if n == 0 {
        return Err(Failure::msg("-n 0: ask for at least 1 replica"));
    }
    if n > 64 {
        return Err(Failure::msg(format!("-n {n}: at most 64 replicas per CRUSH mapping")));
    }
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let (mut devices, mut ws, mut line) = (Vec::with_capacity(n), Workspace::default(), Vec::with_capacity(64));
    for_each_key(keys, input, |raw, key| {
        router.map_x(input_of(key)?, n, &mut devices, &mut ws);
        device_list(router.map(), &devices, &mut line);
        if devices.is_empty() {
            line.push(b'-');
        }
        write_line(&mut out, raw, &line)
    })?;
    out.flush()?;
    Ok(())
}

/// The fingerprint of the map, rule and reweights.
pub(crate) fn fingerprint(router: &CrushRouter) -> Result<(), Failure> {
    let mut out = io::stdout().lock();
    writeln!(out, "{}", hashroute::fingerprint(router))?;
    out.flush()?;
    Ok(())
}

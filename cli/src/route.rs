//! `hashroute route`: `KEY<TAB>NODE` for every key.

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};

use clap::Args;
use hashroute::Router;

use crate::failure::Failure;
use crate::keys::{for_each_key, parse_input_format, InputFormat, Key};
use crate::router_args::{RouterArgs, Target};

/// Route each key to its node: prints `KEY<TAB>NODE` per key, in input order
#[derive(Args, Debug)]
pub(crate) struct RouteArgs {
    #[command(flatten)]
    router: RouterArgs,
    /// How keys are written: text (bytes as given), hex (of the bytes), u64 (the key's 64-bit
    /// hash, routed without hashing; not for ketama or slots)
    #[arg(long, value_name = "FORMAT", help_heading = "Keys", default_value = "text", value_parser = parse_input_format)]
    input: InputFormat,
    /// Keys; when none are given, one key per line is read from stdin
    #[arg(value_name = "KEY", help_heading = "Keys")]
    keys: Vec<OsString>,
}

pub(crate) fn run(args: RouteArgs) -> Result<(), Failure> {
    if let Some(crush) = args.router.crush()? {
        return crate::crush::replicas(&crush, 1, &args.keys, args.input);
    }
    if let Some(ring) = args.router.stored_ring()? {
        return crate::ring::route(&ring, &args.keys, args.input);
    }
    let target = args.router.target(false)?;
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    match target {
        Target::Router(router) => {
            if args.input == InputFormat::U64 {
                // Fail before reading any key when the router has no 64-bit entry point.
                router.route_hash(0).map_err(|e| {
                    Failure::msg(format!("--input {}: {e} (its key hash is not 64 bits)", args.input.name()))
                })?;
            }
            for_each_key(&args.keys, args.input, |raw, key| {
                let id = match key {
                    Key::Bytes(bytes) => router.route(bytes),
                    Key::Hash(hash) => router.route_hash(hash)?,
                };
                write_line(&mut out, raw, router.node_name(id).as_bytes())
            })?;
        }
        Target::Buckets { hasher, bucket } => {
            let mut number = String::with_capacity(10);
            for_each_key(&args.keys, args.input, |raw, key| {
                let hash = match key {
                    Key::Bytes(bytes) => hasher.hash(bytes),
                    Key::Hash(hash) => hash,
                };
                number.clear();
                // Writing into a String cannot fail.
                let _ = std::fmt::Write::write_fmt(&mut number, format_args!("{}", bucket(hash)));
                write_line(&mut out, raw, number.as_bytes())
            })?;
        }
    }
    out.flush()?;
    Ok(())
}

/// `KEY<TAB>VALUE\n`, the key exactly as given.
pub(crate) fn write_line(out: &mut impl Write, key: &[u8], value: &[u8]) -> Result<(), Failure> {
    out.write_all(key)?;
    out.write_all(b"\t")?;
    out.write_all(value)?;
    out.write_all(b"\n")?;
    Ok(())
}

//! `hashroute token`: Cassandra `Murmur3Partitioner` tokens.

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};

use clap::Args;

use crate::failure::Failure;
use crate::keys::{for_each_key, parse_input_format, InputFormat, Key};
use crate::route::write_line;

/// Cassandra token of each key (Murmur3Partitioner, as the DataStax drivers compute it): prints
/// `KEY<TAB>TOKEN`, a signed 64-bit decimal
#[derive(Args, Debug)]
pub(crate) struct TokenArgs {
    /// How keys are written: text (bytes as given) or hex (of the bytes, e.g. a partition key's
    /// serialized form)
    #[arg(long, value_name = "FORMAT", help_heading = "Keys", default_value = "text", value_parser = parse_input_format)]
    input: InputFormat,
    /// Keys; when none are given, one key per line is read from stdin
    #[arg(value_name = "KEY", help_heading = "Keys")]
    keys: Vec<OsString>,
}

pub(crate) fn run(args: TokenArgs) -> Result<(), Failure> {
    if args.input == InputFormat::U64 {
        return Err(Failure::msg("token does not take --input u64: a token is the Murmur3 of the key's bytes"));
    }
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let mut number = String::with_capacity(20);
    for_each_key(&args.keys, args.input, |raw, key| {
        let Key::Bytes(bytes) = key else { unreachable!("u64 input is rejected above") };
        number.clear();
        // Writing into a String cannot fail.
        let _ = std::fmt::Write::write_fmt(&mut number, format_args!("{}", hashroute::cassandra::murmur3_token(bytes)));
        write_line(&mut out, raw, number.as_bytes())
    })?;
    out.flush()?;
    Ok(())
}

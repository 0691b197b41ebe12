//! `hashroute replicas`: the first N nodes of each key's preference list.

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::ops::ControlFlow;

use clap::Args;
use hashroute::{NodeId, Router};

use crate::failure::Failure;
use crate::keys::{for_each_key, parse_input_format, InputFormat, Key};
use crate::route::write_line;
use crate::router_args::RouterArgs;

/// N distinct nodes per key, best first: prints `KEY<TAB>NODE1,NODE2,...` (NODE1 is the route)
///
/// A token ring takes --replication instead of -n: Cassandra's replica list, in the DataStax
/// driver's order.
#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("count").args(["n", "replication"]).required(true)))]
pub(crate) struct ReplicasArgs {
    #[command(flatten)]
    router: RouterArgs,
    /// Replicas per key (1 up to the node count)
    #[arg(short = 'n', value_name = "N", help_heading = "Replicas")]
    n: Option<usize>,
    #[command(flatten)]
    replication: crate::token_replicas::ReplicationArgs,
    /// How keys are written: text (bytes as given) or hex (of the bytes)
    #[arg(long, value_name = "FORMAT", help_heading = "Keys", default_value = "text", value_parser = parse_input_format)]
    input: InputFormat,
    /// Keys; when none are given, one key per line is read from stdin
    #[arg(value_name = "KEY", help_heading = "Keys")]
    keys: Vec<OsString>,
}

pub(crate) fn run(args: ReplicasArgs) -> Result<(), Failure> {
    if args.n == Some(0) {
        return Err(Failure::msg("-n 0: ask for at least 1 replica"));
    }
    if let Some(crush) = args.router.crush()? {
        let n = args.n.ok_or_else(|| Failure::msg("--crush-map takes -n N, not --replication"))?;
        return crate::crush::replicas(&crush, n, &args.keys, args.input);
    }
    if args.input == InputFormat::U64 {
        return Err(Failure::msg("replicas does not take --input u64: preference lists start from the key's bytes"));
    }
    if let Some(ring) = args.router.stored_ring()? {
        // Cassandra's replica lists keep a down node (it keeps its ranges), so --replication
        // reads the configured token ring; -n walks the preference list around down members.
        return match args.n {
            Some(n) => crate::ring::replicas(&ring, n, &args.keys, args.input),
            None => args.replication.run(ring.configured(), &args.keys, args.input),
        };
    }
    let router = args.router.router()?;
    let Some(n) = args.n else {
        return args.replication.run(&router, &args.keys, args.input);
    };
    // Fails before reading any key when n exceeds the node count or the router has no
    // preference list.
    router.replicas(b"", n)?;
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let mut ids: Vec<NodeId> = Vec::with_capacity(n);
    let mut names: Vec<u8> = Vec::with_capacity(64);
    for_each_key(&args.keys, args.input, |raw, key| {
        let Key::Bytes(bytes) = key else { unreachable!("u64 input is rejected above") };
        ids.clear();
        router.preference(bytes, &mut |id| {
            ids.push(id);
            if ids.len() == n {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })?;
        names.clear();
        for (i, &id) in ids.iter().enumerate() {
            if i > 0 {
                names.push(b',');
            }
            names.extend_from_slice(router.node_name(id).as_bytes());
        }
        write_line(&mut out, raw, &names)
    })?;
    out.flush()?;
    Ok(())
}

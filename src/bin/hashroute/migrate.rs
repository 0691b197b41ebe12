//! `hashroute migrate`: what a membership change costs, before making it.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use clap::Args;

use crate::failure::Failure;
use crate::router_args::{read_nodes_file, AlgoArgs};

/// What changing the node list costs: fraction of keys moved, per-node shares, moving ranges
///
/// Prints the total fraction of keys that moves, each node's share before and after with what
/// moves in and out, and (for rings, Ketama and Redis slots, where the plan is exact) every hash
/// range that changes owner. Other algorithms are estimated from a fixed sample of 100000 keys.
/// Both node lists are built with the same router flags.
#[derive(Args, Debug)]
pub(crate) struct MigrateArgs {
    #[command(flatten)]
    algo: AlgoArgs,
    /// Nodes file before the change: one `NAME [WEIGHT]` per line; `#` comments
    #[arg(long, value_name = "FILE", help_heading = "Nodes")]
    from: PathBuf,
    /// Nodes file after the change, same format
    #[arg(long, value_name = "FILE", help_heading = "Nodes")]
    to: PathBuf,
    /// Print only the total and the per-node table, not the moving ranges
    #[arg(long, help_heading = "Output")]
    summary: bool,
}

pub(crate) fn run(args: MigrateArgs) -> Result<(), Failure> {
    let spec = args.algo.spec()?;
    let before = spec.build(read_nodes_file(&args.from)?).map_err(|e| Failure::context("--from", e))?;
    let after = spec.build(read_nodes_file(&args.to)?).map_err(|e| Failure::context("--to", e))?;
    let plan = hashroute::migration::plan(&*before, &*after)?;
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    if args.summary {
        write!(out, "{}", plan.summary())?;
    } else {
        write!(out, "{plan}")?;
    }
    out.flush()?;
    Ok(())
}

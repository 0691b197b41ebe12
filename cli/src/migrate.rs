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
#[command(group(clap::ArgGroup::new("router").args(["algo", "from_config", "crush_map"]).required(true)))]
pub(crate) struct MigrateArgs {
    #[command(flatten)]
    algo: AlgoArgs,
    /// Nodes file before the change: one `NAME [WEIGHT]` per line; `#` comments
    #[arg(long, value_name = "FILE", help_heading = "Nodes", required_unless_present_any = ["from_config", "crush_map"])]
    from: Option<PathBuf>,
    /// Nodes file after the change, same format
    #[arg(long, value_name = "FILE", help_heading = "Nodes", required_unless_present_any = ["from_config", "crush_map"])]
    to: Option<PathBuf>,
    #[command(flatten)]
    proxy: crate::proxy_migrate::MigrateConfigArgs,
    #[command(flatten)]
    crush: crate::crush_migrate::CrushMigrateArgs,
    /// Print only the total and the per-node table, not the moving ranges
    #[arg(long, help_heading = "Output")]
    summary: bool,
}

pub(crate) fn run(args: MigrateArgs) -> Result<(), Failure> {
    if args.crush.run()? {
        return Ok(());
    }
    let (before, after) = match args.proxy.routers()? {
        Some(pair) => pair,
        None => {
            let spec = args.algo.spec()?;
            let (from, to) = (args.from.as_ref(), args.to.as_ref());
            let from = from.ok_or_else(|| Failure::msg("give --from FILE and --to FILE"))?;
            let to = to.ok_or_else(|| Failure::msg("give --from FILE and --to FILE"))?;
            let before = spec.build(read_nodes_file(from)?).map_err(|e| Failure::context("--from", e))?;
            let after = spec.build(read_nodes_file(to)?).map_err(|e| Failure::context("--to", e))?;
            (before, after)
        }
    };
    let plan = hashroute::migration::plan(&before, &after)?;
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    if args.summary {
        write!(out, "{}", plan.summary())?;
    } else {
        write!(out, "{plan}")?;
    }
    out.flush()?;
    Ok(())
}

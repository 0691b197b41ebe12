//! `hashroute recommend`: which algorithm and how many vnodes for a cluster size, from the same
//! code as the benchmark sweep.

use std::io::{self, BufWriter, Write};

use clap::Args;
use hashroute::analysis::recommend::{recommend, RecommendOptions, DEFAULT_MAX_LOAD};
use hashroute::analysis::sweep::SweepConfig;

use crate::failure::Failure;

/// Environment variable that shrinks the sweep to a smoke run (as the benchmarks'
/// `HASHROUTE_QUICK`): set to anything but empty or `0`.
const QUICK_ENV: &str = "HASHROUTE_QUICK";

/// Which algorithm (and how many ring vnodes) balances N nodes within --max-load
///
/// Prints the smallest ring vnode count whose busiest node stays within --max-load of the mean
/// (a tail quantile over random clusters), every other algorithm's verdict, and the cheapest
/// consistent router that meets the target: the benchmark sweep's recommendation, from the same
/// code. Takes seconds (quick sweep); --full runs the published sweep sizes (minutes);
/// HASHROUTE_QUICK=1 shrinks it to a smoke run (no lookup timing).
#[derive(Args, Debug)]
pub(crate) struct RecommendArgs {
    /// Cluster size to recommend for (1 to 1000000)
    #[arg(long, value_name = "N")]
    node_count: usize,
    /// Balance target: largest acceptable busiest-node load over the mean load (above 1.0)
    #[arg(long, value_name = "RATIO", default_value_t = DEFAULT_MAX_LOAD)]
    max_load: f64,
    /// Run the benchmark's full sweep sizes instead of the quick one (slower, tighter tails)
    #[arg(long)]
    full: bool,
}

/// Whether the environment asks for a smoke-sized run.
fn quick_env() -> bool {
    std::env::var(QUICK_ENV).is_ok_and(|v| !v.is_empty() && v != "0")
}

pub(crate) fn run(args: RecommendArgs) -> Result<(), Failure> {
    let mut opts = RecommendOptions::default();
    if args.full {
        opts.config = SweepConfig::full();
    } else if quick_env() {
        // Sized like the benchmark's smoke sweep: enough clusters for a p90/p99 verdict on
        // small clusters, no lookup timing.
        opts.config = SweepConfig { clusters: 20, point_budget: 100_000, sample_keys: 10_000, ..SweepConfig::quick() };
        opts.measure_lookup = false;
    }
    let recommendation = recommend(args.node_count, args.max_load, &opts)?;
    let mut out = BufWriter::new(io::stdout().lock());
    write!(out, "{recommendation}")?;
    out.flush()?;
    Ok(())
}

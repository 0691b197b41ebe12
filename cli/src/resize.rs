//! `hashroute resize`: how to get from one node list to another without a cache hit-rate
//! collapse, from the cache simulator (`hashroute_analysis::simulate_resize`).

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use clap::Args;
use hashroute_analysis::{simulate_resize, ResizeReport, ResizeStep, ResizeStrategy, StrategyRun, Workload};
use serde::Serialize;

use crate::failure::Failure;
use crate::keys::parse_u64_arg;
use crate::names::help_list;
use crate::output::{FormatArgs, Progress};
use crate::router_args::{read_nodes_file, AlgoArgs};

/// How to get from one node list to another without a cache hit-rate collapse: each strategy,
/// step by step
///
/// Replays Zipf-distributed requests against one LRU cache per node (sized by its weight) while
/// the cluster goes from --from to --to, once per strategy, on the same warm caches and the
/// same requests. For each step: the keys moved (and the fewest any router must move), the hit
/// rate over the step, the lowest over a --window, the hit rate it settles at, and the requests
/// until it is back within 1 point of its level before the step. Then one line per strategy,
/// starting with its name: its lowest hit rate and how long it took to recover.
///
/// The defaults model the well-known incident (a cache at 92% hits fell to 61% when 4 nodes
/// were added to 4 at once): key popularity Zipf 0.99 (YCSB's default skew), a cluster that
/// caches half of the keys it serves (what that skew needs for 92% hits), 100000 keys (the
/// curves scale with what is cached, not with the key count), 200000 requests per step (a
/// one-node step recovers in about 75000), hit rates over windows of 1000 requests (a
/// dashboard's point). Routers change as a live cluster's do: built from --from, then each node
/// added, reweighted or removed with the router's own incremental change. Deterministic for
/// --sim-seed; about a second at the defaults.
///
/// Prints the summary first (one line per strategy), then the setting and each strategy's
/// steps. --plot FILE.svg draws each strategy's hit rate over the requests (the benchmark
/// report's figure); --format json prints the same figures as one document (schema
/// hashroute.resize/1, docs/json.md).
#[derive(Args, Debug)]
// `--algo` is required elsewhere unless `--from-config` is given; here it defaults to the ring.
#[command(mut_arg("algo", |a| a.required_unless_present(clap::builder::Resettable::Reset).default_value("ring")))]
pub(crate) struct ResizeArgs {
    #[command(flatten)]
    algo: AlgoArgs,
    /// Nodes file before the change: one `NAME [WEIGHT]` per line; `#` comments
    #[arg(long, value_name = "FILE", help_heading = "Nodes")]
    from: PathBuf,
    /// Nodes file after the change, same format
    #[arg(long, value_name = "FILE", help_heading = "Nodes")]
    to: PathBuf,
    /// Key popularity: zipf:S, P(key k) ∝ 1/k^S (0 is uniform, 0.99 YCSB's skew)
    #[arg(long, value_name = "zipf:S", default_value = "zipf:0.99", help_heading = "Workload")]
    workload: String,
    /// Distinct keys requested
    #[arg(long, value_name = "N", default_value_t = Workload::DEFAULT_KEYS, help_heading = "Workload")]
    keys: usize,
    /// What the cluster caches before the change, as a fraction of the keys (each node its
    /// weight's share; added nodes cache as much per weight)
    #[arg(long, value_name = "F", default_value_t = Workload::DEFAULT_CACHE_FRACTION, help_heading = "Workload")]
    cache_fraction: f64,
    /// Requests after each step before the next one
    #[arg(long, value_name = "R", default_value_t = Workload::DEFAULT_REQUESTS_PER_STEP, help_heading = "Workload")]
    requests_per_step: usize,
    /// Requests per window of the lowest hit rate and of the recovery
    #[arg(long, value_name = "N", default_value_t = Workload::DEFAULT_WINDOW, help_heading = "Workload")]
    window: usize,
    /// Seed of the simulated requests (--seed is the key hasher's), decimal or 0x hex
    #[arg(long, value_name = "S", default_value_t = Workload::DEFAULT_SEED, value_parser = parse_u64_arg, help_heading = "Workload")]
    sim_seed: u64,
    #[arg(long, value_name = "NAME,NAME", help_heading = "Output", help = strategy_help())]
    strategy: Option<String>,
    /// Also draw each strategy's hit rate over the requests into this SVG file
    #[arg(long, value_name = "FILE.svg", help_heading = "Output")]
    plot: Option<PathBuf>,
    #[command(flatten)]
    format: FormatArgs,
}

fn strategy_help() -> String {
    let names: Vec<&str> = ResizeStrategy::ALL.iter().map(|s| s.name()).collect();
    help_list("Strategies to simulate, comma-separated", &names, " [default: all]")
}

impl ResizeArgs {
    fn workload(&self) -> Result<Workload, Failure> {
        let zipf_s = Workload::parse_spec(&self.workload).map_err(|e| Failure::context("--workload", e))?;
        Ok(Workload {
            zipf_s,
            keys: self.keys,
            cache_fraction: self.cache_fraction,
            requests_per_step: self.requests_per_step,
            window: self.window,
            seed: self.sim_seed,
        })
    }

    fn strategies(&self) -> Result<Vec<ResizeStrategy>, Failure> {
        let Some(list) = &self.strategy else { return Ok(ResizeStrategy::ALL.to_vec()) };
        list.split(',')
            .map(|name| ResizeStrategy::from_name(name.trim()).map_err(|e| Failure::context("--strategy", e)))
            .collect()
    }
}

pub(crate) fn run(args: ResizeArgs) -> Result<(), Failure> {
    let spec = args.algo.spec()?;
    let (workload, strategies) = (args.workload()?, args.strategies()?);
    let from = read_nodes_file(&args.from)?;
    let to = read_nodes_file(&args.to)?;
    let report = {
        let _progress = Progress::start(args.format.format, "simulating the caches");
        simulate_resize(&spec, &from, &to, &workload, &strategies)?
    };
    if let Some(path) = &args.plot {
        hashroute_analysis::plot::resize_hit_rate(path, &report)
            .map_err(|e| Failure::context(format!("--plot {}", path.display()), e))?;
    }
    if args.format.json() {
        return crate::output::print_json(SCHEMA, &Json::new(&report));
    }
    let mut out = BufWriter::new(io::stdout().lock());
    write!(out, "{}", summary_first(&report))?;
    out.flush()?;
    Ok(())
}

/// The report with its summary first: a heading, one line per strategy, then the setting and
/// every strategy's steps (the library's `Display` without the summary it ends with).
fn summary_first(report: &ResizeReport) -> String {
    let summary = report.summary();
    let full = report.to_string();
    let body = full.strip_suffix(&summary).unwrap_or(&full).trim_end();
    format!(
        "resize {} -> {} nodes ({}): steady hit rate before {:.1}%; per strategy:\n{summary}\n{body}\n",
        report.nodes_before,
        report.nodes_after,
        report.router,
        100.0 * report.steady_before
    )
}

/// The JSON document's schema name and version.
const SCHEMA: &str = "hashroute.resize/1";

/// `resize --format json` (docs/json.md): the setting and, per strategy, its summary and steps.
/// Hit rates are fractions (0.917, not 91.7).
#[derive(Serialize)]
struct Json<'a> {
    router: &'a str,
    nodes_before: usize,
    nodes_after: usize,
    workload: WorkloadJson,
    capacity_per_unit_weight: usize,
    steady_before: f64,
    requests: u64,
    strategies: Vec<RunJson<'a>>,
}

#[derive(Serialize)]
struct WorkloadJson {
    zipf_s: f64,
    keys: usize,
    cache_fraction: f64,
    requests_per_step: usize,
    window: usize,
    seed: u64,
}

#[derive(Serialize)]
struct RunJson<'a> {
    strategy: &'static str,
    description: &'static str,
    lowest: f64,
    /// Requests spent recovering over all steps; `null` if a step never recovered.
    recovery: Option<usize>,
    longest_recovery: Option<usize>,
    requests: usize,
    final_hit_rate: f64,
    steps: Vec<StepJson<'a>>,
}

#[derive(Serialize)]
struct StepJson<'a> {
    change: &'a str,
    /// Fraction of the keys that changed owner; `null` for a warming step.
    moved: Option<f64>,
    /// The fewest any router must move.
    ideal: Option<f64>,
    requests: usize,
    hit_rate: f64,
    lowest: f64,
    settled: f64,
    target: f64,
    recovery: Option<usize>,
}

impl<'a> Json<'a> {
    fn new(r: &'a ResizeReport) -> Json<'a> {
        let w = &r.workload;
        Json {
            router: &r.router,
            nodes_before: r.nodes_before,
            nodes_after: r.nodes_after,
            workload: WorkloadJson {
                zipf_s: w.zipf_s,
                keys: w.keys,
                cache_fraction: w.cache_fraction,
                requests_per_step: w.requests_per_step,
                window: w.window,
                seed: w.seed,
            },
            capacity_per_unit_weight: r.capacity_per_unit_weight,
            steady_before: r.steady_before,
            requests: r.requests,
            strategies: r.runs.iter().map(RunJson::new).collect(),
        }
    }
}

impl<'a> RunJson<'a> {
    fn new(run: &'a StrategyRun) -> RunJson<'a> {
        RunJson {
            strategy: run.strategy.name(),
            description: run.strategy.description(),
            lowest: run.lowest(),
            recovery: run.recovery(),
            longest_recovery: run.longest_recovery(),
            requests: run.requests(),
            final_hit_rate: run.final_hit_rate(),
            steps: run.steps.iter().map(StepJson::new).collect(),
        }
    }
}

impl<'a> StepJson<'a> {
    fn new(s: &'a ResizeStep) -> StepJson<'a> {
        StepJson {
            change: &s.change,
            moved: s.movement.map(|m| m.moved),
            ideal: s.movement.map(|m| m.ideal),
            requests: s.requests,
            hit_rate: s.hit_rate,
            lowest: s.lowest,
            settled: s.settled,
            target: s.target,
            recovery: s.recovery,
        }
    }
}

//! `hashroute migrate`: what a membership change costs, before making it.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use clap::Args;
use hashroute::migration::{KeySpace, MigrationPlan};
use hashroute::Router;
use serde::Serialize;

use crate::failure::Failure;
use crate::output::{FormatArgs, Progress};
use crate::router_args::{read_nodes_file, AlgoArgs};

/// `--summary` lists every node up to this many; beyond, the nodes moving the most keys.
const SUMMARY_ROWS: usize = 25;

/// What changing the node list costs: fraction of keys moved, per-node shares, moving ranges
///
/// Prints the total fraction of keys that moves, each node's share before and after with what
/// moves in and out, and, where the plan is exact (rings, Ketama, token rings, Redis slots, the
/// nginx, HAProxy and Envoy rings, Maglev tables of one size), every hash range or table entry
/// range that changes owner. Other pairs are estimated from a fixed sample of 100000 keys.
/// Both node lists are built with the same router flags.
///
/// The first line is the answer: the fraction of keys that moves. With --summary, a cluster of
/// more than 25 nodes lists the 25 nodes moving the most keys (--all: every node). --format
/// json prints the same figures as one document, fractions as fractions (schema
/// hashroute.migrate/1, docs/json.md).
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
    /// With --summary: every node, however many (by default the 25 moving the most keys)
    #[arg(long, help_heading = "Output", requires = "summary")]
    all: bool,
    #[command(flatten)]
    format: FormatArgs,
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
    let plan = {
        let _progress = Progress::start(args.format.format, "planning the migration");
        hashroute::migration::plan(&before, &after)?
    };
    if args.format.json() {
        let algorithms = (before.algorithm().name(), after.algorithm().name());
        return crate::output::print_json(SCHEMA, &Json::new(&plan, algorithms, !args.summary));
    }
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    if args.summary {
        write!(out, "{}", summary(&plan, args.all))?;
    } else {
        write!(out, "{plan}")?;
    }
    out.flush()?;
    Ok(())
}

/// The library's summary (the total, then one row per node by name); for more than
/// [`SUMMARY_ROWS`] nodes and without `all`, only the rows of the nodes moving the most keys
/// (in and out), most first, and a line saying what was left out. Rows are the library's own.
fn summary(plan: &MigrationPlan, all: bool) -> String {
    let text = plan.summary().to_string();
    let shares = plan.shares();
    if all || shares.len() <= SUMMARY_ROWS {
        return text;
    }
    let lines: Vec<&str> = text.lines().collect();
    // Line 0 is the total, line 1 the header, then one row per share in `shares()` order.
    let (head, rows) = lines.split_at(2);
    let moving = |i: &usize| shares[*i].moved_in + shares[*i].moved_out;
    let mut order: Vec<usize> = (0..shares.len().min(rows.len())).collect();
    order.sort_by(|a, b| moving(b).total_cmp(&moving(a)).then(a.cmp(b)));
    let (kept, left) = order.split_at(SUMMARY_ROWS);
    let most_left = left.iter().map(moving).fold(0.0, f64::max);
    let mut out = format!(
        "{}\nthe {SUMMARY_ROWS} nodes of {} moving the most keys, most first:\n{}\n",
        head[0],
        shares.len(),
        head[1]
    );
    for &i in kept {
        out += rows[i];
        out.push('\n');
    }
    out += &format!(
        "... {} more nodes, each moving at most {:.4}% of the keys in and out (--all lists every node)\n",
        left.len(),
        100.0 * most_left
    );
    out
}

/// The JSON document's schema name and version.
const SCHEMA: &str = "hashroute.migrate/1";

/// `migrate --format json` (docs/json.md): fractions of the key space, per node and moving
/// ranges (exact plans, without `--summary`).
#[derive(Serialize)]
struct Json<'a> {
    before_algorithm: &'static str,
    after_algorithm: &'static str,
    /// `hash64`, `hash32`, `slots`, `table` (exact; `table_entries` entries) or `sample`
    /// (estimated from `sample_keys` keys).
    space: &'static str,
    exact: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    sample_keys: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    table_entries: Option<u64>,
    moved_fraction: f64,
    nodes: Vec<ShareJson<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    moves: Option<Vec<MoveJson<'a>>>,
}

/// One node's shares, fractions of the key space.
#[derive(Serialize)]
struct ShareJson<'a> {
    name: &'a str,
    before: f64,
    after: f64,
    moved_in: f64,
    moved_out: f64,
}

#[derive(Serialize)]
struct MoveJson<'a> {
    start: u64,
    end: u64,
    from: &'a str,
    to: &'a str,
}

impl<'a> Json<'a> {
    fn new(plan: &'a MigrationPlan, algorithms: (&'static str, &'static str), ranges: bool) -> Json<'a> {
        let (space, sample_keys, table_entries) = match plan.space() {
            KeySpace::Hash64 => ("hash64", None, None),
            KeySpace::Hash32 => ("hash32", None, None),
            KeySpace::Slots => ("slots", None, None),
            KeySpace::Table { entries } => ("table", None, Some(entries)),
            KeySpace::Sample { keys } => ("sample", Some(keys), None),
            _ => ("other", None, None),
        };
        let moves = (ranges && plan.is_exact())
            .then(|| plan.moves().map(|m| MoveJson { start: m.start, end: m.end, from: m.from, to: m.to }).collect());
        Json {
            before_algorithm: algorithms.0,
            after_algorithm: algorithms.1,
            space,
            exact: plan.is_exact(),
            sample_keys,
            table_entries,
            moved_fraction: plan.moved_fraction(),
            nodes: plan
                .shares()
                .iter()
                .map(|s| ShareJson {
                    name: &s.name,
                    before: s.before,
                    after: s.after,
                    moved_in: s.moved_in,
                    moved_out: s.moved_out,
                })
                .collect(),
            moves,
        }
    }
}

//! `hashroute recommend`: which algorithm and how many vnodes for a cluster, from the same code
//! as the benchmark sweep.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use clap::Args;
use hashroute_analysis::{
    compatible_names, recommend_with_progress, Prefer, Recommendation, Request, Requirement, TargetAnswer, Verdict,
    DEFAULT_MAX_MEMORY,
};
use serde::Serialize;

use crate::failure::Failure;
use crate::output::{FormatArgs, Progress};
use crate::router_args::read_nodes_file;

/// Environment variable that shrinks the run to a smoke test (as the benchmarks'
/// `HASHROUTE_QUICK`): set to anything but empty or `0`.
const QUICK_ENV: &str = "HASHROUTE_QUICK";

/// Which algorithm (and how many ring vnodes) keeps the busiest node within --max-load of the
/// mean, for random clusters of --node-count nodes or for your own --nodes-file
///
/// For each target: the ring's vnode count, aimed with a closed-form estimate and confirmed on
/// exact arc loads (the tail quantile over random clusters that their count supports, or the
/// exact loads of your cluster and its spread after --grow), the allocated token ring beside
/// it, then every other algorithm's verdict under your constraints with its lookup time,
/// memory and the keys moved by one addition and one removal (moved+1, moved-1, as multiples
/// of the ideal), and the answer the --prefer rule picks among the eligible. Seconds for up to
/// a few thousand nodes; --full (the benchmark's HASHROUTE_FULL sizes) takes minutes.
///
/// Prints the answer first, one line per target, then the eligible candidates once each with
/// the targets they are eligible at, then the rejected ones in one line per reason; --all
/// prints every candidate at every target with its evidence. --format json prints the same
/// figures as one document (schema hashroute.recommend/1, docs/json.md).
#[derive(Args, Debug)]
pub(crate) struct RecommendArgs {
    /// Random clusters of N nodes (1 to 1000000)
    #[arg(
        long,
        value_name = "N",
        required_unless_present_any = ["nodes_file", "from_config"],
        conflicts_with_all = ["nodes_file", "from_config"]
    )]
    node_count: Option<usize>,
    /// Your cluster: one `NAME [WEIGHT]` per line (libketama's server file); loads are exact
    #[arg(long, value_name = "FILE", conflicts_with = "from_config")]
    nodes_file: Option<PathBuf>,
    #[command(flatten)]
    proxy: crate::proxy_args::LayoutArgs,
    /// Balance targets: largest acceptable busiest-node load over the mean, comma-separated
    #[arg(long, value_name = "RATIOS", default_value = "1.05,1.10,1.25,1.50")]
    max_load: String,
    /// Capabilities every answer needs: remove-any, weights, replicas (comma-separated), or none
    #[arg(long, value_name = "LIST", default_value = "remove-any")]
    require: String,
    #[arg(
        long,
        value_name = "NAME",
        help = crate::names::help_list("Only routers placing keys exactly like this system", &compatible_names(), "")
    )]
    compatible_with: Option<String>,
    /// Largest router memory allowed, in bytes
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_MEMORY)]
    max_memory: u64,
    #[arg(
        long,
        value_name = "RULE",
        default_value = "latency",
        help = crate::names::help_list(
            "The rule that picks the answer among the eligible: the fastest lookup, the least memory, or the fewest keys moved",
            &Prefer::ALL.map(Prefer::name),
            ""
        )
    )]
    prefer: String,
    /// Slowest single-key lookup allowed, in ns (measured on this machine)
    #[arg(long, value_name = "NS")]
    max_lookup_ns: Option<f64>,
    /// Seed of the random clusters, keys and grown nodes
    #[arg(long, value_name = "S", default_value_t = 0x5EED)]
    seed: u64,
    /// With --nodes-file: how the cluster will grow (node counts and percentages)
    #[arg(long, value_name = "LIST", default_value = "1,25%")]
    grow: String,
    /// The benchmark's full sizes (HASHROUTE_FULL): more clusters, higher quantiles, minutes
    #[arg(long)]
    full: bool,
    /// Every candidate at every target with its evidence (the long table), not the summary
    #[arg(long, help_heading = "Output")]
    all: bool,
    /// Also draw the candidates' balance against their memory into this SVG file
    #[arg(long, value_name = "FILE.svg", help_heading = "Output")]
    plot: Option<PathBuf>,
    #[command(flatten)]
    format: FormatArgs,
}

/// Whether the environment asks for a smoke-sized run.
fn quick_env() -> bool {
    std::env::var(QUICK_ENV).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Parses `1.05,1.10` into ratios.
fn parse_targets(text: &str) -> Result<Vec<f64>, Failure> {
    text.split(',')
        .map(|t| {
            t.trim().parse::<f64>().map_err(|_| Failure::msg(format!("--max-load: {t:?} is not a number (e.g. 1.10)")))
        })
        .collect()
}

impl RecommendArgs {
    fn request(&self, from_config: Option<&crate::proxy::ProxyConfig>) -> Result<Request, Failure> {
        let mut req = match (&self.nodes_file, self.node_count) {
            _ if from_config.is_some() => {
                let config = from_config.expect("checked");
                // That exact layout, judged against the routers the proxy itself offers.
                let req = Request::for_nodes(config.nodes.clone());
                if self.compatible_with.is_none() {
                    req.compatible_with(crate::proxy_args::compatibility_name(config))
                } else {
                    req
                }
            }
            (Some(path), _) => Request::for_nodes(read_nodes_file(path)?),
            (None, Some(n)) => Request::for_node_count(n),
            (None, None) => return Err(Failure::msg("give --node-count N or --nodes-file FILE")),
        };
        let requirements = Requirement::parse_list(&self.require).map_err(|e| Failure::context("--require", e))?;
        req = req.targets(&parse_targets(&self.max_load)?).require(&requirements).seed(self.seed).full(self.full);
        req = req.grow(&self.grow).map_err(|e| Failure::context("--grow", e))?;
        if let Some(c) = &self.compatible_with {
            req = req.compatible_with(c);
        }
        req = req.max_memory(self.max_memory);
        req = req.prefer(self.prefer.parse().map_err(|e| Failure::context("--prefer", e))?);
        if let Some(ns) = self.max_lookup_ns {
            req = req.max_lookup_ns(ns);
        }
        Ok(if quick_env() { req.smoke() } else { req })
    }
}

pub(crate) fn run(args: RecommendArgs) -> Result<(), Failure> {
    let config = args.proxy.config()?;
    let request = args.request(config.as_ref())?;
    let recommendation = {
        let progress = Progress::start(args.format.format, "measuring");
        recommend_with_progress(&request, &|p| progress.step(p.done, p.total, p.doing))?
    };
    if let Some(path) = &args.plot {
        hashroute_analysis::plot::recommend_tradeoff(path, &recommendation)
            .map_err(|e| Failure::context(format!("--plot {}", path.display()), e))?;
    }
    if args.format.json() {
        let scales = match &config {
            Some(config) => crate::proxy_recommend::weight_scales(config)?,
            None => Vec::new(),
        };
        return crate::output::print_json(SCHEMA, &Json::new(&recommendation, scales));
    }
    let mut out = BufWriter::new(io::stdout().lock());
    if args.all {
        write!(out, "{recommendation}")?;
    } else {
        write!(out, "{}", recommendation.summary())?;
    }
    if let Some(config) = &config {
        crate::proxy_recommend::write_weight_scales(&mut out, config)?;
    }
    out.flush()?;
    Ok(())
}

/// The JSON document's schema name and version.
const SCHEMA: &str = "hashroute.recommend/1";

/// `recommend --format json` (docs/json.md): the request, then per target the answer, the
/// eligible candidates and the rejected ones with their reasons.
#[derive(Serialize)]
struct Json<'a> {
    cluster: &'a str,
    node_count: usize,
    constraints: &'a str,
    prefer: &'static str,
    targets: Vec<TargetJson<'a>>,
    /// `--from-config` with nginx or HAProxy: the balance with every weight scaled.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    weight_scales: Vec<crate::proxy_recommend::WeightScale>,
}

#[derive(Serialize)]
struct TargetJson<'a> {
    max_load: f64,
    answer: Option<&'a str>,
    rule: &'a str,
    ring_vnodes: Option<u64>,
    closed_form_vnodes: u64,
    ring_evidence: &'a str,
    grow: Vec<GrowJson<'a>>,
    eligible: Vec<CandidateJson<'a>>,
    rejected: Vec<CandidateJson<'a>>,
}

#[derive(Serialize)]
struct GrowJson<'a> {
    label: &'a str,
    added: usize,
    trials: usize,
    median_max_over_mean: f64,
    worst_max_over_mean: f64,
}

#[derive(Serialize)]
struct CandidateJson<'a> {
    candidate: &'a str,
    algorithm: &'static str,
    vnodes: Option<u64>,
    /// `null` when not measured.
    max_over_mean: Option<f64>,
    memory_bytes: Option<usize>,
    lookup_ns: Option<f64>,
    moved_plus: Option<f64>,
    moved_minus: Option<f64>,
    evidence: &'a str,
    movement: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
}

impl<'a> Json<'a> {
    fn new(rec: &'a Recommendation, weight_scales: Vec<crate::proxy_recommend::WeightScale>) -> Json<'a> {
        Json {
            cluster: &rec.cluster,
            node_count: rec.node_count,
            constraints: &rec.constraints,
            prefer: rec.prefer.name(),
            targets: rec.answers.iter().map(TargetJson::new).collect(),
            weight_scales,
        }
    }
}

impl<'a> TargetJson<'a> {
    fn new(a: &'a TargetAnswer) -> TargetJson<'a> {
        let (eligible, rejected): (Vec<&Verdict>, Vec<&Verdict>) = a.verdicts().partition(|v| v.rejected.is_none());
        TargetJson {
            max_load: a.max_load,
            answer: a.answer.as_deref(),
            rule: &a.rule,
            ring_vnodes: a.ring.vnodes,
            closed_form_vnodes: a.closed_form_vnodes,
            ring_evidence: &a.ring.evidence,
            grow: a
                .grow
                .iter()
                .map(|g| GrowJson {
                    label: &g.label,
                    added: g.added,
                    trials: g.trials,
                    median_max_over_mean: g.median_max_over_mean,
                    worst_max_over_mean: g.worst_max_over_mean,
                })
                .collect(),
            eligible: eligible.into_iter().map(CandidateJson::new).collect(),
            rejected: rejected.into_iter().map(CandidateJson::new).collect(),
        }
    }
}

impl<'a> CandidateJson<'a> {
    fn new(v: &'a Verdict) -> CandidateJson<'a> {
        CandidateJson {
            candidate: &v.candidate,
            algorithm: v.algorithm.name(),
            vnodes: v.vnodes,
            max_over_mean: Some(v.max_over_mean).filter(|m| m.is_finite()),
            memory_bytes: v.memory_bytes,
            lookup_ns: v.lookup_ns.filter(|x| x.is_finite()),
            moved_plus: v.moved_plus.filter(|x| x.is_finite()),
            moved_minus: v.moved_minus.filter(|x| x.is_finite()),
            evidence: &v.evidence,
            movement: &v.movement,
            reason: v.rejected.as_deref(),
        }
    }
}

//! Which algorithm, how many vnodes: the answer `cargo bench` prints and `hashroute recommend`
//! gives, from the same code.
//!
//! For each balance target the ring's vnode count is first **aimed** with the closed form
//! ([`ring_vnodes_for`](super::ring_vnodes_for)) and then **confirmed** on exact arc loads,
//! bisecting on V around the estimate: over random clusters (as many as the effort's point
//! budget allows; the quoted tail quantile is the one that cluster count supports — p99 needs
//! 100 — and is said), or, for a given node list, on that very cluster. Where V × N exceeds the
//! ring's point cap the closed-form V is given, marked not buildable, with the best buildable
//! alternative. Every other algorithm of the registry is judged on the same target: exactly
//! (Ketama, slots, Maglev, modulo) or by sampled keys with the sampling noise stated, then
//! filtered by the user's constraints; the cheapest survivor (memory, then lookup time) is the
//! answer, and each rejection says why.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use crate::closed_form::{ring_tail, ring_vnodes_for};
use crate::rng::SplitMix64;
use crate::stats::{median, quantile};
use crate::sweep::{
    balance_cell, candidates, cluster_balance, cluster_names, lookup_ns, ring_candidate, sample_keys, BalanceCell,
    Candidate, LoadModel, SweepConfig,
};
use hashroute::KetamaVariant;
use hashroute::{Algorithm, RouterSpec};
use hashroute::{Error, Result};
use hashroute::{Node, NodeSet, Router};

const DEFAULT_TARGETS: [f64; 4] = [1.05, 1.10, 1.25, 1.50];

const MAX_NODE_COUNT: usize = 1_000_000;
const COMPATIBLE_NAMES: &str = "ketama (libketama), uhashring, libmemcached, spymemcached, python-hash-ring, \
                                twemproxy, libmemcached-oaat, redis-slots, maglev-envoy, nginx, haproxy, envoy-ring";

/// A capability the user needs, used to filter candidates (`--require`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Requirement {
    /// Any node can be removed with only its keys moving (rules out jump, JumpBack, FlipHash,
    /// power and binomial, which only drop their last bucket; JumpBackAnchor qualifies).
    RemoveAny,
    /// Node weights change the share of keys.
    Weights,
    /// A preference list: replicas and failover (rules out Redis slots).
    Replicas,
}

impl Requirement {
    /// Parses a comma-separated list (`remove-any,weights,replicas`); `none` or an empty string
    /// is the empty list.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming an unknown requirement.
    pub fn parse_list(text: &str) -> Result<Vec<Requirement>> {
        let text = text.trim();
        if text.is_empty() || text == "none" {
            return Ok(Vec::new());
        }
        text.split(',').map(|t| t.trim().parse()).collect()
    }

    fn name(self) -> &'static str {
        match self {
            Requirement::RemoveAny => "remove-any",
            Requirement::Weights => "weights",
            Requirement::Replicas => "replicas",
        }
    }

    fn met_by(self, a: Algorithm) -> bool {
        match self {
            Requirement::RemoveAny => a.removes_any_node(),
            Requirement::Weights => a.supports_weights(),
            Requirement::Replicas => a.has_preference_list(),
        }
    }
}

impl FromStr for Requirement {
    type Err = Error;
    fn from_str(s: &str) -> Result<Requirement> {
        match s {
            "remove-any" => Ok(Requirement::RemoveAny),
            "weights" => Ok(Requirement::Weights),
            "replicas" => Ok(Requirement::Replicas),
            other => Err(Error::InvalidParameter {
                name: "requirement",
                reason: format!("unknown requirement {other:?} (expected remove-any, weights, replicas or none)"),
            }),
        }
    }
}

/// What to recommend for: a cluster (a node count, or the user's own node list), the balance
/// targets, the constraints, and how hard to measure. Built with [`Request::for_node_count`] or
/// [`Request::for_nodes`] and the methods below; checked by [`recommend`].
#[derive(Clone, Debug)]
pub struct Request {
    cluster: Cluster,
    targets: Vec<f64>,
    requirements: Vec<Requirement>,
    compatible_with: Option<String>,
    max_memory: Option<u64>,
    max_lookup_ns: Option<f64>,
    seed: u64,
    effort: Effort,
    grow: Vec<Grow>,
    measure_lookup: bool,
}

#[derive(Clone, Debug)]
enum Cluster {
    Count(usize),
    Nodes(NodeSet),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Effort {
    Smoke,
    Default,
    Full,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Grow {
    Nodes(usize),
    Percent(f64),
}

impl Request {
    /// The default balance targets: the busiest node's load over the mean at most 5%, 10%, 25%
    /// and 50% above it (the tail quantile over random clusters, or the exact value for a node
    /// list).
    pub const DEFAULT_TARGETS: [f64; 4] = DEFAULT_TARGETS;

    fn new(cluster: Cluster) -> Request {
        Request {
            cluster,
            targets: DEFAULT_TARGETS.to_vec(),
            requirements: vec![Requirement::RemoveAny],
            compatible_with: None,
            max_memory: None,
            max_lookup_ns: None,
            seed: 0x5EED,
            effort: Effort::Default,
            grow: vec![Grow::Nodes(1), Grow::Percent(25.0)],
            measure_lookup: true,
        }
    }

    /// A recommendation for random clusters of `nodes` nodes (1 to 1,000,000).
    pub fn for_node_count(nodes: usize) -> Request {
        Request::new(Cluster::Count(nodes))
    }

    /// A recommendation for this node list (names and weights): exact loads where the
    /// algorithm allows, and the spread after the cluster grows ([`Request::grow`]).
    pub fn for_nodes(nodes: NodeSet) -> Request {
        Request::new(Cluster::Nodes(nodes))
    }

    /// The balance targets (max/mean ratios above 1; default [`Request::DEFAULT_TARGETS`]).
    pub fn targets(mut self, targets: &[f64]) -> Request {
        self.targets = targets.to_vec();
        self
    }

    /// The capabilities every answer must have (default: [`Requirement::RemoveAny`], what most
    /// users asking about vnodes need; pass `&[]` for none).
    pub fn require(mut self, requirements: &[Requirement]) -> Request {
        self.requirements = requirements.to_vec();
        self
    }

    /// Only routers that place keys exactly as `name` does: a Ketama client (`ketama`,
    /// `libketama`, `uhashring`, `libmemcached`, `spymemcached`, `python-hash-ring`, `twemproxy`,
    /// `libmemcached-oaat`), `redis-slots`, `maglev-envoy`, or a proxy (`nginx`, `haproxy`,
    /// `envoy-ring`). Checked by [`recommend`].
    pub fn compatible_with(mut self, name: &str) -> Request {
        self.compatible_with = Some(name.to_string());
        self
    }

    /// The most memory a router may take, in bytes.
    pub fn max_memory(mut self, bytes: u64) -> Request {
        self.max_memory = Some(bytes);
        self
    }

    /// The slowest single-key lookup allowed, in nanoseconds (measured here, so machine-bound).
    pub fn max_lookup_ns(mut self, ns: f64) -> Request {
        self.max_lookup_ns = Some(ns);
        self
    }

    /// The seed of the random clusters, keys and added nodes (default 0x5EED).
    pub fn seed(mut self, seed: u64) -> Request {
        self.seed = seed;
        self
    }

    /// The publication-grade effort (`--full`, `HASHROUTE_FULL`): more clusters per
    /// confirmation, so higher quantiles are supported at larger N; minutes instead of seconds.
    pub fn full(mut self, full: bool) -> Request {
        self.effort = if full { Effort::Full } else { Effort::Default };
        self
    }

    /// The smoke effort (`HASHROUTE_QUICK`): few clusters, no lookup timing; for CI.
    pub fn smoke(mut self) -> Request {
        self.effort = Effort::Smoke;
        self.measure_lookup = false;
        self
    }

    /// Whether to time lookups (≈ 0.1 s per candidate; memory is always exact). Default on.
    pub fn measure_lookup(mut self, on: bool) -> Request {
        self.measure_lookup = on;
        self
    }

    /// How the cluster will grow, for a node list: a comma-separated list of node counts and
    /// percentages (`1,25%`, the default). Each is simulated by adding random names.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for an item that is neither a positive count nor a positive
    /// percentage.
    pub fn grow(mut self, spec: &str) -> Result<Request> {
        let bad = |item: &str| Error::InvalidParameter {
            name: "grow",
            reason: format!("{item:?} is not a positive node count or percentage (e.g. 1,25%)"),
        };
        self.grow = spec
            .split(',')
            .map(|item| {
                let item = item.trim();
                match item.strip_suffix('%') {
                    Some(p) => p.parse::<f64>().ok().filter(|p| p.is_finite() && *p > 0.0).map(Grow::Percent),
                    None => item.parse::<usize>().ok().filter(|&n| n > 0).map(Grow::Nodes),
                }
                .ok_or_else(|| bad(item))
            })
            .collect::<Result<_>>()?;
        Ok(self)
    }

    fn node_count(&self) -> usize {
        match &self.cluster {
            Cluster::Count(n) => *n,
            Cluster::Nodes(set) => set.len(),
        }
    }

    fn validate(&self) -> Result<()> {
        let n = self.node_count();
        if n == 0 || n > MAX_NODE_COUNT {
            return Err(Error::InvalidParameter { name: "node count", reason: format!("{n} is not in 1..=1000000") });
        }
        if self.targets.is_empty() {
            return Err(Error::InvalidParameter { name: "max load", reason: "no target given".into() });
        }
        for &t in &self.targets {
            if !t.is_finite() || t <= 1.0 {
                return Err(Error::InvalidParameter {
                    name: "max load",
                    reason: format!("{t} must be a finite ratio above 1.0 (e.g. 1.10)"),
                });
            }
        }
        if let Some(ns) = self.max_lookup_ns.filter(|ns| !ns.is_finite() || *ns <= 0.0) {
            return Err(Error::InvalidParameter { name: "max lookup ns", reason: format!("{ns} is not positive") });
        }
        self.compatibility().map(|_| ())
    }

    /// The algorithm (and Ketama variant) the compatibility constraint admits, if any.
    fn compatibility(&self) -> Result<Option<(Algorithm, Option<KetamaVariant>)>> {
        let Some(name) = self.compatible_with.as_deref() else { return Ok(None) };
        let found = match name {
            "ketama" => Some((Algorithm::Ketama, Some(KetamaVariant::Libketama))),
            "redis-slots" => Some((Algorithm::Slots, None)),
            "maglev-envoy" => Some((Algorithm::Maglev, None)),
            "nginx" => Some((Algorithm::Nginx, None)),
            "haproxy" => Some((Algorithm::Haproxy, None)),
            "envoy-ring" => Some((Algorithm::EnvoyRing, None)),
            other => KetamaVariant::from_name(other).ok().map(|v| (Algorithm::Ketama, Some(v))),
        };
        found.map(Some).ok_or_else(|| Error::InvalidParameter {
            name: "compatible-with",
            reason: format!("unknown system {name:?} (expected one of {COMPATIBLE_NAMES})"),
        })
    }

    fn config(&self) -> SweepConfig {
        let base = match self.effort {
            Effort::Smoke => {
                SweepConfig { clusters: 20, point_budget: 200_000, sample_keys: 10_000, ..SweepConfig::quick() }
            }
            Effort::Default => SweepConfig::quick(),
            Effort::Full => SweepConfig::full(),
        };
        SweepConfig { seed: self.seed, ..base }
    }

    /// Ring points one confirmation (one V over all its clusters) may build.
    fn point_budget(&self) -> u64 {
        match self.effort {
            Effort::Smoke => 2_000_000,
            Effort::Default => 20_000_000,
            Effort::Full => 400_000_000,
        }
    }
}

/// One candidate's verdict on one target.
#[derive(Clone, Debug)]
pub struct Verdict {
    /// Candidate name (`ring-v1380`, `maglev`, …).
    pub candidate: String,
    /// Its algorithm.
    pub algorithm: Algorithm,
    /// Vnodes per node, for rings (and Ketama's fixed 160).
    pub vnodes: Option<u64>,
    /// The measured (or, when `estimate_only`, the closed-form) busiest-node load over the mean.
    pub max_over_mean: f64,
    /// How `max_over_mean` was obtained: quantile, clusters, exact or sampled with its noise.
    pub evidence: String,
    /// Router memory in bytes, when built.
    pub memory_bytes: Option<usize>,
    /// Single-key lookup time in ns (hash included), when measured.
    pub lookup_ns: Option<f64>,
    /// Whether it meets the target (a sampled router also when its spread is within sampling
    /// noise of a perfect router's).
    pub meets: bool,
    /// Why it is not eligible, if it is not: a failed target or an unmet constraint.
    pub rejected: Option<String>,
    /// True when the figure is the closed-form estimate only (the ring would exceed the point
    /// cap, so nothing was built).
    pub estimate_only: bool,
}

/// How the busiest node fares after the cluster grows (node lists only).
#[derive(Clone, Debug, PartialEq)]
pub struct GrowSpread {
    /// `+1`, `+25%`, …
    pub label: String,
    /// Nodes added.
    pub added: usize,
    /// Random additions simulated.
    pub trials: usize,
    /// Median over the trials of the grown cluster's max/mean.
    pub median_max_over_mean: f64,
    /// The worst trial.
    pub worst_max_over_mean: f64,
}

/// The answer for one balance target.
#[derive(Clone, Debug)]
pub struct TargetAnswer {
    /// The target: busiest node's load over the mean at most this.
    pub max_load: f64,
    /// The closed-form vnode count for the quoted quantile (the estimate the search started
    /// from).
    pub closed_form_vnodes: u64,
    /// The ring's answer: the smallest V confirmed on exact loads, or the closed-form V marked
    /// `estimate_only` when not buildable.
    pub ring: Verdict,
    /// The ring at that V after the cluster grows (node lists only).
    pub grow: Vec<GrowSpread>,
    /// Every other algorithm's verdict.
    pub others: Vec<Verdict>,
    /// The cheapest eligible candidate (memory, then lookup time), if any.
    pub cheapest: Option<String>,
}

/// The recommendation: one [`TargetAnswer`] per target.
#[derive(Clone, Debug)]
pub struct Recommendation {
    /// Node count.
    pub node_count: usize,
    /// What was measured: random clusters (with the seed) or the given node list.
    pub cluster: String,
    /// The constraints applied, as text.
    pub constraints: String,
    /// One answer per target, in the order given.
    pub answers: Vec<TargetAnswer>,
}

/// Recommends a ring vnode count and the cheapest algorithm for every target of `request`.
/// Cost: seconds to a minute at the default effort (each ring confirmation builds at most 20 M
/// points, at least one cluster), minutes with [`Request::full`] (400 M).
///
/// # Errors
/// [`Error::InvalidParameter`] for a node count outside 1..=1,000,000, a target not above 1.0,
/// an unknown compatibility name; node-set and build errors of the candidates are reported as
/// rejections, not errors.
pub fn recommend(request: &Request) -> Result<Recommendation> {
    request.validate()?;
    let n = request.node_count();
    let mut eval = Evaluator::new(request);
    let others = eval.others()?;
    let answers = request.targets.iter().map(|&t| eval.answer(t, &others)).collect::<Result<Vec<_>>>()?;
    let cluster = match &request.cluster {
        Cluster::Count(_) => format!("random clusters of {n} nodes (seed {:#x})", request.seed),
        Cluster::Nodes(_) => format!("the given {n} nodes"),
    };
    Ok(Recommendation { node_count: n, cluster, constraints: request.constraints_text(), answers })
}

impl Request {
    fn constraints_text(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        let reqs: Vec<&str> = self.requirements.iter().map(|r| r.name()).collect();
        parts.push(format!("require {}", if reqs.is_empty() { "nothing".to_string() } else { reqs.join(",") }));
        if let Some(c) = &self.compatible_with {
            parts.push(format!("compatible with {c}"));
        }
        if let Some(m) = self.max_memory {
            parts.push(format!("memory <= {m} B"));
        }
        if let Some(ns) = self.max_lookup_ns {
            parts.push(format!("lookup <= {ns} ns"));
        }
        parts.join(", ")
    }
}

/// The ring search's fixed parameters for one target.
struct Search {
    clusters: usize,
    q: f64,
    target: f64,
    cap: u64,
}

/// One measured candidate, before a target judges it.
#[derive(Clone, Debug)]
struct Measured {
    cand_name: String,
    algorithm: Algorithm,
    vnodes: Option<u64>,
    cell: BalanceCell,
    lookup_ns: Option<f64>,
}

/// Measures and caches: ring cells by V, the other algorithms once.
struct Evaluator<'a> {
    req: &'a Request,
    cfg: SweepConfig,
    rings: BTreeMap<(u64, usize), BalanceCell>,
}

impl<'a> Evaluator<'a> {
    fn new(req: &'a Request) -> Evaluator<'a> {
        Evaluator { req, cfg: req.config(), rings: BTreeMap::new() }
    }

    /// Clusters a ring confirmation at `v` gets, and the quantile that count supports.
    fn plan(&self, v: u64) -> (usize, f64, &'static str) {
        if matches!(self.req.cluster, Cluster::Nodes(_)) {
            return (1, 0.5, "this cluster");
        }
        let points = (self.req.node_count() as u64).saturating_mul(v).max(1);
        let clusters = (self.req.point_budget() / points).clamp(1, 100) as usize;
        match clusters {
            c if c >= 100 => (c, 0.99, "p99"),
            c if c >= 20 => (c, 0.95, "p95"),
            c if c >= 10 => (c, 0.90, "p90"),
            c => (c, 0.5, "median"),
        }
    }

    /// The exact ring cell at `v` (with `clusters` random clusters, or the node list).
    fn ring_cell(&mut self, v: u64, clusters: usize) -> Result<BalanceCell> {
        if let Some(c) = self.rings.get(&(v, clusters)) {
            return Ok(c.clone());
        }
        let cand = ring_candidate(u32::try_from(v).unwrap_or(u32::MAX));
        let cell = match &self.req.cluster {
            Cluster::Count(n) => {
                let cfg = SweepConfig { clusters, min_clusters: clusters, point_budget: u64::MAX, ..self.cfg.clone() };
                balance_cell(&cand, *n, &cfg)?
            }
            Cluster::Nodes(set) => single_cluster_cell(&cand, set, 0, self.req.seed)?,
        };
        self.rings.insert((v, clusters), cell.clone());
        Ok(cell)
    }

    /// The tail the confirmation quotes at `v`: the planned quantile over clusters.
    fn ring_tail_at(&mut self, v: u64, clusters: usize, q: f64) -> Result<f64> {
        let cell = self.ring_cell(v, clusters)?;
        Ok(if q >= 1.0 || clusters == 1 { cell.max_over_mean } else { cell_quantile(&cell, q) })
    }

    fn others(&mut self) -> Result<Vec<Measured>> {
        let mut out = Vec::new();
        for cand in candidates().into_iter().filter(|c| c.algorithm != Algorithm::Ring) {
            let cand = self.compatible_variant(cand);
            // Rejected by an algorithm-level constraint: no need to measure it.
            if let Some(why) = self.algorithm_failure(cand.algorithm) {
                out.push(not_measured(&cand, why));
                continue;
            }
            let cell = match &self.req.cluster {
                Cluster::Count(n) => balance_cell(&cand, *n, &self.cfg),
                Cluster::Nodes(set) => single_cluster_cell(&cand, set, self.cfg.sample_keys, self.req.seed),
            };
            let cell = match cell {
                Ok(c) => c,
                Err(e) => {
                    out.push(unbuildable(&cand, e));
                    continue;
                }
            };
            let lookup = self.lookup(&cand)?;
            out.push(Measured {
                cand_name: cand.name.clone(),
                algorithm: cand.algorithm,
                vnodes: cand.vnodes.map(u64::from),
                cell,
                lookup_ns: lookup,
            });
        }
        Ok(out)
    }

    /// The Ketama candidate in the variant the compatibility constraint names.
    fn compatible_variant(&self, cand: Candidate) -> Candidate {
        match self.req.compatibility() {
            Ok(Some((Algorithm::Ketama, Some(v)))) if cand.algorithm == Algorithm::Ketama => {
                let spec = RouterSpec::new(Algorithm::Ketama).with_ketama_variant(v);
                Candidate::from_spec(format!("ketama-{}", v.name()), "ketama", spec)
            }
            _ => cand,
        }
    }

    fn nodes(&self) -> Result<NodeSet> {
        match &self.req.cluster {
            Cluster::Count(n) => NodeSet::from_names(cluster_names(self.cfg.seed, *n)),
            Cluster::Nodes(set) => Ok(set.clone()),
        }
    }

    fn lookup(&self, cand: &Candidate) -> Result<Option<f64>> {
        if !self.req.measure_lookup {
            return Ok(None);
        }
        let Ok(router) = (cand.build)(&self.nodes()?) else { return Ok(None) };
        let keys = sample_keys(if cand.linear_lookup { 5_000 } else { 50_000 }, self.req.seed ^ 11);
        Ok(Some(lookup_ns(&router, &keys, 3).0))
    }
}

/// A candidate that could not be built here (e.g. Maglev past its table size): its verdict
/// says why.
fn unbuildable(cand: &Candidate, e: Error) -> Measured {
    not_measured(cand, format!("not built: {e}"))
}

/// A candidate rejected without measuring it (`why` is its verdict).
fn not_measured(cand: &Candidate, why: String) -> Measured {
    let cell = BalanceCell {
        candidate: cand.name.clone(),
        nodes: 0,
        clusters: 0,
        keys: 0,
        exact: false,
        std_dev_pct: f64::NAN,
        max_over_mean: f64::INFINITY,
        min_over_mean: 0.0,
        max_share_pct: f64::NAN,
        min_share_pct: f64::NAN,
        tail: NOT_BUILT,
        tail_max_over_mean: f64::INFINITY,
        max_dev_pct: f64::NAN,
        within_5pct: 0.0,
        noise_std_pct: 0.0,
        memory_bytes: 0,
        build_ns: 0.0,
        cluster_maxes: Vec::new(),
    };
    Measured { cand_name: why, algorithm: cand.algorithm, vnodes: None, cell, lookup_ns: None }
}

const NOT_BUILT: &str = "not built";

/// A balance cell for one given cluster: exact for arc- and table-based routers, `keys`
/// sampled keys otherwise.
fn single_cluster_cell(cand: &Candidate, nodes: &NodeSet, keys: usize, seed: u64) -> Result<BalanceCell> {
    let exact = matches!(cand.model, LoadModel::Partition(_) | LoadModel::Table(_) | LoadModel::Modulo);
    let keys = if exact { 0 } else { keys.max(1) };
    let (balance, _) = cluster_balance(cand, nodes, keys, seed)?;
    let router = (cand.build)(nodes)?;
    Ok(BalanceCell {
        candidate: cand.name.clone(),
        nodes: nodes.len(),
        clusters: 1,
        keys,
        exact,
        std_dev_pct: balance.std_dev_pct,
        max_over_mean: balance.max_over_mean,
        min_over_mean: balance.min_over_mean,
        max_share_pct: balance.max_share_pct,
        min_share_pct: balance.min_share_pct,
        tail: "this cluster",
        tail_max_over_mean: balance.max_over_mean,
        max_dev_pct: 100.0 * (balance.max_over_mean - 1.0).max(1.0 - balance.min_over_mean),
        within_5pct: 0.0,
        noise_std_pct: if keys > 0 { 100.0 * ((nodes.len() as f64 - 1.0) / keys as f64).sqrt() } else { 0.0 },
        memory_bytes: router.memory_bytes(),
        build_ns: 0.0,
        cluster_maxes: vec![balance.max_over_mean],
    })
}

/// The `q` quantile over the cell's clusters of max/mean.
fn cell_quantile(cell: &BalanceCell, q: f64) -> f64 {
    if cell.cluster_maxes.is_empty() {
        cell.tail_max_over_mean
    } else {
        quantile(&cell.cluster_maxes, q)
    }
}

impl Evaluator<'_> {
    fn answer(&mut self, target: f64, others: &[Measured]) -> Result<TargetAnswer> {
        let n = self.req.node_count();
        let quick_q = self.plan(ring_vnodes_for(n, target, 0.99)?).1;
        let q = if quick_q >= 1.0 { 0.5 } else { quick_q };
        let estimate = ring_vnodes_for(n, target, q)?;
        let ring = self.ring_verdict(target, estimate)?;
        let grow = match (&self.req.cluster, ring.estimate_only) {
            (Cluster::Nodes(set), false) => self.grow_spread(set, ring.vnodes.unwrap_or(1))?,
            _ => Vec::new(),
        };
        let mut verdicts: Vec<Verdict> = others.iter().map(|m| self.judge(m, target)).collect();
        let mut ring = ring;
        self.constrain(&mut ring);
        for v in &mut verdicts {
            self.constrain(v);
        }
        let cheapest = std::iter::once(&ring)
            .chain(&verdicts)
            .filter(|v| v.rejected.is_none() && !v.estimate_only)
            .min_by(|a, b| {
                a.memory_bytes
                    .cmp(&b.memory_bytes)
                    .then(a.lookup_ns.unwrap_or(f64::MAX).total_cmp(&b.lookup_ns.unwrap_or(f64::MAX)))
            })
            .map(|v| v.candidate.clone());
        if ring.estimate_only {
            let best = cheapest.as_deref().unwrap_or("none meets every constraint");
            ring.evidence = format!("{}; best buildable alternative: {best}", ring.evidence);
        }
        let closed_form_vnodes = if ring.estimate_only { ring.vnodes.unwrap_or(estimate) } else { estimate };
        Ok(TargetAnswer { max_load: target, closed_form_vnodes, ring, grow, others: verdicts, cheapest })
    }

    /// The smallest V confirmed on exact loads, searching around the closed-form `estimate`.
    fn ring_verdict(&mut self, target: f64, estimate: u64) -> Result<Verdict> {
        let n = self.req.node_count() as u64;
        let cap = (hashroute::Ring::MAX_POINTS / n.max(1)).min(u64::from(hashroute::Ring::MAX_VNODES));
        let (clusters, q, label) = self.plan(estimate.min(cap));
        if estimate > cap {
            // Nothing is built, so quote the closed form at the quantile users ask for.
            let p99 = ring_vnodes_for(self.req.node_count(), target, 0.99)?;
            return Ok(self.estimate_only(target, p99, "p99", cap));
        }
        let search = Search { clusters, q, target, cap };
        let Some((lo, hi)) = self.bracket(&search, estimate.max(1))? else {
            let p99 = ring_vnodes_for(self.req.node_count(), target, 0.99)?.max(cap + 1);
            return Ok(self.estimate_only(target, p99, "p99", cap));
        };
        let (lo, hi) = self.bisect(&search, lo, hi)?;
        self.confirmed(hi, lo, &search, label)
    }

    fn meets(&mut self, s: &Search, v: u64) -> Result<bool> {
        Ok(self.ring_tail_at(v, s.clusters, s.q)? <= s.target)
    }

    /// `(lo, hi)` with `lo` failing (or 0) and `hi` meeting the target, stepping by a quarter
    /// from `start`; `None` when even the cap fails.
    fn bracket(&mut self, s: &Search, start: u64) -> Result<Option<(u64, u64)>> {
        if self.meets(s, start)? {
            let mut hi = start;
            while hi > 1 {
                let probe = (hi * 3 / 4).max(1);
                if !self.meets(s, probe)? {
                    return Ok(Some((probe, hi)));
                }
                hi = probe;
            }
            return Ok(Some((0, hi)));
        }
        let mut lo = start;
        loop {
            if lo >= s.cap {
                return Ok(None);
            }
            let hi = (lo + lo / 4).max(lo + 1).min(s.cap);
            if self.meets(s, hi)? {
                return Ok(Some((lo, hi)));
            }
            lo = hi;
        }
    }

    /// Narrows `(lo, hi)` to 4% of `hi` (or one vnode): each step builds `clusters` rings.
    fn bisect(&mut self, s: &Search, mut lo: u64, mut hi: u64) -> Result<(u64, u64)> {
        while hi - lo > 1 && hi - lo > hi / 25 {
            let mid = lo + (hi - lo) / 2;
            if self.meets(s, mid)? {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Ok((lo, hi))
    }

    fn confirmed(&mut self, v: u64, lo: u64, s: &Search, label: &str) -> Result<Verdict> {
        let cell = self.ring_cell(v, s.clusters)?;
        let tail = self.ring_tail_at(v, s.clusters, s.q)?;
        let closed = ring_tail(v as f64, self.req.node_count(), s.q)?;
        let evidence = match self.req.cluster {
            Cluster::Nodes(_) => format!("exact loads of this cluster (closed form {closed:.3} at the median)"),
            Cluster::Count(_) => format!(
                "{} random cluster{}, exact loads (closed form {closed:.3}); {}",
                if s.clusters == 1 { "one".to_string() } else { format!("{label} over {}", s.clusters) },
                if s.clusters == 1 { " (its busiest node, against the closed form's median)" } else { "s" },
                if lo == 0 { "V=1 is the least".to_string() } else { format!("V={lo} fails") }
            ),
        };
        let lookup = if self.req.measure_lookup { self.lookup(&ring_candidate(v as u32))? } else { None };
        Ok(Verdict {
            candidate: format!("ring-v{v}"),
            algorithm: Algorithm::Ring,
            vnodes: Some(v),
            max_over_mean: tail,
            evidence,
            memory_bytes: Some(cell.memory_bytes),
            lookup_ns: lookup,
            meets: true,
            rejected: None,
            estimate_only: false,
        })
    }

    fn estimate_only(&self, target: f64, estimate: u64, label: &str, cap: u64) -> Verdict {
        let n = self.req.node_count();
        Verdict {
            candidate: format!("ring-v{estimate}"),
            algorithm: Algorithm::Ring,
            vnodes: Some(estimate),
            max_over_mean: target,
            evidence: format!(
                "estimate; not buildable (> cap): {estimate} x {n} points exceed the ring's cap of {} \
                 (at most {cap} vnodes here); closed form at {label}",
                hashroute::Ring::MAX_POINTS
            ),
            memory_bytes: None,
            lookup_ns: None,
            meets: false,
            rejected: Some("not buildable: more points than the ring's cap".into()),
            estimate_only: true,
        }
    }

    fn grow_spread(&mut self, set: &NodeSet, v: u64) -> Result<Vec<GrowSpread>> {
        let trials = match self.req.effort {
            Effort::Smoke => 3,
            Effort::Default => 10,
            Effort::Full => 30,
        };
        let cand = ring_candidate(v as u32);
        let mut out = Vec::new();
        for g in &self.req.grow {
            let (added, label) = match *g {
                Grow::Nodes(k) => (k, format!("+{k}")),
                Grow::Percent(p) => (((set.len() as f64 * p / 100.0).round() as usize).max(1), format!("+{p}%")),
            };
            let mut maxes = Vec::with_capacity(trials);
            for t in 0..trials {
                let grown = grow_set(set, added, self.req.seed ^ (t as u64 + 1).wrapping_mul(0x9E37_79B9))?;
                maxes.push(cluster_balance(&cand, &grown, 0, 0)?.0.max_over_mean);
            }
            let worst = maxes.iter().copied().fold(0.0, f64::max);
            out.push(GrowSpread {
                label,
                added,
                trials,
                median_max_over_mean: median(&maxes),
                worst_max_over_mean: worst,
            });
        }
        Ok(out)
    }

    /// A measured candidate judged on `target`.
    fn judge(&self, m: &Measured, target: f64) -> Verdict {
        let c = &m.cell;
        let (tail, evidence) = if c.tail == NOT_BUILT {
            (f64::INFINITY, "not measured".to_string())
        } else if c.exact {
            (c.tail_max_over_mean, format!("{} over {} clusters, exact", c.tail, c.clusters))
        } else {
            let e = format!(
                "{} over {} clusters x {} keys, sampled (noise sd {:.1}%)",
                c.tail, c.clusters, c.keys, c.noise_std_pct
            );
            (c.tail_max_over_mean, e)
        };
        // A router whose shares are exact in expectation, measured with a spread no larger than
        // key sampling alone would give, meets any target: only the sample is uneven. Any other
        // sampled router must show its tail under the target.
        let within_noise = !c.exact && m.algorithm.balanced_in_expectation() && c.std_dev_pct <= 1.2 * c.noise_std_pct;
        let meets = tail <= target || within_noise;
        let rejected = if c.tail == NOT_BUILT {
            Some(m.cand_name.clone())
        } else if !meets && !c.exact && c.noise_std_pct >= 100.0 * (target - 1.0) {
            Some(format!(
                "max/mean {tail:.3} > {target}; the sample ({} keys, noise sd {:.1}%) cannot confirm the target",
                c.keys, c.noise_std_pct
            ))
        } else if !meets {
            Some(format!("max/mean {tail:.3} > {target}"))
        } else {
            None
        };
        let evidence = if within_noise && tail > target {
            format!("{evidence}; spread within sampling noise of a perfect router")
        } else {
            evidence
        };
        Verdict {
            candidate: c.candidate.clone(),
            algorithm: m.algorithm,
            vnodes: m.vnodes,
            max_over_mean: tail,
            evidence,
            memory_bytes: (c.tail != NOT_BUILT).then_some(c.memory_bytes),
            lookup_ns: m.lookup_ns,
            meets,
            rejected,
            estimate_only: false,
        }
    }

    /// Applies the user's constraints to a verdict (the first failing one is the reason).
    fn constrain(&self, v: &mut Verdict) {
        if v.rejected.is_some() {
            return;
        }
        let why = self.constraint_failure(v);
        v.rejected = why;
    }

    /// The first constraint `algorithm` fails whatever its measurements: compatibility,
    /// consistency, the required capabilities.
    fn algorithm_failure(&self, algorithm: Algorithm) -> Option<String> {
        let compat = self.req.compatibility().ok().flatten();
        if let Some((algo, _)) = compat {
            if algorithm != algo {
                return Some(format!("not compatible with {}", self.req.compatible_with.as_deref().unwrap_or("")));
            }
        } else if !algorithm.is_consistent() {
            return Some("not consistent: a membership change moves most keys".into());
        }
        let unmet = self.req.requirements.iter().find(|r| !r.met_by(algorithm));
        unmet.map(|r| format!("lacks {}", r.name()))
    }

    fn constraint_failure(&self, v: &Verdict) -> Option<String> {
        if let Some(why) = self.algorithm_failure(v.algorithm) {
            return Some(why);
        }
        if let (Some(max), Some(m)) = (self.req.max_memory, v.memory_bytes) {
            if m as u64 > max {
                return Some(format!("memory {m} B > {max} B"));
            }
        }
        match (self.req.max_lookup_ns, v.lookup_ns) {
            (Some(max), Some(ns)) if ns > max => Some(format!("lookup {ns:.1} ns > {max} ns")),
            _ => None,
        }
    }
}

/// `set` plus `added` random weight-1 nodes (names shaped like the cluster's, seeded).
fn grow_set(set: &NodeSet, added: usize, seed: u64) -> Result<NodeSet> {
    let mut nodes: Vec<Node> = set.iter().map(|(_, n)| n.clone()).collect();
    let mut rng = SplitMix64::new(seed);
    let mut fresh = 0;
    while fresh < added {
        let name = format!("grown-{:016x}", rng.next_u64());
        if set.id_of(&name).is_none() {
            nodes.push(Node::new(name));
            fresh += 1;
        }
    }
    NodeSet::new(nodes)
}

impl fmt::Display for Recommendation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "recommendation for {} ({})", self.cluster, self.constraints)?;
        for a in &self.answers {
            a.fmt_into(f)?;
        }
        Ok(())
    }
}

impl TargetAnswer {
    fn fmt_into(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "\ntarget: busiest node <= {:.2} x the mean", self.max_load)?;
        let r = &self.ring;
        writeln!(
            f,
            "  ring: V = {} (closed form aimed at {}); {}",
            r.vnodes.unwrap_or(0),
            self.closed_form_vnodes,
            r.evidence
        )?;
        if !r.estimate_only {
            writeln!(
                f,
                "        max/mean {:.3}, memory {}, lookup {}",
                r.max_over_mean,
                fmt_bytes(r.memory_bytes),
                fmt_ns(r.lookup_ns)
            )?;
        }
        for g in &self.grow {
            writeln!(
                f,
                "        after {} node(s) ({}): max/mean median {:.3}, worst {:.3} over {} random additions",
                g.label, g.added, g.median_max_over_mean, g.worst_max_over_mean, g.trials
            )?;
        }
        match &self.cheapest {
            Some(c) => writeln!(f, "  answer: {c} (the cheapest meeting the target and every constraint)")?,
            None => writeln!(f, "  answer: none meets the target and every constraint")?,
        }
        writeln!(f, "  {:<22} {:>9} {:>10} {:>10}  verdict", "candidate", "max/mean", "memory", "lookup")?;
        for v in std::iter::once(r).chain(&self.others) {
            let verdict = match &v.rejected {
                None => "eligible".to_string(),
                Some(why) => format!("rejected: {why}"),
            };
            writeln!(
                f,
                "  {:<22} {:>9} {:>10} {:>10}  {verdict} [{}]",
                v.candidate,
                if v.max_over_mean.is_finite() { format!("{:.3}", v.max_over_mean) } else { "-".into() },
                fmt_bytes(v.memory_bytes),
                fmt_ns(v.lookup_ns),
                v.evidence
            )?;
        }
        Ok(())
    }
}

fn fmt_bytes(b: Option<usize>) -> String {
    match b {
        None => "-".into(),
        Some(b) if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1 << 20) as f64),
        Some(b) if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        Some(b) => format!("{b} B"),
    }
}

fn fmt_ns(ns: Option<f64>) -> String {
    ns.map_or("-".into(), |ns| format!("{ns:.1} ns"))
}

//! The measuring step of a recommendation: numbers only, no verdicts. For every candidate of
//! the registry ([`crate::sweep::candidates`]) its balance (exact from arcs or tables, or sampled
//! with the noise stated), memory, lookup time, and the keys moved by one addition and by one
//! removal as a multiple of the ideal; for the ring and the allocated token ring, the smallest V
//! whose measured balance meets a target (a search over measurements). The deciding step
//! (`decide.rs`) reads these rows; nothing here reads a verdict.

use std::collections::BTreeMap;

use hashroute::{Algorithm, AnyRouter, Error, Node, NodeSet, Result, RouterSpec};

use crate::closed_form::{ring_tail, ring_vnodes_for};
use crate::partition::Movement;
use crate::request::{Cluster, Effort, Grow, Request};
use crate::rng::SplitMix64;
use crate::stats::{median, quantile};
use crate::sweep::{
    balance_cell, candidates, cluster_balance, cluster_names, lookup_ns, ring_candidate, sample_keys, sampled_movement,
    token_ring_candidate, BalanceCell, Candidate, LoadModel, SweepConfig,
};

/// One measured candidate.
#[derive(Clone, Debug)]
pub(crate) struct Row {
    /// Candidate name (`ring-v1380`, `token-ring-v16`, `maglev`, …).
    pub(crate) candidate: String,
    pub(crate) algorithm: Algorithm,
    /// Vnodes per node (rings, Ketama's 160) or tokens per node (token rings).
    pub(crate) vnodes: Option<u64>,
    /// The balance cell; `None` when the candidate was not built (`not_built` says why) or is
    /// a closed-form estimate only.
    pub(crate) cell: Option<BalanceCell>,
    /// The quoted busiest-node load over the mean.
    pub(crate) max_over_mean: f64,
    /// How `max_over_mean` was obtained.
    pub(crate) evidence: String,
    pub(crate) not_built: Option<String>,
    /// The ring's closed-form V when V × N exceeds the point cap: nothing was built.
    pub(crate) estimate_only: bool,
    pub(crate) memory_bytes: Option<usize>,
    pub(crate) lookup_ns: Option<f64>,
    /// Keys moved by adding one node / removing one, over the ideal; `None` when not measured.
    pub(crate) moved: Moved,
}

/// Keys moved by one addition and one removal, as multiples of the ideal.
#[derive(Clone, Debug, Default)]
pub(crate) struct Moved {
    pub(crate) plus: Option<f64>,
    pub(crate) minus: Option<f64>,
    /// How they were measured (`exact`, `sampled K keys`, or why not).
    pub(crate) how: String,
}

/// Token ring allocations up to this many tokens in all are built (the allocator's cost grows
/// with them); beyond, a larger tokens-per-node count is not tried.
const TOKEN_BUDGET: u64 = 4_000_000;
/// The allocated ring's default and the largest count its search tries.
const TOKENS_DEFAULT: u64 = 16;
const TOKENS_MAX: u64 = 1024;

/// Measures and caches: ring cells by V, the fixed candidates once.
pub(crate) struct Measurer<'a> {
    req: &'a Request,
    cfg: SweepConfig,
    rings: BTreeMap<(u64, usize), BalanceCell>,
    tokens: BTreeMap<u64, Option<Row>>,
}

/// The ring search's fixed parameters for one target.
struct Search {
    clusters: usize,
    q: f64,
    target: f64,
    cap: u64,
}

impl<'a> Measurer<'a> {
    pub(crate) fn new(req: &'a Request) -> Measurer<'a> {
        Measurer { req, cfg: req.config(), rings: BTreeMap::new(), tokens: BTreeMap::new() }
    }

    /// The candidates other than the ring and the token ring (their V depends on the target),
    /// each measured once. `skip(algorithm)` names a reason not to measure it at all (a
    /// constraint it fails whatever it measures), which becomes its row's `not_built`.
    pub(crate) fn fixed(&mut self, skip: impl Fn(Algorithm) -> Option<String>) -> Result<Vec<Row>> {
        let mut out = Vec::new();
        let fixed = candidates().into_iter().filter(|c| !matches!(c.algorithm, Algorithm::Ring | Algorithm::TokenRing));
        for cand in fixed {
            let cand = self.compatible_variant(cand);
            if let Some(why) = skip(cand.algorithm) {
                out.push(not_measured(&cand, why));
                continue;
            }
            let cell = match &self.req.cluster {
                Cluster::Count(n) => balance_cell(&cand, *n, &self.cfg),
                Cluster::Nodes(set) => single_cluster_cell(&cand, set, self.cfg.sample_keys, self.req.seed),
            };
            match cell {
                Ok(cell) => out.push(self.measured(&cand, cell)?),
                Err(e) => out.push(not_measured(&cand, format!("not built: {e}"))),
            }
        }
        Ok(out)
    }

    /// A row from a balance cell: the quoted tail, and the lookup and movement measurements.
    fn measured(&self, cand: &Candidate, cell: BalanceCell) -> Result<Row> {
        let evidence = if cell.exact {
            format!("{} over {} clusters, exact", cell.tail, cell.clusters)
        } else {
            format!(
                "{} over {} clusters x {} keys, sampled (noise sd {:.1}%)",
                cell.tail, cell.clusters, cell.keys, cell.noise_std_pct
            )
        };
        Ok(Row {
            candidate: cand.name.clone(),
            algorithm: cand.algorithm,
            vnodes: cand.vnodes.map(u64::from),
            max_over_mean: cell.tail_max_over_mean,
            evidence,
            not_built: None,
            estimate_only: false,
            memory_bytes: Some(cell.memory_bytes),
            lookup_ns: self.lookup(cand)?,
            moved: self.moved(cand)?,
            cell: Some(cell),
        })
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

    /// The cluster lookups and movements are measured on: the node list, or the first random
    /// cluster.
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

    /// Keys moved by adding one node and by removing one (a middle node, or the last one for
    /// the routers that can only drop their last), through the router's own `with_node` and
    /// `without_node`: exact from arcs or tables, else sampled with enough keys to see a 1/N
    /// move (not measured where that would take too long).
    fn moved(&self, cand: &Candidate) -> Result<Moved> {
        let nodes = self.nodes()?;
        let n = nodes.len();
        let Ok(router) = (cand.build)(&nodes) else { return Ok(Moved { how: "not built".into(), ..Moved::default() }) };
        let exact = matches!(cand.model, LoadModel::Partition(_) | LoadModel::Table(_));
        let keys = ((40 * n).clamp(50_000, 2_000_000) / cand.sample_divisor.max(1)).max(10_000);
        if !exact && cand.linear_lookup && n > 2_000 {
            return Ok(Moved { how: "not measured (O(N) per key at this size)".into(), ..Moved::default() });
        }
        let seed = self.req.seed ^ 0x4D4F;
        let fresh = fresh_name(&nodes, seed);
        let victim = if cand.algorithm.removes_any_node() { n / 2 } else { n - 1 };
        let victim = nodes.iter().nth(victim).map(|(_, node)| node.name().to_owned());
        let between =
            |b: Result<AnyRouter>| -> Option<f64> { b.ok().and_then(|b| movement(&router, &b, keys, seed).ok()) };
        let plus = between(router.with_node(Node::new(fresh)));
        let minus = if n > 1 { victim.and_then(|v| between(router.without_node(&v))) } else { None };
        let how = if exact { "exact".to_string() } else { format!("sampled {keys} keys") };
        Ok(Moved { plus, minus, how })
    }

    /// The row of the ring that meets `target`: the smallest V confirmed on exact loads,
    /// searching around the closed-form `estimate`, or the closed form alone past the cap.
    pub(crate) fn ring(&mut self, target: f64) -> Result<(Row, u64)> {
        let n = self.req.node_count();
        let quick_q = self.plan(ring_vnodes_for(n, target, 0.99)?).1;
        let q = if quick_q >= 1.0 { 0.5 } else { quick_q };
        let estimate = ring_vnodes_for(n, target, q)?;
        let cap = (hashroute::Ring::MAX_POINTS / (n as u64).max(1)).min(u64::from(hashroute::Ring::MAX_VNODES));
        let (clusters, q, label) = self.plan(estimate.min(cap));
        let estimate_row = |p99: u64| estimate_only(n, p99, cap);
        if estimate > cap {
            // Nothing is built, so quote the closed form at the quantile users ask for.
            return Ok((estimate_row(ring_vnodes_for(n, target, 0.99)?), estimate));
        }
        let search = Search { clusters, q, target, cap };
        let Some((lo, hi)) = self.bracket(&search, estimate.max(1))? else {
            return Ok((estimate_row(ring_vnodes_for(n, target, 0.99)?.max(cap + 1)), estimate));
        };
        let (lo, hi) = self.bisect(&search, lo, hi)?;
        Ok((self.confirmed(hi, lo, &search, label)?, estimate))
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

    fn confirmed(&mut self, v: u64, lo: u64, s: &Search, label: &str) -> Result<Row> {
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
        let cand = ring_candidate(v as u32);
        Ok(Row {
            candidate: format!("ring-v{v}"),
            algorithm: Algorithm::Ring,
            vnodes: Some(v),
            max_over_mean: tail,
            evidence,
            not_built: None,
            estimate_only: false,
            memory_bytes: Some(cell.memory_bytes),
            lookup_ns: self.lookup(&cand)?,
            moved: self.moved(&cand)?,
            cell: Some(cell),
        })
    }

    /// The allocated token ring for `target`: 16 tokens per node, or the fewest (doubling)
    /// whose exact balance meets the target, within the allocator's budget. One ring: the
    /// allocator's result does not depend on the names (ties aside), so clusters add nothing.
    pub(crate) fn token_ring(&mut self, target: f64) -> Result<Option<Row>> {
        let n = self.req.node_count() as u64;
        let mut v = TOKENS_DEFAULT;
        let mut last = None;
        while v <= TOKENS_MAX && v.saturating_mul(n) <= TOKEN_BUDGET {
            let row = self.token_row(v)?;
            let meets = row.as_ref().is_some_and(|r| r.max_over_mean <= target);
            last = row;
            if meets || last.is_none() {
                break;
            }
            v *= 2;
        }
        Ok(last)
    }

    fn token_row(&mut self, v: u64) -> Result<Option<Row>> {
        if let Some(row) = self.tokens.get(&v) {
            return Ok(row.clone());
        }
        let cand = token_ring_candidate(v as u32);
        let row = match single_cluster_cell(&cand, &self.nodes()?, 0, self.req.seed) {
            Ok(cell) => {
                let mut row = self.measured(&cand, cell)?;
                row.evidence = format!("{v} allocated tokens per node, exact loads of one allocation");
                Some(row)
            }
            Err(_) => None,
        };
        self.tokens.insert(v, row.clone());
        Ok(row)
    }

    /// How the ring at `v` fares after the cluster grows (node lists only).
    pub(crate) fn grow_spread(&mut self, v: u64) -> Result<Vec<crate::GrowSpread>> {
        let Cluster::Nodes(set) = &self.req.cluster else { return Ok(Vec::new()) };
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
            out.push(crate::GrowSpread {
                label,
                added,
                trials,
                median_max_over_mean: median(&maxes),
                worst_max_over_mean: worst,
            });
        }
        Ok(out)
    }
}

/// The moved fraction over the ideal between two routers: exact from their structures
/// ([`hashroute::Router::arcs`]) when they place keys alike, else `keys` sampled keys.
fn movement(a: &AnyRouter, b: &AnyRouter, keys: usize, seed: u64) -> Result<f64> {
    let m: Movement = crate::partition::exact_movement(a, b).unwrap_or_else(|| sampled_movement(a, b, keys, seed));
    Ok(m.ratio())
}

/// A name not in `nodes`, seeded.
fn fresh_name(nodes: &NodeSet, seed: u64) -> String {
    let mut rng = SplitMix64::new(seed);
    loop {
        let name = format!("added-{:016x}", rng.next_u64());
        if nodes.id_of(&name).is_none() {
            return name;
        }
    }
}

/// The ring's closed form only: V × N exceeds the point cap, so nothing is built.
fn estimate_only(n: usize, estimate: u64, cap: u64) -> Row {
    Row {
        candidate: format!("ring-v{estimate}"),
        algorithm: Algorithm::Ring,
        vnodes: Some(estimate),
        cell: None,
        max_over_mean: f64::NAN,
        evidence: format!(
            "estimate, not a measurement; not buildable (> cap): {estimate} x {n} points exceed the ring's cap of {} \
             (at most {cap} vnodes here); closed form at p99",
            hashroute::Ring::MAX_POINTS
        ),
        not_built: Some("not buildable: more points than the ring's cap".into()),
        estimate_only: true,
        memory_bytes: None,
        lookup_ns: None,
        moved: Moved::default(),
    }
}

/// A candidate not measured: `why` is its row's `not_built`.
fn not_measured(cand: &Candidate, why: String) -> Row {
    Row {
        candidate: cand.name.clone(),
        algorithm: cand.algorithm,
        vnodes: None,
        cell: None,
        max_over_mean: f64::INFINITY,
        evidence: "not measured".into(),
        not_built: Some(why),
        estimate_only: false,
        memory_bytes: None,
        lookup_ns: None,
        moved: Moved::default(),
    }
}

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
    NodeSet::new(nodes).map_err(|e| Error::InvalidParameter { name: "grow", reason: e.to_string() })
}

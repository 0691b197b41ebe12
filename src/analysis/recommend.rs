//! Which algorithm, how many vnodes: the answer `cargo bench` prints and
//! `hashroute recommend --node-count N [--max-load 1.10]` gives, from the same code.

use std::fmt;

use crate::analysis::sweep::{balance_cell, candidates, lookup_ns, sample_keys, BalanceCell, Candidate, SweepConfig};
use crate::error::{Error, Result};
use crate::node::NodeSet;

/// The default balance target: the p99 over random clusters of the busiest node's load over
/// the mean is at most 1.10.
pub const DEFAULT_MAX_LOAD: f64 = 1.10;

/// What to measure and how hard.
#[derive(Clone, Debug)]
pub struct RecommendOptions {
    /// Cluster counts and budgets ([`SweepConfig::quick`] answers in seconds).
    pub config: SweepConfig,
    /// The largest ring vnode count searched.
    pub max_vnodes: u32,
    /// Whether to time lookups (wall clock, ≈ 0.1 s per candidate); memory is always exact.
    pub measure_lookup: bool,
}

impl Default for RecommendOptions {
    fn default() -> RecommendOptions {
        RecommendOptions { config: SweepConfig::quick(), max_vnodes: 4096, measure_lookup: true }
    }
}

/// One candidate's verdict at the requested node count.
#[derive(Clone, Debug)]
pub struct RecommendRow {
    /// Candidate name (`ring-v160`, `jump`, …).
    pub candidate: String,
    /// Algorithm family.
    pub family: &'static str,
    /// Vnodes for ring-like routers.
    pub vnodes: Option<u32>,
    /// The balance cell it was judged on (clusters, keys, tail quantile).
    pub balance: BalanceCell,
    /// Measured lookup cost, ns per key (`route`, one at a time), when measured.
    pub lookup_ns: Option<f64>,
    /// Whether the tail max/mean meets the target. For sampled routers, also true when the
    /// measured spread is indistinguishable from sampling noise (std dev within 1.2× of what a
    /// perfect router would show with that many keys): the router's own imbalance is then below
    /// what the sample can see, and the `within_noise` flag says so.
    pub meets: bool,
    /// The verdict rests on sampling noise, not on a measured tail (see [`RecommendRow::meets`]).
    pub within_noise: bool,
    /// Whether it moves about the minimum on resize.
    pub consistent: bool,
    /// Whether it can remove any node (jump cannot).
    pub removes_any_node: bool,
}

/// The recommendation for one node count and balance target.
#[derive(Clone, Debug)]
pub struct Recommendation {
    /// Node count asked about.
    pub node_count: usize,
    /// Target for the tail (p99 when supported) over clusters of max/mean.
    pub max_load: f64,
    /// The smallest ring V found that meets the target, if any up to the search limit.
    pub ring: Option<RecommendRow>,
    /// Every fixed-configuration algorithm's verdict.
    pub others: Vec<RecommendRow>,
    /// The cheapest consistent candidate meeting the target (by memory, then lookup time).
    pub cheapest: Option<String>,
    /// The largest V searched when no ring met the target.
    pub searched_up_to: u32,
    /// Candidates that could not be built at this node count, with the reason.
    pub skipped: Vec<(String, String)>,
}

fn row(cand: &Candidate, cell: BalanceCell, max_load: f64, lookup: Option<f64>) -> RecommendRow {
    let measured = cell.tail_max_over_mean <= max_load;
    let within_noise = !measured && !cell.exact && cell.std_dev_pct <= 1.2 * cell.noise_std_pct;
    RecommendRow {
        candidate: cand.name.clone(),
        family: cand.family,
        vnodes: cand.vnodes,
        meets: measured || within_noise,
        within_noise,
        balance: cell,
        lookup_ns: lookup,
        consistent: cand.consistent,
        removes_any_node: cand.removes_any_node,
    }
}

fn validate(node_count: usize, max_load: f64) -> Result<()> {
    if node_count == 0 || node_count > 1_000_000 {
        return Err(Error::InvalidParameter {
            name: "node count",
            reason: format!("{node_count} is not in 1..=1000000"),
        });
    }
    if !max_load.is_finite() || max_load <= 1.0 {
        return Err(Error::InvalidParameter {
            name: "max load",
            reason: format!("{max_load} must be a finite ratio above 1.0 (e.g. 1.10)"),
        });
    }
    Ok(())
}

fn measure(cand: &Candidate, n: usize, opts: &RecommendOptions) -> Result<Option<f64>> {
    if !opts.measure_lookup {
        return Ok(None);
    }
    let nodes = NodeSet::from_names(crate::analysis::sweep::cluster_names(opts.config.seed, n))?;
    let router = (cand.build)(&nodes)?;
    let keys = sample_keys(if cand.linear_lookup { 5_000 } else { 50_000 }, 11);
    Ok(Some(lookup_ns(&*router, &keys, 3).0))
}

/// Smallest ring V (on the vnode grid, refined by bisection between the last failing and first
/// passing grid values) whose tail over random clusters of max/mean is at most `max_load`, and
/// the cheapest algorithm that meets it. Costs one balance cell per V tried (bounded by
/// `opts.config`'s point budget) plus one per other algorithm.
///
/// # Errors
/// [`Error::InvalidParameter`] for `node_count` 0 or above 1,000,000, or `max_load` not a finite
/// number above 1.0; build errors from candidates.
pub fn recommend(node_count: usize, max_load: f64, opts: &RecommendOptions) -> Result<Recommendation> {
    validate(node_count, max_load)?;
    let cfg = &opts.config;
    let mut grid: Vec<u32> = crate::analysis::sweep::RING_VNODES.to_vec();
    let mut v = 2000;
    while v <= opts.max_vnodes {
        grid.push(v);
        v *= 2;
    }
    grid.retain(|&v| v <= opts.max_vnodes);
    let mut ring = None;
    let mut last_fail = 0u32;
    for &v in &grid {
        let cand = crate::analysis::sweep::ring_candidate(v);
        let cell = balance_cell(&cand, node_count, cfg)?;
        if cell.tail_max_over_mean <= max_load {
            // Bisect between the last failing grid value and this one.
            let (mut lo, mut hi, mut best) = (last_fail, v, (cand, cell));
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                let c = crate::analysis::sweep::ring_candidate(mid);
                let cell = balance_cell(&c, node_count, cfg)?;
                if cell.tail_max_over_mean <= max_load {
                    hi = mid;
                    best = (c, cell);
                } else {
                    lo = mid;
                }
            }
            let lookup = measure(&best.0, node_count, opts)?;
            ring = Some(row(&best.0, best.1, max_load, lookup));
            break;
        }
        last_fail = v;
    }
    let mut others = Vec::new();
    let mut skipped = Vec::new();
    for cand in candidates().iter().filter(|c| c.family != "ring" && c.family != "ring-weighted") {
        // A router that cannot be built at this size (e.g. Maglev past its table) is skipped
        // and named, not fatal.
        match balance_cell(cand, node_count, cfg).and_then(|cell| Ok((cell, measure(cand, node_count, opts)?))) {
            Ok((cell, lookup)) => others.push(row(cand, cell, max_load, lookup)),
            Err(e) => skipped.push((cand.name.clone(), e.to_string())),
        }
    }
    let mut rec = finish(node_count, max_load, ring, others, *grid.last().unwrap_or(&0));
    rec.skipped = skipped;
    Ok(rec)
}

/// The recommendation from balance cells already measured (the benchmark's sweep), on the
/// vnode grid only (no bisection). `lookups` gives `(candidate, ns)` pairs when measured.
///
/// # Errors
/// [`Error::InvalidParameter`] as [`recommend`].
pub fn from_cells(
    node_count: usize,
    max_load: f64,
    cells: &[BalanceCell],
    lookups: &[(String, usize, f64)],
) -> Result<Recommendation> {
    validate(node_count, max_load)?;
    let all = candidates();
    let lookup = |name: &str| lookups.iter().find(|(c, n, _)| c == name && *n == node_count).map(|(_, _, ns)| *ns);
    let mut ring = None;
    let mut others = Vec::new();
    let mut searched = 0;
    for cand in &all {
        let Some(cell) = cells.iter().find(|c| c.candidate == cand.name && c.nodes == node_count) else { continue };
        let r = row(cand, cell.clone(), max_load, lookup(&cand.name));
        match cand.family {
            "ring" => {
                searched = searched.max(cand.vnodes.unwrap_or(0));
                let better = match &ring {
                    None => true,
                    Some(old) => {
                        let old: &RecommendRow = old;
                        old.vnodes > r.vnodes
                    }
                };
                if r.meets && better {
                    ring = Some(r);
                }
            }
            "ring-weighted" => {}
            _ => others.push(r),
        }
    }
    Ok(finish(node_count, max_load, ring, others, searched))
}

fn finish(
    node_count: usize,
    max_load: f64,
    ring: Option<RecommendRow>,
    others: Vec<RecommendRow>,
    searched_up_to: u32,
) -> Recommendation {
    let cheapest = ring
        .iter()
        .chain(others.iter())
        .filter(|r| r.meets && r.consistent)
        .min_by(|a, b| {
            a.balance
                .memory_bytes
                .cmp(&b.balance.memory_bytes)
                .then(a.lookup_ns.unwrap_or(f64::MAX).total_cmp(&b.lookup_ns.unwrap_or(f64::MAX)))
        })
        .map(|r| r.candidate.clone());
    Recommendation { node_count, max_load, ring, others, cheapest, searched_up_to, skipped: Vec::new() }
}

impl fmt::Display for Recommendation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} nodes, target: tail over random clusters of max/mean <= {:.2}",
            self.node_count, self.max_load
        )?;
        writeln!(
            f,
            "{:<22} {:>6} {:>9} {:>9} {:>12} {:>10} {:>9}  how sure",
            "candidate", "meets", "tail", "max/mean", "memory B", "lookup ns", "stddev%"
        )?;
        let rows = self.ring.iter().chain(self.others.iter());
        for r in rows {
            let b = &r.balance;
            let sure = if b.exact {
                format!("exact loads, {} clusters", b.clusters)
            } else {
                format!("{} clusters x {} keys (noise {:.1}%)", b.clusters, b.keys, b.noise_std_pct)
            };
            writeln!(
                f,
                "{:<22} {:>6} {:>4} {:>4.3} {:>9.3} {:>12} {:>10} {:>9.2}  {}",
                r.candidate,
                match (r.meets, r.within_noise) {
                    (true, false) => "yes",
                    (true, true) => "noise",
                    _ => "no",
                },
                b.tail,
                b.tail_max_over_mean,
                b.max_over_mean,
                b.memory_bytes,
                r.lookup_ns.map_or("-".to_string(), |ns| format!("{ns:.1}")),
                b.std_dev_pct,
                sure
            )?;
        }
        if self.ring.is_none() {
            writeln!(f, "no ring up to V={} meets the target", self.searched_up_to)?;
        }
        for (name, why) in &self.skipped {
            writeln!(f, "skipped {name}: {why}")?;
        }
        match &self.cheapest {
            Some(c) => {
                let note = self
                    .others
                    .iter()
                    .find(|r| &r.candidate == c && !r.removes_any_node)
                    .map_or("", |_| " (it cannot remove an arbitrary node: pair it with Failover)");
                writeln!(f, "cheapest consistent router meeting the target: {c}{note}")
            }
            None => writeln!(f, "no consistent router meets the target"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_input() {
        let o = RecommendOptions::default();
        assert!(matches!(recommend(0, 1.1, &o), Err(Error::InvalidParameter { .. })));
        assert!(matches!(recommend(8, 1.0, &o), Err(Error::InvalidParameter { .. })));
        assert!(matches!(recommend(8, f64::NAN, &o), Err(Error::InvalidParameter { .. })));
    }

    #[test]
    fn small_cluster_needs_a_few_hundred_vnodes() {
        let mut o = RecommendOptions { measure_lookup: false, max_vnodes: 1000, ..RecommendOptions::default() };
        o.config.clusters = 100;
        let r = recommend(4, 1.10, &o).unwrap();
        let ring = r.ring.as_ref().expect("some V <= 1000 meets 1.10 at 4 nodes");
        let v = ring.vnodes.unwrap();
        // Arc sums of V points have relative sd ≈ 1/sqrt(V); a p99 within 10% needs V in the hundreds.
        assert!((64..=1000).contains(&v), "{r}");
        assert!(ring.meets && ring.balance.tail == "p99");
        assert!(r.cheapest.is_some());
        assert!(r.to_string().contains("exact loads"));
    }
}

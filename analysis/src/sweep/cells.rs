//! Per-cell balance measurements: random clusters of a node count, the sweep's sizes
//! ([`SweepConfig`](super::SweepConfig)), and one [`BalanceCell`](super::BalanceCell) per candidate and node count.

use super::*;

/// `count` distinct random node names in the shape of real cache endpoints (`10.a.b.c:port`),
/// deterministic in `seed`. Prefixes are stable: the first `k` names of `count` are the names
/// for `k`, so a grown cluster keeps its old names.
pub fn cluster_names(seed: u64, count: usize) -> Vec<String> {
    let mut rng = SplitMix64::new(seed);
    let mut seen = std::collections::HashSet::with_capacity(count);
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let r = rng.next_u64();
        let name =
            format!("10.{}.{}.{}:{}", r & 0xFF, (r >> 8) & 0xFF, (r >> 16) & 0xFF, 1024 + (r >> 24) % (65536 - 1024));
        if seen.insert(name.clone()) {
            out.push(name);
        }
    }
    out
}

/// Sweep sizes. [`SweepConfig::full`] is what `cargo bench` publishes; [`SweepConfig::quick`] is
/// the CI smoke run.
#[derive(Clone, Debug)]
pub struct SweepConfig {
    /// Random clusters per cell when loads are exact (fewer when the point budget says so).
    pub clusters: usize,
    /// Most ring points built per cell across all its clusters; caps clusters for big cells.
    pub point_budget: u64,
    /// Fewest clusters an exact balance cell gets however big it is (its tail quantile is then
    /// only what that count supports: p90 at 10, the maximum below).
    pub min_clusters: usize,
    /// Clusters per cell for key movement (exact, capped by `movement_point_budget`, at least
    /// 2: the moved fraction sums thousands of arcs, so it varies little between clusters).
    pub movement_clusters: usize,
    /// Most ring points built per movement cell (both rings of every cluster).
    pub movement_point_budget: u64,
    /// Sampled keys per cluster for routers whose load must be sampled.
    pub sample_keys: usize,
    /// Clusters for sampled routers whose routes depend on names.
    pub sampled_clusters: usize,
    /// Most `key × node` score evaluations per cluster for O(N) routers (rendezvous); they
    /// still get at least a tenth of `sample_keys`.
    pub linear_budget: u64,
    /// Base seed for cluster names and keys.
    pub seed: u64,
}

impl SweepConfig {
    /// The published sweep: 200 clusters per exact cell (fewer for cells over 20 M ring points,
    /// at least 10), 1 M sampled keys.
    pub fn full() -> SweepConfig {
        SweepConfig {
            clusters: 200,
            point_budget: 20_000_000,
            min_clusters: 10,
            movement_clusters: 20,
            movement_point_budget: 5_000_000,
            sample_keys: 1_000_000,
            sampled_clusters: 10,
            linear_budget: 200_000_000,
            seed: 0x5EED,
        }
    }

    /// The CI smoke sweep (seconds, not minutes): same shape, 100 clusters per exact cell (so p99
    /// is still supported for small cells), at most 0.5 M ring points per cell.
    pub fn quick() -> SweepConfig {
        SweepConfig {
            clusters: 100,
            point_budget: 500_000,
            min_clusters: 3,
            movement_clusters: 5,
            movement_point_budget: 250_000,
            sample_keys: 100_000,
            sampled_clusters: 5,
            linear_budget: 3_000_000,
            seed: 0x5EED,
        }
    }

    pub(super) fn cluster_seed(&self, n: usize, c: usize) -> u64 {
        self.seed ^ ((n as u64) << 32) ^ (c as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }

    /// How many clusters an exact cell of `points_per_cluster` points gets: `want`, capped by the
    /// point budget, at least `min` (but never more than `want`).
    pub fn exact_clusters(&self, want: usize, points_per_cluster: u64, min: usize) -> usize {
        let cap = (self.point_budget / points_per_cluster.max(1)) as usize;
        want.min(cap).max(min.min(want)).max(1)
    }

    /// Ring points a balance cell of `cand` at `n` nodes builds under this configuration (for
    /// planning run time: ring builds dominate the sweep).
    pub fn balance_points(&self, cand: &Candidate, n: usize) -> u64 {
        match cand.model {
            LoadModel::Partition(_) => {
                let p = points_per_cluster(cand, n);
                p * self.exact_clusters(self.clusters, p, self.min_clusters) as u64
            }
            _ => 0,
        }
    }
}

/// The load-balance distribution of one candidate at one node count, over random clusters.
#[derive(Clone, Debug)]
pub struct BalanceCell {
    /// Candidate name.
    pub candidate: String,
    /// Node count.
    pub nodes: usize,
    /// Random clusters measured.
    pub clusters: usize,
    /// Sampled keys per cluster (0 when exact).
    pub keys: usize,
    /// Whether loads were computed exactly.
    pub exact: bool,
    /// Median over clusters of the std dev of node load, % of mean.
    pub std_dev_pct: f64,
    /// Median over clusters of max/mean.
    pub max_over_mean: f64,
    /// Median over clusters of min/mean.
    pub min_over_mean: f64,
    /// Median busiest node's share of all traffic, %.
    pub max_share_pct: f64,
    /// Median idlest node's share of all traffic, %.
    pub min_share_pct: f64,
    /// The tail quantile the cluster count supports (`p99`, `p95`, `p90`, `max`).
    pub tail: &'static str,
    /// That quantile over clusters of max/mean.
    pub tail_max_over_mean: f64,
    /// Median over clusters of the largest deviation from the mean, either way, in percent:
    /// `100 · max(max/mean − 1, 1 − min/mean)`.
    pub max_dev_pct: f64,
    /// Fraction of clusters whose largest deviation is within 5%.
    pub within_5pct: f64,
    /// The std dev (% of mean) a perfect router would show from key sampling alone:
    /// `100·sqrt((N−1)/K)`; 0 when exact.
    pub noise_std_pct: f64,
    /// Router memory in bytes (`memory_bytes()`, first cluster).
    pub memory_bytes: usize,
    /// Median build time in nanoseconds.
    pub build_ns: f64,
    /// Every cluster's max/mean, for other quantiles than `tail`.
    pub cluster_maxes: Vec<f64>,
}

/// Per-cluster balance of one candidate on one cluster, plus its build time when built.
pub(crate) fn cluster_balance(cand: &Candidate, nodes: &NodeSet, keys: usize, seed: u64) -> Result<(Balance, f64)> {
    match &cand.model {
        LoadModel::Partition(f) => {
            let t = Instant::now();
            let p = f(nodes)?;
            let ns = t.elapsed().as_nanos() as f64;
            let shares: Vec<f64> = p.nodes().iter().map(|(_, n)| n.weight()).collect();
            Ok((Balance::from_loads(&p.loads(), &shares), ns))
        }
        LoadModel::Table(f) => {
            let t = Instant::now();
            let p = f(nodes)?;
            let ns = t.elapsed().as_nanos() as f64;
            let shares: Vec<f64> = p.nodes().iter().map(|(_, n)| n.weight()).collect();
            Ok((Balance::from_loads(&p.loads(), &shares), ns))
        }
        LoadModel::Modulo => Ok((Balance::from_loads(&vec![1.0; nodes.len()], &vec![1.0; nodes.len()]), 0.0)),
        LoadModel::Sampled { .. } => {
            let t = Instant::now();
            let r = (cand.build)(nodes)?;
            let ns = t.elapsed().as_nanos() as f64;
            let mut counts = vec![0f64; r.node_count()];
            let mut rng = SplitMix64::new(seed ^ 0x6B65_7973);
            for _ in 0..keys {
                counts[r.route(&rng.next_u64().to_le_bytes()).index()] += 1.0;
            }
            let shares: Vec<f64> = r.nodes().iter().map(|(_, n)| n.weight()).collect();
            Ok((Balance::from_loads(&counts, &shares), ns))
        }
    }
}

/// Points a ring-like candidate builds per cluster of `n` nodes (for the budget).
pub(super) fn points_per_cluster(cand: &Candidate, n: usize) -> u64 {
    match cand.family {
        "ring-weighted" => 2 * n as u64 * u64::from(cand.vnodes.unwrap_or(160)),
        "slots" => u64::from(SLOTS),
        _ => n as u64 * u64::from(cand.vnodes.unwrap_or(1)).max(1),
    }
}

/// Clusters and keys per cluster for a cell.
pub(super) fn cell_plan(cand: &Candidate, n: usize, cfg: &SweepConfig) -> (usize, usize) {
    match cand.model {
        LoadModel::Partition(_) => (cfg.exact_clusters(cfg.clusters, points_per_cluster(cand, n), cfg.min_clusters), 0),
        LoadModel::Table(_) => (cfg.exact_clusters(cfg.clusters, Maglev::DEFAULT_TABLE_SIZE, cfg.min_clusters), 0),
        LoadModel::Modulo => (1, 0),
        LoadModel::Sampled { names_matter } => {
            let base = if cand.linear_lookup {
                cfg.sample_keys.min(((cfg.linear_budget / n as u64) as usize).max(cfg.sample_keys / 10))
            } else {
                cfg.sample_keys
            };
            let keys = base / cand.sample_divisor.max(1);
            (if names_matter { cfg.sampled_clusters } else { 1 }, keys)
        }
    }
}

/// Measures one balance cell: `cand` over random clusters of `n` nodes. Clusters run in
/// parallel on the current rayon pool.
///
/// # Errors
/// The candidate's build errors (e.g. too many points).
pub fn balance_cell(cand: &Candidate, n: usize, cfg: &SweepConfig) -> Result<BalanceCell> {
    use rayon::prelude::*;
    let (clusters, keys) = cell_plan(cand, n, cfg);
    let results: Vec<(Balance, f64)> = (0..clusters)
        .into_par_iter()
        .map(|c| {
            let seed = cfg.cluster_seed(n, c);
            let nodes = NodeSet::from_names(cluster_names(seed, n))?;
            cluster_balance(cand, &nodes, keys, seed)
        })
        .collect::<Result<_>>()?;
    let first = NodeSet::from_names(cluster_names(cfg.cluster_seed(n, 0), n))?;
    let t = Instant::now();
    let router = (cand.build)(&first)?;
    let mut build_ns: Vec<f64> = vec![t.elapsed().as_nanos() as f64];
    build_ns.extend(results.iter().map(|r| r.1).filter(|&x| x > 0.0));
    let col = |f: fn(&Balance) -> f64| -> Vec<f64> { results.iter().map(|r| f(&r.0)).collect() };
    let (tq, tail) = supported_tail(clusters);
    let maxes = col(|b| b.max_over_mean);
    let devs = col(|b| 100.0 * (b.max_over_mean - 1.0).max(1.0 - b.min_over_mean));
    Ok(BalanceCell {
        candidate: cand.name.clone(),
        nodes: n,
        clusters,
        keys,
        exact: keys == 0,
        std_dev_pct: median(&col(|b| b.std_dev_pct)),
        max_over_mean: median(&maxes),
        min_over_mean: median(&col(|b| b.min_over_mean)),
        max_share_pct: median(&col(|b| b.max_share_pct)),
        min_share_pct: median(&col(|b| b.min_share_pct)),
        tail,
        tail_max_over_mean: quantile(&maxes, tq),
        max_dev_pct: median(&devs),
        within_5pct: devs.iter().filter(|&&d| d <= 5.0).count() as f64 / devs.len().max(1) as f64,
        noise_std_pct: if keys > 0 { 100.0 * ((n as f64 - 1.0) / keys as f64).sqrt() } else { 0.0 },
        memory_bytes: router.memory_bytes(),
        build_ns: median(&build_ns),
        cluster_maxes: maxes,
    })
}

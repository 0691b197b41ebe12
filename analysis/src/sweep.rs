//! The algorithm × node-count sweep: which routers exist, and how each balances, moves keys and
//! costs on many random clusters.
//!
//! Every router the sweep knows is one entry of [`candidates`]; adding an algorithm is one line
//! there. A [`Candidate`] builds its router from a [`NodeSet`] and says how its load can be
//! measured ([`LoadModel`]): exactly from arcs for ring-like routers, exactly by arithmetic for
//! modulo, or by routing sampled keys (with the sample size and its noise reported).

use std::sync::Arc;
use std::time::Instant;

use crate::partition::{ideal_movement, shares_by_name, ModTable, Movement, Partition};
use crate::rng::SplitMix64;
use crate::stats::{median, quantile, supported_tail, Balance};
use hashroute::migration::sampled_moves;
use hashroute::slots::SLOTS;
use hashroute::KetamaVariant;
use hashroute::Maglev;
use hashroute::MultiProbe;
use hashroute::{Algorithm, RouterSpec};
use hashroute::{AnyRouter, ParRouteBatch, Router};
use hashroute::{Error, Result};
use hashroute::{Node, NodeSet};

/// Builds a router over a node set.
pub type BuildFn = Arc<dyn Fn(&NodeSet) -> Result<AnyRouter> + Send + Sync>;
/// Builds the exact circle partition of a router over a node set.
pub type PartitionFn = Arc<dyn Fn(&NodeSet) -> Result<Partition> + Send + Sync>;
/// Builds the exact `hash mod M` table of a router over a node set.
pub type TableFn = Arc<dyn Fn(&NodeSet) -> Result<ModTable> + Send + Sync>;

/// How a candidate's per-node load is measured.
#[derive(Clone)]
pub enum LoadModel {
    /// Exact, from the arcs of the router's circle partition (ring, Ketama, slots).
    Partition(PartitionFn),
    /// Exact from a `hash mod M` lookup table (Maglev).
    Table(TableFn),
    /// Exact by arithmetic: `hash % N` gives every node `1/N` (the `2^64 mod N` bias is below
    /// `N / 2^64`), and key movement is counted over one period `lcm(N, M)`.
    Modulo,
    /// Keys are sampled and routed. `names_matter` is false when node names cannot change the
    /// routes (jump: node `i` is bucket `i`), so one cluster is enough.
    Sampled {
        /// Whether node names influence routes.
        names_matter: bool,
    },
}

/// One router configuration the sweep measures.
#[derive(Clone)]
pub struct Candidate {
    /// Unique name in reports (`ring-v160`, `jump`, …).
    pub name: String,
    /// The algorithm family (`ring`, `modulo`, …); rings of different V share `ring`.
    pub family: &'static str,
    /// Virtual nodes per node for ring-like routers.
    pub vnodes: Option<u32>,
    /// Builds the router.
    pub build: BuildFn,
    /// How its load is measured.
    pub model: LoadModel,
    /// Whether rebuilding it for a new node set moves about the minimum (false for modulo, and
    /// for Redis slots, whose fresh `redis-cli` layout shifts every range; a live Redis cluster
    /// moves slots explicitly instead). The recommendation only picks consistent routers.
    pub consistent: bool,
    /// Whether a lookup costs O(N) (rendezvous), which bounds how many keys the sweep samples.
    pub linear_lookup: bool,
    /// Divides the sampled key count for routers whose lookups are slow for another reason
    /// (multi-probe's 21 probes); 1 for everything else. The noise column reports the result.
    pub sample_divisor: usize,
    /// Whether it can lose any node (false for jump, which only removes the last bucket).
    pub removes_any_node: bool,
    /// The algorithm it configures.
    pub algorithm: Algorithm,
}

impl std::fmt::Debug for Candidate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Candidate").field("name", &self.name).field("family", &self.family).finish_non_exhaustive()
    }
}

/// The vnode counts the sweep tries for the plain ring.
pub const RING_VNODES: &[u32] = &[1, 8, 16, 32, 64, 100, 128, 160, 200, 256, 320, 500, 1000];
/// The node counts the sweep tries.
pub const NODE_COUNTS: &[usize] = &[3, 4, 8, 10, 16, 64, 100, 1000];

/// A plain ring with `v` vnodes per node (xxh3).
pub fn ring_candidate(v: u32) -> Candidate {
    ring_on(format!("ring-v{v}"), "ring", v, |nodes| Ok(nodes.clone()))
}

/// The node set with weights 1, 2, 3, 1, 2, 3, … by position: the weighted-ring candidate's
/// cluster. Loads are judged against these weights' shares.
pub fn weighted_variant(nodes: &NodeSet) -> Result<NodeSet> {
    NodeSet::new(nodes.iter().map(|(id, n)| Node::new(n.name()).with_weight(f64::from(id.as_u32() % 3 + 1))))
}

/// A ring with `v` vnodes per unit weight over [`weighted_variant`] of the cluster.
pub fn weighted_ring_candidate(v: u32) -> Candidate {
    ring_on(format!("ring-weighted-v{v}"), "ring-weighted", v, weighted_variant)
}

/// A ring candidate with `v` vnodes over `prepare(cluster)`: loads come exactly from its arcs.
fn ring_on(name: String, family: &'static str, v: u32, prepare: fn(&NodeSet) -> Result<NodeSet>) -> Candidate {
    let spec = RouterSpec::new(Algorithm::Ring).with_vnodes(u64::from(v));
    let mut cand = Candidate::from_spec(name, family, spec);
    let build = cand.build.clone();
    cand.build = Arc::new(move |n| build(&prepare(n)?));
    let model_build = cand.build.clone();
    cand.model = LoadModel::Partition(Arc::new(move |n| partition_of(&model_build(n)?)));
    cand
}

impl Candidate {
    /// The candidate for `spec`, with its load model and capabilities from the algorithm (the
    /// one registry: [`Algorithm`] and [`RouterSpec`], as the CLI and the configs use them).
    pub fn from_spec(name: String, family: &'static str, spec: RouterSpec) -> Candidate {
        let algorithm = spec.algorithm;
        let vnodes = match algorithm {
            Algorithm::Ring => Some(spec.vnodes.map_or(hashroute::Ring::DEFAULT_VNODES, |v| v as u32)),
            Algorithm::Ketama => Some(160),
            _ => None,
        };
        let spec_for_build = spec.clone();
        let build: BuildFn = Arc::new(move |n| spec_for_build.build(n.clone()));
        let from_build = build.clone();
        let model = match algorithm {
            Algorithm::Ring
            | Algorithm::Ketama
            | Algorithm::Slots
            | Algorithm::Nginx
            | Algorithm::Haproxy
            | Algorithm::EnvoyRing
            | Algorithm::TokenRing => LoadModel::Partition(Arc::new(move |n| partition_of(&from_build(n)?))),
            Algorithm::Maglev => LoadModel::Table(Arc::new(move |n| table_of(&from_build(n)?))),
            Algorithm::Modulo => LoadModel::Modulo,
            Algorithm::Jump | Algorithm::Memento | Algorithm::Anchor => LoadModel::Sampled { names_matter: false },
            // The jump family (#14): node `i` is bucket `i`, so names do not matter either.
            a if a.is_stateless_bucket_hash() || a == Algorithm::JumpBackAnchor => {
                LoadModel::Sampled { names_matter: false }
            }
            _ => LoadModel::Sampled { names_matter: true },
        };
        Candidate {
            name,
            family,
            vnodes,
            build,
            model,
            consistent: algorithm.is_consistent(),
            linear_lookup: algorithm == Algorithm::Rendezvous,
            // Multi-probe's 21 searches per key make its lookups ~20x a ring's.
            sample_divisor: if algorithm == Algorithm::MultiProbe { 4 } else { 1 },
            removes_any_node: algorithm.removes_any_node(),
            algorithm,
        }
    }
}

/// The exact partition of a router with a structure ([`Router::arcs`]: ring, Ketama, Redis
/// slots, token ring, the proxies' nginx, HAProxy and Envoy rings, Maglev's table), for
/// uniformly distributed key hashes.
///
/// # Errors
/// [`Error::Unsupported`] for any other router.
pub fn partition_of(router: &AnyRouter) -> Result<Partition> {
    Partition::of(router)
        .ok_or_else(|| Error::Unsupported { algorithm: router.algorithm().name(), operation: "exact arc loads" })
}

/// The exact `hash mod M` table of a router whose arcs are a lookup table (Maglev).
///
/// # Errors
/// [`Error::Unsupported`] for any other router.
pub fn table_of(router: &AnyRouter) -> Result<ModTable> {
    ModTable::of(router)
        .ok_or_else(|| Error::Unsupported { algorithm: router.algorithm().name(), operation: "an exact lookup table" })
}

/// Every router configuration the sweep, the report and the recommendation measure, built from
/// [`RouterSpec`]s. **Adding an algorithm is one entry here** (plus its [`Algorithm`] variant).
pub fn candidates() -> Vec<Candidate> {
    let spec = |a: Algorithm| RouterSpec::new(a);
    let named = |name: &str, family: &'static str, s: RouterSpec| Candidate::from_spec(name.into(), family, s);
    let mut out = vec![named("modulo", "modulo", spec(Algorithm::Modulo))];
    out.extend(RING_VNODES.iter().map(|&v| ring_candidate(v)));
    out.push(weighted_ring_candidate(160));
    out.push(named("jump", "jump", spec(Algorithm::Jump)));
    out.push(named("ketama", "ketama", spec(Algorithm::Ketama).with_ketama_variant(KetamaVariant::Libketama)));
    out.push(named("rendezvous", "rendezvous", spec(Algorithm::Rendezvous)));
    out.push(named("slots", "slots", spec(Algorithm::Slots)));
    out.push(named("maglev", "maglev", spec(Algorithm::Maglev).with_table_size(Maglev::DEFAULT_TABLE_SIZE)));
    out.push(named("multiprobe", "multiprobe", spec(Algorithm::MultiProbe).with_probes(MultiProbe::DEFAULT_PROBES)));
    let mut anchor = named("anchor", "anchor", spec(Algorithm::Anchor));
    // A fixed capacity, so a resize keeps it (as a deployment would): the sweep's 2000-node
    // clusters fit; bigger clusters get 2N rounded up.
    anchor.build = Arc::new(|n| {
        let capacity = ANCHOR_CAPACITY.max((2 * n.len()).next_power_of_two() as u32);
        RouterSpec::new(Algorithm::Anchor).with_capacity(capacity).build(n.clone())
    });
    out.push(anchor);
    out.push(named("memento", "memento", spec(Algorithm::Memento)));
    // The constant-time jump family (#14).
    out.push(named("jumpback", "jumpback", spec(Algorithm::JumpBack)));
    out.push(named("fliphash", "fliphash", spec(Algorithm::FlipHash)));
    out.push(named("power", "power", spec(Algorithm::Power)));
    out.push(named("binomial", "binomial", spec(Algorithm::Binomial)));
    out.push(named("jumpback-anchor", "jumpback-anchor", spec(Algorithm::JumpBackAnchor)));
    // The proxies' own placements (issue 15): measured like every router, chosen by
    // `compatible_with` ("must match nginx").
    out.push(named("nginx", "nginx", spec(Algorithm::Nginx)));
    out.push(named("haproxy", "haproxy", spec(Algorithm::Haproxy)));
    out.push(named("envoy-ring", "envoy-ring", spec(Algorithm::EnvoyRing)));
    // The allocated token ring at Cassandra's default 16 tokens per node (the recommendation
    // also searches its count per target).
    out.push(token_ring_candidate(16));
    out
}

/// The allocated token ring with `v` tokens per node, allocated one node at a time in the
/// cluster's order; exact loads from its arcs.
pub fn token_ring_candidate(v: u32) -> Candidate {
    let spec = RouterSpec::new(Algorithm::TokenRing).with_tokens_per_node(v);
    let mut cand = Candidate::from_spec(format!("token-ring-v{v}"), "token-ring", spec);
    cand.vnodes = Some(v);
    cand
}

/// The anchor capacity the sweep gives AnchorHash: fixed, so a resize keeps it (as a deployment
/// would), and large enough for the sweep's 2000-node clusters; bigger clusters get 2N rounded up.
pub const ANCHOR_CAPACITY: u32 = 4096;

/// The candidate named `name` (as in reports: `ring-v160`, `jump`).
///
/// # Errors
/// [`Error::InvalidParameter`] for an unknown name.
pub fn candidate(name: &str) -> Result<Candidate> {
    candidates().into_iter().find(|c| c.name == name).ok_or_else(|| Error::InvalidParameter {
        name: "candidate",
        reason: format!("unknown router configuration {name:?} (known: {})", candidate_names().join(", ")),
    })
}

/// The names of all [`candidates`].
pub fn candidate_names() -> Vec<String> {
    candidates().into_iter().map(|c| c.name).collect()
}

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

    fn cluster_seed(&self, n: usize, c: usize) -> u64 {
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
fn points_per_cluster(cand: &Candidate, n: usize) -> u64 {
    match cand.family {
        "ring-weighted" => 2 * n as u64 * u64::from(cand.vnodes.unwrap_or(160)),
        "slots" => u64::from(SLOTS),
        _ => n as u64 * u64::from(cand.vnodes.unwrap_or(1)).max(1),
    }
}

/// Clusters and keys per cluster for a cell.
fn cell_plan(cand: &Candidate, n: usize, cfg: &SweepConfig) -> (usize, usize) {
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

/// A membership change: `from` nodes become `to` nodes (growth appends new names, shrinking
/// drops the last names, so jump's append/remove-at-end rule holds).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resize {
    /// Report label (`+1`, `-1`, `x2`, `10->11`).
    pub label: String,
    /// Node count before.
    pub from: usize,
    /// Node count after.
    pub to: usize,
}

/// The resizes the sweep measures: `+1`, `-1` and `x2` at every node count, and the fixed
/// ones the claims quote (3->4, 4->8, 8->12, 8->16, 10->11).
pub fn resizes(node_counts: &[usize]) -> Vec<Resize> {
    let mut out = Vec::new();
    for &n in node_counts {
        out.push(Resize { label: "+1".into(), from: n, to: n + 1 });
        if n >= 2 {
            out.push(Resize { label: "-1".into(), from: n, to: n - 1 });
        }
        out.push(Resize { label: "x2".into(), from: n, to: 2 * n });
    }
    for (a, b) in [(3, 4), (4, 8), (8, 12), (8, 16), (10, 11)] {
        out.push(Resize { label: format!("{a}->{b}"), from: a, to: b });
    }
    out
}

/// Key movement of one candidate for one resize, over random clusters.
#[derive(Clone, Debug)]
pub struct MovementCell {
    /// Candidate name.
    pub candidate: String,
    /// The resize.
    pub resize: Resize,
    /// Clusters measured.
    pub clusters: usize,
    /// Sampled keys per cluster (0 when exact).
    pub keys: usize,
    /// Median fraction of keys moved.
    pub moved: f64,
    /// The minimum fraction any router must move.
    pub ideal: f64,
    /// Median over clusters of the largest share of a removed node's keys one survivor took.
    pub failure_spread: Option<f64>,
}

/// Exact movement for `hash % N` -> `hash % M` over one period `lcm(N, M)`, nodes matched by name.
pub fn modulo_movement(a: &NodeSet, b: &NodeSet) -> Movement {
    let (n, m) = (a.len() as u64, b.len() as u64);
    let l = n / gcd(n, m) * m;
    let to_a: Vec<Option<u32>> = b.iter().map(|(_, x)| a.id_of(x.name()).map(|id| id.as_u32())).collect();
    let gone: Vec<bool> = a.iter().map(|(_, x)| b.id_of(x.name()).is_none()).collect();
    let (mut moved, mut lost) = (0u64, 0u64);
    let mut lost_to = vec![0u64; b.len()];
    for x in 0..l {
        let (oa, ob) = ((x % n) as u32, (x % m) as usize);
        if to_a[ob] != Some(oa) {
            moved += 1;
        }
        if gone[oa as usize] {
            lost += 1;
            lost_to[ob] += 1;
        }
    }
    Movement {
        moved: moved as f64 / l as f64,
        ideal: ideal_movement(&shares_by_name(a), &shares_by_name(b)),
        failure_spread: (lost > 0).then(|| *lost_to.iter().max().unwrap_or(&0) as f64 / lost as f64),
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Movement measured by routing `keys` sampled keys through both routers.
///
/// # Errors
/// The builders' errors.
pub fn sampled_movement(ra: &dyn Router, rb: &dyn Router, keys: usize, seed: u64) -> Movement {
    let (a, b) = (ra.nodes(), rb.nodes());
    let gone: Vec<bool> = a.iter().map(|(_, x)| b.id_of(x.name()).is_none()).collect();
    let mut lost = 0u64;
    let mut lost_to = vec![0u64; b.len()];
    let mut rng = SplitMix64::new(seed ^ 0x6D6F_7665);
    let sample = (0..keys).map(|_| rng.next_u64().to_le_bytes());
    let moved = sampled_moves(ra, rb, sample, |oa, ob| {
        if gone[oa.index()] {
            lost += 1;
            lost_to[ob.index()] += 1;
        }
    });
    Movement {
        moved: moved as f64 / keys.max(1) as f64,
        ideal: ideal_movement(&shares_by_name(a), &shares_by_name(b)),
        failure_spread: (lost > 0).then(|| *lost_to.iter().max().unwrap_or(&0) as f64 / lost as f64),
    }
}

/// The movement of `cand` between two node sets, exact when its model allows.
///
/// # Errors
/// The candidate's build errors.
pub fn movement_between(cand: &Candidate, a: &NodeSet, b: &NodeSet, keys: usize, seed: u64) -> Result<Movement> {
    match &cand.model {
        LoadModel::Partition(f) => Ok(f(a)?.movement(&f(b)?)),
        LoadModel::Table(f) => match f(a)?.movement(&f(b)?) {
            Some(m) => Ok(m),
            None => Ok(sampled_movement(&(cand.build)(a)?, &(cand.build)(b)?, keys.max(100_000), seed)),
        },
        LoadModel::Modulo => Ok(modulo_movement(a, b)),
        LoadModel::Sampled { .. } => Ok(sampled_movement(&(cand.build)(a)?, &(cand.build)(b)?, keys, seed)),
    }
}

/// Measures one movement cell.
///
/// # Errors
/// The candidate's build errors.
pub fn movement_cell(cand: &Candidate, resize: &Resize, cfg: &SweepConfig) -> Result<MovementCell> {
    use rayon::prelude::*;
    let big = resize.from.max(resize.to);
    let (clusters, keys) = match cand.model {
        LoadModel::Partition(_) => {
            let pts = points_per_cluster(cand, resize.from) + points_per_cluster(cand, resize.to);
            let cap = (cfg.movement_point_budget / pts.max(1)) as usize;
            (cfg.movement_clusters.min(cap).max(2), 0)
        }
        LoadModel::Table(_) => {
            let cap = (cfg.movement_point_budget / (2 * Maglev::DEFAULT_TABLE_SIZE)) as usize;
            (cfg.movement_clusters.min(cap).max(2), 0)
        }
        LoadModel::Modulo => (1, 0),
        LoadModel::Sampled { names_matter } => {
            // Movement medians vary little between clusters, and a moved fraction p is known to
            // ±sqrt(p(1−p)/K): a quarter of the balance keys and a few clusters suffice.
            let (c, k) = cell_plan(cand, big, cfg);
            (if names_matter { c.min((cfg.sampled_clusters / 4).max(2)) } else { 1 }, (k / 4).max(1000))
        }
    };
    let ms: Vec<Movement> = (0..clusters)
        .into_par_iter()
        .map(|c| {
            let seed = cfg.cluster_seed(big, c) ^ 0xA5;
            let names = cluster_names(seed, big);
            let a = NodeSet::from_names(&names[..resize.from])?;
            let b = NodeSet::from_names(&names[..resize.to])?;
            movement_between(cand, &a, &b, keys, seed)
        })
        .collect::<Result<_>>()?;
    let spreads: Vec<f64> = ms.iter().filter_map(|m| m.failure_spread).collect();
    Ok(MovementCell {
        candidate: cand.name.clone(),
        resize: resize.clone(),
        clusters,
        keys,
        moved: median(&ms.iter().map(|m| m.moved).collect::<Vec<_>>()),
        ideal: ms[0].ideal,
        failure_spread: (!spreads.is_empty()).then(|| median(&spreads)),
    })
}

/// Lookup cost of one router: nanoseconds per key for `route` one at a time and for
/// `route_batch`, best of `rounds` passes over `keys` (wall clock, so noisy on a busy machine).
pub fn lookup_ns(router: &dyn Router, keys: &[Vec<u8>], rounds: usize) -> (f64, f64) {
    let buffer = Contiguous::new(keys);
    let refs = buffer.refs();
    let mut out = vec![hashroute::NodeId::default(); refs.len()];
    let (mut single, mut batch) = (f64::MAX, f64::MAX);
    for _ in 0..rounds.max(1) {
        let t = Instant::now();
        let mut acc = 0u32;
        for k in &refs {
            acc = acc.wrapping_add(router.route(k).as_u32());
        }
        std::hint::black_box(acc);
        single = single.min(t.elapsed().as_nanos() as f64 / refs.len().max(1) as f64);
        let t = Instant::now();
        router.route_batch(&refs, &mut out);
        std::hint::black_box(&out);
        batch = batch.min(t.elapsed().as_nanos() as f64 / refs.len().max(1) as f64);
    }
    (single, batch)
}

/// Lookups per second with `threads` rayon threads (`par_route_batch` over `keys`), best of
/// `rounds`.
///
/// # Errors
/// [`Error::InvalidParameter`] when the thread pool cannot be built.
pub fn throughput(router: &dyn Router, keys: &[Vec<u8>], threads: usize, rounds: usize) -> Result<f64> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::InvalidParameter { name: "threads", reason: e.to_string() })?;
    let buffer = Contiguous::new(keys);
    let refs = buffer.refs();
    let mut out = vec![hashroute::NodeId::default(); refs.len()];
    let mut best = f64::MAX;
    for _ in 0..rounds.max(1) {
        let t = Instant::now();
        pool.install(|| router.par_route_batch(&refs, &mut out));
        best = best.min(t.elapsed().as_secs_f64());
    }
    Ok(refs.len() as f64 / best.max(1e-9))
}

/// Keys copied into one contiguous buffer, as a client's request batch would hold them: timing
/// keys scattered over the heap (one allocation each) measures the allocator's layout, not the
/// router (the sweep's throughput table showed ring-v160 gaining 1.13× from a second thread
/// while the criterion parallel bench, whose keys are contiguous, showed 1.97×).
struct Contiguous {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Contiguous {
    fn new(keys: &[Vec<u8>]) -> Contiguous {
        let mut bytes = Vec::with_capacity(keys.iter().map(Vec::len).sum());
        let mut ends = Vec::with_capacity(keys.len());
        for k in keys {
            bytes.extend_from_slice(k);
            ends.push(bytes.len());
        }
        Contiguous { bytes, ends }
    }

    fn refs(&self) -> Vec<&[u8]> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let k = &self.bytes[start..end];
                start = end;
                k
            })
            .collect()
    }
}

/// `count` random 8-to-24-byte keys shaped like cache keys (`user:12345:profile`), deterministic.
pub fn sample_keys(count: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut rng = SplitMix64::new(seed);
    (0..count).map(|_| format!("user:{}:profile", rng.below(100_000_000)).into_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_prefix_stable() {
        let a = cluster_names(9, 50);
        let b = cluster_names(9, 60);
        assert_eq!(&b[..50], &a[..]);
        let set: std::collections::HashSet<_> = b.iter().collect();
        assert_eq!(set.len(), 60);
    }

    #[test]
    fn candidate_names_are_unique() {
        let names = candidate_names();
        let set: std::collections::HashSet<_> = names.iter().collect();
        assert_eq!(set.len(), names.len());
        assert!(candidate("ring-v160").is_ok());
        assert!(matches!(candidate("nope"), Err(Error::InvalidParameter { .. })));
    }

    #[test]
    fn modulo_three_to_four_moves_exactly_three_quarters() {
        // Over one period lcm(3, 4) = 12 of hash values x, a key stays only where x % 3 == x % 4,
        // i.e. x in {0, 1, 2}: 3 of 12 stay, so exactly 9/12 = 3/4 move.
        let names = cluster_names(1, 4);
        let a = NodeSet::from_names(&names[..3]).unwrap();
        let b = NodeSet::from_names(&names[..4]).unwrap();
        let m = modulo_movement(&a, &b);
        assert_eq!(m.moved, 0.75);
        assert_eq!(m.ideal, 0.25);
        assert_eq!(m.ratio(), 3.0);
    }

    #[test]
    fn jump_growth_moves_keys_only_to_the_new_bucket() {
        use hashroute::{Jump, KeyHasher};
        let names = cluster_names(2, 11);
        let a = Jump::builder()
            .node_set(NodeSet::from_names(&names[..10]).unwrap())
            .hasher(KeyHasher::default())
            .build()
            .unwrap();
        let b = Jump::builder()
            .node_set(NodeSet::from_names(&names[..11]).unwrap())
            .hasher(KeyHasher::default())
            .build()
            .unwrap();
        let mut rng = SplitMix64::new(5);
        let mut moved = 0;
        for _ in 0..50_000 {
            let k = rng.next_u64().to_le_bytes();
            let (x, y) = (a.route(&k), b.route(&k));
            if x != y {
                assert_eq!(y.index(), 10, "a moved key must go to the new bucket");
                moved += 1;
            }
        }
        // 1/11 of 50k = 4545; binomial sd ≈ 64.
        assert!((moved as f64 - 50_000.0 / 11.0).abs() < 400.0, "moved {moved}");
    }

    #[test]
    fn quick_cells_are_sane() {
        let cfg = SweepConfig { clusters: 20, movement_clusters: 3, sample_keys: 20_000, ..SweepConfig::quick() };
        let mp = balance_cell(&candidate("multiprobe").unwrap(), 8, &cfg).unwrap();
        assert_eq!(mp.keys, cfg.sample_keys / 4, "multiprobe samples a quarter of the keys");
        let ring = balance_cell(&candidate("ring-v160").unwrap(), 8, &cfg).unwrap();
        assert!(ring.exact && ring.clusters == 20);
        assert!(ring.max_over_mean > 1.0 && ring.max_over_mean < 1.3, "{ring:?}");
        assert!(ring.std_dev_pct > 1.0 && ring.std_dev_pct < 15.0, "{ring:?}");
        let modulo = balance_cell(&candidate("modulo").unwrap(), 8, &cfg).unwrap();
        assert_eq!(modulo.max_over_mean, 1.0);
        let r = Resize { label: "8->12".into(), from: 8, to: 12 };
        let mv = movement_cell(&candidate("ring-v160").unwrap(), &r, &cfg).unwrap();
        assert!((mv.ideal - 1.0 / 3.0).abs() < 1e-12);
        assert!(mv.moved > 0.25 && mv.moved < 0.42, "{mv:?}");
        let shrink = Resize { label: "-1".into(), from: 8, to: 7 };
        let naive = movement_cell(&candidate("ring-v1").unwrap(), &shrink, &cfg).unwrap();
        assert_eq!(naive.failure_spread, Some(1.0), "a naive ring hands a dead node's arc to one neighbour");
    }
}

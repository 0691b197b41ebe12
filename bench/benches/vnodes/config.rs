//! The sweep sizes of each mode. Plain `cargo bench` sits between the CI-sized quick sweep and
//! the published full one; change the numbers here to trade run time for tighter tails.

use hashroute_analysis::sweep::{candidates, SweepConfig, NODE_COUNTS};
use hashroute_analysis::CacheSim;

use crate::report::common::Mode;

/// Ring vnode counts whose key movement is measured (movement barely depends on V; these show
/// the naive ring, the usual range and the top of the grid).
pub(crate) const MOVEMENT_VNODES: &[u32] = &[1, 100, 160, 200, 1000];
/// Families in the cache simulation (the list; others join when they land).
pub(crate) const CACHE_SET: &[&str] = &["modulo", "ring-v1", "ring-v160", "jump", "rendezvous", "slots"];
/// Routers in the throughput-vs-threads table.
pub(crate) const THROUGHPUT_SET: &[&str] = &["modulo", "ring-v160", "jump", "ketama", "rendezvous", "slots", "maglev"];
/// Node count for the lookup-cost and throughput headline tables.
pub(crate) const HEADLINE_N: usize = 1000;
/// Repeats of the lookup cells the timing claims compare, to measure the run-to-run spread.
pub(crate) const TIMING_REPEATS: usize = 3;

/// One run's settings.
pub(crate) struct Run {
    pub mode: Mode,
    pub cfg: SweepConfig,
    pub node_counts: Vec<usize>,
    pub lookup_keys: usize,
    pub throughput_keys: usize,
    /// Best-of rounds per throughput measurement.
    pub throughput_rounds: usize,
    pub cache: CacheSim,
    /// Whether to write the report (not in smoke runs).
    pub write: bool,
}

/// Plain `cargo bench`: p99 still supported for small cells (100 clusters), big cells capped at
/// 4 M ring points; about half the full sweep's time.
fn default_sweep() -> SweepConfig {
    SweepConfig {
        clusters: 100,
        point_budget: 4_000_000,
        min_clusters: 5,
        movement_clusters: 10,
        movement_point_budget: 1_000_000,
        sample_keys: 300_000,
        sampled_clusters: 5,
        linear_budget: 20_000_000,
        ..SweepConfig::full()
    }
}

fn smoke_sweep() -> SweepConfig {
    SweepConfig { clusters: 20, point_budget: 100_000, sample_keys: 10_000, ..SweepConfig::quick() }
}

fn default_cache() -> CacheSim {
    CacheSim {
        universe: 300_000,
        capacity_per_node: 3_000,
        before: 800_000,
        after: 800_000,
        window: 2_500,
        ..CacheSim::full()
    }
}

fn smoke_cache() -> CacheSim {
    CacheSim { universe: 10_000, capacity_per_node: 100, before: 20_000, after: 20_000, ..CacheSim::quick() }
}

impl Run {
    /// The settings of `mode`.
    pub(crate) fn for_mode(mode: Mode) -> Run {
        Run {
            mode,
            cfg: mode.pick4(smoke_sweep(), SweepConfig::quick(), default_sweep(), SweepConfig::full()),
            node_counts: if mode == Mode::Smoke { vec![3, 8] } else { NODE_COUNTS.to_vec() },
            lookup_keys: mode.pick4(2_000, 20_000, 100_000, 200_000),
            throughput_keys: mode.pick4(40_000, 100_000, 400_000, 1_000_000),
            throughput_rounds: mode.pick(1, 2, 3),
            cache: mode.pick4(smoke_cache(), CacheSim::quick(), default_cache(), CacheSim::full()),
            write: mode != Mode::Smoke,
        }
    }

    /// The node count of the headline tables (lookup, throughput, claim 8).
    pub(crate) fn head_n(&self) -> usize {
        if self.node_counts.contains(&HEADLINE_N) {
            HEADLINE_N
        } else {
            *self.node_counts.last().unwrap_or(&8)
        }
    }

    /// Ring points the balance cells build under this configuration (ring builds dominate).
    pub(crate) fn planned_points(&self) -> u64 {
        candidates()
            .iter()
            .flat_map(|c| self.node_counts.iter().map(move |&n| (c, n)))
            .map(|(c, n)| self.cfg.balance_points(c, n))
            .sum()
    }
}

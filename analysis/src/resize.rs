//! How to get from one node list to another without a cache hit-rate collapse: resize
//! strategies replayed step by step on the cache simulator.
//!
//! Adding 4 cache nodes to 4 at once hands half of the keys to empty caches, and the database
//! behind them takes every one of those misses at the same moment; adding one node at a time
//! moves a fifth, a sixth, a seventh and an eighth of the keys, each step recovering before the
//! next. [`simulate_resize`] measures that for a router configuration, two node lists and a
//! [`Workload`]: for each [`ResizeStrategy`], every step's keys moved (against the ideal), its
//! hit rate, its lowest hit rate over a window of [`Workload::window`] requests, and how
//! many requests it took to recover.
//!
//! The model, and what it leaves out:
//! - Requests are independent draws from a Zipf distribution over `keys` key ids (no temporal
//!   locality, no writes, no expiry), one LRU cache per node sized by its weight: each node of
//!   weight `w` caches `cache_fraction × keys × w / W` keys, `W` the total weight **before** the
//!   resize (nodes are alike, so a grown cluster caches more).
//! - A miss fills the owner's cache at once; a removed node's cache is gone. Copies left on a
//!   node that no longer owns a key stay until its LRU evicts them, as in memcached or Redis.
//! - Routers evolve as a live cluster's do: built from the first node list, then changed with
//!   the router's own `with_node` / `without_node` / `with_weight` (so history-dependent
//!   algorithms such as memento and anchor move what they really move, and an algorithm that
//!   can only drop its last node says so). Every strategy ends on the same router.
//! - The caches start warm: from empty, requests run until every cache is full, which makes its
//!   content exactly what steady traffic gives it. Every strategy then replays the same
//!   request stream from the same caches.
//!
//! Deterministic for a seed: a fixed generator (SplitMix64),
//! integer key ids, sums in a fixed order. Cost: one route per key id for each router of a
//! strategy, plus O(1) per simulated request (a few tens of ns); [`ResizeReport::requests`]
//! says how many were simulated.

mod plan;
mod report;
mod sim;

use std::fmt;
use std::str::FromStr;

use hashroute::{Error, NodeSet, Result, RouterSpec};

use crate::partition::Movement;

pub use report::resize_section;

/// The request stream and the caches: what [`simulate_resize`] replays.
///
/// The defaults ([`Workload::default`]) model a cache like the incident's, at a 92% steady hit
/// rate: key popularity Zipf with exponent 0.99 (YCSB's default skew for key-value stores), a
/// cluster that caches half of the keys it serves (what that skew needs for 92% hits: a cache
/// sized for its working set), 100000 distinct keys (the curves scale with what the cluster
/// caches, not with the key count; this keeps a run near a second), 100000 requests per step
/// (time for a one-node step's dip to end before the next step), and the lowest hit rate taken
/// over windows of 1000 requests (a dashboard's one-minute point is a small fraction of what
/// the cluster caches; shorter windows only add sampling noise, ±0.9 point at 1000).
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    /// Zipf exponent `S` of key popularity (`P(k) ∝ 1/(k+1)^S`); 0 is uniform.
    pub zipf_s: f64,
    /// Distinct keys.
    pub keys: usize,
    /// What the cluster caches before the resize, as a fraction of `keys` (0 < F ≤ 1).
    pub cache_fraction: f64,
    /// Requests after each step before the next one (and after the last).
    pub requests_per_step: usize,
    /// Requests per window of [`ResizeStep::lowest`] and of the recovery (at most
    /// `requests_per_step`).
    pub window: usize,
    /// Seed of the request stream.
    pub seed: u64,
}

impl Workload {
    /// Default Zipf exponent (YCSB's).
    pub const DEFAULT_ZIPF_S: f64 = 0.99;
    /// Default number of distinct keys.
    pub const DEFAULT_KEYS: usize = 100_000;
    /// Default cached fraction of the keys (across the cluster before the resize).
    pub const DEFAULT_CACHE_FRACTION: f64 = 0.5;
    /// Default requests per step.
    pub const DEFAULT_REQUESTS_PER_STEP: usize = 200_000;
    /// Default requests per window.
    pub const DEFAULT_WINDOW: usize = 1000;
    /// Default seed of the request stream.
    pub const DEFAULT_SEED: u64 = 0x5EED;
    /// Most distinct keys accepted: the Zipf table and each router's key-to-node table take
    /// 12 bytes per key.
    pub const MAX_KEYS: usize = 20_000_000;
    /// Most requests one call may simulate (minutes of work), so a typo cannot run for hours.
    pub const MAX_REQUESTS: u64 = 2_000_000_000;

    /// Parses a workload spec: `zipf:S` with `S` a finite number from 0 to 10. Returns `S`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] (`workload`) naming the text and what is accepted.
    pub fn parse_spec(text: &str) -> Result<f64> {
        let bad = |why: &str| Error::InvalidParameter {
            name: "workload",
            reason: format!("{text:?} {why} (expected zipf:S with S from 0 to 10, e.g. zipf:0.99)"),
        };
        let s = text.trim().strip_prefix("zipf:").ok_or_else(|| bad("is not a Zipf workload"))?;
        let s: f64 = s.trim().parse().map_err(|_| bad("has no number after zipf:"))?;
        if !(0.0..=10.0).contains(&s) {
            return Err(bad("has an exponent out of range"));
        }
        Ok(s)
    }

    /// Checks every field's range. O(1).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming the field and the accepted range.
    pub fn validate(&self) -> Result<()> {
        let invalid = |name, reason: String| Err(Error::InvalidParameter { name, reason });
        if !(0.0..=10.0).contains(&self.zipf_s) {
            return invalid("workload", format!("Zipf exponent {} is outside 0 to 10", self.zipf_s));
        }
        if self.keys == 0 || self.keys > Self::MAX_KEYS {
            return invalid("keys", format!("{}: give 1 to {}", self.keys, Self::MAX_KEYS));
        }
        if !(self.cache_fraction > 0.0 && self.cache_fraction <= 1.0) {
            return invalid("cache fraction", format!("{}: give a fraction above 0, at most 1", self.cache_fraction));
        }
        if self.requests_per_step == 0 {
            return invalid("requests per step", "0: give at least 1".into());
        }
        if self.window == 0 || self.window > self.requests_per_step {
            let most = self.requests_per_step;
            return invalid("window", format!("{}: give 1 to the requests per step, {most}", self.window));
        }
        Ok(())
    }
}

impl Default for Workload {
    fn default() -> Workload {
        Workload {
            zipf_s: Self::DEFAULT_ZIPF_S,
            keys: Self::DEFAULT_KEYS,
            cache_fraction: Self::DEFAULT_CACHE_FRACTION,
            requests_per_step: Self::DEFAULT_REQUESTS_PER_STEP,
            window: Self::DEFAULT_WINDOW,
            seed: Self::DEFAULT_SEED,
        }
    }
}

/// How close a step must come back to count as recovered: within this many hit-rate points
/// (0.01 = one point) of its level before the step (for a step that shrinks the cache, of the
/// lower of that and the level it settles at).
pub const RECOVERY_MARGIN: f64 = 0.01;

/// Consecutive windows whose hit rate, together, must be back at the line for a step to count
/// as recovered (one window of 1000 requests varies by about a point on its own).
pub const RECOVERY_WINDOWS: usize = 5;

/// The end of a step whose hit rate is its settled level: the last tenth of its windows.
pub const SETTLED_TAIL: f64 = 0.1;

/// How long a strategy's last step may go on past its requests to recover, in steps.
pub const TAIL_LIMIT: usize = 10;

/// The longest warm-up, in multiples of what the cluster caches. Caches normally fill well
/// before (about 7× at the defaults); one that owns fewer keys than it can hold, or whose keys
/// are too rare to fill it soon, stops filling here and is measured as it is.
pub const WARMUP_LIMIT: usize = 20;

/// A way to get from the first node list to the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ResizeStrategy {
    /// Switch to the final node list in one step: the incident's way.
    AllAtOnce,
    /// Add, reweight or remove one node per step (additions first, in the second list's order,
    /// then weight changes, then removals from the first list's last node back), each step
    /// followed by [`Workload::requests_per_step`] requests.
    OneAtATime,
    /// Warm the new owners first: for one step the old router serves while every request is
    /// also sent to the key's future owner (shadow traffic, filling its cache); then switch to
    /// the final node list at once.
    WarmFirst,
    /// Switch at once, but for one step a miss on the key's new owner reads its previous
    /// owner's cache before the database, filling the new owner (mcrouter's `WarmUpRoute`).
    /// Costs a second cache lookup per miss while it lasts.
    Fallback,
}

impl ResizeStrategy {
    /// Every strategy, in the order reports list them.
    pub const ALL: [ResizeStrategy; 4] =
        [ResizeStrategy::AllAtOnce, ResizeStrategy::OneAtATime, ResizeStrategy::WarmFirst, ResizeStrategy::Fallback];

    /// The strategy's name, as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            ResizeStrategy::AllAtOnce => "all-at-once",
            ResizeStrategy::OneAtATime => "one-at-a-time",
            ResizeStrategy::WarmFirst => "warm-first",
            ResizeStrategy::Fallback => "fallback",
        }
    }

    /// One line saying what the strategy does.
    pub fn description(self) -> &'static str {
        match self {
            ResizeStrategy::AllAtOnce => "switch to the final node list in one step",
            ResizeStrategy::OneAtATime => "add, reweight or remove one node per step",
            ResizeStrategy::WarmFirst => "shadow traffic fills the new owners for one step, then switch at once",
            ResizeStrategy::Fallback => "switch at once; for one step a miss reads the previous owner's cache",
        }
    }

    /// The strategy named `name`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] (`strategy`) listing the names.
    pub fn from_name(name: &str) -> Result<ResizeStrategy> {
        Self::ALL.into_iter().find(|s| s.name() == name).ok_or_else(|| Error::InvalidParameter {
            name: "strategy",
            reason: format!(
                "{name:?} is not a strategy (expected one of: {})",
                Self::ALL.map(ResizeStrategy::name).join(", ")
            ),
        })
    }
}

impl fmt::Display for ResizeStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ResizeStrategy {
    type Err = Error;

    fn from_str(s: &str) -> Result<ResizeStrategy> {
        ResizeStrategy::from_name(s)
    }
}

/// One step of a strategy: a change of the routing (or, for [`ResizeStrategy::WarmFirst`], the
/// warming before it) and the requests that follow it.
#[derive(Clone, Debug, PartialEq)]
pub struct ResizeStep {
    /// What changed, e.g. `+cache-5`, `-cache-2`, `cache-3 weight 1→2`, `+4 nodes`,
    /// `warm +4 nodes`.
    pub change: String,
    /// The keys that changed owner (by node name) and the fewest any router must move; `None`
    /// for a warming step, which moves nothing.
    pub movement: Option<Movement>,
    /// Requests simulated in the step.
    pub requests: usize,
    /// Hit rate over the step's requests.
    pub hit_rate: f64,
    /// Lowest hit rate over a window of [`Workload::window`] requests within the step.
    pub lowest: f64,
    /// Hit rate over the last tenth ([`SETTLED_TAIL`]) of its `requests_per_step` requests:
    /// where it settled.
    pub settled: f64,
    /// The hit rate the step must come back to, less [`RECOVERY_MARGIN`]: its level before
    /// (the steady rate for a first step, else the previous step's settled rate), or for a step
    /// that shrinks what the cluster caches the lower of that and its own settled rate.
    pub target: f64,
    /// Requests before the first [`RECOVERY_WINDOWS`] consecutive windows whose hit rate
    /// together is at or above [`ResizeStep::target`] (0: it never fell below); `None` if it
    /// did not come back within the step. A strategy's last step goes on
    /// until it recovers (at most [`TAIL_LIMIT`] more steps' worth), so its `requests` may
    /// exceed `requests_per_step`.
    pub recovery: Option<usize>,
}

/// What one strategy did: its steps and the hit rate over time.
#[derive(Clone, Debug, PartialEq)]
pub struct StrategyRun {
    /// The strategy.
    pub strategy: ResizeStrategy,
    /// Its steps, in order.
    pub steps: Vec<ResizeStep>,
    /// Hit rate per window, as `(requests since the strategy's first step, at the end of the
    /// window; hit rate)`.
    pub timeline: Vec<(usize, f64)>,
}

impl StrategyRun {
    /// The lowest windowed hit rate of any step (1.0 for no step).
    pub fn lowest(&self) -> f64 {
        self.steps.iter().map(|s| s.lowest).fold(1.0, f64::min)
    }

    /// The steps' recoveries added up: requests spent recovering over the whole resize; `None`
    /// if a step never recovered.
    pub fn recovery(&self) -> Option<usize> {
        self.steps.iter().map(|s| s.recovery).sum()
    }

    /// The longest recovery of any one step; `None` if a step never recovered.
    pub fn longest_recovery(&self) -> Option<usize> {
        self.steps.iter().map(|s| s.recovery).try_fold(0, |m, r| r.map(|r| m.max(r)))
    }

    /// Requests the strategy simulated, from its first step to the end of its last.
    pub fn requests(&self) -> usize {
        self.steps.iter().map(|s| s.requests).sum()
    }

    /// The hit rate the last step settled at ([`ResizeStep::settled`]).
    pub fn final_hit_rate(&self) -> f64 {
        self.steps.last().map_or(f64::NAN, |s| s.settled)
    }
}

/// The outcome of [`simulate_resize`]: the setting, the steady state and every strategy's run.
#[derive(Clone, Debug, PartialEq)]
pub struct ResizeReport {
    /// The router configuration, as `RouterSpec`'s algorithm name and options (`ring, 160
    /// vnodes`).
    pub router: String,
    /// Nodes before.
    pub nodes_before: usize,
    /// Nodes after.
    pub nodes_after: usize,
    /// The workload replayed.
    pub workload: Workload,
    /// Keys each weight-1 node caches.
    pub capacity_per_unit_weight: usize,
    /// Steady hit rate with the first node list, caches warm: over `requests_per_step`
    /// requests before any strategy starts.
    pub steady_before: f64,
    /// One run per strategy asked for, in the order asked.
    pub runs: Vec<StrategyRun>,
    /// Requests simulated in all, the warm-up and the steady measure included.
    pub requests: u64,
}

impl ResizeReport {
    /// The run of `strategy`, if it was simulated.
    pub fn run(&self, strategy: ResizeStrategy) -> Option<&StrategyRun> {
        self.runs.iter().find(|r| r.strategy == strategy)
    }
}

/// Simulates going from the node list `from` to `to` with routers built by `spec`, once per
/// strategy in `strategies` (each strategy once, in the order given), on the same warm caches
/// and the same request stream.
///
/// The caches warm up from empty until every one is full (an LRU's content is then the same
/// whatever it started from: its last distinct keys), at most
/// [`WARMUP_LIMIT`] times what the cluster caches; the steady rate is then
/// measured over `requests_per_step` requests, and every strategy starts from there.
///
/// Cost: one route per key id for each router on the strategies' paths (each intermediate list
/// for [`ResizeStrategy::OneAtATime`]), the exact movement of each step (from the routers' arcs
/// where they have them, else 100000 sampled keys), and O(1) per request: the warm-up, the
/// steady measure and `requests_per_step` per step ([`ResizeReport::requests`]). With the
/// defaults, 4 → 8 nodes and every strategy: about 2.2 million requests, well under a second
/// in release builds.
///
/// # Errors
/// [`Error::InvalidParameter`] for a workload out of range ([`Workload::validate`]), two equal
/// node lists (`nodes`: nothing to resize), a node whose cache would hold no key, an empty
/// strategy list, or a run above [`Workload::MAX_REQUESTS`]; the router's errors for a node list
/// it cannot be built on or a change it cannot make (e.g. removing a middle node from jump).
pub fn simulate_resize(
    spec: &RouterSpec,
    from: &NodeSet,
    to: &NodeSet,
    workload: &Workload,
    strategies: &[ResizeStrategy],
) -> Result<ResizeReport> {
    workload.validate()?;
    let mut wanted: Vec<ResizeStrategy> = Vec::new();
    for &s in strategies {
        if !wanted.contains(&s) {
            wanted.push(s);
        }
    }
    if wanted.is_empty() {
        return Err(Error::InvalidParameter { name: "strategy", reason: "no strategy to simulate".into() });
    }
    let plan = plan::Plan::new(spec, from, to, wanted.contains(&ResizeStrategy::OneAtATime))?;
    let sim = sim::Simulator::new(&plan, workload, &wanted)?;
    sim::run(&plan, &sim, &wanted, spec)
}

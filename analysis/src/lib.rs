//! Measuring routers: which algorithm and how many vnodes for a cluster, the balance of a given
//! router, the keys that move between two routers, and the cache hit rate around a resize.
//!
//! The benchmark suite (`cargo bench`) and the CLI's `hashroute recommend` run this code, so
//! the published report and the tool's answer agree. Everything is deterministic for a given
//! seed; only the timings depend on the machine.
//!
//! ```
//! use hashroute_analysis::{recommend, Request};
//! let rec = recommend(&Request::for_node_count(8).targets(&[1.25]).smoke())?;
//! let ring = &rec.answers[0].ring;
//! assert!(ring.vnodes.unwrap() > 10 && ring.max_over_mean <= 1.25);
//! # Ok::<(), hashroute::Error>(())
//! ```

mod cache;
mod closed_form;
mod decide;
mod measure;
pub mod partition;
#[cfg(feature = "plot")]
pub mod plot;
mod present;
mod recommend;
mod request;
pub mod resize;
mod rng;
mod stats;
pub mod sweep;

pub use cache::{CacheSim, CacheTimeline, Lru};
pub use closed_form::{ring_tail, ring_vnodes_for};
pub use partition::Movement;
pub use present::Summary;
pub use recommend::{recommend, recommend_with_progress, GrowSpread, Progress, Recommendation, TargetAnswer, Verdict};
pub use request::{compatible_names, Prefer, Request, Requirement, DEFAULT_MAX_MEMORY};
pub use resize::{resize_section, simulate_resize, ResizeReport, ResizeStep, ResizeStrategy, StrategyRun, Workload};
pub use stats::Balance;

use hashroute::Result;
use hashroute::{AnyRouter, Router};

/// How evenly `router` spreads keys over its nodes (loads relative to each node's weight
/// share): exact from its structure ([`Router::arcs`]: ring, Ketama, token ring, Redis slots,
/// the nginx, HAProxy and Envoy rings, Maglev's table), else from `sample_keys` routed keys
/// (sampling noise ≈ `sqrt((N - 1) / sample_keys)` of the mean). Cost: O(points) exact,
/// `sample_keys` routes otherwise.
///
/// # Errors
/// None in practice for the crate's routers; the `Result` covers future load models.
pub fn balance(router: &AnyRouter, sample_keys: usize) -> Result<Balance> {
    let shares: Vec<f64> = router.nodes().iter().map(|(_, n)| n.weight()).collect();
    if let Some(p) = partition::Partition::of(router) {
        return Ok(Balance::from_loads(&p.loads(), &shares));
    }
    let mut counts = vec![0f64; router.node_count()];
    let mut rng = rng::SplitMix64::new(0x6B65_7973);
    for _ in 0..sample_keys.max(1) {
        counts[router.route(&rng.next_u64().to_le_bytes()).index()] += 1.0;
    }
    Ok(Balance::from_loads(&counts, &shares))
}

/// The fraction of keys that change owner from `before` to `after`, against the ideal: exact
/// from the structures of two routers whose [`Router::arcs`] place keys alike, else over
/// `sample_keys` random keys.
///
/// # Errors
/// None in practice; the `Result` covers future load models.
pub fn movement(before: &AnyRouter, after: &AnyRouter, sample_keys: usize) -> Result<Movement> {
    if let Some(m) = partition::exact_movement(before, after) {
        return Ok(m);
    }
    Ok(sweep::sampled_movement(before, after, sample_keys.max(1), 0x6D6F))
}

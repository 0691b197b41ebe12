//! Measuring routers: load balance over random clusters, key movement on resize, cache hit rate
//! around a resize, lookup cost, and the recommendation built from them.
//!
//! The benchmark suite (`cargo bench --bench vnodes`) and the CLI's `recommend` command both run
//! this code, so the published report and the tool's answer agree. Everything here is
//! deterministic for a given seed; only the timings depend on the machine.
//!
//! - [`sweep`]: the one list of routers ([`sweep::candidates`]) and the per-cell measurements.
//! - [`partition`]: exact loads and key movement from a router's arcs.
//! - [`cache`]: the LRU-per-node, Zipf-request simulator.
//! - [`recommend`]: smallest V and cheapest algorithm for a node count and balance target.
//! - [`stats`], [`rng`]: quantiles, balance summaries, a frozen random generator.

pub mod cache;
pub mod closed_form;
pub mod partition;
pub mod recommend;
pub mod rng;
pub mod stats;
pub mod sweep;

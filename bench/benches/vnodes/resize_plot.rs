//! The resize plot and its simulation: how each strategy's hit rate moves while a cache cluster
//! grows from 4 to 8 nodes (the same simulation as `hashroute resize`, see
//! `hashroute_analysis::simulate_resize`).
//!
//! `main.rs` runs [`resize_report`] once into the `Context`; `plots::draw_all` draws
//! [`resize_hit_rate`] and `sections::write_report` adds `hashroute_analysis::resize_section`
//! after the cache section.

use std::path::Path;

use hashroute::{Algorithm, NodeSet, RouterSpec};
use hashroute_analysis::{simulate_resize, ResizeReport, ResizeStrategy, Workload};

/// The report's resize: 4 → 8 nodes (`cache-1` …), a ring with 160 vnodes, every strategy, on
/// `workload` ([`Workload::default`] for the published report; a smaller one for smoke runs).
/// About 2 million requests at the defaults, under a second.
///
/// # Errors
/// Only for a workload out of range ([`Workload::validate`]).
pub(crate) fn resize_report(workload: &Workload) -> hashroute::Result<ResizeReport> {
    let nodes = |n: usize| NodeSet::from_names((1..=n).map(|i| format!("cache-{i}")));
    let spec = RouterSpec::new(Algorithm::Ring).with_vnodes(160);
    simulate_resize(&spec, &nodes(4)?, &nodes(8)?, workload, &ResizeStrategy::ALL)
}

/// Draws `resize_hit_rate.svg` into `dir` with the analysis crate's plot (the one
/// `hashroute resize --plot` draws). Returns the file name and title to list among the plots.
///
/// # Errors
/// The plotting library's, as text.
pub(crate) fn resize_hit_rate(dir: &Path, report: &ResizeReport) -> Result<(String, String), String> {
    let file = "resize_hit_rate.svg";
    let title = hashroute_analysis::plot::resize_hit_rate(&dir.join(file), report)?;
    Ok((file.to_owned(), title))
}

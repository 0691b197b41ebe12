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

use crate::report::{line_chart, Axes, Series};

/// Points per line: enough for a dip of a few windows to show, few enough for a light SVG.
const MAX_POINTS: usize = 400;

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

/// Draws `resize_hit_rate.svg` into `dir`: hit rate per window against requests since each
/// strategy's first step, one line per strategy, and the steady rate before the resize.
/// Returns the file name and title to list among the plots.
///
/// # Errors
/// The plotting library's, as text.
pub(crate) fn resize_hit_rate(dir: &Path, report: &ResizeReport) -> Result<(String, String), String> {
    let mut series: Vec<Series> =
        report.runs.iter().map(|r| Series::new(r.strategy.name(), thin(&r.timeline))).collect();
    let end = report.runs.iter().map(|r| r.requests()).max().unwrap_or(0) as f64;
    let steady = 100.0 * report.steady_before;
    series.push(Series::reference(format!("steady before, {steady:.1}%"), vec![(0.0, steady), (end, steady)]));
    let window = report.workload.window;
    let y = format!("hit rate per window of {window} requests, %");
    let axes =
        Axes { x: "requests since the strategy's first step", y: &y, log_x: false, log_y: false, categories: None };
    let title = format!(
        "Cache hit rate while growing {} -> {} nodes ({}, LRU per node, Zipf s={})",
        report.nodes_before, report.nodes_after, report.router, report.workload.zipf_s
    );
    let file = "resize_hit_rate.svg";
    line_chart(&dir.join(file), &title, &axes, &series)?;
    Ok((file.to_owned(), title))
}

/// `(requests, hit rate %)` with at most [`MAX_POINTS`] points: consecutive windows averaged
/// (they have nearly equal lengths), each point at the end of its group.
fn thin(timeline: &[(usize, f64)]) -> Vec<(f64, f64)> {
    let group = timeline.len().div_ceil(MAX_POINTS).max(1);
    timeline
        .chunks(group)
        .map(|c| {
            let end = c.last().map_or(0, |p| p.0) as f64;
            (end, 100.0 * c.iter().map(|p| p.1).sum::<f64>() / c.len() as f64)
        })
        .collect()
}

//! The SVG plots, one function per plot and one question per plot. Every axis says its unit;
//! axes whose data span decades are logarithmic; legends sit in a panel beside the plot.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hashroute_analysis::ring_tail;
use hashroute_analysis::Request;

/// The balance target drawn on the plot (the second default target, 1.10).
const DEFAULT_MAX_LOAD: f64 = Request::DEFAULT_TARGETS[1];
use hashroute_analysis::sweep::{BalanceCell, RING_VNODES};

use crate::report::{criterion_estimates, line_chart, Axes, Series};
use crate::Context;

/// A written plot: file name (relative to the report folder) and title.
pub(crate) struct Plot {
    pub file: String,
    pub title: String,
}

/// Collects the plots that were written; a plot that fails is reported on stderr and left out.
struct Plotter {
    dir: PathBuf,
    done: Vec<Plot>,
}

impl Plotter {
    fn draw(&mut self, file: &str, title: &str, axes: &Axes<'_>, series: &[Series]) {
        match line_chart(&self.dir.join(file), title, axes, series) {
            Ok(()) => self.done.push(Plot { file: file.to_string(), title: title.to_string() }),
            Err(err) => eprintln!("vnodes: plot {file}: {err}"),
        }
    }
}

/// Draws every plot into `dir`.
pub(crate) fn draw_all(dir: &Path, ctx: &Context<'_>) -> Vec<Plot> {
    let mut p = Plotter { dir: dir.to_path_buf(), done: Vec::new() };
    stddev_vs_vnodes(&mut p, ctx);
    tail_vs_vnodes(&mut p, ctx);
    memory_vs_vnodes(&mut p, ctx);
    movement_add_one(&mut p, ctx);
    cache_hit_rate(&mut p, ctx);
    throughput_vs_threads(&mut p, ctx);
    lookup_kernels(&mut p);
    p.done.extend(crate::hashing::plot(dir));
    p.done.extend(crate::tokens::plot(dir, ctx.tokens));
    if let Some(r) = ctx.resize {
        match crate::resize_plot::resize_hit_rate(dir, r) {
            Ok((file, title)) => p.done.push(Plot { file, title }),
            Err(err) => eprintln!("vnodes: plot resize_hit_rate.svg: {err}"),
        }
    }
    p.done
}

/// The ring cells (`ring-v<V>`) at `n` nodes, by V.
fn ring_cells<'a>(ctx: &Context<'a>, n: usize) -> Vec<&'a BalanceCell> {
    let mut v: Vec<&BalanceCell> =
        ctx.sweep.balance.iter().filter(|c| c.nodes == n && c.candidate.starts_with("ring-v")).collect();
    v.sort_by_key(|c| vnodes(c) as u32);
    v
}

fn vnodes(c: &BalanceCell) -> f64 {
    c.candidate.trim_start_matches("ring-v").parse::<f64>().unwrap_or(1.0)
}

fn grid_vnodes() -> Vec<f64> {
    RING_VNODES.iter().map(|&v| f64::from(v)).collect()
}

/// The quantile a cell's tail label stands for; `max` of k clusters is read as the k/(k+1)
/// quantile (the expected rank of the largest of k draws).
fn tail_quantile(c: &BalanceCell) -> f64 {
    match c.tail {
        "p99" => 0.99,
        "p95" => 0.95,
        "p90" => 0.90,
        _ => c.clusters as f64 / (c.clusters as f64 + 1.0),
    }
}

/// Node counts of the tail plot: a spread of four (two lines each, so eight node counts
/// would be unreadable); all of them when the run has fewer.
fn tail_node_counts(ctx: &Context<'_>) -> Vec<usize> {
    let picked: Vec<usize> = [3, 10, 100, 1000].into_iter().filter(|n| ctx.run.node_counts.contains(n)).collect();
    if picked.len() >= 2 {
        picked
    } else {
        ctx.run.node_counts.clone()
    }
}

/// The tail quantiles the cells report, first to last (`p99`, or `p99→p90` when big cells
/// have fewer clusters).
fn tail_names(cells: &[&BalanceCell]) -> String {
    match (cells.first(), cells.last()) {
        (Some(a), Some(b)) if a.tail != b.tail => format!("{}→{}", a.tail, b.tail),
        (Some(a), _) => a.tail.to_string(),
        _ => String::new(),
    }
}

/// How uneven is a ring, by V? (Std dev is nearly independent of N.)
fn stddev_vs_vnodes(p: &mut Plotter, ctx: &Context<'_>) {
    let mut series: Vec<Series> = ctx
        .run
        .node_counts
        .iter()
        .map(|&n| {
            Series::new(format!("N={n}"), ring_cells(ctx, n).iter().map(|c| (vnodes(c), c.std_dev_pct)).collect())
        })
        .collect();
    series.push(Series::reference("100/sqrt(V)", grid_vnodes().iter().map(|&v| (v, 100.0 / v.sqrt())).collect()));
    let axes = Axes {
        x: "vnodes per node V (log)",
        y: "std dev of node load, % of mean (log)",
        log_x: true,
        log_y: true,
        categories: None,
    };
    p.draw("stddev_vs_vnodes.svg", "Ring: std dev of node load vs vnodes (median over clusters)", &axes, &series);
}

/// How many vnodes does N need for the busiest node to stay under the target? Measured tail
/// (solid) next to the closed form for the same quantile (dashed, same colour).
fn tail_vs_vnodes(p: &mut Plotter, ctx: &Context<'_>) {
    let excess = |m: f64| 100.0 * (m - 1.0);
    let mut series = Vec::new();
    for (i, &n) in tail_node_counts(ctx).iter().enumerate() {
        let cells = ring_cells(ctx, n);
        let measured: Vec<(f64, f64)> = cells.iter().map(|c| (vnodes(c), excess(c.tail_max_over_mean))).collect();
        let model: Vec<(f64, f64)> = cells
            .iter()
            .filter_map(|c| ring_tail(vnodes(c), n, tail_quantile(c)).ok().map(|t| (vnodes(c), excess(t))))
            .collect();
        series.push(Series::new(format!("N={n} measured, {}", tail_names(&cells)), measured).color(i));
        series.push(Series::model(format!("N={n} closed form"), model, i));
    }
    let target = excess(DEFAULT_MAX_LOAD);
    series.push(Series::reference(
        format!("target max/mean {DEFAULT_MAX_LOAD:.2}"),
        grid_vnodes().iter().map(|&v| (v, target)).collect(),
    ));
    let axes = Axes {
        x: "vnodes per node V (log)",
        y: "busiest node's load over the mean − 1, % (tail over clusters, log)",
        log_x: true,
        log_y: true,
        categories: None,
    };
    let title = "Ring: busiest node's excess load vs vnodes (tail over random clusters)";
    p.draw("maxmean_vs_vnodes.svg", title, &axes, &series);
}

/// What does a ring cost in memory, by V and N?
fn memory_vs_vnodes(p: &mut Plotter, ctx: &Context<'_>) {
    let series: Vec<Series> = ctx
        .run
        .node_counts
        .iter()
        .map(|&n| {
            Series::new(
                format!("N={n}"),
                ring_cells(ctx, n).iter().map(|c| (vnodes(c), c.memory_bytes as f64)).collect(),
            )
        })
        .collect();
    let axes =
        Axes { x: "vnodes per node V (log)", y: "memory, bytes (log)", log_x: true, log_y: true, categories: None };
    p.draw("memory_vs_vnodes.svg", "Ring: memory vs vnodes (memory_bytes())", &axes, &series);
}

/// How many keys move when one node joins, against the ideal 1/(N+1)?
fn movement_add_one(p: &mut Plotter, ctx: &Context<'_>) {
    let mut by_cand: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut ideal: BTreeMap<usize, f64> = BTreeMap::new();
    for m in ctx.sweep.movement.iter().filter(|m| m.resize.label == "+1") {
        by_cand.entry(m.candidate.clone()).or_default().push((m.resize.from as f64, 100.0 * m.moved));
        ideal.insert(m.resize.from, 100.0 * m.ideal);
    }
    let mut series: Vec<Series> = by_cand
        .into_iter()
        .map(|(c, mut pts)| {
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series::new(c, pts)
        })
        .collect();
    series.push(Series::reference("ideal 1/(N+1)", ideal.into_iter().map(|(n, y)| (n as f64, y)).collect()));
    let axes = Axes {
        x: "nodes N before adding one (log)",
        y: "keys moved, % (median over clusters, log)",
        log_x: true,
        log_y: true,
        categories: None,
    };
    p.draw("movement.svg", "Keys moved when one node is added (N -> N+1)", &axes, &series);
}

/// How deep and how long is the cache-miss dip after a 10 -> 11 resize?
fn cache_hit_rate(p: &mut Plotter, ctx: &Context<'_>) {
    let series: Vec<Series> = ctx
        .sweep
        .cache
        .iter()
        .map(|(c, t)| {
            let at = |i: usize| ((i as f64) - t.resize_at as f64) * t.window as f64;
            Series::new(c.clone(), t.hit_rate.iter().enumerate().map(|(i, h)| (at(i), 100.0 * h)).collect())
        })
        .collect();
    let axes = Axes {
        x: "requests since the resize",
        y: "hit rate per window, %",
        log_x: false,
        log_y: false,
        categories: None,
    };
    let title = format!("Cache hit rate around a 10 -> 11 resize (LRU per node, Zipf s={})", ctx.run.cache.zipf_s);
    p.draw("cache_hit_rate.svg", &title, &axes, &series);
}

/// Does a router scale with threads?
fn throughput_vs_threads(p: &mut Plotter, ctx: &Context<'_>) {
    let mut by_cand: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for t in &ctx.sweep.throughput {
        by_cand.entry(t.candidate.clone()).or_default().push(((t.threads - 1) as f64, t.per_second / 1e6));
    }
    let max_threads = ctx.sweep.throughput.iter().map(|t| t.threads).max().unwrap_or(1);
    let threads: Vec<String> = (1..=max_threads).map(|t| t.to_string()).collect();
    let axes = Axes {
        x: "threads",
        y: "million lookups per second (log)",
        log_x: false,
        log_y: true,
        categories: Some(&threads),
    };
    let series: Vec<Series> = by_cand.into_iter().map(|(c, pts)| Series::new(c, pts)).collect();
    let title = format!("Lookups/s vs threads ({} nodes, par_route_batch)", ctx.sweep.head_n);
    p.draw("throughput_vs_threads.svg", &title, &axes, &series);
}

/// Which search kernel is fastest at each ring size? ns per key (criterion times a batch of
/// keys per iteration; divided by its declared element count).
fn lookup_kernels(p: &mut Plotter) {
    let mut by_kernel: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for est in criterion_estimates("lookup") {
        if let Ok(x) = est.parameter.parse::<f64>() {
            by_kernel.entry(est.function.clone()).or_default().push((x, est.ns_per_element()));
        }
    }
    if by_kernel.is_empty() {
        return;
    }
    let series: Vec<Series> = by_kernel
        .into_iter()
        .map(|(f, mut pts)| {
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series::new(f, pts)
        })
        .collect();
    let axes = Axes {
        x: "ring size, points (log)",
        y: "ns per lookup (criterion median / keys per batch, log)",
        log_x: true,
        log_y: true,
        categories: None,
    };
    p.draw("lookup_ns_vs_size.svg", "Search kernels: ns per lookup vs ring size", &axes, &series);
}

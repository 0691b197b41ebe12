//! The "Token rings: allocated tokens against random vnodes" part of the report: how
//! evenly an allocated [`TokenRing`] spreads the key space at V tokens per node, against a
//! random-vnode [`Ring`] that hashes V points per node, and how many random vnodes match the
//! allocator at 16. One function per output, as in the other modules: [`Study::measure`] (the
//! numbers), [`section`] (Markdown + `token_rings.csv`), [`plot`] (`token_balance_vs_tokens.svg`).
//!
//! Everything is exact and deterministic: loads are the arcs' lengths (`TokenRing::ownership`,
//! `Router::arcs`), not sampled keys, and the weights and cluster names come from fixed seeds,
//! so the section costs CPU only (no criterion time). The metric throughout is the worst node's
//! ownership over its weighted share, `max_i (owned_i / 2^64) / (w_i / Σw)`: 1.0 is perfect;
//! with unit weights it equals the sweep's max/mean.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use hashroute::token_ring::TokenAllocator;
use hashroute::{Node, NodeSet, Ring, Router, TokenRing};
use hashroute_analysis::ring_vnodes_for;
use hashroute_analysis::sweep::cluster_names;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::plots::Plot;
use crate::report::common::Mode;
use crate::report::{line_chart, md_table, write_csv, Axes, Series};

/// Tokens per node of the allocated rings.
const ALLOCATED_V: [u32; 5] = [4, 8, 16, 32, 64];
/// The allocator's default (Cassandra's `num_tokens`): the balance random rings must reach.
const REFERENCE_V: u32 = 16;
/// The growth target at 16 tokens per node, drawn on the plot.
const GROWTH_TARGET: f64 = 1.06;
/// The growth scenario: single additions from an empty ring.
const GROWTH_NODES: usize = 120;
/// Seed of the 1..=4 weight draws; cluster `k`'s names use seed `NAMES_SEED + k`.
const WEIGHTS_SEED: u64 = 0x70CE_2021;
const NAMES_SEED: u64 = 0x70CE_0000;

/// Unit weights, or weights drawn from 1..=4.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Weights {
    Unit,
    OneToFour,
}

impl Weights {
    const ALL: [Weights; 2] = [Weights::Unit, Weights::OneToFour];

    fn name(self) -> &'static str {
        match self {
            Weights::Unit => "unit",
            Weights::OneToFour => "1-4",
        }
    }

    /// The weights of nodes `0..n` (the same draw for every ring of this weighting).
    fn of(self, n: usize) -> Vec<f64> {
        let mut rng = Pcg64::seed_from_u64(WEIGHTS_SEED);
        (0..n)
            .map(|_| match self {
                Weights::Unit => 1.0,
                Weights::OneToFour => f64::from(rng.gen_range(1u32..=4)),
            })
            .collect()
    }
}

/// The sizes of one mode's study.
struct Plan {
    node_counts: Vec<usize>,
    /// Random clusters (name sets) per random-ring cell: the cell is their median.
    clusters: usize,
    /// Points per random cell over its clusters: a cell of big rings uses fewer clusters (at
    /// least one), and the table's powers of two stop where one ring would exceed it.
    point_budget: u64,
    /// The largest random ring the search for the needed V builds (one cluster at that size;
    /// at most the ring's cap of 2^26 points).
    max_ring_points: u64,
}

impl Plan {
    fn for_mode(mode: Mode) -> Plan {
        Plan {
            node_counts: mode.pick4(vec![10], vec![10, 100], vec![10, 100, 1000], vec![10, 100, 1000, 10_000]),
            clusters: mode.pick4(1, 3, 3, 11),
            point_budget: mode.pick4(100_000, 2_000_000, 4_000_000, 40_000_000),
            max_ring_points: mode.pick4(100_000, 4_000_000, 12_000_000, 64_000_000),
        }
    }

    /// The random rings' V in the table: powers of two from 4 while one ring fits the budget.
    fn random_v(&self, n: usize) -> Vec<u32> {
        (2..=16).map(|e| 1u32 << e).take_while(|&v| n as u64 * u64::from(v) <= self.point_budget).collect()
    }

    /// Clusters of a random cell of `n` nodes at `v`: as many as the budget holds, 1 to
    /// [`Plan::clusters`].
    fn clusters_for(&self, n: usize, v: u32) -> usize {
        let per_cluster = n as u64 * u64::from(v);
        usize::try_from(self.point_budget / per_cluster).unwrap_or(usize::MAX).clamp(1, self.clusters)
    }
}

/// One cell: worst ownership / share of one kind of ring at (weights, N, V).
#[derive(Clone, Debug)]
pub(crate) struct Cell {
    pub weights: Weights,
    pub nodes: usize,
    pub v: u32,
    /// Allocated: the one ring's value. Random: the median over the clusters.
    pub worst: f64,
}

/// The random ring's V that matches the allocated ring's balance at [`REFERENCE_V`].
#[derive(Clone, Debug)]
pub(crate) struct Needed {
    pub weights: Weights,
    pub nodes: usize,
    /// The allocated ring's worst ownership / share at 16 tokens per node.
    pub allocated: f64,
    /// `Some((V, its median worst))`: where doubling, then bisection to within 1/16 of V, finds
    /// the median reaching `allocated`; `None` when the largest ring the plan builds falls short.
    pub random: Option<(u32, f64)>,
    /// The largest V tried (the budget's limit when `random` is `None`).
    pub tried: u32,
    /// When `random` is `None` with unit weights: the closed form's V for the median
    /// (`hashroute_analysis::ring_vnodes_for`), an estimate rather than a measurement.
    pub estimate: Option<u64>,
}

/// The growth and removal scenario of one weighting at [`REFERENCE_V`].
#[derive(Clone, Debug)]
pub(crate) struct Scenario {
    pub weights: Weights,
    /// Worst ownership / share over the 120 single additions (from the second node on).
    pub growth_allocated: f64,
    pub growth_random: f64,
    /// Worst over removing 20% of the 120 nodes one at a time.
    pub removals_allocated: f64,
    pub removals_random: f64,
    /// Tokens per node after the removals (the allocator's average; a random ring keeps 16).
    pub tokens_per_node: f64,
}

/// Everything the section, the CSV and the plot show.
pub(crate) struct Study {
    pub allocated: Vec<Cell>,
    pub random: Vec<Cell>,
    pub needed: Vec<Needed>,
    pub scenarios: Vec<Scenario>,
    pub clusters: usize,
    /// [`Plan::point_budget`] and [`Plan::max_ring_points`], for the section's text.
    pub point_budget: u64,
    pub max_ring_points: u64,
    pub elapsed: f64,
}

/// `max_i (owned_i / 2^64) / (w_i / Σw)` for exact owned lengths indexed like `weights`.
fn worst_over_share(owned: &[u128], weights: &[f64]) -> f64 {
    let total: f64 = weights.iter().sum();
    // 2^64 as f64 is exact; plain IEEE arithmetic, so every machine prints the same value.
    let ring = 18_446_744_073_709_551_616.0;
    owned.iter().zip(weights).map(|(&o, &w)| (o as f64 / ring) / (w / total)).fold(0.0, f64::max)
}

/// A node set of `names` with `weights`.
fn node_set(names: &[String], weights: &[f64]) -> NodeSet {
    NodeSet::new(names.iter().zip(weights).map(|(n, &w)| Node::new(n.as_str()).with_weight(w))).expect("valid nodes")
}

/// The allocated token ring's worst ownership / share at `v` tokens per node (nodes allocated
/// one at a time, in order).
fn allocated_worst(names: &[String], weights: &[f64], v: u32) -> f64 {
    let ring = TokenRing::builder().tokens_per_node(v).node_set(node_set(names, weights)).build().expect("token ring");
    let ownership = ring.ownership();
    let total: f64 = weights.iter().sum();
    // Node ids follow the node set's order, which is `names`' order.
    ownership.iter().zip(weights).map(|(&o, &w)| o / (w / total)).fold(0.0, f64::max)
}

/// A random-vnode ring's worst ownership / share, with as many points as the token ring: a
/// ring gives a node of weight `w` `V·w` points, so the ring is built with the weights scaled
/// to mean 1 (`w·N/Σw`, the same shares), `V·N` points in all. Big rings build on the rayon
/// pool (the points do not depend on it).
fn random_worst(names: &[String], weights: &[f64], v: u32) -> f64 {
    let total: f64 = weights.iter().sum();
    let scaled: Vec<f64> = weights.iter().map(|w| w * names.len() as f64 / total).collect();
    let ring =
        Ring::builder().vnodes(u64::from(v)).parallel(true).node_set(node_set(names, &scaled)).build().expect("ring");
    let arcs = ring.arcs().expect("a ring has exact arcs");
    worst_over_share(&arcs.owned(names.len()), weights)
}

/// The median (the mean of the middle two for an even count).
fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let mid = xs.len() / 2;
    if xs.len().is_multiple_of(2) {
        (xs[mid - 1] + xs[mid]) / 2.0
    } else {
        xs[mid]
    }
}

/// Cluster `k`'s `n` node names (the allocated ring uses cluster 0's).
fn names(k: usize, n: usize) -> Vec<String> {
    cluster_names(NAMES_SEED + k as u64, n)
}

/// The median over `clusters` random rings of (weights, `n`, `v`).
fn random_median(weights: &[f64], n: usize, v: u32, clusters: usize) -> f64 {
    median((0..clusters).map(|k| random_worst(&names(k, n), weights, v)).collect())
}

impl Study {
    /// Runs the whole study for `mode` (seconds in the default mode).
    pub(crate) fn measure(mode: Mode) -> Study {
        let start = Instant::now();
        let plan = Plan::for_mode(mode);
        let mut study = Study {
            allocated: Vec::new(),
            random: Vec::new(),
            needed: Vec::new(),
            scenarios: Vec::new(),
            clusters: plan.clusters,
            point_budget: plan.point_budget,
            max_ring_points: plan.max_ring_points,
            elapsed: 0.0,
        };
        for w in Weights::ALL {
            for &n in &plan.node_counts {
                study.grid(&plan, w, n);
                let needed = study.needed_v(&plan, w, n);
                study.needed.push(needed);
            }
            study.scenarios.push(scenario(w));
        }
        study.elapsed = start.elapsed().as_secs_f64();
        study
    }

    /// The allocated and random cells of (weights, `n`).
    fn grid(&mut self, plan: &Plan, w: Weights, n: usize) {
        let weights = w.of(n);
        let first = names(0, n);
        for v in ALLOCATED_V {
            self.allocated.push(Cell { weights: w, nodes: n, v, worst: allocated_worst(&first, &weights, v) });
        }
        for v in plan.random_v(n) {
            let worst = random_median(&weights, n, v, plan.clusters_for(n, v));
            self.random.push(Cell { weights: w, nodes: n, v, worst });
        }
    }

    /// The random ring's V for the allocated ring's balance at 16: the table's powers of two
    /// first, then doubling past them up to the largest ring, then bisection down to 1/16 of V.
    fn needed_v(&self, plan: &Plan, w: Weights, n: usize) -> Needed {
        let target = self.cell(&self.allocated, w, n, REFERENCE_V).expect("the allocated grid has V = 16");
        let weights = w.of(n);
        let meets = |v: u32| {
            let m = self
                .cell(&self.random, w, n, v)
                .unwrap_or_else(|| random_median(&weights, n, v, plan.clusters_for(n, v)));
            (m <= target, m)
        };
        let fits = |v: u32| n as u64 * u64::from(v) <= plan.max_ring_points;
        let (mut lo, mut hi) = (0u32, 4u32);
        let mut found = loop {
            if !fits(hi) {
                let estimate = (w == Weights::Unit).then(|| ring_vnodes_for(n, target, 0.5).ok()).flatten();
                return Needed { weights: w, nodes: n, allocated: target, random: None, tried: lo, estimate };
            }
            match meets(hi) {
                (true, m) => break (hi, m),
                (false, _) => (lo, hi) = (hi, hi * 2),
            }
        };
        while hi - lo > (hi / 16).max(1) {
            let mid = lo + (hi - lo) / 2;
            match meets(mid) {
                (true, m) => (hi, found) = (mid, (mid, m)),
                (false, _) => lo = mid,
            }
        }
        Needed { weights: w, nodes: n, allocated: target, random: Some(found), tried: found.0, estimate: None }
    }

    fn cell(&self, cells: &[Cell], w: Weights, n: usize, v: u32) -> Option<f64> {
        cells.iter().find(|c| c.weights == w && c.nodes == n && c.v == v).map(|c| c.worst)
    }
}

/// 120 single additions from an empty ring at 16 tokens per node, then 20% of the nodes removed
/// one at a time (every fifth node); a random ring at 16 vnodes per node goes through the same
/// memberships (rebuilt: its points are a function of the names).
fn scenario(w: Weights) -> Scenario {
    let all = names(0, GROWTH_NODES);
    let weights = w.of(GROWTH_NODES);
    let mut alloc = TokenAllocator::new();
    let (mut growth_allocated, mut growth_random) = (0.0f64, 0.0f64);
    for (i, name) in all.iter().enumerate() {
        alloc.add_node(name, weights[i], "dc1", "rack1", REFERENCE_V).expect("addition");
        if i > 0 {
            growth_allocated = growth_allocated.max(alloc.balance());
            growth_random = growth_random.max(random_worst(&all[..=i], &weights[..=i], REFERENCE_V));
        }
    }
    let mut alive: Vec<usize> = (0..GROWTH_NODES).collect();
    let (mut removals_allocated, mut removals_random) = (0.0f64, 0.0f64);
    for gone in (0..GROWTH_NODES).step_by(5) {
        alloc.remove_node(&all[gone]).expect("removal");
        alive.retain(|&i| i != gone);
        removals_allocated = removals_allocated.max(alloc.balance());
        let (n, w): (Vec<String>, Vec<f64>) = alive.iter().map(|&i| (all[i].clone(), weights[i])).unzip();
        removals_random = removals_random.max(random_worst(&n, &w, REFERENCE_V));
    }
    Scenario {
        weights: w,
        growth_allocated,
        growth_random,
        removals_allocated,
        removals_random,
        tokens_per_node: alloc.token_count() as f64 / alloc.len() as f64,
    }
}

/// The section's table of the grid: one row per (weights, N), allocated at each V, then the
/// random rings at the same V and above.
fn grid_table(study: &Study) -> String {
    let random_vs: Vec<u32> = {
        let mut v: Vec<u32> = study.random.iter().map(|c| c.v).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let mut header: Vec<String> = vec!["weights".into(), "N".into(), "ring".into()];
    header.extend(random_vs.iter().map(|v| format!("V={v}")));
    let mut rows = Vec::new();
    let mut keys: Vec<(Weights, usize)> = study.allocated.iter().map(|c| (c.weights, c.nodes)).collect();
    keys.dedup();
    for (w, n) in keys {
        for (kind, cells) in [("allocated", &study.allocated), ("random", &study.random)] {
            let mut row = vec![w.name().to_string(), n.to_string(), kind.to_string()];
            row.extend(random_vs.iter().map(|&v| study.cell(cells, w, n, v).map_or("—".into(), |x| format!("{x:.3}"))));
            rows.push(row);
        }
    }
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    md_table(&header, &rows)
}

fn needed_table(study: &Study) -> String {
    let rows: Vec<Vec<String>> = study
        .needed
        .iter()
        .map(|d| {
            let (v, worst, ratio) = match d.random {
                Some((v, m)) => {
                    (v.to_string(), format!("{m:.3}"), format!("{:.0}×", f64::from(v) / f64::from(REFERENCE_V)))
                }
                None => {
                    let estimate = d.estimate.map_or(String::new(), |e| format!(" (closed form ≈ {e}, an estimate)"));
                    (
                        format!("> {}{estimate}", d.tried),
                        "—".into(),
                        format!("> {:.0}×", f64::from(d.tried) / f64::from(REFERENCE_V)),
                    )
                }
            };
            vec![d.weights.name().into(), d.nodes.to_string(), format!("{:.3}", d.allocated), v, worst, ratio]
        })
        .collect();
    md_table(&["weights", "N", "allocated, V=16", "random ring's V", "its worst / share", "points ×"], &rows)
}

fn scenario_table(study: &Study) -> String {
    let rows: Vec<Vec<String>> = study
        .scenarios
        .iter()
        .map(|s| {
            vec![
                s.weights.name().into(),
                format!("{:.3}", s.growth_allocated),
                format!("{:.3}", s.growth_random),
                format!("{:.3}", s.removals_allocated),
                format!("{:.3}", s.removals_random),
                format!("{:.1}", s.tokens_per_node),
            ]
        })
        .collect();
    md_table(
        &[
            "weights",
            "growth: allocated",
            "growth: random",
            "removals: allocated",
            "removals: random",
            "tokens per node after",
        ],
        &rows,
    )
}

/// The "Token rings" section; also writes `token_rings.csv` into `dir`.
pub(crate) fn section(dir: &Path, study: &Study) -> String {
    if let Err(e) = write_csv(&dir.join("token_rings.csv"), &CSV_HEADER, &csv_rows(study)) {
        eprintln!("vnodes: token_rings.csv: {e}");
    }
    let mut r = String::from("## Token rings: allocated tokens against random vnodes\n\n");
    let _ = writeln!(
        r,
        "The worst node's ownership over its weighted share (max over nodes of `owned / 2^64` ÷ `w / Σw`; 1.000 is perfect), \
exact from the rings' token ranges. **allocated**: a `TokenRing` whose nodes the allocator (`TokenAllocator`) added one at a \
time with V tokens each. **random**: a `Ring` hashing V points per node (a node of weight w gets about V·N·w/Σw), the median \
over {} random clusters (`10.a.b.c:port` names; fewer, at least one, for rings beyond {} points in all). Weights are unit or \
drawn from 1..=4 (fixed seed). Computed in {:.1} s.\n",
        study.clusters, study.point_budget, study.elapsed
    );
    r.push_str(&grid_table(study));
    let _ = writeln!(r, "\n### Random vnodes needed for the allocated ring's balance at V = {REFERENCE_V}\n");
    let _ = write!(r, "Where the search lands: the table's powers of two, doubling beyond them, then bisection to within 1/16 of V \
on the median (a ring's balance is not monotone in V, so this is an estimate of the need, not a bound); `points ×` is that V over 16, \
the ring points it takes per allocated token. `> V` when the largest ring this mode builds ({} points) falls short; for unit \
weights the closed form's median (analysis `ring_vnodes_for`, the Gamma model the recommendation aims with) then says roughly where \
(`HASHROUTE_FULL=1` measures it).\n\n", study.max_ring_points);
    r.push_str(&needed_table(study));
    let _ = writeln!(r, "\n### Growth and removals at V = {REFERENCE_V} ({GROWTH_NODES} nodes)\n");
    let _ = writeln!(r, "Worst value over {GROWTH_NODES} single additions to an empty ring (from the second node on), then over removing 20% of the nodes one at a time (every fifth); the issue's targets for the allocator are ≤ {GROWTH_TARGET:.2} and ≤ 1.10. Tokens per node is the allocator's average after the removals (at most 2 V).\n");
    r.push_str(&scenario_table(study));
    r.push_str(&criterion_table());
    r.push('\n');
    r
}

/// The criterion medians of `tokens/…` (benches/tokens.rs), when that bench ran.
fn criterion_table() -> String {
    let est = crate::report::criterion_estimates("tokens");
    if est.is_empty() {
        return "\nRouting and allocation times: not measured in this run (`cargo bench --bench tokens`).\n".into();
    }
    let rows: Vec<Vec<String>> = est
        .iter()
        .map(|c| {
            let value = if c.function == "allocate" {
                format!("{:.2} ms per ring ({:.2} µs per node)", c.median_ns / 1e6, c.ns_per_element() / 1e3)
            } else {
                format!("{:.2} ns per key", c.ns_per_element())
            };
            vec![c.function.clone(), c.parameter.clone(), value]
        })
        .collect();
    format!(
        "\n### Routing and allocation (criterion, `tokens` group from benches/tokens.rs)\n\nThe token ring and a ring with as many points (16 per node, same hasher); allocation adds the nodes one at a time at 16 tokens.\n\n{}",
        md_table(&["bench", "points / nodes", "median"], &rows)
    )
}

const CSV_HEADER: [&str; 6] = ["measure", "ring", "weights", "nodes", "tokens_per_node", "worst_over_share"];

fn csv_rows(study: &Study) -> Vec<Vec<String>> {
    let row = |measure: &str, ring: &str, w: Weights, n: usize, v: String, x: f64| {
        vec![measure.into(), ring.into(), w.name().into(), n.to_string(), v, format!("{x:.6}")]
    };
    let mut rows = Vec::new();
    for (ring, cells) in [("allocated", &study.allocated), ("random", &study.random)] {
        rows.extend(cells.iter().map(|c| row("balance", ring, c.weights, c.nodes, c.v.to_string(), c.worst)));
    }
    for d in &study.needed {
        rows.push(row("v_needed", "allocated", d.weights, d.nodes, REFERENCE_V.to_string(), d.allocated));
        if let Some((v, m)) = d.random {
            rows.push(row("v_needed", "random", d.weights, d.nodes, v.to_string(), m));
        }
    }
    for s in &study.scenarios {
        let v = REFERENCE_V.to_string();
        rows.push(row("growth_worst", "allocated", s.weights, GROWTH_NODES, v.clone(), s.growth_allocated));
        rows.push(row("growth_worst", "random", s.weights, GROWTH_NODES, v.clone(), s.growth_random));
        let left = GROWTH_NODES - GROWTH_NODES / 5;
        rows.push(row(
            "removals_worst",
            "allocated",
            s.weights,
            left,
            format!("{:.2}", s.tokens_per_node),
            s.removals_allocated,
        ));
        rows.push(row("removals_worst", "random", s.weights, left, v, s.removals_random));
    }
    rows
}

/// `token_balance_vs_tokens.svg`: worst ownership / share − 1 against tokens per node, one
/// colour per N (unit weights): allocated solid, random dashed.
pub(crate) fn plot(dir: &Path, study: &Study) -> Option<Plot> {
    let excess = |x: f64| 100.0 * (x - 1.0);
    let mut series = Vec::new();
    let mut ns: Vec<usize> = study.allocated.iter().filter(|c| c.weights == Weights::Unit).map(|c| c.nodes).collect();
    ns.dedup();
    let points = |cells: &[Cell], n: usize| -> Vec<(f64, f64)> {
        cells
            .iter()
            .filter(|c| c.weights == Weights::Unit && c.nodes == n)
            .map(|c| (f64::from(c.v), excess(c.worst)))
            .collect()
    };
    for (i, &n) in ns.iter().enumerate() {
        series.push(Series::new(format!("N={n} allocated"), points(&study.allocated, n)).color(i));
        series.push(Series::model(format!("N={n} random (median)"), points(&study.random, n), i));
    }
    let max_v = study.random.iter().map(|c| c.v).max().unwrap_or(64).max(64);
    series.push(Series::reference(
        format!("{GROWTH_TARGET:.2} (the allocator's growth target)"),
        vec![(4.0, excess(GROWTH_TARGET)), (f64::from(max_v), excess(GROWTH_TARGET))],
    ));
    let axes = Axes {
        x: "tokens (or vnodes) per node V (log)",
        y: "worst node's ownership over its share − 1, % (log)",
        log_x: true,
        log_y: true,
        categories: None,
    };
    let (file, title) =
        ("token_balance_vs_tokens.svg", "Allocated tokens vs random vnodes: worst node over its share (unit weights)");
    match line_chart(&dir.join(file), title, &axes, &series) {
        Ok(()) => Some(Plot { file: file.to_string(), title: title.to_string() }),
        Err(e) => {
            eprintln!("vnodes: plot {file}: {e}");
            None
        }
    }
}

/// One line for the console summary before the recommendation.
pub(crate) fn summary(study: &Study) -> String {
    let big = study.needed.iter().filter(|d| d.weights == Weights::Unit).max_by_key(|d| d.nodes);
    let needed = match big {
        Some(Needed { nodes, allocated, random: Some((v, _)), .. }) => {
            format!("N={nodes}: allocated V=16 {allocated:.3}; a random ring needs V={v} for that")
        }
        Some(Needed { nodes, allocated, tried, estimate, .. }) => {
            let estimate = estimate.map_or(String::new(), |e| format!(" (closed form ≈ {e})"));
            format!("N={nodes}: allocated V=16 {allocated:.3}; a random ring needs V > {tried}{estimate}")
        }
        None => String::new(),
    };
    format!("token rings ({:.1} s): {needed}", study.elapsed)
}

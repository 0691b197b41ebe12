//! `cargo bench --bench vnodes`: which algorithm, how many vnodes.
//!
//! Sweeps every router of `analysis::sweep::candidates()` over node counts and random clusters,
//! writes `results/*.csv`, SVG plots and `results/REPORT.md`, and ends by printing the
//! recommendation table. `HASHROUTE_QUICK=1` runs the CI-sized sweep (≤ 30 s); under
//! `cargo test --benches` (no `--bench` flag) it runs a tiny smoke sweep and writes nothing.

#[path = "report/mod.rs"]
mod report;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Instant;

use hashroute::analysis::cache::{CacheSim, CacheTimeline};
use hashroute::analysis::sweep::{
    balance_cell, candidates, cluster_names, lookup_ns, movement_cell, resizes, ring_candidate, sample_keys,
    throughput, BalanceCell, Candidate, MovementCell, Resize, SweepConfig, NODE_COUNTS,
};
use hashroute::analysis::{recommend, Recommendation, Request};
use hashroute::NodeSet;
use indicatif::{ProgressBar, ProgressStyle};
use report::{line_chart, md_table, write_csv, Axes, Machine, Series};

/// Ring vnode counts whose key movement is measured (movement barely depends on V; these show
/// the naive ring, the usual range and the top of the grid).
const MOVEMENT_VNODES: &[u32] = &[1, 100, 160, 200, 1000];
/// Families in the cache simulation (the issue's list; others join when they land).
const CACHE_SET: &[&str] = &["modulo", "ring-v1", "ring-v160", "jump", "rendezvous", "slots"];
/// Node count for the lookup-cost and throughput headline tables.
const HEADLINE_N: usize = 1000;

struct Run {
    mode: &'static str,
    cfg: SweepConfig,
    node_counts: Vec<usize>,
    lookup_keys: usize,
    throughput_keys: usize,
    cache: CacheSim,
    write: bool,
}

fn fmt_pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn main() {
    let smoke = !report::is_bench_run();
    let quick = smoke || report::quick_mode();
    let run = Run {
        mode: if smoke {
            "smoke (cargo test)"
        } else if quick {
            "quick (HASHROUTE_QUICK=1)"
        } else {
            "full"
        },
        cfg: if smoke {
            SweepConfig { clusters: 20, point_budget: 100_000, sample_keys: 10_000, ..SweepConfig::quick() }
        } else if quick {
            SweepConfig::quick()
        } else {
            SweepConfig::full()
        },
        node_counts: if smoke { vec![3, 8] } else { NODE_COUNTS.to_vec() },
        lookup_keys: if smoke {
            2_000
        } else if quick {
            20_000
        } else {
            200_000
        },
        throughput_keys: if smoke {
            40_000
        } else if quick {
            100_000
        } else {
            1_000_000
        },
        cache: if smoke {
            CacheSim { universe: 10_000, capacity_per_node: 100, before: 20_000, after: 20_000, ..CacheSim::quick() }
        } else if quick {
            CacheSim::quick()
        } else {
            CacheSim::full()
        },
        write: !smoke,
    };
    let started = Instant::now();
    let mut phase = Instant::now();
    let mut phases: Vec<(&str, f64)> = Vec::new();
    let cands = candidates();
    let resize_list = resizes(&run.node_counts);
    let movers: Vec<&Candidate> =
        cands.iter().filter(|c| c.family != "ring" || MOVEMENT_VNODES.contains(&c.vnodes.unwrap_or(0))).collect();
    let steps =
        (cands.len() * run.node_counts.len() * 2 + movers.len() * resize_list.len() + CACHE_SET.len() + 8) as u64;
    let bar = ProgressBar::new(steps).with_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );

    // 1. Balance, memory and build time per candidate and node count.
    let mut balance: Vec<BalanceCell> = Vec::new();
    for c in &cands {
        for &n in &run.node_counts {
            bar.set_message(format!("balance {} N={n}", c.name));
            match balance_cell(c, n, &run.cfg) {
                Ok(cell) => balance.push(cell),
                Err(e) => bar.println(format!("skipped balance {} N={n}: {e}", c.name)),
            }
            bar.inc(1);
        }
    }
    // Extra ring cells the claims quote (V outside the grid).
    let mut claim_cells: Vec<BalanceCell> = Vec::new();
    for (v, n) in [(20, 8), (150, 3), (300, 8)] {
        if run.node_counts.contains(&n) {
            if let Ok(cell) = balance_cell(&ring_candidate(v), n, &run.cfg) {
                claim_cells.push(cell);
            }
        }
    }
    bar.inc(1);

    phases.push(("balance", phase.elapsed().as_secs_f64()));
    phase = Instant::now();
    // 2. Lookup cost per candidate and node count.
    let mut lookups: Vec<(String, usize, f64, f64)> = Vec::new();
    let keys = sample_keys(run.lookup_keys, 42);
    for c in &cands {
        for &n in &run.node_counts {
            bar.set_message(format!("lookup {} N={n}", c.name));
            let nodes = NodeSet::from_names(cluster_names(run.cfg.seed, n)).expect("generated names are valid");
            if let Ok(r) = (c.build)(&nodes) {
                let k = if c.linear_lookup { &keys[..keys.len().min(5_000)] } else { &keys[..] };
                let (single, batch) = lookup_ns(&*r, k, 3);
                lookups.push((c.name.clone(), n, single, batch));
            }
            bar.inc(1);
        }
    }

    phases.push(("lookup", phase.elapsed().as_secs_f64()));
    phase = Instant::now();
    // 3. Key movement.
    let mut movement: Vec<MovementCell> = Vec::new();
    for c in &movers {
        for rz in &resize_list {
            bar.set_message(format!("movement {} {} @{}", c.name, rz.label, rz.from));
            match movement_cell(c, rz, &run.cfg) {
                Ok(m) => movement.push(m),
                Err(e) => bar.println(format!("skipped movement {} {}: {e}", c.name, rz.label)),
            }
            bar.inc(1);
        }
    }
    let ten_eleven = Resize { label: "10->11".into(), from: 10, to: 11 };
    if !smoke {
        if let Ok(m) = movement_cell(&ring_candidate(300), &ten_eleven, &run.cfg) {
            movement.push(m);
        }
    }

    phases.push(("movement", phase.elapsed().as_secs_f64()));
    phase = Instant::now();
    // 4. Throughput across threads at the headline node count.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let head_n = if run.node_counts.contains(&HEADLINE_N) { HEADLINE_N } else { *run.node_counts.last().unwrap_or(&8) };
    let mut tput: Vec<(String, usize, f64)> = Vec::new();
    let tkeys = sample_keys(run.throughput_keys, 7);
    let head_nodes = NodeSet::from_names(cluster_names(run.cfg.seed, head_n)).expect("valid names");
    for c in cands.iter().filter(|c| {
        matches!(c.name.as_str(), "modulo" | "ring-v160" | "jump" | "ketama" | "rendezvous" | "slots" | "maglev")
    }) {
        bar.set_message(format!("throughput {}", c.name));
        if let Ok(r) = (c.build)(&head_nodes) {
            // par_route_batch needs >= 2 × PAR_MIN_CHUNK keys to use a second thread.
            let k = if c.linear_lookup { &tkeys[..tkeys.len().min(40_000)] } else { &tkeys[..] };
            for t in 1..=cores {
                if let Ok(x) = throughput(&*r, k, t, if quick { 1 } else { 3 }) {
                    tput.push((c.name.clone(), t, x));
                }
            }
        }
    }
    bar.inc(1);

    phases.push(("throughput", phase.elapsed().as_secs_f64()));
    phase = Instant::now();
    // 5. Cache hit rate around a 10 -> 11 resize.
    let mut cache: Vec<(String, CacheTimeline)> = Vec::new();
    let names = cluster_names(run.cfg.seed ^ 0xCA, 11);
    let (n10, n11) =
        (NodeSet::from_names(&names[..10]).expect("valid"), NodeSet::from_names(&names[..11]).expect("valid"));
    for c in cands.iter().filter(|c| CACHE_SET.contains(&c.name.as_str())) {
        bar.set_message(format!("cache {}", c.name));
        if let (Ok(a), Ok(b)) = ((c.build)(&n10), (c.build)(&n11)) {
            cache.push((c.name.clone(), run.cache.run(&*a, &*b)));
        }
        bar.inc(1);
    }
    phases.push(("cache", phase.elapsed().as_secs_f64()));
    bar.finish_and_clear();

    // 6. Recommendation (from the sweep's cells, on the vnode grid).
    let recs: Vec<Recommendation> = run
        .node_counts
        .iter()
        .filter_map(|&n| {
            let req = Request::for_node_count(n).seed(run.cfg.seed).measure_lookup(false);
            recommend(&if quick { req.smoke() } else { req }).ok()
        })
        .collect();

    let claims = claims(&balance, &claim_cells, &movement, &lookups, head_n);
    let elapsed = started.elapsed().as_secs_f64();
    if run.write {
        if let Err(e) =
            write_outputs(&run, &balance, &claim_cells, &lookups, &movement, &tput, &cache, &recs, &claims, elapsed)
        {
            eprintln!("vnodes: could not write results/: {e}");
        }
    }
    println!("{}", recommendation_table(&recs, &run));
    println!("claims:");
    for c in &claims {
        println!("  [{}] {} — measured {}", c.verdict, c.claim, c.measured);
    }
    let split: Vec<String> = phases.iter().map(|(n, t)| format!("{n} {t:.1} s")).collect();
    let planned: u64 = cands
        .iter()
        .flat_map(|c| run.node_counts.iter().map(move |&n| (c, n)))
        .map(|(c, n)| run.cfg.balance_points(c, n))
        .sum();
    println!(
        "vnodes sweep ({}) took {elapsed:.1} s ({}); balance cells built {:.0} M ring points",
        run.mode,
        split.join(", "),
        planned as f64 / 1e6
    );
    if smoke {
        assert!(!balance.is_empty() && !movement.is_empty(), "smoke sweep produced no cells");
    }
}

struct Claim {
    claim: String,
    measured: String,
    verdict: &'static str,
}

fn close(measured: f64, claimed: f64, rel: f64) -> &'static str {
    if (measured - claimed).abs() <= rel * claimed.abs() {
        "holds"
    } else {
        "does not hold"
    }
}

fn claims(
    balance: &[BalanceCell],
    extra: &[BalanceCell],
    movement: &[MovementCell],
    lookups: &[(String, usize, f64, f64)],
    head_n: usize,
) -> Vec<Claim> {
    let cell = |name: &str, n: usize| balance.iter().chain(extra).find(|c| c.candidate == name && c.nodes == n);
    let mv = |name: &str, label: &str| movement.iter().find(|m| m.candidate == name && m.resize.label == label);
    let mut out = Vec::new();
    // 1.
    for (v, sd, busiest) in [(20, 18.0, Some(31.0)), (100, 6.0, Some(22.0)), (160, 4.0, Some(20.0)), (320, 3.5, None)] {
        if let Some(c) = cell(&format!("ring-v{v}"), 8) {
            out.push(Claim {
                claim: format!("1. 8 nodes, {v} vnodes: std dev ~{sd}%"),
                measured: format!("median {:.1}% over {} clusters", c.std_dev_pct, c.clusters),
                verdict: close(c.std_dev_pct, sd, 0.25),
            });
            if let Some(b) = busiest {
                out.push(Claim {
                    claim: format!("1. 8 nodes, {v} vnodes: busiest node takes {b}% of traffic"),
                    measured: format!(
                        "median {:.1}% of traffic = {:+.0}% over the mean ({} max/mean {:.3}; fair share 12.5%)",
                        c.max_share_pct,
                        100.0 * (c.max_over_mean - 1.0),
                        c.tail,
                        c.tail_max_over_mean
                    ),
                    verdict: close(c.max_share_pct, b, 0.15),
                });
            }
        }
    }
    // 2.
    if let Some(c) = cell("ring-v32", 16) {
        out.push(Claim {
            claim: "2. 16 nodes, 32 vnodes: busiest 27%, least 3% of traffic".into(),
            measured: format!(
                "median busiest {:.1}%, least {:.1}% of traffic (fair 6.25%); as deviations: {:+.0}% / {:+.0}% from the mean",
                c.max_share_pct,
                c.min_share_pct,
                100.0 * (c.max_over_mean - 1.0),
                100.0 * (c.min_over_mean - 1.0)
            ),
            verdict: if close(c.max_share_pct, 27.0, 0.2) == "holds" && close(c.min_share_pct, 3.0, 0.34) == "holds" {
                "holds"
            } else {
                "does not hold"
            },
        });
    }
    if let Some(c) = cell("ring-v160", 16) {
        out.push(Claim {
            claim: "2. 16 nodes, 160 vnodes: largest deviation ~8-9%".into(),
            measured: format!("median {:.1}% over {} clusters", c.max_dev_pct, c.clusters),
            verdict: if (7.0..=10.0).contains(&c.max_dev_pct) { "holds" } else { "does not hold" },
        });
    }
    // 3.
    for (name, claimed) in [("modulo", 0.91), ("ring-v100", 0.187), ("ring-v200", 0.093), ("ring-v300", 0.061)] {
        if let Some(m) = mv(name, "10->11") {
            out.push(Claim {
                claim: format!("3. 10 -> 11 with {name} moves {}", fmt_pct(claimed)),
                measured: format!("{} (ideal {})", fmt_pct(m.moved), fmt_pct(m.ideal)),
                verdict: close(m.moved, claimed, 0.1),
            });
        }
    }
    // 4.-6.
    for (name, label, claimed, num) in [
        ("ring-v160", "8->12", 0.125, "4."),
        ("modulo", "8->16", 1.0, "5."),
        ("modulo", "3->4", 0.75, "6."),
        ("ring-v160", "3->4", 0.25, "6."),
        ("ring-v160", "4->8", 0.5, "6."),
    ] {
        if let Some(m) = mv(name, label) {
            out.push(Claim {
                claim: format!("{num} {label} with {name} moves ~{}", fmt_pct(claimed)),
                measured: format!("{} (ideal {}, over {} clusters)", fmt_pct(m.moved), fmt_pct(m.ideal), m.clusters),
                verdict: close(m.moved, claimed, 0.1),
            });
        }
    }
    // 7.
    if let Some(c) = cell("ring-v150", 3) {
        out.push(Claim {
            claim: "7. 3 nodes, 150 vnodes: largest deviation usually within 5%".into(),
            measured: format!(
                "median {:.1}%; within 5% in {:.0}% of {} clusters",
                c.max_dev_pct,
                100.0 * c.within_5pct,
                c.clusters
            ),
            verdict: if c.within_5pct >= 0.5 { "holds" } else { "does not hold" },
        });
    }
    // 8.
    let ns = |name: &str| lookups.iter().find(|l| l.0 == name && l.1 == head_n).map(|l| l.2);
    if let (Some(j), Some(r)) = (ns("jump"), ns("ring-v160")) {
        out.push(Claim {
            claim: format!("8. jump is faster than a ring ({head_n} nodes, V=160)"),
            measured: format!("jump {j:.1} ns vs ring {r:.1} ns per key"),
            verdict: if j < r { "holds" } else { "does not hold" },
        });
    }
    if let (Some(j), Some(r)) = (cell("jump", head_n), cell("ring-v160", head_n)) {
        out.push(Claim {
            claim: "8. jump uses no memory".into(),
            measured: format!("jump {} B (node set only) vs ring-v160 {} B", j.memory_bytes, r.memory_bytes),
            verdict: if j.memory_bytes * 10 < r.memory_bytes { "holds (beyond its node set)" } else { "does not hold" },
        });
        out.push(Claim {
            claim: "8. jump balances better than a ring".into(),
            measured: format!(
                "jump std dev {:.2}% (sampling noise alone {:.2}%, {} keys) vs ring-v160 {:.2}% (exact)",
                j.std_dev_pct, j.noise_std_pct, j.keys, r.std_dev_pct
            ),
            verdict: if j.std_dev_pct <= r.std_dev_pct || j.std_dev_pct <= 1.2 * j.noise_std_pct {
                "holds"
            } else {
                "does not hold"
            },
        });
    }
    out
}

fn recommendation_table(recs: &[Recommendation], run: &Run) -> String {
    let mut s = format!("recommendation ({} sweep): the ring's V per balance target, and the answer\n", run.mode);
    let _ = writeln!(s, "{:>7}  {:>7}  {:<12} {:<22} how sure", "nodes", "target", "ring", "answer");
    for r in recs {
        for a in &r.answers {
            let _ = writeln!(
                s,
                "{:>7}  {:>7.2}  {:<12} {:<22} {}",
                r.node_count,
                a.max_load,
                format!("V={}", a.ring.vnodes.unwrap_or(0)),
                a.cheapest.clone().unwrap_or_else(|| "-".into()),
                a.ring.evidence
            );
        }
    }
    s.push_str("(answer = least memory, then fastest lookup, among consistent routers that can remove any node and meet\n the target; `hashroute recommend --node-count N` shows every verdict and takes constraints.)");
    s
}

#[allow(clippy::too_many_arguments)]
fn write_outputs(
    run: &Run,
    balance: &[BalanceCell],
    claim_cells: &[BalanceCell],
    lookups: &[(String, usize, f64, f64)],
    movement: &[MovementCell],
    tput: &[(String, usize, f64)],
    cache: &[(String, CacheTimeline)],
    recs: &[Recommendation],
    claims: &[Claim],
    elapsed: f64,
) -> Result<(), String> {
    let dir = report::results_dir();
    let e = |x: std::io::Error| x.to_string();
    // CSVs.
    let rows: Vec<Vec<String>> = balance
        .iter()
        .chain(claim_cells)
        .map(|c| {
            vec![
                c.candidate.clone(),
                c.nodes.to_string(),
                c.clusters.to_string(),
                c.keys.to_string(),
                c.exact.to_string(),
                format!("{:.4}", c.std_dev_pct),
                format!("{:.5}", c.max_over_mean),
                format!("{:.5}", c.min_over_mean),
                format!("{:.4}", c.max_share_pct),
                format!("{:.4}", c.min_share_pct),
                c.tail.to_string(),
                format!("{:.5}", c.tail_max_over_mean),
                format!("{:.4}", c.max_dev_pct),
                format!("{:.4}", c.noise_std_pct),
                c.memory_bytes.to_string(),
                format!("{:.0}", c.build_ns),
            ]
        })
        .collect();
    write_csv(
        &dir.join("balance.csv"),
        &[
            "candidate",
            "nodes",
            "clusters",
            "keys_per_cluster",
            "exact",
            "std_dev_pct_median",
            "max_over_mean_median",
            "min_over_mean_median",
            "max_share_pct_median",
            "min_share_pct_median",
            "tail",
            "tail_max_over_mean",
            "max_dev_pct_median",
            "sampling_noise_std_pct",
            "memory_bytes",
            "build_ns_median",
        ],
        &rows,
    )
    .map_err(e)?;
    let rows: Vec<Vec<String>> = lookups
        .iter()
        .map(|(c, n, s, b)| vec![c.clone(), n.to_string(), format!("{s:.2}"), format!("{b:.2}")])
        .collect();
    write_csv(&dir.join("lookup.csv"), &["candidate", "nodes", "route_ns", "route_batch_ns"], &rows).map_err(e)?;
    let rows: Vec<Vec<String>> = movement
        .iter()
        .map(|m| {
            vec![
                m.candidate.clone(),
                m.resize.label.clone(),
                m.resize.from.to_string(),
                m.resize.to.to_string(),
                m.clusters.to_string(),
                m.keys.to_string(),
                format!("{:.6}", m.moved),
                format!("{:.6}", m.ideal),
                m.failure_spread.map_or(String::new(), |f| format!("{f:.4}")),
            ]
        })
        .collect();
    write_csv(
        &dir.join("movement.csv"),
        &[
            "candidate",
            "resize",
            "from",
            "to",
            "clusters",
            "keys_per_cluster",
            "moved_median",
            "ideal",
            "failure_spread_median",
        ],
        &rows,
    )
    .map_err(e)?;
    let rows: Vec<Vec<String>> =
        tput.iter().map(|(c, t, x)| vec![c.clone(), t.to_string(), format!("{x:.0}")]).collect();
    write_csv(&dir.join("throughput.csv"), &["candidate", "threads", "lookups_per_s"], &rows).map_err(e)?;
    let mut rows = Vec::new();
    for (c, t) in cache {
        for (i, h) in t.hit_rate.iter().enumerate() {
            rows.push(vec![
                c.clone(),
                (((i as i64) - t.resize_at as i64) * t.window as i64).to_string(),
                format!("{h:.4}"),
            ]);
        }
    }
    write_csv(&dir.join("cache_timeline.csv"), &["candidate", "requests_since_resize", "hit_rate"], &rows)
        .map_err(e)?;

    // Plots.
    let mut plots: Vec<(String, String)> = Vec::new();
    let mut plot = |file: &str, title: &str, axes: Axes<'_>, series: Vec<Series>| match line_chart(
        &dir.join(file),
        title,
        &axes,
        &series,
    ) {
        Ok(()) => plots.push((file.to_string(), title.to_string())),
        Err(err) => eprintln!("vnodes: plot {file}: {err}"),
    };
    let ring_cells = |n: usize| -> Vec<&BalanceCell> {
        let mut v: Vec<&BalanceCell> =
            balance.iter().filter(|c| c.nodes == n && c.candidate.starts_with("ring-v")).collect();
        v.sort_by_key(|c| c.candidate[6..].parse::<u32>().unwrap_or(0));
        v
    };
    let vof = |c: &BalanceCell| c.candidate[6..].parse::<f64>().unwrap_or(1.0);
    let mut sd = Vec::new();
    let mut mm = Vec::new();
    let mut mem = Vec::new();
    for &n in &run.node_counts {
        let cells = ring_cells(n);
        sd.push(Series::new(format!("N={n}"), cells.iter().map(|c| (vof(c), c.std_dev_pct)).collect()));
        mm.push(Series::new(format!("N={n} tail"), cells.iter().map(|c| (vof(c), c.tail_max_over_mean)).collect()));
        mem.push(Series::new(format!("N={n}"), cells.iter().map(|c| (vof(c), c.memory_bytes as f64)).collect()));
    }
    let vs: Vec<f64> = hashroute::analysis::sweep::RING_VNODES.iter().map(|&v| f64::from(v)).collect();
    sd.push(Series::reference("100/sqrt(V)", vs.iter().map(|&v| (v, 100.0 / v.sqrt())).collect()));
    mm.push(Series::reference("1 + 3/sqrt(V)", vs.iter().map(|&v| (v, 1.0 + 3.0 / v.sqrt())).collect()));
    plot(
        "stddev_vs_vnodes.svg",
        "Ring: std dev of node load vs vnodes (median over clusters)",
        Axes { x: "vnodes per node (log)", y: "std dev, % of mean (log)", log_x: true, log_y: true, categories: None },
        sd,
    );
    plot(
        "maxmean_vs_vnodes.svg",
        "Ring: tail over clusters of max/mean vs vnodes",
        Axes { x: "vnodes per node (log)", y: "max/mean (tail quantile)", log_x: true, log_y: true, categories: None },
        mm,
    );
    plot(
        "memory_vs_vnodes.svg",
        "Ring: memory vs vnodes",
        Axes { x: "vnodes per node (log)", y: "bytes (log)", log_x: true, log_y: true, categories: None },
        mem,
    );
    let labels: Vec<String> = {
        let mut l: Vec<String> = Vec::new();
        for m in movement {
            let key = if m.resize.label.contains("->") {
                m.resize.label.clone()
            } else {
                format!("{}@{}", m.resize.label, m.resize.from)
            };
            if !l.contains(&key) {
                l.push(key);
            }
        }
        l
    };
    let mkey = |m: &MovementCell| {
        if m.resize.label.contains("->") {
            m.resize.label.clone()
        } else {
            format!("{}@{}", m.resize.label, m.resize.from)
        }
    };
    let mut by_cand: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut ideal: BTreeMap<usize, f64> = BTreeMap::new();
    for m in movement {
        let x = labels.iter().position(|l| *l == mkey(m)).unwrap_or(0);
        by_cand.entry(m.candidate.clone()).or_default().push((x as f64, 100.0 * m.moved));
        ideal.insert(x, 100.0 * m.ideal);
    }
    let mut ms: Vec<Series> = by_cand
        .into_iter()
        .map(|(c, mut p)| {
            p.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series::new(c, p)
        })
        .collect();
    ms.push(Series::reference("ideal minimum", ideal.into_iter().map(|(x, y)| (x as f64, y)).collect()));
    plot(
        "movement.svg",
        "Keys moved per algorithm and resize (median over clusters)",
        Axes {
            x: "resize (+1/-1/x2 @ node count)",
            y: "% of keys moved",
            log_x: false,
            log_y: false,
            categories: Some(&labels),
        },
        ms,
    );
    let cs: Vec<Series> = cache
        .iter()
        .map(|(c, t)| {
            Series::new(
                c.clone(),
                t.hit_rate
                    .iter()
                    .enumerate()
                    .map(|(i, h)| ((((i as f64) - t.resize_at as f64) * t.window as f64), 100.0 * h))
                    .collect(),
            )
        })
        .collect();
    plot(
        "cache_hit_rate.svg",
        "Cache hit rate around a 10 -> 11 resize (LRU per node, Zipf s=0.99)",
        Axes { x: "requests since resize", y: "hit rate %", log_x: false, log_y: false, categories: None },
        cs,
    );
    let mut tp: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for (c, t, x) in tput {
        tp.entry(c.clone()).or_default().push(((*t - 1) as f64, x / 1e6));
    }
    let threads: Vec<String> = (1..=tput.iter().map(|t| t.1).max().unwrap_or(1)).map(|t| t.to_string()).collect();
    plot(
        "throughput_vs_threads.svg",
        "Lookups/s vs threads (par_route_batch)",
        Axes { x: "threads", y: "million lookups/s", log_x: false, log_y: false, categories: Some(&threads) },
        tp.into_iter().map(|(c, p)| Series::new(c, p)).collect(),
    );
    let crit = report::criterion_estimates("lookup");
    let mut crit_series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for est in &crit {
        if let Ok(x) = est.parameter.parse::<f64>() {
            crit_series.entry(est.function.clone()).or_default().push((x, est.median_ns));
        }
    }
    if !crit_series.is_empty() {
        let s = crit_series
            .into_iter()
            .map(|(f, mut p)| {
                p.sort_by(|a, b| a.0.total_cmp(&b.0));
                Series::new(f, p)
            })
            .collect();
        plot(
            "lookup_ns_vs_size.svg",
            "Lookup ns vs ring size per kernel (criterion medians)",
            Axes { x: "ring size (log)", y: "ns per lookup", log_x: true, log_y: false, categories: None },
            s,
        );
    }

    // REPORT.md
    let m = Machine::detect();
    let mut r = String::new();
    let cmd = if run.mode.starts_with("quick") { "scripts/report.sh --quick" } else { "scripts/report.sh" };
    let _ =
        writeln!(r, "<!-- GENERATED FILE: do not edit by hand. Regenerate with `{cmd}` (runs `cargo bench`). -->\n");
    let _ = writeln!(r, "# hashroute benchmark report\n");
    let _ = writeln!(r, "> Generated by `benches/vnodes.rs`; do not edit. Regenerate everything with `{cmd}`.\n");
    let _ = writeln!(r, "- Mode: **{}**; sweep took {elapsed:.0} s", run.mode);
    r.push_str(&m.markdown());
    let _ = writeln!(r, "- Times are medians (lookup: best of 3 passes) on this machine; loads and movement are deterministic for the seed.\n");
    let _ = writeln!(r, "## Recommendation\n\n```text\n{}\n```\n", recommendation_table(recs, run));
    let _ = writeln!(r, "## Claims\n");
    let rows: Vec<Vec<String>> =
        claims.iter().map(|c| vec![c.claim.clone(), c.measured.clone(), c.verdict.to_string()]).collect();
    r.push_str(&md_table(&["claim", "measured", "verdict"], &rows));
    let _ = writeln!(
        r,
        "\nTolerances: std dev within ±25% of the claim, traffic shares ±15%, key movement ±10% (relative).\n"
    );

    let _ = writeln!(r, "## Load balance\n");
    let _ = writeln!(r, "How the cells are measured: every cell builds the router over many random clusters (random `10.a.b.c:port` node names). \
Ring-like routers' loads are **exact** (arc lengths from `Ring::points()/owners()`), {} clusters per cell, \
capped at {} ring points per cell: big cells (e.g. 1000 nodes × V=1000) use fewer clusters, and report the tail quantile \
their count supports (p99 ≥ 100 clusters, p95 ≥ 20, p90 ≥ 10). Modulo is exactly 1/N. Sampled routers route {} random keys \
per cluster; the `noise` column is the std dev a perfect router would show from sampling alone, `100·sqrt((N−1)/K)`.\n",
        run.cfg.clusters, run.cfg.point_budget, run.cfg.sample_keys);
    let ns = &run.node_counts;
    let mut hdr: Vec<String> = vec!["candidate".into()];
    hdr.extend(ns.iter().map(|n| format!("N={n}")));
    let hdr_ref: Vec<&str> = hdr.iter().map(String::as_str).collect();
    let pivot = |f: &dyn Fn(&BalanceCell) -> String| -> String {
        let rows: Vec<Vec<String>> = candidates()
            .iter()
            .map(|c| {
                let mut row = vec![c.name.clone()];
                for &n in ns {
                    row.push(balance.iter().find(|b| b.candidate == c.name && b.nodes == n).map_or("-".into(), f));
                }
                row
            })
            .collect();
        md_table(&hdr_ref, &rows)
    };
    let _ = writeln!(r, "### Std dev of node load, % of mean (median over clusters; sampled: `measured (noise)`)\n");
    r.push_str(&pivot(&|b| {
        if b.exact {
            format!("{:.2}", b.std_dev_pct)
        } else {
            format!("{:.2} ({:.2})", b.std_dev_pct, b.noise_std_pct)
        }
    }));
    let _ = writeln!(r, "\n### max/mean: median, and tail over clusters (`median / tail (quantile, clusters)`)\n");
    r.push_str(&pivot(&|b| {
        format!("{:.3} / {:.3} ({} of {})", b.max_over_mean, b.tail_max_over_mean, b.tail, b.clusters)
    }));
    let _ = writeln!(r, "\n### min/mean (median over clusters)\n");
    r.push_str(&pivot(&|b| format!("{:.3}", b.min_over_mean)));
    let _ = writeln!(r, "\n### Memory (bytes, `memory_bytes()`) and build time (median)\n");
    r.push_str(&pivot(&|b| format!("{} B, {:.2} ms", b.memory_bytes, b.build_ns / 1e6)));
    let _ = writeln!(r, "\n### Lookup ns per key: `route` one at a time / `route_batch`\n");
    r.push_str(&pivot(&|b| {
        lookups
            .iter()
            .find(|l| l.0 == b.candidate && l.1 == b.nodes)
            .map_or("-".into(), |l| format!("{:.1} / {:.1}", l.2, l.3))
    }));

    let _ = writeln!(r, "\n## Key movement\n");
    let _ = writeln!(r, "Fraction of keys whose owner (matched by node **name**) changes, median over clusters; `ideal` is the minimum any router must move. \
Rings, Ketama and slots are exact (overlaying both partitions' arcs), over up to {} clusters per cell (fewer for big rings: \
at most {} points per cell, at least 2 clusters); modulo exact over one period lcm(N, M); Maglev exact from its table; sampled routers route up to {} keys (a quarter of the balance sample). \
Growth appends new names; shrinking removes the last node (so jump can follow). Slots are rebuilt with a fresh `redis-cli` layout for \
each node count (a live Redis cluster moves slots explicitly instead). AnchorHash keeps a fixed capacity of 4096 buckets.\n", run.cfg.movement_clusters, run.cfg.movement_point_budget, run.cfg.sample_keys / 4);
    let mut mh: Vec<String> = vec!["candidate".into()];
    mh.extend(labels.iter().cloned());
    let mh_ref: Vec<&str> = mh.iter().map(String::as_str).collect();
    let mut cand_names: Vec<String> = Vec::new();
    for m in movement {
        if !cand_names.contains(&m.candidate) {
            cand_names.push(m.candidate.clone());
        }
    }
    let mrows = |f: &dyn Fn(&MovementCell) -> String| -> Vec<Vec<String>> {
        let mut rows: Vec<Vec<String>> = cand_names
            .iter()
            .map(|c| {
                let mut row = vec![c.clone()];
                for l in &labels {
                    row.push(movement.iter().find(|m| &m.candidate == c && mkey(m) == *l).map_or("-".into(), f));
                }
                row
            })
            .collect();
        let mut ideal_row = vec!["*ideal*".to_string()];
        for l in &labels {
            ideal_row.push(movement.iter().find(|m| mkey(m) == *l).map_or("-".into(), |m| fmt_pct(m.ideal)));
        }
        rows.push(ideal_row);
        rows
    };
    r.push_str(&md_table(&mh_ref, &mrows(&|m| fmt_pct(m.moved))));
    let _ =
        writeln!(r, "\n### Failure spread: when a node is removed, the largest share of its keys one survivor takes\n");
    let _ = writeln!(r, "(1/(N−1) is a perfect spread; 100% means one neighbour takes all of it.)\n");
    let fr: Vec<Vec<String>> = cand_names
        .iter()
        .map(|c| {
            let mut row = vec![c.clone()];
            for &n in ns.iter().filter(|&&n| n >= 2) {
                row.push(
                    movement
                        .iter()
                        .find(|m| &m.candidate == c && m.resize.label == "-1" && m.resize.from == n)
                        .and_then(|m| m.failure_spread)
                        .map_or("-".into(), fmt_pct),
                );
            }
            row
        })
        .collect();
    let mut fh: Vec<String> = vec!["candidate".into()];
    fh.extend(ns.iter().filter(|&&n| n >= 2).map(|n| format!("{n} -> {}", n - 1)));
    r.push_str(&md_table(&fh.iter().map(String::as_str).collect::<Vec<_>>(), &fr));

    let _ = writeln!(r, "\n## Cache hit rate around a resize (10 -> 11 nodes)\n");
    let c = &run.cache;
    let _ = writeln!(r, "One LRU per node ({} keys each), {} keys, Zipf s = {}, {} requests before and {} after the resize, hit rate per {} requests. \
Recovery = requests until a window is back to 99% of the steady rate before.\n", c.capacity_per_node, c.universe, c.zipf_s, c.before, c.after, c.window);
    let rows: Vec<Vec<String>> = cache
        .iter()
        .map(|(n, t)| {
            vec![
                n.clone(),
                fmt_pct(t.steady_before()),
                fmt_pct(t.dip()),
                t.recovery_requests().map_or(format!("> {}", c.after), |x| x.to_string()),
            ]
        })
        .collect();
    r.push_str(&md_table(&["router", "steady before", "first window after", "requests to recover"], &rows));

    let _ = writeln!(
        r,
        "\n## Throughput vs threads ({} nodes, `par_route_batch`, {} keys)\n",
        if ns.contains(&HEADLINE_N) { HEADLINE_N } else { *ns.last().unwrap_or(&0) },
        run.throughput_keys
    );
    let rows: Vec<Vec<String>> =
        tput.iter().map(|(c, t, x)| vec![c.clone(), t.to_string(), format!("{:.1} M/s", x / 1e6)]).collect();
    r.push_str(&md_table(&["router", "threads", "lookups/s"], &rows));

    let _ = writeln!(r, "\n## Lookup kernels (criterion, `lookup` group from benches/lookup.rs)\n");
    if crit.is_empty() {
        let _ = writeln!(r, "No criterion estimates under `target/criterion/lookup/`: run `cargo bench --bench lookup` first (scripts/report.sh does).\n");
    } else {
        let rows: Vec<Vec<String>> =
            crit.iter().map(|c| vec![c.function.clone(), c.parameter.clone(), format!("{:.2}", c.median_ns)]).collect();
        r.push_str(&md_table(&["kernel", "size", "median ns"], &rows));
    }

    r.push_str(&performance_targets());

    let _ = writeln!(r, "\n## Peers\n");
    match std::fs::read_to_string(dir.join("peers.md")) {
        Ok(p) => r.push_str(&p),
        Err(_) => {
            let _ = writeln!(r, "Not measured in this run: `cargo bench --bench peers` writes `results/peers.md` (scripts/report.sh runs it before this sweep).");
        }
    }

    let _ = writeln!(r, "\n## Instruction counts\n");
    let _ = writeln!(r, "`scripts/iai.sh` installs `iai-callgrind-runner` pinned to the library's version (0.14.x) and runs `benches/iai.rs` \
(ring route, jump) under Valgrind's Callgrind. The crate is **iai-callgrind**; its continuation is named **gungraun**. \
Plain `cargo bench` skips it (it needs Valgrind and the runner).\n");

    let _ = writeln!(r, "## Real Redis servers\n");
    match std::fs::read_to_string(dir.join("redis_scaleout.md")) {
        Ok(p) => {
            let _ = writeln!(r, "From `scripts/redis_scaleout.sh` (live `redis-server` processes on loopback; regenerated by that script, not by this one):\n");
            // Demote the included file's headings one level so they nest under this section.
            for line in p.lines() {
                let line = if line.starts_with('#') { format!("#{line}") } else { line.to_string() };
                let _ = writeln!(r, "{line}");
            }
            let _ = writeln!(r);
        }
        Err(_) => {
            let _ = writeln!(r, "Not run: `scripts/redis_scaleout.sh` writes `results/redis_scaleout.md`.\n");
        }
    }

    let _ = writeln!(r, "## Plots\n");
    for (f, t) in &plots {
        let _ = writeln!(r, "- [{t}]({f})\n\n  ![{t}]({f})\n");
    }
    let _ = writeln!(r, "## Data\n\n`balance.csv`, `lookup.csv`, `movement.csv`, `throughput.csv`, `cache_timeline.csv` in this folder.");
    std::fs::write(dir.join("REPORT.md"), r).map_err(e)?;
    Ok(())
}

/// The lookup-kernel targets as ratios of criterion medians measured in the same
/// `scripts/report.sh` run (benches/route.rs, benches/lookup.rs, benches/rendezvous.rs), plus
/// the default ring's bytes per virtual node. A row whose benchmarks did not run says so.
fn performance_targets() -> String {
    use hashroute::{Ring, Router};
    let all: Vec<report::CriterionEstimate> = ["route", "jump", "rendezvous", "build", "parallel"]
        .iter()
        .flat_map(|g| report::criterion_estimates(g))
        .collect();
    let get = |group: &str, function: &str, parameter: &str| {
        all.iter().find(|c| c.group == group && c.function == function && c.parameter == parameter).map(|c| c.median_ns)
    };
    // (measure, target text, numerator id, denominator id, limit, lower is better); ids are
    // criterion's (group, function, parameter). The build group's plain rebuild has no function
    // name (`BenchmarkId::from_parameter`).
    type Id = (&'static str, &'static str, &'static str);
    let targets: [(&str, &str, Id, Id, f64, bool); 10] = [
        (
            "ring route, batched (default layout) / oracle single, 160K points",
            "≤ 0.25",
            ("route", "ring", "1000"),
            ("route", "ring-oracle-single", "160000"),
            0.25,
            true,
        ),
        (
            "ring route, batched (default layout) / oracle single, 1.6M points",
            "≤ 0.167",
            ("route", "ring", "10000"),
            ("route", "ring-oracle-single", "1600000"),
            1.0 / 6.0,
            true,
        ),
        (
            "same, ring forced to the radix layout (the default's layout at this size), 160K points",
            "≤ 0.25",
            ("route", "ring-radix-batch", "160000"),
            ("route", "ring-oracle-single", "160000"),
            0.25,
            true,
        ),
        (
            "same, ring forced to the radix layout, 1.6M points",
            "≤ 0.167",
            ("route", "ring-radix-batch", "1600000"),
            ("route", "ring-oracle-single", "1600000"),
            1.0 / 6.0,
            true,
        ),
        (
            "same, ring forced to the tree layout (the previous default), 160K points",
            "≤ 0.25",
            ("route", "ring-tree-batch", "160000"),
            ("route", "ring-oracle-single", "160000"),
            0.25,
            true,
        ),
        (
            "ring route, single key (radix, the default) / oracle single, 160K points",
            "≤ 0.667",
            ("route", "ring-radix-single", "160000"),
            ("route", "ring-oracle-single", "160000"),
            1.0 / 1.5,
            true,
        ),
        (
            "jump: scalar / SIMD batch time, 1000 buckets (speed-up)",
            "≥ 2.5",
            ("jump", "scalar", "1000"),
            ("jump", "simd", "1000"),
            2.5,
            false,
        ),
        (
            "rayon: 1 thread / 2 threads time, 1M keys (speed-up)",
            "≥ 1.6",
            ("parallel", "1", "1048576"),
            ("parallel", "2", "1048576"),
            1.6,
            false,
        ),
        (
            "ring build / one-node add time, 160K points (speed-up)",
            "≥ 5",
            ("build", "", "160000"),
            ("build", "add-node", "160000"),
            5.0,
            false,
        ),
        (
            "ring build / one-node remove time, 160K points (speed-up)",
            "≥ 5",
            ("build", "", "160000"),
            ("build", "remove-node", "160000"),
            5.0,
            false,
        ),
    ];
    let mut rows: Vec<Vec<String>> = Vec::new();
    for (what, target, (ng, nf, np), (dg, df, dp), limit, lower_is_better) in targets {
        let (value, verdict) = match (get(ng, nf, np), get(dg, df, dp)) {
            (Some(a), Some(b)) if b > 0.0 => {
                let x = a / b;
                let met = if lower_is_better { x <= limit } else { x >= limit };
                (format!("{x:.3}"), if met { "met" } else { "not met" }.to_string())
            }
            _ => ("not measured".to_string(), "—".to_string()),
        };
        rows.push(vec![what.to_string(), target.to_string(), value, verdict]);
    }
    let build_ms = get("build", "", "1600000").map(|ns| ns / 1e6);
    rows.push(vec![
        "ring build, 1.6M points (ms)".into(),
        "≤ 100".into(),
        build_ms.map_or("not measured".into(), |v| format!("{v:.1}")),
        build_ms.map_or("—".into(), |v| if v <= 100.0 { "met" } else { "not met" }.into()),
    ]);
    // The path a 100-node router takes (dispatch depends on the node count).
    let isa = hashroute::internals::rendezvous_isa(
        &hashroute::Rendezvous::from_names((0..100).map(|i| format!("n{i}"))).expect("100 names"),
    );
    let hrw = get("rendezvous", isa.name(), "100").map(|ns| ns / 256.0 / 100.0);
    rows.push(vec![
        format!("rendezvous ns per node scored, 100 nodes ({} path)", isa.name()),
        "≤ 1".into(),
        hrw.map_or("not measured".into(), |v| format!("{v:.3}")),
        hrw.map_or("—".into(), |v| if v <= 1.0 { "met" } else { "not met" }.into()),
    ]);
    let ring = Ring::builder()
        .vnodes(160)
        .node_set(NodeSet::from_names((0..1000).map(|i| format!("node-{i}"))).unwrap())
        .build();
    if let Ok(ring) = ring {
        let per_point = (ring.memory_bytes() - ring.nodes().memory_bytes()) as f64 / ring.points().len() as f64;
        rows.push(vec![
            "default ring layout, bytes per virtual node (1000 × 160)".into(),
            "≤ 12.8".into(),
            format!("{per_point:.2}"),
            if per_point <= 12.8 { "met" } else { "not met" }.into(),
        ]);
    }
    let mut out = String::from(
        "\n## Performance targets\n\nRatios of criterion medians from the same run (one machine, same load), \
so they compare like with like even on a shared machine. 4096 pre-generated 16-byte keys per \
iteration; 160 vnodes per node. `route/ring/<nodes>` routes with the ring as built (default \
layout, which is the radix index at these sizes); `route/ring-radix-batch/<points>` is a clone \
forced to the same layout: the two run the same code on different allocations, so the gap \
between them is this machine's run-to-run variation for that measurement.\n\n",
    );
    out.push_str(&md_table(&["measure", "target", "measured", "verdict"], &rows));
    out
}

//! Runs the measurements: balance, lookup cost, key movement, throughput and the cache
//! simulation, each phase one function, all into one [`Sweep`]. Progress goes to one bar on
//! stderr (hidden when stderr is not a terminal); nothing else prints per step.

use std::time::Instant;

use hashroute::NodeSet;
use hashroute_analysis::sweep::{
    balance_cell, candidates, cluster_names, lookup_ns, movement_cell, resizes, ring_candidate, sample_keys,
    throughput, BalanceCell, Candidate, MovementCell, Resize,
};
use hashroute_analysis::CacheTimeline;
use indicatif::{ProgressBar, ProgressStyle};

use crate::config::{Run, CACHE_SET, MOVEMENT_VNODES, THROUGHPUT_SET, TIMING_REPEATS};

/// Lookup cost of one candidate at one node count.
#[derive(Clone, Debug)]
pub(crate) struct LookupRow {
    pub candidate: String,
    pub nodes: usize,
    /// ns per key, `route` one key at a time (median of the repeats when repeated).
    pub single_ns: f64,
    /// ns per key, `route_batch`.
    pub batch_ns: f64,
    /// Every repeat's `single_ns` (one entry unless the cell backs a timing claim).
    pub single_repeats: Vec<f64>,
}

impl LookupRow {
    /// Run-to-run spread of `single_ns`: max − min over the repeats (0 with one repeat).
    pub(crate) fn spread(&self) -> f64 {
        let max = self.single_repeats.iter().copied().fold(f64::MIN, f64::max);
        let min = self.single_repeats.iter().copied().fold(f64::MAX, f64::min);
        if self.single_repeats.len() > 1 {
            max - min
        } else {
            0.0
        }
    }
}

/// Lookups per second of one candidate with `threads` threads.
#[derive(Clone, Debug)]
pub(crate) struct ThroughputRow {
    pub candidate: String,
    pub threads: usize,
    pub per_second: f64,
}

/// Everything one sweep measured.
pub(crate) struct Sweep {
    /// Balance, memory and build time per candidate and node count (the grid).
    pub balance: Vec<BalanceCell>,
    /// Extra ring cells the claims quote (V outside the grid).
    pub claim_cells: Vec<BalanceCell>,
    pub lookups: Vec<LookupRow>,
    pub movement: Vec<MovementCell>,
    pub throughput: Vec<ThroughputRow>,
    /// Hit-rate timeline per router around a 10 -> 11 resize.
    pub cache: Vec<(String, CacheTimeline)>,
    /// Node count of the headline tables.
    pub head_n: usize,
    /// Cells that could not be measured, with the reason.
    pub skipped: Vec<String>,
    /// (phase, seconds).
    pub phases: Vec<(&'static str, f64)>,
    /// Seconds for the whole sweep.
    pub elapsed: f64,
}

/// The candidates whose movement is measured (every non-ring, rings at [`MOVEMENT_VNODES`]).
fn movers(cands: &[Candidate]) -> Vec<&Candidate> {
    cands.iter().filter(|c| c.family != "ring" || MOVEMENT_VNODES.contains(&c.vnodes.unwrap_or(0))).collect()
}

fn progress_bar(steps: u64) -> ProgressBar {
    // Draws to stderr; indicatif hides it when stderr is not a terminal.
    ProgressBar::new(steps).with_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    )
}

impl Sweep {
    /// Runs every phase of `run`.
    pub(crate) fn measure(run: &Run) -> Sweep {
        let started = Instant::now();
        let cands = candidates();
        let resize_list = resizes(&run.node_counts);
        let grid = (cands.len() * run.node_counts.len()) as u64;
        let steps =
            grid * 2 + (movers(&cands).len() * resize_list.len() + CACHE_SET.len() + THROUGHPUT_SET.len()) as u64;
        let bar = progress_bar(steps);
        let mut s = Sweep {
            balance: Vec::new(),
            claim_cells: Vec::new(),
            lookups: Vec::new(),
            movement: Vec::new(),
            throughput: Vec::new(),
            cache: Vec::new(),
            head_n: run.head_n(),
            skipped: Vec::new(),
            phases: Vec::new(),
            elapsed: 0.0,
        };
        s.timed("balance", |s| s.balance_phase(run, &cands, &bar));
        s.timed("lookup", |s| s.lookup_phase(run, &cands, &bar));
        s.timed("movement", |s| s.movement_phase(run, &cands, &resize_list, &bar));
        s.timed("throughput", |s| s.throughput_phase(run, &cands, &bar));
        s.timed("cache", |s| s.cache_phase(run, &cands, &bar));
        bar.finish_and_clear();
        s.elapsed = started.elapsed().as_secs_f64();
        s
    }

    fn timed(&mut self, name: &'static str, phase: impl FnOnce(&mut Sweep)) {
        let t = Instant::now();
        phase(self);
        self.phases.push((name, t.elapsed().as_secs_f64()));
    }

    /// 1. Balance, memory and build time per candidate and node count, plus the claims' cells.
    fn balance_phase(&mut self, run: &Run, cands: &[Candidate], bar: &ProgressBar) {
        for c in cands {
            for &n in &run.node_counts {
                bar.set_message(format!("balance {} N={n}", c.name));
                match balance_cell(c, n, &run.cfg) {
                    Ok(cell) => self.balance.push(cell),
                    Err(e) => self.skipped.push(format!("balance {} N={n}: {e}", c.name)),
                }
                bar.inc(1);
            }
        }
        for (v, n) in [(20, 8), (150, 3), (300, 8)] {
            if run.node_counts.contains(&n) {
                if let Ok(cell) = balance_cell(&ring_candidate(v), n, &run.cfg) {
                    self.claim_cells.push(cell);
                }
            }
        }
    }

    /// Phase 2: lookup cost per candidate and node count; the cells claim 8 compares are repeated
    /// [`TIMING_REPEATS`] times so the claim can tell a difference from noise.
    fn lookup_phase(&mut self, run: &Run, cands: &[Candidate], bar: &ProgressBar) {
        let keys = sample_keys(run.lookup_keys, 42);
        for c in cands {
            for &n in &run.node_counts {
                bar.set_message(format!("lookup {} N={n}", c.name));
                let nodes = NodeSet::from_names(cluster_names(run.cfg.seed, n)).expect("generated names are valid");
                let repeats = if n == self.head_n && matches!(c.name.as_str(), "jump" | "ring-v160") {
                    TIMING_REPEATS
                } else {
                    1
                };
                match (c.build)(&nodes) {
                    Ok(r) => {
                        let k = if c.linear_lookup { &keys[..keys.len().min(5_000)] } else { &keys[..] };
                        self.lookups.push(lookup_row(&c.name, n, (0..repeats).map(|_| lookup_ns(&*r, k, 3)).collect()));
                    }
                    Err(e) => self.skipped.push(format!("lookup {} N={n}: {e}", c.name)),
                }
                bar.inc(1);
            }
        }
    }

    /// 3. Key movement for every resize of the node grid (and 10 -> 11 for ring-v300).
    fn movement_phase(&mut self, run: &Run, cands: &[Candidate], resize_list: &[Resize], bar: &ProgressBar) {
        for c in movers(cands) {
            for rz in resize_list {
                bar.set_message(format!("movement {} {} @{}", c.name, rz.label, rz.from));
                match movement_cell(c, rz, &run.cfg) {
                    Ok(m) => self.movement.push(m),
                    Err(e) => self.skipped.push(format!("movement {} {}: {e}", c.name, rz.label)),
                }
                bar.inc(1);
            }
        }
        let ten_eleven = Resize { label: "10->11".into(), from: 10, to: 11 };
        if run.node_counts.contains(&10) {
            if let Ok(m) = movement_cell(&ring_candidate(300), &ten_eleven, &run.cfg) {
                self.movement.push(m);
            }
        }
    }

    /// 4. Throughput across threads at the headline node count.
    fn throughput_phase(&mut self, run: &Run, cands: &[Candidate], bar: &ProgressBar) {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let keys = sample_keys(run.throughput_keys, 7);
        let nodes = NodeSet::from_names(cluster_names(run.cfg.seed, self.head_n)).expect("valid names");
        for c in cands.iter().filter(|c| THROUGHPUT_SET.contains(&c.name.as_str())) {
            bar.set_message(format!("throughput {}", c.name));
            if let Ok(r) = (c.build)(&nodes) {
                // par_route_batch needs >= 2 × PAR_MIN_CHUNK keys to use a second thread.
                let k = if c.linear_lookup { &keys[..keys.len().min(40_000)] } else { &keys[..] };
                for threads in 1..=cores {
                    if let Ok(per_second) = throughput(&*r, k, threads, run.throughput_rounds) {
                        self.throughput.push(ThroughputRow { candidate: c.name.clone(), threads, per_second });
                    }
                }
            }
            bar.inc(1);
        }
    }

    /// 5. Cache hit rate around a 10 -> 11 resize.
    fn cache_phase(&mut self, run: &Run, cands: &[Candidate], bar: &ProgressBar) {
        let names = cluster_names(run.cfg.seed ^ 0xCA, 11);
        let (n10, n11) =
            (NodeSet::from_names(&names[..10]).expect("valid"), NodeSet::from_names(&names[..11]).expect("valid"));
        for c in cands.iter().filter(|c| CACHE_SET.contains(&c.name.as_str())) {
            bar.set_message(format!("cache {}", c.name));
            if let (Ok(a), Ok(b)) = ((c.build)(&n10), (c.build)(&n11)) {
                self.cache.push((c.name.clone(), run.cache.run(&*a, &*b)));
            }
            bar.inc(1);
        }
    }

    /// The balance cell of `name` at `n` nodes (grid or claim cells).
    pub(crate) fn cell(&self, name: &str, n: usize) -> Option<&BalanceCell> {
        self.balance.iter().chain(&self.claim_cells).find(|c| c.candidate == name && c.nodes == n)
    }

    /// The lookup row of `name` at `n` nodes.
    pub(crate) fn lookup(&self, name: &str, n: usize) -> Option<&LookupRow> {
        self.lookups.iter().find(|l| l.candidate == name && l.nodes == n)
    }
}

/// A lookup row from `(single, batch)` repeats: the median of each.
fn lookup_row(name: &str, nodes: usize, repeats: Vec<(f64, f64)>) -> LookupRow {
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let single_repeats: Vec<f64> = repeats.iter().map(|r| r.0).collect();
    LookupRow {
        candidate: name.to_string(),
        nodes,
        single_ns: median(single_repeats.clone()),
        batch_ns: median(repeats.iter().map(|r| r.1).collect()),
        single_repeats,
    }
}

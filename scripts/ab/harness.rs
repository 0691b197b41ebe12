//! A/B speed harness for hashroute's hot paths (driven by `scripts/ab.sh`).
//!
//! Copied verbatim into two throwaway crates, one depending on a base commit of hashroute and
//! one on the working tree, so both sides run byte-identical measurement code. Plain std only:
//! no criterion, no rand. It uses only API that exists on both sides:
//! `Ring::builder().vnodes(v).nodes(..).build()`, `Router::{route, route_batch}`,
//! `RouterSpec::new(Algorithm::{Rendezvous, Maglev}).build(NodeSet::from_names(..)?)` (used as
//! `&*router: &dyn Router`) and
//! `jump::bucket_batch`.
//!
//! Each case: warm up (~100 ms, which also calibrates the iteration count so that one sample
//! takes ~10 ms), then time `SAMPLES` samples of that fixed iteration count and report the
//! median in ns per key. Output: one `case<TAB>median_ns_per_key` line per case on stdout;
//! progress and per-case details go to stderr with `--verbose`.
//!
//! Usage: `harness [--quick] [--verbose] [--list] [FILTER...]` (a case runs when its id contains
//! any FILTER; no filter runs every case).

use std::hint::black_box;
use std::time::{Duration, Instant};

use hashroute::{Algorithm, NodeId, NodeSet, Ring, Router, RouterSpec};

/// Keys per pass; every case processes all of them once per iteration.
const KEYS: usize = 4096;
/// Bytes per key.
const KEY_LEN: usize = 16;
/// Fixed seeds: both builds see the same keys.
const KEY_SEED: u64 = 0x5EED_0000_AB00_0001;
const HASH_SEED: u64 = 0x5EED_0000_AB00_0002;

/// Measurement settings (full and `--quick`).
#[derive(Clone, Copy)]
struct Plan {
    warmup: Duration,
    sample: Duration,
    samples: usize,
}

const FULL: Plan = Plan { warmup: Duration::from_millis(100), sample: Duration::from_millis(10), samples: 31 };
const QUICK: Plan = Plan { warmup: Duration::from_millis(30), sample: Duration::from_millis(5), samples: 9 };

/// splitmix64: a fixed, dependency-free key stream.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// `KEYS` keys of `KEY_LEN` bytes in one contiguous buffer.
fn key_bytes() -> Vec<u8> {
    let mut rng = SplitMix64(KEY_SEED);
    let mut buf = Vec::with_capacity(KEYS * KEY_LEN);
    while buf.len() < KEYS * KEY_LEN {
        buf.extend_from_slice(&rng.next_u64().to_le_bytes());
    }
    buf
}

fn hashes() -> Vec<u64> {
    let mut rng = SplitMix64(HASH_SEED);
    (0..KEYS).map(|_| rng.next_u64()).collect()
}

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("node-{i}")).collect()
}

/// Runs `pass` (one pass over `KEYS` keys) through warm-up and sampling; returns the median
/// ns per key.
fn measure(id: &str, plan: Plan, verbose: bool, mut pass: impl FnMut()) -> f64 {
    // Warm-up, counting passes to calibrate the iteration count.
    let start = Instant::now();
    let mut passes: u64 = 0;
    while start.elapsed() < plan.warmup || passes == 0 {
        pass();
        passes += 1;
    }
    let per_pass = start.elapsed().as_secs_f64() / passes as f64;
    let iters = ((plan.sample.as_secs_f64() / per_pass).round() as u64).max(1);

    let mut ns_per_key: Vec<f64> = Vec::with_capacity(plan.samples);
    for _ in 0..plan.samples {
        let t = Instant::now();
        for _ in 0..iters {
            pass();
        }
        let dt = t.elapsed();
        ns_per_key.push(dt.as_nanos() as f64 / (iters as f64 * KEYS as f64));
    }
    ns_per_key.sort_by(f64::total_cmp);
    let median = ns_per_key[ns_per_key.len() / 2];
    if verbose {
        eprintln!(
            "{id}: {iters} passes/sample ({:.1} ms), {} samples, min {:.3} median {:.3} max {:.3} ns/key",
            iters as f64 * per_pass * 1e3,
            plan.samples,
            ns_per_key[0],
            median,
            ns_per_key[ns_per_key.len() - 1],
        );
    }
    median
}

/// The case ids, in run order.
const CASES: &[&str] = &[
    "ring/route/160k",
    "ring/route/1.6m",
    "ring/route_batch/160k",
    "ring/route_batch/1.6m",
    "jump/bucket_batch/1000",
    "rendezvous/route/100",
    "maglev/route/1000",
];

fn route_each<R: Router + ?Sized>(r: &R, keys: &[&[u8]], out: &mut [NodeId]) {
    for (o, k) in out.iter_mut().zip(keys) {
        *o = r.route(k);
    }
}

fn main() {
    let mut plan = FULL;
    let mut verbose = false;
    let mut filters: Vec<String> = Vec::new();
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--quick" => plan = QUICK,
            "--verbose" | "-v" => verbose = true,
            "--list" => {
                for c in CASES {
                    println!("{c}");
                }
                return;
            }
            "--help" | "-h" => {
                eprintln!("usage: harness [--quick] [--verbose] [--list] [FILTER...]");
                return;
            }
            s if s.starts_with('-') => {
                eprintln!("harness: unknown option {s}");
                std::process::exit(2);
            }
            s => filters.push(s.to_owned()),
        }
    }
    let wanted = |id: &str| filters.is_empty() || filters.iter().any(|f| id.contains(f.as_str()));

    let buf = key_bytes();
    let keys: Vec<&[u8]> = buf.chunks_exact(KEY_LEN).collect();
    let hashes = hashes();
    let mut out = vec![NodeId::default(); KEYS];
    let mut buckets = vec![0u32; KEYS];

    let emit = |id: &str, ns: f64| println!("{id}\t{ns:.4}");

    // Rings are built lazily and dropped after their cases (the 1.6M-point ring is large).
    for (size, nodes) in [("160k", 1_000usize), ("1.6m", 10_000)] {
        let single = format!("ring/route/{size}");
        let batch = format!("ring/route_batch/{size}");
        if !wanted(&single) && !wanted(&batch) {
            continue;
        }
        let ring = Ring::builder().vnodes(160).nodes(names(nodes).iter()).build().expect("ring builds");
        if wanted(&single) {
            let ns = measure(&single, plan, verbose, || {
                route_each(&ring, black_box(&keys), &mut out);
                black_box(&out);
            });
            emit(&single, ns);
        }
        if wanted(&batch) {
            let ns = measure(&batch, plan, verbose, || {
                ring.route_batch(black_box(&keys), black_box(&mut out));
            });
            emit(&batch, ns);
        }
    }

    let id = "jump/bucket_batch/1000";
    if wanted(id) {
        let ns = measure(id, plan, verbose, || {
            hashroute::jump::bucket_batch(black_box(&hashes), black_box(1000), black_box(&mut buckets));
        });
        emit(id, ns);
    }

    for (id, algorithm, nodes) in
        [("rendezvous/route/100", Algorithm::Rendezvous, 100usize), ("maglev/route/1000", Algorithm::Maglev, 1_000)]
    {
        if !wanted(id) {
            continue;
        }
        let set = NodeSet::from_names(names(nodes)).expect("node set");
        // `Box<dyn Router>` on older bases, `AnyRouter` since the workspace issue: `&*router` is a
        // `&dyn Router` on both.
        let router = RouterSpec::new(algorithm).build(set).expect("router builds");
        let ns = measure(id, plan, verbose, || {
            route_each(&*router, black_box(&keys), &mut out);
            black_box(&out);
        });
        emit(id, ns);
    }
}

//! A router built from a configuration against the concrete type and the bare crate: FlipHash,
//! PowerCh and Jump at 1,000 buckets, one `route` per key (xxh3 of a 16-byte key; the crates
//! get the same xxh3 hash), 200,000 keys.
//!
//! Timed here rather than by criterion so that the three sides of an algorithm run interleaved
//! in one process: per repetition, each side's best of several passes over the keys; the table
//! quotes the median over the repetitions. Criterion's `jumpfamily/*-any` rows measure the same
//! thing one benchmark after another (the "Performance targets" table), where load that comes
//! and goes between benchmarks lands on one side only.

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Instant;

use hashroute::{AnyRouter, FlipHash, Jump, NodeId, PowerCh, Router};

use crate::report::common::{keys16, Mode};
use crate::report::md_table;

/// The target for a router reached through `AnyRouter`, as a multiple of its crate's time.
pub(crate) const LIMIT: f64 = 1.15;
const BUCKETS: usize = 1_000;

/// Keys per pass, passes per side (best of), repetitions (median of) for a mode.
fn sizes(mode: Mode) -> (usize, usize, usize) {
    match mode {
        Mode::Smoke => (2_000, 1, 1),
        Mode::Quick => (200_000, 5, 3),
        Mode::Default | Mode::Full => (200_000, 9, 5),
    }
}

/// One algorithm's three sides, in ns per key (medians over the repetitions).
pub(crate) struct Row {
    pub algorithm: &'static str,
    pub krate: &'static str,
    pub crate_ns: f64,
    pub concrete_ns: f64,
    pub any_ns: f64,
}

impl Row {
    fn any_ratio(&self) -> f64 {
        self.any_ns / self.crate_ns
    }
}

/// The measured rows and how they were measured.
pub(crate) struct Study {
    pub rows: Vec<Row>,
    pub keys: usize,
    pub best_of: usize,
    pub repetitions: usize,
}

/// One pass: `route` every key into `out`, seconds per key.
#[inline(never)]
fn pass_router<R: Router + ?Sized>(r: &R, ks: &[[u8; 16]], out: &mut [NodeId]) -> f64 {
    let start = Instant::now();
    for (o, k) in out.iter_mut().zip(ks) {
        *o = r.route(k);
    }
    black_box(&out);
    start.elapsed().as_secs_f64() / ks.len() as f64
}

/// One pass of a crate's hash-to-bucket function over the keys' xxh3 hashes.
#[inline(never)]
fn pass_fn(f: &impl Fn(u64) -> u32, ks: &[[u8; 16]], out: &mut [u32]) -> f64 {
    let start = Instant::now();
    for (o, k) in out.iter_mut().zip(ks) {
        *o = f(xxhash_rust::xxh3::xxh3_64(k));
    }
    black_box(&out);
    start.elapsed().as_secs_f64() / ks.len() as f64
}

fn best(passes: usize, mut pass: impl FnMut() -> f64) -> f64 {
    (0..passes.max(1)).map(|_| pass()).fold(f64::INFINITY, f64::min)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The three sides of one algorithm, interleaved: per repetition the crate, the concrete type,
/// then `AnyRouter`, each its best of `best_of` passes.
fn measure_one<R: Router + Clone>(
    algorithm: &'static str,
    krate: &'static str,
    router: R,
    f: impl Fn(u64) -> u32,
    ks: &[[u8; 16]],
    (best_of, reps): (usize, usize),
) -> Row
where
    AnyRouter: From<R>,
{
    let any = AnyRouter::from(router.clone());
    let (mut ids, mut buckets) = (vec![NodeId::default(); ks.len()], vec![0u32; ks.len()]);
    // The three sides route every key alike (same buckets), else the comparison is moot.
    pass_router(&router, ks, &mut ids);
    pass_fn(&f, ks, &mut buckets);
    assert!(
        ids.iter().zip(&buckets).all(|(id, &b)| id.index() == b as usize),
        "{algorithm}: crate and router disagree"
    );
    let (mut c, mut t, mut a) = (vec![], vec![], vec![]);
    for _ in 0..reps.max(1) {
        c.push(best(best_of, || pass_fn(&f, ks, &mut buckets)));
        t.push(best(best_of, || pass_router(&router, ks, &mut ids)));
        a.push(best(best_of, || pass_router(&any, ks, &mut ids)));
    }
    Row { algorithm, krate, crate_ns: median(c) * 1e9, concrete_ns: median(t) * 1e9, any_ns: median(a) * 1e9 }
}

impl Study {
    pub(crate) fn measure(mode: Mode) -> Study {
        let (keys, best_of, repetitions) = sizes(mode);
        let ks = keys16(keys, 27);
        let names = || (0..BUCKETS).map(|i| format!("node-{i}"));
        let n = BUCKETS as u32;
        let reps = (best_of, repetitions);
        let power = power_consistent_hash::PowerConsistentHasher::try_new(n).expect("1000 buckets");
        let rows = vec![
            measure_one(
                "FlipHash",
                "fliphash",
                FlipHash::from_names(names()).expect("1000 names"),
                |h| fliphash::fliphash_64(h, ..=u64::from(n - 1)) as u32,
                &ks,
                reps,
            ),
            measure_one(
                "PowerCh",
                "power-consistent-hash",
                PowerCh::from_names(names()).expect("1000 names"),
                |h| power.hash_u64(h),
                &ks,
                reps,
            ),
            measure_one(
                "Jump",
                "jump-consistent-hash",
                Jump::from_names(names()).expect("1000 names"),
                |h| jump_consistent_hash::hash(h, BUCKETS) as u32,
                &ks,
                reps,
            ),
        ];
        Study { rows, keys, best_of, repetitions }
    }
}

/// The report section.
pub(crate) fn section(s: &Study) -> String {
    let rows: Vec<Vec<String>> = s
        .rows
        .iter()
        .map(|r| {
            let met = r.any_ratio() <= LIMIT;
            vec![
                r.algorithm.to_string(),
                format!("{:.2} ({})", r.crate_ns, r.krate),
                format!("{:.2}", r.concrete_ns),
                format!("{:.2}", r.any_ns),
                format!("{:.2}×", r.concrete_ns / r.crate_ns),
                format!("{:.2}×", r.any_ratio()),
                format!("≤ {LIMIT}×"),
                if met { "met" } else { "not met" }.to_string(),
            ]
        })
        .collect();
    let mut out = String::from("\n## A configured router against the concrete type and the crate\n\n");
    let _ = writeln!(
        out,
        "ns per key, one `route` per key at {BUCKETS} buckets (xxh3 of a 16-byte key; the crate gets the \
same hash), {} keys; each side its best of {} passes, median of {} interleaved repetitions (one \
process, so load that comes and goes hits the three sides alike). `AnyRouter` is what \
`RouterSpec::build` returns for a configuration; the target is that routing through it costs at \
most {LIMIT}× the bare crate.\n",
        s.keys, s.best_of, s.repetitions
    );
    out.push_str(&md_table(
        &[
            "algorithm",
            "crate",
            "concrete type",
            "AnyRouter",
            "concrete / crate",
            "AnyRouter / crate",
            "target",
            "verdict",
        ],
        &rows,
    ));
    out
}

/// One line per algorithm for the console summary.
pub(crate) fn summary(s: &Study) -> String {
    let parts: Vec<String> = s
        .rows
        .iter()
        .map(|r| format!("{} {:.2}× ({:.2}× concrete)", r.algorithm, r.any_ratio(), r.concrete_ns / r.crate_ns))
        .collect();
    format!("AnyRouter / crate at {BUCKETS} buckets (target ≤ {LIMIT}×): {}", parts.join(", "))
}

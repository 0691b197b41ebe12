//! A router built from a configuration against the concrete type and the bare crate: FlipHash,
//! PowerCh and Jump at 1,000 buckets, one `route` per key (xxh3 of a 16-byte key passed as a
//! `&[u8]`, so its length is unknown to the compiler as a user's keys are; the crates get the
//! same xxh3 hash), 200,000 keys. Then every algorithm at 1,000 nodes, `AnyRouter`
//! against its concrete type, what the enum's dispatch costs per call.
//!
//! Timed here rather than by criterion so that the three sides of an algorithm run interleaved
//! in one process: per repetition, each side's best of several passes over the keys; the table
//! quotes the median over the repetitions. Criterion's `jumpfamily/*-any` rows measure the same
//! thing one benchmark after another (the "Performance targets" table), where load that comes
//! and goes between benchmarks lands on one side only.

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Instant;

use hashroute::{AnyRouter, FlipHash, Jump, NodeId, NodeSet, PowerCh, Router, RouterSpec, TokenRing};

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

/// One algorithm of the every-algorithm table: its concrete type and `AnyRouter`, in ns per key
/// (medians over the repetitions), over `keys` keys.
pub(crate) struct EveryRow {
    pub algorithm: &'static str,
    pub keys: usize,
    pub concrete_ns: f64,
    pub any_ns: f64,
}

impl EveryRow {
    fn ratio(&self) -> f64 {
        self.any_ns / self.concrete_ns
    }
}

/// The measured rows and how they were measured.
pub(crate) struct Study {
    pub rows: Vec<Row>,
    pub every: Vec<EveryRow>,
    pub keys: usize,
    pub best_of: usize,
    pub repetitions: usize,
}

/// The [`BUCKETS`] node names every router of the study is built over.
fn names() -> impl Iterator<Item = String> {
    (0..BUCKETS).map(|i| format!("node-{i}"))
}

/// One pass: `route` every key into `out`, seconds per key.
#[inline(never)]
fn pass_router<R: Router + ?Sized>(r: &R, ks: &[&[u8]], out: &mut [NodeId]) -> f64 {
    let start = Instant::now();
    for (o, k) in out.iter_mut().zip(ks) {
        *o = r.route(k);
    }
    black_box(&out);
    start.elapsed().as_secs_f64() / ks.len() as f64
}

/// One pass of a crate's hash-to-bucket function over the keys' xxh3 hashes.
#[inline(never)]
fn pass_fn(f: &impl Fn(u64) -> u32, ks: &[&[u8]], out: &mut [u32]) -> f64 {
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
    ks: &[&[u8]],
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
        let owned = keys16(keys, 27);
        let ks: Vec<&[u8]> = owned.iter().map(|k| &k[..]).collect();
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
        let every = every_algorithm(&ks, (best_of, repetitions));
        Study { rows, every, keys, best_of, repetitions }
    }
}

/// A pass's target duration in the every-algorithm table: slow routers (rendezvous is O(n)) get
/// fewer keys so that the table costs seconds, not minutes.
const PASS_SECONDS: f64 = 1e-3;

/// Every algorithm of [`hashroute::Algorithm::ALL`] at [`BUCKETS`] nodes in its default
/// configuration (the token ring with its default tokens per node), `AnyRouter` against the
/// concrete router inside it, interleaved like the crate table.
fn every_algorithm(ks: &[&[u8]], reps: (usize, usize)) -> Vec<EveryRow> {
    hashroute::Algorithm::ALL
        .iter()
        .map(|&algorithm| {
            let mut spec = RouterSpec::new(algorithm);
            if algorithm.needs_tokens() {
                spec = spec.with_tokens_per_node(TokenRing::DEFAULT_TOKENS_PER_NODE);
            }
            let nodes = NodeSet::from_names(names()).expect("1000 names");
            let any = spec.build(nodes).expect("every algorithm builds at 1000 nodes");
            let probe = ks.len().min(2_000);
            let per_key = pass_router(&any, &ks[..probe], &mut vec![NodeId::default(); probe]);
            let keys = ((PASS_SECONDS / per_key) as usize).clamp(probe, ks.len());
            let (concrete_ns, any_ns) = concrete_and_any(&any, &ks[..keys], reps);
            EveryRow { algorithm: algorithm.name(), keys, concrete_ns, any_ns }
        })
        .collect()
}

/// The concrete router inside `any` against `any` itself: one arm per variant, so each side is
/// compiled for its own type. A variant this list lacks measures as NaN (shown as "—").
fn concrete_and_any(any: &AnyRouter, ks: &[&[u8]], reps: (usize, usize)) -> (f64, f64) {
    match any {
        AnyRouter::Modulo(r) => pair(r, any, ks, reps),
        AnyRouter::Ring(r) => pair(r, any, ks, reps),
        AnyRouter::Ketama(r) => pair(r, any, ks, reps),
        AnyRouter::Jump(r) => pair(r, any, ks, reps),
        AnyRouter::Rendezvous(r) => pair(r, any, ks, reps),
        AnyRouter::Slots(r) => pair(r, any, ks, reps),
        AnyRouter::Maglev(r) => pair(r, any, ks, reps),
        AnyRouter::MultiProbe(r) => pair(r, any, ks, reps),
        AnyRouter::Memento(r) => pair(r, any, ks, reps),
        AnyRouter::Anchor(r) => pair(r, any, ks, reps),
        AnyRouter::JumpBack(r) => pair(r, any, ks, reps),
        AnyRouter::FlipHash(r) => pair(r, any, ks, reps),
        AnyRouter::Power(r) => pair(r, any, ks, reps),
        AnyRouter::Binomial(r) => pair(r, any, ks, reps),
        AnyRouter::JumpBackAnchor(r) => pair(r, any, ks, reps),
        AnyRouter::Nginx(r) => pair(r, any, ks, reps),
        AnyRouter::Haproxy(r) => pair(r, any, ks, reps),
        AnyRouter::EnvoyRing(r) => pair(r, any, ks, reps),
        AnyRouter::Kafka(r) => pair(r, any, ks, reps),
        AnyRouter::TokenRing(r) => pair(r, any, ks, reps),
        _ => (f64::NAN, f64::NAN),
    }
}

/// The concrete router and `AnyRouter`, interleaved: per repetition each its best of
/// `best_of` passes; medians in ns per key.
fn pair<R: Router>(r: &R, any: &AnyRouter, ks: &[&[u8]], (best_of, reps): (usize, usize)) -> (f64, f64) {
    let mut ids = vec![NodeId::default(); ks.len()];
    let (mut t, mut a) = (vec![], vec![]);
    for _ in 0..reps.max(1) {
        t.push(best(best_of, || pass_router(r, ks, &mut ids)));
        a.push(best(best_of, || pass_router(any, ks, &mut ids)));
    }
    (median(t) * 1e9, median(a) * 1e9)
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
        "ns per key, one `route` per key at {BUCKETS} buckets (xxh3 of a 16-byte key passed as a `&[u8]`; the \
crate gets the same hash), {} keys; each side its best of {} passes, median of {} interleaved repetitions (one \
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
    out.push_str(&every_section(s));
    out
}

/// The every-algorithm table and the routers it finds above the limit.
fn every_section(s: &Study) -> String {
    let ns = |v: f64| if v.is_nan() { "—".to_string() } else { format!("{v:.2}") };
    let rows: Vec<Vec<String>> = s
        .every
        .iter()
        .map(|r| {
            vec![
                r.algorithm.to_string(),
                r.keys.to_string(),
                ns(r.concrete_ns),
                ns(r.any_ns),
                if r.ratio().is_nan() { "—".to_string() } else { format!("{:.2}×", r.ratio()) },
                ns(r.any_ns - r.concrete_ns),
            ]
        })
        .collect();
    let over: Vec<&str> = s.every.iter().filter(|r| r.ratio() > LIMIT).map(|r| r.algorithm).collect();
    let mut out = format!(
        "\nEvery algorithm at {BUCKETS} nodes in its default configuration, `AnyRouter` against the concrete \
router inside it, measured the same way (each algorithm over as many keys as take about \
{:.0} ms per pass). The enum adds a roughly constant cost per call, a branch on the variant and \
the values a concrete loop keeps in registers; it shows as a ratio only where the whole route \
costs a few nanoseconds. `route_batch` dispatches once per batch instead of once per key.\n\n",
        PASS_SECONDS * 1e3
    );
    out.push_str(&md_table(
        &["algorithm", "keys", "concrete type", "AnyRouter", "AnyRouter / concrete", "difference (ns)"],
        &rows,
    ));
    let _ = writeln!(
        out,
        "\nAbove {LIMIT}× of the concrete type in this run: {}.",
        if over.is_empty() { "none".to_string() } else { over.join(", ") }
    );
    out
}

/// One line per algorithm for the console summary.
pub(crate) fn summary(s: &Study) -> String {
    let parts: Vec<String> = s
        .rows
        .iter()
        .map(|r| format!("{} {:.2}× ({:.2}× concrete)", r.algorithm, r.any_ratio(), r.concrete_ns / r.crate_ns))
        .collect();
    let worst = s.every.iter().filter(|r| !r.ratio().is_nan()).max_by(|a, b| a.ratio().total_cmp(&b.ratio()));
    let worst = worst.map_or(String::new(), |r| {
        format!("; every algorithm through AnyRouter: at most {:.2}× its concrete type ({})", r.ratio(), r.algorithm)
    });
    format!("AnyRouter / crate at {BUCKETS} buckets (target ≤ {LIMIT}×): {}{worst}", parts.join(", "))
}

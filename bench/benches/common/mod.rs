//! Helpers shared by every bench (included with `#[path]`): the run mode, the criterion settings
//! per mode, where reports are written, and seeded inputs generated outside the timed loops.
//!
//! This file is the one place that decides how big a run is:
//!
//! | mode | how | sizes and times |
//! |---|---|---|
//! | smoke | `cargo test --benches` (no `--bench` flag) | smallest sizes, criterion runs each bench once, nothing is written |
//! | quick | `HASHROUTE_QUICK=1 cargo bench` | CI smoke run: few sizes, 0.2 s warm-up, 0.5 s measurement |
//! | default | `cargo bench` | under 300 s after the build on 2 cores: the ids the report reads, 0.2 s warm-up, 0.6 s measurement, 20 samples |
//! | full | `HASHROUTE_FULL=1 cargo bench` | the publication suite: every size and variant, criterion's default times |
//!
//! Plain `cargo bench` is how users pick an algorithm, so it has a budget (300 s
//! after the build on the 2-core machine, ending with the recommendation; `scripts/bench_time.sh`
//! checks it). It measures the ids the report's tables and every ratio of the "Performance
//! targets" table read (benches/vnodes/targets.rs, hashing.rs, tokens.rs, sections.rs); the
//! other sizes and variants run when [`all_variants`] is true (the full suite, and smoke runs,
//! which run every code path once), and tables show "not measured" for the rows only they fill.
//!
//! Reports go to `target/hashroute-report/` unless `HASHROUTE_PUBLISH=1` (set by
//! `scripts/report.sh` only) selects `results/`.
#![allow(dead_code, unreachable_pub)]

use std::path::PathBuf;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, SamplingMode};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// How big a run is (see the module docs).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `cargo test --benches`: run every code path once, write nothing.
    Smoke,
    /// `HASHROUTE_QUICK=1`: the CI-sized run.
    Quick,
    /// Plain `cargo bench`: at most 300 s after the build on 2 cores.
    Default,
    /// `HASHROUTE_FULL=1`: the publication suite.
    Full,
}

/// An environment flag: set to anything but empty or `0`.
fn flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Whether the binary was started by `cargo bench` (criterion's convention: cargo passes
/// `--bench`); under `cargo test --benches` it is not, and the benches run a smoke test.
pub fn is_bench_run() -> bool {
    std::env::args().any(|a| a == "--bench")
}

impl Mode {
    /// The mode of this process. `HASHROUTE_QUICK` wins over `HASHROUTE_FULL`.
    pub fn detect() -> Mode {
        if !is_bench_run() {
            Mode::Smoke
        } else if flag("HASHROUTE_QUICK") {
            Mode::Quick
        } else if flag("HASHROUTE_FULL") {
            Mode::Full
        } else {
            Mode::Default
        }
    }

    /// Short name, as the report's "Mode:" line prints it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Smoke => "smoke",
            Mode::Quick => "quick",
            Mode::Default => "default",
            Mode::Full => "full",
        }
    }

    /// How to select this mode.
    pub fn how(self) -> &'static str {
        match self {
            Mode::Smoke => "`cargo test --benches`",
            Mode::Quick => "`HASHROUTE_QUICK=1 cargo bench`",
            Mode::Default => "`cargo bench`",
            Mode::Full => "`HASHROUTE_FULL=1 cargo bench`",
        }
    }

    /// One value per mode; smoke runs use the quick value (criterion runs each bench once).
    pub fn pick<T>(self, quick: T, default: T, full: T) -> T {
        match self {
            Mode::Smoke | Mode::Quick => quick,
            Mode::Default => default,
            Mode::Full => full,
        }
    }

    /// Smallest sizes first: `smoke`, then as [`Mode::pick`].
    pub fn pick4<T>(self, smoke: T, quick: T, default: T, full: T) -> T {
        match self {
            Mode::Smoke => smoke,
            _ => self.pick(quick, default, full),
        }
    }
}

/// The mode of this process ([`Mode::detect`]).
pub fn mode() -> Mode {
    Mode::detect()
}

/// `HASHROUTE_QUICK=1` or a smoke run: the smallest sizes.
pub fn quick() -> bool {
    matches!(mode(), Mode::Quick | Mode::Smoke)
}

/// Whether this run measures every size and variant: the full suite, and smoke runs (every code
/// path once). Plain `cargo bench` and quick runs measure only the ids the report reads.
pub fn all_variants() -> bool {
    matches!(mode(), Mode::Full | Mode::Smoke)
}

/// Criterion settings for this mode; every criterion bench's `criterion_group!` uses it.
/// Command-line flags (`-- --measurement-time 2`) still override these.
///
/// Default mode: 0.2 s warm-up and 0.6 s of 20 samples keep each id near a second; the
/// benches time batches of thousands of keys (tens of microseconds per iteration), so even
/// 0.6 s holds thousands of iterations and the medians stay within the run-to-run noise of a
/// shared machine. 10000 bootstrap resamples instead of 100000 cut the analysis per id (the
/// confidence bounds it prints move in the third digit; the report reads only medians).
pub fn criterion() -> Criterion {
    mark_run();
    let c = Criterion::default();
    match mode() {
        Mode::Full | Mode::Smoke => c,
        Mode::Default => c
            .warm_up_time(Duration::from_millis(200))
            .measurement_time(Duration::from_millis(600))
            .sample_size(20)
            .nresamples(10_000)
            .without_plots(),
        Mode::Quick => c
            .warm_up_time(Duration::from_millis(200))
            .measurement_time(Duration::from_millis(500))
            .sample_size(10)
            .nresamples(10_000)
            .without_plots(),
    }
}

/// The marker of this `cargo bench` invocation: one file per parent process (cargo runs every
/// bench binary of one invocation as its child). `None` off Unix.
fn run_marker() -> Option<PathBuf> {
    #[cfg(unix)]
    {
        let ppid = std::os::unix::process::parent_id();
        Some(target_dir().join("criterion").join(format!(".hashroute-run-{ppid}")))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Marks the start of this `cargo bench` invocation: the first criterion bench it runs writes
/// the marker (and removes earlier invocations' markers); later ones find it. Not in smoke runs,
/// which write nothing.
fn mark_run() {
    let Some(marker) = run_marker().filter(|_| mode() != Mode::Smoke) else { return };
    if marker.exists() {
        return;
    }
    let Some(dir) = marker.parent() else { return };
    let _ = std::fs::create_dir_all(dir);
    for old in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if old.file_name().to_string_lossy().starts_with(".hashroute-run-") {
            let _ = std::fs::remove_file(old.path());
        }
    }
    let _ = std::fs::write(&marker, "");
}

/// When the first criterion bench of this `cargo bench` invocation started, if one did: the
/// report reads only the estimates written since, so that ids an earlier run measured (the full
/// suite's extra sizes, say) do not mix into this run's tables and ratios. `None` when this
/// process is the only bench of its invocation (`cargo bench --bench vnodes`): then every
/// estimate on disk counts, as scripts/report.sh expects (it clears stale ones first).
pub fn run_started() -> Option<std::time::SystemTime> {
    std::fs::metadata(run_marker()?).ok()?.modified().ok()
}

/// For groups whose iterations take milliseconds (builds): 10 samples, and outside the full
/// suite flat sampling, so 10 samples fit in the short measurement time.
pub fn slow(g: &mut BenchmarkGroup<'_, WallTime>) {
    g.sample_size(10);
    if mode() != Mode::Full {
        g.sampling_mode(SamplingMode::Flat);
    }
}

/// The workspace root (this package lives in its `bench/` folder): where `results/` and the
/// default `target/` are.
pub fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map_or_else(|| manifest.clone(), PathBuf::from)
}

/// Where reports (CSV, SVG, Markdown) go: `results/` at the workspace root when
/// `HASHROUTE_PUBLISH=1` (scripts/report.sh), else `target/hashroute-report/` (honouring
/// `CARGO_TARGET_DIR`). Created if missing.
pub fn output_dir() -> PathBuf {
    let root = workspace_root();
    let dir = if flag("HASHROUTE_PUBLISH") { root.join("results") } else { target_dir().join("hashroute-report") };
    let _ = std::fs::create_dir_all(&dir);
    dir
}

/// Whether this run writes `results/` (`HASHROUTE_PUBLISH=1`).
pub fn publishing() -> bool {
    flag("HASHROUTE_PUBLISH")
}

/// cargo's target directory (`CARGO_TARGET_DIR`, relative to the workspace root when relative,
/// or the workspace's `target/`).
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(|d| workspace_root().join(d))
        .unwrap_or_else(|| workspace_root().join("target"))
}

/// `n` pre-generated 16-byte keys from a seeded RNG.
pub fn keys16(n: usize, seed: u64) -> Vec<[u8; 16]> {
    let mut rng = Pcg64::seed_from_u64(seed);
    (0..n).map(|_| rng.gen::<u128>().to_le_bytes()).collect()
}

/// `n` pre-generated 64-bit key hashes from a seeded RNG.
pub fn hashes(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = Pcg64::seed_from_u64(seed);
    (0..n).map(|_| rng.gen()).collect()
}

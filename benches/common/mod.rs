//! Helpers shared by every bench (included with `#[path]`): the run mode, the criterion settings
//! per mode, where reports are written, and seeded inputs generated outside the timed loops.
//!
//! This file is the one place that decides how big a run is:
//!
//! | mode | how | sizes and times |
//! |---|---|---|
//! | smoke | `cargo test --benches` (no `--bench` flag) | smallest sizes, criterion runs each bench once, nothing is written |
//! | quick | `HASHROUTE_QUICK=1 cargo bench` | CI smoke run: few sizes, 0.2 s warm-up, 0.5 s measurement |
//! | default | `cargo bench` | minutes: fewer sizes, 0.3 s warm-up, 1 s measurement, 20 samples |
//! | full | `HASHROUTE_FULL=1 cargo bench` | the publication suite: every size, criterion's default times |
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
    /// Plain `cargo bench`: a few minutes in all.
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

/// Criterion settings for this mode; every criterion bench's `criterion_group!` uses it.
/// Command-line flags (`-- --measurement-time 2`) still override these.
pub fn criterion() -> Criterion {
    let c = Criterion::default();
    match mode() {
        Mode::Full | Mode::Smoke => c,
        Mode::Default => c
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_millis(1000))
            .sample_size(20)
            .without_plots(),
        Mode::Quick => c
            .warm_up_time(Duration::from_millis(200))
            .measurement_time(Duration::from_millis(500))
            .sample_size(10)
            .without_plots(),
    }
}

/// For groups whose iterations take milliseconds (builds): 10 samples, and outside the full
/// suite flat sampling, so 10 samples fit in the short measurement time.
pub fn slow(g: &mut BenchmarkGroup<'_, WallTime>) {
    g.sample_size(10);
    if mode() != Mode::Full {
        g.sampling_mode(SamplingMode::Flat);
    }
}

/// Where reports (CSV, SVG, Markdown) go: `results/` at the crate root when
/// `HASHROUTE_PUBLISH=1` (scripts/report.sh), else `target/hashroute-report/` (honouring
/// `CARGO_TARGET_DIR`). Created if missing.
pub fn output_dir() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = if flag("HASHROUTE_PUBLISH") { root.join("results") } else { target_dir().join("hashroute-report") };
    let _ = std::fs::create_dir_all(&dir);
    dir
}

/// Whether this run writes `results/` (`HASHROUTE_PUBLISH=1`).
pub fn publishing() -> bool {
    flag("HASHROUTE_PUBLISH")
}

/// cargo's target directory (`CARGO_TARGET_DIR` or `target/`).
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
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

//! `cargo bench --bench vnodes`: which algorithm, how many vnodes.
//!
//! Sweeps every router of `analysis::sweep::candidates()` over node counts and random clusters,
//! writes CSVs, SVG plots and `REPORT.md` to the report folder, and ends by printing the
//! recommendation table. The report folder is `target/hashroute-report/`, or `results/` when
//! `HASHROUTE_PUBLISH=1` (only `scripts/report.sh` sets it). Sizes per mode (plain, quick, full,
//! smoke) are in [`config`]; the mode itself in `benches/common/mod.rs`. Under
//! `cargo test --benches` (no `--bench` flag) it runs a tiny smoke sweep and writes nothing.
//!
//! The pipeline, one module per step:
//!
//! - [`config`]: the sweep sizes of each mode ([`config::Run`]).
//! - [`sweep_run`]: runs the measurements into one [`sweep_run::Sweep`] (with progress bars).
//! - [`recommendation`]: the library's recommendation (the same code as `hashroute recommend`).
//! - [`claims`]: the claims checked against the sweep.
//! - [`data`]: the CSV files.
//! - [`plots`]: the SVG plots, one function per plot.
//! - [`sections`]: `REPORT.md`, one function per section.
//! - [`targets`]: the performance-target table (ratios of criterion medians).
//! - [`dispatch`]: `AnyRouter` against the concrete type and the bare crate (timed here,
//!   interleaved).
//! - [`tokens`]: allocated token rings against random vnodes (exact loads; its section, CSV
//!   and plot).

#[path = "../report/mod.rs"]
mod report;

mod claims;
mod config;
mod data;
mod dispatch;
mod hashing;
mod plots;
mod recommendation;
mod resize_plot;
mod sections;
mod sweep_run;
mod targets;
mod tokens;

use report::common::Mode;

/// Everything the output steps read: the run's settings, the measured sweep and the claims.
pub(crate) struct Context<'a> {
    pub run: &'a config::Run,
    pub sweep: &'a sweep_run::Sweep,
    pub claims: &'a [claims::Claim],
    /// The recommendation, computed once (it re-measures rings on exact loads).
    pub recommendation: &'a str,
    /// Allocated token rings against random vnodes (exact, computed once).
    pub tokens: &'a tokens::Study,
    /// `AnyRouter` against the concrete type and the bare crate (timed once, interleaved).
    pub dispatch: &'a dispatch::Study,
    /// The 4 -> 8 node resize through the cache simulator, every strategy (`None` if it failed,
    /// which is said on stderr).
    pub resize: Option<&'a hashroute_analysis::ResizeReport>,
}

fn main() {
    let run = config::Run::for_mode(Mode::detect());
    let sweep = sweep_run::Sweep::measure(&run);
    let claims = claims::check(&sweep);
    let tokens = tokens::Study::measure(run.mode);
    let resize = resize_study(run.mode);
    let dispatch = dispatch::Study::measure(run.mode);
    let recommendation = recommendation::recommendation_text(&run);
    let ctx = Context {
        run: &run,
        sweep: &sweep,
        claims: &claims,
        recommendation: &recommendation,
        tokens: &tokens,
        dispatch: &dispatch,
        resize: resize.as_ref(),
    };
    if run.write {
        write_report(&ctx);
    }
    print_summary(&ctx);
    // Last, so `cargo bench` ends with it.
    println!("{recommendation}");
    if run.mode == Mode::Smoke {
        assert!(!sweep.balance.is_empty() && !sweep.movement.is_empty(), "smoke sweep produced no cells");
    }
}

/// The report's resize simulation: the defaults of `hashroute resize` (a second or so), a
/// smaller workload of the same shape in smoke mode.
fn resize_study(mode: Mode) -> Option<hashroute_analysis::ResizeReport> {
    let workload = match mode {
        Mode::Smoke => {
            hashroute_analysis::Workload { keys: 10_000, requests_per_step: 20_000, window: 200, ..Default::default() }
        }
        _ => hashroute_analysis::Workload::default(),
    };
    resize_plot::resize_report(&workload).map_err(|e| eprintln!("vnodes: resize simulation: {e}")).ok()
}

/// CSVs, plots and REPORT.md into the report folder; says where.
fn write_report(ctx: &Context<'_>) {
    let dir = report::results_dir();
    if let Err(e) = data::write_all(&dir, ctx.sweep) {
        eprintln!("vnodes: could not write CSVs to {}: {e}", dir.display());
    }
    let plots = plots::draw_all(&dir, ctx);
    match sections::write_report(&dir, ctx, &plots) {
        Ok(path) => println!("vnodes: wrote the report to {} (CSVs and plots alongside)", path.display()),
        Err(e) => eprintln!("vnodes: could not write REPORT.md to {}: {e}", dir.display()),
    }
}

/// Claims, skipped cells and the time split, printed before the recommendation.
fn print_summary(ctx: &Context<'_>) {
    println!("claims:");
    for c in ctx.claims {
        println!("  [{}] {} — measured {}", c.verdict, c.claim, c.measured);
    }
    let s = ctx.sweep;
    if !s.skipped.is_empty() {
        println!("skipped {} cells: {}", s.skipped.len(), s.skipped.join("; "));
    }
    println!("{}", tokens::summary(ctx.tokens));
    println!("{}", dispatch::summary(ctx.dispatch));
    let split: Vec<String> = s.phases.iter().map(|(n, t)| format!("{n} {t:.1} s")).collect();
    println!(
        "vnodes sweep ({} mode) took {:.1} s ({}); balance cells built {:.0} M ring points",
        ctx.run.mode.name(),
        s.elapsed,
        split.join(", "),
        ctx.run.planned_points() as f64 / 1e6
    );
}

//! Shared report code for the benchmarks: CSV files, SVG line charts (the analysis crate's `plot`), machine
//! description and criterion estimate reading. Included by the benches with `#[path]`, so it
//! never becomes part of the library (no plotting dependency there).
#![allow(dead_code, unreachable_pub, missing_docs)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[path = "../common/mod.rs"]
pub mod common;

/// Where this run's report goes: `target/hashroute-report/`, or `results/` under
/// `HASHROUTE_PUBLISH=1` (scripts/report.sh). See [`common::output_dir`].
pub fn results_dir() -> PathBuf {
    common::output_dir()
}

/// Writes a CSV file (fields are numbers or simple names; commas and quotes are escaped).
pub fn write_csv(path: &Path, header: &[&str], rows: &[Vec<String>]) -> std::io::Result<()> {
    let esc =
        |f: &str| if f.contains([',', '"', '\n']) { format!("\"{}\"", f.replace('"', "\"\"")) } else { f.to_string() };
    let mut out = header.join(",");
    out.push('\n');
    for r in rows {
        out.push_str(&r.iter().map(|f| esc(f)).collect::<Vec<_>>().join(","));
        out.push('\n');
    }
    std::fs::write(path, out)
}

/// The machine a run happened on, for the report header.
pub struct Machine {
    pub cpu: String,
    pub cores: usize,
    pub os: String,
    pub rustc: String,
    pub commit: String,
}

fn command_line(cmd: &str, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new(cmd).args(args).current_dir(common::workspace_root()).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

impl Machine {
    pub fn detect() -> Machine {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
            })
            .unwrap_or_else(|| std::env::consts::ARCH.to_string());
        let dirty =
            // results/ is what this run rewrites; only changes to the code make the run dirty.
            command_line("git", &["status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)results"])
                .is_some_and(|s| !s.is_empty());
        Machine {
            cpu,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
            rustc: command_line(&std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()), &["-V"])
                .unwrap_or_else(|| "rustc (unknown)".into()),
            commit: command_line("git", &["rev-parse", "--short", "HEAD"])
                .map(|c| if dirty { format!("{c} (with uncommitted changes)") } else { c })
                .unwrap_or_else(|| "unknown (not a git checkout)".into()),
        }
    }

    pub fn markdown(&self) -> String {
        format!(
            "- Machine: {} ({} logical cores), {}\n- Compiler: {}\n- Commit: {}\n",
            self.cpu, self.cores, self.os, self.rustc, self.commit
        )
    }
}

// Charts are the analysis crate's plotting code (feature `plot`), the same the CLI's
// `resize --plot` and `recommend --plot` draw with.
// Shared by several bench targets, each of which draws only some of them (or none).
#[allow(unused_imports)]
pub use hashroute_analysis::plot::{line_chart, Axes, Series};

/// One criterion measurement: group, function id, parameter (as written), median ns.
pub struct CriterionEstimate {
    pub group: String,
    pub function: String,
    pub parameter: String,
    /// Median ns per iteration (per batch when the bench times a batch).
    pub median_ns: f64,
    /// Elements per iteration (criterion's `Throughput::Elements`), when the bench declares it.
    pub elements: Option<u64>,
}

impl CriterionEstimate {
    /// Median ns per element: per key for the batch benches, per iteration without a throughput.
    pub fn ns_per_element(&self) -> f64 {
        self.median_ns / self.elements.unwrap_or(1).max(1) as f64
    }
}

/// Reads every `target/criterion/<group>/**/new/{benchmark,estimates}.json` under `group`
/// written by this `cargo bench` invocation ([`common::run_started`]; every one when the report
/// runs alone). Empty when criterion has not run (another bench's job), never an error.
pub fn criterion_estimates(group: &str) -> Vec<CriterionEstimate> {
    let target = common::target_dir();
    let since = common::run_started();
    let fresh = |new_dir: &Path| {
        since.is_none_or(|t| {
            std::fs::metadata(new_dir.join("estimates.json")).and_then(|m| m.modified()).is_ok_and(|m| m >= t)
        })
    };
    let mut out = Vec::new();
    let mut stack = vec![target.join("criterion").join(group)];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n == "new") {
                    if let Some(est) = read_estimate(&p).filter(|_| fresh(&p)) {
                        out.push(est);
                    }
                } else if p.file_name().is_some_and(|n| n != "base" && n != "report" && n != "change") {
                    stack.push(p);
                }
            }
        }
    }
    out.sort_by(|a, b| (&a.function, &a.parameter).cmp(&(&b.function, &b.parameter)));
    out
}

fn read_estimate(new_dir: &Path) -> Option<CriterionEstimate> {
    let bench: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(new_dir.join("benchmark.json")).ok()?).ok()?;
    let est: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(new_dir.join("estimates.json")).ok()?).ok()?;
    Some(CriterionEstimate {
        group: bench.get("group_id")?.as_str()?.to_string(),
        function: bench.get("function_id").and_then(|v| v.as_str()).unwrap_or("").to_string(),
        parameter: bench.get("value_str").and_then(|v| v.as_str()).unwrap_or("").to_string(),
        median_ns: est.get("median")?.get("point_estimate")?.as_f64()?,
        elements: bench.get("throughput").and_then(|t| t.get("Elements")).and_then(|v| v.as_u64()),
    })
}

/// A markdown table.
pub fn md_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "| {} |", header.join(" | "));
    let _ = writeln!(s, "|{}|", header.iter().map(|_| "---").collect::<Vec<_>>().join("|"));
    for r in rows {
        let _ = writeln!(s, "| {} |", r.join(" | "));
    }
    s
}

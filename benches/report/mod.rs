//! Shared report code for the benchmarks: CSV files, SVG line charts (plotters), machine
//! description and criterion estimate reading. Included by the benches with `#[path]`, so it
//! never becomes part of the library (no plotting dependency there).
#![allow(dead_code, unreachable_pub, missing_docs)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use plotters::prelude::*;

/// `results/` at the crate root.
pub fn results_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("results");
    let _ = std::fs::create_dir_all(&dir);
    dir
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
    let out = std::process::Command::new(cmd).args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().ok()?;
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

/// One line on a chart.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Draw dashed-looking (thin, no markers): reference curves such as 1/sqrt(V).
    pub reference: bool,
}

impl Series {
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series { name: name.into(), points, reference: false }
    }
    pub fn reference(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series { name: name.into(), points, reference: true }
    }
}

/// Axis options for [`line_chart`].
pub struct Axes<'a> {
    pub x: &'a str,
    pub y: &'a str,
    pub log_x: bool,
    pub log_y: bool,
    /// Category labels for x = 0, 1, 2, … (instead of numbers).
    pub categories: Option<&'a [String]>,
}

/// An SVG line chart. Log axes plot log10 of the values and label ticks with the real values.
pub fn line_chart(path: &Path, title: &str, axes: &Axes<'_>, series: &[Series]) -> Result<(), String> {
    let tx = |v: f64| if axes.log_x { v.max(1e-12).log10() } else { v };
    let ty = |v: f64| if axes.log_y { v.max(1e-12).log10() } else { v };
    let pts: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|&(x, y)| (tx(x), ty(y))))
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .collect();
    if pts.is_empty() {
        return Err(format!("{}: no data", path.display()));
    }
    let (mut x0, mut x1) = pts.iter().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let (mut y0, mut y1) = pts.iter().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.1), b.max(p.1)));
    if x1 - x0 < 1e-9 {
        x0 -= 0.5;
        x1 += 0.5;
    }
    if y1 - y0 < 1e-9 {
        y0 -= 0.5;
        y1 += 0.5;
    }
    let (ypad, xpad) = ((y1 - y0) * 0.05, if axes.categories.is_some() { 0.5 } else { (x1 - x0) * 0.02 });
    if !axes.log_y && y0 >= 0.0 {
        y0 = 0.0_f64.max(y0 - ypad);
    } else {
        y0 -= ypad;
    }
    let root = SVGBackend::new(path, (960, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d((x0 - xpad)..(x1 + xpad), y0..(y1 + ypad))
        .map_err(|e| e.to_string())?;
    let fmt_axis = |v: f64, log: bool| -> String {
        // Log axes: label only the powers of ten.
        if log && (v - v.round()).abs() > 1e-6 {
            return String::new();
        }
        let r = if log { 10f64.powf(v.round()) } else { v };
        if r.abs() >= 1000.0 || (r != 0.0 && r.abs() < 0.01) {
            format!("{r:.2e}")
        } else if r.fract().abs() < 1e-9 {
            format!("{r:.0}")
        } else {
            format!("{r:.3}")
        }
    };
    let xfmt = |v: &f64| match axes.categories {
        Some(c) => {
            let i = v.round();
            if (v - i).abs() < 1e-6 && i >= 0.0 {
                c.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        }
        None => fmt_axis(*v, axes.log_x),
    };
    let yfmt = |v: &f64| fmt_axis(*v, axes.log_y);
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(axes.x).y_desc(axes.y).x_label_formatter(&xfmt).y_label_formatter(&yfmt);
    if let Some(c) = axes.categories {
        mesh.x_labels(c.len() * 2 + 1);
    }
    mesh.draw().map_err(|e| e.to_string())?;
    for (i, s) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let data: Vec<(f64, f64)> =
            s.points.iter().map(|&(x, y)| (tx(x), ty(y))).filter(|p| p.0.is_finite() && p.1.is_finite()).collect();
        let style = if s.reference { ShapeStyle::from(&BLACK.mix(0.6)).stroke_width(1) } else { color.stroke_width(2) };
        chart
            .draw_series(LineSeries::new(data.clone(), style))
            .map_err(|e| e.to_string())?
            .label(s.name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
        if !s.reference && data.len() <= 100 {
            chart.draw_series(data.iter().map(|&p| Circle::new(p, 3, color.filled()))).map_err(|e| e.to_string())?;
        }
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}

/// One criterion measurement: group, function id, parameter (as written), median ns.
pub struct CriterionEstimate {
    pub group: String,
    pub function: String,
    pub parameter: String,
    pub median_ns: f64,
}

/// Reads every `target/criterion/<group>/**/new/{benchmark,estimates}.json` under `group`.
/// Empty when criterion has not run (another bench's job), never an error.
pub fn criterion_estimates(group: &str) -> Vec<CriterionEstimate> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    let mut out = Vec::new();
    let mut stack = vec![target.join("criterion").join(group)];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n == "new") {
                    if let Some(est) = read_estimate(&p) {
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

/// Whether the benchmark binary was started by `cargo bench` (criterion's convention: cargo
/// passes `--bench`); under `cargo test --benches` it is not, and the benches run a smoke test.
pub fn is_bench_run() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// `HASHROUTE_QUICK` set to anything but `0` or empty.
pub fn quick_mode() -> bool {
    std::env::var("HASHROUTE_QUICK").is_ok_and(|v| !v.is_empty() && v != "0")
}

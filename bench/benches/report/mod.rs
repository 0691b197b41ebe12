//! Shared report code for the benchmarks: CSV files, SVG line charts (plotters), machine
//! description and criterion estimate reading. Included by the benches with `#[path]`, so it
//! never becomes part of the library (no plotting dependency there).
#![allow(dead_code, unreachable_pub, missing_docs)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

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

/// How a [`Series`] is drawn.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Look {
    /// Solid coloured line with point markers: measured data.
    Measured,
    /// Dashed line in the colour of the series it belongs to ([`Series::color`]): a model
    /// curve such as the closed form next to its measurement.
    Model,
    /// Thin grey line: a reference such as 1/sqrt(V), the ideal, or a target.
    Reference,
}

/// One line on a chart.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub look: Look,
    /// Palette index; by default the series' position among the measured series.
    pub color: Option<usize>,
}

impl Series {
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series { name: name.into(), points, look: Look::Measured, color: None }
    }
    pub fn reference(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series { name: name.into(), points, look: Look::Reference, color: None }
    }
    /// A dashed model curve in palette colour `color` (match it to the measured series).
    pub fn model(name: impl Into<String>, points: Vec<(f64, f64)>, color: usize) -> Series {
        Series { name: name.into(), points, look: Look::Model, color: Some(color) }
    }
    /// Sets the palette colour.
    pub fn color(mut self, color: usize) -> Series {
        self.color = Some(color);
        self
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

/// Chart size, and the width of the legend panel right of the plot (legends never cover data).
const CHART_W: u32 = 1120;
const CHART_H: u32 = 600;
const LEGEND_W: u32 = 260;

/// A series' points in plot coordinates (log10 on log axes). Points a log axis cannot show
/// (zero or negative) are left out, not clamped.
fn plot_points(axes: &Axes<'_>, points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let t = |v: f64, log: bool| {
        if log {
            if v > 0.0 {
                v.log10()
            } else {
                f64::NAN
            }
        } else {
            v
        }
    };
    points
        .iter()
        .map(|&(x, y)| (t(x, axes.log_x), t(y, axes.log_y)))
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .collect()
}

/// The plotted ranges with a little padding (y from 0 on linear axes of non-negative data).
fn ranges(axes: &Axes<'_>, pts: &[(f64, f64)]) -> (std::ops::Range<f64>, std::ops::Range<f64>) {
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
    y0 = if !axes.log_y && y0 >= 0.0 { 0.0_f64.max(y0 - ypad) } else { y0 - ypad };
    ((x0 - xpad)..(x1 + xpad), y0..(y1 + ypad))
}

/// A tick label: on log axes only at 1, 2 and 5 times a power of ten (ticks in between stay
/// unlabelled), showing that exact value; real values either way.
fn tick_label(v: f64, log: bool) -> String {
    let r = if log {
        let e = v.floor();
        let mantissa = 10f64.powf(v - e);
        match [1.0, 2.0, 5.0, 10.0].iter().find(|&&m| (mantissa - m).abs() < 0.03 * m) {
            Some(m) => m * 10f64.powf(e),
            None => return String::new(),
        }
    } else {
        v
    };
    if r.abs() >= 100_000.0 || (r != 0.0 && r.abs() < 0.001) {
        format!("{r:.0e}")
    } else if (r - r.round()).abs() < 1e-9 {
        format!("{:.0}", r.round())
    } else {
        let s = format!("{r:.3}");
        s.trim_end_matches('0').to_string()
    }
}

/// Distinguishable colours (dark enough on white), cycled.
const COLORS: [RGBColor; 12] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
    RGBColor(188, 189, 34),
    RGBColor(0, 0, 128),
    RGBColor(127, 127, 127),
    RGBColor(0, 100, 0),
];

fn series_style(s: &Series, measured_index: usize) -> ShapeStyle {
    let color = COLORS[s.color.unwrap_or(measured_index) % COLORS.len()];
    // Past the first dozen series, lines repeat a colour, thinner, so they stay apart.
    let width = if s.color.unwrap_or(measured_index) < COLORS.len() { 2 } else { 1 };
    match s.look {
        Look::Measured | Look::Model => color.stroke_width(width),
        Look::Reference => ShapeStyle::from(&BLACK.mix(0.55)).stroke_width(1),
    }
}

/// The legend, drawn in its own panel: a line sample (dashed for models) and the name per series.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    styles: &[(String, ShapeStyle, Look)],
) -> Result<(), String> {
    let font = ("sans-serif", 14).into_font();
    for (i, (name, style, look)) in styles.iter().enumerate() {
        let y = 60 + 22 * i as i32;
        if *look == Look::Model {
            for k in 0..3 {
                area.draw(&PathElement::new(vec![(8 + 9 * k, y), (13 + 9 * k, y)], *style))
                    .map_err(|e| e.to_string())?;
            }
        } else {
            area.draw(&PathElement::new(vec![(8, y), (34, y)], *style)).map_err(|e| e.to_string())?;
        }
        area.draw(&Text::new(name.clone(), (42, y - 8), font.clone())).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// 1, 2 and 5 times the powers of ten inside `range` (a log10 range), as log10 values.
fn log_grid_values(range: &std::ops::Range<f64>) -> Vec<f64> {
    let mut out = Vec::new();
    for e in (range.start.floor() as i32)..=(range.end.ceil() as i32) {
        for m in [1.0f64, 2.0, 5.0] {
            let v = f64::from(e) + m.log10();
            if range.contains(&v) {
                out.push(v);
            }
        }
    }
    out
}

type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Light grid lines at the labelled values of log axes (bolder at powers of ten).
fn log_grid(
    chart: &mut Chart<'_, '_>,
    axes: &Axes<'_>,
    (xr, yr): (&std::ops::Range<f64>, &std::ops::Range<f64>),
) -> Result<(), String> {
    let style = |v: f64| {
        let decade = (v - v.round()).abs() < 1e-9;
        ShapeStyle::from(&BLACK.mix(if decade { 0.25 } else { 0.1 })).stroke_width(1)
    };
    if axes.log_y {
        for v in log_grid_values(yr) {
            chart.draw_series(LineSeries::new([(xr.start, v), (xr.end, v)], style(v))).map_err(|e| e.to_string())?;
        }
    }
    if axes.log_x {
        for v in log_grid_values(xr) {
            chart.draw_series(LineSeries::new([(v, yr.start), (v, yr.end)], style(v))).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// An SVG line chart with the legend in a panel to the right of the plot. Log axes plot log10
/// of the values and label ticks with the real values. Model series are dashed.
pub fn line_chart(path: &Path, title: &str, axes: &Axes<'_>, series: &[Series]) -> Result<(), String> {
    let all: Vec<(f64, f64)> = series.iter().flat_map(|s| plot_points(axes, &s.points)).collect();
    if all.is_empty() {
        return Err(format!("{}: no data", path.display()));
    }
    let (xr, yr) = ranges(axes, &all);
    let root = SVGBackend::new(path, (CHART_W, CHART_H)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let (plot_area, legend_area) = root.split_horizontally(CHART_W - LEGEND_W);
    let mut chart = ChartBuilder::on(&plot_area)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(xr.clone(), yr.clone())
        .map_err(|e| e.to_string())?;
    let xfmt = |v: &f64| match axes.categories {
        Some(c) => {
            let i = v.round();
            let on_tick = (v - i).abs() < 1e-6 && i >= 0.0;
            if on_tick {
                c.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        }
        None => tick_label(*v, axes.log_x),
    };
    let yfmt = |v: &f64| tick_label(*v, axes.log_y);
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(axes.x).y_desc(axes.y).x_label_formatter(&xfmt).y_label_formatter(&yfmt);
    // Log axes: many candidate ticks so 1-2-5 values get one, no tick marks or plotters grid
    // there (unlabelled ticks would be noise); `log_grid` draws lines at the labelled values.
    mesh.x_labels(axes.categories.map_or(if axes.log_x { 60 } else { 10 }, |c| c.len() * 2 + 1));
    mesh.y_labels(if axes.log_y { 60 } else { 10 });
    if axes.categories.is_some() {
        // Light lines between categories would suggest values between them.
        mesh.max_light_lines(0);
    }
    if axes.log_x {
        mesh.disable_x_mesh().set_tick_mark_size(LabelAreaPosition::Bottom, 0);
    }
    if axes.log_y {
        mesh.disable_y_mesh().set_tick_mark_size(LabelAreaPosition::Left, 0);
    }
    mesh.draw().map_err(|e| e.to_string())?;
    log_grid(&mut chart, axes, (&xr, &yr))?;
    let mut legend = Vec::new();
    let mut measured = 0;
    for s in series {
        let style = series_style(s, measured);
        let data = plot_points(axes, &s.points);
        match s.look {
            Look::Model => chart.draw_series(DashedLineSeries::new(data.clone(), 8, 5, style)).map(|_| ()),
            _ => chart.draw_series(LineSeries::new(data.clone(), style)).map(|_| ()),
        }
        .map_err(|e| e.to_string())?;
        if s.look == Look::Measured && data.len() <= 100 {
            chart
                .draw_series(data.iter().map(|&p| Circle::new(p, 3, style.color.filled())))
                .map_err(|e| e.to_string())?;
        }
        if s.look == Look::Measured {
            measured += 1;
        }
        legend.push((s.name.clone(), style, s.look));
    }
    draw_legend(&legend_area, &legend)?;
    root.present().map_err(|e| e.to_string())
}

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

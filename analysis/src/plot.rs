//! SVG charts of the analysis' results (feature `plot`): the one plotting code that the
//! benchmark report and the `hashroute` CLI (`resize --plot`, `recommend --plot`) both call, so
//! a figure in the report and the user's own figure are drawn alike.
//!
//! Two generic charts over plain data, [`line_chart`] (lines, optionally log axes, a legend
//! panel beside the plot) and [`scatter_chart`] (labelled points), and two figures built on
//! them: [`resize_hit_rate`] (each strategy's hit rate over requests, from a
//! [`ResizeReport`]) and [`recommend_tradeoff`] (every measured candidate's balance against its
//! memory, from a [`Recommendation`]).
//!
//! Cost: linear in the points drawn; files are a few hundred KiB at most (lines are thinned to
//! [`MAX_POINTS`] points). Uses plotters' SVG backend only: no fonts are rasterised, no system
//! library is needed. Not for interactive or raster output.

use std::ops::Range;
use std::path::Path;

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::{Recommendation, ResizeReport};

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
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// `(x, y)` in data units (not log10: log axes transform them).
    pub points: Vec<(f64, f64)>,
    /// How it is drawn.
    pub look: Look,
    /// Palette index; by default the series' position among the measured series.
    pub color: Option<usize>,
}

impl Series {
    /// A measured series (solid, coloured, with markers up to 100 points).
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series { name: name.into(), points, look: Look::Measured, color: None }
    }

    /// A thin grey reference line.
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

/// Axis options for [`line_chart`] and [`scatter_chart`].
#[derive(Clone, Copy, Debug)]
pub struct Axes<'a> {
    /// X axis description, with its unit.
    pub x: &'a str,
    /// Y axis description, with its unit.
    pub y: &'a str,
    /// Plot log10 of x, label ticks with real values.
    pub log_x: bool,
    /// Plot log10 of y, label ticks with real values.
    pub log_y: bool,
    /// Category labels for x = 0, 1, 2, … (instead of numbers).
    pub categories: Option<&'a [String]>,
}

impl<'a> Axes<'a> {
    /// Linear axes described by `x` and `y`.
    pub fn linear(x: &'a str, y: &'a str) -> Axes<'a> {
        Axes { x, y, log_x: false, log_y: false, categories: None }
    }
}

/// One labelled point of a [`scatter_chart`] group.
#[derive(Clone, Debug, PartialEq)]
pub struct Labelled {
    /// Text drawn beside the point.
    pub label: String,
    /// X in data units.
    pub x: f64,
    /// Y in data units.
    pub y: f64,
}

/// Points drawn alike in a [`scatter_chart`], with one legend entry.
#[derive(Clone, Debug, PartialEq)]
pub struct PointGroup {
    /// Legend text.
    pub name: String,
    /// Its points.
    pub points: Vec<Labelled>,
    /// Palette index.
    pub color: usize,
}

/// Most points per line a figure of this module draws: enough for a dip of a few windows to
/// show, few enough for a light SVG.
pub const MAX_POINTS: usize = 400;

/// Chart size, and the width of the legend panel right of the plot (legends never cover data).
const CHART_W: u32 = 1120;
const CHART_H: u32 = 600;
const LEGEND_W: u32 = 260;

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

type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;
type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// A point in plot coordinates (log10 on log axes); `None` where a log axis cannot show it
/// (zero or negative): left out, not clamped.
fn plot_point(axes: &Axes<'_>, (x, y): (f64, f64)) -> Option<(f64, f64)> {
    let t = |v: f64, log: bool| {
        if !log {
            v
        } else if v > 0.0 {
            v.log10()
        } else {
            f64::NAN
        }
    };
    let p = (t(x, axes.log_x), t(y, axes.log_y));
    (p.0.is_finite() && p.1.is_finite()).then_some(p)
}

fn plot_points(axes: &Axes<'_>, points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    points.iter().filter_map(|&p| plot_point(axes, p)).collect()
}

/// The plotted ranges with a little padding (y from 0 on linear axes of non-negative data).
fn ranges(axes: &Axes<'_>, pts: &[(f64, f64)]) -> (Range<f64>, Range<f64>) {
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

fn palette(i: usize) -> RGBColor {
    COLORS[i % COLORS.len()]
}

fn series_style(s: &Series, measured_index: usize) -> ShapeStyle {
    let color = palette(s.color.unwrap_or(measured_index));
    // Past the first dozen series, lines repeat a colour, thinner, so they stay apart.
    let width = if s.color.unwrap_or(measured_index) < COLORS.len() { 2 } else { 1 };
    match s.look {
        Look::Measured | Look::Model => color.stroke_width(width),
        Look::Reference => ShapeStyle::from(&BLACK.mix(0.55)).stroke_width(1),
    }
}

/// One legend entry: a line sample, dashed for models, a dot for point groups.
enum Swatch {
    Line(ShapeStyle, Look),
    Dot(ShapeStyle),
}

/// The legend, drawn in its own panel: a sample and the name per entry.
fn draw_legend(area: &Area<'_>, entries: &[(String, Swatch)]) -> Result<(), String> {
    let font = ("sans-serif", 14).into_font();
    for (i, (name, swatch)) in entries.iter().enumerate() {
        let y = 60 + 22 * i as i32;
        match swatch {
            Swatch::Line(style, Look::Model) => {
                for k in 0..3 {
                    area.draw(&PathElement::new(vec![(8 + 9 * k, y), (13 + 9 * k, y)], *style)).map_err(err)?;
                }
            }
            Swatch::Line(style, _) => area.draw(&PathElement::new(vec![(8, y), (34, y)], *style)).map_err(err)?,
            Swatch::Dot(style) => area.draw(&Circle::new((21, y), 4, style.color.filled())).map_err(err)?,
        }
        area.draw(&Text::new(name.clone(), (42, y - 8), font.clone())).map_err(err)?;
    }
    Ok(())
}

/// 1, 2 and 5 times the powers of ten inside `range` (a log10 range), as log10 values.
fn log_grid_values(range: &Range<f64>) -> Vec<f64> {
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

/// Light grid lines at the labelled values of log axes (bolder at powers of ten).
fn log_grid(chart: &mut Chart<'_, '_>, axes: &Axes<'_>, (xr, yr): (&Range<f64>, &Range<f64>)) -> Result<(), String> {
    let style = |v: f64| {
        let decade = (v - v.round()).abs() < 1e-9;
        ShapeStyle::from(&BLACK.mix(if decade { 0.25 } else { 0.1 })).stroke_width(1)
    };
    if axes.log_y {
        for v in log_grid_values(yr) {
            chart.draw_series(LineSeries::new([(xr.start, v), (xr.end, v)], style(v))).map_err(err)?;
        }
    }
    if axes.log_x {
        for v in log_grid_values(xr) {
            chart.draw_series(LineSeries::new([(v, yr.start), (v, yr.end)], style(v))).map_err(err)?;
        }
    }
    Ok(())
}

/// The chart's frame on `plot_area`: caption, ranges, mesh with real-valued tick labels, log
/// grid lines.
fn frame<'a, 'b>(
    plot_area: &'a Area<'b>,
    title: &str,
    axes: &Axes<'_>,
    (xr, yr): (Range<f64>, Range<f64>),
) -> Result<Chart<'a, 'b>, String> {
    let mut chart = ChartBuilder::on(plot_area)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(xr.clone(), yr.clone())
        .map_err(err)?;
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
    mesh.draw().map_err(err)?;
    log_grid(&mut chart, axes, (&xr, &yr))?;
    Ok(chart)
}

/// Draws `series` as lines on `chart`; returns their legend entries.
fn draw_lines(chart: &mut Chart<'_, '_>, axes: &Axes<'_>, series: &[Series]) -> Result<Vec<(String, Swatch)>, String> {
    let mut legend = Vec::new();
    let mut measured = 0;
    for s in series {
        let style = series_style(s, measured);
        let data = plot_points(axes, &s.points);
        match s.look {
            Look::Model => chart.draw_series(DashedLineSeries::new(data.clone(), 8, 5, style)).map(|_| ()),
            _ => chart.draw_series(LineSeries::new(data.clone(), style)).map(|_| ()),
        }
        .map_err(err)?;
        if s.look == Look::Measured && data.len() <= 100 {
            chart.draw_series(data.iter().map(|&p| Circle::new(p, 3, style.color.filled()))).map_err(err)?;
        }
        if s.look == Look::Measured {
            measured += 1;
        }
        legend.push((s.name.clone(), Swatch::Line(style, s.look)));
    }
    Ok(legend)
}

/// An SVG line chart at `path` with the legend in a panel to the right of the plot. Log axes
/// plot log10 of the values and label ticks with the real values. Model series are dashed.
///
/// # Errors
/// No plottable point (`"PATH: no data"`), or the file cannot be written; as text.
pub fn line_chart(path: &Path, title: &str, axes: &Axes<'_>, series: &[Series]) -> Result<(), String> {
    let all: Vec<(f64, f64)> = series.iter().flat_map(|s| plot_points(axes, &s.points)).collect();
    if all.is_empty() {
        return Err(format!("{}: no data", path.display()));
    }
    let root = SVGBackend::new(path, (CHART_W, CHART_H)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let (plot_area, legend_area) = root.split_horizontally(CHART_W - LEGEND_W);
    let mut chart = frame(&plot_area, title, axes, ranges(axes, &all))?;
    let legend = draw_lines(&mut chart, axes, series)?;
    draw_legend(&legend_area, &legend)?;
    root.present().map_err(err)
}

/// An SVG scatter chart at `path`: each group's points as dots with their labels beside them,
/// and `lines` (targets, references) under them; the legend in a panel to the right.
///
/// # Errors
/// No plottable point, or the file cannot be written; as text.
pub fn scatter_chart(
    path: &Path,
    title: &str,
    axes: &Axes<'_>,
    groups: &[PointGroup],
    lines: &[Series],
) -> Result<(), String> {
    let dots: Vec<(f64, f64)> =
        groups.iter().flat_map(|g| g.points.iter().filter_map(|p| plot_point(axes, (p.x, p.y)))).collect();
    if dots.is_empty() {
        return Err(format!("{}: no data", path.display()));
    }
    let lined: Vec<(f64, f64)> = lines.iter().flat_map(|s| plot_points(axes, &s.points)).collect();
    let root = SVGBackend::new(path, (CHART_W, CHART_H)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let (plot_area, legend_area) = root.split_horizontally(CHART_W - LEGEND_W);
    let (xr, mut yr) = ranges(axes, &dots);
    // Lines widen only the y range: they span the x range they are drawn over.
    for &(_, y) in &lined {
        yr = yr.start.min(y)..yr.end.max(y + (yr.end - yr.start) * 0.02);
    }
    let mut chart = frame(&plot_area, title, axes, (xr, yr))?;
    let mut legend = draw_lines(&mut chart, axes, lines)?;
    let font = ("sans-serif", 12).into_font();
    let mut placed = Vec::new();
    for g in groups {
        let color = palette(g.color);
        let pts: Vec<((f64, f64), &str)> =
            g.points.iter().filter_map(|p| plot_point(axes, (p.x, p.y)).map(|q| (q, p.label.as_str()))).collect();
        chart.draw_series(pts.iter().map(|&(p, _)| Circle::new(p, 4, color.filled()))).map_err(err)?;
        let labels: Vec<_> = pts
            .iter()
            .map(|&(p, label)| {
                let dy = label_offset(chart.backend_coord(&p), label, &mut placed);
                EmptyElement::at(p) + Text::new(label.to_owned(), (6, dy), font.clone().color(&color))
            })
            .collect();
        chart.draw_series(labels).map_err(err)?;
        legend.push((g.name.clone(), Swatch::Dot(color.into())));
    }
    draw_legend(&legend_area, &legend)?;
    root.present().map_err(err)
}

/// A label box in pixels: left, top, right, bottom.
type LabelBox = (i32, i32, i32, i32);

/// The vertical offset (pixels) of a point's label at pixel `at`: above right of the point,
/// else the nearest free place below or above, so labels of nearby points do not overlap
/// (approximate: 7 pixels per character of the 12-pixel font). Records the box it takes.
fn label_offset(at: (i32, i32), label: &str, placed: &mut Vec<LabelBox>) -> i32 {
    let width = 7 * label.chars().count() as i32;
    let boxed = |dy: i32| (at.0 + 6, at.1 + dy, at.0 + 6 + width, at.1 + dy + 13);
    let free = |b: LabelBox| placed.iter().all(|p| b.2 <= p.0 || p.2 <= b.0 || b.3 <= p.1 || p.3 <= b.1);
    let dy = [-14, 2, -28, 16, -42, 30, -56, 44].into_iter().find(|&dy| free(boxed(dy))).unwrap_or(-14);
    placed.push(boxed(dy));
    dy
}

/// `(requests, hit rate %)` with at most [`MAX_POINTS`] points: consecutive windows averaged
/// (they have nearly equal lengths), each point at the end of its group.
pub fn thin(timeline: &[(usize, f64)]) -> Vec<(f64, f64)> {
    let group = timeline.len().div_ceil(MAX_POINTS).max(1);
    timeline
        .chunks(group)
        .map(|c| {
            let end = c.last().map_or(0, |p| p.0) as f64;
            (end, 100.0 * c.iter().map(|p| p.1).sum::<f64>() / c.len() as f64)
        })
        .collect()
}

/// Draws the resize figure at `path`: hit rate per window against requests since each
/// strategy's first step, one line per strategy, and the steady rate before the resize.
/// Returns the title.
///
/// # Errors
/// [`line_chart`]'s, as text.
pub fn resize_hit_rate(path: &Path, report: &ResizeReport) -> Result<String, String> {
    let mut series: Vec<Series> =
        report.runs.iter().map(|r| Series::new(r.strategy.name(), thin(&r.timeline))).collect();
    let end = report.runs.iter().map(|r| r.requests()).max().unwrap_or(0) as f64;
    let steady = 100.0 * report.steady_before;
    series.push(Series::reference(format!("steady before, {steady:.1}%"), vec![(0.0, steady), (end, steady)]));
    let y = format!("hit rate per window of {} requests, %", report.workload.window);
    let axes = Axes::linear("requests since the strategy's first step", &y);
    let verb = if report.nodes_after >= report.nodes_before { "growing" } else { "shrinking" };
    let title = format!(
        "Cache hit rate while {verb} {} -> {} nodes ({}, LRU per node, Zipf s={})",
        report.nodes_before, report.nodes_after, report.router, report.workload.zipf_s
    );
    line_chart(path, &title, &axes, &series)?;
    Ok(title)
}

/// Draws the recommendation's trade-off at `path`: every measured candidate's busiest-node load
/// over the mean against its memory (log), eligible ones (at some target), the answers and the
/// rejected ones in three colours, and each balance target as a line. A ring appears once per
/// target (its V differs). Returns the title.
///
/// # Errors
/// No candidate was measured, or [`scatter_chart`]'s; as text.
pub fn recommend_tradeoff(path: &Path, rec: &Recommendation) -> Result<String, String> {
    let answers: Vec<&str> = rec.answers.iter().filter_map(|a| a.answer.as_deref()).collect();
    let mut groups = [
        PointGroup { name: "answer (at some target)".into(), points: Vec::new(), color: 2 },
        PointGroup { name: "eligible (at some target)".into(), points: Vec::new(), color: 0 },
        PointGroup { name: "rejected at every target".into(), points: Vec::new(), color: 1 },
    ];
    for v in rec.candidates() {
        let (Some(memory), true) = (v.memory_bytes, v.max_over_mean.is_finite()) else { continue };
        let eligible = rec.eligible_at(&v.candidate).next().is_some();
        let group = if answers.contains(&v.candidate.as_str()) {
            0
        } else if eligible {
            1
        } else {
            2
        };
        groups[group].points.push(Labelled { label: v.candidate.clone(), x: memory as f64, y: v.max_over_mean });
    }
    let xs: Vec<f64> = groups.iter().flat_map(|g| g.points.iter().map(|p| p.x)).collect();
    let (lo, hi) = xs.iter().fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let lines: Vec<Series> = rec
        .answers
        .iter()
        .map(|a| Series::reference(format!("target {:.2}", a.max_load), vec![(lo, a.max_load), (hi, a.max_load)]))
        .collect();
    let axes = Axes {
        x: "router memory, bytes (log)",
        y: "busiest node's load over the mean",
        log_x: true,
        log_y: false,
        categories: None,
    };
    let title = format!("Balance against memory: {}", rec.cluster);
    scatter_chart(path, &title, &axes, &groups, &lines)?;
    Ok(title)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_ticks_label_only_one_two_five() {
        assert_eq!(tick_label(2.0, true), "100");
        assert_eq!(tick_label(2.0f64.log10(), true), "2");
        assert_eq!(tick_label(3.0f64.log10(), true), "");
        assert_eq!(tick_label(0.25, false), "0.25");
    }

    #[test]
    fn thinning_keeps_the_end_and_the_mean() {
        let timeline: Vec<(usize, f64)> = (1..=800).map(|i| (i * 10, if i % 2 == 0 { 0.5 } else { 1.0 })).collect();
        let thinned = thin(&timeline);
        assert!(thinned.len() <= MAX_POINTS, "{}", thinned.len());
        assert_eq!(thinned.last().unwrap().0, 8_000.0);
        assert!(thinned.iter().all(|p| (p.1 - 75.0).abs() < 1e-9), "{thinned:?}");
    }

    #[test]
    fn a_chart_without_data_is_an_error_and_writes_nothing() {
        let path = std::env::temp_dir().join(format!("hashroute-plot-empty-{}.svg", std::process::id()));
        let axes = Axes { log_y: true, ..Axes::linear("x", "y") };
        let e = line_chart(&path, "t", &axes, &[Series::new("s", vec![(1.0, 0.0)])]).unwrap_err();
        assert!(e.contains("no data"), "{e}");
        assert!(!path.exists());
    }

    #[test]
    fn line_and_scatter_charts_are_svg() {
        let dir = std::env::temp_dir();
        let line = dir.join(format!("hashroute-plot-line-{}.svg", std::process::id()));
        let series = [Series::new("a", vec![(1.0, 2.0), (2.0, 3.0)]), Series::reference("r", vec![(1.0, 1.0)])];
        line_chart(&line, "title", &Axes::linear("x", "y"), &series).unwrap();
        let scatter = dir.join(format!("hashroute-plot-scatter-{}.svg", std::process::id()));
        let group =
            PointGroup { name: "g".into(), points: vec![Labelled { label: "p".into(), x: 10.0, y: 1.1 }], color: 0 };
        let axes = Axes { log_x: true, ..Axes::linear("x", "y") };
        scatter_chart(&scatter, "title", &axes, &[group], &[]).unwrap();
        for path in [line, scatter] {
            let svg = std::fs::read_to_string(&path).unwrap();
            assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"), "{}", &svg[..80.min(svg.len())]);
            assert!(svg.contains("title"));
            std::fs::remove_file(path).unwrap();
        }
    }
}

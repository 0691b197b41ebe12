//! The report: a text table per strategy and one summary line each (the CLI prints it), and a
//! markdown section for the benchmark report.

use std::fmt::{self, Write as _};

use super::{ResizeReport, ResizeStep, StrategyRun, RECOVERY_MARGIN, RECOVERY_WINDOWS};

/// `91.7%`.
fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// `49.8% (ideal 50.0%)`, or `-` for a step that moves nothing.
fn moved(step: &ResizeStep) -> String {
    match step.movement {
        Some(m) => format!("{} (ideal {})", pct(m.moved), pct(m.ideal)),
        None => "-".to_owned(),
    }
}

/// Requests before recovery, `> N` when the step never recovered.
fn recovery(step: &ResizeStep) -> String {
    match step.recovery {
        Some(r) => r.to_string(),
        None => format!("> {}", step.requests),
    }
}

impl StrategyRun {
    /// The run's summary line: its name first, then its lowest hit rate (the line's only
    /// percentage) and the requests it spent below the recovery line.
    pub fn summary_line(&self) -> String {
        let steps = self.steps.len();
        let plural = if steps == 1 { "" } else { "s" };
        let recovery = match (self.recovery(), self.longest_recovery()) {
            (Some(0), _) => "recovers at once".to_owned(),
            (Some(total), Some(longest)) if steps > 1 => {
                format!("recovers in {longest} requests at most per step, {total} in all")
            }
            (Some(total), _) => format!("recovers in {total} requests"),
            _ => "does not recover within a step".to_owned(),
        };
        format!(
            "{:<14} lowest hit rate {}, {recovery} ({steps} step{plural}, {} requests)",
            self.strategy.name(),
            pct(self.lowest()),
            self.requests()
        )
    }

    fn rows(&self) -> Vec<[String; COLUMNS]> {
        let row = |(i, s): (usize, &ResizeStep)| {
            let cells = [moved(s), pct(s.hit_rate), pct(s.lowest), pct(s.settled), recovery(s)];
            let [a, b, c, d, e] = cells;
            [(i + 1).to_string(), s.change.clone(), a, b, c, d, e]
        };
        self.steps.iter().enumerate().map(row).collect()
    }
}

const COLUMNS: usize = 7;
const HEADER: [&str; COLUMNS] =
    ["step", "change", "keys moved", "hit rate", "lowest", "settled", "recovery (requests)"];

impl ResizeReport {
    /// The setting in two lines.
    fn preamble(&self) -> String {
        let w = &self.workload;
        format!(
            "resize {} -> {} nodes ({}): zipf:{} over {} keys, each weight-1 node caches {} keys ({} of the keys \
             across the {} nodes before), {} requests per step, hit rates over windows of {} requests\n\
             steady hit rate before: {}; recovery: requests until {} windows in a row are back within {:.0} point \
             of the level before the step (of the level it settles at, if the step shrinks the cache)\n",
            self.nodes_before,
            self.nodes_after,
            self.router,
            w.zipf_s,
            w.keys,
            self.capacity_per_unit_weight,
            pct(w.cache_fraction),
            self.nodes_before,
            w.requests_per_step,
            w.window,
            pct(self.steady_before),
            RECOVERY_WINDOWS,
            100.0 * RECOVERY_MARGIN,
        )
    }

    /// The summary lines, one per strategy.
    pub fn summary(&self) -> String {
        self.runs.iter().map(|r| r.summary_line() + "\n").collect()
    }
}

/// Text table with columns padded to their widest cell.
fn text_table(rows: &[[String; COLUMNS]]) -> String {
    let mut widths = HEADER.map(|h| h.chars().count());
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells.iter().zip(widths).map(|(c, w)| format!("{c:<w$}")).collect();
        padded.join("  ").trim_end().to_owned() + "\n"
    };
    let mut out = line(HEADER.to_vec());
    for row in rows {
        out += &line(row.iter().map(String::as_str).collect());
    }
    out
}

/// The setting, then per strategy its table, then one summary line per strategy.
impl fmt::Display for ResizeReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.preamble())?;
        for run in &self.runs {
            writeln!(f, "[{}] {}", run.strategy.name(), run.strategy.description())?;
            writeln!(f, "{}", text_table(&run.rows()))?;
        }
        write!(f, "{}", self.summary())
    }
}

/// A markdown section for the benchmark report: the setting, one table row per strategy
/// (lowest hit rate, recovery, steps, requests) and each strategy's steps.
pub fn resize_section(report: &ResizeReport) -> String {
    let mut r = format!("## Resizing a cache cluster: {} -> {} nodes\n\n", report.nodes_before, report.nodes_after);
    let _ = writeln!(r, "{}", report.preamble().trim_end().replace('\n', "\n\n"));
    r += "| strategy | what it does | lowest hit rate | requests to recover (all steps) | steps | requests |\n";
    r += "|---|---|---:|---:|---:|---:|\n";
    for run in &report.runs {
        let below = run.recovery().map_or_else(|| "does not recover".to_owned(), |n| n.to_string());
        let _ = writeln!(
            r,
            "| {} | {} | {} | {below} | {} | {} |",
            run.strategy.name(),
            run.strategy.description(),
            pct(run.lowest()),
            run.steps.len(),
            run.requests()
        );
    }
    for run in &report.runs {
        let _ = write!(r, "\n**{}**\n\n| {} |\n|{}\n", run.strategy.name(), HEADER.join(" | "), "---|".repeat(COLUMNS));
        for row in run.rows() {
            let _ = writeln!(r, "| {} |", row.join(" | "));
        }
    }
    r
}

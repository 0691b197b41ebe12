//! The presenting step of a recommendation: the text `hashroute recommend` prints and
//! `cargo bench` ends with. Reads the decided [`Recommendation`]; computes nothing.

use std::fmt;

use crate::{Recommendation, TargetAnswer, Verdict};

impl fmt::Display for Recommendation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "recommendation for {} ({})", self.cluster, self.constraints)?;
        for a in &self.answers {
            a.fmt_into(f)?;
        }
        writeln!(
            f,
            "\n(moved+1 / moved-1: keys moved by adding / removing one node, as a multiple of the ideal 1/N; \
             1.00 is the minimum)"
        )
    }
}

impl TargetAnswer {
    fn fmt_into(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "\ntarget: busiest node <= {:.2} x the mean", self.max_load)?;
        let r = &self.ring;
        writeln!(
            f,
            "  ring: V = {} (closed form aimed at {}); {}",
            r.vnodes.unwrap_or(0),
            self.closed_form_vnodes,
            r.evidence
        )?;
        for g in &self.grow {
            writeln!(
                f,
                "        after {} node(s) ({}): max/mean median {:.3}, worst {:.3} over {} random additions",
                g.label, g.added, g.median_max_over_mean, g.worst_max_over_mean, g.trials
            )?;
        }
        if let Some(t) = &self.token_ring {
            writeln!(f, "  token ring: {}", t.evidence)?;
        }
        match &self.answer {
            Some(c) => writeln!(f, "  answer: {c} — {} among the eligible", self.rule)?,
            None => writeln!(f, "  answer: none meets the target and every constraint")?,
        }
        writeln!(
            f,
            "  {:<24} {:>9} {:>10} {:>10} {:>8} {:>8}  verdict",
            "candidate", "max/mean", "memory", "lookup", "moved+1", "moved-1"
        )?;
        for v in self.verdicts() {
            writeln!(f, "  {}", row(v))?;
        }
        Ok(())
    }
}

impl TargetAnswer {
    /// The eligible candidates as a table (`cargo bench`'s closing table): max/mean, memory,
    /// lookup, moved+1, moved-1. A sampled router whose shares are exact in expectation can be
    /// eligible with a measured max/mean above the target (its spread is the sample's, see
    /// [`Verdict::meets`]); its figure is marked `*` and a footnote says why.
    pub fn eligible_table(&self) -> String {
        let mut s = format!(
            "  {:<20} {:>9} {:>10} {:>10} {:>8} {:>8}\n",
            "eligible", "max/mean", "memory", "lookup", "moved+1", "moved-1"
        );
        let mut noisy = false;
        for v in self.verdicts().filter(|v| v.rejected.is_none()) {
            let mark = if v.max_over_mean > self.max_load { "*" } else { " " };
            noisy |= mark == "*";
            s += &format!(
                "  {:<20} {:>8.3}{mark} {:>10} {:>10} {:>8} {:>8}\n",
                v.candidate,
                v.max_over_mean,
                bytes(v.memory_bytes),
                ns(v.lookup_ns),
                ratio(v.moved_plus),
                ratio(v.moved_minus)
            );
        }
        if noisy {
            s += "  * sampled keys: a spread within the sampling noise of a perfect router, whose shares are exact in \
                  expectation\n";
        }
        s
    }
}

/// One verdict as a table row.
fn row(v: &Verdict) -> String {
    let verdict = match &v.rejected {
        None => "eligible".to_string(),
        Some(why) => format!("rejected: {why}"),
    };
    format!(
        "{:<24} {:>9} {:>10} {:>10} {:>8} {:>8}  {verdict} [{}; movement {}]",
        v.candidate,
        if v.max_over_mean.is_finite() { format!("{:.3}", v.max_over_mean) } else { "-".into() },
        bytes(v.memory_bytes),
        ns(v.lookup_ns),
        ratio(v.moved_plus),
        ratio(v.moved_minus),
        v.evidence,
        if v.movement.is_empty() { "not measured" } else { &v.movement }
    )
}

/// Bytes in B, KiB or MiB.
pub(crate) fn bytes(b: Option<usize>) -> String {
    match b {
        None => "-".into(),
        Some(b) if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1 << 20) as f64),
        Some(b) if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        Some(b) => format!("{b} B"),
    }
}

/// Nanoseconds with one decimal, `-` when not measured.
pub(crate) fn ns(ns: Option<f64>) -> String {
    ns.map_or("-".into(), |ns| format!("{ns:.1} ns"))
}

/// A movement ratio with two decimals, `-` when not measured.
pub(crate) fn ratio(r: Option<f64>) -> String {
    r.filter(|r| r.is_finite()).map_or("-".into(), |r| format!("{r:.2}"))
}

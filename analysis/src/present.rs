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

/// The short view of a recommendation, answer first: what `hashroute recommend` prints by
/// default (`--all` prints the full [`Display`](fmt::Display)). From [`Recommendation::summary`].
#[derive(Clone, Copy, Debug)]
pub struct Summary<'a>(&'a Recommendation);

impl Recommendation {
    /// The short view, answer first: one line per target naming the answer and why, the eligible
    /// candidates (once each, with the targets they are eligible at) and the rejected ones in
    /// one line per reason. Fits in about 40 lines for the default four targets; the full
    /// `Display` lists every candidate at every target with its evidence.
    pub fn summary(&self) -> Summary<'_> {
        Summary(self)
    }

    /// Every candidate once, by name, with its first verdict: each target's ring and token ring
    /// (their V differs by target), then the other algorithms in the registry's order. Figures
    /// other than the verdict are the same at every target.
    pub fn candidates(&self) -> Vec<&Verdict> {
        let mut out: Vec<&Verdict> = Vec::new();
        let sized = self.answers.iter().flat_map(|a| std::iter::once(&a.ring).chain(&a.token_ring));
        let others = self.answers.iter().flat_map(|a| &a.others);
        for v in sized.chain(others) {
            if !out.iter().any(|o| o.candidate == v.candidate) {
                out.push(v);
            }
        }
        out
    }

    /// The targets (`max_load`) at which `candidate` is eligible, in the order given.
    pub fn eligible_at<'a>(&'a self, candidate: &'a str) -> impl Iterator<Item = f64> + 'a {
        self.answers
            .iter()
            .filter(move |a| a.verdicts().any(|v| v.candidate == candidate && v.rejected.is_none()))
            .map(|a| a.max_load)
    }

    /// The rejections grouped by reason, in order of first appearance: the reason with each
    /// candidate's own figure taken out (`max/mean > 1.05`, `lacks remove-any`), and the
    /// candidates it rejects, each with that figure when there is one (`ketama 1.310`).
    pub fn rejections(&self) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for v in self.answers.iter().flat_map(TargetAnswer::verdicts) {
            let Some(why) = &v.rejected else { continue };
            let (reason, figure) = split_reason(why);
            let entry = match figure {
                Some(fig) => format!("{} {fig}", v.candidate),
                None => v.candidate.clone(),
            };
            match out.iter_mut().find(|(r, _)| *r == reason) {
                Some((_, list)) if !list.contains(&entry) => list.push(entry),
                Some(_) => {}
                None => out.push((reason, vec![entry])),
            }
        }
        out
    }
}

/// `max/mean 1.310 > 1.05` → (`max/mean > 1.05`, `1.310`); `memory 1.2 MiB > 64.0 MiB` →
/// (`memory > 64.0 MiB`, `1.2 MiB`); a note after `; ` joins the figure in parentheses; any
/// other reason is kept whole.
fn split_reason(why: &str) -> (String, Option<String>) {
    let (main, note) = match why.split_once("; ") {
        Some((m, n)) => (m, Some(n)),
        None => (why, None),
    };
    let Some((left, limit)) = main.split_once(" > ") else { return (why.to_owned(), None) };
    let Some((what, figure)) = left.split_once(' ') else { return (why.to_owned(), None) };
    let figure = match note {
        Some(n) => format!("{figure} ({n})"),
        None => figure.to_owned(),
    };
    (format!("{what} > {limit}"), Some(figure))
}

impl Verdict {
    /// The larger of the keys moved by one addition and by one removal, as a multiple of the
    /// ideal: what the answer line quotes and `--prefer movement` minimises.
    pub fn moved_max(&self) -> Option<f64> {
        match (self.moved_plus, self.moved_minus) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }
}

impl TargetAnswer {
    /// The verdict of the answer, if there is one.
    pub fn answer_verdict(&self) -> Option<&Verdict> {
        let name = self.answer.as_deref()?;
        self.verdicts().find(|v| v.candidate == name)
    }

    /// The rule that picked the answer, as `rule: prefer latency` (with its caveat, if any).
    pub fn rule_name(&self) -> &str {
        match self.rule.find("(rule: ") {
            Some(i) => self.rule[i + 1..].trim_end_matches(')'),
            None => &self.rule,
        }
    }

    /// One line naming the answer and why: `1.10: maglev — 3.9 ns, 270.0 KiB, moves 1.56× the
    /// ideal on a resize (rule: prefer latency)`.
    pub fn answer_line(&self) -> String {
        let Some(v) = self.answer_verdict() else {
            return format!("{:.2}: none meets the target and every constraint", self.max_load);
        };
        let moves = match v.moved_max().filter(|m| m.is_finite()) {
            Some(m) => format!("moves {m:.2}× the ideal on a resize"),
            None => "movement not measured".to_owned(),
        };
        format!(
            "{:.2}: {} — {}, {}, {moves} ({})",
            self.max_load,
            v.candidate,
            v.lookup_ns.map_or("lookup not timed".to_owned(), |t| ns(Some(t))),
            bytes(v.memory_bytes),
            self.rule_name()
        )
    }
}

impl fmt::Display for Summary<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rec = self.0;
        writeln!(f, "recommendation for {} ({})", rec.cluster, rec.constraints)?;
        writeln!(f, "answer per target (the busiest node's load at most this times the mean):")?;
        for a in &rec.answers {
            writeln!(f, "  {}", a.answer_line())?;
        }
        let grown: Vec<&TargetAnswer> = rec.answers.iter().filter(|a| !a.grow.is_empty()).collect();
        if let Some(g) = grown.first().and_then(|a| a.grow.first()) {
            writeln!(f, "the ring after the cluster grows (worst max/mean over {} random additions):", g.trials)?;
        }
        for a in grown {
            let after: Vec<String> =
                a.grow.iter().map(|g| format!("after {}: {:.3}", g.label, g.worst_max_over_mean)).collect();
            writeln!(f, "  {:.2}: {} {}", a.max_load, a.ring.candidate, after.join(", "))?;
        }
        self.eligible(f)?;
        self.rejected(f)?;
        writeln!(
            f,
            "\n(moved+1 / moved-1: keys moved by adding / removing one node, as a multiple of the ideal 1/N; \
             --all shows every candidate at every target with its evidence)"
        )
    }
}

impl Summary<'_> {
    fn eligible(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rec = self.0;
        let eligible: Vec<&Verdict> =
            rec.candidates().into_iter().filter(|v| rec.eligible_at(&v.candidate).next().is_some()).collect();
        if eligible.is_empty() {
            return writeln!(f, "\neligible: none");
        }
        let w = eligible.iter().map(|v| v.candidate.len()).max().unwrap_or(0).max("eligible".len());
        writeln!(
            f,
            "\n  {:<w$} {:>9} {:>10} {:>10} {:>8} {:>8}  eligible at",
            "eligible", "max/mean", "memory", "lookup", "moved+1", "moved-1"
        )?;
        let mut noisy = false;
        for v in eligible {
            let at: Vec<String> = rec.eligible_at(&v.candidate).map(|t| format!("{t:.2}")).collect();
            // Sampled routers can be eligible above a target (within sampling noise): marked.
            let over = rec.eligible_at(&v.candidate).any(|t| v.max_over_mean > t);
            noisy |= over;
            writeln!(
                f,
                "  {:<w$} {:>8.3}{} {:>10} {:>10} {:>8} {:>8}  {}",
                v.candidate,
                v.max_over_mean,
                if over { "*" } else { " " },
                bytes(v.memory_bytes),
                ns(v.lookup_ns),
                ratio(v.moved_plus),
                ratio(v.moved_minus),
                at.join(" ")
            )?;
        }
        if noisy {
            writeln!(
                f,
                "  * sampled keys: a spread within the sampling noise of a perfect router, whose shares are exact \
                 in expectation"
            )?;
        }
        Ok(())
    }

    fn rejected(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rejections = self.0.rejections();
        if !rejections.is_empty() {
            writeln!(f)?;
        }
        for (reason, names) in rejections {
            writeln!(f, "  rejected — {reason}: {}", names.join(", "))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{recommend, Request};

    #[test]
    fn reasons_lose_the_candidates_figure() {
        let split = |w: &str| split_reason(w);
        assert_eq!(split("max/mean 1.310 > 1.05"), ("max/mean > 1.05".into(), Some("1.310".into())));
        assert_eq!(split("memory 1.2 MiB > 64.0 MiB"), ("memory > 64.0 MiB".into(), Some("1.2 MiB".into())));
        assert_eq!(split("lookup 12.5 ns > 10 ns"), ("lookup > 10 ns".into(), Some("12.5 ns".into())));
        assert_eq!(
            split("max/mean 1.02 > 1.01; the sample (100 keys, noise sd 9.0%) cannot confirm the target"),
            (
                "max/mean > 1.01".into(),
                Some("1.02 (the sample (100 keys, noise sd 9.0%) cannot confirm the target)".into())
            )
        );
        assert_eq!(split("lacks remove-any"), ("lacks remove-any".into(), None));
        assert_eq!(split("not consistent: a membership change moves most keys").1, None);
    }

    /// The summary names every target's answer in its first lines, lists each eligible
    /// candidate once and each rejected one once per reason.
    #[test]
    fn the_summary_leads_with_the_answers() {
        let rec = recommend(&Request::for_node_count(8).targets(&[1.25, 1.5]).smoke()).unwrap();
        let text = rec.summary().to_string();
        let lines: Vec<&str> = text.lines().collect();
        for (i, a) in rec.answers.iter().enumerate() {
            assert_eq!(lines[2 + i], format!("  {}", a.answer_line()));
            let name = a.answer.as_deref().expect("an answer at 1.25 and 1.50");
            assert!(lines[2 + i].starts_with(&format!("  {:.2}: {name} — ", a.max_load)), "{}", lines[2 + i]);
        }
        for v in rec.candidates() {
            let rows = lines.iter().filter(|l| l.split_whitespace().next() == Some(v.candidate.as_str())).count();
            let eligible = rec.eligible_at(&v.candidate).count() > 0;
            assert_eq!(rows, usize::from(eligible), "{}:\n{text}", v.candidate);
        }
        for (reason, names) in rec.rejections() {
            let line = lines.iter().find(|l| l.starts_with(&format!("  rejected — {reason}: "))).unwrap();
            assert!(names.iter().all(|n| line.contains(n.as_str())), "{line}");
        }
        assert!(lines.len() < rec.to_string().lines().count(), "shorter than the full table");
    }
}

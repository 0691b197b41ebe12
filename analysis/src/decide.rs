//! The deciding step of a recommendation: rules over measured rows, no measuring. A row meets
//! a target or not, passes the user's constraints or not, and one rule ([`Prefer`]) picks the
//! answer among the eligible.

use hashroute::Algorithm;

use crate::measure::Row;
use crate::request::{Prefer, Request};
use crate::Verdict;

/// The first constraint `algorithm` fails whatever its measurements: compatibility,
/// consistency, the required capabilities.
pub(crate) fn algorithm_failure(req: &Request, algorithm: Algorithm) -> Option<String> {
    let compat = req.compatibility().ok().flatten();
    if let Some((algo, _)) = compat {
        if algorithm != algo {
            return Some(format!("not compatible with {}", req.compatible_with.as_deref().unwrap_or("")));
        }
    } else if !algorithm.is_consistent() {
        return Some("not consistent: a membership change moves most keys".into());
    }
    let unmet = req.requirements.iter().find(|r| !r.met_by(algorithm));
    unmet.map(|r| format!("lacks {}", r.name()))
}

/// A measured row judged on `target` and the user's constraints.
pub(crate) fn verdict(req: &Request, row: &Row, target: f64) -> Verdict {
    let (meets, failed, note) = judge(row, target);
    let rejected = failed.or_else(|| constraint_failure(req, row));
    let evidence = match note {
        Some(note) => format!("{}; {note}", row.evidence),
        None => row.evidence.clone(),
    };
    Verdict {
        candidate: row.candidate.clone(),
        algorithm: row.algorithm,
        vnodes: row.vnodes,
        max_over_mean: row.max_over_mean,
        evidence,
        memory_bytes: row.memory_bytes,
        lookup_ns: row.lookup_ns,
        moved_plus: row.moved.plus,
        moved_minus: row.moved.minus,
        movement: row.moved.how.clone(),
        meets,
        rejected,
        estimate_only: row.estimate_only,
    }
}

/// Whether `row` meets `target`, the reason it fails, and a note on the evidence. A router whose
/// shares are exact in expectation, measured with a spread no larger than key sampling alone
/// would give, meets any target: only the sample is uneven. Any other router must show its tail
/// under the target.
fn judge(row: &Row, target: f64) -> (bool, Option<String>, Option<String>) {
    if let Some(why) = &row.not_built {
        return (false, Some(why.clone()), None);
    }
    let Some(c) = &row.cell else { return (false, Some("not measured".into()), None) };
    let tail = row.max_over_mean;
    let within_noise = !c.exact && row.algorithm.balanced_in_expectation() && c.std_dev_pct <= 1.2 * c.noise_std_pct;
    let meets = tail <= target || within_noise;
    let note = (within_noise && tail > target).then(|| "spread within sampling noise of a perfect router".to_string());
    let failed = if meets {
        None
    } else if !c.exact && c.noise_std_pct >= 100.0 * (target - 1.0) {
        Some(format!(
            "max/mean {tail:.3} > {target}; the sample ({} keys, noise sd {:.1}%) cannot confirm the target",
            c.keys, c.noise_std_pct
        ))
    } else {
        Some(format!("max/mean {tail:.3} > {target}"))
    };
    (meets, failed, note)
}

/// The first of the user's constraints a measured row fails.
fn constraint_failure(req: &Request, row: &Row) -> Option<String> {
    if let Some(why) = algorithm_failure(req, row.algorithm) {
        return Some(why);
    }
    if let Some(m) = row.memory_bytes.filter(|&m| m as u64 > req.max_memory) {
        return Some(format!(
            "memory {} > {}",
            crate::present::bytes(Some(m)),
            crate::present::bytes(Some(req.max_memory as usize))
        ));
    }
    match (req.max_lookup_ns, row.lookup_ns) {
        (Some(max), Some(ns)) if ns > max => Some(format!("lookup {ns:.1} ns > {max} ns")),
        _ => None,
    }
}

/// The answer among the eligible verdicts under `prefer`, and the rule that chose it as text
/// (which says so when the preferred figure was not measured and the next rule decided).
pub(crate) fn pick(verdicts: &[&Verdict], prefer: Prefer) -> (Option<String>, String) {
    let eligible: Vec<&Verdict> =
        verdicts.iter().copied().filter(|v| v.rejected.is_none() && !v.estimate_only).collect();
    let memory = |v: &Verdict| v.memory_bytes.unwrap_or(usize::MAX);
    let lookup = |v: &Verdict| v.lookup_ns.unwrap_or(f64::INFINITY);
    let moved = |v: &Verdict| match (v.moved_plus, v.moved_minus) {
        (Some(a), Some(b)) => a.max(b),
        (Some(a), None) | (None, Some(a)) => a,
        (None, None) => f64::INFINITY,
    };
    let timed = eligible.iter().any(|v| v.lookup_ns.is_some());
    let (rule, best) = match prefer {
        Prefer::Latency if timed => (
            format!("{} (rule: prefer latency)", Prefer::Latency.describe()),
            eligible.iter().min_by(|a, b| lookup(a).total_cmp(&lookup(b)).then(memory(a).cmp(&memory(b)))),
        ),
        Prefer::Latency | Prefer::Memory => (
            if prefer == Prefer::Latency {
                "the least memory (rule: prefer latency, but lookups were not timed in this run)".to_string()
            } else {
                format!("{} (rule: prefer memory)", Prefer::Memory.describe())
            },
            eligible.iter().min_by(|a, b| memory(a).cmp(&memory(b)).then(lookup(a).total_cmp(&lookup(b)))),
        ),
        Prefer::Movement => (
            format!("{} (rule: prefer movement)", Prefer::Movement.describe()),
            eligible.iter().min_by(|a, b| {
                moved(a).total_cmp(&moved(b)).then(lookup(a).total_cmp(&lookup(b))).then(memory(a).cmp(&memory(b)))
            }),
        ),
    };
    (best.map(|v| v.candidate.clone()), rule)
}

//! Small statistics helpers: quantiles over clusters and load-balance summaries.

/// Arithmetic mean; 0 for an empty slice.
pub(crate) fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        0.0
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

/// Population standard deviation; 0 for fewer than two values.
pub(crate) fn std_dev(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    (xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / xs.len() as f64).sqrt()
}

/// The `q` quantile (0..=1) of `xs` by the nearest-rank method: the smallest value with at least
/// `q · n` values at or below it. Sorts a copy: O(n log n). `NaN` for an empty slice.
pub(crate) fn quantile(xs: &[f64], q: f64) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = ((q.clamp(0.0, 1.0) * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

/// The median (the 0.5 quantile by nearest rank).
pub(crate) fn median(xs: &[f64]) -> f64 {
    quantile(xs, 0.5)
}

/// The highest tail quantile that `samples` independent draws support, as `(q, label)`: p99
/// needs at least 100 samples (so the estimate is not simply the maximum of fewer), p95 needs 20,
/// p90 needs 10; below that only the maximum is reported.
pub(crate) fn supported_tail(samples: usize) -> (f64, &'static str) {
    match samples {
        s if s >= 100 => (0.99, "p99"),
        s if s >= 20 => (0.95, "p95"),
        s if s >= 10 => (0.90, "p90"),
        _ => (1.0, "max"),
    }
}

/// How evenly one cluster spreads load: node loads divided by their fair share (their weight's
/// share of the total), so 1.0 is perfect.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Balance {
    /// Standard deviation of the normalized loads, in percent of their mean.
    pub std_dev_pct: f64,
    /// Busiest node's load over the mean.
    pub max_over_mean: f64,
    /// Idlest node's load over the mean.
    pub min_over_mean: f64,
    /// Busiest node's share of all traffic (not normalized by weight), in percent.
    pub max_share_pct: f64,
    /// Idlest node's share of all traffic, in percent.
    pub min_share_pct: f64,
}

impl Balance {
    /// Summarizes `loads` (any unit: fractions, key counts) against fair `shares` (any unit; only
    /// their ratios matter). O(n).
    ///
    /// # Panics
    /// If the slices differ in length or are empty.
    pub fn from_loads(loads: &[f64], shares: &[f64]) -> Balance {
        assert_eq!(loads.len(), shares.len(), "Balance::from_loads: one share per load");
        assert!(!loads.is_empty(), "Balance::from_loads: no loads");
        let total_load: f64 = loads.iter().sum();
        let total_share: f64 = shares.iter().sum();
        let norm: Vec<f64> = loads
            .iter()
            .zip(shares)
            .map(|(l, s)| if total_load > 0.0 { (l / total_load) / (s / total_share) } else { 0.0 })
            .collect();
        let m = mean(&norm);
        let max = norm.iter().copied().fold(f64::MIN, f64::max);
        let min = norm.iter().copied().fold(f64::MAX, f64::min);
        let frac = |x: f64| if total_load > 0.0 { 100.0 * x / total_load } else { 0.0 };
        Balance {
            std_dev_pct: if m > 0.0 { 100.0 * std_dev(&norm) / m } else { 0.0 },
            max_over_mean: if m > 0.0 { max / m } else { 0.0 },
            min_over_mean: if m > 0.0 { min / m } else { 0.0 },
            max_share_pct: frac(loads.iter().copied().fold(f64::MIN, f64::max)),
            min_share_pct: frac(loads.iter().copied().fold(f64::MAX, f64::min)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_by_nearest_rank() {
        let xs: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&xs, 0.99), 99.0);
        assert_eq!(quantile(&xs, 1.0), 100.0);
        assert_eq!(quantile(&xs, 0.0), 1.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert!(quantile(&[], 0.5).is_nan());
        assert_eq!(supported_tail(200).1, "p99");
        assert_eq!(supported_tail(30).1, "p95");
        assert_eq!(supported_tail(5).1, "max");
    }

    #[test]
    fn balance_of_known_loads() {
        let b = Balance::from_loads(&[1.0, 1.0, 2.0], &[1.0, 1.0, 1.0]);
        assert!((b.max_over_mean - 1.5).abs() < 1e-12);
        assert!((b.min_over_mean - 0.75).abs() < 1e-12);
        assert!((b.max_share_pct - 50.0).abs() < 1e-12);
        // Weighted: loads exactly proportional to weights are perfect.
        let w = Balance::from_loads(&[1.0, 3.0], &[1.0, 3.0]);
        assert!(w.std_dev_pct.abs() < 1e-12 && (w.max_over_mean - 1.0).abs() < 1e-12);
        assert!((std_dev(&[1.0, 3.0]) - 1.0).abs() < 1e-12);
    }
}

//! The CSV files of the report, one function per file.

use std::path::Path;

use crate::report::write_csv;
use crate::sweep_run::Sweep;

/// Writes every CSV into `dir`.
pub(crate) fn write_all(dir: &Path, s: &Sweep) -> std::io::Result<()> {
    balance_csv(dir, s)?;
    lookup_csv(dir, s)?;
    movement_csv(dir, s)?;
    throughput_csv(dir, s)?;
    cache_csv(dir, s)
}

fn balance_csv(dir: &Path, s: &Sweep) -> std::io::Result<()> {
    let rows: Vec<Vec<String>> = s
        .balance
        .iter()
        .chain(&s.claim_cells)
        .map(|c| {
            vec![
                c.candidate.clone(),
                c.nodes.to_string(),
                c.clusters.to_string(),
                c.keys.to_string(),
                c.exact.to_string(),
                format!("{:.4}", c.std_dev_pct),
                format!("{:.5}", c.max_over_mean),
                format!("{:.5}", c.min_over_mean),
                format!("{:.4}", c.max_share_pct),
                format!("{:.4}", c.min_share_pct),
                c.tail.to_string(),
                format!("{:.5}", c.tail_max_over_mean),
                format!("{:.4}", c.max_dev_pct),
                format!("{:.4}", c.noise_std_pct),
                c.memory_bytes.to_string(),
                format!("{:.0}", c.build_ns),
            ]
        })
        .collect();
    let header = [
        "candidate",
        "nodes",
        "clusters",
        "keys_per_cluster",
        "exact",
        "std_dev_pct_median",
        "max_over_mean_median",
        "min_over_mean_median",
        "max_share_pct_median",
        "min_share_pct_median",
        "tail",
        "tail_max_over_mean",
        "max_dev_pct_median",
        "sampling_noise_std_pct",
        "memory_bytes",
        "build_ns_median",
    ];
    write_csv(&dir.join("balance.csv"), &header, &rows)
}

fn lookup_csv(dir: &Path, s: &Sweep) -> std::io::Result<()> {
    let rows: Vec<Vec<String>> = s
        .lookups
        .iter()
        .map(|l| {
            vec![
                l.candidate.clone(),
                l.nodes.to_string(),
                format!("{:.2}", l.single_ns),
                format!("{:.2}", l.batch_ns),
                l.single_repeats.len().to_string(),
                format!("{:.2}", l.spread()),
            ]
        })
        .collect();
    let header = ["candidate", "nodes", "route_ns", "route_batch_ns", "repeats", "route_ns_spread"];
    write_csv(&dir.join("lookup.csv"), &header, &rows)
}

fn movement_csv(dir: &Path, s: &Sweep) -> std::io::Result<()> {
    let rows: Vec<Vec<String>> = s
        .movement
        .iter()
        .map(|m| {
            vec![
                m.candidate.clone(),
                m.resize.label.clone(),
                m.resize.from.to_string(),
                m.resize.to.to_string(),
                m.clusters.to_string(),
                m.keys.to_string(),
                format!("{:.6}", m.moved),
                format!("{:.6}", m.ideal),
                m.failure_spread.map_or(String::new(), |f| format!("{f:.4}")),
            ]
        })
        .collect();
    let header = [
        "candidate",
        "resize",
        "from",
        "to",
        "clusters",
        "keys_per_cluster",
        "moved_median",
        "ideal",
        "failure_spread_median",
    ];
    write_csv(&dir.join("movement.csv"), &header, &rows)
}

fn throughput_csv(dir: &Path, s: &Sweep) -> std::io::Result<()> {
    let rows: Vec<Vec<String>> = s
        .throughput
        .iter()
        .map(|t| vec![t.candidate.clone(), t.threads.to_string(), format!("{:.0}", t.per_second)])
        .collect();
    write_csv(&dir.join("throughput.csv"), &["candidate", "threads", "lookups_per_s"], &rows)
}

fn cache_csv(dir: &Path, s: &Sweep) -> std::io::Result<()> {
    let mut rows = Vec::new();
    for (c, t) in &s.cache {
        for (i, h) in t.hit_rate.iter().enumerate() {
            let since = ((i as i64) - t.resize_at as i64) * t.window as i64;
            rows.push(vec![c.clone(), since.to_string(), format!("{h:.4}")]);
        }
    }
    write_csv(&dir.join("cache_timeline.csv"), &["candidate", "requests_since_resize", "hit_rate"], &rows)
}

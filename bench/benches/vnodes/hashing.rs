//! The hash-kernel part of the report: ns per key of every `hash/<algorithm>-<impl>/<len>`
//! bench (benches/hash.rs) as a table, a CSV and a plot against key length, and the hashing
//! rows of the performance-target table (ratios against the permanent peer variants measured
//! in the same run).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::plots::Plot;
use crate::report::{criterion_estimates, line_chart, md_table, write_csv, Axes, CriterionEstimate, Series};

/// `(function, length) -> ns per key` of the `hash` group.
fn per_key() -> BTreeMap<(String, usize), f64> {
    criterion_estimates("hash")
        .iter()
        .filter_map(|c| Some(((c.function.clone(), c.parameter.parse().ok()?), c.ns_per_element())))
        .collect()
}

/// The "Hash kernels" section; also writes `hash_kernels.csv` into `dir`.
pub(crate) fn section(dir: &Path) -> String {
    let cells = per_key();
    let mut r = String::from("## Hash kernels (criterion, `hash` group from benches/hash.rs)\n\n");
    if cells.is_empty() {
        r.push_str("No criterion estimates under `target/criterion/hash/`: run `cargo bench --bench hash` first.\n\n");
        return r;
    }
    let lens: BTreeSet<usize> = cells.keys().map(|(_, l)| *l).collect();
    let funcs: BTreeSet<&String> = cells.keys().map(|(f, _)| f).collect();
    let mut header = vec!["kernel".to_string()];
    header.extend(lens.iter().map(|l| format!("{l} B")));
    let rows: Vec<Vec<String>> = funcs
        .iter()
        .map(|f| {
            let mut row = vec![f.to_string()];
            row.extend(lens.iter().map(|l| cells.get(&((*f).clone(), *l)).map_or("—".into(), |v| format!("{v:.2}"))));
            row
        })
        .collect();
    let csv: Vec<Vec<String>> =
        cells.iter().map(|((f, l), v)| vec![f.clone(), l.to_string(), format!("{v:.3}")]).collect();
    if let Err(e) = write_csv(&dir.join("hash_kernels.csv"), &["kernel", "key_bytes", "ns_per_key"], &csv) {
        eprintln!("vnodes: hash_kernels.csv: {e}");
    }
    r.push_str(
        "Median ns per key (1024 printable keys of each length per iteration). `-hashroute` is this crate one \
key at a time, `-hashroute-batch` its batch entry point (`KeyHasher::hash_batch`, `slots::key_slot_batch`); \
the others are the crates it replaced or competes with, measured in the same run: `md5crate` (md-5 \
`Md5::digest`), `table1` / `table16` (crc's `Crc<u16>` / `Crc<u16, Table<16>>`), `crc16crate` (crc16), \
`crcfast` (crc-fast), `crate` (murmur3 through `io::Read`); `xxh3-hashroute` is the floor. \
`keyslot-table1` is the previous `key_slot`: the same tag scan, then `Crc<u16>`.\n\n",
    );
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    r.push_str(&md_table(&header, &rows));
    r.push('\n');
    r
}

/// `hash_ns_vs_length.svg`: ns per key against key length, one line per kernel.
pub(crate) fn plot(dir: &Path) -> Option<Plot> {
    let mut by_kernel: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for ((f, l), v) in per_key() {
        by_kernel.entry(f).or_default().push((l as f64, v));
    }
    if by_kernel.values().all(|pts| pts.len() < 2) {
        return None;
    }
    let series: Vec<Series> = by_kernel.into_iter().map(|(f, pts)| Series::new(f, pts)).collect();
    let axes = Axes {
        x: "key length, bytes (log)",
        y: "ns per key (criterion median / 1024 keys, log)",
        log_x: true,
        log_y: true,
        categories: None,
    };
    let (file, title) = ("hash_ns_vs_length.svg", "Hash kernels: ns per key vs key length");
    match line_chart(&dir.join(file), title, &axes, &series) {
        Ok(()) => Some(Plot { file: file.to_string(), title: title.to_string() }),
        Err(e) => {
            eprintln!("vnodes: plot {file}: {e}");
            None
        }
    }
}

/// A hashing target: what, target text, numerator and denominator (group, function,
/// parameter), limit (lower is better).
struct Target {
    what: &'static str,
    target: &'static str,
    num: (&'static str, &'static str, &'static str),
    den: (&'static str, &'static str, &'static str),
    limit: f64,
}

const TARGETS: [Target; 4] = [
    Target {
        what: "Ketama route_batch (MD5 included) / routing through md-5 per key, 1000 servers × 160 points",
        target: "≤ 0.25",
        num: ("route", "ketama-batch", "1000"),
        den: ("route", "ketama-md5crate", "1000"),
        limit: 0.25,
    },
    Target {
        what: "Ketama single-key route / routing through md-5 per key, 1000 servers",
        target: "≤ 0.8",
        num: ("route", "ketama-single", "1000"),
        den: ("route", "ketama-md5crate", "1000"),
        limit: 0.8,
    },
    Target {
        what: "slots::key_slot / the same tag scan + crc `Crc<u16>`, 16-byte keys",
        target: "≤ 0.333",
        num: ("hash", "keyslot-hashroute", "16"),
        den: ("hash", "keyslot-table1", "16"),
        limit: 1.0 / 3.0,
    },
    Target {
        what: "RedisSlots route_batch / single-key route through crc `Crc<u16>`, 16-byte keys",
        target: "≤ 0.2",
        num: ("route", "slots-batch", "3"),
        den: ("route", "slots-table1", "3"),
        limit: 0.2,
    },
];

fn median(all: &[CriterionEstimate], (group, function, parameter): (&str, &str, &str)) -> Option<f64> {
    all.iter()
        .find(|c| c.group == group && c.function == function && c.parameter == parameter)
        .map(|c| c.ns_per_element())
}

/// Rows `[what, target, measured, verdict]` for the performance-target table.
pub(crate) fn target_rows() -> Vec<Vec<String>> {
    let all: Vec<CriterionEstimate> = ["hash", "route"].iter().flat_map(|g| criterion_estimates(g)).collect();
    let row = |what: String, target: &str, value: Option<f64>, limit: f64| {
        vec![
            what,
            target.to_string(),
            value.map_or("not measured".into(), |v| format!("{v:.3}")),
            value.map_or("—".into(), |v| if v <= limit { "met" } else { "not met" }.to_string()),
        ]
    };
    let mut rows: Vec<Vec<String>> = TARGETS
        .iter()
        .map(|t| {
            let v = match (median(&all, t.num), median(&all, t.den)) {
                (Some(a), Some(b)) if b > 0.0 => Some(a / b),
                _ => None,
            };
            row(t.what.to_string(), t.target, v, t.limit)
        })
        .collect();
    // Murmur3 over 8–64-byte keys: the worst ratio among the lengths this run measured.
    let cells = per_key();
    let worst = cells
        .iter()
        .filter(|((f, l), _)| f == "murmur3-hashroute" && (8..=64).contains(l))
        .filter_map(|((_, l), v)| Some((*l, v / cells.get(&("murmur3-crate".to_string(), *l))?)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let what = match worst {
        Some((l, _)) => format!("Murmur3 x64_128 / murmur3 crate, 8–64-byte keys (worst length measured: {l} B)"),
        None => "Murmur3 x64_128 / murmur3 crate, 8–64-byte keys".to_string(),
    };
    rows.push(row(what, "≤ 0.333", worst.map(|w| w.1), 1.0 / 3.0));
    rows
}

//! The performance-target table: lookup-kernel targets as ratios of criterion medians measured
//! in the same run (benches/route.rs, benches/lookup.rs, benches/rendezvous.rs,
//! benches/jumpfamily.rs), plus the
//! default ring's bytes per virtual node. A row whose benchmarks did not run says so.

use hashroute::{NodeSet, Ring, Router};

use crate::report::{criterion_estimates, md_table, CriterionEstimate};

/// A criterion id: (group, function, parameter). The build group's plain rebuild has no
/// function name (`BenchmarkId::from_parameter`).
type Id = (&'static str, &'static str, &'static str);

/// A ratio target: measure, target text, numerator, denominator, limit, lower is better.
struct Ratio {
    what: &'static str,
    target: &'static str,
    num: Id,
    den: Id,
    limit: f64,
    lower_is_better: bool,
}

const RATIOS: [Ratio; 23] = [
    Ratio {
        what: "ring route, batched (default layout) / oracle single, 160K points",
        target: "≤ 0.25",
        num: ("route", "ring", "1000"),
        den: ("route", "ring-oracle-single", "160000"),
        limit: 0.25,
        lower_is_better: true,
    },
    Ratio {
        what: "ring route, batched (default layout) / oracle single, 1.6M points",
        target: "≤ 0.167",
        num: ("route", "ring", "10000"),
        den: ("route", "ring-oracle-single", "1600000"),
        limit: 1.0 / 6.0,
        lower_is_better: true,
    },
    Ratio {
        what: "same, ring forced to the radix layout (the default's layout at this size), 160K points",
        target: "≤ 0.25",
        num: ("route", "ring-radix-batch", "160000"),
        den: ("route", "ring-oracle-single", "160000"),
        limit: 0.25,
        lower_is_better: true,
    },
    Ratio {
        what: "same, ring forced to the radix layout, 1.6M points",
        target: "≤ 0.167",
        num: ("route", "ring-radix-batch", "1600000"),
        den: ("route", "ring-oracle-single", "1600000"),
        limit: 1.0 / 6.0,
        lower_is_better: true,
    },
    Ratio {
        what: "same, ring forced to the tree layout (the previous default), 160K points",
        target: "≤ 0.25",
        num: ("route", "ring-tree-batch", "160000"),
        den: ("route", "ring-oracle-single", "160000"),
        limit: 0.25,
        lower_is_better: true,
    },
    Ratio {
        what: "ring route, single key (radix, the default) / oracle single, 160K points",
        target: "≤ 0.667",
        num: ("route", "ring-radix-single", "160000"),
        den: ("route", "ring-oracle-single", "160000"),
        limit: 1.0 / 1.5,
        lower_is_better: true,
    },
    Ratio {
        what: "jump: scalar / SIMD batch time, 1000 buckets (speed-up)",
        target: "≥ 2.5",
        num: ("jump", "scalar", "1000"),
        den: ("jump", "simd", "1000"),
        limit: 2.5,
        lower_is_better: false,
    },
    Ratio {
        what: "rayon: 1 thread / 2 threads time, 1M keys (speed-up)",
        target: "≥ 1.6",
        num: ("parallel", "1", "1048576"),
        den: ("parallel", "2", "1048576"),
        limit: 1.6,
        lower_is_better: false,
    },
    Ratio {
        what: "ring build / one-node add time, 160K points (speed-up)",
        target: "≥ 5",
        num: ("build", "", "160000"),
        den: ("build", "add-node", "160000"),
        limit: 5.0,
        lower_is_better: false,
    },
    Ratio {
        what: "ring build / one-node remove time, 160K points (speed-up)",
        target: "≥ 5",
        num: ("build", "", "160000"),
        den: ("build", "remove-node", "160000"),
        limit: 5.0,
        lower_is_better: false,
    },
    // The constant-time jump family (benches/jumpfamily.rs); hash included.
    Ratio {
        what: "JumpBack / Jump, single-key route, 1000 buckets",
        target: "≤ 0.333",
        num: ("jumpfamily", "jumpback", "1000"),
        den: ("jumpfamily", "jump", "1000"),
        limit: 1.0 / 3.0,
        lower_is_better: true,
    },
    Ratio {
        what: "JumpBack / Jump, single-key route, 10^6 buckets",
        target: "≤ 0.25",
        num: ("jumpfamily", "jumpback", "1000000"),
        den: ("jumpfamily", "jump", "1000000"),
        limit: 0.25,
        lower_is_better: true,
    },
    Ratio {
        what: "JumpBack / Jump, batched route, 1000 buckets",
        target: "≤ 0.5",
        num: ("jumpfamily", "jumpback-batch", "1000"),
        den: ("jumpfamily", "jump-batch", "1000"),
        limit: 0.5,
        lower_is_better: true,
    },
    Ratio {
        what: "same, kernels only (SIMD bucket_batch on pre-computed hashes), 1000 buckets",
        target: "≤ 0.5",
        num: ("jumpfamily", "jumpback-kernel-batch", "1000"),
        den: ("jumpfamily", "jump-kernel-batch", "1000"),
        limit: 0.5,
        lower_is_better: true,
    },
    Ratio {
        what: "fliphash::bucket / fliphash crate, same harness (xxh3 then the function), 1000 buckets",
        target: "≤ 1.1",
        num: ("jumpfamily", "fliphash-fn", "1000"),
        den: ("jumpfamily", "fliphash-crate", "1000"),
        limit: 1.1,
        lower_is_better: true,
    },
    Ratio {
        what: "power::bucket / power-consistent-hash crate, same harness, 1000 buckets",
        target: "≤ 1.1",
        num: ("jumpfamily", "power-fn", "1000"),
        den: ("jumpfamily", "power-crate", "1000"),
        limit: 1.1,
        lower_is_better: true,
    },
    Ratio {
        what: "Jump router (concrete type) / jump-consistent-hash crate, single key, 1000 buckets",
        target: "≤ 1.1",
        num: ("jumpfamily", "jump", "1000"),
        den: ("jumpfamily", "jump-crate", "1000"),
        limit: 1.1,
        lower_is_better: true,
    },
    Ratio {
        what: "FlipHash router (concrete type) / fliphash crate, single key, 1000 buckets",
        target: "≤ 1.1",
        num: ("jumpfamily", "fliphash", "1000"),
        den: ("jumpfamily", "fliphash-crate", "1000"),
        limit: 1.1,
        lower_is_better: true,
    },
    Ratio {
        what: "PowerCh router (concrete type) / power-consistent-hash crate, single key, 1000 buckets",
        target: "≤ 1.1",
        num: ("jumpfamily", "power", "1000"),
        den: ("jumpfamily", "power-crate", "1000"),
        limit: 1.1,
        lower_is_better: true,
    },
    Ratio {
        what: "Jump through AnyRouter / jump-consistent-hash crate, single key, 1000 buckets (criterion: the bench closure re-reads the variant per key; the dispatch section measures the three side by side)",
        target: "≤ 1.15",
        num: ("jumpfamily", "jump-any", "1000"),
        den: ("jumpfamily", "jump-crate", "1000"),
        limit: 1.15,
        lower_is_better: true,
    },
    Ratio {
        what: "FlipHash through AnyRouter / fliphash crate, single key, 1000 buckets (criterion: the bench closure re-reads the variant per key; the dispatch section measures the three side by side)",
        target: "≤ 1.15",
        num: ("jumpfamily", "fliphash-any", "1000"),
        den: ("jumpfamily", "fliphash-crate", "1000"),
        limit: 1.15,
        lower_is_better: true,
    },
    Ratio {
        what: "PowerCh through AnyRouter / power-consistent-hash crate, single key, 1000 buckets (criterion: the bench closure re-reads the variant per key; the dispatch section measures the three side by side)",
        target: "≤ 1.15",
        num: ("jumpfamily", "power-any", "1000"),
        den: ("jumpfamily", "power-crate", "1000"),
        limit: 1.15,
        lower_is_better: true,
    },
    Ratio {
        what: "JumpBackAnchor / Memento, single-key route, 1000 ids with 10% removed",
        target: "≤ 0.5",
        num: ("jumpfamily", "jumpback-anchor-removed10", "1000"),
        den: ("jumpfamily", "memento-removed10", "1000"),
        limit: 0.5,
        lower_is_better: true,
    },
];

/// The medians of the groups the targets read.
struct Medians(Vec<CriterionEstimate>);

impl Medians {
    fn load() -> Medians {
        Medians(
            ["route", "jump", "rendezvous", "build", "parallel", "jumpfamily"]
                .iter()
                .flat_map(|g| criterion_estimates(g))
                .collect(),
        )
    }

    fn get(&self, (group, function, parameter): Id) -> Option<f64> {
        self.0
            .iter()
            .find(|c| c.group == group && c.function == function && c.parameter == parameter)
            .map(|c| c.median_ns)
    }
}

fn verdict(met: bool) -> String {
    if met { "met" } else { "not met" }.to_string()
}

/// One row for a measured value against a limit (`—` when not measured).
fn limit_row(what: String, target: &str, value: Option<f64>, met: impl Fn(f64) -> bool, digits: usize) -> Vec<String> {
    vec![
        what,
        target.to_string(),
        value.map_or("not measured".into(), |v| format!("{v:.digits$}")),
        value.map_or("—".into(), |v| verdict(met(v))),
    ]
}

fn ratio_rows(m: &Medians) -> Vec<Vec<String>> {
    RATIOS
        .iter()
        .map(|r| {
            let value = match (m.get(r.num), m.get(r.den)) {
                (Some(a), Some(b)) if b > 0.0 => Some(a / b),
                _ => None,
            };
            let met = |x: f64| if r.lower_is_better { x <= r.limit } else { x >= r.limit };
            limit_row(r.what.to_string(), r.target, value, met, 3)
        })
        .collect()
}

/// Bytes per virtual node of the default ring layout at 1000 × 160.
fn bytes_per_point_row() -> Option<Vec<String>> {
    let nodes = NodeSet::from_names((0..1000).map(|i| format!("node-{i}"))).ok()?;
    let ring = Ring::builder().vnodes(160).node_set(nodes).build().ok()?;
    let per_point = (ring.memory_bytes() - ring.nodes().memory_bytes()) as f64 / ring.points().len() as f64;
    let what = "default ring layout, bytes per virtual node (1000 × 160)".to_string();
    Some(limit_row(what, "≤ 12.8", Some(per_point), |v| v <= 12.8, 2))
}

/// The "Performance targets" section of REPORT.md.
pub(crate) fn performance_targets() -> String {
    let m = Medians::load();
    let mut rows = ratio_rows(&m);
    let build_ms = m.get(("build", "", "1600000")).map(|ns| ns / 1e6);
    rows.push(limit_row("ring build, 1.6M points (ms)".into(), "≤ 100", build_ms, |v| v <= 100.0, 1));
    // The path a 100-node router takes (dispatch depends on the node count); 256 keys per
    // iteration (benches/rendezvous.rs), 100 nodes scored per key.
    let isa = hashroute::internals::rendezvous_isa(
        &hashroute::Rendezvous::from_names((0..100).map(|i| format!("n{i}"))).expect("100 names"),
    );
    let hrw = m.get(("rendezvous", isa.name(), "100")).map(|ns| ns / 256.0 / 100.0);
    let what = format!("rendezvous ns per node scored, 100 nodes ({} path)", isa.name());
    rows.push(limit_row(what, "≤ 1", hrw, |v| v <= 1.0, 3));
    rows.extend(bytes_per_point_row());
    rows.extend(crate::hashing::target_rows());
    let mut out = String::from(
        "\n## Performance targets\n\nRatios of criterion medians from the same run (one machine, same load), \
so they compare like with like even on a shared machine. 4096 pre-generated 16-byte keys per \
iteration; 160 vnodes per node. `route/ring/<nodes>` routes with the ring as built (default \
layout, which is the radix index at these sizes); `route/ring-radix-batch/<points>` is a clone \
forced to the same layout: the two run the same code on different allocations, so the gap \
between them is this machine's run-to-run variation for that measurement.\n\n",
    );
    out.push_str(&md_table(&["measure", "target", "measured", "verdict"], &rows));
    out
}

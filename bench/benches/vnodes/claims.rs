//! The claims, each checked against the sweep: one function per claim (or group of
//! like claims). A verdict is `holds`, `does not hold`, or `within noise` when a timing
//! difference is smaller than its measured run-to-run spread.

use crate::sweep_run::Sweep;

/// One claim, what was measured, and the verdict.
pub(crate) struct Claim {
    pub claim: String,
    pub measured: String,
    pub verdict: &'static str,
}

const HOLDS: &str = "holds";
const FAILS: &str = "does not hold";
const NOISE: &str = "within noise";

pub(crate) fn fmt_pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        HOLDS
    } else {
        FAILS
    }
}

/// Whether `measured` is within `rel` (relative) of `claimed`.
fn close(measured: f64, claimed: f64, rel: f64) -> bool {
    (measured - claimed).abs() <= rel * claimed.abs()
}

/// Every claim the sweep can check, in the order.
pub(crate) fn check(s: &Sweep) -> Vec<Claim> {
    let mut out = Vec::new();
    claim1_eight_nodes(s, &mut out);
    claim2_sixteen_nodes(s, &mut out);
    claims3_to_6_movement(s, &mut out);
    claim7_three_nodes(s, &mut out);
    claim8_jump_speed(s, &mut out);
    claim8_jump_memory_and_balance(s, &mut out);
    out
}

/// 1. Std dev and busiest node at 8 nodes for several V.
fn claim1_eight_nodes(s: &Sweep, out: &mut Vec<Claim>) {
    for (v, sd, busiest) in [(20, 18.0, Some(31.0)), (100, 6.0, Some(22.0)), (160, 4.0, Some(20.0)), (320, 3.5, None)] {
        let Some(c) = s.cell(&format!("ring-v{v}"), 8) else { continue };
        out.push(Claim {
            claim: format!("1. 8 nodes, {v} vnodes: std dev ~{sd}%"),
            measured: format!("median {:.1}% over {} clusters", c.std_dev_pct, c.clusters),
            verdict: verdict(close(c.std_dev_pct, sd, 0.25)),
        });
        if let Some(b) = busiest {
            out.push(Claim {
                claim: format!("1. 8 nodes, {v} vnodes: busiest node takes {b}% of traffic"),
                measured: format!(
                    "median {:.1}% of traffic = {:+.0}% over the mean ({} max/mean {:.3}; fair share 12.5%)",
                    c.max_share_pct,
                    100.0 * (c.max_over_mean - 1.0),
                    c.tail,
                    c.tail_max_over_mean
                ),
                verdict: verdict(close(c.max_share_pct, b, 0.15)),
            });
        }
    }
}

/// 2. Busiest, least and largest deviation at 16 nodes.
fn claim2_sixteen_nodes(s: &Sweep, out: &mut Vec<Claim>) {
    if let Some(c) = s.cell("ring-v32", 16) {
        out.push(Claim {
            claim: "2. 16 nodes, 32 vnodes: busiest 27%, least 3% of traffic".into(),
            measured: format!(
                "median busiest {:.1}%, least {:.1}% of traffic (fair 6.25%); as deviations: {:+.0}% / {:+.0}% from the mean",
                c.max_share_pct,
                c.min_share_pct,
                100.0 * (c.max_over_mean - 1.0),
                100.0 * (c.min_over_mean - 1.0)
            ),
            verdict: verdict(close(c.max_share_pct, 27.0, 0.2) && close(c.min_share_pct, 3.0, 0.34)),
        });
    }
    if let Some(c) = s.cell("ring-v160", 16) {
        out.push(Claim {
            claim: "2. 16 nodes, 160 vnodes: largest deviation ~8-9%".into(),
            measured: format!("median {:.1}% over {} clusters", c.max_dev_pct, c.clusters),
            verdict: verdict((7.0..=10.0).contains(&c.max_dev_pct)),
        });
    }
}

/// 3.-6. Fractions of keys moved by resizes.
fn claims3_to_6_movement(s: &Sweep, out: &mut Vec<Claim>) {
    let mv = |name: &str, label: &str| s.movement.iter().find(|m| m.candidate == name && m.resize.label == label);
    for (name, claimed) in [("modulo", 0.91), ("ring-v100", 0.187), ("ring-v200", 0.093), ("ring-v300", 0.061)] {
        if let Some(m) = mv(name, "10->11") {
            out.push(Claim {
                claim: format!("3. 10 -> 11 with {name} moves {}", fmt_pct(claimed)),
                measured: format!("{} (ideal {})", fmt_pct(m.moved), fmt_pct(m.ideal)),
                verdict: verdict(close(m.moved, claimed, 0.1)),
            });
        }
    }
    for (name, label, claimed, num) in [
        ("ring-v160", "8->12", 0.125, "4."),
        ("modulo", "8->16", 1.0, "5."),
        ("modulo", "3->4", 0.75, "6."),
        ("ring-v160", "3->4", 0.25, "6."),
        ("ring-v160", "4->8", 0.5, "6."),
    ] {
        if let Some(m) = mv(name, label) {
            out.push(Claim {
                claim: format!("{num} {label} with {name} moves ~{}", fmt_pct(claimed)),
                measured: format!("{} (ideal {}, over {} clusters)", fmt_pct(m.moved), fmt_pct(m.ideal), m.clusters),
                verdict: verdict(close(m.moved, claimed, 0.1)),
            });
        }
    }
}

/// 7. Largest deviation at 3 nodes, 150 vnodes.
fn claim7_three_nodes(s: &Sweep, out: &mut Vec<Claim>) {
    if let Some(c) = s.cell("ring-v150", 3) {
        out.push(Claim {
            claim: "7. 3 nodes, 150 vnodes: largest deviation usually within 5%".into(),
            measured: format!(
                "median {:.1}%; within 5% in {:.0}% of {} clusters",
                c.max_dev_pct,
                100.0 * c.within_5pct,
                c.clusters
            ),
            verdict: verdict(c.within_5pct >= 0.5),
        });
    }
}

/// Claim 8: jump is faster than a ring: "within noise" when the gap is below the larger run-to-run
/// spread (max − min over the repeated lookup cells) of the two.
fn claim8_jump_speed(s: &Sweep, out: &mut Vec<Claim>) {
    let head_n = s.head_n;
    let (Some(j), Some(r)) = (s.lookup("jump", head_n), s.lookup("ring-v160", head_n)) else { return };
    let spread = j.spread().max(r.spread());
    let gap = (r.single_ns - j.single_ns).abs();
    out.push(Claim {
        claim: format!("8. jump is faster than a ring ({head_n} nodes, V=160)"),
        measured: format!(
            "jump {:.1} ns vs ring {:.1} ns per key (medians of {} repeats; gap {gap:.1} ns, run-to-run spread {spread:.1} ns)",
            j.single_ns,
            r.single_ns,
            j.single_repeats.len()
        ),
        verdict: if gap <= spread { NOISE } else { verdict(j.single_ns < r.single_ns) },
    });
}

/// Claim 8: jump needs no memory beyond its node set, and balances better than a ring (its std dev is
/// sampled: at the sampling-noise floor it cannot be told apart from a perfect router).
fn claim8_jump_memory_and_balance(s: &Sweep, out: &mut Vec<Claim>) {
    let (Some(j), Some(r)) = (s.cell("jump", s.head_n), s.cell("ring-v160", s.head_n)) else { return };
    out.push(Claim {
        claim: "8. jump uses no memory".into(),
        measured: format!("jump {} B (node set only) vs ring-v160 {} B", j.memory_bytes, r.memory_bytes),
        verdict: if j.memory_bytes * 10 < r.memory_bytes { "holds (beyond its node set)" } else { FAILS },
    });
    out.push(Claim {
        claim: "8. jump balances better than a ring".into(),
        measured: format!(
            "jump std dev {:.2}% (sampling noise alone {:.2}%, {} keys) vs ring-v160 {:.2}% (exact)",
            j.std_dev_pct, j.noise_std_pct, j.keys, r.std_dev_pct
        ),
        verdict: if j.std_dev_pct <= r.std_dev_pct {
            HOLDS
        } else if j.std_dev_pct <= 1.2 * j.noise_std_pct {
            NOISE
        } else {
            FAILS
        },
    });
}

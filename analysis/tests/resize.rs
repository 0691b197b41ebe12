//! `simulate_resize`: the acceptance (4 → 8 nodes, one at a time at least 10 points
//! above all at once), shrinking and mixed changes, determinism, and the errors.

use hashroute::{Algorithm, Error, NodeSet, RouterSpec};
use hashroute_analysis::{resize_section, simulate_resize, ResizeReport, ResizeStrategy, Workload};

fn cluster(range: std::ops::RangeInclusive<usize>) -> NodeSet {
    NodeSet::from_names(range.map(|i| format!("cache-{i}"))).unwrap()
}

fn ring() -> RouterSpec {
    RouterSpec::new(Algorithm::Ring).with_vnodes(160)
}

/// A quarter of the defaults' cost, with the same shape (every size scaled by what is cached).
fn small() -> Workload {
    Workload { keys: 25_000, requests_per_step: 50_000, window: 250, ..Workload::default() }
}

fn lowest(r: &ResizeReport, s: ResizeStrategy) -> f64 {
    r.run(s).unwrap().lowest()
}

/// The acceptance, on the defaults: 4 → 8 nodes on a 160-vnode ring. All at once hands
/// half of the keys to empty caches; one at a time at most a fifth, so its lowest window stays
/// far higher. The measured gap is about 16 points (15 to 18 over seeds); 10 is the claim.
#[test]
fn one_at_a_time_beats_all_at_once_by_ten_points_on_the_defaults() {
    let w = Workload::default();
    let r = simulate_resize(&ring(), &cluster(1..=4), &cluster(1..=8), &w, &ResizeStrategy::ALL).unwrap();
    let (all, one) = (lowest(&r, ResizeStrategy::AllAtOnce), lowest(&r, ResizeStrategy::OneAtATime));
    assert!(one >= all + 0.10, "one-at-a-time {one} vs all-at-once {all}\n{r}");
    // A collapse, as in the incident (92% -> 61%): not a shallow dip that happens to differ.
    assert!((0.89..0.94).contains(&r.steady_before), "{r}");
    assert!(all < r.steady_before - 0.20, "{r}");
    // Warming first and reading the old owner on a miss both avoid most of the dip.
    assert!(lowest(&r, ResizeStrategy::WarmFirst) >= all + 0.10, "{r}");
    assert!(lowest(&r, ResizeStrategy::Fallback) >= one, "{r}");
    // Keys moved: half at once; one node's fair share per step.
    let all_run = r.run(ResizeStrategy::AllAtOnce).unwrap();
    let moved = all_run.steps[0].movement.unwrap();
    assert!((moved.ideal - 0.5).abs() < 1e-9 && (moved.moved - 0.5).abs() < 0.03, "{moved:?}");
    let one_run = r.run(ResizeStrategy::OneAtATime).unwrap();
    let labels: Vec<&str> = one_run.steps.iter().map(|s| s.change.as_str()).collect();
    assert_eq!(labels, ["+cache-5", "+cache-6", "+cache-7", "+cache-8"]);
    for (step, n) in one_run.steps.iter().zip(5..) {
        let m = step.movement.unwrap();
        assert!((m.ideal - 1.0 / n as f64).abs() < 1e-9, "{step:?}");
        assert!(m.ratio() < 1.25, "a 160-vnode ring moves about its fair share: {step:?}");
        // Each step recovers before the next one starts.
        assert!(step.recovery.unwrap() < w.requests_per_step, "{r}");
    }
    assert!(all_run.recovery().is_some(), "{r}");
    assert_eq!(r.to_string().lines().filter(|l| l.starts_with("one-at-a-time")).count(), 1, "{r}");
}

#[test]
fn shrinking_and_replacing_nodes() {
    let w = small();
    let r = simulate_resize(&ring(), &cluster(1..=8), &cluster(1..=4), &w, &ResizeStrategy::ALL).unwrap();
    let one = r.run(ResizeStrategy::OneAtATime).unwrap();
    let labels: Vec<&str> = one.steps.iter().map(|s| s.change.as_str()).collect();
    assert_eq!(labels, ["-cache-8", "-cache-7", "-cache-6", "-cache-5"]);
    assert_eq!(r.run(ResizeStrategy::AllAtOnce).unwrap().steps[0].change, "-4 nodes");
    assert!(lowest(&r, ResizeStrategy::OneAtATime) >= lowest(&r, ResizeStrategy::AllAtOnce) + 0.08, "{r}");
    // Half the cache is gone: the cluster settles lower than it started, and a shrinking step
    // recovers to where it settles.
    let all = r.run(ResizeStrategy::AllAtOnce).unwrap();
    assert!(all.final_hit_rate() < r.steady_before - 0.03, "{r}");
    assert!(all.recovery().unwrap() < w.requests_per_step, "{r}");

    // Replace cache-4 by cache-9: add first, then remove; a fifth of the keys each time.
    let to = NodeSet::from_names(["cache-1", "cache-2", "cache-3", "cache-9"]).unwrap();
    let r = simulate_resize(&ring(), &cluster(1..=4), &to, &w, &[ResizeStrategy::OneAtATime]).unwrap();
    let steps = &r.runs[0].steps;
    assert_eq!(steps.iter().map(|s| s.change.as_str()).collect::<Vec<_>>(), ["+cache-9", "-cache-4"]);
    for s in steps {
        assert!((s.movement.unwrap().ideal - 0.2).abs() < 1e-9, "{s:?}");
    }
}

#[test]
fn weights_size_the_caches_and_reweighting_is_a_step() {
    let from = NodeSet::parse("a 1\nb 1\nc 2\n").unwrap();
    let to = NodeSet::parse("a 1\nb 2\nc 2\nd 1\n").unwrap();
    let w = small();
    let r = simulate_resize(&ring(), &from, &to, &w, &[ResizeStrategy::OneAtATime, ResizeStrategy::AllAtOnce]).unwrap();
    // Half of 25000 keys over a total weight of 4.
    assert_eq!(r.capacity_per_unit_weight, 3125);
    let labels: Vec<&str> = r.runs[0].steps.iter().map(|s| s.change.as_str()).collect();
    assert_eq!(labels, ["+d", "b weight 1→2"]);
    assert_eq!(r.runs[1].steps[0].change, "+d b weight 1→2");
    assert_eq!(r.runs[1].strategy, ResizeStrategy::AllAtOnce, "runs come in the order asked");
}

#[test]
fn same_seed_same_report_and_the_timeline_adds_up() {
    let w = small();
    let run =
        |w: &Workload| simulate_resize(&ring(), &cluster(1..=3), &cluster(1..=4), w, &ResizeStrategy::ALL).unwrap();
    let (a, b) = (run(&w), run(&w));
    assert_eq!(a, b);
    assert_eq!(a.to_string(), b.to_string());
    let c = run(&Workload { seed: 7, ..w.clone() });
    assert_ne!(a.runs, c.runs);
    for r in &a.runs {
        assert_eq!(r.timeline.last().unwrap().0, r.requests(), "{:?}", r.strategy);
        assert!(r.timeline.windows(2).all(|p| p[0].0 < p[1].0));
        assert!(r.timeline.iter().all(|&(_, h)| (0.0..=1.0).contains(&h)));
        let lowest = r.timeline.iter().map(|t| t.1).fold(1.0, f64::min);
        assert_eq!(lowest, r.lowest());
    }
    let total: usize = a.runs.iter().map(|r| r.requests()).sum();
    assert!(a.requests as usize > total + w.requests_per_step, "warm-up and steady measure count too");
}

#[test]
fn the_markdown_section_has_a_row_per_strategy() {
    let r = simulate_resize(&ring(), &cluster(1..=3), &cluster(1..=4), &small(), &ResizeStrategy::ALL).unwrap();
    let md = resize_section(&r);
    assert!(md.starts_with("## Resizing a cache cluster: 3 -> 4 nodes"), "{md}");
    for s in ResizeStrategy::ALL {
        assert!(md.contains(&format!("| {} | {} |", s.name(), s.description())), "{md}");
    }
    let summary = r.summary();
    assert_eq!(summary.lines().count(), 4);
    for (line, s) in summary.lines().zip(ResizeStrategy::ALL) {
        assert!(line.starts_with(s.name()), "{line}");
        assert_eq!(line.matches('%').count(), 1, "{line}");
        let pct = format!("{:.1}%", 100.0 * r.run(s).unwrap().lowest());
        assert!(line.contains(&pct), "{line} lacks {pct}");
    }
}

#[test]
fn other_algorithms_resize_as_they_can() {
    let w = small();
    // Jump drops only its last bucket: shrinking goes from the last node back.
    let jump = RouterSpec::new(Algorithm::Jump);
    let r = simulate_resize(&jump, &cluster(1..=5), &cluster(1..=3), &w, &ResizeStrategy::ALL).unwrap();
    assert_eq!(r.run(ResizeStrategy::OneAtATime).unwrap().steps.len(), 2);
    // ... and cannot drop a middle one.
    let middle = NodeSet::from_names(["cache-1", "cache-3"]).unwrap();
    let err = simulate_resize(&jump, &cluster(1..=3), &middle, &w, &[ResizeStrategy::AllAtOnce]).unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    // Modulo moves almost everything even one node at a time: no strategy but fallback helps.
    let modulo = RouterSpec::new(Algorithm::Modulo);
    let r = simulate_resize(&modulo, &cluster(1..=4), &cluster(1..=5), &w, &ResizeStrategy::ALL).unwrap();
    assert!(r.run(ResizeStrategy::AllAtOnce).unwrap().steps[0].movement.unwrap().moved > 0.75, "{r}");
    assert!(lowest(&r, ResizeStrategy::AllAtOnce) < r.steady_before - 0.3, "{r}");
    assert!(lowest(&r, ResizeStrategy::Fallback) > r.steady_before - 0.1, "{r}");
}

#[test]
fn bad_input_is_a_typed_error() {
    let (a, b) = (cluster(1..=4), cluster(1..=8));
    let w = Workload::default();
    let err = |w: &Workload, from: &NodeSet, to: &NodeSet, s: &[ResizeStrategy]| {
        simulate_resize(&ring(), from, to, w, s).unwrap_err().to_string()
    };
    let all = &ResizeStrategy::ALL[..];
    assert!(err(&w, &a, &cluster(1..=4), all).contains("nothing to resize"));
    assert!(err(&w, &a, &b, &[]).contains("no strategy"));
    assert!(err(&Workload { keys: 0, ..w.clone() }, &a, &b, all).contains("keys"));
    assert!(err(&Workload { keys: 10, cache_fraction: 0.1, ..w.clone() }, &a, &b, all).contains("would cache no key"));
    for f in [0.0, -0.5, 1.5, f64::NAN] {
        assert!(err(&Workload { cache_fraction: f, ..w.clone() }, &a, &b, all).contains("cache fraction"), "{f}");
    }
    assert!(err(&Workload { window: 0, ..w.clone() }, &a, &b, all).contains("window"));
    assert!(err(&Workload { window: 300_000, ..w.clone() }, &a, &b, all).contains("window"));
    assert!(err(&Workload { requests_per_step: 0, ..w.clone() }, &a, &b, all).contains("requests per step"));
    let huge = Workload { requests_per_step: 1_000_000_000, window: 1_000_000, ..w.clone() };
    assert!(err(&huge, &a, &b, all).contains("above the cap"));
    assert!(err(&Workload { zipf_s: f64::NAN, ..w.clone() }, &a, &b, all).contains("Zipf exponent"));
}

#[test]
fn workload_specs_and_strategy_names_parse() {
    assert_eq!(Workload::parse_spec("zipf:0.99").unwrap(), 0.99);
    assert_eq!(Workload::parse_spec("zipf:0").unwrap(), 0.0);
    for bad in ["", "zipf", "zipf:", "uniform", "zipf:x", "zipf:-1", "zipf:11", "zipf:nan", "zipf:inf", "Zipf:1"] {
        let e = Workload::parse_spec(bad).unwrap_err().to_string();
        assert!(e.contains("workload") && e.contains("zipf:S"), "{bad}: {e}");
    }
    for s in ResizeStrategy::ALL {
        assert_eq!(s.name().parse::<ResizeStrategy>().unwrap(), s);
    }
    let e = ResizeStrategy::from_name("gradual").unwrap_err().to_string();
    assert!(e.contains("all-at-once, one-at-a-time, warm-first, fallback"), "{e}");
}

/// A proptest draw that once failed: one node replaced by another moves what the new node owns
/// (0.42 of the keys on this ring), less than the fair half, and that is correct.
#[test]
fn replacing_the_only_node_moves_what_the_new_one_owns() {
    let (from, to) = (NodeSet::parse("n3 1\n").unwrap(), NodeSet::parse("n0 1\n").unwrap());
    let w = Workload { keys: 3000, requests_per_step: 3000, window: 300, ..Workload::default() };
    let r = simulate_resize(&ring(), &from, &to, &w, &ResizeStrategy::ALL).unwrap();
    let steps = r.run(ResizeStrategy::OneAtATime).unwrap().steps.clone();
    assert_eq!(steps.len(), 2);
    let added = steps[0].movement.unwrap();
    assert_eq!(added.ideal, 0.5);
    assert!(added.moved > 0.25 && added.moved < 0.75, "{added:?}");
    // Removing n3 then moves everything it still owned: all that n0 did not take.
    let removed = steps[1].movement.unwrap();
    assert!((added.moved + removed.moved - 1.0).abs() < 1e-9, "{added:?} {removed:?}");
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Two node lists drawn from eight names with weights 1 to 3.
    fn lists() -> impl Strategy<Value = (NodeSet, NodeSet)> {
        let list = proptest::collection::btree_map(0u8..8, 1u8..=3, 1..6);
        (list.clone(), list).prop_map(|(a, b)| {
            let set = |m: std::collections::BTreeMap<u8, u8>| {
                NodeSet::parse(&m.iter().map(|(n, w)| format!("n{n} {w}\n")).collect::<String>()).unwrap()
            };
            (set(a), set(b))
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Any two lists: one step per change, the steps' ideal movements add up to at least
        /// the whole change's, hit rates are rates, and the timeline covers every request.
        #[test]
        fn any_resize_is_consistent((from, to) in lists(), seed in any::<u64>()) {
            let w = Workload { keys: 3000, requests_per_step: 3000, window: 300, seed, ..Workload::default() };
            let changed = from != to;
            let result = simulate_resize(&ring(), &from, &to, &w, &ResizeStrategy::ALL);
            let r = match result {
                Err(Error::InvalidParameter { name: "nodes", .. }) if !changed => return Ok(()),
                Err(Error::InvalidParameter { name: "nodes", .. }) => {
                    // Only the order differs.
                    let names = |s: &NodeSet| {
                        let mut v: Vec<(String, u64)> =
                            s.iter().map(|(_, n)| (n.name().to_owned(), n.weight().to_bits())).collect();
                        v.sort();
                        v
                    };
                    prop_assert_eq!(names(&from), names(&to));
                    return Ok(());
                }
                other => other.unwrap(),
            };
            let changes = to.iter().filter(|(_, n)| from.id_of(n.name()).map(|id| from.weight(id)) != Some(n.weight())).count()
                + from.iter().filter(|(_, n)| to.id_of(n.name()).is_none()).count();
            let one = r.run(ResizeStrategy::OneAtATime).unwrap();
            prop_assert_eq!(one.steps.len(), changes);
            let whole = r.run(ResizeStrategy::AllAtOnce).unwrap().steps[0].movement.unwrap();
            let sum: f64 = one.steps.iter().map(|s| s.movement.unwrap().ideal).sum();
            prop_assert!(sum >= whole.ideal - 1e-9, "{} < {}", sum, whole.ideal);
            for run in &r.runs {
                prop_assert_eq!(run.timeline.last().unwrap().0, run.requests());
                for s in &run.steps {
                    prop_assert!(0.0 <= s.lowest && s.lowest <= s.hit_rate && s.hit_rate <= 1.0, "{:?}", s);
                    prop_assert!(s.requests >= w.requests_per_step);
                    if let Some(m) = s.movement {
                        // A ring moves what the changed nodes own, not their fair share: with 160
                        // points per node a share is within about 8% (one standard deviation) of
                        // fair, so half of the ideal is six deviations away, never reached by
                        // chance; a fixed margin was (two nodes, one owning 0.42).
                        prop_assert!(m.moved >= 0.5 * m.ideal && m.moved <= 1.0, "{:?}", m);
                    }
                }
            }
        }
    }
}

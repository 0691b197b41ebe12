//! The recommendation: the one function that turns the sweep's cells into the table `cargo
//! bench` ends with (and REPORT.md quotes). To change how the answer is computed or shown,
//! change [`recommendation_table`] only.

use std::fmt::Write as _;

use hashroute::analysis::recommend::{self, DEFAULT_MAX_LOAD};

use crate::config::Run;
use crate::sweep_run::Sweep;

/// The recommendation table for every node count of the run, from the sweep's balance cells and
/// lookup timings (`recommend::from_cells`, on the vnode grid).
pub(crate) fn recommendation_table(sweep: &Sweep, run: &Run) -> String {
    let lookups: Vec<(String, usize, f64)> =
        sweep.lookups.iter().map(|l| (l.candidate.clone(), l.nodes, l.single_ns)).collect();
    let recs: Vec<recommend::Recommendation> = run
        .node_counts
        .iter()
        .filter_map(|&n| recommend::from_cells(n, DEFAULT_MAX_LOAD, &sweep.balance, &lookups).ok())
        .collect();
    let mut s = format!(
        "recommendation ({} sweep): balance target = tail over random clusters of max/mean <= {DEFAULT_MAX_LOAD:.2}\n",
        run.mode.name()
    );
    let _ = writeln!(
        s,
        "{:>6}  {:<12} {:>9} {:>12} {:>10}  {:<14}  how sure",
        "nodes", "smallest V", "tail", "memory B", "lookup ns", "cheapest"
    );
    for r in &recs {
        let (v, tail, mem, ns, sure) = match &r.ring {
            Some(x) => (
                format!("ring V={}", x.vnodes.unwrap_or(0)),
                format!("{} {:.3}", x.balance.tail, x.balance.tail_max_over_mean),
                x.balance.memory_bytes.to_string(),
                x.lookup_ns.map_or("-".into(), |n| format!("{n:.1}")),
                format!("exact loads, {} clusters", x.balance.clusters),
            ),
            None => (format!("> {}", r.searched_up_to), "-".into(), "-".into(), "-".into(), "no grid V met it".into()),
        };
        let cheapest = r.cheapest.clone().unwrap_or_else(|| "-".into());
        let _ = writeln!(s, "{:>6}  {v:<12} {tail:>9} {mem:>12} {ns:>10}  {cheapest:<14}  {sure}", r.node_count);
    }
    s.push_str("(cheapest = least memory, then fastest lookup, among consistent routers meeting the target; jump cannot\n remove an arbitrary node. `hashroute recommend --node-count N` runs the same code with bisection on V.)");
    s
}

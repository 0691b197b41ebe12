//! The recommendation `cargo bench` ends with (and REPORT.md quotes): the library's
//! `hashroute_analysis::recommend`, the same code as `hashroute recommend`, for the user's own
//! node list (`HASHROUTE_NODES=FILE`) or for representative node counts, with the constraints
//! given in the environment:
//!
//! | variable | meaning | CLI twin |
//! |---|---|---|
//! | `HASHROUTE_NODES` | a nodes file (`NAME [WEIGHT]` per line): exact loads of that cluster | `--nodes-file` |
//! | `HASHROUTE_MAX_LOAD` | targets, e.g. `1.05,1.10,1.25,1.50` (the default) | `--max-load` |
//! | `HASHROUTE_REQUIRE` | `remove-any,weights,replicas` or `none` (default `remove-any`) | `--require` |
//! | `HASHROUTE_COMPATIBLE_WITH` | a Ketama client, `redis-slots`, `maglev-envoy` | `--compatible-with` |
//! | `HASHROUTE_MAX_MEMORY` | bytes | `--max-memory` |
//! | `HASHROUTE_MAX_LOOKUP_NS` | ns | `--max-lookup-ns` |
//! | `HASHROUTE_PREFER` | `latency` (default), `memory` or `movement` | `--prefer` |
//! | `HASHROUTE_SEED` | seed of the random clusters | `--seed` |
//!
//! A bad value ends the bench with one line naming the variable and exit status 2.

use std::fmt::Write as _;

use hashroute::NodeSet;
use hashroute_analysis::{recommend, Prefer, Recommendation, Request, Requirement};

use crate::config::Run;
use crate::report::common::Mode;

/// Node counts answered when no node list is given (sizes the sweep also measures).
const NODE_COUNTS: &[usize] = &[10, 100, 1000];

/// The recommendation text for this run: computed once, printed last and quoted in REPORT.md.
pub(crate) fn recommendation_text(run: &Run) -> String {
    match recommendations(run) {
        Ok(recs) => format_all(&recs, run),
        Err(e) => {
            eprintln!("vnodes: {e}");
            std::process::exit(2);
        }
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// `name` parsed, or a one-line error naming the variable.
fn parsed<T: std::str::FromStr>(name: &str) -> Result<Option<T>, String> {
    env(name).map(|v| v.trim().parse::<T>().map_err(|_| format!("{name}={v:?} is not a valid value"))).transpose()
}

/// The request every recommendation of this run shares, for `base` (a count or a node list).
fn configure(base: Request, run: &Run) -> Result<Request, String> {
    let mut req = base;
    if let Some(t) = env("HASHROUTE_MAX_LOAD") {
        let targets: Result<Vec<f64>, _> = t.split(',').map(|x| x.trim().parse::<f64>()).collect();
        req = req.targets(&targets.map_err(|_| format!("HASHROUTE_MAX_LOAD={t:?}: not a list of numbers"))?);
    }
    if let Some(r) = env("HASHROUTE_REQUIRE") {
        req = req.require(&Requirement::parse_list(&r).map_err(|e| format!("HASHROUTE_REQUIRE: {e}"))?);
    }
    if let Some(c) = env("HASHROUTE_COMPATIBLE_WITH") {
        req = req.compatible_with(&c);
    }
    if let Some(m) = parsed::<u64>("HASHROUTE_MAX_MEMORY")? {
        req = req.max_memory(m);
    }
    if let Some(ns) = parsed::<f64>("HASHROUTE_MAX_LOOKUP_NS")? {
        req = req.max_lookup_ns(ns);
    }
    if let Some(p) = parsed::<Prefer>("HASHROUTE_PREFER")? {
        req = req.prefer(p);
    }
    if let Some(seed) = parsed::<u64>("HASHROUTE_SEED")? {
        req = req.seed(seed);
    }
    Ok(match run.mode {
        Mode::Smoke | Mode::Quick => req.smoke(),
        Mode::Full => req.full(true),
        Mode::Default => req,
    })
}

fn recommendations(run: &Run) -> Result<Vec<Recommendation>, String> {
    if let Some(path) = env("HASHROUTE_NODES") {
        let text = std::fs::read_to_string(&path).map_err(|e| format!("HASHROUTE_NODES={path}: {e}"))?;
        let nodes = NodeSet::parse(&text).map_err(|e| format!("HASHROUTE_NODES={path}: {e}"))?;
        let req = configure(Request::for_nodes(nodes), run)?;
        return Ok(vec![recommend(&req).map_err(|e| e.to_string())?]);
    }
    let counts: &[usize] = if run.mode == Mode::Smoke { &[8] } else { NODE_COUNTS };
    counts.iter().map(|&n| recommend(&configure(Request::for_node_count(n), run)?).map_err(|e| e.to_string())).collect()
}

/// Per (cluster, target): the ring's V, the token ring's count and the answer with its rule, then
/// every candidate that meets the target and the constraints with its lookup time, memory and
/// movement (moved+1, moved-1) — or the full verdict list for a node list.
fn format_all(recs: &[Recommendation], run: &Run) -> String {
    if env("HASHROUTE_NODES").is_some() {
        return recs.iter().map(ToString::to_string).collect();
    }
    let mut s =
        format!("recommendation ({} run; {})\n", run.mode.name(), recs.first().map_or("", |r| r.constraints.as_str()));
    for r in recs {
        for a in &r.answers {
            let token = a.token_ring.as_ref().and_then(|t| t.vnodes).map_or("-".into(), |v| format!("{v} tokens"));
            let _ = writeln!(
                s,
                "\n{} nodes, target {:.2}: ring V={} ({}); token ring {token}\n  answer: {} — {}",
                r.node_count,
                a.max_load,
                a.ring.vnodes.unwrap_or(0),
                a.ring.evidence,
                a.answer.as_deref().unwrap_or("none"),
                a.rule
            );
            s += &a.eligible_table();
        }
    }
    s.push_str(
        "\n(moved+1 / moved-1: keys moved by adding / removing one node, as a multiple of the ideal 1/N; \
         `hashroute recommend --node-count N` shows every verdict and why the others were rejected, \
         --prefer memory|movement changes the rule; HASHROUTE_NODES=FILE answers for your own node list)",
    );
    s
}

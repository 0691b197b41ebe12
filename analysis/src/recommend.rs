//! Which algorithm, how many vnodes: the answer `cargo bench` prints and `hashroute recommend`
//! gives, from the same code. It reads one way: **measure** (`measure.rs`: every candidate's
//! balance, memory, lookup time and movement; the ring's and the token ring's smallest V meeting
//! each target) → **decide** (`decide.rs`: which rows meet the target and the constraints, and
//! the rule that picks among them) → **present** (`present.rs`).
//!
//! For each balance target the ring's vnode count is first **aimed** with the closed form
//! ([`ring_vnodes_for`](crate::ring_vnodes_for)) and then **confirmed** on exact arc loads,
//! bisecting on V around the estimate: over random clusters (as many as the effort's point
//! budget allows; the quoted tail quantile is the one that cluster count supports — p99 needs
//! 100 — and is said), or, for a given node list, on that very cluster. Where V × N exceeds the
//! ring's point cap the closed-form V is given, marked as an estimate. The allocated token ring
//! stands beside it (16 tokens per node, or the fewest that meet the target). Every other
//! algorithm of the registry is judged on the same target: exactly (Ketama, slots, Maglev,
//! modulo, the proxies) or by sampled keys with the sampling noise stated, then filtered by the
//! user's constraints; the rule ([`Prefer`]) picks among the survivors, and each rejection says
//! why.

use hashroute::{Algorithm, Result};

use crate::decide::{algorithm_failure, pick, verdict};
use crate::measure::Measurer;
use crate::request::{Cluster, Prefer, Request};

/// One candidate's verdict on one target.
#[derive(Clone, Debug)]
pub struct Verdict {
    /// Candidate name (`ring-v1380`, `token-ring-v16`, `maglev`, …).
    pub candidate: String,
    /// Its algorithm.
    pub algorithm: Algorithm,
    /// Vnodes per node for rings (and Ketama's fixed 160), tokens per node for token rings.
    pub vnodes: Option<u64>,
    /// The measured (or, when `estimate_only`, not measured: NaN) busiest-node load over the
    /// mean.
    pub max_over_mean: f64,
    /// How `max_over_mean` was obtained: quantile, clusters, exact or sampled with its noise.
    pub evidence: String,
    /// Router memory in bytes, when built.
    pub memory_bytes: Option<usize>,
    /// Single-key lookup time in ns (hash included), when measured.
    pub lookup_ns: Option<f64>,
    /// Keys moved by adding one node, as a multiple of the ideal (1.0 is the minimum).
    pub moved_plus: Option<f64>,
    /// Keys moved by removing one node (a middle one; the last one for routers that can only
    /// drop their last), as a multiple of the ideal.
    pub moved_minus: Option<f64>,
    /// How the movement was measured (`exact`, `sampled K keys`, or why not).
    pub movement: String,
    /// Whether it meets the target (a sampled router also when its spread is within sampling
    /// noise of a perfect router's).
    pub meets: bool,
    /// Why it is not eligible, if it is not: a failed target or an unmet constraint.
    pub rejected: Option<String>,
    /// True when the figure is the closed-form estimate only (the ring would exceed the point
    /// cap, so nothing was built).
    pub estimate_only: bool,
}

/// How the busiest node fares after the cluster grows (node lists only).
#[derive(Clone, Debug, PartialEq)]
pub struct GrowSpread {
    /// `+1`, `+25%`, …
    pub label: String,
    /// Nodes added.
    pub added: usize,
    /// Random additions simulated.
    pub trials: usize,
    /// Median over the trials of the grown cluster's max/mean.
    pub median_max_over_mean: f64,
    /// The worst trial.
    pub worst_max_over_mean: f64,
}

/// The answer for one balance target.
#[derive(Clone, Debug)]
pub struct TargetAnswer {
    /// The target: busiest node's load over the mean at most this.
    pub max_load: f64,
    /// The closed-form vnode count for the quoted quantile (the estimate the search started
    /// from).
    pub closed_form_vnodes: u64,
    /// The ring's answer: the smallest V confirmed on exact loads, or the closed-form V marked
    /// `estimate_only` when not buildable.
    pub ring: Verdict,
    /// The allocated token ring: 16 tokens per node, or the fewest that meet the target (none
    /// when the allocation could not be built here).
    pub token_ring: Option<Verdict>,
    /// The ring at that V after the cluster grows (node lists only).
    pub grow: Vec<GrowSpread>,
    /// Every other algorithm's verdict.
    pub others: Vec<Verdict>,
    /// The eligible candidate the rule picked, if any.
    pub answer: Option<String>,
    /// Which rule picked it, as text (with the fallback when a figure was not measured).
    pub rule: String,
}

impl TargetAnswer {
    /// Every verdict: the ring, the token ring, then the others.
    pub fn verdicts(&self) -> impl Iterator<Item = &Verdict> + '_ {
        std::iter::once(&self.ring).chain(&self.token_ring).chain(&self.others)
    }
}

/// The recommendation: one [`TargetAnswer`] per target.
#[derive(Clone, Debug)]
pub struct Recommendation {
    /// Node count.
    pub node_count: usize,
    /// What was measured: random clusters (with the seed) or the given node list.
    pub cluster: String,
    /// The constraints and the rule, as text.
    pub constraints: String,
    /// The rule that picks the answers.
    pub prefer: Prefer,
    /// One answer per target, in the order given.
    pub answers: Vec<TargetAnswer>,
}

/// Recommends a ring vnode count and an algorithm for every target of `request`. Cost: seconds
/// to a minute at the default effort (each ring confirmation builds at most 20 M points, at
/// least one cluster), minutes with [`Request::full`] (400 M).
///
/// # Errors
/// [`Error::InvalidParameter`](hashroute::Error::InvalidParameter) for a node count outside
/// 1..=1,000,000, a target not above 1.0, an unknown compatibility name; node-set and build
/// errors of the candidates are reported as rejections, not errors.
pub fn recommend(request: &Request) -> Result<Recommendation> {
    recommend_with_progress(request, &|_| {})
}

/// How far [`recommend_with_progress`] is: `done` of `total` steps finished (one per algorithm
/// measured, then one per target), `doing` names the step starting now.
#[derive(Clone, Copy, Debug)]
pub struct Progress<'a> {
    /// Steps finished.
    pub done: usize,
    /// Steps in all.
    pub total: usize,
    /// The step starting now.
    pub doing: &'a str,
}

/// [`recommend`], calling `progress` before each step (for a progress bar: a cluster of
/// thousands of nodes takes tens of seconds). Same result, same errors.
///
/// # Errors
/// As [`recommend`].
pub fn recommend_with_progress(request: &Request, progress: &dyn Fn(Progress<'_>)) -> Result<Recommendation> {
    request.validate()?;
    let n = request.node_count();
    let mut measure = Measurer::new(request);
    let others = crate::sweep::candidates()
        .iter()
        .filter(|c| !matches!(c.algorithm, Algorithm::Ring | Algorithm::TokenRing))
        .count();
    let total = others + request.targets.len();
    let done = std::cell::Cell::new(0);
    // `fixed` asks each algorithm's standing just before measuring it: the step boundary.
    let fixed = measure.fixed(|a| {
        progress(Progress { done: done.get().min(others), total, doing: &format!("measuring {a}") });
        done.set(done.get() + 1);
        algorithm_failure(request, a)
    })?;
    let mut answers = Vec::with_capacity(request.targets.len());
    for (i, &target) in request.targets.iter().enumerate() {
        progress(Progress { done: others + i, total, doing: &format!("ring vnodes for max/mean {target}") });
        let (ring, estimate) = measure.ring(target)?;
        let token =
            if algorithm_failure(request, Algorithm::TokenRing).is_none() { measure.token_ring(target)? } else { None };
        let grow = if ring.estimate_only { Vec::new() } else { measure.grow_spread(ring.vnodes.unwrap_or(1))? };
        let closed_form_vnodes = if ring.estimate_only { ring.vnodes.unwrap_or(estimate) } else { estimate };
        let ring = verdict(request, &ring, target);
        let token_ring = token.map(|t| verdict(request, &t, target));
        let others: Vec<_> = fixed.iter().map(|m| verdict(request, m, target)).collect();
        let all: Vec<_> = std::iter::once(&ring).chain(&token_ring).chain(&others).collect();
        let (answer, rule) = pick(&all, request.prefer);
        answers.push(TargetAnswer {
            max_load: target,
            closed_form_vnodes,
            ring,
            token_ring,
            grow,
            others,
            answer,
            rule,
        });
    }
    let cluster = match &request.cluster {
        Cluster::Count(_) => format!("random clusters of {n} nodes (seed {:#x})", request.seed),
        Cluster::Nodes(_) => format!("the given {n} nodes"),
    };
    Ok(Recommendation {
        node_count: n,
        cluster,
        constraints: request.constraints_text(),
        prefer: request.prefer,
        answers,
    })
}

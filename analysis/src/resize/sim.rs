//! The simulation: the warm start and each strategy's steps.

use hashroute::{AnyRouter, Error, Result, Router, RouterSpec};

use super::plan::Plan;
use super::{
    ResizeReport, ResizeStep, ResizeStrategy, StrategyRun, Workload, RECOVERY_MARGIN, RECOVERY_WINDOWS, SETTLED_TAIL,
    TAIL_LIMIT, WARMUP_LIMIT,
};
use crate::cache::{key_bytes, Lru, Zipf};
use crate::partition::Movement;
use crate::rng::SplitMix64;

/// Keys sampled for the movement of routers without an exact division of the key space.
const MOVEMENT_SAMPLE: usize = 100_000;

/// The caches and the position in the request stream.
#[derive(Clone)]
struct State {
    caches: Vec<Lru>,
    rng: SplitMix64,
}

/// Where a request goes during a phase.
#[derive(Clone, Copy)]
enum Route<'a> {
    /// To its owner.
    Plain(&'a [u32]),
    /// To its owner, and also to its future owner (whose cache it fills).
    Shadow { serve: &'a [u32], future: &'a [u32] },
    /// To its owner; on a miss, its previous owner's cache is read.
    Fallback { serve: &'a [u32], previous: &'a [u32] },
}

/// The workload's fixed parts: the key distribution and each cache slot's capacity.
pub(super) struct Simulator<'a> {
    zipf: Zipf,
    capacity: Vec<usize>,
    workload: &'a Workload,
    plan: &'a Plan,
    capacity_per_unit_weight: usize,
}

impl<'a> Simulator<'a> {
    /// Sizes the caches: `cache_fraction × keys × w / W` keys for a node of weight `w`; checks
    /// that `wanted` stays under [`Workload::MAX_REQUESTS`] before building anything large.
    pub(super) fn new(plan: &'a Plan, workload: &'a Workload, wanted: &[ResizeStrategy]) -> Result<Simulator<'a>> {
        let per_weight = workload.cache_fraction * workload.keys as f64 / plan.weight_before;
        let capacity: Vec<usize> = plan.slot_weights.iter().map(|w| (per_weight * w).round() as usize).collect();
        if let Some(i) = capacity.iter().position(|&c| c == 0) {
            return Err(Error::InvalidParameter {
                name: "cache fraction",
                reason: format!(
                    "node {} would cache no key ({} of {} keys over a total weight of {}): raise the keys or the \
                     cache fraction",
                    plan.slot_names[i], workload.cache_fraction, workload.keys, plan.weight_before
                ),
            });
        }
        let cached_before = plan.slots_of(plan.first()).iter().map(|&s| capacity[s as usize]).sum();
        check_cost(plan, workload, cached_before, wanted)?;
        Ok(Simulator {
            zipf: Zipf::new(workload.keys, workload.zipf_s),
            capacity,
            workload,
            plan,
            capacity_per_unit_weight: per_weight.round() as usize,
        })
    }

    /// Each key id's cache slot under `router`.
    fn owners(&self, router: &AnyRouter) -> Vec<u32> {
        let slots = self.plan.slots_of(router);
        (0..self.workload.keys as u32).map(|k| slots[router.route(&key_bytes(k)).index()]).collect()
    }

    /// What the first node list caches in all (the slots of later nodes stay empty until then).
    fn cached_before(&self) -> usize {
        self.cached_by(self.plan.first())
    }

    /// What the nodes of `router` cache in all.
    fn cached_by(&self, router: &AnyRouter) -> usize {
        self.plan.slots_of(router).iter().map(|&s| self.capacity[s as usize]).sum()
    }

    /// Empty caches, run until each is full (or holds every key it owns), at most
    /// [`WARMUP_LIMIT`] × what they cache, then `requests_per_step` requests measured: the warm
    /// state, the steady hit rate and the requests it took.
    fn warm_start(&self, owners: &[u32]) -> (State, f64, usize) {
        let mut state = State {
            caches: self.capacity.iter().map(|&c| Lru::new(c)).collect(),
            rng: SplitMix64::new(self.workload.seed),
        };
        let mut owned = vec![0usize; self.capacity.len()];
        owners.iter().for_each(|&o| owned[o as usize] += 1);
        let full: Vec<usize> = self.capacity.iter().zip(&owned).map(|(&c, &o)| c.min(o)).collect();
        let limit = WARMUP_LIMIT * self.cached_before();
        let chunk = self.cached_before().max(1);
        let mut warmup = 0;
        while warmup < limit && state.caches.iter().zip(&full).any(|(c, &f)| c.len() < f) {
            self.phase(&mut state, Route::Plain(owners), chunk, 1);
            warmup += chunk;
        }
        let n = self.workload.requests_per_step;
        let hits = self.phase(&mut state, Route::Plain(owners), n, 1)[0].1;
        (state, hits as f64 / n as f64, warmup + n)
    }

    /// Serves `n` requests; returns `(requests, hits)` for each of `windows` windows of nearly
    /// equal length.
    fn phase(&self, state: &mut State, route: Route<'_>, n: usize, windows: usize) -> Vec<(usize, usize)> {
        let mut out = Vec::with_capacity(windows);
        let mut done = 0;
        for w in 0..windows {
            let end = (w + 1) * n / windows;
            let mut hits = 0;
            for _ in done..end {
                let k = self.zipf.sample(&mut state.rng);
                hits += usize::from(serve(&mut state.caches, route, k));
            }
            out.push((end - done, hits));
            done = end;
        }
        out
    }
}

/// One request for key `k`: whether a cache answered it.
#[inline]
fn serve(caches: &mut [Lru], route: Route<'_>, k: u32) -> bool {
    match route {
        Route::Plain(owners) => caches[owners[k as usize] as usize].access(k),
        Route::Shadow { serve, future } => {
            let (o, f) = (serve[k as usize] as usize, future[k as usize] as usize);
            if f != o {
                caches[f].access(k);
            }
            caches[o].access(k)
        }
        Route::Fallback { serve, previous } => {
            let (o, p) = (serve[k as usize] as usize, previous[k as usize] as usize);
            // The owner is filled either way: from the previous owner's copy or the database.
            caches[o].access(k) || (p != o && caches[p].contains(k) && caches[p].access(k))
        }
    }
}

/// What every strategy shares: the warm start, the end routers' owners and the movement
/// between them.
struct Shared {
    start: State,
    steady: f64,
    first: Vec<u32>,
    last: Vec<u32>,
    movement: Movement,
}

/// Runs every strategy of `wanted` on `plan`.
pub(super) fn run(
    plan: &Plan,
    sim: &Simulator<'_>,
    wanted: &[ResizeStrategy],
    spec: &RouterSpec,
) -> Result<ResizeReport> {
    let first = sim.owners(plan.first());
    let (start, steady, mut requests) = sim.warm_start(&first);
    let last = sim.owners(plan.last());
    let movement = crate::movement(plan.first(), plan.last(), MOVEMENT_SAMPLE)?;
    let shared = Shared { start, steady, first, last, movement };
    let mut runs = Vec::new();
    for &strategy in wanted {
        let run = run_strategy(plan, sim, &shared, strategy)?;
        requests += run.requests();
        runs.push(run);
    }
    Ok(ResizeReport {
        router: describe(spec),
        nodes_before: plan.first().node_count(),
        nodes_after: plan.last().node_count(),
        workload: sim.workload.clone(),
        capacity_per_unit_weight: sim.capacity_per_unit_weight,
        steady_before: steady,
        runs,
        requests: requests as u64,
    })
}

/// One strategy's steps, from the shared warm start.
fn run_strategy(plan: &Plan, sim: &Simulator<'_>, shared: &Shared, strategy: ResizeStrategy) -> Result<StrategyRun> {
    let mut state = shared.start.clone();
    let mut s = Stepper { sim, state: &mut state, timeline: Vec::new(), steps: Vec::new(), level: shared.steady };
    let (first, last, movement) = (&shared.first[..], &shared.last[..], Some(shared.movement));
    let shrinks = sim.cached_by(plan.last()) < sim.cached_by(plan.first());
    match strategy {
        ResizeStrategy::AllAtOnce => s.step(&plan.all_label, movement, Route::Plain(last), shrinks, true),
        ResizeStrategy::OneAtATime => {
            for (i, label) in plan.labels.iter().enumerate() {
                let (a, b) = (&plan.routers[i], &plan.routers[i + 1]);
                let is_last = i + 1 == plan.labels.len();
                let owners = if is_last { last.to_vec() } else { sim.owners(b) };
                let shrinks = sim.cached_by(b) < sim.cached_by(a);
                let movement = Some(crate::movement(a, b, MOVEMENT_SAMPLE)?);
                s.step(label, movement, Route::Plain(&owners), shrinks, is_last);
            }
        }
        ResizeStrategy::WarmFirst => {
            let warm = Route::Shadow { serve: first, future: last };
            s.step(&format!("warm {}", plan.all_label), None, warm, shrinks, false);
            s.step(&plan.all_label, movement, Route::Plain(last), shrinks, true);
        }
        ResizeStrategy::Fallback => {
            let route = Route::Fallback { serve: last, previous: first };
            s.step(&plan.all_label, movement, route, shrinks, true);
        }
    }
    Ok(StrategyRun { strategy, steps: s.steps, timeline: s.timeline })
}

/// Refuses a run above [`Workload::MAX_REQUESTS`] before doing any of it.
fn check_cost(plan: &Plan, workload: &Workload, cached_before: usize, wanted: &[ResizeStrategy]) -> Result<()> {
    let per_step = workload.requests_per_step as u64;
    let warmup = (WARMUP_LIMIT as u64).saturating_mul(cached_before as u64).saturating_add(per_step);
    let steps: u64 = wanted
        .iter()
        .map(|s| match s {
            ResizeStrategy::AllAtOnce | ResizeStrategy::Fallback => 1,
            ResizeStrategy::WarmFirst => 2,
            ResizeStrategy::OneAtATime => plan.labels.len() as u64,
        })
        .sum();
    let tails = (wanted.len() * TAIL_LIMIT) as u64;
    let total = warmup.saturating_add((steps + tails).saturating_mul(per_step));
    if total > Workload::MAX_REQUESTS {
        return Err(Error::InvalidParameter {
            name: "requests per step",
            reason: format!(
                "the run could simulate {total} requests, above the cap of {}: fewer requests per step, keys or steps",
                Workload::MAX_REQUESTS
            ),
        });
    }
    Ok(())
}

/// Runs steps one after the other on one state, recording the timeline.
struct Stepper<'s, 'a> {
    sim: &'s Simulator<'a>,
    state: &'s mut State,
    timeline: Vec<(usize, f64)>,
    steps: Vec<ResizeStep>,
    /// The level the next step must come back to: the steady rate, then each step's settled
    /// rate.
    level: f64,
}

impl Stepper<'_, '_> {
    /// Serves one step's requests with `route`. A step that `shrinks` the cache must come back
    /// to the lower of the level before it and its settled level; any other, to the level
    /// before it. The `last` step goes on past its requests, window by window, until it has
    /// recovered (at most [`TAIL_LIMIT`] more steps' worth).
    fn step(&mut self, change: &str, movement: Option<Movement>, route: Route<'_>, shrinks: bool, last: bool) {
        let w = self.sim.workload;
        let count = (w.requests_per_step / w.window).max(1);
        let mut windows = self.sim.phase(self.state, route, w.requests_per_step, count);
        let tail = &windows[windows.len() - (SETTLED_TAIL * count as f64).ceil().max(1.0) as usize..];
        let settled = hit_rate(tail);
        let target = if shrinks { self.level.min(settled) } else { self.level } - RECOVERY_MARGIN;
        // The first run of RECOVERY_WINDOWS windows back at the target, together: one window
        // alone is too noisy to call it.
        let recovered =
            |ws: &[(usize, usize)]| ws.windows(RECOVERY_WINDOWS.min(ws.len())).position(|run| hit_rate(run) >= target);
        if last {
            let window = w.requests_per_step / count;
            let limit = windows.len() + TAIL_LIMIT * count;
            while recovered(&windows).is_none() && windows.len() < limit {
                windows.extend(self.sim.phase(self.state, route, window, 1));
            }
        }
        let recovery = recovered(&windows).map(|i| windows[..i].iter().map(|w| w.0).sum());
        let mut done = self.timeline.last().map_or(0, |t| t.0);
        for &(r, h) in &windows {
            done += r;
            self.timeline.push((done, h as f64 / r as f64));
        }
        self.level = settled;
        self.steps.push(ResizeStep {
            change: change.to_owned(),
            movement,
            requests: windows.iter().map(|w| w.0).sum(),
            hit_rate: hit_rate(&windows),
            lowest: windows.iter().map(|&(r, h)| h as f64 / r as f64).fold(1.0, f64::min),
            settled,
            target,
            recovery,
        });
    }
}

/// Hits over requests of a run of windows.
fn hit_rate(windows: &[(usize, usize)]) -> f64 {
    windows.iter().map(|w| w.1).sum::<usize>() as f64 / windows.iter().map(|w| w.0).sum::<usize>() as f64
}

/// `ring, 160 vnodes`: the algorithm and the options that were set.
fn describe(spec: &RouterSpec) -> String {
    let mut parts = vec![spec.algorithm.name().to_owned()];
    if spec.algorithm.takes_vnodes() {
        parts.push(format!("{} vnodes", spec.vnodes.unwrap_or(u64::from(hashroute::Ring::DEFAULT_VNODES))));
    }
    if let Some(m) = spec.table_size {
        parts.push(format!("table size {m}"));
    }
    if let Some(h) = spec.hasher {
        parts.push(format!("hash {}", h.name()));
    }
    parts.join(", ")
}

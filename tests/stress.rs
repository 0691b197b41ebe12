//! Concurrency under load: `SharedRouter` with 8 reader threads routing continuously while a
//! writer publishes thousands of generations (add, remove, reweigh), and the stateful wrappers
//! (`Failover`, `BoundedLoads`) driven from many threads behind the locks their `&mut self`
//! methods require.
//!
//! Bounded by counts, not time; assertions are about progress and correctness only. Reader
//! throughput with and without swaps is printed (`--nocapture`), never asserted. CI runs this
//! file in release mode (`.ci/run`).
#![cfg(feature = "shared")]

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, RwLock};
use std::time::Instant;

use hashroute::{BoundedLoads, Failover, Node, Result, Ring, Router, SharedRouter};

const READERS: usize = 8;
const BASE_NODES: usize = 16;

/// Routes per reader: enough that readers overlap thousands of swaps in release mode, small
/// enough for a debug run.
fn routes_per_reader() -> u64 {
    if cfg!(debug_assertions) {
        40_000
    } else {
        400_000
    }
}

/// Generations the writer publishes at least (readers keep routing until it stops): 3000 in
/// release (CI), fewer in a debug build, where each rebuild costs ten times more.
const MIN_SWAPS: u64 = if cfg!(debug_assertions) { 1_000 } else { 3_000 };

/// Routers alive right now: `Tracked` counts itself, so the test sees when old generations are
/// freed (the only memory a generation holds is its router).
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// A ring tagged with the generation it was built for, counted while alive.
struct Tracked {
    ring: Ring,
    built_for: u64,
}

impl Tracked {
    fn new(ring: Ring, built_for: u64) -> Tracked {
        LIVE.fetch_add(1, Ordering::SeqCst);
        Tracked { ring, built_for }
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The membership schedule, a pure function of the generation: the 16 base nodes always; the
/// extra node `x{g}` exactly in odd generations (added at g, removed at g + 1); every fourth
/// generation reweighs a base node.
fn extra_node(generation: u64) -> Option<String> {
    (generation % 2 == 1).then(|| format!("x{generation}"))
}

fn next_ring(current: &Ring, generation: u64) -> Result<Ring> {
    let ring = match extra_node(generation) {
        Some(name) => current.with_node(Node::new(name))?,
        None => current.without_node(&format!("x{}", generation - 1))?,
    };
    if generation.is_multiple_of(4) {
        let name = format!("n{}", generation / 4 % BASE_NODES as u64);
        return ring.with_weight(&name, 1.0 + (generation % 5) as f64);
    }
    Ok(ring)
}

/// What a reader does per route: one snapshot, one key, and the checks that the answer belongs
/// to the generation it came from.
fn route_and_check(shared: &SharedRouter<Tracked>, key: &[u8]) -> u64 {
    let snap = shared.load();
    let generation = snap.generation();
    assert_eq!(snap.built_for, generation, "a snapshot's router is not its generation's");
    let ring = &snap.ring;
    let want_nodes = BASE_NODES + usize::from(extra_node(generation).is_some());
    assert_eq!(ring.node_count(), want_nodes, "generation {generation} has the wrong membership");
    let name = ring.node_name(ring.route(key));
    let is_base = name.strip_prefix('n').and_then(|i| i.parse::<usize>().ok()).is_some_and(|i| i < BASE_NODES);
    assert!(
        is_base || extra_node(generation).as_deref() == Some(name),
        "generation {generation} answered {name}, not one of its nodes"
    );
    generation
}

/// Runs `READERS` readers for `routes` routes each; when `swap`, a writer publishes at least
/// `MIN_SWAPS` generations and readers keep routing until it stops, so every swap happens
/// under load. Returns (routes per second over all readers, swaps published, distinct
/// generations readers saw).
fn run(shared: &SharedRouter<Tracked>, routes: u64, swap: bool) -> (f64, u64, usize) {
    // Readers that have done their `routes`; the writer stops only once all have.
    let reached = AtomicUsize::new(0);
    let swaps = AtomicU64::new(0);
    let writer_done = AtomicBool::new(!swap);
    let start = Instant::now();
    let results: Vec<(HashSet<u64>, u64)> = std::thread::scope(|s| {
        let readers: Vec<_> = (0..READERS)
            .map(|t| {
                let (reached, writer_done) = (&reached, &writer_done);
                s.spawn(move || {
                    let mut seen = HashSet::new();
                    let mut key = Vec::with_capacity(32);
                    let mut i = 0u64;
                    while i < routes || !writer_done.load(Ordering::SeqCst) {
                        key.clear();
                        key.extend_from_slice(format!("user:{t}:{i}").as_bytes());
                        seen.insert(route_and_check(shared, &key));
                        i += 1;
                        if i == routes {
                            reached.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                    (seen, i)
                })
            })
            .collect();
        if swap {
            let (reached, swaps, writer_done) = (&reached, &swaps, &writer_done);
            s.spawn(move || {
                while reached.load(Ordering::SeqCst) < READERS || swaps.load(Ordering::SeqCst) < MIN_SWAPS {
                    let generation = shared.generation() + 1;
                    shared
                        .update(|current| Ok(Tracked::new(next_ring(&current.ring, generation)?, generation)))
                        .expect("scheduled change");
                    swaps.fetch_add(1, Ordering::SeqCst);
                    // Live routers: the published one, those readers hold (one snapshot each at
                    // a time) and none other: the writer's previous router is already freed.
                    assert!(LIVE.load(Ordering::SeqCst) <= READERS + 1, "old generations are not freed");
                }
                writer_done.store(true, Ordering::SeqCst);
            });
        }
        readers.into_iter().map(|r| r.join().expect("reader")).collect()
    });
    let elapsed = start.elapsed().as_secs_f64();
    // Progress: every reader completed its count of routes while the writer ran.
    assert_eq!(reached.load(Ordering::SeqCst), READERS);
    let total: u64 = results.iter().map(|r| r.1).sum();
    assert!(results.iter().all(|r| r.1 >= routes));
    let generations: HashSet<u64> = results.into_iter().flat_map(|r| r.0).collect();
    (total as f64 / elapsed, swaps.load(Ordering::SeqCst), generations.len())
}

#[test]
fn readers_progress_while_generations_swap() {
    let names: Vec<String> = (0..BASE_NODES).map(|i| format!("n{i}")).collect();
    let shared = SharedRouter::new(Tracked::new(Ring::from_names(&names).unwrap(), 0));
    let routes = routes_per_reader();
    let (quiet, _, _) = run(&shared, routes, false);
    let (busy, swaps, generations) = run(&shared, routes, true);
    println!(
        "SharedRouter, {READERS} readers x {routes} routes: {quiet:.0} routes/s without swaps, {busy:.0} while \
         the writer swapped ({:.2} of quiet; {swaps} swaps in all); readers saw {generations} distinct generations",
        busy / quiet
    );
    assert!(swaps >= MIN_SWAPS);
    assert_eq!(shared.generation(), swaps, "a generation was lost or doubled");
    // Readers have let go: only the published generation is alive.
    assert_eq!(LIVE.load(Ordering::SeqCst), 1, "old generations outlive their readers");
    let last = shared.load();
    assert_eq!(last.built_for, swaps);
    // A snapshot held across swaps pins exactly its own generation.
    let pinned = shared.load();
    for _ in 0..10 {
        let generation = shared.generation() + 1;
        shared.update(|c| Ok(Tracked::new(next_ring(&c.ring, generation)?, generation))).unwrap();
    }
    drop(last);
    assert_eq!(LIVE.load(Ordering::SeqCst), 2, "the pinned snapshot and the current router");
    drop(pinned);
    assert_eq!(LIVE.load(Ordering::SeqCst), 1);
}

/// `Failover::mark_down` takes `&mut self`, so sharing it across threads needs a lock (the
/// compiler enforces it: `Failover<R>` is `Send + Sync`, its mutators are not callable through
/// `&`). Under an `RwLock`, readers never see a down node, whatever the writer does.
#[test]
fn failover_under_rwlock_never_routes_to_a_down_node() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Failover<Ring>>();
    shareable::<BoundedLoads<Ring>>();
    let names: Vec<String> = (0..8).map(|i| format!("n{i}")).collect();
    let failover = RwLock::new(Failover::new(Ring::from_names(&names).unwrap()).unwrap());
    let flips = if cfg!(debug_assertions) { 2_000 } else { 20_000 };
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        for t in 0..READERS {
            let (failover, stop) = (&failover, &stop);
            s.spawn(move || {
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) || i < 1_000 {
                    let f = failover.read().unwrap();
                    let id = f.route(format!("k{t}:{i}").as_bytes());
                    assert!(!f.is_down(id), "routed to a down node");
                    i += 1;
                }
            });
        }
        for j in 0..flips {
            let mut f = failover.write().unwrap();
            let name = &names[j % names.len()];
            // Keep at least one node up: mark down only while fewer than 7 are down.
            if f.is_down(f.inner().nodes().require(name).unwrap()) {
                f.mark_up(name).unwrap();
            } else if f.down_count() < names.len() - 1 {
                f.mark_down(name).unwrap();
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
}

/// `BoundedLoads` behind a `Mutex`, assigned and released from 8 threads: the load bound holds
/// after every operation and the books balance at the end.
#[test]
fn bounded_loads_under_mutex_keep_the_bound() {
    let names: Vec<String> = (0..10).map(|i| format!("n{i}")).collect();
    let bounded = Mutex::new(BoundedLoads::new(Ring::from_names(&names).unwrap(), 0.25).unwrap());
    let per_thread = if cfg!(debug_assertions) { 1_000 } else { 10_000 };
    std::thread::scope(|s| {
        for t in 0..READERS {
            let (bounded, names) = (&bounded, &names);
            s.spawn(move || {
                for i in 0..per_thread {
                    let mut b = bounded.lock().unwrap();
                    b.assign(format!("t{t}:{i}").as_bytes()).unwrap();
                    if i % 3 == 2 {
                        b.release(format!("t{t}:{}", i - 1).as_bytes()).unwrap();
                    }
                    let cap = b.capacity();
                    for id in 0..names.len() as u32 {
                        assert!(b.load(hashroute::NodeId::from_index(id)) <= cap, "load above the bound");
                    }
                }
            });
        }
    });
    let b = bounded.into_inner().unwrap();
    let total: usize = (0..names.len() as u32).map(|id| b.load(hashroute::NodeId::from_index(id))).sum();
    assert_eq!(b.assigned(), total);
    assert_eq!(b.assigned(), READERS * (per_thread - per_thread / 3));
}

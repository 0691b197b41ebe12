//! Reader throughput of a [`SharedRouter`] while a writer swaps routers, against an
//! `RwLock<Arc<Ring>>` and a plain `&Ring` (no swapping possible) as baselines.
//!
//! `cargo bench --bench shared`: 1000 nodes, 0.5 s per case; `HASHROUTE_QUICK=1` a short smoke
//! run (100 nodes, 0.2 s per case); `HASHROUTE_FULL=1` 2 s per case (benches/common/mod.rs). Output: one line per case, `shared/<handle>/<swap mode>/<readers>` and million
//! routes per second summed over reader threads.

#[path = "common/mod.rs"]
mod common;

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use hashroute::{Node, Ring, Router, SharedRouter};

#[derive(Copy, Clone, Debug)]
enum Swaps {
    None,
    EveryMillisecond,
    Continuous,
}

impl Swaps {
    fn name(self) -> &'static str {
        match self {
            Swaps::None => "no-swaps",
            Swaps::EveryMillisecond => "swap-1ms",
            Swaps::Continuous => "swap-continuous",
        }
    }
}

/// The two handles under test, behind one interface.
trait Handle: Sync {
    fn route_one(&self, key: &[u8]) -> u32;
    fn swap(&self, ring: Ring);
}

impl Handle for SharedRouter<Ring> {
    fn route_one(&self, key: &[u8]) -> u32 {
        self.route(key).as_u32()
    }
    fn swap(&self, ring: Ring) {
        self.store(ring);
    }
}

struct Locked(RwLock<Arc<Ring>>);

impl Handle for Locked {
    fn route_one(&self, key: &[u8]) -> u32 {
        let guard = self.0.read().unwrap_or_else(|e| e.into_inner());
        guard.route(key).as_u32()
    }
    fn swap(&self, ring: Ring) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(ring);
    }
}

struct Fixed(Ring);

impl Handle for Fixed {
    fn route_one(&self, key: &[u8]) -> u32 {
        self.0.route(key).as_u32()
    }
    fn swap(&self, _ring: Ring) {}
}

/// Runs `readers` reader threads for `duration` while a writer swaps per `swaps`; returns
/// (routes per second, swaps done).
fn run(handle: &dyn Handle, configs: &[Ring], readers: usize, swaps: Swaps, duration: Duration) -> (f64, u64) {
    let stop = AtomicBool::new(false);
    let routed = AtomicU64::new(0);
    let swapped = AtomicU64::new(0);
    let keys: Vec<Vec<u8>> = (0..4096).map(|i| format!("user:{i}").into_bytes()).collect();
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..readers {
            let (stop, routed, keys) = (&stop, &routed, &keys);
            s.spawn(move || {
                let mut n = 0u64;
                let mut i = t * 97;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..256 {
                        black_box(handle.route_one(&keys[i % keys.len()]));
                        i += 1;
                    }
                    n += 256;
                }
                routed.fetch_add(n, Ordering::Relaxed);
            });
        }
        let (stop, swapped) = (&stop, &swapped);
        s.spawn(move || {
            let mut g = 0usize;
            while start.elapsed() < duration {
                match swaps {
                    Swaps::None => std::thread::sleep(Duration::from_millis(5)),
                    Swaps::EveryMillisecond => {
                        handle.swap(configs[g % configs.len()].clone());
                        g += 1;
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    Swaps::Continuous => {
                        handle.swap(configs[g % configs.len()].clone());
                        g += 1;
                    }
                }
            }
            swapped.store(g as u64, Ordering::Relaxed);
            stop.store(true, Ordering::Relaxed);
        });
    });
    let secs = start.elapsed().as_secs_f64();
    (routed.load(Ordering::Relaxed) as f64 / secs, swapped.load(Ordering::Relaxed))
}

fn main() {
    let mode = common::mode();
    // `cargo bench` passes `--bench`; a filter argument, if any, selects cases by substring.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let (nodes, duration) = mode.pick4(
        (100, Duration::from_millis(50)),
        (100, Duration::from_millis(200)),
        (1000, Duration::from_millis(500)),
        (1000, Duration::from_secs(2)),
    );
    let names: Vec<String> = (0..nodes).map(|i| format!("node-{i}")).collect();
    let base = Ring::builder().vnodes(160).nodes(&names).build().expect("valid ring");
    let configs = vec![base.clone(), base.with_node(Node::new("node-extra")).expect("new name")];
    let max_readers = std::thread::available_parallelism().map_or(2, |n| n.get()).max(1);
    let mut reader_counts = vec![1];
    if max_readers > 1 {
        reader_counts.push(max_readers);
    }
    println!("# {nodes} nodes x 160 vnodes, {:?} per case, mode {}", duration, mode.name());
    println!("{:<44} {:>12} {:>8}", "case", "Mroutes/s", "swaps");
    for &readers in &reader_counts {
        for swaps in [Swaps::None, Swaps::EveryMillisecond, Swaps::Continuous] {
            let cases: Vec<(&str, Box<dyn Handle>)> = vec![
                ("arc-swap", Box::new(SharedRouter::new(base.clone()))),
                ("rwlock", Box::new(Locked(RwLock::new(Arc::new(base.clone()))))),
                ("plain", Box::new(Fixed(base.clone()))),
            ];
            for (name, handle) in cases {
                if name == "plain" && !matches!(swaps, Swaps::None) {
                    continue;
                }
                let id = format!("shared/{name}/{}/{readers}", swaps.name());
                if filter.as_ref().is_some_and(|f| !id.contains(f.as_str())) {
                    continue;
                }
                let (rate, swapped) = run(&*handle, &configs, readers, swaps, duration);
                println!("{id:<44} {:>12.2} {swapped:>8}", rate / 1e6);
            }
        }
    }
}

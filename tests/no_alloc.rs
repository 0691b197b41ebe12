//! `route` (and `route_batch`, `route_hash`) allocate nothing once a router is built.
//!
//! A counting global allocator records allocations made by the current thread while a flag is
//! raised; other test threads (the harness runs tests in parallel) are not counted.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use hashroute::internals::Isa;
use hashroute::{
    Jump, Ketama, KetamaVariant, KeyHasher, Modulo, Node, NodeId, NodeSet, RedisSlots, Rendezvous, Ring, Router,
};

struct Counting;

thread_local! {
    static ARMED: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

fn note() {
    // `try_with`: the thread-locals may already be gone while a thread is being torn down.
    if ARMED.try_with(Cell::get).unwrap_or(false) {
        let _ = COUNT.try_with(|c| c.set(c.get() + 1));
    }
}

// SAFETY: every method forwards to `System` unchanged; counting touches only const-initialized
// thread-locals, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by this thread while running `f`.
fn allocations(f: impl FnOnce()) -> usize {
    COUNT.with(|c| c.set(0));
    ARMED.with(|a| a.set(true));
    f();
    ARMED.with(|a| a.set(false));
    COUNT.with(Cell::get)
}

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("10.0.0.{i}:11211")).collect()
}

fn keys() -> Vec<Vec<u8>> {
    let mut k: Vec<Vec<u8>> = (0..300).map(|i| format!("user:{i}").into_bytes()).collect();
    k.push(Vec::new());
    k.push(b"{tag}:x".to_vec());
    k.push(vec![0xff; 100]);
    k
}

/// Every router kind, in the configurations whose hot paths differ.
fn routers(n: usize) -> Vec<(String, Box<dyn Router>)> {
    let set = || NodeSet::from_names(names(n)).unwrap();
    let weighted = || {
        NodeSet::new(names(n).into_iter().enumerate().map(|(i, s)| Node::new(s).with_weight(1.0 + (i % 3) as f64)))
            .unwrap()
    };
    let mut out: Vec<(String, Box<dyn Router>)> = vec![
        ("ring".into(), Box::new(Ring::builder().vnodes(160).node_set(set()).build().unwrap())),
        ("jump".into(), Box::new(Jump::builder().node_set(set()).hasher(KeyHasher::default()).build().unwrap())),
        ("modulo".into(), Box::new(Modulo::builder().node_set(set()).hasher(KeyHasher::Md5).build().unwrap())),
        (
            "ketama".into(),
            Box::new(Ketama::builder().node_set(set()).variant(KetamaVariant::Libketama).build().unwrap()),
        ),
        (
            "ketama-weighted".into(),
            Box::new(Ketama::builder().node_set(weighted()).variant(KetamaVariant::Libketama).build().unwrap()),
        ),
        ("redis-slots".into(), Box::new(RedisSlots::builder().node_set(set()).build().unwrap())),
        (
            "rendezvous-weighted".into(),
            Box::new(Rendezvous::builder().node_set(weighted()).hasher(KeyHasher::default()).build().unwrap()),
        ),
        ("rendezvous-go".into(), Box::new(Rendezvous::builder().node_set(set()).go_rendezvous().build().unwrap())),
    ];
    let hrw = Rendezvous::builder().node_set(set()).hasher(KeyHasher::default()).build().unwrap();
    for isa in Isa::ALL {
        match hashroute::internals::rendezvous_with_isa(&hrw, isa) {
            Ok(r) => out.push((format!("rendezvous-{}", isa.name()), Box::new(r))),
            Err(_) => eprintln!("SKIPPED: rendezvous {} path (this CPU lacks it)", isa.name()),
        }
    }
    out
}

#[test]
fn route_allocates_nothing_after_build() {
    let keys = keys();
    let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    for n in [1, 7, 16, 100, 1000] {
        for (name, r) in routers(n) {
            let mut out = vec![NodeId::default(); refs.len()];
            // Warm up once outside the count: lazily initialized statics (feature detection,
            // dispatch) may allocate on first use, by design, and only then.
            r.route(b"warm-up");
            let count = allocations(|| {
                for k in &refs {
                    std::hint::black_box(r.route(std::hint::black_box(k)));
                }
                r.route_batch(&refs, &mut out);
                for h in [0u64, 1, u64::MAX, 0x1234_5678_9abc_def0] {
                    // Unsupported for some routers: an Err without a heap message is fine.
                    let _ = std::hint::black_box(r.route_hash(h));
                }
            });
            assert_eq!(count, 0, "{name} with {n} nodes allocated {count} times while routing");
            assert!(out.iter().zip(&refs).all(|(id, k)| *id == r.route(k)), "{name}: batch differs from route");
        }
    }
}

#[test]
fn counter_detects_allocations() {
    // The guard against a vacuous pass: the counter must see an allocation when one happens.
    let count = allocations(|| {
        std::hint::black_box(vec![1u8; 64]);
    });
    assert!(count >= 1);
}

//! `Router::memory_bytes` against a counting global allocator.
//!
//! Each router's own heap (everything but its `NodeSet`) must match `memory_bytes() -
//! nodes().memory_bytes()` exactly, after a build and after adding/removing a node. The
//! `NodeSet` itself estimates its `HashMap` from `capacity()` (the std map does not expose its
//! allocation), so it is checked within a tolerance and the gap is printed.
//!
//! Counters are per thread, so parallel tests (and rayon workers freeing their own scratch) do
//! not disturb each other.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use hashroute::ring::Layout as RingLayout;
use hashroute::{Jump, Ketama, KetamaVariant, KeyHasher, Modulo, Node, NodeSet, RedisSlots, Rendezvous, Ring, Router};

struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

fn add(n: isize) {
    // `try_with`: during thread teardown the slot may be gone; those bytes are not ours.
    let _ = LIVE.try_with(|l| l.set(l.get() + n));
}

// SAFETY: every method forwards to `System` unchanged and only adds bookkeeping on the side.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as isize);
        // SAFETY: same contract as ours, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as isize);
        // SAFETY: same contract as ours, forwarded.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        add(-(layout.size() as isize));
        // SAFETY: same contract as ours, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        add(new_size as isize - layout.size() as isize);
        // SAFETY: same contract as ours, forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn live() -> isize {
    LIVE.with(Cell::get)
}

/// Heap bytes `f`'s result keeps alive (temporaries freed inside `f` do not count).
fn heap_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = live();
    let value = f();
    let after = live();
    (value, usize::try_from(after - before).expect("heap shrank"))
}

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("node-{i}")).collect()
}

/// Asserts the router's own heap (beyond its node set) is what `memory_bytes` claims.
fn check_own<R: Router>(label: &str, set: NodeSet, make: impl FnOnce(NodeSet) -> R) {
    let (router, heap) = heap_of(|| make(set));
    let own_claimed = router.memory_bytes() - router.nodes().memory_bytes();
    let inline = std::mem::size_of::<R>() - std::mem::size_of::<NodeSet>();
    assert_eq!(own_claimed - inline, heap, "{label}: own heap");
}

/// Initializes process-wide state that lives forever once touched — the rayon pool (a big
/// ring's build uses it) and the cached CPU dispatch — so the first measured build does not
/// count it as its own heap. Without this the result depends on which test runs first.
fn warm_up() {
    let big = Ring::builder().vnodes(1000).nodes(names(300)).build().unwrap();
    let _ = big.route(b"warm");
    let _ = Rendezvous::builder()
        .node_set(NodeSet::from_names(names(3)).unwrap())
        .hasher(KeyHasher::default())
        .build()
        .unwrap()
        .route(b"warm");
    let mut out = vec![hashroute::NodeId::default(); 1];
    Jump::builder()
        .node_set(NodeSet::from_names(names(3)).unwrap())
        .hasher(KeyHasher::default())
        .build()
        .unwrap()
        .route_batch(&[b"warm"], &mut out);
}

#[test]
fn routers_own_heap_is_exact() {
    warm_up();
    for n in [1, 10, 300] {
        let set = || NodeSet::from_names(names(n)).unwrap();
        for layout in [
            RingLayout::Auto,
            RingLayout::Oracle,
            RingLayout::Branchless,
            RingLayout::Tree,
            RingLayout::Radix,
            RingLayout::Eytzinger,
        ] {
            check_own(&format!("ring {layout:?} n={n}"), set(), |s| {
                Ring::builder().vnodes(160).layout(layout).node_set(s).build().unwrap()
            });
        }
        check_own("jump", set(), |s| Jump::builder().node_set(s).hasher(KeyHasher::default()).build().unwrap());
        check_own("modulo", set(), |s| Modulo::builder().node_set(s).hasher(KeyHasher::default()).build().unwrap());
        check_own("ketama", set(), |s| {
            Ketama::builder().node_set(s).variant(KetamaVariant::default()).build().unwrap()
        });
        check_own("rendezvous", set(), |s| {
            Rendezvous::builder().node_set(s).hasher(KeyHasher::default()).build().unwrap()
        });
        check_own("slots", set(), |s| RedisSlots::builder().node_set(s).build().unwrap());
        // The jump family: the four memory-free routers own no heap; JumpBackAnchor owns
        // its id arrays, also after a removal and a restore.
        check_own("jumpback", set(), |s| hashroute::JumpBack::builder().node_set(s).build().unwrap());
        check_own("fliphash", set(), |s| hashroute::FlipHash::builder().node_set(s).build().unwrap());
        check_own("power", set(), |s| hashroute::PowerCh::builder().node_set(s).build().unwrap());
        check_own("binomial", set(), |s| hashroute::BinomialHash::builder().node_set(s).build().unwrap());
        check_own("jumpback-anchor", set(), |s| hashroute::JumpBackAnchor::builder().node_set(s).build().unwrap());
    }
}

#[test]
fn ring_heap_is_exact_after_add_and_remove() {
    warm_up();
    let ring = Ring::builder().vnodes(160).nodes(names(200)).build().unwrap();
    // The node set `with_node` builds internally, built the same way to learn its heap.
    let (set, set_heap) = heap_of(|| ring.nodes().with_node(Node::new("extra")).unwrap());
    drop(set);
    let (added, heap) = heap_of(|| ring.with_node(Node::new("extra")).unwrap());
    let inline = std::mem::size_of::<Ring>() - std::mem::size_of::<NodeSet>();
    assert_eq!(added.memory_bytes() - added.nodes().memory_bytes() - inline, heap - set_heap, "after add");

    let (set, set_heap) = heap_of(|| ring.nodes().without_node("node-7").unwrap());
    drop(set);
    let (removed, heap) = heap_of(|| ring.without_node("node-7").unwrap());
    assert_eq!(removed.memory_bytes() - removed.nodes().memory_bytes() - inline, heap - set_heap, "after remove");
}

#[test]
fn default_ring_is_under_12_8_bytes_per_point() {
    let ring = Ring::builder().vnodes(160).nodes(names(10_000)).build().unwrap();
    let own = ring.memory_bytes() - ring.nodes().memory_bytes();
    let per_point = own as f64 / ring.points().len() as f64;
    assert!(per_point <= 12.8, "{per_point:.3} bytes per point");
    eprintln!("default ring ({:?}): {per_point:.3} bytes per point", ring.layout());
}

#[test]
fn node_set_estimate_is_close() {
    for n in [1, 10, 1000] {
        let (set, heap) = heap_of(|| NodeSet::from_names(names(n)).unwrap());
        let claimed = set.memory_bytes() - std::mem::size_of::<NodeSet>();
        let gap = claimed as f64 / heap as f64 - 1.0;
        eprintln!("NodeSet n={n}: claims {claimed} heap bytes, allocator saw {heap} ({:+.1}%)", gap * 100.0);
        assert!(gap.abs() < 0.25, "NodeSet::memory_bytes off by {:.1}%", gap * 100.0);
    }
}

#[test]
fn jumpback_anchor_heap_is_exact_after_remove_and_restore() {
    warm_up();
    let base = hashroute::JumpBackAnchor::builder().nodes(names(200)).build().unwrap();
    let inline = std::mem::size_of::<hashroute::JumpBackAnchor>() - std::mem::size_of::<NodeSet>();
    let own = |r: &hashroute::JumpBackAnchor| r.memory_bytes() - r.nodes().memory_bytes() - inline;
    // The node set `without_node` builds internally, built the same way to learn its heap.
    let (set, set_heap) = heap_of(|| base.nodes().without_node("node-7").unwrap());
    drop(set);
    let (removed, heap) = heap_of(|| base.without_node("node-7").unwrap());
    assert_eq!(own(&removed), heap - set_heap, "after remove");
    let (set, set_heap) = heap_of(|| removed.nodes().with_node(Node::new("node-7")).unwrap());
    drop(set);
    let (restored, heap) = heap_of(|| removed.with_node(Node::new("node-7")).unwrap());
    assert_eq!(own(&restored), heap - set_heap, "after restore");
}

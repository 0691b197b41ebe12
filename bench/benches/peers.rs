//! `cargo bench --bench peers`: hashroute next to other consistent-hashing crates, same run,
//! same keys, same node names: ns per lookup, heap bytes (per vnode for rings, per node
//! otherwise) and build time, each as a ratio to the matching hashroute router, at 1000 nodes
//! × 160 vnodes where the algorithm has vnodes.
//!
//! Peers do not report their memory, so this bench counts live heap bytes with a wrapping
//! global allocator (the only `unsafe` here: forwarding to `System`). Writes
//! `peers.csv` and `peers.md` to the report folder (`target/hashroute-report/`, or `results/`
//! from scripts/report.sh), which `benches/vnodes` pulls into the report. Plain `cargo bench`
//! and `HASHROUTE_QUICK=1` use 200 nodes, `HASHROUTE_FULL=1` 1000; under `cargo test --benches`
//! it is a smoke test (benches/common/mod.rs).

#[path = "report/mod.rs"]
mod report;

use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::Instant;

use hashroute::{Anchor, Jump, KeyHasher, Maglev, MultiProbe, NodeSet, Rendezvous, Ring, Router};
use hashroute_analysis::sweep::{cluster_names, sample_keys};

/// Live heap bytes, counted by [`Counting`].
static LIVE: AtomicIsize = AtomicIsize::new(0);

/// Forwards to the system allocator and keeps a running count of live bytes.
struct Counting;

// SAFETY: every method forwards the caller's arguments unchanged to `System`, which upholds the
// `GlobalAlloc` contract; the counter update has no effect on the returned memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same layout the caller gave us, forwarded to System.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: `ptr` was allocated by `System` with this layout (all allocations go through us).
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size as isize - layout.size() as isize, Ordering::Relaxed);
        // SAFETY: `ptr`/`layout` come from a previous allocation through us; forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A built router as a lookup closure (owning its structure).
type Lookup = Box<dyn Fn(&[u8]) -> usize>;
/// Builds a [`Lookup`] over node names.
type Build = Box<dyn Fn(&[String]) -> Lookup>;

struct Entry {
    /// Crate (and type) name.
    name: &'static str,
    /// The hashroute router it is compared with.
    baseline: &'static str,
    /// KeyHasher note: deterministic, or randomized / unspecified.
    hasher: &'static str,
    /// Units for the memory ratio: vnodes (rings) or nodes.
    per: &'static str,
    /// O(N) lookups get fewer keys.
    linear: bool,
    build: Build,
}

#[derive(Clone)]
struct Measured {
    name: String,
    ns: f64,
    heap: f64,
    build_ms: f64,
}

const N: usize = 1000;
const V: usize = 160;

fn measure(build: &dyn Fn(&[String]) -> Lookup, names: &[String], keys: &[Vec<u8>], name: &str) -> Measured {
    let before = LIVE.load(Ordering::Relaxed);
    let t = Instant::now();
    let lookup = build(names);
    let build_ms = t.elapsed().as_secs_f64() * 1e3;
    let heap = (LIVE.load(Ordering::Relaxed) - before).max(0) as f64;
    let mut best = f64::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        let mut acc = 0usize;
        for k in keys {
            acc = acc.wrapping_add(lookup(k));
        }
        std::hint::black_box(acc);
        best = best.min(t.elapsed().as_nanos() as f64 / keys.len().max(1) as f64);
    }
    drop(lookup);
    Measured { name: name.to_string(), ns: best, heap, build_ms }
}

fn xxh(k: &[u8]) -> u64 {
    KeyHasher::default().hash(k)
}

#[derive(Clone)]
struct ConNode(String);
impl conhash::Node for ConNode {
    fn name(&self) -> String {
        self.0.clone()
    }
}

fn baselines() -> Vec<(&'static str, &'static str, Build)> {
    vec![
        (
            "hashroute Ring (V=160)",
            "vnodes",
            Box::new(|names: &[String]| {
                let r = Ring::builder().vnodes(V as u64).nodes(names).build().expect("valid");
                Box::new(move |k: &[u8]| r.route(k).index()) as Lookup
            }),
        ),
        (
            "hashroute Jump",
            "nodes",
            Box::new(|names: &[String]| {
                let r = Jump::builder()
                    .node_set(NodeSet::from_names(names).expect("valid"))
                    .hasher(KeyHasher::default())
                    .build()
                    .expect("unit weights");
                Box::new(move |k: &[u8]| r.route(k).index()) as Lookup
            }),
        ),
        (
            "hashroute Maglev (M=65537)",
            "nodes",
            Box::new(|names: &[String]| {
                let r = Maglev::builder()
                    .node_set(NodeSet::from_names(names).expect("valid"))
                    .hasher(KeyHasher::default())
                    .table_size(65537)
                    .build()
                    .expect("valid");
                Box::new(move |k: &[u8]| r.route(k).index()) as Lookup
            }),
        ),
        (
            "hashroute MultiProbe (21 probes)",
            "nodes",
            Box::new(|names: &[String]| {
                let r = MultiProbe::builder()
                    .node_set(NodeSet::from_names(names).expect("valid"))
                    .hasher(KeyHasher::default())
                    .probes(21)
                    .build()
                    .expect("valid");
                Box::new(move |k: &[u8]| r.route(k).index()) as Lookup
            }),
        ),
        (
            "hashroute Anchor (capacity 2N)",
            "nodes",
            Box::new(|names: &[String]| {
                let cap = (2 * names.len()) as u32;
                let r = Anchor::builder()
                    .node_set(NodeSet::from_names(names).expect("valid"))
                    .hasher(KeyHasher::default())
                    .capacity(cap)
                    .build()
                    .expect("valid");
                Box::new(move |k: &[u8]| r.route(k).index()) as Lookup
            }),
        ),
        (
            "hashroute Rendezvous",
            "nodes",
            Box::new(|names: &[String]| {
                let r = Rendezvous::builder()
                    .node_set(NodeSet::from_names(names).expect("valid"))
                    .hasher(KeyHasher::default())
                    .build()
                    .expect("valid");
                Box::new(move |k: &[u8]| r.route(k).index()) as Lookup
            }),
        ),
    ]
}

fn peers() -> Vec<Entry> {
    vec![
        Entry {
            name: "hashring 0.3 (HashRing, 160 (name, i) vnodes)",
            baseline: "hashroute Ring (V=160)",
            hasher: "SipHash-1-3 with fixed zero keys (deterministic)",
            per: "vnodes",
            linear: false,
            build: Box::new(|names| {
                let mut r = hashring::HashRing::new();
                r.batch_add(names.iter().flat_map(|n| (0..V as u32).map(move |i| (n.clone(), i))).collect());
                Box::new(move |k: &[u8]| r.get(&k).map_or(0, |n| n.1 as usize))
            }),
        },
        Entry {
            name: "consistent_hash_ring 0.8 (Ring, vnodes 160)",
            baseline: "hashroute Ring (V=160)",
            hasher: "FNV (deterministic)",
            per: "vnodes",
            linear: false,
            build: Box::new(|names| {
                let r =
                    consistent_hash_ring::RingBuilder::default().vnodes(V).nodes_iter(names.iter().cloned()).build();
                Box::new(move |k: &[u8]| r.get(k).len())
            }),
        },
        Entry {
            name: "conhash 0.5 (ConsistentHash, 160 replicas)",
            baseline: "hashroute Ring (V=160)",
            hasher: "MD5 (deterministic)",
            per: "vnodes",
            linear: false,
            build: Box::new(|names| {
                let mut r = conhash::ConsistentHash::new();
                for n in names {
                    r.add(&ConNode(n.clone()), V);
                }
                Box::new(move |k: &[u8]| r.get(k).map_or(0, |n| n.0.len()))
            }),
        },
        Entry {
            name: "hash-rings 1.1 (consistent::Ring, 160 replicas)",
            baseline: "hashroute Ring (V=160)",
            hasher: "std RandomState (randomized per process)",
            per: "vnodes",
            linear: false,
            build: Box::new(|names| {
                let ids: &'static [String] = Box::leak(names.to_vec().into_boxed_slice());
                let mut r = hash_rings::consistent::Ring::new();
                for n in ids {
                    r.insert_node(n, V);
                }
                Box::new(move |k: &[u8]| r.get_node(&k).len())
            }),
        },
        Entry {
            name: "mpchash 2.0 (multi-probe HashRing, no vnodes)",
            baseline: "hashroute MultiProbe (21 probes)",
            hasher: "xxh3 (deterministic)",
            per: "nodes",
            linear: false,
            build: Box::new(|names| {
                let r = mpchash::HashRing::new();
                for n in names {
                    r.add(n.clone());
                }
                Box::new(move |k: &[u8]| r.node(&k).map_or(0, |t| t.node().len()))
            }),
        },
        Entry {
            name: "jump-consistent-hash 0.1 (hash(xxh3(key)))",
            baseline: "hashroute Jump",
            hasher: "caller's (xxh3 here, deterministic)",
            per: "nodes",
            linear: false,
            build: Box::new(|names| {
                let n = names.len();
                Box::new(move |k: &[u8]| jump_consistent_hash::hash(xxh(k), n) as usize)
            }),
        },
        Entry {
            name: "maglev 0.2 (Maglev, default table)",
            baseline: "hashroute Maglev (M=65537)",
            hasher: "std DefaultHasher (fixed keys, algorithm unspecified across Rust releases)",
            per: "nodes",
            linear: false,
            build: Box::new(|names| {
                use maglev::ConsistentHasher;
                let r = maglev::Maglev::new(names.to_vec());
                Box::new(move |k: &[u8]| r.get(k).map_or(0, String::len))
            }),
        },
        Entry {
            name: "anchorhash 0.2 (AnchorHash, capacity 2N, key = xxh3(key))",
            baseline: "hashroute Anchor (capacity 2N)",
            hasher: "std RandomState (randomized per process)",
            per: "nodes",
            linear: false,
            build: Box::new(|names| {
                let a: anchorhash::AnchorHash<u64, String, _> = anchorhash::Builder::default()
                    .with_resources(names.to_vec())
                    .build((2 * names.len()).min(65535) as u16);
                Box::new(move |k: &[u8]| a.get_resource(xxh(k)).map_or(0, String::len))
            }),
        },
        Entry {
            name: "rendezvous_hash 0.3 (RendezvousNodes, DefaultNodeHasher)",
            baseline: "hashroute Rendezvous",
            hasher: "std DefaultHasher (fixed keys, algorithm unspecified across Rust releases)",
            per: "nodes",
            linear: true,
            build: Box::new(|names| {
                let ids: &'static [String] = Box::leak(names.to_vec().into_boxed_slice());
                let mut r = rendezvous_hash::RendezvousNodes::new(rendezvous_hash::DefaultNodeHasher::new());
                for n in ids {
                    r.insert(n.as_str());
                }
                Box::new(move |k: &[u8]| r.calc_candidates(&k).next().map_or(0, |n| n.len()))
            }),
        },
        Entry {
            name: "hrw 0.1 (Rendezvous)",
            baseline: "hashroute Rendezvous",
            hasher: "std RandomState (randomized per process)",
            per: "nodes",
            linear: true,
            build: Box::new(|names| {
                let r = hrw::Rendezvous::from_nodes(names.to_vec());
                Box::new(move |k: &[u8]| r.pick_top(&k).map_or(0, String::len))
            }),
        },
    ]
}

fn main() {
    let mode = report::common::mode();
    let smoke = mode == report::common::Mode::Smoke;
    // consistent_hash_ring builds in O(points²)-like time (≈ 15 s at 1000 × 160), so shorter runs use 200 nodes.
    let n = mode.pick4(50, 200, 200, N);
    let names = cluster_names(0x9EE5, n);
    let keys = sample_keys(mode.pick(20_000, 100_000, 200_000), 3);
    let few = &keys[..mode.pick(1_000, 2_000, 5_000)];
    let base: Vec<(Measured, &str)> = baselines()
        .iter()
        .map(|(name, per, b)| (measure(b, &names, if name.contains("Rendezvous") { few } else { &keys }, name), *per))
        .collect();
    let units = |per: &str| if per == "vnodes" { (n * V) as f64 } else { n as f64 };
    let mut rows = Vec::new();
    let mut md = String::new();
    let _ = writeln!(
        md,
        "{n} nodes{}; ratios are peer / hashroute (lower is better for all three). Heap bytes are counted by a wrapping global allocator; ns/lookup is the best of 3 passes over {} keys ({} for O(N) rendezvous).\n",
        if smoke { " (smoke)" } else { "" },
        keys.len(),
        few.len()
    );
    md.push_str("| crate | compared with | ns/lookup | × | heap bytes per unit | × | build ms | × | hasher |\n|---|---|---|---|---|---|---|---|---|\n");
    for (b, per) in &base {
        let _ = writeln!(
            md,
            "| **{}** | - | {:.1} | 1 | {:.1} per {} | 1 | {:.2} | 1 | xxh3 (deterministic) |",
            b.name,
            b.ns,
            b.heap / units(per),
            &per[..per.len() - 1],
            b.build_ms
        );
    }
    for p in peers() {
        let Some((b, _)) = base.iter().find(|(b, _)| b.name == p.baseline) else { continue };
        let m = measure(&*p.build, &names, if p.linear { few } else { &keys }, p.name);
        let per_unit = m.heap / units(p.per);
        let base_per = b.heap / units(p.per);
        let _ = writeln!(
            md,
            "| {} | {} | {:.1} | {:.2} | {:.1} per {} | {:.2} | {:.2} | {:.2} | {} |",
            m.name,
            p.baseline,
            m.ns,
            m.ns / b.ns,
            per_unit,
            &p.per[..p.per.len() - 1],
            per_unit / base_per,
            m.build_ms,
            m.build_ms / b.build_ms.max(1e-6),
            p.hasher
        );
        rows.push(vec![
            m.name.clone(),
            p.baseline.to_string(),
            format!("{:.2}", m.ns),
            format!("{:.3}", m.ns / b.ns),
            format!("{:.2}", per_unit),
            p.per.to_string(),
            format!("{:.3}", per_unit / base_per),
            format!("{:.3}", m.build_ms),
            format!("{:.3}", m.build_ms / b.build_ms.max(1e-6)),
            p.hasher.to_string(),
        ]);
    }
    md.push_str("\nPeers with a randomized hasher (hash-rings, anchorhash, hrw) route differently in every process: fine for a cache in one process, wrong for clients that must agree. Peers on std's `DefaultHasher` are stable today but Rust does not promise the algorithm across releases. maglev 0.2 uses its own default table size (not necessarily 65537), and mpchash its own probe count, so those ratios compare configurations as shipped.\n");
    println!("{md}");
    if !smoke {
        let dir = report::results_dir();
        let _ = report::write_csv(
            &dir.join("peers.csv"),
            &[
                "crate",
                "compared_with",
                "ns_per_lookup",
                "ns_ratio",
                "heap_bytes_per_unit",
                "unit",
                "heap_ratio",
                "build_ms",
                "build_ratio",
                "hasher",
            ],
            &rows,
        );
        let _ = std::fs::write(dir.join("peers.md"), &md);
        eprintln!("peers: wrote peers.csv and peers.md to {}", dir.display());
    }
}

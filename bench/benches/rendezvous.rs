//! Rendezvous hot path: every kernel path on the same routers, in one run.
//!
//! Ids: `rendezvous/<portable|avx2|avx512|weighted>/<nodes>` for 100 nodes (the performance
//! target's size), and 10 and 1000 in the full suite. Each iteration routes a fixed batch of pre-hashed keys (`route_hash`), so the time
//! per element is the scoring cost per key without the key hash; divide by the node count for
//! the cost per node scored. Paths this CPU lacks are skipped with a message.
//!
//! Plain `cargo bench` and `HASHROUTE_QUICK=1` run 100 nodes with short measurements,
//! `HASHROUTE_FULL=1` all three sizes (benches/common/mod.rs); compare paths by their ratios
//! within one run, not against numbers from another run.

// criterion_group! generates an undocumented public fn.
#![allow(missing_docs)]

#[path = "common/mod.rs"]
mod common;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use hashroute::internals::Isa;
use hashroute::{KeyHasher, Node, NodeSet, Rendezvous, Router};

const KEYS: usize = 256;

fn key_hashes() -> Vec<u64> {
    // SplitMix64 sequence: fixed, well spread key hashes.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..KEYS)
        .map(|_| {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}

fn route_all(r: &Rendezvous, keys: &[u64]) -> u32 {
    let mut acc = 0u32;
    for &k in keys {
        acc = acc.wrapping_add(r.route_hash(black_box(k)).unwrap().as_u32());
    }
    acc
}

fn bench(c: &mut Criterion) {
    eprintln!("rendezvous: dispatch's widest path is {}", Isa::active().name());
    let keys = key_hashes();
    let mut group = c.benchmark_group("rendezvous");
    group.throughput(Throughput::Elements(KEYS as u64));
    let sizes: &[usize] = common::mode().pick(&[100], &[100], &[10, 100, 1000]);
    for &n in sizes {
        let names = (0..n).map(|i| format!("node-{i}"));
        let base = Rendezvous::builder()
            .node_set(NodeSet::from_names(names).unwrap())
            .hasher(KeyHasher::default())
            .build()
            .unwrap();
        for isa in Isa::ALL {
            let Ok(r) = hashroute::internals::rendezvous_with_isa(&base, isa) else {
                eprintln!("SKIPPED: rendezvous/{}/{n} (this CPU lacks it)", isa.name());
                continue;
            };
            group.bench_with_input(BenchmarkId::new(isa.name(), n), &r, |b, r| b.iter(|| route_all(r, &keys)));
        }
        let weighted =
            NodeSet::new((0..n).map(|i| Node::new(format!("node-{i}")).with_weight(1.0 + (i % 5) as f64))).unwrap();
        let w = Rendezvous::builder().node_set(weighted).hasher(KeyHasher::default()).build().unwrap();
        assert!(w.is_weighted());
        group.bench_with_input(BenchmarkId::new("weighted", n), &w, |b, w| b.iter(|| route_all(w, &keys)));
    }
    group.finish();
}

criterion_group! { name = benches; config = common::criterion(); targets = bench }
criterion_main!(benches);

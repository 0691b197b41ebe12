//! Token rings: what an allocated [`TokenRing`] costs to route and to allocate.
//!
//! Ids:
//! - `tokens/<token-ring|ring>-<single|batch>/<points>`: 4096 pre-generated 16-byte keys per
//!   iteration, one `route` at a time or one `route_batch`, on a token ring allocated with 16
//!   tokens per node and on a random-vnode [`Ring`] with as many points (16 vnodes per node).
//!   The ring hashes with the token ring's hasher (`KeyHasher::CassandraMurmur3`) and both
//!   resolve the same search layout, so the two differ only in where their points sit: the pair
//!   shows that a token ring routes at a ring's cost per point.
//! - `tokens/allocate/<nodes>`: a [`TokenAllocator`] fed `<nodes>` unit-weight nodes one at a
//!   time at 16 tokens each (the target: 100000 nodes within 10 s).
//!
//! Sizes per mode (benches/common/mod.rs): routing over 1000 nodes (16000 points) in quick and
//! plain `cargo bench`, 100 to 100000 nodes under `HASHROUTE_FULL=1`; allocation of 1000 nodes,
//! and 10000 and 100000 in the full suite (the largest takes seconds per iteration).

// criterion's macros generate undocumented functions.
#![allow(missing_docs)]

#[path = "common/mod.rs"]
mod common;
use common::{keys16, mode, slow};
use std::hint::black_box;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion, Throughput};
use hashroute::token_ring::TokenAllocator;
use hashroute::{KeyHasher, NodeId, Ring, Router, TokenRing};

/// Keys routed per timed iteration.
const KEYS: usize = 4096;
/// Tokens (and vnodes) per node: Cassandra's `num_tokens` default.
const V: u32 = 16;

fn names(n: usize) -> impl Iterator<Item = String> {
    (0..n).map(|i| format!("node-{i}"))
}

/// The single-key and batch rows of one router.
fn bench_routes(g: &mut BenchmarkGroup<'_, WallTime>, variant: &str, points: usize, r: &dyn Router, ks: &[&[u8]]) {
    let mut out = vec![NodeId::default(); ks.len()];
    g.bench_with_input(BenchmarkId::new(format!("{variant}-single"), points), &points, |b, _| {
        b.iter(|| {
            for (o, k) in out.iter_mut().zip(ks) {
                *o = r.route(k);
            }
            black_box(&out);
        })
    });
    g.bench_with_input(BenchmarkId::new(format!("{variant}-batch"), points), &points, |b, _| {
        b.iter(|| r.route_batch(ks, black_box(&mut out)))
    });
}

fn route(c: &mut Criterion) {
    let mut g = c.benchmark_group("tokens");
    g.throughput(Throughput::Elements(KEYS as u64));
    let owned = keys16(KEYS, 21);
    let ks: Vec<&[u8]> = owned.iter().map(|k| &k[..]).collect();
    let node_counts: &[usize] = mode().pick4(&[100], &[1_000], &[1_000], &[100, 1_000, 10_000, 100_000]);
    for &n in node_counts {
        let tokens = TokenRing::builder().tokens_per_node(V).nodes(names(n)).build().expect("token ring");
        let ring = Ring::builder()
            .vnodes(u64::from(V))
            .hasher(KeyHasher::CassandraMurmur3)
            .nodes(names(n))
            .build()
            .expect("ring");
        assert_eq!(tokens.token_count(), ring.points().len(), "same number of points");
        assert_eq!(tokens.layout(), ring.layout(), "same search layout");
        let points = ring.points().len();
        bench_routes(&mut g, "token-ring", points, &tokens, &ks);
        bench_routes(&mut g, "ring", points, &ring, &ks);
    }
    g.finish();
}

/// `n` unit-weight nodes added one at a time, `V` tokens each.
fn allocate(n: usize) -> TokenAllocator {
    let mut a = TokenAllocator::new();
    for name in names(n) {
        a.add_node(&name, 1.0, "dc1", "rack1", V).expect("allocation");
    }
    a
}

fn allocation(c: &mut Criterion) {
    let mut g = c.benchmark_group("tokens");
    slow(&mut g);
    let node_counts: &[usize] = mode().pick4(&[100], &[1_000], &[1_000], &[1_000, 10_000, 100_000]);
    for &n in node_counts {
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("allocate", n), &n, |b, &n| b.iter(|| allocate(n)));
    }
    g.finish();
}

criterion_group! { name = benches; config = common::criterion(); targets = route, allocation }
criterion_main!(benches);

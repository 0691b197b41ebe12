//! End-to-end routing (hash + lookup) and rayon scaling.
//!
//! Ids: `route/ring/<nodes>` (the ring as built), `route/jump[-single]/<nodes>`,
//! `route/ring-<layout>-<single|batch>/<points>` (a clone forced to one layout),
//! `parallel/<threads|serial>/<keys>`. Sizes and times per mode: benches/common/mod.rs.
//!
//! Plain `cargo bench` (and quick mode) runs the ids the performance targets read
//! (benches/vnodes/targets.rs): the ring at 1000 and 10000 nodes (160K and 1.6M points) as
//! built, forced to the oracle (single key), radix (both) and tree (batch, 160K) layouts, and
//! rayon over 1M keys; `HASHROUTE_FULL=1` every layout, jump, and five sizes.

// criterion's macros generate undocumented functions.
#![allow(missing_docs)]

#[path = "common/mod.rs"]
mod common;
use common::{all_variants, keys16, mode, slow, Mode};
use std::hint::black_box;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion, Throughput};
use hashroute::ring::Layout;
use hashroute::{Jump, NodeId, ParRouteBatch, Ring, Router};

const KEYS: usize = 4096;

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("node-{i}")).collect()
}

/// The layout rows outside the full suite: (layout, single, batch) per node count; the
/// targets read the oracle's single-key rows against the radix and tree batches.
fn default_rows(n: usize, layout: &str) -> (bool, bool) {
    match (layout, n) {
        ("oracle", _) => (true, false),
        ("radix", 1_000) => (true, true),
        ("radix", _) => (false, true),
        ("tree", 1_000) => (false, true),
        _ => (false, false),
    }
}

fn route(c: &mut Criterion) {
    let mut g = c.benchmark_group("route");
    g.throughput(Throughput::Elements(KEYS as u64));
    let owned = keys16(KEYS, 7);
    let ks: Vec<&[u8]> = owned.iter().map(|k| &k[..]).collect();
    let mut out = vec![NodeId::default(); KEYS];
    let node_counts: &[usize] = mode().pick(&[1_000, 10_000], &[1_000, 10_000], &[10, 100, 1_000, 10_000, 100_000]);
    let all = all_variants();
    for &n in node_counts {
        let ring = Ring::builder().vnodes(160).nodes(names(n)).build().unwrap();
        let points = ring.points().len();
        let layouts = [
            ("oracle", Layout::Oracle),
            ("branchless", Layout::Branchless),
            ("tree", Layout::Tree),
            ("radix", Layout::Radix),
        ];
        for (name, layout) in layouts {
            let (single, batch) = if all { (true, true) } else { default_rows(n, name) };
            if !(single || batch) {
                continue;
            }
            let r = ring.clone().with_layout(layout);
            if single {
                g.bench_with_input(BenchmarkId::new(format!("ring-{name}-single"), points), &n, |b, _| {
                    b.iter(|| {
                        for (o, k) in out.iter_mut().zip(&ks) {
                            *o = r.route(k);
                        }
                        black_box(&out);
                    })
                });
            }
            if batch {
                g.bench_with_input(BenchmarkId::new(format!("ring-{name}-batch"), points), &n, |b, _| {
                    b.iter(|| r.route_batch(&ks, black_box(&mut out)))
                });
            }
        }
        g.bench_with_input(BenchmarkId::new("ring", n), &n, |b, _| {
            b.iter(|| ring.route_batch(&ks, black_box(&mut out)))
        });
        if all {
            jump_rows(&mut g, n, &ks, &mut out);
        }
    }
    g.finish();
}

/// `route/jump-single/<n>` and `route/jump/<n>` (batch).
fn jump_rows(g: &mut BenchmarkGroup<'_, WallTime>, n: usize, ks: &[&[u8]], out: &mut [NodeId]) {
    let jump = Jump::from_names(names(n)).unwrap();
    g.bench_with_input(BenchmarkId::new("jump-single", n), &n, |b, _| {
        b.iter(|| {
            for (o, k) in out.iter_mut().zip(ks) {
                *o = jump.route(k);
            }
            black_box(&*out);
        })
    });
    g.bench_with_input(BenchmarkId::new("jump", n), &n, |b, _| b.iter(|| jump.route_batch(ks, black_box(&mut *out))));
}

fn parallel(c: &mut Criterion) {
    let mut g = c.benchmark_group("parallel");
    // A million keys take milliseconds per iteration: outside the full suite, 10 flat samples
    // fit the short measurement time instead of criterion stretching it.
    if mode() != Mode::Full {
        slow(&mut g);
    }
    let ring = Ring::builder().vnodes(160).nodes(names(10_000)).build().unwrap();
    let sizes: &[usize] = mode().pick4(&[4_096], &[1 << 20], &[1 << 20], &[1_024, 4_096, 65_536, 1 << 20]);
    for &n in sizes {
        let owned = keys16(n, 9);
        let ks: Vec<&[u8]> = owned.iter().map(|k| &k[..]).collect();
        let mut out = vec![NodeId::default(); n];
        g.throughput(Throughput::Elements(n as u64));
        for threads in [1usize, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            g.bench_with_input(BenchmarkId::new(format!("{threads}"), n), &n, |b, _| {
                b.iter(|| pool.install(|| ring.par_route_batch(&ks, black_box(&mut out))))
            });
        }
        g.bench_with_input(BenchmarkId::new("serial", n), &n, |b, _| {
            b.iter(|| ring.route_batch(&ks, black_box(&mut out)))
        });
    }
    g.finish();
}

criterion_group! { name = benches; config = common::criterion(); targets = route, parallel }
criterion_main!(benches);

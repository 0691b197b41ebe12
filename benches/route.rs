//! End-to-end routing (hash + lookup) and rayon scaling.
//!
//! Ids: `route/<router>-<single|batch>/<nodes>`, `route/ring-<layout>-batch/<points>`,
//! `parallel/<threads>/<keys>`. Sizes and times per mode: benches/common/mod.rs.

// criterion's macros generate undocumented functions.
#![allow(missing_docs)]

#[path = "common/mod.rs"]
mod common;
use common::{keys16, mode};
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use hashroute::ring::Layout;
use hashroute::{Jump, NodeId, ParRouteBatch, Ring, Router};

const KEYS: usize = 4096;

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("node-{i}")).collect()
}

fn route(c: &mut Criterion) {
    let mut g = c.benchmark_group("route");
    g.throughput(Throughput::Elements(KEYS as u64));
    let owned = keys16(KEYS, 7);
    let ks: Vec<&[u8]> = owned.iter().map(|k| &k[..]).collect();
    let mut out = vec![NodeId::default(); KEYS];
    let node_counts: &[usize] = mode().pick(&[1_000, 10_000], &[1_000, 10_000], &[10, 100, 1_000, 10_000, 100_000]);
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
            let r = ring.clone().with_layout(layout);
            g.bench_with_input(BenchmarkId::new(format!("ring-{name}-single"), points), &n, |b, _| {
                b.iter(|| {
                    for (o, k) in out.iter_mut().zip(&ks) {
                        *o = r.route(k);
                    }
                    black_box(&out);
                })
            });
            g.bench_with_input(BenchmarkId::new(format!("ring-{name}-batch"), points), &n, |b, _| {
                b.iter(|| r.route_batch(&ks, black_box(&mut out)))
            });
        }
        g.bench_with_input(BenchmarkId::new("ring", n), &n, |b, _| {
            b.iter(|| ring.route_batch(&ks, black_box(&mut out)))
        });
        let jump = Jump::from_names(names(n)).unwrap();
        g.bench_with_input(BenchmarkId::new("jump-single", n), &n, |b, _| {
            b.iter(|| {
                for (o, k) in out.iter_mut().zip(&ks) {
                    *o = jump.route(k);
                }
                black_box(&out);
            })
        });
        g.bench_with_input(BenchmarkId::new("jump", n), &n, |b, _| {
            b.iter(|| jump.route_batch(&ks, black_box(&mut out)))
        });
    }
    g.finish();
}

fn parallel(c: &mut Criterion) {
    let mut g = c.benchmark_group("parallel");
    let ring = Ring::builder().vnodes(160).nodes(names(10_000)).build().unwrap();
    let sizes: &[usize] = mode().pick(&[4_096, 1 << 20], &[4_096, 1 << 20], &[1_024, 4_096, 65_536, 1 << 20]);
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

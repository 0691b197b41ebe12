//! Search kernels over sorted points, jump SIMD vs scalar, and ring build time.
//!
//! Ids: `lookup/<kernel>/<points>`, `jump/<scalar|simd>/<buckets>`, `build/<points>` and
//! `build/<add-node|remove-node>/<points>`.
//! Sizes and times per mode (benches/common/mod.rs): quick and plain `cargo bench` run three ring
//! sizes with the tree and radix kernels on the CPU's widest instruction set only, jump at 1000
//! buckets, and the builds the performance targets read (160K points, and the full build at
//! 1.6M); `HASHROUTE_FULL=1` runs every instruction set, all five sizes (the 16M size only
//! there) and every build.

// criterion's macros generate undocumented functions.
#![allow(missing_docs)]

#[path = "common/mod.rs"]
mod common;
use common::{all_variants, hashes, mode, slow};
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use hashroute::internals::{self as search, Eytzinger, Isa, Radix, Tree};
use hashroute::{jump, Ring};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// Keys routed per timed iteration.
const KEYS: usize = 4096;

fn sizes() -> Vec<usize> {
    mode().pick(
        vec![16_000, 160_000, 1_600_000],
        vec![16_000, 160_000, 1_600_000],
        vec![1_600, 16_000, 160_000, 1_600_000, 16_000_000],
    )
}

fn sorted_points(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut p: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
    p.sort_unstable();
    p
}

/// The instruction sets the tree and radix kernels run on: every one this CPU has in the full
/// suite, else the widest (the one routers dispatch to).
fn isas() -> Vec<Isa> {
    if all_variants() {
        Isa::ALL.into_iter().filter(|i| i.is_supported()).collect()
    } else {
        vec![Isa::active()]
    }
}

fn lookup(c: &mut Criterion) {
    let mut g = c.benchmark_group("lookup");
    g.throughput(Throughput::Elements(KEYS as u64));
    for n in sizes() {
        let points = sorted_points(n, 1);
        let hs = hashes(KEYS, 2);
        let tree = Tree::build(&points);
        let eyt = Eytzinger::build(&points);
        let radix = Radix::build(&points);
        let mut out = vec![0usize; KEYS];
        g.bench_with_input(BenchmarkId::new("oracle", n), &n, |b, _| {
            b.iter(|| hs.iter().map(|&h| search::oracle(&points, h)).fold(0, |a, i| a ^ i))
        });
        g.bench_with_input(BenchmarkId::new("branchless", n), &n, |b, _| {
            b.iter(|| hs.iter().map(|&h| search::branchless(&points, h)).fold(0, |a, i| a ^ i))
        });
        g.bench_with_input(BenchmarkId::new("eytzinger", n), &n, |b, _| {
            b.iter(|| hs.iter().map(|&h| eyt.lookup(h)).fold(0, |a, i| a ^ i))
        });
        for isa in isas() {
            g.bench_with_input(BenchmarkId::new(format!("tree-{}", isa.name()), n), &n, |b, _| {
                b.iter(|| hs.iter().map(|&h| tree.lookup_with(isa, &points, h)).fold(0, |a, i| a ^ i))
            });
        }
        for isa in isas() {
            g.bench_with_input(BenchmarkId::new(format!("radix-{}", isa.name()), n), &n, |b, _| {
                b.iter(|| hs.iter().map(|&h| radix.lookup_with(isa, &points, h)).fold(0, |a, i| a ^ i))
            });
        }
        g.bench_with_input(BenchmarkId::new("branchless-batch", n), &n, |b, _| {
            b.iter(|| search::branchless_batch(&points, &hs, black_box(&mut out)))
        });
        for isa in isas() {
            g.bench_with_input(BenchmarkId::new(format!("tree-batch-{}", isa.name()), n), &n, |b, _| {
                b.iter(|| tree.lookup_batch_with(isa, &points, &hs, black_box(&mut out)))
            });
            g.bench_with_input(BenchmarkId::new(format!("radix-batch-{}", isa.name()), n), &n, |b, _| {
                b.iter(|| radix.lookup_batch_with(isa, &points, &hs, black_box(&mut out)))
            });
        }
    }
    g.finish();
}

fn jump_bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("jump");
    g.throughput(Throughput::Elements(KEYS as u64));
    let ks = hashes(KEYS, 3);
    let mut out = vec![0u32; KEYS];
    let buckets: &[u32] = mode().pick(&[1000], &[1000], &[10, 1000, 100_000]);
    for &n in buckets {
        g.bench_with_input(BenchmarkId::new("scalar", n), &n, |b, &n| {
            b.iter(|| {
                for (o, &k) in out.iter_mut().zip(&ks) {
                    *o = jump::bucket(k, n);
                }
                black_box(&out);
            })
        });
        g.bench_with_input(BenchmarkId::new("simd", n), &n, |b, &n| {
            b.iter(|| jump::bucket_batch(&ks, n, black_box(&mut out)))
        });
    }
    g.finish();
}

fn build(c: &mut Criterion) {
    let mut g = c.benchmark_group("build");
    slow(&mut g);
    let points: &[usize] = mode().pick(&[160_000, 1_600_000], &[160_000, 1_600_000], &[160_000, 1_600_000, 16_000_000]);
    for &p in points {
        let nodes: Vec<String> = (0..p / 160).map(|i| format!("node-{i}")).collect();
        g.throughput(Throughput::Elements(p as u64));
        g.bench_with_input(BenchmarkId::from_parameter(p), &p, |b, _| {
            b.iter(|| Ring::builder().vnodes(160).nodes(nodes.iter()).build().unwrap())
        });
        // The targets read the membership changes at 160K points only.
        if p != 160_000 && !all_variants() {
            continue;
        }
        let ring = Ring::builder().vnodes(160).nodes(nodes.iter()).build().unwrap();
        g.bench_with_input(BenchmarkId::new("add-node", p), &p, |b, _| {
            b.iter(|| ring.with_node(hashroute::Node::new("extra-node")).unwrap())
        });
        g.bench_with_input(BenchmarkId::new("remove-node", p), &p, |b, _| {
            b.iter(|| ring.without_node("node-7").unwrap())
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = common::criterion();
    targets = lookup, jump_bench, build
}
criterion_main!(benches);

//! The constant-time jump family next to jump, Memento, Anchor and the reference
//! crates, same run, same keys: one key at a time and batched, hash included (xxh3 of a 16-byte
//! key; the crates get the same xxh3 hash).
//!
//! Ids: `jumpfamily/<variant>/<buckets>` (one `route` per key on the concrete type;
//! `<variant>-any` through the configured-router enum `AnyRouter`) and
//! `jumpfamily/<variant>-batch/<buckets>` (`route_batch`, or for a crate: hash the chunk, then
//! its function per hash), buckets 10, 1000 and 10^6; plus the removal states
//! `jumpfamily/<jumpback-anchor|memento|anchor>-removed<10|50|90>/1000` (that percentage of the
//! 1000 ids removed, a seeded random choice). `fliphash-fn` / `power-fn` run hashroute's free
//! functions in the crates' harness (xxh3, then the function), so their ratio to `*-crate`
//! compares the kernels alone; `*-kernel[-batch]` time jump's and JumpBack's kernels on
//! pre-computed hashes (no key hashing). Every iteration routes 4096 keys. `anchorhash-crate`
//! takes a u16 capacity, so it has no 10^6 row.
//!
//! Plain `cargo bench` (and quick mode) runs the rows the performance targets read
//! (benches/vnodes/targets.rs) and each router's single-key row, at 1000 buckets; at 10^6 only
//! jump's and JumpBack's single-key rows; of the removal states only `-removed10` of
//! JumpBackAnchor and Memento. `HASHROUTE_FULL=1` runs every row at every size
//! (benches/common/mod.rs; quick mode also shortens the per-benchmark times).

// criterion's macros generate undocumented functions.
#![allow(missing_docs)]

#[path = "common/mod.rs"]
mod common;
use common::{all_variants, keys16, mode, Mode};
use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion, Throughput};
use hashroute::jumpback::JumpBackGenerator;
use hashroute::{
    Anchor, AnyRouter, BinomialHash, FlipHash, Jump, JumpBack, JumpBackAnchor, Memento, NodeId, PowerCh, Router,
};
use rand::seq::SliceRandom;
use rand::SeedableRng;

const KEYS: usize = 4096;

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("node-{i}")).collect()
}

fn xxh(k: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(k)
}

/// The rows of one hashroute router, on its concrete type: single-key `route`, and
/// `route_batch` when `batch`.
fn bench_router<R: Router + ?Sized>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    variant: &str,
    n: usize,
    r: &R,
    ks: &[&[u8]],
    batch: bool,
) {
    let mut out = vec![NodeId::default(); ks.len()];
    g.bench_with_input(BenchmarkId::new(variant, n), &n, |b, _| {
        b.iter(|| {
            for (o, k) in out.iter_mut().zip(ks) {
                *o = r.route(k);
            }
            black_box(&out);
        })
    });
    if batch {
        g.bench_with_input(BenchmarkId::new(format!("{variant}-batch"), n), &n, |b, _| {
            b.iter(|| r.route_batch(ks, black_box(&mut out)))
        });
    }
}

/// The single-key row of a router known as an [`AnyRouter`] (the configured-router enum).
fn bench_single(g: &mut BenchmarkGroup<'_, WallTime>, variant: &str, n: usize, r: &AnyRouter, ks: &[&[u8]]) {
    let mut out = vec![NodeId::default(); ks.len()];
    g.bench_with_input(BenchmarkId::new(variant, n), &n, |b, _| {
        b.iter(|| {
            for (o, k) in out.iter_mut().zip(ks) {
                *o = r.route(k);
            }
            black_box(&out);
        })
    });
}

/// The rows of a crate's hash-to-bucket function `f`: one key at a time, and hash the chunk
/// first when `batch`.
fn bench_fn(
    g: &mut BenchmarkGroup<'_, WallTime>,
    variant: &str,
    n: usize,
    f: impl Fn(u64) -> u32,
    ks: &[&[u8]],
    batch: bool,
) {
    let mut out = vec![0u32; ks.len()];
    let mut hashes = vec![0u64; ks.len()];
    g.bench_with_input(BenchmarkId::new(variant, n), &n, |b, _| {
        b.iter(|| {
            for (o, k) in out.iter_mut().zip(ks) {
                *o = f(xxh(k));
            }
            black_box(&out);
        })
    });
    if !batch {
        return;
    }
    g.bench_with_input(BenchmarkId::new(format!("{variant}-batch"), n), &n, |b, _| {
        b.iter(|| {
            for (h, k) in hashes.iter_mut().zip(ks) {
                *h = xxh(k);
            }
            for (o, &h) in out.iter_mut().zip(&hashes) {
                *o = f(h);
            }
            black_box(&out);
        })
    });
}

/// A hash-to-bucket function on (hash, buckets).
type BucketFn = fn(u64, u32) -> u32;

/// The kernels alone on pre-computed hashes: `jump-kernel-batch` / `jumpback-kernel-batch`
/// (the SIMD `bucket_batch`), and with `scalar` the loops `jump-kernel` / `jumpback-kernel`.
fn bench_kernels(g: &mut BenchmarkGroup<'_, WallTime>, n: usize, hashes: &[u64], scalar: bool) {
    let nn = n as u32;
    let mut out = vec![0u32; hashes.len()];
    let singles: [(&str, BucketFn); 2] =
        [("jump-kernel", hashroute::jump::bucket), ("jumpback-kernel", hashroute::jumpback::bucket)];
    for (name, f) in singles.into_iter().filter(|_| scalar) {
        g.bench_with_input(BenchmarkId::new(name, n), &n, |b, _| {
            b.iter(|| {
                for (o, &h) in out.iter_mut().zip(hashes) {
                    *o = f(h, nn);
                }
                black_box(&out);
            })
        });
    }
    g.bench_with_input(BenchmarkId::new("jump-kernel-batch", n), &n, |b, _| {
        b.iter(|| hashroute::jump::bucket_batch(hashes, nn, black_box(&mut out)))
    });
    g.bench_with_input(BenchmarkId::new("jumpback-kernel-batch", n), &n, |b, _| {
        b.iter(|| hashroute::jumpback::bucket_batch(hashes, nn, JumpBackGenerator::SplitMix64, black_box(&mut out)))
    });
}

/// Quick mode: short times so the whole bench takes seconds.
fn group<'a>(c: &'a mut Criterion) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group("jumpfamily");
    g.throughput(Throughput::Elements(KEYS as u64));
    if mode() == Mode::Quick {
        g.warm_up_time(Duration::from_millis(50)).measurement_time(Duration::from_millis(150));
    }
    g
}

fn family(c: &mut Criterion) {
    let mut g = group(c);
    let owned = keys16(KEYS, 14);
    let ks: Vec<&[u8]> = owned.iter().map(|k| &k[..]).collect();
    let hashes: Vec<u64> = ks.iter().map(|k| xxh(k)).collect();
    let sizes: &[usize] = mode().pick4(&[10], &[1_000], &[1_000, 1_000_000], &[10, 1_000, 1_000_000]);
    let all = all_variants();
    for &n in sizes {
        // One router alive at a time: a million-node set is big.
        let every_router = all || n == 1_000;
        bench_router(&mut g, "jumpback", n, &JumpBack::from_names(names(n)).unwrap(), &ks, every_router);
        let jump = Jump::from_names(names(n)).unwrap();
        bench_router(&mut g, "jump", n, &jump, &ks, every_router);
        if every_router {
            family_rows(&mut g, n, jump, &ks, &hashes, all);
        }
    }
    g.finish();
}

/// Every router but jump and JumpBack at `n` buckets: single-key rows, the batch rows with
/// `all` (the SIMD kernels' batch rows always: a target reads them).
fn family_rows(g: &mut BenchmarkGroup<'_, WallTime>, n: usize, jump: Jump, ks: &[&[u8]], hashes: &[u64], all: bool) {
    let nn = n as u32;
    if all {
        let x = JumpBack::builder().generator(JumpBackGenerator::XorshiftL7R9).nodes(names(n)).build().unwrap();
        bench_router(g, "jumpback-xorshift", n, &x, ks, true);
    }
    let flip = FlipHash::from_names(names(n)).unwrap();
    bench_router(g, "fliphash", n, &flip, ks, all);
    bench_single(g, "fliphash-any", n, &AnyRouter::from(flip), ks);
    bench_fn(g, "fliphash-fn", n, |h| hashroute::fliphash::bucket(h, nn), ks, all);
    bench_fn(g, "fliphash-crate", n, |h| fliphash::fliphash_64(h, ..=u64::from(nn - 1)) as u32, ks, all);
    let power = PowerCh::from_names(names(n)).unwrap();
    bench_router(g, "power", n, &power, ks, all);
    bench_single(g, "power-any", n, &AnyRouter::from(power), ks);
    bench_fn(g, "power-fn", n, |h| hashroute::power::bucket(h, nn), ks, all);
    let p = power_consistent_hash::PowerConsistentHasher::try_new(nn).unwrap();
    bench_fn(g, "power-crate", n, |h| p.hash_u64(h), ks, all);
    bench_router(g, "binomial", n, &BinomialHash::from_names(names(n)).unwrap(), ks, all);
    bench_single(g, "jump-any", n, &AnyRouter::from(jump), ks);
    bench_kernels(g, n, hashes, all);
    bench_fn(g, "jump-crate", n, |h| jump_consistent_hash::hash(h, n) as u32, ks, all);
    bench_router(g, "memento", n, &Memento::from_names(names(n)).unwrap(), ks, all);
    bench_router(g, "anchor", n, &Anchor::builder().capacity(2 * nn).nodes(names(n)).build().unwrap(), ks, all);
    if all && 2 * n <= usize::from(u16::MAX) {
        let a: anchorhash::AnchorHash<u64, String, _> =
            anchorhash::Builder::default().with_resources(names(n)).build((2 * n) as u16);
        bench_fn(g, "anchorhash-crate", n, |h| a.get_resource(h).map_or(0, |s| s.len() as u32), ks, true);
    }
    bench_router(g, "jumpback-anchor", n, &JumpBackAnchor::from_names(names(n)).unwrap(), ks, all);
}

/// `pct`% of 1000 node names, a seeded random choice (not the last ones).
fn victims(pct: usize) -> Vec<String> {
    let mut all = names(1000);
    all.shuffle(&mut rand_pcg::Pcg64::seed_from_u64(0x5EED_0014 + pct as u64));
    all.truncate(1000 * pct / 100);
    all
}

fn removals(c: &mut Criterion) {
    let mut g = group(c);
    let owned = keys16(KEYS, 15);
    let ks: Vec<&[u8]> = owned.iter().map(|k| &k[..]).collect();
    let n = 1000;
    // Outside the full suite: the 10% state of JumpBackAnchor and Memento (the target's pair).
    let all = all_variants();
    let pcts: &[usize] = if all { &[10, 50, 90] } else { &[10] };
    for &pct in pcts {
        let gone = victims(pct);
        let mut jba = JumpBackAnchor::from_names(names(n)).unwrap();
        let mut memento = Memento::from_names(names(n)).unwrap();
        let mut anchor = Anchor::builder().capacity(2 * n as u32).nodes(names(n)).build().unwrap();
        for v in &gone {
            jba = jba.without_node(v).unwrap();
            memento = memento.without_node(v).unwrap();
            anchor = anchor.without_node(v).unwrap();
        }
        let routers: [(&str, &dyn Router); 3] = [("jumpback-anchor", &jba), ("memento", &memento), ("anchor", &anchor)];
        for (name, r) in routers.into_iter().filter(|(name, _)| all || *name != "anchor") {
            bench_router(&mut g, &format!("{name}-removed{pct}"), n, r, &ks, all);
        }
    }
    g.finish();
}

criterion_group! { name = benches; config = common::criterion(); targets = family, removals }
criterion_main!(benches);

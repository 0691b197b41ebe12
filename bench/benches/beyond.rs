//! Maglev, multi-probe, MementoHash and bounded loads: lookups, builds and membership changes.
//!
//! Ids `group/variant/size`: `beyond-route/<algo>-single/<nodes>`, `beyond-build/<algo>/<nodes>`,
//! `beyond-build/<memento|anchor>-remove/<nodes>`, `beyond-bounded/assign-eps<ε>/<nodes>`. Quick and plain
//! `cargo bench` run 1000 nodes (no report table reads these groups; the console shows them),
//! `HASHROUTE_FULL=1` four sizes (benches/common/mod.rs).

// `criterion_group!` generates an undocumented `pub fn benches`.
#![allow(missing_docs)]

#[path = "common/mod.rs"]
mod common;
use common::{keys16, mode, slow};
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use hashroute::{Anchor, BoundedLoads, Jump, KeyHasher, Maglev, Memento, MultiProbe, NodeId, NodeSet, Ring, Router};

const KEYS: usize = 4096;

fn sizes() -> &'static [usize] {
    mode().pick(&[1_000], &[1_000], &[10, 100, 1_000, 10_000])
}

fn set(n: usize) -> NodeSet {
    NodeSet::from_names((0..n).map(|i| format!("node-{i}"))).unwrap()
}

fn route(c: &mut Criterion) {
    let mut g = c.benchmark_group("beyond-route");
    g.throughput(Throughput::Elements(KEYS as u64));
    let owned = keys16(KEYS, 11);
    let mut out = vec![NodeId::default(); KEYS];
    for &n in sizes() {
        let s = set(n);
        // Maglev needs M >= N; 65537 covers every size here.
        let routers: Vec<(&str, Box<dyn Router>)> = vec![
            (
                "maglev",
                Box::new(
                    Maglev::builder()
                        .node_set(s.clone())
                        .hasher(KeyHasher::default())
                        .table_size(65537)
                        .build()
                        .unwrap(),
                ),
            ),
            (
                "multiprobe21",
                Box::new(
                    MultiProbe::builder().node_set(s.clone()).hasher(KeyHasher::default()).probes(21).build().unwrap(),
                ),
            ),
            // Baseline: Memento with nothing removed routes exactly like jump.
            ("jump", Box::new(Jump::builder().node_set(s.clone()).hasher(KeyHasher::default()).build().unwrap())),
            ("memento", Box::new(Memento::builder().node_set(s.clone()).hasher(KeyHasher::default()).build().unwrap())),
            (
                "anchor-cap2n",
                Box::new(
                    Anchor::builder()
                        .node_set(s.clone())
                        .hasher(KeyHasher::default())
                        .capacity(2 * n as u32)
                        .build()
                        .unwrap(),
                ),
            ),
            (
                "memento-10pct-removed",
                Box::new({
                    let mut m = Memento::builder().node_set(s.clone()).hasher(KeyHasher::default()).build().unwrap();
                    for i in (0..n).step_by(10) {
                        m = m.without_node(&format!("node-{i}")).unwrap();
                    }
                    m
                }),
            ),
        ];
        for (name, r) in &routers {
            g.bench_with_input(BenchmarkId::new(format!("{name}-single"), n), &n, |b, _| {
                b.iter(|| {
                    for (o, k) in out.iter_mut().zip(&owned) {
                        *o = r.route(k);
                    }
                    black_box(&out);
                })
            });
        }
    }
    g.finish();
}

fn build(c: &mut Criterion) {
    let mut g = c.benchmark_group("beyond-build");
    slow(&mut g);
    for &n in sizes() {
        let s = set(n);
        g.bench_with_input(BenchmarkId::new("maglev-65537", n), &n, |b, _| {
            b.iter(|| {
                Maglev::builder()
                    .node_set(black_box(s.clone()))
                    .hasher(KeyHasher::default())
                    .table_size(65537)
                    .build()
                    .unwrap()
            })
        });
        g.bench_with_input(BenchmarkId::new("multiprobe", n), &n, |b, _| {
            b.iter(|| {
                MultiProbe::builder()
                    .node_set(black_box(s.clone()))
                    .hasher(KeyHasher::default())
                    .probes(21)
                    .build()
                    .unwrap()
            })
        });
        let m = Memento::builder().node_set(s.clone()).hasher(KeyHasher::default()).build().unwrap();
        let victim = format!("node-{}", n / 2);
        g.bench_with_input(BenchmarkId::new("memento-remove", n), &n, |b, _| {
            b.iter(|| m.without_node(&victim).unwrap())
        });
        let a =
            Anchor::builder().node_set(s.clone()).hasher(KeyHasher::default()).capacity(2 * n as u32).build().unwrap();
        g.bench_with_input(BenchmarkId::new("anchor-remove", n), &n, |b, _| {
            b.iter(|| a.without_node(&victim).unwrap())
        });
    }
    g.finish();
}

fn bounded(c: &mut Criterion) {
    let mut g = c.benchmark_group("beyond-bounded");
    slow(&mut g);
    let owned = keys16(KEYS, 13);
    g.throughput(Throughput::Elements(KEYS as u64));
    for &n in sizes() {
        let ring = std::sync::Arc::new(Ring::builder().vnodes(160).node_set(set(n)).build().unwrap());
        for eps in [0.1, 0.25, 1.0] {
            g.bench_with_input(BenchmarkId::new(format!("assign-eps{eps}"), n), &n, |b, _| {
                b.iter(|| {
                    let mut bl = BoundedLoads::new(ring.clone(), eps).unwrap();
                    for k in &owned {
                        black_box(bl.assign(k).unwrap());
                    }
                    bl
                })
            });
        }
    }
    g.finish();
}

criterion_group! { name = benches; config = common::criterion(); targets = route, build, bounded }
criterion_main!(benches);

//! Instruction counts for the lookup kernels with iai-callgrind 0.14 (its continuation is
//! named gungraun): ring route, jump, and the bucket routers' `route` on their concrete type and
//! through `AnyRouter`, under Valgrind's Callgrind.
//!
//! Needs Valgrind and `iai-callgrind-runner` of the same version as the library, so plain
//! `cargo bench` skips this target (`bench = false` in Cargo.toml). Run `scripts/iai.sh`, which
//! installs the pinned runner and calls `cargo bench --bench iai`.

#![allow(missing_docs)]

use std::hint::black_box;

use hashroute::{jump, AnyRouter, BinomialHash, FlipHash, JumpBack, PowerCh, Ring, Router};
use iai_callgrind::{library_benchmark, library_benchmark_group, main};

/// Setup (not measured): the ring, plus one route so the once-per-process ISA detection
/// happens here rather than inside the measured call.
fn ring(nodes: usize, vnodes: u64) -> Ring {
    let r = Ring::builder()
        .vnodes(vnodes)
        .nodes((0..nodes).map(|i| format!("10.0.{}.{}:11211", i / 256, i % 256)))
        .build()
        .expect("valid ring");
    black_box(r.route(b"warm-up"));
    r
}

#[library_benchmark]
#[bench::n10_v160(ring(10, 160))]
#[bench::n1000_v160(ring(1000, 160))]
fn ring_route(r: Ring) -> u32 {
    let node = black_box(r.route(black_box(b"user:12345:profile"))).as_u32();
    // Dropping the ring (1000 names, megabytes of points) would dominate the count; the
    // benchmark process exits right after.
    std::mem::forget(r);
    node
}

#[library_benchmark]
#[bench::n1000_v160(ring(1000, 160))]
fn ring_route_hash(r: Ring) -> u32 {
    let node = black_box(r.route_hash(black_box(0x9E37_79B9_7F4A_7C15)).expect("rings route 64-bit hashes")).as_u32();
    std::mem::forget(r);
    node
}

#[library_benchmark]
#[bench::n10(10)]
#[bench::n1000(1000)]
#[bench::n1m(1_000_000)]
fn jump_bucket(buckets: u32) -> u32 {
    black_box(jump::bucket(black_box(0x9E37_79B9_7F4A_7C15), buckets))
}

/// 1,000 bucket names for the bucket routers.
fn names() -> impl Iterator<Item = String> {
    (0..1000).map(|i| format!("node-{i}"))
}

/// Setup (not measured): a bucket router at 1,000 nodes, as its concrete type, warmed up.
fn bucket<R: Router>(r: R) -> R {
    black_box(r.route(b"warm-up"));
    r
}

/// The same router through `AnyRouter`, what `RouterSpec::build` returns.
fn any<R: Router>(r: R) -> AnyRouter
where
    AnyRouter: From<R>,
{
    bucket(AnyRouter::from(r))
}

/// One `route` on a router, which is then leaked (its drop is not the point).
fn route_once<R: Router>(r: R) -> u32 {
    let node = black_box(r.route(black_box(b"user:12345:profile"))).as_u32();
    std::mem::forget(r);
    node
}

#[library_benchmark]
#[bench::n1000(bucket(FlipHash::from_names(names()).expect("names")))]
fn fliphash_route(r: FlipHash) -> u32 {
    route_once(r)
}

#[library_benchmark]
#[bench::n1000(bucket(PowerCh::from_names(names()).expect("names")))]
fn power_route(r: PowerCh) -> u32 {
    route_once(r)
}

#[library_benchmark]
#[bench::n1000(bucket(BinomialHash::from_names(names()).expect("names")))]
fn binomial_route(r: BinomialHash) -> u32 {
    route_once(r)
}

#[library_benchmark]
#[bench::n1000(bucket(JumpBack::from_names(names()).expect("names")))]
fn jumpback_route(r: JumpBack) -> u32 {
    route_once(r)
}

#[library_benchmark]
#[bench::fliphash(any(FlipHash::from_names(names()).expect("names")))]
#[bench::power(any(PowerCh::from_names(names()).expect("names")))]
#[bench::binomial(any(BinomialHash::from_names(names()).expect("names")))]
#[bench::jumpback(any(JumpBack::from_names(names()).expect("names")))]
fn any_route(r: AnyRouter) -> u32 {
    route_once(r)
}

library_benchmark_group!(
    name = kernels;
    benchmarks = ring_route, ring_route_hash, jump_bucket, fliphash_route, power_route, binomial_route,
        jumpback_route, any_route
);
main!(library_benchmark_groups = kernels);

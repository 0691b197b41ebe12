//! Each search kernel and each SIMD jump kernel against its scalar oracle, on every ISA path
//! this CPU has, over arbitrary arrays at every sub-slice offset. The arrays are copied into
//! exact-size allocations so a wide load past the end is an AddressSanitizer report.
#![no_main]

use arbitrary::Arbitrary;
use hashroute::internals::rendezvous_with_isa;
use hashroute::internals::{branchless, branchless_batch, jump_bucket_batch_with, oracle, Eytzinger, Isa, Radix, Tree};
use hashroute::{Rendezvous, Router};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    points: Vec<u64>,
    /// Points are spread by this shift so small fuzzer values still cover the high bits.
    spread: u8,
    dedup: bool,
    hashes: Vec<u64>,
    buckets: u32,
    /// Rendezvous node count (past the 8-lane widths and the 64-node portable cut-over).
    rendezvous_nodes: u8,
    go: bool,
}

fuzz_target!(|input: Input| {
    let shift = u32::from(input.spread % 64);
    let mut points: Vec<u64> = input.points.iter().map(|p| p.rotate_left(shift)).collect();
    points.sort_unstable();
    if input.dedup {
        points.dedup();
    }
    // Probes: the fuzzer's hashes, every point, its neighbours, and the extremes.
    // (Bounded so one input stays around a millisecond under ASan: depth, not breadth.)
    let mut hashes: Vec<u64> = input.hashes.iter().take(48).map(|h| h.rotate_left(shift)).collect();
    for &p in points.iter().take(16) {
        hashes.extend([p, p.wrapping_sub(1), p.wrapping_add(1)]);
    }
    hashes.extend([0, 1, u64::MAX, u64::MAX - 1]);
    let hashes = exact(&hashes);
    // Every offset for short arrays, a few for long ones (suffixes stay sorted).
    let offsets: Vec<usize> = if points.len() <= 16 {
        (0..=points.len()).collect()
    } else {
        vec![0, 1, 7, points.len() / 2, points.len() - 9, points.len() - 1, points.len()]
    };
    for off in offsets {
        for end in [points.len(), points.len().saturating_sub(3).max(off)] {
            search(&exact(&points[off..end]), &hashes);
        }
    }
    jump(&hashes, input.buckets);
    rendezvous(usize::from(input.rendezvous_nodes) + 1, input.go, &hashes);
});

/// A copy whose allocation ends exactly at the last element.
fn exact(s: &[u64]) -> Vec<u64> {
    let mut v = Vec::with_capacity(s.len());
    v.extend_from_slice(s);
    v.shrink_to_fit();
    v
}

fn search(points: &[u64], hashes: &[u64]) {
    let want: Vec<usize> = hashes.iter().map(|&h| oracle(points, h)).collect();
    let got: Vec<usize> = hashes.iter().map(|&h| branchless(points, h)).collect();
    assert_eq!(got, want, "branchless over {} points", points.len());
    let mut out = vec![usize::MAX; hashes.len()];
    branchless_batch(points, hashes, &mut out);
    assert_eq!(out, want, "branchless_batch over {} points", points.len());
    let ey = Eytzinger::build(points);
    let got: Vec<usize> = hashes.iter().map(|&h| ey.lookup(h)).collect();
    assert_eq!(got, want, "eytzinger over {} points", points.len());
    let tree = Tree::build(points);
    let radix = Radix::build(points);
    for isa in Isa::ALL.into_iter().filter(|i| i.is_supported()) {
        let got: Vec<usize> = hashes.iter().map(|&h| tree.lookup_with(isa, points, h)).collect();
        assert_eq!(got, want, "tree {} over {} points", isa.name(), points.len());
        let got: Vec<usize> = hashes.iter().map(|&h| radix.lookup_with(isa, points, h)).collect();
        assert_eq!(got, want, "radix {} over {} points", isa.name(), points.len());
        // Batches at every length up to a few lanes past the batch width, from each end.
        for len in [0, 1, 3, 4, 7, 8, 9, 31, 32, 33, hashes.len()] {
            let len = len.min(hashes.len());
            for hs in [&hashes[..len], &hashes[hashes.len() - len..]] {
                let hs = exact(hs);
                let want: Vec<usize> = hs.iter().map(|&h| oracle(points, h)).collect();
                let mut out = vec![usize::MAX; hs.len()];
                tree.lookup_batch_with(isa, points, &hs, &mut out);
                assert_eq!(out, want, "tree batch {} over {} points", isa.name(), points.len());
                radix.lookup_batch_with(isa, points, &hs, &mut out);
                assert_eq!(out, want, "radix batch {} over {} points", isa.name(), points.len());
            }
        }
    }
}

fn jump(keys: &[u64], buckets: u32) {
    for buckets in [buckets, buckets % 1000, 1, 2, u32::MAX] {
        if buckets == 0 {
            assert!(hashroute::jump::try_bucket(keys.first().copied().unwrap_or(0), 0).is_err());
            continue;
        }
        let want: Vec<u32> = keys.iter().map(|&k| hashroute::jump::bucket(k, buckets)).collect();
        assert!(want.iter().all(|&b| b < buckets));
        for isa in Isa::ALL.into_iter().filter(|i| i.is_supported()) {
            for off in [0, 1, 3, keys.len().saturating_sub(5)] {
                let off = off.min(keys.len());
                let ks = exact(&keys[off..]);
                let mut out = vec![u32::MAX; ks.len()];
                jump_bucket_batch_with(isa, &ks, buckets, &mut out);
                assert_eq!(out, want[off..], "jump batch {} buckets {buckets}", isa.name());
            }
        }
    }
}

/// Rendezvous argmax kernels (mix64 and go-rendezvous scoring) on every path.
fn rendezvous(n: usize, go: bool, hashes: &[u64]) {
    let names: Vec<String> = (0..n).map(|i| format!("node-{i}")).collect();
    let mut builder = Rendezvous::builder().nodes(&names);
    if go {
        builder = builder.go_rendezvous();
    }
    let r = builder.build().expect("distinct names");
    let portable = rendezvous_with_isa(&r, Isa::Portable).expect("portable");
    for isa in Isa::ALL.into_iter().filter(|i| i.is_supported()) {
        let on = rendezvous_with_isa(&r, isa).expect("supported");
        for &h in hashes.iter().take(16) {
            assert_eq!(on.route_hash(h).ok(), portable.route_hash(h).ok(), "rendezvous {} n={n} go={go}", isa.name());
            let key = h.to_le_bytes();
            assert_eq!(on.route(&key), portable.route(&key), "rendezvous {} n={n} go={go}", isa.name());
        }
    }
}

//! Every search kernel and every ISA path agrees with the `partition_point` oracle; jump's SIMD
//! batch agrees bit for bit with the scalar paper loop; dispatch reports the path that runs.
//!
//! CI runs this file twice: `cargo test --test kernels` and
//! `HASHROUTE_FORCE_PORTABLE=1 cargo test --test kernels`.

use hashroute::internals::{self as search, jump_bucket_batch_with, Eytzinger, Isa, Radix, Tree, LEAF, NODE};
use hashroute::ring::Layout;
use hashroute::{jump, NodeId, Ring, Router};
use proptest::prelude::*;

/// The ISA paths this CPU can run; the others are reported as skipped, visibly.
fn paths() -> Vec<Isa> {
    Isa::ALL
        .into_iter()
        .filter(|isa| {
            let ok = isa.is_supported();
            if !ok {
                eprintln!("SKIPPED: {} path (this CPU lacks it)", isa.name());
            }
            ok
        })
        .collect()
}

fn check(points: &[u64], hashes: &[u64]) {
    let want: Vec<usize> = hashes.iter().map(|&h| search::oracle(points, h)).collect();
    let got: Vec<usize> = hashes.iter().map(|&h| search::branchless(points, h)).collect();
    assert_eq!(got, want, "branchless n={}", points.len());
    let mut out = vec![usize::MAX; hashes.len()];
    search::branchless_batch(points, hashes, &mut out);
    assert_eq!(out, want, "branchless_batch n={}", points.len());
    let e = Eytzinger::build(points);
    let got: Vec<usize> = hashes.iter().map(|&h| e.lookup(h)).collect();
    assert_eq!(got, want, "eytzinger n={}", points.len());
    let t = Tree::build(points);
    let got: Vec<usize> = hashes.iter().map(|&h| t.lookup(points, h)).collect();
    assert_eq!(got, want, "tree dispatched n={}", points.len());
    for isa in paths() {
        let got: Vec<usize> = hashes.iter().map(|&h| t.lookup_with(isa, points, h)).collect();
        assert_eq!(got, want, "tree {} n={}", isa.name(), points.len());
        out.fill(usize::MAX);
        t.lookup_batch_with(isa, points, hashes, &mut out);
        assert_eq!(out, want, "tree batch {} n={}", isa.name(), points.len());
    }
    let r = Radix::build(points);
    let got: Vec<usize> = hashes.iter().map(|&h| r.lookup(points, h)).collect();
    assert_eq!(got, want, "radix dispatched n={}", points.len());
    for isa in paths() {
        let got: Vec<usize> = hashes.iter().map(|&h| r.lookup_with(isa, points, h)).collect();
        assert_eq!(got, want, "radix {} n={}", isa.name(), points.len());
        out.fill(usize::MAX);
        r.lookup_batch_with(isa, points, hashes, &mut out);
        assert_eq!(out, want, "radix batch {} n={}", isa.name(), points.len());
    }
}

/// Hashes that probe every point, its neighbours, the extremes and past the end.
fn probes(points: &[u64]) -> Vec<u64> {
    let mut hs = vec![0, 1, u64::MAX, u64::MAX - 1, 1 << 63];
    for &p in points {
        hs.extend([p, p.wrapping_sub(1), p.wrapping_add(1)]);
    }
    hs
}

#[test]
fn empty_array_returns_zero() {
    check(&[], &[0, 1, u64::MAX]);
}

#[test]
fn one_point_and_all_equal() {
    for p in [0, 1, 42, u64::MAX] {
        check(&[p], &probes(&[p]));
        for n in [2, 15, 16, 17, 128, 129, 1000] {
            let pts = vec![p; n];
            check(&pts, &probes(&[p]));
        }
    }
}

#[test]
fn sizes_0_to_300() {
    for n in 0..=300u64 {
        let mut pts: Vec<u64> = (0..n).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 1).collect();
        pts.sort_unstable();
        check(&pts, &probes(&pts));
    }
}

#[test]
fn around_tree_node_boundaries() {
    // Leaf blocks of 16 points, 8 keys per node: level k covers 16·8^k points.
    let mut sizes = Vec::new();
    let mut span = LEAF;
    for _ in 0..5 {
        sizes.extend([span - 1, span, span + 1]);
        span *= NODE;
    }
    for n in sizes {
        let pts: Vec<u64> = (0..n as u64).map(|i| i * 3 + 1).collect();
        let mut hs = probes(&pts[..pts.len().min(500)]);
        hs.extend(probes(&pts[pts.len().saturating_sub(500)..]));
        check(&pts, &hs);
    }
}

#[test]
fn radix_bucket_edges_ranges_and_clusters() {
    // Table sizes change at powers of two of the block count; points sit exactly on bucket
    // starts; 32-bit (Ketama) and tiny ranges; dense clusters that overflow the 8-key window.
    let mut x = 0x1234_5678_9abc_def0u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for blocks in [1usize, 2, 3, 4, 7, 8, 9, 63, 64, 65, 1023, 1024, 1025] {
        for bits in [1u32, 8, 32, 63, 64] {
            let n = blocks * LEAF;
            let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
            let mut pts: Vec<u64> = (0..n).map(|_| next() & mask).collect();
            pts.sort_unstable();
            let mut hs = probes(&pts[..pts.len().min(300)]);
            hs.extend(probes(&pts[pts.len().saturating_sub(300)..]));
            // Bucket starts for every plausible table size.
            for k in 0..=12u32.min(bits) {
                let shift = bits - k;
                hs.extend((0..(1u64 << k)).take(64).flat_map(|b| {
                    let start = b.checked_shl(shift).unwrap_or(0);
                    [start, start.wrapping_sub(1), start.wrapping_add(1)]
                }));
            }
            hs.extend((0..200).map(|_| next() & mask));
            check(&pts, &hs);
            // Points exactly on bucket starts.
            let k = blocks.ilog2().clamp(1, bits);
            let on: Vec<u64> = (0..n as u64).map(|i| (i % (1 << k)) << (bits - k)).collect();
            let mut on = on;
            on.sort_unstable();
            check(&on, &probes(&on[..on.len().min(400)]));
        }
    }
    // One dense cluster inside an otherwise uniform ring: windows overflow, the binary search
    // over the rest of the bucket must land exactly.
    let mut pts: Vec<u64> = (0..16_000).map(|_| next()).collect();
    pts.extend((0..3_000u64).map(|i| (1 << 62) + i));
    pts.sort_unstable();
    let mut hs = probes(&pts[..500]);
    hs.extend((0..3_100u64).step_by(7).map(|i| (1 << 62) + i));
    hs.extend((0..500).map(|_| next()));
    check(&pts, &hs);
}

#[test]
fn dispatch_reports_the_running_path() {
    let forced = std::env::var("HASHROUTE_FORCE_PORTABLE").is_ok_and(|v| v == "1");
    let cap = std::env::var("HASHROUTE_MAX_ISA").unwrap_or_default();
    let want = if forced || cap == "portable" {
        Isa::Portable
    } else if Isa::Avx512.is_supported() && cap != "avx2" {
        Isa::Avx512
    } else if Isa::Avx2.is_supported() {
        Isa::Avx2
    } else {
        Isa::Portable
    };
    assert_eq!(Isa::active(), want);
    assert_eq!(Isa::active().name(), want.name());
    eprintln!("kernels running on: {}", Isa::active().name());
}

#[test]
fn jump_batch_is_bit_identical() {
    let mut keys: Vec<u64> = vec![0, 1, 2, u64::MAX, u64::MAX - 1, 1 << 63, (1 << 33) - 1, 1 << 33];
    let mut x = 1u64;
    for _ in 0..1000 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        keys.push(x);
    }
    let buckets = [1u32, 2, 3, 5, 16, 1000, 1 << 16, (1 << 31) - 1, 1 << 31, (1 << 31) + 1, u32::MAX];
    for &b in &buckets {
        let want: Vec<u32> = keys.iter().map(|&k| jump::bucket(k, b)).collect();
        let mut out = vec![0u32; keys.len()];
        jump::bucket_batch(&keys, b, &mut out);
        assert_eq!(out, want, "dispatched buckets={b}");
        for isa in paths() {
            for len in [0, 1, 3, 4, 7, 8, 9, 15, 16, 17, keys.len()] {
                let mut out = vec![0u32; len];
                jump_bucket_batch_with(isa, &keys[..len], b, &mut out);
                assert_eq!(out, want[..len], "{} buckets={b} len={len}", isa.name());
            }
        }
    }
}

#[test]
fn ring_layouts_route_identically() {
    let names: Vec<String> = (0..300).map(|i| format!("node-{i}")).collect();
    let base = Ring::builder().vnodes(100).nodes(&names).build().unwrap();
    let keys: Vec<Vec<u8>> = (0..3000u32).map(|i| format!("key-{i}").into_bytes()).collect();
    let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
    let oracle = base.clone().with_layout(Layout::Oracle);
    let want_all: Vec<NodeId> = refs.iter().map(|k| oracle.route(k)).collect();
    for layout in [Layout::Auto, Layout::Branchless, Layout::Tree, Layout::Radix, Layout::Eytzinger] {
        let r = Ring::builder().vnodes(100).nodes(&names).layout(layout).build().unwrap();
        let single: Vec<NodeId> = refs.iter().map(|k| r.route(k)).collect();
        assert_eq!(single, want_all, "{layout:?}");
        let mut out = vec![NodeId::default(); refs.len()];
        r.route_batch(&refs, &mut out);
        assert_eq!(out, want_all, "{layout:?} batch");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_points_agree(mut pts in proptest::collection::vec(any::<u64>(), 0..=300), hs in proptest::collection::vec(any::<u64>(), 0..40)) {
        pts.sort_unstable();
        let mut all = hs;
        all.extend(pts.iter().take(20).copied());
        all.extend([0, u64::MAX]);
        check(&pts, &all);
    }

    #[test]
    fn duplicate_heavy_points_agree(mut pts in proptest::collection::vec(prop_oneof![Just(0u64), Just(7), Just(u64::MAX), 0u64..20], 0..=300), hs in proptest::collection::vec(prop_oneof![Just(0u64), Just(u64::MAX), 0u64..25], 1..20)) {
        pts.sort_unstable();
        check(&pts, &hs);
    }

    #[test]
    fn larger_random_points_agree(mut pts in proptest::collection::vec(any::<u64>(), 300..3000), hs in proptest::collection::vec(any::<u64>(), 1..60)) {
        pts.sort_unstable();
        check(&pts, &hs);
    }

    #[test]
    fn jump_batch_agrees(keys in proptest::collection::vec(any::<u64>(), 0..100), b in prop_oneof![1u32..10, 1u32..100_000, any::<u32>().prop_map(|b| b.max(1))]) {
        let want: Vec<u32> = keys.iter().map(|&k| jump::bucket(k, b)).collect();
        for isa in paths() {
            let mut out = vec![0u32; keys.len()];
            jump_bucket_batch_with(isa, &keys, b, &mut out);
            prop_assert_eq!(&out, &want);
        }
    }
}

/// MD5: the scalar `md5_words` and every path's `md5_batch` against the md-5 crate (a digest is
/// the state words' little-endian bytes, A first).
mod md5_kernels {
    use super::paths;
    use hashroute::internals::{md5_batch_with, md5_words, Isa};
    use md5::{Digest, Md5};
    use proptest::prelude::*;

    fn digest_of(words: [u32; 4]) -> [u8; 16] {
        let mut d = [0u8; 16];
        for (c, w) in d.chunks_exact_mut(4).zip(words) {
            c.copy_from_slice(&w.to_le_bytes());
        }
        d
    }

    fn want(keys: &[&[u8]]) -> Vec<[u8; 16]> {
        keys.iter().map(|k| <[u8; 16]>::from(Md5::digest(k))).collect()
    }

    fn check(keys: &[&[u8]]) {
        let want = want(keys);
        let single: Vec<[u8; 16]> = keys.iter().map(|k| digest_of(md5_words(k))).collect();
        assert_eq!(single, want, "md5_words, {} keys", keys.len());
        for isa in paths() {
            let mut out = vec![[0u32; 4]; keys.len()];
            md5_batch_with(isa, keys, &mut out);
            let got: Vec<[u8; 16]> = out.into_iter().map(digest_of).collect();
            assert_eq!(got, want, "md5 batch on {}, {} keys", isa.name(), keys.len());
        }
    }

    fn bytes(len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    #[test]
    fn every_length_single_and_batched() {
        for len in 0..=300 {
            let ks: Vec<Vec<u8>> = (0..37).map(|i| bytes(len, i)).collect();
            let keys: Vec<&[u8]> = ks.iter().map(Vec::as_slice).collect();
            check(&keys[..1]);
            check(&keys);
        }
    }

    #[test]
    fn memcached_sized_mixed_batch() {
        // Ketama's shape: many short keys, a few near memcached's 250-byte limit, in one batch
        // larger than every path's lane count.
        let ks: Vec<Vec<u8>> = (0..1000).map(|i| bytes(if i % 97 == 0 { 250 } else { 5 + i % 40 }, i as u64)).collect();
        let keys: Vec<&[u8]> = ks.iter().map(Vec::as_slice).collect();
        check(&keys);
    }

    #[test]
    fn unaligned_sub_slices_and_equal_keys() {
        let buf = bytes(512, 99);
        let keys: Vec<&[u8]> = (0..100).map(|o| &buf[o * 3 % 97..o * 3 % 97 + o * 7 % 300]).collect();
        check(&keys);
        check(&vec![&buf[1..17]; 33]);
        check(&[&buf[511..], &buf[512..], &buf[..0]]);
    }

    #[test]
    #[should_panic(expected = "same length")]
    fn length_mismatch_panics() {
        md5_batch_with(Isa::Portable, &[b"x".as_slice(), b"y"], &mut [[0; 4]]);
    }

    proptest! {
        #[test]
        fn random_mixed_batches_agree(ks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..=300), 0..=70)) {
            let keys: Vec<&[u8]> = ks.iter().map(Vec::as_slice).collect();
            check(&keys);
        }
    }
}
// ---- JumpBackHash's SIMD batch ----

/// Keys that exercise every branch: x == 0 (equal 32-bit halves with xorshift), the
/// first-candidate fast path, and the scalar fallback.
fn jumpback_keys() -> Vec<u64> {
    let mut keys: Vec<u64> =
        vec![0, 1, 2, u64::MAX, u64::MAX - 1, 1 << 63, 0xDEAD_BEEF_DEAD_BEEF, 0xFFFF_FFFF, 1 << 32];
    let mut x = 7u64;
    for _ in 0..1500 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        keys.push(x);
        // Equal halves and a low-bits-only key.
        keys.push((x >> 32) | (x & 0xFFFF_FFFF_0000_0000));
    }
    keys
}

fn check_jumpback(keys: &[u64], b: u32, lens: &[usize]) {
    use hashroute::internals::jumpback_bucket_batch_with;
    use hashroute::jumpback::{self, JumpBackGenerator as Generator};
    for g in [Generator::SplitMix64, Generator::XorshiftL7R9] {
        let want: Vec<u32> = keys.iter().map(|&k| jumpback::try_bucket_with(k, b, g).unwrap()).collect();
        let mut out = vec![0u32; keys.len()];
        jumpback::bucket_batch(keys, b, g, &mut out);
        assert_eq!(out, want, "dispatched {g:?} buckets={b}");
        for isa in paths() {
            for &len in lens {
                let len = len.min(keys.len());
                let mut out = vec![u32::MAX; len];
                jumpback_bucket_batch_with(isa, &keys[..len], b, g, &mut out);
                assert_eq!(out, want[..len], "{} {g:?} buckets={b} len={len}", isa.name());
            }
        }
    }
}

#[test]
fn jumpback_batch_is_bit_identical() {
    let keys = jumpback_keys();
    let mut buckets = vec![1u32, 2, 3, 5, 16, 17, 1000, 1024, 1025, 1 << 16, 1_000_000, (1 << 31) - 1];
    buckets.extend([1 << 31, (1 << 31) + 1, u32::MAX - 1, u32::MAX]);
    for b in buckets {
        check_jumpback(&keys, b, &[0, 1, 3, 4, 7, 8, 9, 15, 16, 17, usize::MAX]);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn jumpback_batch_agrees(keys in proptest::collection::vec(any::<u64>(), 0..100), b in prop_oneof![1u32..10, 1u32..100_000, any::<u32>().prop_map(|b| b.max(1)), (1u32..31).prop_map(|s| (1 << s) + 1)]) {
        check_jumpback(&keys, b, &[usize::MAX]);
    }
}

//! Lookup kernels over a sorted `u64` array: "the first index whose point is `>= h`, wrapping to
//! 0 past the end" — the ring's hot path.
//!
//! Every kernel answers exactly what [`oracle`] (`partition_point`) answers; they differ only in
//! memory layout and in how they hide memory latency:
//!
//! | kernel | extra memory | idea |
//! |---|---|---|
//! | [`oracle`] | none | `partition_point`, the reference every kernel is tested against |
//! | [`branchless`] | none | binary search without branches, prefetching both next midpoints |
//! | [`Eytzinger`] | 12 B per point (a second copy) | BFS-ordered copy, prefetching 4 levels ahead |
//! | [`Tree`] | ≈ 0.57 B per point | static 8-ary B+ tree over every 16th point, SIMD node search |
//! | [`Radix`] | ≤ 0.75 B per point | the hash's top bits index an 8-key window of block maxima: 3 reads |
//!
//! Batched variants ([`Radix::lookup_batch`], [`Tree::lookup_batch`], [`branchless_batch`])
//! interleave many independent searches so their cache misses overlap instead of queueing one
//! after another. The ring uses [`Radix`] by default: it measured faster than the tree at every
//! size from 1.6K to 1.6M points, single and batched (benches/lookup.rs; results/REPORT.md).
//!
//! This module holds layouts only: no `cfg`, no `unsafe`. The lookups that use SIMD call
//! [`crate::arch`], whose path is chosen once per process ([`Isa::active`]); results never
//! depend on the ISA.
//!
//! An **empty** array has no successor: every kernel returns 0 for it (a [`Ring`](crate::Ring)
//! is never empty).

mod radix;
mod tree;

pub use crate::arch::generic::{BATCH, LEAF, NODE};
pub(crate) use crate::arch::Isa;
use crate::arch::{self, prefetch};
pub use radix::Radix;
pub use tree::Tree;

/// The proof for an explicitly requested path.
///
/// # Panics
/// If this CPU lacks `isa`: the explicit-path entry points are for tests and benchmarks, which
/// check [`Isa::is_supported`] first.
fn kernels(isa: Isa) -> arch::Kernels {
    arch::Kernels::new(isa).unwrap_or_else(|| panic!("search: ISA {} is not supported on this CPU", isa.name()))
}

/// The reference lookup: `points.partition_point(|&p| p < h)`, wrapping the past-the-end index
/// to 0. O(log n), no extra memory. `points` must be sorted ascending (as for every kernel).
#[inline]
pub fn oracle(points: &[u64], h: u64) -> usize {
    let i = points.partition_point(|&p| p < h);
    if i == points.len() {
        0
    } else {
        i
    }
}

/// Branchless binary search with software prefetch of both possible next midpoints.
///
/// Same answer as [`oracle`]; the loop runs exactly ⌈log2 n⌉ times with a conditional move
/// instead of a branch, so it never mispredicts, and the prefetches overlap the next level's
/// miss with this level's compare. No extra memory.
#[inline]
pub fn branchless(points: &[u64], h: u64) -> usize {
    let n = points.len();
    if n == 0 {
        return 0;
    }
    let mut base = 0usize;
    let mut len = n;
    while len > 1 {
        let half = len / 2;
        prefetch(points, base + half / 2);
        prefetch(points, base + half + half / 2);
        // `select_unpredictable`: LLVM otherwise turns this into a 50%-mispredicted branch.
        base = std::hint::select_unpredictable(points[base + half - 1] < h, base + half, base);
        len -= half;
    }
    let i = base + usize::from(points[base] < h);
    if i == n {
        0
    } else {
        i
    }
}

/// Interleaved [`branchless`] over many hashes: `out[k] = oracle(points, hashes[k])`.
///
/// Runs [`BATCH`] searches in lock step (they all take the same number of steps), so up to
/// [`BATCH`] cache misses are in flight at once.
///
/// # Panics
/// If `hashes.len() != out.len()`.
pub fn branchless_batch(points: &[u64], hashes: &[u64], out: &mut [usize]) {
    assert_eq!(hashes.len(), out.len(), "branchless_batch: hashes and out must have the same length");
    let n = points.len();
    if n == 0 {
        out.fill(0);
        return;
    }
    for (hs, os) in hashes.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
        let mut base = [0usize; BATCH];
        let mut len = n;
        while len > 1 {
            let half = len / 2;
            for (b, &h) in base.iter_mut().zip(hs) {
                *b = std::hint::select_unpredictable(points[*b + half - 1] < h, *b + half, *b);
                prefetch(points, *b + (len - half) / 2);
            }
            len -= half;
        }
        for ((o, &b), &h) in os.iter_mut().zip(&base).zip(hs) {
            let i = b + usize::from(points[b] < h);
            *o = if i == n { 0 } else { i };
        }
    }
}

/// A BFS-ordered ("Eytzinger") copy of the points, plus each slot's sorted index.
///
/// Memory: 12 bytes per point on top of the sorted array (a full second copy), which is why the
/// ring uses it only if asked ([`Layout::Eytzinger`](crate::ring::Layout::Eytzinger)).
/// Lookup: ⌈log2 n⌉ dependent loads, prefetching the 16 descendants four levels down.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Eytzinger {
    keys: Vec<u64>,
    rank: Vec<u32>,
}

impl Eytzinger {
    /// Builds the copy in O(n).
    ///
    /// # Panics
    /// If `points.len() >= 2^32` (the ring caps points far below).
    pub fn build(points: &[u64]) -> Eytzinger {
        assert!(points.len() < u32::MAX as usize, "Eytzinger::build: too many points");
        let n = points.len();
        let mut keys = vec![0u64; n + 1];
        let mut rank = vec![0u32; n + 1];
        // In-order walk of the implicit tree, iteratively: slot k's children are 2k and 2k+1.
        let mut next = 0usize;
        let mut k = 1usize;
        let mut stack = Vec::new();
        while k <= n || !stack.is_empty() {
            while k <= n {
                stack.push(k);
                k *= 2;
            }
            let top = stack.pop().unwrap_or(0);
            keys[top] = points[next];
            rank[top] = next as u32;
            next += 1;
            k = 2 * top + 1;
        }
        Eytzinger { keys, rank }
    }

    /// Number of points copied.
    pub fn len(&self) -> usize {
        self.keys.len().saturating_sub(1)
    }

    /// Whether no point was copied.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Heap bytes held (exact: the two vectors' capacities).
    pub fn memory_bytes(&self) -> usize {
        self.keys.capacity() * 8 + self.rank.capacity() * 4
    }

    /// Same answer as [`oracle`] over the points this copy was built from.
    #[inline]
    pub fn lookup(&self, h: u64) -> usize {
        let n = self.len();
        let mut k = 1usize;
        while k <= n {
            prefetch(&self.keys, 16 * k);
            k = 2 * k + usize::from(self.keys[k] < h);
        }
        k >>= k.trailing_ones() + 1;
        // k == 0: every point is below h, wrap to the first.
        if k == 0 {
            0
        } else {
            self.rank[k] as usize
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check_all(points: &[u64], h: u64) {
        let want = oracle(points, h);
        assert_eq!(branchless(points, h), want, "branchless h={h}");
        assert_eq!(Eytzinger::build(points).lookup(h), want, "eytzinger h={h}");
        let t = Tree::build(points);
        let r = Radix::build(points);
        for isa in Isa::ALL {
            if isa.is_supported() {
                assert_eq!(t.lookup_with(isa, points, h), want, "tree {isa:?} h={h} n={}", points.len());
                assert_eq!(r.lookup_with(isa, points, h), want, "radix {isa:?} h={h} n={}", points.len());
            }
        }
    }

    #[test]
    fn empty_and_tiny() {
        for h in [0, 1, u64::MAX] {
            check_all(&[], h);
            check_all(&[5], h);
            check_all(&[u64::MAX], h);
            check_all(&[0], h);
        }
    }

    #[test]
    fn every_size_to_300_and_boundaries() {
        let sizes = (0..=300).chain([511, 512, 513, 1023, 1024, 1025, 2047, 2048, 2049, 8191, 8192, 8193]);
        for n in sizes {
            let points: Vec<u64> = (0..n as u64).map(|i| i * 10 + 5).collect();
            for h in [0, 4, 5, 6, n as u64 * 10, n as u64 * 10 + 10, u64::MAX] {
                check_all(&points, h);
            }
            for i in (0..n).step_by(7) {
                check_all(&points, points[i]);
                check_all(&points, points[i] + 1);
            }
        }
    }

    #[test]
    fn tree_memory_under_budget() {
        let points: Vec<u64> = (0..1_600_000u64).map(|i| i * 11).collect();
        let t = Tree::build(&points);
        let per_point = t.memory_bytes() as f64 / points.len() as f64;
        assert!(per_point <= 0.8, "{per_point} bytes per point");
    }

    proptest! {
        #[test]
        fn kernels_agree(mut points in proptest::collection::vec(any::<u64>(), 0..400), hs in proptest::collection::vec(any::<u64>(), 1..20)) {
            points.sort_unstable();
            for &h in &hs {
                check_all(&points, h);
            }
        }

        #[test]
        fn kernels_agree_duplicates(mut points in proptest::collection::vec(0u64..8, 0..300), h in 0u64..10) {
            points.sort_unstable();
            check_all(&points, h);
        }
    }
}

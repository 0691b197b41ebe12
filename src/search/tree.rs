//! A static 8-ary B+ tree over the sorted array: the index sits on top of the points.

use super::{Isa, LEAF, NODE};
use crate::arch::generic::{Line, TreeView};
use crate::arch::Kernels;

const MAX_LEVELS: usize = 12;

/// A static 8-ary B+ tree over the sorted array: the index sits **on top of** the points, not
/// beside a copy of them.
///
/// The bottom level holds the last point of every block of 16 points; each level above holds
/// the last key of every 8 keys below, until one node remains. A lookup reads one cache line
/// per level (a SIMD compare counts the keys `< h`) and then the 16-point block in the sorted
/// array itself. Memory ≈ 8/16 · 8/7 ≈ 0.57 bytes per point (plus padding to whole nodes);
/// depth = ⌈log8(n/16)⌉ + 1 lines instead of log2(n) for a binary search.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tree {
    lines: Vec<Line>,
    /// The first node of each level, top level first.
    level_starts: [u32; MAX_LEVELS],
    depth: u8,
    n: usize,
    last: u64,
}

impl Tree {
    /// Builds the index over `points` (sorted ascending) in O(n / 16).
    pub fn build(points: &[u64]) -> Tree {
        let n = points.len();
        let mut tree = Tree { n, last: points.last().copied().unwrap_or(0), ..Tree::default() };
        if n == 0 {
            return tree;
        }
        // Bottom-up, keys of each level as plain vectors first.
        let mut keys: Vec<u64> = points.chunks(LEAF).map(|c| c[c.len() - 1]).collect();
        let mut built: Vec<Vec<u64>> = Vec::new();
        loop {
            let up: Vec<u64> = keys.chunks(NODE).map(|c| c[c.len() - 1]).collect();
            let done = keys.len() <= NODE;
            built.push(keys);
            if done {
                break;
            }
            keys = up;
        }
        built.reverse();
        let total: usize = built.iter().map(|l| l.len().div_ceil(NODE)).sum();
        tree.lines = Vec::with_capacity(total);
        for (d, level) in built.iter().enumerate() {
            tree.level_starts[d] = tree.lines.len() as u32;
            for c in level.chunks(NODE) {
                let mut g = [u64::MAX; NODE];
                g[..c.len()].copy_from_slice(c);
                tree.lines.push(Line(g));
            }
        }
        tree.depth = built.len() as u8;
        tree
    }

    /// Number of points indexed.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether the indexed array is empty.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Heap bytes held (exact: the node vector's capacity × 64).
    pub fn memory_bytes(&self) -> usize {
        self.lines.capacity() * std::mem::size_of::<Line>()
    }

    fn view(&self) -> TreeView<'_> {
        TreeView { lines: &self.lines, level_starts: &self.level_starts[..usize::from(self.depth)], last: self.last }
    }

    /// Same answer as [`oracle`](super::oracle)`(points, h)`, on the process's SIMD path.
    ///
    /// # Panics
    /// If `points.len()` differs from the array the tree was built over.
    #[inline]
    pub fn lookup(&self, points: &[u64], h: u64) -> usize {
        self.lookup_on(Kernels::active(), points, h)
    }

    /// [`Tree::lookup`] on an explicit ISA path (tests and benchmarks call each path).
    ///
    /// # Panics
    /// If this CPU lacks `isa` ([`Isa::is_supported`]), or `points.len()` differs from the
    /// array the tree was built over.
    #[inline]
    pub fn lookup_with(&self, isa: Isa, points: &[u64], h: u64) -> usize {
        self.lookup_on(super::kernels(isa), points, h)
    }

    #[inline]
    fn lookup_on(&self, k: Kernels, points: &[u64], h: u64) -> usize {
        assert_eq!(points.len(), self.n, "Tree::lookup: points differ from the indexed array");
        if self.n == 0 {
            return 0;
        }
        k.tree_lookup(&self.view(), points, h)
    }

    /// `out[k] = oracle(points, hashes[k])` for every k, interleaving 32 searches.
    ///
    /// # Panics
    /// As [`Tree::lookup`], and if `hashes.len() != out.len()`.
    pub fn lookup_batch(&self, points: &[u64], hashes: &[u64], out: &mut [usize]) {
        self.lookup_batch_on(Kernels::active(), points, hashes, out);
    }

    /// [`Tree::lookup_batch`] on an explicit ISA path.
    ///
    /// # Panics
    /// As [`Tree::lookup_with`], and if `hashes.len() != out.len()`.
    pub fn lookup_batch_with(&self, isa: Isa, points: &[u64], hashes: &[u64], out: &mut [usize]) {
        self.lookup_batch_on(super::kernels(isa), points, hashes, out);
    }

    fn lookup_batch_on(&self, k: Kernels, points: &[u64], hashes: &[u64], out: &mut [usize]) {
        assert_eq!(points.len(), self.n, "Tree::lookup_batch: points differ from the indexed array");
        assert_eq!(hashes.len(), out.len(), "Tree::lookup_batch: hashes and out must have the same length");
        if self.n == 0 {
            out.fill(0);
            return;
        }
        k.tree_batch(&self.view(), points, hashes, out);
    }
}

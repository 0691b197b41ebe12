//! A radix-table index over the sorted array: the top bits of a hash pick a short window of
//! the tree's bottom level directly, replacing the upper levels of [`Tree`](super::Tree).
//!
//! Ring points are hashes, so they are spread uniformly: with a table of `T ≈ n/16` buckets
//! (one per bottom key on average), the bottom keys of one bucket fit in one 8-key window
//! almost always (Poisson(≤ 2) occupancy: P(≥ 8) ≈ 10⁻³). A lookup is then three dependent
//! reads — the table entry, the 8-key window, the 16-point block — instead of one line per
//! tree level. Clustered points (a custom hasher, all-equal points) stay exact: a full window
//! falls back to a binary search over the rest of the bucket, so the worst case is O(log n).

use super::{Isa, LEAF, NODE};
use crate::arch::generic::RadixView;
use crate::arch::Kernels;

/// Radix table + bottom keys: "first index with point `>= h`", answered like [`oracle`](super::oracle).
///
/// Memory: the last point of every 16-point block (0.5 B per point) plus a `u32` table of
/// `2^k ≤ n/16` entries (≤ 0.25 B per point): ≤ 0.75 B per point, on top of the sorted array.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Radix {
    /// The last point of every [`LEAF`]-point block, then [`NODE`] copies of `u64::MAX` so a
    /// window starting at any bucket start stays inside the vector.
    bottom: Vec<u64>,
    /// `table[b]`: the first bottom index whose key is `>= b << shift`; `table[T]` = bottom count.
    table: Vec<u32>,
    shift: u32,
    n: usize,
    last: u64,
}

impl Radix {
    /// Builds the index over `points` (sorted ascending) in O(n / 16).
    ///
    /// # Panics
    /// If `points.len() >= 2^36` (the ring caps points far below).
    pub fn build(points: &[u64]) -> Radix {
        let n = points.len();
        assert!(n / LEAF < u32::MAX as usize, "Radix::build: too many points");
        let last = points.last().copied().unwrap_or(0);
        let mut bottom: Vec<u64> = Vec::with_capacity(n.div_ceil(LEAF) + NODE);
        bottom.extend(points.chunks(LEAF).map(|c| c[c.len() - 1]));
        let blocks = bottom.len();
        bottom.extend([u64::MAX; NODE]);
        // Buckets cover [0, 2^bits), the significant bits of the largest point, so 32-bit
        // hashes (Ketama) spread over the table as well as 64-bit ones do.
        let bits = u64::BITS - last.leading_zeros();
        let k = if blocks == 0 || bits == 0 { 0 } else { blocks.ilog2().clamp(1, bits) };
        let shift = bits - k;
        let buckets = 1usize << k;
        let mut table = Vec::with_capacity(buckets + 1);
        let mut j = 0usize;
        for b in 0..buckets as u64 {
            // b < 2^k, so b << shift < 2^bits: no overflow.
            let start = b << shift;
            while j < blocks && bottom[j] < start {
                j += 1;
            }
            table.push(j as u32);
        }
        table.push(blocks as u32);
        Radix { bottom, table, shift, n, last }
    }

    /// Number of points indexed.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether the indexed array is empty.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Heap bytes held (exact: the two vectors' capacities).
    pub fn memory_bytes(&self) -> usize {
        self.bottom.capacity() * 8 + self.table.capacity() * 4
    }

    fn view(&self) -> RadixView<'_> {
        RadixView { bottom: &self.bottom, table: &self.table, shift: self.shift, last: self.last }
    }

    /// Same answer as [`oracle`](super::oracle)`(points, h)`, on the process's SIMD path.
    ///
    /// # Panics
    /// If `points.len()` differs from the array the index was built over.
    #[inline]
    pub fn lookup(&self, points: &[u64], h: u64) -> usize {
        self.lookup_on(Kernels::active(), points, h)
    }

    /// [`Radix::lookup`] on an explicit ISA path (tests and benchmarks call each path).
    ///
    /// # Panics
    /// If this CPU lacks `isa`, or `points.len()` differs from the array the index was built
    /// over.
    #[inline]
    pub fn lookup_with(&self, isa: Isa, points: &[u64], h: u64) -> usize {
        self.lookup_on(super::kernels(isa), points, h)
    }

    /// [`Radix::lookup`] for the ring's single-key route: prefetches the key's `owners` line as
    /// soon as its block is known, so the owner read overlaps the block search.
    #[inline]
    pub(crate) fn lookup_prefetching(&self, points: &[u64], owners: &[u32], h: u64) -> usize {
        // No length check here: the ring built this index over exactly these points.
        if h > self.last || self.n == 0 {
            return 0;
        }
        Kernels::active().radix_lookup(&self.view(), points, owners, h)
    }

    #[inline]
    fn lookup_on(&self, k: Kernels, points: &[u64], h: u64) -> usize {
        assert_eq!(points.len(), self.n, "Radix::lookup: points differ from the indexed array");
        if h > self.last || self.n == 0 {
            return 0;
        }
        k.radix_lookup(&self.view(), points, &[], h)
    }

    /// `out[k] = oracle(points, hashes[k])` for every k, interleaving 32 searches stage by
    /// stage (table, window, block), each stage's reads prefetched by the one before.
    ///
    /// # Panics
    /// As [`Radix::lookup`], and if `hashes.len() != out.len()`.
    pub fn lookup_batch(&self, points: &[u64], hashes: &[u64], out: &mut [usize]) {
        self.lookup_batch_on(Kernels::active(), points, hashes, out);
    }

    /// [`Radix::lookup_batch`] on an explicit ISA path.
    ///
    /// # Panics
    /// As [`Radix::lookup_with`], and if `hashes.len() != out.len()`.
    pub fn lookup_batch_with(&self, isa: Isa, points: &[u64], hashes: &[u64], out: &mut [usize]) {
        self.lookup_batch_on(super::kernels(isa), points, hashes, out);
    }

    fn lookup_batch_on(&self, k: Kernels, points: &[u64], hashes: &[u64], out: &mut [usize]) {
        assert_eq!(points.len(), self.n, "Radix::lookup_batch: points differ from the indexed array");
        assert_eq!(hashes.len(), out.len(), "Radix::lookup_batch: hashes and out must have the same length");
        if self.n == 0 {
            out.fill(0);
            return;
        }
        k.radix_batch(&self.view(), points, hashes, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::oracle;

    fn check(points: &[u64]) {
        let r = Radix::build(points);
        let mut hs = vec![0, 1, u64::MAX, u64::MAX - 1, 1 << 63, 1 << 32, (1 << 32) - 1];
        for &p in points {
            hs.extend([p, p.wrapping_sub(1), p.wrapping_add(1)]);
        }
        for &h in &hs {
            assert_eq!(r.lookup_with(Isa::Portable, points, h), oracle(points, h), "n={} h={h}", points.len());
        }
        let mut out = vec![usize::MAX; hs.len()];
        r.lookup_batch_with(Isa::Portable, points, &hs, &mut out);
        let want: Vec<usize> = hs.iter().map(|&h| oracle(points, h)).collect();
        assert_eq!(out, want);
    }

    #[test]
    fn table_spans_the_significant_bits() {
        // 32-bit points (Ketama) must use the table, not pile into bucket 0.
        let points: Vec<u64> = (0..16_000u64).map(|i| i * 268_435).collect();
        let r = Radix::build(&points);
        assert_eq!(r.table.len(), 512 + 1);
        let max_bucket = r.table.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
        assert!(max_bucket <= 2, "{max_bucket}");
        check(&points);
    }

    #[test]
    fn clustered_points_take_the_slow_path_exactly() {
        // Every point in one bucket: each lookup reads a full window and binary-searches.
        let mut points: Vec<u64> = (0..5_000u64).map(|i| (1 << 63) + i * 3).collect();
        points.push(u64::MAX);
        check(&points);
        check(&vec![7u64; 1000]);
        check(&vec![0u64; 100]);
        check(&vec![u64::MAX; 100]);
    }

    #[test]
    fn small_sizes() {
        for n in 0..=70u64 {
            let pts: Vec<u64> = (0..n).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect::<Vec<_>>();
            let mut pts = pts;
            pts.sort_unstable();
            check(&pts);
        }
    }
}

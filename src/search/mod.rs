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
//! The SIMD width is chosen once per process ([`active`]): AVX-512 or AVX2 on x86_64 when the CPU
//! has it, else the portable code (always compiled and tested). `HASHROUTE_FORCE_PORTABLE=1`
//! forces the portable path and `HASHROUTE_MAX_ISA=avx2` caps it at AVX2 (valgrind cannot run
//! AVX-512); both are read once, at the first lookup. Results never depend on the ISA.
//!
//! An **empty** array has no successor: every kernel returns 0 for it (a [`Ring`](crate::Ring)
//! is never empty).

use std::sync::atomic::{AtomicU8, Ordering};

pub(crate) mod arch;
mod radix;

pub use radix::Radix;

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
        arch::prefetch(points, base + half / 2);
        arch::prefetch(points, base + half + half / 2);
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
                arch::prefetch(points, *b + (len - half) / 2);
            }
            len -= half;
        }
        for ((o, &b), &h) in os.iter_mut().zip(&base).zip(hs) {
            let i = b + usize::from(points[b] < h);
            *o = if i == n { 0 } else { i };
        }
    }
}

/// Hints the CPU to start loading `slice[i]` into cache (no-op past the end or off x86_64).
/// Callers issue it for many independent reads before doing them, to overlap their misses.
#[inline(always)]
pub fn prefetch<T>(slice: &[T], i: usize) {
    arch::prefetch(slice, i);
}

/// How many searches the batched kernels interleave.
pub const BATCH: usize = 32;

/// A BFS-ordered ("Eytzinger") copy of the points, plus each slot's sorted index.
///
/// Memory: 12 bytes per point on top of the sorted array (a full second copy), which is why the
/// ring uses it only if asked ([`Layout::Eytzinger`](crate::algo::ring::Layout::Eytzinger)).
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
            arch::prefetch(&self.keys, 16 * k);
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

/// Width of a tree node (one 64-byte cache line of `u64`).
pub const NODE: usize = 8;
/// Points per leaf block of the sorted array indexed by one bottom-level key.
pub const LEAF: usize = 16;
const MAX_LEVELS: usize = 12;

/// One tree node: eight keys in one cache line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
pub(crate) struct Group(pub(crate) [u64; NODE]);

/// A static 8-ary B+ tree over the sorted array: the index sits **on top of** the points, not
/// beside a copy of them.
///
/// The bottom level holds the last point of every block of [`LEAF`] = 16 points; each level
/// above holds the last key of every [`NODE`] = 8 keys below, until one node remains. A lookup
/// reads one cache line per level (a SIMD compare counts the keys `< h`) and then the 16-point
/// block in the sorted array itself. Memory ≈ 8/16 · 8/7 ≈ 0.57 bytes per point (plus padding
/// to whole nodes); depth = ⌈log8(n/16)⌉ + 1 lines instead of log2(n) for a binary search.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tree {
    groups: Vec<Group>,
    /// `(first group, group count)` per level, top level first.
    levels: [(u32, u32); MAX_LEVELS],
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
        tree.groups = Vec::with_capacity(total);
        for (d, level) in built.iter().enumerate() {
            let start = tree.groups.len() as u32;
            for c in level.chunks(NODE) {
                let mut g = [u64::MAX; NODE];
                g[..c.len()].copy_from_slice(c);
                tree.groups.push(Group(g));
            }
            tree.levels[d] = (start, tree.groups.len() as u32 - start);
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
        self.groups.capacity() * std::mem::size_of::<Group>()
    }

    /// Same answer as [`oracle`]`(points, h)`, using the ISA chosen by [`active`].
    ///
    /// # Panics
    /// If `points.len()` differs from the array the tree was built over.
    #[inline]
    pub fn lookup(&self, points: &[u64], h: u64) -> usize {
        assert_eq!(points.len(), self.n, "Tree::lookup: points differ from the indexed array");
        if self.n == 0 {
            return 0;
        }
        arch::tree_lookup_active(self, points, h)
    }

    /// [`Tree::lookup`] on an explicit ISA path (tests and benchmarks call each path).
    ///
    /// # Panics
    /// If `isa` is not supported by this CPU ([`Isa::is_supported`]), or `points.len()` differs
    /// from the array the tree was built over.
    #[inline]
    pub fn lookup_with(&self, isa: Isa, points: &[u64], h: u64) -> usize {
        assert_eq!(points.len(), self.n, "Tree::lookup: points differ from the indexed array");
        if self.n == 0 {
            return 0;
        }
        match isa {
            Isa::Portable => tree_lookup_generic(self, points, h, count8_portable, count16_portable),
            _ => arch::tree_lookup(isa, self, points, h),
        }
    }

    /// `out[k] = oracle(points, hashes[k])` for every k, interleaving [`BATCH`] searches.
    ///
    /// # Panics
    /// As [`Tree::lookup`], and if `hashes.len() != out.len()`.
    pub fn lookup_batch(&self, points: &[u64], hashes: &[u64], out: &mut [usize]) {
        self.lookup_batch_with(active(), points, hashes, out);
    }

    /// [`Tree::lookup_batch`] on an explicit ISA path.
    ///
    /// # Panics
    /// As [`Tree::lookup_with`], and if `hashes.len() != out.len()`.
    pub fn lookup_batch_with(&self, isa: Isa, points: &[u64], hashes: &[u64], out: &mut [usize]) {
        assert_eq!(points.len(), self.n, "Tree::lookup_batch: points differ from the indexed array");
        assert_eq!(hashes.len(), out.len(), "Tree::lookup_batch: hashes and out must have the same length");
        if self.n == 0 {
            out.fill(0);
            return;
        }
        match isa {
            Isa::Portable => tree_batch_generic(self, points, hashes, out, count8_portable, count16_portable),
            _ => arch::tree_batch(isa, self, points, hashes, out),
        }
    }
}

/// Keys `< h` among eight (portable twin of the SIMD counters).
#[inline(always)]
pub(crate) fn count8_portable(g: &[u64; NODE], h: u64) -> usize {
    g.iter().map(|&k| usize::from(k < h)).sum()
}

/// Keys `< h` among sixteen (portable twin of the SIMD counters).
#[inline(always)]
pub(crate) fn count16_portable(g: &[u64; LEAF], h: u64) -> usize {
    g.iter().map(|&k| usize::from(k < h)).sum()
}

/// One lookup, generic over the node counters so each ISA gets its own fully inlined copy.
#[inline(always)]
pub(crate) fn tree_lookup_generic(
    t: &Tree,
    points: &[u64],
    h: u64,
    c8: impl Fn(&[u64; NODE], u64) -> usize,
    c16: impl Fn(&[u64; LEAF], u64) -> usize,
) -> usize {
    if h > t.last {
        return 0;
    }
    let mut i = 0usize;
    for &(start, _) in &t.levels[..usize::from(t.depth)] {
        i = i * NODE + c8(&t.groups[start as usize + i].0, h);
    }
    leaf(points, i, h, &c16)
}

/// The last step: count inside the 16-point block `j` of the sorted array.
#[inline(always)]
pub(crate) fn leaf(points: &[u64], j: usize, h: u64, c16: &impl Fn(&[u64; LEAF], u64) -> usize) -> usize {
    let base = j * LEAF;
    match points.get(base..base + LEAF) {
        Some(block) => base + c16(block.try_into().unwrap_or(&[0; LEAF]), h),
        // The final, partial block.
        None => base + points[base..].iter().filter(|&&p| p < h).count(),
    }
}

/// [`BATCH`] lookups in lock step, prefetching each one's next node as soon as it is known.
#[inline(always)]
pub(crate) fn tree_batch_generic(
    t: &Tree,
    points: &[u64],
    hashes: &[u64],
    out: &mut [usize],
    c8: impl Fn(&[u64; NODE], u64) -> usize,
    c16: impl Fn(&[u64; LEAF], u64) -> usize,
) {
    let depth = usize::from(t.depth);
    for (hs, os) in hashes.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
        let mut q = [0u64; BATCH];
        let mut idx = [0usize; BATCH];
        let m = hs.len();
        for (q, &h) in q.iter_mut().zip(hs) {
            *q = h.min(t.last);
        }
        for d in 0..depth {
            let start = t.levels[d].0 as usize;
            let next = if d + 1 < depth { Some(t.levels[d + 1].0 as usize) } else { None };
            for k in 0..m {
                let i = idx[k] * NODE + c8(&t.groups[start + idx[k]].0, q[k]);
                idx[k] = i;
                match next {
                    Some(s) => arch::prefetch_group(&t.groups, s + i),
                    None => {
                        arch::prefetch(points, i * LEAF);
                        arch::prefetch(points, i * LEAF + LEAF - 1);
                    }
                }
            }
        }
        for k in 0..m {
            os[k] = if hs[k] > t.last { 0 } else { leaf(points, idx[k], q[k], &c16) };
        }
    }
}

/// An instruction-set path of the kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Isa {
    /// Plain Rust, every target. Always compiled and tested.
    Portable,
    /// x86_64 AVX2: four `u64` lanes per compare.
    Avx2,
    /// x86_64 AVX-512 (F + DQ + VL): eight `u64` lanes per compare, mask registers.
    Avx512,
}

impl Isa {
    /// Every path, widest last.
    pub const ALL: [Isa; 3] = [Isa::Portable, Isa::Avx2, Isa::Avx512];

    /// The path's name as [`active_isa`] reports it: `portable`, `avx2`, `avx512`.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Portable => "portable",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }

    /// Whether this CPU can run the path (runtime detection; cheap, but not cached).
    pub fn is_supported(self) -> bool {
        match self {
            Isa::Portable => true,
            _ => arch::supported(self),
        }
    }
}

static ACTIVE: AtomicU8 = AtomicU8::new(0);

/// The path every dispatching kernel uses, chosen once per process: the widest the CPU supports,
/// unless `HASHROUTE_FORCE_PORTABLE=1` (portable) or `HASHROUTE_MAX_ISA=avx2|portable` caps it.
#[inline]
pub fn active() -> Isa {
    match ACTIVE.load(Ordering::Relaxed) {
        1 => Isa::Portable,
        2 => Isa::Avx2,
        3 => Isa::Avx512,
        _ => detect(),
    }
}

/// The name of the path in use ([`Isa::name`] of [`active`]), for logs and tests.
pub fn active_isa() -> &'static str {
    active().name()
}

#[cold]
fn detect() -> Isa {
    let force_portable = std::env::var("HASHROUTE_FORCE_PORTABLE").is_ok_and(|v| v == "1");
    let cap = std::env::var("HASHROUTE_MAX_ISA").unwrap_or_default();
    let isa = if force_portable || cap.eq_ignore_ascii_case("portable") {
        Isa::Portable
    } else if Isa::Avx512.is_supported() && !cap.eq_ignore_ascii_case("avx2") {
        Isa::Avx512
    } else if Isa::Avx2.is_supported() {
        Isa::Avx2
    } else {
        Isa::Portable
    };
    let code = match isa {
        Isa::Portable => 1,
        Isa::Avx2 => 2,
        Isa::Avx512 => 3,
    };
    ACTIVE.store(code, Ordering::Relaxed);
    isa
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

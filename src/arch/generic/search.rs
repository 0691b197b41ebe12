//! "First point `>= h`" over an index sitting on top of a sorted `u64` array: the tree and
//! radix lookup algorithms, generic over the node counters, and the portable counters.
//!
//! The layouts themselves (building, memory, public API) live in `crate::search`; they hand
//! their arrays to these functions as a [`TreeView`] or a [`RadixView`].

use crate::arch::prefetch;

/// Width of a tree node (one 64-byte cache line of `u64`).
pub const NODE: usize = 8;
/// Points per leaf block of the sorted array indexed by one bottom-level key.
pub const LEAF: usize = 16;
/// How many searches the batched kernels interleave.
pub const BATCH: usize = 32;

/// Eight keys in one cache line: a tree node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
pub(crate) struct Line(pub(crate) [u64; NODE]);

const _: () = assert!(std::mem::size_of::<Line>() == 64);

/// A static 8-ary B+ tree's nodes, as the lookup reads them.
pub(crate) struct TreeView<'a> {
    /// Every node, level by level, top level first.
    pub(crate) lines: &'a [Line],
    /// The first node of each level, top level first (one entry per level).
    pub(crate) level_starts: &'a [u32],
    /// The largest point (a hash above it wraps to index 0).
    pub(crate) last: u64,
}

/// A radix index's arrays, as the lookup reads them.
pub(crate) struct RadixView<'a> {
    /// The last point of every [`LEAF`]-point block, then [`NODE`] copies of `u64::MAX`.
    pub(crate) bottom: &'a [u64],
    /// `table[b]`: the first bottom index whose key is `>= b << shift`; `table[T]` = block count.
    pub(crate) table: &'a [u32],
    pub(crate) shift: u32,
    /// The largest point.
    pub(crate) last: u64,
}

/// Keys `< h` among eight (portable twin of the SIMD counters).
#[inline(always)]
pub(crate) fn count8(g: &[u64; NODE], h: u64) -> usize {
    g.iter().map(|&k| usize::from(k < h)).sum()
}

/// Keys `< h` among sixteen (portable twin of the SIMD counters).
#[inline(always)]
pub(crate) fn count16(g: &[u64; LEAF], h: u64) -> usize {
    g.iter().map(|&k| usize::from(k < h)).sum()
}

/// One tree lookup over a non-empty array, generic over the node counters so each ISA gets
/// its own fully inlined copy.
#[inline(always)]
pub(crate) fn tree_lookup(
    t: &TreeView<'_>,
    points: &[u64],
    h: u64,
    c8: impl Fn(&[u64; NODE], u64) -> usize,
    c16: impl Fn(&[u64; LEAF], u64) -> usize,
) -> usize {
    if h > t.last {
        return 0;
    }
    let mut i = 0usize;
    for &start in t.level_starts {
        i = i * NODE + c8(&t.lines[start as usize + i].0, h);
    }
    leaf(points, i, h, &c16)
}

/// The last step: count inside the 16-point block `j` of the sorted array.
#[inline(always)]
fn leaf(points: &[u64], j: usize, h: u64, c16: &impl Fn(&[u64; LEAF], u64) -> usize) -> usize {
    let base = j * LEAF;
    match points.get(base..base + LEAF) {
        Some(block) => base + c16(block.try_into().unwrap_or(&[0; LEAF]), h),
        // The final, partial block.
        None => base + points[base..].iter().filter(|&&p| p < h).count(),
    }
}

/// [`BATCH`] tree lookups in lock step over a non-empty array, prefetching each one's next
/// node as soon as it is known.
#[inline(always)]
pub(crate) fn tree_batch(
    t: &TreeView<'_>,
    points: &[u64],
    hashes: &[u64],
    out: &mut [usize],
    c8: impl Fn(&[u64; NODE], u64) -> usize,
    c16: impl Fn(&[u64; LEAF], u64) -> usize,
) {
    let depth = t.level_starts.len();
    for (hs, os) in hashes.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
        let mut q = [0u64; BATCH];
        let mut idx = [0usize; BATCH];
        let m = hs.len();
        for (q, &h) in q.iter_mut().zip(hs) {
            *q = h.min(t.last);
        }
        for d in 0..depth {
            let start = t.level_starts[d] as usize;
            let next = t.level_starts.get(d + 1).map(|&s| s as usize);
            for k in 0..m {
                let i = idx[k] * NODE + c8(&t.lines[start + idx[k]].0, q[k]);
                idx[k] = i;
                match next {
                    Some(s) => prefetch(t.lines, s + i),
                    None => {
                        prefetch(points, i * LEAF);
                        prefetch(points, i * LEAF + LEAF - 1);
                    }
                }
            }
        }
        for k in 0..m {
            os[k] = if hs[k] > t.last { 0 } else { leaf(points, idx[k], q[k], &c16) };
        }
    }
}

impl RadixView<'_> {
    /// The block of `h <= last`: the first bottom index whose key is `>= h`.
    #[inline(always)]
    fn block(&self, h: u64, c8: &impl Fn(&[u64; NODE], u64) -> usize) -> usize {
        let b = (h >> self.shift) as usize;
        self.block_from(self.table[b] as usize, b, h, c8)
    }

    /// [`RadixView::block`] of `h` in bucket `b`, whose start `s = table[b]` is already read.
    #[inline(always)]
    fn block_from(&self, s: usize, b: usize, h: u64, c8: &impl Fn(&[u64; NODE], u64) -> usize) -> usize {
        let c = c8(self.window(s), h);
        if c < NODE {
            s + c
        } else {
            self.block_slow(s + NODE, self.table[b + 1] as usize, h)
        }
    }

    /// A bucket with more than 8 bottom keys: binary search the rest of it. The answer lies in
    /// `[from, to]` because `bottom[to] >= (b + 1) << shift > h` (or `to` is the block count and
    /// the last block holds `last >= h`), so counting the keys `< h` in `[from, to)` finds it.
    #[cold]
    #[inline(never)]
    fn block_slow(&self, from: usize, to: usize, h: u64) -> usize {
        from + self.bottom[from..to].partition_point(|&k| k < h)
    }

    #[inline(always)]
    fn window(&self, s: usize) -> &[u64; NODE] {
        // `s <= blocks` and `bottom` has NODE padding keys past the blocks.
        self.bottom[s..s + NODE].try_into().unwrap_or(&[u64::MAX; NODE])
    }
}

/// One radix lookup of `h <= last` in a non-empty index, generic over the counters so each ISA
/// gets its own inlined copy. `side` (an array parallel to the points, or empty) has the
/// block's entries prefetched as soon as the block is known.
#[inline(always)]
pub(crate) fn radix_lookup(
    r: &RadixView<'_>,
    points: &[u64],
    side: &[u32],
    h: u64,
    c8: impl Fn(&[u64; NODE], u64) -> usize,
    c16: impl Fn(&[u64; LEAF], u64) -> usize,
) -> usize {
    let j = r.block(h, &c8);
    prefetch(side, j * LEAF);
    prefetch(side, j * LEAF + LEAF - 1);
    leaf(points, j, h, &c16)
}

/// [`BATCH`] radix lookups over a non-empty index, stage by stage (table, window, block); each
/// stage prefetches what the next reads.
#[inline(always)]
pub(crate) fn radix_batch(
    r: &RadixView<'_>,
    points: &[u64],
    hashes: &[u64],
    out: &mut [usize],
    c8: impl Fn(&[u64; NODE], u64) -> usize,
    c16: impl Fn(&[u64; LEAF], u64) -> usize,
) {
    for (hs, os) in hashes.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
        let m = hs.len();
        let mut q = [0u64; BATCH];
        let mut b = [0usize; BATCH];
        let mut s = [0usize; BATCH];
        for k in 0..m {
            q[k] = hs[k].min(r.last);
            b[k] = (q[k] >> r.shift) as usize;
            s[k] = r.table[b[k]] as usize;
            prefetch(r.bottom, s[k]);
            prefetch(r.bottom, s[k] + NODE - 1);
        }
        for k in 0..m {
            let j = r.block_from(s[k], b[k], q[k], &c8);
            s[k] = j;
            prefetch(points, j * LEAF);
            prefetch(points, j * LEAF + LEAF / 2);
            prefetch(points, j * LEAF + LEAF - 1);
        }
        for k in 0..m {
            os[k] = if hs[k] > r.last { 0 } else { leaf(points, s[k], q[k], &c16) };
        }
    }
}

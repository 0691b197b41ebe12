//! The circle the ring-like routers share: sorted points, the owner of each point, the
//! successor search ("the first point at or after a hash, wrapping to the first point"), the
//! clockwise preference walk.
//!
//! [`Circle<P, I>`] holds `points: Vec<P>` sorted ascending (equal points ordered by the owner's
//! name by the router that built them; the first of equal points owns) and `owners: Vec<u32>`
//! beside it. `P` is `u64` for [`Ring`](crate::Ring) and [`MultiProbe`](crate::MultiProbe),
//! `u32` for [`Ketama`](crate::Ketama). `I` is the search index: [`NoIndex`] (a plain
//! `partition_point`, the default) or, for `u64` points, the [`Index`] chosen by a [`Layout`]
//! (the ring's).
//!
//! Dependencies point one way: this module uses [`crate::search`] and [`crate::arch`]; the
//! routers use it; nothing here (nor in `search` or `arch`) imports a router.

use std::ops::ControlFlow;

use crate::node::{NodeId, Visited};
use crate::search::{self, Eytzinger, Radix, Tree};

/// The largest total number of points a circle accepts (≈ 800 MB of `u64` points and owners):
/// [`Ring::MAX_POINTS`](crate::Ring::MAX_POINTS), and Ketama's cap.
pub(crate) const MAX_POINTS: u64 = 1 << 26;

/// Below this many points, [`Layout::Auto`] searches the sorted array directly with
/// `partition_point` ([`Layout::Oracle`]); from it on, it builds the [`Layout::Radix`] index.
/// Below about a thousand points the arrays sit in L1, so the index's speed-up is small and its
/// memory (≤ 0.75 B per point) costs more than it saves; `benches/lookup.rs` measures the
/// crossover (`results/REPORT.md`).
pub const INDEX_MIN_POINTS: usize = 1024;

/// How a ring searches its points. Every layout returns identical routes; they trade memory for
/// lookup speed. [`Layout::Auto`] (the default) picks by size from benchmark-measured thresholds;
/// the others exist for benchmarks, tests and callers who measured their own workload.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Layout {
    /// [`Layout::Oracle`] below [`INDEX_MIN_POINTS`] points, [`Layout::Radix`] from there on.
    #[default]
    Auto,
    /// `partition_point` over the sorted points (the reference). No index.
    Oracle,
    /// Branchless binary search with prefetch ([`search::branchless`]). No index.
    Branchless,
    /// Static 8-ary B+ tree over every 16th point ([`search::Tree`]): ≈ 0.57 bytes per point.
    /// Never chosen by [`Layout::Auto`]: [`Layout::Radix`] measured faster at every size.
    Tree,
    /// A radix table over the hash's top bits into the last point of every 16-point block
    /// ([`search::Radix`]): ≤ 0.75 bytes per point, three dependent reads per lookup.
    Radix,
    /// A BFS-ordered second copy of the points ([`search::Eytzinger`]): +12 bytes per point.
    /// Never chosen by [`Layout::Auto`]: the radix index is faster here without the copy.
    Eytzinger,
}

impl Layout {
    /// The concrete layout `self` means for a ring of `points` points.
    pub fn resolve(self, points: usize) -> Layout {
        match self {
            Layout::Auto if points < INDEX_MIN_POINTS => Layout::Oracle,
            Layout::Auto => Layout::Radix,
            other => other,
        }
    }
}

/// The built search structure of a ring.
#[derive(Clone, Debug)]
pub(crate) enum Index {
    Oracle,
    Branchless,
    Tree(Tree),
    Radix(Radix),
    Eytzinger(Eytzinger),
}

impl Index {
    fn build(layout: Layout, points: &[u64]) -> Index {
        match layout.resolve(points.len()) {
            Layout::Oracle => Index::Oracle,
            Layout::Tree => Index::Tree(Tree::build(points)),
            Layout::Radix => Index::Radix(Radix::build(points)),
            Layout::Eytzinger => Index::Eytzinger(Eytzinger::build(points)),
            _ => Index::Branchless,
        }
    }

    fn layout(&self) -> Layout {
        match self {
            Index::Oracle => Layout::Oracle,
            Index::Branchless => Layout::Branchless,
            Index::Tree(_) => Layout::Tree,
            Index::Radix(_) => Layout::Radix,
            Index::Eytzinger(_) => Layout::Eytzinger,
        }
    }

    fn memory_bytes(&self) -> usize {
        match self {
            Index::Oracle | Index::Branchless => 0,
            Index::Tree(t) => t.memory_bytes(),
            Index::Radix(r) => r.memory_bytes(),
            Index::Eytzinger(e) => e.memory_bytes(),
        }
    }
}

/// How a circle without an index searches: `partition_point` over the sorted points.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct NoIndex;

/// A successor search over sorted points of type `P`: the index of the first point `>= h`,
/// wrapping to 0 past the end.
pub(crate) trait Search<P>: Clone + std::fmt::Debug {
    /// The first index whose point is `>= h`, 0 past the end.
    fn successor(&self, points: &[P], h: P) -> usize;
    /// Heap bytes of the index (not of the points).
    fn memory_bytes(&self) -> usize;
}

impl<P: Copy + Ord> Search<P> for NoIndex {
    #[inline]
    fn successor(&self, points: &[P], h: P) -> usize {
        wrap(points.partition_point(|&p| p < h), points.len())
    }

    fn memory_bytes(&self) -> usize {
        0
    }
}

impl Search<u64> for Index {
    #[inline]
    fn successor(&self, points: &[u64], h: u64) -> usize {
        match self {
            Index::Radix(r) => r.lookup(points, h),
            Index::Tree(t) => t.lookup(points, h),
            Index::Branchless => search::branchless(points, h),
            Index::Oracle => search::oracle(points, h),
            Index::Eytzinger(e) => e.lookup(h),
        }
    }

    fn memory_bytes(&self) -> usize {
        Index::memory_bytes(self)
    }
}

/// `i`, or 0 when `i` is past the end (`len`).
#[inline]
fn wrap(i: usize, len: usize) -> usize {
    if i == len {
        0
    } else {
        i
    }
}

/// Sorted points, the owner of each, and a search index over the points (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct Circle<P, I = NoIndex> {
    points: Vec<P>,
    owners: Vec<u32>,
    index: I,
}

impl<P: Copy + Ord> Circle<P> {
    /// A circle over `points` (sorted ascending) and their `owners`, searched with
    /// `partition_point`.
    pub(crate) fn new(points: Vec<P>, owners: Vec<u32>) -> Circle<P> {
        debug_assert_eq!(points.len(), owners.len(), "Circle::new: one owner per point");
        debug_assert!(points.windows(2).all(|w| w[0] <= w[1]), "Circle::new: points must be sorted");
        Circle { points, owners, index: NoIndex }
    }

    /// The first index whose point is strictly greater than `h`, wrapping to 0 (Python's
    /// `bisect_right`, for Ketama's `>` variants).
    #[inline]
    pub(crate) fn successor_after(&self, h: P) -> usize {
        wrap(self.points.partition_point(|&p| p <= h), self.points.len())
    }

    /// [`successor`](Circle::successor) (or, with `strict`,
    /// [`successor_after`](Circle::successor_after)) of every hash of `hs`, into `out`.
    ///
    /// A lockstep branchless binary search: searches over the same array all take the same
    /// number of halving steps, so each step issues `hs.len()` independent loads and the cache
    /// misses of different keys overlap instead of queueing behind one another.
    ///
    /// # Panics
    /// If `hs.len() != out.len()`, or the circle has no point.
    pub(crate) fn successor_batch_lockstep(&self, hs: &[P], strict: bool, out: &mut [usize]) {
        assert_eq!(hs.len(), out.len(), "successor batch: hashes and out must have the same length");
        let pts = &self.points[..];
        assert!(!pts.is_empty(), "successor batch: the circle has no point");
        // `below(p, h)`: the point lies before `h`'s successor.
        let below = |p: P, h: P| if strict { p <= h } else { p < h };
        out.fill(0);
        let mut size = pts.len();
        while size > 1 {
            let half = size / 2;
            for (base, &h) in out.iter_mut().zip(hs) {
                let mid = *base + half;
                *base = if below(pts[mid], h) { mid } else { *base };
            }
            size -= half;
        }
        for (base, &h) in out.iter_mut().zip(hs) {
            *base = wrap(*base + usize::from(below(pts[*base], h)), pts.len());
        }
    }
}

impl Circle<u64, Index> {
    /// A circle over `points` (sorted ascending) and their `owners`, with the index `layout`
    /// resolves to for this many points.
    pub(crate) fn with_layout(points: Vec<u64>, owners: Vec<u32>, layout: Layout) -> Circle<u64, Index> {
        debug_assert_eq!(points.len(), owners.len(), "Circle::with_layout: one owner per point");
        let index = Index::build(layout, &points);
        Circle { points, owners, index }
    }

    /// Rebuilds only the index, for `layout` (O(P / 16) for the tree and the radix index).
    pub(crate) fn set_layout(&mut self, layout: Layout) {
        self.index = Index::build(layout, &self.points);
    }

    /// The concrete layout of the index.
    pub(crate) fn layout(&self) -> Layout {
        self.index.layout()
    }

    /// The owner of `h`'s point ([`Circle::successor`], then the owner). The radix index
    /// prefetches the owner's line as soon as it knows the key's block, so the two cache misses
    /// overlap instead of queueing.
    #[inline]
    pub(crate) fn owner_prefetching(&self, h: u64) -> NodeId {
        let i = match &self.index {
            Index::Radix(r) => r.lookup_prefetching(&self.points, &self.owners, h),
            _ => self.successor(h),
        };
        NodeId::from_index(self.owners[i])
    }

    /// [`Circle::successor`] for many hashes at once, interleaving the searches (radix, tree
    /// and branchless layouts) so their cache misses overlap.
    ///
    /// # Panics
    /// If `hashes.len() != out.len()`.
    pub(crate) fn successor_batch(&self, hashes: &[u64], out: &mut [usize]) {
        assert_eq!(hashes.len(), out.len(), "point_index_batch: hashes and out must have the same length");
        match &self.index {
            Index::Radix(r) => r.lookup_batch(&self.points, hashes, out),
            Index::Tree(t) => t.lookup_batch(&self.points, hashes, out),
            Index::Branchless => search::branchless_batch(&self.points, hashes, out),
            _ => {
                for (o, &h) in out.iter_mut().zip(hashes) {
                    *o = self.successor(h);
                }
            }
        }
    }
}

impl Circle<u64, Index> {
    /// The owner of every key of `keys` into `out`, the keys hashed a chunk at a time by
    /// `hash_chunk` (a router's `KeyHasher::hash_batch`): the batch kernel of the routers on
    /// this circle (ring, token ring).
    ///
    /// Software-pipelined: hashes and searches chunk `k + 1` while the owner lines of chunk `k`
    /// (prefetched as soon as its indices are known) arrive, then reads chunk `k`'s owners.
    /// Measured against reading the owners inside the radix kernel (prefetched with each key's
    /// point block): 0.90–1.01× its time at 160K points (two ring instances), a tie at 1.6M.
    ///
    /// # Panics
    /// If `keys.len() != out.len()`, or the circle has no point.
    pub(crate) fn route_batch_pipelined(
        &self,
        keys: &[&[u8]],
        out: &mut [NodeId],
        hash_chunk: impl Fn(&[&[u8]], &mut [u64]),
    ) {
        assert_eq!(keys.len(), out.len(), "route_batch: keys and out must have the same length");
        // One kernel batch ([`search::BATCH`]) per chunk. Measured (loaded 2-core machine, 4096
        // keys, min of 150 runs): 32 beat 64/96/128/256 by 2-3%/3%/4%/7% at 1.6M points and tied
        // at 160K; a short chunk keeps each owner prefetch in flight for exactly one search.
        const CHUNK: usize = search::BATCH;
        let mut hashes = [0u64; CHUNK];
        let mut idx = [[0usize; CHUNK]; 2];
        // The chunk whose owners are still to be read: its output, length and `idx` buffer.
        let mut pending: Option<(&mut [NodeId], usize, usize)> = None;
        for (n, (ks, os)) in keys.chunks(CHUNK).zip(out.chunks_mut(CHUNK)).enumerate() {
            let m = ks.len();
            let cur = n & 1;
            hash_chunk(ks, &mut hashes[..m]);
            self.successor_batch(&hashes[..m], &mut idx[cur][..m]);
            for &i in &idx[cur][..m] {
                crate::arch::prefetch(&self.owners, i);
            }
            if let Some((pos, pm, b)) = pending.replace((os, m, cur)) {
                for (o, &i) in pos.iter_mut().zip(&idx[b][..pm]) {
                    *o = NodeId::from_index(self.owners[i]);
                }
            }
        }
        if let Some((pos, pm, b)) = pending {
            for (o, &i) in pos.iter_mut().zip(&idx[b][..pm]) {
                *o = NodeId::from_index(self.owners[i]);
            }
        }
    }
}

impl<P: Copy + Ord, I: Search<P>> Circle<P, I> {
    /// The sorted points.
    #[inline]
    pub(crate) fn points(&self) -> &[P] {
        &self.points
    }

    /// The owner (node index) of each point, parallel to [`Circle::points`].
    #[inline]
    pub(crate) fn owners(&self) -> &[u32] {
        &self.owners
    }

    /// The owner of point `i`.
    #[inline]
    pub(crate) fn owner(&self, i: usize) -> NodeId {
        NodeId::from_index(self.owners[i])
    }

    /// Index of the point that owns `h`: the first point `>= h`, wrapping to 0.
    #[inline]
    pub(crate) fn successor(&self, h: P) -> usize {
        self.index.successor(&self.points, h)
    }

    /// How many points equal the point before them (the later of two equal points never owns
    /// a key). O(P).
    pub(crate) fn count_collisions(&self) -> usize {
        self.points.windows(2).filter(|w| w[0] == w[1]).count()
    }

    /// Heap bytes: points, owners and index (by capacity).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.points.capacity() * std::mem::size_of::<P>() + self.owners.capacity() * 4 + self.index.memory_bytes()
    }

    /// Visits distinct owners clockwise from point `start` until every one of `node_count`
    /// nodes is produced, the points run out, or `visit` breaks (Dynamo's preference list).
    /// [`walk_clockwise`](Circle::walk_clockwise), then the nodes the walk never met (they own
    /// no point) in the order `rest` gives, so the preference list names every node.
    pub(crate) fn walk_clockwise_then(
        &self,
        start: usize,
        node_count: usize,
        rest: impl IntoIterator<Item = u32>,
        visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>,
    ) {
        let mut seen = Visited::new(node_count);
        let (mut produced, mut stopped) = (0usize, false);
        self.walk_clockwise(start, node_count, &mut |id| {
            seen.insert(id);
            produced += 1;
            let flow = visit(id);
            stopped = flow.is_break();
            flow
        });
        if stopped || produced == node_count {
            return;
        }
        for i in rest {
            let id = NodeId::from_index(i);
            if seen.insert(id) && visit(id).is_break() {
                return;
            }
        }
    }

    pub(crate) fn walk_clockwise(
        &self,
        start: usize,
        node_count: usize,
        visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>,
    ) {
        let owners = &self.owners[..];
        let mut seen = Visited::new(node_count);
        let mut produced = 0;
        let len = owners.len();
        for step in 0..len {
            let id = NodeId::from_index(owners[(start + step) % len]);
            if seen.insert(id) {
                produced += 1;
                if visit(id).is_break() || produced == node_count {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn lockstep_batch_matches_single_searches(
            mut points in proptest::collection::vec(0u32..64, 1..300),
            hs in proptest::collection::vec(0u32..70, 0..100),
        ) {
            // Small values: many equal points, hashes equal to points, hashes past the last.
            points.sort_unstable();
            let owners = vec![0; points.len()];
            let c = Circle::new(points, owners);
            for strict in [false, true] {
                let mut out = vec![usize::MAX; hs.len()];
                c.successor_batch_lockstep(&hs, strict, &mut out);
                for (&h, &o) in hs.iter().zip(&out) {
                    let want = if strict { c.successor_after(h) } else { c.successor(h) };
                    prop_assert_eq!(o, want, "h {} strict {}", h, strict);
                }
            }
        }
    }

    #[test]
    fn lockstep_batch_on_one_point_and_extremes() {
        let c = Circle::new(vec![5u32], vec![0]);
        let mut out = [9usize; 4];
        c.successor_batch_lockstep(&[0, 5, 6, u32::MAX], false, &mut out);
        assert_eq!(out, [0, 0, 0, 0]);
        let c = Circle::new(vec![0u32, 0, u32::MAX], vec![0, 1, 2]);
        c.successor_batch_lockstep(&[0, 1, u32::MAX, u32::MAX - 1], true, &mut out);
        assert_eq!(out, [2, 2, 0, 2]);
    }

    fn ids(c: &Circle<u32>, start: usize, n: usize) -> Vec<u32> {
        let mut got = Vec::new();
        c.walk_clockwise(start, n, &mut |id| {
            got.push(id.as_u32());
            ControlFlow::Continue(())
        });
        got
    }

    #[test]
    fn successors_wrap_and_compare() {
        let c = Circle::new(vec![10u32, 20, 20, 30], vec![0, 1, 2, 0]);
        assert_eq!(
            [c.successor(0), c.successor(10), c.successor(11), c.successor(20), c.successor(31)],
            [0, 0, 1, 1, 0]
        );
        assert_eq!(
            [c.successor_after(9), c.successor_after(10), c.successor_after(20), c.successor_after(30)],
            [0, 1, 3, 0]
        );
        assert_eq!(c.count_collisions(), 1);
        assert_eq!(ids(&c, 2, 3), [2, 0, 1]);
        assert_eq!(ids(&c, 3, 5), [0, 1, 2], "stops when the points run out");
    }

    #[test]
    fn indexed_successor_matches_oracle() {
        let points: Vec<u64> = {
            let mut p: Vec<u64> = (0..5000u64).map(crate::mix::mix64).collect();
            p.sort_unstable();
            p
        };
        let owners = vec![0u32; points.len()];
        let hashes: Vec<u64> = (0..3000u64).map(|i| crate::mix::mix64(i ^ 0x55)).chain([0, u64::MAX]).collect();
        for layout in [Layout::Auto, Layout::Oracle, Layout::Branchless, Layout::Tree, Layout::Radix, Layout::Eytzinger]
        {
            let c = Circle::with_layout(points.clone(), owners.clone(), layout);
            let mut batch = vec![0; hashes.len()];
            c.successor_batch(&hashes, &mut batch);
            for (&h, &b) in hashes.iter().zip(&batch) {
                let want = search::oracle(&points, h);
                assert_eq!((c.successor(h), b), (want, want), "{layout:?}");
                assert_eq!(c.owner_prefetching(h), c.owner(want));
            }
        }
    }
}

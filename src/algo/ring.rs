//! A consistent-hash ring over a sorted array of points.
//!
//! Each node gets V virtual nodes (points) on a 64-bit circle; a key belongs to the first point
//! at or after its hash, wrapping to the first point. V = 1 is the naive ring (cheap, badly
//! balanced); V = 100-200 balances within a few percent at the cost of V points per node.
//!
//! Layout: struct-of-arrays, `points: Vec<u64>` sorted ascending and `owners: Vec<u32>` beside
//! it, 12 bytes per point, plus a small search index on top of the points chosen by size
//! ([`Layout`]): ≤ 12.75 bytes per point in total by default. Never a tree map: the sorted array
//! is what the search kernels ([`crate::search`]) run on.

use std::ops::ControlFlow;

use crate::algo::builder::{hashed_router_basics, router_plumbing};
use crate::algo::Visited;
use crate::error::{Error, Result};
use crate::hash::KeyHasher;
use crate::node::{Node, NodeId, NodeSet};
use crate::search::{self, Eytzinger, Radix, Tree};
use crate::Builder;

pub(crate) const MAX_VNODES: u32 = 1 << 20;
pub(crate) const MAX_POINTS: u64 = 1 << 26;
pub(crate) const DEFAULT_VNODES: u32 = 160;

/// Below this many points, [`Layout::Auto`] searches the sorted array directly with
/// `partition_point` ([`Layout::Oracle`]); from it on, it builds the [`Layout::Radix`] index.
/// Measured with `benches/lookup.rs` (4096 keys per iteration, AVX2 Zen 3 VM, one run,
/// criterion medians): at 1.6K points oracle 43.6 µs, radix 38.0 µs, radix batched 29.2 µs; at
/// 16K oracle 73.8 µs, radix 42.0 µs. Below ~1K points the arrays sit in L1, the speed-up is
/// small and the index (≤ 0.75 B per point) would cost more than it saves.
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
enum Index {
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

/// A consistent-hash ring with virtual nodes and weights.
///
/// - **Points**: node `name`'s `i`-th point is `hasher.hash("{name}-{i}")` (the name, a `-`, `i`
///   in decimal). A node of weight `w` gets `max(1, round(V · N · w / Σw))` points, so with equal
///   weights every node has exactly V.
/// - **Equal points** are ordered by node name, and the first wins, so the ring's routes do not
///   depend on the order the nodes were given in; [`Ring::collisions`] counts them.
/// - **Cost**: `route` = one hash + one search over `V·N` points, O(log(V·N)) (see [`Layout`]);
///   `route_batch` interleaves the searches of many keys. Memory: 12 bytes per point plus the
///   layout's index (≤ 0.75 bytes per point by default) plus the node set. Build: O(P) radix sort
///   for P points; adding or removing a node merges into the existing arrays in O(P).
#[derive(Clone, Debug)]
pub struct Ring {
    nodes: NodeSet,
    hasher: KeyHasher,
    vnodes: u32,
    points: Vec<u64>,
    owners: Vec<u32>,
    collisions: usize,
    layout: Layout,
    index: Index,
}

hashed_router_basics!(Ring);

impl Builder<Ring> {
    /// Virtual nodes per weight-1 node, 1..=[`Ring::MAX_VNODES`] (default
    /// [`Ring::DEFAULT_VNODES`] = 160).
    pub fn vnodes(mut self, vnodes: u64) -> Builder<Ring> {
        self.options.vnodes = Some(vnodes);
        self
    }

    /// The search layout (default [`Layout::Auto`]). Routes do not depend on it.
    pub fn layout(mut self, layout: Layout) -> Builder<Ring> {
        self.options.layout = layout;
        self
    }

    /// Builds the ring.
    ///
    /// # Errors
    /// The [`NodeSet::new`] errors, [`Error::InvalidVnodes`], [`Error::TooManyPoints`].
    pub fn build(mut self) -> Result<Ring> {
        let nodes = self.take_nodes()?;
        let vnodes = self.options.vnodes.unwrap_or(u64::from(DEFAULT_VNODES));
        if vnodes == 0 || vnodes > u64::from(MAX_VNODES) {
            return Err(Error::InvalidVnodes { vnodes, max: MAX_VNODES });
        }
        Ring::from_parts(nodes, self.hasher, vnodes as u32, self.options.layout)
    }
}

impl Ring {
    /// The largest vnode count per (weight-1) node a ring accepts.
    pub const MAX_VNODES: u32 = MAX_VNODES;
    /// The largest total number of points a ring accepts (≈ 800 MB of points and owners).
    pub const MAX_POINTS: u64 = MAX_POINTS;
    /// The vnode count used when the builder is not given one (Ketama's 160).
    pub const DEFAULT_VNODES: u32 = DEFAULT_VNODES;

    fn from_parts(nodes: NodeSet, hasher: KeyHasher, vnodes: u32, layout: Layout) -> Result<Ring> {
        let counts = point_counts(&nodes, vnodes)?;
        let by_name = name_order(&nodes);
        let (points, owners) = generate_sorted(&nodes, &hasher, &counts, &by_name);
        Ok(Ring::assemble(nodes, hasher, vnodes, layout, points, owners))
    }

    fn assemble(
        nodes: NodeSet,
        hasher: KeyHasher,
        vnodes: u32,
        layout: Layout,
        points: Vec<u64>,
        owners: Vec<u32>,
    ) -> Ring {
        let collisions = points.windows(2).filter(|w| w[0] == w[1]).count();
        let index = Index::build(layout, &points);
        Ring { nodes, hasher, vnodes, points, owners, collisions, layout, index }
    }

    /// The same ring searched with `layout`: a clone with only the index rebuilt (O(P / 16) for
    /// the tree and the radix index). Routes do not change.
    pub fn with_layout(&self, layout: Layout) -> Ring {
        let index = Index::build(layout, &self.points);
        Ring { layout, index, ..self.clone() }
    }

    /// The concrete layout in use ([`Layout::resolve`] of the requested one).
    pub fn layout(&self) -> Layout {
        self.index.layout()
    }

    /// A ring over `new_nodes` (same hasher, vnodes, layout) reusing this ring's sorted points:
    /// nodes whose name and point count are unchanged keep their points; the others' points are
    /// generated, sorted and merged in. Identical to a full build (tested), O(P + k log k).
    fn rebuilt(&self, new_nodes: NodeSet) -> Result<Ring> {
        let new_counts = point_counts(&new_nodes, self.vnodes)?;
        let old_counts = point_counts(&self.nodes, self.vnodes)?;
        // Old id -> new id for nodes whose points carry over unchanged.
        let mut remap = vec![u32::MAX; self.nodes.len()];
        let mut kept_new = vec![false; new_nodes.len()];
        for (old, node) in self.nodes.iter() {
            if let Some(new) = new_nodes.id_of(node.name()) {
                if new_counts[new.index()] == old_counts[old.index()] {
                    remap[old.index()] = new.as_u32();
                    kept_new[new.index()] = true;
                }
            }
        }
        let fresh_total: usize = (0..new_nodes.len()).filter(|&i| !kept_new[i]).map(|i| new_counts[i] as usize).sum();
        let total: usize = new_counts.iter().map(|&c| c as usize).sum();
        if 2 * fresh_total > total {
            return Ring::from_parts(new_nodes, self.hasher, self.vnodes, self.layout);
        }
        // Only the fresh nodes need their name order (sorting all names cost more than the merge).
        let mut by_name: Vec<u32> = (0..new_nodes.len() as u32).filter(|&id| !kept_new[id as usize]).collect();
        by_name.sort_unstable_by(|&a, &b| {
            new_nodes.name(NodeId::from_index(a)).cmp(new_nodes.name(NodeId::from_index(b)))
        });
        let (fp, fo) = generate_sorted(&new_nodes, &self.hasher, &new_counts, &by_name);
        let mut points = Vec::with_capacity(total);
        let mut owners = Vec::with_capacity(total);
        if remap.iter().enumerate().all(|(old, &new)| new == old as u32) {
            // Every old node kept under its id (an added node): copy the runs of old points
            // between fresh points wholesale instead of visiting each old point. Measured at
            // 160K points: the per-point merge below made an add only 3.9× faster than a rebuild.
            let name_of = |o: u32| new_nodes.name(NodeId::from_index(o));
            let mut from = 0;
            for (&x, &o) in fp.iter().zip(&fo) {
                let mut at = from + self.points[from..].partition_point(|&p| p < x);
                // Equal points are ordered by name.
                while at < self.points.len() && self.points[at] == x && name_of(self.owners[at]) < name_of(o) {
                    at += 1;
                }
                points.extend_from_slice(&self.points[from..at]);
                owners.extend_from_slice(&self.owners[from..at]);
                points.push(x);
                owners.push(o);
                from = at;
            }
            points.extend_from_slice(&self.points[from..]);
            owners.extend_from_slice(&self.owners[from..]);
            return Ok(Ring::assemble(new_nodes, self.hasher, self.vnodes, self.layout, points, owners));
        }
        if let Some(gone) = one_removed(&remap).filter(|_| fp.is_empty()) {
            // One node removed, every other kept (ids above it shift down by one): copy the runs
            // between its points wholesale, renumbering owners arithmetically.
            let renumber = |o: &u32| o - u32::from(*o > gone);
            let mut from = 0;
            for (i, _) in self.owners.iter().enumerate().filter(|(_, &o)| o == gone) {
                points.extend_from_slice(&self.points[from..i]);
                owners.extend(self.owners[from..i].iter().map(renumber));
                from = i + 1;
            }
            points.extend_from_slice(&self.points[from..]);
            owners.extend(self.owners[from..].iter().map(renumber));
            return Ok(Ring::assemble(new_nodes, self.hasher, self.vnodes, self.layout, points, owners));
        }
        let mut f = 0;
        for (&p, &o) in self.points.iter().zip(&self.owners) {
            let o = remap[o as usize];
            if o == u32::MAX {
                continue;
            }
            // Fresh points that sort before (p, o): smaller point, or equal point and smaller name.
            while f < fp.len()
                && (fp[f] < p
                    || (fp[f] == p
                        && new_nodes.name(NodeId::from_index(fo[f])) < new_nodes.name(NodeId::from_index(o))))
            {
                points.push(fp[f]);
                owners.push(fo[f]);
                f += 1;
            }
            points.push(p);
            owners.push(o);
        }
        points.extend_from_slice(&fp[f..]);
        owners.extend_from_slice(&fo[f..]);
        Ok(Ring::assemble(new_nodes, self.hasher, self.vnodes, self.layout, points, owners))
    }

    /// Virtual nodes per weight-1 node.
    pub fn vnodes(&self) -> u32 {
        self.vnodes
    }

    /// The hasher in use (for keys and points).
    pub fn hasher(&self) -> KeyHasher {
        self.hasher
    }

    /// The sorted points.
    pub fn points(&self) -> &[u64] {
        &self.points
    }

    /// The owner (node index) of each point, parallel to [`Ring::points`].
    pub fn owners(&self) -> &[u32] {
        &self.owners
    }

    /// How many points equal the point before them (hash collisions between vnodes). The later
    /// of two equal points never owns a key.
    pub fn collisions(&self) -> usize {
        self.collisions
    }

    fn heap_bytes(&self) -> usize {
        self.points.capacity() * 8 + self.owners.capacity() * 4 + self.index.memory_bytes()
    }

    /// The owner of `hash`'s point. The radix index prefetches the owner line as soon as it
    /// knows the key's block, so the two cache misses overlap instead of queueing.
    #[inline]
    fn owner(&self, hash: u64) -> NodeId {
        let i = match &self.index {
            Index::Radix(r) => r.lookup_prefetching(&self.points, &self.owners, hash),
            _ => self.point_index(hash),
        };
        NodeId::from_index(self.owners[i])
    }

    /// `out[k] = hasher.hash(keys[k])`.
    #[inline]
    fn hash_chunk(&self, keys: &[&[u8]], out: &mut [u64]) {
        match self.hasher {
            // The default hasher, called directly so the per-key loop has no enum dispatch.
            KeyHasher::Xxh3 { seed: 0 } => {
                for (h, k) in out.iter_mut().zip(keys) {
                    *h = xxhash_rust::xxh3::xxh3_64(k);
                }
            }
            hasher => {
                for (h, k) in out.iter_mut().zip(keys) {
                    *h = hasher.hash(k);
                }
            }
        }
    }

    /// Index of the point that owns `hash`: the first point `>= hash`, wrapping to 0.
    #[inline]
    pub fn point_index(&self, hash: u64) -> usize {
        match &self.index {
            Index::Radix(r) => r.lookup(&self.points, hash),
            Index::Tree(t) => t.lookup(&self.points, hash),
            Index::Branchless => search::branchless(&self.points, hash),
            Index::Oracle => search::oracle(&self.points, hash),
            Index::Eytzinger(e) => e.lookup(hash),
        }
    }

    /// [`Ring::point_index`] for many hashes at once, interleaving the searches (radix, tree and
    /// branchless layouts) so their cache misses overlap.
    ///
    /// # Panics
    /// If `hashes.len() != out.len()`.
    pub fn point_index_batch(&self, hashes: &[u64], out: &mut [usize]) {
        assert_eq!(hashes.len(), out.len(), "point_index_batch: hashes and out must have the same length");
        match &self.index {
            Index::Radix(r) => r.lookup_batch(&self.points, hashes, out),
            Index::Tree(t) => t.lookup_batch(&self.points, hashes, out),
            Index::Branchless => search::branchless_batch(&self.points, hashes, out),
            _ => {
                for (o, &h) in out.iter_mut().zip(hashes) {
                    *o = self.point_index(h);
                }
            }
        }
    }

    /// A new ring with `node` added (same vnodes and hasher).
    ///
    /// # Errors
    /// As [`NodeSet::with_node`] and [`Builder::<Ring>::build`].
    ///
    /// Merges the new node's points into this ring's sorted arrays (O(P), no re-sort) when the
    /// other nodes' point counts do not change (always with unit weights).
    pub fn with_node(&self, node: Node) -> Result<Ring> {
        self.rebuilt(self.nodes.with_node(node)?)
    }

    /// A new ring without the node named `name`.
    ///
    /// # Errors
    /// [`Error::UnknownNode`], [`Error::NoNodes`] for the last node.
    ///
    /// Filters the node's points out of this ring's arrays (O(P)) when the other nodes' point
    /// counts do not change.
    pub fn without_node(&self, name: &str) -> Result<Ring> {
        self.rebuilt(self.nodes.without_node(name)?)
    }

    /// A new ring with node `name`'s weight changed.
    ///
    /// # Errors
    /// [`Error::UnknownNode`], [`Error::InvalidWeight`], [`Error::TooManyPoints`].
    pub fn with_weight(&self, name: &str, weight: f64) -> Result<Ring> {
        self.rebuilt(self.nodes.with_weight(name, weight)?)
    }
}

/// Points per node: `max(1, round(V · N · w / Σw))`, exactly V for equal weights.
fn point_counts(nodes: &NodeSet, vnodes: u32) -> Result<Vec<u32>> {
    let n = nodes.len() as f64;
    let total_weight = nodes.total_weight();
    let mut counts = Vec::with_capacity(nodes.len());
    let mut total = 0u64;
    for (_, node) in nodes.iter() {
        let c = if nodes.all_unit_weight() {
            f64::from(vnodes)
        } else {
            (f64::from(vnodes) * n * node.weight() / total_weight).round().max(1.0)
        };
        if c > MAX_POINTS as f64 {
            return Err(Error::TooManyPoints { points: c as u64, max: MAX_POINTS });
        }
        total += c as u64;
        counts.push(c as u32);
    }
    if total > MAX_POINTS {
        return Err(Error::TooManyPoints { points: total, max: MAX_POINTS });
    }
    Ok(counts)
}

/// Node ids sorted by name: equal points are ordered by this rank.
fn name_order(nodes: &NodeSet) -> Vec<u32> {
    let mut by_name: Vec<u32> = (0..nodes.len() as u32).collect();
    by_name.sort_unstable_by(|&a, &b| nodes.name(NodeId::from_index(a)).cmp(nodes.name(NodeId::from_index(b))));
    by_name
}

/// `Some(r)` when `remap` drops exactly old id `r` and shifts the ids above it down by one
/// (what [`NodeSet::without_node`] does), every other node kept.
fn one_removed(remap: &[u32]) -> Option<u32> {
    let gone = remap.iter().position(|&n| n == u32::MAX)? as u32;
    let shifted = remap.iter().enumerate().all(|(old, &new)| {
        let old = old as u32;
        old == gone || new == old - u32::from(old > gone)
    });
    shifted.then_some(gone)
}

/// Above this many points, point hashing is spread over the rayon pool.
#[cfg(feature = "parallel")]
const PAR_BUILD_POINTS: usize = 1 << 16;

/// The points of the nodes listed in `order` (sorted by name), sorted by (point, name), with
/// their owners. Generation follows `order`, so a stable sort by point alone yields the
/// (point, name) order.
fn generate_sorted(nodes: &NodeSet, hasher: &KeyHasher, counts: &[u32], order: &[u32]) -> (Vec<u64>, Vec<u32>) {
    let total: usize = order.iter().map(|&id| counts[id as usize] as usize).sum();
    let mut points = vec![0u64; total];
    let mut owners = vec![0u32; total];
    let mut slices: Vec<(u32, &mut [u64])> = Vec::with_capacity(order.len());
    let mut rest: &mut [u64] = &mut points;
    let mut o = 0;
    for &id in order {
        let c = counts[id as usize] as usize;
        let (head, tail) = rest.split_at_mut(c);
        slices.push((id, head));
        rest = tail;
        owners[o..o + c].fill(id);
        o += c;
    }
    let fill = |(id, out): &mut (u32, &mut [u64])| {
        let mut buf = Vec::with_capacity(64);
        let name = nodes.name(NodeId::from_index(*id));
        buf.extend_from_slice(name.as_bytes());
        buf.push(b'-');
        let base = buf.len();
        for (i, p) in out.iter_mut().enumerate() {
            buf.truncate(base);
            push_decimal(&mut buf, i as u32);
            *p = hasher.hash(&buf);
        }
    };
    #[cfg(feature = "parallel")]
    if total >= PAR_BUILD_POINTS {
        use rayon::prelude::*;
        slices.par_iter_mut().with_min_len(16).for_each(fill);
    } else {
        slices.iter_mut().for_each(fill);
    }
    #[cfg(not(feature = "parallel"))]
    slices.iter_mut().for_each(fill);
    drop(slices);
    radix_sort(&mut points, &mut owners);
    (points, owners)
}

/// Appends `v` in decimal (what `write!(buf, "{v}")` produces, without the formatter).
#[inline]
fn push_decimal(buf: &mut Vec<u8>, mut v: u32) {
    let mut tmp = [0u8; 10];
    let mut pos = tmp.len();
    loop {
        pos -= 1;
        tmp[pos] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[pos..]);
}

/// Stable radix sort of `keys` (8-bit digits), moving `vals` along; O(n), and the capacities
/// of the sorted vectors equal their lengths.
///
/// Large inputs first split by the top byte (one pass over memory, 2 × 256 write streams),
/// then LSD-sort each of the 256 buckets while it sits in cache, buckets spread over the rayon
/// pool. A plain LSD over the whole array measured ~3× slower at 1.6M points: each of its 8
/// passes scatters across memory that no longer fits in cache.
fn radix_sort(keys: &mut Vec<u64>, vals: &mut Vec<u32>) {
    let n = keys.len();
    let mut k2 = vec![0u64; n];
    let mut v2 = vec![0u32; n];
    if n < (1 << 15) {
        if lsd(keys, vals, &mut k2, &mut v2, 8) {
            std::mem::swap(keys, &mut k2);
            std::mem::swap(vals, &mut v2);
        }
        return;
    }
    // MSD pass on the top byte into (k2, v2).
    let mut offs = [0usize; 257];
    for &k in keys.iter() {
        offs[(k >> 56) as usize + 1] += 1;
    }
    for d in 0..256 {
        offs[d + 1] += offs[d];
    }
    let mut at = offs;
    for (&k, &v) in keys.iter().zip(vals.iter()) {
        let d = (k >> 56) as usize;
        k2[at[d]] = k;
        v2[at[d]] = v;
        at[d] += 1;
    }
    // Each bucket: LSD on the low 7 bytes, using the original arrays as scratch.
    let mut jobs = Vec::with_capacity(256);
    let (mut ka, mut va, mut kb, mut vb) = (&mut k2[..], &mut v2[..], &mut keys[..], &mut vals[..]);
    for d in 0..256 {
        let len = offs[d + 1] - offs[d];
        let (k_head, k_tail) = ka.split_at_mut(len);
        let (v_head, v_tail) = va.split_at_mut(len);
        let (sk_head, sk_tail) = kb.split_at_mut(len);
        let (sv_head, sv_tail) = vb.split_at_mut(len);
        jobs.push((k_head, v_head, sk_head, sv_head));
        (ka, va, kb, vb) = (k_tail, v_tail, sk_tail, sv_tail);
    }
    let run = |(k, v, sk, sv): &mut (&mut [u64], &mut [u32], &mut [u64], &mut [u32])| {
        if lsd(k, v, sk, sv, 7) {
            k.copy_from_slice(sk);
            v.copy_from_slice(sv);
        }
    };
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        jobs.par_iter_mut().for_each(run);
    }
    #[cfg(not(feature = "parallel"))]
    jobs.iter_mut().for_each(run);
    drop(jobs);
    std::mem::swap(keys, &mut k2);
    std::mem::swap(vals, &mut v2);
}

/// Stable LSD radix sort of `(k, v)` on the low `passes` bytes, ping-ponging with `(sk, sv)`;
/// passes whose byte is the same for every key are skipped. Returns whether the sorted data
/// ended in the scratch arrays.
fn lsd(k: &mut [u64], v: &mut [u32], sk: &mut [u64], sv: &mut [u32], passes: usize) -> bool {
    let n = k.len();
    let mut hist = [[0usize; 256]; 8];
    for &x in k.iter() {
        for (p, h) in hist.iter_mut().enumerate().take(passes) {
            h[((x >> (8 * p)) & 0xff) as usize] += 1;
        }
    }
    let mut in_scratch = false;
    for (p, h) in hist.iter_mut().enumerate().take(passes) {
        if h.contains(&n) {
            continue;
        }
        let mut sum = 0;
        for c in h.iter_mut() {
            let t = *c;
            *c = sum;
            sum += t;
        }
        let (src_k, src_v, dst_k, dst_v): (&[u64], &[u32], &mut [u64], &mut [u32]) =
            if in_scratch { (&*sk, &*sv, &mut *k, &mut *v) } else { (&*k, &*v, &mut *sk, &mut *sv) };
        for (&x, &y) in src_k.iter().zip(src_v) {
            let d = ((x >> (8 * p)) & 0xff) as usize;
            dst_k[h[d]] = x;
            dst_v[h[d]] = y;
            h[d] += 1;
        }
        in_scratch = !in_scratch;
    }
    in_scratch
}

/// `hasher.hash("{name}-{i}")`, formatting into a reused buffer (the reference the fast
/// generator is tested against).
#[cfg(test)]
fn point_hash(hasher: &KeyHasher, buf: &mut Vec<u8>, name: &str, i: u32) -> u64 {
    use std::io::Write;
    buf.clear();
    buf.extend_from_slice(name.as_bytes());
    // Writing to a Vec cannot fail.
    let _ = write!(buf, "-{i}");
    hasher.hash(buf)
}

router_plumbing!(Ring, "ring" {
    /// Software-pipelined: hashes and searches chunk `k + 1` while the owner lines of chunk `k`
    /// (prefetched as soon as its indices are known) arrive, then reads chunk `k`'s owners.
    /// Measured against reading the owners inside the radix kernel (prefetched with each key's
    /// point block): 0.90–1.01× its time at 160K points (two ring instances), a tie at 1.6M.
    fn route_batch(&self, keys: &[&[u8]], out: &mut [NodeId]) {
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
            self.hash_chunk(ks, &mut hashes[..m]);
            self.point_index_batch(&hashes[..m], &mut idx[cur][..m]);
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
    /// Dynamo's preference list: walk clockwise from the key's point, skipping nodes already
    /// produced.
    fn preference(&self, key: &[u8], visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) -> Result<()> {
        walk_clockwise(&self.owners, self.point_index(self.hasher.hash(key)), self.nodes.len(), visit);
        Ok(())
    }
});

/// Visits distinct owners clockwise from `start` until every node is produced or `visit` breaks.
pub(crate) fn walk_clockwise(
    owners: &[u32],
    start: usize,
    node_count: usize,
    visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>,
) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Router;

    fn ring(names: &[&str], v: u64) -> Ring {
        Ring::builder().vnodes(v).nodes(names).build().unwrap()
    }

    /// The original build (format, hash, comparison sort of (point, name rank)): the frozen
    /// definition the fast build must reproduce exactly.
    fn reference(nodes: &NodeSet, hasher: KeyHasher, v: u32) -> (Vec<u64>, Vec<u32>) {
        let counts = point_counts(nodes, v).unwrap();
        let by_name = name_order(nodes);
        let mut rank = vec![0u32; nodes.len()];
        for (r, &id) in by_name.iter().enumerate() {
            rank[id as usize] = r as u32;
        }
        let mut pairs = Vec::new();
        let mut buf = Vec::new();
        for (id, node) in nodes.iter() {
            for i in 0..counts[id.index()] {
                pairs.push((point_hash(&hasher, &mut buf, node.name(), i), rank[id.index()]));
            }
        }
        pairs.sort_unstable();
        pairs.into_iter().map(|(p, r)| (p, by_name[r as usize])).unzip()
    }

    fn same(a: &Ring, b: &Ring) {
        assert_eq!(a.points(), b.points());
        assert_eq!(a.owners(), b.owners());
        assert_eq!(a.collisions(), b.collisions());
        assert_eq!(a.nodes(), b.nodes());
    }

    #[test]
    fn fast_build_matches_reference() {
        // Crc16 points collide a lot: exercises the equal-point rule.
        for hasher in [KeyHasher::default(), KeyHasher::Crc16, KeyHasher::Murmur3X64 { seed: 3 }] {
            for (n, v) in [(1usize, 1u64), (3, 10), (50, 40), (300, 300)] {
                let names: Vec<String> = (0..n).rev().map(|i| format!("n{i}")).collect();
                let r = Ring::builder().vnodes(v).hasher(hasher).nodes(&names).build().unwrap();
                let (p, o) = reference(r.nodes(), hasher, v as u32);
                assert_eq!(r.points(), &p[..]);
                assert_eq!(r.owners(), &o[..]);
            }
        }
    }

    #[test]
    fn incremental_matches_rebuild() {
        for hasher in [KeyHasher::default(), KeyHasher::Crc16] {
            let names: Vec<String> = (0..40).map(|i| format!("s{i}")).collect();
            let r = Ring::builder().vnodes(50).hasher(hasher).nodes(&names).build().unwrap();
            // Names sorting first, between and last: equal points order by name.
            for extra in ["s7x", "a", "zz"] {
                let added = r.with_node(Node::new(extra)).unwrap();
                let full = Ring::builder().vnodes(50).hasher(hasher).node_set(added.nodes().clone()).build().unwrap();
                same(&added, &full);
            }
            for gone in ["s0", "s7", "s39"] {
                let removed = r.without_node(gone).unwrap();
                let full = Ring::builder().vnodes(50).hasher(hasher).node_set(removed.nodes().clone()).build().unwrap();
                same(&removed, &full);
            }
            let w = r.with_weight("s3", 2.0).unwrap();
            let full = Ring::builder().vnodes(50).hasher(hasher).node_set(w.nodes().clone()).build().unwrap();
            same(&w, &full);
        }
    }

    #[test]
    fn layouts_route_identically() {
        let names: Vec<String> = (0..200).map(|i| format!("n{i}")).collect();
        let base = Ring::builder().vnodes(100).nodes(&names).build().unwrap();
        assert_eq!(base.layout(), Layout::Radix);
        let hashes: Vec<u64> = (0..5000u64).map(crate::mix::mix64).chain([0, u64::MAX]).collect();
        let want: Vec<usize> = hashes.iter().map(|&h| search::oracle(base.points(), h)).collect();
        for layout in [Layout::Auto, Layout::Oracle, Layout::Branchless, Layout::Tree, Layout::Radix, Layout::Eytzinger]
        {
            let r = base.clone().with_layout(layout);
            let got: Vec<usize> = hashes.iter().map(|&h| r.point_index(h)).collect();
            assert_eq!(got, want, "{layout:?}");
            let mut batch = vec![0; hashes.len()];
            r.point_index_batch(&hashes, &mut batch);
            assert_eq!(batch, want, "{layout:?} batch");
            let keys: Vec<Vec<u8>> = (0..1000u32).map(|i| i.to_le_bytes().to_vec()).collect();
            let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
            let mut out = vec![NodeId::default(); refs.len()];
            r.route_batch(&refs, &mut out);
            for (k, o) in refs.iter().zip(&out) {
                assert_eq!(*o, base.route(k));
            }
        }
        let small = Ring::builder().vnodes(10).nodes(["a", "b"]).build().unwrap();
        assert_eq!(small.layout(), Layout::Oracle);
    }

    #[test]
    fn pipelined_route_batch_matches_route_at_chunk_edges() {
        let names: Vec<String> = (0..50).map(|i| format!("n{i}")).collect();
        for hasher in [KeyHasher::default(), KeyHasher::Xxh3 { seed: 7 }, KeyHasher::Murmur3X64 { seed: 0 }] {
            let r = Ring::builder().vnodes(100).hasher(hasher).nodes(&names).build().unwrap();
            for len in [0usize, 1, 255, 256, 257, 512, 513, 1000] {
                let keys: Vec<Vec<u8>> = (0..len as u32).map(|i| format!("k{i}").into_bytes()).collect();
                let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
                let mut out = vec![NodeId::from_index(u32::MAX); len];
                r.route_batch(&refs, &mut out);
                let want: Vec<NodeId> = refs.iter().map(|k| r.route(k)).collect();
                assert_eq!(out, want, "{hasher:?} len {len}");
            }
        }
    }

    #[test]
    fn rejects_bad_config() {
        assert_eq!(
            Ring::builder().vnodes(0).nodes(["a"]).build().unwrap_err(),
            Error::InvalidVnodes { vnodes: 0, max: MAX_VNODES }
        );
        assert!(matches!(
            Ring::builder().vnodes(u64::from(MAX_VNODES) + 1).nodes(["a"]).build(),
            Err(Error::InvalidVnodes { .. })
        ));
        assert_eq!(Ring::builder().nodes(Vec::<&str>::new()).build().unwrap_err(), Error::NoNodes);
        assert!(matches!(
            Ring::builder().vnodes(1 << 20).nodes((0..100).map(|i| i.to_string())).build(),
            Err(Error::TooManyPoints { .. })
        ));
    }

    #[test]
    fn wraps_and_counts_points() {
        let r = ring(&["a", "b", "c"], 10);
        assert_eq!(r.points().len(), 30);
        assert!(r.points().windows(2).all(|w| w[0] <= w[1]));
        let last = *r.points().last().unwrap();
        if last < u64::MAX {
            assert_eq!(r.route_hash(last + 1).unwrap(), r.route_hash(0).unwrap());
        }
        assert_eq!(r.route_hash(u64::MAX).unwrap(), NodeId::from_index(r.owners()[r.point_index(u64::MAX)]));
        assert_eq!(r.point_index(r.points()[5]), r.points().partition_point(|&p| p < r.points()[5]));
    }

    #[test]
    fn weights_scale_point_counts() {
        let r = Ring::builder().vnodes(100).weighted_nodes([("a", 1.0), ("b", 3.0)]).build().unwrap();
        let a = r.owners().iter().filter(|&&o| o == 0).count();
        assert_eq!((a, r.points().len() - a), (50, 150));
    }

    #[test]
    fn order_independent() {
        let a = ring(&["x", "y", "z", "w"], 50);
        let b = ring(&["w", "z", "y", "x"], 50);
        for k in 0..2000u32 {
            let key = k.to_le_bytes();
            assert_eq!(a.node_name(a.route(&key)), b.node_name(b.route(&key)));
        }
    }

    #[test]
    fn replicas_are_distinct() {
        let r = ring(&["a", "b", "c", "d"], 8);
        let reps = r.replicas(b"k", 4).unwrap();
        let mut s = reps.clone();
        s.sort();
        s.dedup();
        assert_eq!(s.len(), 4);
        assert_eq!(reps[0], r.route(b"k"));
        assert_eq!(r.replicas(b"k", 5).unwrap_err(), Error::TooManyReplicas { requested: 5, available: 4 });
    }
}

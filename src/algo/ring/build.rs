//! Building a ring's points: how many each node gets, the (point, name) order, hashing
//! `"{name}-{i}"` for every point, and the radix sort that orders them.

use crate::circle::MAX_POINTS;
use crate::error::{Error, Result};
use crate::hash::KeyHasher;
use crate::node::{NodeId, NodeSet};

/// Points per node: `max(1, round(V · w))`: weight 1 is the unit, V points. A node's count
/// depends on its own weight and V only, never on the other members, so a join, a leave or a
/// weight change moves keys only to or from the changed node (a share-based count such as
/// `V · N · w / Σw` changes every weighted node's points whenever any member changes).
pub(super) fn point_counts(nodes: &NodeSet, vnodes: u32) -> Result<Vec<u32>> {
    let mut counts = Vec::with_capacity(nodes.len());
    let mut total = 0u64;
    for (_, node) in nodes.iter() {
        let c = (f64::from(vnodes) * node.weight()).round().max(1.0);
        if c > MAX_POINTS as f64 {
            return Err(Error::InvalidParameter {
                name: "weight",
                reason: format!(
                    "{} for {:?}: {vnodes} vnodes × weight is past the ring's cap of {MAX_POINTS} points \
                     (weight 1 is {vnodes} points; scale the weights down)",
                    node.weight(),
                    node.name()
                ),
            });
        }
        total += c as u64;
        counts.push(c as u32);
    }
    if total > MAX_POINTS {
        return Err(Error::TooManyPoints { points: total, max: MAX_POINTS });
    }
    Ok(counts)
}

/// Above this many points, a ring built with [`Builder::<Ring>::parallel`](crate::Builder)
/// spreads point hashing over the rayon pool (below, the hand-off costs more than it saves).
#[cfg(feature = "parallel")]
const PAR_BUILD_POINTS: usize = 1 << 16;

/// The points of the nodes listed in `order` (sorted by name), sorted by (point, name), with
/// their owners. Generation follows `order`, so a stable sort by point alone yields the
/// (point, name) order.
/// `parallel`: use the rayon pool (only when the caller asked for it).
pub(super) fn generate_sorted(
    nodes: &NodeSet,
    hasher: &KeyHasher,
    counts: &[u32],
    order: &[u32],
    parallel: bool,
) -> (Vec<u64>, Vec<u32>) {
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
    if parallel && total >= PAR_BUILD_POINTS {
        use rayon::prelude::*;
        slices.par_iter_mut().with_min_len(16).for_each(fill);
    } else {
        slices.iter_mut().for_each(fill);
    }
    #[cfg(not(feature = "parallel"))]
    slices.iter_mut().for_each(fill);
    drop(slices);
    radix_sort(&mut points, &mut owners, parallel);
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
/// then LSD-sort each of the 256 buckets while it sits in cache (the buckets spread over the
/// rayon pool when `parallel`). A plain LSD over the whole array is slower: each of its 8 passes
/// scatters across memory that no longer fits in cache.
pub(crate) fn radix_sort(keys: &mut Vec<u64>, vals: &mut Vec<u32>, parallel: bool) {
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
    if parallel {
        use rayon::prelude::*;
        jobs.par_iter_mut().for_each(run);
    } else {
        jobs.iter_mut().for_each(run);
    }
    #[cfg(not(feature = "parallel"))]
    {
        let _ = parallel;
        jobs.iter_mut().for_each(run);
    }
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
pub(super) fn point_hash(hasher: &KeyHasher, buf: &mut Vec<u8>, name: &str, i: u32) -> u64 {
    use std::io::Write;
    buf.clear();
    buf.extend_from_slice(name.as_bytes());
    // Writing to a Vec cannot fail.
    let _ = write!(buf, "-{i}");
    hasher.hash(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Ring;
    use crate::Router;

    /// A node's points are its own weight times V: huge weights are refused with a typed error
    /// (never an overflow or a panic), tiny ones keep one point.
    #[test]
    fn point_counts_follow_each_nodes_own_weight() {
        let huge = NodeSet::new([crate::Node::new("a").with_weight(1e307), crate::Node::new("b").with_weight(1e307)]);
        assert!(matches!(point_counts(&huge.unwrap(), 160), Err(Error::InvalidParameter { name: "weight", .. })));
        let spread = NodeSet::new([
            crate::Node::new("a").with_weight(3.0),
            crate::Node::new("b").with_weight(1.0),
            crate::Node::new("c").with_weight(1e-300),
        ]);
        assert_eq!(point_counts(&spread.unwrap(), 160).unwrap(), [480, 160, 1]);
    }

    /// The original build (format, hash, comparison sort of (point, name rank)): the frozen
    /// definition the fast build must reproduce exactly.
    fn reference(nodes: &NodeSet, hasher: KeyHasher, v: u32) -> (Vec<u64>, Vec<u32>) {
        let counts = point_counts(nodes, v).unwrap();
        let by_name = nodes.ids_by_name();
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
    fn weights_scale_point_counts() {
        let r = Ring::builder().vnodes(100).weighted_nodes([("a", 1.0), ("b", 3.0)]).build().unwrap();
        let a = r.owners().iter().filter(|&&o| o == 0).count();
        assert_eq!((a, r.points().len() - a), (100, 300));
    }
}

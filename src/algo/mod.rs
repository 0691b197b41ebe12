//! The routing algorithms, one module each. Every type implements [`crate::Router`].

pub(crate) mod anchor;
pub(crate) mod bounded;
pub(crate) mod bucketed;
pub(crate) mod builder;
pub(crate) mod envoy_ring;
pub(crate) mod haproxy;
pub(crate) mod jump;
pub(crate) mod kafka;
pub(crate) mod ketama;
pub(crate) mod ketama_variants;
pub(crate) mod maglev;
pub(crate) mod memento;
pub(crate) mod modulo;
pub(crate) mod multiprobe;
pub(crate) mod nginx;
pub(crate) mod rendezvous;
pub(crate) mod ring;
pub(crate) mod slots;
// Explicit tokens, Cassandra-compatible.
pub(crate) mod token_ring;
// Ceph's CRUSH over a map file.
pub(crate) mod crush;
// The 2023-2024 memory-free routers.
pub(crate) mod binomial;
pub(crate) mod fliphash;
pub(crate) mod jumpback;
pub(crate) mod jumpback_anchor;
pub(crate) mod power_ch;

use std::ops::ControlFlow;

use crate::mix::mix64;
use crate::node::{NodeId, NodeSet, Visited};

/// The chunked "hash, then look up" loop of every `route_batch`: `hash` turns a chunk of up to
/// `CHUNK` keys into hashes of type `T` (through [`crate::KeyHasher::hash_batch`], the
/// multi-lane MD5, the CRC16 batch, …), then `look_up` writes that chunk's owners. A chunk of
/// hashes stays in L1, and a batched lookup overlaps the cache misses of its keys.
///
/// # Panics
/// If `keys.len() != out.len()`.
#[inline]
pub(crate) fn route_chunks<T: Copy + Default, const CHUNK: usize>(
    keys: &[&[u8]],
    out: &mut [NodeId],
    mut hash: impl FnMut(&[&[u8]], &mut [T]),
    mut look_up: impl FnMut(&[T], &mut [NodeId]),
) {
    assert_eq!(keys.len(), out.len(), "route_batch: keys and out must have the same length");
    let mut hashes = [T::default(); CHUNK];
    for (ks, os) in keys.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
        let hs = &mut hashes[..ks.len()];
        hash(ks, hs);
        look_up(hs, os);
    }
}

/// [`route_chunks`] for a router that maps one 64-bit hash to its owner: 64 hashes (512 bytes)
/// per chunk, which also covers 4 rounds of the 16-lane MD5 kernel.
#[inline]
pub(crate) fn route_batch_by_hash(
    hasher: &crate::KeyHasher,
    keys: &[&[u8]],
    out: &mut [NodeId],
    owner: impl Fn(u64) -> NodeId,
) {
    route_chunks::<u64, 64>(
        keys,
        out,
        |ks, hs| hasher.hash_batch(ks, hs),
        |hs, os| {
            for (o, &h) in os.iter_mut().zip(hs) {
                *o = owner(h);
            }
        },
    );
}

/// `Router::memory_bytes` of a router of type `R` whose heap holds `heap` bytes besides its
/// node set: the struct (without the inline node set, counted by [`NodeSet::memory_bytes`]),
/// its heap and its nodes.
pub(crate) fn memory_bytes<R>(heap: usize, nodes: &NodeSet) -> usize {
    std::mem::size_of::<R>() - std::mem::size_of::<NodeSet>() + heap + nodes.memory_bytes()
}

/// The preference list of the jump-like routers (jump, Memento, Anchor), which have no ring to
/// walk: `route(h)`, then `route(mix64(h + i))` for i = 1..=4N skipping nodes already produced,
/// then the nodes of `rest` not produced yet, in order. Frozen: it decides where failover sends
/// a down node's keys.
pub(crate) fn rehash_preference(
    hash: u64,
    node_count: usize,
    route: impl Fn(u64) -> NodeId,
    rest: impl IntoIterator<Item = NodeId>,
    visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>,
) {
    let mut seen = Visited::new(node_count);
    let mut produced = 0;
    let mut emit = |id: NodeId| -> ControlFlow<()> {
        if seen.insert(id) {
            produced += 1;
            visit(id)?;
            if produced == node_count {
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    };
    if emit(route(hash)).is_break() {
        return;
    }
    for i in 1..=4 * node_count as u64 {
        if emit(route(mix64(hash.wrapping_add(i)))).is_break() {
            return;
        }
    }
    for id in rest {
        if emit(id).is_break() {
            return;
        }
    }
}

/// The preference list of the bucket routers with removals (Memento, Anchor): the
/// [`rehash_preference`] walk, finishing with the live buckets' owners in bucket order
/// (`owner[b]` is `NONE` = `u32::MAX` for a removed bucket).
pub(crate) fn bucket_preference(
    hash: u64,
    owner: &[u32],
    node_count: usize,
    route: impl Fn(u64) -> NodeId,
    visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>,
) {
    let owners = owner.iter().filter(|&&o| o != u32::MAX).map(|&o| NodeId::from_index(o));
    rehash_preference(hash, node_count, route, owners, visit);
}

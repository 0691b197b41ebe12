//! The routing algorithms, one module each. Every type implements [`crate::Router`].

pub mod anchor;
pub mod bounded;
pub mod jump;
pub mod ketama;
pub mod maglev;
pub mod memento;
pub mod modulo;
pub mod multiprobe;
pub mod rendezvous;
pub mod ring;
pub mod slots;

use std::ops::ControlFlow;

use crate::node::NodeId;

/// Which nodes a preference walk has already produced. Inline for up to 128 nodes, a heap
/// bitset beyond (one bit per node).
pub(crate) enum Visited {
    Inline(u128),
    Heap(Vec<u64>),
}

impl Visited {
    pub(crate) fn new(node_count: usize) -> Visited {
        if node_count <= 128 {
            Visited::Inline(0)
        } else {
            Visited::Heap(vec![0; node_count.div_ceil(64)])
        }
    }

    /// Marks `id`; returns `true` when it was not marked before.
    #[inline]
    pub(crate) fn insert(&mut self, id: NodeId) -> bool {
        let i = id.index();
        match self {
            Visited::Inline(bits) => {
                let m = 1u128 << i;
                let fresh = *bits & m == 0;
                *bits |= m;
                fresh
            }
            Visited::Heap(words) => {
                let (w, m) = (i / 64, 1u64 << (i % 64));
                let fresh = words[w] & m == 0;
                words[w] |= m;
                fresh
            }
        }
    }
}

/// SplitMix64's finalizer: a bijective 64-bit mixer used to derive independent hashes
/// (jump's preference probes, rendezvous scores) from one key hash. Frozen: part of the routes.
#[inline]
pub(crate) const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
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

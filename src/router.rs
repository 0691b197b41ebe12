//! The [`Router`] trait: one interface for every algorithm.

use std::ops::ControlFlow;
use std::sync::Arc;

use crate::algorithm::Algorithm;
use crate::arcs::Arcs;
use crate::error::{Error, Result};
use crate::node::{NodeId, NodeSet};

/// Maps keys to nodes.
///
/// Routers are immutable values: a membership change builds a new router (see each type's
/// `with_node` / `without_node`), so a router can be shared between threads freely and swapped
/// atomically behind a shared handle. The trait is object-safe (`&dyn Router` works); a
/// configured router of any algorithm is an [`AnyRouter`](crate::AnyRouter), which implements it
/// by `match`.
///
/// Required: [`route`](Router::route), [`nodes`](Router::nodes),
/// [`algorithm`](Router::algorithm), [`memory_bytes`](Router::memory_bytes). The others have
/// defaults that routers override when they can do better (a batched kernel, a 64-bit hash
/// entry point, a preference list, their arcs, an exact fingerprint encoding).
pub trait Router: Send + Sync {
    /// The algorithm ([`Algorithm::name`] is how the CLI's `--algo` spells it).
    fn algorithm(&self) -> Algorithm;

    /// The nodes this router routes to; [`NodeId`]s index into it.
    fn nodes(&self) -> &NodeSet;

    /// The node that owns `key`. Never fails: a router always has at least one node.
    fn route(&self, key: &[u8]) -> NodeId;

    /// Routes every key of `keys` into the same position of `out`. Equal to calling
    /// [`route`](Router::route) on each key; routers override it with batched kernels that
    /// overlap the memory latency of many lookups.
    ///
    /// # Panics
    /// If `keys.len() != out.len()`.
    fn route_batch(&self, keys: &[&[u8]], out: &mut [NodeId]) {
        assert_eq!(keys.len(), out.len(), "route_batch: keys and out must have the same length");
        for (key, slot) in keys.iter().zip(out.iter_mut()) {
            *slot = self.route(key);
        }
    }

    /// Routes a pre-computed 64-bit key hash, skipping the router's hasher: `route(key) ==
    /// route_hash(hasher.hash(key))` for routers that hash keys to 64 bits.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for routers whose key hash is not 64 bits (Ketama's MD5 `u32`,
    /// Redis slots' CRC16).
    fn route_hash(&self, hash: u64) -> Result<NodeId> {
        let _ = hash;
        Err(Error::Unsupported { algorithm: self.algorithm().name(), operation: "routing a 64-bit hash" })
    }

    /// Visits `key`'s preference list: distinct nodes, best first, until `visit` breaks or every
    /// node has been visited. The first node visited is always [`route`](Router::route)`(key)`.
    /// Replicas, failover and bounded loads are built on this one capability.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for routers without a preference list (Redis slots).
    fn preference(&self, key: &[u8], visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) -> Result<()> {
        let _ = (key, visit);
        Err(Error::Unsupported { algorithm: self.algorithm().name(), operation: "preference lists" })
    }

    /// Heap and inline bytes this router holds, node set included.
    fn memory_bytes(&self) -> usize;

    /// The name of node `id`.
    ///
    /// # Panics
    /// If `id` did not come from this router.
    fn node_name(&self, id: NodeId) -> &str {
        self.nodes().name(id)
    }

    /// Number of nodes.
    fn node_count(&self) -> usize {
        self.nodes().len()
    }

    /// `n` distinct nodes for `key`, in preference order (the first is `route(key)`).
    /// Costs what `n` steps of the preference list cost, plus one small allocation.
    ///
    /// # Errors
    /// [`Error::TooManyReplicas`] when `n` exceeds the node count; [`Error::Unsupported`] when the
    /// router has no preference list.
    fn replicas(&self, key: &[u8], n: usize) -> Result<Vec<NodeId>> {
        let available = self.node_count();
        if n > available {
            return Err(Error::TooManyReplicas { requested: n, available });
        }
        let mut out = Vec::with_capacity(n);
        if n == 0 {
            return Ok(out);
        }
        self.preference(key, &mut |id| {
            out.push(id);
            if out.len() == n {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })?;
        debug_assert_eq!(out.len(), n, "a preference list must visit every node");
        Ok(out)
    }

    /// How the router divides its key-position space, for routers that cut it into ranges
    /// (ring, Ketama, token ring, Redis slots, the nginx, HAProxy and Envoy rings) or a lookup
    /// table (Maglev): what exact migration plans and exact loads are computed from. `None`
    /// (the default) for the others. Cost: borrowed for rings, token rings and Envoy's ring,
    /// O(points) for Ketama, slots and nginx, O(points log points) for HAProxy (its
    /// nearest-point rule becomes midpoint boundaries), O(table size) for Maglev.
    fn arcs(&self) -> Option<Arcs<'_>> {
        None
    }

    /// The canonical encoding of what determines this router's routes, which
    /// [`fingerprint`](crate::fingerprint()) hashes: useful to diff two routers' definitions.
    /// Exact (parameters, points, names) for the routers whose structure defines their routes,
    /// otherwise (the default) the routes of a fixed probe set of keys and hashes; see
    /// [`mod@crate::fingerprint`] for the table.
    fn canonical_bytes(&self) -> Vec<u8> {
        crate::fingerprint::probe_encoding(self)
    }
}

/// Forwards every method to the pointee, so `Box<dyn Router>` and `Arc<R>` are routers too.
macro_rules! forward_router {
    ($($ptr:ident),*) => {$(
        impl<R: Router + ?Sized> Router for $ptr<R> {
            fn algorithm(&self) -> Algorithm {
                (**self).algorithm()
            }
            fn nodes(&self) -> &NodeSet {
                (**self).nodes()
            }
            #[inline]
            fn route(&self, key: &[u8]) -> NodeId {
                (**self).route(key)
            }
            fn route_batch(&self, keys: &[&[u8]], out: &mut [NodeId]) {
                (**self).route_batch(keys, out)
            }
            fn route_hash(&self, hash: u64) -> Result<NodeId> {
                (**self).route_hash(hash)
            }
            fn preference(&self, key: &[u8], visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) -> Result<()> {
                (**self).preference(key, visit)
            }
            fn memory_bytes(&self) -> usize {
                (**self).memory_bytes()
            }
            fn replicas(&self, key: &[u8], n: usize) -> Result<Vec<NodeId>> {
                (**self).replicas(key, n)
            }
            fn arcs(&self) -> Option<Arcs<'_>> {
                (**self).arcs()
            }
            fn canonical_bytes(&self) -> Vec<u8> {
                (**self).canonical_bytes()
            }
        }
    )*};
}
forward_router!(Box, Arc);

/// Rayon-parallel batch routing for any router (feature `parallel`).
#[cfg(feature = "parallel")]
pub trait ParRouteBatch: Router {
    /// Like [`Router::route_batch`], split across the current rayon pool in chunks large enough
    /// that small batches stay on one thread (below 16 Ki keys per thread it runs
    /// single-threaded: thread hand-off costs more than the lookups it spreads).
    ///
    /// # Panics
    /// If `keys.len() != out.len()`.
    fn par_route_batch(&self, keys: &[&[u8]], out: &mut [NodeId]) {
        use rayon::prelude::*;
        assert_eq!(keys.len(), out.len(), "par_route_batch: keys and out must have the same length");
        let threads = rayon::current_num_threads().max(1);
        if threads == 1 || keys.len() < 2 * PAR_MIN_CHUNK {
            return self.route_batch(keys, out);
        }
        let chunk = keys.len().div_ceil(threads * 4).max(PAR_MIN_CHUNK);
        keys.par_chunks(chunk).zip(out.par_chunks_mut(chunk)).for_each(|(k, o)| self.route_batch(k, o));
    }
}

#[cfg(feature = "parallel")]
impl<R: Router + ?Sized> ParRouteBatch for R {}

/// Fewest keys per rayon task in [`ParRouteBatch::par_route_batch`].
#[cfg(feature = "parallel")]
const PAR_MIN_CHUNK: usize = 16 * 1024;

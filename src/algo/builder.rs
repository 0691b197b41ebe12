//! One builder and one block of router plumbing for every algorithm.
//!
//! `X::builder()` returns a [`Builder<X>`]; the node methods are shared, and each algorithm's
//! file adds the options it takes (`vnodes` for [`Ring`](crate::Ring), `table_size` for
//! [`Maglev`](crate::Maglev), …) and its `build` in an `impl Builder<X>` block, so an option an
//! algorithm does not take does not exist for it.

use std::marker::PhantomData;

use crate::error::Result;
use crate::hash::KeyHasher;
use crate::node::{Node, NodeSet};

/// Configures a router: `Ring::builder().vnodes(160).nodes(["a", "b"]).build()`.
///
/// Nodes come from [`nodes`](Builder::nodes) (weight-1 names), [`node`](Builder::node) (with
/// weight and labels), [`weighted_nodes`](Builder::weighted_nodes), or an already validated
/// [`node_set`](Builder::node_set). `build` validates everything and returns a typed
/// [`Error`](crate::Error), never panics. Each router's page lists the options it takes.
///
/// ```
/// use hashroute::{KeyHasher, Maglev, Memento, Node, Ring, Router};
/// let ring = Ring::builder().vnodes(100).hasher(KeyHasher::Xxh3 { seed: 7 }).nodes(["a", "b", "c"]).build()?;
/// let maglev = Maglev::builder().table_size(4099).weighted_nodes([("a", 1.0), ("b", 2.0)]).build()?;
/// let memento = Memento::from_names(["a", "b", "c", "d"])?.without_node("b")?;
/// let bigger = ring.with_node(Node::new("d"))?;
/// assert_eq!(bigger.node_count(), 4);
/// assert_eq!(maglev.with_weight("a", 2.0)?.node_count(), 2);
/// assert_eq!(memento.with_node(Node::new("b"))?.node_count(), 4); // restores b's keys exactly
/// # Ok::<(), hashroute::Error>(())
/// ```
#[derive(Clone, Debug)]
#[must_use]
pub struct Builder<R> {
    nodes: Vec<Node>,
    set: Option<NodeSet>,
    pub(crate) hasher: KeyHasher,
    pub(crate) options: Options,
    router: PhantomData<fn() -> R>,
}

/// Every algorithm's options, unset until a typed builder method sets them.
#[derive(Clone, Debug, Default)]
pub(crate) struct Options {
    pub(crate) vnodes: Option<u64>,
    pub(crate) layout: crate::algo::ring::Layout,
    pub(crate) table_size: Option<u64>,
    pub(crate) probes: Option<u32>,
    pub(crate) capacity: Option<u32>,
    pub(crate) variant: crate::algo::ketama::KetamaVariant,
    pub(crate) go_rendezvous: bool,
    pub(crate) slot_ranges: Option<Vec<(std::ops::RangeInclusive<u16>, String)>>,
    pub(crate) jumpback_generator: crate::algo::jumpback::JumpBackGenerator,
    /// Ketama's key hasher (twemproxy and one-at-a-time variants); `None`: the variant's own.
    pub(crate) ketama_key_hasher: Option<KeyHasher>,
    /// Envoy ring hash `(minimum_ring_size, maximum_ring_size)`; `None`: Envoy's defaults.
    pub(crate) ring_size: (Option<u64>, Option<u64>),
    /// HAProxy `balance uri whole`: hash the query string too.
    pub(crate) uri_whole: bool,
}

impl<R> Default for Builder<R> {
    fn default() -> Builder<R> {
        Builder {
            nodes: Vec::new(),
            set: None,
            hasher: KeyHasher::default(),
            options: Options::default(),
            router: PhantomData,
        }
    }
}

impl<R> Builder<R> {
    /// Adds weight-1 nodes by name.
    pub fn nodes<I>(mut self, names: I) -> Builder<R>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        self.nodes.extend(names.into_iter().map(|n| Node::new(n.as_ref())));
        self
    }

    /// Adds one node (with its weight and labels).
    pub fn node(mut self, node: Node) -> Builder<R> {
        self.nodes.push(node);
        self
    }

    /// Adds `(name, weight)` pairs.
    pub fn weighted_nodes<I, S>(mut self, nodes: I) -> Builder<R>
    where
        I: IntoIterator<Item = (S, f64)>,
        S: AsRef<str>,
    {
        self.nodes.extend(nodes.into_iter().map(|(n, w)| Node::new(n.as_ref()).with_weight(w)));
        self
    }

    /// Uses an already validated node set (replacing any nodes added so far); nodes added
    /// after it are appended to it.
    pub fn node_set(mut self, set: NodeSet) -> Builder<R> {
        self.set = Some(set);
        self.nodes.clear();
        self
    }

    /// The node set: the one given plus the nodes added after it, validated ([`NodeSet::new`]
    /// for the added ones).
    pub(crate) fn take_nodes(&mut self) -> Result<NodeSet> {
        let added = std::mem::take(&mut self.nodes);
        match self.set.take() {
            Some(set) if added.is_empty() => Ok(set),
            Some(set) => NodeSet::new(set.iter().map(|(_, n)| n.clone()).chain(added)),
            None => NodeSet::new(added),
        }
    }
}

/// `X::builder()` and `X::from_names(..)` for every router.
macro_rules! router_basics {
    ($($router:ident),* $(,)?) => {$(
        impl $router {
            /// A builder for this router (see [`Builder`](crate::Builder)).
            pub fn builder() -> crate::Builder<$router> {
                crate::Builder::default()
            }

            /// A router over weight-1 nodes named `names`, with the default options.
            ///
            /// # Errors
            /// As [`NodeSet::from_names`](crate::NodeSet::from_names) and the builder's `build`.
            pub fn from_names<I>(names: I) -> crate::Result<$router>
            where
                I: IntoIterator,
                I::Item: AsRef<str>,
            {
                $router::builder().nodes(names).build()
            }
        }
    )*};
}
pub(crate) use router_basics;

/// [`router_basics!`] plus `Builder<X>::hasher(..)`, for routers that hash keys with a
/// configurable [`KeyHasher`].
macro_rules! hashed_router_basics {
    ($($router:ident),* $(,)?) => {$(
        crate::algo::builder::router_basics!($router);

        impl crate::Builder<$router> {
            /// The key (and point) hasher; default xxh3 with seed 0.
            pub fn hasher(mut self, hasher: crate::KeyHasher) -> crate::Builder<$router> {
                self.hasher = hasher;
                self
            }
        }
    )*};
}
pub(crate) use hashed_router_basics;

/// The [`Router`](crate::Router) methods every router writes the same way: its name, its
/// nodes, `route` as its kernel applied to the key, and `memory_bytes` as the struct plus its
/// heap plus the node set. The router supplies `fn heap_bytes(&self) -> usize` and either
/// `fn owner(&self, hash: u64) -> NodeId` (then `route` hashes with `self.hasher` and
/// `route_hash` is supported) or, with `no_hash64`, `fn route_key(&self, key: &[u8]) -> NodeId`
/// for routers whose key hash is not 64 bits (Ketama's MD5 `u32`, Redis slots' CRC16; their
/// `route_hash` keeps the trait's `Unsupported`). `route_batch` hashes through
/// [`KeyHasher::hash_batch`] (see [`route_batch_by_hash`]) unless the router says `own_batch`
/// and writes its batch kernel itself. The methods given in braces (batch kernels, preference
/// lists) are written out in the router's file.
macro_rules! router_plumbing {
    ($router:ty, $name:literal { $($methods:tt)* }) => {
        crate::algo::builder::router_plumbing!($router, $name, own_batch {
            /// Hashes the keys a chunk at a time through
            /// [`KeyHasher::hash_batch`](crate::KeyHasher::hash_batch), then looks each hash up.
            fn route_batch(&self, keys: &[&[u8]], out: &mut [crate::NodeId]) {
                crate::algo::builder::route_batch_by_hash(&self.hasher, keys, out, |h| self.owner(h));
            }
            $($methods)*
        });
    };
    ($router:ty, $name:literal, own_batch { $($methods:tt)* }) => {
        crate::algo::builder::router_plumbing!(@impl $router, $name {
            #[inline]
            fn route(&self, key: &[u8]) -> crate::NodeId {
                self.owner(self.hasher.hash(key))
            }
            fn route_hash(&self, hash: u64) -> crate::Result<crate::NodeId> {
                Ok(self.owner(hash))
            }
            $($methods)*
        });
    };
    ($router:ty, $name:literal, no_hash64 { $($methods:tt)* }) => {
        crate::algo::builder::router_plumbing!(@impl $router, $name {
            #[inline]
            fn route(&self, key: &[u8]) -> crate::NodeId {
                self.route_key(key)
            }
            $($methods)*
        });
    };
    (@impl $router:ty, $name:literal { $($methods:tt)* }) => {
        impl crate::Router for $router {
            fn algorithm(&self) -> &'static str {
                $name
            }
            fn nodes(&self) -> &crate::NodeSet {
                &self.nodes
            }
            fn memory_bytes(&self) -> usize {
                std::mem::size_of::<Self>() - std::mem::size_of::<crate::NodeSet>()
                    + self.heap_bytes()
                    + self.nodes.memory_bytes()
            }
            $($methods)*
        }
    };
}
pub(crate) use router_plumbing;

/// `route_batch` for a router that maps a 64-bit hash to its owner: the keys are hashed a
/// chunk at a time with [`KeyHasher::hash_batch`] (the multi-lane MD5, the batched CRC16),
/// then each hash is looked up with `owner`.
///
/// # Panics
/// If `keys.len() != out.len()`.
#[inline]
pub(crate) fn route_batch_by_hash(
    hasher: &KeyHasher,
    keys: &[&[u8]],
    out: &mut [crate::NodeId],
    owner: impl Fn(u64) -> crate::NodeId,
) {
    assert_eq!(keys.len(), out.len(), "route_batch: keys and out must have the same length");
    // 64 hashes (512 bytes) stay in L1 and cover 4 rounds of the 16-lane MD5 kernel.
    const CHUNK: usize = 64;
    let mut hashes = [0u64; CHUNK];
    for (ks, os) in keys.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
        let hs = &mut hashes[..ks.len()];
        hasher.hash_batch(ks, hs);
        for (o, &h) in os.iter_mut().zip(hs.iter()) {
            *o = owner(h);
        }
    }
}

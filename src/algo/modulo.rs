//! `hash % N`: the baseline every system starts from, and the reason consistent hashing exists.
//!
//! Perfect balance and no memory, but growing from N to N+1 nodes moves a fraction N/(N+1) of
//! all keys (91% for 10 -> 11): a cache cluster goes cold. Use it only when the node count never
//! changes.

use std::ops::ControlFlow;

use crate::algo::builder::Configure;
use crate::algorithm::Algorithm;
use crate::error::{Error, Result};
use crate::hash::KeyHasher;
use crate::node::{Node, NodeId, NodeSet};
use crate::router::Router;
use crate::Builder;

/// `hash(key) % N` over a node set. Weights are ignored. O(1) per key, no memory beyond the
/// node set.
#[derive(Clone, Debug)]
pub struct Modulo {
    nodes: NodeSet,
    hasher: KeyHasher,
}

impl Modulo {
    /// A builder for this router (see [`Builder`]).
    pub fn builder() -> Builder<Modulo> {
        Builder::default()
    }

    /// A router over weight-1 nodes named `names`, with the default options.
    ///
    /// # Errors
    /// As [`NodeSet::from_names`](crate::NodeSet::from_names) and the builder's `build`.
    pub fn from_names<I>(names: I) -> Result<Modulo>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        Modulo::builder().nodes(names).build()
    }
}

/// The options of [`Builder<Modulo>`].
#[derive(Clone, Debug, Default)]
pub struct ModuloOptions {
    pub(crate) hasher: KeyHasher,
}

impl Configure for Modulo {
    type Options = ModuloOptions;
}

impl Builder<Modulo> {
    /// The key hasher; default xxh3 with seed 0.
    pub fn hasher(mut self, hasher: KeyHasher) -> Builder<Modulo> {
        self.options.hasher = hasher;
        self
    }
}

impl Builder<Modulo> {
    /// Builds the router.
    ///
    /// # Errors
    /// The [`NodeSet::new`] errors; [`Error::Unsupported`] for weighted nodes (modulo would
    /// silently ignore the weights).
    pub fn build(mut self) -> Result<Modulo> {
        Modulo::new(self.take_nodes()?, self.options.hasher)
    }
}

impl Modulo {
    fn new(nodes: NodeSet, hasher: KeyHasher) -> Result<Modulo> {
        if !nodes.all_unit_weight() {
            return Err(Error::Unsupported { algorithm: "modulo", operation: "weighted nodes" });
        }
        Ok(Modulo { nodes, hasher })
    }

    /// The hasher in use.
    pub fn hasher(&self) -> KeyHasher {
        self.hasher
    }

    /// A new router with `node` appended (moves about N/(N+1) of the keys).
    ///
    /// # Errors
    /// As [`NodeSet::with_node`]; [`Error::Unsupported`] for a weight other than 1.
    pub fn with_node(&self, node: Node) -> Result<Modulo> {
        Modulo::new(self.nodes.with_node(node)?, self.hasher)
    }

    /// A new router without the node named `name` (the nodes after it shift down one index).
    ///
    /// # Errors
    /// [`Error::UnknownNode`], [`Error::NoNodes`] for the last node.
    pub fn without_node(&self, name: &str) -> Result<Modulo> {
        Ok(Modulo { nodes: self.nodes.without_node(name)?, hasher: self.hasher })
    }

    #[inline]
    fn owner(&self, hash: u64) -> NodeId {
        NodeId::from_index((hash % self.nodes.len() as u64) as u32)
    }

    fn heap_bytes(&self) -> usize {
        0
    }
}

impl Router for Modulo {
    fn algorithm(&self) -> Algorithm {
        Algorithm::Modulo
    }
    fn nodes(&self) -> &NodeSet {
        &self.nodes
    }
    fn memory_bytes(&self) -> usize {
        crate::algo::memory_bytes::<Self>(self.heap_bytes(), &self.nodes)
    }
    #[inline]
    fn route(&self, key: &[u8]) -> NodeId {
        self.owner(self.hasher.hash(key))
    }
    fn route_hash(&self, hash: u64) -> Result<NodeId> {
        Ok(self.owner(hash))
    }
    /// Hashes the keys a chunk at a time through
    /// [`KeyHasher::hash_batch`](crate::KeyHasher::hash_batch), then looks each hash up.
    fn route_batch(&self, keys: &[&[u8]], out: &mut [NodeId]) {
        crate::algo::route_batch_by_hash(&self.hasher, keys, out, |h| self.owner(h));
    }
    /// Preference list: `h % N`, then the following indices, wrapping.
    fn preference(&self, key: &[u8], visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) -> Result<()> {
        let n = self.nodes.len() as u32;
        let first = self.owner(self.hasher.hash(key)).as_u32();
        for i in 0..n {
            let id = NodeId::from_index((first + i) % n);
            if visit(id).is_break() {
                break;
            }
        }
        Ok(())
    }
    fn canonical_bytes(&self) -> Vec<u8> {
        crate::fingerprint::bucket_encoding(Algorithm::Modulo, self.hasher, &self.nodes)
    }
}

//! `hash % N`: the baseline every system starts from, and the reason consistent hashing exists.
//!
//! Perfect balance and no memory, but growing from N to N+1 nodes moves a fraction N/(N+1) of
//! all keys (91% for 10 -> 11): a cache cluster goes cold. Use it only when the node count never
//! changes.

use std::ops::ControlFlow;

use crate::error::Result;
use crate::hash::{Hasher, KeyHasher};
use crate::node::{NodeId, NodeSet};
use crate::router::Router;

/// `hash(key) % N` over a node set. Weights are ignored. O(1) per key, no memory beyond the
/// node set.
#[derive(Clone, Debug)]
pub struct Modulo {
    nodes: NodeSet,
    hasher: Hasher,
}

impl Modulo {
    /// A modulo router over `nodes` with `hasher`.
    pub fn new(nodes: NodeSet, hasher: Hasher) -> Modulo {
        Modulo { nodes, hasher }
    }

    /// A modulo router over weight-1 nodes named `names`, hashing with the default xxh3.
    ///
    /// # Errors
    /// As [`NodeSet::from_names`].
    pub fn from_names<I>(names: I) -> Result<Modulo>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        Ok(Modulo::new(NodeSet::from_names(names)?, Hasher::default()))
    }

    /// The hasher in use.
    pub fn hasher(&self) -> Hasher {
        self.hasher
    }

    #[inline]
    fn index(&self, hash: u64) -> u32 {
        (hash % self.nodes.len() as u64) as u32
    }
}

impl Router for Modulo {
    fn algorithm(&self) -> &'static str {
        "modulo"
    }
    fn nodes(&self) -> &NodeSet {
        &self.nodes
    }
    #[inline]
    fn route(&self, key: &[u8]) -> NodeId {
        NodeId::from_index(self.index(self.hasher.hash(key)))
    }
    fn route_hash(&self, hash: u64) -> Result<NodeId> {
        Ok(NodeId::from_index(self.index(hash)))
    }
    /// Preference list: `h % N`, then the following indices, wrapping.
    fn preference(&self, key: &[u8], visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) -> Result<()> {
        let n = self.nodes.len() as u32;
        let first = self.index(self.hasher.hash(key));
        for i in 0..n {
            let id = NodeId::from_index((first + i) % n);
            if visit(id).is_break() {
                break;
            }
        }
        Ok(())
    }
    fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Modulo>() - std::mem::size_of::<NodeSet>() + self.nodes.memory_bytes()
    }
}

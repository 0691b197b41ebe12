//! `hash % N`: the baseline every system starts from, and the reason consistent hashing exists.
//!
//! Perfect balance and no memory, but growing from N to N+1 nodes moves a fraction N/(N+1) of
//! all keys (91% for 10 -> 11): a cache cluster goes cold. Use it only when the node count never
//! changes.

use std::ops::ControlFlow;

use crate::algo::builder::{hashed_router_basics, router_plumbing};
use crate::error::{Error, Result};
use crate::hash::KeyHasher;
use crate::node::{Node, NodeId, NodeSet};
use crate::Builder;

/// `hash(key) % N` over a node set. Weights are ignored. O(1) per key, no memory beyond the
/// node set.
#[derive(Clone, Debug)]
pub struct Modulo {
    nodes: NodeSet,
    hasher: KeyHasher,
}

hashed_router_basics!(Modulo);

impl Builder<Modulo> {
    /// Builds the router.
    ///
    /// # Errors
    /// The [`NodeSet::new`] errors; [`Error::Unsupported`] for weighted nodes (modulo would
    /// silently ignore the weights).
    pub fn build(mut self) -> Result<Modulo> {
        Modulo::new(self.take_nodes()?, self.hasher)
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

router_plumbing!(Modulo, "modulo" {
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
});

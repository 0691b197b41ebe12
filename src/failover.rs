//! Marking nodes down without removing them ("delayed removal").
//!
//! [`Failover`] wraps any router that has a preference list. A down node's keys go to the next
//! live node of their preference list; every other key stays where it was, and marking the node
//! up again restores the exact original mapping. Operators use this so that a flapping node does
//! not trigger a full migration.

use std::ops::ControlFlow;

use crate::error::{Error, Result};
use crate::node::Visited;
use crate::node::{NodeId, NodeSet};
use crate::router::Router;

/// A router with some nodes marked down.
///
/// Cost: a key whose primary node is live costs one bit test more than the inner router; a key
/// whose primary is down walks the preference list until a live node. Memory: one bit per node.
#[derive(Clone, Debug)]
pub struct Failover<R> {
    inner: R,
    down: Vec<u64>,
    down_count: usize,
}

impl<R: Router> Failover<R> {
    /// Wraps `inner` with every node up.
    ///
    /// # Errors
    /// [`Error::Unsupported`] when `inner` has no preference list (e.g. Redis slots, whose
    /// failover is replica promotion, not rerouting).
    pub fn new(inner: R) -> Result<Failover<R>> {
        // Probe the capability once so that marking down can never fail later for this reason.
        inner.preference(b"", &mut |_| ControlFlow::Break(()))?;
        let words = inner.node_count().div_ceil(64);
        Ok(Failover { inner, down: vec![0; words], down_count: 0 })
    }

    /// The wrapped router.
    pub fn inner(&self) -> &R {
        &self.inner
    }

    /// Unwraps the router (down marks are dropped).
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// Whether node `id` is marked down.
    ///
    /// # Panics
    /// If `id` is not a node of this router.
    #[inline]
    pub fn is_down(&self, id: NodeId) -> bool {
        self.down[id.index() / 64] >> (id.index() % 64) & 1 == 1
    }

    /// Marks the node named `name` down. Marking a down node down again is a no-op.
    ///
    /// # Errors
    /// [`Error::UnknownNode`]; [`Error::LastLiveNode`] when it is the only live node left.
    pub fn mark_down(&mut self, name: &str) -> Result<()> {
        let id = self.inner.nodes().require(name)?;
        if self.is_down(id) {
            return Ok(());
        }
        if self.down_count + 1 == self.inner.node_count() {
            return Err(Error::LastLiveNode { node: name.to_owned() });
        }
        self.down[id.index() / 64] |= 1 << (id.index() % 64);
        self.down_count += 1;
        Ok(())
    }

    /// Marks the node named `name` up again. Marking a live node up is a no-op.
    ///
    /// # Errors
    /// [`Error::UnknownNode`].
    pub fn mark_up(&mut self, name: &str) -> Result<()> {
        let id = self.inner.nodes().require(name)?;
        if self.is_down(id) {
            self.down[id.index() / 64] &= !(1 << (id.index() % 64));
            self.down_count -= 1;
        }
        Ok(())
    }

    /// Number of nodes marked down.
    pub fn down_count(&self) -> usize {
        self.down_count
    }
}

impl<R: Router> Router for Failover<R> {
    fn algorithm(&self) -> crate::algorithm::Algorithm {
        self.inner.algorithm()
    }
    fn nodes(&self) -> &NodeSet {
        self.inner.nodes()
    }
    #[inline]
    fn route(&self, key: &[u8]) -> NodeId {
        let primary = self.inner.route(key);
        if self.down_count == 0 || !self.is_down(primary) {
            return primary;
        }
        let mut chosen = primary;
        // Cannot fail: `new` checked the capability, and a live node exists.
        let _ = self.inner.preference(key, &mut |id| {
            if self.is_down(id) {
                ControlFlow::Continue(())
            } else {
                chosen = id;
                ControlFlow::Break(())
            }
        });
        chosen
    }
    /// Routes the hash with the inner router; a down primary has no hash-only preference list,
    /// so this is [`Error::Unsupported`] while any node is down.
    fn route_hash(&self, hash: u64) -> Result<NodeId> {
        let id = self.inner.route_hash(hash)?;
        if self.is_down(id) {
            return Err(Error::Unsupported {
                algorithm: self.inner.algorithm().name(),
                operation: "route_hash with down nodes",
            });
        }
        Ok(id)
    }
    /// The inner preference list without the down nodes, followed by the down nodes (so replica
    /// counts up to the node count still work).
    fn preference(&self, key: &[u8], visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) -> Result<()> {
        let mut down_seen = Vec::new();
        let mut stopped = false;
        self.inner.preference(key, &mut |id| {
            if self.is_down(id) {
                down_seen.push(id);
                ControlFlow::Continue(())
            } else {
                let flow = visit(id);
                stopped = flow.is_break();
                flow
            }
        })?;
        if !stopped {
            let mut seen = Visited::new(self.node_count());
            for id in down_seen {
                if seen.insert(id) && visit(id).is_break() {
                    break;
                }
            }
        }
        Ok(())
    }
    fn memory_bytes(&self) -> usize {
        self.inner.memory_bytes() + std::mem::size_of::<Self>() - std::mem::size_of::<R>() + self.down.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Jump, Ring};

    fn check<R: Router>(r: R) {
        let before: Vec<NodeId> = (0..3000u32).map(|k| r.route(&k.to_le_bytes())).collect();
        let mut f = Failover::new(r).unwrap();
        let victim = f.node_name(NodeId::from_index(1)).to_owned();
        f.mark_down(&victim).unwrap();
        for (k, &was) in (0..3000u32).zip(&before) {
            let now = f.route(&k.to_le_bytes());
            assert_ne!(now.index(), 1);
            if was.index() != 1 {
                assert_eq!(now, was, "a key not on the down node moved");
            }
        }
        f.mark_up(&victim).unwrap();
        for (k, &was) in (0..3000u32).zip(&before) {
            assert_eq!(f.route(&k.to_le_bytes()), was);
        }
    }

    #[test]
    fn down_up_restores() {
        check(Ring::builder().vnodes(40).nodes(["a", "b", "c", "d"]).build().unwrap());
        check(Jump::from_names(["a", "b", "c", "d"]).unwrap());
    }

    #[test]
    fn last_live_node_refused() {
        let mut f = Failover::new(Jump::from_names(["a", "b"]).unwrap()).unwrap();
        f.mark_down("a").unwrap();
        assert_eq!(f.mark_down("b"), Err(Error::LastLiveNode { node: "b".into() }));
        assert!(matches!(f.mark_down("zz"), Err(Error::UnknownNode { .. })));
        assert_eq!(f.replicas(b"k", 2).unwrap()[0].index(), 1);
    }
}

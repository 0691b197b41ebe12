//! Consistent hashing with bounded loads (Mirrokni, Thorup & Zadimoghaddam, SODA 2018,
//! arXiv:1608.01350).
//!
//! Plain consistent hashing gives some node `1 + Θ(√(log n · n/m))` times its share. Bounded
//! loads caps every node at `⌈(1 + ε) · m / n⌉` keys for the `m` keys currently assigned: a key
//! whose preferred node is full goes to the next node of its preference list with room. The
//! price is state (the assignment of every live key) and some extra movement on membership
//! changes, which the paper bounds by an O(1/ε²) factor over the plain algorithm.
//!
//! **No hash function can split a single hot key**: bounded loads counts keys, not requests.
//! One key carrying a tenth of the traffic still lands on one node; spread such keys with
//! replication (read from any of [`Router::replicas`]) or by splitting them in the application.

use std::collections::{BTreeMap, HashMap};
use std::ops::ControlFlow;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::node::NodeId;
use crate::router::Router;

/// A stateful key assigner with bounded loads over any router that has a preference list.
///
/// - **Invariant** (checked by property tests at every step): every node holds at most
///   [`capacity`](BoundedLoads::capacity)` = ⌈(1 + ε) · m / n⌉` keys, `m` being the number of keys
///   assigned *now*.
/// - **Assign**: the key goes to the first node of its preference list whose load is below the
///   capacity for `m + 1` keys (one exists: `n · ⌈(1 + ε)(m + 1)/n⌉ > m`). Assigning a key that
///   is already assigned returns its node and changes nothing.
/// - **Release**: the capacity for `m − 1` keys can be lower than some node's load. Those nodes
///   shed their most recently assigned keys, each re-placed by the assign rule, until the
///   invariant holds again. Keys that overflowed earlier are *not* pulled back when their
///   preferred node frees up (the allocation depends on the history, as in the paper's
///   online setting); [`rebuild`](BoundedLoads::rebuild) recomputes a history-free allocation.
/// - **Cost**: assign walks the preference list until a node has room (the paper bounds the
///   expected walk by a function of ε alone, independent of n and m); release is O(log m) plus
///   any shedding. Memory: one map entry and one tree entry per live key (key bytes stored once,
///   shared). The std `HashMap` is only an index: no route depends on its iteration order.
#[derive(Debug)]
pub struct BoundedLoads<R: Router> {
    router: R,
    epsilon: f64,
    /// Key → (node, assignment sequence number).
    keys: HashMap<Arc<[u8]>, (NodeId, u64)>,
    /// Per node: its keys by assignment sequence number (the shedding order on release).
    members: Vec<BTreeMap<u64, Arc<[u8]>>>,
    next_seq: u64,
}

impl<R: Router> BoundedLoads<R> {
    /// An empty assigner over `router` with balance parameter `epsilon`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] (`epsilon`) unless `epsilon` is finite and greater than 0;
    /// [`Error::Unsupported`] when `router` has no preference list.
    pub fn new(router: R, epsilon: f64) -> Result<BoundedLoads<R>> {
        if !(epsilon.is_finite() && epsilon > 0.0) {
            return Err(Error::InvalidParameter {
                name: "epsilon",
                reason: format!("{epsilon} must be finite and greater than 0 (0.25 is a common choice)"),
            });
        }
        // Probe once: routers without a preference list cannot overflow keys.
        router.preference(b"", &mut |_| ControlFlow::Break(()))?;
        let n = router.node_count();
        Ok(BoundedLoads { router, epsilon, keys: HashMap::new(), members: vec![BTreeMap::new(); n], next_seq: 0 })
    }

    /// The underlying router.
    pub fn router(&self) -> &R {
        &self.router
    }

    /// The balance parameter ε.
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    /// Keys currently assigned (`m`).
    pub fn assigned(&self) -> usize {
        self.keys.len()
    }

    /// The node `key` is assigned to, if it is.
    pub fn node_of(&self, key: &[u8]) -> Option<NodeId> {
        self.keys.get(key).map(|&(id, _)| id)
    }

    /// Keys on node `id`.
    ///
    /// # Panics
    /// If `id` does not belong to the router.
    pub fn load(&self, id: NodeId) -> usize {
        self.members[id.index()].len()
    }

    /// The per-node cap for the keys assigned now: `⌈(1 + ε) · m / n⌉` (0 when nothing is
    /// assigned). Computed in `f64`.
    pub fn capacity(&self) -> usize {
        self.capacity_for(self.keys.len())
    }

    fn capacity_for(&self, m: usize) -> usize {
        ((1.0 + self.epsilon) * m as f64 / self.members.len() as f64).ceil() as usize
    }

    /// Assigns `key` (see the type docs) and returns its node.
    ///
    /// # Errors
    /// Whatever the router's preference list returns (none for the crate's routers), or
    /// [`Error::Placement`] if the preference list ends without visiting a node with room
    /// (a router breaking its contract).
    pub fn assign(&mut self, key: &[u8]) -> Result<NodeId> {
        if let Some(&(id, _)) = self.keys.get(key) {
            return Ok(id);
        }
        let cap = self.capacity_for(self.keys.len() + 1);
        let key: Arc<[u8]> = Arc::from(key);
        let id = self.place(&key, cap, None)?;
        let seq = self.next_seq;
        self.next_seq += 1;
        self.members[id.index()].insert(seq, key.clone());
        self.keys.insert(key, (id, seq));
        Ok(id)
    }

    /// The first node of `key`'s preference list, other than `skip`, with load below `cap`.
    fn place(&self, key: &[u8], cap: usize, skip: Option<NodeId>) -> Result<NodeId> {
        let mut found = None;
        self.router.preference(key, &mut |id| {
            if Some(id) != skip && self.members[id.index()].len() < cap {
                found = Some(id);
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })?;
        found.ok_or_else(|| {
            Error::Placement(format!(
                "no node of {}'s preference list has room below {cap} keys",
                self.router.algorithm()
            ))
        })
    }

    /// Releases `key`, then sheds keys from nodes above the lowered capacity (see the type docs).
    /// Returns how many other keys moved.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] (`key`) when `key` is not assigned; [`Error::Placement`] as
    /// in [`assign`](BoundedLoads::assign).
    pub fn release(&mut self, key: &[u8]) -> Result<usize> {
        let Some((id, seq)) = self.keys.remove(key) else {
            return Err(Error::InvalidParameter {
                name: "key",
                reason: format!("{:?} is not assigned", String::from_utf8_lossy(key)),
            });
        };
        self.members[id.index()].remove(&seq);
        let cap = self.capacity();
        let mut moved = 0;
        // Loads only shrink below, so one pass over the nodes restores the invariant.
        for node in 0..self.members.len() {
            while self.members[node].len() > cap {
                let (seq, key) = self.members[node].pop_last().expect("non-empty: its length exceeds cap");
                let from = NodeId::from_index(node as u32);
                let to = self.place(&key, cap, Some(from))?;
                self.members[to.index()].insert(seq, key.clone());
                self.keys.insert(key, (to, seq));
                moved += 1;
            }
        }
        Ok(moved)
    }

    /// A new assigner over `router` (e.g. after a node joined or left) holding the same keys,
    /// assigned afresh in their original assignment order. Returns it with the number of keys
    /// whose node *name* changed. O(m · preference steps).
    ///
    /// # Errors
    /// As [`BoundedLoads::new`] and [`assign`](BoundedLoads::assign).
    pub fn rebuild<R2: Router>(&self, router: R2) -> Result<(BoundedLoads<R2>, usize)> {
        let mut next = BoundedLoads::new(router, self.epsilon)?;
        let mut order: Vec<(u64, &Arc<[u8]>, NodeId)> = self.keys.iter().map(|(k, &(id, s))| (s, k, id)).collect();
        order.sort_unstable_by_key(|e| e.0);
        let mut moved = 0;
        for (_, key, old) in order {
            let new = next.assign(key)?;
            if next.router.node_name(new) != self.router.node_name(old) {
                moved += 1;
            }
        }
        Ok((next, moved))
    }

    /// Approximate heap bytes: the key bytes once, plus map and tree entries (the std maps do
    /// not expose their exact allocation), plus the router's own [`Router::memory_bytes`].
    pub fn memory_bytes(&self) -> usize {
        let key_bytes: usize = self.keys.keys().map(|k| k.len() + 16).sum();
        let map = self.keys.capacity() * (std::mem::size_of::<(Arc<[u8]>, (NodeId, u64))>() + 1);
        let trees = self.keys.len() * (std::mem::size_of::<(u64, Arc<[u8]>)>() + 8);
        std::mem::size_of::<Self>() + key_bytes + map + trees + self.router.memory_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::ring::Ring;
    use proptest::prelude::*;

    fn ring(n: usize) -> Ring {
        Ring::builder().vnodes(40).nodes((0..n).map(|i| format!("node-{i}"))).build().unwrap()
    }

    #[test]
    fn rejects_bad_epsilon() {
        for e in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(BoundedLoads::new(ring(3), e), Err(Error::InvalidParameter { name: "epsilon", .. })));
        }
    }

    #[test]
    fn rejects_router_without_preference() {
        struct NoPref(crate::node::NodeSet);
        impl Router for NoPref {
            fn algorithm(&self) -> crate::Algorithm {
                crate::Algorithm::Ring
            }
            fn nodes(&self) -> &crate::node::NodeSet {
                &self.0
            }
            fn route(&self, _: &[u8]) -> NodeId {
                NodeId::from_index(0)
            }
            fn memory_bytes(&self) -> usize {
                0
            }
        }
        let r = NoPref(crate::node::NodeSet::from_names(["a"]).unwrap());
        assert!(matches!(BoundedLoads::new(r, 0.5), Err(Error::Unsupported { .. })));
    }

    #[test]
    fn unknown_release_and_idempotent_assign() {
        let mut b = BoundedLoads::new(ring(4), 0.25).unwrap();
        assert!(matches!(b.release(b"nope"), Err(Error::InvalidParameter { name: "key", .. })));
        let id = b.assign(b"k").unwrap();
        assert_eq!(b.assign(b"k").unwrap(), id);
        assert_eq!(b.assigned(), 1);
        assert_eq!(b.load(id), 1);
        b.release(b"k").unwrap();
        assert_eq!(b.assigned(), 0);
    }

    #[test]
    fn first_key_goes_to_the_route() {
        let r = ring(10);
        let want = r.route(b"hello");
        let mut b = BoundedLoads::new(r, 0.1).unwrap();
        assert_eq!(b.assign(b"hello").unwrap(), want);
    }

    proptest! {
        #[test]
        fn bound_holds_at_every_step(
            n in 1usize..12,
            eps in prop_oneof![Just(0.01), Just(0.1), Just(0.5), Just(2.0), 0.001f64..3.0],
            script in prop::collection::vec((any::<bool>(), 0u16..200), 1..300),
        ) {
            let mut b = BoundedLoads::new(ring(n), eps).unwrap();
            let mut live = std::collections::BTreeSet::new();
            for (add, k) in script {
                let key = k.to_le_bytes();
                if add || live.is_empty() {
                    let id = b.assign(&key).unwrap();
                    prop_assert_eq!(b.node_of(&key), Some(id));
                    live.insert(k);
                } else {
                    let k = *live.iter().nth(usize::from(k) % live.len()).unwrap();
                    b.release(&k.to_le_bytes()).unwrap();
                    live.remove(&k);
                    prop_assert_eq!(b.node_of(&k.to_le_bytes()), None);
                }
                let m = live.len();
                prop_assert_eq!(b.assigned(), m);
                let cap = ((1.0 + eps) * m as f64 / n as f64).ceil() as usize;
                prop_assert_eq!(b.capacity(), cap);
                let loads: Vec<usize> = (0..n).map(|i| b.load(NodeId::from_index(i as u32))).collect();
                prop_assert_eq!(loads.iter().sum::<usize>(), m);
                prop_assert!(loads.iter().all(|&l| l <= cap), "loads {:?} cap {}", loads, cap);
            }
        }
    }
}

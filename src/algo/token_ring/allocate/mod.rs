//! A token allocator for token rings: it *chooses* a few tokens per node in Cassandra's
//! `Murmur3Partitioner` space (signed 64-bit tokens) so that every node owns close to its
//! weighted share, instead of hashing hundreds of random virtual nodes.
//!
//! The model is Cassandra's: a key whose token is `k` belongs to the node of the first token
//! `>= k`, wrapping to the smallest token, so token `t` owns the range `(predecessor(t), t]`. A
//! node's ownership is the sum of its ranges over 2^64, kept in exact integer arithmetic. Its
//! share is `weight / Σ weights`; [`TokenAllocator::balance`] is the largest ownership / share
//! over the nodes (1.0 is perfect).
//!
//! What the operations do (replication factor 1, in the spirit of Cassandra's allocator,
//! CASSANDRA-7032), for a ring parameter `V` (tokens per node, default 16 in the CLI):
//! - [`TokenAllocator::add_node`]: the new node's token count is its *budget*, `V` times its
//!   weight over the ring's mean weight (counting it), rounded, within `1..=2V`. Tokens in
//!   proportion to weight keep ranges of about one size, so every unit of weight is cut as often
//!   and a heavy node can take its share (each token takes from a single range); the ring still
//!   averages about `V` per node. Each token cuts the lower part of a range of one of the most
//!   loaded nodes; the cuts bring those donors down to a common level (water filling), spread
//!   over a small ramp so that they do not all come back to the top together. Existing tokens
//!   keep their positions: keys move only to the new node.
//! - [`TokenAllocator::remove_node`]: the node's ranges go to the least loaded nodes, as many
//!   as weigh together `2V` times the weight the ranges stand for, so that their ratios rise by
//!   about `1/2V` whether they are light or heavy. Neighbours below that level take the ends of
//!   the ranges next to their own for free (a token moves; no node gains one); the rest goes
//!   largest piece to largest demand, a token changing owner, and a range much larger than a
//!   demand cut in two. Keys move only off the removed node.
//! - [`TokenAllocator::set_weight`]: the node's budget follows its new weight. Raising it cuts
//!   the most loaded nodes' largest ranges, as many as the budget of the added weight, and takes
//!   the ranges right after and right before its own (its token moves forward, or the
//!   neighbour's back: no new token), after handing its smallest ranges to a neighbour if it
//!   needs token room. Lowering it hands whole ranges (the smallest first) while it holds more
//!   tokens than its new budget, then slices of its largest, like a removal. Keys move only
//!   between that node and the others.
//!
//! Token growth is bounded: no node ever holds more than `2V` tokens, twice its nominal count
//! (the `V` it was added with, or the one given to [`TokenAllocator::from_ring`]; a node loaded
//! with more keeps that many at most). Budgets stay within that cap, removals and weight changes
//! give new tokens only to nodes with room below it, and adjacent tokens of one owner are merged
//! (which moves no key). So after any sequence of changes the ring averages at most `2V` tokens
//! per node. The cap is per node, not per unit of weight, on purpose: tokens leave a node only
//! when keys move off it, so a node allowed more than `2V` would lift the average above `2V`
//! once enough of the others are removed.
//!
//! The price of that cap: a node weighing more than twice the ring's mean weight still gets
//! `2V` tokens, and when the ring's ranges are small (a ring of many light nodes) `2V` single
//! ranges may not add up to its share, or not without leaving some donor above the others.
//! With weights from 1 to 4 this shows only when a node of weight 4 joins ten or more nodes of
//! weight 1 in a row (fourteen such nodes need more than `2V` cuts to stay within 1.06).
//!
//! Placement balances primary ownership only: zones and racks are carried for the caller (a
//! `NetworkTopologyStrategy` router), not used to place tokens, so replica ownership with RF > 1
//! and racks is only as balanced as the primary ranges make it.
//!
//! Determinism: tokens are a function of the starting ring and the sequence of operations.
//! Positions are integers; loads use plain IEEE `+ - * /` on `f64`, comparisons and truncating
//! casts, ties broken by node name, token or load order; no hash map is iterated.
//!
//! The files: this one holds the public types, the operations and their validation; `state`
//! the per-node bookkeeping and the load order; `plan` who gives what to whom in each
//! operation; `fill` the arithmetic of those plans (water filling, cut counts, the hand-over
//! book). The study figures (allocation time, random tokens against allocated ones, worst steps
//! over many draws) are in the workspace's `bench` member, `hashroute_bench::allocator_study`.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::sync::Arc;

use crate::error::{Error, Result};

mod fill;
mod plan;
mod state;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_support;

use fill::*;
use plan::*;
use state::*;

/// Positions on the ring: the whole `i64` range.
const RING: u128 = 1 << 64;
/// [`RING`] as a float (exact: a power of two).
const RING_F: f64 = 18_446_744_073_709_551_616.0;
/// How far a hand-over piece may exceed a recipient's demand before it is cut in two (a cut
/// costs a token; a whole piece overshoots the demand by at most this fraction).
const OVERSHOOT: f64 = 0.5;

/// The forward distance from token `p` to token `t` on the ring, in `1..=2^64` (`p == t` is the
/// whole ring: a lone token owns everything).
fn dist(p: i64, t: i64) -> u128 {
    match (t as u64).wrapping_sub(p as u64) {
        0 => RING,
        d => u128::from(d),
    }
}

/// The token before `t` when `t` closes a range of `len` positions.
fn range_start(t: i64, len: u128) -> i64 {
    // A range of 2^64 (a lone token) starts at the token itself.
    (t as u64).wrapping_sub(len as u64) as i64
}

/// `p` moved forward by `offset` positions (`offset < 2^64`), wrapping.
fn advance(p: i64, offset: u128) -> i64 {
    (p as u64).wrapping_add(offset as u64) as i64
}

/// A float amount of positions, floored into `0..=cap` (`as` saturates, NaN gives 0).
fn to_positions(amount: f64, cap: u128) -> u128 {
    (amount.max(0.0) as u128).min(cap)
}

/// One node of a ring, for [`TokenAllocator::from_ring`] and [`TokenAllocator::to_ring`]: the
/// shape of a `nodetool ring` listing.
#[derive(Debug, Clone, PartialEq)]
pub struct RingNode {
    /// Unique, non-empty node name.
    pub name: String,
    /// Capacity weight, finite and greater than 0 (1.0 for equal nodes).
    pub weight: f64,
    /// Zone (Cassandra's datacenter), carried along.
    pub zone: String,
    /// Rack within the zone, carried along.
    pub rack: String,
    /// The node's tokens, in any order: at least one, none shared with another node.
    pub tokens: Vec<i64>,
}

/// Chooses and maintains the tokens of a token ring (Cassandra `Murmur3Partitioner` space) so
/// that every node owns close to its weighted share, moving keys only where an operation
/// requires it.
///
/// ```
/// use hashroute::token_ring::TokenAllocator;
/// let mut ring = TokenAllocator::new();
/// for name in ["a", "b", "c"] {
///     ring.add_node(name, 1.0, "dc1", "rack1", 16).unwrap();
/// }
/// ring.set_weight("c", 2.0).unwrap();
/// ring.remove_node("a").unwrap();
/// let tokens: Vec<i64> = ring.node("b").unwrap().tokens().collect();
/// assert!(tokens.windows(2).all(|w| w[0] < w[1]));
/// assert!(ring.balance() < 1.1);
/// ```
///
/// Cost: an addition is O(V log T + V²) for V tokens per node and T tokens (ordered sets over
/// the tokens and over the nodes' loads; no step visits every node, unless most nodes are left
/// with single-position ranges); a removal or a weight change is O(V² + V log T + N) (the
/// recipients, the nodes skipped because they have no token room, and a fresh sum of the
/// weights). Memory is a few tens of bytes per token and one record per node.
///
/// Guarantees: the same starting ring and operations give the same tokens on every machine; an
/// addition moves keys only to the new node, a removal only off the removed node, a weight
/// change only between that node and the others; no node ever holds more than twice its
/// nominal count V, so the ring averages at most 2V tokens per node after any sequence of
/// changes. Balance is measured, not bounded: with V = 16 and weights equal or within 1 to 4,
/// every node stays within a few percent of its share as the ring grows, shrinks and is
/// reweighed. A node weighing more than twice the mean still gets only 2V tokens, and in a ring
/// of many light nodes those may not reach its share (see the module documentation).
///
/// When not to use it: when every client must derive the ring from the node names alone (these
/// tokens are state to store and distribute), or when replicas with RF > 1 must be balanced per
/// rack (this balances primary ownership).
#[derive(Debug, Clone, Default)]
pub struct TokenAllocator {
    slots: Vec<Option<NodeState>>,
    free_slots: Vec<u32>,
    by_name: BTreeMap<Arc<str>, u32>,
    /// Every token and the slot of its owner.
    tokens: BTreeMap<i64, u32>,
    /// Every node, by load.
    load: BTreeSet<LoadKey>,
    total_weight: f64,
    /// Slots whose load changed since they were filed.
    dirty: Vec<u32>,
}

/// A read-only view of one node of a [`TokenAllocator`].
#[derive(Debug, Clone, Copy)]
pub struct AllocatedNode<'a> {
    node: &'a NodeState,
    total_weight: f64,
}

impl<'a> AllocatedNode<'a> {
    /// The node's name.
    pub fn name(&self) -> &'a str {
        &self.node.name
    }

    /// The node's weight.
    pub fn weight(&self) -> f64 {
        self.node.weight
    }

    /// The node's zone (Cassandra's datacenter).
    pub fn zone(&self) -> &'a str {
        &self.node.zone
    }

    /// The node's rack.
    pub fn rack(&self) -> &'a str {
        &self.node.rack
    }

    /// The node's tokens, ascending (signed order), without allocating.
    pub fn tokens(&self) -> impl ExactSizeIterator<Item = i64> + 'a {
        self.node.ranges.iter().map(|r| r.0)
    }

    /// The node's nominal token count V: what it was added with, or the ring's count when
    /// loaded. Its token budget is V times its weight over the ring's mean weight (at most
    /// 2V), and its cap 2V.
    pub fn nominal_tokens(&self) -> u32 {
        self.node.nominal
    }

    /// The most tokens the node may come to hold: twice its nominal count, or the count it was
    /// loaded with if that is more. Removals and weight changes never push it beyond.
    pub fn token_cap(&self) -> usize {
        self.node.cap
    }

    /// Ring positions the node owns, exactly (out of 2^64).
    pub fn owned(&self) -> u128 {
        self.node.owned
    }

    /// The fraction of the ring the node owns.
    pub fn ownership(&self) -> f64 {
        self.node.owned as f64 / RING_F
    }

    /// Ownership over the node's weighted share (1.0 is exactly its share).
    pub fn load_ratio(&self) -> f64 {
        self.node.load() * self.total_weight / RING_F
    }
}

impl TokenAllocator {
    /// The largest nominal token count per node.
    pub const MAX_TOKENS_PER_NODE: u32 = 4096;

    /// An empty ring; its first node gets evenly spaced tokens.
    pub fn new() -> TokenAllocator {
        TokenAllocator::default()
    }

    /// Takes over an existing ring: its tokens keep their owners and positions. Every node's
    /// nominal token count is `tokens_per_node`, and its token cap twice that (or the count it
    /// has, if more: such a node gains no token). The order of `nodes` and of their tokens does
    /// not matter. O(T log T) for T tokens.
    ///
    /// # Errors
    /// [`Error::InvalidVnodes`] for a `tokens_per_node` of 0 or above
    /// [`TokenAllocator::MAX_TOKENS_PER_NODE`]; [`Error::EmptyNodeName`],
    /// [`Error::DuplicateNode`], [`Error::InvalidWeight`]; [`Error::InvalidParameter`] naming the
    /// node for a node without tokens or a token given twice, or when the weights' sum overflows.
    pub fn from_ring(nodes: impl IntoIterator<Item = RingNode>, tokens_per_node: u32) -> Result<TokenAllocator> {
        check_tokens_per_node(tokens_per_node)?;
        let mut sorted: BTreeMap<String, RingNode> = BTreeMap::new();
        for node in nodes {
            check_node(&node.name, node.weight)?;
            if node.tokens.is_empty() {
                return Err(tokens_error(format!("node {:?} has no token", node.name)));
            }
            if sorted.contains_key(&node.name) {
                return Err(Error::DuplicateNode { name: node.name });
            }
            sorted.insert(node.name.clone(), node);
        }
        let mut owners: BTreeMap<i64, &str> = BTreeMap::new();
        for node in sorted.values() {
            for &t in &node.tokens {
                if let Some(first) = owners.insert(t, &node.name) {
                    return Err(tokens_error(format!(
                        "token {t} is given twice (nodes {first:?} and {:?})",
                        node.name
                    )));
                }
            }
        }
        let total: f64 = sorted.values().map(|n| n.weight).sum();
        if !total.is_finite() {
            return Err(Error::InvalidParameter { name: "weights", reason: format!("their sum overflows ({total})") });
        }
        let mut alloc = TokenAllocator::new();
        for node in sorted.into_values() {
            let slot = alloc.create(node.name, node.weight, node.zone, node.rack, tokens_per_node);
            let node_cap = &mut alloc.slots[slot as usize].as_mut().expect("just created").cap;
            *node_cap = (*node_cap).max(node.tokens.len());
            for t in node.tokens {
                alloc.tokens.insert(t, slot);
            }
        }
        // An empty ring is the empty allocator.
        let Some(&last) = alloc.tokens.keys().next_back() else { return Ok(alloc) };
        let mut prev = last;
        let ranges: Vec<(i64, u32)> = alloc.tokens.iter().map(|(&t, &s)| (t, s)).collect();
        for (t, slot) in ranges {
            alloc.slot_mut(slot).add(t, dist(prev, t));
            prev = t;
        }
        alloc.refresh();
        Ok(alloc)
    }

    /// The ring as nodes with their tokens, by name: what [`TokenAllocator::from_ring`] reads.
    pub fn to_ring(&self) -> Vec<RingNode> {
        self.nodes()
            .map(|n| RingNode {
                name: n.name().to_string(),
                weight: n.weight(),
                zone: n.zone().to_string(),
                rack: n.rack().to_string(),
                tokens: n.tokens().collect(),
            })
            .collect()
    }

    /// Adds node `name` with its token budget for `tokens_per_node` (V): V times `weight` over
    /// the mean weight of the ring with it, rounded, within `1..=2V` (so exactly V when all
    /// weights are equal), placed so that it takes its weighted share from the most loaded
    /// nodes. Existing tokens keep their positions, so keys move only to the new node. The
    /// first node of an empty ring gets V evenly spaced tokens. The node gets fewer tokens than
    /// its budget only when the ring has fewer ranges left to cut. O(V log T + V²).
    ///
    /// # Errors
    /// [`Error::EmptyNodeName`], [`Error::DuplicateNode`], [`Error::InvalidWeight`] (also when
    /// the weights' sum would overflow), [`Error::InvalidVnodes`] for V = 0 or above
    /// [`TokenAllocator::MAX_TOKENS_PER_NODE`], [`Error::Placement`] when no range is left to
    /// cut (every range is a single position). The allocator is unchanged on error.
    pub fn add_node(&mut self, name: &str, weight: f64, zone: &str, rack: &str, tokens_per_node: u32) -> Result<()> {
        check_node(name, weight)?;
        if self.by_name.contains_key(name) {
            return Err(Error::DuplicateNode { name: name.to_string() });
        }
        check_tokens_per_node(tokens_per_node)?;
        let total = self.total_weight + weight;
        if !total.is_finite() {
            return Err(Error::InvalidWeight { node: name.to_string(), weight });
        }
        let v = token_budget(tokens_per_node, weight, self.len() + 1, total);
        if self.tokens.is_empty() {
            let slot = self.create(name.into(), weight, zone.into(), rack.into(), tokens_per_node);
            for k in 0..v as u128 {
                // Centred spacing: a lone token sits at 0, none at i64::MIN.
                self.insert_token(advance(i64::MIN, ((2 * k + 1) * RING) / (2 * v as u128)), slot);
            }
            self.refresh();
            return Ok(());
        }
        let need = weight / total * RING_F;
        let donors = self.addition_donors(v, tokens_per_node, total, need);
        if donors.is_empty() {
            return Err(Error::Placement(format!("no range left to cut for node {name:?}: the ring is full")));
        }
        let slot = self.create(name.into(), weight, zone.into(), rack.into(), tokens_per_node);
        let cuts = plan_cuts(&donors, need, true);
        self.apply_cuts(slot, &cuts, false);
        Ok(())
    }

    /// Removes node `name`: its ranges go to the least loaded nodes, weighing together about
    /// 2V times what the ranges stand for (neighbours below their level take the ends next to
    /// their own ranges for free; otherwise a token stays and changes owner, and a range much
    /// larger than a recipient's demand is cut in two); keys move only off the removed node.
    /// O(V² + V log T) plus the nodes skipped for lack of token room, plus O(N) to re-add the
    /// weights.
    ///
    /// # Errors
    /// [`Error::UnknownNode`], or [`Error::InvalidParameter`] for the last node of the ring.
    pub fn remove_node(&mut self, name: &str) -> Result<()> {
        let slot = self.require(name)?;
        if self.by_name.len() == 1 {
            return Err(Error::InvalidParameter {
                name: "node",
                reason: format!("cannot remove {name:?}: it is the last node of the ring"),
            });
        }
        self.merge_own_runs(slot);
        let node = self.slot(slot);
        let pieces: Vec<Piece> =
            node.ranges.iter().map(|&(t, len)| Piece { start: range_start(t, len), len, whole: true }).collect();
        let amount = node.owned as f64;
        self.give(slot, pieces, amount);
        let node = self.slots[slot as usize].take().expect("live slot");
        debug_assert!(node.ranges.is_empty());
        self.load.remove(&LoadKey { load: node.filed, name: node.name.clone(), slot });
        self.by_name.remove(&node.name);
        self.free_slots.push(slot);
        self.total_weight = self.weight_sum(None);
        self.refresh();
        Ok(())
    }

    /// Changes node `name`'s weight; its token budget follows. Raising it takes slices of the
    /// most loaded nodes' ranges (like an addition, as many new tokens as the budget of the
    /// added weight, within its cap) and of the ranges right after and right before its own
    /// (no new token), after handing some of its smallest ranges (at most half of what it
    /// owns) to a neighbour when it lacks token room. Lowering it hands whole ranges while it
    /// holds more tokens than its new budget, then slices of its largest ranges, to the least
    /// loaded nodes as a removal does. Keys move only between this node and the others; the
    /// same weight is a no-op. O(V² + V log T) plus O(N) to re-add the weights.
    ///
    /// # Errors
    /// [`Error::UnknownNode`], [`Error::InvalidWeight`] (also when the weights' sum would
    /// overflow). The allocator is unchanged on error.
    pub fn set_weight(&mut self, name: &str, weight: f64) -> Result<()> {
        let slot = self.require(name)?;
        check_node(name, weight)?;
        let old = self.slot(slot).weight;
        if weight == old {
            return Ok(());
        }
        let total = self.weight_sum(Some((slot, weight)));
        if !total.is_finite() {
            return Err(Error::InvalidWeight { node: name.to_string(), weight });
        }
        self.total_weight = total;
        self.slot_mut(slot).weight = weight;
        self.refresh();
        if self.by_name.len() == 1 {
            return Ok(());
        }
        self.merge_own_runs(slot);
        let target = weight / total * RING_F;
        if target > self.slot(slot).owned as f64 {
            let paid = token_budget(self.slot(slot).nominal, weight - old, self.len(), total);
            self.shed(slot, paid);
            let need = target - self.slot(slot).owned as f64;
            let donors = self.increase_donors(slot, paid);
            let cuts = plan_cuts(&donors, need, false);
            self.apply_cuts(slot, &cuts, true);
        } else {
            let excess = self.slot(slot).owned as f64 - target;
            let keep = token_budget(self.slot(slot).nominal, weight, self.len(), total);
            let pieces = self.decrease_pieces(slot, excess, keep);
            self.give(slot, pieces, excess);
            self.refresh();
        }
        Ok(())
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Whether the ring has no node.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// Number of tokens in the ring.
    pub fn token_count(&self) -> usize {
        self.tokens.len()
    }

    /// Sum of the nodes' weights.
    pub fn total_weight(&self) -> f64 {
        self.total_weight
    }

    /// The nodes, by name.
    pub fn nodes(&self) -> impl ExactSizeIterator<Item = AllocatedNode<'_>> + '_ {
        self.by_name.values().map(|&slot| self.view(slot))
    }

    /// Node `name`, if present.
    pub fn node(&self, name: &str) -> Option<AllocatedNode<'_>> {
        self.by_name.get(name).map(|&slot| self.view(slot))
    }

    /// Every token with its owner's name, ascending.
    pub fn tokens(&self) -> impl ExactSizeIterator<Item = (i64, &str)> + '_ {
        self.tokens.iter().map(|(&t, &slot)| (t, &*self.slot(slot).name))
    }

    /// The node owning a key whose token is `token` (the first token `>= token`, wrapping);
    /// `None` on an empty ring. O(log T).
    pub fn owner(&self, token: i64) -> Option<&str> {
        let (_, &slot) = self.tokens.range(token..).next().or_else(|| self.tokens.iter().next())?;
        Some(&self.slot(slot).name)
    }

    /// The largest ownership / weighted share over the nodes: 1.0 is perfect, 0.0 on an empty
    /// ring. O(log N).
    pub fn balance(&self) -> f64 {
        self.load.iter().next_back().map_or(0.0, |k| k.load * self.total_weight / RING_F)
    }
}

/// Checks a node's name and weight.
fn check_node(name: &str, weight: f64) -> Result<()> {
    if name.is_empty() {
        return Err(Error::EmptyNodeName);
    }
    if !(weight.is_finite() && weight > 0.0) {
        return Err(Error::InvalidWeight { node: name.to_string(), weight });
    }
    Ok(())
}

fn check_tokens_per_node(v: u32) -> Result<()> {
    if v == 0 || v > TokenAllocator::MAX_TOKENS_PER_NODE {
        return Err(Error::InvalidVnodes { vnodes: u64::from(v), max: TokenAllocator::MAX_TOKENS_PER_NODE });
    }
    Ok(())
}

/// The token budget of `weight` in a ring of `nodes` nodes weighing `total` (both counting the
/// node): `v` times `weight` over the mean weight, rounded, within `1..=2v` (the cap). Tokens
/// in proportion to weight keep ranges of about one size, so that every node is cut as often
/// per unit of weight; the ring then averages about `v` tokens per node.
fn token_budget(v: u32, weight: f64, nodes: usize, total: f64) -> usize {
    // `as` truncates the positive value (rounding half up), saturates an infinite ratio of
    // extreme weights and maps NaN to 0.
    ((f64::from(v) * weight * nodes as f64 / total + 0.5) as usize).clamp(1, 2 * v as usize)
}

fn tokens_error(reason: String) -> Error {
    Error::InvalidParameter { name: "tokens", reason }
}

//! A ring over explicit signed 64-bit tokens: Cassandra's token ring.
//!
//! Each node owns a list of tokens in the `Murmur3Partitioner` space; a key's owner is the node
//! of the first token `>=` the key's token, wrapping to the smallest token. The tokens are
//! state (a tokens file, a configuration, an allocator's output), not a function of the names,
//! which is how Cassandra works and what its token-aware clients route on.
//!
//! The tokens are stored as unsigned positions ([`token_to_position`]: order-preserving) on
//! the same [`Circle`] as [`Ring`](crate::Ring)'s points, so a lookup runs the same search
//! kernels over the same layouts and costs what a ring lookup over as many points costs.
//! [`replication`] adds Cassandra's replica placement (SimpleStrategy and
//! NetworkTopologyStrategy, as the DataStax drivers compute it), [`tokens_file`] the
//! `NAME ZONE RACK TOKEN [WEIGHT]` text format.

pub(crate) mod allocate;
mod replication;
mod tokens_file;
mod topology;

use std::ops::ControlFlow;

pub use replication::Replication;

use crate::algo::builder::Configure;
use crate::algo::ring::radix_sort;
use crate::algorithm::Algorithm;
use crate::arcs::{Arcs, Placement};
use crate::circle::{Circle, Index, Layout, MAX_POINTS};
use crate::error::{Error, Result};
use crate::hash::cassandra::{murmur3_token, position_to_token, token_to_position};
use crate::hash::KeyHasher;
use crate::migration::KeySpace;
use crate::node::{Node, NodeId, NodeSet};
use crate::router::Router;
use crate::Builder;
use allocate::{RingNode, TokenAllocator};
use topology::Topology;

/// A consistent-hash ring over explicit tokens, compatible with Cassandra's token-aware clients.
///
/// - **Tokens**: every node carries its own ([`Node::with_tokens`]); a token may appear once in
///   the whole ring, and every node needs at least one. Keys are hashed to their Cassandra
///   `Murmur3Partitioner` token ([`KeyHasher::CassandraMurmur3`], fixed: the tokens live in
///   that space); the owner is the node of the first token `>=` the key's token, wrapping to the
///   smallest. Routes depend on the names and tokens only, not on the order nodes were given in,
///   nor on weights or labels.
/// - **Cost**: `route` = one Murmur3 + one search over the P tokens, O(log P), the same search
///   kernels and [`Layout`]s as [`Ring`](crate::Ring); `route_batch` pipelines hashing, search
///   and owner reads as the ring does. Memory: 12 bytes per token plus the layout's index (≤ 0.75
///   bytes per token by default), plus 4 bytes per token when the nodes span several
///   datacenters (the per-datacenter token lists [`TokenRing::replicas_with`] walks), plus the
///   node set (which holds every node's tokens again, 8 bytes each). Build: O(P) radix sort.
/// - **Replicas**: [`Router::replicas`](crate::Router::replicas) and `preference` walk distinct
///   nodes clockwise (SimpleStrategy's order); [`TokenRing::replicas_with`] gives Cassandra's
///   exact replica list for a [`Replication`] (datacenters from the `zone` label, racks from
///   `rack`).
/// - **Changes**: [`TokenRing::with_node`] merges a node that brings its own tokens;
///   [`TokenRing::without_node`] hands its ranges to the successors; [`TokenRing::with_weight`]
///   records a weight without moving any token (routes unchanged; a token allocator reads it).
///
/// Not for: rings whose points should follow from the names (use [`Ring`](crate::Ring)), or
/// keys that are not Cassandra partition keys when no client needs to agree with Cassandra.
///
/// ```
/// use hashroute::{Node, Replication, Router, TokenRing};
/// let ring = TokenRing::builder()
///     .node(Node::new("a").with_tokens([-6_000_000_000_000_000_000, 0]).with_label("zone", "dc1"))
///     .node(Node::new("b").with_tokens([-3_000_000_000_000_000_000, 3_000_000_000_000_000_000]).with_label("zone", "dc1"))
///     .build()?;
/// assert_eq!(ring.node_name(ring.route_token(1)), "b");
/// assert_eq!(ring.node_name(ring.route_token(i64::MAX)), "a"); // wraps to the smallest token
/// let replicas = ring.replicas_with(b"user:42", &"nts:dc1=2".parse::<Replication>()?)?;
/// assert_eq!(replicas.len(), 2);
/// assert_eq!(replicas[0], ring.route(b"user:42"));
/// # Ok::<(), hashroute::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct TokenRing {
    nodes: NodeSet,
    /// Always [`KeyHasher::CassandraMurmur3`]: the field lets the shared router plumbing hash.
    hasher: KeyHasher,
    circle: Circle<u64, Index>,
    layout: Layout,
    /// The allocator's V: tokens for a node that comes without its own, and the nominal count
    /// removals and weight changes keep each node within (twice it at most).
    tokens_per_node: u32,
    topology: Topology,
}

impl TokenRing {
    /// A builder: add nodes with their tokens ([`Builder::node`] with [`Node::with_tokens`], or
    /// [`Builder::node_set`]), optionally a [`Layout`], then `build`.
    ///
    /// There is no `TokenRing::from_names`: a name list carries no tokens, so it could only
    /// fail. Use [`TokenRing::from_nodes`] or [`TokenRing::parse`] (a tokens file).
    pub fn builder() -> Builder<TokenRing> {
        Builder::default()
    }

    /// A token ring over `nodes` (each with its tokens), default layout.
    ///
    /// # Errors
    /// As [`Builder::<TokenRing>::build`](crate::Builder::build).
    pub fn from_nodes(nodes: impl IntoIterator<Item = Node>) -> Result<TokenRing> {
        TokenRing::builder().node_set(NodeSet::new(nodes)?).build()
    }
}

/// The options of [`Builder<TokenRing>`].
#[derive(Clone, Debug, Default)]
pub struct TokenRingOptions {
    pub(crate) layout: Layout,
    pub(crate) tokens_per_node: Option<u32>,
}

impl Configure for TokenRing {
    type Options = TokenRingOptions;
}

impl Builder<TokenRing> {
    /// The search layout (default [`Layout::Auto`]). Routes do not depend on it.
    pub fn layout(mut self, layout: Layout) -> Builder<TokenRing> {
        self.options.layout = layout;
        self
    }

    /// Builds the ring: nodes that come without tokens get them from the allocator, one at a
    /// time in node order (O(V log P) each); then every node's tokens are sorted into one
    /// circle (O(P) radix sort) and the datacenters' token lists precomputed.
    ///
    /// # Errors
    /// The [`NodeSet::new`] errors ([`Error::NoNodes`] for an empty ring, duplicate names, bad
    /// weights); [`Error::InvalidParameter`] `tokens` for a node without tokens or a token given
    /// twice (naming both nodes); [`Error::TooManyPoints`] past [`TokenRing::MAX_TOKENS`].
    pub fn build(mut self) -> Result<TokenRing> {
        let nodes = self.take_nodes()?;
        let v = self.options.tokens_per_node.unwrap_or(TokenRing::DEFAULT_TOKENS_PER_NODE);
        check_tokens_per_node(v)?;
        TokenRing::allocate_missing(nodes, self.options.layout, v)
    }

    /// Tokens per node the allocator gives each node that comes without tokens, here and in
    /// [`TokenRing::with_node`], and the nominal count `V` that removals and weight changes keep
    /// every node within (a node never holds more than `2 V`): default
    /// [`TokenRing::DEFAULT_TOKENS_PER_NODE`] (16, Cassandra's `num_tokens`), at most
    /// [`TokenAllocator::MAX_TOKENS_PER_NODE`](crate::token_ring::TokenAllocator::MAX_TOKENS_PER_NODE).
    pub fn tokens_per_node(mut self, tokens_per_node: u32) -> Builder<TokenRing> {
        self.options.tokens_per_node = Some(tokens_per_node);
        self
    }
}

/// The error for a token held twice (by one node or two).
fn duplicate_token(token: i64, first: &str, second: &str) -> Error {
    let reason = if first == second {
        format!("token {token} is given twice by node {first:?} (a token may appear once in the ring)")
    } else {
        format!("token {token} is given twice: by node {first:?} and by node {second:?}")
    };
    Error::InvalidParameter { name: "tokens", reason }
}

/// Every node has tokens and their total is within the cap.
fn check_token_counts(nodes: &NodeSet) -> Result<usize> {
    let mut total = 0u64;
    for (_, node) in nodes.iter() {
        if node.tokens().is_empty() {
            return Err(Error::InvalidParameter {
                name: "tokens",
                reason: format!("node {:?} has no tokens (a token ring needs at least one per node)", node.name()),
            });
        }
        total += node.tokens().len() as u64;
    }
    if total > MAX_POINTS {
        return Err(Error::TooManyPoints { points: total, max: MAX_POINTS });
    }
    Ok(total as usize)
}

impl TokenRing {
    /// The largest total number of tokens a ring accepts (the circle's cap, as
    /// [`Ring::MAX_POINTS`](crate::Ring::MAX_POINTS)).
    pub const MAX_TOKENS: u64 = MAX_POINTS;

    /// The allocator's tokens per node when none is configured: Cassandra's `num_tokens`
    /// default since 4.0.
    pub const DEFAULT_TOKENS_PER_NODE: u32 = 16;

    /// The ring over `nodes`, the allocator choosing the tokens of every node that has none
    /// (in node order, after the nodes that bring theirs).
    fn allocate_missing(nodes: NodeSet, layout: Layout, tokens_per_node: u32) -> Result<TokenRing> {
        if nodes.iter().all(|(_, n)| !n.tokens().is_empty()) {
            return TokenRing::from_parts(nodes, layout, tokens_per_node);
        }
        let given = nodes.iter().filter(|(_, n)| !n.tokens().is_empty()).map(|(_, n)| ring_node(n));
        let mut alloc = TokenAllocator::from_ring(given, tokens_per_node)?;
        for (_, node) in nodes.iter().filter(|(_, n)| n.tokens().is_empty()) {
            let (zone, rack) = zone_rack(node);
            alloc.add_node(node.name(), node.weight(), zone, rack, tokens_per_node)?;
        }
        TokenRing::from_parts(with_allocated_tokens(&nodes, &alloc)?, layout, tokens_per_node)
    }

    /// The allocator's view of this ring (O(P log P)).
    fn allocator(&self) -> Result<TokenAllocator> {
        TokenAllocator::from_ring(self.nodes.iter().map(|(_, n)| ring_node(n)), self.tokens_per_node)
    }

    /// This ring's nodes with the allocator's tokens and weights, rebuilt.
    fn reallocated(&self, nodes: &NodeSet, alloc: &TokenAllocator) -> Result<TokenRing> {
        TokenRing::from_parts(with_allocated_tokens(nodes, alloc)?, self.layout, self.tokens_per_node)
    }

    /// The allocator's tokens per node `V` for nodes added without tokens.
    pub fn tokens_per_node(&self) -> u32 {
        self.tokens_per_node
    }

    /// The same ring (same tokens, same routes) whose later membership changes allocate with
    /// `tokens_per_node` ([`Builder::<TokenRing>::tokens_per_node`](crate::Builder)): for a ring
    /// read from a tokens file, which does not record it. O(P) (a copy).
    ///
    /// # Errors
    /// [`Error::InvalidVnodes`] outside `1..=`[`TokenAllocator::MAX_TOKENS_PER_NODE`].
    pub fn with_tokens_per_node(&self, tokens_per_node: u32) -> Result<TokenRing> {
        check_tokens_per_node(tokens_per_node)?;
        Ok(TokenRing { tokens_per_node, ..self.clone() })
    }

    fn from_parts(nodes: NodeSet, layout: Layout, tokens_per_node: u32) -> Result<TokenRing> {
        let total = check_token_counts(&nodes)?;
        let mut points = Vec::with_capacity(total);
        let mut owners = Vec::with_capacity(total);
        for (id, node) in nodes.iter() {
            points.extend(node.tokens().iter().map(|&t| token_to_position(t)));
            owners.extend(std::iter::repeat_n(id.as_u32(), node.tokens().len()));
        }
        // Stable: equal positions stay in node order, so the error below names the same pair
        // for the same input.
        radix_sort(&mut points, &mut owners, false);
        if let Some(i) = points.windows(2).position(|w| w[0] == w[1]) {
            let name = |o: u32| nodes.name(NodeId::from_index(o));
            return Err(duplicate_token(position_to_token(points[i]), name(owners[i]), name(owners[i + 1])));
        }
        Ok(TokenRing::assemble(nodes, layout, tokens_per_node, points, owners))
    }

    fn assemble(nodes: NodeSet, layout: Layout, tokens_per_node: u32, points: Vec<u64>, owners: Vec<u32>) -> TokenRing {
        let circle = Circle::with_layout(points, owners, layout);
        let topology = Topology::build(&nodes, circle.owners());
        TokenRing { nodes, hasher: KeyHasher::CassandraMurmur3, circle, layout, tokens_per_node, topology }
    }

    /// The same ring searched with `layout`: a clone (O(P)) with the index rebuilt. Routes do
    /// not change.
    pub fn with_layout(&self, layout: Layout) -> TokenRing {
        let mut ring = self.clone();
        ring.layout = layout;
        ring.circle.set_layout(layout);
        ring
    }

    /// The concrete layout in use ([`Layout::resolve`] of the requested one).
    pub fn layout(&self) -> Layout {
        self.circle.layout()
    }

    /// The key hasher: always [`KeyHasher::CassandraMurmur3`].
    pub fn hasher(&self) -> KeyHasher {
        self.hasher
    }

    /// The number of tokens in the ring (P).
    pub fn token_count(&self) -> usize {
        self.circle.points().len()
    }

    /// The tokens as circle positions ([`token_to_position`]), sorted ascending: the points the
    /// search runs on.
    pub fn positions(&self) -> &[u64] {
        self.circle.points()
    }

    /// The owner (node index) of each position, parallel to [`TokenRing::positions`].
    pub fn owners(&self) -> &[u32] {
        self.circle.owners()
    }

    /// Every token, ascending (signed order), with its owner. O(1) per item.
    pub fn tokens(&self) -> impl ExactSizeIterator<Item = (i64, NodeId)> + '_ {
        self.positions().iter().zip(self.owners()).map(|(&p, &o)| (position_to_token(p), NodeId::from_index(o)))
    }

    /// The tokens of node `id`, sorted ascending.
    ///
    /// # Panics
    /// If `id` does not belong to this ring.
    pub fn tokens_of(&self, id: NodeId) -> &[i64] {
        self.nodes.get(id).tokens()
    }

    /// The length of the token range each node owns, indexed by node id: a token `t` owns
    /// `(previous token, t]`, the smallest token also the wrap-around range past the largest.
    /// Exact (u128 sums of u64 differences); the lengths sum to 2^64. O(P).
    pub fn owned_lengths(&self) -> Vec<u128> {
        let (points, owners) = (self.positions(), self.owners());
        let mut owned = vec![0u128; self.nodes.len()];
        let mut previous = *points.last().expect("a token ring has at least one token");
        for (&p, &o) in points.iter().zip(owners) {
            // Wrapping: the first token's range runs from past the last one; a single token
            // owns the whole circle (a difference of 0 means 2^64).
            let len = p.wrapping_sub(previous);
            owned[o as usize] += if len == 0 { 1u128 << 64 } else { u128::from(len) };
            previous = p;
        }
        owned
    }

    /// The fraction of the token space each node owns, indexed by node id:
    /// [`TokenRing::owned_lengths`] / 2^64, rounded once to the nearest `f64` (exact below 2^53
    /// relative precision). For uniformly distributed keys this is each node's expected share.
    pub fn ownership(&self) -> Vec<f64> {
        // 2^64 as f64 is exact; one division per node.
        self.owned_lengths().into_iter().map(|l| l as f64 / 18_446_744_073_709_551_616.0).collect()
    }

    /// The owner of a token: the node of the first ring token `>=` `token`, wrapping to the
    /// smallest. O(log P).
    #[inline]
    pub fn route_token(&self, token: i64) -> NodeId {
        self.owner(token_to_position(token))
    }

    /// The datacenters (`zone` labels) in the order they first appear walking the ring from its
    /// smallest token: the order of [`TokenRing::replicas_with`]'s NetworkTopologyStrategy
    /// lists. Nodes without a `zone` label are in none.
    pub fn datacenters(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.topology.names()
    }

    fn heap_bytes(&self) -> usize {
        self.circle.heap_bytes() + self.topology.heap_bytes()
    }

    /// The owner of position `hash` (the radix index prefetches the owner line early).
    #[inline]
    fn owner(&self, hash: u64) -> NodeId {
        self.circle.owner_prefetching(hash)
    }

    /// Cassandra's replica list for `key` under `replication`, in the DataStax driver's order
    /// (see [`TokenRing::replicas_for_token`]). One Murmur3, then the walk.
    ///
    /// # Errors
    /// As [`TokenRing::replicas_for_token`].
    pub fn replicas_with(&self, key: &[u8], replication: &Replication) -> Result<Vec<NodeId>> {
        self.replicas_for_token(murmur3_token(key), replication)
    }
}

/// Membership changes. Each builds a new ring and moves the minimum: an addition moves keys
/// only to the new node, a removal only the removed node's keys, a weight change only between
/// that node and the others. Existing tokens keep their positions.
impl TokenRing {
    /// A new ring with `node` added. A node that brings its own tokens is merged into the sorted
    /// circle (O(P + T log T)); a node without tokens gets [`TokenRing::tokens_per_node`] of them
    /// from the allocator, placed so that it takes its weighted share from the most loaded
    /// nodes (O(P log P)). Keys move only to the new node.
    ///
    /// # Errors
    /// As [`NodeSet::with_node`] (duplicate name, bad weight); [`Error::InvalidParameter`]
    /// `tokens` when one of its tokens is already in the ring (naming both nodes);
    /// [`Error::TooManyPoints`].
    pub fn with_node(&self, node: Node) -> Result<TokenRing> {
        if node.tokens().is_empty() {
            let nodes = self.nodes.with_node(node)?;
            let added = nodes.get(NodeId::from_index((nodes.len() - 1) as u32));
            let (zone, rack) = zone_rack(added);
            let mut alloc = self.allocator()?;
            alloc.add_node(added.name(), added.weight(), zone, rack, self.tokens_per_node)?;
            return self.reallocated(&nodes, &alloc);
        }
        let nodes = self.nodes.with_node(node)?;
        check_token_counts(&nodes)?;
        let new_id = (nodes.len() - 1) as u32;
        let added = nodes.get(NodeId::from_index(new_id));
        let (old_points, old_owners) = (self.positions(), self.owners());
        let total = old_points.len() + added.tokens().len();
        let (mut points, mut owners) = (Vec::with_capacity(total), Vec::with_capacity(total));
        let mut from = 0;
        for (i, &t) in added.tokens().iter().enumerate() {
            let x = token_to_position(t);
            let at = from + old_points[from..].partition_point(|&p| p < x);
            let clash = if at < old_points.len() && old_points[at] == x {
                Some(nodes.name(NodeId::from_index(old_owners[at])))
            } else {
                added.tokens().get(i + 1).filter(|&&next| next == t).map(|_| added.name())
            };
            if let Some(first) = clash {
                return Err(duplicate_token(t, first, added.name()));
            }
            points.extend_from_slice(&old_points[from..at]);
            owners.extend_from_slice(&old_owners[from..at]);
            points.push(x);
            owners.push(new_id);
            from = at;
        }
        points.extend_from_slice(&old_points[from..]);
        owners.extend_from_slice(&old_owners[from..]);
        Ok(TokenRing::assemble(nodes, self.layout, self.tokens_per_node, points, owners))
    }

    /// A new ring without the node named `name`: the allocator hands its ranges to the least
    /// loaded nodes (its tokens change owner, or a neighbour's token moves over the range next
    /// to it; a range much larger than a node's need is split in two; adjacent tokens of one
    /// owner merge). Other nodes' tokens may move or merge, but keys move only off the removed
    /// node. Ids after it shift down by one.
    /// O(P log P).
    ///
    /// Not what a Cassandra decommission does (the leaving node's ranges go to the next tokens'
    /// owners): to mirror a real cluster, rebuild from its tokens ([`TokenRing::parse`]).
    ///
    /// # Errors
    /// [`Error::UnknownNode`], [`Error::InvalidParameter`] `node` for the last node.
    pub fn without_node(&self, name: &str) -> Result<TokenRing> {
        let nodes = self.nodes.without_node(name)?;
        let mut alloc = self.allocator()?;
        alloc.remove_node(name)?;
        self.reallocated(&nodes, &alloc)
    }

    /// A new ring with node `name` at `weight`: the allocator moves ranges between that node and
    /// the others only (a raise takes slices of the most loaded nodes' ranges, a cut hands
    /// slices of its ranges to the least loaded), within the token bound. O(P log P).
    ///
    /// # Errors
    /// [`Error::UnknownNode`], [`Error::InvalidWeight`].
    pub fn with_weight(&self, name: &str, weight: f64) -> Result<TokenRing> {
        let nodes = self.nodes.with_weight(name, weight)?;
        let mut alloc = self.allocator()?;
        alloc.set_weight(name, weight)?;
        self.reallocated(&nodes, &alloc)
    }
}

/// `1..=`[`TokenAllocator::MAX_TOKENS_PER_NODE`].
fn check_tokens_per_node(v: u32) -> Result<()> {
    let max = TokenAllocator::MAX_TOKENS_PER_NODE;
    if v == 0 || v > max {
        return Err(Error::InvalidVnodes { vnodes: u64::from(v), max });
    }
    Ok(())
}

/// The allocator's view of a node: name, weight, zone and rack labels (`""` when unset), tokens.
fn ring_node(node: &Node) -> RingNode {
    let (zone, rack) = zone_rack(node);
    RingNode {
        name: node.name().to_owned(),
        weight: node.weight(),
        zone: zone.to_owned(),
        rack: rack.to_owned(),
        tokens: node.tokens().to_vec(),
    }
}

/// A node's `zone` and `rack` labels, `""` when unset.
fn zone_rack(node: &Node) -> (&str, &str) {
    (node.label("zone").unwrap_or(""), node.label("rack").unwrap_or(""))
}

/// `nodes` (same order, weights and labels) with the tokens `alloc` holds for them.
fn with_allocated_tokens(nodes: &NodeSet, alloc: &TokenAllocator) -> Result<NodeSet> {
    NodeSet::new(nodes.iter().map(|(_, n)| {
        let tokens: Vec<i64> = alloc.node(n.name()).map(|a| a.tokens().collect()).unwrap_or_default();
        n.clone().with_tokens(tokens)
    }))
}

impl Router for TokenRing {
    fn algorithm(&self) -> Algorithm {
        Algorithm::TokenRing
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
    /// Routes a token position ([`token_to_position`] of the key's token).
    fn route_hash(&self, hash: u64) -> Result<NodeId> {
        Ok(self.owner(hash))
    }
    /// Software-pipelined as the ring's: hashes and searches one chunk while the owner lines of
    /// the previous one arrive.
    fn route_batch(&self, keys: &[&[u8]], out: &mut [NodeId]) {
        self.circle.route_batch_pipelined(keys, out, |ks, hs| self.hasher.hash_batch(ks, hs));
    }
    /// Distinct nodes clockwise from the key's token (SimpleStrategy's replica order). Every
    /// node owns a token, so the walk names every node.
    fn preference(&self, key: &[u8], visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) -> Result<()> {
        let start = self.circle.successor(self.hasher.hash(key));
        self.circle.walk_clockwise(start, self.nodes.len(), visit);
        Ok(())
    }
    /// The tokens as positions on the 64-bit circle, borrowed.
    fn arcs(&self) -> Option<Arcs<'_>> {
        Some(Arcs::trusted(KeySpace::Hash64, self.positions(), self.owners(), Placement::hashed(self.hasher)))
    }
    fn canonical_bytes(&self) -> Vec<u8> {
        crate::fingerprint::token_ring_encoding(self)
    }
}

#[cfg(test)]
mod tests;

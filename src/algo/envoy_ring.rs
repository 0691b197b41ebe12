//! Envoy's ring hash load balancer (`ring_hash_lb.cc`), exact on the expectations of Envoy's own
//! tests (`../shared/vectors/envoy_ring_hash.json`, commit `13e9fdb`).
//!
//! Node names are Envoy's host keys (the `hash_key` metadata, else the hostname when
//! `use_hostname_for_hashing`, else `ip:port`), in the host list's order, which matters.
//! Each host's share is `w_h = weight_h · 1.0 / Σweight` (IEEE double);
//! `scale = min(⌈min_w · minimum_ring_size⌉ / min_w, maximum_ring_size)`; with two running
//! doubles `current = target = 0` over the hosts in order, `target += scale · w_h`, and entries
//! are added while `current < target` (`current += 1`). Entry i of a host hashes
//! `"<key>_<i>"` with XXH64 seed 0 (default) or libstdc++'s 64-bit MurmurHash2
//! ([`KeyHasher::Murmur64aEnvoy`]). Entries are sorted by hash (equal hashes: host order); a
//! request hash picks the first entry at or after it, wrapping to entry 0.
//!
//! The request hash is what Envoy computed (`route_hash`, the CLI's `--input u64`); `route`
//! hashes a key with XXH64 seed 0, as Envoy's header hash policy does with the header value.
//!
//! Locality weighting: with [`EnvoyRing::LOCALITY_LABEL`] (and
//! [`EnvoyRing::LOCALITY_WEIGHT_LABEL`]) on every host, `w_h = weight_h · (lw / Σlw) / Σweight of
//! its locality`, localities taken in order of first appearance and weight-0 ones left out.
//!
//! Not modelled: health and panic mode (only the hosts given are on the
//! ring), `hash_balance_factor` (bounded loads) and retry host predicates; the preference list
//! is the ring walked forward (distinct hosts).

use std::ops::ControlFlow;

use crate::algo::builder::Configure;
use crate::algorithm::Algorithm;
use crate::arcs::{Arcs, Placement};
use crate::circle::{Circle, MAX_POINTS};
use crate::error::{Error, Result};
use crate::hash::KeyHasher;
use crate::migration::KeySpace;
use crate::node::{Node, NodeId, NodeSet};
use crate::router::Router;
use crate::Builder;

/// Envoy's default `minimum_ring_size`.
pub(crate) const DEFAULT_MIN_RING_SIZE: u64 = 1024;
/// Envoy's default `maximum_ring_size`.
pub(crate) const DEFAULT_MAX_RING_SIZE: u64 = 8 * 1024 * 1024;

/// Envoy's ring hash over a node set (see the module docs for the exact rules).
///
/// - **Cost**: `route` = one XXH64 of the key and a binary search over about
///   `max(minimum_ring_size, …)` entries; `route_hash` skips the hash. Memory: 12 bytes per
///   entry. Build: one hash per entry and a sort.
/// - **Guarantees**: the ring, entry counts and picks of Envoy's ring hash tests.
/// - **Structure**: [`Router::arcs`] on the 64-bit circle of request hashes, borrowed, so
///   [`migration::plan`](crate::migration::plan) between two rings is exact.
///
/// ```
/// use hashroute::{EnvoyRing, Router};
/// let hosts = (90..96).map(|p| format!("127.0.0.1:{p}"));
/// let ring = EnvoyRing::builder().min_ring_size(12).nodes(hosts).build()?;
/// assert_eq!(ring.ring_size(), 12);
/// // Envoy's Basic test: hash 3551244743356806947 lands on :95, one more on :93.
/// assert_eq!(ring.node_name(ring.route_hash(3551244743356806947)?), "127.0.0.1:95");
/// assert_eq!(ring.node_name(ring.route_hash(3551244743356806948)?), "127.0.0.1:93");
/// # Ok::<(), hashroute::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct EnvoyRing {
    nodes: NodeSet,
    /// The key hasher of `route` (XXH64 seed 0, Envoy's header hash).
    hasher: KeyHasher,
    /// The entry hasher (`hash_function`).
    entry_hasher: KeyHasher,
    min_ring_size: u64,
    max_ring_size: u64,
    scale: f64,
    circle: Circle<u64>,
}

impl EnvoyRing {
    /// A builder for this router (see [`Builder`]).
    pub fn builder() -> Builder<EnvoyRing> {
        Builder::default()
    }

    /// A router over weight-1 nodes named `names`, with the default options.
    ///
    /// # Errors
    /// As [`NodeSet::from_names`](crate::NodeSet::from_names) and the builder's `build`.
    pub fn from_names<I>(names: I) -> Result<EnvoyRing>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        EnvoyRing::builder().nodes(names).build()
    }
}

/// The options of [`Builder<EnvoyRing>`].
#[derive(Clone, Debug, Default)]
pub struct EnvoyRingOptions {
    pub(crate) hasher: Option<KeyHasher>,
    pub(crate) min_ring_size: Option<u64>,
    pub(crate) max_ring_size: Option<u64>,
}

impl Configure for EnvoyRing {
    type Options = EnvoyRingOptions;
}

impl Builder<EnvoyRing> {
    /// The key hasher; default xxh64 with seed 0 (Envoy's `XX_HASH`).
    pub fn hasher(mut self, hasher: KeyHasher) -> Builder<EnvoyRing> {
        self.options.hasher = Some(hasher);
        self
    }
}

impl Builder<EnvoyRing> {
    /// `minimum_ring_size` (default 1024).
    pub fn min_ring_size(mut self, n: u64) -> Builder<EnvoyRing> {
        self.options.min_ring_size = Some(n);
        self
    }

    /// `maximum_ring_size` (default 8388608).
    pub fn max_ring_size(mut self, n: u64) -> Builder<EnvoyRing> {
        self.options.max_ring_size = Some(n);
        self
    }

    /// Builds the ring. The hasher (`hasher(..)`) is the *entry* hash: XXH64 seed 0 (the
    /// default) or [`KeyHasher::Murmur64aEnvoy`].
    ///
    /// # Errors
    /// The [`NodeSet::new`] errors; [`Error::InvalidParameter`] for another hasher, a minimum
    /// ring size of 0 or above the maximum, a maximum above 2^26.
    pub fn build(mut self) -> Result<EnvoyRing> {
        let entry_hasher = match self.options.hasher {
            None | Some(KeyHasher::Xxh64 { seed: 0 }) => KeyHasher::Xxh64 { seed: 0 },
            Some(KeyHasher::Murmur64aEnvoy) => KeyHasher::Murmur64aEnvoy,
            Some(other) => {
                return Err(Error::InvalidParameter {
                    name: "hash",
                    reason: format!("envoy-ring hashes with xxh64 (seed 0) or murmur64a-envoy only (got {other:?})"),
                })
            }
        };
        let min = self.options.min_ring_size.unwrap_or(DEFAULT_MIN_RING_SIZE);
        let max = self.options.max_ring_size.unwrap_or(DEFAULT_MAX_RING_SIZE);
        if min == 0 || min > max || max > MAX_POINTS {
            return Err(Error::InvalidParameter {
                name: "ring size",
                reason: format!("minimum {min} and maximum {max}: need 1 <= minimum <= maximum <= {MAX_POINTS}"),
            });
        }
        EnvoyRing::new(self.take_nodes()?, entry_hasher, min, max)
    }
}

/// Each host's normalized weight `w_h`, in the order Envoy walks the hosts: the node order, or
/// with localities (the [`EnvoyRing::LOCALITY_LABEL`] labels) locality by locality in order of
/// first appearance, hosts in node order within each, weight-0 localities left out.
fn shares(nodes: &NodeSet) -> Result<Vec<(usize, f64)>> {
    let labelled = nodes.iter().filter(|(_, n)| n.label(EnvoyRing::LOCALITY_LABEL).is_some()).count();
    if labelled == 0 {
        let sum: f64 = nodes.iter().map(|(_, n)| n.weight()).sum();
        return Ok(nodes.iter().map(|(id, n)| (id.index(), n.weight() * 1.0 / sum)).collect());
    }
    let bad = |reason: String| Error::InvalidParameter { name: "locality", reason };
    if labelled != nodes.len() {
        return Err(bad("either every host has a locality label or none does".into()));
    }
    // (name, weight, hosts) in order of first appearance.
    let mut localities: Vec<(&str, f64, Vec<usize>)> = Vec::new();
    for (id, node) in nodes.iter() {
        let name = node.label(EnvoyRing::LOCALITY_LABEL).unwrap_or_default();
        let text = node.label(EnvoyRing::LOCALITY_WEIGHT_LABEL).unwrap_or("1");
        let weight = text
            .parse::<u32>()
            .map_err(|_| bad(format!("weight {text:?} of locality {name:?} is not a whole number")))?;
        match localities.iter_mut().find(|l| l.0 == name) {
            Some(l) if l.1 != f64::from(weight) => {
                return Err(bad(format!("locality {name:?} is given two weights ({} and {weight})", l.1)));
            }
            Some(l) => l.2.push(id.index()),
            None => localities.push((name, f64::from(weight), vec![id.index()])),
        }
    }
    let sum_l: f64 = localities.iter().map(|l| l.1).sum();
    if sum_l == 0.0 {
        return Err(bad("every locality has weight 0: Envoy's ring would be empty".into()));
    }
    let mut out = Vec::with_capacity(nodes.len());
    for (_, lw, hosts) in localities.iter().filter(|l| l.1 != 0.0) {
        let nlw = lw / sum_l;
        let sum: f64 = hosts.iter().map(|&i| nodes.as_slice()[i].weight()).sum();
        out.extend(hosts.iter().map(|&i| (i, nodes.as_slice()[i].weight() * nlw / sum)));
    }
    Ok(out)
}

/// Entries per host (by node index) with Envoy's running double sums, and the scale.
fn entry_counts(nodes: &NodeSet, min: u64, max: u64) -> Result<(Vec<u64>, f64)> {
    let shares = shares(nodes)?;
    let min_w = shares.iter().map(|s| s.1).fold(1.0f64, f64::min);
    let scale = ((min_w * min as f64).ceil() / min_w).min(max as f64);
    let (mut current, mut target) = (0.0f64, 0.0f64);
    let mut counts = vec![0u64; nodes.len()];
    for (i, w) in shares {
        target += scale * w;
        while current < target {
            counts[i] += 1;
            current += 1.0;
        }
    }
    Ok((counts, scale))
}

impl EnvoyRing {
    /// The node label naming a host's locality (Envoy's `locality_weighted_lb_config`); with it
    /// on every host, shares are per locality as Envoy computes them.
    pub const LOCALITY_LABEL: &'static str = "envoy-locality";
    /// The node label holding the weight of the host's locality (a whole number, default 1; 0
    /// leaves the locality's hosts off the ring). Equal on every host of a locality.
    pub const LOCALITY_WEIGHT_LABEL: &'static str = "envoy-locality-weight";

    fn new(nodes: NodeSet, entry_hasher: KeyHasher, min: u64, max: u64) -> Result<EnvoyRing> {
        let (counts, scale) = entry_counts(&nodes, min, max)?;
        let total: u64 = counts.iter().sum();
        let mut pairs: Vec<(u64, u32)> = Vec::with_capacity(total as usize);
        let mut buf = Vec::with_capacity(64);
        for ((id, node), &count) in nodes.iter().zip(&counts) {
            for i in 0..count {
                buf.clear();
                buf.extend_from_slice(node.name().as_bytes());
                buf.push(b'_');
                buf.extend_from_slice(i.to_string().as_bytes());
                pairs.push((entry_hasher.hash(&buf), id.as_u32()));
            }
        }
        // Equal hashes: host order (Envoy's std::sort leaves it unspecified).
        pairs.sort_by_key(|&(h, _)| h);
        let (points, owners) = pairs.into_iter().unzip();
        let hasher = KeyHasher::Xxh64 { seed: 0 };
        Ok(EnvoyRing {
            nodes,
            hasher,
            entry_hasher,
            min_ring_size: min,
            max_ring_size: max,
            scale,
            circle: Circle::new(points, owners),
        })
    }

    #[inline]
    fn owner(&self, hash: u64) -> NodeId {
        self.circle.owner(self.circle.successor(hash))
    }

    fn heap_bytes(&self) -> usize {
        self.circle.heap_bytes()
    }

    /// The `size` gauge: `⌈scale⌉`.
    pub fn ring_size(&self) -> u64 {
        self.scale.ceil() as u64
    }

    /// The entry hasher (`hash_function`).
    pub fn entry_hasher(&self) -> KeyHasher {
        self.entry_hasher
    }

    /// `(minimum_ring_size, maximum_ring_size)`.
    pub fn ring_size_bounds(&self) -> (u64, u64) {
        (self.min_ring_size, self.max_ring_size)
    }

    /// The entry hashes, ascending.
    pub fn points(&self) -> &[u64] {
        self.circle.points()
    }

    /// The owner (node index) of each entry, parallel to [`EnvoyRing::points`].
    pub fn owners(&self) -> &[u32] {
        self.circle.owners()
    }

    /// A new ring with `node` appended to the host list.
    ///
    /// # Errors
    /// As [`NodeSet::with_node`].
    pub fn with_node(&self, node: Node) -> Result<EnvoyRing> {
        EnvoyRing::new(self.nodes.with_node(node)?, self.entry_hasher, self.min_ring_size, self.max_ring_size)
    }

    /// A new ring without host `name`.
    ///
    /// # Errors
    /// [`Error::UnknownNode`], [`Error::NoNodes`] for the last node.
    pub fn without_node(&self, name: &str) -> Result<EnvoyRing> {
        EnvoyRing::new(self.nodes.without_node(name)?, self.entry_hasher, self.min_ring_size, self.max_ring_size)
    }

    /// A new ring with host `name`'s weight changed.
    ///
    /// # Errors
    /// [`Error::UnknownNode`], [`Error::InvalidWeight`].
    pub fn with_weight(&self, name: &str, weight: f64) -> Result<EnvoyRing> {
        EnvoyRing::new(self.nodes.with_weight(name, weight)?, self.entry_hasher, self.min_ring_size, self.max_ring_size)
    }
}

impl Router for EnvoyRing {
    fn algorithm(&self) -> Algorithm {
        Algorithm::EnvoyRing
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
    /// The ring walked forward from the key's entry, distinct hosts; hosts that own no entry
    /// (a share the maximum ring size rounds to zero, a locality of weight 0: Envoy never picks
    /// them) follow in configuration order, so the list still names every host.
    fn preference(&self, key: &[u8], visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) -> Result<()> {
        let n = self.nodes.len();
        let start = self.circle.successor(self.hasher.hash(key));
        self.circle.walk_clockwise_then(start, n, 0..n as u32, visit);
        Ok(())
    }
    /// The entries on the 64-bit circle of request hashes (what [`Router::route_hash`] takes;
    /// `route` places a key at its XXH64): a hash is owned by the first entry at or after it,
    /// Envoy's own rule. Borrowed: no cost.
    fn arcs(&self) -> Option<Arcs<'_>> {
        let placement = Placement::hashed(self.hasher);
        (!self.points().is_empty()).then(|| Arcs::trusted(KeySpace::Hash64, self.points(), self.owners(), placement))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Router;

    /// Found by the `routers` fuzz target: a host the ring size rounds to no entry was missing
    /// from its preference lists, so `replicas(key, N)` came up short.
    #[test]
    fn hosts_without_an_entry_still_end_the_preference_list() {
        let names: Vec<String> = (0..10).map(|i| format!("h{i}")).collect();
        let r = EnvoyRing::builder().min_ring_size(4).max_ring_size(4).nodes(&names).build().unwrap();
        assert!(r.ring_size() < 10, "some hosts must own no entry for this test");
        for k in 0..50u32 {
            let key = format!("k{k}");
            let all = r.replicas(key.as_bytes(), 10).unwrap();
            let distinct: std::collections::HashSet<_> = all.iter().collect();
            assert_eq!(distinct.len(), 10, "{all:?}");
            assert_eq!(all[0], r.route(key.as_bytes()));
        }
    }

    #[test]
    fn counts_follow_envoy_arithmetic() {
        let three = NodeSet::from_names(["a", "b", "c"]).unwrap();
        let (counts, scale) = entry_counts(&three, 1024, DEFAULT_MAX_RING_SIZE).unwrap();
        assert_eq!(counts, vec![342, 342, 342]);
        assert_eq!(scale.ceil() as u64, 1026);
        let two = NodeSet::from_names(["a", "b"]).unwrap();
        assert_eq!(entry_counts(&two, 3, DEFAULT_MAX_RING_SIZE).unwrap().0, vec![2, 2]);
        let loc = |n: &str, l: &str, w: &str| {
            Node::new(n).with_label(EnvoyRing::LOCALITY_LABEL, l).with_label(EnvoyRing::LOCALITY_WEIGHT_LABEL, w)
        };
        let zero = NodeSet::new([loc("a", "A", "0"), loc("b", "B", "0")]).unwrap();
        assert!(entry_counts(&zero, 8, 64).unwrap_err().to_string().contains("every locality has weight 0"));
        let mixed = NodeSet::new([loc("a", "A", "1"), Node::new("b")]).unwrap();
        assert!(entry_counts(&mixed, 8, 64).is_err());
        let twice = NodeSet::new([loc("a", "A", "1"), loc("b", "A", "2")]).unwrap();
        assert!(entry_counts(&twice, 8, 64).unwrap_err().to_string().contains("two weights"));
        // A weight-0 locality's hosts get no entry; the others share the ring by locality weight.
        let three = NodeSet::new([loc("a", "A", "1"), loc("b", "B", "3"), loc("c", "C", "0")]).unwrap();
        // w = 1/4, 3/4: scale = ceil(1/4 · 8) / (1/4) = 8 entries.
        assert_eq!(entry_counts(&three, 8, 64).unwrap().0, vec![2, 6, 0]);
    }

    #[test]
    fn options_are_checked() {
        let b = || EnvoyRing::builder().nodes(["a", "b"]);
        assert!(b().min_ring_size(0).build().is_err());
        assert!(b().min_ring_size(10).max_ring_size(5).build().is_err());
        assert!(b().hasher(KeyHasher::Md5).build().is_err());
        let r = b().hasher(KeyHasher::Murmur64aEnvoy).min_ring_size(8).build().unwrap();
        assert_eq!(r.points().len(), 8);
        assert_eq!(r.route(b"k"), r.route_hash(KeyHasher::Xxh64 { seed: 0 }.hash(b"k")).unwrap());
        assert_eq!(r.replicas(b"k", 2).unwrap()[0], r.route(b"k"));
    }
}

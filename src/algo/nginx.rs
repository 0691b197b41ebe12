//! nginx `hash $key consistent` (ngx_http_upstream_hash_module), bit-exact with nginx 1.22.1.
//!
//! Every server gets `160 × weight` points, a CRC-32 chain over `host NUL port`: the server text
//! is split at a trailing `:digits` (no such suffix: the port is *empty*, not 80; a `unix:`
//! prefix is dropped and the port is empty), `base = host ‖ 0x00 ‖ port`,
//! `p0 = CRC32(base ‖ LE32(0))`, `pj = CRC32(base ‖ LE32(p(j−1)))`. Points are sorted (stable,
//! in server order) and equal points collapse to the first. The key hash is the CRC-32 of the
//! raw key (for `$request_uri`, the request target as received, query included); its owner is
//! the first point at or after it, wrapping to the first point.
//!
//! Not modelled: `max_fails` / `fail_timeout` (a failed server's keys move along the ring until
//! it recovers), the round-robin fallback after 20 failed tries, and hostnames that resolve to
//! several addresses (nginx hashes each address's server *text*, the same for all of them, and
//! round-robins between them: give addresses, not names). A server marked `down` owns no point,
//! which is what nginx does when it skips that server's points.

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

/// Points per weight unit (`ngx_http_upstream_init_chash`).
pub(crate) const POINTS_PER_WEIGHT: u64 = 160;

/// nginx's consistent `hash` upstream over a node set: node names are the `server` texts as
/// written in the `upstream` block (`127.0.0.1:8080`, `127.0.0.1`, `unix:/tmp/s`), weights
/// nginx's integer `weight=`.
///
/// - **Cost**: `route` = a CRC-32 of the key plus a binary search over `160 Σw` points. Memory:
///   8 bytes per point. Build: `160 Σw` CRC-32s of ≤ 70 bytes and a sort.
/// - **Guarantees**: the server nginx 1.22.1 picks for every key when all servers are up
///   (`../shared/vectors/nginx_hash_consistent.csv`); the preference list is the ring walked
///   forward, which is where nginx sends a key when its server fails.
/// - **Structure**: [`Router::arcs`] on the 32-bit CRC-32 circle, so
///   [`migration::plan`](crate::migration::plan) between two configurations is exact.
///
/// ```
/// use hashroute::{Nginx, Router};
/// let nginx = Nginx::from_names(["127.0.0.1:18081", "127.0.0.1:18082", "127.0.0.1:18083", "127.0.0.1:18084"])?;
/// assert_eq!(nginx.node_name(nginx.route(b"/key-0")), "127.0.0.1:18081");
/// # Ok::<(), hashroute::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Nginx {
    nodes: NodeSet,
    circle: Circle<u32>,
}

impl Nginx {
    /// A builder for this router (see [`Builder`]).
    pub fn builder() -> Builder<Nginx> {
        Builder::default()
    }

    /// A router over weight-1 nodes named `names`, with the default options.
    ///
    /// # Errors
    /// As [`NodeSet::from_names`](crate::NodeSet::from_names) and the builder's `build`.
    pub fn from_names<I>(names: I) -> Result<Nginx>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        Nginx::builder().nodes(names).build()
    }
}

/// The options of [`Builder<Nginx>`].
#[derive(Clone, Debug, Default)]
pub struct NginxOptions {}

impl Configure for Nginx {
    type Options = NginxOptions;
}

impl Builder<Nginx> {
    /// Builds the points (`160 Σw` CRC-32s and a sort).
    ///
    /// # Errors
    /// The [`NodeSet::new`] errors; a weight that is not a whole
    /// number (nginx's `weight=` is an integer), as [`Error::InvalidParameter`];
    /// [`Error::TooManyPoints`] past 2^26 points.
    pub fn build(mut self) -> Result<Nginx> {
        Nginx::new(self.take_nodes()?)
    }
}

/// `host NUL port` of an nginx server text, as `ngx_http_upstream_init_chash` splits it.
fn base(server: &str) -> Vec<u8> {
    let bytes = server.as_bytes();
    let (host, port): (&[u8], &[u8]) = if bytes.len() >= 5 && bytes[..5].eq_ignore_ascii_case(b"unix:") {
        (&bytes[5..], b"")
    } else {
        let digits = bytes.iter().rev().take_while(|b| b.is_ascii_digit()).count();
        let colon = bytes.len() - digits;
        if colon > 0 && bytes[colon - 1] == b':' {
            (&bytes[..colon - 1], &bytes[colon..])
        } else {
            (bytes, b"")
        }
    };
    let mut base = Vec::with_capacity(host.len() + 1 + port.len() + 4);
    base.extend_from_slice(host);
    base.push(0);
    base.extend_from_slice(port);
    base
}

/// The `count` points of one server, in chain order.
pub(crate) fn server_points(server: &str, count: u64) -> impl Iterator<Item = u32> {
    let mut input = base(server);
    let len = input.len();
    let mut prev = 0u32;
    (0..count).map(move |_| {
        input.truncate(len);
        input.extend_from_slice(&prev.to_le_bytes());
        prev = KeyHasher::Crc32.hash(&input) as u32;
        prev
    })
}

impl Nginx {
    fn new(nodes: NodeSet) -> Result<Nginx> {
        let mut total = 0u64;
        for (_, node) in nodes.iter() {
            let w = node.weight();
            if w.fract() != 0.0 || w > 1e6 {
                return Err(Error::InvalidParameter {
                    name: "weight",
                    reason: format!("{w} for {:?}: nginx weights are whole numbers (1 to 1000000 here)", node.name()),
                });
            }
            total = total.saturating_add(w as u64 * POINTS_PER_WEIGHT);
        }
        if total > MAX_POINTS {
            return Err(Error::TooManyPoints { points: total, max: MAX_POINTS });
        }
        let mut pairs: Vec<(u32, u32)> = Vec::with_capacity(total as usize);
        for (id, node) in nodes.iter() {
            let count = node.weight() as u64 * POINTS_PER_WEIGHT;
            pairs.extend(server_points(node.name(), count).map(|p| (p, id.as_u32())));
        }
        // Stable: equal points keep server order, and the first one survives the collapse.
        pairs.sort_by_key(|&(p, _)| p);
        pairs.dedup_by_key(|&mut (p, _)| p);
        let (points, owners) = pairs.into_iter().unzip();
        Ok(Nginx { nodes, circle: Circle::new(points, owners) })
    }

    /// The key hash: CRC-32 of the raw key.
    #[inline]
    pub fn key_hash(key: &[u8]) -> u32 {
        KeyHasher::Crc32.hash(key) as u32
    }

    /// The node owning a pre-computed key hash ([`Nginx::key_hash`]).
    #[inline]
    pub fn route_hash32(&self, h: u32) -> NodeId {
        self.circle.owner(self.circle.successor(h))
    }

    #[inline]
    fn route_key(&self, key: &[u8]) -> NodeId {
        self.route_hash32(Nginx::key_hash(key))
    }

    fn heap_bytes(&self) -> usize {
        self.circle.heap_bytes()
    }

    /// The points, ascending (collapsed: no two equal).
    pub fn points(&self) -> &[u32] {
        self.circle.points()
    }

    /// The owner (node index) of each point, parallel to [`Nginx::points`].
    pub fn owners(&self) -> &[u32] {
        self.circle.owners()
    }

    /// A new router with `node` added (only its points are new).
    ///
    /// # Errors
    /// As [`NodeSet::with_node`] and [`Builder::<Nginx>::build`].
    pub fn with_node(&self, node: Node) -> Result<Nginx> {
        Nginx::new(self.nodes.with_node(node)?)
    }

    /// A new router without the node named `name`.
    ///
    /// # Errors
    /// [`Error::UnknownNode`], [`Error::NoNodes`] for the last node.
    pub fn without_node(&self, name: &str) -> Result<Nginx> {
        Nginx::new(self.nodes.without_node(name)?)
    }

    /// A new router with node `name`'s weight changed.
    ///
    /// # Errors
    /// [`Error::UnknownNode`], [`Error::InvalidWeight`].
    pub fn with_weight(&self, name: &str, weight: f64) -> Result<Nginx> {
        Nginx::new(self.nodes.with_weight(name, weight)?)
    }
}

impl Router for Nginx {
    fn algorithm(&self) -> Algorithm {
        Algorithm::Nginx
    }
    fn nodes(&self) -> &NodeSet {
        &self.nodes
    }
    fn memory_bytes(&self) -> usize {
        crate::algo::memory_bytes::<Self>(self.heap_bytes(), &self.nodes)
    }
    #[inline]
    fn route(&self, key: &[u8]) -> NodeId {
        self.route_key(key)
    }
    /// The ring walked forward from the key's point, distinct servers: where nginx retries a
    /// key whose server failed (`hp->hash++`).
    fn preference(&self, key: &[u8], visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) -> Result<()> {
        let start = self.circle.successor(Nginx::key_hash(key));
        self.circle.walk_clockwise(start, self.nodes.len(), visit);
        Ok(())
    }
    /// The points on the 32-bit CRC-32 circle: every CRC-32 of a key is a position, owned by
    /// the first point at or after it (nginx's own rule). O(points): the points widen to `u64`.
    fn arcs(&self) -> Option<Arcs<'_>> {
        if self.points().is_empty() {
            return None;
        }
        let points: Vec<u64> = self.points().iter().map(|&p| u64::from(p)).collect();
        Some(Arcs::trusted(KeySpace::Hash32, points, self.owners(), Placement::hashed(KeyHasher::Crc32)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Router;

    #[test]
    fn base_splits_like_nginx() {
        assert_eq!(base("127.0.0.1:18081"), b"127.0.0.1\x0018081");
        assert_eq!(base("127.0.0.1"), b"127.0.0.1\x00");
        assert_eq!(base("unix:/tmp/s"), b"/tmp/s\x00");
        assert_eq!(base("[::1]:80"), b"[::1]\x0080");
        assert_eq!(base("host:"), b"host\x00");
        assert_eq!(base("80"), b"80\x00");
    }

    #[test]
    fn points_and_weights() {
        let nodes = NodeSet::new([Node::new("127.0.0.1:1").with_weight(2.0), Node::new("127.0.0.1:2")]).unwrap();
        let r = Nginx::builder().node_set(nodes).build().unwrap();
        assert_eq!(r.points().len(), 480);
        assert!(r.points().windows(2).all(|w| w[0] < w[1]));
        let bad = NodeSet::new([Node::new("a:1").with_weight(1.5)]).unwrap();
        assert!(matches!(Nginx::builder().node_set(bad).build(), Err(Error::InvalidParameter { name: "weight", .. })));
        assert_eq!(r.route_hash(1), Err(Error::Unsupported { algorithm: "nginx", operation: "routing a 64-bit hash" }));
    }

    #[test]
    fn preference_starts_with_route_and_covers_all() {
        let r = Nginx::from_names(["a:1", "b:2", "c:3", "d:4"]).unwrap();
        for i in 0..200u32 {
            let key = format!("/k{i}");
            let reps = r.replicas(key.as_bytes(), 4).unwrap();
            assert_eq!(reps[0], r.route(key.as_bytes()));
            let mut sorted = reps.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), 4);
        }
    }
}

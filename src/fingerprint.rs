//! Route fingerprints: one stable 128-bit value that changes exactly when the routes change.
//!
//! Two processes that must agree on routing (a client fleet, a proxy and its canary) compare
//! fingerprints instead of configurations: equal fingerprints mean equal routes for every key.
//! The value is XXH3-128 over a canonical byte encoding of what determines the routes:
//!
//! | router | encoded | node order matters? |
//! |---|---|---|
//! | [`Ring`] | algorithm, hasher (+ seed), node names sorted, every point and its owner's rank in that sorted list | no |
//! | [`Ketama`] | algorithm, variant, node names sorted, every point and its owner's rank | no |
//! | [`Modulo`](crate::Modulo), [`Jump`](crate::Jump) | algorithm, hasher (+ seed), node names in id order | yes (node `i` is bucket `i`) |
//! | [`RedisSlots`] | algorithm, every maximal slot range and its owner's name | yes (as the layout) |
//! | [`TokenRing`](crate::TokenRing) | algorithm, hasher, node names sorted, every token (as its position) and its owner's rank | no |
//! | anything else ([`Rendezvous`](crate::Rendezvous), [`Maglev`](crate::Maglev), [`Failover`](crate::Failover), the jump family, routers outside the crate, …) | algorithm, node names + weights (sorted by name for order-independent algorithms), and the routes of a fixed probe set of keys and hashes | as the algorithm |
//!
//! The encoding starts with a version tag, so a deliberate change of the encoding is visible as
//! a new tag; golden values in the tests freeze it. Labels never enter a fingerprint: they do
//! not change routes.
//!
//! Each router chooses its encoding through [`Router::canonical_bytes`], so a router reached
//! through `&dyn Router`, a `Box`, an `Arc` or an [`AnyRouter`](crate::AnyRouter) fingerprints
//! exactly as the concrete type does.
//!
//! ## Why a probe for the others
//!
//! Where the routes are not a readable structure (scores, tables, down marks), the encoding adds
//! the names of the nodes that 4096 fixed keys (and, where supported, 1024 fixed
//! 64-bit hashes) route to. Equal probe fingerprints mean equal routes on the probes, which
//! catches any realistic configuration difference but is not a proof.

use std::fmt;
use std::str::FromStr;

use crate::algo::ketama::Ketama;
use crate::algo::ring::Ring;
use crate::algo::slots::RedisSlots;
use crate::algorithm::Algorithm;
use crate::error::{Error, Result};
use crate::hash::KeyHasher;
use crate::node::{NodeId, NodeSet};
use crate::router::Router;

/// Keys routed by the probe encoding of an opaque router.
pub(crate) const PROBE_KEYS: usize = 4096;
/// 64-bit hashes routed (via [`Router::route_hash`]) by the probe encoding, when supported.
pub(crate) const PROBE_HASHES: usize = 1024;

/// Version tag at the start of every canonical encoding.
const TAG: &[u8] = b"hashroute.fingerprint.v1";

/// A router's route fingerprint (XXH3-128 of its canonical encoding). `Display` and `FromStr`
/// use 32 lowercase hex digits.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Fingerprint(u128);

impl Fingerprint {
    /// The raw value.
    pub const fn as_u128(self) -> u128 {
        self.0
    }

    /// A fingerprint from its raw value (as printed by `{:x}` of [`Fingerprint::as_u128`]).
    pub const fn from_u128(value: u128) -> Fingerprint {
        Fingerprint(value)
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

impl FromStr for Fingerprint {
    type Err = Error;
    /// Parses 32 hex digits.
    fn from_str(s: &str) -> Result<Fingerprint> {
        if s.len() != 32 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Error::Malformed(format!("fingerprint {s:?}: expected 32 hex digits")));
        }
        u128::from_str_radix(s, 16).map(Fingerprint).map_err(|e| Error::Malformed(format!("fingerprint {s:?}: {e}")))
    }
}

/// The route fingerprint of `router`: XXH3-128 of its [`Router::canonical_bytes`]. Works the
/// same on concrete routers, `&dyn Router`, `Box`, `Arc` and [`AnyRouter`](crate::AnyRouter).
///
/// Cost: O(P) for a ring of P points (≈ 10 bytes hashed per point), O(N log N) for the node
/// names; the probe encoding routes 4096 keys and 1024 hashes. Memory: the
/// canonical encoding is built in one buffer (≈ 12 bytes per ring point).
pub fn fingerprint<R: Router + ?Sized>(router: &R) -> Fingerprint {
    Fingerprint(xxhash_rust::xxh3::xxh3_128(&router.canonical_bytes()))
}

/// The exact encoding of a ring: hasher, names sorted, every point and its owner's rank.
pub(crate) fn ring_encoding(ring: &Ring) -> Vec<u8> {
    let mut c = Canon::start(ring.algorithm(), "exact");
    c.hasher(ring.hasher());
    let ranks = c.sorted_names(ring.nodes());
    c.u64(ring.points().len() as u64);
    for (&p, &o) in ring.points().iter().zip(ring.owners()) {
        c.u64(p);
        c.u32(ranks[o as usize]);
    }
    c.0
}

/// The exact encoding of the routers where node `i` is bucket `i` (modulo, jump): the hasher
/// and the names in id order.
pub(crate) fn bucket_encoding(algorithm: Algorithm, hasher: KeyHasher, nodes: &NodeSet) -> Vec<u8> {
    let mut c = Canon::start(algorithm, "exact");
    c.hasher(hasher);
    c.names_in_order(nodes);
    c.0
}

/// The exact encoding of a Ketama continuum: variant, key hash where not MD5, names sorted,
/// every point and its owner's rank.
pub(crate) fn ketama_encoding(k: &Ketama) -> Vec<u8> {
    let mut c = Canon::start(k.algorithm(), "exact");
    c.str(k.variant().name());
    if k.key_hasher() != KeyHasher::Md5 {
        // Only the twemproxy and one-at-a-time variants hash keys otherwise; MD5 stays
        // unencoded so that every existing fingerprint is unchanged.
        c.hasher(k.key_hasher());
    }
    let ranks = c.sorted_names(k.nodes());
    c.u64(k.points().len() as u64);
    if let Some(points) = k.points128() {
        // uhashring-md5: whole 128-bit points (high word first).
        for (&p, &o) in points.iter().zip(k.owners()) {
            c.u64((p >> 64) as u64);
            c.u64(p as u64);
            c.u32(ranks[o as usize]);
        }
        return c.0;
    }
    for (&p, &o) in k.points().iter().zip(k.owners()) {
        c.u32(p);
        c.u32(ranks[o as usize]);
    }
    c.0
}

/// The exact encoding of a Redis slot layout: every maximal slot range and its owner's name
/// (order-dependent exactly as the layout is).
pub(crate) fn slots_encoding(s: &RedisSlots) -> Vec<u8> {
    let mut c = Canon::start(s.algorithm(), "exact");
    let ranges = s.ranges();
    c.u64(ranges.len() as u64);
    for (range, owner) in ranges {
        c.u32(u32::from(*range.start()));
        c.u32(u32::from(*range.end()));
        c.str(s.node_name(owner));
    }
    c.0
}

/// The exact encoding of a token ring, as a ring's points: hasher, names sorted, every token
/// (as its position) and its owner's rank (weights and labels do not change routes).
pub(crate) fn token_ring_encoding(ring: &crate::TokenRing) -> Vec<u8> {
    let mut c = Canon::start(ring.algorithm(), "exact");
    c.hasher(ring.hasher());
    let ranks = c.sorted_names(ring.nodes());
    c.u64(ring.positions().len() as u64);
    for (&p, &o) in ring.positions().iter().zip(ring.owners()) {
        c.u64(p);
        c.u32(ranks[o as usize]);
    }
    c.0
}

/// Algorithms whose routes do not depend on the order nodes were given in.
fn order_independent(algorithm: Algorithm) -> bool {
    matches!(
        algorithm,
        Algorithm::Ring | Algorithm::Ketama | Algorithm::Rendezvous | Algorithm::Maglev | Algorithm::MultiProbe
    )
}

/// The probe encoding ([`Router::canonical_bytes`]' default): node names and weights, and the
/// routes of [`PROBE_KEYS`] keys and [`PROBE_HASHES`] hashes.
pub(crate) fn probe_encoding<R: Router + ?Sized>(r: &R) -> Vec<u8> {
    let mut c = Canon::start(r.algorithm(), "probe");
    let nodes = r.nodes();
    // Rank of each node id in the node list as encoded (sorted by name or in id order).
    let ranks = if order_independent(r.algorithm()) {
        let ranks = c.sorted_names(nodes);
        let mut order: Vec<usize> = (0..nodes.len()).collect();
        order.sort_unstable_by_key(|&i| ranks[i]);
        for i in order {
            c.u64(nodes.weight(NodeId::from_index(i as u32)).to_bits());
        }
        ranks
    } else {
        c.u64(nodes.len() as u64);
        for (_, node) in nodes.iter() {
            c.str(node.name());
            c.u64(node.weight().to_bits());
        }
        (0..nodes.len() as u32).collect()
    };
    let mut key = Vec::with_capacity(32);
    for i in 0..PROBE_KEYS {
        key.clear();
        key.extend_from_slice(b"hashroute-probe-");
        key.extend_from_slice(i.to_string().as_bytes());
        c.u32(ranks[r.route(&key).index()]);
    }
    match r.route_hash(0) {
        Ok(_) => {
            c.str("hashes");
            for i in 0..PROBE_HASHES as u64 {
                let h = crate::mix::mix64(i);
                // `route_hash(0)` succeeded, so the router supports 64-bit hashes.
                let id = r.route_hash(h).map_or(u32::MAX, |id| ranks[id.index()]);
                c.u32(id);
            }
        }
        Err(_) => c.str("no-hashes"),
    }
    c.0
}

/// Little-endian, length-prefixed canonical writer.
struct Canon(Vec<u8>);

impl Canon {
    /// The version tag, the algorithm's name and the encoding's kind (`exact` or `probe`).
    fn start(algorithm: Algorithm, kind: &str) -> Canon {
        let mut c = Canon(Vec::with_capacity(256));
        c.bytes(TAG);
        c.str(algorithm.name());
        c.str(kind);
        c
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    fn hasher(&mut self, h: KeyHasher) {
        self.str(h.name());
        // Seeded hashers write their seed; unseeded ones nothing (frozen encoding).
        if let Some(seed) = h.seed() {
            self.u64(seed);
        }
    }
    /// Writes the names sorted (byte order) and returns each id's rank in that order.
    fn sorted_names(&mut self, nodes: &NodeSet) -> Vec<u32> {
        let order = nodes.ids_by_name();
        let mut ranks = vec![0u32; nodes.len()];
        self.u64(nodes.len() as u64);
        for (rank, &id) in order.iter().enumerate() {
            ranks[id as usize] = rank as u32;
            self.str(nodes.name(NodeId::from_index(id)));
        }
        ranks
    }
    fn names_in_order(&mut self, nodes: &NodeSet) {
        self.u64(nodes.len() as u64);
        for (_, node) in nodes.iter() {
            self.str(node.name());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Failover, Jump, Modulo, Node, Rendezvous};

    fn ring(names: &[&str]) -> Ring {
        Ring::builder().vnodes(50).nodes(names).build().unwrap()
    }

    #[test]
    fn ring_is_order_independent_and_sensitive() {
        let a = ring(&["x", "y", "z"]);
        let b = ring(&["z", "x", "y"]);
        assert_eq!(fingerprint(&a), fingerprint(&b));
        assert_ne!(fingerprint(&a), fingerprint(&a.with_node(Node::new("w")).unwrap()));
        assert_ne!(fingerprint(&a), fingerprint(&a.with_weight("x", 2.0).unwrap()));
        let seeded = Ring::builder().vnodes(50).hasher(KeyHasher::Xxh3 { seed: 1 }).nodes(["x", "y", "z"]).build();
        assert_ne!(fingerprint(&a), fingerprint(&seeded.unwrap()));
        // Labels do not change routes, so they do not change the fingerprint.
        let labelled =
            Ring::builder().vnodes(50).node(Node::new("x").with_label("zone", "a")).nodes(["y", "z"]).build().unwrap();
        assert_eq!(fingerprint(&a), fingerprint(&labelled));
    }

    #[test]
    fn order_dependent_routers_change_with_order() {
        let ab = NodeSet::from_names(["a", "b", "c"]).unwrap();
        let ba = NodeSet::from_names(["c", "b", "a"]).unwrap();
        let h = KeyHasher::default();
        assert_ne!(
            fingerprint(&Modulo::builder().node_set(ab.clone()).hasher(h).build().unwrap()),
            fingerprint(&Modulo::builder().node_set(ba.clone()).hasher(h).build().unwrap())
        );
        assert_ne!(
            fingerprint(&Jump::builder().node_set(ab.clone()).hasher(h).build().unwrap()),
            fingerprint(&Jump::builder().node_set(ba).hasher(h).build().unwrap())
        );
        // Same nodes, different algorithm.
        assert_ne!(
            fingerprint(&Modulo::builder().node_set(ab.clone()).hasher(h).build().unwrap()),
            fingerprint(&Jump::builder().node_set(ab).hasher(h).build().unwrap())
        );
    }

    #[test]
    fn probe_encoding_for_trait_objects() {
        let a: Box<dyn Router> = Box::new(ring(&["x", "y", "z"]));
        let b: Box<dyn Router> = Box::new(ring(&["z", "y", "x"]));
        let c: Box<dyn Router> = Box::new(ring(&["x", "y", "w"]));
        assert_eq!(fingerprint(&*a), fingerprint(&*b));
        assert_ne!(fingerprint(&*a), fingerprint(&*c));
        let m1: Box<dyn Router> = Box::new(Modulo::from_names(["a", "b"]).unwrap());
        let m2: Box<dyn Router> = Box::new(Modulo::from_names(["b", "a"]).unwrap());
        assert_ne!(fingerprint(&*m1), fingerprint(&*m2));
        // A Box of a concrete router keeps the exact encoding.
        let exact = Box::new(ring(&["x", "y", "z"]));
        assert_eq!(fingerprint(&exact), fingerprint(&ring(&["y", "x", "z"])));
    }

    #[test]
    fn rendezvous_and_failover_use_the_probe_encoding() {
        let names = ["a", "b", "c", "d"];
        let rev: Vec<&str> = names.iter().rev().copied().collect();
        let h = KeyHasher::default();
        let r1 = Rendezvous::builder().node_set(NodeSet::from_names(names).unwrap()).hasher(h).build().unwrap();
        let r2 = Rendezvous::builder().node_set(NodeSet::from_names(&rev).unwrap()).hasher(h).build().unwrap();
        assert_eq!(fingerprint(&r1), fingerprint(&r2), "rendezvous ignores node order");
        let r3 = Rendezvous::builder()
            .node_set(NodeSet::from_names(names).unwrap())
            .hasher(KeyHasher::Xxh64 { seed: 0 })
            .build()
            .unwrap();
        assert_ne!(fingerprint(&r1), fingerprint(&r3));
        let mut f = Failover::new(ring(&names)).unwrap();
        let up = fingerprint(&f);
        f.mark_down("a").unwrap();
        assert_ne!(fingerprint(&f), up, "a down node changes routes");
    }

    #[test]
    fn display_round_trips() {
        let fp = fingerprint(&ring(&["a"]));
        let s = fp.to_string();
        assert_eq!(s.len(), 32);
        assert_eq!(s.parse::<Fingerprint>().unwrap(), fp);
        assert!(matches!("xyz".parse::<Fingerprint>(), Err(Error::Malformed(_))));
        assert!(matches!("g".repeat(32).parse::<Fingerprint>(), Err(Error::Malformed(_))));
    }
}

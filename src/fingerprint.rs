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
//! | [`Modulo`], [`Jump`] | algorithm, hasher (+ seed), node names in id order | yes (node `i` is bucket `i`) |
//! | [`RedisSlots`] | algorithm, every maximal slot range and its owner's name | yes (as the layout) |
//! | [`TokenRing`] | algorithm, hasher, node names sorted, every token (as its position) and its owner's rank | no |
//! | anything else ([`View::Opaque`]: trait objects, [`Rendezvous`], [`Failover`]) | algorithm, node names + weights (sorted by name for order-independent algorithms), and the routes of a fixed probe set of keys and hashes | as the algorithm |
//!
//! The encoding starts with a version tag, so a deliberate change of the encoding is visible as
//! a new tag; golden values in the tests freeze it. Labels never enter a fingerprint: they do
//! not change routes.
//!
//! ## Why a probe for opaque routers
//!
//! The [`Router`] trait does not expose parameters (hasher, vnodes, tables) or a way to recover
//! the concrete type from a `&dyn Router`, so for a router known only as `&dyn Router` the
//! fingerprint adds the names of the nodes that [`PROBE_KEYS`] keys (and, where supported,
//! [`PROBE_HASHES`] 64-bit hashes) route to. Equal probe fingerprints mean equal routes on the
//! probes, which catches any realistic configuration difference but is not a proof. Call
//! [`fingerprint`] on the concrete type (or on a `Box`/`Arc` of it) to get the exact encoding.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::algo::jump::Jump;
use crate::algo::ketama::Ketama;
use crate::algo::modulo::Modulo;
use crate::algo::rendezvous::Rendezvous;
use crate::algo::ring::Ring;
use crate::algo::slots::RedisSlots;
use crate::algo::token_ring::TokenRing;
use crate::error::{Error, Result};
use crate::failover::Failover;
use crate::hash::KeyHasher;
use crate::node::{NodeId, NodeSet};
use crate::router::Router;

/// Keys routed by the probe encoding of an opaque router.
pub(crate) const PROBE_KEYS: usize = 4096;
/// 64-bit hashes routed (via [`Router::route_hash`]) by the probe encoding, when supported.
pub(crate) const PROBE_HASHES: usize = 1024;

/// Version tag at the start of every canonical encoding.
const TAG: &[u8] = b"hashroute.fingerprint.v1";

/// What the crate can see of a router: its concrete type when known, otherwise only the trait.
///
/// New routers add a variant (the enum is non-exhaustive) and an [`Inspect`] impl, so that
/// [`fingerprint`] and [`crate::migration::plan`] encode them exactly.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub enum View<'a> {
    /// A consistent-hash ring.
    Ring(&'a Ring),
    /// `hash % N`.
    Modulo(&'a Modulo),
    /// Jump consistent hash.
    Jump(&'a Jump),
    /// A Ketama continuum (32-bit points).
    Ketama(&'a Ketama),
    /// Redis Cluster slots.
    Slots(&'a RedisSlots),
    /// A ring over explicit tokens.
    TokenRing(&'a TokenRing),
    /// A router known only through the [`Router`] trait.
    Opaque(&'a dyn Router),
}

impl fmt::Debug for View<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (kind, r): (&str, &dyn Router) = match *self {
            View::Ring(r) => ("Ring", r),
            View::Modulo(r) => ("Modulo", r),
            View::Jump(r) => ("Jump", r),
            View::Ketama(r) => ("Ketama", r),
            View::Slots(r) => ("Slots", r),
            View::TokenRing(r) => ("TokenRing", r),
            View::Opaque(r) => ("Opaque", r),
        };
        write!(f, "View::{kind}({} over {} nodes)", r.algorithm(), r.node_count())
    }
}

/// Recovers a router's concrete type for the operations that need its structure (exact
/// fingerprints, exact migration plans). Implemented for the crate's routers, for `Box`/`Arc`
/// of them, for [`Failover`] and for `dyn Router` (which is [`View::Opaque`]).
pub trait Inspect: Router {
    /// The router's concrete view.
    fn view(&self) -> View<'_>;
}

impl Inspect for Ring {
    fn view(&self) -> View<'_> {
        View::Ring(self)
    }
}

impl Inspect for Modulo {
    fn view(&self) -> View<'_> {
        View::Modulo(self)
    }
}

impl Inspect for Jump {
    fn view(&self) -> View<'_> {
        View::Jump(self)
    }
}

impl Inspect for Ketama {
    fn view(&self) -> View<'_> {
        View::Ketama(self)
    }
}

impl Inspect for RedisSlots {
    fn view(&self) -> View<'_> {
        View::Slots(self)
    }
}

impl Inspect for TokenRing {
    fn view(&self) -> View<'_> {
        View::TokenRing(self)
    }
}

impl Inspect for Rendezvous {
    /// Opaque for now: the scoring mode (default or go-rendezvous compatible) has no public
    /// accessor, so the probe encoding is what captures it.
    fn view(&self) -> View<'_> {
        View::Opaque(self)
    }
}

/// Routers fingerprinted by the probe encoding (their routes, not their internals): correct
/// for any router, and enough for agreement checks between clients.
macro_rules! opaque_inspect {
    ($($t:ty),*) => {$(
        impl Inspect for $t {
            fn view(&self) -> View<'_> {
                View::Opaque(self)
            }
        }
    )*};
}
opaque_inspect!(crate::Maglev, crate::MultiProbe, crate::Memento, crate::Anchor);
opaque_inspect!(crate::JumpBack, crate::FlipHash, crate::PowerCh, crate::BinomialHash, crate::JumpBackAnchor);

impl<R: Router> Inspect for Failover<R> {
    /// Opaque: its routes depend on the down marks, not only on the inner router.
    fn view(&self) -> View<'_> {
        View::Opaque(self)
    }
}

impl Inspect for dyn Router + '_ {
    /// Downcasts to the concrete router when it is one this module knows (so a
    /// `Box<dyn Router>` from `RouterSpec::build` gets the exact encoding), else opaque.
    fn view(&self) -> View<'_> {
        let any: &dyn std::any::Any = self;
        if let Some(r) = any.downcast_ref::<Ring>() {
            return r.view();
        }
        if let Some(r) = any.downcast_ref::<Ketama>() {
            return r.view();
        }
        if let Some(r) = any.downcast_ref::<Modulo>() {
            return r.view();
        }
        if let Some(r) = any.downcast_ref::<Jump>() {
            return r.view();
        }
        if let Some(r) = any.downcast_ref::<RedisSlots>() {
            return r.view();
        }
        if let Some(r) = any.downcast_ref::<TokenRing>() {
            return r.view();
        }
        if let Some(b) = any.downcast_ref::<Box<dyn Router>>() {
            return (**b).view();
        }
        if let Some(a) = any.downcast_ref::<Arc<dyn Router>>() {
            return (**a).view();
        }
        View::Opaque(self)
    }
}

impl<T: Inspect + ?Sized> Inspect for Box<T> {
    fn view(&self) -> View<'_> {
        (**self).view()
    }
}

impl<T: Inspect + ?Sized> Inspect for Arc<T> {
    fn view(&self) -> View<'_> {
        (**self).view()
    }
}

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

/// The route fingerprint of `router`. Works on concrete routers (exact encoding) and on
/// `dyn Router` (probe encoding, see the module docs).
///
/// Cost: O(P) for a ring of P points (≈ 10 bytes hashed per point), O(N log N) for the node
/// names; the probe encoding routes 4096 keys and 1024 hashes. Memory: the
/// canonical encoding is built in one buffer (≈ 12 bytes per ring point).
pub fn fingerprint<R: Inspect + ?Sized>(router: &R) -> Fingerprint {
    Fingerprint(xxhash_rust::xxh3::xxh3_128(&canonical_bytes(router)))
}

/// The canonical encoding that [`fingerprint`] hashes: useful to diff two routers' definitions.
pub fn canonical_bytes<R: Inspect + ?Sized>(router: &R) -> Vec<u8> {
    let mut c = Canon(Vec::with_capacity(256));
    c.bytes(TAG);
    c.str(router.algorithm());
    match router.view() {
        View::Ring(ring) => {
            c.str("exact");
            c.hasher(ring.hasher());
            let ranks = c.sorted_names(ring.nodes());
            c.u64(ring.points().len() as u64);
            for (&p, &o) in ring.points().iter().zip(ring.owners()) {
                c.u64(p);
                c.u32(ranks[o as usize]);
            }
        }
        View::Modulo(m) => {
            c.str("exact");
            c.hasher(m.hasher());
            c.names_in_order(m.nodes());
        }
        View::Jump(j) => {
            c.str("exact");
            c.hasher(j.hasher());
            c.names_in_order(j.nodes());
        }
        View::Ketama(k) => {
            c.str("exact");
            c.str(k.variant().name());
            if k.key_hasher() != crate::KeyHasher::Md5 {
                // Only the twemproxy and one-at-a-time variants hash keys otherwise; MD5 stays
                // unencoded so that every existing fingerprint is unchanged.
                c.hasher(k.key_hasher());
            }
            let ranks = c.sorted_names(k.nodes());
            c.u64(k.points().len() as u64);
            for (&p, &o) in k.points().iter().zip(k.owners()) {
                c.u32(p);
                c.u32(ranks[o as usize]);
            }
        }
        View::Slots(s) => {
            c.str("exact");
            // Slot ranges with owner names: order-dependent exactly as the layout is.
            let ranges = s.ranges();
            c.u64(ranges.len() as u64);
            for (range, owner) in ranges {
                c.u32(u32::from(*range.start()));
                c.u32(u32::from(*range.end()));
                c.str(s.node_name(owner));
            }
        }
        View::TokenRing(ring) => {
            // As a ring's points: the tokens (weights and labels do not change routes).
            c.str("exact");
            c.hasher(ring.hasher());
            let ranks = c.sorted_names(ring.nodes());
            c.u64(ring.positions().len() as u64);
            for (&p, &o) in ring.positions().iter().zip(ring.owners()) {
                c.u64(p);
                c.u32(ranks[o as usize]);
            }
        }
        View::Opaque(r) => probe(&mut c, r),
    }
    c.0
}

/// Algorithms whose routes do not depend on the order nodes were given in.
fn order_independent(algorithm: &str) -> bool {
    matches!(algorithm, "ring" | "ketama" | "rendezvous" | "maglev" | "multiprobe")
}

fn probe(c: &mut Canon, r: &dyn Router) {
    c.str("probe");
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
}

/// Little-endian, length-prefixed canonical writer.
struct Canon(Vec<u8>);

impl Canon {
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
        let mut order: Vec<u32> = (0..nodes.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| nodes.name(NodeId::from_index(a)).cmp(nodes.name(NodeId::from_index(b))));
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
    use crate::Node;

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

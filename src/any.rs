//! [`AnyRouter`]: a configured router of any algorithm, as one closed type.

use std::ops::ControlFlow;

use crate::algorithm::Algorithm;
use crate::arcs::Arcs;
use crate::error::Result;
use crate::node::{NodeId, NodeSet};
use crate::router::Router;
use crate::{
    Anchor, BinomialHash, EnvoyRing, FlipHash, Haproxy, Jump, JumpBack, JumpBackAnchor, Kafka, Ketama, Maglev, Memento,
    Modulo, MultiProbe, Nginx, PowerCh, RedisSlots, Rendezvous, Ring, TokenRing,
};

/// A router of any algorithm: what [`RouterSpec::build`](crate::RouterSpec::build) returns. It
/// implements [`Router`] by `match`ing on the variant (no trait object, no downcasting), and a
/// `match` recovers the concrete router for what only it offers (a ring's points, Maglev's
/// table).
///
/// Cost: one branch on the variant per call, which the branch predictor hides when one router
/// serves many keys, plus what a loop over keys loses by not knowing the variant (a loop over
/// the concrete type keeps the router's fields in registers): a small constant per call, which
/// shows only where the whole route costs a few nanoseconds (the bucket functions, Redis
/// slots; the report's dispatch section measures it for every algorithm). Route many keys
/// with [`route_batch`](Router::route_batch), which dispatches once per batch, or use the
/// concrete type where that matters. `#[non_exhaustive]`: new algorithms add variants.
// `repr(u8)`: a plain tag byte rather than a tag hidden in a niche of one variant's fields, so
// `route`'s dispatch is one byte load and a jump table; decoding the niche (load, xor, test,
// cmov) was a visible share of a bucket router's route in the `jumpfamily/*-any` benchmarks.
#[derive(Clone, Debug)]
#[non_exhaustive]
#[repr(u8)]
pub enum AnyRouter {
    /// [`Algorithm::Modulo`].
    Modulo(Modulo),
    /// [`Algorithm::Ring`].
    Ring(Ring),
    /// [`Algorithm::Ketama`].
    Ketama(Ketama),
    /// [`Algorithm::Jump`].
    Jump(Jump),
    /// [`Algorithm::Rendezvous`].
    Rendezvous(Rendezvous),
    /// [`Algorithm::Slots`].
    Slots(RedisSlots),
    /// [`Algorithm::Maglev`].
    Maglev(Maglev),
    /// [`Algorithm::MultiProbe`].
    MultiProbe(MultiProbe),
    /// [`Algorithm::Memento`].
    Memento(Memento),
    /// [`Algorithm::Anchor`].
    Anchor(Anchor),
    /// [`Algorithm::JumpBack`].
    JumpBack(JumpBack),
    /// [`Algorithm::FlipHash`].
    FlipHash(FlipHash),
    /// [`Algorithm::Power`].
    Power(PowerCh),
    /// [`Algorithm::Binomial`].
    Binomial(BinomialHash),
    /// [`Algorithm::JumpBackAnchor`].
    JumpBackAnchor(JumpBackAnchor),
    /// [`Algorithm::Nginx`].
    Nginx(Nginx),
    /// [`Algorithm::Haproxy`].
    Haproxy(Haproxy),
    /// [`Algorithm::EnvoyRing`].
    EnvoyRing(EnvoyRing),
    /// [`Algorithm::Kafka`].
    Kafka(Kafka),
    /// [`Algorithm::TokenRing`].
    TokenRing(TokenRing),
}

/// `$body` with `$r` bound to the router inside any variant of `$any`: the one `match` every
/// `Router` method of [`AnyRouter`] forwards through.
macro_rules! each {
    ($any:expr, $r:ident => $body:expr) => {
        match $any {
            AnyRouter::Modulo($r) => $body,
            AnyRouter::Ring($r) => $body,
            AnyRouter::Ketama($r) => $body,
            AnyRouter::Jump($r) => $body,
            AnyRouter::Rendezvous($r) => $body,
            AnyRouter::Slots($r) => $body,
            AnyRouter::Maglev($r) => $body,
            AnyRouter::MultiProbe($r) => $body,
            AnyRouter::Memento($r) => $body,
            AnyRouter::Anchor($r) => $body,
            AnyRouter::JumpBack($r) => $body,
            AnyRouter::FlipHash($r) => $body,
            AnyRouter::Power($r) => $body,
            AnyRouter::Binomial($r) => $body,
            AnyRouter::JumpBackAnchor($r) => $body,
            AnyRouter::Nginx($r) => $body,
            AnyRouter::Haproxy($r) => $body,
            AnyRouter::EnvoyRing($r) => $body,
            AnyRouter::Kafka($r) => $body,
            AnyRouter::TokenRing($r) => $body,
        }
    };
}

impl Router for AnyRouter {
    fn algorithm(&self) -> Algorithm {
        each!(self, r => r.algorithm())
    }
    fn nodes(&self) -> &NodeSet {
        each!(self, r => r.nodes())
    }
    // Always inlined: the compiler left it out of line in criterion's closures, and every call
    // then paid the prologue of a function that holds all twenty routes, a large share of a
    // bucket router's whole route. Inlined, the caller's loop runs only its variant's branch.
    #[inline(always)]
    fn route(&self, key: &[u8]) -> NodeId {
        each!(self, r => r.route(key))
    }
    fn route_batch(&self, keys: &[&[u8]], out: &mut [NodeId]) {
        each!(self, r => r.route_batch(keys, out))
    }
    #[inline]
    fn route_hash(&self, hash: u64) -> Result<NodeId> {
        each!(self, r => r.route_hash(hash))
    }
    fn preference(&self, key: &[u8], visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) -> Result<()> {
        each!(self, r => r.preference(key, visit))
    }
    fn memory_bytes(&self) -> usize {
        each!(self, r => r.memory_bytes())
    }
    fn replicas(&self, key: &[u8], n: usize) -> Result<Vec<NodeId>> {
        each!(self, r => r.replicas(key, n))
    }
    fn arcs(&self) -> Option<Arcs<'_>> {
        each!(self, r => r.arcs())
    }
    fn canonical_bytes(&self) -> Vec<u8> {
        each!(self, r => r.canonical_bytes())
    }
}

/// `&*router` is the concrete router as a `&dyn Router`, so the [`Router`] methods work
/// without importing the trait and `AnyRouter` passes wherever `&dyn Router` is asked for.
impl std::ops::Deref for AnyRouter {
    type Target = dyn Router;

    fn deref(&self) -> &(dyn Router + 'static) {
        each!(self, r => r)
    }
}

impl AnyRouter {
    /// A new router with `node` added (the concrete router's `with_node`: incremental where
    /// the algorithm allows, with the movement it documents).
    ///
    /// # Errors
    /// The concrete router's errors.
    pub fn with_node(&self, node: crate::Node) -> Result<AnyRouter> {
        Ok(each!(self, r => r.with_node(node)?.into()))
    }

    /// A new router without the node named `name` (the concrete router's `without_node`).
    ///
    /// # Errors
    /// The concrete router's errors: [`Error::UnknownNode`](crate::Error::UnknownNode),
    /// [`Error::NoNodes`](crate::Error::NoNodes), [`Error::Unsupported`](crate::Error::Unsupported)
    /// where only the last node can go.
    pub fn without_node(&self, name: &str) -> Result<AnyRouter> {
        Ok(each!(self, r => r.without_node(name)?.into()))
    }

    /// A new router with the node named `name` at `weight`, for the algorithms with weights
    /// ([`Algorithm::supports_weights`]).
    ///
    /// # Errors
    /// The concrete router's errors; [`Error::Unsupported`](crate::Error::Unsupported) for an
    /// algorithm without weights.
    pub fn with_weight(&self, name: &str, weight: f64) -> Result<AnyRouter> {
        Ok(match self {
            AnyRouter::Ring(r) => r.with_weight(name, weight)?.into(),
            AnyRouter::Ketama(r) => r.with_weight(name, weight)?.into(),
            AnyRouter::Rendezvous(r) => r.with_weight(name, weight)?.into(),
            AnyRouter::Maglev(r) => r.with_weight(name, weight)?.into(),
            AnyRouter::Nginx(r) => r.with_weight(name, weight)?.into(),
            AnyRouter::Haproxy(r) => r.with_weight(name, weight)?.into(),
            AnyRouter::EnvoyRing(r) => r.with_weight(name, weight)?.into(),
            AnyRouter::TokenRing(r) => r.with_weight(name, weight)?.into(),
            other => {
                let algorithm = other.algorithm().name();
                return Err(crate::Error::Unsupported { algorithm, operation: "weights" });
            }
        })
    }
}

/// `From<X> for AnyRouter` for every router: `AnyRouter::from(ring)`, `ring.into()`.
macro_rules! from_router {
    ($($variant:ident($router:ty)),* $(,)?) => {$(
        impl From<$router> for AnyRouter {
            fn from(r: $router) -> AnyRouter {
                AnyRouter::$variant(r)
            }
        }
    )*};
}

from_router!(
    Modulo(Modulo),
    Ring(Ring),
    Ketama(Ketama),
    Jump(Jump),
    Rendezvous(Rendezvous),
    Slots(RedisSlots),
    Maglev(Maglev),
    MultiProbe(MultiProbe),
    Memento(Memento),
    Anchor(Anchor),
    JumpBack(JumpBack),
    FlipHash(FlipHash),
    Power(PowerCh),
    Binomial(BinomialHash),
    JumpBackAnchor(JumpBackAnchor),
    Nginx(Nginx),
    Haproxy(Haproxy),
    EnvoyRing(EnvoyRing),
    Kafka(Kafka),
    TokenRing(TokenRing),
);

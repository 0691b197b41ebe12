//! # hashroute
//!
//! Route keys to nodes with consistent hashing: the kernel on the hot path of cache clients,
//! proxies and sharded stores.
//!
//! ```
//! use hashroute::{NodeId, Ring, Router};
//! let names: Vec<String> = (0..1000).map(|i| format!("node-{i}")).collect();
//! let ring = Ring::builder().vnodes(160).nodes(names.iter()).build().unwrap();
//! let id: NodeId = ring.route(b"user:42");
//! let _name: &str = ring.node_name(id);
//! let keys: Vec<&[u8]> = ["a", "b", "c"].iter().map(|k| k.as_bytes()).collect();
//! let mut out = vec![NodeId::default(); keys.len()];
//! ring.route_batch(&keys, &mut out);
//! assert_eq!(out[0], ring.route(b"a"));
//! let bucket: u32 = hashroute::jump::bucket(0xDEAD_BEEF, 1000);
//! assert!(bucket < 1000);
//! ```
//!
//! ## Which algorithm
//!
//! One row per [`Algorithm`], generated from its facts ([`Algorithm::facts`]; the table is
//! `src/algorithms.md`, checked against the facts by a test). [`BoundedLoads`] wraps any
//! router with a preference list to cap every node at (1+ε)× the mean load. The weights
//! column says whether a join, a leave or a weight change of a weighted cluster moves keys
//! only to or from the changed node ([`AlgorithmFacts::weight_changes_move_only_the_node`]);
//! Ketama, Maglev and Envoy's ring keep their systems' formulas, which redistribute.
//!
#![doc = include_str!("algorithms.md")]
//!
//! ## Concepts
//!
//! - A [`NodeSet`] validates names and weights once and maps names to dense [`NodeId`]s.
//! - Every algorithm implements [`Router`]: [`route`](Router::route),
//!   [`route_batch`](Router::route_batch), [`route_hash`](Router::route_hash) for a
//!   pre-computed 64-bit hash, and [`replicas`](Router::replicas) from the router's preference
//!   list.
//! - Every router is built the same way: `X::builder()` (a [`Builder`] with the options that
//!   algorithm takes, e.g. [`Builder::<Ring>::vnodes`]) or `X::from_names(names)` for the
//!   defaults. Routers are immutable: `with_node` / `without_node` / `with_weight` (where the
//!   algorithm allows the change) take `&self` and return a new router or a typed [`Error`].
//!   Value builders ([`Node`], [`RouterSpec`]) take `self` and return the changed value.
//! - [`Failover`] marks nodes down without moving any other key.
//! - Hashers ([`KeyHasher`]) are stable by contract: a key's route does not change across runs,
//!   machines or versions. Golden files in `tests/golden/` freeze it.
//!
//! Bad input is an [`Error`], never a panic; only violated preconditions on arguments the
//! programmer controls panic, as documented under `# Panics`.
//!
//! ## Features
//!
//! None is on by default: the default build compiles xxhash-rust, crc (+ crc-catalog) and
//! memchr, no proc-macro crate, and starts no thread. Every router, hasher and operating tool
//! is there without features.
//!
//! - `parallel` (rayon): [`ParRouteBatch`] and parallel ring builds
//!   ([`Builder::<Ring>::parallel`]), used only when asked for.
//! - `shared` (arc-swap): [`SharedRouter`], lock-free reads with atomic generation swaps.
//! - `serde` (serde, serde_json, toml): [`RouterSpec`], `ClusterConfig` and `NodeConfig` in
//!   JSON or TOML.
//!
//! The recommendation, sweeps and cache simulation are the `hashroute-analysis` crate; the
//! `hashroute` command is the `hashroute-cli` crate; rings stored in etcd are `hashroute-etcd`.
//!
//! ## When not to use it
//!
//! - **Keys an attacker chooses.** Every hasher here is unkeyed and stable by contract (that
//!   is what keeps a route the same across processes and machines), so anyone who knows the
//!   node names can search for keys that all land on one node. If clients choose keys, route
//!   a keyed hash of the key instead: compute a keyed MAC (e.g. SipHash or HMAC with a secret
//!   every router shares) and pass it to [`Router::route_hash`], or prefix keys with a secret
//!   before routing; rate-limit per node either way.
//! - **Agreeing with one system's client.** Routes agree with memcached clients, the proxies,
//!   Redis, Kafka or Cassandra only through the matching router and hasher (`Ketama` with its
//!   variant, `Nginx`, `RedisSlots`, …), never through [`Ring`] or [`Jump`].
//! - **A handful of static nodes.** With a fixed node count and no resizes, `hash % N`
//!   ([`Modulo`]) is simpler and as good.
//!
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod algo;
mod algorithm;
mod any;
mod arch;
pub mod arcs;
mod circle;
#[cfg(feature = "serde")]
mod cluster_config;
mod error;
mod failover;
pub mod fingerprint;
mod hash;
pub mod migration;
mod mix;
mod node;
pub mod placement;
mod proxy;
mod router;
mod search;
#[cfg(feature = "shared")]
pub mod shared;
mod spec;

pub use algo::anchor::Anchor;
pub use algo::binomial::BinomialHash;
pub use algo::bounded::BoundedLoads;
pub use algo::builder::Builder;
pub use algo::envoy_ring::EnvoyRing;
pub use algo::fliphash::FlipHash;
pub use algo::haproxy::Haproxy;
pub use algo::jump::Jump;
pub use algo::jumpback::JumpBack;
pub use algo::jumpback_anchor::JumpBackAnchor;
pub use algo::kafka::Kafka;
pub use algo::ketama::{Ketama, KetamaVariant};
pub use algo::maglev::Maglev;
pub use algo::memento::Memento;
pub use algo::modulo::Modulo;
pub use algo::multiprobe::MultiProbe;
pub use algo::nginx::Nginx;
pub use algo::power_ch::PowerCh;
pub use algo::rendezvous::Rendezvous;
pub use algo::ring::Ring;
pub use algo::slots::RedisSlots;
pub use algo::token_ring::TokenRing;
pub use algorithm::{Algorithm, AlgorithmFacts, Param};
pub use any::AnyRouter;
#[cfg(feature = "serde")]
pub use cluster_config::{ClusterConfig, NodeConfig};
pub use error::{Error, Result};
pub use failover::Failover;
pub use fingerprint::fingerprint;
pub use hash::KeyHasher;
pub use migration::MigrationPlan;
pub use node::{Node, NodeId, NodeSet};
#[cfg(feature = "parallel")]
pub use router::ParRouteBatch;
pub use router::Router;
#[cfg(feature = "shared")]
pub use shared::SharedRouter;
pub use spec::RouterSpec;
pub use token_ring::Replication;

/// The generic router behind the memory-free bucket functions ([`Jump`], [`JumpBack`],
/// [`FlipHash`], [`PowerCh`], [`BinomialHash`]): node `i` is bucket `i`.
pub mod bucket {
    pub use crate::algo::bucketed::{BucketFn, Bucketed, BucketedOptions};
}

/// Token rings beyond routing: Cassandra's replica placement ([`Replication`]) and the token
/// allocator behind [`TokenRing`]'s membership changes ([`TokenAllocator`](token_ring::TokenAllocator)).
pub mod token_ring {
    pub use crate::algo::token_ring::allocate::{AllocatedNode, RingNode, TokenAllocator};
    pub use crate::algo::token_ring::Replication;
}

/// Ceph's CRUSH: maps, rules and placement groups ([`crush::CrushMap`], [`crush::CrushRouter`],
/// [`crush::Pool`]), exact with `crushtool` and `osdmaptool`.
pub mod crush {
    pub use crate::algo::crush::*;
}

/// How a [`Ring`] searches its points ([`Layout`](crate::circle::Layout)) and when it builds an index.
pub mod ring {
    pub use crate::circle::{Layout, INDEX_MIN_POINTS};
}

/// Jump consistent hash on a 64-bit key: the memory-free kernel behind [`Jump`].
pub mod jump {
    pub use crate::algo::jump::{bucket, bucket_batch, try_bucket, JumpBucket};
}

/// JumpBackHash (Ertl 2024) on a 64-bit key: the memory-free kernel behind [`JumpBack`],
/// bit-exact with hash4j.
pub mod jumpback {
    pub use crate::algo::jumpback::{
        bucket, bucket_batch, try_bucket, try_bucket_with, JumpBackBucket, JumpBackGenerator,
    };
    pub use crate::algo::jumpback_anchor::JumpBackAnchorBucketSet;
}

/// FlipHash (Masson & Lee 2024) on a 64-bit key: the kernel behind [`FlipHash`], bit-exact
/// with the `fliphash` crate.
pub mod fliphash {
    pub use crate::algo::fliphash::{bucket, bucket_seeded, try_bucket, FlipHashBucket};
}

/// Power consistent hashing (Leu 2023) on a 64-bit key: the kernel behind [`PowerCh`],
/// bit-exact with the `power-consistent-hash` crate.
pub mod power {
    pub use crate::algo::power_ch::{bucket, try_bucket, PowerBucket};
}

/// BinomialHash (Coluzzi et al. 2024) on a 64-bit key hash: the kernel behind
/// [`BinomialHash`], bit-exact with SUPSI's reference engine.
pub mod binomial {
    pub use crate::algo::binomial::{bucket, try_bucket, BinomialBucket};
}

/// Cassandra's `Murmur3Partitioner` token of a key, as the DataStax drivers compute it, and the
/// order-preserving map between signed tokens and the unsigned circle positions a
/// [`TokenRing`] searches.
pub mod cassandra {
    pub use crate::hash::cassandra::{murmur3_token, position_to_token, token_to_position};
}

/// Redis Cluster's key-to-slot function and slot layouts, behind [`RedisSlots`].
pub mod slots {
    pub use crate::algo::slots::{hashed_part, key_slot, key_slot_batch, redis_cli_ranges, SLOTS};
}

/// Kernel internals for the crate's own benchmarks, tests and fuzz targets: not part of the
/// API, no stability promise. Each item says what it is for where it is defined.
#[doc(hidden)]
pub mod internals {
    pub use crate::algo::jump::bucket_batch_with as jump_bucket_batch_with;
    pub use crate::algo::jumpback::bucket_batch_with as jumpback_bucket_batch_with;
    pub use crate::arch::Isa;
    pub use crate::arch::{generic::md5_words, md5_batch_with};
    pub use crate::hash::{crc16_xmodem, md5_digest, murmur3_x64_128, murmur3_x86_32};

    /// The same rendezvous router on an explicit SIMD path (benchmarks and tests).
    ///
    /// # Errors
    /// [`Error::Unsupported`](crate::Error::Unsupported) when this CPU lacks `isa`.
    pub fn rendezvous_with_isa(r: &crate::Rendezvous, isa: Isa) -> crate::Result<crate::Rendezvous> {
        r.with_isa(isa)
    }

    /// The SIMD path a rendezvous router's unweighted kernel runs on.
    pub fn rendezvous_isa(r: &crate::Rendezvous) -> Isa {
        r.isa()
    }
    pub use crate::search::{branchless, branchless_batch, oracle, Eytzinger, Radix, Tree, BATCH, LEAF, NODE};
}

/// The README's Rust examples, compiled and run as doctests so that they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

//! Router configuration: which algorithm, with which parameters, as one plain value.
//!
//! [`RouterSpec::build`] is the single place where a configuration becomes a router: the
//! `hashroute` CLI, the benchmark sweep and serialized configurations all go through it, so a
//! combination that makes no sense (a vnode count for jump, a non-MD5 hash for Ketama, a Ketama
//! variant for a ring) is rejected the same way everywhere, with a one-line [`Error`].
//!
//! ```
//! use hashroute::{Algorithm, RouterSpec};
//! use hashroute::{NodeSet, Router};
//! let spec = RouterSpec::new(Algorithm::Ring).with_vnodes(100);
//! let router = spec.build(NodeSet::from_names(["a", "b", "c"]).unwrap()).unwrap();
//! assert_eq!(router.algorithm(), Algorithm::Ring);
//! assert!(RouterSpec::new(Algorithm::Jump).with_vnodes(100).validate().is_err());
//! ```
//!
//! Algorithm parameters and where they apply (an option given to an algorithm that does not
//! take it is an error, not ignored):
//!
//! | option | algorithm | default |
//! |---|---|---|
//! | `vnodes` | ring | [`Ring::DEFAULT_VNODES`] (160) |
//! | `ketama_variant` | ketama | libketama |
//! | `table_size` (a prime) | maglev | [`DEFAULT_TABLE_SIZE`] (65537) |
//! | `probes` | multiprobe | [`DEFAULT_PROBES`] (21) |
//! | `capacity` | anchor | [`RouterSpec::effective_capacity`]: twice the node count |
//! | `hasher` | all but ketama (md5) and slots (crc16) | xxh3, seed 0 |
//!
//! With the `serde` feature, [`Algorithm`] and [`RouterSpec`] serialize to and from JSON or
//! TOML: `{"algorithm": "ring", "vnodes": 160, "hasher": {"name": "xxh3", "seed": 0}}`. Unset
//! options are omitted and unknown fields are rejected.

use crate::algo::jumpback::JumpBackGenerator;
use crate::algo::maglev::{self, DEFAULT_TABLE_SIZE, MAX_TABLE_SIZE};
use crate::algo::multiprobe::{DEFAULT_PROBES, MAX_PROBES};
use crate::algorithm::{Algorithm, Param};
use crate::any::AnyRouter;
use crate::error::{Error, Result};
use crate::hash::KeyHasher;
use crate::node::NodeSet;
use crate::node::MAX_NODES;
use crate::{Anchor, Jump, Ketama, KetamaVariant, Maglev, Memento, Modulo, MultiProbe, RedisSlots, Rendezvous, Ring};
use crate::{BinomialHash, FlipHash, JumpBack, JumpBackAnchor, PowerCh, TokenRing};

/// A router configuration: an algorithm plus the parameters that apply to it. Unset options
/// (`None`) take the algorithm's defaults.
///
/// Construct with [`RouterSpec::new`] and the `with_*` methods, or by deserializing (feature
/// `serde`). Nothing is checked until [`RouterSpec::validate`] or [`RouterSpec::build`].
/// `#[non_exhaustive]`: more parameters may be added as fields.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct RouterSpec {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Virtual nodes per weight-1 node; ring only (default
    /// [`Ring::DEFAULT_VNODES`]).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub vnodes: Option<u64>,
    /// The key hasher (default [`Algorithm::default_hasher`]). Ketama accepts only MD5, Redis
    /// slots only CRC16.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none", with = "hasher_serde"))]
    pub hasher: Option<KeyHasher>,
    /// The Ketama client to be compatible with (default [`KetamaVariant::Libketama`]); Ketama
    /// only. Serialized by [`KetamaVariant::name`].
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none", with = "ketama_variant_serde")
    )]
    pub ketama_variant: Option<KetamaVariant>,
    /// Lookup-table size, a prime; Maglev only (default [`Maglev::DEFAULT_TABLE_SIZE`], 65537).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub table_size: Option<u64>,
    /// Probes per key; multi-probe only (default [`MultiProbe::DEFAULT_PROBES`], 21).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub probes: Option<u32>,
    /// Total bucket capacity, at least the node count; AnchorHash only (default twice the node
    /// count, see [`RouterSpec::effective_capacity`]).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub capacity: Option<u32>,
    /// The random generator; JumpBack only (default [`JumpBackGenerator::SplitMix64`]).
    /// Serialized by [`JumpBackGenerator::name`].
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none", with = "generator_serde"))]
    pub generator: Option<JumpBackGenerator>,
    /// Envoy `minimum_ring_size`; envoy-ring only (default 1024).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub min_ring_size: Option<u64>,
    /// Envoy `maximum_ring_size`; envoy-ring only (default 8388608).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub max_ring_size: Option<u64>,
    /// HAProxy `balance uri whole` (hash the query too); haproxy only (default false).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub uri_whole: Option<bool>,
    /// Tokens the allocator gives each node that comes without tokens, in node order;
    /// token-ring only. Unset: every node must bring its tokens.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub tokens_per_node: Option<u32>,
}

impl RouterSpec {
    /// A configuration of `algorithm` with every option at its default.
    pub fn new(algorithm: Algorithm) -> RouterSpec {
        RouterSpec {
            algorithm,
            vnodes: None,
            hasher: None,
            ketama_variant: None,
            table_size: None,
            probes: None,
            capacity: None,
            generator: None,
            min_ring_size: None,
            max_ring_size: None,
            uri_whole: None,
            tokens_per_node: None,
        }
    }

    /// Sets the random generator (JumpBack only).
    #[must_use]
    pub fn with_generator(mut self, generator: JumpBackGenerator) -> RouterSpec {
        self.generator = Some(generator);
        self
    }

    /// Sets the tokens per node the allocator gives nodes without tokens (token-ring only).
    #[must_use]
    pub fn with_tokens_per_node(mut self, tokens_per_node: u32) -> RouterSpec {
        self.tokens_per_node = Some(tokens_per_node);
        self
    }

    /// Sets the virtual-node count (ring only).
    #[must_use]
    pub fn with_vnodes(mut self, vnodes: u64) -> RouterSpec {
        self.vnodes = Some(vnodes);
        self
    }

    /// Sets the key hasher.
    #[must_use]
    pub fn with_hasher(mut self, hasher: KeyHasher) -> RouterSpec {
        self.hasher = Some(hasher);
        self
    }

    /// Sets the Ketama variant (Ketama only).
    #[must_use]
    pub fn with_ketama_variant(mut self, variant: KetamaVariant) -> RouterSpec {
        self.ketama_variant = Some(variant);
        self
    }

    /// Sets the lookup-table size (Maglev only; must be a prime).
    #[must_use]
    pub fn with_table_size(mut self, table_size: u64) -> RouterSpec {
        self.table_size = Some(table_size);
        self
    }

    /// Sets the probe count (multi-probe only).
    #[must_use]
    pub fn with_probes(mut self, probes: u32) -> RouterSpec {
        self.probes = Some(probes);
        self
    }

    /// Sets the bucket capacity (AnchorHash only).
    #[must_use]
    pub fn with_capacity(mut self, capacity: u32) -> RouterSpec {
        self.capacity = Some(capacity);
        self
    }

    /// The AnchorHash capacity [`build`](RouterSpec::build) will use for `node_count` nodes: the
    /// configured one, else `2 × node_count` (capped at [`NodeSet::MAX_NODES`]).
    ///
    /// Why twice: AnchorHash can only grow into buckets reserved up front, and its lookups cost
    /// an expected `1 + ln(capacity / working)` re-hashes. Doubling leaves room to double the
    /// cluster while keeping that below `1 + ln 2 ≈ 1.7` for the initial membership, at 24 bytes
    /// per reserved bucket. Set it explicitly when the cluster may grow further.
    pub fn effective_capacity(&self, node_count: usize) -> u32 {
        self.capacity.unwrap_or_else(|| node_count.saturating_mul(2).min(MAX_NODES) as u32)
    }

    /// The hasher [`build`](RouterSpec::build) will use: the configured one, else the
    /// algorithm's default.
    pub fn effective_hasher(&self) -> KeyHasher {
        self.hasher.unwrap_or_else(|| self.algorithm.default_hasher())
    }

    /// Checks that every option set applies to the algorithm and is in range, without building
    /// anything. O(1). [`build`](RouterSpec::build) runs it first.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming the option (`vnodes`, `hash`, `variant`, `table size`,
    /// `probes`, `capacity`) and why, or [`Error::InvalidVnodes`] for a vnode count out of range.
    /// Checks that need the node count (a table or capacity smaller than it) are left to
    /// [`build`](RouterSpec::build).
    pub fn validate(&self) -> Result<()> {
        let algo = self.algorithm;
        if let Some(refused) = self.params_set().find(|&p| p != Param::Hasher && !algo.takes(p)) {
            return Err(refused.refused(algo));
        }
        self.validate_ranges()?;
        if let Some(hasher) = self.hasher {
            let fixed = crate::proxy::fixed_hashers(self);
            if !algo.takes_hasher() && !fixed.contains(&hasher) {
                let names: Vec<&str> = fixed.iter().map(KeyHasher::name).collect();
                return Err(Error::InvalidParameter {
                    name: "hash",
                    reason: format!("{algo} hashes keys with {} only (got {})", names.join(" or "), hasher.name()),
                });
            }
        }
        Ok(())
    }

    /// The options this spec sets, in [`Param::ALL`]'s order.
    pub fn params_set(&self) -> impl Iterator<Item = Param> + '_ {
        Param::ALL.iter().copied().filter(move |p| match p {
            Param::Vnodes => self.vnodes.is_some(),
            Param::Hasher => self.hasher.is_some(),
            Param::KetamaVariant => self.ketama_variant.is_some(),
            Param::TableSize => self.table_size.is_some(),
            Param::Probes => self.probes.is_some(),
            Param::Capacity => self.capacity.is_some(),
            Param::Generator => self.generator.is_some(),
            Param::RingSize => self.min_ring_size.is_some() || self.max_ring_size.is_some(),
            Param::UriWhole => self.uri_whole.is_some(),
            Param::TokensPerNode => self.tokens_per_node.is_some(),
        })
    }

    /// The range checks of the options that have one (the algorithm takes them: checked first).
    fn validate_ranges(&self) -> Result<()> {
        if let Some(vnodes) = self.vnodes {
            let max = crate::algo::ring::MAX_VNODES;
            if vnodes == 0 || vnodes > u64::from(max) {
                return Err(Error::InvalidVnodes { vnodes, max });
            }
        }
        if let Some(m) = self.table_size {
            let bad = |reason: String| Err(Error::InvalidParameter { name: "table size", reason });
            if m > MAX_TABLE_SIZE {
                return bad(format!("{m} exceeds the cap of {MAX_TABLE_SIZE}"));
            }
            if !maglev::is_prime(m) {
                return bad(format!("{m} is not a prime (Maglev needs a prime table size, e.g. {DEFAULT_TABLE_SIZE})"));
            }
        }
        if let Some(k) = self.probes {
            if k == 0 || k > MAX_PROBES {
                return Err(Error::InvalidParameter {
                    name: "probes",
                    reason: format!("{k} must be between 1 and {MAX_PROBES}"),
                });
            }
        }
        if let Some(a) = self.capacity {
            if a == 0 || a as usize > MAX_NODES {
                return Err(Error::InvalidParameter {
                    name: "capacity",
                    reason: format!("{a} must be between the node count and {MAX_NODES}"),
                });
            }
        }
        Ok(())
    }

    /// Builds the configured router over `nodes`: the one place a configuration becomes a
    /// router. Costs what the algorithm's constructor costs: O(V·N log(V·N)) for a ring,
    /// O(M log M) for a Maglev table of size M, O(capacity) for AnchorHash, O(N log N) or less for
    /// the others.
    ///
    /// Weighted nodes are refused by algorithms that would silently ignore the weights
    /// (modulo) or cannot express them (jump, multiprobe, memento, anchor). Maglev honours them.
    ///
    /// # Errors
    /// [`validate`](RouterSpec::validate)'s errors, then the algorithm constructor's (e.g.
    /// [`Error::TooManyPoints`], [`Error::Unsupported`] for weights).
    pub fn build(&self, nodes: NodeSet) -> Result<AnyRouter> {
        self.validate()?;
        let hasher = self.effective_hasher();
        Ok(match self.algorithm {
            Algorithm::Modulo => {
                if !nodes.all_unit_weight() {
                    return Err(Error::Unsupported { algorithm: "modulo", operation: "weighted nodes" });
                }
                AnyRouter::from(Modulo::builder().node_set(nodes).hasher(hasher).build()?)
            }
            Algorithm::Ring => {
                let mut builder = Ring::builder().hasher(hasher).node_set(nodes);
                if let Some(v) = self.vnodes {
                    builder = builder.vnodes(v);
                }
                AnyRouter::from(builder.build()?)
            }
            Algorithm::Jump => AnyRouter::from(Jump::builder().node_set(nodes).hasher(hasher).build()?),
            Algorithm::Ketama => {
                let mut builder = Ketama::builder().node_set(nodes).variant(self.ketama_variant.unwrap_or_default());
                if let Some(h) = self.hasher {
                    builder = builder.key_hasher(h);
                }
                AnyRouter::from(builder.build()?)
            }
            Algorithm::Rendezvous => AnyRouter::from(Rendezvous::builder().node_set(nodes).hasher(hasher).build()?),
            Algorithm::Slots => AnyRouter::from(RedisSlots::builder().node_set(nodes).build()?),
            Algorithm::Maglev => AnyRouter::from(
                Maglev::builder()
                    .node_set(nodes)
                    .hasher(hasher)
                    .table_size(self.table_size.unwrap_or(DEFAULT_TABLE_SIZE))
                    .build()?,
            ),
            Algorithm::MultiProbe => AnyRouter::from(
                MultiProbe::builder()
                    .node_set(nodes)
                    .hasher(hasher)
                    .probes(self.probes.unwrap_or(DEFAULT_PROBES))
                    .build()?,
            ),
            Algorithm::Memento => AnyRouter::from(Memento::builder().node_set(nodes).hasher(hasher).build()?),
            Algorithm::Anchor => {
                let capacity = self.effective_capacity(nodes.len());
                AnyRouter::from(Anchor::builder().node_set(nodes).hasher(hasher).capacity(capacity).build()?)
            }
            Algorithm::JumpBack => AnyRouter::from(
                JumpBack::builder()
                    .node_set(nodes)
                    .hasher(hasher)
                    .generator(self.generator.unwrap_or_default())
                    .build()?,
            ),
            Algorithm::FlipHash => AnyRouter::from(FlipHash::builder().node_set(nodes).hasher(hasher).build()?),
            Algorithm::Power => AnyRouter::from(PowerCh::builder().node_set(nodes).hasher(hasher).build()?),
            Algorithm::Binomial => AnyRouter::from(BinomialHash::builder().node_set(nodes).hasher(hasher).build()?),
            Algorithm::JumpBackAnchor => {
                AnyRouter::from(JumpBackAnchor::builder().node_set(nodes).hasher(hasher).build()?)
            }
            Algorithm::Nginx | Algorithm::Haproxy | Algorithm::EnvoyRing | Algorithm::Kafka => {
                crate::proxy::build(self, nodes)?
            }
            Algorithm::TokenRing => AnyRouter::from(self.build_token_ring(nodes)?),
            Algorithm::Crush => {
                return Err(Error::Unsupported {
                    algorithm: "crush",
                    operation: "building from a node list (it maps over a CRUSH map)",
                })
            }
        })
    }

    /// The token ring of `nodes`: their own tokens, or the allocator's when the spec sets
    /// [`tokens_per_node`](RouterSpec::tokens_per_node).
    fn build_token_ring(&self, nodes: NodeSet) -> Result<TokenRing> {
        if let Some(v) = self.tokens_per_node {
            return TokenRing::builder().tokens_per_node(v).node_set(nodes).build();
        }
        if let Some((_, node)) = nodes.iter().find(|(_, n)| n.tokens().is_empty()) {
            return Err(Error::InvalidParameter {
                name: "tokens",
                reason: format!(
                    "token-ring needs every node's tokens, and node {:?} has none (give them in the \
                     configuration's `tokens`, or a tokens-per-node count to allocate them)",
                    node.name()
                ),
            });
        }
        TokenRing::builder().node_set(nodes).build()
    }
}

/// The seed a hasher was built with (0 for unseeded hashers).
#[cfg(any(feature = "serde", test))]
fn hasher_seed(hasher: KeyHasher) -> u64 {
    hasher.seed().unwrap_or(0)
}

/// `KetamaVariant` has no serde derive; it is written as its name.
#[cfg(feature = "serde")]
mod ketama_variant_serde {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::KetamaVariant;

    pub(super) fn serialize<S: Serializer>(variant: &Option<KetamaVariant>, s: S) -> Result<S::Ok, S::Error> {
        variant.map(|v| v.name()).serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<KetamaVariant>, D::Error> {
        match Option::<String>::deserialize(d)? {
            None => Ok(None),
            Some(name) => KetamaVariant::from_name(&name).map(Some).map_err(serde::de::Error::custom),
        }
    }
}

/// `JumpBackGenerator` has no serde derive; it is written as its name.
#[cfg(feature = "serde")]
mod generator_serde {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::jumpback::JumpBackGenerator;

    pub(super) fn serialize<S: Serializer>(g: &Option<JumpBackGenerator>, s: S) -> Result<S::Ok, S::Error> {
        g.map(|g| g.name()).serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<JumpBackGenerator>, D::Error> {
        match Option::<String>::deserialize(d)? {
            None => Ok(None),
            Some(name) => name.parse().map(Some).map_err(serde::de::Error::custom),
        }
    }
}

/// `KeyHasher` has no serde derive; it is written as `{ name, seed }` and read back through
/// [`KeyHasher::from_name`], so a configuration file gets the same validation as the CLI.
#[cfg(feature = "serde")]
mod hasher_serde {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::hash::KeyHasher;

    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Repr {
        name: String,
        #[serde(default)]
        seed: u64,
    }

    pub(super) fn serialize<S: Serializer>(hasher: &Option<KeyHasher>, s: S) -> Result<S::Ok, S::Error> {
        hasher.map(|h| Repr { name: h.name().to_owned(), seed: super::hasher_seed(h) }).serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<KeyHasher>, D::Error> {
        match Option::<Repr>::deserialize(d)? {
            None => Ok(None),
            Some(r) => KeyHasher::from_name(&r.name, r.seed).map(Some).map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::KeyHasher;
    use crate::node::Node;
    use crate::Router;

    fn nodes() -> NodeSet {
        NodeSet::from_names(["a", "b", "c", "d"]).unwrap()
    }

    #[test]
    fn names_round_trip() {
        for &a in Algorithm::ALL {
            assert_eq!(Algorithm::from_name(a.name()).unwrap(), a);
            assert_eq!(a.to_string().parse::<Algorithm>().unwrap(), a);
        }
        let err = Algorithm::from_name("Ring").unwrap_err().to_string();
        assert!(
            err.contains("\"Ring\"") && err.contains("slots, maglev, multiprobe, memento, anchor, jumpback"),
            "{err}"
        );
    }

    #[test]
    fn built_routers_match_direct_construction() {
        let keys: Vec<Vec<u8>> = (0..500).map(|i| format!("key-{i}").into_bytes()).collect();
        let h = KeyHasher::Murmur3X64 { seed: 9 };
        let ring = RouterSpec::new(Algorithm::Ring).with_vnodes(40).with_hasher(h).build(nodes()).unwrap();
        let direct = Ring::builder().vnodes(40).hasher(h).node_set(nodes()).build().unwrap();
        let jump = RouterSpec::new(Algorithm::Jump).build(nodes()).unwrap();
        let jump_direct = Jump::builder().node_set(nodes()).hasher(KeyHasher::default()).build().unwrap();
        let modulo = RouterSpec::new(Algorithm::Modulo).with_hasher(h).build(nodes()).unwrap();
        for k in &keys {
            assert_eq!(ring.route(k), direct.route(k));
            assert_eq!(jump.route(k), jump_direct.route(k));
            assert_eq!(modulo.route(k).index() as u64, h.hash(k) % 4);
        }
        assert_eq!(ring.algorithm(), Algorithm::Ring);
        assert_eq!(jump.algorithm(), Algorithm::Jump);
        assert_eq!(modulo.algorithm(), Algorithm::Modulo);
    }

    /// `nodes()` with ring tokens, for the algorithms that need them.
    fn nodes_for(algo: Algorithm) -> NodeSet {
        if !algo.needs_tokens() {
            return nodes();
        }
        NodeSet::new(nodes().iter().map(|(id, n)| n.clone().with_tokens([i64::from(id.as_u32()) * 1000 - 7]))).unwrap()
    }

    #[test]
    fn builds_every_algorithm_with_its_own_name() {
        for &algo in Algorithm::ALL {
            let router = RouterSpec::new(algo).build(nodes_for(algo)).unwrap();
            assert_eq!(router.algorithm(), algo);
            assert_eq!(router.node_count(), 4);
        }
    }

    #[test]
    fn token_ring_needs_tokens_and_its_own_hasher() {
        let err = RouterSpec::new(Algorithm::TokenRing).build(nodes()).expect_err("no tokens").to_string();
        assert!(err.contains("token-ring needs every node's tokens, and node \"a\" has none"), "{err}");
        assert!(!err.contains('\n'));
        let tokened = nodes_for(Algorithm::TokenRing);
        let spec = RouterSpec::new(Algorithm::TokenRing).with_hasher(KeyHasher::CassandraMurmur3);
        let built = spec.build(tokened.clone()).unwrap();
        let direct = TokenRing::builder().node_set(tokened.clone()).build().unwrap();
        for k in 0..500u32 {
            assert_eq!(built.route(&k.to_le_bytes()), direct.route(&k.to_le_bytes()));
        }
        let err = RouterSpec::new(Algorithm::TokenRing).with_hasher(KeyHasher::default()).validate().unwrap_err();
        assert!(err.to_string().contains("token-ring hashes keys with cassandra-murmur3 only"), "{err}");
        assert!(Algorithm::TokenRing.needs_tokens() && !Algorithm::Ring.needs_tokens());
        // A tokens-per-node count allocates the missing tokens, node by node in order.
        let spec = RouterSpec::new(Algorithm::TokenRing).with_tokens_per_node(8);
        let allocated = spec.build(nodes()).unwrap();
        let direct = TokenRing::builder().tokens_per_node(8).node_set(nodes()).build().unwrap();
        assert_eq!(crate::fingerprint(&allocated), crate::fingerprint(&direct));
        let AnyRouter::TokenRing(ring) = &allocated else { panic!("a token ring") };
        assert!(ring.tokens().len() <= 4 * 8);
        let err = RouterSpec::new(Algorithm::Ring).with_tokens_per_node(8).validate().unwrap_err();
        assert!(err.to_string().contains("tokens-per-node count applies to token-ring only, not ring"), "{err}");
        assert_eq!(Algorithm::from_name("token-ring").unwrap(), Algorithm::TokenRing);
    }

    #[test]
    fn ketama_rendezvous_slots_match_direct_construction() {
        let keys: Vec<Vec<u8>> = (0..500).map(|i| format!("key-{i}").into_bytes()).collect();
        let weighted =
            NodeSet::new((1..=5).map(|i| Node::new(format!("10.0.0.{i}:11211")).with_weight(f64::from(i * 100))))
                .unwrap();
        for variant in KetamaVariant::ALL {
            let spec = RouterSpec::new(Algorithm::Ketama).with_ketama_variant(variant).build(weighted.clone()).unwrap();
            let direct = Ketama::builder().node_set(weighted.clone()).variant(variant).build().unwrap();
            assert!(keys.iter().all(|k| spec.route(k) == direct.route(k)), "{}", variant.name());
        }
        let default = RouterSpec::new(Algorithm::Ketama).build(weighted.clone()).unwrap();
        let libketama = Ketama::builder().node_set(weighted.clone()).variant(KetamaVariant::Libketama).build().unwrap();
        let h = KeyHasher::Xxh64 { seed: 3 };
        let rendezvous = RouterSpec::new(Algorithm::Rendezvous).with_hasher(h).build(weighted.clone()).unwrap();
        let rendezvous_direct = Rendezvous::builder().node_set(weighted).hasher(h).build().unwrap();
        let slots = RouterSpec::new(Algorithm::Slots).build(nodes()).unwrap();
        let slots_direct = RedisSlots::builder().node_set(nodes()).build().unwrap();
        for k in &keys {
            assert_eq!(default.route(k), libketama.route(k));
            assert_eq!(rendezvous.route(k), rendezvous_direct.route(k));
            assert_eq!(slots.route(k), slots_direct.route(k));
        }
    }

    #[test]
    fn new_algorithms_match_direct_construction() {
        let keys: Vec<Vec<u8>> = (0..500).map(|i| format!("key-{i}").into_bytes()).collect();
        let h = KeyHasher::Xxh64 { seed: 11 };
        let weighted = NodeSet::new((1..=5).map(|i| Node::new(format!("n{i}")).with_weight(f64::from(i)))).unwrap();
        let pairs: Vec<(AnyRouter, AnyRouter)> = vec![
            (
                RouterSpec::new(Algorithm::Maglev).build(nodes()).unwrap(),
                AnyRouter::from(
                    Maglev::builder()
                        .node_set(nodes())
                        .hasher(KeyHasher::default())
                        .table_size(DEFAULT_TABLE_SIZE)
                        .build()
                        .unwrap(),
                ),
            ),
            (
                RouterSpec::new(Algorithm::Maglev)
                    .with_table_size(4099)
                    .with_hasher(h)
                    .build(weighted.clone())
                    .unwrap(),
                AnyRouter::from(Maglev::builder().node_set(weighted).hasher(h).table_size(4099).build().unwrap()),
            ),
            (
                RouterSpec::new(Algorithm::MultiProbe).build(nodes()).unwrap(),
                AnyRouter::from(
                    MultiProbe::builder()
                        .node_set(nodes())
                        .hasher(KeyHasher::default())
                        .probes(DEFAULT_PROBES)
                        .build()
                        .unwrap(),
                ),
            ),
            (
                RouterSpec::new(Algorithm::MultiProbe).with_probes(5).with_hasher(h).build(nodes()).unwrap(),
                AnyRouter::from(MultiProbe::builder().node_set(nodes()).hasher(h).probes(5).build().unwrap()),
            ),
            (
                RouterSpec::new(Algorithm::Memento).with_hasher(h).build(nodes()).unwrap(),
                AnyRouter::from(Memento::builder().node_set(nodes()).hasher(h).build().unwrap()),
            ),
            (
                RouterSpec::new(Algorithm::Anchor).build(nodes()).unwrap(),
                AnyRouter::from(
                    Anchor::builder().node_set(nodes()).hasher(KeyHasher::default()).capacity(8).build().unwrap(),
                ),
            ),
            (
                RouterSpec::new(Algorithm::Anchor).with_capacity(100).with_hasher(h).build(nodes()).unwrap(),
                AnyRouter::from(Anchor::builder().node_set(nodes()).hasher(h).capacity(100).build().unwrap()),
            ),
        ];
        for (spec, direct) in &pairs {
            assert_eq!(spec.algorithm(), direct.algorithm());
            for k in &keys {
                assert_eq!(spec.route(k), direct.route(k), "{}", spec.algorithm());
            }
            for hash in [0u64, 1, 0xDEAD_BEEF, u64::MAX] {
                assert_eq!(spec.route_hash(hash).unwrap(), direct.route_hash(hash).unwrap(), "{}", spec.algorithm());
            }
        }
        let AnyRouter::Anchor(anchor) = RouterSpec::new(Algorithm::Anchor).build(nodes()).unwrap() else {
            panic!("an Anchor")
        };
        assert_eq!(anchor.capacity(), 8, "default capacity is twice the node count");
        assert_eq!(RouterSpec::new(Algorithm::Anchor).effective_capacity(MAX_NODES), MAX_NODES as u32);
        assert_eq!(RouterSpec::new(Algorithm::Anchor).with_capacity(9).effective_capacity(4), 9);
    }

    #[test]
    fn rejects_options_that_do_not_apply() {
        let cases = [
            (RouterSpec::new(Algorithm::Jump).with_vnodes(10), "vnodes"),
            (RouterSpec::new(Algorithm::Ketama).with_vnodes(10), "fixed 160"),
            (RouterSpec::new(Algorithm::Modulo).with_vnodes(10), "modulo has no virtual nodes"),
            (RouterSpec::new(Algorithm::Ketama).with_hasher(KeyHasher::default()), "md5 only (got xxh3)"),
            (RouterSpec::new(Algorithm::Slots).with_hasher(KeyHasher::Md5), "crc16 only"),
            (RouterSpec::new(Algorithm::Ring).with_ketama_variant(KetamaVariant::Libketama), "ketama only, not ring"),
            (RouterSpec::new(Algorithm::Slots).with_ketama_variant(KetamaVariant::Uhashring), "ketama only, not slots"),
            (RouterSpec::new(Algorithm::Ring).with_vnodes(0), "vnode count 0"),
            (RouterSpec::new(Algorithm::Ring).with_vnodes(u64::MAX), "vnode count"),
            (RouterSpec::new(Algorithm::Maglev).with_vnodes(10), "maglev has no virtual nodes"),
            (RouterSpec::new(Algorithm::Ring).with_table_size(65537), "maglev only, not ring"),
            (RouterSpec::new(Algorithm::Anchor).with_table_size(65537), "maglev only, not anchor"),
            (RouterSpec::new(Algorithm::Maglev).with_table_size(65536), "65536 is not a prime"),
            (RouterSpec::new(Algorithm::Maglev).with_table_size(0), "0 is not a prime"),
            (RouterSpec::new(Algorithm::Maglev).with_table_size(u64::MAX), "exceeds the cap"),
            (RouterSpec::new(Algorithm::Maglev).with_probes(3), "multiprobe only, not maglev"),
            (RouterSpec::new(Algorithm::MultiProbe).with_probes(0), "0 must be between 1 and"),
            (RouterSpec::new(Algorithm::MultiProbe).with_probes(u32::MAX), "must be between 1 and"),
            (RouterSpec::new(Algorithm::MultiProbe).with_capacity(8), "anchor only, not multiprobe"),
            (RouterSpec::new(Algorithm::Memento).with_capacity(8), "anchor only, not memento"),
            (RouterSpec::new(Algorithm::Anchor).with_capacity(0), "capacity"),
            (RouterSpec::new(Algorithm::Anchor).with_capacity(u32::MAX), "capacity"),
            (RouterSpec::new(Algorithm::Memento).with_ketama_variant(KetamaVariant::Libketama), "not memento"),
        ];
        for (spec, needle) in cases {
            let err = spec.validate().unwrap_err().to_string();
            assert!(err.contains(needle), "{spec:?}: {err}");
            assert!(!err.contains('\n'));
            assert_eq!(spec.build(nodes()).expect_err("refused").to_string(), err);
        }
        assert!(RouterSpec::new(Algorithm::Ketama)
            .with_hasher(KeyHasher::Md5)
            .with_ketama_variant(KetamaVariant::Uhashring)
            .validate()
            .is_ok());
    }

    #[test]
    fn refuses_weights_it_would_ignore() {
        let weighted = NodeSet::new([Node::new("a").with_weight(2.0), Node::new("b")]).unwrap();
        for algo in [Algorithm::Modulo, Algorithm::Jump] {
            let err = RouterSpec::new(algo).build(weighted.clone()).expect_err("weights refused");
            assert!(matches!(err, Error::Unsupported { .. }), "{algo}: {err}");
        }
        assert!(RouterSpec::new(Algorithm::Ring).build(weighted.clone()).is_ok());
        assert!(RouterSpec::new(Algorithm::Maglev).build(weighted.clone()).is_ok(), "maglev honours weights");
        for algo in [Algorithm::MultiProbe, Algorithm::Memento, Algorithm::Anchor] {
            let err = RouterSpec::new(algo).build(weighted.clone()).expect_err("weights refused");
            assert!(matches!(err, Error::Unsupported { .. }), "{algo}: {err}");
        }
    }

    #[test]
    fn node_count_checks_happen_at_build() {
        let small_table = RouterSpec::new(Algorithm::Maglev).with_table_size(3);
        assert!(small_table.validate().is_ok());
        let err = small_table.build(nodes()).expect_err("table smaller than the node count").to_string();
        assert!(err.contains("smaller than the node count 4"), "{err}");
        let small_anchor = RouterSpec::new(Algorithm::Anchor).with_capacity(3);
        assert!(small_anchor.validate().is_ok());
        let err = small_anchor.build(nodes()).expect_err("capacity below the node count").to_string();
        assert!(err.contains("capacity") && !err.contains('\n'), "{err}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]
        /// Any combination of options either builds the configured algorithm over all the nodes
        /// or is refused with a one-line error; never a panic. An option the algorithm does not
        /// take is always refused.
        #[test]
        fn any_spec_builds_or_is_refused_in_one_line(
            algo in 0..Algorithm::ALL.len(),
            n in 1usize..12,
            vnodes in proptest::option::of(0u64..300),
            table_size in proptest::option::of(proptest::prop_oneof![0u64..600, proptest::prelude::Just(u64::MAX)]),
            probes in proptest::option::of(proptest::prop_oneof![0u32..40, proptest::prelude::Just(u32::MAX)]),
            capacity in proptest::option::of(proptest::prop_oneof![0u32..40, proptest::prelude::Just(u32::MAX)]),
        ) {
            let algorithm = Algorithm::ALL[algo];
            let mut spec = RouterSpec::new(algorithm);
            spec.vnodes = vnodes;
            spec.table_size = table_size;
            spec.probes = probes;
            spec.capacity = capacity;
            let misplaced = (vnodes.is_some() && !algorithm.takes_vnodes())
                || (table_size.is_some() && !algorithm.takes_table_size())
                || (probes.is_some() && !algorithm.takes_probes())
                || (capacity.is_some() && !algorithm.takes_capacity());
            let nodes = NodeSet::from_names((0..n).map(|i| format!("node-{i}"))).unwrap();
            match spec.build(nodes) {
                Ok(router) => {
                    proptest::prop_assert!(!misplaced);
                    proptest::prop_assert_eq!(router.algorithm(), algorithm);
                    proptest::prop_assert_eq!(router.node_count(), n);
                }
                Err(err) => {
                    let text = err.to_string();
                    proptest::prop_assert!(!text.is_empty() && !text.contains('\n'), "{}", text);
                }
            }
            if misplaced {
                proptest::prop_assert!(spec.validate().is_err());
            }
        }
    }

    #[test]
    fn seeds_read_back() {
        for h in [
            KeyHasher::Xxh3 { seed: 3 },
            KeyHasher::Xxh64 { seed: u64::MAX },
            KeyHasher::Murmur3X64 { seed: 7 },
            KeyHasher::Murmur3X86_32 { seed: u32::MAX },
            KeyHasher::Md5,
            KeyHasher::Crc16,
            KeyHasher::Xxh32 { seed: u32::MAX },
            KeyHasher::Crc32,
            KeyHasher::Sdbm,
            KeyHasher::SdbmAvalanche,
            KeyHasher::Murmur2Kafka,
            KeyHasher::Murmur64aEnvoy,
            KeyHasher::Oaat,
            KeyHasher::Fnv1a32,
        ] {
            assert_eq!(KeyHasher::from_name(h.name(), hasher_seed(h)).unwrap(), h);
        }
    }

    #[cfg(feature = "serde")]
    #[test]
    fn serde_round_trips() {
        let specs = [
            RouterSpec::new(Algorithm::Ring).with_vnodes(100).with_hasher(KeyHasher::Murmur3X64 { seed: 5 }),
            RouterSpec::new(Algorithm::Ketama).with_ketama_variant(KetamaVariant::Spymemcached),
            RouterSpec::new(Algorithm::Rendezvous).with_hasher(KeyHasher::Xxh64 { seed: 0 }),
            RouterSpec::new(Algorithm::Slots),
            RouterSpec::new(Algorithm::Jump),
            RouterSpec::new(Algorithm::Maglev).with_table_size(4099).with_hasher(KeyHasher::Xxh3 { seed: 2 }),
            RouterSpec::new(Algorithm::MultiProbe).with_probes(7),
            RouterSpec::new(Algorithm::Memento),
            RouterSpec::new(Algorithm::Anchor).with_capacity(64),
            RouterSpec::new(Algorithm::Anchor),
            RouterSpec::new(Algorithm::JumpBack).with_generator(JumpBackGenerator::XorshiftL7R9),
            RouterSpec::new(Algorithm::JumpBackAnchor).with_hasher(KeyHasher::Xxh32 { seed: 0 }),
            RouterSpec::new(Algorithm::TokenRing).with_tokens_per_node(16),
        ];
        for spec in specs {
            let json = serde_json::to_string(&spec).unwrap();
            assert_eq!(serde_json::from_str::<RouterSpec>(&json).unwrap(), spec, "{json}");
            let text = toml::to_string(&spec).unwrap();
            assert_eq!(toml::from_str::<RouterSpec>(&text).unwrap(), spec, "{text}");
        }
        let json = r#"{"algorithm":"ring","vnodes":160,"hasher":{"name":"xxh64","seed":1}}"#;
        let spec: RouterSpec = serde_json::from_str(json).unwrap();
        assert_eq!(spec.hasher, Some(KeyHasher::Xxh64 { seed: 1 }));
        assert_eq!(serde_json::to_string(&spec).unwrap(), json);
        assert!(serde_json::from_str::<RouterSpec>(r#"{"algorithm":"ring","vnode":1}"#).is_err());
        assert!(serde_json::from_str::<RouterSpec>(r#"{"algorithm":"md6"}"#).is_err());
        let err =
            serde_json::from_str::<RouterSpec>(r#"{"algorithm":"ring","hasher":{"name":"murmur3","seed":4294967296}}"#)
                .unwrap_err()
                .to_string();
        assert!(err.contains("32 bits"), "{err}");
        let spec: RouterSpec =
            toml::from_str("algorithm = \"ketama\"\nketama_variant = \"python-hash-ring\"\n").unwrap();
        assert_eq!(spec.ketama_variant, Some(KetamaVariant::PythonHashRing));
        assert!(toml::from_str::<RouterSpec>("algorithm = \"ketama\"\nketama_variant = \"twemproxy2\"\n").is_err());
        let spec: RouterSpec = toml::from_str("algorithm = \"ketama\"\nketama_variant = \"twemproxy\"\n").unwrap();
        assert_eq!(spec.ketama_variant, Some(KetamaVariant::Twemproxy));
        // Every algorithm serializes as its `name()`.
        for &algo in Algorithm::ALL {
            assert_eq!(serde_json::to_string(&algo).unwrap(), format!("\"{}\"", algo.name()));
        }
        let json = r#"{"algorithm":"multiprobe","probes":5}"#;
        let spec: RouterSpec = serde_json::from_str(json).unwrap();
        assert_eq!(spec, RouterSpec::new(Algorithm::MultiProbe).with_probes(5));
        assert_eq!(serde_json::to_string(&spec).unwrap(), json);
        let spec: RouterSpec = toml::from_str("algorithm = \"maglev\"\ntable_size = 4099\n").unwrap();
        assert_eq!(spec.table_size, Some(4099));
        let spec: RouterSpec = toml::from_str("algorithm = \"anchor\"\ncapacity = 32\n").unwrap();
        assert_eq!(spec.capacity, Some(32));
    }
}

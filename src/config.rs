//! Router configuration: which algorithm, with which parameters, as one plain value.
//!
//! [`RouterSpec::build`] is the single place where a configuration becomes a router: the
//! `hashroute` CLI, the benchmark sweep and serialized configurations all go through it, so a
//! combination that makes no sense (a vnode count for jump, a non-MD5 hash for Ketama, a Ketama
//! variant for a ring) is rejected the same way everywhere, with a one-line [`Error`].
//!
//! ```
//! use hashroute::config::{Algorithm, RouterSpec};
//! use hashroute::{NodeSet, Router};
//! let spec = RouterSpec::new(Algorithm::Ring).with_vnodes(100);
//! let router = spec.build(NodeSet::from_names(["a", "b", "c"]).unwrap()).unwrap();
//! assert_eq!(router.algorithm(), "ring");
//! assert!(RouterSpec::new(Algorithm::Jump).with_vnodes(100).validate().is_err());
//! ```
//!
//! With the `serde` feature, [`Algorithm`] and [`RouterSpec`] serialize to and from JSON or
//! TOML: `{"algorithm": "ring", "vnodes": 160, "hasher": {"name": "xxh3", "seed": 0}}`. Unset
//! options are omitted and unknown fields are rejected.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::hash::Hasher;
use crate::node::NodeSet;
use crate::router::Router;
use crate::{Jump, Ketama, KetamaVariant, Modulo, RedisSlots, Rendezvous, Ring};

/// A routing algorithm, as named on the command line and in configuration files.
///
/// `#[non_exhaustive]`: Maglev, multi-probe and AnchorHash are planned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "kebab-case"))]
pub enum Algorithm {
    /// `hash % N` ([`Modulo`]).
    Modulo,
    /// A consistent-hash ring with virtual nodes ([`Ring`]).
    Ring,
    /// Ketama, compatible with memcached clients ([`Ketama`]).
    Ketama,
    /// Jump consistent hash ([`Jump`]).
    Jump,
    /// Rendezvous (highest random weight) hashing ([`Rendezvous`]).
    Rendezvous,
    /// Redis Cluster's 16384 hash slots ([`RedisSlots`]).
    Slots,
}

impl Algorithm {
    /// Every algorithm, in the order the documentation lists them.
    pub const ALL: &'static [Algorithm] = &[
        Algorithm::Modulo,
        Algorithm::Ring,
        Algorithm::Ketama,
        Algorithm::Jump,
        Algorithm::Rendezvous,
        Algorithm::Slots,
    ];

    /// The algorithm's name as the CLI's `--algo` and configuration files spell it; equal to
    /// [`Router::algorithm`] of the router it builds.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Modulo => "modulo",
            Algorithm::Ring => "ring",
            Algorithm::Ketama => "ketama",
            Algorithm::Jump => "jump",
            Algorithm::Rendezvous => "rendezvous",
            Algorithm::Slots => "slots",
        }
    }

    /// The algorithm named `name` (exact, lowercase, as in [`Algorithm::name`]).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming the accepted names.
    pub fn from_name(name: &str) -> Result<Algorithm> {
        Algorithm::ALL.iter().copied().find(|a| a.name() == name).ok_or_else(|| Error::InvalidParameter {
            name: "algorithm",
            reason: format!("{name:?} (expected {})", names_list(Algorithm::ALL.iter().map(|a| a.name()))),
        })
    }

    /// The hasher the algorithm uses when none is configured: MD5 for Ketama, CRC16 for Redis
    /// slots (both fixed by the protocols they match), xxh3 with seed 0 otherwise.
    pub fn default_hasher(self) -> Hasher {
        match self {
            Algorithm::Ketama => Hasher::Md5,
            Algorithm::Slots => Hasher::Crc16,
            _ => Hasher::default(),
        }
    }

    /// Whether the algorithm takes a virtual-node count (only the ring does: Ketama's 160
    /// points per server are part of its definition).
    pub fn takes_vnodes(self) -> bool {
        matches!(self, Algorithm::Ring)
    }

    /// Whether the key hasher can be chosen (not for Ketama and Redis slots, whose hashes are
    /// fixed by the clients they interoperate with).
    pub fn takes_hasher(self) -> bool {
        !matches!(self, Algorithm::Ketama | Algorithm::Slots)
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Algorithm {
    type Err = Error;
    fn from_str(s: &str) -> Result<Algorithm> {
        Algorithm::from_name(s)
    }
}

/// A router configuration: an algorithm plus the parameters that apply to it. Unset options
/// (`None`) take the algorithm's defaults.
///
/// Construct with [`RouterSpec::new`] and the `with_*` methods, or by deserializing (feature
/// `serde`). Nothing is checked until [`RouterSpec::validate`] or [`RouterSpec::build`].
/// `#[non_exhaustive]`: more parameters (Maglev's table size, multi-probe's probe count) will
/// be added as fields.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct RouterSpec {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Virtual nodes per weight-1 node; ring only (default
    /// [`DEFAULT_VNODES`](crate::algo::ring::DEFAULT_VNODES)).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub vnodes: Option<u64>,
    /// The key hasher (default [`Algorithm::default_hasher`]). Ketama accepts only MD5, Redis
    /// slots only CRC16.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none", with = "hasher_serde"))]
    pub hasher: Option<Hasher>,
    /// The Ketama client to be compatible with (default [`KetamaVariant::Libketama`]); Ketama
    /// only. Serialized by [`KetamaVariant::name`].
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none", with = "ketama_variant_serde")
    )]
    pub ketama_variant: Option<KetamaVariant>,
}

impl RouterSpec {
    /// A configuration of `algorithm` with every option at its default.
    pub fn new(algorithm: Algorithm) -> RouterSpec {
        RouterSpec { algorithm, vnodes: None, hasher: None, ketama_variant: None }
    }

    /// Sets the virtual-node count (ring only).
    #[must_use]
    pub fn with_vnodes(mut self, vnodes: u64) -> RouterSpec {
        self.vnodes = Some(vnodes);
        self
    }

    /// Sets the key hasher.
    #[must_use]
    pub fn with_hasher(mut self, hasher: Hasher) -> RouterSpec {
        self.hasher = Some(hasher);
        self
    }

    /// Sets the Ketama variant (Ketama only).
    #[must_use]
    pub fn with_ketama_variant(mut self, variant: KetamaVariant) -> RouterSpec {
        self.ketama_variant = Some(variant);
        self
    }

    /// The hasher [`build`](RouterSpec::build) will use: the configured one, else the
    /// algorithm's default.
    pub fn effective_hasher(&self) -> Hasher {
        self.hasher.unwrap_or_else(|| self.algorithm.default_hasher())
    }

    /// Checks that every option set applies to the algorithm and is in range, without building
    /// anything. O(1). [`build`](RouterSpec::build) runs it first.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming the option (`vnodes`, `hash`, `variant`) and why, or
    /// [`Error::InvalidVnodes`] for a vnode count out of range.
    pub fn validate(&self) -> Result<()> {
        let algo = self.algorithm;
        if let Some(vnodes) = self.vnodes {
            if !algo.takes_vnodes() {
                let reason = if algo == Algorithm::Ketama {
                    "ketama has a fixed 160 points per server; only ring takes a vnode count".to_owned()
                } else {
                    format!("{algo} has no virtual nodes; only ring takes a vnode count")
                };
                return Err(Error::InvalidParameter { name: "vnodes", reason });
            }
            let max = crate::algo::ring::MAX_VNODES;
            if vnodes == 0 || vnodes > u64::from(max) {
                return Err(Error::InvalidVnodes { vnodes, max });
            }
        }
        if let Some(hasher) = self.hasher {
            if !algo.takes_hasher() && hasher != algo.default_hasher() {
                return Err(Error::InvalidParameter {
                    name: "hash",
                    reason: format!(
                        "{algo} hashes keys with {} only (got {})",
                        algo.default_hasher().name(),
                        hasher.name()
                    ),
                });
            }
        }
        if self.ketama_variant.is_some() && algo != Algorithm::Ketama {
            return Err(Error::InvalidParameter {
                name: "variant",
                reason: format!("a Ketama variant applies to ketama only, not {algo}"),
            });
        }
        Ok(())
    }

    /// Builds the configured router over `nodes`: the one place a configuration becomes a
    /// router. Costs what the algorithm's constructor costs (O(V·N log(V·N)) for a ring, O(N)
    /// or less for the others).
    ///
    /// Weighted nodes are refused by algorithms that would silently ignore the weights
    /// (modulo) or cannot express them (jump).
    ///
    /// # Errors
    /// [`validate`](RouterSpec::validate)'s errors, then the algorithm constructor's (e.g.
    /// [`Error::TooManyPoints`], [`Error::Unsupported`] for weights).
    pub fn build(&self, nodes: NodeSet) -> Result<Box<dyn Router>> {
        self.validate()?;
        let hasher = self.effective_hasher();
        Ok(match self.algorithm {
            Algorithm::Modulo => {
                if !nodes.all_unit_weight() {
                    return Err(Error::Unsupported { algorithm: "modulo", operation: "weighted nodes" });
                }
                Box::new(Modulo::new(nodes, hasher))
            }
            Algorithm::Ring => {
                let mut builder = Ring::builder().hasher(hasher).node_set(nodes);
                if let Some(v) = self.vnodes {
                    builder = builder.vnodes(v);
                }
                Box::new(builder.build()?)
            }
            Algorithm::Jump => Box::new(Jump::new(nodes, hasher)?),
            Algorithm::Ketama => Box::new(Ketama::new(nodes, self.ketama_variant.unwrap_or_default())?),
            Algorithm::Rendezvous => Box::new(Rendezvous::new(nodes, hasher)?),
            Algorithm::Slots => Box::new(RedisSlots::new(nodes)?),
        })
    }
}

/// "a, b or c".
fn names_list<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => (*last).to_owned(),
        None => String::new(),
    }
}

/// The seed a hasher was built with (0 for unseeded hashers).
#[cfg(any(feature = "serde", test))]
fn hasher_seed(hasher: Hasher) -> u64 {
    match hasher {
        Hasher::Xxh3 { seed } | Hasher::Xxh64 { seed } => seed,
        Hasher::Murmur3X64 { seed } | Hasher::Murmur3X86_32 { seed } => u64::from(seed),
        Hasher::Md5 | Hasher::Crc16 => 0,
    }
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

/// `Hasher` has no serde derive; it is written as `{ name, seed }` and read back through
/// [`Hasher::from_name`], so a configuration file gets the same validation as the CLI.
#[cfg(feature = "serde")]
mod hasher_serde {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::hash::Hasher;

    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Repr {
        name: String,
        #[serde(default)]
        seed: u64,
    }

    pub(super) fn serialize<S: Serializer>(hasher: &Option<Hasher>, s: S) -> Result<S::Ok, S::Error> {
        hasher.map(|h| Repr { name: h.name().to_owned(), seed: super::hasher_seed(h) }).serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Hasher>, D::Error> {
        match Option::<Repr>::deserialize(d)? {
            None => Ok(None),
            Some(r) => Hasher::from_name(&r.name, r.seed).map(Some).map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::KeyHasher;
    use crate::node::Node;

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
        assert!(err.contains("\"Ring\"") && err.contains("rendezvous or slots"), "{err}");
    }

    #[test]
    fn built_routers_match_direct_construction() {
        let keys: Vec<Vec<u8>> = (0..500).map(|i| format!("key-{i}").into_bytes()).collect();
        let h = Hasher::Murmur3X64 { seed: 9 };
        let ring = RouterSpec::new(Algorithm::Ring).with_vnodes(40).with_hasher(h).build(nodes()).unwrap();
        let direct = Ring::builder().vnodes(40).hasher(h).node_set(nodes()).build().unwrap();
        let jump = RouterSpec::new(Algorithm::Jump).build(nodes()).unwrap();
        let jump_direct = Jump::new(nodes(), Hasher::default()).unwrap();
        let modulo = RouterSpec::new(Algorithm::Modulo).with_hasher(h).build(nodes()).unwrap();
        for k in &keys {
            assert_eq!(ring.route(k), direct.route(k));
            assert_eq!(jump.route(k), jump_direct.route(k));
            assert_eq!(modulo.route(k).index() as u64, h.hash(k) % 4);
        }
        assert_eq!(ring.algorithm(), "ring");
        assert_eq!(jump.algorithm(), "jump");
        assert_eq!(modulo.algorithm(), "modulo");
    }

    #[test]
    fn builds_every_algorithm_with_its_own_name() {
        for &algo in Algorithm::ALL {
            let router = RouterSpec::new(algo).build(nodes()).unwrap();
            assert_eq!(router.algorithm(), algo.name());
            assert_eq!(router.node_count(), 4);
        }
    }

    #[test]
    fn ketama_rendezvous_slots_match_direct_construction() {
        let keys: Vec<Vec<u8>> = (0..500).map(|i| format!("key-{i}").into_bytes()).collect();
        let weighted =
            NodeSet::new((1..=5).map(|i| Node::new(format!("10.0.0.{i}:11211")).with_weight(f64::from(i * 100))))
                .unwrap();
        for variant in KetamaVariant::ALL {
            let spec = RouterSpec::new(Algorithm::Ketama).with_ketama_variant(variant).build(weighted.clone()).unwrap();
            let direct = Ketama::new(weighted.clone(), variant).unwrap();
            assert!(keys.iter().all(|k| spec.route(k) == direct.route(k)), "{}", variant.name());
        }
        let default = RouterSpec::new(Algorithm::Ketama).build(weighted.clone()).unwrap();
        let libketama = Ketama::new(weighted.clone(), KetamaVariant::Libketama).unwrap();
        let h = Hasher::Xxh64 { seed: 3 };
        let rendezvous = RouterSpec::new(Algorithm::Rendezvous).with_hasher(h).build(weighted.clone()).unwrap();
        let rendezvous_direct = Rendezvous::new(weighted, h).unwrap();
        let slots = RouterSpec::new(Algorithm::Slots).build(nodes()).unwrap();
        let slots_direct = RedisSlots::new(nodes()).unwrap();
        for k in &keys {
            assert_eq!(default.route(k), libketama.route(k));
            assert_eq!(rendezvous.route(k), rendezvous_direct.route(k));
            assert_eq!(slots.route(k), slots_direct.route(k));
        }
    }

    #[test]
    fn rejects_options_that_do_not_apply() {
        let cases = [
            (RouterSpec::new(Algorithm::Jump).with_vnodes(10), "vnodes"),
            (RouterSpec::new(Algorithm::Ketama).with_vnodes(10), "fixed 160"),
            (RouterSpec::new(Algorithm::Modulo).with_vnodes(10), "modulo has no virtual nodes"),
            (RouterSpec::new(Algorithm::Ketama).with_hasher(Hasher::default()), "md5 only (got xxh3)"),
            (RouterSpec::new(Algorithm::Slots).with_hasher(Hasher::Md5), "crc16 only"),
            (RouterSpec::new(Algorithm::Ring).with_ketama_variant(KetamaVariant::Libketama), "ketama only, not ring"),
            (RouterSpec::new(Algorithm::Slots).with_ketama_variant(KetamaVariant::Uhashring), "ketama only, not slots"),
            (RouterSpec::new(Algorithm::Ring).with_vnodes(0), "vnode count 0"),
            (RouterSpec::new(Algorithm::Ring).with_vnodes(u64::MAX), "vnode count"),
        ];
        for (spec, needle) in cases {
            let err = spec.validate().unwrap_err().to_string();
            assert!(err.contains(needle), "{spec:?}: {err}");
            assert!(!err.contains('\n'));
            assert_eq!(spec.build(nodes()).err().expect("refused").to_string(), err);
        }
        assert!(RouterSpec::new(Algorithm::Ketama)
            .with_hasher(Hasher::Md5)
            .with_ketama_variant(KetamaVariant::Uhashring)
            .validate()
            .is_ok());
    }

    #[test]
    fn refuses_weights_it_would_ignore() {
        let weighted = NodeSet::new([Node::new("a").with_weight(2.0), Node::new("b")]).unwrap();
        for algo in [Algorithm::Modulo, Algorithm::Jump] {
            let err = RouterSpec::new(algo).build(weighted.clone()).err().expect("weights refused");
            assert!(matches!(err, Error::Unsupported { .. }), "{algo}: {err}");
        }
        assert!(RouterSpec::new(Algorithm::Ring).build(weighted).is_ok());
    }

    #[test]
    fn seeds_read_back() {
        for h in [
            Hasher::Xxh3 { seed: 3 },
            Hasher::Xxh64 { seed: u64::MAX },
            Hasher::Murmur3X64 { seed: 7 },
            Hasher::Murmur3X86_32 { seed: u32::MAX },
            Hasher::Md5,
            Hasher::Crc16,
        ] {
            assert_eq!(Hasher::from_name(h.name(), hasher_seed(h)).unwrap(), h);
        }
    }

    #[cfg(feature = "serde")]
    #[test]
    fn serde_round_trips() {
        let specs = [
            RouterSpec::new(Algorithm::Ring).with_vnodes(100).with_hasher(Hasher::Murmur3X64 { seed: 5 }),
            RouterSpec::new(Algorithm::Ketama).with_ketama_variant(KetamaVariant::Spymemcached),
            RouterSpec::new(Algorithm::Rendezvous).with_hasher(Hasher::Xxh64 { seed: 0 }),
            RouterSpec::new(Algorithm::Slots),
            RouterSpec::new(Algorithm::Jump),
        ];
        for spec in specs {
            let json = serde_json::to_string(&spec).unwrap();
            assert_eq!(serde_json::from_str::<RouterSpec>(&json).unwrap(), spec, "{json}");
            let text = toml::to_string(&spec).unwrap();
            assert_eq!(toml::from_str::<RouterSpec>(&text).unwrap(), spec, "{text}");
        }
        let json = r#"{"algorithm":"ring","vnodes":160,"hasher":{"name":"xxh64","seed":1}}"#;
        let spec: RouterSpec = serde_json::from_str(json).unwrap();
        assert_eq!(spec.hasher, Some(Hasher::Xxh64 { seed: 1 }));
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
        assert!(toml::from_str::<RouterSpec>("algorithm = \"ketama\"\nketama_variant = \"twemproxy\"\n").is_err());
    }
}

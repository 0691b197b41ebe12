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
use crate::{Jump, Modulo, Ring};

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
    /// Ketama, compatible with memcached clients (`Ketama`).
    Ketama,
    /// Jump consistent hash ([`Jump`]).
    Jump,
    /// Rendezvous (highest random weight) hashing (`Rendezvous`).
    Rendezvous,
    /// Redis Cluster's 16384 hash slots (`RedisSlots`).
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

/// The Ketama variant names [`RouterSpec::ketama_variant`] accepts.
///
/// TODO(ketama): replace with `KetamaVariant` once `Ketama` lands in main; this list mirrors its
/// `name()`s so configurations written now stay valid.
pub const KETAMA_VARIANTS: &[&str] = &["libketama", "uhashring", "libmemcached", "spymemcached", "python-hash-ring"];

/// The Ketama variant used when none is configured: libketama, the reference.
pub const DEFAULT_KETAMA_VARIANT: &str = "libketama";

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
    /// The Ketama client to be compatible with, by name (one of [`KETAMA_VARIANTS`]; default
    /// [`DEFAULT_KETAMA_VARIANT`]); Ketama only.
    // TODO(ketama): becomes `Option<KetamaVariant>` (serialized by name) when Ketama lands.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub ketama_variant: Option<String>,
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

    /// Sets the Ketama variant by name (Ketama only).
    #[must_use]
    pub fn with_ketama_variant(mut self, variant: impl Into<String>) -> RouterSpec {
        self.ketama_variant = Some(variant.into());
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
        if let Some(variant) = &self.ketama_variant {
            if algo != Algorithm::Ketama {
                return Err(Error::InvalidParameter {
                    name: "variant",
                    reason: format!("a Ketama variant applies to ketama only, not {algo}"),
                });
            }
            if !KETAMA_VARIANTS.contains(&variant.as_str()) {
                return Err(Error::InvalidParameter {
                    name: "variant",
                    reason: format!("{variant:?} (expected {})", names_list(KETAMA_VARIANTS.iter().copied())),
                });
            }
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
            // TODO(ketama, rendezvous, slots): wire in when these routers land in main:
            //   Ketama::new(nodes, KetamaVariant::from_name(variant)?)
            //   Rendezvous::new(nodes, hasher)
            //   RedisSlots::new(nodes)
            Algorithm::Ketama | Algorithm::Rendezvous | Algorithm::Slots => {
                let _ = nodes;
                return Err(Error::Unsupported {
                    algorithm: self.algorithm.name(),
                    operation: "building (not in this build yet)",
                });
            }
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
    fn rejects_options_that_do_not_apply() {
        let cases = [
            (RouterSpec::new(Algorithm::Jump).with_vnodes(10), "vnodes"),
            (RouterSpec::new(Algorithm::Ketama).with_vnodes(10), "fixed 160"),
            (RouterSpec::new(Algorithm::Modulo).with_vnodes(10), "modulo has no virtual nodes"),
            (RouterSpec::new(Algorithm::Ketama).with_hasher(Hasher::default()), "md5 only (got xxh3)"),
            (RouterSpec::new(Algorithm::Slots).with_hasher(Hasher::Md5), "crc16 only"),
            (RouterSpec::new(Algorithm::Ring).with_ketama_variant("libketama"), "ketama only, not ring"),
            (
                RouterSpec::new(Algorithm::Ketama).with_ketama_variant("twemproxy"),
                "variant: \"twemproxy\" (expected libketama",
            ),
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
            .with_ketama_variant("uhashring")
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
            RouterSpec::new(Algorithm::Ketama).with_ketama_variant("spymemcached"),
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
    }
}

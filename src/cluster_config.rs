//! A whole cluster's routing configuration as one serializable value (feature `serde`).
//!
//! [`ClusterConfig`] = a [`RouterSpec`] (algorithm and parameters) plus the node list (names,
//! weights, labels) in order. Saved as JSON or TOML and loaded elsewhere, it rebuilds a router
//! with bit-identical routes, which [`crate::fingerprint()`] can confirm:
//!
//! ```
//! use hashroute::{ClusterConfig, NodeConfig};
//! use hashroute::{Algorithm, RouterSpec};
//! let config = ClusterConfig::new(
//!     RouterSpec::new(Algorithm::Ring).with_vnodes(100),
//!     vec![NodeConfig::new("a").with_label("zone", "eu-1a"), NodeConfig::new("b").with_weight(2.0)],
//! );
//! let text = config.to_toml().unwrap();
//! let loaded = ClusterConfig::from_toml(&text).unwrap();
//! assert_eq!(loaded, config);
//! let (r1, r2) = (config.build().unwrap(), loaded.build().unwrap());
//! assert_eq!(hashroute::fingerprint(&*r1), hashroute::fingerprint(&*r2));
//! ```
//!
//! TOML integers are signed 64-bit: a hasher seed above `i64::MAX` serializes only to JSON.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::node::{Node, NodeSet};
use crate::spec::RouterSpec;

/// One node of a [`ClusterConfig`]: name, weight (default 1.0), labels (default none) and ring
/// tokens (default none; only [`TokenRing`](crate::TokenRing) reads them, and needs them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeConfig {
    /// The node's unique name.
    pub name: String,
    /// The node's weight, finite and greater than 0.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub weight: f64,
    /// Topology labels (`zone`, `rack`, `host`, …), used by [`replicas_with_policy`](crate::placement::replicas_with_policy).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Ring tokens, signed 64-bit (`"tokens": [-9223372036854775807, 0]`), for `token-ring`.
    /// Omitted when empty, so configurations of the other algorithms read and write as before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tokens: Vec<i64>,
}

fn one() -> f64 {
    1.0
}

fn is_one(w: &f64) -> bool {
    *w == 1.0
}

impl NodeConfig {
    /// A node of weight 1.0 without labels.
    pub fn new(name: impl Into<String>) -> NodeConfig {
        NodeConfig { name: name.into(), weight: 1.0, labels: BTreeMap::new(), tokens: Vec::new() }
    }

    /// Sets the weight (validated when the config is built or loaded).
    #[must_use]
    pub fn with_weight(mut self, weight: f64) -> NodeConfig {
        self.weight = weight;
        self
    }

    /// Adds a label.
    #[must_use]
    pub fn with_label(mut self, key: impl Into<String>, value: impl Into<String>) -> NodeConfig {
        self.labels.insert(key.into(), value.into());
        self
    }

    /// Sets the ring tokens (kept in the given order here; a built node stores them sorted).
    #[must_use]
    pub fn with_tokens(mut self, tokens: impl IntoIterator<Item = i64>) -> NodeConfig {
        self.tokens = tokens.into_iter().collect();
        self
    }

    fn to_node(&self) -> Node {
        let node = Node::new(self.name.as_str()).with_weight(self.weight).with_tokens(self.tokens.iter().copied());
        self.labels.iter().fold(node, |n, (k, v)| n.with_label(k, v))
    }
}

impl From<&Node> for NodeConfig {
    fn from(node: &Node) -> NodeConfig {
        NodeConfig {
            name: node.name().to_owned(),
            weight: node.weight(),
            labels: node.labels().clone(),
            tokens: node.tokens().to_vec(),
        }
    }
}

/// A router specification plus its nodes, in order (order matters for jump, modulo and slots).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterConfig {
    /// Algorithm and parameters.
    pub spec: RouterSpec,
    /// The nodes, in order.
    pub nodes: Vec<NodeConfig>,
}

impl ClusterConfig {
    /// A configuration from its parts (validated by [`ClusterConfig::build`]).
    pub fn new(spec: RouterSpec, nodes: Vec<NodeConfig>) -> ClusterConfig {
        ClusterConfig { spec, nodes }
    }

    /// The configuration of `spec` over an existing node set (names, weights, labels kept).
    pub fn from_node_set(spec: RouterSpec, nodes: &NodeSet) -> ClusterConfig {
        ClusterConfig { spec, nodes: nodes.as_slice().iter().map(NodeConfig::from).collect() }
    }

    /// The validated node set.
    ///
    /// # Errors
    /// The [`NodeSet::new`] errors (no nodes, duplicates, bad weights).
    pub fn node_set(&self) -> Result<NodeSet> {
        NodeSet::new(self.nodes.iter().map(NodeConfig::to_node))
    }

    /// Builds the router through [`RouterSpec::build`], the one place configs become routers.
    ///
    /// # Errors
    /// [`ClusterConfig::node_set`]'s and [`RouterSpec::build`]'s errors.
    pub fn build(&self) -> Result<crate::AnyRouter> {
        self.spec.build(self.node_set()?)
    }

    /// Checks the spec and the nodes without building the router. O(N).
    ///
    /// # Errors
    /// [`RouterSpec::validate`]'s and [`ClusterConfig::node_set`]'s errors.
    pub fn validate(&self) -> Result<()> {
        self.spec.validate()?;
        self.node_set().map(|_| ())
    }

    /// Pretty-printed JSON.
    ///
    /// # Errors
    /// [`Error::Malformed`] if serialization fails (a non-finite weight).
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string_pretty(self).map_err(|e| Error::Malformed(format!("cluster config to JSON: {e}")))
    }

    /// Parses and validates JSON.
    ///
    /// # Errors
    /// [`Error::Malformed`] for syntax errors, unknown fields, bad algorithm/hasher names (with
    /// serde's line and column); then [`ClusterConfig::validate`]'s errors.
    pub fn from_json(text: &str) -> Result<ClusterConfig> {
        let config: ClusterConfig =
            serde_json::from_str(text).map_err(|e| Error::Malformed(format!("cluster config JSON: {e}")))?;
        config.validate()?;
        Ok(config)
    }

    /// TOML (`[spec]` table, then one `[[nodes]]` table per node).
    ///
    /// # Errors
    /// [`Error::Malformed`] if serialization fails (a seed above `i64::MAX`, a non-finite weight).
    pub fn to_toml(&self) -> Result<String> {
        toml::to_string(self).map_err(|e| Error::Malformed(format!("cluster config to TOML: {e}")))
    }

    /// Parses and validates TOML.
    ///
    /// # Errors
    /// As [`ClusterConfig::from_json`].
    pub fn from_toml(text: &str) -> Result<ClusterConfig> {
        let config: ClusterConfig = toml::from_str(text)
            .map_err(|e| Error::Malformed(format!("cluster config TOML: {}", e.to_string().replace('\n', " "))))?;
        config.validate()?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithm::Algorithm;
    use crate::{fingerprint, KetamaVariant, KeyHasher};

    fn nodes() -> Vec<NodeConfig> {
        (0..12)
            .map(|i| {
                NodeConfig::new(format!("10.0.{}.{i}:6379", i % 3))
                    .with_weight(if i % 4 == 0 { 2.5 } else { 1.0 })
                    .with_label("zone", format!("z{}", i % 3))
            })
            .collect()
    }

    fn specs() -> Vec<(RouterSpec, bool)> {
        vec![
            (RouterSpec::new(Algorithm::Ring).with_vnodes(100).with_hasher(KeyHasher::Murmur3X64 { seed: 7 }), true),
            (RouterSpec::new(Algorithm::Ketama).with_ketama_variant(KetamaVariant::Libmemcached), true),
            (RouterSpec::new(Algorithm::Rendezvous).with_hasher(KeyHasher::Xxh64 { seed: 3 }), true),
            (RouterSpec::new(Algorithm::Jump), false),
            (RouterSpec::new(Algorithm::Modulo), false),
            (RouterSpec::new(Algorithm::Slots), false),
        ]
    }

    #[test]
    fn round_trips_with_identical_routes() {
        let keys: Vec<Vec<u8>> = (0..10_000).map(|i| format!("key:{i}").into_bytes()).collect();
        for (spec, weighted) in specs() {
            let mut n = nodes();
            if !weighted {
                n.iter_mut().for_each(|n| n.weight = 1.0);
            }
            let config = ClusterConfig::new(spec, n);
            let original = config.build().unwrap();
            for (format, text) in [("json", config.to_json().unwrap()), ("toml", config.to_toml().unwrap())] {
                let loaded = match format {
                    "json" => ClusterConfig::from_json(&text).unwrap(),
                    _ => ClusterConfig::from_toml(&text).unwrap(),
                };
                assert_eq!(loaded, config, "{format}:\n{text}");
                let rebuilt = loaded.build().unwrap();
                assert_eq!(rebuilt.algorithm(), original.algorithm());
                for k in &keys {
                    assert_eq!(rebuilt.node_name(rebuilt.route(k)), original.node_name(original.route(k)));
                }
                assert_eq!(fingerprint(&*rebuilt), fingerprint(&*original), "{format}");
                assert_eq!(loaded.node_set().unwrap().get(crate::NodeId::from_index(1)).label("zone"), Some("z1"));
            }
        }
    }

    #[test]
    fn malformed_input_is_a_typed_error() {
        for bad in [
            "{",
            r#"{"spec": {"algorithm": "nope"}, "nodes": [{"name": "a"}]}"#,
            r#"{"spec": {"algorithm": "ring"}, "nodes": [{"name": "a", "colour": "red"}]}"#,
            r#"{"spec": {"algorithm": "ring"}}"#,
        ] {
            assert!(matches!(ClusterConfig::from_json(bad), Err(Error::Malformed(_))), "{bad}");
        }
        assert!(matches!(ClusterConfig::from_toml("spec = 3"), Err(Error::Malformed(_))));
        let dup = r#"{"spec": {"algorithm": "ring"}, "nodes": [{"name": "a"}, {"name": "a"}]}"#;
        assert_eq!(ClusterConfig::from_json(dup).unwrap_err(), Error::DuplicateNode { name: "a".into() });
        let weight = r#"{"spec": {"algorithm": "ring"}, "nodes": [{"name": "a", "weight": 0}]}"#;
        assert!(matches!(ClusterConfig::from_json(weight), Err(Error::InvalidWeight { .. })));
        let vnodes = r#"{"spec": {"algorithm": "jump", "vnodes": 5}, "nodes": [{"name": "a"}]}"#;
        assert!(matches!(ClusterConfig::from_json(vnodes), Err(Error::InvalidParameter { name: "vnodes", .. })));
        let big_seed = ClusterConfig::new(
            RouterSpec::new(Algorithm::Ring).with_hasher(KeyHasher::Xxh3 { seed: u64::MAX }),
            vec![NodeConfig::new("a")],
        );
        assert!(matches!(big_seed.to_toml(), Err(Error::Malformed(_))));
        assert_eq!(ClusterConfig::from_json(&big_seed.to_json().unwrap()).unwrap(), big_seed);
    }

    #[test]
    fn from_node_set_keeps_everything() {
        let set = ClusterConfig::new(RouterSpec::new(Algorithm::Ring), nodes()).node_set().unwrap();
        let config = ClusterConfig::from_node_set(RouterSpec::new(Algorithm::Ring), &set);
        assert_eq!(config.node_set().unwrap(), set);
    }
}

//! Ceph's CRUSH placement, exact with `crushtool` and `osdmaptool` (Ceph 16.2): a CRUSH map in
//! its text form ([`CrushMap::parse`]), the rule interpreter over straw2 (and uniform, list,
//! tree) buckets with Ceph's fixed-point logarithm and tunables, the device reweight vector
//! ([`CrushRouter::with_reweight`]), and objects to placement groups to devices ([`Pool`]).
//!
//! Not modelled: upmap exceptions (`pg_upmap_items`), `pg_temp`, primary affinity, balancer
//! weight sets (`choose_args`, refused when parsed) and straw (v1) buckets (refused, naming the
//! bucket). Those are cluster state beyond the map, or legacy; a map that has none of them maps
//! exactly as the cluster does.
//!
//! Cost: one mapping descends the hierarchy once per replica (more on collisions): one
//! `rjenkins1` hash and one table logarithm per item of every straw2 bucket visited. A
//! 3-replica mapping over 10 racks × 10 hosts × 10 devices is about 90 draws.

mod algs;
mod classes;
pub(crate) mod hash;
mod ln;
mod ln_table;
mod map;
mod mapper;
mod parse;
mod pg;

use std::ops::ControlFlow;
use std::sync::Arc;

pub use map::{BucketAlg, CrushMap, Tunables};
pub use mapper::{Workspace, ITEM_NONE};
pub use pg::{ceph_stable_mod, Pool};

use crate::algorithm::Algorithm;
use crate::error::{Error, Result};
use crate::node::{NodeId, NodeSet};
use crate::router::Router;

/// `ceph_str_hash_rjenkins`: the hash Ceph files an object name by (public for tools that print
/// it).
pub fn object_hash(name: &[u8]) -> u32 {
    hash::str_hash(name)
}

/// CRUSH's `rjenkins1` hash of two words (the reweight test, the `hashpspool` seed).
pub fn rjenkins1_2(a: u32, b: u32) -> u32 {
    hash::hash2(a, b)
}

/// The fixed-point logarithm straw2 draws with: `2^44 · log2(u + 1)` for `u <= 0xffff`.
///
/// # Errors
/// [`Error::InvalidParameter`] for `u > 0xffff`.
pub fn crush_ln(u: u32) -> Result<u64> {
    if u > 0xffff {
        return Err(Error::InvalidParameter { name: "u", reason: format!("{u} exceeds 0xffff") });
    }
    Ok(ln::crush_ln(u))
}

/// A reweight as Ceph stores it (`ceph osd reweight`): 16.16 fixed point of a value in 0..=1,
/// truncated from single precision as `crushtool --weight` does.
///
/// # Errors
/// [`Error::InvalidParameter`] outside 0..=1 or not finite.
pub fn reweight_fixed(weight: f64) -> Result<u32> {
    if !(weight.is_finite() && (0.0..=1.0).contains(&weight)) {
        return Err(Error::InvalidParameter { name: "reweight", reason: format!("{weight} must be between 0 and 1") });
    }
    Ok(((weight as f32) * 65536.0f32) as u32)
}

/// A CRUSH map with one rule and a reweight vector: a [`Router`] over the map's devices.
///
/// [`map_x`](CrushRouter::map_x) is CRUSH itself: the rule's result for input `x` and `n`
/// replicas, holes included. As a [`Router`], a key's input is its Ceph object hash
/// ([`object_hash`]) and its route the first device of the 1-replica result (for every input
/// CRUSH finds no device for, as when every device is out, the map's first device: use
/// [`map_x`](CrushRouter::map_x) where that matters). Immutable; cheap to clone (the map is
/// shared).
#[derive(Clone, Debug)]
pub struct CrushRouter {
    map: Arc<CrushMap>,
    rule: u32,
    weights: Vec<u32>,
    nodes: NodeSet,
    /// NodeId by device id.
    node_of: Vec<Option<NodeId>>,
}

impl CrushRouter {
    /// A router over `map` with rule `rule` (a name, or an id), every device at reweight 1.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] `rule` naming the rules the map has; [`Error::NoNodes`] when
    /// the map has no device.
    pub fn new(map: Arc<CrushMap>, rule: &str) -> Result<CrushRouter> {
        let id = map.rule_id(rule).ok_or_else(|| {
            let names: Vec<String> = map.rules().map(|(id, n)| format!("{n} ({id})")).collect();
            Error::InvalidParameter {
                name: "rule",
                reason: format!("{rule:?} is not a rule of the map (it has {})", names.join(", ")),
            }
        })?;
        let names: Vec<&str> = map.devices().map(|(_, n)| n).collect();
        let nodes = NodeSet::from_names(names)?;
        let mut node_of = vec![None; map.max_devices()];
        for (i, (id, _)) in map.devices().enumerate() {
            node_of[id as usize] = Some(NodeId::from_index(i as u32));
        }
        let weights = map.default_reweights();
        Ok(CrushRouter { map, rule: id, weights, nodes, node_of })
    }

    /// The same router with device `name`'s reweight set to `weight` (0..=1; 0 is `ceph osd
    /// out`), applied as CRUSH applies it: a device of reweight `w` keeps an input when the
    /// input's hash falls under `w`, and is retried past otherwise.
    ///
    /// # Errors
    /// [`Error::UnknownNode`] for a name that is not a device of the map,
    /// [`Error::InvalidParameter`] for a weight outside 0..=1.
    pub fn with_reweight(mut self, name: &str, weight: f64) -> Result<CrushRouter> {
        let id = self.map.device_id(name).ok_or_else(|| Error::UnknownNode { name: name.to_owned() })?;
        self.weights[id as usize] = reweight_fixed(weight)?;
        Ok(self)
    }

    /// The map.
    pub fn map(&self) -> &Arc<CrushMap> {
        &self.map
    }

    /// The rule's id.
    pub fn rule(&self) -> u32 {
        self.rule
    }

    /// The reweight vector, 16.16 per device id.
    pub fn reweights(&self) -> &[u32] {
        &self.weights
    }

    /// CRUSH: the devices the rule maps input `x` to for `n` replicas, in CRUSH's order, into
    /// `out` (device ids; [`ITEM_NONE`] marks an `indep` hole). What `crushtool --test
    /// --show-mappings --num-rep n` prints for `x`. `ws` is scratch space reused across calls.
    pub fn map_x(&self, x: u32, n: usize, out: &mut Vec<i32>, ws: &mut Workspace) {
        mapper::do_rule(&self.map, self.rule, x, out, n, &self.weights, ws);
    }

    /// The [`NodeId`] of device `id` (as [`Router::nodes`] numbers them).
    pub fn node_of_device(&self, id: i32) -> Option<NodeId> {
        usize::try_from(id).ok().and_then(|i| self.node_of.get(i).copied().flatten())
    }

    fn first_device(&self, x: u32) -> NodeId {
        let mut out = Vec::with_capacity(1);
        let mut ws = Workspace::default();
        self.map_x(x, 1, &mut out, &mut ws);
        out.first().and_then(|&d| self.node_of_device(d)).unwrap_or(NodeId::from_index(0))
    }
}

impl Router for CrushRouter {
    fn algorithm(&self) -> Algorithm {
        Algorithm::Crush
    }

    fn nodes(&self) -> &NodeSet {
        &self.nodes
    }

    fn route(&self, key: &[u8]) -> NodeId {
        self.first_device(object_hash(key))
    }

    /// `hash` is CRUSH's input `x` itself, which is 32 bits.
    fn route_hash(&self, hash: u64) -> Result<NodeId> {
        let x = u32::try_from(hash).map_err(|_| Error::InvalidParameter {
            name: "input",
            reason: format!("{hash} exceeds CRUSH's 32-bit input"),
        })?;
        Ok(self.first_device(x))
    }

    /// The rule's result for as many replicas as there are devices, holes skipped, then the
    /// remaining devices in id order: a complete list whose head is CRUSH's placement for
    /// replicated rules.
    fn preference(&self, key: &[u8], visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) -> Result<()> {
        let mut out = Vec::new();
        self.map_x(object_hash(key), self.nodes.len(), &mut out, &mut Workspace::default());
        let mut seen = vec![false; self.nodes.len()];
        let rest = self.map.devices().map(|(id, _)| id);
        for d in out.iter().copied().chain(rest) {
            let Some(id) = self.node_of_device(d) else { continue };
            if std::mem::replace(&mut seen[id.index()], true) {
                continue;
            }
            if visit(id).is_break() {
                break;
            }
        }
        Ok(())
    }

    fn memory_bytes(&self) -> usize {
        let map = &self.map;
        let buckets: usize = map
            .buckets
            .iter()
            .flatten()
            .map(|b| b.items.len() * 8 + b.sum_weights.len() * 4 + b.node_weights.len() * 4 + 96)
            .sum();
        crate::algo::memory_bytes::<CrushRouter>(buckets + self.weights.len() * 4 + self.node_of.len() * 8, &self.nodes)
    }

    fn canonical_bytes(&self) -> Vec<u8> {
        let mut out = b"crush\0".to_vec();
        out.extend_from_slice(&self.map.canonical_bytes());
        out.extend_from_slice(&self.rule.to_le_bytes());
        for w in &self.weights {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out
    }
}

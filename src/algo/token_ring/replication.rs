//! Cassandra's replica placement on a [`TokenRing`], as the DataStax drivers compute their
//! token-aware replica lists: the [`Replication`] spec and the walks of `SimpleStrategy` and
//! `NetworkTopologyStrategy` ([`TokenRing::replicas_for_token`] states the rules).
//!
//! One deliberate difference from the driver: it sets a node aside again each time the walk
//! meets another of its tokens, and then appends it twice (which needs an RF above the
//! set-aside count, e.g. RF 5 over two racks). Here a node is set aside once, as Cassandra's own
//! placement does (its set-aside list is a `LinkedHashSet`), so lists are always distinct;
//! wherever the driver's list is distinct, the two are equal.

use std::fmt;
use std::str::FromStr;

use super::topology::Datacenter;
use super::TokenRing;
use crate::error::{Error, Result};
use crate::hash::cassandra::token_to_position;
use crate::node::NodeId;

/// A Cassandra keyspace's replication: how many replicas, and where.
///
/// Text form (`FromStr` and `Display`): `simple:RF` or `nts:DC=RF[,DC=RF…]`, e.g. `simple:3`,
/// `nts:dc1=3,dc2=2`. Replication factors are whole numbers ≥ 0; datacenter names are the
/// nodes' `zone` labels.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Replication {
    /// `SimpleStrategy`: the next `replication_factor` distinct nodes clockwise from the key's
    /// token (fewer if the ring has fewer nodes), datacenters and racks ignored.
    Simple {
        /// Replicas per key.
        replication_factor: u32,
    },
    /// `NetworkTopologyStrategy`: per datacenter (`zone` label), its replication factor, in the
    /// order given (the order of the replica list is the ring's, not this one). A datacenter
    /// appears at most once.
    NetworkTopology(Vec<(String, u32)>),
}

impl Replication {
    /// The most replicas a key can get: the RF, or the sum of the datacenters' RFs.
    pub fn max_replicas(&self) -> u64 {
        match self {
            Replication::Simple { replication_factor } => u64::from(*replication_factor),
            Replication::NetworkTopology(dcs) => dcs.iter().map(|(_, rf)| u64::from(*rf)).sum(),
        }
    }
}

/// The one-line error of a malformed replication spec.
fn malformed(spec: &str, why: &str) -> Error {
    Error::InvalidParameter {
        name: "replication",
        reason: format!("{spec:?}: {why} (expected simple:RF or nts:DC=RF[,DC=RF...])"),
    }
}

/// A replication factor: a whole number that fits in 32 bits.
fn parse_rf(spec: &str, text: &str) -> Result<u32> {
    let ok = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    text.parse()
        .ok()
        .filter(|_| ok)
        .ok_or_else(|| malformed(spec, &format!("replication factor {text:?} is not a whole number")))
}

impl FromStr for Replication {
    type Err = Error;

    /// Parses `simple:RF` or `nts:DC=RF[,DC=RF…]` (no spaces inside; surrounding whitespace is
    /// ignored).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] `replication`, one line quoting the spec: an unknown
    /// strategy, a replication factor that is not a whole number, an empty datacenter name, a
    /// datacenter given twice, a missing `=`.
    fn from_str(text: &str) -> Result<Replication> {
        let spec = text.trim();
        let Some((strategy, rest)) = spec.split_once(':') else {
            return Err(malformed(spec, "no strategy"));
        };
        match strategy {
            "simple" => Ok(Replication::Simple { replication_factor: parse_rf(spec, rest)? }),
            "nts" => {
                let mut dcs: Vec<(String, u32)> = Vec::new();
                for part in rest.split(',') {
                    let Some((dc, rf)) = part.split_once('=') else {
                        return Err(malformed(spec, &format!("{part:?} is not DC=RF")));
                    };
                    if dc.is_empty() || dc.contains(char::is_whitespace) {
                        return Err(malformed(spec, &format!("datacenter name {dc:?} is empty or has spaces")));
                    }
                    if dcs.iter().any(|(d, _)| d == dc) {
                        return Err(malformed(spec, &format!("datacenter {dc:?} is given twice")));
                    }
                    dcs.push((dc.to_owned(), parse_rf(spec, rf)?));
                }
                Ok(Replication::NetworkTopology(dcs))
            }
            other => Err(malformed(spec, &format!("unknown strategy {other:?}"))),
        }
    }
}

impl fmt::Display for Replication {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Replication::Simple { replication_factor } => write!(f, "simple:{replication_factor}"),
            Replication::NetworkTopology(dcs) => {
                f.write_str("nts:")?;
                for (i, (dc, rf)) in dcs.iter().enumerate() {
                    write!(f, "{}{dc}={rf}", if i == 0 { "" } else { "," })?;
                }
                Ok(())
            }
        }
    }
}

/// An insertion-ordered set of small integers (node ids, rack indices) that allocates nothing
/// for the handful a replica walk usually marks: members inline and scanned linearly up to
/// [`Marks::INLINE`], then on the heap with a bitset over `0..universe` for membership, so a
/// long walk (many racks, a large RF) stays linear. Small on purpose (48 bytes): a walk holds
/// three per datacenter and is built for every key.
struct Marks {
    inline: [u32; Marks::INLINE],
    len: u32,
    universe: u32,
    spill: Option<Box<Spill>>,
}

/// The members of a [`Marks`] past [`Marks::INLINE`]: all of them in order, and a bitset.
struct Spill {
    members: Vec<u32>,
    bits: Vec<u64>,
}

impl Marks {
    const INLINE: usize = 8;

    fn new(universe: usize) -> Marks {
        Marks { inline: [0; Marks::INLINE], len: 0, universe: universe as u32, spill: None }
    }

    fn len(&self) -> usize {
        self.len as usize
    }

    /// The members, in insertion order.
    fn members(&self) -> &[u32] {
        match &self.spill {
            None => &self.inline[..self.len as usize],
            Some(s) => &s.members,
        }
    }

    #[inline]
    fn contains(&self, v: u32) -> bool {
        match &self.spill {
            None => self.inline[..self.len as usize].contains(&v),
            Some(s) => s.bits[v as usize / 64] & (1 << (v % 64)) != 0,
        }
    }

    /// Adds `v` (nothing when already a member).
    fn insert(&mut self, v: u32) {
        if self.contains(v) {
            return;
        }
        let len = self.len as usize;
        match &mut self.spill {
            None if len < Marks::INLINE => self.inline[len] = v,
            None => {
                let mut bits = vec![0u64; (self.universe as usize).div_ceil(64)];
                for &m in &self.inline {
                    bits[m as usize / 64] |= 1 << (m % 64);
                }
                bits[v as usize / 64] |= 1 << (v % 64);
                let mut members = self.inline.to_vec();
                members.push(v);
                self.spill = Some(Box::new(Spill { members, bits }));
            }
            Some(s) => {
                s.members.push(v);
                s.bits[v as usize / 64] |= 1 << (v % 64);
            }
        }
        self.len += 1;
    }

    /// Empties the set (keeping any heap space).
    fn clear(&mut self) {
        self.len = 0;
        if let Some(s) = &mut self.spill {
            s.members.clear();
            s.bits.fill(0);
        }
    }
}

impl TokenRing {
    /// Cassandra's replica list for the key whose `Murmur3Partitioner` token is `token`, in the
    /// DataStax driver's order. SimpleStrategy: the first RF distinct nodes clockwise from the
    /// key's owner (fewer when the ring has fewer nodes; the first is
    /// [`TokenRing::route_token`]`(token)`). NetworkTopologyStrategy, per datacenter with RF > 0
    /// in the order the datacenters first appear walking the ring from its smallest token (see
    /// [`TokenRing::datacenters`]): walk that datacenter's tokens from the owner position,
    /// skipping nodes already chosen; while some rack of the datacenter has no replica yet, set
    /// aside a node whose rack already has one; once every rack has one, append the set-aside
    /// nodes in order and go on; stop at the datacenter's RF or when as many nodes were placed
    /// as it has (an RF above its node count gives all its nodes).
    ///
    /// Equal to the driver's list on every layout of the compatibility vectors; the one
    /// deliberate difference: the driver sets a node aside once per token of it that the walk
    /// meets and may then list it twice (it needs an RF above the set-aside count, e.g. RF 5 over
    /// two racks); here, as in Cassandra itself, a node is set aside once, so replicas are always
    /// distinct. A node's rack is its `rack` label (absent: the rack `""`); nodes without a
    /// `zone` are in no datacenter.
    ///
    /// Cost: one search, then a walk from the owner position that stops as soon as the
    /// replicas are placed: about RF steps for SimpleStrategy, and per datacenter about RF
    /// steps plus those over racks already holding a replica (one binary search into that
    /// datacenter's tokens to start). Allocates the result (and a bitset when a walk marks more
    /// than 16 nodes or racks).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] `replication` when a NetworkTopologyStrategy names a
    /// datacenter that no node of the ring is in (whatever its RF).
    pub fn replicas_for_token(&self, token: i64, replication: &Replication) -> Result<Vec<NodeId>> {
        let start = self.circle.successor(token_to_position(token));
        match replication {
            Replication::Simple { replication_factor } => Ok(self.simple_replicas(start, *replication_factor)),
            Replication::NetworkTopology(spec) => {
                let walks = self.datacenter_walks(spec)?;
                Ok(self.network_topology_replicas(start, walks, SHARED_WALK))
            }
        }
    }

    /// SimpleStrategy: the first `rf` distinct nodes clockwise from circle index `start`
    /// (what [`Router::preference`](crate::Router::preference) gives, without its allocation
    /// for the visited set).
    fn simple_replicas(&self, start: usize, rf: u32) -> Vec<NodeId> {
        let want = (rf as usize).min(self.nodes.len());
        let owners = self.circle.owners();
        let mut chosen = Marks::new(self.nodes.len());
        let mut i = start;
        while chosen.len() < want {
            chosen.insert(owners[i]);
            i = if i + 1 == owners.len() { 0 } else { i + 1 };
        }
        chosen.members().iter().map(|&n| NodeId::from_index(n)).collect()
    }

    /// A fresh walk for each datacenter (ring order) the spec gives an RF above 0.
    pub(super) fn datacenter_walks(&self, spec: &[(String, u32)]) -> Result<Vec<Option<DcWalk>>> {
        let dcs = self.topology.dcs();
        let mut walks: Vec<Option<DcWalk>> = std::iter::repeat_with(|| None).take(dcs.len()).collect();
        for (name, rf) in spec {
            let Some(d) = self.topology.index_of(name) else {
                let known: Vec<&str> = self.topology.names().collect();
                return Err(Error::InvalidParameter {
                    name: "replication",
                    reason: format!(
                        "datacenter {name:?} is not in the ring (no node has zone {name:?}; its datacenters: {})",
                        if known.is_empty() { "none".to_owned() } else { known.join(", ") }
                    ),
                });
            };
            walks[d] = (*rf > 0).then(|| DcWalk::new(d, *rf, &dcs[d], self.nodes.len()));
        }
        Ok(walks)
    }

    /// NetworkTopologyStrategy from circle index `start`, running `walks` (one per datacenter
    /// with an RF, from [`TokenRing::datacenter_walks`]).
    ///
    /// Each datacenter's walk only looks at its own tokens, so the walks can be interleaved:
    /// one sequential pass over the ring's next `shared` tokens ([`SHARED_WALK`]; the tests vary
    /// it, since any value must give the same lists) feeds every datacenter
    /// at once (its owners are contiguous, a few cache lines), which finishes most walks when
    /// the datacenters' tokens are interleaved. A walk still open after it continues over its
    /// datacenter's own token list from the first token past the pass (one binary search), so
    /// a small or clustered datacenter costs its own tokens, never the whole ring.
    pub(super) fn network_topology_replicas(
        &self,
        start: usize,
        mut walks: Vec<Option<DcWalk>>,
        shared: usize,
    ) -> Vec<NodeId> {
        let dcs = self.topology.dcs();
        let owners = self.circle.owners();
        let p = owners.len();
        let shared = shared.min(p);
        let mut open = walks.iter().filter(|w| w.as_ref().is_some_and(|w| !w.done(&dcs[w.dc]))).count();
        for step in 0..shared {
            if open == 0 {
                break;
            }
            let i = if start + step >= p { start + step - p } else { start + step };
            let node = owners[i];
            let Some(d) = self.topology.dc_of(node) else { continue };
            if let Some(w) = walks[d].as_mut().filter(|w| !w.done(&dcs[d])) {
                w.visit(node, self.topology.rack_of(NodeId::from_index(node)), &dcs[d]);
                open -= usize::from(w.done(&dcs[d]));
            }
        }
        let resume = if start + shared >= p { start + shared - p } else { start + shared };
        for w in walks.iter_mut().flatten() {
            let dc = &dcs[w.dc];
            let (first, len) = (dc.first_at_or_after(resume), dc.len());
            let mut k = first;
            while !w.done(dc) {
                let node = owners[dc.token(k)];
                w.visit(node, self.topology.rack_of(NodeId::from_index(node)), dc);
                k = if k + 1 == len { 0 } else { k + 1 };
            }
        }
        let mut out = Vec::with_capacity(walks.iter().flatten().map(|w| w.chosen.len()).sum());
        for w in walks.iter().flatten() {
            out.extend(w.chosen.members().iter().map(|&n| NodeId::from_index(n)));
        }
        out
    }
}

/// How many ring tokens [`TokenRing::replicas_for_token`]'s NetworkTopologyStrategy walks
/// read in one shared sequential pass before each open walk goes on over its own datacenter's
/// token list: 256 bytes of owners, enough for RF 3 in each of a few interleaved datacenters.
const SHARED_WALK: usize = 64;

/// One datacenter's NetworkTopologyStrategy walk: its state between two of its tokens.
pub(super) struct DcWalk {
    /// The datacenter's index.
    dc: usize,
    remaining: u32,
    /// Replicas placed directly (not from the set-aside list): the walk ends when it equals the
    /// datacenter's node count, as the driver's does.
    placed: u32,
    /// Tokens of the datacenter visited: the walk ends after all of them.
    visited: usize,
    /// Racks holding a replica.
    racks: Marks,
    /// Nodes set aside (their rack already holds a replica), in order.
    aside: Marks,
    /// The datacenter's replicas so far, in order.
    chosen: Marks,
}

impl DcWalk {
    fn new(d: usize, rf: u32, dc: &Datacenter, node_count: usize) -> DcWalk {
        DcWalk {
            dc: d,
            remaining: rf,
            placed: 0,
            visited: 0,
            racks: Marks::new(dc.racks as usize),
            aside: Marks::new(node_count),
            chosen: Marks::new(node_count),
        }
    }

    /// Whether the walk is over: RF reached, as many nodes placed as the datacenter has, or
    /// every token of it visited.
    #[inline]
    fn done(&self, dc: &Datacenter) -> bool {
        self.remaining == 0 || self.placed == dc.nodes || self.visited == dc.len()
    }

    /// The next token of the datacenter, owned by `node` of rack `rack`.
    fn visit(&mut self, node: u32, rack: u32, dc: &Datacenter) {
        self.visited += 1;
        if self.chosen.contains(node) || self.aside.contains(node) {
            return;
        }
        if self.racks.contains(rack) && self.racks.len() < dc.racks as usize {
            self.aside.insert(node);
            return;
        }
        self.chosen.insert(node);
        self.placed += 1;
        self.remaining -= 1;
        self.racks.insert(rack);
        if self.racks.len() == dc.racks as usize {
            // Every rack holds a replica: the set-aside nodes come next, in order. (They do not
            // count as placed: the driver stops at `placed == nodes` only.)
            let take = self.aside.len().min(self.remaining as usize);
            for &a in &self.aside.members()[..take] {
                self.chosen.insert(a);
            }
            self.remaining -= take as u32;
            self.aside.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Marks;

    #[test]
    fn marks_keep_order_and_membership_past_the_inline_capacity() {
        let mut m = Marks::new(1000);
        let values: Vec<u32> = (0..100u32).map(|i| (i * 617) % 1000).collect();
        for (n, &v) in values.iter().enumerate() {
            assert!(!m.contains(v));
            m.insert(v);
            m.insert(v);
            assert!(m.contains(v));
            assert_eq!(m.len(), n + 1);
            assert_eq!(m.members(), &values[..=n]);
        }
        assert!((0..1000)
            .filter(|v| m.contains(*v))
            .eq(values.iter().copied().collect::<std::collections::BTreeSet<u32>>()));
        m.clear();
        assert_eq!((m.len(), m.members()), (0, &[][..]));
        assert!(!m.contains(values[0]));
        m.insert(5);
        m.insert(values[3]);
        assert_eq!(m.members(), &[5, values[3]]);
        assert!(m.contains(5) && !m.contains(values[4]));
    }
}

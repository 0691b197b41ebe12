//! The datacenters and racks of a token ring, precomputed at build time so that a replica walk
//! visits only the tokens of the datacenter it is filling and stops as soon as it is done.
//!
//! A node's datacenter is its `zone` label (nodes without one are in no datacenter and never
//! NetworkTopologyStrategy replicas); its rack is its `rack` label, a node without one being in
//! the rack `""` of its datacenter. (The DataStax driver leaves rackless nodes out of a
//! datacenter's rack and host counts; Cassandra's snitches always give a rack, so the two agree
//! on every real cluster.)

use std::collections::BTreeMap;

use crate::node::{NodeId, NodeSet};

/// `dc_of` of a node without a `zone` label.
const NO_DC: u32 = u32::MAX;

/// Per-datacenter token lists and rack/host counts (see the module docs).
#[derive(Clone, Debug)]
pub(super) struct Topology {
    /// In the order the datacenters first appear walking the ring from its smallest token.
    dcs: Vec<Datacenter>,
    /// Datacenter name → index in `dcs`.
    by_name: BTreeMap<String, u32>,
    /// Per node id: its datacenter's index in `dcs`, [`NO_DC`] without a `zone` label.
    dc_of: Vec<u32>,
    /// Per node id: its rack's index among its datacenter's racks (0 when in no datacenter).
    rack_of: Vec<u32>,
}

/// One datacenter: where its tokens are on the circle, and how many racks and nodes it has.
#[derive(Clone, Debug)]
pub(super) struct Datacenter {
    name: String,
    /// Circle indices of its tokens, ascending; `None` when it holds every token of the ring
    /// (then the indices are `0..P` and storing them would only cost memory).
    tokens: Option<Vec<u32>>,
    token_count: usize,
    /// Distinct racks among its nodes.
    pub(super) racks: u32,
    /// Its nodes.
    pub(super) nodes: u32,
}

impl Datacenter {
    /// Number of its tokens.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.token_count
    }

    /// Index into its token list of the first of its tokens at circle index `>= start`,
    /// wrapping to 0. O(log P_dc).
    #[inline]
    pub(super) fn first_at_or_after(&self, start: usize) -> usize {
        let i = match &self.tokens {
            Some(t) => t.partition_point(|&c| (c as usize) < start),
            None => start,
        };
        if i == self.token_count {
            0
        } else {
            i
        }
    }

    /// Circle index of its `i`-th token.
    #[inline]
    pub(super) fn token(&self, i: usize) -> usize {
        match &self.tokens {
            Some(t) => t[i] as usize,
            None => i,
        }
    }
}

impl Topology {
    /// The topology of `nodes` on a circle whose points have `owners` (ascending points). O(P +
    /// N log N).
    pub(super) fn build(nodes: &NodeSet, owners: &[u32]) -> Topology {
        let zones: Vec<Option<&str>> = nodes.iter().map(|(_, n)| n.label("zone")).collect();
        // Datacenters numbered in the order their first token appears.
        const UNSEEN: u32 = NO_DC - 1;
        let mut dc_of = vec![UNSEEN; nodes.len()];
        let mut by_name: BTreeMap<String, u32> = BTreeMap::new();
        let mut lists: Vec<Vec<u32>> = Vec::new();
        for (i, &o) in owners.iter().enumerate() {
            let o = o as usize;
            if dc_of[o] == UNSEEN {
                dc_of[o] = match zones[o] {
                    None => NO_DC,
                    Some(zone) => {
                        let next = lists.len() as u32;
                        let d = *by_name.entry(zone.to_owned()).or_insert(next);
                        if d == next {
                            lists.push(Vec::new());
                        }
                        d
                    }
                };
            }
            if dc_of[o] != NO_DC {
                lists[dc_of[o] as usize].push(i as u32);
            }
        }
        let mut names = vec![String::new(); lists.len()];
        for (name, &d) in &by_name {
            names[d as usize].clone_from(name);
        }
        let (rack_of, racks, hosts) = racks(nodes, &dc_of, lists.len());
        let whole = lists.len() == 1 && lists[0].len() == owners.len();
        let dcs = lists
            .into_iter()
            .zip(names)
            .enumerate()
            .map(|(d, (list, name))| Datacenter {
                name,
                token_count: list.len(),
                tokens: if whole { None } else { Some(list) },
                racks: racks[d],
                nodes: hosts[d],
            })
            .collect();
        Topology { dcs, by_name, dc_of, rack_of }
    }

    /// The datacenters, in ring order.
    pub(super) fn dcs(&self) -> &[Datacenter] {
        &self.dcs
    }

    /// Their names, in ring order.
    pub(super) fn names(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.dcs.iter().map(|d| d.name.as_str())
    }

    /// The index of the datacenter named `name`.
    pub(super) fn index_of(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).map(|&d| d as usize)
    }

    /// The datacenter index of node `node`, `None` when it has no `zone` label.
    #[inline]
    pub(super) fn dc_of(&self, node: u32) -> Option<usize> {
        let d = self.dc_of[node as usize];
        (d != NO_DC).then_some(d as usize)
    }

    /// The rack index of node `id` within its datacenter.
    #[inline]
    pub(super) fn rack_of(&self, id: NodeId) -> u32 {
        self.rack_of[id.index()]
    }

    /// Heap bytes (by capacity; the name map estimated per entry as `NodeSet` does).
    pub(super) fn heap_bytes(&self) -> usize {
        let lists: usize =
            self.dcs.iter().map(|d| d.tokens.as_ref().map_or(0, |t| t.capacity() * 4) + d.name.capacity()).sum();
        let map: usize = self.by_name.keys().map(|k| k.capacity() + 64).sum();
        lists
            + map
            + self.dcs.capacity() * std::mem::size_of::<Datacenter>()
            + (self.dc_of.capacity() + self.rack_of.capacity()) * 4
    }
}

/// Per node its rack index within its datacenter, and per datacenter its rack and node counts.
fn racks(nodes: &NodeSet, dc_of: &[u32], dc_count: usize) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let mut rack_ids: Vec<BTreeMap<&str, u32>> = vec![BTreeMap::new(); dc_count];
    let mut rack_of = vec![0u32; nodes.len()];
    let mut hosts = vec![0u32; dc_count];
    for (id, node) in nodes.iter() {
        let d = dc_of[id.index()];
        if d >= dc_count as u32 {
            continue;
        }
        let ids = &mut rack_ids[d as usize];
        let next = ids.len() as u32;
        rack_of[id.index()] = *ids.entry(node.label("rack").unwrap_or("")).or_insert(next);
        hosts[d as usize] += 1;
    }
    let racks = rack_ids.iter().map(|r| r.len() as u32).collect();
    (rack_of, racks, hosts)
}

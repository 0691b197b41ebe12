//! The routers compared by the scale-out experiment, built for every cluster size of a growth
//! schedule (4, 5, …, 8 nodes), so that a key's move between two sizes is exactly what a client
//! library would do after the membership change.

use std::ops::ControlFlow;

use hashroute::{Hasher, Jump, KeyHasher, Modulo, NodeId, NodeSet, Ring, Router};

/// Algorithms the experiment knows, in report order: (CLI name, description).
pub(crate) const ALGORITHMS: &[(&str, &str)] = &[
    ("modulo", "hash % N"),
    ("ring1", "naive ring, 1 point per node"),
    ("ring160", "ring, 160 points per node"),
    ("jump", "jump consistent hash"),
    ("rendezvous", "rendezvous (highest random weight)"),
    ("slots", "Redis Cluster slots, rebalanced by moving slots to the new node"),
];

/// One router per cluster size: `names[..initial]`, `names[..initial + 1]`, … `names[..]`.
///
/// # Errors
/// An unknown algorithm name, or a node set the crate rejects (duplicate or empty names).
pub(crate) fn routers_for_growth(algo: &str, names: &[String], initial: usize) -> Result<Vec<Box<dyn Router>>, String> {
    let sizes = initial..=names.len();
    let sets: Vec<NodeSet> =
        sizes.map(|n| NodeSet::from_names(&names[..n]).map_err(|e| e.to_string())).collect::<Result<_, _>>()?;
    let hasher = Hasher::default();
    match algo {
        "modulo" => Ok(sets.into_iter().map(|s| Box::new(Modulo::new(s, hasher)) as Box<dyn Router>).collect()),
        "ring1" | "ring160" => {
            let v = if algo == "ring1" { 1 } else { 160 };
            sets.into_iter()
                .map(|s| {
                    Ring::builder().vnodes(v).hasher(hasher).node_set(s).build().map(|r| Box::new(r) as Box<dyn Router>)
                })
                .collect::<Result<_, _>>()
                .map_err(|e| e.to_string())
        }
        "jump" => sets
            .into_iter()
            .map(|s| Jump::new(s, hasher).map(|r| Box::new(r) as Box<dyn Router>))
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string()),
        "rendezvous" => Ok(sets.into_iter().map(|s| Box::new(HrwStandIn::new(s, hasher)) as Box<dyn Router>).collect()),
        "slots" => Ok(SlotsStandIn::growth(sets).into_iter().map(|r| Box::new(r) as Box<dyn Router>).collect()),
        other => Err(format!(
            "unknown algorithm {other:?}; expected one of {}",
            ALGORITHMS.iter().map(|a| a.0).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// PENDING(algos): stand-in for `hashroute::Rendezvous` until it lands in main. Textbook
/// highest-random-weight: the node with the largest `mix(hash(key) ^ hash(node))` wins; adding a
/// node moves exactly the keys the new node wins, ≈ 1/N of them.
pub(crate) struct HrwStandIn {
    nodes: NodeSet,
    hasher: Hasher,
    node_hashes: Vec<u64>,
}

impl HrwStandIn {
    fn new(nodes: NodeSet, hasher: Hasher) -> HrwStandIn {
        let node_hashes = nodes.iter().map(|(_, n)| hasher.hash(n.name().as_bytes())).collect();
        HrwStandIn { nodes, hasher, node_hashes }
    }
}

/// SplitMix64's finalizer, so per-node scores of one key are independent.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Router for HrwStandIn {
    fn algorithm(&self) -> &'static str {
        "rendezvous"
    }
    fn nodes(&self) -> &NodeSet {
        &self.nodes
    }
    fn route(&self, key: &[u8]) -> NodeId {
        let h = self.hasher.hash(key);
        let best = (0..self.node_hashes.len()).max_by_key(|&i| (mix64(h ^ self.node_hashes[i]), i)).unwrap_or(0);
        NodeId::from_index(best as u32)
    }
    fn preference(&self, key: &[u8], visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) -> hashroute::Result<()> {
        let h = self.hasher.hash(key);
        let mut order: Vec<usize> = (0..self.node_hashes.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse((mix64(h ^ self.node_hashes[i]), i)));
        for i in order {
            if visit(NodeId::from_index(i as u32)).is_break() {
                break;
            }
        }
        Ok(())
    }
    fn memory_bytes(&self) -> usize {
        self.nodes.memory_bytes() + 8 * self.node_hashes.len()
    }
}

/// Number of Redis Cluster hash slots.
pub(crate) const SLOTS: usize = 16384;

/// Redis Cluster's key slot: CRC16-XMODEM of the hash tag (the bytes between the first `{` and
/// the first `}` after it, when non-empty) or of the whole key, mod 16384.
///
/// PENDING(algos): replace with `hashroute::slots::key_slot` once it lands in main.
pub(crate) fn key_slot(key: &[u8]) -> u16 {
    let hashed = match key.iter().position(|&b| b == b'{') {
        Some(open) => match key[open + 1..].iter().position(|&b| b == b'}') {
            Some(len) if len > 0 => &key[open + 1..open + 1 + len],
            _ => key,
        },
        None => key,
    };
    hashroute::hash::crc16_xmodem(hashed) % SLOTS as u16
}

/// PENDING(algos): stand-in for `hashroute::RedisSlots`. A slot table as a Redis Cluster
/// operator grows it: the first cluster splits the slots in equal contiguous ranges; each added
/// node then receives `16384 / N` slots taken from the currently largest owners (what
/// `redis-cli --cluster rebalance` converges to), so only the moved slots' keys move.
pub(crate) struct SlotsStandIn {
    nodes: NodeSet,
    owner: Vec<u32>,
}

impl SlotsStandIn {
    /// Routers for each node set of a growth schedule (each set extends the previous one).
    fn growth(sets: Vec<NodeSet>) -> Vec<SlotsStandIn> {
        let mut out: Vec<SlotsStandIn> = Vec::with_capacity(sets.len());
        for set in sets {
            let owner = match out.last() {
                None => (0..SLOTS).map(|s| (s * set.len() / SLOTS) as u32).collect(),
                Some(prev) => {
                    let mut owner = prev.owner.clone();
                    let mut count = vec![0usize; set.len()];
                    owner.iter().for_each(|&o| count[o as usize] += 1);
                    for new in prev.nodes.len()..set.len() {
                        for _ in 0..SLOTS / set.len() {
                            // Largest donor, lowest index on ties: deterministic.
                            let donor = (0..new).max_by_key(|&i| (count[i], std::cmp::Reverse(i))).unwrap_or(0);
                            // The donor's highest-numbered slot, as a reshard moves a range's tail.
                            let slot = owner.iter().rposition(|&o| o as usize == donor).unwrap_or(0);
                            owner[slot] = new as u32;
                            count[donor] -= 1;
                            count[new] += 1;
                        }
                    }
                    owner
                }
            };
            out.push(SlotsStandIn { nodes: set, owner });
        }
        out
    }
}

impl Router for SlotsStandIn {
    fn algorithm(&self) -> &'static str {
        "slots"
    }
    fn nodes(&self) -> &NodeSet {
        &self.nodes
    }
    fn route(&self, key: &[u8]) -> NodeId {
        NodeId::from_index(self.owner[key_slot(key) as usize])
    }
    fn memory_bytes(&self) -> usize {
        self.nodes.memory_bytes() + 4 * self.owner.len()
    }
}

//! Maglev hashing (Eisenbud et al., NSDI 2016), compatible with Envoy's Maglev load balancer.
//!
//! A lookup table of prime size M is filled by letting every node claim slots in turn along its
//! own permutation of `0..M`; a key is routed by `table[hash % M]`, one memory access. The table
//! is balanced to within one slot per node (for equal weights) and a membership change moves
//! slightly more than the ideal 1/N of the keys (a few percent more, see the crate's
//! `tests/beyond.rs`), in exchange for O(1) lookups.
//!
//! The filling rules are Envoy's (`source/extensions/load_balancing_policies/maglev`), so a table
//! built here over the same host keys and weights equals Envoy's slot for slot:
//!
//! - nodes sorted ascending by name bytes (the name plays Envoy's `ip:port` host key);
//! - node permutation `(offset + skip · j) % M` with `offset = XXH64(name, 0) % M` and
//!   `skip = XXH64(name, 1) % (M − 1) + 1`, independent of the key hasher;
//! - weighted round robin: normalized weights `w = weight / Σweight`; in iteration 1, 2, … each
//!   node (in name order) claims its next free slot unless `iteration · w < target`, after which
//!   its `target` grows by the largest normalized weight.
//!
//! Keys are hashed with the configured [`KeyHasher`] (default xxh3; Envoy hashes its request hash
//! policies to a `u64` itself, so compare with Envoy via [`Router::route_hash`]).

use std::ops::ControlFlow;

use crate::algo::builder::Configure;
use crate::algorithm::Algorithm;
use crate::arcs::{Arcs, Placement};
use crate::error::{Error, Result};
use crate::hash::KeyHasher;
use crate::node::Visited;
use crate::node::{Node, NodeId, NodeSet};
use crate::router::Router;
use crate::Builder;

/// Envoy's default table size, a prime.
pub(crate) const DEFAULT_TABLE_SIZE: u64 = 65537;
/// The largest table size accepted: 2^26 entries (256 MiB of `u32`s) bounds an accidental
/// allocation; real deployments use 65537 or a few multiples of the node count × 100.
pub(crate) const MAX_TABLE_SIZE: u64 = 1 << 26;

const EMPTY: u32 = u32::MAX;

/// A Maglev lookup table over named, optionally weighted nodes.
///
/// - **Cost**: `route` = one hash, one `%`, one load. Memory: 4 bytes per table entry plus the
///   node set (≈ 256 KiB at M = 65537). Build: O(M log M) expected probes (coupon collecting
///   the last free slots) and O(N) scratch, a few milliseconds at N = 1000, M = 65537.
/// - **Preference list**: the distinct nodes met walking the table forward from `hash % M`
///   (wrapping), then any node that owns no slot, in id order. The first is always the route.
/// - **Structure**: [`Router::arcs`] over the M table entries, so
///   [`migration::plan`](crate::migration::plan) between two tables of one size and hasher is
///   exact (entry by entry).
#[derive(Clone, Debug)]
pub struct Maglev {
    nodes: NodeSet,
    hasher: KeyHasher,
    table: Vec<u32>,
}

/// One node's state while filling: its permutation and weighted round-robin bookkeeping.
struct Filler {
    id: u32,
    offset: u64,
    skip: u64,
    /// The permutation position `(offset + skip · next) % M`, advanced incrementally (equal
    /// to Envoy's product form, without its overflow for large M).
    pos: u64,
    weight: f64,
    target: f64,
}

impl Maglev {
    /// A builder for this router (see [`Builder`]).
    pub fn builder() -> Builder<Maglev> {
        Builder::default()
    }

    /// A router over weight-1 nodes named `names`, with the default options.
    ///
    /// # Errors
    /// As [`NodeSet::from_names`](crate::NodeSet::from_names) and the builder's `build`.
    pub fn from_names<I>(names: I) -> Result<Maglev>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        Maglev::builder().nodes(names).build()
    }
}

/// The options of [`Builder<Maglev>`].
#[derive(Clone, Debug, Default)]
pub struct MaglevOptions {
    pub(crate) hasher: KeyHasher,
    pub(crate) table_size: Option<u64>,
}

impl Configure for Maglev {
    type Options = MaglevOptions;
}

impl Builder<Maglev> {
    /// The key hasher; default xxh3 with seed 0.
    pub fn hasher(mut self, hasher: KeyHasher) -> Builder<Maglev> {
        self.options.hasher = hasher;
        self
    }
}

impl Builder<Maglev> {
    /// The table size M, a prime at least the node count (default 65537, Envoy's; at most
    /// 2^26). More entries balance better and cost 4 bytes each.
    pub fn table_size(mut self, table_size: u64) -> Builder<Maglev> {
        self.options.table_size = Some(table_size);
        self
    }

    /// Builds the table.
    ///
    /// # Errors
    /// The [`NodeSet::new`] errors; [`Error::InvalidParameter`] (`table size`) when the table
    /// size is not a prime, is smaller than the node count, or exceeds 2^26.
    pub fn build(mut self) -> Result<Maglev> {
        Maglev::new(self.take_nodes()?, self.options.hasher, self.options.table_size.unwrap_or(DEFAULT_TABLE_SIZE))
    }
}

impl Maglev {
    /// Envoy's default table size.
    pub const DEFAULT_TABLE_SIZE: u64 = DEFAULT_TABLE_SIZE;
    /// The largest table size accepted.
    pub const MAX_TABLE_SIZE: u64 = MAX_TABLE_SIZE;

    fn new(nodes: NodeSet, hasher: KeyHasher, table_size: u64) -> Result<Maglev> {
        let table = build_table(&nodes, table_size)?;
        Ok(Maglev { nodes, hasher, table })
    }

    /// The lookup table: entry `i` is the id (as `u32`) of the node owning hashes `≡ i (mod M)`.
    pub fn table(&self) -> &[u32] {
        &self.table
    }

    /// The table size M.
    pub fn table_size(&self) -> u64 {
        self.table.len() as u64
    }

    /// The hasher used for keys.
    pub fn hasher(&self) -> KeyHasher {
        self.hasher
    }

    /// A new table with `node` added (same hasher and table size). O(M) rebuild.
    ///
    /// # Errors
    /// As [`NodeSet::with_node`]; [`Error::InvalidParameter`] when the table is smaller than
    /// the new node count.
    pub fn with_node(&self, node: Node) -> Result<Maglev> {
        Maglev::new(self.nodes.with_node(node)?, self.hasher, self.table_size())
    }

    /// A new table without node `name`. O(M) rebuild; ids after it shift down by one.
    ///
    /// # Errors
    /// As [`NodeSet::without_node`].
    pub fn without_node(&self, name: &str) -> Result<Maglev> {
        Maglev::new(self.nodes.without_node(name)?, self.hasher, self.table_size())
    }

    /// A new table with node `name`'s weight changed (Envoy's weighted fill). O(M) rebuild.
    ///
    /// # Errors
    /// [`Error::UnknownNode`], [`Error::InvalidWeight`].
    pub fn with_weight(&self, name: &str, weight: f64) -> Result<Maglev> {
        Maglev::new(self.nodes.with_weight(name, weight)?, self.hasher, self.table_size())
    }

    #[inline]
    fn slot(&self, hash: u64) -> usize {
        (hash % self.table.len() as u64) as usize
    }

    #[inline]
    fn owner(&self, hash: u64) -> NodeId {
        NodeId::from_index(self.table[self.slot(hash)])
    }

    fn heap_bytes(&self) -> usize {
        self.table.capacity() * std::mem::size_of::<u32>()
    }
}

/// Fills the table exactly as Envoy does (see the module docs).
fn build_table(nodes: &NodeSet, m: u64) -> Result<Vec<u32>> {
    let bad = |reason: String| Error::InvalidParameter { name: "table size", reason };
    if m > MAX_TABLE_SIZE {
        return Err(bad(format!("{m} exceeds the cap of {MAX_TABLE_SIZE}")));
    }
    if !is_prime(m) {
        return Err(bad(format!("{m} is not a prime (Maglev needs a prime table size, e.g. 65537)")));
    }
    if (m as usize) < nodes.len() {
        return Err(bad(format!("{m} is smaller than the node count {}", nodes.len())));
    }
    let total = nodes.total_weight();
    let mut fillers: Vec<Filler> = nodes
        .iter()
        .map(|(id, node)| {
            let name = node.name().as_bytes();
            let offset = xxhash_rust::xxh64::xxh64(name, 0) % m;
            let skip = xxhash_rust::xxh64::xxh64(name, 1) % (m - 1) + 1; // m >= 2: a prime
            Filler { id: id.as_u32(), offset, skip, pos: offset, weight: node.weight() / total, target: 0.0 }
        })
        .collect();
    fillers.sort_unstable_by(|a, b| {
        nodes.name(NodeId::from_index(a.id)).as_bytes().cmp(nodes.name(NodeId::from_index(b.id)).as_bytes())
    });
    let max_weight = fillers.iter().map(|f| f.weight).fold(0.0, f64::max);
    let mut table = vec![EMPTY; m as usize];
    let mut filled = 0u64;
    let mut iteration = 1u64;
    while filled < m {
        for f in fillers.iter_mut() {
            if filled == m {
                break;
            }
            if (iteration as f64) * f.weight < f.target {
                continue;
            }
            f.target += max_weight;
            // The permutation of a prime M with skip in 1..M visits every slot within M steps,
            // so this loop ends while the table has a free slot.
            while table[f.pos as usize] != EMPTY {
                f.pos = advance(f.pos, f.skip, m);
            }
            table[f.pos as usize] = f.id;
            f.pos = advance(f.pos, f.skip, m);
            filled += 1;
        }
        iteration += 1;
    }
    debug_assert!(fillers.iter().all(|f| f.offset < m));
    Ok(table)
}

#[inline]
fn advance(pos: u64, skip: u64, m: u64) -> u64 {
    let next = pos + skip;
    if next >= m {
        next - m
    } else {
        next
    }
}

/// Deterministic Miller-Rabin for `u64` (these 12 bases are exact below 3.3 · 10^24).
/// Hand-written: the crate has no number-theory dependency and this is the only use.
pub(crate) fn is_prime(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    const BASES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    for p in BASES {
        if n.is_multiple_of(p) {
            return n == p;
        }
    }
    let mul = |a: u64, b: u64| ((u128::from(a) * u128::from(b)) % u128::from(n)) as u64;
    let pow = |mut b: u64, mut e: u64| {
        let mut r = 1u64;
        while e > 0 {
            if e & 1 == 1 {
                r = mul(r, b);
            }
            b = mul(b, b);
            e >>= 1;
        }
        r
    };
    let s = (n - 1).trailing_zeros();
    let d = (n - 1) >> s;
    'bases: for a in BASES {
        let mut x = pow(a, d);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mul(x, x);
            if x == n - 1 {
                continue 'bases;
            }
        }
        return false;
    }
    true
}

impl Router for Maglev {
    fn algorithm(&self) -> Algorithm {
        Algorithm::Maglev
    }
    fn nodes(&self) -> &NodeSet {
        &self.nodes
    }
    fn memory_bytes(&self) -> usize {
        crate::algo::memory_bytes::<Self>(self.heap_bytes(), &self.nodes)
    }
    #[inline]
    fn route(&self, key: &[u8]) -> NodeId {
        self.owner(self.hasher.hash(key))
    }
    fn route_hash(&self, hash: u64) -> Result<NodeId> {
        Ok(self.owner(hash))
    }
    /// Hashes the keys a chunk at a time through
    /// [`KeyHasher::hash_batch`](crate::KeyHasher::hash_batch), then looks each hash up.
    fn route_batch(&self, keys: &[&[u8]], out: &mut [NodeId]) {
        crate::algo::route_batch_by_hash(&self.hasher, keys, out, |h| self.owner(h));
    }
    /// Walks the table forward from `hash % M`, producing each node the first time it is met;
    /// after a full turn, nodes owning no slot follow in id order. Costs a few entries per
    /// replica; producing all N nodes costs about `M/N · N ln N` entries (coupon collecting).
    fn preference(&self, key: &[u8], visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) -> Result<()> {
        preference_from_slot(&self.table, self.slot(self.hasher.hash(key)), self.nodes.len(), visit);
        Ok(())
    }
    /// The table as arcs over its M entries ([`KeySpace::Table`](crate::migration::KeySpace)):
    /// a key sits at entry `hash % M`, and each run of equal entries is one arc. O(M).
    fn arcs(&self) -> Option<Arcs<'_>> {
        Arcs::from_table(&self.table, Placement::hashed(self.hasher)).ok()
    }
}

fn preference_from_slot(table: &[u32], start: usize, n: usize, visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) {
    let mut seen = Visited::new(n);
    let mut produced = 0;
    let m = table.len();
    let (tail, head) = table.split_at(start);
    for &id in head.iter().chain(tail) {
        let id = NodeId::from_index(id);
        if seen.insert(id) {
            produced += 1;
            if visit(id).is_break() || produced == n {
                return;
            }
        }
    }
    debug_assert!(m >= n);
    for i in 0..n as u32 {
        let id = NodeId::from_index(i);
        if seen.insert(id) {
            produced += 1;
            if visit(id).is_break() || produced == n {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::Node;
    use crate::Router;
    use proptest::prelude::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("node-{i}")).collect()
    }

    #[test]
    fn primality() {
        let small: Vec<u64> = (0..60).filter(|&n| is_prime(n)).collect();
        assert_eq!(small, [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59]);
        assert!(is_prime(65537));
        assert!(is_prime(4_294_967_291));
        assert!(!is_prime(65536));
        assert!(!is_prime(3_215_031_751)); // strong pseudoprime to bases 2, 3, 5, 7
        assert!(is_prime(18_446_744_073_709_551_557)); // largest u64 prime
    }

    #[test]
    fn rejects_bad_table_sizes() {
        let set = NodeSet::from_names(["a", "b", "c"]).unwrap();
        for m in [0, 1, 4, 65536, MAX_TABLE_SIZE + 1] {
            let err = Maglev::new(set.clone(), KeyHasher::default(), m).unwrap_err();
            assert!(matches!(err, Error::InvalidParameter { name: "table size", .. }), "{m}: {err}");
        }
        assert!(Maglev::new(set.clone(), KeyHasher::default(), 2).is_err(), "M smaller than N");
        assert!(Maglev::new(set, KeyHasher::default(), 3).is_ok());
    }

    #[test]
    fn balanced_to_one_slot_with_equal_weights() {
        let n = 100;
        let m = Maglev::new(NodeSet::from_names(names(n)).unwrap(), KeyHasher::default(), 65537).unwrap();
        let mut counts = vec![0u32; n];
        for &id in m.table() {
            counts[id as usize] += 1;
        }
        let (lo, hi) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
        assert!(hi - lo <= 1, "{lo}..{hi}");
    }

    #[test]
    fn weights_shape_the_table() {
        let set = NodeSet::new([Node::new("a").with_weight(1.0), Node::new("b").with_weight(3.0)]).unwrap();
        let m = Maglev::new(set, KeyHasher::default(), 65537).unwrap();
        let b = m.table().iter().filter(|&&id| id == 1).count() as f64;
        assert!((b / 65537.0 - 0.75).abs() < 0.001, "{b}");
    }

    #[test]
    fn build_is_fast_and_small_at_1000_nodes() {
        let t = std::time::Instant::now();
        let m = Maglev::new(NodeSet::from_names(names(1000)).unwrap(), KeyHasher::default(), 65537).unwrap();
        let took = t.elapsed();
        assert!(m.table().iter().all(|&id| (id as usize) < 1000));
        // Generous for a loaded debug build; release builds take a few milliseconds.
        assert!(took.as_secs_f64() < 5.0, "{took:?}");
        assert!(m.memory_bytes() < 65537 * 4 + 200_000, "{}", m.memory_bytes());
    }

    #[test]
    fn node_order_does_not_matter() {
        let a = Maglev::new(NodeSet::from_names(["x", "y", "z", "w"]).unwrap(), KeyHasher::default(), 101).unwrap();
        let b = Maglev::new(NodeSet::from_names(["w", "z", "y", "x"]).unwrap(), KeyHasher::default(), 101).unwrap();
        for (ea, eb) in a.table().iter().zip(b.table()) {
            assert_eq!(a.node_name(NodeId::from_index(*ea)), b.node_name(NodeId::from_index(*eb)));
        }
    }

    proptest! {
        #[test]
        fn preference_is_a_permutation_led_by_route(n in 1usize..40, key in any::<Vec<u8>>(), extra in 0u64..50) {
            // Smallest prime >= n + extra: tables barely larger than N leave nodes without slots.
            let mut m = (n as u64 + extra).max(2);
            while !is_prime(m) { m += 1; }
            let r = Maglev::new(NodeSet::from_names(names(n)).unwrap(), KeyHasher::default(), m).unwrap();
            let mut seen = Vec::new();
            r.preference(&key, &mut |id| { seen.push(id.as_u32()); ControlFlow::Continue(()) }).unwrap();
            prop_assert_eq!(seen[0], r.route(&key).as_u32());
            seen.sort_unstable();
            prop_assert_eq!(seen, (0..n as u32).collect::<Vec<_>>());
        }

        #[test]
        fn route_hash_agrees_with_route(key in any::<Vec<u8>>()) {
            let r = Maglev::new(NodeSet::from_names(names(7)).unwrap(), KeyHasher::Xxh64 { seed: 3 }, 211).unwrap();
            prop_assert_eq!(r.route_hash(r.hasher().hash(&key)).unwrap(), r.route(&key));
        }
    }
}

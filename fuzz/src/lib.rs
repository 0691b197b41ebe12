//! Shared pieces of the fuzz targets: structured inputs (`arbitrary`), the registries of
//! hashers and incremental operations, and the checks every router must pass.
//!
//! Adding a router: give it an `Algorithm`/`RouterSpec` entry in the library (the `routers` and
//! `migration` targets then build it through `RouterSpec::build`), add its type to the
//! `for_each_router_type!` list below (incremental `with_node` / `without_node`), and, if it has
//! options, one line in [`FuzzSpec::spec`]. Adding a hasher: one line in [`hasher`].

use std::collections::HashSet;

use arbitrary::Arbitrary;
use hashroute::{Algorithm, AnyRouter, KetamaVariant, KeyHasher, Node, NodeSet, Router, RouterSpec};

/// Small primes for Maglev tables: a full 65537 table costs ~1 ms, too slow per input.
const TABLE_SIZES: [u64; 6] = [2, 7, 13, 101, 257, 4099];

/// Upper bounds that keep one input's build under a millisecond.
pub const MAX_NODES: usize = 48;
/// Keys routed per input (fuzzer keys plus derived ones).
pub const MAX_KEYS: usize = 64;

/// The hasher picked by `pick` with `seed` (one line per hasher; a new hasher is one line).
pub fn hasher(pick: u8, seed: u64) -> KeyHasher {
    match pick % 15 {
        0 => KeyHasher::Xxh3 { seed },
        1 => KeyHasher::Xxh64 { seed },
        2 => KeyHasher::Murmur3X64 { seed: seed as u32 },
        3 => KeyHasher::Murmur3X86_32 { seed: seed as u32 },
        4 => KeyHasher::Md5,
        5 => KeyHasher::Crc16,
        6 => KeyHasher::Xxh32 { seed: seed as u32 },
        7 => KeyHasher::Crc32,
        8 => KeyHasher::Sdbm,
        9 => KeyHasher::SdbmAvalanche,
        10 => KeyHasher::Murmur2Kafka,
        11 => KeyHasher::Murmur64aEnvoy,
        12 => KeyHasher::Oaat,
        13 => KeyHasher::Fnv1a32,
        _ => KeyHasher::CassandraMurmur3,
    }
}

/// A router configuration as the fuzzer writes it. Options the algorithm does not take are
/// set only when `stray` asks for it, to check that they are refused rather than ignored.
#[derive(Arbitrary, Debug, Clone)]
pub struct FuzzSpec {
    pub algo: u8,
    pub vnodes: u16,
    pub hasher: Option<(u8, u64)>,
    pub variant: u8,
    pub table: u8,
    pub probes: u8,
    pub capacity_extra: u8,
    pub stray: bool,
}

impl FuzzSpec {
    /// The algorithm (every entry of `Algorithm::ALL`, so new algorithms are fuzzed as they land).
    pub fn algorithm(&self) -> Algorithm {
        Algorithm::ALL[usize::from(self.algo) % Algorithm::ALL.len()]
    }

    /// The `RouterSpec` for `node_count` nodes.
    pub fn spec(&self, node_count: usize) -> RouterSpec {
        let algo = self.algorithm();
        let mut spec = RouterSpec::new(algo);
        if algo.takes_vnodes() || self.stray {
            // 0 and values past the cap must be refused; keep builds small otherwise.
            spec = spec.with_vnodes(u64::from(self.vnodes % 600));
        }
        if let Some((pick, seed)) = self.hasher {
            spec = spec.with_hasher(hasher(pick, seed));
        }
        if algo == Algorithm::Ketama || self.stray {
            spec = spec.with_ketama_variant(KetamaVariant::ALL[usize::from(self.variant) % KetamaVariant::ALL.len()]);
        }
        if algo.takes_table_size() || self.stray {
            let m = TABLE_SIZES[usize::from(self.table) % TABLE_SIZES.len()];
            // An odd table byte asks for a non-prime, which must be refused.
            spec = spec.with_table_size(if self.table & 0x80 != 0 { m + 1 } else { m });
        }
        if algo.takes_probes() || self.stray {
            spec = spec.with_probes(u32::from(self.probes % 40));
        }
        if algo.needs_tokens() || self.stray {
            // Token rings here get their tokens from the allocator; 0 must be refused.
            spec = spec.with_tokens_per_node(u32::from(self.vnodes % 40));
        }
        if algo.takes_capacity() || self.stray {
            spec = spec.with_capacity((node_count as u32).saturating_add(u32::from(self.capacity_extra % 16)));
        }
        spec
    }
}

/// A node as the fuzzer writes it: any name, a weight from a small menu or raw bits.
#[derive(Arbitrary, Debug, Clone)]
pub struct FuzzNode {
    pub name: String,
    pub weight: Weight,
}

/// Node weights: mostly ordinary ones, sometimes any `f64` (NaN, negative, subnormal, huge).
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Weight {
    One,
    Small(u8),
    Raw(u64),
}

impl Weight {
    pub fn value(self) -> f64 {
        match self {
            Weight::One => 1.0,
            Weight::Small(b) => f64::from(b) / 16.0,
            Weight::Raw(bits) => f64::from_bits(bits),
        }
    }
}

/// The node list, capped at [`MAX_NODES`].
pub fn nodes(list: &[FuzzNode]) -> Vec<Node> {
    list.iter().take(MAX_NODES).map(|n| Node::new(n.name.clone()).with_weight(n.weight.value())).collect()
}

/// The fuzzer's keys plus `k0`.. so properties over key sets always have a sample.
pub fn keys(raw: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = raw.iter().take(MAX_KEYS / 2).cloned().collect();
    let derived = MAX_KEYS - keys.len();
    keys.extend((0..derived).map(|i| format!("k{i}").into_bytes()));
    keys
}

/// Whether building would cost more than a fuzz iteration should (a large ring or Ketama
/// continuum from huge weights): such inputs are skipped, not failed.
pub fn too_costly(spec: &RouterSpec, nodes: &[Node]) -> bool {
    let total: f64 = nodes.iter().map(|n| n.weight()).filter(|w| w.is_finite() && *w > 0.0).sum();
    let max = nodes.iter().map(|n| n.weight()).filter(|w| w.is_finite() && *w > 0.0).fold(0.0, f64::max);
    let mean = if nodes.is_empty() { 0.0 } else { total / nodes.len() as f64 };
    let vnodes = spec.vnodes.unwrap_or(160) as f64;
    // Ring points scale with weight / mean weight; a weight far above the mean is one big node.
    match spec.algorithm {
        Algorithm::Ring => vnodes * (total / mean.max(f64::MIN_POSITIVE)) > 40_000.0 || max / mean.max(1e-300) > 64.0,
        Algorithm::Ketama => max / mean.max(1e-300) > 64.0,
        // Envoy scales the ring so the lightest host gets an entry, up to 8M entries: skewed
        // weights build (and walk, for replicas) a ring too large for one fuzz input.
        Algorithm::EnvoyRing => {
            let min = nodes.iter().map(|n| n.weight()).filter(|w| w.is_finite() && *w > 0.0).fold(f64::MAX, f64::min);
            max / min > 64.0
        }
        _ => false,
    }
}

type Built = hashroute::Result<AnyRouter>;

/// The router's incremental `with_node`.
pub fn with_node(r: &AnyRouter, node: Node) -> Option<Built> {
    Some(r.with_node(node))
}

/// The router's incremental `without_node`.
pub fn without_node(r: &AnyRouter, name: &str) -> Option<Built> {
    Some(r.without_node(name))
}

/// The router's incremental `with_weight` (only the weighted routers have one).
pub fn with_weight(r: &AnyRouter, name: &str, weight: f64) -> Option<Built> {
    r.algorithm().supports_weights().then(|| r.with_weight(name, weight))
}

/// The name each key routes to.
pub fn owners(r: &dyn Router, keys: &[Vec<u8>]) -> Vec<String> {
    keys.iter().map(|k| r.node_name(r.route(k)).to_owned()).collect()
}

/// Every per-router invariant on `keys`: ids in range, `route_batch` = `route`, `route_hash` =
/// `route` on the hasher's hash, preference lists distinct and starting at `route`, memory at
/// least the node set's.
pub fn check_router(r: &dyn Router, spec: &RouterSpec, keys: &[Vec<u8>], replicas: usize) {
    let n = r.node_count();
    assert!(n >= 1, "a router has at least one node");
    assert_eq!(r.algorithm(), spec.algorithm);
    let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    let mut batch = vec![hashroute::NodeId::from_index(u32::MAX); keys.len()];
    r.route_batch(&refs, &mut batch);
    // Envoy's ring hashes requests with XXH64 seed 0 whatever hashes its entries (the spec's
    // hasher, `MURMUR_HASH_2` or `XX_HASH`); every other router hashes keys with the spec's.
    let hasher = match spec.algorithm {
        hashroute::Algorithm::EnvoyRing => hashroute::KeyHasher::Xxh64 { seed: 0 },
        _ => spec.effective_hasher(),
    };
    for (key, &b) in keys.iter().zip(&batch) {
        let id = r.route(key);
        assert!(id.index() < n, "route out of range: {} of {n}", id.index());
        assert_eq!(id, b, "route_batch differs from route for key {key:?}");
        match r.route_hash(hasher.hash(key)) {
            Ok(h) => assert_eq!(h, id, "route_hash(hash(key)) differs from route for key {key:?}"),
            Err(e) => assert!(!spec.algorithm.takes_hasher(), "route_hash refused on a 64-bit router: {e}"),
        }
        let want = replicas.min(n);
        match r.replicas(key, want) {
            Ok(list) => {
                assert_eq!(list.len(), want);
                assert!(list.iter().all(|id| id.index() < n), "replica out of range");
                let distinct: HashSet<_> = list.iter().collect();
                assert_eq!(distinct.len(), list.len(), "replicas not distinct: {list:?}");
                if want > 0 {
                    assert_eq!(list[0], id, "the first replica is not route(key)");
                }
            }
            Err(e) => assert!(!spec.algorithm.has_preference_list(), "replicas refused: {e}"),
        }
        assert!(r.replicas(key, n + 1).is_err(), "more replicas than nodes accepted");
    }
    assert!(r.memory_bytes() >= r.nodes().memory_bytes(), "memory_bytes below the node set's own");
}

/// Whether `algo` promises that adding a node moves keys only to it and removing one moves
/// only its keys (Maglev is near-minimal, not exact; modulo and slots move more). Weighted
/// rings and Ketama only with unit weights: a node's point count is `V·N·w/Σw`, so a change of
/// N or Σw moves points of the other nodes too (found by this target: a weight-7.3 node went
/// from 21 to 28 points when a weight-1 node was added).
pub fn exact_movement(algo: Algorithm, nodes: &NodeSet) -> bool {
    match algo {
        // The jump family: growth moves keys only to the new bucket; the only-last-bucket
        // routers refuse any other removal, JumpBackAnchor moves only the removed node's keys.
        Algorithm::Jump
        | Algorithm::Rendezvous
        | Algorithm::MultiProbe
        | Algorithm::Memento
        | Algorithm::Anchor
        | Algorithm::JumpBack
        | Algorithm::FlipHash
        | Algorithm::Power
        | Algorithm::Binomial
        | Algorithm::JumpBackAnchor => true,
        // The allocator moves keys only to an added node and only off a removed one, weights
        // or not (token_ring::allocate).
        Algorithm::TokenRing => true,
        Algorithm::Ring | Algorithm::Ketama => nodes.all_unit_weight(),
        _ => false,
    }
}

/// Whether the incremental update of a freshly built router must equal a fresh build of the
/// changed node set (Memento, Anchor and JumpBackAnchor keep removal history, HAProxy its
/// servers' ids; slots move ranges explicitly; an allocated token ring places a removed node's
/// ranges where a fresh allocation would not).
pub fn incremental_is_rebuild(algo: Algorithm) -> bool {
    // HAProxy's with_node/without_node keep every surviving server's id (so its nodes), where a
    // fresh build numbers servers by position again (found by this target).
    !matches!(
        algo,
        Algorithm::Memento
            | Algorithm::Anchor
            | Algorithm::Slots
            | Algorithm::JumpBackAnchor
            | Algorithm::Haproxy
            | Algorithm::TokenRing
    )
}

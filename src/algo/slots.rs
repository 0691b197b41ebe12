//! Redis Cluster key slots: `CRC16(key) mod 16384` with hash tags, and a slot table.
//!
//! Redis Cluster does not hash nodes at all: 16384 slots are assigned to masters explicitly
//! (`redis-cli --cluster create` splits them into contiguous ranges; resharding moves ranges).
//! A router only has to compute the key's slot exactly as the server does and look the owner
//! up in a 16384-entry table: O(1) after the CRC16, 64 KB of table.
//!
//! Hash tags: if the key contains a `{` and a `}` follows that first `{` with at least one byte
//! between, only the bytes between the first `{` and the first `}` after it are hashed
//! (`{user1000}.following` and `{user1000}.followers` share a slot).

use std::ops::{ControlFlow, RangeInclusive};

use crate::algo::builder::Configure;
use crate::algorithm::Algorithm;
use crate::arcs::{Arcs, Placement};
use crate::error::{Error, Result};
use crate::hash::crc16_xmodem;
use crate::migration::KeySpace;
use crate::node::{Node, NodeId, NodeSet};
use crate::router::Router;
use crate::Builder;

/// Number of hash slots in a Redis Cluster.
pub const SLOTS: u16 = 16384;

/// The bytes Redis hashes for `key`: the first non-empty `{…}` tag, else the whole key.
#[inline]
pub fn hashed_part(key: &[u8]) -> &[u8] {
    if let Some(open) = find_byte(b'{', key) {
        let rest = &key[open + 1..];
        if let Some(len) = find_byte(b'}', rest) {
            if len > 0 {
                return &rest[..len];
            }
        }
    }
    key
}

/// The first position of `byte` in `hay`. Long haystacks go to memchr (16 or 32 bytes per
/// step with SSE2/AVX2); short ones, the usual Redis key, are scanned 8 bytes at a time in a
/// register, which costs less than memchr's call and setup.
#[inline]
fn find_byte(byte: u8, hay: &[u8]) -> Option<usize> {
    const SHORT: usize = 32;
    if hay.len() > SHORT {
        return memchr::memchr(byte, hay);
    }
    let pattern = u64::from(byte) * 0x0101_0101_0101_0101;
    // Bytes equal to `byte` become zero; the classic SWAR test marks the lowest zero byte
    // exactly (marks above it may be spurious, so only the lowest is used).
    let first_match = |at: usize| {
        let v = u64::from_le_bytes(hay[at..at + 8].try_into().expect("8 bytes")) ^ pattern;
        let zero = v.wrapping_sub(0x0101_0101_0101_0101) & !v & 0x8080_8080_8080_8080;
        (zero != 0).then(|| at + (zero.trailing_zeros() / 8) as usize)
    };
    let n = hay.len();
    if n < 8 {
        return hay.iter().position(|&b| b == byte);
    }
    let mut at = 0;
    while at + 8 <= n {
        if let Some(p) = first_match(at) {
            return Some(p);
        }
        at += 8;
    }
    // The last partial word, read as the 8 bytes ending the haystack: the bytes it shares with
    // the previous word hold no match, so its first match is the haystack's.
    if at < n {
        return first_match(n - 8);
    }
    None
}

/// The Redis Cluster slot of `key` (0..16384), exactly as `CLUSTER KEYSLOT` computes it:
/// CRC16-XMODEM of [`hashed_part`] mod 16384. O(key length).
#[inline]
pub fn key_slot(key: &[u8]) -> u16 {
    crc16_xmodem(hashed_part(key)) & (SLOTS - 1)
}

/// The slot of every key of `keys`, into the same position of `out`: `out[i] ==
/// key_slot(keys[i])`. No allocation.
///
/// # Panics
/// If `keys.len() != out.len()`.
pub fn key_slot_batch(keys: &[&[u8]], out: &mut [u16]) {
    assert_eq!(keys.len(), out.len(), "key_slot_batch: keys and out must have the same length");
    for (o, k) in out.iter_mut().zip(keys) {
        *o = key_slot(k);
    }
}

/// The slot ranges `redis-cli --cluster create` gives `masters` masters, in master order.
///
/// redis-cli (`clusterManagerCommandCreate`) walks a `float` cursor by `16384 / (float)masters`
/// and ends each range at `lround(cursor + slots_per_node - 1)`, the last master taking the rest;
/// the same `f32` arithmetic is reproduced here, so the ranges match for any count
/// (3 masters: 0-5460, 5461-10922, 10923-16383). Checked against what redis-cli 7.0.15 prints
/// for 3 to 16 masters. (redis-cli itself refuses fewer than 3 masters; this accepts 1 or 2.)
///
/// # Errors
/// [`Error::InvalidParameter`] for 0 masters or more masters than slots.
pub fn redis_cli_ranges(masters: usize) -> Result<Vec<RangeInclusive<u16>>> {
    if masters == 0 || masters > usize::from(SLOTS) {
        return Err(Error::InvalidParameter {
            name: "node count",
            reason: format!("Redis Cluster needs between 1 and {SLOTS} masters, got {masters}"),
        });
    }
    let slots_per_node = f32::from(SLOTS) / masters as f32;
    let mut cursor = 0.0f32;
    let mut first: i64 = 0;
    let mut out = Vec::with_capacity(masters);
    for i in 0..masters {
        // `lround` rounds halves away from zero, as `f64::round` does.
        let mut last = f64::from(cursor + slots_per_node - 1.0).round() as i64;
        if last > i64::from(SLOTS) || i == masters - 1 {
            last = i64::from(SLOTS) - 1;
        }
        if last < first {
            last = first;
        }
        out.push(first as u16..=last as u16);
        first = last + 1;
        cursor += slots_per_node;
    }
    Ok(out)
}

/// A Redis Cluster slot table: which node owns each of the 16384 slots.
///
/// - `route` = CRC16 of the key (or its hash tag) + one table load. Memory: 64 KB (`u32` per
///   slot) plus the node set.
/// - Weights: the default layout reproduces `redis-cli --cluster create`, which has no weights,
///   so it rejects weighted node sets; give weighted layouts explicitly with
///   [`Builder::<RedisSlots>::slot_ranges`].
/// - No preference list: a slot has exactly one owner and the cluster, not the client, decides
///   where it fails over (a replica is promoted for the same slots), so
///   [`Router::preference`](crate::Router::preference) (and `replicas`) return [`Error::Unsupported`]. `route_hash` is
///   unsupported too: the key hash is the 14-bit slot, use [`RedisSlots::try_slot_owner`].
///
/// ```
/// use hashroute::{slots, RedisSlots, Router};
/// let cluster = RedisSlots::from_names(["m1", "m2", "m3"])?;
/// assert_eq!(slots::key_slot(b"{user1000}.following"), slots::key_slot(b"user1000"));
/// assert_eq!(cluster.node_name(cluster.slot_owner(5461)), "m2");
/// let resharded = cluster.move_slots(0..=99, "m3")?;
/// assert_eq!(resharded.node_name(resharded.slot_owner(42)), "m3");
/// # Ok::<(), hashroute::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct RedisSlots {
    nodes: NodeSet,
    table: Box<[u32]>,
}

impl RedisSlots {
    /// A builder for this router (see [`Builder`]).
    pub fn builder() -> Builder<RedisSlots> {
        Builder::default()
    }

    /// A router over weight-1 nodes named `names`, with the default options.
    ///
    /// # Errors
    /// As [`NodeSet::from_names`](crate::NodeSet::from_names) and the builder's `build`.
    pub fn from_names<I>(names: I) -> Result<RedisSlots>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        RedisSlots::builder().nodes(names).build()
    }
}

/// The options of [`Builder<RedisSlots>`].
#[derive(Clone, Debug, Default)]
pub struct RedisSlotsOptions {
    pub(crate) slot_ranges: Option<Vec<(RangeInclusive<u16>, String)>>,
}

impl Configure for RedisSlots {
    type Options = RedisSlotsOptions;
}

impl Builder<RedisSlots> {
    /// An explicit layout instead of redis-cli's: every slot must be covered by exactly one
    /// range, each naming its owner. Nodes may own no slot (an empty master is legal in Redis).
    pub fn slot_ranges<S: AsRef<str>>(mut self, ranges: &[(RangeInclusive<u16>, S)]) -> Builder<RedisSlots> {
        self.options.slot_ranges = Some(ranges.iter().map(|(r, n)| (r.clone(), n.as_ref().to_string())).collect());
        self
    }

    /// Builds the table: the layout `redis-cli --cluster create` makes for these nodes as
    /// masters, in the order given ([`redis_cli_ranges`]), unless
    /// [`slot_ranges`](Builder::slot_ranges) gave one. O(16384 + ranges).
    ///
    /// # Errors
    /// The [`NodeSet::new`] errors. redis-cli layout: [`Error::Unsupported`] for weighted
    /// nodes, [`Error::InvalidParameter`] for more than 16384 nodes. Explicit layout:
    /// [`Error::UnknownNode`] for an owner not in the set; [`Error::InvalidParameter`] for an
    /// empty or out-of-range range, a slot assigned twice, or slots left unassigned (the message
    /// names the first offending slot and the number affected).
    pub fn build(mut self) -> Result<RedisSlots> {
        let nodes = self.take_nodes()?;
        match self.options.slot_ranges.take() {
            Some(ranges) => RedisSlots::from_ranges(nodes, &ranges),
            None => RedisSlots::new(nodes),
        }
    }
}

impl RedisSlots {
    fn new(nodes: NodeSet) -> Result<RedisSlots> {
        if !nodes.all_unit_weight() {
            return Err(Error::Unsupported {
                algorithm: "slots",
                operation: "weighted nodes (redis-cli splits slots evenly; use RedisSlots::from_ranges)",
            });
        }
        let ranges = redis_cli_ranges(nodes.len())?;
        let mut table = vec![0u32; usize::from(SLOTS)].into_boxed_slice();
        for (i, r) in ranges.into_iter().enumerate() {
            for s in r {
                table[usize::from(s)] = i as u32;
            }
        }
        Ok(RedisSlots { nodes, table })
    }

    fn from_ranges<S: AsRef<str>>(nodes: NodeSet, ranges: &[(RangeInclusive<u16>, S)]) -> Result<RedisSlots> {
        const UNSET: u32 = u32::MAX;
        let mut table = vec![UNSET; usize::from(SLOTS)].into_boxed_slice();
        for (range, name) in ranges {
            check_range(range)?;
            let name = name.as_ref();
            let id = nodes.require(name)?.as_u32();
            for s in range.clone() {
                let cell = &mut table[usize::from(s)];
                if *cell != UNSET {
                    return Err(Error::InvalidParameter {
                        name: "slot ranges",
                        reason: format!(
                            "slot {s} is assigned twice (to {:?} and {name:?})",
                            nodes.name(NodeId::from_index(*cell))
                        ),
                    });
                }
                *cell = id;
            }
        }
        let missing = table.iter().filter(|&&c| c == UNSET).count();
        if let Some(first) = table.iter().position(|&c| c == UNSET) {
            return Err(Error::InvalidParameter {
                name: "slot ranges",
                reason: format!(
                    "{missing} slots are not assigned, the first is slot {first}; every slot 0-16383 needs an owner"
                ),
            });
        }
        Ok(RedisSlots { nodes, table })
    }

    /// A new table with `range` moved to node `to` (a resharding step). O(16384).
    ///
    /// # Errors
    /// [`Error::UnknownNode`]; [`Error::InvalidParameter`] for an empty or out-of-range range.
    pub fn move_slots(&self, range: RangeInclusive<u16>, to: &str) -> Result<RedisSlots> {
        check_range(&range)?;
        let id = self.nodes.require(to)?.as_u32();
        let mut table = self.table.clone();
        for s in range {
            table[usize::from(s)] = id;
        }
        Ok(RedisSlots { nodes: self.nodes.clone(), table })
    }

    /// A new table with `node` added as a master that owns no slot yet (as after
    /// `redis-cli --cluster add-node`); give it slots with [`RedisSlots::move_slots`].
    ///
    /// # Errors
    /// As [`NodeSet::with_node`].
    pub fn with_node(&self, node: Node) -> Result<RedisSlots> {
        Ok(RedisSlots { nodes: self.nodes.with_node(node)?, table: self.table.clone() })
    }

    /// A new table without the node named `name`, which must own no slot (Redis refuses to
    /// forget a master that still serves slots: move them away first).
    ///
    /// # Errors
    /// [`Error::UnknownNode`]; [`Error::InvalidParameter`] when the node still owns slots;
    /// [`Error::NoNodes`] for the last node.
    pub fn without_node(&self, name: &str) -> Result<RedisSlots> {
        let id = self.nodes.require(name)?.as_u32();
        let owned = self.table.iter().filter(|&&o| o == id).count();
        if owned > 0 {
            return Err(Error::InvalidParameter {
                name: "node",
                reason: format!("{name:?} still owns {owned} slots; move them to other nodes first"),
            });
        }
        let nodes = self.nodes.without_node(name)?;
        let table = self.table.iter().map(|&o| if o > id { o - 1 } else { o }).collect();
        Ok(RedisSlots { nodes, table })
    }

    /// The owner of `slot`.
    ///
    /// # Panics
    /// If `slot >= 16384` (see [`RedisSlots::try_slot_owner`] for the checked version).
    #[inline]
    pub fn slot_owner(&self, slot: u16) -> NodeId {
        NodeId::from_index(self.table[usize::from(slot)])
    }

    /// The owner of `slot`, checked.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `slot >= 16384`.
    pub fn try_slot_owner(&self, slot: u16) -> Result<NodeId> {
        if slot >= SLOTS {
            return Err(Error::InvalidParameter {
                name: "slot",
                reason: format!("slot {slot} is out of range (0-16383)"),
            });
        }
        Ok(self.slot_owner(slot))
    }

    /// The owner of a key: [`slot_owner`](RedisSlots::slot_owner) of its [`key_slot`].
    #[inline(always)]
    fn route_key(&self, key: &[u8]) -> NodeId {
        self.slot_owner(key_slot(key))
    }

    fn heap_bytes(&self) -> usize {
        self.table.len() * 4
    }

    /// The layout as maximal contiguous ranges, ascending, each with its owner. O(16384).
    pub fn ranges(&self) -> Vec<(RangeInclusive<u16>, NodeId)> {
        let mut out = Vec::new();
        let mut start = 0u16;
        for s in 1..=SLOTS {
            if s == SLOTS || self.table[usize::from(s)] != self.table[usize::from(start)] {
                out.push((start..=s - 1, self.slot_owner(start)));
                start = s;
            }
        }
        out
    }

    /// How many slots each node owns, indexed by node id.
    pub fn slot_counts(&self) -> Vec<u32> {
        let mut counts = vec![0u32; self.nodes.len()];
        for &o in self.table.iter() {
            counts[o as usize] += 1;
        }
        counts
    }
}

fn check_range(range: &RangeInclusive<u16>) -> Result<()> {
    if range.start() > range.end() || *range.end() >= SLOTS {
        return Err(Error::InvalidParameter {
            name: "slot range",
            reason: format!("{}-{} is not a non-empty range within 0-16383", range.start(), range.end()),
        });
    }
    Ok(())
}

impl Router for RedisSlots {
    fn algorithm(&self) -> Algorithm {
        Algorithm::Slots
    }
    fn nodes(&self) -> &NodeSet {
        &self.nodes
    }
    fn memory_bytes(&self) -> usize {
        crate::algo::memory_bytes::<Self>(self.heap_bytes(), &self.nodes)
    }
    #[inline]
    fn route(&self, key: &[u8]) -> NodeId {
        self.route_key(key)
    }
    /// [`key_slot_batch`] a chunk at a time, then one table read per key.
    fn route_batch(&self, keys: &[&[u8]], out: &mut [NodeId]) {
        crate::algo::route_chunks::<u16, 64>(keys, out, key_slot_batch, |slots, os| {
            for (o, &s) in os.iter_mut().zip(slots) {
                *o = self.slot_owner(s);
            }
        });
    }
    /// Unsupported: a slot has one owner; failover is the cluster's job (see the type docs).
    fn preference(&self, key: &[u8], visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) -> Result<()> {
        let _ = (key, visit);
        Err(Error::Unsupported { algorithm: "slots", operation: "preference lists (a slot has one owner)" })
    }
    /// The maximal slot ranges and their owners, over the 16384 slots. O(16384).
    fn arcs(&self) -> Option<Arcs<'_>> {
        let (ends, owners): (Vec<u64>, Vec<u32>) =
            self.ranges().into_iter().map(|(range, owner)| (u64::from(*range.end()), owner.as_u32())).unzip();
        Some(Arcs::trusted(KeySpace::Slots, ends, owners, Placement::redis_key_slot()))
    }
    fn canonical_bytes(&self) -> Vec<u8> {
        crate::fingerprint::slots_encoding(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Router;
    use proptest::prelude::*;

    fn three() -> RedisSlots {
        RedisSlots::new(NodeSet::from_names(["a", "b", "c"]).unwrap()).unwrap()
    }

    #[test]
    fn hash_tags() {
        assert_eq!(hashed_part(b"{user1000}.following"), b"user1000");
        assert_eq!(hashed_part(b"foo{}{bar}"), b"foo{}{bar}");
        assert_eq!(hashed_part(b"foo{{bar}}zap"), b"{bar");
        assert_eq!(hashed_part(b"foo{bar}{zap}"), b"bar");
        assert_eq!(hashed_part(b"}{"), b"}{");
        assert_eq!(hashed_part(b"{"), b"{");
        assert_eq!(hashed_part(b""), b"");
        assert_eq!(key_slot(b"123456789"), 0x31C3 & 0x3FFF);
        assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"{user1000}.followers"));
    }

    /// The byte-loop definition `hashed_part` replaced.
    fn hashed_part_bytewise(key: &[u8]) -> &[u8] {
        if let Some(open) = key.iter().position(|&b| b == b'{') {
            if let Some(len) = key[open + 1..].iter().position(|&b| b == b'}') {
                if len > 0 {
                    return &key[open + 1..open + 1 + len];
                }
            }
        }
        key
    }

    #[test]
    fn find_byte_at_every_position_and_length() {
        for len in 0..=70 {
            for at in 0..=len {
                let mut hay = vec![b'x'; len];
                if at < len {
                    hay[at] = b'{';
                }
                let want = (at < len).then_some(at);
                assert_eq!(find_byte(b'{', &hay), want, "len {len} at {at}");
                // Bytes that differ from the target by one bit or by borrow must not match.
                let hay: Vec<u8> = hay.iter().map(|&b| if b == b'x' { b'{' ^ 0x80 } else { b }).collect();
                assert_eq!(find_byte(b'{', &hay), want, "len {len} at {at} (high bit)");
                let hay: Vec<u8> = hay.iter().map(|&b| if b == b'{' ^ 0x80 { b'{' + 1 } else { b }).collect();
                assert_eq!(find_byte(b'{', &hay), want, "len {len} at {at} (+1)");
            }
        }
    }

    proptest! {
        #[test]
        fn tag_scan_and_batch_match_the_definitions(
            keys in proptest::collection::vec(proptest::collection::vec(
                prop_oneof![Just(b'{'), Just(b'}'), Just(b'a'), any::<u8>()], 0..80), 0..70),
        ) {
            let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
            let mut out = vec![0u16; refs.len()];
            key_slot_batch(&refs, &mut out);
            for (k, &s) in refs.iter().zip(&out) {
                prop_assert_eq!(hashed_part(k), hashed_part_bytewise(k));
                prop_assert_eq!(s, key_slot(k));
                prop_assert_eq!(s, CRC_TABLE1.checksum(hashed_part_bytewise(k)) & (SLOTS - 1));
            }
        }
    }

    const CRC_TABLE1: crc::Crc<u16> = crc::Crc::<u16>::new(&crc::CRC_16_XMODEM);

    /// Parses `"0-5460 5461-10922 …"`.
    fn parse_ranges(text: &str) -> Vec<RangeInclusive<u16>> {
        text.split_whitespace()
            .map(|r| {
                let (a, b) = r.split_once('-').unwrap();
                a.parse().unwrap()..=b.parse().unwrap()
            })
            .collect()
    }

    #[test]
    fn redis_cli_split() {
        // Printed by redis-cli 7.0.15 (`--cluster create … --cluster-replicas 0`, the
        // "Master[i] -> Slots a - b" plan lines) against real cluster-mode servers.
        let printed = [
            (3, "0-5460 5461-10922 10923-16383"),
            (4, "0-4095 4096-8191 8192-12287 12288-16383"),
            (5, "0-3276 3277-6553 6554-9829 9830-13106 13107-16383"),
            (6, "0-2730 2731-5460 5461-8191 8192-10922 10923-13652 13653-16383"),
            (7, "0-2340 2341-4680 4681-7021 7022-9361 9362-11702 11703-14042 14043-16383"),
            (9, "0-1819 1820-3640 3641-5460 5461-7281 7282-9101 9102-10922 10923-12742 12743-14563 14564-16383"),
            (
                11,
                "0-1488 1489-2978 2979-4467 4468-5957 5958-7446 7447-8936 8937-10425 10426-11915 11916-13404 \
                 13405-14894 14895-16383",
            ),
            (
                13,
                "0-1259 1260-2520 2521-3780 3781-5040 5041-6301 6302-7561 7562-8821 8822-10081 10082-11342 \
                 11343-12602 12603-13862 13863-15123 15124-16383",
            ),
            (
                16,
                "0-1023 1024-2047 2048-3071 3072-4095 4096-5119 5120-6143 6144-7167 7168-8191 8192-9215 \
                 9216-10239 10240-11263 11264-12287 12288-13311 13312-14335 14336-15359 15360-16383",
            ),
        ];
        for (n, text) in printed {
            assert_eq!(redis_cli_ranges(n).unwrap(), parse_ranges(text), "{n} masters");
        }
        assert_eq!(redis_cli_ranges(1).unwrap(), vec![0..=16383]);
        for n in [0usize, 16385] {
            assert!(matches!(redis_cli_ranges(n), Err(Error::InvalidParameter { .. })));
        }
        for n in [2usize, 7, 100, 1000, 16383, 16384] {
            let r = redis_cli_ranges(n).unwrap();
            assert_eq!(r.len(), n);
            assert_eq!(*r[0].start(), 0);
            assert_eq!(*r[n - 1].end(), 16383);
            assert!(r.windows(2).all(|w| *w[1].start() == w[0].end() + 1), "{n}: contiguous");
        }
    }

    #[test]
    fn table_and_ranges() {
        let s = three();
        assert_eq!(s.slot_owner(5460), NodeId::from_index(0));
        assert_eq!(s.slot_owner(5461), NodeId::from_index(1));
        assert_eq!(s.try_slot_owner(16383).unwrap(), NodeId::from_index(2));
        assert!(matches!(s.try_slot_owner(16384), Err(Error::InvalidParameter { .. })));
        assert_eq!(s.slot_counts(), vec![5461, 5462, 5461]);
        let moved = s.move_slots(0..=99, "c").unwrap();
        assert_eq!(
            moved.ranges(),
            vec![
                (0..=99, NodeId::from_index(2)),
                (100..=5460, NodeId::from_index(0)),
                (5461..=10922, NodeId::from_index(1)),
                (10923..=16383, NodeId::from_index(2)),
            ]
        );
        assert!(matches!(s.move_slots(0..=99, "zz"), Err(Error::UnknownNode { .. })));
        let (hi, lo) = (10u16, 9u16);
        assert!(matches!(s.move_slots(hi..=lo, "a"), Err(Error::InvalidParameter { .. })));
        assert!(matches!(s.move_slots(0..=16384, "a"), Err(Error::InvalidParameter { .. })));
    }

    #[test]
    fn explicit_layouts() {
        let nodes = NodeSet::from_names(["a", "b"]).unwrap();
        let s = RedisSlots::from_ranges(nodes.clone(), &[(0..=99, "b"), (100..=16383, "a")]).unwrap();
        assert_eq!(s.slot_owner(99), NodeId::from_index(1));
        let gap = RedisSlots::from_ranges(nodes.clone(), &[(0..=99, "b"), (101..=16383, "a")]).unwrap_err();
        assert!(gap.to_string().contains("slot 100"), "{gap}");
        let twice = RedisSlots::from_ranges(nodes.clone(), &[(0..=100, "b"), (100..=16383, "a")]).unwrap_err();
        assert!(twice.to_string().contains("slot 100 is assigned twice"), "{twice}");
        assert!(matches!(RedisSlots::from_ranges(nodes.clone(), &[(0..=16383, "x")]), Err(Error::UnknownNode { .. })));
        let weighted = NodeSet::new([crate::Node::new("a").with_weight(2.0)]).unwrap();
        assert!(matches!(RedisSlots::new(weighted), Err(Error::Unsupported { .. })));
    }

    #[test]
    fn add_and_remove_nodes() {
        let s = three().with_node(Node::new("d")).unwrap();
        assert_eq!(s.slot_counts(), vec![5461, 5462, 5461, 0]);
        let err = s.without_node("b").unwrap_err();
        assert!(err.to_string().contains("still owns 5462 slots"), "{err}");
        let s = s.move_slots(5461..=10922, "d").unwrap().without_node("b").unwrap();
        assert_eq!(s.node_name(s.slot_owner(6000)), "d");
        assert_eq!(s.node_name(s.slot_owner(0)), "a");
        assert_eq!(s.node_name(s.slot_owner(16383)), "c");
        assert!(matches!(s.with_node(Node::new("a")), Err(Error::DuplicateNode { .. })));
        assert!(matches!(s.without_node("zz"), Err(Error::UnknownNode { .. })));
    }

    #[test]
    fn router_surface() {
        let s = three();
        assert_eq!(s.algorithm(), crate::Algorithm::Slots);
        assert!(matches!(s.replicas(b"k", 1), Err(Error::Unsupported { .. })));
        assert!(matches!(s.route_hash(1), Err(Error::Unsupported { .. })));
        assert_eq!(s.route(b"{user1000}.a"), s.slot_owner(key_slot(b"user1000")));
    }

    proptest! {
        #[test]
        fn tag_rule_matches_scalar_spec(key in proptest::collection::vec(prop_oneof![Just(b'{'), Just(b'}'), any::<u8>()], 0..16)) {
            // Spec, written independently: first '{', first '}' after it, non-empty between.
            let spec: &[u8] = match key.iter().position(|&b| b == b'{') {
                Some(s) => match key[s + 1..].iter().position(|&b| b == b'}') {
                    Some(0) | None => &key,
                    Some(e) => &key[s + 1..s + 1 + e],
                },
                None => &key,
            };
            prop_assert_eq!(hashed_part(&key), spec);
            prop_assert!(key_slot(&key) < SLOTS);
        }

        #[test]
        fn batch_equals_route(keys in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..12), 0..30)) {
            let s = three();
            let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
            let mut out = vec![NodeId::default(); refs.len()];
            s.route_batch(&refs, &mut out);
            for (k, id) in refs.iter().zip(&out) {
                prop_assert_eq!(*id, s.route(k));
            }
        }

        #[test]
        fn move_then_ranges_round_trip(a in 0u16..16384, b in 0u16..16384) {
            let (lo, hi) = (a.min(b), a.max(b));
            let s = three().move_slots(lo..=hi, "b").unwrap();
            let names = ["a", "b", "c"];
            let spec: Vec<(RangeInclusive<u16>, &str)> =
                s.ranges().into_iter().map(|(r, id)| (r, names[id.index()])).collect();
            let rebuilt = RedisSlots::from_ranges(s.nodes().clone(), &spec).unwrap();
            for slot in [0, lo, hi, 5460, 5461, 16383] {
                prop_assert_eq!(rebuilt.slot_owner(slot), s.slot_owner(slot));
            }
            prop_assert_eq!(s.slot_owner(lo), NodeId::from_index(1));
        }
    }
}

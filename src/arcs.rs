//! Arcs: the exact division of a key-position space by the routers that cut it into ranges.
//!
//! A ring, a Ketama continuum, a token ring, a Redis slot layout and the proxies' rings (nginx,
//! HAProxy, Envoy) each give every position of their key space (a 64-bit hash, a 32-bit hash, a
//! slot) to one owner by a rule on sorted points; a Maglev table gives entry `hash % M` to its
//! owner. [`Router::arcs`](crate::Router::arcs) returns that division as an [`Arcs`]: sorted
//! points and their owners, normalised to one rule (a position belongs to the first point at or
//! after it, wrapping to the first point), the space they live in ([`KeySpace`]), and how a key
//! gets its position ([`Placement`]). Other rules are converted once, in integers: Ketama's
//! "strictly greater" variants shift their points by one, HAProxy's "nearest point" rule puts a
//! boundary at the midpoint of every gap, a table becomes one point per run of equal entries.
//!
//! From it come exact migration plans ([`crate::migration::plan`]), exact ownership
//! ([`Arcs::owned`]) and the exact loads of the analysis crate, with no key sampling: one
//! engine, in integers, for every router that has a structure.
//!
//! Routers whose keys do not fall on a fixed division (jump, rendezvous, multi-probe, …)
//! return `None`.

use std::borrow::Cow;

use crate::error::{Error, Result};
use crate::hash::KeyHasher;
use crate::migration::KeySpace;

/// How a router turns a key into a position: two [`Arcs`] with equal placements (and equal
/// spaces) put every key at the same position, so their ranges can be compared key for key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement(Rule);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rule {
    Hashed(KeyHasher),
    HashedBeforeQuery(KeyHasher),
    EmptyKeyAtZero(KeyHasher),
    RedisKeySlot,
}

impl Placement {
    /// Keys are placed by `hasher` (truncated to the space's width; reduced mod the entry count
    /// in a [`KeySpace::Table`]).
    pub fn hashed(hasher: KeyHasher) -> Placement {
        Placement(Rule::Hashed(hasher))
    }

    /// As [`Placement::hashed`], of the part of the key before its first `?` (the whole key
    /// when it has none): HAProxy's `balance uri`, which hashes a request target's path.
    pub fn hashed_before_query(hasher: KeyHasher) -> Placement {
        Placement(Rule::HashedBeforeQuery(hasher))
    }

    /// As [`Placement::hashed`], except that the empty key sits at position 0 without being
    /// hashed (twemproxy's rule).
    pub fn empty_key_at_zero(hasher: KeyHasher) -> Placement {
        Placement(Rule::EmptyKeyAtZero(hasher))
    }

    /// Redis Cluster's key slot: CRC16 of the key's hash tag (or the whole key), mod 16384
    /// ([`crate::slots::key_slot`]).
    pub fn redis_key_slot() -> Placement {
        Placement(Rule::RedisKeySlot)
    }

    /// The key hasher (CRC16 for the Redis key slot).
    pub fn hasher(&self) -> KeyHasher {
        match self.0 {
            Rule::Hashed(h) | Rule::HashedBeforeQuery(h) | Rule::EmptyKeyAtZero(h) => h,
            Rule::RedisKeySlot => KeyHasher::Crc16,
        }
    }

    /// The position of `key` in `space`: its hash truncated to the space's width, or reduced
    /// mod the entries of a table.
    fn position(&self, key: &[u8], space: KeySpace) -> u64 {
        let hash = match self.0 {
            Rule::EmptyKeyAtZero(_) if key.is_empty() => return 0,
            Rule::RedisKeySlot => return u64::from(crate::algo::slots::key_slot(key)),
            Rule::Hashed(h) | Rule::EmptyKeyAtZero(h) => h.hash(key),
            Rule::HashedBeforeQuery(h) => h.hash(key.split(|&b| b == b'?').next().unwrap_or(key)),
        };
        match space {
            KeySpace::Table { entries } => hash % entries.max(1),
            _ => hash & max_position(space).unwrap_or(u64::MAX),
        }
    }
}

/// One router's arcs: `points` sorted ascending, `owners[i]` (an index into the router's node
/// set) owns the positions after `points[i - 1]` up to and including `points[i]`, and
/// `owners[0]` also owns everything after the last point (the wrap). Of equal points the first
/// owns the range; the others own nothing.
///
/// Borrowed from the router where its own arrays already follow that rule (rings, token rings,
/// Envoy's ring), computed once otherwise (Ketama's "strictly greater" variants, nginx's 32-bit
/// points, HAProxy's midpoints, slot ranges, Maglev's table).
#[derive(Clone, Debug)]
pub struct Arcs<'a> {
    space: KeySpace,
    points: Cow<'a, [u64]>,
    owners: Cow<'a, [u32]>,
    placement: Placement,
}

impl<'a> Arcs<'a> {
    /// Arcs over `space` (a hash circle or the slots, not a sample).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when the points are empty, unsorted, outside the space, or
    /// not one per owner, or when `space` is a key sample.
    pub fn new(
        space: KeySpace,
        points: impl Into<Cow<'a, [u64]>>,
        owners: impl Into<Cow<'a, [u32]>>,
        placement: Placement,
    ) -> Result<Arcs<'a>> {
        let (points, owners) = (points.into(), owners.into());
        let bad = |reason: String| Err(Error::InvalidParameter { name: "arcs", reason });
        let Some(max) = max_position(space) else { return bad(format!("{space:?} is not a space of positions")) };
        if points.is_empty() || points.len() != owners.len() {
            return bad(format!("{} points and {} owners: need one owner per point", points.len(), owners.len()));
        }
        if !points.windows(2).all(|w| w[0] <= w[1]) || points[points.len() - 1] > max {
            return bad(format!("points must be sorted and at most {max}"));
        }
        Ok(Arcs { space, points, owners, placement })
    }

    /// Arcs from a router that keeps its points sorted, in range and one per owner (checked
    /// in debug builds only: the routers guarantee it).
    pub(crate) fn trusted(
        space: KeySpace,
        points: impl Into<Cow<'a, [u64]>>,
        owners: impl Into<Cow<'a, [u32]>>,
        placement: Placement,
    ) -> Arcs<'a> {
        let arcs = Arcs { space, points: points.into(), owners: owners.into(), placement };
        debug_assert!(Arcs::new(arcs.space, &arcs.points[..], &arcs.owners[..], placement).is_ok());
        arcs
    }

    /// Arcs over a lookup table of `table.len()` entries (Maglev): entry `i` (the keys whose
    /// 64-bit hash is `≡ i` mod the entry count) belongs to node `table[i]`. Runs of equal
    /// entries become one point each. O(entries).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for an empty table.
    pub fn from_table(table: &[u32], placement: Placement) -> Result<Arcs<'static>> {
        if table.is_empty() {
            return Err(Error::InvalidParameter { name: "arcs", reason: "a table needs at least one entry".into() });
        }
        let (mut points, mut owners) = (Vec::new(), Vec::new());
        for (i, pair) in table.windows(2).enumerate() {
            if pair[0] != pair[1] {
                points.push(i as u64);
                owners.push(pair[0]);
            }
        }
        points.push(table.len() as u64 - 1);
        owners.push(table[table.len() - 1]);
        let space = KeySpace::Table { entries: table.len() as u64 };
        Ok(Arcs { space, points: points.into(), owners: owners.into(), placement })
    }

    /// The same arcs, owning their points and owners (copies them when borrowed).
    pub fn into_owned(self) -> Arcs<'static> {
        Arcs {
            space: self.space,
            points: Cow::Owned(self.points.into_owned()),
            owners: Cow::Owned(self.owners.into_owned()),
            placement: self.placement,
        }
    }

    /// The owner (node index) of position `position`: the owner of the first point at or after
    /// it, wrapping to the first point. O(log P).
    pub fn owner_at(&self, position: u64) -> u32 {
        let i = self.points.partition_point(|&p| p < position);
        self.owners[if i == self.points.len() { 0 } else { i }]
    }

    /// The space the positions live in.
    pub fn space(&self) -> KeySpace {
        self.space
    }

    /// The largest position of the space (`u64::MAX`, `u32::MAX`, 16383, or a table's entry
    /// count minus one).
    pub fn max_position(&self) -> u64 {
        max_position(self.space).unwrap_or(u64::MAX)
    }

    /// The points, sorted ascending.
    pub fn points(&self) -> &[u64] {
        &self.points
    }

    /// The owner (node index) of each point.
    pub fn owners(&self) -> &[u32] {
        &self.owners
    }

    /// How keys get their positions.
    pub fn placement(&self) -> Placement {
        self.placement
    }

    /// The position of `key` in this space: which range owns it. O(key length).
    pub fn position(&self, key: &[u8]) -> u64 {
        self.placement.position(key, self.space)
    }

    /// Whether a key sits at the same position in `self` and `other` (same space, same
    /// placement), so that their ranges can be compared.
    pub fn places_keys_like(&self, other: &Arcs<'_>) -> bool {
        self.space == other.space && self.placement == other.placement
    }

    /// How many positions each of `node_count` nodes owns (summing to the space's size). O(P).
    ///
    /// # Panics
    /// If an owner is `>= node_count`.
    pub fn owned(&self, node_count: usize) -> Vec<u128> {
        let mut owned = vec![0u128; node_count];
        let last = self.points[self.points.len() - 1];
        let wrap = u128::from(self.max_position() - last) + 1;
        let mut prev: Option<u64> = None;
        for (&p, &o) in self.points.iter().zip(self.owners.iter()) {
            let len = match prev {
                None => u128::from(p) + wrap,
                Some(q) => u128::from(p - q),
            };
            owned[o as usize] += len;
            prev = Some(p);
        }
        owned
    }

    /// Visits the common refinement of `self` and `other` (two divisions of the same space):
    /// every maximal range `start..=end` on which both have a single owner, in position order,
    /// as `visit(start, end, owner in self, owner in other)`. The range past the last point of
    /// both comes last, owned through the wrap. O(P + Q).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when the two are over different spaces.
    pub fn overlay(&self, other: &Arcs<'_>, visit: impl FnMut(u64, u64, u32, u32)) -> Result<()> {
        if self.space != other.space {
            return Err(Error::InvalidParameter {
                name: "arcs",
                reason: format!("cannot overlay {:?} arcs on {:?} arcs", self.space, other.space),
            });
        }
        overlay((&self.points, &self.owners), (&other.points, &other.owners), self.max_position(), visit);
        Ok(())
    }
}

fn max_position(space: KeySpace) -> Option<u64> {
    match space {
        KeySpace::Hash64 => Some(u64::MAX),
        KeySpace::Hash32 => Some(u64::from(u32::MAX)),
        KeySpace::Slots => Some(u64::from(crate::algo::slots::SLOTS) - 1),
        KeySpace::Table { entries } => entries.checked_sub(1),
        KeySpace::Sample { .. } => None,
    }
}

/// The common refinement of two circles on `[0, max]`: every maximal range `start..=end` on
/// which both have a single owner, in position order, as `visit(start, end, owner in a, owner
/// in b)` (owners as stored, node indices of each side's own set). A position's owner is the
/// first point at or after it, wrapping to the first point; of equal points the first owns.
/// The range past the last point of both (when that point is below `max`) comes last and is
/// owned through the wrap by both sides' first points. O(P + Q).
///
/// Both sides must be non-empty with one owner per point, points sorted ascending and `<= max`.
fn overlay(a: (&[u64], &[u32]), b: (&[u64], &[u32]), max: u64, mut visit: impl FnMut(u64, u64, u32, u32)) {
    let ((ap, ao), (bp, bo)) = (a, b);
    let (mut i, mut j) = (0usize, 0usize);
    // Owner of positions up to and including the next boundary, given the first point >= it.
    let owner = |owners: &[u32], len: usize, idx: usize| owners[if idx == len { 0 } else { idx }];
    let mut start: u64 = 0;
    loop {
        // Next boundary: the smallest point of either set not yet passed, else the top.
        let next = match (ap.get(i), bp.get(j)) {
            (Some(&x), Some(&y)) => x.min(y),
            (Some(&x), None) => x,
            (None, Some(&y)) => y,
            (None, None) => max,
        };
        visit(start, next, owner(ao, ap.len(), i), owner(bo, bp.len(), j));
        // Skip every point equal to the boundary (equal points: the first owns).
        while i < ap.len() && ap[i] <= next {
            i += 1;
        }
        while j < bp.len() && bp[j] <= next {
            j += 1;
        }
        if next == max {
            return;
        }
        start = next + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arcs(space: KeySpace, points: &[u64], owners: &[u32]) -> Arcs<'static> {
        Arcs::new(space, points.to_vec(), owners.to_vec(), Placement::hashed(KeyHasher::default())).unwrap()
    }

    #[test]
    fn overlay_splits_at_both_point_sets() {
        let mut got = Vec::new();
        let a = arcs(KeySpace::Hash32, &[100, 300], &[0, 1]);
        let b = arcs(KeySpace::Hash32, &[100, 200, 300, 400], &[0, 2, 1, 2]);
        a.overlay(&b, |s, e, x, y| got.push((s, e, x, y))).unwrap();
        let top = u64::from(u32::MAX);
        assert_eq!(got, [(0, 100, 0, 0), (101, 200, 1, 2), (201, 300, 1, 1), (301, 400, 0, 2), (401, top, 0, 0)]);
        got.clear();
        let a = arcs(KeySpace::Hash32, &[10, 20], &[0, 1]);
        let b = arcs(KeySpace::Hash32, &[15], &[7]);
        a.overlay(&b, |s, e, x, y| got.push((s, e, x, y))).unwrap();
        let max = u64::from(u32::MAX);
        assert_eq!(got, vec![(0, 10, 0, 7), (11, 15, 1, 7), (16, 20, 1, 7), (21, max, 0, 7)]);
        got.clear();
        let a = arcs(KeySpace::Hash64, &[u64::MAX], &[0]);
        let b = arcs(KeySpace::Hash64, &[5], &[1]);
        a.overlay(&b, |s, e, x, y| got.push((s, e, x, y))).unwrap();
        assert_eq!(got, vec![(0, 5, 0, 1), (6, u64::MAX, 0, 1)]);
    }

    #[test]
    fn owned_sums_to_the_space_and_follows_the_wrap() {
        let a = arcs(KeySpace::Slots, &[99, 99, 16000], &[1, 2, 0]);
        assert_eq!(a.owned(3), vec![15901, 100 + 383, 0]);
        assert_eq!(a.owned(3).iter().sum::<u128>(), 16384);
        let full = arcs(KeySpace::Hash64, &[u64::MAX], &[0]);
        assert_eq!(full.owned(1), vec![1u128 << 64]);
    }

    #[test]
    fn tables_become_runs_and_place_keys_mod_the_size() {
        let p = Placement::hashed(KeyHasher::Xxh64 { seed: 0 });
        let t = Arcs::from_table(&[2, 2, 0, 1, 1, 1, 2], p).unwrap();
        assert_eq!(t.space(), KeySpace::Table { entries: 7 });
        assert_eq!((t.points(), t.owners()), (&[1, 2, 5, 6][..], &[2, 0, 1, 2][..]));
        assert_eq!(t.owned(3), vec![1, 3, 3]);
        let owners: Vec<u32> = (0..7).map(|i| t.owner_at(i)).collect();
        assert_eq!(owners, [2, 2, 0, 1, 1, 1, 2]);
        assert_eq!(t.position(b"k"), KeyHasher::Xxh64 { seed: 0 }.hash(b"k") % 7);
        assert!(Arcs::from_table(&[], p).is_err());
        assert!(!t.places_keys_like(&Arcs::from_table(&[0; 5], p).unwrap()));
        let q = Placement::hashed_before_query(KeyHasher::Sdbm);
        let a = Arcs::new(KeySpace::Hash32, vec![9], vec![0], q).unwrap();
        assert_eq!(a.position(b"/p?x=1"), KeyHasher::Sdbm.hash(b"/p"));
        assert_eq!(a.position(b"/p"), a.position(b"/p?"));
        assert!(!a.places_keys_like(
            &Arcs::new(KeySpace::Hash32, vec![9], vec![0], Placement::hashed(KeyHasher::Sdbm)).unwrap()
        ));
    }

    #[test]
    fn bad_arcs_are_refused() {
        let p = Placement::hashed(KeyHasher::Md5);
        assert!(Arcs::new(KeySpace::Hash64, vec![], vec![], p).is_err());
        assert!(Arcs::new(KeySpace::Hash64, vec![2, 1], vec![0, 0], p).is_err());
        assert!(Arcs::new(KeySpace::Hash32, vec![1 << 40], vec![0], p).is_err());
        assert!(Arcs::new(KeySpace::Slots, vec![1], vec![0, 1], p).is_err());
        assert!(Arcs::new(KeySpace::Sample { keys: 3 }, vec![1], vec![0], p).is_err());
        assert!(Arcs::new(KeySpace::Table { entries: 0 }, vec![0], vec![0], p).is_err());
        assert!(Arcs::new(KeySpace::Table { entries: 3 }, vec![3], vec![0], p).is_err());
        let a = arcs(KeySpace::Hash64, &[1], &[0]);
        assert!(a.overlay(&arcs(KeySpace::Hash32, &[1], &[0]), |_, _, _, _| {}).is_err());
        assert!(!a.places_keys_like(&arcs(KeySpace::Hash32, &[1], &[0])));
    }
}

//! Migration plans: exactly which keys move when a router is replaced by another.
//!
//! Before a membership change an operator wants to know what it will cost: which hash ranges
//! change owner (to copy them ahead of the switch), how much each node gains and loses, and the
//! total fraction of keys that moves.
//!
//! - **Routers with arcs** (ring, Ketama, token ring, Redis slots, the nginx, HAProxy and Envoy
//!   rings, Maglev's table: [`Router::arcs`]): exact ([`plan_arcs`]). The two sorted point
//!   sets are merged; every elementary range between consecutive boundaries has one owner
//!   before and one after, so the moving ranges (of 64-bit hashes, 32-bit hashes, slots or
//!   table entries) and the moved fraction come out exactly (u128 arithmetic), in O(P₁ + P₂)
//!   time. Both must place keys the same way ([`Arcs::places_keys_like`]: same space, same key
//!   hash), as two configurations of one proxy do.
//! - **Any router** ([`plan_sampled`], [`sampled_fraction`]): route a key sample through both and
//!   compare owners by name. An estimate with binomial noise ≈ `sqrt(f(1-f)/k)` for k keys.
//! - [`plan`] picks the exact method when both routers have arcs that place keys alike, and
//!   otherwise samples [`DEFAULT_SAMPLE`] deterministic keys.
//!
//! Nodes are compared by **name**: ids are per-router indices.
//!
//! The CLI's `hashroute migrate` is a few lines:
//!
//! ```
//! # use hashroute::{Algorithm, RouterSpec, NodeSet, Ring};
//! let from = NodeSet::parse("a\nb\nc\n")?;
//! let to = NodeSet::parse("a\nb\nc\nd\n")?;
//! let spec = RouterSpec::new(Algorithm::Ring);
//! let plan = hashroute::migration::plan(&spec.build(from)?, &spec.build(to)?)?;
//! assert!(plan.is_exact()); // two rings with the same hasher: the exact plan
//! print!("{plan}");
//! # Ok::<(), hashroute::Error>(())
//! ```

use std::collections::HashMap;
use std::fmt;

use crate::algorithm::Algorithm;
use crate::arcs::Arcs;
use crate::error::{Error, Result};
use crate::node::{NodeId, NodeSet};
use crate::router::Router;

/// Keys sampled by [`plan`] when no exact method applies.
pub const DEFAULT_SAMPLE: usize = 100_000;

/// The space that a plan's ranges and fractions are measured in.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeySpace {
    /// 64-bit key hashes (rings): 2^64 positions.
    Hash64,
    /// 32-bit key hashes (Ketama): 2^32 positions.
    Hash32,
    /// Redis Cluster slots: 16384 positions.
    Slots,
    /// A lookup table indexed by a 64-bit key hash mod `entries` (Maglev): positions are the
    /// entries. Entry `i` holds the hashes `≡ i (mod entries)`, so the first `2^64 mod entries`
    /// entries hold one hash more than the others: a fraction counted in entries is off from
    /// the fraction of hashes by less than `entries / 2^64` (4·10⁻¹⁵ at 65537 entries).
    Table {
        /// Entries in the table (Maglev's M).
        entries: u64,
    },
    /// A sample of keys: positions are keys, ranges are not available.
    Sample {
        /// Keys in the sample.
        keys: usize,
    },
}

impl KeySpace {
    /// Number of positions in the space.
    pub fn size(self) -> u128 {
        match self {
            KeySpace::Hash64 => 1u128 << 64,
            KeySpace::Hash32 => 1u128 << 32,
            KeySpace::Slots => 16384,
            KeySpace::Table { entries } => u128::from(entries),
            KeySpace::Sample { keys } => keys as u128,
        }
    }

    /// Whether the plan is exact (computed from the routers' structure) rather than estimated.
    pub fn is_exact(self) -> bool {
        !matches!(self, KeySpace::Sample { .. })
    }
}

/// One range of positions that changes owner, with indices into [`MigrationPlan::names`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Range {
    start: u64,
    end: u64,
    from: u32,
    to: u32,
}

/// A moving range as returned by [`MigrationPlan::moves`]: positions `start..=end` (hashes,
/// slots or table entries, in the plan's [`KeySpace`]) go from node `from` to node `to`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Move<'a> {
    /// First position of the range.
    pub start: u64,
    /// Last position of the range (inclusive).
    pub end: u64,
    /// The owner before.
    pub from: &'a str,
    /// The owner after.
    pub to: &'a str,
}

impl Move<'_> {
    /// Positions in the range (`end - start + 1`, up to 2^64).
    pub fn len(&self) -> u128 {
        u128::from(self.end) - u128::from(self.start) + 1
    }

    /// Always `false`: a range holds at least one position.
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// One node's part in a migration, as fractions of the key space.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeShare {
    /// The node's name (present before, after, or both).
    pub name: String,
    /// Share owned before the change.
    pub before: f64,
    /// Share owned after the change.
    pub after: f64,
    /// Share that moves to this node.
    pub moved_in: f64,
    /// Share that moves away from this node.
    pub moved_out: f64,
}

/// What changes between two routers: moving ranges (exact plans), per-node shares, and the
/// fraction of keys that moves.
///
/// `Display` prints a summary line, the per-node table, and every moving range (a ring of P
/// points can have up to ≈ 2P of them); [`MigrationPlan::summary`] prints without the ranges.
#[derive(Clone, Debug)]
pub struct MigrationPlan {
    before_algorithm: Algorithm,
    after_algorithm: Algorithm,
    space: KeySpace,
    names: Vec<String>,
    ranges: Vec<Range>,
    moved: u128,
    shares: Vec<NodeShare>,
}

impl MigrationPlan {
    /// The space the plan is measured in (exact hash circle, slots, or a key sample).
    pub fn space(&self) -> KeySpace {
        self.space
    }

    /// Whether the plan is exact.
    pub fn is_exact(&self) -> bool {
        self.space.is_exact()
    }

    /// Positions (hashes, slots, table entries, or sampled keys) that change owner.
    pub fn moved_units(&self) -> u128 {
        self.moved
    }

    /// Fraction of the key space that changes owner, in `[0, 1]`.
    pub fn moved_fraction(&self) -> f64 {
        if self.space.size() == 0 {
            0.0
        } else {
            self.moved as f64 / self.space.size() as f64
        }
    }

    /// The moving ranges in position order, adjacent ranges with the same `(from, to)` merged.
    /// Empty for sampled plans. An arc that wraps past the top of the circle appears as two
    /// ranges (one ending at the maximum, one starting at 0).
    pub fn moves(&self) -> impl ExactSizeIterator<Item = Move<'_>> + '_ {
        self.ranges.iter().map(|r| Move {
            start: r.start,
            end: r.end,
            from: &self.names[r.from as usize],
            to: &self.names[r.to as usize],
        })
    }

    /// Every node of either router, sorted by name, with its shares.
    pub fn shares(&self) -> &[NodeShare] {
        &self.shares
    }

    /// The share of the node named `name`, if it is in either router.
    pub fn share(&self, name: &str) -> Option<&NodeShare> {
        self.shares.binary_search_by(|s| s.name.as_str().cmp(name)).ok().map(|i| &self.shares[i])
    }

    /// Node names of both routers, sorted.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// A `Display` of the summary line and per-node table, without the ranges.
    pub fn summary(&self) -> impl fmt::Display + '_ {
        Summary(self)
    }

    fn write_summary(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let how = match self.space {
            KeySpace::Hash64 => "exact, 64-bit hash circle".to_owned(),
            KeySpace::Hash32 => "exact, 32-bit hash circle".to_owned(),
            KeySpace::Slots => "exact, 16384 slots".to_owned(),
            KeySpace::Table { entries } => format!("exact, {entries}-entry table"),
            KeySpace::Sample { keys } => format!("estimated from {keys} keys"),
        };
        writeln!(
            f,
            "migration {} -> {} ({how}): {:.4}% of keys move",
            self.before_algorithm,
            self.after_algorithm,
            100.0 * self.moved_fraction()
        )?;
        let width = self.shares.iter().map(|s| s.name.len()).max().unwrap_or(4).max(4);
        writeln!(f, "{:width$}  {:>9}  {:>9}  {:>9}  {:>9}", "node", "before", "after", "in", "out")?;
        for s in &self.shares {
            writeln!(
                f,
                "{:width$}  {:>8.4}%  {:>8.4}%  {:>8.4}%  {:>8.4}%",
                s.name,
                100.0 * s.before,
                100.0 * s.after,
                100.0 * s.moved_in,
                100.0 * s.moved_out
            )?;
        }
        Ok(())
    }
}

struct Summary<'a>(&'a MigrationPlan);

impl fmt::Display for Summary<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.write_summary(f)
    }
}

impl fmt::Display for MigrationPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_summary(f)?;
        if self.is_exact() {
            writeln!(f, "{} moving ranges (start..=end from -> to):", self.ranges.len())?;
            let digits = match self.space {
                KeySpace::Hash32 => 8,
                KeySpace::Slots | KeySpace::Table { .. } => 0,
                _ => 16,
            };
            for m in self.moves() {
                if digits == 0 {
                    writeln!(f, "{}..={} {} -> {}", m.start, m.end, m.from, m.to)?;
                } else {
                    writeln!(f, "{:#0w$x}..={:#0w$x} {} -> {}", m.start, m.end, m.from, m.to, w = digits + 2)?;
                }
            }
        }
        Ok(())
    }
}

/// Node names of both sets, sorted, and each set's id -> name index.
fn name_table(before: &NodeSet, after: &NodeSet) -> (Vec<String>, Vec<u32>, Vec<u32>) {
    let mut names: Vec<String> = before.iter().chain(after.iter()).map(|(_, n)| n.name().to_owned()).collect();
    names.sort_unstable();
    names.dedup();
    let index: HashMap<&str, u32> = names.iter().enumerate().map(|(i, n)| (n.as_str(), i as u32)).collect();
    let map = |set: &NodeSet| set.iter().map(|(_, n)| index[n.name()]).collect::<Vec<u32>>();
    let (b, a) = (map(before), map(after));
    (names, b, a)
}

/// Per-name accumulators, in space units.
struct Tally {
    before: Vec<u128>,
    after: Vec<u128>,
    moved_in: Vec<u128>,
    moved_out: Vec<u128>,
    moved: u128,
    ranges: Vec<Range>,
}

impl Tally {
    fn new(names: usize) -> Tally {
        Tally {
            before: vec![0; names],
            after: vec![0; names],
            moved_in: vec![0; names],
            moved_out: vec![0; names],
            moved: 0,
            ranges: Vec::new(),
        }
    }

    /// Positions `start..=end` are owned by `from` before and `to` after.
    fn add(&mut self, start: u64, end: u64, from: u32, to: u32, keep_ranges: bool) {
        let len = u128::from(end) - u128::from(start) + 1;
        self.before[from as usize] += len;
        self.after[to as usize] += len;
        if from == to {
            return;
        }
        self.moved += len;
        self.moved_out[from as usize] += len;
        self.moved_in[to as usize] += len;
        if !keep_ranges {
            return;
        }
        if let Some(last) = self.ranges.last_mut() {
            if last.from == from && last.to == to && u128::from(last.end) + 1 == u128::from(start) {
                last.end = end;
                return;
            }
        }
        self.ranges.push(Range { start, end, from, to });
    }

    fn finish(
        self,
        names: Vec<String>,
        space: KeySpace,
        before_algorithm: Algorithm,
        after_algorithm: Algorithm,
    ) -> MigrationPlan {
        let size = space.size() as f64;
        let frac = |v: u128| if size == 0.0 { 0.0 } else { v as f64 / size };
        let shares = names
            .iter()
            .enumerate()
            .map(|(i, name)| NodeShare {
                name: name.clone(),
                before: frac(self.before[i]),
                after: frac(self.after[i]),
                moved_in: frac(self.moved_in[i]),
                moved_out: frac(self.moved_out[i]),
            })
            .collect();
        MigrationPlan {
            before_algorithm,
            after_algorithm,
            space,
            names,
            ranges: self.ranges,
            moved: self.moved,
            shares,
        }
    }
}

/// The exact plan between two routers' [`Arcs`] over `before_nodes` and `after_nodes` (the node
/// sets their owners index into): every moving range with its old and new owner, the per-node
/// shares, and the exact moved fraction. [`plan`] calls it for two routers with arcs.
///
/// Cost: O(P₁ + P₂) time, O(number of moving ranges) memory.
///
/// # Errors
/// [`Error::InvalidParameter`] when the arcs place keys differently
/// ([`Arcs::places_keys_like`]: a key's position would differ between them, so ranges are
/// meaningless; use [`plan_sampled`]) or an owner is not a node of its set.
pub fn plan_arcs(
    before: (&Arcs<'_>, &NodeSet, Algorithm),
    after: (&Arcs<'_>, &NodeSet, Algorithm),
) -> Result<MigrationPlan> {
    let ((a, a_nodes, a_algo), (b, b_nodes, b_algo)) = (before, after);
    if !a.places_keys_like(b) {
        return Err(Error::InvalidParameter {
            name: "arcs",
            reason: format!(
                "the two place keys differently ({:?} {:?} vs {:?} {:?}); exact ranges need the same placement, \
                 sample instead",
                a.space(),
                a.placement().hasher(),
                b.space(),
                b.placement().hasher()
            ),
        });
    }
    for (arcs, nodes) in [(a, a_nodes), (b, b_nodes)] {
        if arcs.owners().iter().any(|&o| o as usize >= nodes.len()) {
            return Err(Error::InvalidParameter { name: "owners", reason: "an owner is not a node of the set".into() });
        }
    }
    let (names, bmap, amap) = name_table(a_nodes, b_nodes);
    let mut tally = Tally::new(names.len());
    a.overlay(b, |start, end, from, to| tally.add(start, end, bmap[from as usize], amap[to as usize], true))?;
    Ok(tally.finish(names, a.space(), a_algo, b_algo))
}

/// The fraction of `keys` whose owner (by name) differs between `before` and `after`; `0.0` for
/// an empty sample. Cost: two lookups per key.
pub fn sampled_fraction<A, B>(before: &A, after: &B, keys: &[&[u8]]) -> f64
where
    A: Router + ?Sized,
    B: Router + ?Sized,
{
    if keys.is_empty() {
        return 0.0;
    }
    let moved = sampled_moves(before, after, keys, |_, _| {});
    moved as f64 / keys.len() as f64
}

/// Routes every key of `keys` through both routers, calls `visit(owner before, owner after)`
/// for each, and returns how many keys changed owner (compared by name: ids are per router).
/// The one sampled-movement loop: [`sampled_fraction`], [`plan_sampled`] and the analysis
/// crate's sampled movement all count through it. Cost: two lookups per key.
pub fn sampled_moves<A, B, K>(
    before: &A,
    after: &B,
    keys: impl IntoIterator<Item = K>,
    mut visit: impl FnMut(NodeId, NodeId),
) -> usize
where
    A: Router + ?Sized,
    B: Router + ?Sized,
    K: AsRef<[u8]>,
{
    let (b, a) = (before.nodes(), after.nodes());
    // After id -> before id of the same name.
    let to_before: Vec<Option<u32>> = a.iter().map(|(_, n)| b.id_of(n.name()).map(NodeId::as_u32)).collect();
    let mut moved = 0;
    for key in keys {
        let key = key.as_ref();
        let (x, y) = (before.route(key), after.route(key));
        if to_before[y.index()] != Some(x.as_u32()) {
            moved += 1;
        }
        visit(x, y);
    }
    moved
}

/// An estimated plan from a key sample: per-node shares and the moved fraction, no ranges.
/// Works for any two routers (different algorithms included).
///
/// # Errors
/// [`Error::InvalidParameter`] for an empty sample.
pub fn plan_sampled<A, B>(before: &A, after: &B, keys: &[&[u8]]) -> Result<MigrationPlan>
where
    A: Router + ?Sized,
    B: Router + ?Sized,
{
    if keys.is_empty() {
        return Err(Error::InvalidParameter { name: "keys", reason: "the sample is empty".into() });
    }
    let (names, bmap, amap) = name_table(before.nodes(), after.nodes());
    let mut tally = Tally::new(names.len());
    sampled_moves(before, after, keys, |from, to| tally.add(0, 0, bmap[from.index()], amap[to.index()], false));
    Ok(tally.finish(names, KeySpace::Sample { keys: keys.len() }, before.algorithm(), after.algorithm()))
}

/// The deterministic key sample [`plan`] uses: `"key:0"`, `"key:1"`, …
pub fn default_sample(count: usize) -> Vec<Vec<u8>> {
    (0..count).map(|i| format!("key:{i}").into_bytes()).collect()
}

/// The best plan available: exact ([`plan_arcs`]) for two routers with [`Router::arcs`] that
/// place keys alike (two rings with the same hasher, two Ketama continuums with the same key
/// hash, two token rings, two slot layouts, two nginx, HAProxy or Envoy rings with the same key
/// hash, two Maglev tables of one size and hasher); otherwise estimated from [`DEFAULT_SAMPLE`] keys
/// of [`default_sample`]. Works the same through `&dyn Router` and
/// [`AnyRouter`](crate::AnyRouter).
///
/// # Errors
/// None in practice for valid routers; the signature leaves room for methods that can fail.
pub fn plan<A, B>(before: &A, after: &B) -> Result<MigrationPlan>
where
    A: Router + ?Sized,
    B: Router + ?Sized,
{
    if let (Some(a), Some(b)) = (before.arcs(), after.arcs()) {
        if a.places_keys_like(&b) {
            return plan_arcs((&a, before.nodes(), before.algorithm()), (&b, after.nodes(), after.algorithm()));
        }
    }
    let sample = default_sample(DEFAULT_SAMPLE);
    let keys: Vec<&[u8]> = sample.iter().map(Vec::as_slice).collect();
    plan_sampled(before, after, &keys)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arcs::Placement;
    use crate::{KeyHasher, Node, Ring};

    fn set(names: &[&str]) -> NodeSet {
        NodeSet::from_names(names).unwrap()
    }

    /// Hand-built arcs over `space` for the plan tests.
    fn arcs(space: KeySpace, points: &[u64], owners: &[u32]) -> Arcs<'static> {
        Arcs::new(space, points.to_vec(), owners.to_vec(), Placement::hashed(KeyHasher::Md5)).unwrap()
    }

    fn plan_of(before: (&Arcs<'_>, &NodeSet), after: (&Arcs<'_>, &NodeSet)) -> MigrationPlan {
        plan_arcs((before.0, before.1, Algorithm::Ring), (after.0, after.1, Algorithm::Ring)).unwrap()
    }

    #[test]
    fn hand_built_exact_answer() {
        let nodes_b = set(&["a", "b"]);
        let nodes_a = set(&["a", "b", "c"]);
        // before: a owns (300, MAX] ∪ [0, 100], b owns (100, 300].
        let before = arcs(KeySpace::Hash32, &[100, 300], &[0, 1]);
        // after: c takes (100, 200] from b and (300, 400] from a.
        let after = arcs(KeySpace::Hash32, &[100, 200, 300, 400], &[0, 2, 1, 2]);
        let plan = plan_of((&before, &nodes_b), (&after, &nodes_a));
        let moves: Vec<_> = plan.moves().map(|m| (m.start, m.end, m.from, m.to)).collect();
        assert_eq!(moves, [(101, 200, "b", "c"), (301, 400, "a", "c")]);
        assert_eq!(plan.moved_units(), 200);
        assert_eq!(plan.share("c").unwrap().moved_in, 200.0 / 4294967296.0);
        assert_eq!(plan.share("a").unwrap().moved_out, 100.0 / 4294967296.0);
        assert_eq!(plan.share("b").unwrap().before, 200.0 / 4294967296.0);
    }

    #[test]
    fn wrap_and_coalesce() {
        let n = set(&["a", "b"]);
        // before: all to a. after: b owns the wrap arc (MAX-9, MAX] ∪ [0, 10].
        let before = arcs(KeySpace::Hash32, &[50], &[0]);
        let after = arcs(KeySpace::Hash32, &[10, u64::from(u32::MAX) - 10], &[1, 0]);
        let plan = plan_of((&before, &n), (&after, &n));
        let moves: Vec<_> = plan.moves().map(|m| (m.start, m.end, m.from, m.to)).collect();
        assert_eq!(moves, [(0, 10, "a", "b"), (u64::from(u32::MAX) - 9, u64::from(u32::MAX), "a", "b")]);
        assert_eq!(plan.moved_units(), 21);
        // Coalescing: boundaries of the other set inside one moving arc do not split it.
        let before = arcs(KeySpace::Hash32, &[10, 20, 30], &[0, 0, 0]);
        let after = arcs(KeySpace::Hash32, &[30], &[1]);
        let plan = plan_of((&before, &n), (&after, &n));
        assert_eq!(plan.moves().len(), 1);
        assert_eq!(plan.moved_fraction(), 1.0);
    }

    #[test]
    fn point_at_the_top_of_the_circle() {
        let n = set(&["a", "b"]);
        let before = arcs(KeySpace::Hash64, &[u64::MAX], &[0]);
        let after = arcs(KeySpace::Hash64, &[5, u64::MAX], &[1, 0]);
        let plan = plan_of((&before, &n), (&after, &n));
        assert_eq!(plan.moved_units(), 6);
        assert_eq!(plan.share("a").unwrap().before, 1.0);
        let total: f64 = plan.shares().iter().map(|s| s.after).sum();
        assert!((total - 1.0).abs() < 1e-12);
    }

    #[test]
    fn identical_rings_move_nothing() {
        let r = Ring::builder().vnodes(100).nodes(["a", "b", "c", "d"]).build().unwrap();
        let plan = plan(&r, &r.clone()).unwrap();
        assert!(plan.is_exact());
        assert_eq!(plan.moved_units(), 0);
        assert_eq!(plan.moves().len(), 0);
        let shares: u128 = plan.shares().iter().map(|s| (s.before * 1e9) as u128).sum();
        assert!((999_999_990..=1_000_000_000).contains(&shares));
    }

    #[test]
    fn different_hashers_are_an_error_but_plan_samples() {
        let a = Ring::builder().nodes(["a", "b"]).build().unwrap();
        let b = Ring::builder().hasher(KeyHasher::Xxh64 { seed: 0 }).nodes(["a", "b"]).build().unwrap();
        let (aa, ba) = (a.arcs().unwrap(), b.arcs().unwrap());
        let err = plan_arcs((&aa, a.nodes(), a.algorithm()), (&ba, b.nodes(), b.algorithm())).unwrap_err();
        assert!(matches!(err, Error::InvalidParameter { name: "arcs", .. }), "{err}");
        let p = plan(&a, &b).unwrap();
        assert!(!p.is_exact());
        assert!(p.moved_fraction() > 0.2);
        assert!(plan_sampled(&a, &b, &[]).is_err());
    }

    #[test]
    fn maglev_tables_of_one_size_plan_exactly() {
        let a = crate::Maglev::builder().table_size(251).nodes(["a", "b", "c"]).build().unwrap();
        let b = a.with_node(Node::new("d")).unwrap();
        let p = plan(&a, &b).unwrap();
        assert_eq!(p.space(), KeySpace::Table { entries: 251 });
        let differ = a
            .table()
            .iter()
            .zip(b.table())
            .filter(|(x, y)| a.node_name(NodeId::from_index(**x)) != b.node_name(NodeId::from_index(**y)))
            .count();
        assert_eq!(p.moved_units(), differ as u128);
        assert!(p.to_string().starts_with("migration maglev -> maglev (exact, 251-entry table): "), "{p}");
        let other_size = crate::Maglev::builder().table_size(257).nodes(["a", "b", "c"]).build().unwrap();
        assert!(!plan(&a, &other_size).unwrap().is_exact());
    }

    #[test]
    fn display_lists_ranges_and_shares() {
        let r = Ring::builder().vnodes(4).nodes(["a", "b"]).build().unwrap();
        let r2 = r.with_node(Node::new("c")).unwrap();
        let plan = plan(&r, &r2).unwrap();
        let text = plan.to_string();
        assert!(text.starts_with("migration ring -> ring (exact, 64-bit hash circle): "), "{text}");
        assert!(text.contains(" -> c\n"));
        assert_eq!(text.lines().filter(|l| l.contains(" -> c")).count(), plan.moves().len());
        assert!(!plan.summary().to_string().contains("0x"));
        let _ = NodeId::default();
    }
}

//! HAProxy `hash-type consistent` (lb_chash.c), bit-exact with HAProxy 2.6.12, for `balance uri`.
//!
//! A server with numeric id `puid` (its `id`, else HAProxy's automatic number: a counter over
//! the declaration order that skips taken ids) and weight `w` has `16 w` tree nodes with keys
//! `full_hash(puid · 4096 + j)`, j = 0..16w−1 — the nodes depend on the id, not on the name or address. A key's hash is sdbm
//! of the request target cut before the first `?` (`balance uri`; `whole` keeps the query),
//! followed by the avalanche `full_hash` unless the function is plain `sdbm`
//! ([`KeyHasher::SdbmAvalanche`] is what `hash-type consistent` uses by default). The **nearest**
//! node wins, not the successor: with `next` the first node at or after the hash (wrapping) and
//! `prev` the one before it, `prev` wins when `hash − prev ≤ next − hash` (u32 arithmetic).
//!
//! Not modelled: health checks and `observe` (a down server leaves the tree), `backup` servers
//! (used only when every active one is down), slow start, `hash-balance-factor` (bounded
//! loads), `balance uri` options other than `whole` (`len`, `depth`, `path-only`) and hash
//! functions other than sdbm; the configuration reader refuses those it sees.
//!
//! **Key distribution**: sdbm is a weak hash. On request paths (text) the avalanche spreads it
//! well, but on random *binary* keys sdbm + avalanche is far from uniform (measured with 1000
//! servers: the busiest one at about 5× the mean for 8-byte random keys, about 1.8× — what the
//! node arcs predict — for `/item/<hex>` paths). The sweep's exact loads assume uniform hashes.
//!
//! **Preference list** (`replicas`): servers by increasing distance of their nearest node from
//! the key's hash, the two sides walked outward from `prev` and `next` and the nearer taken first
//! (ties to the `prev` side, as the lookup breaks them); the first is always the route.

use std::ops::ControlFlow;

use crate::algo::builder::Configure;
use crate::algorithm::Algorithm;
use crate::arcs::{Arcs, Placement};
use crate::circle::{Circle, MAX_POINTS};
use crate::error::{Error, Result};
use crate::hash::{haproxy_full_hash, KeyHasher};
use crate::migration::KeySpace;
use crate::node::{Node, NodeId, NodeSet, Visited};
use crate::router::Router;
use crate::Builder;

/// Tree nodes per weight unit (`BE_WEIGHT_SCALE`).
pub(crate) const NODES_PER_WEIGHT: u64 = 16;

/// The id stride of node keys (`SRV_EWGHT_RANGE`).
const ID_STRIDE: u32 = 4096;

const ID_LABEL: &str = Haproxy::ID_LABEL;

/// HAProxy's consistent-hash backend over a node set (node names are the `server` names,
/// weights HAProxy's integer `weight`, ids from the [`Haproxy::ID_LABEL`] label or assigned 1, 2, …).
///
/// - **Cost**: `route` = sdbm over the path (plus the avalanche) and a binary search over
///   `16 Σw` nodes. Memory: 8 bytes per node. Build: `16 Σw` integer hashes and a sort.
/// - **Guarantees**: the server HAProxy 2.6.12 picks for every key when all servers are up
///   (`../shared/vectors/haproxy_consistent.csv`). Keys that equal the same path up to `?` go
///   to the same server.
/// - **Structure**: [`Router::arcs`] on the 32-bit circle of key hashes (the nearest-node rule
///   as midpoint boundaries), so [`migration::plan`](crate::migration::plan) between two
///   backends with the same hash and `whole` setting is exact.
///
/// ```
/// use hashroute::{Haproxy, Router};
/// let haproxy = Haproxy::builder().weighted_nodes([("s1", 1.0), ("s2", 1.0), ("s3", 2.0), ("s4", 5.0)]).build()?;
/// assert_eq!(haproxy.node_name(haproxy.route(b"/key-0")), "s4");
/// assert_eq!(haproxy.route(b"/key-0?x=1"), haproxy.route(b"/key-0"));
/// # Ok::<(), hashroute::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Haproxy {
    nodes: NodeSet,
    hasher: KeyHasher,
    whole: bool,
    ids: Vec<u32>,
    circle: Circle<u32>,
}

impl Haproxy {
    /// A builder for this router (see [`Builder`]).
    pub fn builder() -> Builder<Haproxy> {
        Builder::default()
    }

    /// A router over weight-1 nodes named `names`, with the default options.
    ///
    /// # Errors
    /// As [`NodeSet::from_names`](crate::NodeSet::from_names) and the builder's `build`.
    pub fn from_names<I>(names: I) -> Result<Haproxy>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        Haproxy::builder().nodes(names).build()
    }
}

/// The options of [`Builder<Haproxy>`].
#[derive(Clone, Debug, Default)]
pub struct HaproxyOptions {
    pub(crate) hasher: Option<KeyHasher>,
    pub(crate) uri_whole: bool,
}

impl Configure for Haproxy {
    type Options = HaproxyOptions;
}

impl Builder<Haproxy> {
    /// The key hasher; default sdbm-avalanche (HAProxy's `hash-type consistent`).
    pub fn hasher(mut self, hasher: KeyHasher) -> Builder<Haproxy> {
        self.options.hasher = Some(hasher);
        self
    }
}

impl Builder<Haproxy> {
    /// `balance uri whole`: hash the whole request target, query included (default: cut at
    /// the first `?`).
    pub fn uri_whole(mut self, whole: bool) -> Builder<Haproxy> {
        self.options.uri_whole = whole;
        self
    }

    /// Builds the tree (`16 Σw` keys and a sort). The hasher is [`KeyHasher::SdbmAvalanche`]
    /// (the default) or [`KeyHasher::Sdbm`].
    ///
    /// # Errors
    /// The [`NodeSet::new`] errors; [`Error::InvalidParameter`] for another hasher, a weight
    /// that is not a whole number from 1 to 256, an id label that is not a number from 1 up or
    /// is repeated; [`Error::TooManyPoints`] past 2^26 nodes.
    pub fn build(mut self) -> Result<Haproxy> {
        let hasher = match self.options.hasher {
            None => KeyHasher::SdbmAvalanche,
            Some(h @ (KeyHasher::Sdbm | KeyHasher::SdbmAvalanche)) => h,
            Some(other) => {
                return Err(Error::InvalidParameter {
                    name: "hash",
                    reason: format!("haproxy hashes with sdbm-avalanche or sdbm only (got {})", other.name()),
                })
            }
        };
        Haproxy::new(self.take_nodes()?, hasher, self.options.uri_whole)
    }
}

/// Server ids: the label's, else HAProxy's automatic numbering ([`Haproxy::assign_ids`]).
fn server_ids(nodes: &NodeSet) -> Result<Vec<u32>> {
    let bad = |reason: String| Error::InvalidParameter { name: "server id", reason };
    let mut explicit = Vec::with_capacity(nodes.len());
    for (_, node) in nodes.iter() {
        explicit.push(match node.label(ID_LABEL) {
            None => None,
            Some(text) => match text.parse::<u32>() {
                Ok(id) if (1..=u32::MAX / ID_STRIDE).contains(&id) => Some(id),
                _ => return Err(bad(format!("{text:?} for {:?} is not a number from 1 up", node.name()))),
            },
        });
    }
    let mut taken: Vec<u32> = explicit.iter().flatten().copied().collect();
    taken.sort_unstable();
    if let Some(w) = taken.windows(2).find(|w| w[0] == w[1]) {
        return Err(bad(format!("id {} is given to two servers", w[0])));
    }
    Ok(Haproxy::assign_ids(&explicit))
}

impl Haproxy {
    /// HAProxy's automatic server ids (`check_config_validity`): a running `next_id` that starts at
    /// 1 and steps once per server *in declaration order, explicit ids included*; a server without
    /// an id takes the first id at or above `next_id` that is not taken. So `s1, s2 id 7, s3` are
    /// 1, 7, 3 (not 1, 7, 2).
    pub fn assign_ids(explicit: &[Option<u32>]) -> Vec<u32> {
        let mut taken: std::collections::BTreeSet<u32> = explicit.iter().flatten().copied().collect();
        let mut out = Vec::with_capacity(explicit.len());
        for (next, id) in (1u32..).zip(explicit) {
            let id = id.unwrap_or_else(|| {
                let mut candidate = next;
                while taken.contains(&candidate) {
                    candidate += 1;
                }
                taken.insert(candidate);
                candidate
            });
            out.push(id);
        }
        out
    }

    /// The node label holding a server's HAProxy `id` (a decimal number); servers without it
    /// are numbered as HAProxy numbers servers without `id` (a running counter over the
    /// declaration order, skipping taken ids).
    pub const ID_LABEL: &'static str = "haproxy-id";

    fn new(nodes: NodeSet, hasher: KeyHasher, whole: bool) -> Result<Haproxy> {
        let ids = server_ids(&nodes)?;
        let mut total = 0u64;
        for (_, node) in nodes.iter() {
            let w = node.weight();
            if w.fract() != 0.0 || w > 256.0 {
                return Err(Error::InvalidParameter {
                    name: "weight",
                    reason: format!("{w} for {:?}: HAProxy weights are whole numbers from 1 to 256", node.name()),
                });
            }
            total += w as u64 * NODES_PER_WEIGHT;
        }
        if total > MAX_POINTS {
            return Err(Error::TooManyPoints { points: total, max: MAX_POINTS });
        }
        let mut pairs: Vec<(u32, u32)> = Vec::with_capacity(total as usize);
        for ((id, node), &puid) in nodes.iter().zip(&ids) {
            let count = node.weight() as u32 * NODES_PER_WEIGHT as u32;
            pairs.extend((0..count).map(|j| (haproxy_full_hash(puid * ID_STRIDE + j), id.as_u32())));
        }
        // Equal keys: server order (the ebtree keeps duplicates in insertion order).
        pairs.sort_by_key(|&(p, _)| p);
        let (points, owners) = pairs.into_iter().unzip();
        Ok(Haproxy { nodes, hasher, whole, ids, circle: Circle::new(points, owners) })
    }

    /// The part of the request target HAProxy hashes: up to the first `?` (all of it with
    /// `whole`).
    #[inline]
    pub fn hashed_part<'k>(&self, target: &'k [u8]) -> &'k [u8] {
        if self.whole {
            return target;
        }
        match target.iter().position(|&b| b == b'?') {
            Some(q) => &target[..q],
            None => target,
        }
    }

    /// The key hash HAProxy computes for request target `key`.
    #[inline]
    pub fn key_hash(&self, key: &[u8]) -> u32 {
        self.hasher.hash(self.hashed_part(key)) as u32
    }

    /// `(prev, next)` node indices around hash `h`.
    #[inline]
    fn neighbours(&self, h: u32) -> (usize, usize) {
        let len = self.circle.points().len();
        let next = self.circle.successor(h);
        (if next == 0 { len - 1 } else { next - 1 }, next)
    }

    /// The node owning a pre-computed key hash: the nearest tree node, ties to the one before.
    #[inline]
    pub fn route_hash32(&self, h: u32) -> NodeId {
        let (prev, next) = self.neighbours(h);
        let points = self.circle.points();
        let dp = h.wrapping_sub(points[prev]);
        let dn = points[next].wrapping_sub(h);
        self.circle.owner(if dp <= dn { prev } else { next })
    }

    #[inline]
    fn route_key(&self, key: &[u8]) -> NodeId {
        self.route_hash32(self.key_hash(key))
    }

    fn heap_bytes(&self) -> usize {
        self.circle.heap_bytes() + self.ids.capacity() * 4
    }

    /// The hasher (sdbm, with or without the avalanche).
    pub fn hasher(&self) -> KeyHasher {
        self.hasher
    }

    /// Whether the whole target is hashed (`balance uri whole`).
    pub fn uri_whole(&self) -> bool {
        self.whole
    }

    /// Each node's HAProxy server id, by node index.
    pub fn server_ids(&self) -> &[u32] {
        &self.ids
    }

    /// The tree's node keys, ascending.
    pub fn points(&self) -> &[u32] {
        self.circle.points()
    }

    /// The owner (node index) of each key, parallel to [`Haproxy::points`].
    pub fn owners(&self) -> &[u32] {
        self.circle.owners()
    }

    /// A new backend with `node` added (its id from its label, else the lowest free one).
    ///
    /// # Errors
    /// As [`NodeSet::with_node`] and [`Builder::<Haproxy>::build`].
    pub fn with_node(&self, node: Node) -> Result<Haproxy> {
        self.keep_ids(self.nodes.with_node(node)?)
    }

    /// A new backend without the server named `name` (the others keep their ids).
    ///
    /// # Errors
    /// [`Error::UnknownNode`], [`Error::NoNodes`] for the last node.
    pub fn without_node(&self, name: &str) -> Result<Haproxy> {
        self.keep_ids(self.nodes.without_node(name)?)
    }

    /// A new backend with server `name`'s weight changed.
    ///
    /// # Errors
    /// [`Error::UnknownNode`], [`Error::InvalidParameter`] for a weight HAProxy does not take.
    pub fn with_weight(&self, name: &str, weight: f64) -> Result<Haproxy> {
        self.keep_ids(self.nodes.with_weight(name, weight)?)
    }

    /// The nearest-node rule as "first boundary at or after" arcs on the 32-bit circle. Between
    /// two consecutive distinct points `p < q` (the gap past the last point wraps, `2^32 − last +
    /// first`), a hash `h` goes to the point before when `h − p ≤ q − h`, i.e. up to `p +
    /// ⌊(q − p)/2⌋`: so point `i` gets the boundary `points[i] + ⌊gap_i / 2⌋` (mod 2^32) and,
    /// sorted stably, the boundaries follow the "at or after, first of equal owns" rule (of
    /// equal points the first takes the hashes below them, the last those above, as the lookup
    /// does). When every point is equal the lookup's `prev` is the last point itself: it owns
    /// `p ..= p + 2^31`, the first point the rest. O(points log points); the circle must not be
    /// empty.
    fn nearest_as_arcs(&self) -> (Vec<u64>, Vec<u32>) {
        let (points, owners) = (self.circle.points(), self.circle.owners());
        let (first, last) = (points[0], points[points.len() - 1]);
        let mut pairs: Vec<(u32, u32)> = if first == last {
            vec![(first.wrapping_sub(1), owners[0]), (first.wrapping_add(1 << 31), owners[points.len() - 1])]
        } else {
            (0..points.len())
                .map(|i| {
                    let gap = match points.get(i + 1) {
                        Some(&next) => u64::from(next - points[i]),
                        None => (1u64 << 32) + u64::from(first) - u64::from(last),
                    };
                    (points[i].wrapping_add((gap / 2) as u32), owners[i])
                })
                .collect()
        };
        pairs.sort_by_key(|&(bound, _)| bound);
        pairs.into_iter().map(|(bound, owner)| (u64::from(bound), owner)).unzip()
    }

    /// Rebuilds over `nodes`, pinning every surviving server's id with its label (a server's
    /// id, and so its nodes, must not change when another server comes or goes).
    fn keep_ids(&self, nodes: NodeSet) -> Result<Haproxy> {
        let pinned = nodes.iter().map(|(_, n)| match self.nodes.id_of(n.name()) {
            Some(old) if n.label(ID_LABEL).is_none() => {
                n.clone().with_label(ID_LABEL, self.ids[old.index()].to_string())
            }
            _ => n.clone(),
        });
        Haproxy::new(NodeSet::new(pinned.collect::<Vec<_>>())?, self.hasher, self.whole)
    }
}

impl Router for Haproxy {
    fn algorithm(&self) -> Algorithm {
        Algorithm::Haproxy
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
    /// Servers by increasing distance from the key's hash (see the module docs).
    fn preference(&self, key: &[u8], visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) -> Result<()> {
        let h = self.key_hash(key);
        let points = self.circle.points();
        let len = points.len();
        let n = self.nodes.len();
        let (mut back, mut fwd) = self.neighbours(h);
        let mut seen = Visited::new(n);
        let mut produced = 0;
        // Each side walks at most the whole tree: 2 · len steps bound the loop.
        for _ in 0..2 * len {
            let dp = h.wrapping_sub(points[back]);
            let dn = points[fwd].wrapping_sub(h);
            let take = if dp <= dn {
                let i = back;
                back = if back == 0 { len - 1 } else { back - 1 };
                i
            } else {
                let i = fwd;
                fwd = (fwd + 1) % len;
                i
            };
            let id = self.circle.owner(take);
            if seen.insert(id) {
                produced += 1;
                if visit(id).is_break() || produced == n {
                    return Ok(());
                }
            }
        }
        Ok(())
    }
    /// The 32-bit circle of key hashes (every value of the sdbm hash, with or without the
    /// avalanche, of the path before `?` or of the whole target), the nearest-node rule
    /// converted to boundaries at the midpoints of the gaps. O(points log points).
    fn arcs(&self) -> Option<Arcs<'_>> {
        if self.circle.points().is_empty() {
            return None;
        }
        let (points, owners) = self.nearest_as_arcs();
        let placement =
            if self.whole { Placement::hashed(self.hasher) } else { Placement::hashed_before_query(self.hasher) };
        Some(Arcs::trusted(KeySpace::Hash32, points, owners, placement))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Router;

    fn w1125(hasher: KeyHasher) -> Haproxy {
        Haproxy::builder()
            .hasher(hasher)
            .weighted_nodes([("s1", 1.0), ("s2", 1.0), ("s3", 2.0), ("s4", 5.0)])
            .build()
            .unwrap()
    }

    #[test]
    fn ids_default_and_explicit() {
        let nodes = NodeSet::new([
            Node::new("a"),
            Node::new("b").with_label(ID_LABEL, "1"),
            Node::new("c"),
            Node::new("d").with_label(ID_LABEL, "7"),
        ])
        .unwrap();
        assert_eq!(server_ids(&nodes).unwrap(), vec![2, 1, 3, 7]);
        assert_eq!(Haproxy::assign_ids(&[None, Some(7), None, None]), vec![1, 7, 3, 4]);
        assert_eq!(Haproxy::assign_ids(&[Some(2), None, None]), vec![2, 3, 4]);
        assert_eq!(Haproxy::assign_ids(&[None, Some(1), None]), vec![2, 1, 3]);
        let dup =
            NodeSet::new([Node::new("a").with_label(ID_LABEL, "2"), Node::new("b").with_label(ID_LABEL, "2")]).unwrap();
        assert!(server_ids(&dup).unwrap_err().to_string().contains("id 2 is given to two servers"));
        let zero = NodeSet::new([Node::new("a").with_label(ID_LABEL, "0")]).unwrap();
        assert!(server_ids(&zero).is_err());
    }

    #[test]
    fn nodes_depend_on_ids_not_names() {
        let a = w1125(KeyHasher::SdbmAvalanche);
        assert_eq!(a.points().len(), 16 * 9);
        let renamed =
            Haproxy::builder().weighted_nodes([("x1", 1.0), ("x2", 1.0), ("x3", 2.0), ("x4", 5.0)]).build().unwrap();
        assert_eq!(a.points(), renamed.points());
        assert_eq!(a.owners(), renamed.owners());
    }

    #[test]
    fn nearest_node_wins() {
        let r = w1125(KeyHasher::Sdbm);
        let p = r.points();
        for i in 0..p.len() {
            let (lo, hi) = (p[i], p[(i + 1) % p.len()]);
            let mid = lo.wrapping_add(hi.wrapping_sub(lo) / 2);
            assert_eq!(r.route_hash32(lo), r.circle.owner(i));
            assert_eq!(r.route_hash32(mid), r.circle.owner(i), "ties and the lower half go to prev");
            assert_eq!(r.route_hash32(mid.wrapping_add(1)), r.circle.owner((i + 1) % p.len()));
        }
    }

    #[test]
    fn query_cut_and_membership() {
        let r = w1125(KeyHasher::SdbmAvalanche);
        assert_eq!(r.hashed_part(b"/a?b?c"), b"/a");
        assert_eq!(r.key_hash(b"/a?x"), KeyHasher::SdbmAvalanche.hash(b"/a") as u32);
        let whole = Haproxy::builder().uri_whole(true).nodes(["s1"]).build().unwrap();
        assert_eq!(whole.hashed_part(b"/a?b"), b"/a?b");
        // Removing s2 keeps s3's and s4's ids (3 and 4), so only s2's keys move.
        let smaller = r.without_node("s2").unwrap();
        assert_eq!(smaller.server_ids(), &[1, 3, 4]);
        for i in 0..500 {
            let key = format!("/k{i}");
            let before = r.node_name(r.route(key.as_bytes()));
            let after = smaller.node_name(smaller.route(key.as_bytes()));
            assert!(before == after || before == "s2", "{key}: {before} -> {after}");
        }
        let err = Haproxy::builder().hasher(KeyHasher::Crc32).nodes(["a"]).build().unwrap_err();
        assert!(err.to_string().contains("sdbm-avalanche or sdbm only"), "{err}");
    }

    /// The arcs' owner of a position is the nearest-node lookup's, at every boundary and its
    /// neighbours, on hand-made circles with duplicates, a wrapping gap, one point, all equal.
    #[test]
    fn arcs_follow_the_nearest_node_rule() {
        let nodes = NodeSet::from_names(["a", "b", "c"]).unwrap();
        let top = u32::MAX;
        let circles: [(&[u32], &[u32]); 7] = [
            (&[10, 20, 20, 20, 35], &[0, 1, 2, 0, 1]),
            (&[5, 6, 7, top - 3, top], &[2, 0, 1, 2, 0]),
            (&[0, 1 << 31], &[0, 1]),
            (&[0, (1 << 31) + 1], &[0, 1]),
            (&[1234], &[2]),
            (&[77, 77, 77], &[1, 2, 0]),
            (&[0, 0, top, top], &[0, 1, 2, 0]),
        ];
        for (points, owners) in circles {
            let circle = Circle::new(points.to_vec(), owners.to_vec());
            let r = Haproxy { nodes: nodes.clone(), hasher: KeyHasher::Sdbm, whole: false, ids: vec![1, 2, 3], circle };
            let arcs = r.arcs().unwrap();
            let mut probes: Vec<u32> = vec![0, 1, top, top - 1, 1 << 31, (1 << 31) - 1, (1 << 31) + 1];
            for &p in points.iter().chain(arcs.points().iter().map(|&b| b as u32).collect::<Vec<_>>().iter()) {
                probes.extend([p.wrapping_sub(1), p, p.wrapping_add(1), p.wrapping_add(1 << 31)]);
            }
            for h in probes {
                assert_eq!(arcs.owner_at(u64::from(h)), r.route_hash32(h).as_u32(), "{points:?} at {h}");
            }
        }
    }

    #[test]
    fn preference_by_distance() {
        let r = w1125(KeyHasher::SdbmAvalanche);
        for i in 0..300 {
            let key = format!("/key-{i}");
            let reps = r.replicas(key.as_bytes(), 4).unwrap();
            assert_eq!(reps[0], r.route(key.as_bytes()));
            let mut s = reps.clone();
            s.sort();
            s.dedup();
            assert_eq!(s.len(), 4);
        }
    }
}

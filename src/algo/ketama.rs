//! Ketama: the memcached-client consistent hash (last.fm libketama), bit-exact, plus the variants
//! other real clients implement.
//!
//! Every node contributes MD5 digests of `"<name>-<k>"`; each 16-byte digest gives 4 points on a
//! 32-bit circle (4 little-endian `u32`s). A key's hash is the first 4 bytes of `MD5(key)`,
//! little-endian, and it belongs to the first point at or after it, wrapping to the first point.
//! At equal weights every node gets 40 digests = 160 points.
//!
//! The variants differ only in details that matter when a client must agree with another one on
//! every key ([`KetamaVariant`]): how many digests a weighted node gets (the float arithmetic
//! is reproduced exactly), how points are named, `>=` versus `>` lookup, points per digest.
//! The compatibility vectors in `tests/vectors.rs` check every variant against the answers of
//! the real libraries.
//!
//! **Equal points** (two nodes hashing to the same `u32`): the points are ordered by node name
//! (byte-wise), and the first of them is the one lookups land on, so routes never depend on the
//! order the nodes were given in. libketama and libmemcached sort the continuum with `qsort`,
//! which in glibc (a merge sort) keeps equal points in server-list order: listing servers in
//! name order makes them agree with this rule. uhashring and hash_ring keep the *last* node
//! written into their dict instead; with distinct points (every vector) all agree.

use std::io::Write;
use std::ops::ControlFlow;

use crate::algo::builder::Configure;
use crate::algo::ketama_variants;
use crate::algorithm::Algorithm;
use crate::arcs::{Arcs, Placement};
use crate::circle::{Circle, MAX_POINTS};
use crate::error::{Error, Result};
use crate::hash::{md5_words, md5_words_batch, KeyHasher};
use crate::migration::KeySpace;
use crate::node::{Node, NodeId, NodeSet};
use crate::router::Router;
use crate::Builder;

/// Which real client's ketama to reproduce.
///
/// | variant | digests per node (N nodes, weight w of Σw) | point name | points/digest | lookup |
/// |---|---|---|---|---|
/// | `Libketama` | `floorf(w/Σw · 40 · N)`, `w/Σw` in `f32` | `name-k` | 4 | first `>=` |
/// | `Uhashring` | `⌊40 · N · w / Σw⌋` (exact) | `name-k` | 4 | first `>` |
/// | `Libmemcached` | `floor((float)(w/Σw · 160 / 4 · N + 1e-10))`, `f32` | `host-k` on port 11211, else `host:port-k` | 4 | first `>=` |
/// | `Spymemcached` | as `Libmemcached` | `/host:port-k` | 4 | first `>=` |
/// | `PythonHashRing` | `⌊40 · N · w / Σw⌋` (exact) | `name-k` | 3 | first `>` |
/// | `UhashringMd5` | none: `160 · w` points, each a whole 128-bit digest | `name-k` | 1 (128-bit) | first `>` |
///
/// For the libmemcached variants the node name is split at its last `:` into host and port; a
/// name without a numeric port uses memcached's default 11211.
///
/// The `f32` arithmetic is the real one, quirks included: with 61 equal servers libketama gives
/// each 39 digests (156 points), libmemcached already with 25. The real clients take integer
/// weights; fractional weights are used as given (converted to `f32` where the C code converts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum KetamaVariant {
    /// last.fm libketama, the reference (and what most other clients copy).
    #[default]
    Libketama,
    /// PyPI `uhashring` (2.x) in ketama mode: `>` lookup, integer digest counts.
    Uhashring,
    /// libmemcached with `MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED` (MD5 ketama; twemproxy names
    /// points the same way).
    Libmemcached,
    /// libmemcached's `MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY` (spymemcached's naming).
    Spymemcached,
    /// PyPI `hash_ring` (1.3): 3 points per digest, `>` lookup.
    PythonHashRing,
    /// twemproxy (nutcracker 0.5) `distribution: ketama`: libmemcached's digest counts and point
    /// names (a server line's name replaces `host:port`), the empty key hashed to 0, key hash
    /// `md5` or `fnv1a_64` ([`KeyHasher::Fnv1a32`](crate::KeyHasher::Fnv1a32)). See
    /// `ketama_variants.rs`.
    Twemproxy,
    /// libmemcached / pylibmc `behaviors={"ketama": True}`: Jenkins one-at-a-time over signed
    /// chars for keys *and* points, 100 points per server; with any weight above 1 the weighted
    /// MD5 continuum of [`KetamaVariant::Libmemcached`] with the one-at-a-time key hash.
    LibmemcachedOaat,
    /// PyPI `uhashring` (2.x) in its default mode (no `hash_fn`): point `k` of a node is the
    /// whole MD5 of `name-k` as a big-endian 128-bit integer, `160 · w` points for weight `w`
    /// (a multiple of 1/160; 2^22 points in all at most), the key point the 128-bit MD5 of the
    /// key, first point `>`.
    /// Routes compare all 128 bits; [`Ketama::points`] and the `*_hash32` methods see only each
    /// point's top 32 bits, and [`Router::arcs`] is `None` (the key space is not 32-bit).
    UhashringMd5,
}

impl KetamaVariant {
    /// Every variant, in declaration order.
    pub const ALL: [KetamaVariant; 8] = [
        KetamaVariant::Libketama,
        KetamaVariant::Uhashring,
        KetamaVariant::Libmemcached,
        KetamaVariant::Spymemcached,
        KetamaVariant::PythonHashRing,
        KetamaVariant::Twemproxy,
        KetamaVariant::LibmemcachedOaat,
        KetamaVariant::UhashringMd5,
    ];

    /// The variant's name as the CLI spells it.
    pub fn name(&self) -> &'static str {
        match self {
            KetamaVariant::Libketama => "libketama",
            KetamaVariant::Uhashring => "uhashring",
            KetamaVariant::Libmemcached => "libmemcached",
            KetamaVariant::Spymemcached => "spymemcached",
            KetamaVariant::PythonHashRing => "python-hash-ring",
            KetamaVariant::Twemproxy => "twemproxy",
            KetamaVariant::LibmemcachedOaat => "libmemcached-oaat",
            KetamaVariant::UhashringMd5 => "uhashring-md5",
        }
    }

    /// The key hashers this variant accepts, its default first: MD5 for the MD5 clients,
    /// MD5 or FNV-1a for twemproxy, one-at-a-time for libmemcached's `HASH_DEFAULT`. The union
    /// over every variant is [`Algorithm::Ketama`]'s row in the facts table.
    pub fn hashers(self) -> &'static [KeyHasher] {
        match self {
            KetamaVariant::Twemproxy => &[KeyHasher::Md5, KeyHasher::Fnv1a32],
            KetamaVariant::LibmemcachedOaat => &[KeyHasher::Oaat],
            KetamaVariant::Libketama
            | KetamaVariant::Uhashring
            | KetamaVariant::UhashringMd5
            | KetamaVariant::Libmemcached
            | KetamaVariant::Spymemcached
            | KetamaVariant::PythonHashRing => &[KeyHasher::Md5],
        }
    }

    /// The variant named `name` (as in [`KetamaVariant::name`]).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming the accepted values.
    pub fn from_name(name: &str) -> Result<KetamaVariant> {
        KetamaVariant::ALL.into_iter().find(|v| v.name() == name).ok_or_else(|| Error::InvalidParameter {
            name: "ketama variant",
            reason: format!(
                "unknown variant {name:?} (expected {})",
                crate::algorithm::names_list(KetamaVariant::ALL.iter().map(|v| v.name()))
            ),
        })
    }

    /// Whether lookups take the first point strictly greater than the hash (Python's
    /// `bisect_right`) instead of the first point at or after it.
    pub(crate) fn strictly_greater(self) -> bool {
        matches!(self, KetamaVariant::Uhashring | KetamaVariant::PythonHashRing | KetamaVariant::UhashringMd5)
    }

    fn points_per_digest(self) -> usize {
        if self == KetamaVariant::PythonHashRing {
            3
        } else {
            4
        }
    }

    /// MD5 digests node `weight` (of `total`, among `n` nodes) gets, with the variant's exact
    /// arithmetic.
    fn digests(self, weight: f64, total: f64, n: usize) -> u64 {
        match self {
            KetamaVariant::Libketama => {
                // libketama: `float pct = (float)w / (float)total; floorf(pct * 40.0 * (float)n)`;
                // `40.0` is a double, so the product is computed in f64 and rounded to f32 by
                // the `floorf` argument conversion.
                let pct = weight as f32 / total as f32;
                let x = f64::from(pct) * 40.0 * f64::from(n as f32);
                (x as f32).floor() as u64
            }
            KetamaVariant::Libmemcached
            | KetamaVariant::Spymemcached
            | KetamaVariant::Twemproxy
            | KetamaVariant::LibmemcachedOaat => {
                // libmemcached: `floor((float)(pct * 160 / 4 * (float)n + 0.0000000001))`, the
                // products in f32, the addition in f64, then cast back to f32.
                let pct = weight as f32 / total as f32;
                let x = pct * 160.0f32 / 4.0f32 * (n as f32);
                ((f64::from(x) + 0.000_000_000_1) as f32).floor() as u64
            }
            // UhashringMd5 has no digest count (its continuum is `ketama_variants.rs`'s).
            KetamaVariant::Uhashring | KetamaVariant::PythonHashRing | KetamaVariant::UhashringMd5 => {
                // Python: `(40 * n * w) // total`, exact for integral weights.
                let num = 40.0 * n as f64 * weight;
                if weight.fract() == 0.0 && total.fract() == 0.0 && num < 2f64.powi(100) && total < 2f64.powi(100) {
                    ((num as u128) / (total as u128)) as u64
                } else {
                    (num / total).floor() as u64
                }
            }
        }
    }

    /// Writes the MD5 input of digest `k` of node `name` into `buf` (crate-visible for the
    /// one-at-a-time continuum of `ketama_variants.rs`).
    pub(crate) fn write_point_name(&self, buf: &mut Vec<u8>, name: &str, k: u64) {
        self.point_name(buf, name, k);
    }

    /// Writes the MD5 input of digest `k` of node `name` into `buf`.
    fn point_name(self, buf: &mut Vec<u8>, name: &str, k: u64) {
        buf.clear();
        // Writing into a Vec cannot fail.
        let _ = match self {
            KetamaVariant::Libmemcached | KetamaVariant::Twemproxy | KetamaVariant::LibmemcachedOaat => {
                let (host, port) = split_host_port(name);
                if port == MEMCACHED_DEFAULT_PORT {
                    write!(buf, "{host}-{k}")
                } else {
                    write!(buf, "{host}:{port}-{k}")
                }
            }
            KetamaVariant::Spymemcached => {
                let (host, port) = split_host_port(name);
                write!(buf, "/{host}:{port}-{k}")
            }
            _ => write!(buf, "{name}-{k}"),
        };
    }
}

const MEMCACHED_DEFAULT_PORT: u32 = 11211;

/// `host:port` split at the last `:` when what follows is a decimal port; otherwise the whole
/// name and memcached's default port.
fn split_host_port(name: &str) -> (&str, u32) {
    if let Some((host, port)) = name.rsplit_once(':') {
        if !port.is_empty() && port.len() <= 5 && port.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(p) = port.parse::<u32>() {
                if p <= 65535 {
                    return (host, p);
                }
            }
        }
    }
    (name, MEMCACHED_DEFAULT_PORT)
}

/// A Ketama continuum over a node set, in one of the [`KetamaVariant`]s.
///
/// - **Cost**: `route` = one MD5 of the key (~100 ns for short keys, the dominant cost) plus a
///   binary search over ≤ 160 N points. Memory: 8 bytes per point (a `u32` point and a `u32`
///   owner), ≈ 1.3 KB per equal-weight node, plus the node set. Build: 40 N MD5s and a sort.
/// - **Weights**: a node's digest count is proportional to its weight, rounded down with the
///   variant's arithmetic; a node whose count rounds to 0 owns no key (as in libketama) but
///   still appears, last, in preference lists.
///
/// ```
/// use hashroute::{Ketama, KetamaVariant, Router};
/// let servers = ["127.0.0.1:11211", "127.0.0.1:11212", "127.0.0.1:11213"];
/// let ketama = Ketama::builder().variant(KetamaVariant::Libketama).nodes(servers).build()?;
/// // What libketama itself answers for the key "0".
/// assert_eq!(ketama.node_name(ketama.route(b"0")), "127.0.0.1:11213");
/// assert_eq!(Ketama::key_hash(b"0"), 2216742351);
/// # Ok::<(), hashroute::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Ketama {
    nodes: NodeSet,
    variant: KetamaVariant,
    /// The key hash ([`KeyHasher::Md5`] but for the twemproxy and one-at-a-time variants).
    key_hasher: KeyHasher,
    circle: Circle<u32>,
    /// Nodes in name order (used to finish preference lists with nodes that own no point).
    by_name: Vec<u32>,
    /// [`KetamaVariant::UhashringMd5`]'s 128-bit continuum (routes use it; `circle` holds its
    /// top 32 bits, owner for owner).
    wide: Option<Box<Circle<u128>>>,
}

impl Ketama {
    /// A builder for this router (see [`Builder`]).
    pub fn builder() -> Builder<Ketama> {
        Builder::default()
    }

    /// A router over weight-1 nodes named `names`, with the default options.
    ///
    /// # Errors
    /// As [`NodeSet::from_names`](crate::NodeSet::from_names) and the builder's `build`.
    pub fn from_names<I>(names: I) -> Result<Ketama>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        Ketama::builder().nodes(names).build()
    }
}

/// The options of [`Builder<Ketama>`].
#[derive(Clone, Debug, Default)]
pub struct KetamaOptions {
    pub(crate) variant: KetamaVariant,
    /// The key hasher (twemproxy and one-at-a-time variants); `None`: the variant's own.
    pub(crate) key_hasher: Option<KeyHasher>,
}

impl Configure for Ketama {
    type Options = KetamaOptions;
}

impl Builder<Ketama> {
    /// Which client's continuum to reproduce (default [`KetamaVariant::Libketama`]).
    pub fn variant(mut self, variant: KetamaVariant) -> Builder<Ketama> {
        self.options.variant = variant;
        self
    }

    /// Builds the continuum (40 N MD5 digests and a sort). Ketama always hashes with MD5.
    ///
    /// # Errors
    /// The [`NodeSet::new`] errors; [`Error::TooManyPoints`] past the ring's point cap (2^26);
    /// [`Error::InvalidParameter`] when weights overflow `f32` so that no node gets a point.
    pub fn build(mut self) -> Result<Ketama> {
        let variant = self.options.variant;
        let key_hasher = ketama_variants::key_hasher(variant, self.options.key_hasher)?;
        Ketama::new(self.take_nodes()?, variant)?.with_key_hasher(key_hasher)
    }
}

/// Every (point, owner) pair of the continuum, unsorted: node by node, digest by digest, the
/// digests of all point names computed in batches by the multi-lane MD5.
fn points_of(nodes: &NodeSet, counts: &[u64], variant: KetamaVariant, total: usize) -> Vec<(u32, u32)> {
    const CHUNK: usize = 64;
    let per_digest = variant.points_per_digest();
    let mut pairs: Vec<(u32, u32)> = Vec::with_capacity(total);
    // Point names of one chunk, back to back, and where each ends.
    let mut names: Vec<u8> = Vec::with_capacity(CHUNK * 32);
    let mut ends: Vec<(usize, u32)> = Vec::with_capacity(CHUNK);
    let mut words = vec![[0u32; 4]; CHUNK];
    let mut buf = Vec::with_capacity(64);
    let mut flush = |names: &mut Vec<u8>, ends: &mut Vec<(usize, u32)>, pairs: &mut Vec<(u32, u32)>| {
        let mut start = 0;
        let keys: Vec<&[u8]> = ends
            .iter()
            .map(|&(end, _)| {
                let k = &names[start..end];
                start = end;
                k
            })
            .collect();
        md5_words_batch(&keys, &mut words[..keys.len()]);
        for (w, &(_, owner)) in words.iter().zip(ends.iter()) {
            pairs.extend(w[..per_digest].iter().map(|&p| (p, owner)));
        }
        names.clear();
        ends.clear();
    };
    for ((id, node), &d) in nodes.iter().zip(counts) {
        for k in 0..d {
            variant.point_name(&mut buf, node.name(), k);
            names.extend_from_slice(&buf);
            ends.push((names.len(), id.as_u32()));
            if ends.len() == CHUNK {
                flush(&mut names, &mut ends, &mut pairs);
            }
        }
    }
    flush(&mut names, &mut ends, &mut pairs);
    pairs
}

impl Ketama {
    fn new(nodes: NodeSet, variant: KetamaVariant) -> Result<Ketama> {
        if variant == KetamaVariant::UhashringMd5 {
            let wide = ketama_variants::uhashring_md5_circle(&nodes)?;
            return Ok(Ketama::from_wide(nodes, wide));
        }
        if let Some(pairs) = ketama_variants::unweighted_oaat_points(variant, &nodes) {
            return Ok(Ketama::from_pairs(nodes, variant, pairs));
        }
        let n = nodes.len();
        let total = nodes.total_weight();
        let per_digest = variant.points_per_digest();
        let mut counts = Vec::with_capacity(n);
        let mut total_points = 0u64;
        for (_, node) in nodes.iter() {
            let d = variant.digests(node.weight(), total, n);
            total_points = total_points.saturating_add(d.saturating_mul(per_digest as u64));
            if total_points > MAX_POINTS {
                return Err(Error::TooManyPoints { points: total_points, max: MAX_POINTS });
            }
            counts.push(d);
        }
        let pairs = points_of(&nodes, &counts, variant, total_points as usize);
        if pairs.is_empty() {
            // Only reachable when weights overflow the variant's f32 arithmetic (w > 3.4e38).
            return Err(Error::InvalidParameter {
                name: "weights",
                reason: format!("no node gets a {} point: weights must fit in f32 for this variant", variant.name()),
            });
        }
        Ok(Ketama::from_pairs(nodes, variant, pairs))
    }

    /// The continuum over `(point, owner)` pairs. Equal points: the node with the smaller name
    /// first (see the module docs).
    fn from_pairs(nodes: NodeSet, variant: KetamaVariant, mut pairs: Vec<(u32, u32)>) -> Ketama {
        let n = nodes.len();
        let by_name = nodes.ids_by_name();
        let mut rank = vec![0u32; n];
        for (r, &id) in by_name.iter().enumerate() {
            rank[id as usize] = r as u32;
        }
        pairs.sort_unstable_by_key(|&(p, owner)| (p, rank[owner as usize]));
        let (points, owners) = pairs.into_iter().unzip();
        let key_hasher = KeyHasher::Md5;
        Ketama { nodes, variant, key_hasher, circle: Circle::new(points, owners), by_name, wide: None }
    }

    /// The [`KetamaVariant::UhashringMd5`] continuum over the 128-bit circle `wide`.
    fn from_wide(nodes: NodeSet, wide: Circle<u128>) -> Ketama {
        let top = wide.points().iter().map(|&p| (p >> 96) as u32).collect();
        let circle = Circle::new(top, wide.owners().to_vec());
        let (by_name, variant, key_hasher) = (nodes.ids_by_name(), KetamaVariant::UhashringMd5, KeyHasher::Md5);
        Ketama { nodes, variant, key_hasher, circle, by_name, wide: Some(Box::new(wide)) }
    }

    /// The 128-bit points of [`KetamaVariant::UhashringMd5`] (owners: [`Ketama::owners`]);
    /// `None` for the 32-bit variants.
    pub fn points128(&self) -> Option<&[u128]> {
        self.wide.as_deref().map(Circle::points)
    }

    /// The index of the point owning `key`.
    #[inline]
    fn key_index(&self, key: &[u8]) -> usize {
        match &self.wide {
            Some(wide) => ketama_variants::uhashring_md5_index(wide, key),
            None => self.point_index(self.variant_key_hash(key)),
        }
    }

    /// The same continuum with key hash `key_hasher` (checked by the builder).
    fn with_key_hasher(mut self, key_hasher: KeyHasher) -> Result<Ketama> {
        self.key_hasher = key_hasher;
        Ok(self)
    }

    /// The key hasher: [`KeyHasher::Md5`] except for [`KetamaVariant::Twemproxy`] with
    /// `fnv1a-32` and [`KetamaVariant::LibmemcachedOaat`] ([`KeyHasher::Oaat`]).
    pub fn key_hasher(&self) -> KeyHasher {
        self.key_hasher
    }

    /// The 32-bit hash this continuum looks `key` up with: [`Ketama::key_hash`] for the MD5
    /// variants, the variant's own hash otherwise (twemproxy's empty key is 0).
    #[inline]
    pub fn variant_key_hash(&self, key: &[u8]) -> u32 {
        ketama_variants::key_hash(self.variant, self.key_hasher, key)
    }

    /// The key hash of the MD5 variants: the first 4 bytes of `MD5(key)`, little-endian (the
    /// twemproxy and one-at-a-time variants may hash otherwise: [`Ketama::variant_key_hash`]).
    #[inline]
    pub fn key_hash(key: &[u8]) -> u32 {
        md5_words(key)[0]
    }

    /// [`variant_key_hash`](Ketama::variant_key_hash) of every key of `keys` into `out`: the MD5
    /// variants through the multi-lane MD5 (`words` is its scratch), the others key by key.
    fn key_hashes(&self, keys: &[&[u8]], words: &mut [[u32; 4]], out: &mut [u32]) {
        if self.key_hasher != KeyHasher::Md5 {
            for (h, k) in out.iter_mut().zip(keys) {
                *h = self.variant_key_hash(k);
            }
            return;
        }
        md5_words_batch(keys, words);
        let twemproxy = self.variant == KetamaVariant::Twemproxy;
        for ((h, w), k) in out.iter_mut().zip(words.iter()).zip(keys) {
            // twemproxy hashes the empty key to 0 (see `ketama_variants::key_hash`).
            *h = if twemproxy && k.is_empty() { 0 } else { w[0] };
        }
    }

    /// Index of the point that owns hash `h`, with the variant's comparison, wrapping to 0.
    #[inline]
    pub fn point_index(&self, h: u32) -> usize {
        if self.variant.strictly_greater() {
            self.circle.successor_after(h)
        } else {
            self.circle.successor(h)
        }
    }

    #[inline]
    fn route_key(&self, key: &[u8]) -> NodeId {
        self.circle.owner(self.key_index(key))
    }

    /// The points as an "at or after" point set (widened to `u64`). With "strictly greater"
    /// lookup, hash `h` is owned by the first point `p > h`, i.e. the first `p - 1 >= h`: every
    /// point shifts down by one, and points at 0 (owning only through the wrap) move to the top
    /// as `u32::MAX`.
    fn at_or_after(&self) -> (Vec<u64>, Vec<u32>) {
        let (points, owners) = (self.points(), self.owners());
        if !self.variant.strictly_greater() {
            return (points.iter().map(|&p| u64::from(p)).collect(), owners.to_vec());
        }
        let zeros = points.partition_point(|&p| p == 0);
        let shifted = points[zeros..]
            .iter()
            .map(|&p| u64::from(p - 1))
            .chain(points[..zeros].iter().map(|_| u64::from(u32::MAX)))
            .collect();
        let rotated = owners[zeros..].iter().chain(&owners[..zeros]).copied().collect();
        (shifted, rotated)
    }

    fn heap_bytes(&self) -> usize {
        self.circle.heap_bytes() + self.by_name.capacity() * 4 + self.wide.as_ref().map_or(0, |w| w.heap_bytes())
    }

    /// The node owning a pre-computed 32-bit key hash ([`Ketama::key_hash`]).
    #[inline]
    pub fn route_hash32(&self, h: u32) -> NodeId {
        self.circle.owner(self.point_index(h))
    }

    /// The continuum's points, ascending (equal points ordered by owner name).
    pub fn points(&self) -> &[u32] {
        self.circle.points()
    }

    /// The owner (node index) of each point, parallel to [`Ketama::points`].
    pub fn owners(&self) -> &[u32] {
        self.circle.owners()
    }

    /// The variant this continuum reproduces.
    pub fn variant(&self) -> KetamaVariant {
        self.variant
    }

    /// A new continuum with `node` added (same variant). Every node's digest count depends on
    /// N and Σw, so with weights (or at N changes) points of other nodes may appear or vanish,
    /// exactly as in the real clients.
    ///
    /// # Errors
    /// As [`NodeSet::with_node`] and [`Builder::<Ketama>::build`].
    pub fn with_node(&self, node: Node) -> Result<Ketama> {
        Ketama::new(self.nodes.with_node(node)?, self.variant)?.with_key_hasher(self.key_hasher)
    }

    /// A new continuum without the node named `name`.
    ///
    /// # Errors
    /// [`Error::UnknownNode`], [`Error::NoNodes`] for the last node.
    pub fn without_node(&self, name: &str) -> Result<Ketama> {
        Ketama::new(self.nodes.without_node(name)?, self.variant)?.with_key_hasher(self.key_hasher)
    }

    /// A new continuum with node `name`'s weight changed.
    ///
    /// # Errors
    /// [`Error::UnknownNode`], [`Error::InvalidWeight`].
    pub fn with_weight(&self, name: &str, weight: f64) -> Result<Ketama> {
        Ketama::new(self.nodes.with_weight(name, weight)?, self.variant)?.with_key_hasher(self.key_hasher)
    }
}

impl Router for Ketama {
    fn algorithm(&self) -> Algorithm {
        Algorithm::Ketama
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
    /// MD5s a chunk of keys at once with the multi-lane kernel, then searches the continuum for
    /// all of them in lockstep (their cache misses overlap).
    fn route_batch(&self, keys: &[&[u8]], out: &mut [NodeId]) {
        const CHUNK: usize = 64;
        if let Some(wide) = &self.wide {
            return ketama_variants::uhashring_md5_route_batch(wide, keys, out);
        }
        let mut words = [[0u32; 4]; CHUNK];
        let mut idx = [0usize; CHUNK];
        let strict = self.variant.strictly_greater();
        crate::algo::route_chunks::<u32, CHUNK>(
            keys,
            out,
            |ks, hs| self.key_hashes(ks, &mut words[..ks.len()], hs),
            |hs, os| {
                let idx = &mut idx[..hs.len()];
                self.circle.successor_batch_lockstep(hs, strict, idx);
                for (o, &i) in os.iter_mut().zip(idx.iter()) {
                    *o = self.circle.owner(i);
                }
            },
        );
    }

    /// Walks the continuum clockwise from the key's point, skipping nodes already produced;
    /// nodes that own no point (weight rounded to 0 digests) follow in name order.
    fn preference(&self, key: &[u8], visit: &mut dyn FnMut(NodeId) -> ControlFlow<()>) -> Result<()> {
        let start = self.key_index(key);
        self.circle.walk_clockwise_then(start, self.nodes.len(), self.by_name.iter().copied(), visit);
        Ok(())
    }
    /// The continuum over the 32-bit hash circle, "strictly greater" variants converted to
    /// the equivalent "at or after" points. O(points).
    fn arcs(&self) -> Option<Arcs<'_>> {
        if self.wide.is_some() {
            return None;
        }
        let (points, owners) = self.at_or_after();
        let placement = if self.variant == KetamaVariant::Twemproxy {
            Placement::empty_key_at_zero(self.key_hasher)
        } else {
            Placement::hashed(self.key_hasher)
        };
        Some(Arcs::trusted(KeySpace::Hash32, points, owners, placement))
    }
    fn canonical_bytes(&self) -> Vec<u8> {
        crate::fingerprint::ketama_encoding(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Router;
    use proptest::prelude::*;

    fn eq3(variant: KetamaVariant) -> Ketama {
        let nodes = NodeSet::from_names(["127.0.0.1:11211", "127.0.0.1:11212", "127.0.0.1:11213"]).unwrap();
        Ketama::new(nodes, variant).unwrap()
    }

    #[test]
    fn names_round_trip() {
        for v in KetamaVariant::ALL {
            assert_eq!(KetamaVariant::from_name(v.name()).unwrap(), v);
        }
        let err = KetamaVariant::from_name("ketama2").unwrap_err();
        assert!(err.to_string().contains("twemproxy, libmemcached-oaat or uhashring-md5"), "{err}");
        assert_eq!(KetamaVariant::default(), KetamaVariant::Libketama);
    }

    #[test]
    fn libketama_reference_points() {
        // First digest of 127.0.0.1:11211 (ketama_points.csv, k = 0).
        let k = eq3(KetamaVariant::Libketama);
        assert_eq!(k.points().len(), 480);
        for p in [2589391586u32, 1482608462, 2562656683, 1506298073] {
            let i = k.points().binary_search(&p).unwrap();
            assert_eq!(k.owners()[i], 0);
        }
        // `>=` lookup: a hash exactly on a point belongs to that point's node.
        assert_eq!(k.route_hash32(2589391586), NodeId::from_index(0));
        assert_eq!(Ketama::key_hash(b"0"), 2216742351);
    }

    #[test]
    fn digest_counts() {
        let v = KetamaVariant::Libketama;
        assert_eq!(v.digests(1.0, 3.0, 3), 40);
        assert_eq!(v.digests(4.0, 10.0, 4), 64);
        assert_eq!(KetamaVariant::Uhashring.digests(1.0, 10.0, 4), 16);
        assert_eq!(KetamaVariant::Libmemcached.digests(1.0, 3.0, 3), 40);
        assert_eq!(KetamaVariant::PythonHashRing.digests(3.0, 10.0, 4), 48);
        assert_eq!(eq3(KetamaVariant::PythonHashRing).points().len(), 360);
        // The float32 arithmetic is reproduced, quirks included: 61 equal libketama servers get
        // 39 digests each (pct * 40.0 * 61 rounds to 39.99999), libmemcached already at 25.
        assert_eq!(v.digests(1.0, 61.0, 61), 39);
        assert_eq!(v.digests(1.0, 60.0, 60), 40);
        assert_eq!(KetamaVariant::Libmemcached.digests(1.0, 25.0, 25), 39);
        assert_eq!(KetamaVariant::Libmemcached.digests(1.0, 24.0, 24), 40);
        assert_eq!(KetamaVariant::Uhashring.digests(1.0, 61.0, 61), 40);
    }

    #[test]
    fn point_names() {
        let mut buf = Vec::new();
        KetamaVariant::Libmemcached.point_name(&mut buf, "10.0.0.1:11211", 3);
        assert_eq!(buf, b"10.0.0.1-3");
        KetamaVariant::Libmemcached.point_name(&mut buf, "10.0.0.1:11212", 3);
        assert_eq!(buf, b"10.0.0.1:11212-3");
        KetamaVariant::Libmemcached.point_name(&mut buf, "cache-a", 0);
        assert_eq!(buf, b"cache-a-0");
        KetamaVariant::Spymemcached.point_name(&mut buf, "10.0.0.1:11211", 0);
        assert_eq!(buf, b"/10.0.0.1:11211-0");
        KetamaVariant::Spymemcached.point_name(&mut buf, "cache-a", 1);
        assert_eq!(buf, b"/cache-a:11211-1");
        KetamaVariant::Libketama.point_name(&mut buf, "a:1", 7);
        assert_eq!(buf, b"a:1-7");
    }

    #[test]
    fn tiny_weight_node_still_in_preference() {
        let nodes = NodeSet::new([Node::new("a").with_weight(1000.0), Node::new("b").with_weight(1.0)]).unwrap();
        let k = Ketama::new(nodes, KetamaVariant::Libketama).unwrap();
        assert!(k.owners().iter().all(|&o| o == 0), "b rounds to 0 digests");
        assert_eq!(k.replicas(b"x", 2).unwrap(), vec![NodeId::from_index(0), NodeId::from_index(1)]);
    }

    #[test]
    fn huge_weights_are_an_error_not_a_panic() {
        let nodes = NodeSet::new([Node::new("a").with_weight(1e300), Node::new("b").with_weight(1e300)]).unwrap();
        for v in [KetamaVariant::Libketama, KetamaVariant::Libmemcached] {
            assert!(matches!(Ketama::new(nodes.clone(), v), Err(Error::InvalidParameter { name: "weights", .. })));
        }
        // The Python variants compute in f64 and cope.
        assert_eq!(Ketama::new(nodes, KetamaVariant::Uhashring).unwrap().points().len(), 320);
    }

    #[test]
    fn membership_changes() {
        let k = eq3(KetamaVariant::Libketama);
        assert!(matches!(k.without_node("nope"), Err(Error::UnknownNode { .. })));
        assert!(matches!(k.with_weight("127.0.0.1:11211", 0.0), Err(Error::InvalidWeight { .. })));
        assert!(matches!(k.with_node(Node::new("127.0.0.1:11211")), Err(Error::DuplicateNode { .. })));
        let one = k.without_node("127.0.0.1:11211").unwrap().without_node("127.0.0.1:11212").unwrap();
        assert!(matches!(one.without_node("127.0.0.1:11213"), Err(Error::NoNodes)));
        assert_eq!(
            k.route_hash(1),
            Err(Error::Unsupported { algorithm: "ketama", operation: "routing a 64-bit hash" })
        );
    }

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("10.0.0.{i}:11211")).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        #[test]
        fn batch_equals_route(keys in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..24), 0..40),
                              v in 0usize..7) {
            let k = Ketama::new(NodeSet::from_names(names(5)).unwrap(), KetamaVariant::ALL[v]).unwrap();
            let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
            let mut out = vec![NodeId::default(); refs.len()];
            k.route_batch(&refs, &mut out);
            for (key, id) in refs.iter().zip(&out) {
                prop_assert_eq!(*id, k.route(key));
            }
        }

        #[test]
        fn batch_equals_route_with_every_key_hasher(
            keys in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..24), 0..40),
            which in 0usize..3,
        ) {
            let (variant, hasher) = [
                (KetamaVariant::Twemproxy, KeyHasher::Md5),
                (KetamaVariant::Twemproxy, KeyHasher::Fnv1a32),
                (KetamaVariant::LibmemcachedOaat, KeyHasher::Oaat),
            ][which];
            let k = Ketama::builder().variant(variant).key_hasher(hasher).nodes(names(5)).build().unwrap();
            // The empty key (twemproxy hashes it to 0) in every batch.
            let mut refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
            refs.push(b"");
            let mut out = vec![NodeId::default(); refs.len()];
            k.route_batch(&refs, &mut out);
            for (key, id) in refs.iter().zip(&out) {
                prop_assert_eq!(*id, k.route(key));
            }
        }

        #[test]
        fn order_independent(seed in any::<u64>(), v in 0usize..7) {
            use rand::seq::SliceRandom;
            use rand::SeedableRng;
            let a = names(6);
            let mut b = a.clone();
            b.shuffle(&mut rand_pcg::Pcg64::seed_from_u64(seed));
            let ka = Ketama::new(NodeSet::from_names(&a).unwrap(), KetamaVariant::ALL[v]).unwrap();
            let kb = Ketama::new(NodeSet::from_names(&b).unwrap(), KetamaVariant::ALL[v]).unwrap();
            for i in 0..300u32 {
                let key = i.to_le_bytes();
                prop_assert_eq!(ka.node_name(ka.route(&key)), kb.node_name(kb.route(&key)));
                prop_assert_eq!(
                    ka.replicas(&key, 6).unwrap().iter().map(|&id| ka.node_name(id)).collect::<Vec<_>>(),
                    kb.replicas(&key, 6).unwrap().iter().map(|&id| kb.node_name(id)).collect::<Vec<_>>()
                );
            }
        }

        #[test]
        fn minimal_movement(n in 2usize..8, keys in proptest::collection::vec(any::<u64>(), 50)) {
            // Equal weights: adding node n moves keys only to it; removing it moves back only its keys.
            let small = Ketama::new(NodeSet::from_names(names(n)).unwrap(), KetamaVariant::Libketama).unwrap();
            let added = format!("10.0.0.{n}:11211");
            let big = small.with_node(Node::new(added.clone())).unwrap();
            for key in keys {
                let key = key.to_le_bytes();
                let before = small.node_name(small.route(&key));
                let after = big.node_name(big.route(&key));
                prop_assert!(before == after || after == added, "{} -> {}", before, after);
                // Removing it again restores every route.
                let back = big.without_node(&added).unwrap();
                prop_assert_eq!(back.node_name(back.route(&key)), before);
            }
        }

        #[test]
        fn preference_distinct(key in any::<u64>(), v in 0usize..7) {
            let k = Ketama::new(NodeSet::from_names(names(7)).unwrap(), KetamaVariant::ALL[v]).unwrap();
            let key = key.to_le_bytes();
            let mut reps = k.replicas(&key, 7).unwrap();
            prop_assert_eq!(reps[0], k.route(&key));
            reps.sort();
            reps.dedup();
            prop_assert_eq!(reps.len(), 7);
        }
    }
}

//! What the proxy-compatible Ketama variants add to [`Ketama`](crate::Ketama): twemproxy's key
//! hashes and empty-key rule, and libmemcached's one-at-a-time continuum (pylibmc's
//! `behaviors={"ketama": True}`).
//!
//! Measured on the real programs (`../shared/vectors/`): twemproxy 0.5.0 (Debian `nutcracker`
//! 0.5.0+dfsg-2) and libmemcached 1.1.4 under pylibmc 1.6.3. Not modelled: twemproxy's
//! `auto_eject_hosts` (a server ejected after failures leaves the continuum until it returns)
//! and libmemcached's `remove_failed_servers`; routes here are those of a healthy pool.
//!
//! Also here: uhashring's default ring ([`KetamaVariant::UhashringMd5`]), whose points are whole
//! 128-bit MD5 digests rather than four 32-bit words of one, checked against uhashring 2.5
//! (`scripts/uhashring_golden.py`, `tests/golden/uhashring-md5.csv`).

use crate::circle::Circle;
use crate::error::{Error, Result};
use crate::hash::{md5_words, md5_words_batch, KeyHasher};
use crate::node::{NodeId, NodeSet};
use crate::KetamaVariant;

impl crate::Builder<crate::Ketama> {
    /// The key hash, for the variants that let a proxy choose it: [`KetamaVariant::Twemproxy`]
    /// takes [`KeyHasher::Md5`] (default) or [`KeyHasher::Fnv1a32`] (twemproxy's `fnv1a_64`);
    /// [`KetamaVariant::LibmemcachedOaat`] only [`KeyHasher::Oaat`]; the others only MD5.
    /// Checked by `build`.
    pub fn key_hasher(mut self, hasher: KeyHasher) -> crate::Builder<crate::Ketama> {
        self.options.key_hasher = Some(hasher);
        self
    }
}

/// Points per server of libmemcached's unweighted one-at-a-time continuum
/// (`MEMCACHED_POINTS_PER_SERVER`).
const OAAT_POINTS_PER_SERVER: u64 = 100;

/// The key hasher a variant uses, from the one the builder was given (if any).
///
/// # Errors
/// [`Error::InvalidParameter`] (`hash`) when the variant does not hash keys that way.
pub(crate) fn key_hasher(variant: KetamaVariant, given: Option<KeyHasher>) -> Result<KeyHasher> {
    let accepted: &[KeyHasher] = match variant {
        KetamaVariant::Twemproxy => &[KeyHasher::Md5, KeyHasher::Fnv1a32],
        KetamaVariant::LibmemcachedOaat => &[KeyHasher::Oaat],
        _ => &[KeyHasher::Md5],
    };
    match given {
        None => Ok(accepted[0]),
        Some(h) if accepted.contains(&h) => Ok(h),
        Some(h) => Err(Error::InvalidParameter {
            name: "hash",
            reason: format!(
                "ketama variant {} hashes keys with {} only (got {})",
                variant.name(),
                accepted.iter().map(KeyHasher::name).collect::<Vec<_>>().join(" or "),
                h.name()
            ),
        }),
    }
}

/// The 32-bit key hash of `variant` with `hasher` (already checked by [`key_hasher`]).
/// twemproxy hashes the empty key to 0 without calling the hash function
/// (`server_pool_hash`: `if (keylen == 0) return 0`).
#[inline]
pub(crate) fn key_hash(variant: KetamaVariant, hasher: KeyHasher, key: &[u8]) -> u32 {
    match hasher {
        KeyHasher::Md5 if variant != KetamaVariant::Twemproxy || !key.is_empty() => crate::Ketama::key_hash(key),
        _ if variant == KetamaVariant::Twemproxy && key.is_empty() => 0,
        // The 32-bit hashers are zero-extended: the low 32 bits are the whole hash.
        other => other.hash(key) as u32,
    }
}

/// libmemcached's unweighted `MEMCACHED_BEHAVIOR_KETAMA` continuum, when `variant` is
/// [`KetamaVariant::LibmemcachedOaat`] and no weight is above 1 (a weight above 1 switches
/// libmemcached to the weighted MD5 continuum: `None`, the caller builds that one).
///
/// 100 points per server, point `k` = one-at-a-time of libmemcached's point name (`host-k` on
/// port 11211, else `host:port-k`), as `(point, owner)` pairs. O(100 N).
pub(crate) fn unweighted_oaat_points(variant: KetamaVariant, nodes: &NodeSet) -> Option<Vec<(u32, u32)>> {
    if variant != KetamaVariant::LibmemcachedOaat || nodes.iter().any(|(_, n)| n.weight() > 1.0) {
        return None;
    }
    let mut pairs = Vec::with_capacity(nodes.len() * OAAT_POINTS_PER_SERVER as usize);
    let mut buf = Vec::with_capacity(64);
    for (id, node) in nodes.iter() {
        for k in 0..OAAT_POINTS_PER_SERVER {
            KetamaVariant::Libmemcached.write_point_name(&mut buf, node.name(), k);
            pairs.push((KeyHasher::Oaat.hash(&buf) as u32, id.as_u32()));
        }
    }
    Some(pairs)
}

/// Points per unit of weight of uhashring's default ring (its `vnodes` default).
pub(crate) const UHASHRING_VNODES: f64 = 160.0;

/// The most points a [`KetamaVariant::UhashringMd5`] continuum takes: 2^22 (26,214 units of
/// weight in all, ~85 MB of points and owners, about a second to build). The point count grows
/// with the weights themselves, not their shares, so this cap is lower than the 32-bit
/// continuum's: a build stays bounded in time and memory whatever weights it is given.
pub(crate) const UHASHRING_MD5_MAX_POINTS: u64 = 1 << 22;

/// The MD5 digest whose state words are `w`, read as a big-endian 128-bit integer (Python's
/// `int(md5(x).hexdigest(), 16)`).
#[inline]
fn md5_be(w: [u32; 4]) -> u128 {
    let mut b = [0u8; 16];
    for (chunk, word) in b.chunks_exact_mut(4).zip(w) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    u128::from_be_bytes(b)
}

/// The 128-bit key point of [`KetamaVariant::UhashringMd5`]: MD5 of the key, big-endian.
#[inline]
pub(crate) fn uhashring_md5_key(key: &[u8]) -> u128 {
    md5_be(md5_words(key))
}

/// Points per node of [`KetamaVariant::UhashringMd5`]: `160 × weight` (uhashring's
/// `range(vnodes * weight)`), which must be a whole number.
///
/// # Errors
/// [`Error::InvalidParameter`] (`weights`) for a weight that is not a multiple of 1/160;
/// [`Error::TooManyPoints`] past [`UHASHRING_MD5_MAX_POINTS`].
fn uhashring_md5_counts(nodes: &NodeSet) -> Result<Vec<u64>> {
    let mut counts = Vec::with_capacity(nodes.len());
    let mut total = 0u64;
    for (_, node) in nodes.iter() {
        let x = UHASHRING_VNODES * node.weight();
        if x.fract() != 0.0 {
            return Err(Error::InvalidParameter {
                name: "weights",
                reason: format!(
                    "uhashring-md5 gives a node 160 x weight points: weight {} of {} is not a multiple of 1/160",
                    node.weight(),
                    node.name()
                ),
            });
        }
        // Saturating: a weight past u64 is past the cap as well.
        total = total.saturating_add(x as u64);
        if total > UHASHRING_MD5_MAX_POINTS {
            return Err(Error::TooManyPoints { points: total, max: UHASHRING_MD5_MAX_POINTS });
        }
        counts.push(x as u64);
    }
    Ok(counts)
}

/// uhashring's default continuum: node `name` of weight `w` gets the points
/// `MD5("name-i")` (big-endian 128-bit) for `i` in `0..160·w`. Equal points (never seen at
/// 128 bits) are ordered by owner name, as the 32-bit variants are. O(P log P) for P points,
/// the digests in batches through the multi-lane MD5.
///
/// # Errors
/// As [`uhashring_md5_counts`]; [`Error::InvalidParameter`] when no node gets a point.
pub(crate) fn uhashring_md5_circle(nodes: &NodeSet) -> Result<Circle<u128>> {
    const CHUNK: usize = 64;
    let counts = uhashring_md5_counts(nodes)?;
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return Err(Error::InvalidParameter { name: "weights", reason: "no node gets a uhashring-md5 point".into() });
    }
    let mut pairs: Vec<(u128, u32)> = Vec::with_capacity(total as usize);
    let mut names: Vec<Vec<u8>> = Vec::with_capacity(CHUNK);
    let mut owners: Vec<u32> = Vec::with_capacity(CHUNK);
    let mut words = [[0u32; 4]; CHUNK];
    let mut flush = |names: &mut Vec<Vec<u8>>, owners: &mut Vec<u32>, pairs: &mut Vec<(u128, u32)>| {
        let keys: Vec<&[u8]> = names.iter().map(Vec::as_slice).collect();
        md5_words_batch(&keys, &mut words[..keys.len()]);
        pairs.extend(words.iter().zip(owners.iter()).map(|(&w, &o)| (md5_be(w), o)));
        names.clear();
        owners.clear();
    };
    for ((id, node), &count) in nodes.iter().zip(&counts) {
        for i in 0..count {
            names.push(format!("{}-{i}", node.name()).into_bytes());
            owners.push(id.as_u32());
            if names.len() == CHUNK {
                flush(&mut names, &mut owners, &mut pairs);
            }
        }
    }
    flush(&mut names, &mut owners, &mut pairs);
    let mut rank = vec![0u32; nodes.len()];
    for (r, &id) in nodes.ids_by_name().iter().enumerate() {
        rank[id as usize] = r as u32;
    }
    pairs.sort_unstable_by_key(|&(p, owner)| (p, rank[owner as usize]));
    let (points, owners) = pairs.into_iter().unzip();
    Ok(Circle::new(points, owners))
}

/// The index of the point owning `key` on a [`uhashring_md5_circle`]: the first point strictly
/// greater than the key's, wrapping to the first.
#[inline]
pub(crate) fn uhashring_md5_index(circle: &Circle<u128>, key: &[u8]) -> usize {
    circle.successor_after(uhashring_md5_key(key))
}

/// [`uhashring_md5_index`]'s owner for every key of `keys`: the digests through the multi-lane
/// MD5, the searches in lockstep.
pub(crate) fn uhashring_md5_route_batch(circle: &Circle<u128>, keys: &[&[u8]], out: &mut [NodeId]) {
    const CHUNK: usize = 64;
    let mut words = [[0u32; 4]; CHUNK];
    let mut idx = [0usize; CHUNK];
    crate::algo::route_chunks::<u128, CHUNK>(
        keys,
        out,
        |ks, hs| {
            md5_words_batch(ks, &mut words[..ks.len()]);
            for (h, &w) in hs.iter_mut().zip(words.iter()) {
                *h = md5_be(w);
            }
        },
        |hs, os| {
            let idx = &mut idx[..hs.len()];
            circle.successor_batch_lockstep(hs, true, idx);
            for (o, &i) in os.iter_mut().zip(idx.iter()) {
                *o = circle.owner(i);
            }
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Ketama, Router};

    #[test]
    fn key_hashers_per_variant() {
        assert_eq!(key_hasher(KetamaVariant::Twemproxy, None).unwrap(), KeyHasher::Md5);
        assert_eq!(key_hasher(KetamaVariant::Twemproxy, Some(KeyHasher::Fnv1a32)).unwrap(), KeyHasher::Fnv1a32);
        assert_eq!(key_hasher(KetamaVariant::LibmemcachedOaat, None).unwrap(), KeyHasher::Oaat);
        let err = key_hasher(KetamaVariant::Libketama, Some(KeyHasher::Oaat)).unwrap_err().to_string();
        assert!(err.contains("libketama hashes keys with md5 only (got oaat)"), "{err}");
        let err = key_hasher(KetamaVariant::Twemproxy, Some(KeyHasher::Crc32)).unwrap_err().to_string();
        assert!(err.contains("md5 or fnv1a-32"), "{err}");
    }

    #[test]
    fn twemproxy_empty_key_is_hash_zero() {
        assert_eq!(key_hash(KetamaVariant::Twemproxy, KeyHasher::Md5, b""), 0);
        assert_eq!(key_hash(KetamaVariant::Twemproxy, KeyHasher::Fnv1a32, b""), 0);
        assert_ne!(key_hash(KetamaVariant::Libmemcached, KeyHasher::Md5, b""), 0);
        assert_eq!(key_hash(KetamaVariant::Twemproxy, KeyHasher::Md5, b"0"), Ketama::key_hash(b"0"));
    }

    #[test]
    fn oaat_continuum_sizes() {
        let eq = NodeSet::from_names(["a:11211", "b:11212"]).unwrap();
        let k = Ketama::builder().variant(KetamaVariant::LibmemcachedOaat).node_set(eq).build().unwrap();
        assert_eq!(k.points().len(), 200);
        assert_eq!(k.key_hasher(), KeyHasher::Oaat);
        // A weight above 1 switches to the weighted MD5 continuum: libmemcached's float32 digest
        // counts, 53 and 26 digests of 4 points.
        let w = NodeSet::new([crate::Node::new("a:11211").with_weight(2.0), crate::Node::new("b:11212")]).unwrap();
        let k = Ketama::builder().variant(KetamaVariant::LibmemcachedOaat).node_set(w).build().unwrap();
        assert_eq!(k.points().len(), 4 * (53 + 26));
        assert_eq!(k.route(b"x"), k.route_hash32(KeyHasher::Oaat.hash(b"x") as u32));
    }

    #[test]
    fn uhashring_md5_points_and_counts() {
        // int(md5(b"a-0").hexdigest(), 16) and the point count 160 x weight.
        let set = NodeSet::new([crate::Node::new("a"), crate::Node::new("b").with_weight(2.0)]).unwrap();
        let c = uhashring_md5_circle(&set).unwrap();
        assert_eq!(c.points().len(), 480);
        assert_eq!(uhashring_md5_key(b"a-0"), 0xa165_efd1_96e1_7ba1_95ad_4dc5_0028_b39a);
        let i = c.points().binary_search(&uhashring_md5_key(b"a-0")).unwrap();
        assert_eq!(c.owners()[i], 0);
        // Strictly greater: a key exactly on a point belongs to the next point.
        let p = c.points()[5];
        assert_eq!(c.successor_after(p), 6);
        let half = NodeSet::new([crate::Node::new("a").with_weight(0.5)]).unwrap();
        assert_eq!(uhashring_md5_circle(&half).unwrap().points().len(), 80);
        let heavy =
            NodeSet::new([crate::Node::new("a").with_weight(20_000.0), crate::Node::new("b").with_weight(7000.0)]);
        let err = uhashring_md5_circle(&heavy.unwrap()).unwrap_err();
        assert!(matches!(err, Error::TooManyPoints { points: 4_320_000, max: 4_194_304 }), "{err}");
        let bad = NodeSet::new([crate::Node::new("a").with_weight(0.001)]).unwrap();
        let err = uhashring_md5_circle(&bad).unwrap_err().to_string();
        assert!(err.contains("weight 0.001 of a is not a multiple of 1/160"), "{err}");
    }

    #[test]
    fn uhashring_md5_batch_matches_single() {
        let set = NodeSet::from_names(["n1", "n2", "n3"]).unwrap();
        let c = uhashring_md5_circle(&set).unwrap();
        let keys: Vec<Vec<u8>> = (0..200).map(|i| format!("key-{i}").into_bytes()).collect();
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let mut out = vec![NodeId::from_index(0); refs.len()];
        uhashring_md5_route_batch(&c, &refs, &mut out);
        for (k, o) in refs.iter().zip(&out) {
            assert_eq!(*o, c.owner(uhashring_md5_index(&c, k)));
        }
    }
}

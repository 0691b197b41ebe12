//! What the proxy-compatible Ketama variants add to [`Ketama`](crate::Ketama): twemproxy's key
//! hashes and empty-key rule, and libmemcached's one-at-a-time continuum (pylibmc's
//! `behaviors={"ketama": True}`).
//!
//! Measured on the real programs (`../shared/vectors/`): twemproxy 0.5.0 (Debian `nutcracker`
//! 0.5.0+dfsg-2) and libmemcached 1.1.4 under pylibmc 1.6.3. Not modelled: twemproxy's
//! `auto_eject_hosts` (a server ejected after failures leaves the continuum until it returns)
//! and libmemcached's `remove_failed_servers`; routes here are those of a healthy pool.

use crate::error::{Error, Result};
use crate::hash::KeyHasher;
use crate::node::NodeSet;
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
}

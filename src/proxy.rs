//! `RouterSpec` glue for the proxies' own routers ([`Nginx`], [`Haproxy`], [`EnvoyRing`],
//! [`Kafka`]) and the proxy-compatible Ketama key hashers: which hasher each takes, their
//! options. Their configuration files are read by the `hashroute-cli` crate.

use crate::any::AnyRouter;
use crate::error::{Error, Result};
use crate::hash::KeyHasher;
use crate::node::NodeSet;
use crate::{Algorithm, RouterSpec};
use crate::{EnvoyRing, Haproxy, Kafka, Nginx};

/// The hashers a spec whose algorithm does not take any hasher accepts (its default first).
pub(crate) fn fixed_hashers(spec: &RouterSpec) -> &'static [KeyHasher] {
    match spec.algorithm {
        Algorithm::Ketama => spec.ketama_variant.unwrap_or_default().hashers(),
        algo => algo.fixed_hashers(),
    }
}

impl RouterSpec {
    /// Sets Envoy's ring size bounds (envoy-ring only).
    #[must_use]
    pub fn with_ring_size(mut self, min: Option<u64>, max: Option<u64>) -> RouterSpec {
        self.min_ring_size = min;
        self.max_ring_size = max;
        self
    }

    /// Sets HAProxy's `balance uri whole` (haproxy only).
    #[must_use]
    pub fn with_uri_whole(mut self, whole: bool) -> RouterSpec {
        self.uri_whole = Some(whole);
        self
    }
}

/// Builds the proxy routers of a validated spec.
pub(crate) fn build(spec: &RouterSpec, nodes: NodeSet) -> Result<AnyRouter> {
    let hasher = spec.effective_hasher();
    Ok(match spec.algorithm {
        Algorithm::Nginx => AnyRouter::from(Nginx::builder().node_set(nodes).build()?),
        Algorithm::Haproxy => AnyRouter::from(
            Haproxy::builder().node_set(nodes).hasher(hasher).uri_whole(spec.uri_whole.unwrap_or(false)).build()?,
        ),
        Algorithm::EnvoyRing => {
            let mut builder = EnvoyRing::builder().node_set(nodes).hasher(hasher);
            if let Some(min) = spec.min_ring_size {
                builder = builder.min_ring_size(min);
            }
            if let Some(max) = spec.max_ring_size {
                builder = builder.max_ring_size(max);
            }
            AnyRouter::from(builder.build()?)
        }
        Algorithm::Kafka => AnyRouter::from(Kafka::builder().node_set(nodes).build()?),
        other => return Err(Error::Unsupported { algorithm: other.name(), operation: "building as a proxy router" }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KetamaVariant;

    fn nodes() -> NodeSet {
        NodeSet::from_names(["127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"]).unwrap()
    }

    #[test]
    fn proxy_specs_validate_their_options() {
        let ok = [
            RouterSpec::new(Algorithm::Haproxy).with_hasher(KeyHasher::Sdbm).with_uri_whole(true),
            RouterSpec::new(Algorithm::Haproxy),
            RouterSpec::new(Algorithm::EnvoyRing).with_hasher(KeyHasher::Murmur64aEnvoy).with_ring_size(Some(8), None),
            RouterSpec::new(Algorithm::Nginx).with_hasher(KeyHasher::Crc32),
            RouterSpec::new(Algorithm::Kafka),
            RouterSpec::new(Algorithm::Ketama)
                .with_ketama_variant(KetamaVariant::Twemproxy)
                .with_hasher(KeyHasher::Fnv1a32),
            RouterSpec::new(Algorithm::Ketama).with_ketama_variant(KetamaVariant::LibmemcachedOaat),
        ];
        for spec in ok {
            let r = spec.build(nodes()).unwrap();
            assert_eq!(r.algorithm(), spec.algorithm);
        }
        let bad = [
            (
                RouterSpec::new(Algorithm::Haproxy).with_hasher(KeyHasher::Crc32),
                "sdbm-avalanche or sdbm only (got crc32)",
            ),
            (RouterSpec::new(Algorithm::Nginx).with_hasher(KeyHasher::Md5), "nginx hashes keys with crc32 only"),
            (
                RouterSpec::new(Algorithm::EnvoyRing).with_hasher(KeyHasher::Xxh64 { seed: 1 }),
                "xxh64 or murmur64a-envoy",
            ),
            (RouterSpec::new(Algorithm::Ring).with_ring_size(Some(8), None), "envoy-ring only, not ring"),
            (RouterSpec::new(Algorithm::Nginx).with_uri_whole(true), "haproxy only, not nginx"),
            (RouterSpec::new(Algorithm::Ketama).with_hasher(KeyHasher::Fnv1a32), "ketama hashes keys with md5 only"),
            (
                RouterSpec::new(Algorithm::Ketama)
                    .with_ketama_variant(KetamaVariant::Twemproxy)
                    .with_hasher(KeyHasher::Oaat),
                "md5 or fnv1a-32 only (got oaat)",
            ),
            (RouterSpec::new(Algorithm::Kafka).with_vnodes(3), "kafka has no virtual nodes"),
        ];
        for (spec, needle) in bad {
            let err = spec.validate().unwrap_err().to_string();
            assert!(err.contains(needle), "{spec:?}: {err}");
        }
        let weighted = NodeSet::new([crate::Node::new("a").with_weight(2.0)]).unwrap();
        assert!(RouterSpec::new(Algorithm::Kafka).build(weighted).is_err());
    }

    #[test]
    fn spec_builds_twemproxy_with_its_key_hash() {
        let spec = RouterSpec::new(Algorithm::Ketama)
            .with_ketama_variant(KetamaVariant::Twemproxy)
            .with_hasher(KeyHasher::Fnv1a32);
        let r = spec.build(nodes()).unwrap();
        let AnyRouter::Ketama(k) = &r else { panic!("a Ketama") };
        assert_eq!(k.key_hasher(), KeyHasher::Fnv1a32);
        assert_eq!(r.route(b""), k.route_hash32(0), "twemproxy's empty key is hash 0");
    }

    #[cfg(feature = "serde")]
    #[test]
    fn serde_round_trips_proxy_options() {
        let specs = [
            RouterSpec::new(Algorithm::EnvoyRing).with_ring_size(Some(12), Some(1024)),
            RouterSpec::new(Algorithm::Haproxy).with_hasher(KeyHasher::Sdbm).with_uri_whole(true),
            RouterSpec::new(Algorithm::Ketama)
                .with_ketama_variant(KetamaVariant::Twemproxy)
                .with_hasher(KeyHasher::Fnv1a32),
            RouterSpec::new(Algorithm::Kafka),
        ];
        for spec in specs {
            let json = serde_json::to_string(&spec).unwrap();
            assert_eq!(serde_json::from_str::<RouterSpec>(&json).unwrap(), spec, "{json}");
        }
        assert_eq!(serde_json::to_string(&Algorithm::EnvoyRing).unwrap(), "\"envoy-ring\"");
    }
}

//! The proxies' own placement, as [`RouterSpec`]s and from their configuration files.
//!
//! - `RouterSpec` glue for the proxy routers ([`Nginx`], [`Haproxy`], [`EnvoyRing`], [`Kafka`])
//!   and the proxy-compatible Ketama key hashers: which hasher each takes, their options.
//! - [`ProxyConfig`]: a nutcracker YAML pool, an nginx `upstream` block or an HAProxy `backend`
//!   read into the [`RouterSpec`] and [`NodeSet`] that route exactly as that proxy does, every
//!   error naming the file and line.

mod haproxy;
mod nginx;
mod reader;
mod twemproxy;

pub use reader::{ConfigKind, ProxyConfig};

use crate::config::{Algorithm, RouterSpec};
use crate::error::{Error, Result};
use crate::hash::KeyHasher;
use crate::node::NodeSet;
use crate::router::Router;
use crate::{EnvoyRing, Haproxy, Kafka, KetamaVariant, Nginx};

/// The hashers a spec whose algorithm does not take any hasher accepts (its default first).
pub(crate) fn fixed_hashers(spec: &RouterSpec) -> &'static [KeyHasher] {
    match (spec.algorithm, spec.ketama_variant) {
        (Algorithm::Ketama, Some(KetamaVariant::Twemproxy)) => &[KeyHasher::Md5, KeyHasher::Fnv1a32],
        (Algorithm::Ketama, Some(KetamaVariant::LibmemcachedOaat)) => &[KeyHasher::Oaat],
        (Algorithm::Ketama, _) => &[KeyHasher::Md5],
        (algo, _) => algo.fixed_hashers(),
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

    /// The options only the proxy routers take, checked against the algorithm.
    pub(crate) fn validate_proxy_options(&self) -> Result<()> {
        let algo = self.algorithm;
        if (self.min_ring_size.is_some() || self.max_ring_size.is_some()) && algo != Algorithm::EnvoyRing {
            return Err(Error::InvalidParameter {
                name: "ring size",
                reason: format!("a minimum or maximum ring size applies to envoy-ring only, not {algo}"),
            });
        }
        if self.uri_whole.is_some() && algo != Algorithm::Haproxy {
            return Err(Error::InvalidParameter {
                name: "uri whole",
                reason: format!("balance uri whole applies to haproxy only, not {algo}"),
            });
        }
        Ok(())
    }
}

/// Builds the proxy routers of a validated spec.
pub(crate) fn build(spec: &RouterSpec, nodes: NodeSet) -> Result<Box<dyn Router>> {
    let hasher = spec.effective_hasher();
    Ok(match spec.algorithm {
        Algorithm::Nginx => Box::new(Nginx::builder().node_set(nodes).build()?),
        Algorithm::Haproxy => Box::new(
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
            Box::new(builder.build()?)
        }
        Algorithm::Kafka => Box::new(Kafka::builder().node_set(nodes).build()?),
        other => return Err(Error::Unsupported { algorithm: other.name(), operation: "building as a proxy router" }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Ketama;

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
            assert_eq!(r.algorithm(), spec.algorithm.name());
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
        let k = (&*r as &dyn std::any::Any).downcast_ref::<Ketama>().unwrap();
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

/// The exact arc partition of the proxy rings, for uniformly distributed key hashes (feature
/// `analysis`): nginx and Envoy own the arc up to each point; HAProxy's nearest-node rule makes
/// node i own the hashes from just past the midpoint before it up to the midpoint after it,
/// `p_i + ⌊(p_{i+1} − p_i) / 2⌋` (ties to the earlier node, as the lookup breaks them).
#[cfg(feature = "analysis")]
pub(crate) fn partition_of(any: &dyn std::any::Any) -> Option<crate::analysis::partition::Partition> {
    use crate::analysis::partition::Partition;
    use crate::Router;
    if let Some(r) = any.downcast_ref::<Nginx>() {
        return Some(Partition::from_u32_points(r.nodes().clone(), r.points(), r.owners().to_vec(), false));
    }
    if let Some(r) = any.downcast_ref::<EnvoyRing>() {
        return Some(Partition::new(r.nodes().clone(), r.points().to_vec(), r.owners().to_vec()));
    }
    let r = any.downcast_ref::<Haproxy>()?;
    let (points, owners) = (r.points(), r.owners());
    let len = points.len();
    let mut pairs: Vec<(u32, u32)> = (0..len)
        .map(|i| {
            let gap = points[(i + 1) % len].wrapping_sub(points[i]);
            // A single node (gap 0 to itself) owns the whole circle.
            let gap = if len == 1 { u32::MAX } else { gap };
            (points[i].wrapping_add(gap / 2), owners[i])
        })
        .collect();
    pairs.sort_by_key(|&(b, _)| b);
    let (bounds, owners): (Vec<u32>, Vec<u32>) = pairs.into_iter().unzip();
    Some(Partition::from_u32_points(r.nodes().clone(), &bounds, owners, false))
}

#[cfg(all(test, feature = "analysis"))]
mod partition_tests {
    use super::*;

    /// Each node's exact arc load equals the share of uniformly random hashes it is routed
    /// (within sampling noise), for every proxy ring.
    #[test]
    fn partitions_agree_with_routes() {
        let nodes =
            NodeSet::new((0..7).map(|i| crate::Node::new(format!("10.0.0.{i}:80")).with_weight(f64::from(i % 3 + 1))))
                .unwrap();
        let h = Haproxy::builder().hasher(KeyHasher::Sdbm).node_set(nodes.clone()).build().unwrap();
        let n = Nginx::builder().node_set(nodes.clone()).build().unwrap();
        let e = EnvoyRing::builder().min_ring_size(64).node_set(nodes.clone()).build().unwrap();
        const SAMPLES: u32 = 400_000;
        let mut counts = [[0f64; 7]; 3];
        let mut x = 0x1234_5678u64;
        for _ in 0..SAMPLES {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            counts[0][h.route_hash32(z as u32).index()] += 1.0;
            counts[1][n.route_hash32(z as u32).index()] += 1.0;
            counts[2][e.route_hash(z).unwrap().index()] += 1.0;
        }
        let routers: [&dyn crate::Router; 3] = [&h, &n, &e];
        for (r, counts) in routers.iter().zip(&counts) {
            let loads = partition_of(*r as &dyn std::any::Any).unwrap().loads();
            let total: f64 = loads.iter().sum();
            for (i, (&load, &c)) in loads.iter().zip(counts).enumerate() {
                let sampled = c / f64::from(SAMPLES);
                assert!(
                    (load / total - sampled).abs() < 0.004,
                    "{} node {i}: exact {load} sampled {sampled}",
                    r.algorithm()
                );
            }
        }
    }
}

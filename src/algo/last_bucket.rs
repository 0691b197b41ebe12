//! The router shape shared by the memory-free "last bucket only" algorithms of the 2023–2024
//! generation (JumpBack, FlipHash, power CH, BinomialHash): node `i` is bucket `i`, routes are
//! a pure function of (key hash, node count), and only the last node can be removed. Written
//! once as a macro so the four routers cannot drift apart.

/// Defines a router `$router` named `$name` whose bucket for a hash is
/// `|$s, $h, $n| $bucket` (`$s` the router, `$h` the u64 hash, `$n` the node count >= 1) and
/// whose batch kernel is `|$bs, $keys, $bn, $out| $batch` (the default runs `$bucket` per key).
macro_rules! last_bucket_router {
    (
        $(#[$doc:meta])*
        $router:ident, $name:literal,
        fields { $($(#[$fdoc:meta])* $field:ident : $fty:ty = $fdefault:expr),* $(,)? },
        bucket |$s:ident, $h:ident, $n:ident| $bucket:expr,
        batch |$bs:ident, $keys:ident, $bn:ident, $out:ident| $batch:expr $(,)?
    ) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        pub struct $router {
            nodes: crate::NodeSet,
            hasher: crate::KeyHasher,
            $($field: $fty,)*
        }

        crate::algo::builder::hashed_router_basics!($router);

        impl crate::Builder<$router> {
            /// Builds the router (bucket `i` = node `i`).
            ///
            /// # Errors
            /// The [`NodeSet::new`](crate::NodeSet::new) errors; [`Error::Unsupported`](crate::Error::Unsupported)
            /// if any weight differs from 1 (the algorithm has no weights).
            pub fn build(mut self) -> crate::Result<$router> {
                let nodes = self.take_nodes()?;
                let r = $router { nodes, hasher: self.hasher, $($field: ($fdefault)(&self.options),)* };
                r.checked()
            }
        }

        impl $router {
            fn checked(self) -> crate::Result<$router> {
                if !self.nodes.all_unit_weight() {
                    return Err(crate::Error::Unsupported { algorithm: $name, operation: "weighted nodes" });
                }
                Ok(self)
            }

            /// The hasher in use.
            pub fn hasher(&self) -> crate::KeyHasher {
                self.hasher
            }

            /// The bucket (node index) for a pre-computed 64-bit key hash.
            #[inline]
            pub fn bucket(&self, hash: u64) -> u32 {
                let ($s, $h, $n) = (self, hash, self.nodes.len() as u32);
                $bucket
            }

            /// A new router with `node` appended as bucket N: only the keys that now land in it
            /// move (the algorithm's monotonicity).
            ///
            /// # Errors
            /// As [`NodeSet::with_node`](crate::NodeSet::with_node); [`Error::Unsupported`](crate::Error::Unsupported)
            /// for a weight other than 1.
            pub fn with_node(&self, node: crate::Node) -> crate::Result<$router> {
                $router { nodes: self.nodes.with_node(node)?, ..self.clone() }.checked()
            }

            /// A new router without the node named `name`, which must be the last one: this
            /// algorithm can only shrink at the end (use [`JumpBackAnchor`](crate::JumpBackAnchor)
            /// or [`Memento`](crate::Memento) to remove any node).
            ///
            /// # Errors
            /// [`Error::UnknownNode`](crate::Error::UnknownNode), [`Error::NoNodes`](crate::Error::NoNodes)
            /// for the only node, [`Error::Unsupported`](crate::Error::Unsupported) when `name` is
            /// not the last node.
            pub fn without_node(&self, name: &str) -> crate::Result<$router> {
                let id = self.nodes.require(name)?;
                if id.index() + 1 != self.nodes.len() {
                    return Err(crate::Error::Unsupported {
                        algorithm: $name,
                        operation: "removing a node other than the last",
                    });
                }
                $router { nodes: self.nodes.without_node(name)?, ..self.clone() }.checked()
            }

            #[inline]
            fn owner(&self, hash: u64) -> crate::NodeId {
                crate::NodeId::from_index(self.bucket(hash))
            }

            fn heap_bytes(&self) -> usize {
                0
            }

            /// Buckets for a chunk of hashes (`out.len() == keys.len()`).
            #[inline]
            fn bucket_chunk(&self, $keys: &[u64], $out: &mut [u32]) {
                let ($bs, $bn) = (self, self.nodes.len() as u32);
                $batch
            }
        }

        crate::algo::builder::router_plumbing!($router, $name, own_batch {
            /// Hashes a chunk of keys ([`KeyHasher::hash_batch`](crate::KeyHasher::hash_batch)),
            /// then runs the batch kernel over the hashes.
            fn route_batch(&self, keys: &[&[u8]], out: &mut [crate::NodeId]) {
                assert_eq!(keys.len(), out.len(), "route_batch: keys and out must have the same length");
                const CHUNK: usize = 256;
                let mut hashes = [0u64; CHUNK];
                let mut buckets = [0u32; CHUNK];
                for (ks, os) in keys.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
                    let m = ks.len();
                    self.hasher.hash_batch(ks, &mut hashes[..m]);
                    self.bucket_chunk(&hashes[..m], &mut buckets[..m]);
                    for (o, &b) in os.iter_mut().zip(&buckets[..m]) {
                        *o = crate::NodeId::from_index(b);
                    }
                }
            }
            /// Preference list: `bucket(h)`, then `bucket(mix64(h + i))` for i = 1, 2, … skipping
            /// buckets already produced; after `4 N` probes the nodes not yet produced follow in
            /// index order (the same walk as [`Jump`](crate::Jump)'s). Frozen: it decides where
            /// failover sends a down node's keys.
            fn preference(
                &self,
                key: &[u8],
                visit: &mut dyn FnMut(crate::NodeId) -> std::ops::ControlFlow<()>,
            ) -> crate::Result<()> {
                let n = self.nodes.len() as u32;
                let route = |h: u64| self.owner(h);
                crate::algo::rehash_preference(self.hasher.hash(key), n as usize, route, (0..n).map(crate::NodeId::from_index), visit);
                Ok(())
            }
        });
    };
}
pub(crate) use last_bucket_router;

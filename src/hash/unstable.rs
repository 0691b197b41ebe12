//! Hashers that are **not stable**: for speed comparisons only, never for routing.
//!
//! ahash seeds itself per process (and its output may change between crate versions), so a key
//! routed with it could land on a different node after a restart. No router in this crate
//! accepts these types: they implement [`KeyHasher`](super::KeyHasher) so benchmarks can put
//! them next to the stable hashers, and that is all.

/// ahash with a per-process random seed. **Process-local and version-unstable.**
#[derive(Clone, Debug, Default)]
pub struct AHash {
    state: ahash::RandomState,
}

impl AHash {
    /// A hasher with this process's random seed.
    pub fn new() -> AHash {
        AHash::default()
    }
}

impl super::KeyHasher for AHash {
    #[inline]
    fn hash(&self, key: &[u8]) -> u64 {
        self.state.hash_one(key)
    }
}

//! The random-eviction cache the live run is also compared with (the exact-LRU prediction
//! uses the crate's `hashroute_analysis::Lru`).
//!
//! Hand-written because it is 30 lines: a key vector plus a hash map from key to position.

use std::collections::HashMap;

/// A cache of at most `capacity` keys that evicts a uniformly random key (seeded, so runs
/// repeat): the other end of the range Redis's sampled LRU lives in.
pub(crate) struct RandomEvict {
    capacity: usize,
    index: HashMap<u32, u32>,
    keys: Vec<u32>,
    rng: rand_pcg::Pcg64,
}

impl RandomEvict {
    /// An empty cache; `capacity` 0 caches nothing.
    pub(crate) fn new(capacity: usize, seed: u64) -> RandomEvict {
        use rand::SeedableRng;
        RandomEvict { capacity, index: HashMap::new(), keys: Vec::new(), rng: rand_pcg::Pcg64::seed_from_u64(seed) }
    }

    /// A read-through access: `true` on a hit; on a miss the key is inserted, evicting a random
    /// key when full.
    pub(crate) fn access(&mut self, k: u32) -> bool {
        use rand::Rng;
        if self.index.contains_key(&k) {
            return true;
        }
        if self.capacity == 0 {
            return false;
        }
        if self.keys.len() < self.capacity {
            self.index.insert(k, self.keys.len() as u32);
            self.keys.push(k);
        } else {
            let victim = self.rng.gen_range(0..self.keys.len());
            self.index.remove(&self.keys[victim]);
            self.keys[victim] = k;
            self.index.insert(k, victim as u32);
        }
        false
    }
}

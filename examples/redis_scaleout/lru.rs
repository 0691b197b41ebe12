//! A minimal exact-LRU cache of key ranks, the in-process prediction the live run is compared
//! with.
//!
//! PENDING(sweep): `hashroute::analysis::cachesim` is not in main; this stands in. Hand-written
//! because it is 60 lines and a dependency would not model "capacity in keys" any better: an
//! index-linked list over a slab plus a hash map, O(1) per access.

use std::collections::HashMap;

const NIL: u32 = u32::MAX;

/// An LRU set of `u32` keys holding at most `capacity` of them.
pub(crate) struct Lru {
    capacity: usize,
    index: HashMap<u32, u32>,
    key: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    head: u32, // most recent
    tail: u32, // least recent
}

impl Lru {
    /// An empty cache; `capacity` 0 caches nothing.
    pub(crate) fn new(capacity: usize) -> Lru {
        Lru {
            capacity,
            index: HashMap::new(),
            key: Vec::new(),
            prev: Vec::new(),
            next: Vec::new(),
            head: NIL,
            tail: NIL,
        }
    }

    fn unlink(&mut self, i: u32) {
        let (p, n) = (self.prev[i as usize], self.next[i as usize]);
        if p == NIL {
            self.head = n
        } else {
            self.next[p as usize] = n
        }
        if n == NIL {
            self.tail = p
        } else {
            self.prev[n as usize] = p
        }
    }

    fn push_front(&mut self, i: u32) {
        self.prev[i as usize] = NIL;
        self.next[i as usize] = self.head;
        if self.head != NIL {
            self.prev[self.head as usize] = i;
        }
        self.head = i;
        if self.tail == NIL {
            self.tail = i;
        }
    }

    /// A read-through access: `true` on a hit (the key becomes most recent); on a miss the key
    /// is inserted, evicting the least recent key when full.
    pub(crate) fn access(&mut self, k: u32) -> bool {
        if let Some(&i) = self.index.get(&k) {
            self.unlink(i);
            self.push_front(i);
            return true;
        }
        if self.capacity == 0 {
            return false;
        }
        let i = if self.index.len() < self.capacity {
            self.key.push(k);
            self.prev.push(NIL);
            self.next.push(NIL);
            (self.key.len() - 1) as u32
        } else {
            let i = self.tail;
            self.unlink(i);
            self.index.remove(&self.key[i as usize]);
            self.key[i as usize] = k;
            i
        };
        self.index.insert(k, i);
        self.push_front(i);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_least_recent() {
        let mut c = Lru::new(2);
        assert!(!c.access(1));
        assert!(!c.access(2));
        assert!(c.access(1));
        assert!(!c.access(3)); // evicts 2
        assert!(c.access(1));
        assert!(!c.access(2));
        assert_eq!(c.index.len(), 2);
    }
}

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

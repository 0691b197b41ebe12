//! Cache hit rate around a resize: one LRU cache per node, Zipf-distributed requests.
//!
//! A consistent router's point is that a resize leaves most cached keys where they are. This
//! simulator replays a Zipf request stream (popular keys dominate, as in real caches) against one
//! LRU per node, switches routers mid-stream, and reports the steady hit rate before, the dip
//! right after, and how many requests it takes to recover.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::rng::SplitMix64;
use hashroute::NodeSet;
use hashroute::Router;

/// A fixed-capacity least-recently-used set of `u32` keys: O(1) `access` (hash map + intrusive
/// doubly linked list in a vector). Hand-written because the simulator needs only this one
/// operation and exact, documented eviction.
#[derive(Clone, Debug)]
pub struct Lru {
    capacity: usize,
    map: HashMap<u32, usize, BuildHasherDefault<KeyIdHasher>>,
    keys: Vec<u32>,
    prev: Vec<usize>,
    next: Vec<usize>,
    head: usize,
    tail: usize,
}

const NIL: usize = usize::MAX;

/// The LRU's map hasher: one multiply by the 64-bit golden ratio (Fibonacci hashing) for `u32`
/// key ids. Hand-written because the map is the simulator's hot path and SipHash's
/// flooding resistance buys nothing for key ids the simulator draws itself; being fixed, it
/// also keeps the map's layout the same on every run (lookups never depended on it).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct KeyIdHasher(u64);

impl Hasher for KeyIdHasher {
    #[inline]
    fn write_u32(&mut self, k: u32) {
        self.0 = (self.0 ^ u64::from(k)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u32(u32::from(b));
        }
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

impl Lru {
    /// An empty cache holding at most `capacity` keys (0 caches nothing).
    pub fn new(capacity: usize) -> Lru {
        Lru {
            capacity,
            map: HashMap::with_capacity_and_hasher(capacity, BuildHasherDefault::default()),
            keys: Vec::with_capacity(capacity),
            prev: Vec::with_capacity(capacity),
            next: Vec::with_capacity(capacity),
            head: NIL,
            tail: NIL,
        }
    }

    /// Keys currently cached.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Whether `key` is cached (does not touch recency).
    pub fn contains(&self, key: u32) -> bool {
        self.map.contains_key(&key)
    }

    fn unlink(&mut self, i: usize) {
        let (p, n) = (self.prev[i], self.next[i]);
        if p == NIL {
            self.head = n;
        } else {
            self.next[p] = n;
        }
        if n == NIL {
            self.tail = p;
        } else {
            self.prev[n] = p;
        }
    }

    fn push_front(&mut self, i: usize) {
        self.prev[i] = NIL;
        self.next[i] = self.head;
        if self.head != NIL {
            self.prev[self.head] = i;
        }
        self.head = i;
        if self.tail == NIL {
            self.tail = i;
        }
    }

    /// Requests `key`: returns `true` on a hit (and marks it most recent); on a miss inserts it,
    /// evicting the least recently used key when full.
    pub fn access(&mut self, key: u32) -> bool {
        if let Some(&i) = self.map.get(&key) {
            self.unlink(i);
            self.push_front(i);
            return true;
        }
        if self.capacity == 0 {
            return false;
        }
        let i = if self.keys.len() < self.capacity {
            self.keys.push(key);
            self.prev.push(NIL);
            self.next.push(NIL);
            self.keys.len() - 1
        } else {
            let victim = self.tail;
            self.unlink(victim);
            self.map.remove(&self.keys[victim]);
            self.keys[victim] = key;
            victim
        };
        self.map.insert(key, i);
        self.push_front(i);
        false
    }
}

/// Zipf-distributed key ids in `0..universe` with exponent `s` (P(k) ∝ 1/(k+1)^s): key 0 is
/// the most popular. Sampled by inversion over the cumulative weights, the search narrowed by a
/// guide table (Chen and Asau's cutpoints) indexed by the draw's top bits: O(universe) setup,
/// usually a handful of comparisons per draw (O(log universe) at worst), and exactly the key a
/// plain binary search over the whole table would give.
///
/// The weights use `powf`, so the table may differ in its last bits between C libraries; a
/// draw changes only if it lands within those bits of a boundary.
#[derive(Clone, Debug)]
pub(crate) struct Zipf {
    cdf: Vec<f64>,
    /// `guide[j]`: the first index whose cumulative weight exceeds `j / 2^bits`.
    guide: Vec<u32>,
    bits: u32,
}

impl Zipf {
    /// The distribution over `universe` keys (at least 1).
    pub(crate) fn new(universe: usize, s: f64) -> Zipf {
        let mut acc = 0.0;
        let mut cdf: Vec<f64> = (0..universe.max(1))
            .map(|k| {
                acc += 1.0 / ((k + 1) as f64).powf(s);
                acc
            })
            .collect();
        let total = acc;
        cdf.iter_mut().for_each(|c| *c /= total);
        // One guide entry per key or so, at most 2^20 (4 MiB).
        let bits = (usize::BITS - (cdf.len() - 1).leading_zeros()).clamp(4, 20);
        let cells = 1usize << bits;
        let mut guide = Vec::with_capacity(cells + 1);
        let mut i = 0;
        for j in 0..=cells {
            // Exact: a power-of-two denominator.
            let bound = j as f64 / cells as f64;
            while i < cdf.len() && cdf[i] <= bound {
                i += 1;
            }
            guide.push(i as u32);
        }
        Zipf { cdf, guide, bits }
    }

    /// Number of distinct keys (the tests check the table with it).
    #[cfg(test)]
    pub(crate) fn universe(&self) -> usize {
        self.cdf.len()
    }

    /// The probability of key `k` (0 outside the universe).
    #[cfg(test)]
    pub(crate) fn probability(&self, k: usize) -> f64 {
        match k {
            0 => self.cdf[0],
            k if k < self.cdf.len() => self.cdf[k] - self.cdf[k - 1],
            _ => 0.0,
        }
    }

    /// One key id. Consumes one `u64` of `rng`, as `SplitMix64::next_f64` does.
    #[inline]
    pub(crate) fn sample(&self, rng: &mut SplitMix64) -> u32 {
        // The 53 bits of `next_f64`, kept as an integer to pick the guide cell exactly.
        let x = rng.next_u64() >> 11;
        let u = x as f64 * (1.0 / (1u64 << 53) as f64);
        let j = (x >> (53 - self.bits)) as usize;
        // Every weight before `lo` is <= j / 2^bits <= u, every one from `hi` on is > u.
        let (lo, hi) = (self.guide[j] as usize, self.guide[j + 1] as usize);
        (lo + self.cdf[lo..hi].partition_point(|&c| c <= u)).min(self.cdf.len() - 1) as u32
    }
}

/// Simulator settings.
#[derive(Clone, Debug)]
pub struct CacheSim {
    /// Distinct keys.
    pub universe: usize,
    /// Zipf exponent (≈ 0.99 for web caches).
    pub zipf_s: f64,
    /// LRU capacity of each node, in keys.
    pub capacity_per_node: usize,
    /// Requests before the resize (warm-up plus steady state).
    pub before: usize,
    /// Requests after the resize.
    pub after: usize,
    /// Requests per point of the timeline.
    pub window: usize,
    /// Random seed for the request stream.
    pub seed: u64,
}

impl CacheSim {
    /// The published settings: 1 M keys, s = 0.99, each node caches 1% of the universe,
    /// 2 M requests before and 2 M after, 5 k-request windows.
    pub fn full() -> CacheSim {
        CacheSim {
            universe: 1_000_000,
            zipf_s: 0.99,
            capacity_per_node: 10_000,
            before: 2_000_000,
            after: 2_000_000,
            window: 5_000,
            seed: 0xCAC4E,
        }
    }

    /// A tenth of [`CacheSim::full`] for CI.
    pub fn quick() -> CacheSim {
        CacheSim {
            universe: 100_000,
            capacity_per_node: 1_000,
            before: 300_000,
            after: 300_000,
            window: 1_000,
            ..CacheSim::full()
        }
    }

    /// Replays the stream: routes with `before` for [`CacheSim::before`] requests, then with
    /// `after`. Nodes are matched by name, so a node present in both keeps its cache. Costs
    /// O(universe) routes per router plus O(1) per request.
    pub fn run(&self, before: &dyn Router, after: &dyn Router) -> CacheTimeline {
        // Cache per node name, across both routers.
        let mut names: Vec<String> = Vec::new();
        let mut index = HashMap::new();
        let mut node_slots = |set: &NodeSet| -> Vec<usize> {
            set.iter()
                .map(|(_, n)| {
                    *index.entry(n.name().to_string()).or_insert_with(|| {
                        names.push(n.name().to_string());
                        names.len() - 1
                    })
                })
                .collect()
        };
        let (sa, sb) = (node_slots(before.nodes()), node_slots(after.nodes()));
        let route_all = |r: &dyn Router, slots: &[usize]| -> Vec<u32> {
            (0..self.universe as u32).map(|k| slots[r.route(&key_bytes(k)).index()] as u32).collect()
        };
        let (ra, rb) = (route_all(before, &sa), route_all(after, &sb));
        let mut caches: Vec<Lru> = (0..names.len()).map(|_| Lru::new(self.capacity_per_node)).collect();
        let zipf = Zipf::new(self.universe, self.zipf_s);
        let mut rng = SplitMix64::new(self.seed);
        let mut timeline = Vec::new();
        let mut hits = 0usize;
        let total = self.before + self.after;
        for i in 0..total {
            let k = zipf.sample(&mut rng);
            let owner = if i < self.before { ra[k as usize] } else { rb[k as usize] };
            hits += usize::from(caches[owner as usize].access(k));
            if (i + 1) % self.window == 0 {
                timeline.push(hits as f64 / self.window as f64);
                hits = 0;
            }
        }
        CacheTimeline { window: self.window, resize_at: self.before / self.window, hit_rate: timeline }
    }
}

/// The simulator's key bytes for key id `k` (`key:<k>`).
pub(crate) fn key_bytes(k: u32) -> Vec<u8> {
    format!("key:{k}").into_bytes()
}

/// Hit rate per window of requests, with the window index where the resize happened.
#[derive(Clone, Debug)]
pub struct CacheTimeline {
    /// Requests per window.
    pub window: usize,
    /// Index of the first window after the resize.
    pub resize_at: usize,
    /// Hit rate of each window.
    pub hit_rate: Vec<f64>,
}

impl CacheTimeline {
    /// Mean hit rate of the last quarter of the windows before the resize (steady state).
    pub fn steady_before(&self) -> f64 {
        let q = (self.resize_at / 4).max(1);
        let w = &self.hit_rate[self.resize_at.saturating_sub(q)..self.resize_at];
        w.iter().sum::<f64>() / w.len().max(1) as f64
    }

    /// Hit rate of the first window after the resize.
    pub fn dip(&self) -> f64 {
        self.hit_rate.get(self.resize_at).copied().unwrap_or(f64::NAN)
    }

    /// Requests after the resize until a window's hit rate is back to 99% of the steady rate
    /// before it; `None` if it never recovers within the run.
    pub fn recovery_requests(&self) -> Option<usize> {
        let target = 0.99 * self.steady_before();
        self.hit_rate[self.resize_at..].iter().position(|&h| h >= target).map(|i| (i + 1) * self.window)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_on_a_tiny_trace() {
        let mut c = Lru::new(2);
        // trace: 1 2 1 3 2 1 -> miss miss hit miss(evicts 2) miss(evicts 1) miss(evicts 3)
        let got: Vec<bool> = [1, 2, 1, 3, 2, 1].iter().map(|&k| c.access(k)).collect();
        assert_eq!(got, [false, false, true, false, false, false]);
        assert_eq!(c.len(), 2);
        assert!(c.contains(2) && c.contains(1) && !c.contains(3));
        let mut zero = Lru::new(0);
        assert!(!zero.access(1) && !zero.access(1));
        assert!(zero.is_empty());
    }

    #[test]
    fn zipf_favours_small_ids() {
        let z = Zipf::new(1000, 0.99);
        let mut rng = SplitMix64::new(1);
        let draws: Vec<u32> = (0..20_000).map(|_| z.sample(&mut rng)).collect();
        let zeros = draws.iter().filter(|&&k| k == 0).count() as f64 / 20_000.0;
        // P(0) = 1 / H(1000, 0.99) ≈ 0.13.
        assert!((0.11..0.16).contains(&zeros), "{zeros}");
        assert!(draws.iter().all(|&k| k < 1000));
    }

    #[test]
    fn guided_draws_equal_the_plain_binary_search() {
        for (universe, s) in [(1, 0.99), (2, 0.0), (17, 1.5), (1000, 0.99), (70_000, 1.2)] {
            let z = Zipf::new(universe, s);
            assert_eq!(z.universe(), universe);
            let total: f64 = (0..universe).map(|k| z.probability(k)).sum();
            assert!((total - 1.0).abs() < 1e-9, "{universe} {s}: {total}");
            let (mut a, mut b) = (SplitMix64::new(9), SplitMix64::new(9));
            for _ in 0..20_000 {
                let u = b.next_f64();
                let plain = z.cdf.partition_point(|&c| c <= u).min(universe - 1) as u32;
                assert_eq!(z.sample(&mut a), plain, "{universe} {s} {u}");
            }
        }
    }

    #[test]
    fn unchanged_router_keeps_its_hit_rate_and_modulo_dips() {
        use hashroute::{Jump, Modulo};
        let sim = CacheSim {
            universe: 5_000,
            capacity_per_node: 200,
            before: 20_000,
            after: 4_000,
            window: 200,
            ..CacheSim::full()
        };
        let names = crate::sweep::cluster_names(3, 5);
        let a = Jump::from_names(&names[..4]).unwrap();
        let same = sim.run(&a, &a);
        // 200-request windows: binomial noise is about ±3 points, so allow a little.
        assert!(same.dip() >= 0.85 * same.steady_before(), "{same:?}");
        let m4 = Modulo::from_names(&names[..4]).unwrap();
        let m5 = Modulo::from_names(&names[..5]).unwrap();
        let t = sim.run(&m4, &m5);
        assert!(t.dip() < 0.75 * t.steady_before(), "modulo 4->5 moves 80% of keys: {t:?}");
        assert!(t.recovery_requests().unwrap_or(usize::MAX) > sim.window, "{t:?}");
    }
}

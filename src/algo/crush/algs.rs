//! The bucket algorithms: construction of their derived weights (as Ceph's builder makes them)
//! and the choice of one item for `(x, r)`.

use super::hash::{hash3, hash4};
use super::ln::{straw2_draw_fast, Divisor};
use super::map::{Bucket, BucketAlg};

/// A bucket of `items` with 16.16 `weights`, its derived arrays computed as `crushtool` does.
pub(crate) fn make_bucket(id: i32, type_id: i32, alg: BucketAlg, items: Vec<i32>, weights: Vec<u32>) -> Bucket {
    let weight = weights.iter().fold(0u32, |a, &w| a.wrapping_add(w));
    let mut sum_weights = Vec::new();
    let mut node_weights = Vec::new();
    match alg {
        BucketAlg::List => {
            let mut w = 0u32;
            for &x in &weights {
                w = w.wrapping_add(x);
                sum_weights.push(w);
            }
        }
        BucketAlg::Tree => node_weights = tree_node_weights(&weights),
        BucketAlg::Uniform | BucketAlg::Straw2 => {}
    }
    let divisors =
        if alg == BucketAlg::Straw2 { weights.iter().map(|&w| Divisor::new(w.max(1))).collect() } else { Vec::new() };
    Bucket { id, type_id, alg, items, weights, divisors, weight, sum_weights, node_weights }
}

fn height(mut n: u32) -> u32 {
    let mut h = 0;
    while n & 1 == 0 && n != 0 {
        h += 1;
        n >>= 1;
    }
    h
}

fn tree_parent(n: u32) -> u32 {
    let h = height(n);
    if n & (1 << (h + 1)) != 0 {
        n - (1 << h)
    } else {
        n + (1 << h)
    }
}

fn tree_depth(size: usize) -> u32 {
    if size == 0 {
        return 0;
    }
    let mut depth = 1;
    let mut t = size - 1;
    while t != 0 {
        t >>= 1;
        depth += 1;
    }
    depth
}

/// The implicit binary tree of a tree bucket: leaf `i` is node `2i + 1`, every inner node holds
/// the sum of its subtree.
fn tree_node_weights(weights: &[u32]) -> Vec<u32> {
    let depth = tree_depth(weights.len());
    let mut nodes = vec![0u32; 1usize << depth];
    for (i, &w) in weights.iter().enumerate() {
        let mut node = ((i as u32 + 1) << 1) - 1;
        nodes[node as usize] = w;
        for _ in 1..depth {
            node = tree_parent(node);
            nodes[node as usize] = nodes[node as usize].wrapping_add(w);
        }
    }
    nodes
}

impl Bucket {
    /// The item this bucket picks for input `x` and replica rank `r` (the bucket is not empty).
    #[inline]
    pub(crate) fn choose(&self, x: u32, r: u32) -> i32 {
        match self.alg {
            BucketAlg::Straw2 => self.straw2(x, r),
            BucketAlg::Uniform => self.perm_choose(x, r),
            BucketAlg::List => self.list(x, r),
            BucketAlg::Tree => self.tree(x, r),
        }
    }

    /// Straw2: every item draws `ln(u) / weight` with `u` from `hash(x, item, r)`; the highest
    /// draw wins, the first on a tie; a zero weight draws the minimum. The draws are
    /// independent, which is what the batched kernel below relies on.
    #[inline]
    fn straw2(&self, x: u32, r: u32) -> i32 {
        let mut high = 0usize;
        let mut high_draw = i64::MIN;
        for (i, ((&item, &w), &d)) in self.items.iter().zip(&self.weights).zip(&self.divisors).enumerate() {
            let draw = if w != 0 { straw2_draw_fast(hash3(x, item as u32, r), d) } else { i64::MIN };
            if i == 0 || draw > high_draw {
                high = i;
                high_draw = draw;
            }
        }
        self.items[high]
    }

    /// A pseudo-random permutation of the items for `x`, its element `r mod size`: uniform
    /// buckets, and every bucket's local fallback. Ceph caches the permutation per call; it is
    /// a function of `(x, bucket)` alone, so recomputing it gives the same item.
    pub(crate) fn perm_choose(&self, x: u32, r: u32) -> i32 {
        let size = self.items.len() as u32;
        let pr = r % size;
        let id = self.id as u32;
        if pr == 0 {
            let s = hash3(x, id, 0) % size;
            return self.items[s as usize];
        }
        let mut perm: Vec<u32> = (0..size).collect();
        for p in 0..=pr {
            if p < size - 1 {
                let i = hash3(x, id, p) % (size - p);
                if i != 0 {
                    perm.swap(p as usize, (p + i) as usize);
                }
            }
        }
        self.items[perm[pr as usize] as usize]
    }

    fn list(&self, x: u32, r: u32) -> i32 {
        for i in (0..self.items.len()).rev() {
            let mut w = u64::from(hash4(x, self.items[i] as u32, r, self.id as u32) & 0xffff);
            w = (w * u64::from(self.sum_weights[i])) >> 16;
            if w < u64::from(self.weights[i]) {
                return self.items[i];
            }
        }
        self.items[0]
    }

    fn tree(&self, x: u32, r: u32) -> i32 {
        let mut n = (self.node_weights.len() >> 1) as u32;
        while n & 1 == 0 {
            let w = u64::from(self.node_weights[n as usize]);
            let t = (u64::from(hash4(x, n, r, self.id as u32)) * w) >> 32;
            let h = height(n);
            let left = n - (1 << (h - 1));
            n = if t < u64::from(self.node_weights[left as usize]) { left } else { n + (1 << (h - 1)) };
        }
        self.items[(n >> 1) as usize]
    }
}

//! Jump consistent hash (Lamping & Veach 2014): the scalar reference loop.

use crate::mix::jump_lcg;

/// The paper's loop, bit for bit. `buckets >= 1` is the caller's precondition; violating it is
/// not unsafe: the loop then returns `u32::MAX` (the paper's `-1`).
#[inline]
pub(crate) fn jump_bucket(mut key: u64, buckets: u32) -> u32 {
    let mut b: i64 = -1;
    let mut j: i64 = 0;
    while j < i64::from(buckets) {
        b = j;
        key = jump_lcg(key);
        j = ((b + 1) as f64 * ((1u64 << 31) as f64 / ((key >> 33) + 1) as f64)) as i64;
    }
    b as u32
}

/// [`jump_bucket`] for every key: the portable twin of the SIMD batches.
pub(crate) fn jump_batch(keys: &[u64], buckets: u32, out: &mut [u32]) {
    for (o, &k) in out.iter_mut().zip(keys) {
        *o = jump_bucket(k, buckets);
    }
}

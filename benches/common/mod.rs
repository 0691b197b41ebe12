//! Helpers shared by the criterion benches (included with `#[path]`): quick mode and seeded
//! inputs generated outside the timed loops.
#![allow(dead_code, unreachable_pub)]

use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// `HASHROUTE_QUICK=1`: fewer sizes and a short measurement (CI-sized runs).
pub fn quick() -> bool {
    std::env::var("HASHROUTE_QUICK").is_ok_and(|v| v == "1")
}

/// In quick mode, shortens the group's warm-up and measurement.
pub fn short(g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    if quick() {
        g.warm_up_time(Duration::from_millis(200)).measurement_time(Duration::from_millis(600)).sample_size(10);
    }
}

/// `n` pre-generated 16-byte keys from a seeded RNG.
pub fn keys16(n: usize, seed: u64) -> Vec<[u8; 16]> {
    let mut rng = Pcg64::seed_from_u64(seed);
    (0..n).map(|_| rng.gen::<u128>().to_le_bytes()).collect()
}

/// `n` pre-generated 64-bit key hashes from a seeded RNG.
pub fn hashes(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = Pcg64::seed_from_u64(seed);
    (0..n).map(|_| rng.gen()).collect()
}

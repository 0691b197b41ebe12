//! Lookup cost and throughput on the sweep's sample keys (wall clock).

use super::*;

/// Lookup cost of one router: nanoseconds per key for `route` one at a time and for
/// `route_batch`, best of `rounds` passes over `keys` (wall clock, so noisy on a busy machine).
pub fn lookup_ns(router: &dyn Router, keys: &[Vec<u8>], rounds: usize) -> (f64, f64) {
    let buffer = Contiguous::new(keys);
    let refs = buffer.refs();
    let mut out = vec![hashroute::NodeId::default(); refs.len()];
    let (mut single, mut batch) = (f64::MAX, f64::MAX);
    for _ in 0..rounds.max(1) {
        let t = Instant::now();
        let mut acc = 0u32;
        for k in &refs {
            acc = acc.wrapping_add(router.route(k).as_u32());
        }
        std::hint::black_box(acc);
        single = single.min(t.elapsed().as_nanos() as f64 / refs.len().max(1) as f64);
        let t = Instant::now();
        router.route_batch(&refs, &mut out);
        std::hint::black_box(&out);
        batch = batch.min(t.elapsed().as_nanos() as f64 / refs.len().max(1) as f64);
    }
    (single, batch)
}

/// Lookups per second with `threads` rayon threads (`par_route_batch` over `keys`), best of
/// `rounds`.
///
/// # Errors
/// [`Error::InvalidParameter`] when the thread pool cannot be built.
pub fn throughput(router: &dyn Router, keys: &[Vec<u8>], threads: usize, rounds: usize) -> Result<f64> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::InvalidParameter { name: "threads", reason: e.to_string() })?;
    let buffer = Contiguous::new(keys);
    let refs = buffer.refs();
    let mut out = vec![hashroute::NodeId::default(); refs.len()];
    let mut best = f64::MAX;
    for _ in 0..rounds.max(1) {
        let t = Instant::now();
        pool.install(|| router.par_route_batch(&refs, &mut out));
        best = best.min(t.elapsed().as_secs_f64());
    }
    Ok(refs.len() as f64 / best.max(1e-9))
}

/// Keys copied into one contiguous buffer, as a client's request batch would hold them: timing
/// keys scattered over the heap (one allocation each) measures the allocator's layout, not the
/// router (the sweep's throughput table showed ring-v160 gaining 1.13× from a second thread
/// while the criterion parallel bench, whose keys are contiguous, showed 1.97×).
struct Contiguous {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Contiguous {
    fn new(keys: &[Vec<u8>]) -> Contiguous {
        let mut bytes = Vec::with_capacity(keys.iter().map(Vec::len).sum());
        let mut ends = Vec::with_capacity(keys.len());
        for k in keys {
            bytes.extend_from_slice(k);
            ends.push(bytes.len());
        }
        Contiguous { bytes, ends }
    }

    fn refs(&self) -> Vec<&[u8]> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let k = &self.bytes[start..end];
                start = end;
                k
            })
            .collect()
    }
}

/// `count` random 8-to-24-byte keys shaped like cache keys (`user:12345:profile`), deterministic.
pub fn sample_keys(count: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut rng = SplitMix64::new(seed);
    (0..count).map(|_| format!("user:{}:profile", rng.below(100_000_000)).into_bytes()).collect()
}

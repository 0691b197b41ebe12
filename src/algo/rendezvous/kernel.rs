//! The unweighted scoring kernels (`argmax_i mix(k ^ hashes[i])`, first maximum wins, `mix`
//! = `mix64` or go-rendezvous's `xorshift_mult64`) on every path, and the dispatch between them.
//!
//! All paths return the same index for every input (proptests below hold them to the scalar
//! oracle), so the choice changes speed only, never a route.

use std::sync::OnceLock;

#[cfg(target_arch = "x86_64")]
use super::arch::{avx2::Avx2, avx512::Avx512};
use super::{score, xorshift_mult64};

/// How many scores the portable kernel computes before reducing them: a fixed-size block the
/// compiler can unroll, then a short scalar argmax.
const BLOCK: usize = 8;

/// An implementation of the unweighted rendezvous kernel; see [`active_isa`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Isa {
    /// One node at a time, the reference the others are tested against. Never chosen by
    /// dispatch; selectable with [`Rendezvous::with_isa`](super::Rendezvous::with_isa).
    Scalar,
    /// Safe Rust, blocks of 8 scores then a reduction; runs everywhere.
    Portable,
    /// x86_64 AVX2: 4 lanes, 64-bit multiplies emulated with three 32-bit ones each. Chosen by
    /// dispatch on CPUs without AVX-512 for routers of at least [`AVX2_MIN_NODES`] nodes: on an
    /// AVX2 Zen 3 VM it took 0.71× the portable kernel's time at 100 nodes and 0.63× at 1000, but
    /// 1.28× at 10 (its setup and reduction cost more than the lanes save on so few nodes).
    Avx2,
    /// x86_64 AVX-512F + AVX-512DQ: 8 lanes, native 64-bit multiplies and unsigned compares.
    Avx512,
}

impl Isa {
    /// Every path, slowest first.
    pub const ALL: [Isa; 4] = [Isa::Scalar, Isa::Portable, Isa::Avx2, Isa::Avx512];

    /// Short lowercase name (`"scalar"`, `"portable"`, `"avx2"`, `"avx512"`), as in bench ids.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Portable => "portable",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }

    /// Whether this CPU can run the path (feature detection, cached by std).
    pub fn is_supported(self) -> bool {
        Kernel::new(self).is_some()
    }
}

/// Environment variable that, set to `1`, makes dispatch choose [`Isa::Portable`].
pub const FORCE_PORTABLE_ENV: &str = "HASHROUTE_FORCE_PORTABLE";

/// Below this many nodes, dispatch prefers [`Isa::Portable`] to [`Isa::Avx2`] (see there).
pub const AVX2_MIN_NODES: usize = 64;

/// The widest path dispatch uses on this CPU: [`Isa::Avx512`] when the CPU has AVX-512F and
/// AVX-512DQ, else [`Isa::Avx2`] when it has AVX2, else [`Isa::Portable`] (also when the
/// environment variable `HASHROUTE_FORCE_PORTABLE=1` is set). Decided on the first call
/// (reading the environment, which may allocate) and cached for the life of the process. A
/// router takes [`isa_for`] its node count when built, so `route` never consults it.
pub fn active_isa() -> Isa {
    static CHOSEN: OnceLock<Isa> = OnceLock::new();
    *CHOSEN.get_or_init(|| {
        let forced = std::env::var_os(FORCE_PORTABLE_ENV).is_some_and(|v| v == "1");
        choose(forced, Isa::Avx512.is_supported(), Isa::Avx2.is_supported())
    })
}

/// The path an unweighted router of `nodes` nodes uses: [`active_isa`], except that
/// [`Isa::Avx2`] becomes [`Isa::Portable`] below [`AVX2_MIN_NODES`] nodes.
pub fn isa_for(nodes: usize) -> Isa {
    for_nodes(active_isa(), nodes)
}

/// The dispatch rule, separated from detection so it can be tested exhaustively.
pub(crate) fn choose(force_portable: bool, avx512: bool, avx2: bool) -> Isa {
    match (force_portable, avx512, avx2) {
        (true, _, _) => Isa::Portable,
        (false, true, _) => Isa::Avx512,
        (false, false, true) => Isa::Avx2,
        (false, false, false) => Isa::Portable,
    }
}

/// The node-count rule on top of [`choose`].
pub(crate) fn for_nodes(isa: Isa, nodes: usize) -> Isa {
    if isa == Isa::Avx2 && nodes < AVX2_MIN_NODES {
        Isa::Portable
    } else {
        isa
    }
}

/// A runnable path: the ISA variants carry the proof that the CPU supports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernel {
    Scalar,
    Portable,
    #[cfg(target_arch = "x86_64")]
    Avx2(Avx2),
    #[cfg(target_arch = "x86_64")]
    Avx512(Avx512),
}

impl Kernel {
    /// The kernel for `isa`, or `None` when this CPU cannot run it.
    pub(crate) fn new(isa: Isa) -> Option<Kernel> {
        match isa {
            Isa::Scalar => Some(Kernel::Scalar),
            Isa::Portable => Some(Kernel::Portable),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => Avx2::detect().map(Kernel::Avx2),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => Avx512::detect().map(Kernel::Avx512),
            #[cfg(not(target_arch = "x86_64"))]
            Isa::Avx2 | Isa::Avx512 => None,
        }
    }

    /// The kernel [`isa_for`] names for a router of `nodes` nodes (always available: dispatch
    /// only picks supported paths).
    pub(crate) fn detect(nodes: usize) -> Kernel {
        Kernel::new(isa_for(nodes)).unwrap_or(Kernel::Portable)
    }

    pub(crate) fn isa(self) -> Isa {
        match self {
            Kernel::Scalar => Isa::Scalar,
            Kernel::Portable => Isa::Portable,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2(_) => Isa::Avx2,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512(_) => Isa::Avx512,
        }
    }

    /// Scan position of the first maximum of `mix64(key_hash ^ h)` over `hashes`.
    ///
    /// # Panics
    /// If `hashes` is empty (a router always has a node).
    #[inline]
    pub(crate) fn argmax(self, hashes: &[u64], key_hash: u64) -> usize {
        assert!(!hashes.is_empty(), "rendezvous kernel over no nodes");
        match self {
            Kernel::Scalar => argmax_scalar(hashes, |h| score(key_hash, h)),
            Kernel::Portable => argmax_blocks(hashes, |h| score(key_hash, h)),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2(t) => t.argmax(hashes, key_hash),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512(t) => t.argmax(hashes, key_hash),
        }
    }

    /// As [`Kernel::argmax`] with go-rendezvous's mixer, `xorshift_mult64(key_hash ^ h)`.
    ///
    /// # Panics
    /// If `hashes` is empty (a router always has a node).
    #[inline]
    pub(crate) fn argmax_go(self, hashes: &[u64], key_hash: u64) -> usize {
        assert!(!hashes.is_empty(), "rendezvous kernel over no nodes");
        match self {
            Kernel::Scalar => argmax_scalar(hashes, |h| xorshift_mult64(key_hash ^ h)),
            Kernel::Portable => argmax_blocks(hashes, |h| xorshift_mult64(key_hash ^ h)),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2(t) => t.argmax_go(hashes, key_hash),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512(t) => t.argmax_go(hashes, key_hash),
        }
    }
}

/// The plain scalar oracle: one score `f(h)` at a time, strictly greater replaces.
pub(crate) fn argmax_scalar(hashes: &[u64], f: impl Fn(u64) -> u64) -> usize {
    let mut best = 0;
    let mut best_score = f(hashes[0]);
    for (i, &h) in hashes.iter().enumerate().skip(1) {
        let s = f(h);
        if s > best_score {
            best = i;
            best_score = s;
        }
    }
    best
}

/// Index of the first maximum of `f(h)` over non-empty `hashes`, computing scores in fixed
/// blocks (also the go-rendezvous kernel, with its own mixer).
#[inline]
pub(crate) fn argmax_blocks(hashes: &[u64], f: impl Fn(u64) -> u64) -> usize {
    let mut best = 0usize;
    let mut best_score = f(hashes[0]);
    let mut base = 0usize;
    let mut chunks = hashes.chunks_exact(BLOCK);
    for chunk in &mut chunks {
        let mut scores = [0u64; BLOCK];
        for (s, &h) in scores.iter_mut().zip(chunk) {
            *s = f(h);
        }
        for (j, &s) in scores.iter().enumerate() {
            if s > best_score {
                best_score = s;
                best = base + j;
            }
        }
        base += BLOCK;
    }
    for (j, &h) in chunks.remainder().iter().enumerate() {
        let s = f(h);
        if s > best_score {
            best_score = s;
            best = base + j;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::mix64;
    use proptest::prelude::*;

    /// Every path this CPU supports, announcing the ones it skips.
    fn supported() -> Vec<Kernel> {
        Isa::ALL
            .into_iter()
            .filter_map(|isa| {
                let k = Kernel::new(isa);
                if k.is_none() {
                    eprintln!("SKIPPED: rendezvous {} kernel (this CPU lacks it)", isa.name());
                }
                k
            })
            .collect()
    }

    fn check_all(hashes: &[u64], k: u64) -> std::result::Result<(), TestCaseError> {
        let expect = argmax_scalar(hashes, |h| score(k, h));
        let expect_go = argmax_scalar(hashes, |h| xorshift_mult64(k ^ h));
        for kernel in supported() {
            prop_assert_eq!(kernel.argmax(hashes, k), expect, "{:?} n={} k={:#x}", kernel.isa(), hashes.len(), k);
            let go = kernel.argmax_go(hashes, k);
            prop_assert_eq!(go, expect_go, "go {:?} n={} k={:#x}", kernel.isa(), hashes.len(), k);
        }
        Ok(())
    }

    /// Node hashes whose scores under `k` are all 0: `k ^ h == 0` makes `mix64` return 0.
    fn zero_scores(n: usize, k: u64) -> Vec<u64> {
        vec![k; n]
    }

    #[test]
    fn dispatch_rule() {
        for avx512 in [false, true] {
            for avx2 in [false, true] {
                assert_eq!(choose(true, avx512, avx2), Isa::Portable);
            }
            assert_eq!(choose(false, true, avx512), Isa::Avx512);
        }
        assert_eq!(choose(false, false, true), Isa::Avx2);
        assert_eq!(choose(false, false, false), Isa::Portable);
        assert_eq!(for_nodes(Isa::Avx2, AVX2_MIN_NODES - 1), Isa::Portable);
        assert_eq!(for_nodes(Isa::Avx2, AVX2_MIN_NODES), Isa::Avx2);
        assert_eq!(for_nodes(Isa::Avx512, 1), Isa::Avx512);
        assert_eq!(for_nodes(Isa::Portable, 1000), Isa::Portable);
        assert_eq!(Kernel::new(Isa::Scalar), Some(Kernel::Scalar));
        assert_eq!(Kernel::detect(1000).isa(), active_isa());
        assert_eq!(Kernel::detect(3).isa(), isa_for(3));
    }

    #[test]
    fn dispatch_honours_environment() {
        let forced = std::env::var_os(FORCE_PORTABLE_ENV).is_some_and(|v| v == "1");
        let expect = choose(forced, Isa::Avx512.is_supported(), Isa::Avx2.is_supported());
        eprintln!("rendezvous dispatch: {} (forced portable: {forced})", active_isa().name());
        assert_eq!(active_isa(), expect);
        assert!(active_isa().is_supported());
    }

    #[test]
    fn force_portable_is_honoured_in_a_fresh_process() {
        // The choice is cached per process, so check the variable in a child: this test
        // binary, running only `dispatch_honours_environment` with the variable set.
        if std::env::var_os(FORCE_PORTABLE_ENV).is_some() {
            return; // already the child (or the whole run is forced): nothing more to spawn
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "algo::rendezvous::kernel::tests::dispatch_honours_environment", "--nocapture"])
            .env(FORCE_PORTABLE_ENV, "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "child failed:\n{text}");
        assert!(text.contains("rendezvous dispatch: portable (forced portable: true)"), "child output:\n{text}");
    }

    #[test]
    fn adversarial_lane_boundaries() {
        let sizes = [1usize, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 23, 24, 31, 32, 33, 100, 1000];
        for &n in &sizes {
            for k in [0u64, 1, u64::MAX, 0x8000_0000_0000_0000] {
                // Random hashes; all-equal hashes (every node ties: index 0 must win); all
                // scores 0 (the kernels' initial lane value); a single maximum at each end.
                let random: Vec<u64> = (0..n as u64).map(|i| mix64(i.wrapping_add(k))).collect();
                check_all(&random, k).unwrap();
                check_all(&vec![0x1234; n], k).unwrap();
                check_all(&zero_scores(n, k), k).unwrap();
                for pos in [0, n / 2, n - 1] {
                    let mut h = zero_scores(n, k);
                    h[pos] = k ^ 1; // score mix64(1) > 0
                    check_all(&h, k).unwrap();
                    // The maximum repeated at pos and after: the first must win.
                    let mut h = random.clone();
                    let top = (0..n).max_by_key(|&i| (score(k, h[i]), std::cmp::Reverse(i))).unwrap();
                    for j in pos..n {
                        if j % 3 == 0 {
                            h[j] = h[top];
                        }
                    }
                    check_all(&h, k).unwrap();
                }
            }
        }
    }

    #[test]
    fn sign_bit_scores() {
        // Scores straddling 2^63 catch a signed compare where an unsigned one is needed.
        let mut h = Vec::new();
        let k = 0;
        let high: Vec<u64> = (0..10_000u64).filter(|&x| score(k, x) >> 63 == 1).take(20).collect();
        let low: Vec<u64> = (0..10_000u64).filter(|&x| score(k, x) >> 63 == 0).take(20).collect();
        for i in 0..20 {
            h.push(low[i]);
            h.push(high[i]);
        }
        check_all(&h, k).unwrap();
        h.reverse();
        check_all(&h, k).unwrap();
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn paths_agree_random(hashes in proptest::collection::vec(any::<u64>(), 1..80), k in any::<u64>()) {
            check_all(&hashes, k)?;
        }

        #[test]
        fn paths_agree_ties(
            n in 1usize..80,
            distinct in 1u64..5,
            k in prop_oneof![Just(0u64), Just(u64::MAX), any::<u64>()],
        ) {
            // Few distinct node hashes: many exact ties, across lanes and accumulators.
            let hashes: Vec<u64> = (0..n as u64).map(|i| mix64(i % distinct) ^ (i % distinct)).collect();
            check_all(&hashes, k)?;
        }
    }
}

//! The unweighted scoring kernels' dispatch rule (`argmax_i mix(k ^ hashes[i])`, first maximum
//! wins, `mix` = `mix64` or go-rendezvous's `xorshift_mult64`); the kernels themselves live in
//! [`crate::arch`] (portable twin in `arch/generic`, AVX2 and AVX-512 in `arch/x86_64`).
//!
//! All paths return the same index for every input (the proptests below hold them to the
//! scalar oracle), so the choice changes speed only, never a route.

use crate::arch::{Isa, Kernels};

/// Below this many nodes, a router takes the portable kernel instead of AVX2: on few nodes the
/// vector setup and reduction cost more than the lanes save (`benches/rendezvous.rs` measures
/// both paths by node count).
pub(crate) const AVX2_MIN_NODES: usize = 64;

/// The kernels a router of `nodes` nodes uses: the process's path, except that AVX2 becomes
/// portable below [`AVX2_MIN_NODES`] nodes.
pub(crate) fn kernels_for(nodes: usize) -> Kernels {
    for_nodes(Kernels::active(), nodes)
}

/// The node-count rule, apart from detection so it can be tested on every path.
fn for_nodes(k: Kernels, nodes: usize) -> Kernels {
    if k.isa() == Isa::Avx2 && nodes < AVX2_MIN_NODES {
        Kernels::PORTABLE
    } else {
        k
    }
}

#[cfg(test)]
mod tests {
    use super::super::score;
    use super::*;
    use crate::arch::generic::argmax_scalar;
    use crate::mix::{mix64, xorshift_mult64};
    use proptest::prelude::*;

    /// Every path this CPU supports, announcing the ones it skips.
    fn supported() -> Vec<Kernels> {
        Isa::ALL
            .into_iter()
            .filter_map(|isa| {
                let k = Kernels::new(isa);
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
            prop_assert_eq!(kernel.argmax_mix64(hashes, k), expect, "{:?} n={} k={:#x}", kernel.isa(), hashes.len(), k);
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
    fn node_count_rule() {
        if let Some(avx2) = Kernels::new(Isa::Avx2) {
            assert_eq!(for_nodes(avx2, AVX2_MIN_NODES - 1), Kernels::PORTABLE);
            assert_eq!(for_nodes(avx2, AVX2_MIN_NODES), avx2);
        }
        if let Some(avx512) = Kernels::new(Isa::Avx512) {
            assert_eq!(for_nodes(avx512, 1), avx512);
        }
        assert_eq!(for_nodes(Kernels::PORTABLE, 1000), Kernels::PORTABLE);
        assert_eq!(kernels_for(1000), Kernels::active());
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

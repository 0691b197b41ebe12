//! JumpBackHash (Ertl 2024, hash4j's `JumpBackHash`): jump hash's guarantees in expected O(1)
//! integer-only steps, bit-exact with hash4j 0.31 for both of its random generators.
//!
//! Jump walks *forward* through ≈ ln n jump points with a float division each; JumpBackHash
//! walks *back* from the top of the enclosing power of two and needs at most ≈ 5/3 random
//! draws on average. No memory, perfect balance in expectation, and the minimum movement when
//! buckets are **appended or removed at the end** (it cannot remove an arbitrary node: see
//! [`JumpBackAnchor`](crate::JumpBackAnchor)).

use std::str::FromStr;

use crate::arch::{generic, Isa, Kernels};
use crate::error::{Error, Result};

/// hash4j's pseudo-random generator behind JumpBackHash. Part of the routes: changing it moves
/// almost every key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum JumpBackGenerator {
    /// `splitMix64_V1` (hash4j's `jumpBackHash` default): `s += 0x9e3779b97f4a7c15`, then the
    /// SplitMix64 finalizer.
    #[default]
    SplitMix64,
    /// `xorshift L7 R9` (hash4j's `jumpBackHashXorshiftL7R9`): the key itself is the first
    /// value, so keys whose two 32-bit halves are equal all land in bucket 0; use it only on
    /// well-mixed key hashes.
    XorshiftL7R9,
}

impl JumpBackGenerator {
    /// Every generator, the default first.
    pub const ALL: [JumpBackGenerator; 2] = [JumpBackGenerator::SplitMix64, JumpBackGenerator::XorshiftL7R9];

    /// The CLI / config spelling: `splitmix64` or `xorshift-l7r9`.
    pub fn name(self) -> &'static str {
        match self {
            JumpBackGenerator::SplitMix64 => "splitmix64",
            JumpBackGenerator::XorshiftL7R9 => "xorshift-l7r9",
        }
    }
}

impl FromStr for JumpBackGenerator {
    type Err = Error;

    /// Parses [`JumpBackGenerator::name`]'s spellings (`xorshift_l7r9` too, as in hash4j).
    fn from_str(s: &str) -> Result<JumpBackGenerator> {
        // hash4j spells the xorshift generator with an underscore.
        let name = if s == "xorshift_l7r9" { "xorshift-l7r9" } else { s };
        JumpBackGenerator::ALL.into_iter().find(|g| g.name() == name).ok_or_else(|| Error::InvalidParameter {
            name: "generator",
            reason: format!(
                "unknown generator {s:?} (expected {})",
                crate::algorithm::names_list(JumpBackGenerator::ALL.iter().map(|g| g.name()))
            ),
        })
    }
}

/// `buckets >= 1` is the caller's precondition (0 returns 0).
#[inline(always)]
pub(crate) fn bucket_unchecked(key: u64, buckets: u32, generator: JumpBackGenerator) -> u32 {
    match generator {
        JumpBackGenerator::SplitMix64 => generic::jumpback_bucket(key, buckets),
        JumpBackGenerator::XorshiftL7R9 => generic::jumpback_xorshift_bucket(key, buckets),
    }
}

/// The JumpBackHash bucket in `0..buckets` for `key` with the splitmix64 generator: bit-exact
/// with hash4j's `ConsistentHashing.jumpBackHash(splitMix64_V1())`.
///
/// Expected O(1) (on average about 5/3 generator draws), integer-only, no memory.
///
/// # Panics
/// If `buckets == 0` (see [`try_bucket`]).
#[inline]
pub fn bucket(key: u64, buckets: u32) -> u32 {
    assert!(buckets > 0, "jumpback::bucket: buckets must be at least 1");
    generic::jumpback_bucket(key, buckets)
}

/// Like [`bucket`], but returns [`Error::ZeroBuckets`] instead of panicking.
///
/// # Errors
/// [`Error::ZeroBuckets`] when `buckets == 0`.
#[inline]
pub fn try_bucket(key: u64, buckets: u32) -> Result<u32> {
    try_bucket_with(key, buckets, JumpBackGenerator::SplitMix64)
}

/// [`bucket`] with an explicit generator (`XorshiftL7R9` is hash4j's
/// `jumpBackHashXorshiftL7R9`).
///
/// # Errors
/// [`Error::ZeroBuckets`] when `buckets == 0`.
#[inline]
pub fn try_bucket_with(key: u64, buckets: u32, generator: JumpBackGenerator) -> Result<u32> {
    if buckets == 0 {
        Err(Error::ZeroBuckets)
    } else {
        Ok(bucket_unchecked(key, buckets, generator))
    }
}

/// [`bucket`] (or [`try_bucket_with`]'s generator) for every key: `out[i]` is the bucket of
/// `keys[i]`, bit-identical, several keys per SIMD register on the process's SIMD path (AVX2:
/// 4 lanes, AVX-512: 8); the portable path is the scalar loop.
///
/// Cost: a group of lanes runs as many draws as its slowest key, a handful in expectation.
///
/// # Panics
/// If `buckets == 0` or `keys.len() != out.len()`.
pub fn bucket_batch(keys: &[u64], buckets: u32, generator: JumpBackGenerator, out: &mut [u32]) {
    bucket_batch_on(Kernels::active(), keys, buckets, generator, out);
}

/// [`bucket_batch`] on an explicit ISA path (tests and benchmarks call each path).
///
/// # Panics
/// If `buckets == 0`, `keys.len() != out.len()`, or the CPU lacks `isa`.
pub fn bucket_batch_with(isa: Isa, keys: &[u64], buckets: u32, generator: JumpBackGenerator, out: &mut [u32]) {
    let k = Kernels::new(isa).unwrap_or_else(|| panic!("jumpback: ISA {} is not supported on this CPU", isa.name()));
    bucket_batch_on(k, keys, buckets, generator, out);
}

fn bucket_batch_on(k: Kernels, keys: &[u64], buckets: u32, generator: JumpBackGenerator, out: &mut [u32]) {
    assert!(buckets > 0, "jumpback::bucket_batch: buckets must be at least 1");
    assert_eq!(keys.len(), out.len(), "jumpback::bucket_batch: keys and out must have the same length");
    k.jumpback_batch(keys, buckets, generator == JumpBackGenerator::XorshiftL7R9, out);
}

/// JumpBackHash's bucket function with its generator, the kernel of [`JumpBack`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct JumpBackBucket {
    /// The pseudo-random generator.
    pub generator: JumpBackGenerator,
}

impl crate::algo::bucketed::sealed::Sealed for JumpBackBucket {}

impl crate::algo::bucketed::BucketFn for JumpBackBucket {
    const ALGORITHM: crate::Algorithm = crate::Algorithm::JumpBack;

    #[inline(always)]
    fn bucket(&self, hash: u64, n: u32) -> u32 {
        bucket_unchecked(hash, n, self.generator)
    }

    fn bucket_batch(&self, hashes: &[u64], n: u32, out: &mut [u32]) {
        bucket_batch(hashes, n, self.generator, out);
    }
}

/// JumpBackHash over named nodes: hash the key bytes with the configured hasher, then
/// [`bucket`] with the configured [`JumpBackGenerator`] (builder option
/// [`generator`](crate::Builder::<JumpBack>::generator), default splitmix64).
///
/// Node `i` is bucket `i`: append nodes at the end (and remove from the end) to move the
/// minimum. Weights must all be 1. Cost: one key hash plus expected O(1) integer steps; no
/// memory beyond the node set. Batches use the SIMD [`bucket_batch`]. See
/// [`Bucketed`](crate::algo::bucketed::Bucketed) for the methods.
pub type JumpBack = crate::algo::bucketed::Bucketed<JumpBackBucket>;

impl crate::Builder<JumpBack> {
    /// The random generator (default [`JumpBackGenerator::SplitMix64`]).
    pub fn generator(mut self, generator: JumpBackGenerator) -> crate::Builder<JumpBack> {
        self.options.f = JumpBackBucket { generator };
        self
    }
}

impl JumpBack {
    /// The random generator in use.
    pub fn generator(&self) -> JumpBackGenerator {
        self.function().generator
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash4j_readme_example() {
        let keys = [0x7f74_87ee_708c_8a96u64, 0x6265_648f_bc79_7f25, 0x85ef_23a0_b545_d53b];
        assert_eq!(keys.map(|k| bucket(k, 2)), [1, 0, 0]);
        assert_eq!(keys.map(|k| bucket(k, 3)), [1, 0, 2]);
    }

    #[test]
    fn errors_and_names() {
        assert_eq!(try_bucket(1, 0), Err(Error::ZeroBuckets));
        assert_eq!(try_bucket_with(1, 0, JumpBackGenerator::XorshiftL7R9), Err(Error::ZeroBuckets));
        for g in [JumpBackGenerator::SplitMix64, JumpBackGenerator::XorshiftL7R9] {
            assert_eq!(g.name().parse::<JumpBackGenerator>().unwrap(), g);
        }
        assert!("pcg".parse::<JumpBackGenerator>().unwrap_err().to_string().contains("splitmix64"));
        // The xorshift trap: equal halves give x == 0, bucket 0, for every n.
        for n in [2u32, 1000, u32::MAX] {
            assert_eq!(try_bucket_with(0xDEAD_BEEF_DEAD_BEEF, n, JumpBackGenerator::XorshiftL7R9), Ok(0));
        }
    }

    #[test]
    #[should_panic(expected = "buckets must be at least 1")]
    fn zero_buckets_panics() {
        bucket(1, 0);
    }

    #[test]
    fn router_only_drops_the_last_node() {
        let r = JumpBack::from_names(["a", "b", "c"]).unwrap();
        assert!(matches!(r.without_node("a"), Err(Error::Unsupported { .. })));
        assert_eq!(r.without_node("c").unwrap().bucket(42), bucket(42, 2));
        assert!(JumpBack::builder().weighted_nodes([("a", 2.0)]).build().is_err());
    }
}

//! The crate's one SIMD tree (in the manner of memchr's `src/arch/`).
//!
//! - [`generic`] holds the portable twin of every kernel, always compiled and always tested,
//!   and the kernels' algorithms written once, generic over their SIMD primitives.
//! - `x86_64/avx2.rs` and `x86_64/avx512.rs` hold the primitives for each target and the
//!   `#[target_feature]` instantiations of the generic algorithms; all of the crate's `unsafe`
//!   for SIMD lives there and in this file's dispatch.
//! - [`Isa`] names a path; [`Kernels`] is the proof that the running CPU has it. A `Kernels` is
//!   made only by [`Kernels::active`] (detected once per process) or [`Kernels::new`] (checked),
//!   so every kernel method below may call its target's code: that is the one dispatch design
//!   for every kernel (search, jump batch, rendezvous scoring).
//!
//! Detection honours two environment variables, read once at the first kernel call:
//! `HASHROUTE_FORCE_PORTABLE=1` forces [`Isa::Portable`], and `HASHROUTE_MAX_ISA=avx2|portable`
//! caps the path (Valgrind cannot run AVX-512). Every path returns identical answers: the
//! choice changes speed, never a route.
//!
//! Dependencies point one way: routers → `search` → `arch` → `mix`. Nothing here imports a
//! router or a search layout; layouts pass [`generic::TreeView`] / [`generic::RadixView`].

use std::sync::atomic::{AtomicU8, Ordering};

pub(crate) mod generic;
#[cfg(target_arch = "x86_64")]
mod x86_64;

use generic::{RadixView, TreeView};

/// Calls `$target::$call` on the SIMD path `$k` holds, or `$portable`.
macro_rules! dispatch {
    ($k:expr, $call:ident $(::<$g:tt>)? ($($arg:expr),*), $portable:expr) => {
        match $k.isa {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a `Kernels` holding `Isa::Avx512` exists only after `Isa::is_supported`
            // saw AVX-512 F, DQ, VL and POPCNT on this CPU (`Kernels::new`, `detect`), which is
            // every feature the avx512 module's `#[target_feature]` functions enable.
            Isa::Avx512 => unsafe { x86_64::avx512::$call $(::<$g>)? ($($arg),*) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a `Kernels` holding `Isa::Avx2` exists only after `Isa::is_supported` saw
            // AVX2 and POPCNT on this CPU, every feature the avx2 module's functions enable.
            Isa::Avx2 => unsafe { x86_64::avx2::$call $(::<$g>)? ($($arg),*) },
            _ => $portable,
        }
    };
}

/// An instruction-set path of the SIMD kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Isa {
    /// Plain Rust, every target. Always compiled and tested.
    Portable,
    /// x86_64 AVX2 (with POPCNT): four `u64` lanes per instruction.
    Avx2,
    /// x86_64 AVX-512 F + DQ + VL (with POPCNT): eight `u64` lanes, mask registers.
    Avx512,
}

impl Isa {
    /// Every path, narrowest first.
    pub const ALL: [Isa; 3] = [Isa::Portable, Isa::Avx2, Isa::Avx512];

    /// The path's name: `portable`, `avx2`, `avx512` (as in benchmark ids and
    /// `HASHROUTE_MAX_ISA`).
    pub fn name(self) -> &'static str {
        match self {
            Isa::Portable => "portable",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }

    /// Whether this CPU can run the path (runtime feature detection; std caches it).
    pub fn is_supported(self) -> bool {
        match self {
            Isa::Portable => true,
            #[cfg(target_arch = "x86_64")]
            isa => x86_64::supported(isa),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The path every dispatching kernel uses, chosen once per process: the widest the CPU
    /// supports, unless `HASHROUTE_FORCE_PORTABLE=1` or `HASHROUTE_MAX_ISA` caps it.
    #[inline]
    pub fn active() -> Isa {
        Kernels::active().isa
    }
}

/// Proof that the running CPU supports an [`Isa`]: the kernels' one dispatch point.
///
/// Only [`Kernels::active`], [`Kernels::new`] and [`Kernels::PORTABLE`] create one, so holding
/// a `Kernels` whose ISA is AVX2 or AVX-512 means detection saw every feature that path's
/// `#[target_feature]` functions enable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Kernels {
    isa: Isa,
}

static ACTIVE: AtomicU8 = AtomicU8::new(0);

impl Kernels {
    /// The portable path: runs everywhere.
    pub(crate) const PORTABLE: Kernels = Kernels { isa: Isa::Portable };

    /// The path `isa`, or `None` when this CPU cannot run it.
    pub(crate) fn new(isa: Isa) -> Option<Kernels> {
        isa.is_supported().then_some(Kernels { isa })
    }

    /// The process-wide path ([`Isa::active`]): one relaxed load after the first call.
    #[inline]
    pub(crate) fn active() -> Kernels {
        match ACTIVE.load(Ordering::Relaxed) {
            1 => Kernels::PORTABLE,
            2 => Kernels { isa: Isa::Avx2 },
            3 => Kernels { isa: Isa::Avx512 },
            _ => detect(),
        }
    }

    /// The ISA this proof is for.
    #[inline]
    pub(crate) fn isa(self) -> Isa {
        self.isa
    }

    /// Tree lookup of `h` (see [`generic::tree_lookup`]).
    #[inline]
    pub(crate) fn tree_lookup(self, t: &TreeView<'_>, points: &[u64], h: u64) -> usize {
        dispatch!(
            self,
            tree_lookup(t, points, h),
            generic::tree_lookup(t, points, h, generic::count8, generic::count16)
        )
    }

    /// Batched tree lookups (see [`generic::tree_batch`]).
    #[inline]
    pub(crate) fn tree_batch(self, t: &TreeView<'_>, points: &[u64], hashes: &[u64], out: &mut [usize]) {
        dispatch!(
            self,
            tree_batch(t, points, hashes, out),
            generic::tree_batch(t, points, hashes, out, generic::count8, generic::count16)
        )
    }

    /// Radix lookup of `h <= last` in a non-empty index, prefetching `side`'s entries for the
    /// key's block (see [`generic::radix_lookup`]).
    #[inline]
    pub(crate) fn radix_lookup(self, r: &RadixView<'_>, points: &[u64], side: &[u32], h: u64) -> usize {
        dispatch!(
            self,
            radix_lookup(r, points, side, h),
            generic::radix_lookup(r, points, side, h, generic::count8, generic::count16)
        )
    }

    /// Batched radix lookups over a non-empty index (see [`generic::radix_batch`]).
    #[inline]
    pub(crate) fn radix_batch(self, r: &RadixView<'_>, points: &[u64], hashes: &[u64], out: &mut [usize]) {
        dispatch!(
            self,
            radix_batch(r, points, hashes, out),
            generic::radix_batch(r, points, hashes, out, generic::count8, generic::count16)
        )
    }

    /// Jump hash of every key, `buckets >= 1`, equal lengths (checked by the caller).
    #[inline]
    pub(crate) fn jump_batch(self, keys: &[u64], buckets: u32, out: &mut [u32]) {
        dispatch!(self, jump_batch(keys, buckets, out), generic::jump_batch(keys, buckets, out))
    }

    /// JumpBackHash of every key (splitmix64, or xorshift L7 R9 when `xorshift`), `buckets >= 1`,
    /// equal lengths (checked by the caller).
    #[inline]
    pub(crate) fn jumpback_batch(self, keys: &[u64], buckets: u32, xorshift: bool, out: &mut [u32]) {
        dispatch!(
            self,
            jumpback_batch(keys, buckets, xorshift, out),
            generic::jumpback_batch(keys, buckets, xorshift, out)
        )
    }

    /// Scan position of the first maximum of `mix64(key ^ h)` over non-empty `hashes`.
    #[inline]
    pub(crate) fn argmax_mix64(self, hashes: &[u64], key: u64) -> usize {
        debug_assert!(!hashes.is_empty(), "rendezvous kernel over no nodes");
        dispatch!(self, argmax::<false>(hashes, key), generic::argmax_blocks(hashes, |h| crate::mix::mix64(key ^ h)))
    }

    /// Scan position of the first maximum of `xorshift_mult64(key ^ h)` over non-empty `hashes`.
    #[inline]
    pub(crate) fn argmax_go(self, hashes: &[u64], key: u64) -> usize {
        debug_assert!(!hashes.is_empty(), "rendezvous kernel over no nodes");
        dispatch!(
            self,
            argmax::<true>(hashes, key),
            generic::argmax_blocks(hashes, |h| crate::mix::xorshift_mult64(key ^ h))
        )
    }

    /// MD5 of every key as its four state words (A, B, C, D): digest `i` is the little-endian
    /// bytes of `out[i][0]`, then `[1]`, `[2]`, `[3]`, bit-identical to the md-5 crate (and to
    /// [`generic::md5_words`]). Any lengths, mixed in one batch, any batch size; the SIMD paths
    /// hash 16 (AVX2) or 32 (AVX-512) keys side by side, one 64-byte block per lane per step,
    /// with no heap allocation; batches (and batch tails) of up to two keys run the scalar
    /// loop, which is faster there.
    ///
    /// # Panics
    /// If `keys.len() != out.len()`.
    #[inline]
    pub(crate) fn md5_batch(self, keys: &[&[u8]], out: &mut [[u32; 4]]) {
        assert_eq!(keys.len(), out.len(), "md5_batch: keys and out must have the same length");
        dispatch!(self, md5_batch(keys, out), generic::md5_batch(keys, out))
    }
}

/// `Kernels::md5_batch` on an explicit path (tests and benchmarks call each path; see
/// `internals::md5_batch_with`).
///
/// # Panics
/// If `keys.len() != out.len()` or this CPU lacks `isa`.
pub fn md5_batch_with(isa: Isa, keys: &[&[u8]], out: &mut [[u32; 4]]) {
    let k = Kernels::new(isa).unwrap_or_else(|| panic!("md5: ISA {} is not supported on this CPU", isa.name()));
    k.md5_batch(keys, out);
}

#[cold]
fn detect() -> Kernels {
    let force_portable = std::env::var("HASHROUTE_FORCE_PORTABLE").is_ok_and(|v| v == "1");
    let cap = std::env::var("HASHROUTE_MAX_ISA").unwrap_or_default();
    let isa = choose(&cap, force_portable, Isa::Avx512.is_supported(), Isa::Avx2.is_supported());
    let code = match isa {
        Isa::Portable => 1,
        Isa::Avx2 => 2,
        Isa::Avx512 => 3,
    };
    ACTIVE.store(code, Ordering::Relaxed);
    Kernels { isa }
}

/// The dispatch rule, apart from detection so it can be tested exhaustively.
fn choose(cap: &str, force_portable: bool, avx512: bool, avx2: bool) -> Isa {
    if force_portable || cap.eq_ignore_ascii_case("portable") {
        Isa::Portable
    } else if avx512 && !cap.eq_ignore_ascii_case("avx2") {
        Isa::Avx512
    } else if avx2 {
        Isa::Avx2
    } else {
        Isa::Portable
    }
}

/// Hints the cache to fetch `slice[i]`; ignored past the end (a hint must never fault, and no
/// out-of-bounds pointer is ever formed) and off x86_64.
#[inline(always)]
pub(crate) fn prefetch<T>(slice: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(r) = slice.get(i) {
        x86_64::prefetch(r);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slice, i);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispatch_rule() {
        for (avx512, avx2) in [(false, false), (false, true), (true, true)] {
            assert_eq!(choose("", true, avx512, avx2), Isa::Portable);
            assert_eq!(choose("portable", false, avx512, avx2), Isa::Portable);
        }
        assert_eq!(choose("", false, true, true), Isa::Avx512);
        assert_eq!(choose("AVX2", false, true, true), Isa::Avx2);
        assert_eq!(choose("", false, false, true), Isa::Avx2);
        assert_eq!(choose("", false, false, false), Isa::Portable);
        assert_eq!(Kernels::new(Isa::Portable), Some(Kernels::PORTABLE));
    }

    #[test]
    fn detection_honours_the_environment() {
        let forced = std::env::var("HASHROUTE_FORCE_PORTABLE").is_ok_and(|v| v == "1");
        let cap = std::env::var("HASHROUTE_MAX_ISA").unwrap_or_default();
        let want = choose(&cap, forced, Isa::Avx512.is_supported(), Isa::Avx2.is_supported());
        eprintln!("arch dispatch: {} (forced portable: {forced}, cap: {cap:?})", Isa::active().name());
        assert_eq!(Isa::active(), want);
        assert!(Isa::active().is_supported());
    }

    #[test]
    fn force_portable_is_honoured_in_a_fresh_process() {
        // The choice is cached per process, so check the variable in a child: this test
        // binary, running only `detection_honours_the_environment` with the variable set.
        if std::env::var_os("HASHROUTE_FORCE_PORTABLE").is_some() {
            return; // already the child (or the whole run is forced): nothing more to spawn
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "arch::tests::detection_honours_the_environment", "--nocapture"])
            .env("HASHROUTE_FORCE_PORTABLE", "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "child failed:\n{text}");
        assert!(text.contains("arch dispatch: portable (forced portable: true"), "child output:\n{text}");
    }
}

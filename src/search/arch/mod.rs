//! ISA-specific code: the only `unsafe` of the search kernels lives here and in `x86`.

use super::{Group, Isa, Radix, Tree};

#[cfg(target_arch = "x86_64")]
mod jump_x86;
#[cfg(target_arch = "x86_64")]
pub(crate) mod x86;

/// Batched jump hash on `isa` (`Isa::Portable` runs the scalar loop).
///
/// # Panics
/// If the CPU lacks `isa`.
pub(crate) fn jump_batch(isa: Isa, keys: &[u64], buckets: u32, out: &mut [u32]) {
    #[cfg(target_arch = "x86_64")]
    {
        jump_x86::bucket_batch(isa, keys, buckets, out)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        assert!(isa == Isa::Portable, "jump: ISA {} is not supported on this CPU", isa.name());
        crate::algo::jump::bucket_batch_portable(keys, buckets, out)
    }
}

/// Hints the cache to fetch `slice[i]` (ignored past the end: a hint must never fault, and we
/// never form an out-of-bounds pointer).
#[inline(always)]
pub(crate) fn prefetch<T>(slice: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(r) = slice.get(i) {
        x86::prefetch_ptr(r as *const T as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slice, i);
}

/// Prefetches one tree node (one cache line).
#[inline(always)]
pub(crate) fn prefetch_group(groups: &[Group], i: usize) {
    prefetch(groups, i);
}

/// Whether the CPU supports `isa` (never called for `Isa::Portable`).
pub(crate) fn supported(isa: Isa) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        x86::supported(isa)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = isa;
        false
    }
}

/// Tree lookup on a SIMD path.
///
/// # Panics
/// If the CPU lacks `isa`.
#[inline]
pub(crate) fn tree_lookup(isa: Isa, t: &Tree, points: &[u64], h: u64) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        x86::tree_lookup(isa, t, points, h)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (t, points, h);
        panic!("search: ISA {} is not supported on this CPU", isa.name())
    }
}

/// Tree lookup on the dispatched path ([`super::active`]).
#[inline]
pub(crate) fn tree_lookup_active(t: &Tree, points: &[u64], h: u64) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        x86::tree_lookup_active(t, points, h)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        super::tree_lookup_generic(t, points, h, super::count8_portable, super::count16_portable)
    }
}

/// Batched tree lookup on a SIMD path.
///
/// # Panics
/// If the CPU lacks `isa`.
pub(crate) fn tree_batch(isa: Isa, t: &Tree, points: &[u64], hashes: &[u64], out: &mut [usize]) {
    #[cfg(target_arch = "x86_64")]
    {
        x86::tree_batch(isa, t, points, hashes, out)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (t, points, hashes, out);
        panic!("search: ISA {} is not supported on this CPU", isa.name())
    }
}

/// Radix lookup of `h <= last` in a non-empty index on `isa`, prefetching `side`'s entries for
/// the block (an array parallel to `points`, or empty).
///
/// # Panics
/// If the CPU lacks `isa`.
#[inline]
pub(crate) fn radix_lookup(isa: Isa, r: &Radix, points: &[u64], side: &[u32], h: u64) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        x86::radix_lookup(isa, r, points, side, h)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        assert!(isa == Isa::Portable, "search: ISA {} is not supported on this CPU", isa.name());
        super::radix::radix_lookup_generic(r, points, side, h, super::count8_portable, super::count16_portable)
    }
}

/// Batched radix lookup on a SIMD path.
///
/// # Panics
/// If the CPU lacks `isa`.
pub(crate) fn radix_batch(isa: Isa, r: &Radix, points: &[u64], hashes: &[u64], out: &mut [usize]) {
    #[cfg(target_arch = "x86_64")]
    {
        x86::radix_batch(isa, r, points, hashes, out)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (r, points, hashes, out);
        panic!("search: ISA {} is not supported on this CPU", isa.name())
    }
}

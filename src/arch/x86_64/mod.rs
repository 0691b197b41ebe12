//! x86_64: feature detection, the cache hint, and one module per SIMD level.
//!
//! Hand-written because no maintained crate offers these kernels with runtime dispatch:
//! "count u64 lanes below h" for the search layouts, jump hash several keys per register, and
//! the rendezvous argmax (64-bit lane multiplies and an unsigned max with its first index).

use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};

use super::Isa;

pub(super) mod avx2;
pub(super) mod avx512;
mod md5_avx2;
mod md5_avx512;

/// Whether the CPU has every feature `isa`'s module enables.
pub(super) fn supported(isa: Isa) -> bool {
    match isa {
        Isa::Portable => true,
        Isa::Avx2 => is_x86_feature_detected!("avx2") && is_x86_feature_detected!("popcnt"),
        Isa::Avx512 => {
            is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512dq")
                && is_x86_feature_detected!("avx512vl")
                && is_x86_feature_detected!("popcnt")
        }
    }
}

/// Cache hint for the line holding `r`.
#[inline(always)]
pub(super) fn prefetch<T>(r: &T) {
    // SAFETY: `prefetch` is a hint that never faults, SSE is part of the x86_64 baseline, and
    // the pointer comes from a live reference.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(r as *const T as *const i8) }
}

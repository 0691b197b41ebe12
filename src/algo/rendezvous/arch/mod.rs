//! Hand-written SIMD kernels for the unweighted rendezvous argmax, one module per ISA.
//!
//! Why hand-written: `mix64` needs 64-bit lane multiplies and an unsigned 64-bit max with the
//! first index achieving it; the baseline x86_64 target (SSE2) cannot auto-vectorize either.
//! Each module exposes a zero-sized token type that can only be obtained by runtime feature
//! detection, so holding a token is the proof that calling its `target_feature` kernel is
//! sound; all `unsafe` of the rendezvous module lives in these two files.

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512;

//! The portable twin of every kernel, and the kernels' algorithms written once.
//!
//! The search algorithms ([`tree_lookup`], [`radix_lookup`], their batches) are generic over
//! their two SIMD primitives, "count the keys `< h` among 8" and "among 16": the portable
//! path passes [`count8`] / [`count16`], each `x86_64` module passes its own inside a
//! `#[target_feature]` function so the whole loop is compiled for that ISA. Jump's batch and
//! rendezvous scoring have their scalar forms here ([`jump_batch`], [`argmax_blocks`],
//! [`argmax_scalar`]), which the SIMD versions must equal bit for bit.

mod jump;
mod jumpback;
mod md5;
mod rendezvous;
mod search;

pub(crate) use jump::{jump_batch, jump_bucket};
pub(crate) use jumpback::{
    jumpback_batch, jumpback_bucket, jumpback_with, jumpback_xorshift_bucket, RandomSequence, SplitMix64,
    SPLITMIX_GAMMA,
};
pub use md5::md5_words;
pub(crate) use md5::{md5_batch, md5_lanes, md5_steps};
pub(crate) use rendezvous::argmax_blocks;
#[cfg(test)]
pub(crate) use rendezvous::argmax_scalar;
pub(crate) use search::{
    count16, count8, radix_batch, radix_lookup, tree_batch, tree_lookup, Line, RadixView, TreeView,
};
pub use search::{BATCH, LEAF, NODE};

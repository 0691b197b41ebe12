//! hashroute's measurements, kept beside the product rather than in it: the criterion
//! benchmarks and the report pipeline (`benches/`, `cargo bench` at the workspace root ends with
//! the recommendation), the peer crates compared in the same run, the live Redis experiments
//! (`examples/redis_scaleout.rs`, `tests/redis_live.rs`) and the token allocator's study
//! figures ([`allocator_study`]). Never published; nothing here is part of hashroute's API.

pub mod allocator_study;

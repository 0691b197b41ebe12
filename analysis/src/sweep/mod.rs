//! The algorithm × node-count sweep: which routers exist, and how each balances, moves keys and
//! costs on many random clusters.
//!
//! Every router the sweep knows is one entry of [`candidates`]; adding an algorithm is one line
//! there. A [`Candidate`] builds its router from a [`NodeSet`] and says how its load can be
//! measured ([`LoadModel`]): exactly from arcs for ring-like routers, exactly by arithmetic for
//! modulo, or by routing sampled keys (with the sample size and its noise reported).
//!
//! The files: `candidates` (the registry), `cells` (balance per candidate and node count),
//! `movement` (keys moved per resize), `timing` (lookup cost and throughput).

mod candidates;
mod cells;
mod movement;
#[cfg(test)]
mod tests;
mod timing;

pub use candidates::*;
pub use cells::*;
pub use movement::*;
pub use timing::*;

use std::sync::Arc;
use std::time::Instant;

use crate::partition::{ideal_movement, shares_by_name, ModTable, Movement, Partition};
use crate::rng::SplitMix64;
use crate::stats::{median, quantile, supported_tail, Balance};
use hashroute::migration::sampled_moves;
use hashroute::slots::SLOTS;
use hashroute::KetamaVariant;
use hashroute::Maglev;
use hashroute::MultiProbe;
use hashroute::{Algorithm, RouterSpec};
use hashroute::{AnyRouter, ParRouteBatch, Router};
use hashroute::{Error, Result};
use hashroute::{Node, NodeSet};

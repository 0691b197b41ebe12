//! `hashroute fingerprint`: one value to compare routing configurations across processes.

use std::io::{self, Write};

use clap::Args;
use hashroute::Router;
use serde::Serialize;

use crate::failure::Failure;
use crate::output::FormatArgs;
use crate::router_args::RouterArgs;

/// Route fingerprint of the router: 32 hex digits, equal exactly when the routes are equal
///
/// Independent of node order for ring, ketama, rendezvous and maglev. For the others the node
/// order is part of the fingerprint: modulo, jump, slots, memento, anchor, jumpback, fliphash,
/// power, binomial and jumpback-anchor route by it (node i is bucket i); multiprobe does not, but
/// is fingerprinted in node order for now.
///
/// --format json: {"schema": "hashroute.fingerprint/1", "fingerprint", "algorithm", "nodes"}.
#[derive(Args, Debug)]
pub(crate) struct FingerprintArgs {
    #[command(flatten)]
    router: RouterArgs,
    #[command(flatten)]
    format: FormatArgs,
}

/// `fingerprint --format json` (docs/json.md).
#[derive(Serialize)]
struct Json {
    /// The 32 hex digits the text prints.
    fingerprint: String,
    algorithm: &'static str,
    nodes: usize,
}

pub(crate) fn run(args: FingerprintArgs) -> Result<(), Failure> {
    if let Some(crush) = args.router.crush()? {
        return crate::crush::fingerprint(&crush);
    }
    let router = args.router.router()?;
    let fingerprint = hashroute::fingerprint(&router);
    if args.format.json() {
        let doc = Json {
            fingerprint: fingerprint.to_string(),
            algorithm: router.algorithm().name(),
            nodes: router.node_count(),
        };
        return crate::output::print_json("hashroute.fingerprint/1", &doc);
    }
    let mut out = io::stdout().lock();
    writeln!(out, "{fingerprint}")?;
    out.flush()?;
    Ok(())
}

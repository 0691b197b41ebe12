//! `hashroute fingerprint`: one value to compare routing configurations across processes.

use std::io::{self, Write};

use clap::Args;

use crate::failure::Failure;
use crate::router_args::RouterArgs;

/// Route fingerprint of the router: 32 hex digits, equal exactly when the routes are equal
///
/// Independent of node order for ring, ketama, rendezvous and maglev. For the others the node
/// order is part of the fingerprint: modulo, jump, slots, memento, anchor, jumpback, fliphash,
/// power, binomial and jumpback-anchor route by it (node i is bucket i); multiprobe does not, but
/// is fingerprinted in node order for now.
#[derive(Args, Debug)]
pub(crate) struct FingerprintArgs {
    #[command(flatten)]
    router: RouterArgs,
}

pub(crate) fn run(args: FingerprintArgs) -> Result<(), Failure> {
    if let Some(crush) = args.router.crush()? {
        return crate::crush::fingerprint(&crush);
    }
    let router = args.router.router()?;
    let fingerprint = hashroute::fingerprint(&router);
    let mut out = io::stdout().lock();
    writeln!(out, "{fingerprint}")?;
    out.flush()?;
    Ok(())
}

//! `hashroute fingerprint`: one value to compare routing configurations across processes.

use std::io::{self, Write};

use clap::Args;

use crate::failure::Failure;
use crate::router_args::RouterArgs;

/// Route fingerprint of the router: 32 hex digits, equal exactly when the routes are equal
/// (independent of node order for ring, ketama, rendezvous and maglev)
#[derive(Args, Debug)]
pub(crate) struct FingerprintArgs {
    #[command(flatten)]
    router: RouterArgs,
}

pub(crate) fn run(args: FingerprintArgs) -> Result<(), Failure> {
    let router = args.router.router()?;
    let fingerprint = hashroute::fingerprint(&*router);
    let mut out = io::stdout().lock();
    writeln!(out, "{fingerprint}")?;
    out.flush()?;
    Ok(())
}

//! `replicas --replication simple:RF|nts:DC=RF[,...]`: Cassandra's replica lists on a token
//! ring, in the DataStax driver's order.

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};

use clap::Args;
use hashroute::{AnyRouter, Replication, Router, TokenRing};

use crate::failure::Failure;
use crate::keys::{for_each_key, InputFormat, Key};
use crate::route::write_line;

/// The replication flag of `replicas`.
#[derive(Args, Debug)]
#[command(next_help_heading = "Replicas")]
pub(crate) struct ReplicationArgs {
    /// Token rings: Cassandra's replicas per key, in the DataStax driver's order, for a keyspace
    /// replicated as simple:RF (SimpleStrategy) or nts:DC=RF[,DC=RF...] (NetworkTopologyStrategy;
    /// DC is a ZONE of the tokens file); replaces -n
    #[arg(long, value_name = "SPEC")]
    replication: Option<String>,
}

impl ReplicationArgs {
    /// Prints `KEY<TAB>NODE1,NODE2,...` for every key: `router` must be a token ring and
    /// `--replication` given (clap requires it when `-n` is absent).
    pub(crate) fn run(&self, router: &AnyRouter, keys: &[OsString], input: InputFormat) -> Result<(), Failure> {
        let text = self.replication.as_deref().ok_or_else(|| Failure::msg("give -n N or --replication SPEC"))?;
        let replication: Replication = text.parse().map_err(|e| Failure::context("--replication", e))?;
        let AnyRouter::TokenRing(ring) = router else {
            return Err(Failure::msg(format!(
                "--replication applies to token rings (--tokens-file FILE, or --algo token-ring), not {}; give -n N",
                router.algorithm()
            )));
        };
        check(ring, &replication, text)?;
        let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
        let mut names: Vec<u8> = Vec::with_capacity(64);
        for_each_key(keys, input, |raw, key| {
            let Key::Bytes(bytes) = key else { unreachable!("replicas rejects u64 input before") };
            let ids = ring.replicas_with(bytes, &replication)?;
            names.clear();
            for (i, &id) in ids.iter().enumerate() {
                if i > 0 {
                    names.push(b',');
                }
                names.extend_from_slice(ring.node_name(id).as_bytes());
            }
            write_line(&mut out, raw, &names)
        })?;
        out.flush()?;
        Ok(())
    }
}

/// Fails before any key is read when the spec names a datacenter the ring lacks or places no
/// replica at all.
fn check(ring: &TokenRing, replication: &Replication, text: &str) -> Result<(), Failure> {
    ring.replicas_with(b"", replication).map_err(|e| Failure::context(format!("--replication {text}"), e))?;
    if replication.max_replicas() == 0 {
        return Err(Failure::msg(format!(
            "--replication {text}: every replication factor is 0, so no key has a replica"
        )));
    }
    Ok(())
}

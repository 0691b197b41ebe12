//! `migrate --from-config OLD --to-config NEW`: the cost of a change to a proxy's configuration.

use std::path::PathBuf;

use clap::Args;
use hashroute::AnyRouter;

use crate::failure::Failure;
use crate::proxy_args::read;

/// The flags `--from-config` replaces in `migrate`.
const REPLACED: [&str; 13] = [
    "algo",
    "vnodes",
    "hash",
    "seed",
    "variant",
    "table_size",
    "probes",
    "capacity",
    "min_ring_size",
    "max_ring_size",
    "tokens_per_node",
    "from",
    "to",
];

/// The routers before and after a change.
type Pair = (AnyRouter, AnyRouter);

/// Two proxy configurations: before and after the change.
#[derive(Args, Debug)]
#[command(next_help_heading = "Proxy configuration")]
pub(crate) struct MigrateConfigArgs {
    /// The proxy configuration before the change (nutcracker YAML, nginx or HAProxy); replaces
    /// --algo, --from and --to
    #[arg(long, value_name = "OLD", requires = "to_config", conflicts_with_all = REPLACED)]
    from_config: Option<PathBuf>,
    /// The proxy configuration after the change
    #[arg(long, value_name = "NEW", requires = "from_config")]
    to_config: Option<PathBuf>,
    /// The pool (nutcracker pool, nginx upstream, HAProxy backend) in both files
    #[arg(long, value_name = "NAME", requires = "from_config", conflicts_with_all = ["from_pool", "to_pool"])]
    pool: Option<String>,
    /// The pool in the old file, when its name changed
    #[arg(long, value_name = "NAME", requires = "from_config")]
    from_pool: Option<String>,
    /// The pool in the new file, when its name changed
    #[arg(long, value_name = "NAME", requires = "from_config")]
    to_pool: Option<String>,
    /// Both files' kind, when their content does not tell: twemproxy, nginx or haproxy
    #[arg(long, value_name = "KIND", requires = "from_config")]
    config_kind: Option<String>,
}

impl MigrateConfigArgs {
    /// The routers before and after, when `--from-config` was given.
    pub(crate) fn routers(&self) -> Result<Option<Pair>, Failure> {
        let (Some(old), Some(new)) = (&self.from_config, &self.to_config) else { return Ok(None) };
        let kind = self.config_kind.as_deref();
        let before = read(old, kind, self.pool.as_deref().or(self.from_pool.as_deref()))?;
        let after = read(new, kind, self.pool.as_deref().or(self.to_pool.as_deref()))?;
        if before.kind != after.kind || before.spec.algorithm != after.spec.algorithm {
            return Err(Failure::msg(format!(
                "--from-config is {} ({}) but --to-config is {} ({}): a migration compares one proxy's layouts",
                before.kind, before.spec.algorithm, after.kind, after.spec.algorithm
            )));
        }
        let b = before.router().map_err(|e| Failure::context("--from-config", e))?;
        let a = after.router().map_err(|e| Failure::context("--to-config", e))?;
        Ok(Some((b, a)))
    }
}

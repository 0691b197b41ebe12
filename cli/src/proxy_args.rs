//! `--from-config FILE [--pool NAME] [--config-kind KIND]`: a router read from a proxy's own
//! configuration (nutcracker YAML, nginx `upstream`, HAProxy `backend`) instead of `--algo` and
//! `--nodes*`.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::proxy::{ConfigError, ConfigKind, ProxyConfig};
use clap::Args;

use crate::failure::Failure;

/// The router flags `--from-config` replaces: giving any of them with it is a usage error.
pub(crate) const REPLACED: [&str; 15] = [
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
    "nodes",
    "nodes_file",
    "buckets",
    "partitions",
];

/// Where a proxy configuration comes from.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Proxy configuration")]
pub(crate) struct ConfigArgs {
    /// Route as the proxy configured in FILE does: a nutcracker (twemproxy) YAML file, an nginx
    /// configuration (`upstream` blocks with `hash KEY consistent`) or an HAProxy configuration
    /// (`backend` with `balance uri` and `hash-type consistent`); replaces --algo and --nodes*
    #[arg(long, value_name = "FILE", conflicts_with_all = REPLACED)]
    pub(crate) from_config: Option<PathBuf>,
    /// The nutcracker pool, nginx upstream or HAProxy backend (needed when the file has several)
    #[arg(long, value_name = "NAME", requires = "from_config")]
    pub(crate) pool: Option<String>,
    /// The file's kind, when its content does not tell: twemproxy, nginx or haproxy
    #[arg(long, value_name = "KIND", requires = "from_config")]
    pub(crate) config_kind: Option<String>,
}

/// Reads pool `pool` of the configuration at `path`, printing what the reader ignored as
/// `hashroute: note: ...` lines on stderr.
pub(crate) fn read(path: &Path, kind: Option<&str>, pool: Option<&str>) -> Result<ProxyConfig, Failure> {
    let kind = kind.map(ConfigKind::from_name).transpose().map_err(with_flag_hint)?;
    let config = ProxyConfig::read(path, kind, pool).map_err(with_flag_hint)?;
    let mut err = std::io::stderr().lock();
    for note in &config.notes {
        // A failing stderr is not worth failing the routes for.
        let _ = writeln!(err, "hashroute: note: {}: {note}", path.display());
    }
    Ok(config)
}

/// The reader's error as one line, naming the flag that resolves it where one does.
fn with_flag_hint(err: ConfigError) -> Failure {
    let hint = match &err {
        ConfigError::UnknownKind { .. } => {
            let text = err.to_string();
            let text = text.strip_suffix(')').unwrap_or(&text).to_owned();
            return Failure::msg(format!("{text}; give --config-kind)"));
        }
        ConfigError::PoolNeeded { .. } => " with --pool",
        _ => "",
    };
    Failure::msg(format!("{err}{hint}"))
}

impl ConfigArgs {
    /// The configuration, when `--from-config` was given.
    pub(crate) fn config(&self) -> Result<Option<ProxyConfig>, Failure> {
        match &self.from_config {
            // clap drops a `requires` whose target conflicts with a given flag (`--algo`), so
            // the check is repeated here.
            None if self.pool.is_some() || self.config_kind.is_some() => {
                Err(Failure::msg("--pool and --config-kind need --from-config FILE"))
            }
            None => Ok(None),
            Some(path) => read(path, self.config_kind.as_deref(), self.pool.as_deref()).map(Some),
        }
    }
}

/// The `--compatible-with` name of the proxy a configuration is for.
pub(crate) fn compatibility_name(config: &ProxyConfig) -> &'static str {
    match config.kind {
        ConfigKind::Twemproxy => "twemproxy",
        ConfigKind::Nginx => "nginx",
        _ => "haproxy",
    }
}

/// `--from-config` for subcommands without router flags (`recommend`): the same three flags,
/// with nothing to conflict with.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Proxy configuration")]
pub(crate) struct LayoutArgs {
    /// Your cluster as a proxy places it: a nutcracker (twemproxy) YAML file, an nginx or an
    /// HAProxy configuration; judged against that proxy's own placement
    #[arg(long, value_name = "FILE")]
    pub(crate) from_config: Option<PathBuf>,
    /// The nutcracker pool, nginx upstream or HAProxy backend (needed when the file has several)
    #[arg(long, value_name = "NAME", requires = "from_config")]
    pub(crate) pool: Option<String>,
    /// The file's kind, when its content does not tell: twemproxy, nginx or haproxy
    #[arg(long, value_name = "KIND", requires = "from_config")]
    pub(crate) config_kind: Option<String>,
}

impl LayoutArgs {
    /// The configuration, when `--from-config` was given.
    pub(crate) fn config(&self) -> Result<Option<ProxyConfig>, Failure> {
        match &self.from_config {
            None => Ok(None),
            Some(path) => read(path, self.config_kind.as_deref(), self.pool.as_deref()).map(Some),
        }
    }
}

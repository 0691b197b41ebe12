//! The proxies' own configuration files, read into the router that places keys as the proxy
//! does: a nutcracker (twemproxy) YAML pool, an nginx `upstream` block or an HAProxy `backend`
//! ([`ProxyConfig`]), every error naming the file and line ([`ConfigError`]).

mod haproxy;
mod nginx;
mod reader;
mod twemproxy;

use std::fmt;

pub use reader::{ConfigKind, ProxyConfig};

/// Why a proxy configuration could not be read. One line, naming the file (and the line where
/// there is one); the variants the caller can act on are their own.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file is unreadable, malformed, or asks for a placement hashroute does not model;
    /// the message names the file and line.
    Invalid(hashroute::Error),
    /// The content is none of the known kinds: name it ([`ConfigKind`]).
    UnknownKind {
        /// The file, as given.
        file: String,
    },
    /// The file holds several pools and none was named.
    PoolNeeded {
        /// The file, as given.
        file: String,
        /// What the proxy calls a pool (`pool`, `upstream`, `backend`).
        pool_word: &'static str,
        /// The pools found, in file order.
        names: Vec<String>,
    },
    /// A kind name that is not one of [`ConfigKind::ALL`].
    UnknownKindName(String),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Invalid(err) => err.fmt(f),
            ConfigError::UnknownKind { file } => write!(
                f,
                "malformed input: {file}: not a twemproxy, nginx or HAProxy configuration (no `servers:`, \
                 `upstream NAME {{` or `backend NAME`)"
            ),
            ConfigError::PoolNeeded { file, pool_word, names } => {
                write!(f, "malformed input: {file}: {} {pool_word}s ({}): name one", names.len(), names.join(", "))
            }
            ConfigError::UnknownKindName(name) => {
                let kinds: Vec<&str> = ConfigKind::ALL.iter().map(|k| k.name()).collect();
                write!(f, "invalid config kind: {name:?} (expected {})", kinds.join(", "))
            }
        }
    }
}

impl std::error::Error for ConfigError {}

impl From<hashroute::Error> for ConfigError {
    fn from(err: hashroute::Error) -> ConfigError {
        ConfigError::Invalid(err)
    }
}

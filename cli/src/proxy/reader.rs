//! [`ProxyConfig`]: what a proxy's own configuration file says about placement.

use std::fmt;
use std::path::Path;

use hashroute::{AnyRouter, Error, Node, NodeSet, Result, RouterSpec};

use super::ConfigError;

/// Which proxy wrote a configuration file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConfigKind {
    /// A nutcracker (twemproxy) YAML file: top-level pools with `servers:` lists.
    Twemproxy,
    /// An nginx configuration with `upstream NAME { … }` blocks.
    Nginx,
    /// An HAProxy configuration with `backend` (or `listen`) sections.
    Haproxy,
}

impl ConfigKind {
    /// Every kind.
    pub const ALL: [ConfigKind; 3] = [ConfigKind::Twemproxy, ConfigKind::Nginx, ConfigKind::Haproxy];

    /// The kind's name: `twemproxy`, `nginx`, `haproxy`.
    pub fn name(self) -> &'static str {
        match self {
            ConfigKind::Twemproxy => "twemproxy",
            ConfigKind::Nginx => "nginx",
            ConfigKind::Haproxy => "haproxy",
        }
    }

    /// The kind named `name` (as in [`ConfigKind::name`]).
    ///
    /// # Errors
    /// [`ConfigError::UnknownKindName`].
    pub fn from_name(name: &str) -> Result<ConfigKind, ConfigError> {
        ConfigKind::ALL.into_iter().find(|k| k.name() == name).ok_or_else(|| ConfigError::UnknownKindName(name.into()))
    }

    /// Recognises a file's kind from its content: an `upstream NAME {` block is nginx, a
    /// `backend`/`listen` section header at the start of a line is HAProxy, a `servers:` key is
    /// nutcracker YAML. O(length).
    pub fn detect(text: &str) -> Option<ConfigKind> {
        let lines = || text.lines().map(|l| l.split('#').next().unwrap_or(""));
        if lines().any(|l| {
            let mut w = l.split_whitespace();
            w.next() == Some("upstream") && w.next().is_some()
        }) {
            return Some(ConfigKind::Nginx);
        }
        if lines().any(|l| {
            let first = l.split_whitespace().next();
            !l.starts_with(char::is_whitespace) && matches!(first, Some("backend" | "listen"))
        }) {
            return Some(ConfigKind::Haproxy);
        }
        if lines().any(|l| l.trim_start().starts_with("servers:")) {
            return Some(ConfigKind::Twemproxy);
        }
        None
    }
}

impl fmt::Display for ConfigKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One pool of a proxy configuration, read into the router that places keys as the proxy does.
///
/// Node names are the servers as the configuration writes them (nutcracker: `host:port` or the
/// server's name; nginx: the server address; HAProxy: the server name), so a route prints what
/// the operator recognises. Servers that own no keys in a healthy pool (nginx `down`, HAProxy
/// `weight 0`, `backup`, `disabled`) are left out and listed in [`ProxyConfig::notes`].
#[derive(Clone, Debug)]
pub struct ProxyConfig {
    /// The proxy that wrote the file.
    pub kind: ConfigKind,
    /// The pool: nutcracker pool, nginx `upstream`, HAProxy `backend`/`listen` name.
    pub pool: String,
    /// The router configuration.
    pub spec: RouterSpec,
    /// The servers that own keys, in configuration order.
    pub nodes: NodeSet,
    /// What was ignored or left out (one line each), e.g. `line 7: max_fails ignored`.
    pub notes: Vec<String>,
}

impl ProxyConfig {
    /// Reads pool `pool` (or the file's only pool) of the configuration at `path`, of `kind`
    /// (or recognised with [`ConfigKind::detect`]). O(file size).
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the file (and line) for an unreadable file, a syntax
    /// error, an unknown pool, a malformed server line, or an option that changes placement but
    /// is not modelled; [`ConfigError::UnknownKind`] when `kind` is `None` and the content does
    /// not tell; [`ConfigError::PoolNeeded`] when `pool` is `None` and the file has several.
    pub fn read(path: &Path, kind: Option<ConfigKind>, pool: Option<&str>) -> Result<ProxyConfig, ConfigError> {
        let file = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| Error::Malformed(format!("{file}: {e}")))?;
        let text = String::from_utf8(bytes).map_err(|_| Error::Malformed(format!("{file}: not valid UTF-8")))?;
        ProxyConfig::parse(&text, &file, kind, pool)
    }

    /// [`ProxyConfig::read`] on text already in memory; `file` names it in errors.
    ///
    /// # Errors
    /// As [`ProxyConfig::read`].
    pub fn parse(
        text: &str,
        file: &str,
        kind: Option<ConfigKind>,
        pool: Option<&str>,
    ) -> Result<ProxyConfig, ConfigError> {
        // An editor's byte-order mark is not part of the first directive or server name.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let Some(kind) = kind.or_else(|| ConfigKind::detect(text)) else {
            return Err(ConfigError::UnknownKind { file: file.into() });
        };
        let at = Place { file };
        let pools = match kind {
            ConfigKind::Twemproxy => super::twemproxy::pools(text, &at)?,
            ConfigKind::Nginx => super::nginx::pools(text, &at)?,
            ConfigKind::Haproxy => super::haproxy::pools(text, &at)?,
        };
        let chosen = match pool {
            Some(name) => pools
                .into_iter()
                .find(|p| p.name == name)
                .ok_or_else(|| Error::Malformed(format!("{file}: no {} named {name:?}", pool_word(kind))))?,
            None => {
                let mut pools = pools;
                match pools.len() {
                    1 => pools.remove(0),
                    0 => return Err(Error::Malformed(format!("{file}: no {} found", pool_word(kind))).into()),
                    _ => {
                        let names = pools.into_iter().map(|p| p.name).collect();
                        return Err(ConfigError::PoolNeeded { file: file.into(), pool_word: pool_word(kind), names });
                    }
                }
            }
        };
        Ok(chosen.finish(kind, &at)?)
    }

    /// The router: [`RouterSpec::build`] over [`ProxyConfig::nodes`].
    ///
    /// # Errors
    /// As [`RouterSpec::build`].
    pub fn router(&self) -> Result<AnyRouter> {
        self.spec.build(self.nodes.clone())
    }
}

/// What each proxy calls a pool.
fn pool_word(kind: ConfigKind) -> &'static str {
    match kind {
        ConfigKind::Twemproxy => "pool",
        ConfigKind::Nginx => "upstream",
        ConfigKind::Haproxy => "backend",
    }
}

/// The file being read, for error messages.
pub(crate) struct Place<'a> {
    pub(crate) file: &'a str,
}

impl Place<'_> {
    /// `FILE:LINE: message` (lines count from 1).
    pub(crate) fn err(&self, line: usize, message: impl fmt::Display) -> Error {
        // Messages quote the file's own text, which may span lines (a quoted token): escape
        // line breaks so the error stays one line (found by the parsers fuzz target).
        let message = message.to_string().replace('\r', "\\r").replace('\n', "\\n");
        Error::Malformed(format!("{}:{line}: {message}", self.file))
    }
}

/// A pool as a reader found it, before the node set is validated.
pub(crate) struct RawPool {
    pub(crate) name: String,
    /// The line the pool starts on.
    pub(crate) line: usize,
    /// The pool's own error, reported only if this pool is the one asked for (an unrelated
    /// pool with an unsupported option must not stop a route through another).
    pub(crate) error: Option<Error>,
    pub(crate) spec: Option<RouterSpec>,
    /// `(node, line)` for every server that owns keys.
    pub(crate) servers: Vec<(Node, usize)>,
    pub(crate) notes: Vec<String>,
}

impl RawPool {
    pub(crate) fn new(name: &str, line: usize) -> RawPool {
        RawPool { name: name.to_owned(), line, error: None, spec: None, servers: Vec::new(), notes: Vec::new() }
    }

    /// Records the first error of this pool.
    pub(crate) fn fail(&mut self, err: Error) {
        if self.error.is_none() {
            self.error = Some(err);
        }
    }

    fn finish(self, kind: ConfigKind, at: &Place<'_>) -> Result<ProxyConfig> {
        if let Some(err) = self.error {
            return Err(err);
        }
        let spec =
            self.spec.ok_or_else(|| at.err(self.line, format!("{} {:?}: no placement", pool_word(kind), self.name)))?;
        if self.servers.is_empty() {
            return Err(at.err(self.line, format!("{} {:?} has no server that owns keys", pool_word(kind), self.name)));
        }
        let servers = if kind == ConfigKind::Haproxy { super::haproxy::pin_ids(self.servers)? } else { self.servers };
        if servers.is_empty() {
            return Err(at.err(self.line, format!("{} {:?} has no server that owns keys", pool_word(kind), self.name)));
        }
        let mut seen = std::collections::HashMap::new();
        for (node, line) in &servers {
            if let Some(first) = seen.insert(node.name().to_owned(), *line) {
                return Err(at.err(*line, format!("server {:?} already appears on line {first}", node.name())));
            }
        }
        let nodes = NodeSet::new(servers.iter().map(|(n, _)| n.clone()))
            .map_err(|e| at.err(self.line, format!("{} {:?}: {e}", pool_word(kind), self.name)))?;
        // Build once so that a layout the router refuses is reported here, naming the pool.
        spec.build(nodes.clone())
            .map_err(|e| at.err(self.line, format!("{} {:?}: {e}", pool_word(kind), self.name)))?;
        Ok(ProxyConfig { kind, pool: self.name, spec, nodes, notes: self.notes })
    }
}

/// Parses a positive whole number (a weight or id) of at most `max`.
pub(crate) fn whole_number(text: &str, max: u64) -> Option<u64> {
    text.parse::<u64>().ok().filter(|&n| n <= max)
}

/// Whether `text` is an IPv4 or bracketed IPv6 address, optionally with `:port` (a port from 1
/// to 65535), the form every reader hashes as written. `port_required`: the port must be there.
pub(crate) fn check_address(text: &str, port_required: bool) -> std::result::Result<(), String> {
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let Some((v6, after)) = rest.split_once(']') else { return Err(format!("{text:?}: unclosed `[`")) };
        if v6.parse::<std::net::Ipv6Addr>().is_err() {
            return Err(format!("{text:?}: {v6:?} is not an IPv6 address"));
        }
        match after {
            "" => ("", None),
            p if p.starts_with(':') => ("", Some(&p[1..])),
            _ => return Err(format!("{text:?}: expected `:PORT` after `]`")),
        }
    } else {
        match text.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (text, None),
        }
    };
    if !host.is_empty() && host.parse::<std::net::Ipv4Addr>().is_err() {
        return Err(format!(
            "{text:?}: {host:?} is not an IP address (hostnames are not resolved here: write the address)"
        ));
    }
    match port {
        Some(p) if !p.bytes().all(|b| b.is_ascii_digit()) || !matches!(p.parse::<u32>(), Ok(1..=65535)) => {
            Err(format!("{text:?}: port {p:?} is not a number from 1 to 65535"))
        }
        None if port_required => Err(format!("{text:?}: no port (write HOST:PORT)")),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_kinds() {
        assert_eq!(ConfigKind::detect("http {\n upstream u {\n server 1.2.3.4;\n }\n}\n"), Some(ConfigKind::Nginx));
        assert_eq!(ConfigKind::detect("backend b\n    server s1 1.2.3.4:80\n"), Some(ConfigKind::Haproxy));
        assert_eq!(ConfigKind::detect("alpha:\n  servers:\n   - 1.2.3.4:1:1\n"), Some(ConfigKind::Twemproxy));
        assert_eq!(ConfigKind::detect("nothing here"), None);
        assert_eq!(ConfigKind::from_name("nginx").unwrap(), ConfigKind::Nginx);
        assert!(ConfigKind::from_name("envoy").is_err());
    }

    #[test]
    fn addresses() {
        assert!(check_address("127.0.0.1:80", true).is_ok());
        assert!(check_address("127.0.0.1", false).is_ok());
        assert!(check_address("[::1]:80", true).is_ok());
        assert!(check_address("127.0.0.1", true).unwrap_err().contains("no port"));
        assert!(check_address("127.0.0.1:0", true).unwrap_err().contains("port"));
        assert!(check_address("127.0.0.1:99999", true).is_err());
        assert!(check_address("cache.local:80", true).unwrap_err().contains("hostnames are not resolved"));
        assert!(check_address("1.2.3:80", true).is_err());
    }

    #[test]
    fn unrecognised_file() {
        let err = ProxyConfig::parse("hello", "x.conf", None, None).unwrap_err().to_string();
        assert!(err.contains("x.conf: not a twemproxy, nginx or HAProxy configuration"), "{err}");
    }
}

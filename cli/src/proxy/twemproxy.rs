//! nutcracker (twemproxy 0.5) YAML pools.
//!
//! A small hand-written reader of the YAML subset nutcracker itself accepts — a mapping of pool
//! names to mappings of scalar options, plus the `servers:` sequence of scalars — rather than a
//! YAML crate: it gives every error its line number, keeps the crate free of a YAML dependency
//! (serde_yaml is deprecated), and anything outside that subset is refused by nutcracker anyway.
//!
//! Placement options: `hash` (`md5` and `fnv1a_64`, twemproxy's default, are modelled; the
//! others are refused), `distribution` (`ketama`, the default; `modula` and `random` refused),
//! `hash_tag` (refused), server `weight` and `name`. `auto_eject_hosts: true` is noted: an
//! ejected server leaves the continuum until it is retried, which is not modelled.

use super::reader::{check_address, whole_number, Place, RawPool};
use hashroute::KetamaVariant;
use hashroute::KeyHasher;
use hashroute::Node;
use hashroute::Result;
use hashroute::{Algorithm, RouterSpec};

/// Strips a `#` comment (at the start or after whitespace) and trailing blanks.
fn strip_comment(line: &str) -> &str {
    let mut prev_blank = true;
    for (i, c) in line.char_indices() {
        if c == '#' && prev_blank {
            return line[..i].trim_end();
        }
        prev_blank = c.is_whitespace();
    }
    line.trim_end()
}

fn unquote(v: &str) -> &str {
    let v = v.trim();
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return &v[1..v.len() - 1];
        }
    }
    v
}

/// Every pool of the file, each with its own error if it has one.
pub(crate) fn pools(text: &str, at: &Place<'_>) -> Result<Vec<RawPool>> {
    let mut pools: Vec<(RawPool, PoolOptions)> = Vec::new();
    let mut in_servers = false;
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = strip_comment(raw);
        if line.trim().is_empty() || line.trim() == "---" {
            continue;
        }
        if line.contains('\t') {
            return Err(at.err(line_no, "tab in indentation (YAML indents with spaces)"));
        }
        let indent = line.len() - line.trim_start().len();
        let body = line.trim();
        if indent == 0 {
            let Some(name) = body.strip_suffix(':') else {
                return Err(at.err(line_no, format!("expected `POOL_NAME:` at the start of a line, found {body:?}")));
            };
            pools.push((RawPool::new(unquote(name), line_no), PoolOptions::default()));
            in_servers = false;
            continue;
        }
        let Some((pool, options)) = pools.last_mut() else {
            return Err(at.err(line_no, "indented line before any `POOL_NAME:`"));
        };
        if let Some(item) = body.strip_prefix("- ").or_else(|| (body == "-").then_some("")) {
            if !in_servers {
                return Err(at.err(line_no, "list item outside `servers:`"));
            }
            match server(unquote(item), line_no, at) {
                Ok(node) => pool.servers.push((node, line_no)),
                Err(e) => pool.fail(e),
            }
            continue;
        }
        let Some((key, value)) = body.split_once(':') else {
            return Err(at.err(line_no, format!("expected `KEY: VALUE`, found {body:?}")));
        };
        let (key, value) = (key.trim(), unquote(value));
        in_servers = key == "servers";
        if in_servers && !value.is_empty() {
            return Err(at.err(line_no, "`servers:` takes a list on the following lines (`- HOST:PORT:WEIGHT [NAME]`)"));
        }
        if let Err(e) = options.set(key, value, line_no, at, &mut pool.notes) {
            pool.fail(e);
        }
    }
    Ok(pools
        .into_iter()
        .map(|(mut pool, options)| {
            pool.spec = Some(options.spec());
            pool
        })
        .collect())
}

/// The placement options of one pool.
#[derive(Default)]
struct PoolOptions {
    hash: Option<KeyHasher>,
}

impl PoolOptions {
    fn set(&mut self, key: &str, value: &str, line: usize, at: &Place<'_>, notes: &mut Vec<String>) -> Result<()> {
        match key {
            "hash" => {
                self.hash = Some(match value {
                    "md5" => KeyHasher::Md5,
                    "fnv1a_64" => KeyHasher::Fnv1a32,
                    other => {
                        return Err(at.err(line, format!("hash: {other} is not modelled (md5 and fnv1a_64 are)")));
                    }
                })
            }
            "distribution" if value != "ketama" => {
                return Err(at.err(line, format!("distribution: {value} is not modelled (ketama is)")));
            }
            "hash_tag" => return Err(at.err(line, "hash_tag is not modelled (it changes which bytes are hashed)")),
            "auto_eject_hosts" if value == "true" => notes.push(format!(
                "line {line}: auto_eject_hosts: true: routes are those of a pool with no server ejected"
            )),
            _ => {}
        }
        Ok(())
    }

    fn spec(&self) -> RouterSpec {
        // twemproxy's default hash is fnv1a_64 (CONF_DEFAULT_HASH).
        RouterSpec::new(Algorithm::Ketama)
            .with_ketama_variant(KetamaVariant::Twemproxy)
            .with_hasher(self.hash.unwrap_or(KeyHasher::Fnv1a32))
    }
}

/// `HOST:PORT:WEIGHT [NAME]` as a node named NAME, else `HOST:PORT`.
fn server(item: &str, line: usize, at: &Place<'_>) -> Result<Node> {
    let mut fields = item.split_whitespace();
    let addr = fields.next().unwrap_or("");
    let name = fields.next();
    if fields.next().is_some() {
        return Err(at.err(line, format!("server {item:?}: expected `HOST:PORT:WEIGHT [NAME]`")));
    }
    let Some((host_port, weight)) = addr.rsplit_once(':') else {
        return Err(at.err(line, format!("server {addr:?}: expected `HOST:PORT:WEIGHT`")));
    };
    if addr.starts_with('/') {
        return Err(at.err(line, format!("server {addr:?}: unix sockets are not modelled")));
    }
    let weight = whole_number(weight, u64::from(u32::MAX))
        .filter(|&w| w > 0)
        .ok_or_else(|| at.err(line, format!("server {addr:?}: weight {weight:?} is not a whole number from 1 up")))?;
    check_address(host_port, true).map_err(|e| at.err(line, format!("server address {e}")))?;
    let node_name = match name {
        Some(n) => {
            // A name is hashed as written; one ending in `:digits` would be split like an address.
            let digits = n.bytes().rev().take_while(u8::is_ascii_digit).count();
            if digits > 0 && n[..n.len() - digits].ends_with(':') {
                return Err(at.err(line, format!("server name {n:?} ends in `:PORT`: not modelled")));
            }
            n
        }
        None => host_port,
    };
    Ok(Node::new(node_name).with_weight(weight as f64))
}

#[cfg(test)]
mod tests {
    use crate::proxy::{ConfigKind, ProxyConfig};
    use hashroute::Router;

    const TWO: &str = "# pools\nalpha:\n  listen: 127.0.0.1:22121\n  hash: md5  # the hash\n  distribution: ketama\n  \
                       servers:\n   - 127.0.0.1:11211:1\n   - 127.0.0.1:11212:2 beta\n\nbeta:\n  hash: crc32\n  servers:\n   - \
                       127.0.0.1:11213:1\n";

    #[test]
    fn reads_pools_and_names() {
        let c = ProxyConfig::parse(TWO, "n.yml", None, Some("alpha")).unwrap();
        assert_eq!(c.kind, ConfigKind::Twemproxy);
        assert_eq!(c.nodes.name(hashroute::NodeId::from_index(1)), "beta");
        assert_eq!(c.nodes.weight(hashroute::NodeId::from_index(1)), 2.0);
        let r = c.router().unwrap();
        assert_eq!(r.algorithm().name(), "ketama");
        // Another pool's unsupported option is reported only when that pool is asked for.
        let err = ProxyConfig::parse(TWO, "n.yml", None, Some("beta")).unwrap_err().to_string();
        assert!(err.contains("n.yml:11: hash: crc32 is not modelled"), "{err}");
        // The library names no CLI flag: the variant tells the caller what to ask for.
        let err = ProxyConfig::parse(TWO, "n.yml", None, None).unwrap_err();
        assert!(matches!(&err, crate::proxy::ConfigError::PoolNeeded { names, .. } if names == &["alpha", "beta"]));
        let err = err.to_string();
        assert!(err.ends_with("2 pools (alpha, beta): name one") && !err.contains("--"), "{err}");
        let err = ProxyConfig::parse(TWO, "n.yml", None, Some("gamma")).unwrap_err().to_string();
        assert!(err.contains("no pool named \"gamma\""), "{err}");
    }

    #[test]
    fn refuses_what_it_does_not_model() {
        let cases = [
            ("p:\n  distribution: modula\n  servers:\n   - 1.2.3.4:1:1\n", "n.yml:2: distribution: modula"),
            ("p:\n  hash_tag: \"{}\"\n  servers:\n   - 1.2.3.4:1:1\n", "n.yml:2: hash_tag"),
            ("p:\n  servers:\n   - 1.2.3.4:1:x\n", "n.yml:3: server \"1.2.3.4:1:x\": weight"),
            ("p:\n  servers:\n   - 1.2.3.4:1:0\n", "n.yml:3:"),
            ("p:\n  servers:\n   - cache:1:1\n", "n.yml:3: server address \"cache:1\""),
            ("p:\n  servers:\n   - 1.2.3.4:1:1 a b\n", "n.yml:3:"),
            (
                "p:\n  servers:\n   - 1.2.3.4:1:1\n   - 1.2.3.4:1:2\n",
                "n.yml:4: server \"1.2.3.4:1\" already appears on line 3",
            ),
            ("p:\n\tservers:\n", "n.yml:2: tab"),
            ("  servers:\n", "n.yml:1: indented line"),
            ("p:\n  servers:\n", "n.yml:1: pool \"p\" has no server"),
        ];
        for (text, want) in cases {
            let err = ProxyConfig::parse(text, "n.yml", Some(ConfigKind::Twemproxy), None).unwrap_err().to_string();
            assert!(err.contains(want), "{text:?}: {err}");
            assert!(!err.contains('\n'));
        }
    }

    #[test]
    fn default_hash_is_fnv1a_64() {
        let c = ProxyConfig::parse("p:\n  servers:\n   - 1.2.3.4:1:1\n", "n.yml", None, None).unwrap();
        assert_eq!(c.spec.hasher, Some(hashroute::KeyHasher::Fnv1a32));
    }
}

//! HAProxy `backend` and `listen` sections (2.6).
//!
//! Placement options: `balance uri` with `whole` (`len`, `depth` and `path-only` are refused;
//! another `balance` algorithm is refused), `hash-type consistent` with its function `sdbm`
//! (alone: no avalanche; with `avalanche`, or no function at all: sdbm then avalanche; the other
//! functions and `map-based`, HAProxy's default, are refused), `hash-balance-factor` (0 only),
//! server `id`, `weight` (0 leaves the server out), `backup` and `disabled` (left out: they own
//! no key while the active servers are up). `default-server` parameters and a `defaults`
//! section's `balance` and `hash-type` apply as HAProxy applies them. `use-server` and `stick`
//! rules, which override the hash, are refused.

use super::reader::{whole_number, Place, RawPool};
use hashroute::Haproxy;
use hashroute::KeyHasher;
use hashroute::Node;
use hashroute::{Algorithm, RouterSpec};
use hashroute::{Error, Result};

/// Section keywords: a line starting with one ends the section before it.
const SECTIONS: &[&str] = &[
    "global",
    "defaults",
    "frontend",
    "backend",
    "listen",
    "peers",
    "resolvers",
    "userlist",
    "cache",
    "program",
    "http-errors",
    "ring",
    "mailers",
];

/// The placement lines of a section (`balance`, `hash-type`, `hash-balance-factor`), as
/// `(words, line)`, and the `default-server` parameters.
#[derive(Clone, Default)]
struct Settings {
    balance: Option<(Vec<String>, usize)>,
    hash_type: Option<(Vec<String>, usize)>,
    default_server: Vec<String>,
}

/// Every backend (and listen section) of the file.
pub(crate) fn pools(text: &str, at: &Place<'_>) -> Result<Vec<RawPool>> {
    let mut pools = Vec::new();
    let mut defaults = Settings::default();
    // The section being read: its kind, and for a backend its pool and settings.
    let mut current: Option<(String, Option<(RawPool, Settings)>)> = None;
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.split('#').next().unwrap_or("");
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(&first) = words.first() else { continue };
        if SECTIONS.contains(&first) {
            finish(current.take(), &mut pools, at);
            let backend = matches!(first, "backend" | "listen");
            let pool = if backend {
                let Some(name) = words.get(1) else {
                    return Err(at.err(line_no, format!("`{first}` without a name")));
                };
                Some((RawPool::new(name, line_no), defaults.clone()))
            } else {
                None
            };
            current = Some((first.to_owned(), pool));
            if first == "defaults" {
                defaults = Settings::default();
            }
            continue;
        }
        match &mut current {
            None => return Err(at.err(line_no, format!("{first:?} outside any section"))),
            Some((kind, None)) if kind == "defaults" => {
                setting(&mut defaults, &words, line_no);
            }
            Some((_, None)) => {}
            Some((_, Some((pool, settings)))) => {
                if let Err(e) = backend_line(pool, settings, &words, line_no, at) {
                    pool.fail(e);
                }
            }
        }
    }
    finish(current, &mut pools, at);
    Ok(pools)
}

/// Records a placement setting of a `defaults` section or a backend.
fn setting(settings: &mut Settings, words: &[&str], line: usize) -> bool {
    let owned = || (words[1..].iter().map(|w| (*w).to_owned()).collect(), line);
    match words[0] {
        "balance" => settings.balance = Some(owned()),
        "hash-type" => settings.hash_type = Some(owned()),
        "default-server" => settings.default_server = owned().0,
        _ => return false,
    }
    true
}

fn backend_line(
    pool: &mut RawPool,
    settings: &mut Settings,
    words: &[&str],
    line: usize,
    at: &Place<'_>,
) -> Result<()> {
    if setting(settings, words, line) {
        return Ok(());
    }
    match words[0] {
        "server" => server(pool, settings, words, line, at),
        "hash-balance-factor" if words.get(1) != Some(&"0") => {
            Err(at.err(line, "hash-balance-factor (bounded loads) is not modelled"))
        }
        "server-template" => Err(at.err(line, "server-template is not modelled (list the servers)")),
        "use-server" | "stick" | "stick-table" => {
            Err(at.err(line, format!("`{}` overrides the hash: not modelled", words[0])))
        }
        _ => Ok(()),
    }
}

/// Closes a section: a backend gets its spec (or its error).
fn finish(section: Option<(String, Option<(RawPool, Settings)>)>, pools: &mut Vec<RawPool>, at: &Place<'_>) {
    let Some((_, Some((mut pool, settings)))) = section else { return };
    match spec(&settings, pool.line, at) {
        Ok(s) => pool.spec = Some(s),
        Err(e) => pool.fail(e),
    }
    pools.push(pool);
}

fn spec(settings: &Settings, section_line: usize, at: &Place<'_>) -> Result<RouterSpec> {
    let Some((balance, line)) = &settings.balance else {
        return Err(at.err(section_line, "no `balance uri` (HAProxy's default round robin is not modelled)"));
    };
    let mut whole = false;
    match balance.first().map(String::as_str) {
        Some("uri") => {}
        Some(other) => return Err(at.err(*line, format!("balance {other} is not modelled (balance uri is)"))),
        None => return Err(at.err(*line, "`balance` without an algorithm")),
    }
    for opt in &balance[1..] {
        match opt.as_str() {
            "whole" => whole = true,
            other => return Err(at.err(*line, format!("balance uri option {other:?} is not modelled (whole is)"))),
        }
    }
    let Some((hash_type, line)) = &settings.hash_type else {
        return Err(at.err(section_line, "no `hash-type consistent` (HAProxy's default map-based is not modelled)"));
    };
    let words: Vec<&str> = hash_type.iter().map(String::as_str).collect();
    let hasher = match words.as_slice() {
        ["consistent"] | ["consistent", "sdbm", "avalanche"] => KeyHasher::SdbmAvalanche,
        ["consistent", "sdbm"] => KeyHasher::Sdbm,
        ["map-based", ..] => return Err(at.err(*line, "hash-type map-based is not modelled (consistent is)")),
        ["consistent", f, ..] if *f != "sdbm" => {
            return Err(at.err(*line, format!("hash function {f} is not modelled (sdbm is)")));
        }
        _ => return Err(at.err(*line, format!("hash-type {:?} is not modelled", words.join(" ")))),
    };
    Ok(RouterSpec::new(Algorithm::Haproxy).with_hasher(hasher).with_uri_whole(whole))
}

fn server(pool: &mut RawPool, settings: &Settings, words: &[&str], line: usize, at: &Place<'_>) -> Result<()> {
    let (Some(name), Some(addr)) = (words.get(1), words.get(2)) else {
        return Err(at.err(line, "expected `server NAME ADDRESS [PARAMS]`"));
    };
    // The address does not affect placement (nodes are keyed by id), but a malformed one is
    // refused as HAProxy refuses it.
    let port = addr.rsplit_once(':').map(|(_, p)| p);
    if addr.is_empty() || port.is_some_and(|p| !p.is_empty() && !matches!(p.parse::<u32>(), Ok(1..=65535))) {
        return Err(at.err(line, format!("server {name}: malformed address {addr:?}")));
    }
    let defaults = settings.default_server.iter().map(String::as_str);
    let params: Vec<&str> = defaults.chain(words[3..].iter().copied()).collect();
    let (mut weight, mut id, mut out) = (1u64, None, None);
    let mut i = 0;
    while i < params.len() {
        let value = params.get(i + 1).copied();
        let bad =
            |what: &str| at.err(line, format!("server {name}: {what} {:?} is not a whole number", value.unwrap_or("")));
        match params[i] {
            "weight" => {
                weight = value.and_then(|v| whole_number(v, 256)).ok_or_else(|| bad("weight"))?;
                i += 1;
            }
            "id" => {
                id = Some(value.and_then(|v| whole_number(v, 1 << 20)).filter(|&v| v > 0).ok_or_else(|| bad("id"))?);
                i += 1;
            }
            "backup" => out = Some("backup"),
            "disabled" => out = Some("disabled"),
            _ => {}
        }
        i += 1;
    }
    let reason = out.or((weight == 0).then_some("weight 0"));
    if let Some(reason) = reason {
        pool.notes.push(format!("line {line}: server {name} ({reason}) owns no key while the active servers are up"));
        // Its id is still taken: servers without `id` are numbered around it.
    }
    let mut node = Node::new(*name).with_weight(weight.max(1) as f64);
    if let Some(id) = id {
        node = node.with_label(Haproxy::ID_LABEL, id.to_string());
    }
    if reason.is_none() {
        pool.servers.push((node, line));
    } else {
        pool.servers.push((node.with_label(EXCLUDED, "1"), line));
    }
    Ok(())
}

/// Label of a server that keeps its id but owns no key (removed when the pool is finished).
pub(crate) const EXCLUDED: &str = "haproxy-excluded";

/// HAProxy numbers every server, the excluded ones included: pin every id, then drop the
/// excluded servers (so the others keep HAProxy's numbering).
pub(crate) fn pin_ids(servers: Vec<(Node, usize)>) -> std::result::Result<Vec<(Node, usize)>, Error> {
    let explicit: Vec<Option<u32>> =
        servers.iter().map(|(n, _)| n.label(Haproxy::ID_LABEL).and_then(|t| t.parse().ok())).collect();
    let ids = hashroute::Haproxy::assign_ids(&explicit);
    Ok(servers
        .into_iter()
        .zip(ids)
        .filter(|((node, _), _)| node.label(EXCLUDED).is_none())
        .map(|((node, line), id)| (node.with_label(Haproxy::ID_LABEL, id.to_string()), line))
        .collect())
}

#[cfg(test)]
mod tests {
    use crate::proxy::{ConfigKind, ProxyConfig};
    use hashroute::{Haproxy, NodeId};

    const CONF: &str = "global\n    maxconn 256\n\ndefaults\n    mode http\n    hash-type consistent\n\nbackend b1\n    \
                        balance uri\n    server s1 127.0.0.1:18081 weight 1 check\n    server s0 127.0.0.1:18080 weight 0\n    \
                        server s2 127.0.0.1:18082 id 9\n    server s3 127.0.0.1:18083 backup\n    server s4 127.0.0.1:18084\n\n\
                        backend b2\n    balance roundrobin\n    server x 127.0.0.1:1\n";

    #[test]
    fn reads_backends_and_ids() {
        let c = ProxyConfig::parse(CONF, "h.cfg", None, Some("b1")).unwrap();
        assert_eq!(c.kind, ConfigKind::Haproxy);
        let names: Vec<&str> = c.nodes.iter().map(|(_, n)| n.name()).collect();
        assert_eq!(names, ["s1", "s2", "s4"]);
        let ids: Vec<&str> = c.nodes.iter().map(|(_, n)| n.label(Haproxy::ID_LABEL).unwrap()).collect();
        // s0 (weight 0) and s3 (backup) keep their automatic ids 2 and 4 (the counter steps per
        // declared server, past s2's explicit 9 too), so s4, the fifth server, is 5.
        assert_eq!(ids, ["1", "9", "5"]);
        assert_eq!(c.notes.len(), 2);
        assert_eq!(c.router().unwrap().node_name(NodeId::from_index(0)), "s1");
        let err = ProxyConfig::parse(CONF, "h.cfg", None, Some("b2")).unwrap_err().to_string();
        assert!(err.contains("h.cfg:17: balance roundrobin is not modelled"), "{err}");
    }

    #[test]
    fn refuses_what_it_does_not_model() {
        let wrap = |lines: &str| {
            format!("backend b\n    balance uri\n    hash-type consistent\n{lines}    server s 1.2.3.4:80\n")
        };
        let cases = [
            (wrap("    hash-balance-factor 150\n"), "h.cfg:4: hash-balance-factor"),
            (wrap("    hash-type consistent djb2\n"), "h.cfg:4: hash function djb2"),
            (wrap("    hash-type map-based\n"), "h.cfg:4: hash-type map-based"),
            (wrap("    balance uri len 10\n"), "h.cfg:4: balance uri option \"len\""),
            (wrap("    server t 1.2.3.4:99999\n"), "h.cfg:4: server t: malformed address"),
            (wrap("    server t 1.2.3.4:80 weight x\n"), "h.cfg:4: server t: weight \"x\""),
            (wrap("    server t 1.2.3.4:80 weight 300\n"), "h.cfg:4: server t: weight \"300\""),
            (wrap("    use-server s if TRUE\n"), "h.cfg:4: `use-server`"),
            (wrap("    server-template w 3 1.2.3.4:80\n"), "h.cfg:4: server-template"),
            (wrap("    server s 1.2.3.5:80\n"), "h.cfg:5: server \"s\" already appears on line 4"),
            ("backend b\n    server s 1.2.3.4:80\n".to_owned(), "h.cfg:1: no `balance uri`"),
            ("backend b\n    balance uri\n    server s 1.2.3.4:80\n".to_owned(), "h.cfg:1: no `hash-type consistent`"),
            ("    balance uri\n".to_owned(), "h.cfg:1: \"balance\" outside any section"),
        ];
        for (text, want) in cases {
            let err = ProxyConfig::parse(&text, "h.cfg", Some(ConfigKind::Haproxy), None).unwrap_err().to_string();
            assert!(err.contains(want), "{text:?}: {err}");
        }
        let c = ProxyConfig::parse(&wrap("    balance uri whole\n"), "h.cfg", None, None).unwrap();
        assert_eq!(c.spec.uri_whole, Some(true));
        let c = ProxyConfig::parse(&wrap("    hash-type consistent sdbm\n"), "h.cfg", None, None).unwrap();
        assert_eq!(c.spec.hasher, Some(hashroute::KeyHasher::Sdbm));
    }
}

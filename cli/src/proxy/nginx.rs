//! nginx `upstream NAME { … }` blocks.
//!
//! Placement options: `hash KEY consistent` (required: `hash` without `consistent`, `ip_hash`,
//! `least_conn`, `random` and round robin are refused), server `weight=`, `down` (left out:
//! nginx skips its points, which is the same as not having them). `backup` is refused (nginx
//! itself refuses it with `hash`); `max_fails`, `fail_timeout`, `max_conns` and `slow_start` are
//! noted (they act only on failures). Servers must be IP addresses (with or without a port) or
//! `unix:` paths: nginx resolves a hostname to its addresses and spreads that server's keys
//! over them, which is not modelled, so a hostname is refused.
//!
//! Only the file given is read: an `upstream` in a file pulled in with `include` is not seen
//! (point `--from-config` at the file that holds the block).

use super::reader::{check_address, whole_number, Place, RawPool};
use hashroute::Node;
use hashroute::Result;
use hashroute::{Algorithm, RouterSpec};

/// One token with its line: a word, or one of `;`, `{`, `}`.
struct Token<'a> {
    text: &'a str,
    line: usize,
}

fn tokenize<'a>(text: &'a str, at: &Place<'_>) -> Result<Vec<Token<'a>>> {
    let bytes = text.as_bytes();
    let (mut out, mut i, mut line) = (Vec::new(), 0usize, 1usize);
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                line += 1;
                i += 1;
            }
            b if b.is_ascii_whitespace() => i += 1,
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b';' | b'{' | b'}' => {
                out.push(Token { text: &text[i..i + 1], line });
                i += 1;
            }
            q @ (b'"' | b'\'') => {
                let start = i + 1;
                let first_line = line;
                i = start;
                while i < bytes.len() && bytes[i] != q {
                    if bytes[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
                if i >= bytes.len() {
                    return Err(at.err(first_line, "unterminated quoted string"));
                }
                out.push(Token { text: &text[start..i], line: first_line });
                i += 1;
            }
            _ => {
                let start = i;
                while i < bytes.len() && !bytes[i].is_ascii_whitespace() && !matches!(bytes[i], b';' | b'{' | b'}') {
                    i += 1;
                }
                out.push(Token { text: &text[start..i], line });
            }
        }
    }
    Ok(out)
}

/// Every `upstream` block of the file.
pub(crate) fn pools(text: &str, at: &Place<'_>) -> Result<Vec<RawPool>> {
    let tokens = tokenize(text, at)?;
    let mut pools = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        match t.text {
            "{" => depth += 1,
            "}" => {
                depth = depth.checked_sub(1).ok_or_else(|| at.err(t.line, "unexpected `}`"))?;
            }
            "upstream" if i + 2 < tokens.len() && tokens[i + 2].text == "{" => {
                let (pool, next) = upstream(&tokens, i, at)?;
                pools.push(pool);
                i = next;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    if depth != 0 {
        return Err(at.err(tokens.last().map_or(1, |t| t.line), "unexpected end of file: missing `}`"));
    }
    Ok(pools)
}

/// Reads the `upstream NAME {` block starting at token `start`; returns it and the index after
/// its `}`.
fn upstream(tokens: &[Token<'_>], start: usize, at: &Place<'_>) -> Result<(RawPool, usize)> {
    let mut pool = RawPool::new(tokens[start + 1].text, tokens[start].line);
    let mut hash: Option<usize> = None;
    let mut i = start + 3;
    loop {
        let Some(first) = tokens.get(i) else {
            return Err(at.err(tokens[start].line, format!("upstream {:?}: missing `}}`", pool.name)));
        };
        if first.text == "}" {
            i += 1;
            break;
        }
        if matches!(first.text, ";" | "{") {
            // A statement needs a name: `upstream u { ; }` (found by the parsers fuzz target;
            // the argument slice below would start past its end).
            return Err(at.err(first.line, format!("unexpected `{}` in upstream {:?}", first.text, pool.name)));
        }
        let end = (i..tokens.len())
            .find(|&j| matches!(tokens[j].text, ";" | "{" | "}"))
            .filter(|&j| tokens[j].text == ";")
            .ok_or_else(|| at.err(first.line, format!("`{}`: missing `;`", first.text)))?;
        let args: Vec<&str> = tokens[i + 1..end].iter().map(|t| t.text).collect();
        if let Err(e) = directive(&mut pool, first.text, &args, first.line, at, &mut hash) {
            pool.fail(e);
        }
        i = end + 1;
    }
    if hash.is_none() {
        pool.fail(at.err(
            pool.line,
            format!("upstream {:?} has no `hash KEY consistent;` (round robin is not modelled)", pool.name),
        ));
    }
    pool.spec = Some(RouterSpec::new(Algorithm::Nginx));
    Ok((pool, i))
}

fn directive(
    pool: &mut RawPool,
    name: &str,
    args: &[&str],
    line: usize,
    at: &Place<'_>,
    hash: &mut Option<usize>,
) -> Result<()> {
    match name {
        "hash" => match args {
            [key, "consistent"] => {
                *hash = Some(line);
                if *key != "$request_uri" {
                    pool.notes.push(format!("line {line}: nginx hashes {key}: give its value as the key"));
                }
            }
            [_] => return Err(at.err(line, "`hash` without `consistent` is not modelled")),
            _ => return Err(at.err(line, "expected `hash KEY consistent;`")),
        },
        "ip_hash" | "least_conn" | "random" | "least_time" | "sticky" => {
            return Err(at.err(line, format!("`{name}` is not modelled (only `hash KEY consistent`)")));
        }
        "server" => server(pool, args, line, at)?,
        _ => {}
    }
    Ok(())
}

fn server(pool: &mut RawPool, args: &[&str], line: usize, at: &Place<'_>) -> Result<()> {
    let Some((&addr, params)) = args.split_first() else {
        return Err(at.err(line, "`server` without an address"));
    };
    if !addr.starts_with("unix:") {
        check_address(addr, false).map_err(|e| at.err(line, format!("server address {e}")))?;
    }
    let mut weight = 1u64;
    let mut down = false;
    for &p in params {
        let (key, value) = p.split_once('=').unwrap_or((p, ""));
        match key {
            "weight" => {
                weight = whole_number(value, 1_000_000).filter(|&w| w > 0).ok_or_else(|| {
                    at.err(line, format!("server {addr}: weight {value:?} is not a whole number from 1 up"))
                })?;
            }
            "down" => down = true,
            "backup" => return Err(at.err(line, format!("server {addr}: `backup` (nginx refuses it with `hash`)"))),
            "max_fails" | "fail_timeout" | "max_conns" | "slow_start" => {
                pool.notes.push(format!("line {line}: server {addr}: {key} ignored (acts only on failures)"));
            }
            "resolve" | "service" => return Err(at.err(line, format!("server {addr}: `{key}` is not modelled"))),
            _ => return Err(at.err(line, format!("server {addr}: unknown parameter {p:?}"))),
        }
    }
    if down {
        pool.notes.push(format!("line {line}: server {addr} is down: it owns no key"));
    } else {
        pool.servers.push((Node::new(addr).with_weight(weight as f64), line));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::proxy::{ConfigKind, ProxyConfig};

    const CONF: &str = "http {\n  upstream u1 {\n    hash $request_uri consistent;\n    server 127.0.0.1:18081 \
                        weight=2 max_fails=3;\n    server 127.0.0.1;\n    server 127.0.0.1:18083 down;\n  }\n  \
                        upstream rr { server 127.0.0.1:1; }\n  server { listen 80; location / { proxy_pass http://u1; } \
                        }\n}\n";

    /// Regression (parsers fuzz target): an error quoting a token that spans lines is one line.
    #[test]
    fn an_error_quoting_a_multi_line_token_is_one_line() {
        let text = "upstream u {\n  \" hash $request;\n  server 10.0.0.1:80 10.0 = \"\n}\n";
        let e = ProxyConfig::parse(text, "n.conf", Some(ConfigKind::Nginx), None).unwrap_err().to_string();
        assert!(e.contains("n.conf:") && e.contains("\\n") && !e.contains('\n'), "{e}");
    }

    /// Regression (parsers fuzz target): a statement without a name panicked the reader.
    #[test]
    fn a_statement_without_a_name_is_a_one_line_error() {
        for text in ["upstream u {\n ;\n}\n", "upstream u {\n  hash $request_uri consistent;\n  { }\n}\n"] {
            let e = ProxyConfig::parse(text, "n.conf", Some(ConfigKind::Nginx), None).unwrap_err().to_string();
            assert!(e.contains("n.conf:") && e.contains("unexpected") && !e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn reads_upstreams() {
        let c = ProxyConfig::parse(CONF, "n.conf", None, Some("u1")).unwrap();
        assert_eq!(c.kind, ConfigKind::Nginx);
        assert_eq!(c.nodes.len(), 2, "the down server owns no key");
        assert_eq!(c.nodes.weight(hashroute::NodeId::from_index(0)), 2.0);
        assert_eq!(c.nodes.name(hashroute::NodeId::from_index(1)), "127.0.0.1");
        assert_eq!(c.notes.len(), 2, "{:?}", c.notes);
        let err = ProxyConfig::parse(CONF, "n.conf", None, Some("rr")).unwrap_err().to_string();
        assert!(err.contains("n.conf:8: upstream \"rr\" has no `hash KEY consistent;`"), "{err}");
    }

    #[test]
    fn refuses_what_it_does_not_model() {
        let wrap = |body: &str| format!("upstream u {{\n hash $request_uri consistent;\n{body}\n}}\n");
        let cases = [
            (wrap(" server cache.local:80;"), "n.conf:3: server address \"cache.local:80\""),
            (wrap(" server 127.0.0.1:80 backup;"), "n.conf:3: server 127.0.0.1:80: `backup`"),
            (wrap(" server 127.0.0.1:80 weight=x;"), "n.conf:3: server 127.0.0.1:80: weight \"x\""),
            (wrap(" server 127.0.0.1:80 bogus;"), "unknown parameter"),
            (wrap(" server 127.0.0.1:80"), "n.conf:3: `server`: missing `;`"),
            ("upstream u {\n hash $x;\n server 1.2.3.4;\n}\n".to_owned(), "n.conf:2: `hash` without `consistent`"),
            ("upstream u {\n hash $x consistent;\n ip_hash;\n server 1.2.3.4;\n}\n".to_owned(), "n.conf:3: `ip_hash`"),
            ("upstream u {\n server 1.2.3.4;\n".to_owned(), "missing"),
        ];
        for (text, want) in cases {
            let err = ProxyConfig::parse(&text, "n.conf", Some(ConfigKind::Nginx), None).unwrap_err().to_string();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }
}

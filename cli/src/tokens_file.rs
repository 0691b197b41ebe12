//! `--tokens-file FILE`: a token ring read from a tokens file (`NAME ZONE RACK TOKEN [WEIGHT]`
//! per line, the shape of `nodetool ring`) instead of `--algo` and `--nodes*`, and the reader
//! every token command shares.

use std::path::{Path, PathBuf};

use clap::Args;
use hashroute::{Error, TokenRing};

use crate::failure::Failure;

/// The router flags `--tokens-file` replaces: giving any of them with it is a usage error (the
/// file decides the algorithm, the nodes, their tokens and the hasher).
pub(crate) const REPLACED: [&str; 17] = [
    "algo",
    "vnodes",
    "hash",
    "seed",
    "variant",
    "table_size",
    "probes",
    "capacity",
    "generator",
    "min_ring_size",
    "max_ring_size",
    "tokens_per_node",
    "nodes",
    "nodes_file",
    "buckets",
    "partitions",
    "from_config",
];

/// Where a token ring's explicit tokens come from.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Token ring")]
pub(crate) struct TokensFileArgs {
    /// A token ring (Cassandra's Murmur3Partitioner ring) with the tokens of FILE: one
    /// `NAME ZONE RACK TOKEN [WEIGHT]` per line, `#` comments (the shape of `nodetool ring`;
    /// ZONE is the datacenter); replaces --algo and --nodes*
    #[arg(long, value_name = "FILE", conflicts_with_all = REPLACED)]
    pub(crate) tokens_file: Option<PathBuf>,
}

impl TokensFileArgs {
    /// The ring of `--tokens-file`, when given.
    pub(crate) fn ring(&self) -> Result<Option<TokenRing>, Failure> {
        self.tokens_file.as_deref().map(read_tokens_file).transpose()
    }
}

/// Reads and parses a tokens file. Errors are one line naming the file, and the line for a
/// malformed one: `tokens file PATH:LINE: what is wrong`.
pub(crate) fn read_tokens_file(path: &Path) -> Result<TokenRing, Failure> {
    let context = || format!("tokens file {}", path.display());
    let bytes = std::fs::read(path).map_err(|e| Failure::context(context(), e))?;
    let text = String::from_utf8(bytes).map_err(|_| Failure::context(context(), "not valid UTF-8"))?;
    TokenRing::parse(&text).map_err(|e| file_error(path, e))
}

/// The parser's error as `tokens file PATH:LINE: ...` when it names a line (the kernel's
/// `Malformed("line N: ...")`), else `tokens file PATH: ...`.
fn file_error(path: &Path, err: Error) -> Failure {
    if let Error::Malformed(detail) = &err {
        if let Some((line, rest)) = detail.strip_prefix("line ").and_then(|d| d.split_once(": ")) {
            if !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()) {
                return Failure::msg(format!("tokens file {}:{line}: {rest}", path.display()));
            }
        }
    }
    match err {
        Error::NoNodes => {
            Failure::msg(format!("tokens file {}: no tokens (a token ring needs at least one)", path.display()))
        }
        other => Failure::context(format!("tokens file {}", path.display()), other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(f: Failure) -> String {
        match f {
            Failure::Message(m) => m,
            Failure::BrokenPipe => panic!("not a message"),
        }
    }

    #[test]
    fn line_errors_become_file_colon_line() {
        let path = Path::new("ring.txt");
        let err = TokenRing::parse("a dc1 r1 1\na dc1 r1 x\n").unwrap_err();
        let m = message(file_error(path, err));
        assert!(m.starts_with("tokens file ring.txt:2: token \"x\""), "{m}");
        let m = message(file_error(path, TokenRing::parse("# empty\n").unwrap_err()));
        assert!(m.starts_with("tokens file ring.txt: no tokens"), "{m}");
        let m = message(file_error(path, Error::Malformed("line x: y".into())));
        assert_eq!(m, "tokens file ring.txt: malformed input: line x: y");
    }
}

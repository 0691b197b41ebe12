//! The one error type of the crate.
//!
//! Every failure (a bad endpoint, a store that is down or slow, refused credentials, an answer
//! that is not what etcd sends) is an [`Error`]; the crate never panics on them. Messages are one
//! line: text that comes from the network is quoted with its line breaks and control characters
//! escaped, and cut to [`QUOTE_LIMIT`] characters.

use std::time::Duration;

/// Longest quote of server-provided text kept in an error message, in characters.
pub const QUOTE_LIMIT: usize = 200;

/// Why an etcd operation failed.
///
/// `#[non_exhaustive]`: new failure kinds may be added in minor releases.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An endpoint was not `HOST:PORT` (or `http://HOST:PORT`, `https://HOST:PORT`).
    #[error("invalid etcd endpoint {endpoint:?}: {reason}")]
    InvalidEndpoint {
        /// The endpoint as given.
        endpoint: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// No endpoint could be reached (connection refused, no route, name not found, connect
    /// timeout). Nothing was sent, so nothing was changed.
    #[error("etcd unreachable at {endpoints}: {cause}")]
    Unreachable {
        /// Every endpoint tried, comma-separated.
        endpoints: String,
        /// The last endpoint's failure.
        cause: String,
    },
    /// An established connection dropped (the store stopped, a proxy closed it) before the
    /// answer or stream was complete.
    #[error("connection to etcd at {endpoint} dropped: {cause}")]
    Disconnected {
        /// The endpoint.
        endpoint: String,
        /// What happened.
        cause: String,
    },
    /// An endpoint accepted the request but did not answer in time. For a write
    /// (`outcome_unknown`) the change may or may not have been applied: read before retrying.
    #[error("etcd at {endpoint} did not answer within {after:?}{}", if *outcome_unknown { " (the write may or may not have been applied)" } else { "" })]
    Timeout {
        /// The endpoint that went silent.
        endpoint: String,
        /// The time allowed.
        after: Duration,
        /// Whether a write was sent, so that its outcome is unknown.
        outcome_unknown: bool,
    },
    /// A connection broke after a write was sent: the write may or may not have been applied.
    #[error("connection to etcd at {endpoint} broke during a write (it may or may not have been applied): {cause}")]
    OutcomeUnknown {
        /// The endpoint.
        endpoint: String,
        /// The transport's failure.
        cause: String,
    },
    /// etcd refused the user name or password.
    #[error("etcd refused the credentials of user {user:?}: {message}")]
    AuthFailed {
        /// The user name given.
        user: String,
        /// etcd's reason.
        message: String,
    },
    /// etcd has authentication on and no credentials were given.
    #[error("etcd requires authentication ({message}): give a user name and password")]
    AuthRequired {
        /// etcd's reason.
        message: String,
    },
    /// The user is authenticated but has no permission for the key or operation.
    #[error("etcd denied permission: {message}")]
    PermissionDenied {
        /// etcd's reason.
        message: String,
    },
    /// A revision asked for was compacted away: read the current state again.
    #[error("etcd revision {requested} was compacted{}; read the current state again", compact_revision.map(|c| format!(" (the oldest kept is {c})")).unwrap_or_default())]
    Compacted {
        /// The revision asked for.
        requested: i64,
        /// The compaction revision, when etcd said it.
        compact_revision: Option<i64>,
    },
    /// etcd answered with a gRPC error not covered by a more specific variant.
    #[error("etcd at {endpoint} answered with error code {code}: {message}")]
    Server {
        /// The endpoint that answered.
        endpoint: String,
        /// The gRPC status code (3 invalid argument, 9 failed precondition, 14 unavailable, ...).
        code: i64,
        /// etcd's message.
        message: String,
    },
    /// The endpoint answered an HTTP error without etcd's error body (not an etcd gateway, or a
    /// proxy in between).
    #[error("etcd at {endpoint} answered HTTP {status}: {body}")]
    Http {
        /// The endpoint that answered.
        endpoint: String,
        /// The HTTP status.
        status: u16,
        /// The start of the body, quoted.
        body: String,
    },
    /// The answer was not the JSON etcd's gateway sends (garbage, a missing header, a bad
    /// revision or base64 field, an oversized body).
    #[error("malformed answer from etcd at {endpoint}: {reason}")]
    Malformed {
        /// The endpoint that answered.
        endpoint: String,
        /// What was wrong.
        reason: String,
    },
    /// A compare-and-swap kept conflicting with concurrent writers for all the attempts a
    /// [`Retry`](crate::Retry) allows.
    #[error("{what}: still conflicting with concurrent writers after {attempts} attempts")]
    Conflict {
        /// What was being updated (the key, quoted).
        what: String,
        /// Transactions tried.
        attempts: u32,
    },
    /// A TLS setting could not be used (unreadable CA file, no certificate in it, https without
    /// the `tls` feature).
    #[error("TLS: {0}")]
    Tls(String),
    /// A watch was asked for with a start revision below 0 or options out of range.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

impl Error {
    /// Whether retrying the same call may succeed: a store down or slow, a broken connection, an
    /// overloaded or leaderless cluster (gRPC code 14). Not for refused credentials, bad input or
    /// a malformed answer. Costs nothing.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Unreachable { .. }
            | Error::Disconnected { .. }
            | Error::Timeout { .. }
            | Error::OutcomeUnknown { .. } => true,
            Error::Server { code, .. } => *code == 14,
            _ => false,
        }
    }
}

/// Quotes text from the network for an error message: one line (control characters escaped),
/// at most [`QUOTE_LIMIT`] characters, `…` marking a cut.
pub(crate) fn quote(text: &str) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == QUOTE_LIMIT {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// [`quote`] for bytes that may not be UTF-8 (a key, a garbage body).
pub(crate) fn quote_bytes(bytes: &[u8]) -> String {
    quote(&String::from_utf8_lossy(&bytes[..bytes.len().min(4 * QUOTE_LIMIT)]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_are_one_line_and_bounded() {
        let q = quote("a\nb\r\u{0}c");
        assert_eq!(q, "a\\nb\\r\\u{0}c");
        let long = "x".repeat(QUOTE_LIMIT * 3);
        assert_eq!(quote(&long).chars().count(), QUOTE_LIMIT + 1);
        assert!(!quote_bytes(b"\xff\n\xfe").contains('\n'));
    }

    #[test]
    fn messages_are_one_line() {
        let errors = [
            Error::Timeout { endpoint: "h:1".into(), after: Duration::from_secs(5), outcome_unknown: true },
            Error::Compacted { requested: 3, compact_revision: Some(9) },
            Error::Compacted { requested: 3, compact_revision: None },
            Error::AuthFailed { user: "root".into(), message: quote("bad\npassword") },
        ];
        for e in errors {
            let s = e.to_string();
            assert!(!s.contains('\n'), "{s}");
        }
        assert!(Error::Unreachable { endpoints: "a:1".into(), cause: "refused".into() }.is_transient());
        assert!(!Error::AuthRequired { message: "x".into() }.is_transient());
    }
}

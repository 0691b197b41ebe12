//! The ring layer's errors: [`DecodeError`] for a stored state that is not a valid ring (pure,
//! no etcd involved), [`RingError`] for an operation on a ring in etcd.

use crate::error::quote;

/// Why stored bytes are not a valid ring. One line; text from the store is quoted with control
/// characters escaped. Produced by [`RingState::decode`](crate::RingState::decode) and
/// [`RingState::router`](crate::RingState::router), plain synchronous code that never panics on
/// any input.
///
/// `#[non_exhaustive]`: new checks may add variants.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// Nothing is stored under the prefix.
    #[error("no ring under prefix {prefix:?} (create one with init)")]
    NoRing {
        /// The key prefix, quoted.
        prefix: String,
    },
    /// A key under the prefix that the schema does not have (not `config`, not
    /// `members/NAME`), or a key outside the prefix.
    #[error("unexpected key {key:?} under the ring prefix: {reason}")]
    UnknownKey {
        /// The key, quoted.
        key: String,
        /// Why it is not part of the schema.
        reason: &'static str,
    },
    /// A value that is not the record its key holds (not JSON, a missing or unknown field, a
    /// wrong type, a value out of range).
    #[error("malformed value at {key:?}: {reason}")]
    Malformed {
        /// The key, quoted.
        key: String,
        /// What is wrong, quoted.
        reason: String,
    },
    /// The records do not fit together: a member count or change serial that disagrees with
    /// the config (a change applied in part, or a record written by hand), two members at one
    /// position, tokens where the algorithm takes none.
    #[error("inconsistent ring state: {0}")]
    Inconsistent(String),
    /// No member is routed yet (a new ring, or only staged joins): there is no router to build.
    #[error("the ring has no routed member yet (join one, or activate a staged one with up)")]
    Empty,
    /// The kernel refused to build the stored configuration.
    #[error("the stored ring does not build: {0}")]
    Router(#[from] hashroute::Error),
}

/// Why a ring operation failed. One line. Nothing was changed in etcd unless the variant says
/// the outcome is unknown ([`RingError::Etcd`] with an `outcome_unknown` timeout or
/// [`crate::Error::OutcomeUnknown`]).
///
/// `#[non_exhaustive]`: new failure kinds may be added.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RingError {
    /// etcd failed (unreachable, credentials refused, a timeout, too many conflicts, ...).
    #[error(transparent)]
    Etcd(#[from] crate::Error),
    /// What is stored under the prefix is not a valid ring; nothing was changed.
    #[error("{0}; nothing was changed")]
    Decode(#[from] DecodeError),
    /// `init` found keys under the prefix already.
    #[error("a ring (or other keys) already exists under prefix {prefix:?}; nothing was changed")]
    Exists {
        /// The prefix, quoted.
        prefix: String,
    },
    /// The prefix cannot hold a ring (empty).
    #[error("invalid ring prefix {prefix:?}: {reason}")]
    InvalidPrefix {
        /// The prefix, quoted.
        prefix: String,
        /// Why.
        reason: &'static str,
    },
    /// No member of that name.
    #[error("no member {name:?} in the ring")]
    UnknownMember {
        /// The name, quoted.
        name: String,
    },
    /// A join of a name that is already a member.
    #[error("{name:?} is already a member of the ring")]
    DuplicateMember {
        /// The name, quoted.
        name: String,
    },
    /// A member name, label or token set the schema refuses.
    #[error("invalid member {name:?}: {reason}")]
    InvalidMember {
        /// The name, quoted.
        name: String,
        /// Why.
        reason: String,
    },
    /// A state change that does not apply to the member's state (draining a joining member, ...).
    #[error("member {name:?} is {state}: {reason}")]
    InvalidTransition {
        /// The name, quoted.
        name: String,
        /// Its current state.
        state: crate::MemberState,
        /// What cannot be done.
        reason: &'static str,
    },
    /// The configuration cannot be stored (an algorithm whose routes depend on the history of
    /// changes rather than on the member list).
    #[error("cannot store this ring: {0}")]
    Unstorable(String),
    /// A change was sent and its answer lost (a timeout, a broken connection, a leader
    /// election), and etcd could not be asked back within the store's time bound: the change may
    /// or may not have been applied (never twice, never in part). Read the ring, or run the change
    /// again with the same [`ChangeId`](crate::ChangeId) to settle it.
    #[error("{what}: etcd did not confirm the change within {bound:?}, it may or may not have been applied ({cause})")]
    Unresolved {
        /// The change and the ring, as in conflict messages.
        what: String,
        /// The store's time bound.
        bound: std::time::Duration,
        /// The last failure.
        cause: crate::Error,
    },
    /// An operation kept failing in ways that may clear (no member answered, no leader) until
    /// the store's time bound ran out; nothing was changed.
    #[error("{what}: gave up after {attempts} attempts in {bound:?}, nothing was changed: {cause}")]
    GaveUp {
        /// The operation and the ring.
        what: String,
        /// Attempts made.
        attempts: u32,
        /// The store's time bound.
        bound: std::time::Duration,
        /// The last failure.
        cause: crate::Error,
    },
    /// The kernel refused the change (the last live node, an unsupported removal, weights on an
    /// algorithm without them, a token clash, ...); nothing was changed.
    #[error("{0}; nothing was changed")]
    Refused(hashroute::Error),
}

impl RingError {
    /// Whether trying the same operation again may succeed (etcd down or slow, too many
    /// conflicting writers). Costs nothing.
    pub fn is_transient(&self) -> bool {
        match self {
            RingError::Etcd(e) => e.is_transient() || matches!(e, crate::Error::Conflict { .. }),
            RingError::Unresolved { .. } | RingError::GaveUp { .. } => true,
            _ => false,
        }
    }
}

/// Bytes from the store quoted for a message: one line, bounded.
pub(crate) fn quote_key(bytes: &[u8]) -> String {
    crate::error::quote_bytes(bytes)
}

/// Text quoted for a message: one line, bounded.
pub(crate) fn quote_text(text: &str) -> String {
    quote(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_one_line() {
        let errors = [
            RingError::Decode(DecodeError::Malformed { key: quote_key(b"a\nb"), reason: quote_text("x\ny") }),
            RingError::Exists { prefix: quote_text("p\n") },
            RingError::Refused(hashroute::Error::LastLiveNode { node: "a".into() }),
            RingError::Decode(DecodeError::Empty),
        ];
        for e in errors {
            assert!(!e.to_string().contains('\n'), "{e}");
        }
        assert!(RingError::Etcd(crate::Error::Conflict { what: "k".into(), attempts: 3 }).is_transient());
        assert!(!RingError::UnknownMember { name: "a".into() }.is_transient());
    }
}

//! The one error type of the crate.
//!
//! Every data-dependent problem (an empty node set, a bad weight, a malformed nodes file, asking
//! for more replicas than there are nodes) comes back as an [`Error`]; the library never panics on
//! them. Messages are one line, name the offending value, and say what would be accepted.

/// Why a router could not be built, changed or queried.
///
/// The enum is `#[non_exhaustive]`: new algorithms may add variants in minor releases.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The node set was empty; every router needs at least one node to answer.
    NoNodes,
    /// A node name was the empty string.
    EmptyNodeName,
    /// Two nodes had the same name; names identify nodes, so they must be unique.
    DuplicateNode {
        /// The repeated name.
        name: String,
    },
    /// A weight was zero, negative, NaN or infinite.
    InvalidWeight {
        /// The node the weight was given for.
        node: String,
        /// The rejected weight.
        weight: f64,
    },
    /// A virtual-node count was 0 or above the cap.
    InvalidVnodes {
        /// The rejected count.
        vnodes: u64,
        /// The largest accepted count.
        max: u32,
    },
    /// The router would hold more points than the documented cap.
    TooManyPoints {
        /// Points the configuration asked for.
        points: u64,
        /// The cap.
        max: u64,
    },
    /// A bucket count of 0 was given to jump hash.
    ZeroBuckets,
    /// More replicas were asked for than the router has nodes.
    TooManyReplicas {
        /// Replicas asked for.
        requested: usize,
        /// Distinct nodes available.
        available: usize,
    },
    /// Marking this node down would leave no live node to route to.
    LastLiveNode {
        /// The node that was to be marked down.
        node: String,
    },
    /// A node name that the router does not know.
    UnknownNode {
        /// The name that was looked up.
        name: String,
    },
    /// The algorithm cannot do what was asked (e.g. a preference list for Redis slots).
    Unsupported {
        /// The algorithm's name, as in [`Router::algorithm`](crate::Router::algorithm).
        algorithm: &'static str,
        /// What was asked.
        operation: &'static str,
    },
    /// A numeric or structural parameter was out of range (table size not prime, 0 probes, …).
    InvalidParameter {
        /// The parameter's name, as a user would spell it.
        name: &'static str,
        /// What is wrong and what would be accepted.
        reason: String,
    },
    /// Malformed textual input: a nodes file, a key in hex, a config file. The message says
    /// where (line number) and what.
    Malformed(String),
    /// A placement policy (e.g. strict spread across zones) cannot be satisfied.
    Placement(String),
}

// Written by hand rather than derived (thiserror): the kernel's default build pulls no
// proc-macro crate.
impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::NoNodes => f.write_str("no nodes: a router needs at least one node"),
            Error::EmptyNodeName => f.write_str("empty node name: every node needs a non-empty name"),
            Error::DuplicateNode { name } => write!(f, "duplicate node name {name:?}: node names must be unique"),
            Error::InvalidWeight { weight, node } => {
                write!(f, "invalid weight {weight} for node {node:?}: weights must be finite and greater than 0")
            }
            Error::InvalidVnodes { vnodes, max } => {
                write!(f, "invalid vnode count {vnodes}: must be between 1 and {max}")
            }
            Error::TooManyPoints { points, max } => write!(
                f,
                "too many points: {points} exceeds the cap of {max} (lower the vnode count or the weights' spread)"
            ),
            Error::ZeroBuckets => f.write_str("bucket count must be at least 1"),
            Error::TooManyReplicas { requested, available } => {
                write!(f, "asked for {requested} replicas but the router has only {available} nodes")
            }
            Error::LastLiveNode { node } => write!(f, "cannot mark {node:?} down: it is the last live node"),
            Error::UnknownNode { name } => write!(f, "unknown node {name:?}"),
            Error::Unsupported { algorithm, operation } => write!(f, "{algorithm} does not support {operation}"),
            Error::InvalidParameter { name, reason } => write!(f, "invalid {name}: {reason}"),
            Error::Malformed(detail) => write!(f, "malformed input: {detail}"),
            Error::Placement(detail) => write!(f, "placement policy cannot be met: {detail}"),
        }
    }
}

impl std::error::Error for Error {}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

//! The one error type of the crate.
//!
//! Every data-dependent problem (an empty node set, a bad weight, a malformed nodes file, asking
//! for more replicas than there are nodes) comes back as an [`Error`]; the library never panics on
//! them. Messages are one line, name the offending value, and say what would be accepted.

/// Why a router could not be built, changed or queried.
///
/// The enum is `#[non_exhaustive]`: new algorithms may add variants in minor releases.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The node set was empty; every router needs at least one node to answer.
    #[error("no nodes: a router needs at least one node")]
    NoNodes,
    /// A node name was the empty string.
    #[error("empty node name: every node needs a non-empty name")]
    EmptyNodeName,
    /// Two nodes had the same name; names identify nodes, so they must be unique.
    #[error("duplicate node name {name:?}: node names must be unique")]
    DuplicateNode {
        /// The repeated name.
        name: String,
    },
    /// A weight was zero, negative, NaN or infinite.
    #[error("invalid weight {weight} for node {node:?}: weights must be finite and greater than 0")]
    InvalidWeight {
        /// The node the weight was given for.
        node: String,
        /// The rejected weight.
        weight: f64,
    },
    /// A virtual-node count was 0 or above the cap.
    #[error("invalid vnode count {vnodes}: must be between 1 and {max}")]
    InvalidVnodes {
        /// The rejected count.
        vnodes: u64,
        /// The largest accepted count.
        max: u32,
    },
    /// The router would hold more points than the documented cap.
    #[error("too many points: {points} exceeds the cap of {max} (lower the vnode count or the weights' spread)")]
    TooManyPoints {
        /// Points the configuration asked for.
        points: u64,
        /// The cap.
        max: u64,
    },
    /// A bucket count of 0 was given to jump hash.
    #[error("bucket count must be at least 1")]
    ZeroBuckets,
    /// More replicas were asked for than the router has nodes.
    #[error("asked for {requested} replicas but the router has only {available} nodes")]
    TooManyReplicas {
        /// Replicas asked for.
        requested: usize,
        /// Distinct nodes available.
        available: usize,
    },
    /// Marking this node down would leave no live node to route to.
    #[error("cannot mark {node:?} down: it is the last live node")]
    LastLiveNode {
        /// The node that was to be marked down.
        node: String,
    },
    /// A node name that the router does not know.
    #[error("unknown node {name:?}")]
    UnknownNode {
        /// The name that was looked up.
        name: String,
    },
    /// The algorithm cannot do what was asked (e.g. a preference list for Redis slots).
    #[error("{algorithm} does not support {operation}")]
    Unsupported {
        /// The algorithm's name, as in [`Router::algorithm`](crate::Router::algorithm).
        algorithm: &'static str,
        /// What was asked.
        operation: &'static str,
    },
    /// A numeric or structural parameter was out of range (table size not prime, 0 probes, …).
    #[error("invalid {name}: {reason}")]
    InvalidParameter {
        /// The parameter's name, as a user would spell it.
        name: &'static str,
        /// What is wrong and what would be accepted.
        reason: String,
    },
    /// Malformed textual input: a nodes file, a key in hex, a config file. The message says
    /// where (line number) and what.
    #[error("malformed input: {0}")]
    Malformed(String),
    /// A placement policy (e.g. strict spread across zones) cannot be satisfied.
    #[error("placement policy cannot be met: {0}")]
    Placement(String),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

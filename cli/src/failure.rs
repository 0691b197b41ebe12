//! Why a subcommand stopped: a message for the user, or a closed stdout.

use std::fmt::Display;
use std::io;

/// How a subcommand failed. `main` prints a `Message` as the one stderr line and exits 1; a
/// `BrokenPipe` (the reader of stdout went away, as with `| head`) exits quietly.
#[derive(Debug)]
pub(crate) enum Failure {
    BrokenPipe,
    Message(String),
}

impl Failure {
    /// A failure with `context` (what was being done) in front of the cause.
    pub(crate) fn context(context: impl Display, cause: impl Display) -> Failure {
        Failure::Message(format!("{context}: {cause}"))
    }

    /// A failure from a plain message.
    pub(crate) fn msg(message: impl Into<String>) -> Failure {
        Failure::Message(message.into())
    }
}

impl From<hashroute::Error> for Failure {
    fn from(err: hashroute::Error) -> Failure {
        Failure::Message(err.to_string())
    }
}

/// For writes to stdout: the only I/O that `?` converts. Reads name their source themselves.
impl From<io::Error> for Failure {
    fn from(err: io::Error) -> Failure {
        if err.kind() == io::ErrorKind::BrokenPipe {
            Failure::BrokenPipe
        } else {
            Failure::context("writing output", err)
        }
    }
}

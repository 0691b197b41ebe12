//! The kernel's errors as Python exceptions: the message is the kernel's one line.

use pyo3::exceptions::{PyKeyError, PyOSError, PyValueError};
use pyo3::PyErr;

/// `KeyError` for a node the router does not have, `ValueError` for everything else the kernel
/// refuses (bad parameters, weights, malformed files).
pub(crate) fn to_py(err: hashroute::Error) -> PyErr {
    match err {
        hashroute::Error::UnknownNode { .. } => PyKeyError::new_err(err.to_string()),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// `OSError(errno, "what PATH: reason", PATH)` for a file that cannot be read.
pub(crate) fn io(what: &str, path: &str, err: &std::io::Error) -> PyErr {
    let msg = format!("{what} {path}: {err}");
    match err.raw_os_error() {
        Some(code) => PyOSError::new_err((code, msg, path.to_owned())),
        None => PyOSError::new_err(msg),
    }
}

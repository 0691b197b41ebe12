//! The CA file behind [`Options::ca_file`](crate::Options::ca_file) (`tls` feature).

use std::path::Path;
use std::sync::Arc;

use ureq::tls::{parse_pem, Certificate, PemItem};

use crate::Error;

/// Reads every PEM certificate in `path`.
///
/// # Errors
/// [`Error::Tls`] naming the file when it cannot be read, is not PEM, or holds no certificate.
pub(crate) fn load_roots(path: &Path) -> Result<Arc<Vec<Certificate<'static>>>, Error> {
    let pem = std::fs::read(path).map_err(|e| Error::Tls(format!("cannot read CA file {}: {e}", path.display())))?;
    let mut certs = Vec::new();
    for item in parse_pem(&pem) {
        match item {
            Ok(PemItem::Certificate(c)) => certs.push(c),
            Ok(_) => {}
            Err(e) => return Err(Error::Tls(format!("CA file {} is not valid PEM: {e}", path.display()))),
        }
    }
    if certs.is_empty() {
        return Err(Error::Tls(format!("CA file {} holds no PEM certificate", path.display())));
    }
    Ok(Arc::new(certs))
}

//! The lists of accepted names in `--help`, generated from the kernel's tables
//! ([`Algorithm::ALL`], [`KeyHasher::ALL`], [`KetamaVariant::ALL`], [`JumpBackGenerator::ALL`])
//! so that they never drift from what the parsers accept.

use hashroute::jumpback::JumpBackGenerator;
use hashroute::{Algorithm, KetamaVariant, KeyHasher};

/// Every `--algo` name.
pub(crate) fn algorithms() -> Vec<&'static str> {
    Algorithm::ALL.iter().map(|a| a.name()).collect()
}

/// Every `--hash` name.
pub(crate) fn hashers() -> Vec<&'static str> {
    KeyHasher::ALL.iter().map(KeyHasher::name).collect()
}

/// Every `--variant` name.
pub(crate) fn ketama_variants() -> Vec<&'static str> {
    KetamaVariant::ALL.iter().map(|v| v.name()).collect()
}

/// Every `--generator` name.
pub(crate) fn generators() -> Vec<&'static str> {
    JumpBackGenerator::ALL.iter().map(|g| g.name()).collect()
}

/// `"{what}: a, b or c{tail}"`, a flag's help line.
pub(crate) fn help_list(what: &str, names: &[&str], tail: &str) -> String {
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{what}: {} or {last}{tail}", rest.join(", ")),
        _ => format!("{what}: {}{tail}", names.join(", ")),
    }
}

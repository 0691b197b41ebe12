//! Helpers shared by the integration tests.
#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};

/// The workspace root (the folder holding `Cargo.lock`), from whichever member's tests run.
pub fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.ancestors().find(|d| d.join("Cargo.lock").is_file()).unwrap_or(manifest).to_path_buf()
}

/// The compatibility vectors folder: `$HASHROUTE_VECTORS`, else `../shared/vectors` beside the
/// workspace. `None` (with a visible message) when absent on a developer machine; a panic when the
/// `CI` environment variable is set, because CI must check every vector.
pub fn vectors_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("HASHROUTE_VECTORS") {
        Some(d) => PathBuf::from(d),
        None => workspace_root().join("../shared/vectors"),
    };
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var_os("CI").is_some() {
        panic!("compatibility vectors not found at {} (CI is set, so this fails)", dir.display());
    }
    eprintln!("SKIPPED: compatibility vectors not found at {}; set HASHROUTE_VECTORS", dir.display());
    None
}

/// Reads a vectors CSV into header-keyed rows. `None` when the folder is absent (see
/// [`vectors_dir`]).
pub fn read_csv(name: &str) -> Option<Vec<std::collections::HashMap<String, String>>> {
    let path = vectors_dir()?.join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header: Vec<String> = split_csv_line(lines.next().expect("header row"));
    Some(
        lines
            .filter(|l| !l.is_empty())
            .map(|l| {
                let fields = split_csv_line(l);
                assert_eq!(fields.len(), header.len(), "{name}: row {l:?} has the wrong field count");
                header.iter().cloned().zip(fields).collect()
            })
            .collect(),
    )
}

/// Splits one CSV line with the usual double-quote quoting (no embedded newlines in these files).
pub fn split_csv_line(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut field)),
            (c, _) => field.push(c),
        }
    }
    out.push(field);
    out
}

/// Decodes lowercase or uppercase hex ("" is the empty key).
pub fn unhex(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "odd hex length: {s:?}");
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex digit")).collect()
}

/// Parses an unsigned decimal or `0x`-prefixed hex number.
pub fn parse_u64(s: &str) -> u64 {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).expect("hex number"),
        None => s.parse().expect("decimal number"),
    }
}

//! Helpers shared by the golden-file tests (`tests/golden.rs`, `tests/golden_config.rs`).
#![allow(dead_code, unreachable_pub)]

use std::path::PathBuf;

use hashroute::{Node, NodeSet};

pub fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// 512 text keys, the empty key, and 64 binary keys (all byte values appear).
pub fn golden_keys() -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = (0..512).map(|i| format!("key-{i}").into_bytes()).collect();
    keys.push(Vec::new());
    keys.extend((0u16..64).map(|i| (0..(i % 17 + 1)).map(|j| (i * 37 + j * 101) as u8).collect()));
    keys
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Compares `contents` with the frozen `tests/golden/{file}` (or writes it when
/// `HASHROUTE_WRITE_GOLDEN` is set) and returns the frozen text. A missing file is a failure.
pub fn check_or_write(file: &str, contents: &str) -> String {
    let path = golden_dir().join(file);
    if std::env::var_os("HASHROUTE_WRITE_GOLDEN").is_some() {
        std::fs::create_dir_all(golden_dir()).unwrap();
        std::fs::write(&path, contents).unwrap();
        eprintln!("wrote {}", path.display());
        return contents.to_owned();
    }
    let frozen = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("golden file {} is missing ({e}); generate it with scripts/gen_golden.sh", path.display())
    });
    if frozen != contents {
        let first = frozen.lines().zip(contents.lines()).position(|(a, b)| a != b);
        panic!(
            "{file} changed (first differing line {:?}, {} frozen lines, {} now); a route change breaks the \
             stability contract — if intended, bump the major version and regenerate with scripts/gen_golden.sh",
            first.map(|i| i + 1),
            frozen.lines().count(),
            contents.lines().count()
        );
    }
    frozen
}

pub fn cluster(n: usize) -> NodeSet {
    NodeSet::from_names((0..n).map(|i| format!("10.0.0.{i}:6379"))).unwrap()
}

pub fn weighted_cluster() -> NodeSet {
    NodeSet::new((0..6).map(|i| Node::new(format!("cache-{i}")).with_weight(f64::from(i + 1)))).unwrap()
}

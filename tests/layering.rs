//! The dependency rule of ARCHITECTURE.md, checked on the source: routers → circle/search →
//! arch → mix. Nothing under `src/arch/` or `src/search/` may name a router module, and `arch`
//! may name nothing of the crate but itself and `mix`.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `crate::…` paths named outside comments, one entry per occurrence: `(file, line, path)`.
fn crate_paths(dir: &str) -> Vec<(String, usize, String)> {
    let mut files = Vec::new();
    rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join(dir), &mut files);
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for (at, _) in code.match_indices("crate::") {
                let path: String = code[at + 7..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                found.push((file.display().to_string(), i + 1, path));
            }
        }
    }
    found
}

#[test]
fn simd_tree_and_search_import_no_router() {
    for dir in ["src/arch", "src/search"] {
        for (file, line, path) in crate_paths(dir) {
            assert!(
                !matches!(path.as_str(), "algo" | "circle" | "Router" | "router" | "analysis" | "migration"),
                "{file}:{line} names crate::{path}: {dir} must not depend on routers"
            );
        }
    }
}

#[test]
fn simd_tree_depends_only_on_itself_and_mix() {
    let paths = crate_paths("src/arch");
    assert!(!paths.is_empty(), "the scan found no crate paths at all: is src/arch there?");
    for (file, line, path) in paths {
        assert!(matches!(path.as_str(), "arch" | "mix"), "{file}:{line} names crate::{path}");
    }
}

/// The table of algorithm facts is a leaf: it names no router (every router imports it, so a
/// router named here would close an import circle, as the old `config.rs` did).
#[test]
fn algorithm_table_names_no_router() {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/algorithm.rs")).unwrap();
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        if let Some(at) = code.find("use crate::") {
            let path: String = code[at + 11..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            assert!(matches!(path.as_str(), "error" | "hash"), "src/algorithm.rs:{} imports crate::{path}", i + 1);
        }
    }
}

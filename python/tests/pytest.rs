//! `cargo test` runs the Python package's tests: `scripts/python_test.sh` (a fresh venv under
//! target/, `pip install ./python`, pytest against uhashring, pymemcache and cassandra-driver).
//! The script prints `SKIPPED: ...` where python3 is missing and fails when `CI` is set.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The whole run (venv, reference packages, a release build of the extension, pytest) must end
/// within this; a first build on a 2-core machine takes a few minutes.
const LIMIT: Duration = Duration::from_secs(25 * 60);

/// The `hashroute` binary this `cargo test` built (for the fingerprint comparison), if any.
fn cli_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let bin = exe.parent()?.parent()?.join(format!("hashroute{}", std::env::consts::EXE_SUFFIX));
    bin.is_file().then_some(bin)
}

#[test]
fn python_package_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root");
    let mut cmd = Command::new("bash");
    cmd.arg(root.join("scripts/python_test.sh"));
    // Its own target directory: this `cargo test` holds the workspace's build lock.
    cmd.env("HASHROUTE_PYTHON_TARGET", root.join("target/python-build"));
    if let Some(bin) = cli_binary() {
        cmd.env("HASHROUTE_BIN", bin);
    }
    let mut child = cmd.spawn().expect("bash runs scripts/python_test.sh");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for the script") {
            break status;
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("scripts/python_test.sh ran past {LIMIT:?} (pid {}), stopped", child.id());
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(status.success(), "scripts/python_test.sh failed: {status}");
}

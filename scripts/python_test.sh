#!/usr/bin/env bash
# The Python package's tests: a fresh virtual environment under target/, `pip install ./python`
# (maturin builds the abi3 extension), the reference packages (uhashring, pymemcache,
# cassandra-driver, numpy) from PyPI, then pytest on python/tests against them.
#
# Prints `SKIPPED: ...` and exits 0 where python3 (with venv) is missing; fails when CI is set.
# The extension is built in the workspace's target/, or in HASHROUTE_PYTHON_TARGET when set:
# `cargo test` (python/tests/pytest.rs) sets target/python-build, since it holds the
# workspace's build lock while tests run.
# HASHROUTE_BIN names the CLI the fingerprint test compares with (default target/debug/hashroute,
# built here when absent). Extra arguments go to pytest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-python3}

if ! command -v "$py" >/dev/null 2>&1 || ! "$py" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    if [ -n "${CI:-}" ]; then
        echo "python_test: $py with venv and ensurepip is required (CI is set)" >&2
        exit 1
    fi
    echo "SKIPPED: $py with venv not found; the Python package was not tested"
    exit 0
fi

venv=$root/target/python-test-venv
rm -rf "$venv"
"$py" -m venv "$venv"
pip=("$venv/bin/python" -m pip --disable-pip-version-check)
"${pip[@]}" install -q --upgrade pip
# cassandra-driver's C extensions are optional (the token is pure Python either way).
CASS_DRIVER_NO_CYTHON=1 CASS_DRIVER_NO_EXTENSIONS=1 \
    "${pip[@]}" install -q pytest uhashring pymemcache cassandra-driver numpy
target=${HASHROUTE_PYTHON_TARGET:-$root/target}
CARGO_TARGET_DIR=$target "${pip[@]}" install -q "$root/python"

bin=${HASHROUTE_BIN:-$root/target/debug/hashroute}
if [ ! -x "$bin" ]; then
    (cd "$root" && CARGO_TARGET_DIR=$target cargo build -q -p hashroute-cli --bin hashroute)
    bin=$target/debug/hashroute
fi
cd "$root/python/tests"
HASHROUTE_BIN=$bin "$venv/bin/python" -m pytest -q -p no:cacheprovider . "$@"

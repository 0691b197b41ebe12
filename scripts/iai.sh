#!/usr/bin/env bash
# Instruction counts for the lookup kernels (bench/benches/iai.rs, in the hashroute-bench member) with iai-callgrind.
# Installs iai-callgrind-runner pinned to the iai-callgrind version in Cargo.lock (0.14.x; the
# project continues as "gungraun"), checks for Valgrind, then runs the bench.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v valgrind >/dev/null 2>&1; then
    echo "iai.sh: valgrind not found (apt-get install valgrind / brew install valgrind)" >&2
    exit 1
fi
version=$(cargo metadata --format-version 1 2>/dev/null \
    | grep -o '"name":"iai-callgrind","version":"[^"]*"' | head -n1 | sed 's/.*"version":"\([^"]*\)"/\1/')
version=${version:-0.14.2}
case "$version" in
    0.14.*) ;;
    *) echo "iai.sh: expected iai-callgrind 0.14.x, found $version" >&2; exit 1 ;;
esac
installed=$(iai-callgrind-runner --version 2>/dev/null | awk '{print $2}' || true)
if [ "$installed" != "$version" ]; then
    echo "iai.sh: installing iai-callgrind-runner $version" >&2
    cargo install iai-callgrind-runner --version "$version" --locked
fi
cargo bench -p hashroute-bench --bench iai "$@"

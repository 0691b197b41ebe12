#!/usr/bin/env bash
# Writes tests/golden/*.csv: hashroute's frozen routes. Run once when a router or hasher is
# added; never to "fix" a failing golden test (a changed route breaks the stability contract).
set -euo pipefail
cd "$(dirname "$0")/.."
HASHROUTE_WRITE_GOLDEN=1 cargo test --all-features --test golden -- --nocapture
git status --short tests/golden

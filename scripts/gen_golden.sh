#!/usr/bin/env bash
# Writes tests/golden/: hashroute's frozen routes (*.csv from tests/golden.rs), and the frozen
# ClusterConfig JSON/TOML texts and route fingerprints (config-*.txt, fingerprints.csv from
# tests/golden_config.rs), the proxies' (tests/golden_proxies.rs) and the token ring's
# (token-ring*, tests/golden_token_ring.rs). Run once when a router, hasher or config option is
# added; never to "fix" a failing golden test (a changed route breaks the stability contract).
set -euo pipefail
cd "$(dirname "$0")/.."
HASHROUTE_WRITE_GOLDEN=1 cargo test -p hashroute --all-features --test golden -- --nocapture
HASHROUTE_WRITE_GOLDEN=1 cargo test -p hashroute --all-features --test golden_config -- --nocapture
HASHROUTE_WRITE_GOLDEN=1 cargo test -p hashroute --all-features --test golden_proxies -- --nocapture
HASHROUTE_WRITE_GOLDEN=1 cargo test -p hashroute --all-features --test golden_token_ring -- --nocapture
git status --short tests/golden

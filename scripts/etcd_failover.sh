#!/usr/bin/env bash
# The etcd failover scenario, run N times in a row (default 3): a three-member etcd on 127.0.0.1
# with all endpoints given (`--etcd A,B,C`), six processes each running 25 `hashroute ring join`s
# one after another, the leader killed with kill -9 once a third are in. Each run is the
# `six_writer_processes_ride_through_a_leader_kill` test of cli/tests/ring_cli.rs with
# HASHROUTE_FAILOVER_JOINS=25 (cargo test runs it with 4); it starts its own cluster on free
# loopback ports and stops every member by its pid. Prints one `failover-scenario` line per run
# and exits 1 at the first run where a join failed or a member is missing or doubled.
# HASHROUTE_FAILOVER_BIN=PATH runs the joins with another build's `hashroute` (to compare).
#
#   scripts/etcd_failover.sh [RUNS] [JOINS_PER_WRITER]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
joins=${2:-25}
command -v etcd >/dev/null || { echo "etcd_failover.sh: etcd is not installed (scripts/install_etcd.sh)" >&2; exit 1; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for run in $(seq 1 "$runs"); do
    if ! HASHROUTE_FAILOVER_JOINS=$joins cargo test -q -p hashroute-cli --test ring_cli -- --exact \
        six_writer_processes_ride_through_a_leader_kill --nocapture >"$log" 2>&1; then
        tail -30 "$log" >&2
        echo "etcd_failover.sh: run $run of $runs failed" >&2
        exit 1
    fi
    echo "run $run: $(grep -m1 '^failover-scenario ' "$log")"
done

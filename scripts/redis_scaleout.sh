#!/usr/bin/env bash
# Scale-out experiment on real Redis servers (bench/examples/redis_scaleout.rs).
#
#   scripts/redis_scaleout.sh            # all algorithms, both growth schedules (<= ~2 min)
#   scripts/redis_scaleout.sh --quick    # smaller workload (<= ~20 s)
#   scripts/redis_scaleout.sh --servers my_servers.txt --allow-flush   # your own scratch servers
#
# Writes results/redis_scaleout.{csv,md,svg}. Without --servers it starts 8 throw-away
# redis-server processes on free 127.0.0.1 ports and always kills them at the end; it never
# connects anywhere but loopback. Extra arguments go to the example (see --help).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! printf '%s\n' "$@" | grep -qx -- '--servers'; then
    if ! command -v redis-server >/dev/null 2>&1 && [ -z "${HASHROUTE_REDIS_SERVER:-}" ]; then
        echo "redis_scaleout: redis-server not found; run scripts/install_redis.sh first" >&2
        exit 1
    fi
fi

cargo build -p hashroute-bench --release --quiet --example redis_scaleout
exec target/release/examples/redis_scaleout "$@"

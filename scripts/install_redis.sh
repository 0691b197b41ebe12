#!/usr/bin/env bash
# Installs the Debian `redis-server` package for bench/tests/redis_live.rs and bench/examples/redis_scaleout.rs.
# Idempotent: does nothing when `redis-server` is already on PATH. Never starts a system service
# that the tests depend on: the tests launch their own servers on free loopback ports.
set -euo pipefail

if command -v redis-server >/dev/null 2>&1; then
    echo "install_redis: $(redis-server --version | head -n1) already installed"
    exit 0
fi

# shellcheck source=lib/apt.sh
. "$(dirname "$0")/lib/apt.sh"
apt_install install_redis "Redis >= 6 (Debian: redis-server)" redis-server
# Debian's package may start a system instance on 6379; the tests never use it (they pick free
# ports), so it is left as the package configured it.
echo "install_redis: installed $(redis-server --version | head -n1)"

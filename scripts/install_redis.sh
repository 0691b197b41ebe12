#!/usr/bin/env bash
# Installs the Debian `redis-server` package for bench/tests/redis_live.rs and bench/examples/redis_scaleout.rs.
# Idempotent: does nothing when `redis-server` is already on PATH. Never starts a system service
# that the tests depend on: the tests launch their own servers on free loopback ports.
set -euo pipefail

if command -v redis-server >/dev/null 2>&1; then
    echo "install_redis: $(redis-server --version | head -n1) already installed"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "install_redis: redis-server missing and not root (no sudo); install the redis-server package" >&2
        exit 1
    fi
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_redis: redis-server missing and apt-get unavailable; install Redis >= 6 by hand" >&2
    exit 1
fi

$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends redis-server
# Debian's package may start a system instance on 6379; the tests never use it (they pick free
# ports), so it is left as the package configured it.
echo "install_redis: installed $(redis-server --version | head -n1)"

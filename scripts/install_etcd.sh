#!/usr/bin/env bash
# Installs the Debian `etcd-server` package for the hashroute-etcd tests (etcd/tests/). Idempotent:
# does nothing when `etcd` is already on PATH. Never starts etcd: the tests launch their own
# servers on free loopback ports with temporary data directories. The tests talk to etcd through
# its v3 JSON gateway, so etcdctl (the `etcd-client` package) is not needed.
set -euo pipefail

if command -v etcd >/dev/null 2>&1; then
    echo "install_etcd: $(etcd --version | head -n1) already installed"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "install_etcd: etcd missing and not root (no sudo); install the etcd-server package" >&2
        exit 1
    fi
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_etcd: etcd missing and apt-get unavailable; install etcd >= 3.4 by hand" >&2
    exit 1
fi

$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends etcd-server
# Debian's package may start a system instance on 2379/2380 (where an init system runs); the tests
# never use it (they pick free ports), so it is left as the package configured it.
echo "install_etcd: installed $(etcd --version | head -n1)"

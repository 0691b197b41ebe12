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

# shellcheck source=lib/apt.sh
. "$(dirname "$0")/lib/apt.sh"
apt_install install_etcd "etcd >= 3.4 (Debian: etcd-server)" etcd-server
# Debian's package may start a system instance on 2379/2380 (where an init system runs); the tests
# never use it (they pick free ports), so it is left as the package configured it.
echo "install_etcd: installed $(etcd --version | head -n1)"

#!/usr/bin/env bash
# Installs Debian's `ceph-base` package, which ships crushtool and osdmaptool, for the live CRUSH
# comparison (tests/crush_live.rs) and scripts/crush_bench.sh. Idempotent: does nothing when both
# tools are already on PATH. Installs no daemon configuration and starts nothing: the tests only
# run the two offline tools on temporary files.
set -euo pipefail

if command -v crushtool >/dev/null 2>&1 && command -v osdmaptool >/dev/null 2>&1; then
    echo "install_ceph: crushtool and osdmaptool already installed ($(crushtool --version 2>/dev/null | head -n1))"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "install_ceph: crushtool missing and not root (no sudo); install the ceph-base package" >&2
        exit 1
    fi
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_ceph: crushtool missing and apt-get unavailable; install Ceph's crushtool and osdmaptool by hand" >&2
    exit 1
fi

$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
# Debian's postinst may try to start services where an init system runs; policy-rc.d keeps it from
# doing so in containers, and nothing here needs a running daemon.
DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends ceph-base
command -v crushtool >/dev/null && command -v osdmaptool >/dev/null
echo "install_ceph: installed $(crushtool --version 2>/dev/null | head -n1)"

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

# shellcheck source=lib/apt.sh
. "$(dirname "$0")/lib/apt.sh"
# Debian's postinst may try to start services where an init system runs; nothing here needs a
# running daemon.
apt_install install_ceph "Ceph's crushtool and osdmaptool (Debian: ceph-base)" ceph-base
command -v crushtool >/dev/null && command -v osdmaptool >/dev/null
echo "install_ceph: installed $(crushtool --version 2>/dev/null | head -n1)"

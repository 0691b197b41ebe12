#!/usr/bin/env bash
# Installs the Debian packages tests/proxy_live.rs runs against: nutcracker (twemproxy),
# memcached, nginx-light and haproxy. Idempotent: does nothing when every program is already on
# PATH. Never starts a system service that the tests depend on: the tests launch their own
# processes on free loopback ports (Debian may start the packaged services; they are left as the
# packages configured them, and the tests never talk to them).
set -euo pipefail

missing=()
for program in nutcracker memcached nginx haproxy; do
    if ! command -v "$program" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$program" ]; then
        missing+=("$program")
    fi
done
if [ "${#missing[@]}" -eq 0 ]; then
    echo "install_proxies: nutcracker, memcached, nginx and haproxy already installed"
    exit 0
fi

# shellcheck source=lib/apt.sh
. "$(dirname "$0")/lib/apt.sh"
apt_install install_proxies "nutcracker memcached nginx-light haproxy" nutcracker memcached nginx-light haproxy
echo "install_proxies: installed ${missing[*]}"

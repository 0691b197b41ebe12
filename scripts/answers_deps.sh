#!/bin/sh
# The tools cli/tests/answers.rs runs besides hashroute: `script` (bsdutils: runs hashroute on a
# pseudo-terminal, to see its progress line), bash (`bash -n` checks the completion script) and
# man (renders the man page; the test skips that check, visibly, without it). Debian/Ubuntu.
set -eu
need=""
command -v script >/dev/null 2>&1 || need="$need bsdutils"
command -v bash >/dev/null 2>&1 || need="$need bash"
command -v man >/dev/null 2>&1 || need="$need man-db"
[ -z "$need" ] && exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
$sudo apt-get update -qq
# shellcheck disable=SC2086 # one word per package
$sudo apt-get install -y -qq $need

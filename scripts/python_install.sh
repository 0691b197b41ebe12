#!/usr/bin/env bash
# What the Python package's build and tests need on a fresh Debian machine: python3 with venv
# and ensurepip (scripts/python_test.sh makes a fresh venv), and libpython (the debug cdylib that
# `cargo build`/`cargo test` link outside maturin). The PyPI packages are installed by
# scripts/python_test.sh into its venv. Idempotent; a no-op where all is present.
set -euo pipefail
need=()
command -v python3 >/dev/null 2>&1 || need+=(python3)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
python3 -c 'import sysconfig, sys; sys.exit(0 if sysconfig.get_config_var("Py_ENABLE_SHARED") or sysconfig.get_config_var("LDLIBRARY", ).endswith(".so") else 1)' >/dev/null 2>&1 \
    || need+=(libpython3-dev)
if [ ${#need[@]} -eq 0 ]; then
    echo "python_install: python3 $(python3 -c 'import platform; print(platform.python_version())') with venv: present"
    exit 0
fi
echo "python_install: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${need[@]}" >/dev/null

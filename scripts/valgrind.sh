#!/usr/bin/env bash
# Valgrind memcheck over the SIMD kernel tests, on the AVX2 path and on the portable path.
#
#   scripts/valgrind.sh            # both passes
#   scripts/valgrind.sh avx2       # one pass (avx2 | portable)
#
# Valgrind cannot execute AVX-512, so the process's path is capped with HASHROUTE_MAX_ISA=avx2
# (src/arch/mod.rs reads it once); the kernel tests' explicit AVX-512 cases see the ISA as
# unsupported under Valgrind (its CPUID hides AVX-512) and print SKIPPED. The second pass
# forces HASHROUTE_FORCE_PORTABLE=1. Tests run from the release test binaries (the optimised
# code that ships; a debug build under memcheck is ~10x slower again): the library's kernel
# unit tests (arch, search, rendezvous, jump) and tests/kernels.rs. Any memcheck error fails the
# run (--error-exitcode=1); leaks are reported but not errors (test harness threads).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind is not installed" >&2; exit 2; }
valgrind --version
passes=("${@:-avx2 portable}")
read -r -a passes <<<"${passes[*]}"

# The test executables (lib unit tests and tests/kernels.rs), built once.
mapfile -t bins < <(cargo test -p hashroute --release --all-features --lib --test kernels --no-run --message-format=json 2>/dev/null |
    grep -o '"executable":"[^"]*"' | sed 's/"executable":"//; s/"$//' | grep -E '/(hashroute|kernels)-[0-9a-f]+$')
[ ${#bins[@]} -ge 2 ] || { echo "valgrind.sh: expected 2 test binaries, got: ${bins[*]}" >&2; exit 2; }

status=0
for pass in "${passes[@]}"; do
    case "$pass" in
        avx2) env_vars=(HASHROUTE_MAX_ISA=avx2) ;;
        portable) env_vars=(HASHROUTE_FORCE_PORTABLE=1) ;;
        *) echo "valgrind.sh: unknown pass $pass (avx2 | portable)" >&2; exit 2 ;;
    esac
    for bin in "${bins[@]}"; do
        filters=()
        case "$(basename "$bin")" in hashroute-*) filters=(arch search rendezvous jump) ;; esac
        echo "== memcheck, $pass path: $(basename "$bin") ${filters[*]}"
        start=$(date +%s)
        if env "${env_vars[@]}" valgrind --tool=memcheck --error-exitcode=1 --leak-check=no --quiet \
            "$bin" --test-threads=2 --nocapture "${filters[@]}" >"target/valgrind-$pass-$(basename "$bin").log" 2>&1; then
            grep -E '^test result|running on' "target/valgrind-$pass-$(basename "$bin").log" | sort -u || true
            echo "$(grep -c '^SKIPPED' "target/valgrind-$pass-$(basename "$bin").log" || true) SKIPPED lines (AVX-512 cases)"
            echo "clean in $(( $(date +%s) - start )) s"
        else
            status=1
            tail -40 "target/valgrind-$pass-$(basename "$bin").log"
            echo "memcheck FAILED on the $pass path: target/valgrind-$pass-$(basename "$bin").log" >&2
        fi
    done
done
exit $status

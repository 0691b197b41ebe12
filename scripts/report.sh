#!/usr/bin/env bash
# Regenerates everything in results/ (REPORT.md, CSVs, SVG plots). Never edit results/ by hand.
#
#   scripts/report.sh           full run (the published numbers; ~5-6 min on 2 cores, quiet machine)
#   scripts/report.sh --quick   CI-sized run (~1 min)
#
# Order matters: the lookup kernels (criterion, benches/lookup.rs, if present) and the peers
# bench write their results first; the vnodes sweep runs last and assembles results/REPORT.md.
# Instruction counts are separate: scripts/iai.sh (needs Valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."

crit_args=()
case "${1:-}" in
    --quick) export HASHROUTE_QUICK=1; crit_args=(--warm-up-time 0.2 --measurement-time 0.5) ;;
    "") ;;
    *) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac

mkdir -p results
rm -f results/*.svg results/*.csv results/*.md

if [ -f benches/lookup.rs ]; then
    cargo bench --bench lookup -- "${crit_args[@]}"
else
    echo "report.sh: benches/lookup.rs not present; the report will say the lookup kernels were not measured" >&2
fi
cargo bench --bench peers
cargo bench --bench vnodes
echo "report.sh: wrote $(pwd)/results/REPORT.md"

#!/usr/bin/env bash
# Times plain `cargo bench` (the default mode users run to pick an algorithm): builds first
# (`cargo bench --no-run`, not counted), then runs `cargo bench` once and prints, per bench
# binary, its wall seconds, its criterion ids and seconds per id, then the total after the
# build. The budget is 300 s after the build on a 2-core machine. `cargo bench` at the root
# runs the default members' benches: only hashroute-bench (bench/) has any, `vnodes` last.
#
#   scripts/bench_time.sh                 plain `cargo bench` (default mode)
#   scripts/bench_time.sh --bench tokens  extra arguments go to `cargo bench`
#
# The machine's load average is printed before and after: on a shared machine a run under load
# takes longer, so compare ids × seconds per id as well as the wall time. The full log is kept
# in $CARGO_TARGET_DIR/bench_time.log (default target/bench_time.log).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ -n "${HASHROUTE_FULL:-}${HASHROUTE_QUICK:-}" ]]; then
    echo "bench_time: unset HASHROUTE_FULL / HASHROUTE_QUICK: this times the default mode" >&2
    exit 2
fi

target_dir="${CARGO_TARGET_DIR:-target}"
log="$target_dir/bench_time.log"
mkdir -p "$target_dir"

echo "== build (not timed): cargo bench --no-run $*"
cargo bench --no-run "$@" 2>&1 | tail -n 1

echo "== load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
# Every line prefixed with the seconds since the start ($EPOCHREALTIME: no process per line).
start=${EPOCHREALTIME/./}
set +e
cargo bench "$@" 2>&1 | while IFS= read -r line; do
    now=${EPOCHREALTIME/./}
    printf '%d.%06d %s\n' $(((now - start) / 1000000)) $(((now - start) % 1000000)) "$line"
done >"$log"
status=${PIPESTATUS[0]}
set -e
echo "== load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"

# A bench starts at cargo's `Running benches/NAME.rs` line (the benches are hashroute-bench's,
# bench/benches/; the path cargo prints may carry the member's folder) and ends where the next one starts
# (or the log ends). Criterion prints `time:   [low estimate high]` once per id, and again in
# percent (`change:`) when an earlier run left estimates: those lines are not counted.
awk '
    function flush() {
        if (name != "") {
            secs = t - t0; total += secs; ids_total += ids
            per = ids > 0 ? sprintf("%.2f", secs / ids) : "-"
            printf "%-12s %8.1f s %6d ids %8s s/id\n", name, secs, ids, per
        }
    }
    { t = $1 }
    / Running ([^ ]*benches\/|unittests)/ {
        flush()
        name = $0; sub(/.*Running ([^ ]*benches\/)?/, "", name); sub(/[ .].*/, "", name)
        if (name ~ /^vnodes\//) name = "vnodes"
        t0 = t; ids = 0; next
    }
    /time: *\[/ && !/%/ { ids++ }
    END { flush(); printf "%-12s %8.1f s %6d ids\n", "total", total, ids_total }
' "$log"
echo "== the run ends with:"
tail -n 3 "$log" | cut -d' ' -f2-
exit "$status"

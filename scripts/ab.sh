#!/usr/bin/env bash
# Interleaved A/B speed comparison of hashroute's hot paths: a base commit against the working
# tree, so that a refactor can show it lost no speed.
#
#   scripts/ab.sh [BASE_COMMIT] [ROUNDS] [--quick] [--self]
#
#   BASE_COMMIT  default 6a5a735; checked out as a detached git worktree at target/ab/base
#   ROUNDS       default 5; runs go base, new, base, new, ... (this VM's noise is mostly between
#                runs, so interleaving spreads it over both sides)
#   --quick      fewer samples per case (harness --quick); for trying the script, not for verdicts
#   --self       A/A sanity run: the base worktree on both sides (use it when the working tree
#                does not build, or to see how much two identical builds differ)
#
# Each side is a throwaway binary crate (target/ab/harness-{base,new}, from scripts/ab/harness.rs
# and scripts/ab/Cargo.toml.in) depending on that side's hashroute by path, built in its own
# target dir (target/ab/target-{base,new}) with the same release profile. Each harness run prints
# the median ns/key of 31 samples per case; the table reports, per case, the median over rounds
# of those per-run medians, new/base, and the A/A spread = (max - min) / median of the base runs.
# A case is SLOWER when new/base - 1 > max(3%, A/A spread). The table is also written to
# target/ab/result.md; per-run outputs are in target/ab/runs/, build logs in target/ab/build-*.log.
#
# Exit status: 0 no case slower, 1 usage or setup error, 2 a side failed to build or run,
# 3 at least one case flagged SLOWER.
set -euo pipefail

usage() {
    sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
}

die() {
    echo "ab.sh: error: $*" >&2
    exit 1
}

base_rev=6a5a735
rounds=5
quick=0
self=0
positional=()
for arg in "$@"; do
    case "$arg" in
        --quick) quick=1 ;;
        --self) self=1 ;;
        -h | --help) usage; exit 0 ;;
        -*) usage >&2; die "unknown option $arg" ;;
        *) positional+=("$arg") ;;
    esac
done
if ((${#positional[@]} > 2)); then
    usage >&2
    die "too many arguments: ${positional[*]}"
fi
base_rev="${positional[0]:-$base_rev}"
rounds="${positional[1]:-$rounds}"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer, got '$rounds'"

root="$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)"
ab="$root/target/ab"
wt="$ab/base"
template="$root/scripts/ab/Cargo.toml.in"
harness_src="$root/scripts/ab/harness.rs"
[[ -f "$template" && -f "$harness_src" ]] || die "missing $template or $harness_src"
base_sha="$(git -C "$root" rev-parse --verify --quiet "$base_rev^{commit}")" ||
    die "'$base_rev' is not a commit in $root"
mkdir -p "$ab"

# One run at a time: two would share target/ab/ and disturb each other's timings.
if command -v flock >/dev/null; then
    exec 9>"$ab/.lock"
    flock -n 9 || die "another scripts/ab.sh is running (lock $ab/.lock)"
fi

now_ms() { date +%s%3N; }
secs_since() { awk -v a="$1" -v b="$(now_ms)" 'BEGIN { printf "%.1f", (b - a) / 1000 }'; }

# --- 1. The base worktree --------------------------------------------------------------------
is_own_worktree() {
    [[ -d "$1" ]] || return 1
    local top
    top="$(git -C "$1" rev-parse --show-toplevel 2>/dev/null)" || return 1
    [[ "$top" == "$(cd "$1" && pwd -P)" ]]
}

if is_own_worktree "$wt"; then
    if [[ -n "$(git -C "$wt" status --porcelain --untracked-files=no)" ]]; then
        die "$wt has local changes; inspect it, or drop it with: git worktree remove --force $wt"
    fi
    if [[ "$(git -C "$wt" rev-parse HEAD)" != "$base_sha" ]]; then
        echo "ab.sh: moving $wt to ${base_sha:0:12}" >&2
        git -C "$wt" checkout --quiet --detach "$base_sha"
    fi
else
    git -C "$root" worktree prune
    [[ ! -e "$wt" ]] || die "$wt exists but is not a git worktree; remove it and rerun"
    echo "ab.sh: creating worktree $wt at ${base_sha:0:12}" >&2
    git -C "$root" worktree add --quiet --detach "$wt" "$base_sha"
fi

base_src="$wt"
if ((self)); then
    new_src="$wt"
    new_desc="base worktree again (--self: A/A sanity run)"
else
    new_src="$root"
    new_desc="working tree $root (HEAD $(git -C "$root" rev-parse --short HEAD)"
    # Untracked files count too (a refactor adds modules); this script's own files do not.
    if [[ -n "$(git -C "$root" status --porcelain -- . ':!scripts/ab.sh' ':!scripts/ab')" ]]; then
        new_desc+=" + uncommitted changes)"
    else
        new_desc+=", clean)"
    fi
fi
base_desc="$(git -C "$root" log -1 --format='%h %s' "$base_sha" | cut -c1-80)"

# --- 2. Harness crates and builds ------------------------------------------------------------
# Writes stdin to $1 only when the content differs (unchanged files keep their mtime, so cargo
# does not rebuild the harness for nothing).
write_if_changed() {
    local tmp
    tmp="$(mktemp "$1.XXXXXX")"
    cat >"$tmp"
    if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv -f "$tmp" "$1"; fi
}

# gen_harness SIDE HASHROUTE_DIR
gen_harness() {
    local dir="$ab/harness-$1" manifest
    mkdir -p "$dir/src"
    manifest="$(<"$template")"
    printf '%s\n' "${manifest//@HASHROUTE_PATH@/$2}" | write_if_changed "$dir/Cargo.toml"
    write_if_changed "$dir/src/main.rs" <"$harness_src"
    # Start from that side's lockfile, so each side builds with the dependency versions its own
    # Cargo.lock pins (cargo then trims it to the harness's dependencies).
    if [[ -f "$2/Cargo.lock" ]]; then
        write_if_changed "$dir/Cargo.lock" <"$2/Cargo.lock"
    fi
}

# build SIDE DESCRIPTION: exits 2 with the log's tail when the build fails.
build() {
    local side="$1" log="$ab/build-$1.log" t0
    t0="$(now_ms)"
    echo "ab.sh: building $side ($2)" >&2
    if ! CARGO_TARGET_DIR="$ab/target-$side" cargo build --release \
        --manifest-path "$ab/harness-$side/Cargo.toml" >"$log" 2>&1; then
        {
            echo
            echo "================ BUILD FAILED: the ${side^^} side ================"
            echo "side:  $2"
            echo "log:   $log (last 40 lines below)"
            echo "------------------------------------------------------------------"
            tail -n 40 "$log"
            echo "------------------------------------------------------------------"
            if [[ "$side" == new ]] && ((!self)); then
                echo "The working tree does not build as a dependency; fix it, or check the harness"
                echo "alone with an A/A run: scripts/ab.sh $base_rev $rounds --self"
            fi
        } >&2
        exit 2
    fi
    echo "ab.sh: built $side in $(secs_since "$t0") s" >&2
}

gen_harness base "$base_src"
gen_harness new "$new_src"
build base "$base_desc"
build new "$new_desc"

# Both binaries run from paths of the same length under the same argv[0]: the kernel copies
# the exec path and argv onto the new process's stack, so unequal lengths would shift every
# stack buffer's alignment between the sides (a known source of systematic A/B bias).
mkdir -p "$ab/bin"
ln -sfn "../target-base/release/ab-harness" "$ab/bin/A"
ln -sfn "../target-new/release/ab-harness" "$ab/bin/B"
bin_base="$ab/bin/A"
bin_new="$ab/bin/B"
for b in "$bin_base" "$bin_new"; do
    [[ -x "$b" ]] || die "missing harness binary $b"
done
harness_args=()
((quick)) && harness_args+=(--quick)
ncases="$("$bin_base" --list | wc -l)"

# --- 3. Interleaved runs ---------------------------------------------------------------------
runs="$ab/runs"
rm -rf "$runs"
mkdir -p "$runs"

# run SIDE ROUND
run() {
    local side="$1" bin out="$runs/$1-$2.tsv"
    if [[ "$side" == base ]]; then bin="$bin_base"; else bin="$bin_new"; fi
    if ! (exec -a ab-harness "$bin" "${harness_args[@]}") >"$out"; then
        echo "ab.sh: error: the $side harness failed in round $2 (see above)" >&2
        exit 2
    fi
    if [[ "$(wc -l <"$out")" -ne "$ncases" ]] ||
        ! awk -F'\t' 'NF != 2 || $2 !~ /^[0-9]+(\.[0-9]+)?$/ { bad = 1 } END { exit bad }' "$out"; then
        echo "ab.sh: error: malformed output from the $side harness in round $2: $out" >&2
        exit 2
    fi
}

load_start="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
if awk -v l="${load_start%% *}" -v n="$(nproc)" 'BEGIN { exit !(l + 0 > 0.5 * n) }'; then
    echo "ab.sh: warning: load average $load_start on $(nproc) CPUs; expect noisy numbers" >&2
fi
round_times=()
for ((r = 1; r <= rounds; r++)); do
    t0="$(now_ms)"
    run base "$r"
    run new "$r"
    round_times+=("$(secs_since "$t0")")
    echo "ab.sh: round $r/$rounds done in ${round_times[-1]} s" >&2
done

# --- 4. The table ----------------------------------------------------------------------------
table="$(
    # shellcheck disable=SC2016  # awk program, not shell expansions
    LC_ALL=C awk -F'\t' -v min_thr=0.03 '
        function median(side, c,    n, i, j, t, a) {
            n = cnt[side, c]
            for (i = 1; i <= n; i++) a[i] = val[side, c, i]
            for (i = 2; i <= n; i++) {
                t = a[i]
                for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]
                a[j + 1] = t
            }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        function spread(side, c,    n, i, lo, hi, v) {
            n = cnt[side, c]
            lo = hi = val[side, c, 1]
            for (i = 2; i <= n; i++) {
                v = val[side, c, i]
                if (v < lo) lo = v
                if (v > hi) hi = v
            }
            return (hi - lo) / median(side, c)
        }
        FNR == 1 { side = FILENAME ~ /\/base-[0-9]+\.tsv$/ ? "base" : "new" }
        {
            if (!($1 in seen)) { seen[$1] = 1; order[++ncases] = $1 }
            val[side, $1, ++cnt[side, $1]] = $2 + 0
        }
        END {
            printf "| %-24s | %12s | %12s | %8s | %10s | %-6s |\n", "case", "base ns/key", "new ns/key", "new/base", "A/A spread", "flag"
            printf "|%s|%s|%s|%s|%s|%s|\n", "--------------------------", "-------------:", "-------------:", "---------:", "-----------:", "--------"
            for (i = 1; i <= ncases; i++) {
                c = order[i]
                b = median("base", c); n = median("new", c); s = spread("base", c)
                ratio = n / b
                thr = s > min_thr ? s : min_thr
                flag = ratio - 1 > thr ? "SLOWER" : ""
                if (flag != "") slower++
                printf "| %-24s | %12.3f | %12.3f | %8.3f | %9.1f%% | %-6s |\n", c, b, n, ratio, 100 * s, flag
            }
            exit slower > 0 ? 3 : 0
        }' "$runs"/*.tsv
)" && verdict=0 || verdict=$?
((verdict == 0 || verdict == 3)) || die "could not build the table from $runs"

cpu="$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)"
report="$(
    echo "# A/B: hashroute hot paths, base vs new"
    echo
    echo "- base: $base_desc (${base_sha:0:12}), worktree $wt"
    echo "- new:  $new_desc"
    echo "- rounds: $rounds, interleaved (base, new, base, new, ...)$( ((quick)) && echo ', --quick')," \
        "round times: ${round_times[*]} s"
    echo "- machine: ${cpu:-unknown CPU}, $(nproc) CPUs; $(date -u '+%Y-%m-%d %H:%M UTC');" \
        "load average $load_start at start, $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?') at end"
    echo "- per case: median over rounds of each run's median ns/key; A/A spread = (max - min) /"
    echo "  median of the base runs; SLOWER when new/base - 1 > max(3%, A/A spread)"
    echo
    echo "$table"
)"
printf '%s\n' "$report" >"$ab/result.md"
echo
printf '%s\n' "$report"
echo
echo "ab.sh: wrote $ab/result.md"
if ((verdict == 3)); then
    echo "ab.sh: at least one case is SLOWER (exit 3)" >&2
fi
exit "$verdict"

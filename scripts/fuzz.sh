#!/usr/bin/env bash
# Coverage-guided fuzzing of every cargo-fuzz target in fuzz/ (libFuzzer + AddressSanitizer).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]   # default: 60 s for each target of `cargo fuzz list`
#
# Builds seed corpora at run time into the git-ignored fuzz/corpus/TARGET/ from the golden files
# (tests/golden/) and the compatibility vectors ($HASHROUTE_VECTORS, else ../shared/vectors
# next to the repository; skipped when absent), then runs each target for SECONDS and fails on
# the first crash, leak, timeout (FUZZ_TIMEOUT, 30 s per input) or out-of-memory
# (FUZZ_RSS_MB, 2048). A crash leaves its input in fuzz/artifacts/TARGET/; reproduce with
# `RUSTC_BOOTSTRAP=1 cargo fuzz run TARGET fuzz/artifacts/TARGET/crash-...`.
# Needs cargo-fuzz (`cargo install cargo-fuzz`); works on the stable toolchain through
# RUSTC_BOOTSTRAP=1 (cargo-fuzz passes -Zsanitizer=address). FUZZ_NICE (default 10) lowers
# the fuzzers' priority; FUZZ_JOBS is unused on purpose: one target at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
seconds="${1:-60}"
shift || true
export RUSTC_BOOTSTRAP=1
nice_level="${FUZZ_NICE:-10}"
timeout_s="${FUZZ_TIMEOUT:-30}"
rss_mb="${FUZZ_RSS_MB:-2048}"
vectors="${HASHROUTE_VECTORS:-$root/../shared/vectors}"

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: cargo-fuzz is missing; installing it from crates.io" >&2
    cargo install cargo-fuzz --locked
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo fuzz list)
fi

echo "== fuzz build (release + ASan + debug assertions)"
# The commit the binaries are built from (+dirty when the tree has uncommitted changes).
built_at=$(git rev-parse --short HEAD)
if ! git diff --quiet HEAD -- src fuzz Cargo.toml 2>/dev/null; then built_at="$built_at+dirty"; fi
start=$(date +%s)
cargo fuzz build --debug-assertions
echo "fuzz build: $(( $(date +%s) - start )) s"
bin_dir="fuzz/target/x86_64-unknown-linux-gnu/release"

# Seed files: fuzz/corpus/TARGET/seed-NAME (content-named files from earlier runs are kept).
seed() { # target name < bytes
    mkdir -p "fuzz/corpus/$1"
    cat >"fuzz/corpus/$1/seed-$2"
}
golden_csvs=(tests/golden/*.csv)
vector_files=()
if [ -d "$vectors" ]; then vector_files=("$vectors"/*.csv "$vectors"/*.json); fi

# Structured targets: raw bytes of each data file become names, weights, keys and sizes.
for f in "${golden_csvs[@]}" "${vector_files[@]}"; do
    base=$(basename "$f")
    for t in routers migration kernels hashes; do head -c 1024 "$f" | seed "$t" "$base" || true; done
done
# parsers: first byte 0 = nodes file, 1 = ClusterConfig JSON, 2 = TOML (see fuzz_targets/parsers.rs).
for f in "${golden_csvs[@]}"; do
    { printf '\000'; tail -n +2 "$f" | awk -F, '!seen[$NF]++ { print $NF, (NR % 3) + 1 }'; } | seed parsers "nodes-$(basename "$f")"
done
for pair in "json 001" "toml 002"; do
    set -- $pair
    tmp=$(mktemp -d)
    awk -v dir="$tmp" '/^=== .* ===$/ { n++; next } { print > (dir "/" n) }' "tests/golden/config-$1.txt"
    for b in "$tmp"/*; do { printf "\\$2"; cat "$b"; } | seed parsers "config-$1-$(basename "$b")"; done
    rm -rf "$tmp"
done
# crush_map: 4 bytes of x, one byte of replicas/reweight, then a map (the vectors' maps).
if [ -d "$vectors/ceph" ]; then
    for f in "$vectors"/ceph/*.crush.txt; do { printf '\001\000\000\000\003'; cat "$f"; } | seed crush_map "$(basename "$f")"; done
fi
# parsers: 3 = nutcracker YAML, 4 = nginx upstream, 5 = HAProxy backend (one small valid file each).
printf '\003alpha:\n  hash: md5\n  distribution: ketama\n  servers:\n   - 127.0.0.1:11211:1 a\n   - 127.0.0.1:11212:2\n' | seed parsers proxy-twemproxy
printf '\004upstream u {\n  hash $request_uri consistent;\n  server 10.0.0.1:80 weight=2;\n  server 10.0.0.2:8080;\n}\n' | seed parsers proxy-nginx
printf '\005backend b\n  balance uri\n  hash-type consistent\n  server s1 10.0.0.1:80 weight 2\n  server s2 10.0.0.2:80 id 7\n' | seed parsers proxy-haproxy
# cli_keys: first byte 0 = text, 1 = hex, 2 = u64 (see fuzz_targets/cli_keys.rs).
for f in "${golden_csvs[@]}"; do
    if head -1 "$f" | grep -q '^key_hex'; then
        awk -F, 'NR > 1 && NR <= 51 { print $1 }' "$f" | while read -r hex; do
            { printf '\001'; printf '%s' "$hex"; } | seed cli_keys "hex-$(basename "$f")-$hex"
            if command -v xxd >/dev/null; then
                { printf '\000'; printf '%s' "$hex" | xxd -r -p; } | seed cli_keys "text-$(basename "$f")-$hex"
            fi
        done
    fi
done
if [ -f "$vectors/jump_consistent_hash.csv" ]; then
    awk -F, 'NR > 1 && !seen[$1]++ && n++ < 100 { print $1; print $2 }' "$vectors/jump_consistent_hash.csv" | while read -r v; do
        { printf '\002'; printf '%s' "$v"; } | seed cli_keys "u64-$v"
    done
fi
# tokens: bytes 0-2 pick a change, its node and the tokens per node; the rest is a tokens file.
for f in tests/golden/token-ring-file.txt; do
    [ -f "$f" ] || continue
    for h in '\000\001\017' '\001\002\017' '\002\003\007'; do
        { printf "$h"; cat "$f"; } | seed tokens "$(basename "$f")-$(printf '%s' "$h" | tr -d '\\')"
    done
done
printf '\000\001\017a dc1 r1 -100\nb dc1 r2 0 2\nc dc2 r1 100\n' | seed tokens small
for t in "${targets[@]}"; do mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"; done

status=0
for t in "${targets[@]}"; do
    echo "== fuzz $t for ${seconds}s ($(ls "fuzz/corpus/$t" | wc -l) corpus files)"
    log="fuzz/artifacts/$t/last-run.log"
    if nice -n "$nice_level" "$bin_dir/$t" "fuzz/corpus/$t" \
        -artifact_prefix="fuzz/artifacts/$t/" -max_total_time="$seconds" -timeout="$timeout_s" \
        -rss_limit_mb="$rss_mb" -max_len=4096 -print_final_stats=1 >"$log" 2>&1; then
        grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 || true
        echo "fuzz $t: clean for ${seconds}s, built at $built_at"
    else
        status=1
        tail -40 "$log"
        echo "fuzz $t: FAILED (input in fuzz/artifacts/$t/, log $log)" >&2
    fi
done
exit $status

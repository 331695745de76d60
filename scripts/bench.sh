#!/usr/bin/env bash
# The carbridge benchmarks (docs/performance.md): deterministic counts per input event, tick, line, load.
#   scripts/bench.sh           instructions (callgrind) and steady-state heap allocations (malloc-interposer) per unit
#   scripts/bench.sh --rss     also VmRSS of `carbridge run --link tcp://… --no-keyboard` against car-sim,
#                              debug, release and release with a static Swift runtime (--static-swift-stdlib)
# Needs valgrind (apt-get install valgrind). Builds Benchmarks/ (release) in .build-bench.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
scratch=$root/.build-bench

if ! command -v valgrind >/dev/null; then
    echo "bench.sh: valgrind is missing (apt-get install valgrind)" >&2
    exit 1
fi

# A path dependency's new source files can be missed by a cached build plan: re-plan (seconds).
rm -f "$scratch/release.yaml" "$scratch/release/description.json"
swift build -c release --package-path Benchmarks --scratch-path "$scratch" --product bench-counts >&2
# valgrind's debuginfo reader gives up on the Swift toolchain's DWARF ("Possibly corrupted debuginfo file"):
# callgrind only needs the code, so it runs a copy without debug info.
bin=$scratch/bench-stripped/bench-counts
rm -rf "$scratch/bench-stripped" && mkdir -p "$scratch/bench-stripped"
cp "$scratch/release/bench-counts" "$scratch/release/libMallocInterposerSwift.so" "$scratch/bench-stripped/"
strip --strip-debug "$scratch/bench-stripped/"*
export CARBRIDGE_CONFIG=$root/config/carbridge.toml
# Set and Dictionary hashing is seeded per process; a fixed seed keeps the instruction counts identical run to run.
export SWIFT_DETERMINISTIC_HASHING=1

# Iteration counts: the instructions of one operation are (Ir(high) - Ir(low)) / (high - low), so set-up,
# warm-up and process start cancel out.
iterations() {
    case $1 in
        evemu-parse | config-load) echo "2 6" ;;
        evemu-walk-characters) echo "5 25" ;;
        *) echo "1000 3000" ;;
    esac
}

instructions() { # NAME N -> total Ir
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" run "$1" "$2" 2>&1 >/dev/null |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

printf '| %-22s | %-11s | %14s | %14s |\n' benchmark unit "instructions" "allocations"
printf '|%s|%s|%s|%s|\n' "------------------------" "-------------" "---------------:" "---------------:"
while IFS=$'\t' read -r name unit units; do
    read -r low high < <(iterations "$name")
    ir_low=$(instructions "$name" "$low")
    ir_high=$(instructions "$name" "$high")
    # Steady state: the mallocs of operations low+1…high only (bench-counts hooks malloc around each stretch).
    mallocs=$("$bin" allocs "$name" "$low" "$high" | sed -n 's/.*mallocs=\([0-9]*\).*/\1/p')
    per_ir=$(awk -v a="$ir_low" -v b="$ir_high" -v n=$((high - low)) -v u="$units" 'BEGIN { printf "%.0f", (b - a) / n / u }')
    per_alloc=$(awk -v m="$mallocs" -v n=$((high - low)) -v u="$units" 'BEGIN { printf "%.2f", m / n / u }')
    printf '| %-22s | %-11s | %14s | %14s |\n' "$name" "$unit" "$per_ir" "$per_alloc"
done < <("$bin" list)

[[ ${1:-} == --rss ]] || exit 0

# VmRSS of a running `carbridge run` against car-sim, after it has settled (3 s): debug, release, and
# release with the Swift runtime and Foundation linked statically (its own scratch directory).
for config in debug release static; do
    case $config in
        static) swift build -c release --static-swift-stdlib --scratch-path "$root/.build-bench-static" --product carbridge >&2
                cb=$root/.build-bench-static/release/carbridge ;;
        *)      swift build -c "$config" --scratch-path "$root/.build-bench-main" --product carbridge >&2
                cb=$root/.build-bench-main/$config/carbridge ;;
    esac
    port=$((17000 + RANDOM % 1000))
    "$cb" car-sim --listen "127.0.0.1:$port" --quiet >/dev/null 2>&1 &
    sim=$!
    sleep 1
    "$cb" run --link "tcp://127.0.0.1:$port" --no-keyboard --no-view </dev/null >/dev/null 2>&1 &
    run=$!
    sleep 3
    rss=$(awk '/^VmRSS/ { print $2 " " $3 }' "/proc/$run/status")
    hwm=$(awk '/^VmHWM/ { print $2 " " $3 }' "/proc/$run/status")
    echo "carbridge run ($config): VmRSS $rss, VmHWM $hwm"
    kill "$run" "$sim"
    wait "$run" "$sim" 2>/dev/null || true
done

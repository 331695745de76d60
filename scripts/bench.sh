#!/usr/bin/env bash
# The carbridge benchmarks (docs/performance.md): deterministic counts per input event, tick, line, load.
#   scripts/bench.sh           instructions (callgrind) and steady-state heap allocations (malloc-interposer) per unit
#   scripts/bench.sh --check   the CI guard (scripts/test.sh's bench stage): 0 heap allocations per input event and
#                              per stream tick (`bench-counts check`), and the instructions per input event and per
#                              tick against Benchmarks/Thresholds/instructions.json: each may rise at most 10 %
#                              over its recorded figure, and no input event above the 10,000 budget. One line
#                              per check, then `bench: N passed, N failed`; exits 1 on a failure
#   scripts/bench.sh --record  measures the same instructions and rewrites Benchmarks/Thresholds/instructions.json
#                              (commit it with the change that moved them, saying why)
#   scripts/bench.sh --rss     also VmRSS of `carbridge run --link tcp://… --no-keyboard` against car-sim,
#                              debug, release and release with a static Swift runtime (--static-swift-stdlib)
# Needs valgrind (apt-get install valgrind). Builds Benchmarks/ (release, with the release link flags of
# scripts/release-flags.sh) in .build-bench.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
scratch=$root/.build-bench
thresholds=$root/Benchmarks/Thresholds/instructions.json
mode=${1:-table}
case $mode in
    table | --check | --record | --rss) ;;
    *) echo "usage: scripts/bench.sh [--check | --record | --rss]" >&2; exit 64 ;;
esac

if ! command -v valgrind >/dev/null; then
    echo "bench.sh: valgrind is missing (apt-get install valgrind)" >&2
    exit 1
fi

. scripts/release-flags.sh
# A path dependency's new source files can be missed by a cached build plan: re-plan (seconds).
rm -f "$scratch/release.yaml" "$scratch/release/description.json"
# Linked as the package links carbridge (scripts/package.sh): the Swift runtime static, so that what is
# counted is what the shipped binary runs. (With the runtime as a shared library, every dynamic exclusivity
# check also looks its thread-local access set up through __tls_get_addr.)
swift build -c release --static-swift-stdlib --package-path Benchmarks --scratch-path "$scratch" "${release_flags[@]}" \
    --product bench-counts >&2
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

per_unit_instructions() { # NAME UNITS -> instructions per unit, rounded
    local low high ir_low ir_high
    read -r low high < <(iterations "$1")
    ir_low=$(instructions "$1" "$low")
    ir_high=$(instructions "$1" "$high")
    [ -n "$ir_low" ] && [ -n "$ir_high" ] || { echo "bench.sh: no callgrind total for $1" >&2; return 1; }
    awk -v a="$ir_low" -v b="$ir_high" -v n=$((high - low)) -v u="$2" 'BEGIN { printf "%.0f", (b - a) / n / u }'
}

# The scenarios the budgets are about: one input event or one stream tick per unit.
guarded() { "$bin" list | awk -F'\t' '$2 == "input event" || $2 == "tick"'; }

if [[ $mode == --check || $mode == --record ]]; then
    measured=$(mktemp)
    trap 'rm -f "$measured"' EXIT
    while IFS=$'\t' read -r name _ units; do
        printf '%s\t%s\n' "$name" "$(per_unit_instructions "$name" "$units")" >> "$measured"
    done < <(guarded)
    if [[ $mode == --record ]]; then
        mkdir -p "$(dirname "$thresholds")"
        python3 - "$measured" "$thresholds" <<'EOF'
import json, sys
measured = dict(line.rstrip("\n").split("\t") for line in open(sys.argv[1]))
missing = [name for name, value in measured.items() if not value]
if missing:
    sys.exit("bench.sh: no instruction count for %s; nothing recorded" % ", ".join(missing))
doc = {
    "about": "Instructions per unit (one input event or one stream tick) of the release build's bench-counts "
             "scenarios under callgrind, SWIFT_DETERMINISTIC_HASHING=1. Re-record with scripts/bench.sh --record; "
             "scripts/bench.sh --check fails when one rises more than tolerance_percent over its figure, or an input event above budget_per_input_event (docs/performance.md).",
    "tolerance_percent": 10,
    "budget_per_input_event": 10000,
    "instructions": {name: int(value) for name, value in sorted(measured.items())},
}
with open(sys.argv[2], "w") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")
EOF
        echo "bench.sh: recorded $thresholds:"
        cat "$thresholds"
        exit 0
    fi
    # The allocation guard's lines, its summary folded into the one below.
    set +e
    alloc_out=$("$bin" check)
    set -e
    grep -v '^bench: ' <<<"$alloc_out" || true
    read -r a_passed a_failed < <(sed -n 's/^bench: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' <<<"$alloc_out")
    [ -n "${a_passed:-}" ] || { echo "FAIL bench-counts check: no summary line"; a_passed=0; a_failed=1; }
    python3 - "$measured" "$thresholds" "$a_passed" "$a_failed" <<'EOF'
import json, sys
measured = dict(line.rstrip("\n").split("\t") for line in open(sys.argv[1]))
passed, failed = int(sys.argv[3]), int(sys.argv[4])
try:
    doc = json.load(open(sys.argv[2]))
    recorded, tolerance, budget = doc["instructions"], doc["tolerance_percent"], doc["budget_per_input_event"]
except (OSError, ValueError, KeyError) as error:
    print("FAIL instructions: no thresholds in %s (%s); scripts/bench.sh --record writes them" % (sys.argv[2], error))
    recorded, tolerance, budget = {}, 10, 10000
for name, value in sorted(measured.items()):
    if not value:
        print("FAIL %s: callgrind gave no instruction count" % name)
        failed += 1
        continue
    value = int(value)
    print("METRIC instructions_per_unit_%s %d" % (name, value))
    if name not in recorded:
        ok, why = False, "not in the thresholds file (scripts/bench.sh --record)"
    else:
        limit = int(recorded[name] * (100 + tolerance) / 100)
        why = "+%d %%" % tolerance
        if name != "stream-tick":  # a tick is no input event: only its own figure holds it
            limit = min(limit, budget)
            why += ", budget %d" % budget
        ok = value <= limit
        why = "recorded %d, at most %d (%s)" % (recorded[name], limit, why)
    print("%s %s: %d instructions per unit; %s" % ("ok  " if ok else "FAIL", name, value, why))
    passed, failed = passed + ok, failed + (not ok)
for name in sorted(set(recorded) - set(measured)):
    print("FAIL %s: recorded but no longer a bench-counts scenario (scripts/bench.sh --record)" % name)
    failed += 1
print("bench: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
EOF
    exit $?
fi

printf '| %-22s | %-11s | %14s | %14s |\n' benchmark unit "instructions" "allocations"
printf '|%s|%s|%s|%s|\n' "------------------------" "-------------" "---------------:" "---------------:"
while IFS=$'\t' read -r name unit units; do
    read -r low high < <(iterations "$name")
    per_ir=$(per_unit_instructions "$name" "$units")
    # Steady state: the mallocs of operations low+1…high only (bench-counts hooks malloc around each stretch).
    mallocs=$("$bin" allocs "$name" "$low" "$high" | sed -n 's/.*mallocs=\([0-9]*\).*/\1/p')
    per_alloc=$(awk -v m="$mallocs" -v n=$((high - low)) -v u="$units" 'BEGIN { printf "%.2f", m / n / u }')
    printf '| %-22s | %-11s | %14s | %14s |\n' "$name" "$unit" "$per_ir" "$per_alloc"
done < <("$bin" list)

[[ $mode == --rss ]] || exit 0

# VmRSS of a running `carbridge run` against car-sim, after it has settled (3 s): debug, release, and
# release with the Swift runtime and Foundation linked statically (its own scratch directory).
for config in debug release static; do
    case $config in
        static) swift build -c release --static-swift-stdlib "${release_flags[@]}" --scratch-path "$root/.build-bench-static" --product carbridge >&2
                cb=$root/.build-bench-static/release/carbridge ;;
        release) swift build -c release "${release_flags[@]}" --scratch-path "$root/.build-bench-main" --product carbridge >&2
                cb=$root/.build-bench-main/release/carbridge ;;
        *)      swift build -c debug --scratch-path "$root/.build-bench-main" --product carbridge >&2
                cb=$root/.build-bench-main/debug/carbridge ;;
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

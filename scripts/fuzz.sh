#!/usr/bin/env bash
# Coverage-guided fuzzing of carbridge's parsers of outside bytes with libFuzzer.
#   scripts/fuzz.sh [--seconds N] [TARGET…]
# Builds the targets of the separate package in Fuzz/ (it depends on this package by path) with
#   swift build --package-path Fuzz -c release --sanitize=fuzzer --sanitize=address --scratch-path .build-fuzz \
#     -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp
# and runs each TARGET (default: all) for N seconds (default 20) with -max_total_time=N on a scratch copy of
# its seed corpus Fuzz/Corpus/TARGET (the committed corpus never grows). Prints per target the executions
# and whether it crashed (a crashing input is kept in .build-fuzz/crashes/TARGET/), then one line
# `fuzz: N passed, N failed`; exits 1 when a target crashed or could not run.
# Targets: FuzzEvemu FuzzConfig FuzzCarLines FuzzKeys FuzzInputEvents FuzzIIOValue FuzzLinkURL, and the
# dashboard's parsers of a browser's bytes: FuzzClientMessage FuzzLoginForm FuzzJoinQuery FuzzCookie
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
# SwiftPM names a package by its directory's last component, lower-cased: a checkout in a directory called
# "fuzz" has the identity of Fuzz/ itself, and the build fails with "product 'CarbridgeModules' not found".
if [ "$(basename "$root" | tr '[:upper:]' '[:lower:]')" = fuzz ]; then
  echo "fuzz: the checkout's directory is named $(basename "$root"), the same package identity as Fuzz/: clone or move it elsewhere" >&2
  exit 1
fi
all_targets=(FuzzEvemu FuzzConfig FuzzCarLines FuzzKeys FuzzInputEvents FuzzIIOValue FuzzLinkURL
             FuzzClientMessage FuzzLoginForm FuzzJoinQuery FuzzCookie)

seconds=20
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="${2:?--seconds needs a number}"; shift 2 ;;
    --seconds=*) seconds="${1#--seconds=}"; shift ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz: unknown option $1 (use --seconds N)" >&2; exit 64 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -ge 1 ] || { echo "fuzz: --seconds wants a whole number ≥ 1" >&2; exit 64; }
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  [[ " ${all_targets[*]} " == *" $t "* ]] || { echo "fuzz: unknown target $t (targets: ${all_targets[*]})" >&2; exit 64; }
done

# What the build needs: the system libraries, and libFuzzer's runtime in the Swift toolchain's clang
# resource directory (the swift.org toolchains ship it; if one does not, take Debian's LLVM build of it).
scripts/install-deps.sh
swiftc_path=$(readlink -f "$(command -v swiftc)")
resource_dir="$(dirname "$swiftc_path")/../lib/swift/clang/lib/linux"
arch=$(uname -m)
if ! ls "$resource_dir"/libclang_rt.fuzzer-"$arch".a >/dev/null 2>&1; then
  echo "fuzz: libFuzzer's runtime is missing from the Swift toolchain ($resource_dir); installing Debian's" >&2
  scripts/install-deps.sh libclang-rt-dev
  for lib in /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer*-"$arch".a; do
    [ -e "$lib" ] && install -D -m 0644 "$lib" "$resource_dir/$(basename "$lib")"
  done
  ls "$resource_dir"/libclang_rt.fuzzer-"$arch".a >/dev/null 2>&1 \
    || { echo "fuzz: no libclang_rt.fuzzer-$arch.a could be installed into $resource_dir" >&2; exit 1; }
fi

scratch="$root/.build-fuzz"
# -sanitize=fuzzer alone gives Swift modules no coverage instrumentation under -whole-module-optimization
# (release builds): ask for libFuzzer's coverage explicitly, or the fuzzer runs blind on the Swift code.
build=(swift build --package-path Fuzz -c release --sanitize=fuzzer --sanitize=address --scratch-path "$scratch"
       -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp)
started=$(date +%s)
# All targets in one build (it also builds the carbridge executable of the package Fuzz/ uses, but one
# invocation took half the CPU time of seven `--product` builds: 2.6 against 4.8 CPU minutes from cold).
"${build[@]}"
echo "fuzz: built in $(( $(date +%s) - started )) s"
bin=$("${build[@]}" --show-bin-path)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
for t in "${targets[@]}"; do
  corpus="$work/$t/corpus"
  artifacts="$scratch/crashes/$t"
  mkdir -p "$corpus" "$artifacts"
  cp Fuzz/Corpus/"$t"/* "$corpus"/ 2>/dev/null || true
  options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/")
  # TOMLKit 0.6.0 (a dependency) leaks a few hundred bytes per parsed document; LeakSanitizer would stop
  # the config target on its first input. Every other finding (ASan errors, traps, invariants) still counts.
  asan=""
  [ "$t" = FuzzConfig ] && asan="detect_leaks=0"
  log="$work/$t.log"
  set +e
  # Swift's own crash backtracer would run under ASan and trip it; libFuzzer reports the crash itself.
  SWIFT_BACKTRACE=enable=no ASAN_OPTIONS="$asan" timeout $((seconds + 120)) "$bin/$t" "${options[@]}" "$corpus" >"$log" 2>&1
  rc=$?
  set -e
  runs=$(grep -E '^stat::number_of_executed_units:' "$log" | tail -1 | awk '{print $2}')
  runs=${runs:-$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')}
  if [ "$rc" = 0 ] && ! grep -qE '^==[0-9]+==ERROR|deadly signal|fuzz invariant failed' "$log"; then
    passed=$((passed + 1))
    echo "fuzz: $t: ${runs:-0} executions in ${seconds} s, no crash"
  else
    failed=$((failed + 1))
    crash=$(grep -oE "Test unit written to [^ ]+" "$log" | tail -1 | sed 's/Test unit written to //')
    echo "fuzz: $t: CRASHED after ${runs:-?} executions (exit $rc)${crash:+; input: $crash}"
    grep -E 'fuzz invariant failed|Fatal error|==ERROR|SUMMARY|deadly signal' "$log" | head -5 | sed 's/^/    /'
    tail -n 40 "$log" > "$artifacts/last.log"
  fi
done
echo "fuzz: ${#targets[@]} targets ran ${seconds} s each; total $(( $(date +%s) - started )) s with the build"
echo "fuzz: $passed passed, $failed failed"
[ "$failed" = 0 ]

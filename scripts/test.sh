#!/usr/bin/env bash
# The test command: builds carbridge and runs every test.
#   scripts/test.sh              unit + end-to-end tests (swift test), the dashboard in a browser
#                                (Tests/browser/run.sh), the performance guard (Benchmarks/, release),
#                                the Debian package (scripts/package.sh, Tests/package/check.sh), then the
#                                real-kernel scenarios in a QEMU guest (Tests/kernel/run.sh --install)
#   scripts/test.sh --fuzz       also 20 s of libFuzzer per fuzz target (scripts/fuzz.sh --seconds 20, about
#                                6 minutes with its build); not in CI's run, which must stay under 30 minutes
#   scripts/test.sh --no-kernel  without the real-kernel stage (no root, no QEMU needed)
#   scripts/test.sh --no-browser without the dashboard's browser stage (headless Chromium through Selenium,
#                                about 20 s; installs its packages)
#   scripts/test.sh --no-car     without the car firmware's stage (Tests/avr/run.sh: `make -C car`, its host unit
#                                tests, carbridge driving the firmware on a simulated ATmega328P; about a minute)
#   scripts/test.sh --no-bench   without the performance guard (scripts/bench.sh --check: 0 heap allocations
#                                per input event and per stream tick, instructions per event and tick within
#                                10 % of Benchmarks/Thresholds/instructions.json and under 10,000; about 4
#                                CPU-minutes of build on a cold cache, then about 20 s of callgrind)
#   scripts/test.sh --no-package without the Debian package's stage (scripts/package.sh: a static release
#                                build, dpkg-buildpackage; then Tests/package/check.sh: lintian, contents,
#                                Depends, man pages, the binary without a Swift runtime). Its release
#                                binary is the one the kernel stage's latency scenario measures and the one
#                                whose start-up instructions are checked (scripts/startup.sh --check: at most
#                                25 million from exec to the car's connect(2), a few seconds); without this
#                                stage the kernel stage builds its own and the start-up check is skipped
#   scripts/test.sh --no-system  without the Debian system stage (Tests/system/run.sh: the package installed by
#                                apt on Debian 12 with systemd as PID 1 in a QEMU guest, carbridge@red driven
#                                and killed there; about 4 minutes, plus a few for the image when it is not
#                                cached). It tests the package stage's .deb, or builds one
#   (--no-fuzz is accepted and is the default.)
# Each stage's counts add up into the last line, `total: N passed, N failed` (one check per fuzz target).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/release-flags.sh
kernel=1
fuzz=0
browser=1
car=1
bench=1
package=1
system=1
for arg in "$@"; do
  case "$arg" in
    --no-kernel) kernel=0 ;;
    --no-fuzz) fuzz=0 ;;
    --fuzz) fuzz=1 ;;
    --no-browser) browser=0 ;;
    --no-bench) bench=0 ;;
    --no-car) car=0 ;;
    --no-package) package=0 ;;
    --no-system) system=0 ;;
    *) echo "test.sh: unknown option $arg (use --fuzz, --no-kernel, --no-browser, --no-car, --no-bench, --no-package, --no-system)" >&2; exit 64 ;;
  esac
done
# Each stage's wall time, for the line before the total (CI must stay well under 30 minutes).
timings=""
stage_start=$SECONDS
stage_done() { timings="$timings $1 $((SECONDS - stage_start))s;"; stage_start=$SECONDS; }
scripts/install-deps.sh
swift build --build-tests
stage_done build
# The package stage's build (the static release build of both programs, the dashboard's two copies of
# BoringSSL among it: the longest compile of the run) starts now, in the background at the lowest CPU
# priority: it takes the cycles the unit tests, the browser, the car and the bench stages leave idle, and
# the package stage waits for it. Its tools are installed first, so no two apt-gets run at once; the stages
# that check timings (browser, kernel) keep the CPU, and the kernel stage starts only after it.
package_build_pid=""
package_build_log=$(mktemp)
if [ "$package" = 1 ]; then
  scripts/package.sh --deps-only
  nice -n 19 scripts/package.sh > "$package_build_log" 2>&1 &
  package_build_pid=$!
fi
log=$(mktemp)
trap 'rm -f "$log" "$package_build_log"; [ -z "$package_build_pid" ] || kill "$package_build_pid" 2>/dev/null || true' EXIT
# All tests are XCTest; Swift Testing would only add a "0 tests" summary after them.
set +e
swift test --skip-build --disable-swift-testing 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
summary=$(grep -E "^[[:space:]]*Executed [0-9]+ tests?, with [0-9]+ failures?" "$log" | tail -1)
executed=$(echo "$summary" | sed -E 's/.*Executed ([0-9]+) tests?.*/\1/')
failures=$(echo "$summary" | sed -E 's/.*with ([0-9]+) failures?.*/\1/')
if [ -z "$summary" ]; then
  echo "swift test: no XCTest summary found (exit $rc)"
  executed=0; failures=1; rc=1
fi
passed=$((executed - failures))
failed=$failures
# What failed, kept for the end of the output (CI may show only the last part of it).
recap=$(grep -E "^Test Case .* failed|: error: |Fatal error|Exited with (unexpected )?signal|error: Exited" "$log" | head -40 || true)
echo "unit+e2e: $passed passed, $failed failed"
stage_done swift-test
# Runs one stage's command (its output shown as it comes) and adds its closing `[word: ]N passed, N failed`
# line into the totals; its `FAIL …` lines, or a missing summary, go into the recap at the end.
run_stage() {
  local name=$1 slog src sline srecap
  shift
  slog=$(mktemp)
  set +e
  "$@" 2>&1 | tee "$slog"
  src=${PIPESTATUS[0]}
  set -e
  # `|| true`: a stage that printed no summary must not end this script here (set -e, pipefail).
  sline=$(grep -E "^([a-z]+: )?[0-9]+ passed, [0-9]+ failed" "$slog" | tail -1 | sed -E 's/^[a-z]+: //' || true)
  srecap=$(grep -E "^FAIL " "$slog" | head -20 || true)
  rm -f "$slog"
  if [ -n "$sline" ]; then
    passed=$((passed + $(echo "$sline" | awk '{print $1}')))
    failed=$((failed + $(echo "$sline" | awk '{print $3}')))
  else
    failed=$((failed + 1))
    srecap="$name: no summary line (exit $src)"
  fi
  [ "$src" = 0 ] || rc=1
  if [ -n "$srecap" ]; then recap="$recap"$'\n'"$srecap"; fi
}
# The performance budgets (issue 30): allocations counted by malloc-interposer and instructions by callgrind,
# identical on every machine; wall time is never checked. One line per check, then `bench: N passed, N failed`.
bench_stage() {
  scripts/bench.sh --check
}
# The Debian package: built, then checked (its own `package: N passed, N failed`). A failed build still
# runs the checks, which then report the missing package.
package_stage() {
  local prc=0 crc=0
  prc=$package_build_rc
  cat "$package_build_log"
  Tests/package/check.sh || crc=$?
  [ "$prc" = 0 ] && [ "$crc" = 0 ]
}
# The real-kernel scenarios. Scenario 11 measures a release build against a C reader (a debug build
# falls behind a 500 Hz pad under TCG): the package stage's static release binary when that stage built
# its package in this run (package.sh deletes the old .deb first), so CI builds carbridge in release
# once; otherwise (--no-package, or its build failed) one built in the bench stage's scratch directory,
# whose release modules it reuses.
kernel_stage() {
  local lbin=()
  if [ "$package" = 1 ] && ls .build-release/carbridge_*.deb > /dev/null 2>&1 && [ -x .build-release/release/carbridge ]; then
    lbin=(--latency-bin "$PWD/.build-release/release/carbridge")
  elif swift build -c release --static-swift-stdlib --package-path Benchmarks --scratch-path "$PWD/.build-bench" \
      "${release_flags[@]}" --product carbridge; then
    lbin=(--latency-bin "$PWD/.build-bench/release/carbridge")
  else
    echo "kernel: the release build failed; scenario 11 measures the debug build"
  fi
  Tests/kernel/run.sh --install "${lbin[@]}"
}
if [ "$browser" = 1 ]; then run_stage browser Tests/browser/run.sh; fi
stage_done browser
if [ "$car" = 1 ]; then
  # The car's firmware (car/, docs/car.md): built with Debian's AVR toolchain and Arduino core, its host
  # unit tests, then carbridge driving it on a simulated ATmega328P (libsimavr). install-deps.sh installs
  # those packages; only where they could not be installed is the stage skipped, and it says so.
  missing_avr=$(scripts/install-deps.sh --check-car || true)
  if [ -n "$missing_avr" ]; then
    echo "car: SKIPPED: the AVR packages could not be installed ($missing_avr)"
  else
    run_stage car Tests/avr/run.sh --carbridge "$PWD/.build/debug/carbridge"
  fi
fi
stage_done car
if [ "$bench" = 1 ]; then run_stage bench bench_stage; fi
stage_done bench
if [ "$package" = 1 ]; then
  # In this shell: the build is its child (run_stage runs the stage in a pipeline's subshell).
  package_build_rc=0
  wait "$package_build_pid" || package_build_rc=$?
  package_build_pid=""
  run_stage package package_stage
fi
stage_done package
# The start-up budget, on the package stage's static release binary (callgrind, deterministic).
if [ "$package" = 1 ]; then
  if [ -x .build-release/release/carbridge ] && ls .build-release/carbridge_*.deb > /dev/null 2>&1; then
    run_stage startup scripts/startup.sh --check .build-release/release/carbridge
  else
    echo "FAIL: startup: the package stage built no binary to measure"
    failed=$((failed + 1)); rc=1; recap="$recap"$'\n'"startup: no binary from the package stage"
  fi
fi
stage_done startup
# The package on a real Debian 12 with systemd as PID 1 (QEMU): the .deb the package stage built in this run
# (package.sh deletes the old one first; if it built none, this stage fails at once rather than build it
# again). With --no-package: the newest .deb in .build-release, or one Tests/system/run.sh builds.
system_stage() {
  local deb
  if [ "$package" = 1 ]; then
    deb=$(ls -t .build-release/carbridge_*_"$(dpkg --print-architecture)".deb 2> /dev/null | head -1)
    if [ -z "$deb" ]; then
      echo "FAIL: system: the package stage built no .deb"
      echo "system: 0 passed, 1 failed"
      return 1
    fi
    Tests/system/run.sh --install --deb "$deb"
  else
    Tests/system/run.sh --install
  fi
}
if [ "$system" = 1 ]; then run_stage system system_stage; fi
stage_done system
if [ "$fuzz" = 1 ]; then run_stage fuzz scripts/fuzz.sh --seconds 20; fi
stage_done fuzz
if [ "$kernel" = 1 ]; then run_stage kernel kernel_stage; fi
if [ -n "$recap" ]; then
  echo "failures (repeated from above):"
  echo "$recap"
fi
stage_done kernel
echo "stage times:$timings"
echo "total: $passed passed, $failed failed"
exit "$rc"

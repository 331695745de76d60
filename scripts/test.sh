#!/usr/bin/env bash
# The test command: builds carbridge and runs every test.
#   scripts/test.sh              unit + end-to-end tests (swift test), then the real-kernel
#                                scenarios in a QEMU guest (Tests/kernel/run.sh --install)
#   scripts/test.sh --no-kernel  unit + end-to-end tests only (no root, no QEMU needed)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build --build-tests
log=$(mktemp)
trap 'rm -f "$log"' EXIT
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
echo "unit+e2e: $passed passed, $failed failed"
if [ "${1:-}" != "--no-kernel" ]; then
  klog=$(mktemp)
  set +e
  Tests/kernel/run.sh --install 2>&1 | tee "$klog"
  krc=${PIPESTATUS[0]}
  set -e
  kline=$(grep -E "^[0-9]+ passed, [0-9]+ failed" "$klog" | tail -1)
  rm -f "$klog"
  if [ -n "$kline" ]; then
    passed=$((passed + $(echo "$kline" | awk '{print $1}')))
    failed=$((failed + $(echo "$kline" | awk '{print $3}')))
  else
    failed=$((failed + 1))
  fi
  [ "$krc" = 0 ] || rc=1
fi
echo "total: $passed passed, $failed failed"
exit "$rc"

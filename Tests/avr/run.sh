#!/usr/bin/env bash
# The car firmware's tests: builds car/ (the firmware, a FAILSAFE_MS=0 variant, the simavr harness),
# runs the host unit tests, then the end-to-end tests (e2e.py: carbridge driving the firmware on a
# simulated ATmega328P through a pty). Ends with `N passed, N failed` over both.
#   Tests/avr/run.sh [--carbridge BIN]     (default: $CARBRIDGE_BIN or .build/debug/carbridge)
# Logs of each run go to Tests/avr/out/<time>/.
set -euo pipefail
cd "$(dirname "$0")/../.."
carbridge="${CARBRIDGE_BIN:-$PWD/.build/debug/carbridge}"
while [ $# -gt 0 ]; do
  case "$1" in
    --carbridge) carbridge="$2"; shift 2 ;;
    *) echo "run.sh: unknown option $1 (use --carbridge BIN)" >&2; exit 64 ;;
  esac
done
make -s -C car all sim
make -s -C car FAILSAFE_MS=0 BUILD=build-nofailsafe all
set +e
unit=$(make -s -C car test 2>&1)
urc=$?
set -e
echo "$unit"
uline=$(echo "$unit" | grep -E "^[0-9]+ passed, [0-9]+ failed" | tail -1)
upassed=$(echo "${uline:-0 passed, 1 failed}" | awk '{print $1}')
ufailed=$(echo "${uline:-0 passed, 1 failed}" | awk '{print $3}')
[ -n "$uline" ] || echo "FAIL host unit tests: no summary line (exit $urc)"
set +e
e2e=$(python3 Tests/avr/e2e.py --carbridge "$carbridge" --harness car/build/car-sim-avr --firmware car/build/car.elf \
  --no-failsafe-firmware car/build-nofailsafe/car.elf 2>&1 | tee /dev/stderr)
erc=$?
set -e
eline=$(echo "$e2e" | grep -E "^[0-9]+ passed, [0-9]+ failed" | tail -1)
epassed=$(echo "${eline:-0 passed, 1 failed}" | awk '{print $1}')
efailed=$(echo "${eline:-0 passed, 1 failed}" | awk '{print $3}')
[ -n "$eline" ] || echo "FAIL e2e: no summary line (exit $erc)"
echo "$((upassed + epassed)) passed, $((ufailed + efailed)) failed"
[ "$urc" = 0 ] && [ "$erc" = 0 ] && [ -n "$eline" ]

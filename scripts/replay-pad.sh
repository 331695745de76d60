#!/usr/bin/env bash
# Prints a 20 s evemu recording of an Xbox 360 pad for `carbridge run --replay` (scripts/rss.sh):
# Tests/DriveInputTests/Fixtures/xbox360-pad.evemu's header, engine on,
# Speed+ three times, then a stick and trigger report every 20 ms, so a frame streams every period.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -v '^E:' Tests/DriveInputTests/Fixtures/xbox360-pad.evemu
echo "E: 0.100000 0001 013b 0001"
echo "E: 0.100000 0000 0000 0000"
echo "E: 0.150000 0001 013b 0000"
echo "E: 0.150000 0000 0000 0000"
# Speed+ (BTN_TR) three times: the car moves, so a motion frame goes out every period.
for t in 0.16 0.17 0.18; do
  echo "E: ${t}0000 0001 0137 0001"
  echo "E: ${t}0000 0000 0000 0000"
  echo "E: ${t}5000 0001 0137 0000"
  echo "E: ${t}5000 0000 0000 0000"
done
awk 'BEGIN {
  for (i = 0; i < 1000; i++) {
    t = 0.2 + i * 0.02
    printf "E: %.6f 0003 0005 %04d\n", t, (i * 7) % 256
    printf "E: %.6f 0003 0000 %d\n", t, ((i * 997) % 65535) - 32768
    printf "E: %.6f 0000 0000 0000\n", t
  }
}'

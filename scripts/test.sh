#!/usr/bin/env bash
# The test command: builds carbridge and runs every unit and end-to-end test.
#   scripts/test.sh            unit + end-to-end tests (swift test)
#   scripts/test.sh --kernel   also the real-kernel scenarios in a QEMU guest (Tests/kernel/run.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! pkg-config --exists libevdev libudev bluez 2>/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends libevdev-dev libudev-dev libbluetooth-dev pkg-config
  else
    echo "scripts/test.sh: needs libevdev-dev libudev-dev libbluetooth-dev pkg-config (sudo apt-get install …)" >&2
    exit 1
  fi
fi
swift build --build-tests
swift test --skip-build

#!/usr/bin/env bash
# The main job on its built-in default: installs the system libraries if missing, builds,
# and runs `carbridge run` (the built-in simulated car, driven from this terminal's keyboard).
# Extra arguments go to `carbridge run`, e.g. scripts/run.sh --link tcp://127.0.0.1:7000
set -euo pipefail
cd "$(dirname "$0")/.."
if ! pkg-config --exists libevdev libudev bluez 2>/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends libevdev-dev libudev-dev libbluetooth-dev pkg-config
  else
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends libevdev-dev libudev-dev libbluetooth-dev pkg-config
  fi
fi
swift build -c release --product carbridge
exec .build/release/carbridge run "$@"

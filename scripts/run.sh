#!/usr/bin/env bash
# The main job on its built-in default: installs the system libraries if missing, builds,
# and runs `carbridge run` (the built-in simulated car, driven from this terminal's keyboard).
# Extra arguments go to `carbridge run`, e.g. scripts/run.sh --link tcp://127.0.0.1:7000
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
. scripts/release-flags.sh
swift build -c release "${release_flags[@]}" --product carbridge
# `run` execs carbridge-dashboard from the same directory when the dashboard is on (--dashboard, or
# [dashboard] listen in a --config file): build it too then.
for arg in "$@"; do
  case $arg in --dashboard* | --config*) swift build -c release "${release_flags[@]}" --product carbridge-dashboard; break ;; esac
done
exec .build/release/carbridge run "$@"

#!/usr/bin/env bash
# The dashboard's browser stage (scripts/test.sh runs it; --no-browser skips it): headless Chromium
# through Selenium against `carbridge run --dashboard … --link tcp://…` with a listening car, the
# security checks over raw HTTP/WebSocket, /metrics through prometheus_client's parser, joining by QR code
# (zbarimg decodes the page's and the live view's code), and the stream
# jitter with 0 and 5 browsers connected. Installs its Debian packages when missing (root or sudo).
# Prints PASS/FAIL lines and `N passed, N failed`. Artifacts (screenshots, logs): Tests/browser/out/.
#   Tests/browser/run.sh [--bin PATH] [--screenshot docs/dashboard.png]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=.build/debug/carbridge
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --screenshot) extra+=(--screenshot "$2"); shift 2 ;;
    *) echo "browser: unknown option $1" >&2; exit 64 ;;
  esac
done
scripts/install-deps.sh chromium chromium-driver python3-selenium python3-prometheus-client python3-websocket zbar-tools curl openssl >&2
# `run --dashboard` execs carbridge-dashboard from the same directory (Sources/CarbridgeCommands/DashboardBuild.swift).
[ -x "$bin" ] && [ -x "$(dirname "$bin")/carbridge-dashboard" ] || swift build
out=Tests/browser/out/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
# Debian's python3 (the first python3 on PATH may be another one without these modules).
exec timeout 200 /usr/bin/python3 Tests/browser/dashboard_test.py --bin "$bin" --out "$out" "${extra[@]}"

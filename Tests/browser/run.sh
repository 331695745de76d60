#!/usr/bin/env bash
# The dashboard's browser stage (scripts/test.sh runs it; --no-browser skips it): headless Chromium
# through Selenium against `carbridge run --dashboard … --link tcp://…` with a listening car, the
# security checks over raw HTTP/WebSocket, /metrics through prometheus_client's parser, joining by QR code
# (zbarimg decodes the page's and the live view's code), and the stream
# jitter with 0 and 5 browsers connected. Installs its Debian packages when missing (root or sudo).
# Prints PASS/FAIL lines and `N passed, N failed`. Artifacts (screenshots, logs): Tests/browser/out/.
# The driver's page is checked with axe-core, taken from PyPI's axe-selenium-python (its bundled axe.min.js;
# fetched once into .build/axe with pip download, never installed into the system's Python).
#   Tests/browser/run.sh [--bin PATH] [--screenshot docs/dashboard.png] [--only driver_part,phone_part]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=.build/debug/carbridge
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --screenshot) extra+=(--screenshot "$2"); shift 2 ;;
    --only) extra+=(--only "$2"); shift 2 ;;
    *) echo "browser: unknown option $1" >&2; exit 64 ;;
  esac
done
scripts/install-deps.sh chromium chromium-driver python3-selenium python3-prometheus-client python3-websocket zbar-tools curl openssl python3-pip >&2
axe=.build/axe/axe.min.js
if [ ! -s "$axe" ]; then
  mkdir -p .build/axe
  /usr/bin/python3 -m pip download --quiet --no-deps --disable-pip-version-check -d .build/axe axe-selenium-python==2.1.6 >&2 &&
    /usr/bin/python3 -c 'import glob, sys, zipfile
wheel = zipfile.ZipFile(glob.glob(".build/axe/axe_selenium_python-*.whl")[0])
open(sys.argv[1], "wb").write(wheel.read("axe_selenium_python/node_modules/axe-core/axe.min.js"))' "$axe" ||
    echo "browser: could not fetch axe-core (axe-selenium-python from PyPI): its checks will fail" >&2
fi
# `run --dashboard` execs carbridge-dashboard from the same directory (Sources/CarbridgeCommands/DashboardBuild.swift).
[ -x "$bin" ] && [ -x "$(dirname "$bin")/carbridge-dashboard" ] || swift build
out=Tests/browser/out/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
# Debian's python3 (the first python3 on PATH may be another one without these modules).
exec timeout 300 /usr/bin/python3 Tests/browser/dashboard_test.py --bin "$bin" --out "$out" --axe "$axe" "${extra[@]}"

#!/usr/bin/env bash
# Writes Linker/carbridge.order and Linker/carbridge-dashboard.order: the functions `carbridge run` executes
# (and, for the dashboard build, a run serving a browser), which release builds link first (lld
# --symbol-ordering-file, Package.swift), so the code a run touches sits in a few hundred contiguous pages
# instead of being spread over the whole binary, where the kernel's fault-around maps 64 kB around every
# page touched (docs/performance.md, "Resident memory, third pass").
#   scripts/symbol-order.sh [BINARY]     default: .build-release/release/carbridge (scripts/package.sh)
# BINARY must be a release build with its symbol table (not stripped), carbridge-dashboard next to it. They
# run under callgrind (valgrind), with mangled names, against `carbridge car-sim` on loopback TCP:
# - carbridge: `run --config config/carbridge.toml --link tcp://…` with scripts/replay-pad.sh's recording for
#   8 s and SIGTERM (start, config, link, the stream, shutdown), then the same with the built-in defaults
#   (`--link sim`, no config file) for 3 s;
# - carbridge-dashboard: the first of those with `--dashboard` for 14 s, while a client (Debian's
#   python3-websocket) loads the page and /metrics and reads the WebSocket's states for 6 s.
# Every executed function that is a symbol of the binary goes into its file, sorted by name. Run it again
# when the run's code has changed a lot: a function missing from the file is only linked among the cold
# ones, and names that no longer exist are ignored (scripts/package.sh prints how many of each file's names
# the binary has).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-.build-release/release/carbridge}")
command -v valgrind >/dev/null || { echo "symbol-order: needs valgrind (apt install valgrind)" >&2; exit 1; }
work=$(mktemp -d)
sim=""
cleanup() {
  [ -n "$sim" ] && kill "$sim" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

dash=$(dirname "$bin")/carbridge-dashboard
[ -x "$dash" ] || { echo "symbol-order: no carbridge-dashboard next to $bin" >&2; exit 1; }
/usr/bin/python3 -c 'import websocket' 2>/dev/null || { echo "symbol-order: needs python3-websocket" >&2; exit 1; }
# valgrind cannot read the DWARF 5 that Swift writes; the symbol table is all this needs.
strip --strip-debug -o "$work/carbridge" "$bin"
strip --strip-debug -o "$work/carbridge-dashboard" "$dash"
scripts/replay-pad.sh > "$work/pad.evemu"
. scripts/car-sim-lib.sh
start_car_sim "$bin"
profile() {
  local program=$1 seconds=$2 out=$3
  shift 3
  timeout -s TERM "$seconds" valgrind --tool=callgrind --callgrind-out-file="$out" --dump-instr=no --demangle=no \
    "$work/$program" run "$@" --no-keyboard --no-view </dev/null >"$out.log" 2>&1 || true
  grep -q '^summary:' "$out" || { echo "symbol-order: no profile from $program run $*:" >&2; cat "$out.log" >&2; exit 1; }
}
# order BINARY FILE PROFILE...: callgrind names each function once, as "fn=(ID) NAME" or "cfn=(ID) NAME";
# keep those BINARY defines. The steady path goes first, in Linker/carbridge.steady's order: the functions
# one pad report runs (kernel measurement 91's two profiles, Tests/kernel/tools/callgrind_report.py --names;
# the replay here reads no evdev device, so it cannot tell them): 37 kB in 11 pages instead of
# spread over the start-up's few hundred. Under QEMU's TCG every page a report touches costs a page-table
# walk after each context switch (docs/performance.md, "The per-report path, eighth pass").
order() {
  local binary=$1 file=$2
  shift 2
  grep -ohE '^c?fn=\([0-9]+\) .*' "$@" | sed -E 's/^c?fn=\([0-9]+\) //' | sort -u > "$work/executed"
  nm --defined-only "$binary" | awk 'NF == 3 { print $3 }' | sort -u > "$work/symbols"
  awk 'NR == FNR { defined[$0] = 1; next } ($0 in defined) && !seen[$0]++' "$work/symbols" Linker/carbridge.steady \
    > "$work/steady"
  comm -12 "$work/executed" "$work/symbols" | awk 'FILENAME == ARGV[1] { steady[$0] = 1; next } !($0 in steady)' "$work/steady" - \
    | cat "$work/steady" - > "$file"
  echo "symbol-order: $file: $(wc -l < "$file") functions ($(wc -l < "$work/executed") executed," \
    "the first $(wc -l < "$work/steady") from Linker/carbridge.steady)"
}
tcp=(--config config/carbridge.toml --link "tcp://127.0.0.1:$port" --replay "$work/pad.evemu")
profile carbridge 8 "$work/tcp.out" "${tcp[@]}"
profile carbridge 3 "$work/sim.out" --link sim --replay "$work/pad.evemu"
order "$bin" Linker/carbridge.order "$work/tcp.out" "$work/sim.out"

web=$((20000 + RANDOM % 20000))
profile carbridge-dashboard 14 "$work/dashboard.out" "${tcp[@]}" --dashboard "127.0.0.1:$web" &
profiled=$!
/usr/bin/python3 - "$web" <<'PY'
import sys, time, urllib.request, websocket
base = "http://127.0.0.1:%s" % sys.argv[1]
for _ in range(300):    # valgrind starts slowly
    try:
        urllib.request.urlopen(base + "/metrics", timeout=2).read()
        break
    except OSError:
        time.sleep(0.1)
urllib.request.urlopen(base + "/", timeout=5).read()
ws = websocket.create_connection(base.replace("http", "ws") + "/ws", origin=base, timeout=10)
end, states = time.monotonic() + 6, 0
while time.monotonic() < end:
    ws.recv()
    states += 1
    if states % 10 == 0:
        ws.send('{"type":"ping"}')
        urllib.request.urlopen(base + "/metrics", timeout=5).read()
ws.close()
print("symbol-order: the dashboard sent %d states" % states)
PY
wait "$profiled"
order "$dash" Linker/carbridge-dashboard.order "$work/dashboard.out"

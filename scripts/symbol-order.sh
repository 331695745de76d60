#!/usr/bin/env bash
# Writes Linker/carbridge.order: the functions `carbridge run` executes, which release builds link first
# (lld --symbol-ordering-file, Package.swift), so the code a run touches sits in a few hundred contiguous
# pages instead of being spread over the whole binary, where the kernel's fault-around maps 64 kB around
# every page touched (docs/performance.md, "Resident memory, third pass").
#   scripts/symbol-order.sh [BINARY]     default: .build-release/release/carbridge (scripts/package.sh)
# BINARY must be a release build with its symbol table (not stripped). It runs under callgrind
# (valgrind), with mangled names: `carbridge car-sim` on loopback TCP, then `run --config
# config/carbridge.toml --link tcp://…` with scripts/replay-pad.sh's recording for 8 s and SIGTERM (start,
# config, link, the stream, shutdown), then the same with the built-in defaults (`--link sim`, no config
# file) for 3 s. Every executed function that is a symbol of BINARY goes into the file, sorted by name.
# Run it again when the run's code has changed a lot: a function missing from the file is only linked
# among the cold ones, and names that no longer exist are ignored (scripts/package.sh prints how many of
# the file's names the binary has).
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

# valgrind cannot read the DWARF 5 that Swift writes; the symbol table is all this needs.
strip --strip-debug -o "$work/carbridge" "$bin"
scripts/replay-pad.sh > "$work/pad.evemu"
. scripts/car-sim-lib.sh
start_car_sim "$bin"
profile() {
  local seconds=$1 out=$2
  shift 2
  timeout -s TERM "$seconds" valgrind --tool=callgrind --callgrind-out-file="$out" --dump-instr=no --demangle=no \
    "$work/carbridge" run "$@" --no-keyboard --no-view </dev/null >"$out.log" 2>&1 || true
  grep -q '^summary:' "$out" || { echo "symbol-order: no profile from run $*:" >&2; cat "$out.log" >&2; exit 1; }
}
profile 8 "$work/tcp.out" --config config/carbridge.toml --link "tcp://127.0.0.1:$port" --replay "$work/pad.evemu"
profile 3 "$work/sim.out" --link sim --replay "$work/pad.evemu"

# callgrind names each function once, as "fn=(ID) NAME" or "cfn=(ID) NAME"; keep those the binary defines.
grep -ohE '^c?fn=\([0-9]+\) .*' "$work/tcp.out" "$work/sim.out" | sed -E 's/^c?fn=\([0-9]+\) //' | sort -u > "$work/executed"
nm --defined-only "$bin" | awk 'NF == 3 { print $3 }' | sort -u > "$work/symbols"
comm -12 "$work/executed" "$work/symbols" > Linker/carbridge.order
echo "symbol-order: Linker/carbridge.order: $(wc -l < Linker/carbridge.order) functions ($(wc -l < "$work/executed") executed)"

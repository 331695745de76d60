#!/usr/bin/env bash
# Start-up cost of `carbridge run`, in instructions: from exec to the connect(2) that opens the link to the car.
#   scripts/startup.sh BINARY            e.g. scripts/startup.sh .build-release/release/carbridge (scripts/package.sh)
#   scripts/startup.sh --check BINARY    also judges it against the budget, 25 million (issue 30): one
#                                        `ok`/`FAIL` line and `startup: N passed, N failed`, exit 1 over it
# Prints `METRIC startup_instructions N`. Needs valgrind and strace. STARTUP_KEEP=1 keeps the work directory
# (the callgrind dumps, for callgrind_annotate).
#
# How: `BINARY car-sim` listens on a free loopback port; `BINARY run --config config/carbridge.toml --link
# tcp://127.0.0.1:PORT --no-keyboard --no-view` (every key of the config parsed, no pad) runs under
# `valgrind --tool=callgrind --dump-before=connect`, so callgrind writes its counts out and starts from zero
# each time the program enters libc's connect(): the first dump holds the instructions from the process's
# first one (the dynamic loader's) up to the first connect, the second up to the second, and so on. A run
# could connect elsewhere before it reaches the car (a library's socket), so an strace of the same command
# says which connect(2) is the car's (the first to PORT), and the dumps up to that one are summed. Once the
# car's connection is established the run is stopped (SIGTERM); what it does after is not counted. Callgrind
# counts barely move between runs of one binary (a fixed hashing seed below), unlike a wall-clock start-up
# time, so a budget on them holds on a loaded machine.
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
if [ "${1:-}" = --check ]; then check=1; shift; fi
bin=$(realpath "${1:?usage: scripts/startup.sh [--check] BINARY}")
budget=25000000
for tool in valgrind strace; do
  command -v $tool >/dev/null || { echo "startup: $tool is missing (apt-get install $tool)" >&2; exit 1; }
done

work=$(mktemp -d)
sim=""
run=""
. scripts/car-sim-lib.sh
cleanup() {
  stop_run_and_car_sim
  [ -n "${STARTUP_KEEP:-}" ] && echo "startup: kept $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT
export SWIFT_DETERMINISTIC_HASHING=1

start_car_sim "$bin"
[ -n "${port:-}" ] && kill -0 "$sim" 2>/dev/null || { echo "startup: car-sim did not start" >&2; exit 1; }
argv=(run --config config/carbridge.toml --link "tcp://127.0.0.1:$port" --no-keyboard --no-view)

# connected_pid: the PID of the process whose TCP connection to the car is established (ss names the owner).
connected_pid() { ss -Htnp state established "( dport = :$port )" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\),.*/\1/p' | head -1; }
# wait_connected PID LIMIT_S: waits for the car's connection (or PID's end); prints the connected process's PID.
wait_connected() {
  local i pid
  for ((i = 0; i < $2 * 20; i++)); do
    pid=$(connected_pid)
    [ -n "$pid" ] && { echo "$pid"; return 0; }
    kill -0 "$1" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# 1. Which connect(2) is the car's: its position among the process's connect calls.
strace -f -qq -e trace=connect -o "$work/strace" "$bin" "${argv[@]}" </dev/null >"$work/strace-run.log" 2>&1 &
run=$!
traced=$(wait_connected "$run" 30) || { echo "startup: under strace, carbridge did not connect:" >&2; cat "$work/strace-run.log" >&2; exit 1; }
# carbridge itself (strace's child): strace would detach from it on a signal of its own and leave it running
kill "$traced"; wait "$run" 2>/dev/null || true; run=""
nth=$(grep -n "connect(" "$work/strace" | grep -m1 "htons($port)" | cut -d: -f1 || true)
[ -n "$nth" ] || { echo "startup: strace saw no connect to port $port:" >&2; cat "$work/strace" >&2; exit 1; }
# strace numbers lines in call order; only connect lines are traced (resumed halves of a call are not counted).
nth=$(head -n "$nth" "$work/strace" | grep -c "connect(")

# 2. The instructions up to that connect. valgrind reads no DWARF of the Swift toolchain's (it gives up on it),
# and only libc's symbol is needed: a copy without debug info.
cp "$bin" "$work/carbridge"
strip --strip-debug "$work/carbridge"
valgrind --tool=callgrind --dump-before=connect --callgrind-out-file="$work/cg.out" \
  "$work/carbridge" "${argv[@]}" </dev/null >"$work/cg-run.log" 2>&1 &
run=$!
wait_connected "$run" 120 >/dev/null || { echo "startup: under callgrind, carbridge did not connect:" >&2; cat "$work/cg-run.log" >&2; exit 1; }
kill "$run"; wait "$run" 2>/dev/null || true; run=""
total=0
for ((i = 1; i <= nth; i++)); do
  part=$(sed -n 's/^\(summary\|totals\): *\([0-9]*\).*/\2/p' "$work/cg.out.$i" 2>/dev/null | head -1)
  [ -n "$part" ] || { echo "startup: no callgrind dump $i of $nth (dumps: $(ls "$work" | grep -c '^cg.out'))" >&2; exit 1; }
  total=$((total + part))
done
echo "startup: $bin: $total instructions from exec to the car's connect(2) (connect call $nth of the run)"
echo "METRIC startup_instructions $total"
[ "$check" = 1 ] || exit 0
if [ "$total" -le "$budget" ]; then
  echo "ok   start-up: $total instructions from exec to the car's connect (budget $budget)"
  echo "startup: 1 passed, 0 failed"
else
  echo "FAIL start-up: $total instructions from exec to the car's connect (budget $budget)"
  echo "startup: 0 passed, 1 failed"
  exit 1
fi

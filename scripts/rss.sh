#!/usr/bin/env bash
# Resident memory of `carbridge run` with a pad and a link, and what it is made of (docs/performance.md,
# "Resident memory").
#   scripts/rss.sh BINARY [RUN FLAGS...]      e.g. scripts/rss.sh .build-release/release/carbridge
# Starts `BINARY car-sim` on a free loopback port and `BINARY run --config CONFIG --link tcp://… --replay PAD
# --no-keyboard --no-view` (CONFIG: config/carbridge.toml, every key; CONFIG= for the built-in defaults,
# which parse no TOML) on a generated 20 s recording of an Xbox 360 pad (Tests/DriveInputTests/Fixtures/xbox360-pad.evemu's
# header: engine on, Speed+ three times, then stick and trigger reports every 20 ms, so frames stream all
# along). After
# SETTLE seconds (default 4) it prints VmRSS/VmHWM, smaps_rollup's totals, and the RSS of every mapped file
# (anonymous mappings summed as [anon], the heap as [heap]), largest first, in KiB; the binary's own pages
# are split into text/read-only (file-backed, clean) and dirty (relocated data, .data/.bss).
# Then scripts/rss-pages.py splits the binary's own resident pages by module and ELF section (RSS_PAGES=
# to skip it; it needs root for /proc/PID/pagemap). Extra arguments go to `run` (e.g. --dashboard
# 127.0.0.1:0).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:?usage: scripts/rss.sh BINARY [RUN FLAGS...]}")
shift
settle=${SETTLE:-4}

work=$(mktemp -d)
sim=""
run=""
. scripts/car-sim-lib.sh
cleanup() {
  stop_run_and_car_sim
  rm -rf "$work"
}
trap cleanup EXIT

pad=$work/pad.evemu
scripts/replay-pad.sh > "$pad"

start_car_sim "$bin"
config=${CONFIG-config/carbridge.toml}
config_flags=()
[ -n "$config" ] && config_flags=(--config "$config")
"$bin" run "${config_flags[@]}" --link "tcp://127.0.0.1:$port" --replay "$pad" --no-keyboard --no-view "$@" </dev/null >"$work/run.log" 2>&1 &
run=$!
sleep "$settle"
if ! kill -0 "$run" 2>/dev/null; then
  echo "rss: carbridge run ended early:" >&2
  cat "$work/run.log" >&2
  exit 1
fi
cp "/proc/$run/smaps" "$work/smaps"
[ -n "${RSS_SHOW_LOG:-}" ] && head -n 20 "$work/run.log" >&2
status=$(cat "/proc/$run/status")
rollup=$(cat "/proc/$run/smaps_rollup")

echo "binary: $bin ($(stat -c %s "$bin") bytes), config: ${config:-(defaults)}, run flags: ${*:-(none)}, measured ${settle} s after start"
awk '/^(VmRSS|VmHWM|RssAnon|RssFile|Threads)/ { printf "%s %s %s  ", $1, $2, $3 } END { print "" }' <<<"$status"
awk '/^(Rss|Pss|Anonymous|Shared_Clean|Private_Clean|Private_Dirty):/ { printf "%s %s kB  ", $1, $2 } END { print "" }' <<<"$rollup"
# Per mapping: a header line is "start-end perms offset dev inode [path]"; its Rss: and Private_Dirty: follow.
awk -v bin="$bin" '
  /^[0-9a-f]+-[0-9a-f]+ / {
    perms = $2
    name = (NF >= 6) ? $6 : "[anon]"
    if (name == bin) name = (perms ~ /w/ ? "carbridge (writable: .data, .bss, relocated)" : "carbridge (" perms ")")
    next
  }
  /^Rss:/ { rss[name] += $2 }
  /^Private_Dirty:/ { dirty[name] += $2 }
  END {
    for (n in rss) if (rss[n] > 0) printf "%8d kB  %8d kB dirty  %s\n", rss[n], dirty[n], n
  }' "$work/smaps" | sort -rn
# The binary's own pages by module and section (the static build is all in that one mapping).
[ -n "${RSS_PAGES:-1}" ] && python3 scripts/rss-pages.py "$run" "$bin"

#!/bin/bash
# PID 1 of the kernel-test guest (started by the initramfs after switch_root).
# Environment: REPO (repository, read-only), R (results, writable), ONLY (all | ID[,ID...]), CARBRIDGE (binary),
# CARBRIDGE_LATENCY (the binary scenario 11 measures: a release build when run.sh has one).
# 1. infrastructure: modules, systemd-udevd, uinput, btvirt controllers, RFCOMM car, mxc4005 on i2c-stub;
# 2. the carbridge scenarios (scenarios.py ID, every ID of scenarios.py --list: the numbers of its TITLES and the
#    NAMEs of guest/scenario_NAME.py), each with its own PASS/FAIL line.
REPO=${REPO:-/mnt/repo}
R=${R:-/mnt/results}
ONLY=${ONLY:-all}
G=$REPO/Tests/kernel/guest
RES=$R/results.txt
LOG=$R/infra/detail.log
mkdir -p "$R/infra" /tmp/kt
: > "$RES"; : > "$LOG"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PYTHONDONTWRITEBYTECODE=1 REPO R CARBRIDGE CARBRIDGE_LATENCY
PY=/usr/bin/python3
up() { cut -d' ' -f1 /proc/uptime; }
note() { echo "[$(up)] $*" >> "$LOG"; }
say() { echo "NOTE: $*"; note "$*"; }
pass() { echo "PASS: $*" | tee -a "$RES"; note "PASS: $*"; }
fail() { echo "FAIL: $*" | tee -a "$RES"; note "FAIL: $*"; }
# check NAME CMD... : one infrastructure check; its output goes to the detail log
check() { local n=$1; shift; note "--- $n: $*"
          if "$@" >>"$LOG" 2>&1; then pass "infra: $n"; else fail "infra: $n (rc=$?, see infra/detail.log)"; fi; }

say "guest up: kernel $(uname -r), uptime $(up)s, scenarios: $ONLY, carbridge: $CARBRIDGE"

# ---------- kernel modules ----------
MODS="evdev uinput bluetooth hci_vhci rfcomm af_alg algif_hash algif_skcipher i2c-dev"
load_modules() { local m rc=0; for m in $MODS; do modprobe "$m" || { echo "modprobe $m failed"; rc=1; }; done
                 modprobe i2c-stub chip_addr=0x15 || rc=1; return $rc; }
check "modules ($MODS i2c-stub)" load_modules

# ---------- udev ----------
start_udev() { /lib/systemd/systemd-udevd --daemon && udevadm trigger --action=add && udevadm settle -t 30; }
check "systemd-udevd running, coldplug settled" start_udev

# ---------- Bluetooth: btvirt makes two controllers that hear each other ----------
btvirt -l2 > /tmp/kt/btvirt.log 2>&1 &
BTVIRT=$!
bt_up() {
  local i
  for i in $(seq 100); do [ -e /sys/class/bluetooth/hci1 ] && break; sleep 0.1; done
  [ -e /sys/class/bluetooth/hci0 ] && [ -e /sys/class/bluetooth/hci1 ] || { echo "btvirt made no hci0/hci1"; return 1; }
  hciconfig hci0 up && hciconfig hci1 up && hciconfig hci1 name RoboCar && hciconfig hci1 piscan &&
    hciconfig hci1 name | grep -q "Name: 'RoboCar'" && hciconfig -a
}
check "btvirt: hci0 (phone) + hci1 (car 'RoboCar', piscan) up" bt_up
say "phone hci0=$(hciconfig hci0 | awk '/BD Address/{print $3}') car hci1=$(hciconfig hci1 | awk '/BD Address/{print $3}')"

# ---------- the rest of the infrastructure, from python (uinput, udev, RFCOMM, IIO, inquiry) ----------
$PY "$G/infra.py" >> "$LOG" 2>&1 || note "infra.py exited rc=$?"

if [ -x "$CARBRIDGE" ]; then pass "infra: carbridge binary present and executable ($CARBRIDGE)"
else fail "infra: no carbridge binary at $CARBRIDGE (swift build)"; fi

# ---------- scenarios ----------
if [ "$ONLY" = all ]; then LIST=$($PY "$G/scenarios.py" --list); else LIST=${ONLY//,/ }; fi
for n in $LIST; do
  # a numbered scenario's logs go to sN/, a named one's to NAME/ (kharness.Scenario.tag)
  case $n in [0-9]*) tag=s$n ;; *) tag=$n ;; esac
  note "--- scenario $n"
  # 9 and 10 wait for RFCOMM flow control (about 15 s) and more, ble_car about 100 s and ble_compare about 80 s;
  # generous limits: the host may be loaded.
  # On SIGTERM a scenario stops its car and carbridge and keeps its logs (20 s before SIGKILL).
  # BLE_LONG=1 (run.sh: KERNEL_BLE_LONG=1): ble_car's 1000 order cycles and ble_compare's 1000 reports per arm.
  case $n in 9|10|sony_pads) limit=240 ;; ble_car|ble_compare) [ "${BLE_LONG:-0}" = 1 ] && limit=480 || limit=240 ;; *) limit=180 ;; esac
  timeout -k 20 $limit $PY "$G/scenarios.py" "$n" >> "/tmp/kt/scenario-$n.out" 2>&1
  rc=$?
  if ! grep -q "^\(PASS\|FAIL\): scenario $n:" "$RES"; then
    fail "scenario $n: the scenario script crashed or timed out (rc=$rc)"
  fi
  mkdir -p "$R/$tag"; cp "/tmp/kt/scenario-$n.out" "$R/$tag/runner.out" 2>/dev/null
  [ -s "$R/$tag/runner.out" ] || rm -f "$R/$tag/runner.out"
done

kill $BTVIRT 2>/dev/null; wait $BTVIRT 2>/dev/null
cp /tmp/kt/btvirt.log "$R/infra/btvirt.log" 2>/dev/null
dmesg > "$R/dmesg.txt"
NPASS=$(grep -c '^PASS' "$RES"); NFAIL=$(grep -c '^FAIL' "$RES")
say "guest done at uptime $(up)s: $NPASS passed, $NFAIL failed"
[ "$NFAIL" -eq 0 ]

#!/bin/bash
# Real-kernel end-to-end tests for carbridge (issue 4), host side.
#
#   Tests/kernel/run.sh [--install] [--timeout SECONDS] [--only ID[,ID...]] [--bin PATH] [--latency-bin PATH]
#                       [--no-build]
#
# Boots Debian's own kernel (package linux-image-amd64) under qemu-system-x86_64 (TCG) with a small
# busybox initramfs. The guest mounts the host's root file system read-only over 9p (under a tmpfs
# overlay, so the Swift runtime and the freshly built carbridge run in the guest unchanged), the
# repository read-only at /mnt/repo and Tests/kernel/out/results read-write at /mnt/results, then
# switch_root's into it and runs guest/main.sh as PID 1. guest/main.sh proves the infrastructure
# (modules, udevd, uinput, btvirt + RFCOMM, mxc4005 on i2c-stub) and runs the scenarios (the IDs
# that `guest/scenarios.py --list` prints: the numbers of its TITLES, then the NAMEs of the scenarios kept
# in files of their own, guest/scenario_NAME.py). The C helpers of the latency scenario (guest/refreader.c,
# guest/tcpcar.c) are compiled here, on the host, into Tests/kernel/build/.
#
#   --install      apt-get update + install the system packages (a fresh CI machine needs this)
#   --timeout S    kill the guest after S seconds (default 1200); a timeout is a failure
#   --only LIST    run only these scenarios (e.g. 9 or 5,7,9 or 11,rumble) after the infrastructure checks
#                  (also from the environment: KERNEL_TESTS_ONLY=5,7,9)
#   --bin PATH     carbridge binary to test (default: .build/debug/carbridge, built if missing)
#   --latency-bin PATH  the carbridge binary scenario 11 measures against the C reader (default: the
#                  --bin binary). scripts/test.sh passes a release build: a debug build costs several times
#                  the instructions per event and, under TCG, falls behind a 500 Hz pad
#                  and so measures the queue, not the product
#   --no-build     do not run `swift build` even if the binary is missing
#
# Prints every PASS/FAIL line, the timing figures, the guest logs of failed scenarios, and as
# its LAST line "N passed, N failed". Exit status 0 only if nothing failed and the guest finished.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TIMEOUT=1200; INSTALL=0; ONLY=${KERNEL_TESTS_ONLY:-all}; BIN=""; LBIN=""; BUILD=1
while [ $# -gt 0 ]; do
  case "$1" in
    --install) INSTALL=1 ;;
    --timeout) TIMEOUT=$2; shift ;;
    --only) ONLY=$2; shift ;;
    --bin) BIN=$2; shift ;;
    --latency-bin) LBIN=$2; shift ;;
    --no-build) BUILD=0 ;;
    -h|--help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac; shift
done
# the scenario IDs: the keys of TITLES in guest/scenarios.py (no evdev needed to read them), then the NAMEs
# of the scenarios kept in files of their own (guest/scenario_NAME.py)
SCENARIOS=$( { sed -n '/^TITLES = {/,/^}/p' "$HERE/guest/scenarios.py" | grep -oE '^ *[0-9]+:' | tr -d ' :' | sort -n
  for f in "$HERE"/guest/scenario_*.py; do [ -e "$f" ] && basename "$f" .py | sed 's/^scenario_//'; done | sort; } | tr '\n' ' ' | sed 's/ $//')
if [ "$ONLY" != all ]; then
  for n in ${ONLY//,/ }; do
    case " $SCENARIOS " in *" $n "*) ;; *) echo "run.sh: --only takes scenario IDs ($SCENARIOS), comma-separated (got '$ONLY')" >&2; exit 2 ;; esac
  done
fi
T0=$(date +%s.%N)
say() { echo "kernel-tests: $*"; }
# the initramfs modules, the boot, the verdict, elapsed and guest_finish, shared with the other QEMU stage
. "$REPO/Tests/tools/qemu-guest.sh"
finish() { guest_finish "" "$@"; }  # finish PASSED FAILED : the last line, and the exit status

# ---- 0. system packages (Debian 12) ----
PKGS="qemu-system-x86 qemu-utils linux-image-amd64 busybox-static kmod udev cpio gzip xz-utils zstd
      bluez bluez-test-tools python3 python3-evdev i2c-tools passwd util-linux procps
      libevdev-dev libudev-dev libbluetooth-dev libsystemd-dev gcc libc6-dev pkg-config dbus python3-dbus python3-gi
      python3-venv python3-pip python3-pyroute2 python3-libevdev python3-parse python3-pyudev python3-click
      python3-typing-extensions python3-yaml"
# the BLE bridge users run today (scenario ble_compare measures carbridge's BLE link against it): PyPI's
# ble-serial in a venv of Debian's python3, which the guest sees through the shared root
BLE_SERIAL_VENV=/opt/ble-serial
BLE_SERIAL_VERSION=3.0.0
if [ $INSTALL = 1 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  # shellcheck disable=SC2086
  apt-get install -y -q --no-install-recommends $PKGS
  say "apt-get install took $(elapsed "$T0")s"
  if ! "$BLE_SERIAL_VENV/bin/ble-serial" --help >/dev/null 2>&1; then
    /usr/bin/python3 -m venv "$BLE_SERIAL_VENV" && "$BLE_SERIAL_VENV/bin/pip" install -q "ble-serial==$BLE_SERIAL_VERSION" \
      || say "WARNING: could not install ble-serial from PyPI: scenario ble_compare will fail"
  fi
fi
for tool in qemu-system-x86_64 cpio modinfo btvirt i2cset; do
  command -v $tool >/dev/null || { say "missing $tool: run with --install (or apt-get install $PKGS)"; finish 0 1; }
done
[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 || { say "/bin/busybox missing or not static: apt-get install busybox-static"; finish 0 1; }
/usr/bin/python3 -c 'import evdev' 2>/dev/null || { say "python3-evdev missing: apt-get install python3-evdev"; finish 0 1; }
/usr/bin/python3 -c 'import dbus, gi.repository.GLib' 2>/dev/null || say "WARNING: python3-dbus/python3-gi missing: scenario 13 and the BLE scenarios will fail (run with --install)"
[ -x "$BLE_SERIAL_VENV/bin/ble-serial" ] || say "WARNING: no ble-serial in $BLE_SERIAL_VENV: scenario ble_compare will fail (run with --install)"

# ---- 1. the carbridge binary ----
if [ -z "$BIN" ]; then
  BIN=$REPO/.build/debug/carbridge
  if [ ! -x "$BIN" ] && [ $BUILD = 1 ]; then
    say "building carbridge (swift build --product carbridge)"
    (cd "$REPO" && swift build --product carbridge) || say "swift build failed; the carbridge scenarios will fail"
  fi
fi
BIN=$(readlink -f "$BIN" 2>/dev/null || echo "$BIN")
[ -x "$BIN" ] && say "carbridge binary: $BIN" || say "WARNING: no carbridge binary at $BIN; the carbridge scenarios will fail"

# ---- 2. kernel + initramfs (busybox-static + the virtio/9p/overlay modules, dependencies first) ----
KVER=$(ls /lib/modules | grep -- '-amd64$' | sort -V | tail -1 || true)
KERNEL=/boot/vmlinuz-$KVER
MODDIR=/lib/modules/$KVER
[ -n "$KVER" ] && [ -r "$KERNEL" ] || { say "no Debian kernel in /boot: apt-get install linux-image-amd64"; finish 0 1; }
BUILD_DIR=$HERE/build
mkdir -p "$BUILD_DIR"
# the latency scenario's C helpers (the guest runs the host's libraries, so host binaries run there)
rm -f "$BUILD_DIR/refreader" "$BUILD_DIR/tcpcar"
if gcc -O2 -Wall -o "$BUILD_DIR/tcpcar" "$HERE/guest/tcpcar.c" &&
   gcc -O2 -Wall -o "$BUILD_DIR/refreader" "$HERE/guest/refreader.c" $(pkg-config --cflags --libs libevdev); then
  say "built $BUILD_DIR/refreader and tcpcar"
else
  say "WARNING: could not build the C helpers (apt-get install gcc libc6-dev pkg-config libevdev-dev); the latency scenario will fail"
fi
# PyPI's hid-tools, as the kernel's own HID selftests use it: real devices' report descriptors and the answers
# their drivers ask for (guest/hid_devices.py). Unpacked, not installed: the guest adds it to sys.path; its
# dependencies are the Debian packages above.
HID_TOOLS_VERSION=0.12
HID_TOOLS_DIR=$BUILD_DIR/hid-tools-$HID_TOOLS_VERSION
if [ ! -f "$HID_TOOLS_DIR/hidtools/uhid.py" ]; then
  WHEELS=$(mktemp -d)
  if /usr/bin/python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$WHEELS" "hid-tools==$HID_TOOLS_VERSION" >&2 &&
     mkdir -p "$HID_TOOLS_DIR" && /usr/bin/python3 -m zipfile -e "$WHEELS"/hid_tools-*.whl "$HID_TOOLS_DIR"; then
    say "unpacked hid-tools $HID_TOOLS_VERSION into $HID_TOOLS_DIR"
  else
    say "WARNING: could not fetch hid-tools $HID_TOOLS_VERSION from PyPI: the real-driver scenarios will fail"
  fi
  rm -rf "$WHEELS"
fi
IRD=$(mktemp -d /tmp/carbridge-initramfs.XXXXXX)
trap 'rm -rf "$IRD"' EXIT
mkdir -p "$IRD"/{bin,modules,proc,sys,dev,host,rw,newroot}
cp /bin/busybox "$IRD/bin/busybox"
: > "$IRD/modules.order"
for m in virtio_pci 9pnet_virtio 9p overlay; do initramfs_add_module $m || finish 0 1; done
install -m 755 "$HERE/initramfs-init.sh" "$IRD/init"
(cd "$IRD" && find . | cpio -o -H newc --quiet | gzip -1) > "$BUILD_DIR/initramfs.cpio.gz"
say "kernel $KVER; initramfs modules: $(tr '\n' ' ' < "$IRD/modules.order")"

# ---- 3. boot the guest ----
OUT=$HERE/out
RES_DIR=$OUT/results
rm -rf "$OUT"; mkdir -p "$RES_DIR"
chmod 777 "$RES_DIR"
# The guest mounts fresh tmpfs on /tmp, /run and /dev, hiding those host paths: reach the binary
# through the repository share when it lives in the repository, else through the results share.
REPO_REAL=$(readlink -f "$REPO")
guest_path() {  # guest_path HOST_BINARY NAME: where the guest finds it (copied to the results share as NAME if hidden)
  case "$1" in
    "$REPO_REAL"/*) echo "/mnt/repo/${1#"$REPO_REAL"/}" ;;
    /tmp/*|/run/*|/dev/*) cp "$1" "$RES_DIR/$2" 2>/dev/null; echo "/mnt/results/$2" ;;
    *) echo "$1" ;;
  esac
}
GUEST_BIN=$(guest_path "$BIN" carbridge)
say "carbridge in the guest: $GUEST_BIN"
GUEST_LBIN=$GUEST_BIN
if [ -n "$LBIN" ]; then
  LBIN=$(readlink -f "$LBIN" 2>/dev/null || echo "$LBIN")
  if [ -x "$LBIN" ]; then
    GUEST_LBIN=$(guest_path "$LBIN" carbridge-latency)
    say "scenario 11 measures: $GUEST_LBIN ($("$LBIN" --version 2>/dev/null || echo '?'))"
  else
    say "WARNING: no binary at --latency-bin $LBIN; scenario 11 measures $GUEST_BIN"
  fi
fi
T1=$(date +%s.%N)
say "booting qemu (TCG), timeout ${TIMEOUT}s, scenarios: $ONLY"
# Shows the guest's progress lines live while it runs.
guest_boot "$TIMEOUT" "$OUT/console.log" '^(PASS|FAIL|METRIC|NOTE|GUEST|HARNESS-INIT)' \
  -append "console=ttyS0 loglevel=4 panic=-1 carbridge_only=$ONLY carbridge_bin=$GUEST_BIN carbridge_latency_bin=$GUEST_LBIN carbridge_ble_long=${KERNEL_BLE_LONG:-0}" \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
  -virtfs local,path="$REPO",mount_tag=repo,security_model=none,readonly=on,multidevs=remap \
  -virtfs local,path="$RES_DIR",mount_tag=results,security_model=none
say "qemu exited rc=$QRC after $(elapsed "$T1")s; total $(elapsed "$T0")s"

# ---- 4. verdict ----
RES=$RES_DIR/results.txt
guest_verdict "$RES" "$QRC" "$TIMEOUT"
if [ "$NFAIL" -gt 0 ]; then
  echo "===== console (last 60 lines of $OUT/console.log) ====="
  tail -n 60 "$OUT/console.log"
  if [ -f "$RES_DIR/dmesg.txt" ]; then echo "===== dmesg (last 40 lines) ====="; tail -n 40 "$RES_DIR/dmesg.txt"; fi
  # a numbered scenario's logs are in sN/, a named one's in NAME/
  for failed in $(grep -oE '^FAIL: (scenario [0-9A-Za-z_]+|infra)' "$RES" | awk '{print $2 == "infra" ? "infra" : ($3 ~ /^[0-9]+$/ ? "s"$3 : $3)}' | sort -u); do
    # A scenario's own files and those of its phases (rumble/A/…); directories are not printed.
    for f in "$RES_DIR/$failed"/* "$RES_DIR/$failed"/*/*; do
      [ -f "$f" ] && [ -s "$f" ] || continue
      echo "===== $failed: ${f#"$RES_DIR"/} (last 80 lines) ====="
      tail -n 80 "$f"
    done
  done
fi
finish "$NPASS" "$NFAIL"

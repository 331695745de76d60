#!/usr/bin/env bash
# Installs the Debian packages carbridge builds against (iproute2 for the fault-injection
# tests' network namespaces, dbus-daemon for the D-Bus client's tests), if they are missing
# (as root directly, otherwise through sudo). Usage: scripts/install-deps.sh [EXTRA PACKAGES…]
# The car firmware's packages (car/, Tests/avr/: the AVR toolchain, Debian's Arduino core, libsimavr)
# are installed too, but a failure there does not stop the script: test.sh then skips that one
# stage. `scripts/install-deps.sh --check-car` prints the car packages still missing (nothing if none).
set -euo pipefail
car_packages=(gcc-avr binutils-avr avr-libc arduino-core-avr libsimavr-dev libsimavrparts1 python3)
missing_of() {
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}
if [ "${1:-}" = "--check-car" ]; then
  missing_of "${car_packages[@]}" | tr '\n' ' ' | sed 's/ $//'
  exit 0
fi
# libtomlplusplus-dev: the config reader (toml++, header-only, compiled into the binary: no runtime dependency).
# mmdebstrap and e2fsprogs (mkfs.ext4 -d): the Debian system stage's root file system (Tests/system/run.sh).
# libqrencode-dev: the dashboard's join QR code (carbridge-dashboard only).
# valgrind: the bench stage counts instructions per event with callgrind (scripts/bench.sh --check).
packages=(libevdev-dev libudev-dev libbluetooth-dev libsystemd-dev libtomlplusplus-dev libqrencode-dev pkg-config iproute2 dbus-daemon mmdebstrap e2fsprogs valgrind "$@")
mapfile -t missing < <(missing_of "${packages[@]}")
mapfile -t missing_car < <(missing_of "${car_packages[@]}")
[ ${#missing[@]} -eq 0 ] && [ ${#missing_car[@]} -eq 0 ] && exit 0
sudo_=()
[ "$(id -u)" = 0 ] || sudo_=(sudo)
"${sudo_[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  "${sudo_[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if [ ${#missing_car[@]} -gt 0 ]; then
  echo "install-deps: installing the car firmware's ${missing_car[*]}" >&2
  "${sudo_[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing_car[@]}" ||
    echo "install-deps: could not install ${missing_car[*]}; scripts/test.sh will skip the car stage" >&2
fi

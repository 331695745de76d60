#!/usr/bin/env bash
# Installs the Debian packages carbridge builds against (iproute2 for the fault-injection
# tests' network namespaces, dbus-daemon for the D-Bus client's tests), if they are missing
# (as root directly, otherwise through sudo). Usage: scripts/install-deps.sh [EXTRA PACKAGES…]
set -euo pipefail
packages=(libevdev-dev libudev-dev libbluetooth-dev libsystemd-dev pkg-config iproute2 dbus-daemon "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${missing[*]}" >&2
sudo_=()
[ "$(id -u)" = 0 ] || sudo_=(sudo)
"${sudo_[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${sudo_[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"

#!/usr/bin/env bash
# Checks the Debian package scripts/package.sh built (the CI stage `package` runs both):
#   Tests/package/check.sh [DEB]        (default: the .build-release/carbridge_*_ARCH.deb)
# One line per check, `PASS name` or `FAIL name: why`, then `package: N passed, N failed`.
# What it cannot check here (no systemd as PID 1 on this machine): installing it, the maintainer
# scripts' effects, the units running; those are the Debian guest's (Tests/system/run.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
arch=$(dpkg --print-architecture)
deb=${1:-$(ls -t "$root"/.build-release/carbridge_*_"$arch".deb 2>/dev/null | head -1)}
passed=0
failed=0
check() { # NAME CONDITION-EXIT-STATUS [DETAIL]
  if [ "$2" = 0 ]; then
    echo "PASS $1"; passed=$((passed + 1))
  else
    echo "FAIL $1${3:+: $3}"; failed=$((failed + 1))
  fi
}
finish() {
  echo "package: $passed passed, $failed failed"
  [ "$failed" = 0 ]
  exit
}

[ -n "$deb" ] && [ -f "$deb" ]
check "the .deb was built" $? "no .build-release/carbridge_*_$arch.deb (scripts/package.sh failed?)"
[ -f "$deb" ] || finish
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# lintian: errors fail; warnings are shown (debian/carbridge.lintian-overrides says why each override is).
lintian --info "$deb" > "$tmp/lintian" 2>&1
errors=$(grep -c '^E: ' "$tmp/lintian")
sed 's/^/  lintian: /' "$tmp/lintian" | grep -E '^  lintian: [EW]: ' | head -20
[ "$errors" = 0 ]
check "lintian reports no errors" $? "$errors error(s): $(grep '^E: ' "$tmp/lintian" | head -3 | tr '\n' ' ')"

# Every path the package must ship (issue 15). The changelog is changelog.gz, not changelog.Debian.gz: the
# package is native (debian/ lives in carbridge's own repository; policy 12.7 names it so then).
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' > "$tmp/contents"
required=(
  /usr/bin/carbridge
  /usr/libexec/carbridge/carbridge-dashboard
  /usr/share/man/man1/carbridge.1.gz
  /usr/share/man/man1/carbridge.run.1.gz /usr/share/man/man1/carbridge.car-sim.1.gz
  /usr/share/man/man1/carbridge.check-config.1.gz /usr/share/man/man1/carbridge.config-reference.1.gz
  /usr/share/man/man1/carbridge.devices.1.gz /usr/share/man/man1/carbridge.monitor.1.gz
  /usr/share/man/man1/carbridge.calibrate.1.gz /usr/share/man/man1/carbridge.scan.1.gz
  /usr/share/man/man1/carbridge.pair.1.gz /usr/share/man/man1/carbridge.unpair.1.gz
  /usr/share/man/man5/carbridge.toml.5.gz
  /usr/share/bash-completion/completions/carbridge
  /usr/share/zsh/vendor-completions/_carbridge
  /usr/share/fish/vendor_completions.d/carbridge.fish
  /usr/lib/udev/rules.d/70-carbridge.rules
  /usr/lib/systemd/system/carbridge.service
  /usr/lib/systemd/system/carbridge@.service
  /usr/lib/sysusers.d/carbridge.conf
  /etc/carbridge/carbridge.toml
  /usr/share/doc/carbridge/examples/kiosk.toml
  /usr/share/doc/carbridge/copyright
  /usr/share/doc/carbridge/changelog.gz
)
missing=()
for path in "${required[@]}"; do grep -qxF "$path" "$tmp/contents" || missing+=("$path"); done
[ ${#missing[@]} = 0 ]
check "dpkg-deb -c lists all ${#required[@]} required paths" $? "missing: ${missing[*]}"

dpkg-deb -e "$deb" "$tmp/control"
grep -qxF /etc/carbridge/carbridge.toml "$tmp/control/conffiles" 2>/dev/null
check "/etc/carbridge/carbridge.toml is a conffile" $? "conffiles: $(cat "$tmp/control/conffiles" 2>/dev/null)"

depends=$(dpkg-deb -f "$deb" Depends)
echo "  Depends: $depends"
[[ $depends == *libevdev2* && $depends == *libudev1* && $depends == *libc6* && $depends == *libsystemd0* ]]
check "Depends (dpkg-shlibdeps) names libevdev2, libudev1 and libc6, and debian/control libsystemd0" $? "Depends: '$depends'"
# carbridge-dashboard's join QR code.
[[ $depends == *libqrencode4* ]]
check "Depends (dpkg-shlibdeps) names libqrencode4 (carbridge-dashboard)" $? "Depends: '$depends'"

dpkg-deb -x "$deb" "$tmp/root"
bin=$tmp/root/usr/bin/carbridge
version=$(dpkg-deb -f "$deb" Version)
got=$("$bin" --version 2>&1)
[ "$got" = "$version" ]
check "carbridge --version ($got) is the package's version ($version)" $?

dashboard=$tmp/root/usr/libexec/carbridge/carbridge-dashboard
swiftlibs=$(ldd "$bin" "$dashboard" 2>&1 | grep -Ei 'libswift|libFoundation|libdispatch|libstdc\+\+|not found')
[ -z "$swiftlibs" ]
check "the binaries need no Swift runtime library and no libstdc++.so (ldd)" $? "$swiftlibs"
# No $ORIGIN search path (scripts/package.sh: --disable-local-rpath): no failed lookups in /usr/bin at start.
! readelf -d "$bin" "$dashboard" | grep -Eq 'RUNPATH|RPATH'
check "the binaries have no library search path (readelf -d: no RUNPATH, no RPATH)" $? "$(readelf -d "$bin" "$dashboard" | grep -E 'RUNPATH|RPATH' | tr -s ' ' | tr '\n' ' ')"

# libsystemd (and the six libraries it links) is loaded only for D-Bus (dlopen in Sources/CSDBus): not at start.
! readelf -d "$bin" | grep -q 'NEEDED.*libsystemd'
check "carbridge does not link libsystemd (readelf -d: no NEEDED entry)" $? "$(readelf -d "$bin" | grep NEEDED | tr -s ' ' | tr '\n' ' ')"
# The dashboard's code is only in carbridge-dashboard (Swift symbols name their module).
! grep -q HummingbirdCore "$bin" && grep -q HummingbirdCore "$dashboard"
check "Hummingbird is linked into carbridge-dashboard only" $?
! grep -q NIOSSL "$bin" && grep -q NIOSSL "$dashboard"
check "swift-nio-ssl (the dashboard's HTTPS) is linked into carbridge-dashboard only" $?
# With no Swift toolchain on the library path at all: the static standard library is inside.
env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH= "$bin" --help > "$tmp/help" 2>&1 && grep -q "SUBCOMMANDS" "$tmp/help"
check "the packaged binary runs --help" $? "$(head -3 "$tmp/help")"

# The packaged binary's resident memory once it drives (a figure, not a check): `run` on the dry-run link
# until its first frame, the safety handshake, is out; then VmRSS, then SIGTERM.
coproc RUN { exec "$bin" run --link stdout --no-keyboard --no-view 2>/dev/null; }
run_pid=$RUN_PID
handshake=""
while IFS= read -r -t 10 line <&"${RUN[0]}"; do
  if [[ $line == *E,0,0,0* ]]; then handshake=$line; break; fi
done
if [ -n "$handshake" ]; then
  echo "METRIC package_carbridge_rss_kib $(awk '/^VmRSS:/ {print $2}' "/proc/$run_pid/status")"
fi
kill -TERM "$run_pid" 2>/dev/null
wait "$run_pid" 2>/dev/null
[ -n "$handshake" ]
check "the packaged binary runs: its first frame on the dry-run link is the handshake" $? "no E,0,0,0 within 10 s"

# With the dashboard on, the packaged carbridge becomes /usr/libexec/carbridge/carbridge-dashboard (exec, the
# same process) and serves /metrics; its resident memory is a figure too.
port=$((20000 + RANDOM % 20000))
coproc DASH { exec "$bin" run --link stdout --dashboard "127.0.0.1:$port" --no-keyboard --no-view 2>/dev/null; }
dash_pid=$DASH_PID
handshake=""
while IFS= read -r -t 10 line <&"${DASH[0]}"; do
  if [[ $line == *E,0,0,0* ]]; then handshake=$line; break; fi
done
exe=$(readlink "/proc/$dash_pid/exe" 2>/dev/null || true)
metrics=$(python3 -c 'import sys, urllib.request; print(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=10).read().decode())' "$port" 2>&1 || true)
[ -n "$handshake" ] && echo "METRIC package_carbridge_dashboard_rss_kib $(awk '/^VmRSS:/ {print $2}' "/proc/$dash_pid/status")"
kill -TERM "$dash_pid" 2>/dev/null
wait "$dash_pid" 2>/dev/null
[ -n "$handshake" ] && [ "$exe" = "$dashboard" ] && [[ $metrics == *carbridge_link_up* ]]
check "run --dashboard becomes the packaged carbridge-dashboard and serves /metrics" $? "exe '$exe', handshake '$handshake', metrics: ${metrics:0:120}"

bad_pages=()
pages=0
for page in "$tmp"/root/usr/share/man/man*/*.gz; do
  pages=$((pages + 1))
  warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
  lines=$(LC_ALL=C.UTF-8 MANWIDTH=80 man -l "$page" 2>/dev/null | wc -l)
  if [ -n "$warnings" ] || [ "$lines" -lt 10 ]; then bad_pages+=("$(basename "$page") ($lines lines) $warnings"); fi
done
[ "$pages" -ge 12 ] && [ ${#bad_pages[@]} = 0 ]
check "all $pages man pages render (man -l) without warnings" $? "${bad_pages[*]}"

grep -q '^\[link\]' "$tmp/root/etc/carbridge/carbridge.toml" &&
  "$bin" check-config "$tmp/root/etc/carbridge/carbridge.toml" > /dev/null 2>&1
check "/etc/carbridge/carbridge.toml passes carbridge check-config" $?

bash -n "$tmp/root/usr/share/bash-completion/completions/carbridge" &&
  grep -q "car-sim" "$tmp/root/usr/share/bash-completion/completions/carbridge" &&
  grep -q "car-sim" "$tmp/root/usr/share/zsh/vendor-completions/_carbridge" &&
  grep -q "car-sim" "$tmp/root/usr/share/fish/vendor_completions.d/carbridge.fish"
check "the completions parse (bash -n) and know the subcommands" $?

units_ok=0
for unit in carbridge.service carbridge@.service; do
  grep -q '^ExecStart=/usr/bin/carbridge run --config /etc/carbridge/' "$tmp/root/usr/lib/systemd/system/$unit" || units_ok=1
done
check "the units run /usr/bin/carbridge" $units_ok

sysusers=$tmp/root/usr/lib/sysusers.d/carbridge.conf
members=0
grep -qE '^u carbridge ' "$sysusers" || members=1
for g in input bluetooth dialout; do grep -qE "^m carbridge $g\$" "$sysusers" || members=1; done
[ "$members" = 0 ]
check "sysusers.d creates user carbridge in input, bluetooth, dialout" $?
systemd-sysusers --dry-run "$sysusers" > /dev/null 2>&1
check "systemd-sysusers accepts the sysusers.d entry" $?

# The maintainer scripts debhelper wrote from debian/ (their effect is the Debian guest's to prove).
grep -q 'systemd-sysusers .*carbridge.conf' "$tmp/control/postinst" &&
  grep -q 'try-restart' "$tmp/control/postinst" && grep -q 'udevadm trigger' "$tmp/control/postinst" &&
  grep -q "stop 'carbridge@\*.service'" "$tmp/control/prerm" && grep -q 'deb-systemd-invoke stop .*carbridge.service' "$tmp/control/prerm" &&
  grep -q 'rm -rf /etc/carbridge' "$tmp/control/postrm"
check "maintainer scripts: sysusers, udev trigger, restart on upgrade, stop on remove, purge /etc/carbridge" $?
syntax=0
for script in preinst postinst prerm postrm; do
  if [ -f "$tmp/control/$script" ]; then sh -n "$tmp/control/$script" || syntax=1; fi
done
check "the maintainer scripts parse (sh -n)" $syntax

# debian/copyright covers every package SwiftPM checked out for the static binary.
uncovered=()
for dir in "$root"/.build-release/checkouts/*/; do
  name=$(basename "$dir")
  grep -qF "checkouts/$name/" "$tmp/root/usr/share/doc/carbridge/copyright" || uncovered+=("$name")
done
[ ${#uncovered[@]} = 0 ]
check "debian/copyright names every linked Swift package" $? "not in copyright: ${uncovered[*]}"

finish

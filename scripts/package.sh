#!/usr/bin/env bash
# Builds the Debian package .build-release/carbridge_VERSION_ARCH.deb (docs/deployment.md, "The package").
#   scripts/package.sh [--deps-only]
# 1. a release build of carbridge and carbridge-dashboard (the same commands with the web dashboard, which
#    `run` execs when the dashboard is on) linked with --static-swift-stdlib and a static libstdc++ (the
#    target machine needs no Swift runtime) in .build-release;
# 2. the version from that binary's `carbridge --version` (Sources/CarbridgeCommands/CarbridgeVersion.swift is
#    the only place it is written), which becomes the package's version and its changelog entry;
# 3. what the binary generates about itself: one man page per command (swift-argument-parser's
#    generate-manual tool, the one its generate-manual plugin runs, here run on the very binary that
#    ships), carbridge.toml(5) and /etc/carbridge/carbridge.toml from `config-reference` (the key
#    declarations, the same source as config/carbridge.toml), and the bash/zsh/fish completions;
# 4. dpkg-buildpackage on a staging copy of debian/ (.build-release/deb/carbridge-VERSION/), which
#    installs it all, computes Depends with dpkg-shlibdeps and writes the maintainer scripts.
# Installs its own build tools if missing (debhelper, dpkg-dev, lintian, man-db and the -dev libraries),
# through apt-get as scripts/install-deps.sh does. Prints the package's path and sizes last.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
scratch=$root/.build-release

# lintian and man-db are for Tests/package/check.sh (the CI stage runs it right after this script).
# libstdc++-12-dev: the static libstdc++.a linked in (below).
tools=(debhelper dpkg-dev lintian man-db libevdev-dev libudev-dev libbluetooth-dev libsystemd-dev libtomlplusplus-dev libqrencode-dev pkg-config
       libstdc++-12-dev)
missing=()
for p in "${tools[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_=()
  [ "$(id -u)" = 0 ] || sudo_=(sudo)
  echo "package: installing ${missing[*]}" >&2
  "${sudo_[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${sudo_[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=600 \
    --no-install-recommends "${missing[@]}"
fi
# `--deps-only`: only the tools above (scripts/test.sh, before it runs this build in the background, so that
# no two apt-gets run at once).
[ "${1:-}" = "--deps-only" ] && exit 0
command -v swift >/dev/null || { echo "package: no swift on PATH (Swift 6 from swift.org is needed to build)" >&2; exit 1; }

# A failed run must not leave an older package behind for Tests/package/check.sh to pass on.
rm -f "$scratch"/carbridge_*.deb
# libstdc++ linked statically as well: a directory that holds only the compiler's libstdc++.a, searched
# (-L, ahead of the compiler's own directories) before the directory where libstdc++.so is, so the -lstdc++
# that Swift's static runtime links with takes the archive: only the members the runtime and toml++ use are
# linked in, and the process maps no libstdc++.so. Not for a dynamic build, whose libswiftCore.so loads
# libstdc++.so anyway.
libstdcxx=$(ls -1 /usr/lib/gcc/*/*/libstdc++.a 2>/dev/null | sort -V | tail -1)
[ -n "$libstdcxx" ] || { echo "package: no libstdc++.a under /usr/lib/gcc (libstdc++-12-dev)" >&2; exit 1; }
mkdir -p "$scratch/static-libstdc++"
ln -sf "$libstdcxx" "$scratch/static-libstdc++/libstdc++.a"
# The release link flags (scripts/release-flags.sh), plus the static libstdc++ directory.
. scripts/release-flags.sh
# Every product with the same flags, so no build invalidates another's modules. No RUNPATH: SwiftPM's
# default $ORIGIN would make the loader look for each of the six shared libraries in /usr/bin (and its
# glibc-hwcaps, tls and x86_64 subdirectories) first, 24 failed lookups at every start, and a library
# search path in /usr/bin is not one a Debian binary should have (the Swift runtime is linked in).
build=(swift build -c release --static-swift-stdlib --disable-local-rpath --scratch-path "$scratch"
       "${release_flags[@]}" -Xlinker -L -Xlinker "$scratch/static-libstdc++")
"${build[@]}" --product carbridge
"${build[@]}" --product carbridge-dashboard
"${build[@]}" --product generate-manual
bin=$scratch/release/carbridge

version=$("$bin" --version)
if ! [[ $version =~ ^[0-9][A-Za-z0-9.+~]*$ ]]; then
  echo "package: '$bin --version' says '$version', not a release version (is it a debug build?)" >&2
  exit 1
fi
arch=$(dpkg --print-architecture)

src=$scratch/deb/carbridge-$version
rm -rf "$scratch/deb"
mkdir -p "$src/stage/man" "$src/stage/completions" "$src/stage/examples"
cp -r debian "$src/debian"
stage=$src/stage

cp "$bin" "$stage/carbridge"
cp "$scratch/release/carbridge-dashboard" "$stage/carbridge-dashboard"
# The date in the pages is the commit's, so the same commit gives the same package.
commit_date=$(git log -1 --format=%cs 2>/dev/null || date -u +%F)
"$scratch/release/generate-manual" "$bin" --multi-page --date "$commit_date" --output-directory "$stage/man"
# argument-parser's own `help` command is not one of carbridge's (carbridge(1) covers `carbridge help`);
# a blank line inside a command's discussion is a paragraph break, which mdoc spells .Pp (groff warns
# about empty lines, and lintian with it).
rm -f "$stage/man/carbridge.help.1"
sed -i -e 's/^$/.Pp/' -e '/^\.Xr carbridge\.help 1/d' "$stage/man/"*.1
# A subcommand's page is named carbridge.NAME(1); its NAME line says so (`.Nm carbridge.NAME`, which
# mandb's whatis parser reads; "carbridge NAME" with a space it cannot), its SYNOPSIS keeps the command
# as typed.
for page in "$stage/man/"carbridge.*.1; do
  sub=$(basename "$page" .1)
  sub=${sub#carbridge.}
  sed -i -e "s/^\.Nm \"carbridge $sub\"\$/.Nm carbridge.$sub/" -e "s/^\.Nm\$/.Nm \"carbridge $sub\"/" "$page"
done
"$bin" config-reference --format man > "$stage/man/carbridge.toml.5"
"$bin" config-reference --format toml > "$stage/carbridge.toml"
# bash-completion sources the file: no #! line (lintian: bash-completion-with-hashbang).
"$bin" --generate-completion-script bash | sed '1{/^#!/d}' > "$stage/completions/carbridge"
"$bin" --generate-completion-script zsh > "$stage/completions/_carbridge"
"$bin" --generate-completion-script fish > "$stage/completions/carbridge.fish"
cp config/kiosk.toml config/gamepad.toml config/tilt-gamepad.toml config/tilt-laptop.toml "$stage/examples/"
cp udev/70-carbridge.rules README.md "$stage/"
# dh_installsystemd and dh_installsysusers take their files from debian/PACKAGE.*.
cp config/carbridge.service "$src/debian/carbridge.service"
cp config/carbridge@.service "$src/debian/carbridge@.service"
cp config/carbridge.sysusers "$src/debian/carbridge.sysusers"

# debian/changelog: written here from the binary's version (see the top of this file), dated by the commit.
maintainer=$(sed -n 's/^Maintainer: //p' debian/control)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo "unknown")
changelog_date=$(git log -1 --format=%aD 2>/dev/null || date -R)
cat > "$src/debian/changelog" <<EOF
carbridge ($version) unstable; urgency=medium

  * carbridge $version, built from commit $commit (the project's history is
    its git log).

 -- $maintainer  $changelog_date
EOF

(cd "$src" && dpkg-buildpackage -b -us -uc)
deb=carbridge_${version}_${arch}.deb
mv "$scratch/deb/$deb" "$scratch/$deb"
echo "package: $scratch/$deb"
echo "package: .deb $(stat -c %s "$scratch/$deb") bytes; installed $(dpkg-deb -f "$scratch/$deb" Installed-Size) KiB;" \
  "/usr/bin/carbridge $(stat -c %s "$src/debian/carbridge/usr/bin/carbridge") bytes stripped" \
  "($(stat -c %s "$bin") bytes as built); /usr/libexec/carbridge/carbridge-dashboard" \
  "$(stat -c %s "$src/debian/carbridge/usr/libexec/carbridge/carbridge-dashboard") bytes stripped"
echo "package: Depends: $(dpkg-deb -f "$scratch/$deb" Depends)"

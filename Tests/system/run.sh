#!/bin/bash
# The Debian system stage (issue 15, item 3), host side: the carbridge package on a real Debian 12 with
# systemd as PID 1, udev and D-Bus, in a QEMU guest.
#
#   Tests/system/run.sh [--install] [--deb PATH] [--timeout SECONDS] [--rebuild-image]
#
# 1. The package: --deb PATH, else the newest .build-release/carbridge_*_ARCH.deb (the package stage's),
#    else scripts/package.sh builds it.
# 2. The root file system: Debian bookworm from this machine's own apt sources (mmdebstrap, variant
#    apt, plus systemd, udev, dbus and what the checks need), the host kernel's modules (the guest boots
#    the host's kernel), the package's dependencies downloaded into a flat local repository that
#    replaces Debian's sources (the guest has no network: `apt install ./carbridge_…deb` takes them
#    from there), and the test driver's unit.
#    Written into an ext4 image with `mkfs.ext4 -d` (no loop mount), cached in
#    $SYSTEM_IMAGE_DIR (default Tests/system/build/) under a key made of the package list, the
#    package's Depends/Recommends, the text of build_image below, the host's apt sources and the kernel
#    version; a cold build takes a few minutes, a cached one nothing.
# 3. The guest: the host's /boot/vmlinuz under qemu-system-x86_64 (TCG, 2 CPUs, 2 GiB) with a busybox
#    initramfs (Tests/system/initramfs-init.sh) that mounts the image (virtio disk, snapshot=on: the
#    cached image is never written) and switch_root's to systemd. After multi-user.target the unit
#    carbridge-system-test.service mounts the share (9p: the .deb, guest/*.py, the results) and runs
#    guest/main.sh, then powers off.
#
#   --install        install the host tools (mmdebstrap, e2fsprogs, QEMU, busybox-static, the kernel)
#   --deb PATH       the package to test
#   --timeout S      kill the guest after S seconds (default 600); a timeout is a failure
#   --rebuild-image  build the image even if the cache has it
#
# Prints the guest's PASS/FAIL/METRIC lines, the times (image build, boot, checks) and, LAST,
# "N passed, N failed". Exit status 0 only if every check passed and the guest finished.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TIMEOUT=600; INSTALL=0; DEB=""; REBUILD=0
while [ $# -gt 0 ]; do
  case "$1" in
    --install) INSTALL=1 ;;
    --deb) DEB=$2; shift ;;
    --timeout) TIMEOUT=$2; shift ;;
    --rebuild-image) REBUILD=1 ;;
    -h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "system: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac; shift
done
T0=$(date +%s.%N)
say() { echo "system: $*"; }
# the initramfs modules, the boot, the verdict, elapsed and guest_finish, shared with the other QEMU stage
. "$REPO/Tests/tools/qemu-guest.sh"
finish() { guest_finish "system: " "$@"; }  # finish PASSED FAILED : the last line, and the exit status

# ---- 0. host tools ----
HOST_PKGS="mmdebstrap e2fsprogs qemu-system-x86 linux-image-amd64 busybox-static kmod cpio gzip xz-utils zstd"
if [ $INSTALL = 1 ]; then
  missing=$(for p in $HOST_PKGS; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"; done)
  if [ -n "$missing" ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    # shellcheck disable=SC2086
    apt-get install -y -q -o DPkg::Lock::Timeout=600 --no-install-recommends $missing
  fi
fi
for tool in mmdebstrap mkfs.ext4 qemu-system-x86_64 cpio modinfo; do
  command -v $tool >/dev/null || { say "missing $tool: run with --install (apt-get install $HOST_PKGS)"; finish 0 1; }
done
[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 || { say "/bin/busybox missing or not static: apt-get install busybox-static"; finish 0 1; }
[ "$(id -u)" = 0 ] || { say "needs root (mmdebstrap writes a root file system with its owners)"; finish 0 1; }

# ---- 1. the package ----
ARCH=$(dpkg --print-architecture)
if [ -z "$DEB" ]; then
  DEB=$(ls -t "$REPO"/.build-release/carbridge_*_"$ARCH".deb 2>/dev/null | head -1 || true)
  if [ -z "$DEB" ]; then
    say "no package in .build-release: running scripts/package.sh"
    "$REPO/scripts/package.sh" >&2 || { say "scripts/package.sh failed"; finish 0 1; }
    DEB=$(ls -t "$REPO"/.build-release/carbridge_*_"$ARCH".deb | head -1)
  fi
fi
[ -f "$DEB" ] || { say "no package at $DEB"; finish 0 1; }
DEB=$(readlink -f "$DEB")
say "package: $DEB"
# What the guest's `apt install ./carbridge_…deb` needs from the network: its Depends and Recommends
# (apt installs recommends by default), names only; apt resolves their own dependencies at image time.
# Of alternatives (`systemd | systemd-standalone-sysusers`) the first, as apt picks it.
deb_names() { dpkg-deb -f "$DEB" "$1" | tr ',' '\n' | sed -E 's/\|.*//; s/\(.*\)//; s/:any//; s/[[:space:]]//g' | grep -v '^$' || true; }
DEB_DEPS=$( { deb_names Depends; deb_names Recommends; } | sort -u | tr '\n' ' ' | sed 's/ $//')
say "package dependencies for the guest's local cache: $DEB_DEPS"

# ---- 2. the root file system image ----
KVER=$(ls /lib/modules | grep -- '-amd64$' | sort -V | tail -1 || true)
KERNEL=/boot/vmlinuz-$KVER
MODDIR=/lib/modules/$KVER
[ -n "$KVER" ] && [ -r "$KERNEL" ] || { say "no Debian kernel in /boot: apt-get install linux-image-amd64"; finish 0 1; }
# What the guest runs besides the package: systemd as init (systemd-sysv), udev, D-Bus; kmod for the
# modules; python3-evdev for the uinput pad; iproute2 and procps for the checks; bluez, the package's
# Recommends, as a Bluetooth car's machine has it (installed by the guest's apt, its 13 packages would
# cost half a minute of TCG; the cache still has to supply libevdev2).
GUEST_PKGS="systemd systemd-sysv udev dbus kmod iproute2 procps python3 python3-evdev bluez"
# The host's active Debian sources (deb822 or one-line), given to mmdebstrap as files; none: its default.
SOURCES=()
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] && grep -qE '^[^#]*(debian\.org|/debian)' "$f" && SOURCES+=("$f")
done
# apt options of this machine that decide whether downloads work (proxies, a mirror's stale Release).
APTOPT=$(apt-config dump | grep -E '^Acquire::((http|https|ftp)::Proxy|Check-Valid-Until|Check-Date) ' || true)

build_image() {  # build_image IMAGE: the guest's root file system (the cache key hashes this function)
  local image=$1 root tmp
  tmp=$(mktemp -d /var/tmp/carbridge-system-image.XXXXXX)
  root=$tmp/root
  printf '%s\n' "$APTOPT" > "$tmp/apt.conf"
  # The test driver: after multi-user.target, mount the share and run guest/main.sh (which writes the
  # results), then power off whatever it returns.
  cat > "$tmp/carbridge-system-test.service" <<'UNIT'
[Unit]
Description=carbridge system test driver (Tests/system/guest/main.sh)
After=multi-user.target
SuccessAction=poweroff-force
FailureAction=poweroff-force
[Service]
Type=oneshot
ExecStartPre=/usr/sbin/modprobe -a 9pnet_virtio 9p
ExecStartPre=/usr/bin/mkdir -p /mnt/share
ExecStartPre=/usr/bin/mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=none share /mnt/share
ExecStart=/usr/bin/bash /mnt/share/guest/main.sh
StandardOutput=journal+console
StandardError=journal+console
TimeoutStartSec=infinity
[Install]
WantedBy=multi-user.target
UNIT
  # The guest's package source: the package's dependencies that the image lacks, downloaded here into a
  # flat repository (/var/local/carbridge-deps, Packages written with dpkg-deb) that replaces Debian's
  # sources. The guest has no network; this stands in for the mirror, and apt in the guest reads a
  # dozen-package index instead of bookworm's 50 MB one (about 15 s per apt command under TCG).
  cat > "$tmp/local-repo.sh" <<'REPO'
set -e
root=$1
repo=$root/var/local/carbridge-deps
mkdir -p "$repo"
mv "$root"/var/cache/apt/archives/*.deb "$repo/"
cd "$repo"
for deb in *.deb; do
  dpkg-deb -f "$deb"
  echo "Filename: ./$deb"
  echo "Size: $(stat -c %s "$deb")"
  echo "SHA256: $(sha256sum "$deb" | cut -d' ' -f1)"
  echo
done > Packages
rm -f "$root"/etc/apt/sources.list "$root"/etc/apt/sources.list.d/*
echo "deb [trusted=yes] file:/var/local/carbridge-deps ./" > "$root/etc/apt/sources.list.d/carbridge-deps.list"
find "$root/var/lib/apt/lists" -maxdepth 1 -type f ! -name lock -delete
chroot "$root" apt-get update -q
REPO
  # shellcheck disable=SC2086
  mmdebstrap --variant=apt --include="${GUEST_PKGS// /,}" --aptopt="$tmp/apt.conf" \
    --skip=cleanup/apt/lists --skip=cleanup/apt/cache \
    --customize-hook='chroot "$1" apt-get clean' \
    --customize-hook="chroot \"\$1\" apt-get install -y -q --download-only -o APT::Install-Recommends=true $DEB_DEPS" \
    --customize-hook="sh $tmp/local-repo.sh \"\$1\"" \
    --customize-hook='echo carbridge-guest > "$1/etc/hostname"' \
    --customize-hook='printf "127.0.0.1 localhost carbridge-guest\n" > "$1/etc/hosts"' \
    --customize-hook='printf "/dev/vda / ext4 rw,errors=remount-ro 0 0\n" > "$1/etc/fstab"' \
    --customize-hook="mkdir -p \"\$1/usr/lib/modules\" && cp -a $MODDIR \"\$1/usr/lib/modules/\"" \
    --customize-hook="install -m 644 $tmp/carbridge-system-test.service \"\$1/etc/systemd/system/\"" \
    --customize-hook='chroot "$1" systemctl enable carbridge-system-test.service' \
    --customize-hook='chroot "$1" systemctl mask apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer fstrim.timer serial-getty@ttyS0.service getty@tty1.service' \
    bookworm "$root" "${SOURCES[@]}"
  rm -f "$image.tmp"
  mkfs.ext4 -q -F -L carbridge-root -d "$root" "$image.tmp" 2G
  mv "$image.tmp" "$image"
  rm -rf "$tmp"
}

IMAGE_DIR=${SYSTEM_IMAGE_DIR:-$HERE/build}
mkdir -p "$IMAGE_DIR"
KEY=$( { echo "$GUEST_PKGS"; echo "$DEB_DEPS"; declare -f build_image; echo "$KVER"; echo "$APTOPT"
         for f in "${SOURCES[@]}"; do cat "$f"; done; } | sha256sum | cut -c1-16)
IMAGE=$IMAGE_DIR/bookworm-$KEY.ext4
if [ $REBUILD = 1 ] || [ ! -f "$IMAGE" ]; then
  T_IMG=$(date +%s.%N)
  say "building the root file system image $IMAGE (cold: mmdebstrap + mkfs.ext4 -d)"
  if ! build_image "$IMAGE" > "$IMAGE_DIR/build-$KEY.log" 2>&1; then
    tail -n 40 "$IMAGE_DIR/build-$KEY.log"
    say "the image build failed (log: $IMAGE_DIR/build-$KEY.log)"; finish 0 1
  fi
  # Older images (another key) are never used again.
  find "$IMAGE_DIR" -maxdepth 1 -name 'bookworm-*.ext4' ! -name "bookworm-$KEY.ext4" -delete
  say "METRIC image-build $(elapsed "$T_IMG") s (cold build; $(du -m --apparent-size "$IMAGE" | cut -f1) MiB image, $(du -m "$IMAGE" | cut -f1) MiB on disk)"
else
  say "image (cached): $IMAGE"
fi

# ---- 3. kernel + initramfs (busybox-static + virtio disk and ext4, dependencies first) ----
IRD=$(mktemp -d /tmp/carbridge-system-initramfs.XXXXXX)
trap 'rm -rf "$IRD"' EXIT
mkdir -p "$IRD"/{bin,modules,proc,sys,dev,newroot}
cp /bin/busybox "$IRD/bin/busybox"
: > "$IRD/modules.order"
# crc32c: ext4's metadata checksums (a soft dependency modules.dep does not list)
for m in virtio_pci virtio_blk crc32c_generic ext4; do initramfs_add_module $m || finish 0 1; done
install -m 755 "$HERE/initramfs-init.sh" "$IRD/init"
BUILD_DIR=$HERE/build
mkdir -p "$BUILD_DIR"
(cd "$IRD" && find . | cpio -o -H newc --quiet | gzip -1) > "$BUILD_DIR/initramfs.cpio.gz"
say "kernel $KVER; initramfs modules: $(tr '\n' ' ' < "$IRD/modules.order")"

# ---- 4. the share: the package and the guest's scripts in, the results out ----
OUT=$HERE/out
SHARE=$OUT/share
rm -rf "$OUT"; mkdir -p "$SHARE/guest"
cp "$DEB" "$SHARE/"
cp "$HERE"/guest/*.py "$HERE"/guest/main.sh "$SHARE/guest/"
# the uinput pad and the car log's parser are the kernel stage's (Tests/kernel/guest/kharness.py)
cp "$REPO/Tests/kernel/guest/kharness.py" "$SHARE/guest/"
chmod -R a+rwX "$SHARE"

# ---- 5. boot ----
T1=$(date +%s.%N)
say "booting qemu (TCG) with systemd as PID 1, timeout ${TIMEOUT}s"
# systemd's console lines carry a journal prefix: the progress words are matched anywhere in a line
guest_boot "$TIMEOUT" "$OUT/console.log" '(PASS|FAIL|METRIC|NOTE|GUEST|SYSTEM-INIT)' \
  -append "console=ttyS0 loglevel=4 panic=-1 systemd.show_status=error" \
  -drive file="$IMAGE",if=virtio,format=raw,snapshot=on \
  -virtfs local,path="$SHARE",mount_tag=share,security_model=none
say "qemu exited rc=$QRC after $(elapsed "$T1")s; total $(elapsed "$T0")s"

# ---- 6. verdict ----
RES=$SHARE/results.txt
guest_verdict "$RES" "$QRC" "$TIMEOUT"
if [ "$NFAIL" -gt 0 ]; then
  echo "===== console (last 60 lines of $OUT/console.log) ====="
  tail -n 60 "$OUT/console.log"
  if [ -f "$SHARE/detail.log" ]; then echo "===== guest detail log (last 80 lines) ====="; tail -n 80 "$SHARE/detail.log"; fi
fi
finish "$NPASS" "$NFAIL"

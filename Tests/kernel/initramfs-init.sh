#!/bin/busybox sh
# /init of the kernel-test initramfs (busybox-static + the virtio/9p/overlay modules).
# Mounts the host root (9p, read-only) under a tmpfs overlay, the repository (ro) at /mnt/repo and
# the results directory (rw) at /mnt/results, then switch_root's into it (a real root, not a chroot:
# udevadm refuses to work in a chroot) and runs Tests/kernel/guest/main.sh as PID 1, then powers off.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
die() { echo "HARNESS-INIT: FAIL $*"; echo o > /proc/sysrq-trigger; sleep 10; }
echo "HARNESS-INIT: initramfs at uptime $(cut -d' ' -f1 /proc/uptime)s"

for m in $(cat /modules.order); do
  insmod "/modules/$m" || echo "HARNESS-INIT: insmod $m failed"
done

ONLY=all; BIN=/mnt/repo/.build/debug/carbridge; LBIN=; BLELONG=0
for w in $(cat /proc/cmdline); do
  case "$w" in
    carbridge_only=*) ONLY="${w#*=}" ;;
    carbridge_bin=*) BIN="${w#*=}" ;;
    carbridge_latency_bin=*) LBIN="${w#*=}" ;;
    carbridge_ble_long=*) BLELONG="${w#*=}" ;;
  esac
done
NINEP="trans=virtio,version=9p2000.L,msize=262144"

mkdir -p /host /rw /newroot
mount -t 9p -o "$NINEP,ro,cache=loose" hostroot /host || die "mount 9p hostroot"
mount -t tmpfs -o size=1g,mode=755 tmpfs /rw
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/host,upperdir=/rw/upper,workdir=/rw/work /newroot || die "overlay root"
mkdir -p /newroot/mnt/repo /newroot/mnt/results
mount -t 9p -o "$NINEP,ro" repo /newroot/mnt/repo || die "mount 9p repo"
mount -t 9p -o "$NINEP,cache=none" results /newroot/mnt/results || die "mount 9p results"
mount -t proc proc /newroot/proc
mount -t sysfs sysfs /newroot/sys
mount -t devtmpfs devtmpfs /newroot/dev
mkdir -p /newroot/dev/pts /newroot/dev/shm
mount -t devpts devpts /newroot/dev/pts
mount -t tmpfs tmpfs /newroot/dev/shm
ln -sf /proc/self/fd /newroot/dev/fd
ln -sf /proc/self/fd/0 /newroot/dev/stdin
ln -sf /proc/self/fd/1 /newroot/dev/stdout
ln -sf /proc/self/fd/2 /newroot/dev/stderr
mount -t tmpfs -o mode=755 tmpfs /newroot/run
mount -t tmpfs -o mode=1777 tmpfs /newroot/tmp
hostname carbridge-guest

# Stage 2 runs as PID 1 inside the new root; it powers the machine off itself.
cat > /newroot/run/stage2 <<STAGE2
#!/bin/sh
exec </dev/console >/dev/console 2>&1
/usr/bin/env -i HOME=/root TERM=dumb REPO=/mnt/repo R=/mnt/results ONLY=$ONLY CARBRIDGE=$BIN CARBRIDGE_LATENCY=${LBIN:-$BIN} BLE_LONG=$BLELONG \
  /bin/bash /mnt/repo/Tests/kernel/guest/main.sh
RC=\$?
echo "GUEST_EXIT=\$RC" >> /mnt/results/results.txt
echo "GUEST: main.sh exited rc=\$RC at uptime \$(cut -d' ' -f1 /proc/uptime)s; powering off"
sync; umount /mnt/results
echo o > /proc/sysrq-trigger
sleep 10
STAGE2
chmod 755 /newroot/run/stage2
echo "HARNESS-INIT: root ready at uptime $(cut -d' ' -f1 /proc/uptime)s"
umount /proc /sys
umount -l /dev
exec switch_root /newroot /run/stage2
die "switch_root failed"

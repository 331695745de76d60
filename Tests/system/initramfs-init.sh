#!/bin/busybox sh
# /init of the system stage's initramfs (busybox-static + virtio_pci, virtio_blk, ext4 and their
# dependencies, uncompressed, in load order in /modules.order). Mounts the Debian image (/dev/vda, ext4,
# read-write: QEMU's snapshot=on keeps the writes out of the cached image) and hands the machine to its
# /sbin/init, systemd, as PID 1. Everything else (udev, the other modules, the share) is systemd's.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
die() { echo "SYSTEM-INIT: FAIL $*"; echo o > /proc/sysrq-trigger; sleep 10; }
echo "SYSTEM-INIT: initramfs at uptime $(cut -d' ' -f1 /proc/uptime)s"
for m in $(cat /modules.order); do
  insmod "/modules/$m" || echo "SYSTEM-INIT: insmod $m failed"
done
# virtio_blk probes asynchronously: wait for the disk (at most 10 s).
n=0
while [ ! -b /dev/vda ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
[ -b /dev/vda ] || die "no /dev/vda"
mount -t ext4 -o rw /dev/vda /newroot || die "mount /dev/vda (ext4)"
# (its /sbin/init is an absolute symlink: look from inside)
chroot /newroot /usr/bin/test -x /sbin/init || die "no /sbin/init in the image"
echo "SYSTEM-INIT: root mounted at uptime $(cut -d' ' -f1 /proc/uptime)s; switch_root to systemd"
umount /proc /sys
umount -l /dev
exec switch_root /newroot /sbin/init
die "switch_root failed"

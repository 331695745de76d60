#!/bin/bash
# Run by the image's carbridge-system-test.service after multi-user.target, with the share (9p) at
# /mnt/share: the package, these scripts, and where the results go. The unit powers the guest off
# when this returns.
S=/mnt/share
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PYTHONDONTWRITEBYTECODE=1 R=$S DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8
: > "$S/results.txt"
echo "NOTE: guest up: kernel $(uname -r), $(systemctl --version | head -1), PID 1 $(readlink /proc/1/exe), uptime $(cut -d' ' -f1 /proc/uptime)s"
# (its PASS/FAIL/METRIC lines reach the console from kharness itself; the rest is for the log)
/usr/bin/python3 "$S/guest/checks.py" > "$S/checks.out" 2>&1
RC=$?
journalctl -b --no-pager -o short-monotonic > "$S/journal.txt" 2>&1
echo "GUEST_EXIT=$RC" >> "$S/results.txt"
echo "GUEST: checks.py exited rc=$RC at uptime $(cut -d' ' -f1 /proc/uptime)s; powering off"
sync
exit 0

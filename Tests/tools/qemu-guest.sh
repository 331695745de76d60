# The QEMU stages' shared host side (sourced by Tests/kernel/run.sh and Tests/system/run.sh): the
# busybox initramfs's kernel modules, the boot under QEMU, and the verdict read from the guest's
# results file.
#
# The caller defines `say MESSAGE` and sets KVER (the host kernel's version), MODDIR
# (/lib/modules/$KVER), IRD (the initramfs's staging directory, with modules/ in it), KERNEL (the
# kernel image) and BUILD_DIR (where the initramfs is written).

declare -A INITRAMFS_ADDED=()

# elapsed T: the seconds since T (a `date +%s.%N`), to one decimal.
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }

# guest_finish PREFIX PASSED FAILED: the stage's last line, "PREFIXN passed, N failed" (scripts/test.sh adds
# it into its total), and the exit: 0 only when something passed and nothing failed.
guest_finish() {
  echo "$1$2 passed, $3 failed"
  [ "$3" = 0 ] && [ "$2" -gt 0 ]
  exit $?
}

# initramfs_add_module NAME: copies the module (uncompressed) into $IRD/modules and appends it to
# $IRD/modules.order, resolved through modules.dep with its dependencies first, so that the
# initramfs's init can insmod them in that order (busybox has no modprobe that reads modules.dep).
initramfs_add_module() {
  local path line dep name
  path=$(modinfo -k "$KVER" -n "$1" 2>/dev/null) || { say "kernel $KVER has no module $1"; return 1; }
  [ "$path" = "(builtin)" ] && return 0
  [ -n "${INITRAMFS_ADDED[$path]:-}" ] && return 0
  line=$(grep -E "^${path#"$MODDIR"/}:" "$MODDIR/modules.dep" || true)
  for dep in ${line#*:}; do initramfs_add_module "$(basename "$dep" | sed -E 's/\.ko(\.(xz|zst|gz))?$//')"; done
  INITRAMFS_ADDED[$path]=1
  name=$(basename "$path" | sed -E 's/\.(xz|zst|gz)$//')
  case "$path" in
    *.ko.xz)  xz -dc "$path" > "$IRD/modules/$name" ;;
    *.ko.zst) zstd -dcq "$path" > "$IRD/modules/$name" ;;
    *.ko.gz)  gzip -dc "$path" > "$IRD/modules/$name" ;;
    *)        cp "$path" "$IRD/modules/$name" ;;
  esac
  echo "$name" >> "$IRD/modules.order"
}

# guest_verdict RESULTS_FILE QEMU_STATUS TIMEOUT: sets NPASS and NFAIL from the guest's PASS/FAIL
# lines and prints them with the METRIC lines. A guest that was killed by the timeout, or that did not
# write GUEST_EXIT= (it died or hung before the end), is one more failure; so is a run with no PASS.
guest_verdict() {
  local results=$1 qemu_status=$2 timeout=$3
  touch "$results"
  NPASS=$(grep -c '^PASS' "$results" || true)
  NFAIL=$(grep -c '^FAIL' "$results" || true)
  if [ "$qemu_status" = 124 ] || [ "$qemu_status" = 137 ]; then
    say "TIMEOUT: the guest did not finish within ${timeout}s"; NFAIL=$((NFAIL + 1))
  elif ! grep -q '^GUEST_EXIT=' "$results"; then
    say "the guest did not finish (no GUEST_EXIT in results)"; NFAIL=$((NFAIL + 1))
  fi
  [ "$NPASS" -gt 0 ] || { [ "$NFAIL" -gt 0 ] || NFAIL=1; }
  echo "===== results ($results) ====="
  grep -E '^(PASS|FAIL|METRIC)' "$results" || true
}

# guest_boot TIMEOUT CONSOLE_LOG PROGRESS_REGEX QEMU_ARGS…: boots the host's kernel ($KERNEL) with the
# initramfs $BUILD_DIR/initramfs.cpio.gz under qemu-system-x86_64 (TCG, 2 CPUs, 2 GiB, serial console
# into CONSOLE_LOG, no network, no reboot) plus QEMU_ARGS (the -append line, disks, shares), shows the
# console lines that match PROGRESS_REGEX while it runs, and sets QRC to qemu's exit status (124 or 137:
# killed by the TIMEOUT).
guest_boot() {
  local timeout=$1 console=$2 progress=$3 qpid tailpid
  shift 3
  set +e
  timeout -k 5 "$timeout" qemu-system-x86_64 -accel tcg,thread=multi -cpu max -M pc -smp 2 -m 2048 \
    -kernel "$KERNEL" -initrd "$BUILD_DIR/initramfs.cpio.gz" \
    -display none -monitor none -serial stdio -no-reboot -nic none "$@" \
    </dev/null > "$console" 2>&1 &
  qpid=$!
  tail -n +1 -F --pid=$qpid "$console" 2>/dev/null | grep --line-buffered -aE "$progress" &
  tailpid=$!
  wait $qpid; QRC=$?
  sleep 0.3; kill $tailpid 2>/dev/null; wait $tailpid 2>/dev/null
  set -e
}

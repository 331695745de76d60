"""Scenario 13: carbridge with the real bluetoothd (scan, pair, rfcomm://NAME, raw fallback).

The guest's own system D-Bus and one bluetoothd manage both btvirt controllers: hci0 is carbridge's,
hci1 the car, made to look like an HC-05 (BR/EDR only, Secure Simple Pairing off so pairing is a legacy
PIN, no extended inquiry response so the name comes by a remote name request, name HC-05) with
bluez_car.py: the default agent with PIN 1234 for hci1's side, an SPP record on RFCOMM channel 3.
carbridge's D-Bus commands run as an unprivileged user (a fresh uid, no groups).
"""
import glob, os, re, signal, subprocess, time
from evdev import ecodes as e
import kharness as k
from kharness import monotonic

CAR_NAME = "HC-05"
CAR_PIN = "1234"
CAR_CHANNEL = 3
BLUETOOTHD = "/usr/libexec/bluetooth/bluetoothd"


def sh(sc, cmd, timeout=30):
    """Runs a shell command (root) for the set-up; its output goes to the detail log."""
    p = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=timeout)
    sc.note("$ %s -> rc=%d %s" % (cmd if len(cmd) < 120 else cmd[:117] + "...", p.returncode,
                                  (p.stdout + p.stderr).strip().replace("\n", " | ")[:300]))
    return p


def prop(path, iface, name):
    p = subprocess.run(["dbus-send", "--system", "--print-reply=literal", "--dest=org.bluez", path,
                        "org.freedesktop.DBus.Properties.Get", "string:" + iface, "string:" + name],
                       capture_output=True, text=True, timeout=10)
    return p.stdout.split()[-1] if p.returncode == 0 and p.stdout.split() else None


def pilot_uid():
    used = set()
    for f in ("/etc/passwd", "/etc/group"):
        with open(f) as fh:
            used |= {int(line.split(":")[2]) for line in fh if line.count(":") >= 3 and line.split(":")[2].isdigit()}
    uid = 2000
    while uid in used:
        uid += 1
    with open("/etc/passwd", "a") as fh:     # the guest's root is a writable overlay
        fh.write("pilot:x:%d:%d::/tmp:/bin/sh\n" % (uid, uid))
    with open("/etc/group", "a") as fh:
        fh.write("pilot:x:%d:\n" % uid)
    return uid


def carbridge(sc, log, argv, uid=None, timeout=90):
    """Runs a carbridge command (as uid, no groups, when given); returns (rc, stdout, stderr, seconds)."""
    cmd = [k.CARBRIDGE] + argv
    if uid is not None:
        cmd = ["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups", "--"] + cmd
    t = monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd="/tmp")
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as te:
        rc = "timeout"
        out = te.stdout.decode() if isinstance(te.stdout, bytes) else (te.stdout or "")
        err = te.stderr.decode() if isinstance(te.stderr, bytes) else (te.stderr or "")
    took = monotonic() - t
    with open(log, "a") as f:
        f.write("$ %s\n--- stdout\n%s--- stderr\n%s--- exit %s after %.1f s\n\n" % (" ".join(cmd), out, err, rc, took))
    sc.note("carbridge %s: exit %s after %.1f s" % (" ".join(argv), rc, took))
    return rc, out, err, took


def wait_no_acl(timeout_s=8):
    """Waits until hci0 has no ACL link left (a failed pairing's link goes down after a while)."""
    return k.wait_until(lambda: "ACL" not in subprocess.run(["hcitool", "-i", "hci0", "con"], capture_output=True,
                                                            text=True).stdout, timeout_s, 0.2)


def mgmt_indexes():
    """The controllers the kernel's management interface lists (what bluetoothd will manage)."""
    try:
        out = subprocess.run(["btmgmt", "info"], capture_output=True, text=True, timeout=20).stdout
    except subprocess.TimeoutExpired:
        return set()
    return set(re.findall(r"^(hci\d+):", out, re.M))


def ensure_controllers(sc):
    """bluetoothd only manages controllers whose first power-on succeeded. On a loaded host the emulated
    hci0 once missed its first HCI Reset (`hci0: Opcode 0x0c03 failed: -110` in dmesg): hciconfig could
    still bring it up, but the kernel never announced it to the management interface, and bluetoothd saw
    only hci1. Then btvirt is restarted (new hci0 and hci1; it keeps running after the scenario)."""
    have = mgmt_indexes()
    sc.note("management interface lists: %s" % sorted(have))
    if {"hci0", "hci1"} <= have:
        return
    sc.note("restarting btvirt: hci0/hci1 not both on the management interface")
    for pid in subprocess.run(["pidof", "btvirt"], capture_output=True, text=True).stdout.split():
        os.kill(int(pid), signal.SIGTERM)
    k.wait_until(lambda: not os.path.exists("/sys/class/bluetooth/hci0"), 10, 0.1)
    subprocess.Popen(["btvirt", "-l2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    sc.require(k.wait_until(lambda: {"hci0", "hci1"} <= mgmt_indexes(), 40, 0.5),
               "a fresh btvirt gives hci0 and hci1 on the management interface", sorted(mgmt_indexes()))


def scenario_13(sc):
    w = sc.work
    cmdlog = os.path.join(w, "carbridge-commands.log")
    sc.require(os.access(k.CARBRIDGE, os.X_OK), "carbridge binary present", k.CARBRIDGE)
    ensure_controllers(sc)
    uid = pilot_uid()

    # ---- the system bus and bluetoothd (both controllers) ----
    os.makedirs("/run/dbus", exist_ok=True)
    os.makedirs("/var/lib/dbus", exist_ok=True)
    sh(sc, "dbus-uuidgen --ensure")
    p = sh(sc, "dbus-daemon --system --fork --print-pid")
    sc.require(p.returncode == 0, "dbus-daemon --system starts", p.stderr.strip())
    dbus_pid = int(p.stdout.split()[0])
    sc.cleanups.append(lambda: os.kill(dbus_pid, signal.SIGTERM))
    btd_log = open(os.path.join(w, "bluetoothd.log"), "w")
    btd = subprocess.Popen([BLUETOOTHD, "-n", "-d"], stdout=btd_log, stderr=subprocess.STDOUT)

    def stop_bluetoothd():
        if btd.poll() is None:
            btd.terminate()
            try:
                btd.wait(5)
            except subprocess.TimeoutExpired:
                btd.kill()
                btd.wait()
    sc.cleanups.append(stop_bluetoothd)
    up = k.wait_until(lambda: prop("/org/bluez/hci0", "org.bluez.Adapter1", "Powered") == "true"
                      and prop("/org/bluez/hci1", "org.bluez.Adapter1", "Powered") == "true", 30, 0.2)
    sc.require(up, "bluetoothd has hci0 and hci1 powered")
    phone, car = k.bdaddr("hci0"), k.bdaddr("hci1")
    sc.require(phone and car, "hci0 and hci1 have addresses")

    # ---- hci1 becomes an HC-05: no SSP (legacy PIN), no LE, no EIR ----
    # `btmgmt ssp off` on a powered controller only changes the kernel's setting, so the HCI command is sent
    # too; the EIR the kernel wrote while SSP was on still carries bluetoothd's default name: clear it.
    for c in ("ssp off", "le off", "class 31 0"):
        sh(sc, "timeout 20 btmgmt --index 1 " + c)
    sh(sc, "hcitool -i hci1 cmd 0x03 0x0056 0x00")
    sh(sc, "hcitool -i hci1 cmd 0x03 0x0052 0x00 " + " ".join(["0x00"] * 240))
    ready = os.path.join(w, "car-ready")
    car_log = os.path.join(w, "car.log")
    car_events = os.path.join(w, "car-events.txt")
    car_proc = subprocess.Popen([k.PY, os.path.join(k.GUEST, "bluez_car.py"), "--hci", "hci1", "--name", CAR_NAME,
                                 "--pin", CAR_PIN, "--channel", str(CAR_CHANNEL), "--log", car_log,
                                 "--events", car_events, "--ready", ready],
                                stdout=subprocess.DEVNULL, stderr=open(car_log + ".stderr", "w"))
    sc.cleanups.append(lambda: (car_proc.terminate(), car_proc.wait(5)))
    sc.require(k.wait_until(lambda: os.path.exists(ready) and os.path.getsize(ready) > 0, 30, 0.1),
               "the HC-05 car registers its agent and SPP profile (channel %d) with bluetoothd" % CAR_CHANNEL)
    sh(sc, "hciconfig hci1 sspmode; hciconfig hci1 name")
    carlog = k.CarLog(car_log)

    def car_events_text():
        try:
            with open(car_events) as f:
                return f.read()
        except FileNotFoundError:
            return ""

    # ---- carbridge scan through bluetoothd, unprivileged ----
    rc, out, err, took = carbridge(sc, cmdlog, ["scan", "--adapter", "hci0", "--seconds", "12"], uid=uid)
    sc.metric("scan_dbus_duration", took * 1000.0, "ms")
    sc.check(rc == 0, "scan (uid %d) exits 0" % uid, "%s %s" % (rc, err.strip()[-200:]))
    sc.check("through bluetoothd on hci0" in err, "scan says it went through bluetoothd", err.strip()[-200:])
    sc.check(re.search(r"^%s\s+%s(\s|$)" % (re.escape(car), re.escape(CAR_NAME)), out, re.M) is not None,
             "scan lists '%s  %s' (name by remote name request, as an HC-05)" % (car, CAR_NAME), out.strip()[:300])

    # ---- pair with a wrong PIN, then the right one ----
    rc, out, err, took = carbridge(sc, cmdlog, ["pair", CAR_NAME, "--pin", "0000", "--adapter", "hci0"], uid=uid)
    sc.check(rc == 1, "pair with the wrong PIN 0000 exits 1", rc)
    sc.check("wrong PIN" in err, "the wrong PIN is reported as such", (err + out).strip()[-300:])
    sc.check(prop("/org/bluez/hci0/dev_" + car.replace(":", "_"), "org.bluez.Device1", "Paired") != "true",
             "not paired after the wrong PIN")
    wait_no_acl()
    pins_before = car_events_text().count("PIN_REQUEST")
    rc, out, err, took = carbridge(sc, cmdlog, ["pair", CAR_NAME, "--pin", CAR_PIN, "--adapter", "hci0"], uid=uid)
    sc.metric("pair_duration", took * 1000.0, "ms")
    sc.check(rc == 0, "pair %s --pin %s (uid %d) exits 0" % (CAR_NAME, CAR_PIN, uid), "%s %s" % (rc, (err + out).strip()[-300:]))
    sc.check("gave %s" % CAR_PIN in out, "carbridge's agent answered the PIN request with %s" % CAR_PIN, out.strip()[-300:])
    sc.check(car_events_text().count("PIN_REQUEST") > pins_before, "the car's side was asked for its PIN (legacy pairing)",
             car_events_text()[-300:])
    cardev = "/org/bluez/hci0/dev_" + car.replace(":", "_")
    sc.check(prop(cardev, "org.bluez.Device1", "Paired") == "true", "bluetoothd: the car is Paired")
    sc.check(prop(cardev, "org.bluez.Device1", "Trusted") == "true", "bluetoothd: the car is Trusted")
    sc.check("REJECT" not in car_events_text(), "no agent request went to the car's agent for the phone's side",
             car_events_text()[-300:])
    wait_no_acl()

    # ---- carbridge run --link rfcomm://HC-05: name -> address, SDP -> channel 3, exact frames ----
    config = k.base_config(car).replace('url = "rfcomm://%s/1"' % car, 'url = "rfcomm://%s"' % CAR_NAME)
    sc.check('url = "rfcomm://%s"' % CAR_NAME in config, "the config links by name")
    cb = k.Carbridge(w, config)
    since = monotonic()
    cb.start()
    sc.cleanups.append(lambda: cb.stop(signal.SIGTERM, 3))
    connected = k.wait_until(lambda: carlog.connections(since) or not cb.alive(), 45)
    sc.require(cb.alive() and connected, "carbridge run --link rfcomm://%s connects to the car" % CAR_NAME,
               "alive=%s %s" % (cb.alive(), [t for _, t in cb.log_lines(None, since - 1)][-3:]))
    sc.check(bool(cb.log_lines(r"channel %d \(SDP\)" % CAR_CHANNEL, since - 1)),
             "carbridge logs the SPP channel %d found by SDP" % CAR_CHANNEL)
    first = carlog.wait_frame(lambda f: True, since, 5.0)
    sc.check(first is not None and first.text == "E,0,0,0", "handshake E,0,0,0 first", first)
    pad = k.Pad()
    sc.cleanups.append(pad.close)
    sc.require(k.wait_until(lambda: cb.has_open(pad.node), 8.0), "carbridge opens the hotplugged pad")
    k.wait_until(lambda: cb.log_lines(r'gamepad: ".*" \(%s\) picked' % re.escape(pad.node), since - 0.5), 8.0)
    time.sleep(0.3)
    pad.press(e.BTN_START, "engine on"); time.sleep(0.25)
    for _ in range(2):
        pad.press(e.BTN_TR, "speed+"); time.sleep(0.25)
    for _ in range(2):
        pad.press(e.BTN_TL, "speed-"); time.sleep(0.25)
    pad.press(e.BTN_START, "engine off")
    time.sleep(0.6)
    frames = carlog.frames(since)
    sc.dump_frames(frames)
    got = k.dedup(frames)
    want = ["E,0,0,0", "M,0,10,1", "M,0,20,1", "M,0,10,1", "M,0,0,1", "E,0,0,0"]
    sc.check(got == want, "the car on channel %d receives exactly %s" % (CAR_CHANNEL, want), "got %s" % got)
    sc.check(cb.stop(signal.SIGTERM, 5) == 0, "carbridge run exits 0 on SIGTERM")

    # ---- unpair ----
    rc, out, err, took = carbridge(sc, cmdlog, ["unpair", CAR_NAME], uid=uid)
    sc.check(rc == 0 and "removed the pairing" in out, "unpair %s exits 0 and says so" % CAR_NAME, (out + err).strip()[-200:])
    sc.check(prop(cardev, "org.bluez.Device1", "Paired") != "true", "bluetoothd no longer has the car paired")

    # ---- an rfkill-blocked adapter: one sentence with the command to run ----
    soft = [os.path.join(d, "soft") for d in glob.glob("/sys/class/bluetooth/hci0/rfkill*")]
    if sc.check(bool(soft), "hci0 has an rfkill switch"):
        with open(soft[0], "w") as f:
            f.write("1")
        k.wait_until(lambda: prop("/org/bluez/hci0", "org.bluez.Adapter1", "Powered") == "false", 10, 0.2)
        rc, out, err, took = carbridge(sc, cmdlog, ["scan", "--adapter", "hci0", "--seconds", "2"], uid=uid, timeout=30)
        sc.check(rc == 1 and "rfkill unblock bluetooth" in err, "scan on an rfkill-blocked hci0 says to run `rfkill unblock bluetooth`",
                 "%s %s" % (rc, err.strip()[-200:]))
        with open(soft[0], "w") as f:
            f.write("0")

    # ---- bluetoothd stopped: scan falls back to the raw inquiry ----
    stop_bluetoothd()
    # an adapter that is down (bluetoothd may leave it so when it exits): the raw path says what to run
    sh(sc, "hciconfig hci0 down")
    rc, out, err, took = carbridge(sc, cmdlog, ["scan", "--adapter", "hci0", "--seconds", "6"], timeout=30)
    sc.check(rc == 1 and "raw HCI inquiry" in err and "hciconfig hci0 up" in err,
             "without bluetoothd, scan on the powered-off hci0 falls back to the raw inquiry and says `hciconfig hci0 up`",
             "%s %s" % (rc, err.strip()[-300:]))
    sh(sc, "hciconfig hci0 up; hciconfig hci1 up; hciconfig hci1 piscan; hciconfig hci1 name")
    rc, out, err, took = carbridge(sc, cmdlog, ["scan", "--adapter", "hci0", "--seconds", "6"])
    sc.metric("scan_raw_duration", took * 1000.0, "ms")
    sc.check(rc == 0, "scan without bluetoothd exits 0", "%s %s" % (rc, err.strip()[-200:]))
    sc.check("raw HCI inquiry" in err, "scan says it fell back to the raw HCI inquiry", err.strip()[-300:])
    sc.check(re.search(r"^%s\s+%s\s*$" % (re.escape(car), re.escape(CAR_NAME)), out, re.M) is not None,
             "the raw scan lists '%s  %s'" % (car, CAR_NAME), out.strip()[:300])

"""The BLE scenarios' set-up (ble_car, ble_compare): the guest's system D-Bus and one bluetoothd managing both
btvirt controllers with its default configuration (EATT on), hci1 made an LE-only car module, emulated BLE cars on
it (guest/ble_car.py) with their logs, and a fresh btvirt afterwards for the RFCOMM scenarios that follow."""
import os, re, signal, subprocess, time
import dbus
import kharness as k
from kharness import Frame, monotonic
from bluez_scenario import BLUETOOTHD, ensure_controllers, sh

BLUEZ = "org.bluez"
PROPS = "org.freedesktop.DBus.Properties"


class FollowLog(k.CarLog):
    """kharness.CarLog read incrementally: each call parses only what the car appended since the last one (the
    order check waits for thousands of frames; re-reading the whole log for each would cost more than the link)."""

    def __init__(self, path):
        k.CarLog.__init__(self, path)
        self.pos, self.rest, self.cache = 0, b"", []

    def events_conn(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.pos)
                data = f.read()
                self.pos = f.tell()
        except FileNotFoundError:
            return self.cache
        lines = (self.rest + data).split(b"\n")
        self.rest = lines.pop()
        for raw in lines:
            parts = raw.decode("utf-8", "replace").split(" ", 2)
            if len(parts) >= 2:
                kind, _, conn = parts[1].partition("/")
                self.cache.append((float(parts[0]), kind, int(conn) if conn else 0, parts[2] if len(parts) > 2 else ""))
        return self.cache

    def next_frame(self, predicate, cursor, timeout_s, step_s=0.003):
        """The first RX frame at index >= cursor[0] of events_conn() that satisfies predicate (cursor[0] moves past
        the frames looked at), or None after timeout_s."""
        end = monotonic() + timeout_s
        while True:
            events = self.events_conn()
            while cursor[0] < len(events):
                t, kind, conn, text = events[cursor[0]]
                cursor[0] += 1
                if kind == "RX":
                    fr = Frame(t, text, conn)
                    if predicate(fr):
                        return fr
            if monotonic() >= end:
                return None
            time.sleep(step_s)


class BleCar:
    """ble_car.py on hci1, appending to one log (a restarted car continues the connection numbering)."""

    def __init__(self, sc):
        self.sc = sc
        self.log_path = os.path.join(sc.work, "car.log")
        self.log = FollowLog(self.log_path)
        self.proc = None
        self.addr = None
        sc.cleanups.append(self.stop)

    def start(self, mode, name, timeout_s=40):
        ready = os.path.join(self.sc.work, "car-ready")
        if os.path.exists(ready):
            os.remove(ready)
        first = 1 + max([c for _, c in self.log.connections()] or [0])
        cmd = [k.PY, os.path.join(k.GUEST, "ble_car.py"), "--hci", "hci1", "--mode", mode, "--name", name,
               "--log", self.log_path, "--ready", ready, "--status-every", "1", "--first-connection", str(first)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(self.log_path + ".stderr", "a"))
        ok = k.wait_until(lambda: (os.path.exists(ready) and os.path.getsize(ready) > 0) or self.proc.poll() is not None,
                          timeout_s, 0.1)
        ok = ok and self.proc.poll() is None
        if ok:
            self.addr = open(ready).read().strip()
        return ok

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def kinds(self, kind, since=0.0):
        return [(t, c, text) for t, kd, c, text in self.log.events_conn() if kd == kind and t >= since]


def mgmt_settings(index):
    p = subprocess.run(["btmgmt", "--index", str(index), "info"], capture_output=True, text=True, timeout=20)
    m = re.search(r"current settings: (.*)", p.stdout)
    return m.group(1).split() if m else []


def start_bluez(sc):
    """The system bus and bluetoothd (both controllers, after `ensure_controllers`), stopped again by the cleanups;
    returns the bus (dbus-python); `sc.bluetoothd` is bluetoothd's process."""
    ensure_controllers(sc)
    os.makedirs("/run/dbus", exist_ok=True)
    os.makedirs("/var/lib/dbus", exist_ok=True)
    if os.path.exists("/run/dbus/pid"):    # left by scenario 13's bus if it did not remove it
        os.remove("/run/dbus/pid")
    sh(sc, "dbus-uuidgen --ensure")
    p = sh(sc, "dbus-daemon --system --fork --print-pid")
    sc.require(p.returncode == 0, "dbus-daemon --system starts", p.stderr.strip())
    dbus_pid = int(p.stdout.split()[0])
    sc.cleanups.append(lambda: os.kill(dbus_pid, signal.SIGTERM))
    # every HCI packet of both controllers, for the record (read it with `btmon -r btmon.snoop`)
    btmon = subprocess.Popen(["btmon", "-w", os.path.join(sc.work, "btmon.snoop")], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    sc.cleanups.append(lambda: (btmon.terminate(), btmon.wait(5)))
    btd_log = open(os.path.join(sc.work, "bluetoothd.log"), "w")
    btd = subprocess.Popen([BLUETOOTHD, "-n", "-d"], stdout=btd_log, stderr=subprocess.STDOUT)
    sc.bluetoothd = btd

    def stop_bluetoothd():
        if btd.poll() is None:
            btd.terminate()
            try:
                btd.wait(5)
            except subprocess.TimeoutExpired:
                btd.kill()
                btd.wait()
    sc.cleanups.append(stop_bluetoothd)
    bus = dbus.SystemBus()

    def powered(hci):
        try:
            return bool(dbus.Interface(bus.get_object(BLUEZ, "/org/bluez/" + hci), PROPS).Get("org.bluez.Adapter1",
                                                                                              "Powered"))
        except dbus.DBusException:
            return False
    sc.require(k.wait_until(lambda: powered("hci0") and powered("hci1"), 30, 0.2), "bluetoothd has hci0 and hci1 powered")
    return bus


def le_car_controller(sc):
    """hci1 becomes an LE-only car module (scenario 13 leaves it BR/EDR-only; LE goes on before BR/EDR goes off,
    which the kernel refuses while LE is off), hci0 a dual-mode central; a fresh btvirt at the scenario's end
    (its cleanups run last to first: this one, added first, after bluetoothd stopped)."""
    sc.cleanups.insert(0, lambda: fresh_controllers(sc))
    for c in ("power off", "le on", "bredr off", "power on"):
        sh(sc, "timeout 20 btmgmt --index 1 " + c)
    s1, s0 = mgmt_settings(1), mgmt_settings(0)
    sc.require("powered" in s1 and "le" in s1 and "br/edr" not in s1, "hci1 is powered, LE on, BR/EDR off", s1)
    sc.require("powered" in s0 and "le" in s0, "hci0 is powered with LE on", s0)


def fresh_controllers(sc):
    """Leaves the controllers as main.sh made them for the RFCOMM scenarios after this one: a new btvirt (hci0,
    hci1 up, hci1 named RoboCar with page and inquiry scan), so nothing of this scenario is left in the kernel.
    Switching hci1 back to BR/EDR was not enough: once bluetoothd (or any mgmt command) has used a controller, the
    kernel hands Secure Simple Pairing to a user-space agent, so with no bluetoothd left an RFCOMM connect from
    hci0 to hci1 waited for an IO capability reply and timed out (two_instances then failed); as main.sh leaves
    them, the kernel pairs Just Works by itself. (btmgmt is not used here: it would mark them again.)"""
    for pid in subprocess.run(["pidof", "btvirt"], capture_output=True, text=True).stdout.split():
        os.kill(int(pid), signal.SIGTERM)
    k.wait_until(lambda: not os.path.exists("/sys/class/bluetooth/hci0") and not os.path.exists(
        "/sys/class/bluetooth/hci1"), 10, 0.1)
    subprocess.Popen(["btvirt", "-l2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    k.wait_until(lambda: os.path.exists("/sys/class/bluetooth/hci1"), 20, 0.1)
    up = k.wait_until(lambda: sh(sc, "hciconfig hci0 up && hciconfig hci1 up && hciconfig hci1 name RoboCar && "
                                     "hciconfig hci1 piscan && hciconfig hci1 name | grep -q \"Name: 'RoboCar'\"")
                      .returncode == 0, 30, 1.0)
    sc.check(bool(up), "a fresh btvirt: hci0 and hci1 up again, hci1 RoboCar with page and inquiry scan")


def restart_bluetoothd(sc):
    """bluetoothd again, after it exited (its log appended to), once both controllers are powered; the cleanups
    stop whichever bluetoothd runs last."""
    log = open(os.path.join(sc.work, "bluetoothd.log"), "a")
    sc.bluetoothd = subprocess.Popen([BLUETOOTHD, "-n", "-d"], stdout=log, stderr=subprocess.STDOUT)
    sc.cleanups.append(lambda: (sc.bluetoothd.poll() is None and sc.bluetoothd.terminate(), sc.bluetoothd.wait(5)))
    bus = dbus.SystemBus()

    def powered(hci):
        try:
            return bool(dbus.Interface(bus.get_object(BLUEZ, "/org/bluez/" + hci), PROPS).Get("org.bluez.Adapter1",
                                                                                              "Powered"))
        except dbus.DBusException:
            return False
    sc.require(k.wait_until(lambda: powered("hci0"), 30, 0.2), "bluetoothd started again has hci0 powered")

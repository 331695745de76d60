#!/usr/bin/python3
"""Scenario ble_car: carbridge drives Bluetooth Low Energy cars through bluetoothd (`[link] url = "ble://NAME"`).

The guest's own system D-Bus and one bluetoothd manage both btvirt controllers, as in scenario 13. hci1 becomes an
LE-only car module (`btmgmt power off; le on; bredr off; power on`) and guest/ble_car.py is its firmware: an HM-10
(service FFE0, characteristic FFE1, LocalName HMSoft, at most 20 bytes per write) and later a Nordic UART Service
board (NUSCar), each a GATT application plus a discoverable advertisement registered with bluetoothd, logging like
car.py (so kharness.CarLog reads it), answering READY/STATUS notifications and applying the car's rules of protocol
§8 (strict frames: BADLINE; the 300 ms failsafe: FAILSAFE). bluetoothd keeps its default `[GATT] Channels = 3`, so
write commands travel on three EATT bearers and can overtake each other.

1. The car side alone (no carbridge): LE discovery from hci0 through bluetoothd finds HMSoft, Connect, FFE1 with
   its flags, notifications (READY), writes with response: a frame split over two writes, a bad line, a write
   over 20 bytes, and the failsafe after a motion frame; after the disconnect a discovery finds the car again.
2. `carbridge scan` as an unprivileged user lists the car with its name and `HM-10`.
3. `carbridge run` (ble://HMSoft, unprivileged, the pilot in group input for the uinput pad): handshake E,0,0,0,
   a pad drive with exact frames, the car's READY line in carbridge's log.
4. Order under EATT: up to CYCLES stop/start cycles as fast as the link goes, for at most ORDER_BUDGET_S; no
   motion frame after its cycle's stop, every cycle ends on its stop.
5. The car's controller powered off while moving, then on (the car app restarted: pitfall 9 of the BLE recipe):
   carbridge reconnects, the stop frame M,0,0,1 first, nothing with S > 0 until the pad moves.
6. SIGKILL while moving: the car's own failsafe stops it 300-500 ms after the last frame.
7. SIGTERM while moving: E,0,0,0 last, exit 0.
8. A Nordic UART Service car (ble://NUSCar): the car alone as in 1, then carbridge: handshake, exact frames.
At the end btvirt is started afresh, so the scenarios after this one find the controllers as main.sh made them.

Run by scenarios.py (its __main__ loads scenario_NAME.py for the names it is given).
"""
import os, re, signal, subprocess, time
import dbus
from evdev import ecodes as e
import kharness as k
from kharness import Carbridge, Frame, dedup, monotonic
from bluez_scenario import carbridge, sh
from ble_setup import BleCar, le_car_controller, mgmt_settings, restart_bluetoothd, start_bluez
from scenarios import GAP_S, check_handshake, plug_pad, wait_pad_ready

TITLE = ("BLE cars through bluetoothd: HM-10 and Nordic UART GATT cars, scan, run ble://NAME (handshake, exact frames, "
         "stop/start order under EATT, controller power loss, car failsafe after SIGKILL, SIGTERM)")
CYCLES = 1000              # stop/start cycles of the order check (each: a motion frame, then its stop frame), at most:
                           # a cycle's time grows with the host's load (Tests/kernel/README.md), so the check stops
                           # after ORDER_BUDGET_S
STOP_AFTER_S = 0.002       # the stop's report this long after the start's: where EATT reorders write commands
CYCLE_WAIT_S = 2.0         # how long one frame of a cycle may take to reach the car
MAX_MISSING = 5            # the order check gives up after this many frames that never came
ORDER_BUDGET_S = 300.0 if os.environ.get("BLE_LONG") == "1" else 10.0   # ... and stops after this long
MIN_CYCLES = 100           # ... which must be at least this many
STABLE_S = 1.5             # after the power loss the driver waits until the link has been up this long
FAILSAFE_MS = 300          # protocol §8.4: the car's failsafe
FAILSAFE_LATE_MS = 500     # the car's own timer may fire this late (GLib under TCG)
BASE = "-0000-1000-8000-00805f9b34fb"
HM10_UUID = "0000ffe1" + BASE
NUS = "6e40000%d-b5a3-f393-e0a9-e50e24dcca9e"
BLUEZ = "org.bluez"
OM = "org.freedesktop.DBus.ObjectManager"
PROPS = "org.freedesktop.DBus.Properties"
A_CYCLE = [-2, -1, 0, 1, 2]                                  # each cycle's A differs from the one before
STEER = {-2: -30000, -1: -16000, 0: 0, 1: 16000, 2: 30000}   # ABS_X for each A (scenario 11's values)


def letter(a, d=1):
    """The motion frame's letter for A and D (protocol §2)."""
    if d == 1:
        return "M" if a == 0 else ("L" if a < 0 else "R")
    return "B" if a == 0 else ("X" if a < 0 else "Y")


def ble_user():
    """A fresh unprivileged user (no bluetooth group) in group input (and carbridge, when scenario 8 made it), so it
    can open the uinput pad."""
    used = set()
    for f in ("/etc/passwd", "/etc/group"):
        with open(f) as fh:
            used |= {int(line.split(":")[2]) for line in fh if line.count(":") >= 3 and line.split(":")[2].isdigit()}
    uid = 2100
    while uid in used:
        uid += 1
    with open("/etc/passwd", "a") as fh:     # the guest's root is a writable overlay
        fh.write("blepilot:x:%d:%d::/tmp:/bin/sh\n" % (uid, uid))
    with open("/etc/group") as fh:
        groups = fh.read().splitlines()
    out = []
    for line in groups:
        # input, and carbridge: scenario 8 installs udev/70-carbridge.rules, which gives pads to that group
        if line.startswith("input:") or line.startswith("carbridge:"):
            line += ("," if not line.endswith(":") else "") + "blepilot"
        out.append(line)
    out.append("blepilot:x:%d:" % uid)
    with open("/etc/group", "w") as fh:
        fh.write("\n".join(out) + "\n")
    return uid


class Central:
    """hci0 as a central through bluetoothd, for the car-side check (root, blocking dbus-python calls)."""

    def __init__(self, bus):
        self.bus = bus

    def objects(self):
        return dbus.Interface(self.bus.get_object(BLUEZ, "/"), OM).GetManagedObjects()

    def iface(self, path, name):
        return dbus.Interface(self.bus.get_object(BLUEZ, path), name)

    def get(self, path, iface, name):
        try:
            return self.iface(path, PROPS).Get(iface, name)
        except dbus.DBusException:
            return None

    def find_device(self, name):
        for path, ifaces in self.objects().items():
            dev = ifaces.get("org.bluez.Device1")
            if dev is not None and str(path).startswith("/org/bluez/hci0/") and str(dev.get("Name", "")) == name:
                return str(path), dev
        return None

    def find_char(self, dev_path, uuid):
        for path, ifaces in self.objects().items():
            ch = ifaces.get("org.bluez.GattCharacteristic1")
            if ch is not None and str(path).startswith(dev_path + "/") and str(ch["UUID"]).lower() == uuid:
                return str(path), ch
        return None


PROFILES = {
    # name, service, (characteristic written, its flags), (characteristic notifying, its flags)
    "hm10": ("HMSoft", "0000ffe0" + BASE, (HM10_UUID, ["read", "write-without-response", "write", "notify"]),
             (HM10_UUID, ["read", "write-without-response", "write", "notify"])),
    "nus": ("NUSCar", NUS % 1, (NUS % 2, ["write-without-response", "write"]), (NUS % 3, ["notify"])),
}


def car_side_check(sc, bus, car, mode):
    """The car through bluetoothd, without carbridge: discovery, connect, the characteristics, notifications,
    writes with response (so they arrive in order), the HM-10's 20-byte limit and, on the HM-10, the failsafe."""
    name, service, (rx_uuid, rx_flags), (tx_uuid, tx_flags) = PROFILES[mode]
    what = "%s car check" % name
    central = Central(bus)
    adapter = central.iface("/org/bluez/hci0", "org.bluez.Adapter1")
    adapter.SetDiscoveryFilter({"Transport": dbus.String("le")})
    t = monotonic()
    adapter.StartDiscovery()
    found = k.wait_until(lambda: central.find_device(name), 20, 0.2)
    try:
        adapter.StopDiscovery()
    except dbus.DBusException as error:
        sc.note("StopDiscovery: %s" % error)
    sc.require(bool(found), "%s: LE discovery from hci0 (bluetoothd) finds a device named %s within 20 s" % (what, name))
    dev_path, dev = found
    sc.metric("%s_check_discovery" % mode, (monotonic() - t) * 1000.0, "ms")
    sc.check(str(dev.get("Address")) == car.addr, "%s: the device named %s is the car on hci1" % (what, name),
             "%s vs %s" % (dev.get("Address"), car.addr))
    uuids = [str(u).lower() for u in dev.get("UUIDs", [])]
    sc.check(service in uuids, "%s: its advertisement carries service %s" % (what, service), uuids)
    since = monotonic()
    try:
        central.iface(dev_path, "org.bluez.Device1").Connect(timeout=30)
    except dbus.DBusException as error:
        sc.require(False, "%s: Device1.Connect to the car" % what, error)
    resolved = k.wait_until(lambda: central.get(dev_path, "org.bluez.Device1", "ServicesResolved"), 20, 0.1)
    sc.require(bool(resolved), "%s: the car's services are resolved after Connect" % what)
    sc.metric("%s_check_services_resolved" % mode, (monotonic() - since) * 1000.0, "ms")
    connect = k.wait_until(lambda: car.kinds("CONNECT", since), 5, 0.05)
    sc.check(bool(connect) and connect[0][2].upper() == k.bdaddr("hci0").upper(),
             "%s: the car logs CONNECT with the central's (hci0's) address" % what, connect)
    conn = connect[0][1] if connect else None
    chars = {}
    for uuid, flags in ((rx_uuid, rx_flags), (tx_uuid, tx_flags)):
        found = central.find_char(dev_path, uuid)
        sc.require(found is not None, "%s: characteristic %s found under the car's service" % (what, uuid))
        got = sorted(str(f) for f in found[1]["Flags"])
        sc.check(got == sorted(flags), "%s: %s's flags are %s" % (what, uuid, ", ".join(flags)), got)
        chars[uuid] = central.iface(found[0], "org.bluez.GattCharacteristic1")
        chars[uuid].path = found[0]
    rx, tx = chars[rx_uuid], chars[tx_uuid]
    tx.StartNotify()
    sent = k.wait_until(lambda: [x for x in car.kinds("TX", since) if x[2] == "READY " + name], 5, 0.05)
    sc.check(bool(sent), "%s: StartNotify -> the car notifies READY %s" % (what, name))
    value = k.wait_until(lambda: bytes(central.get(tx.path, "org.bluez.GattCharacteristic1", "Value") or b"")
                         .startswith(b"READY " + name.encode()), 5, 0.05)
    sc.check(bool(value), "%s: the central's notifying characteristic shows READY %s" % (what, name))

    def write(data):
        t = monotonic()
        rx.WriteValue(dbus.ByteArray(data), {"type": dbus.String("request")}, timeout=10)
        return t

    cursor = [len(car.log.events_conn())]
    write(b"E,0,0,0\n")
    fr = car.log.next_frame(lambda f: True, cursor, 3)
    sc.check(fr is not None and fr.text == "E,0,0,0" and fr.conn == conn, "%s: a write reaches the car: RX E,0,0,0" % what, fr)
    long_write = b"M,0,10,1\nM,0,10,1\nE,0,0,0\n"
    if mode == "hm10":
        write(b"M,0,1")
        t = write(b"0,1\n")
        fr = car.log.next_frame(lambda f: True, cursor, 3)
        sc.check(fr is not None and fr.text == "M,0,10,1", "%s: a frame split over two writes is one line M,0,10,1" % what, fr)
        fs = k.wait_until(lambda: car.kinds("FAILSAFE", t), 3, 0.02)
        sc.check(bool(fs), "%s: the car's failsafe stops it when no frame follows M,0,10,1" % what)
        if fs and fr is not None:
            gap = (fs[0][0] - fr.t) * 1000.0
            sc.metric("car_check_failsafe_after_last_frame", gap, "ms")
            sc.check(FAILSAFE_MS <= gap <= FAILSAFE_LATE_MS, "%s: ... %d-%d ms after the frame"
                     % (what, FAILSAFE_MS, FAILSAFE_LATE_MS), "%.0f ms (%s)" % (gap, fs[0][2]))
        t = write(b"M,0,15,1\n")
        bad = k.wait_until(lambda: car.kinds("BADLINE", t), 3, 0.02)
        sc.check(bool(bad) and "M,0,15,1" in bad[0][2], "%s: a line that is not a frame (M,0,15,1) is a BADLINE" % what, bad)
        t = write(long_write)
        bad = k.wait_until(lambda: car.kinds("BADWRITE", t), 3, 0.02)
        sc.check(bool(bad) and bad[0][2] == "too long: %d bytes" % len(long_write),
                 "%s: a %d-byte write is a BADWRITE (an HM-10 takes 20)" % (what, len(long_write)), bad)
        sc.check(not [x for x in car.kinds("RX", t)], "%s: ... and its data is dropped" % what, car.kinds("RX", t))
    else:
        t = write(long_write)
        got = k.wait_until(lambda: [x[2] for x in car.kinds("RX", t)] if len(car.kinds("RX", t)) >= 3 else None, 3, 0.02)
        sc.check(got == ["M,0,10,1", "M,0,10,1", "E,0,0,0"] and not car.kinds("BADWRITE", t),
                 "%s: a %d-byte write is three lines (a NUS board takes MTU - 3)" % (what, len(long_write)), got)
    status = k.wait_until(lambda: [x for x in car.kinds("TX", since) if x[2].startswith("STATUS ")], 3, 0.1)
    sc.check(bool(status), "%s: the car notifies a STATUS line every second" % what)
    t = monotonic()
    try:
        tx.StopNotify()
    except dbus.DBusException as error:
        sc.note("StopNotify: %s" % error)
    central.iface(dev_path, "org.bluez.Device1").Disconnect(timeout=20)
    eof = k.wait_until(lambda: car.kinds("EOF", t), 10, 0.05)
    sc.check(bool(eof) and eof[0][1] == conn, "%s: Disconnect -> the car logs EOF of that connection" % what, eof)
    # a central can find the car again right after the disconnect (as a real HM-10 advertises again at once)
    try:
        adapter.RemoveDevice(dbus.ObjectPath(dev_path))
    except dbus.DBusException as error:
        sc.note("RemoveDevice: %s" % error)
    rediscover(sc, bus, name, "%s: right after the disconnect" % what, "%s_found_again_after_disconnect" % mode)


def rediscover(sc, bus, name, what, metric):
    """An LE discovery from hci0 finds the car; its device object is removed again, so carbridge starts afresh."""
    central = Central(bus)
    adapter = central.iface("/org/bluez/hci0", "org.bluez.Adapter1")
    adapter.SetDiscoveryFilter({"Transport": dbus.String("le")})
    t = monotonic()
    adapter.StartDiscovery()
    again = k.wait_until(lambda: central.find_device(name), 15, 0.1)
    sc.check(bool(again), "%s: a discovery from hci0 finds %s within 15 s (the car advertises)" % (what, name))
    if again:
        sc.metric(metric, (monotonic() - t) * 1000.0, "ms")
    try:
        adapter.StopDiscovery()
    except dbus.DBusException as error:
        sc.note("StopDiscovery: %s" % error)
    if again:
        try:
            adapter.RemoveDevice(dbus.ObjectPath(again[0]))
        except dbus.DBusException as error:
            sc.note("RemoveDevice: %s" % error)


def scan_check(sc, car, uid):
    cmdlog = os.path.join(sc.work, "carbridge-commands.log")
    rc, out, err, took = carbridge(sc, cmdlog, ["scan", "--adapter", "hci0", "--seconds", "8"], uid=uid, timeout=60)
    sc.metric("scan_duration", took * 1000.0, "ms")
    sc.check(rc == 0, "scan (uid %d) exits 0" % uid, "%s %s" % (rc, err.strip()[-200:]))
    lines = [line for line in out.splitlines() if car.addr.upper() in line.upper() and "HMSoft" in line]
    sc.check(bool(lines), "scan lists the car's address %s and HMSoft on one line" % car.addr, out.strip()[:300])
    sc.check(any("HM-10" in line for line in lines), "... and says HM-10 on that line", lines)


def ble_config(car_addr, name):
    cfg = k.base_config(car_addr, url="ble://%s" % name)
    return cfg


def start_run(sc, car, name, uid, what):
    """carbridge run with url ble://NAME as uid; waits for its first frame at the car after the start, checks it is
    the handshake E,0,0,0 (a new carbridge may find the link bluetoothd kept up, so the connection need not be new)."""
    config = ble_config(car.addr, name)
    sc.check('url = "ble://%s"' % name in config, "the config links to ble://%s" % name)
    cb = Carbridge(sc.work, config, user=str(uid))
    since = monotonic()
    try:
        cb.start()
    except (OSError, RuntimeError) as error:
        sc.require(False, "carbridge starts (%s)" % what, error)
    sc.cleanups.append(lambda: cb.stop(signal.SIGTERM, 3))
    sc.ble_running.append(cb)
    first = k.wait_until(lambda: car.log.frames(since) or not cb.alive(), 60, 0.05)
    sc.require(cb.alive(), "carbridge (%s) keeps running after start" % what,
               "exit %s; last log lines %s" % (cb.proc.poll(), [x for _, x in cb.log_lines(None, since - 1)][-4:]))
    sc.require(bool(first), "carbridge (%s) writes to the car within 60 s of exec" % what,
               [x for _, x in cb.log_lines(None, since - 1)][-4:])
    fr = first[0]
    sc.metric("%s_first_frame_after_exec" % what, (fr.t - since) * 1000.0, "ms")
    sc.check(fr.text == "E,0,0,0", "handshake: the first frame from carbridge (%s) is E,0,0,0" % what, fr.text)
    connects = car.log.connections(since)
    sc.note("%s: connections since start %s, first frame %s on connection %d" % (what, connects, fr, fr.conn))
    cb.since = since
    return cb


def drive_exact(sc, car, cb, pad, what, since):
    """Engine, Speed+ x2, Speed- x2, Engine off: exactly the six frames, with the handshake first."""
    pad.press(e.BTN_START, "engine on"); time.sleep(GAP_S)
    for _ in range(2):
        pad.press(e.BTN_TR, "speed+"); time.sleep(GAP_S)
    for _ in range(2):
        pad.press(e.BTN_TL, "speed-"); time.sleep(GAP_S)
    t = pad.press(e.BTN_START, "engine off")
    car.log.wait_frame(lambda f: f.text == "E,0,0,0", t, 3.0)
    time.sleep(0.3)
    frames = car.log.frames(since)
    sc.dump_frames(frames, "%s: frames received by the car" % what)
    got = dedup(frames)
    want = ["E,0,0,0", "M,0,10,1", "M,0,20,1", "M,0,10,1", "M,0,0,1", "E,0,0,0"]
    sc.check(got == want, "%s: the car receives exactly %s" % (what, " ".join(want)), "got %s" % " ".join(got))


def no_bad_lines(sc, car, since, what):
    bad = car.kinds("BADLINE", since) + car.kinds("BADWRITE", since)
    sc.check(not bad, "%s: every write was at most 20 bytes and every line a frame (no BADWRITE/BADLINE)" % what, bad[:5])


def steer_and_speed_up(pad, value):
    """One report: the stick to `value` and Speed+ pressed; then the release. Returns the report's time."""
    pad.ui.write(e.EV_ABS, e.ABS_X, value)
    pad.ui.write(e.EV_KEY, e.BTN_TR, 1)
    t = monotonic()
    pad.ui.syn()
    pad.ui.write(e.EV_KEY, e.BTN_TR, 0)
    pad.ui.syn()
    return t


def order_check(sc, car, cb, pad):
    """CYCLES stop/start cycles: the start (stick + Speed+) and STOP_AFTER_S later its stop (Speed-), so the stop
    frame is written right behind the motion frame, as a driver tapping the brake does (the recipe's in-order
    sender through AcquireWrite had 6 of 500 such stops overtaken under EATT); each cycle waits for its stop at
    the car. Then the invariant on all frames. The motion frame may not reach the car at all: while a write is
    unacknowledged the stop replaces it (newest wins), which is not a loss."""
    events = car.log.events_conn()
    cursor = [len(events)]
    t0 = monotonic()
    starts = []   # (time, A)
    missing = []  # frames that never came: (cycle, text)
    for i in range(CYCLES):
        a = A_CYCLE[i % len(A_CYCLE)]
        motion, stop = "%s,%d,10,1" % (letter(a), a), "%s,%d,0,1" % (letter(a), a)
        c0 = cursor[0]
        t = steer_and_speed_up(pad, STEER[a])
        starts.append((t, a))
        time.sleep(STOP_AFTER_S)
        pad.ui.write(e.EV_KEY, e.BTN_TL, 1)
        t_down = monotonic()
        pad.ui.syn()
        pad.ui.write(e.EV_KEY, e.BTN_TL, 0)
        pad.ui.syn()
        # the stop frame: it left after the press, so it arrives after it (it may have overtaken the motion frame)
        cursor[0] = c0
        if car.log.next_frame(lambda f: f.text == stop and f.t >= t_down, cursor, CYCLE_WAIT_S) is None:
            missing.append((i, stop))
        if len(missing) >= MAX_MISSING or monotonic() - t0 > ORDER_BUDGET_S:
            break
    took = monotonic() - t0
    done = len(starts)
    sc.check(done >= MIN_CYCLES, "at least %d cycles within %.0f s" % (MIN_CYCLES, ORDER_BUDGET_S), "%d" % done)
    sc.check(not missing, "%d stop/start cycles: each stop frame reaches the car" % done,
             "%d missing after %d cycles%s: %s" % (len(missing), done, " (gave up)" if len(missing) >= MAX_MISSING else "",
                                                  missing[:MAX_MISSING]))
    sc.metric("order_frames_missing", len(missing), "frames")
    time.sleep(0.5)   # late frames of the last cycles
    frames = car.log.frames(t0)
    # Which frames belong to which cycle. carbridge may turn one report (stick + Speed+) into two frames: the
    # previous A with S=10 first ("split": Speed+ taken before the stick), then the new A. Such a frame arrives in
    # the new cycle's time as the motion frame just before the first one with the new A; at most one per cycle is
    # taken as a split. Everything else with a cycle's A, from its start until that A comes round again, is the
    # cycle's own (so a frame of the old cycle that arrives later than that is an overtake, not a split).
    n = len(starts)
    bounds = [t for t, _ in starts] + [float("inf")]
    split = set()
    for i in range(1, n):
        a_new, a_old = starts[i][1], starts[i - 1][1]
        window = [f for f in frames if bounds[i] <= f.t < bounds[i + 1] and f.motion]
        first_new = next((j for j, f in enumerate(window) if f.a == a_new), None)
        if first_new:
            before = window[first_new - 1]
            if before.a == a_old and before.s > 0:
                split.add(id(before))
    overtaken, unsettled = [], []
    for i, (t, a) in enumerate(starts):
        end = bounds[min(i + len(A_CYCLE), n)]
        own = [f for f in frames if t <= f.t < end and f.motion and f.a == a and id(f) not in split]
        moved = stopped = False
        for f in own:
            if f.s > 0:
                moved = True
                if stopped:
                    overtaken.append((i, "%.3f" % f.t, f.text))
            elif moved:
                stopped = True
        if not own or own[-1].s != 0:
            unsettled.append((i, [f.text for f in own]))
    stray = [f for f in frames if not f.motion and f.text != "E,0,0,0"]
    if split:
        sc.note("%d cycles' reports gave a frame with the previous A first (Speed+ before the stick)" % len(split))
    sc.metric("order_split_reports", len(split), "reports")
    sc.metric("order_cycles_done", done, "cycles")
    sc.metric("order_seconds", took, "s")
    if done:
        sc.metric("order_cycle_mean", took * 1000.0 / done, "ms")
    sc.metric("order_frames_received", len(frames), "frames")
    started = sum(1 for i, (t, a) in enumerate(starts)
                  if any(f.a == a and f.s > 0 and t <= f.t < bounds[min(i + 1, n)] + CYCLE_WAIT_S for f in frames))
    sc.metric("order_cycles_motion_received", started, "cycles")   # the rest: the stop replaced the start
    sc.metric("order_overtaken", len(overtaken), "frames")
    sc.check(not overtaken, "no motion frame arrives after its cycle's stop frame (a stop overtaken by the motion "
             "frame written before it)", overtaken[:5])
    sc.check(not unsettled, "the last frame of every cycle is its stop frame", unsettled[:5])
    sc.check(not stray, "nothing but motion frames during the cycles", [f.text for f in stray][:5])
    # back to the centre, at rest: the pad's stick where the other checks expect it
    pad.axis(e.ABS_X, 0, "stick centre")
    return frames


def power_loss_check(sc, car, cb, pad):
    """hci1 powered off while moving, then on (the car app restarted so it advertises again)."""
    t = pad.press(e.BTN_TR, "speed+")
    moving = car.log.wait_frame(lambda f: f.text == "M,0,10,1", t, 3.0)
    sc.require(moving is not None, "moving at S=10 before the power loss")
    old = moving.conn
    time.sleep(0.3)
    t_off = monotonic()
    sh(sc, "timeout 20 btmgmt --index 1 power off")
    t_powered_off = monotonic()   # "Set Powered complete": from here on the car cannot receive
    eof = k.wait_until(lambda: car.kinds("EOF", t_off) or sc.bluetoothd.poll() is not None, 10, 0.05)
    if sc.bluetoothd.poll() is not None:
        # bluetoothd 5.66 serving the emulated car can abort when a write request reaches its GATT server as the
        # link goes (gatt-database.c: att_get_device() fails with ENOTCONN and a NULL device path is appended to
        # the app's WriteValue call). A real car is not bluetoothd; carbridge's own bluetoothd going away is a
        # loss it must ride out too: bluetoothd is started again, and the rest of the check stands.
        sc.note("bluetoothd (serving both the central and the emulated car) aborted at the power-off: restarted")
        sc.metric("bluetoothd_restarts", 1, "restarts")
        restart_bluetoothd(sc)
        # bluetoothd started again turns BR/EDR back on for hci1: the car module is LE-only again before power on
        # (LE stays on, so the kernel takes BR/EDR off while the controller is off).
        sh(sc, "timeout 20 btmgmt --index 1 bredr off")
        eof = []
    else:
        sc.check(bool(eof) and eof[0][1] == old, "hci1 powered off -> the car sees its connection %d end" % old, eof)
    down = k.wait_until(lambda: cb.log_lines(r"link down", t_off - 0.5), 10, 0.1)
    sc.check(bool(down), "carbridge logs the link down", [x for _, x in cb.log_lines(None, t_off - 0.5)][-4:])
    if down:
        sc.metric("link_down_logged_after_power_off", (down[0][0] - t_off) * 1000.0, "ms")
    fs = k.wait_until(lambda: car.kinds("FAILSAFE", t_off - 0.5), 2, 0.05)
    sc.note("the car's failsafe after the power loss: %s" % fs)
    car.stop()
    sh(sc, "timeout 20 btmgmt --index 1 power on")
    settings = mgmt_settings(1)
    sc.check("powered" in settings and "le" in settings and "br/edr" not in settings,
             "hci1 is powered and still LE-only after power on", settings)
    t_on = monotonic()
    sc.require(car.start("hm10", "HMSoft"), "the HM-10 car app registers again after power on")
    connect = k.wait_until(lambda: car.log.connections(t_on), 40, 0.1)
    sc.require(bool(connect), "carbridge reconnects to the car within 40 s of its return")
    accepted, conn = connect[0]
    sc.metric("reconnect_after_power_on", (accepted - t_on) * 1000.0, "ms")
    first = check_handshake(sc, car, accepted, conn, "M,0,0,1", "the new connection (engine on: the stop frame)",
                            "handshake_after_reconnect", None)
    sc.check(cb.alive(), "carbridge kept running through the power loss")

    def stable():
        """The last connection, once it has been up for STABLE_S without an EOF (the driver waits for a link)."""
        conns = car.log.connections(t_on)
        if not conns:
            return None
        last_t, last = conns[-1]
        ended = [c for _, c, _ in car.kinds("EOF", last_t) if c == last]
        return (last_t, last) if not ended and monotonic() - last_t >= STABLE_S else None
    settled = k.wait_until(stable, 20, 0.1)
    conns = car.log.connections(t_on)
    sc.metric("connections_after_power_on", len(conns), "connections")
    if len(conns) > 1:
        sc.note("the link went down again after the reconnect: connections %s; carbridge: %s" % (
            conns, [x for _, x in cb.log_lines(r"link (up|down)", t_on)]))
    sc.require(settled is not None, "the link is up for %.1f s within 20 s of the first reconnect" % STABLE_S, conns)
    for t_conn, c in conns[1:]:   # every later connection starts with the stop frame too
        check_handshake(sc, car, t_conn, c, "M,0,0,1", "connection %d after the power loss" % c, None, None)
    idle = car.log.frames(accepted)
    sc.dump_frames(car.log.frames(t_off - 0.3), "frames around the power loss")
    sc.check(not [f for f in idle if f.s > 0], "no motion frame with S > 0 after the reconnect until the pad moves",
             [f.text for f in idle][:5])
    # Without the car's EOF (bluetoothd restarted), the car was away once the power-off command returned: frames
    # it took between t_off and then were sent before the loss.
    gone = eof[0][0] if eof else t_powered_off
    away = car.log.frames(gone, accepted)
    sc.check(not away, "nothing received while the car was away", [f.text for f in away][:5])
    conn = settled[1]
    t = pad.press(e.BTN_TR, "speed+ after the reconnect")
    fr = car.log.wait_frame(lambda f: f.motion and f.s > 0, t, 3.0)
    sc.check(fr is not None and fr.text == "M,0,10,1" and fr.conn == conn,
             "Speed+ after the reconnect -> M,0,10,1 on the new connection (S was reset)", fr)
    return first


def kill_check(sc, car, cb):
    """SIGKILL while moving: the car's own failsafe stops it."""
    moving = car.log.wait_frame(lambda f: f.motion and f.s > 0, monotonic() - 0.2, 2.0)
    sc.require(moving is not None, "streaming a motion frame with S > 0 before SIGKILL")
    t_kill = cb.send_signal(signal.SIGKILL)
    cb.stop(signal.SIGKILL, 5)
    fs = k.wait_until(lambda: car.kinds("FAILSAFE", t_kill), 3, 0.02)
    sc.check(bool(fs), "the car's failsafe stops it after carbridge is killed (SIGKILL) while moving")
    if fs:
        last = [f for f in car.log.frames(t_kill - 1.0, fs[0][0])]
        sc.dump_frames(last, "frames before the failsafe")
        if last:
            gap = (fs[0][0] - last[-1].t) * 1000.0
            sc.metric("failsafe_after_last_frame", gap, "ms")
            sc.check(FAILSAFE_MS <= gap <= FAILSAFE_LATE_MS and last[-1].s > 0,
                     "FAILSAFE %d-%d ms after the last frame (S > 0)" % (FAILSAFE_MS, FAILSAFE_LATE_MS),
                     "%.0f ms after %s (%s)" % (gap, last[-1].text, fs[0][2]))
        after = car.log.frames(fs[0][0])
        sc.check(not after, "nothing reaches the car after the failsafe (carbridge is gone)", [f.text for f in after][:3])


def sigterm_check(sc, car, cb, pad):
    t = pad.press(e.BTN_START, "engine on"); time.sleep(GAP_S)
    t = pad.press(e.BTN_TR, "speed+")
    sc.require(car.log.wait_frame(lambda f: f.text == "M,0,10,1", t, 3.0) is not None, "moving at S=10 before SIGTERM")
    time.sleep(0.2)
    t_term = monotonic()
    rc = cb.stop(signal.SIGTERM, 5)
    sc.metric("exit_after_sigterm", (monotonic() - t_term) * 1000.0, "ms")
    sc.check(rc == 0, "carbridge exits 0 on SIGTERM", rc)
    time.sleep(0.5)   # a late frame would arrive by now
    after = car.log.frames(t_term - 0.01)
    sc.dump_frames(car.log.frames(t_term - 0.2), "frames around SIGTERM")
    sc.check(bool(after) and after[-1].text == "E,0,0,0", "E,0,0,0 is the last frame the car receives",
             [f.text for f in after][-3:])
    shut = cb.log_lines(r"shutdown: ")
    sc.note("carbridge's shutdown lines: %s" % shut)


def nus_check(sc, car, bus, uid):
    """The Nordic UART Service car on hci1 (the HM-10 disconnected and gone): the car alone, then carbridge."""
    central = Central(bus)
    t = monotonic()
    for path, ifaces in central.objects().items():
        dev = ifaces.get("org.bluez.Device1")
        if dev is not None and str(path).startswith("/org/bluez/hci0/") and str(dev.get("Address")) == car.addr:
            try:
                if dev.get("Connected"):
                    central.iface(path, "org.bluez.Device1").Disconnect(timeout=20)
                central.iface("/org/bluez/hci0", "org.bluez.Adapter1").RemoveDevice(dbus.ObjectPath(path))
            except dbus.DBusException as error:
                sc.note("disconnecting the HM-10: %s" % error)
    k.wait_until(lambda: len(car.kinds("EOF")) >= len(car.log.connections()), 10, 0.1)
    sc.note("HM-10 links ended since %.3f: %s" % (t, car.kinds("EOF", t)))
    car.stop()
    # another car is switched on: a fresh controller state (powering off also removes the HM-10's advertising set)
    for c in ("power off", "power on"):
        sh(sc, "timeout 20 btmgmt --index 1 " + c)
    t = monotonic()
    sc.require(car.start("nus", "NUSCar"), "the Nordic UART car (ble_car.py --mode nus --name NUSCar) registers on hci1")
    car_side_check(sc, bus, car, "nus")
    t = monotonic()
    cb = start_run(sc, car, "NUSCar", uid, "nus")
    pad = k.Pad()   # the config picks the pad by its name
    sc.cleanups.append(pad.close)
    since_pad = monotonic()
    sc.require(k.wait_until(lambda: cb.has_open(pad.node), 8.0), "carbridge (nus) opens the hotplugged pad")
    wait_pad_ready(sc, cb, pad, since_pad)
    drive_exact(sc, car, cb, pad, "NUS car", cb.since)
    sc.check(bool(cb.log_lines(r"car: READY NUSCar", cb.since - 1)), "carbridge logs the car's line READY NUSCar",
             [x for _, x in cb.log_lines(r"car: ", cb.since - 1)][:3])
    no_bad_lines(sc, car, t, "NUS car")
    sc.check(cb.stop(signal.SIGTERM, 5) == 0, "carbridge (nus) exits 0 on SIGTERM")
    pad.close()


def hm10_carbridge(sc, car, uid, bus):
    """Sections 2-7: carbridge against the HM-10 car."""
    # ---- 2. carbridge scan, unprivileged ----
    scan_check(sc, car, uid)
    # the car still advertises, some seconds after its last disconnect
    rediscover(sc, bus, "HMSoft", "HMSoft car check: after the scan", "hm10_found_after_scan")

    # ---- 3. carbridge run ble://HMSoft: handshake, exact frames, the car's line ----
    cb = start_run(sc, car, "HMSoft", uid, "hm10")
    pad = plug_pad(sc, cb)
    sc.ble_running.append(pad)
    drive_exact(sc, car, cb, pad, "HM-10 car", cb.since)
    sc.check(bool(cb.log_lines(r"car: READY HMSoft", cb.since - 1)), "carbridge logs the car's line READY HMSoft",
             [x for _, x in cb.log_lines(r"car: ", cb.since - 1)][:3])
    no_bad_lines(sc, car, cb.since, "HM-10 drive")

    # ---- 4. order under EATT ----
    pad.press(e.BTN_START, "engine on"); time.sleep(GAP_S)
    t = monotonic()
    order_check(sc, car, cb, pad)
    no_bad_lines(sc, car, t, "order cycles")

    # ---- 5. the car's controller loses power while moving ----
    time.sleep(GAP_S)
    power_loss_check(sc, car, cb, pad)

    # ---- 6. SIGKILL while moving: the car's failsafe ----
    kill_check(sc, car, cb)

    # ---- 7. SIGTERM while moving ----
    cb = start_run(sc, car, "HMSoft", uid, "hm10_restart")
    wait_pad_ready(sc, cb, pad, cb.since)
    sigterm_check(sc, car, cb, pad)
    pad.close()


def run(sc):
    t_start = monotonic()
    sc.require(os.access(k.CARBRIDGE, os.X_OK), "carbridge binary present", k.CARBRIDGE)
    uid = ble_user()
    sc.ble_running = []   # the carbridge processes and pads of the HM-10 part
    bus = start_bluez(sc)
    le_car_controller(sc)
    car = BleCar(sc)
    t = monotonic()
    sc.require(car.start("hm10", "HMSoft"), "the HM-10 car (ble_car.py --mode hm10) registers its GATT application "
               "and advertisement on hci1", open(car.log_path + ".stderr").read()[-300:])
    sc.metric("car_registered_after_start", (monotonic() - t) * 1000.0, "ms")
    sc.check(car.addr == k.bdaddr("hci1"), "the car's adapter is hci1", car.addr)

    # ---- 1. the car alone, through bluetoothd ----
    car_side_check(sc, bus, car, "hm10")
    sc.metric("car_check_done_after", monotonic() - t_start, "s")

    # ---- 2-7. carbridge and the HM-10 car; if a step cannot go on, the NUS car is still tried ----
    try:
        hm10_carbridge(sc, car, uid, bus)
    except k.Abort as abort:
        sc.note("the HM-10 part stopped early: %s" % abort)
    for x in sc.ble_running:   # nothing of the HM-10 part may drive the NUS car
        x.stop(signal.SIGTERM, 3) if isinstance(x, Carbridge) else x.close()
    sc.metric("hm10_done_after", monotonic() - t_start, "s")

    # ---- 8. the Nordic UART car ----
    nus_check(sc, car, bus, uid)
    sc.metric("guest_seconds", monotonic() - t_start, "s")

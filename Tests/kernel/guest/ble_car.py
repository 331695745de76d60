#!/usr/bin/python3
"""The BLE car of scenario ble_car: an HM-10 (or a Nordic UART Service board) on one controller, through bluetoothd.

    ble_car.py --hci hci1 --mode hm10|nus --name HMSoft --log FILE [--ready FILE] [--status-every SECONDS]
               [--first-connection N] [--failsafe-ms MS] [--beacon-every SECONDS]

bluetoothd manages the guest's controllers; through its D-Bus API (dbus-python + GLib, as root) this script
makes --hci an LE "serial" car module (the controller must already be LE-only: btmgmt bredr off):
  * Adapter1 of --hci: Alias --name, Powered;
  * GattManager1.RegisterApplication, an ObjectManager at /car with one service:
      hm10: service FFE0, characteristic FFE1 (read, write-without-response, write, notify): the central writes
            text lines into FFE1, the car's lines come back as notifications on FFE1 (HM-10, CC2541, HC-08);
      nus:  6E400001-B5A3-F393-E0A9-E50E24DCCA9E, RX 6E400002 (write-without-response, write),
            TX 6E400003 (notify);
  * LEAdvertisingManager1.RegisterAdvertisement: connectable ("peripheral"), Discoverable (bluetoothd ignores LE
    advertisers without the LE General/Limited Discoverable flag), LocalName --name, the service UUID.

The log has car.py's format (CLOCK_MONOTONIC seconds, kind/connection, text), so kharness.CarLog reads it:
    <mono> LISTEN <hci> <address> <mode> <name>
    <mono> CONNECT/<n> <central address>     a central connected (its Device1 on --hci went Connected, or, without
                                             that signal, the first write or StartNotify after a disconnect)
    <mono> RX/<n> <line>                     every line received (writes split on \\n, one \\r before it dropped;
                                             a partial line waits for the next write)
    <mono> TX/<n> <line>                     every notification sent (without its \\n)
    <mono> EOF/<n> <central address>         the central disconnected (Connected false, its Device1 removed, or
                                             the adapter powered off)
    <mono> BADWRITE/<n> too long: <len> bytes   hm10: one write of more than 20 bytes (a real HM-10 takes at most
                                             20 bytes per write: ATT MTU 23); the data is dropped
    <mono> BADLINE/<n> <why>: <line>         a line that is not a frame (docs/protocol.md §8.1); the car does
                                             not act on it and it does not count for the failsafe
    <mono> FAILSAFE/<n> stopped after <ms> ms without a frame   (protocol §8.4: moving, and no valid frame
                                             for --failsafe-ms, 300 by default)
    <mono> NOTIFY/<n> on|off                 the central turned notifications on or off
Received lines are stamped when bluetoothd's WriteValue call reaches this process (the car's Python dispatch
under TCG is part of every latency measured against it).

Notifications: when a central turns them on, "READY <name>" once, then "STATUS battery=7.4V" every
--status-every seconds (1 by default; 0: none); each at most 20 bytes with its \\n, as an HM-10 sends them.
The --ready file is written (the adapter's address) once the application and the advertisement are registered.
While no central is connected the car advertises again every --beacon-every seconds (0.5; 0: never), see beacon().
SIGTERM ends it (bluetoothd then drops the application and the advertisement; the LE link stays up).
"""
import argparse, math, os, re, signal, socket, sys, time

import dbus
import dbus.exceptions
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

BLUEZ = "org.bluez"
PROPS = "org.freedesktop.DBus.Properties"
OM = "org.freedesktop.DBus.ObjectManager"
SVC_IF = "org.bluez.GattService1"
CHR_IF = "org.bluez.GattCharacteristic1"
ADV_IF = "org.bluez.LEAdvertisement1"
DEV_IF = "org.bluez.Device1"
BASE = "-0000-1000-8000-00805f9b34fb"
NUS = "6e40000%d-b5a3-f393-e0a9-e50e24dcca9e"
MODES = {
    # characteristics: (uuid, flags, receives lines, sends notifications)
    "hm10": {"svc": "0000ffe0" + BASE, "adv": "0000ffe0" + BASE,
             "chrs": [("0000ffe1" + BASE, ["read", "write-without-response", "write", "notify"], True, True)]},
    "nus": {"svc": NUS % 1, "adv": NUS % 1,
            "chrs": [(NUS % 2, ["write-without-response", "write"], True, False),
                     (NUS % 3, ["notify"], False, True)]},
}
HM10_MAX_WRITE = 20     # ATT MTU 23 - 3: what a real HM-10 takes in one write
MAX_LINE = 16           # protocol §8.1: the car keeps at most 16 bytes of a line
MOTION = "MLRBXY"
INT_RE = re.compile(r"^(0|-?[1-9][0-9]*)$")

args = None
log = None
car = None
mainloop = None


def note(kind, text):
    log.write("%.6f %s %s\n" % (time.monotonic(), kind, text))


def debug(*words):
    print("[ble_car %.6f] %s" % (time.monotonic(), " ".join(str(w) for w in words)), file=sys.stderr, flush=True)


def frame_error(text):
    """None when `text` is a frame by protocol §8.1, else why not."""
    parts = text.split(",")
    if len(parts) != 4:
        return "not four fields"
    kind, fields = parts[0], parts[1:]
    if not all(INT_RE.match(f) for f in fields):
        return "not plain integers"
    a, s, d = (int(f) for f in fields)
    if kind == "E":
        return None if (a, s, d) == (0, 0, 0) else "E is only E,0,0,0"
    if not -2 <= a <= 2:
        return "A out of -2..2"
    if not (0 <= s <= 240 and s % 10 == 0):
        return "S not 0..240 in steps of 10"
    if d not in (0, 1):
        return "D not 0 or 1"
    if kind in "FGHIJ" and len(kind) == 1:
        return None
    if kind not in MOTION or len(kind) != 1:
        return "unknown frame type"
    want = ("M" if a == 0 else "L" if a < 0 else "R") if d == 1 else ("B" if a == 0 else "X" if a < 0 else "Y")
    return None if kind == want else "letter %s does not match D=%d A=%d (%s)" % (kind, d, a, want)


def address_of(path):
    m = re.search(r"dev_([0-9A-Fa-f_]{17})$", str(path))
    return m.group(1).replace("_", ":") if m else str(path)


class InvalidArgs(dbus.exceptions.DBusException):
    _dbus_error_name = "org.freedesktop.DBus.Error.InvalidArgs"


class NotSupported(dbus.exceptions.DBusException):
    _dbus_error_name = "org.bluez.Error.NotSupported"


class Application(dbus.service.Object):
    def __init__(self, bus, path):
        self.path, self.services = path, []
        dbus.service.Object.__init__(self, bus, path)

    @dbus.service.method(OM, out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        out = {}
        for s in self.services:
            out[dbus.ObjectPath(s.path)] = s.all_props()
            for c in s.chrs:
                out[dbus.ObjectPath(c.path)] = c.all_props()
        return out


class Service(dbus.service.Object):
    def __init__(self, bus, path, uuid):
        self.path, self.uuid, self.chrs = path, uuid, []
        dbus.service.Object.__init__(self, bus, path)

    def all_props(self):
        return {SVC_IF: {"UUID": self.uuid, "Primary": dbus.Boolean(True),
                         "Characteristics": dbus.Array([dbus.ObjectPath(c.path) for c in self.chrs], signature="o")}}

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, iface):
        if iface != SVC_IF:
            raise InvalidArgs()
        return self.all_props()[SVC_IF]


class Characteristic(dbus.service.Object):
    def __init__(self, bus, path, uuid, flags, receives, sends, service):
        self.path, self.uuid, self.flags, self.receives, self.sends = path, uuid, flags, receives, sends
        self.service = service
        self.value = b""
        dbus.service.Object.__init__(self, bus, path)

    def all_props(self):
        return {CHR_IF: {"UUID": self.uuid, "Service": dbus.ObjectPath(self.service.path),
                         "Flags": dbus.Array(self.flags, signature="s"),
                         "Value": dbus.Array(self.value, signature="y")}}

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, iface):
        if iface != CHR_IF:
            raise InvalidArgs()
        return self.all_props()[CHR_IF]

    @dbus.service.signal(PROPS, signature="sa{sv}as")
    def PropertiesChanged(self, iface, changed, invalidated):
        pass

    @dbus.service.method(CHR_IF, in_signature="a{sv}", out_signature="ay")
    def ReadValue(self, options):
        if "read" not in self.flags:
            raise NotSupported("not readable")
        return dbus.Array(self.value, signature="y")

    @dbus.service.method(CHR_IF, in_signature="aya{sv}")
    def WriteValue(self, value, options):
        t = time.monotonic()
        if not self.receives:
            raise NotSupported("not writable")
        car.received(t, str(options.get("device", "")), bytes(value), str(options.get("type", "-")))

    @dbus.service.method(CHR_IF)
    def StartNotify(self):
        if not self.sends:
            raise NotSupported("no notifications")
        car.start_notify()

    @dbus.service.method(CHR_IF)
    def StopNotify(self):
        car.stop_notify()

    def notify(self, data):
        self.value = data
        self.PropertiesChanged(CHR_IF, {"Value": dbus.Array(data, signature="y")}, [])


class Advertisement(dbus.service.Object):
    def __init__(self, bus, path, uuid, name):
        self.path, self.uuid, self.name = path, uuid, name
        dbus.service.Object.__init__(self, bus, path)

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, iface):
        if iface != ADV_IF:
            raise InvalidArgs()
        return {"Type": "peripheral", "ServiceUUIDs": dbus.Array([self.uuid], signature="s"),
                "LocalName": dbus.String(self.name), "Discoverable": dbus.Boolean(True)}

    @dbus.service.method(ADV_IF)
    def Release(self):
        debug("advertisement released")


class Car:
    """The car's state: the connection (numbered from --first-connection), the partial line, notifications, the
    failsafe."""

    def __init__(self, bus):
        self.bus = bus
        self.adapter = "/org/bluez/" + args.hci
        mode = MODES[args.mode]
        self.app = Application(bus, "/car")
        svc = Service(bus, "/car/service0", mode["svc"])
        self.app.services.append(svc)
        for i, (uuid, flags, receives, sends) in enumerate(mode["chrs"]):
            svc.chrs.append(Characteristic(bus, "/car/service0/char%d" % i, uuid, flags, receives, sends, svc))
        self.tx = [c for c in svc.chrs if c.sends][0]
        self.adv = Advertisement(bus, "/car/adv0", mode["adv"], args.name)
        self.count = args.first_connection - 1
        self.conn = None          # the current connection's number, None while nobody is connected
        self.peer = None          # its Device1 path on --hci
        self.buf = b""
        self.dropping = False     # inside a line longer than MAX_LINE: thrown away up to its \n
        self.notifying = False
        self.status_timer = None
        self.moving = False       # the last valid motion frame had S > 0
        self.last_frame = None    # time of the last valid frame
        self.last_conn = None     # the connection it came on
        self.failsafe_timer = None
        self.done = set()
        self.hci = None           # raw HCI socket of --hci (beacon)

    # ---- connections
    def begin(self, path, how):
        if self.conn is not None:
            return
        self.count += 1
        self.conn, self.peer = self.count, path
        self.buf, self.dropping = b"", False
        note("CONNECT/%d" % self.conn, address_of(path))
        debug("connection", self.conn, "from", path, "(%s)" % how)

    def end(self, path, how):
        if self.conn is None or (path is not None and self.peer is not None and str(path) != str(self.peer)):
            return
        note("EOF/%d" % self.conn, address_of(self.peer))
        debug("connection", self.conn, "ended (%s)" % how)
        self.conn, self.peer = None, None
        self.set_notifying(False)

    def beacon(self):
        """Advertises again while nobody is connected, every --beacon-every seconds. btvirt (BlueZ 5.66's emulator)
        delivers advertising reports only when a scanner starts scanning or an advertiser enables its set, never
        again at the advertising interval; a report that reaches the scanning kernel before its discovery has
        started is dropped, so one discovery in two or three never saw the car. A real HM-10 sends its
        advertisement every interval: here the car disables and enables its set (handle 1, its one instance)
        through a raw HCI socket, and each enable is a fresh advertisement for every scanner."""
        if self.conn is not None or len(self.done) < 2:
            return True
        try:
            if self.hci is None:
                self.hci = socket.socket(socket.AF_BLUETOOTH, socket.SOCK_RAW, socket.BTPROTO_HCI)
                self.hci.bind((int(args.hci[3:]),))
            for enable in (0, 1):
                # HCI command packet: LE Set Extended Advertising Enable (0x2039), enable, 1 set: handle 1, no
                # duration, no event limit
                self.hci.send(bytes([0x01, 0x39, 0x20, 6, enable, 1, 1, 0, 0, 0]))
        except OSError as error:   # the controller is down (powered off): nothing to advertise on
            debug("beacon:", error)
            if self.hci is not None:
                self.hci.close()
                self.hci = None
        return True

    def device_changed(self, iface, changed, invalidated, path=None):
        if iface == DEV_IF and str(path).startswith(self.adapter + "/dev_") and "Connected" in changed:
            if changed["Connected"]:
                self.begin(path, "Connected")
            else:
                self.end(path, "Connected false")
        elif iface == "org.bluez.Adapter1" and str(path) == self.adapter and changed.get("Powered") is False:
            self.end(None, "adapter powered off")

    def interfaces_added(self, path, ifaces):
        dev = ifaces.get(DEV_IF)
        if dev is not None and str(path).startswith(self.adapter + "/dev_") and dev.get("Connected"):
            self.begin(path, "InterfacesAdded")

    def interfaces_removed(self, path, ifaces):
        if DEV_IF in ifaces and self.peer is not None and str(path) == str(self.peer):
            self.end(path, "Device1 removed")

    def already_connected(self):
        """A central that is connected when the car starts (the car app restarted under a live link)."""
        om = dbus.Interface(self.bus.get_object(BLUEZ, "/"), OM)
        for path, ifaces in om.GetManagedObjects().items():
            dev = ifaces.get(DEV_IF)
            if dev is not None and str(path).startswith(self.adapter + "/dev_") and dev.get("Connected"):
                self.begin(path, "connected at start")

    # ---- data from the central
    def received(self, t, device, data, write_type):
        if self.conn is None:
            self.begin(device or "unknown", "first write")
        n = self.conn
        if args.mode == "hm10" and len(data) > HM10_MAX_WRITE:
            note("BADWRITE/%d" % n, "too long: %d bytes" % len(data))
            return
        buf = self.buf + data
        while True:
            if self.dropping:   # the rest of a line that was too long, up to its \n
                if b"\n" not in buf:
                    buf = b""
                    break
                buf = buf.split(b"\n", 1)[1]
                self.dropping = False
            if b"\n" not in buf:
                break
            line, buf = buf.split(b"\n", 1)
            if line.endswith(b"\r"):
                line = line[:-1]
            text = line.decode("utf-8", "backslashreplace")
            log.write("%.6f RX/%d %s\n" % (t, n, text))
            why = "too long" if len(line) > MAX_LINE else frame_error(text)
            if why:
                log.write("%.6f BADLINE/%d %s: %s\n" % (t, n, why, text))
            else:
                self.frame(t, text)
        if len(buf) > MAX_LINE:
            # a line that can no longer be a frame: thrown away whole, up to its \n
            text = buf.decode("utf-8", "backslashreplace")
            log.write("%.6f RX/%d %s\n" % (t, n, text))
            log.write("%.6f BADLINE/%d too long: %s\n" % (t, n, text))
            buf, self.dropping = b"", True
        self.buf = buf

    def frame(self, t, text):
        kind, a, s, d = text.split(",")
        self.last_frame, self.last_conn = t, self.conn
        if kind in MOTION:
            self.moving = int(s) > 0
        elif kind == "E":
            self.moving = False
        # F frames keep the link alive but do not start the motors
        if self.failsafe_timer is not None:
            GLib.source_remove(self.failsafe_timer)
            self.failsafe_timer = None
        if self.moving:
            self.arm_failsafe()

    def arm_failsafe(self):
        due = self.last_frame + args.failsafe_ms / 1000.0
        delay_ms = max(1, int(math.ceil((due - time.monotonic()) * 1000.0)))
        self.failsafe_timer = GLib.timeout_add(delay_ms, self.failsafe)

    def failsafe(self):
        self.failsafe_timer = None
        if not self.moving:
            return False
        waited = time.monotonic() - self.last_frame
        if waited * 1000.0 < args.failsafe_ms:
            self.arm_failsafe()
            return False
        self.moving = False
        note("FAILSAFE/%d" % (self.last_conn or 0), "stopped after %d ms without a frame" % round(waited * 1000.0))
        return False

    # ---- notifications
    def start_notify(self):
        if self.conn is None:
            self.already_connected()
        if self.conn is None:
            self.begin("unknown", "StartNotify")
        if self.notifying:
            return
        self.set_notifying(True)
        self.send("READY %s" % args.name)

    def stop_notify(self):
        self.set_notifying(False)

    def set_notifying(self, on):
        if on == self.notifying:
            return
        self.notifying = on
        if self.conn is not None:
            note("NOTIFY/%d" % self.conn, "on" if on else "off")
        if self.status_timer is not None:
            GLib.source_remove(self.status_timer)
            self.status_timer = None
        if on and args.status_every > 0:
            self.status_timer = GLib.timeout_add(int(args.status_every * 1000), self.status)

    def status(self):
        if self.notifying and self.conn is not None:
            self.send("STATUS battery=7.4V")
        return True

    def send(self, text):
        data = (text + "\n").encode()[:HM10_MAX_WRITE]
        self.tx.notify(data)
        note("TX/%d" % (self.conn or 0), text)

    # ---- registration
    def registered(self, what):
        debug(what, "registered")
        self.done.add(what)
        if len(self.done) == 2 and args.ready:
            props = dbus.Interface(self.bus.get_object(BLUEZ, self.adapter), PROPS)
            with open(args.ready, "w") as f:
                f.write(str(props.Get("org.bluez.Adapter1", "Address")) + "\n")

    def failed(self, what, err):
        debug(what, "FAILED:", err.get_dbus_name(), err.get_dbus_message())
        note("ERROR", "%s failed: %s %s" % (what, err.get_dbus_name(), err.get_dbus_message()))
        mainloop.quit()


def main():
    global args, log, car, mainloop
    ap = argparse.ArgumentParser()
    ap.add_argument("--hci", default="hci1")
    ap.add_argument("--mode", choices=sorted(MODES), default="hm10")
    ap.add_argument("--name", default=None)
    ap.add_argument("--log", required=True)
    ap.add_argument("--ready", default=None)
    ap.add_argument("--status-every", type=float, default=1.0)
    ap.add_argument("--first-connection", type=int, default=1)
    ap.add_argument("--failsafe-ms", type=int, default=300)
    ap.add_argument("--beacon-every", type=float, default=0.5)
    args = ap.parse_args()
    if args.name is None:
        args.name = "HMSoft" if args.mode == "hm10" else "NUSCar"
    log = open(args.log, "a", buffering=1)
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    adapter = "/org/bluez/" + args.hci
    props = dbus.Interface(bus.get_object(BLUEZ, adapter), PROPS)
    props.Set("org.bluez.Adapter1", "Powered", dbus.Boolean(True))
    props.Set("org.bluez.Adapter1", "Alias", dbus.String(args.name))
    address = str(props.Get("org.bluez.Adapter1", "Address"))
    car = Car(bus)
    bus.add_signal_receiver(car.device_changed, signal_name="PropertiesChanged", dbus_interface=PROPS,
                            bus_name=BLUEZ, path_keyword="path")
    bus.add_signal_receiver(car.interfaces_added, signal_name="InterfacesAdded", dbus_interface=OM, bus_name=BLUEZ)
    bus.add_signal_receiver(car.interfaces_removed, signal_name="InterfacesRemoved", dbus_interface=OM, bus_name=BLUEZ)
    car.already_connected()
    mainloop = GLib.MainLoop()
    if args.beacon_every > 0:
        GLib.timeout_add(int(args.beacon_every * 1000), car.beacon)
    GLib.unix_signal_add(GLib.PRIORITY_HIGH, signal.SIGTERM, lambda: (mainloop.quit(), False)[1])
    note("LISTEN", "%s %s %s %s" % (args.hci, address, args.mode, args.name))
    # both registrations call back into this process (GetManagedObjects, GetAll): they must be asynchronous
    dbus.Interface(bus.get_object(BLUEZ, adapter), "org.bluez.GattManager1").RegisterApplication(
        dbus.ObjectPath("/car"), {}, reply_handler=lambda: car.registered("GATT application"),
        error_handler=lambda err: car.failed("RegisterApplication", err))
    dbus.Interface(bus.get_object(BLUEZ, adapter), "org.bluez.LEAdvertisingManager1").RegisterAdvertisement(
        dbus.ObjectPath("/car/adv0"), {}, reply_handler=lambda: car.registered("advertisement"),
        error_handler=lambda err: car.failed("RegisterAdvertisement", err))
    mainloop.run()


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""The car of scenario 13: an HC-05 on hci1 as seen through bluetoothd (dbus-python + GLib, as root).

    bluez_car.py --hci hci1 --name HC-05 --pin 1234 --channel 3 --log FILE --events FILE --ready FILE

bluetoothd manages both controllers of the guest. Through its D-Bus API this script makes hci1 look
like the car's HC-05 module to carbridge on hci0:
  * Adapter1 of --hci: Alias --name (the local name a remote name request reads), Powered, Pairable,
    Discoverable, no timeouts;
  * the DEFAULT Agent1 (bluetoothd sends the car side of a legacy PIN pairing there): answers PIN --pin
    for devices under /org/bluez/<hci> only and rejects everything else, so carbridge must answer the
    phone side itself;
  * a Serial Port profile (UUID 0x1101) server on RFCOMM channel --channel through
    ProfileManager1.RegisterProfile: bluetoothd publishes the SDP record, listens and hands each accepted
    connection over (Profile1.NewConnection).
The log has car.py's format (CLOCK_MONOTONIC seconds, kind/connection, text), so kharness.CarLog reads it:
    LISTEN <hci> <channel> | CONNECT/<n> <device> | RX/<n> <line> | EOF/<n> <how>
--events gets one line per agent request (PIN_REQUEST <device> -> <pin>, REJECT <method> <device>, ...).
The --ready file is written (the adapter address) once everything is registered.
"""
import argparse, os, socket, threading, time

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

SPP_UUID = "00001101-0000-1000-8000-00805f9b34fb"
args = None
log = events = None
lock = threading.Lock()
connections = [0]


def note(kind, text):
    with lock:
        log.write("%.6f %s %s\n" % (time.monotonic(), kind, text))


def event(*words):
    with lock:
        events.write(" ".join(str(w) for w in words) + "\n")


class Rejected(dbus.DBusException):
    _dbus_error_name = "org.bluez.Error.Rejected"


def mine(device):
    return str(device).startswith("/org/bluez/%s/" % args.hci)


class Agent(dbus.service.Object):
    def _check(self, method, device):
        if not mine(device):
            event("REJECT", method, device)
            raise Rejected("not the car's adapter")

    @dbus.service.method("org.bluez.Agent1", in_signature="o", out_signature="s")
    def RequestPinCode(self, device):
        self._check("RequestPinCode", device)
        event("PIN_REQUEST", device, "->", args.pin)
        return args.pin

    @dbus.service.method("org.bluez.Agent1", in_signature="o", out_signature="u")
    def RequestPasskey(self, device):
        self._check("RequestPasskey", device)
        event("PASSKEY_REQUEST", device)
        return dbus.UInt32(int(args.pin))

    @dbus.service.method("org.bluez.Agent1", in_signature="ou", out_signature="")
    def RequestConfirmation(self, device, passkey):
        self._check("RequestConfirmation", device)
        event("CONFIRM_REQUEST", device, passkey)

    @dbus.service.method("org.bluez.Agent1", in_signature="o", out_signature="")
    def RequestAuthorization(self, device):
        self._check("RequestAuthorization", device)

    @dbus.service.method("org.bluez.Agent1", in_signature="os", out_signature="")
    def AuthorizeService(self, device, uuid):
        self._check("AuthorizeService", device)

    @dbus.service.method("org.bluez.Agent1", in_signature="os", out_signature="")
    def DisplayPinCode(self, device, pincode):
        pass

    @dbus.service.method("org.bluez.Agent1", in_signature="ouq", out_signature="")
    def DisplayPasskey(self, device, passkey, entered):
        pass

    @dbus.service.method("org.bluez.Agent1", in_signature="", out_signature="")
    def Cancel(self):
        event("CANCEL")

    @dbus.service.method("org.bluez.Agent1", in_signature="", out_signature="")
    def Release(self):
        pass


def serve(sock, n):
    sock.setblocking(True)   # bluetoothd hands the accepted RFCOMM socket over non-blocking
    buf = b""
    how = "EOF"
    try:
        while True:
            data = sock.recv(1024)
            if not data:
                break
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                note("RX/%d" % n, line.decode(errors="replace").rstrip("\r"))
    except ConnectionResetError:
        how = "ECONNRESET"   # Linux RFCOMM reports the peer's DISC as ECONNRESET
    except OSError as error:
        how = "error %s" % error
    finally:
        sock.close()
        note("EOF/%d" % n, how)


class Profile(dbus.service.Object):
    @dbus.service.method("org.bluez.Profile1", in_signature="oha{sv}", out_signature="")
    def NewConnection(self, device, fd, props):
        sock = socket.socket(fileno=fd.take())
        with lock:
            connections[0] += 1
            n = connections[0]
        note("CONNECT/%d" % n, str(device))
        threading.Thread(target=serve, args=(sock, n), daemon=True).start()

    @dbus.service.method("org.bluez.Profile1", in_signature="o", out_signature="")
    def RequestDisconnection(self, device):
        pass

    @dbus.service.method("org.bluez.Profile1", in_signature="", out_signature="")
    def Release(self):
        pass


def main():
    global args, log, events
    ap = argparse.ArgumentParser()
    for name in ("hci", "name", "pin", "log", "events", "ready"):
        ap.add_argument("--" + name, required=True)
    ap.add_argument("--channel", type=int, default=3)
    args = ap.parse_args()
    log = open(args.log, "a", buffering=1)
    events = open(args.events, "a", buffering=1)
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    path = "/org/bluez/" + args.hci
    props = dbus.Interface(bus.get_object("org.bluez", path), "org.freedesktop.DBus.Properties")
    for key, value in [("Powered", dbus.Boolean(True)), ("Alias", dbus.String(args.name)),
                       ("Pairable", dbus.Boolean(True)), ("PairableTimeout", dbus.UInt32(0)),
                       ("DiscoverableTimeout", dbus.UInt32(0)), ("Discoverable", dbus.Boolean(True))]:
        props.Set("org.bluez.Adapter1", key, value)
    address = str(props.Get("org.bluez.Adapter1", "Address"))
    Agent(bus, "/car/agent")
    manager = dbus.Interface(bus.get_object("org.bluez", "/org/bluez"), "org.bluez.AgentManager1")
    manager.RegisterAgent("/car/agent", "KeyboardDisplay")
    manager.RequestDefaultAgent("/car/agent")
    Profile(bus, "/car/spp")
    profiles = dbus.Interface(bus.get_object("org.bluez", "/org/bluez"), "org.bluez.ProfileManager1")
    profiles.RegisterProfile("/car/spp", SPP_UUID, {
        "Name": dbus.String("%s SPP" % args.name), "Role": dbus.String("server"),
        "Channel": dbus.UInt16(args.channel), "RequireAuthentication": dbus.Boolean(True),
        "RequireAuthorization": dbus.Boolean(False), "AutoConnect": dbus.Boolean(False),
    })
    note("LISTEN", "%s %s %d" % (args.hci, address, args.channel))
    with open(args.ready, "w") as f:
        f.write(address + "\n")
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Scenario pinned_bt_pad: two identical Bluetooth pads, one pinned by its address.

A Bluetooth gamepad reaches evdev through BlueZ's HID plugins, which create the HID device through
/dev/uhid with the bus set to Bluetooth and `uniq` set to the pad's address; the kernel's hid-generic
driver then makes the input device (no ID_PATH: it sits under /sys/devices/virtual/misc/uhid). This
scenario makes two such pads the same way: same name, same vendor:product, different addresses. The
config pins the second one to appear by its address (in upper case; the kernel writes lower case).
carbridge must ignore the first pad, open the second, drive only from it, stop when it goes, and not
fall back to the other pad.

Run by scenarios.py (its __main__ loads scenario_NAME.py for the names it is given).
"""
import os, re, signal, struct, subprocess, time
from evdev import ecodes as e
import kharness as k
from kharness import Car, Carbridge, monotonic

TITLE = "two identical Bluetooth pads (uhid, BUS_BLUETOOTH): the one pinned by address drives, the other never does"
GAP_S = 0.3
HOTPLUG_S = 8.0
PAD_NAME = "Harness BT Pad"
VENDOR, PRODUCT = 0xCAFE, 0x4014    # no special HID driver claims these: hid-generic binds
RED, BLUE = "a4:53:85:00:00:01", "a4:53:85:00:00:02"

UHID_DESTROY, UHID_CREATE2, UHID_INPUT2 = 1, 11, 12
BUS_BLUETOOTH = 5
# A gamepad: 16 buttons (the gamepad application maps button n to BTN_SOUTH + n - 1), X and Y 0..255.
REPORT_DESCRIPTOR = bytes([
    0x05, 0x01, 0x09, 0x05, 0xA1, 0x01,              # Generic Desktop, Game Pad, Collection (Application)
    0x05, 0x09, 0x19, 0x01, 0x29, 0x10,              #   Button 1..16
    0x15, 0x00, 0x25, 0x01, 0x75, 0x01, 0x95, 0x10,  #   0..1, 16 x 1 bit
    0x81, 0x02,                                      #   Input (Data, Var, Abs)
    0x05, 0x01, 0x09, 0x30, 0x09, 0x31,              #   X, Y
    0x15, 0x00, 0x26, 0xFF, 0x00, 0x75, 0x08, 0x95, 0x02,  # 0..255, 2 x 8 bits
    0x81, 0x02,                                      #   Input (Data, Var, Abs)
    0xC0,                                            # End Collection
])


class UhidPad:
    """A Bluetooth HID gamepad made through /dev/uhid, as BlueZ makes one."""

    def __init__(self, uniq, name=PAD_NAME):
        self.uniq = uniq
        self.fd = os.open("/dev/uhid", os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
        self.buttons = 0
        self.x = 128
        self.actions = []
        create = struct.pack("<I128s64s64sHHIIII4096s", UHID_CREATE2, name.encode(), b"00:aa:01:00:00:00",
                             uniq.encode(), len(REPORT_DESCRIPTOR), BUS_BLUETOOTH, VENDOR, PRODUCT, 0x0100, 0,
                             REPORT_DESCRIPTOR)
        os.write(self.fd, create)
        self.node = None

    def wait_node(self, timeout_s=HOTPLUG_S):
        """/dev/input/eventN of the input device whose uniq is ours (hid-generic binds asynchronously)."""
        def find():
            for entry in os.listdir("/sys/class/input"):
                if not entry.startswith("event"):
                    continue
                try:
                    with open("/sys/class/input/%s/device/uniq" % entry) as f:
                        if f.read().strip() == self.uniq and os.path.exists("/dev/input/" + entry):
                            return "/dev/input/" + entry
                except OSError:
                    pass
            return None
        self.node = k.wait_until(find, timeout_s)
        return self.node

    def drain(self):
        """Reads what the kernel queued for us (UHID_START, UHID_OPEN, ...): nothing needs an answer."""
        try:
            while os.read(self.fd, 4380):
                pass
        except BlockingIOError:
            pass

    def _report(self):
        self.drain()
        report = struct.pack("<HBB", self.buttons, self.x, 128)
        os.write(self.fd, struct.pack("<IH4096s", UHID_INPUT2, len(report), report))
        return monotonic()

    @staticmethod
    def _bit(button):
        return 1 << (button - e.BTN_SOUTH)

    def press(self, button, what=""):
        self.buttons |= self._bit(button)
        t = self._report()
        self.buttons &= ~self._bit(button)
        self._report()
        self.actions.append((t, what or e.BTN.get(button, button)))
        return t

    def axis_x(self, value, what=""):
        self.x = value
        t = self._report()
        self.actions.append((t, what or "X=%d" % value))
        return t

    def close(self):
        if self.fd is not None:
            try:
                os.write(self.fd, struct.pack("<I", UHID_DESTROY))
            except OSError:
                pass
            os.close(self.fd)
            self.fd = None


def run(sc):
    for module in ("uhid", "hid-generic"):
        subprocess.run(["modprobe", module], capture_output=True)
    sc.require(os.path.exists("/dev/uhid"), "/dev/uhid exists (modprobe uhid)")
    car = Car(os.path.join(sc.work, "car.log"))
    sc.require(car.addr is not None, "hci1 (the car's controller) has an address")
    sc.require(car.start(), "car RFCOMM server listening on hci1 channel 1")
    sc.cleanups.append(car.stop)

    # The blue pad is there first: `auto` would take it. The config pins the red one, in upper case.
    blue = UhidPad(BLUE)
    sc.cleanups.append(blue.close)
    sc.require(bool(blue.wait_node()), "the blue pad (uniq %s) becomes an input device" % BLUE)
    sc.note("blue pad: %s" % blue.node)
    config = k.base_config(car.addr, gamepad=RED.upper())
    with open(os.path.join(sc.work, "devices.toml"), "w") as f:
        f.write(config)
    devices = subprocess.run([k.CARBRIDGE, "devices", "--config", os.path.join(sc.work, "devices.toml")],
                             capture_output=True, text=True, timeout=60)
    sc.note("carbridge devices:\n" + devices.stdout)
    blocks = re.split(r"\n(?=\S)", devices.stdout)   # one block per device: its line, then indented lines
    blue_block = next((b for b in blocks if blue.node in b.split("\n")[0]), "")
    sc.check("\n    uniq    %s  (Bluetooth address)" % BLUE in blue_block,
             "`carbridge devices` shows the blue pad's address as its uniq (Bluetooth)", devices.stdout[-600:])
    sc.check(blue_block and "picked by" not in blue_block, "`carbridge devices`: no config entry picks the blue pad",
             blue_block)

    cb = Carbridge(sc.work, config)
    since = monotonic()
    cb.start()
    sc.cleanups.append(lambda: cb.stop(signal.SIGTERM, 3))
    k.wait_until(lambda: car.log.connections(since) or not cb.alive(), 45)
    sc.require(bool(car.log.connections(since)), "carbridge connects to the car",
               "exit status %s" % (cb.proc.poll(),))
    first = car.log.wait_frame(lambda f: True, since, 5.0)
    sc.check(first is not None and first.text == "E,0,0,0", "handshake E,0,0,0 first", first.text if first else "nothing")
    time.sleep(1.0)
    sc.check(not cb.has_open(blue.node), "carbridge leaves the blue pad alone (it is not the pinned address)")

    red = UhidPad(RED)
    sc.cleanups.append(red.close)
    t_red = monotonic()
    sc.require(bool(red.wait_node()), "the red pad (uniq %s) becomes an input device" % RED)
    sc.note("red pad: %s" % red.node)
    picked = k.wait_until(lambda: cb.log_lines(r'gamepad: ".*" \(%s\) picked' % re.escape(red.node), t_red - 0.5), HOTPLUG_S)
    sc.require(bool(picked), "carbridge picks the red pad by its address when it appears")
    sc.metric("red_pad_picked_after_create", (picked[0][0] - t_red) * 1000.0, "ms")
    sc.check(not cb.has_open(blue.node), "and still not the blue one")
    time.sleep(0.1)

    t0 = monotonic()
    blue.press(e.BTN_START, "blue: engine"); time.sleep(GAP_S)
    blue.press(e.BTN_TR, "blue: speed+"); time.sleep(GAP_S)
    sc.check(not car.log.frames(t0), "the blue pad's Engine and Speed+ send nothing",
             [f.text for f in car.log.frames(t0)][:5])
    red.press(e.BTN_START, "red: engine on"); time.sleep(GAP_S)
    t = red.press(e.BTN_TR, "red: speed+")
    got = car.log.wait_frame(lambda f: f.motion, t, 2.0)
    sc.check(got is not None and got.text == "M,0,10,1", "the red pad's Speed+ -> M,0,10,1", got.text if got else "nothing")
    time.sleep(GAP_S)
    t = blue.press(e.BTN_TR, "blue: speed+")
    time.sleep(GAP_S)
    sc.check(all(f.s == 10 for f in car.log.frames(t) if f.motion), "the blue pad's Speed+ changes nothing (S stays 10)",
             sorted(set(f.text for f in car.log.frames(t)))[:5])
    t = red.axis_x(255, "red: steer right")
    got = car.log.wait_frame(lambda f: f.text == "R,2,10,1", t, 2.0)
    sc.check(got is not None, "the red pad's stick steers: R,2,10,1")
    time.sleep(GAP_S)

    # The red pad goes away (its Bluetooth link drops): the car stops, and the blue pad does not take over.
    t_gone = monotonic()
    red.close()
    stop = car.log.wait_frame(lambda f: f.motion and f.s == 0, t_gone, 2.0)
    sc.check(stop is not None, "the red pad disconnects -> a stop frame (S=0)",
             [f.text for f in car.log.frames(t_gone)][:5])
    if stop is not None:
        sc.metric("stop_after_red_pad_gone", (stop.t - t_gone) * 1000.0, "ms")
    time.sleep(1.0)
    sc.check(not cb.has_open(blue.node), "carbridge does not fall back to the blue pad")
    t = blue.press(e.BTN_TR, "blue: speed+ after red left")
    time.sleep(GAP_S)
    sc.check(not [f for f in car.log.frames(t) if f.motion and f.s > 0], "the blue pad still cannot drive",
             [f.text for f in car.log.frames(t)][:5])
    sc.check(cb.alive(), "carbridge kept running")
    sc.note("actions: %s" % ["%.3f %s" % a for a in sorted(red.actions + blue.actions)])

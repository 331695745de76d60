#!/usr/bin/python3
"""Real devices on /dev/uhid, so that the kernel's own HID drivers make the evdev nodes carbridge opens.

The report descriptors and the answers to the drivers' requests (calibration, pairing and firmware feature
reports) are PyPI's hid-tools (`hidtools.device.sony_gamepad`), as the kernel's HID selftests use them
(tools/testing/selftests/hid/tests/test_sony.py); run.sh unpacks it into Tests/kernel/build. What this module
adds:

- one thread answering every device's requests (`UHIDDevice.dispatch`) while the scenario writes reports, so
  a driver's synchronous GET_REPORT during probe is answered at once and an answer that raises is logged
  instead of ending the thread (the kernel would then wait 5 s per request and fail the probe);
- every output report a driver sends the device, stamped with CLOCK_MONOTONIC (rumble motors, lights);
- the triggers (the descriptors' Rx/Ry), which hid-tools' gamepads leave at 0;
- answers from the moment the device is created (see `SonyPad.create`);
- the device's evdev nodes by role (pad, motion sensors, touchpad) and its LED and battery directories.
"""
import glob, os, struct, sys, threading, time, traceback

HID_TOOLS = "/mnt/repo/Tests/kernel/build/hid-tools-0.12"
if HID_TOOLS not in sys.path:
    sys.path.insert(0, HID_TOOLS)

from hidtools.uhid import UHIDDevice              # noqa: E402
from hidtools.device import sony_gamepad as sony   # noqa: E402
import kharness as k                                # noqa: E402
from kharness import monotonic                      # noqa: E402
import uhid                                         # noqa: E402  (the raw devices' sysfs lookups, shared)

UHID_DESTROY, UHID_INPUT2 = 1, 12


class Pump:
    """One thread that answers the requests of every uhid device of the process (hid-tools keeps one poll
    set for all of them). It is the only reader of the devices' fds: hid-tools' own `destroy` reads the fd
    too, and two readers of a blocking uhid fd leave one of them blocked for good (and every later device
    unanswered). `lock` is held while it dispatches; a device is made and destroyed under it."""

    _thread = None
    errors = []
    lock = threading.Lock()

    @classmethod
    def ensure(cls):
        if cls._thread is not None:
            return
        def run():
            while True:
                try:
                    with cls.lock:
                        UHIDDevice.dispatch(0.01)
                except Exception:   # an answer that raised: log it, keep answering the others
                    cls.errors.append(traceback.format_exc())
                time.sleep(0.0005)   # let a create or destroy take the lock
        cls._thread = threading.Thread(target=run, name="uhid-pump", daemon=True)
        cls._thread.start()


class RecordsOutputs:
    """Mixin: keeps every output report with its CLOCK_MONOTONIC receive time, and drives the triggers."""

    def _init_recording(self):
        self.outputs = []          # (t, bytes)
        self.outputs_lock = threading.Lock()
        self.triggers = (0, 0)     # L2, R2: 0 released .. 255 full

    def output_report(self, data, size, rtype):
        with self.outputs_lock:
            self.outputs.append((monotonic(), bytes(data[:size])))

    def outputs_since(self, since):
        with self.outputs_lock:
            return [(t, r) for t, r in self.outputs if t >= since]

    def store_axes(self, which, gamepad, data):
        super().store_axes(which, gamepad, data)
        if which == "right_stick":
            gamepad.rx, gamepad.ry = self.triggers


def _mixed(base):
    class Device(RecordsOutputs, base):
        def __init__(self, *args, **kwargs):
            self._init_recording()
            base.__init__(self, *args, **kwargs)
    Device.__name__ = base.__name__
    return Device


DualSenseUSB = _mixed(sony.PS5ControllerUSB)
DualSenseBluetooth = _mixed(sony.PS5ControllerBluetooth)
DualShock4USB = _mixed(sony.PS4ControllerUSB)
DualShock4Bluetooth = _mixed(sony.PS4ControllerBluetooth)

def refusing(model, report_id):
    """`model` that answers the driver's GET_REPORT of feature report `report_id` with EIO, as a device with a
    broken firmware or a flaky radio might: hid-playstation then refuses a DualSense at probe (its pairing
    info, 0x09: "Failed to retrieve DualSense pairing info") and makes no node."""
    class Refusing(model):
        def get_report(self, req, rnum, rtype):
            if rnum == report_id:
                return (5, [])   # EIO
            return super().get_report(req, rnum, rtype)
    Refusing.__name__ = "Refusing" + model.__name__
    return Refusing


# hid-tools numbers the buttons as the report does (PS4Controller/PS5Controller.buttons_map)
SQUARE, CROSS, CIRCLE, TRIANGLE, L1, R1, L2, R2, SHARE, OPTIONS, L3, R3, PS = range(1, 14)


class SonyPad:
    """A DualSense or DualShock 4 on uhid. `model` is one of the classes above; the MAC is its uniq."""

    def __init__(self, model, mac):
        Pump.ensure()
        with Pump.lock:
            self.dev = model()
        self.dev.uniq = mac
        self.mac = mac
        self.actions = []
        self.left = (128, 128)
        self.accel = (0, 8192, 0)   # level, face up: gravity on the sensor's y axis
        self.hid_dir = None
        self.send_lock = threading.Lock()
        self.streaming = False
        self.hangup = None

    def create(self):
        t = monotonic()
        # hid-tools answers requests only once it saw the device's uevent, which it waits for for about 10 ms
        # after UHID_CREATE2: later (a loaded TCG guest) it never answers, and the driver's probe fails after
        # the kernel's 5 s per GET_REPORT. The device is ours from the write on: answer from the start.
        self.dev._ready = True
        self.dev.create_kernel_device()
        self._start_streaming()
        return t

    def _start_streaming(self, rate_hz=100):
        """Sends the pad's current state `rate_hz` times a second, as a real pad streams its reports from the
        moment it connects (a DualSense over Bluetooth at 250 Hz, a DualShock 4 at about 250 Hz): the driver's
        nodes then hold the pad's real state before anyone opens them, and the motion sensors deliver
        samples all the time, as a tilt source must."""
        self.streaming = True
        def stream():
            while self.streaming and not self.dev._is_destroyed:
                try:
                    self._send(None)
                except OSError:
                    return
                time.sleep(1.0 / rate_hz)
        threading.Thread(target=stream, daemon=True).start()

    def _hid_dir(self):
        if self.hid_dir is None:
            self.hid_dir = uhid.hid_dir(self.mac)
        return self.hid_dir

    def nodes(self):
        """{"pad"|"motion"|"touchpad": "/dev/input/eventN"} for the nodes the driver made so far."""
        roles = {}
        for name, node in uhid.event_nodes(self._hid_dir()).items():
            role = "motion" if name.endswith("Motion Sensors") else "touchpad" if name.endswith("Touchpad") else "pad"
            roles[role] = node
        return roles

    def wait_nodes(self, roles=("pad", "motion", "touchpad"), timeout_s=15.0):
        return k.wait_until(lambda: self.nodes() if all(r in self.nodes() for r in roles) else None, timeout_s)

    def watch_removal(self, node):
        """Notes when the kernel hangs `node` up (`uhid.HangupWatch`): `removed_at` is then the moment userspace
        can first learn of the unplug. A DualSense's removal takes the driver through its LEDs, battery and
        three input devices first, which in a TCG guest takes a while after UHID_DESTROY."""
        self.hangup = uhid.HangupWatch(node)

    @property
    def removed_at(self):
        return self.hangup.at if self.hangup else None

    def outputs_since(self, since):
        """[(receive time, report bytes)] of the output reports the driver sent the device since `since`."""
        return self.dev.outputs_since(since)

    def leds(self):
        hid = self._hid_dir()
        return sorted(glob.glob(hid + "/leds/*")) if hid else []

    def battery_dir(self):
        hid = self._hid_dir()
        found = glob.glob(hid + "/power_supply/*") if hid else []
        return found[0] if found else None

    def _send(self, what, buttons=None):
        """One input report with the pad's whole state; `what` (None for the stream's own) is logged."""
        with self.send_lock:
            if self.dev._is_destroyed:
                return monotonic()
            r = self.dev.create_report(left=self.left, buttons=buttons, accel=self.accel)
            t = monotonic()
            self.dev.call_input_event(r)
        if what is not None:
            self.actions.append((t, what))
        return t

    def report(self, what="report"):
        return self._send(what)

    def press(self, button, what=""):
        t = self._send(what or "button %d" % button, buttons={button: True})
        self._send("release", buttons={button: False})
        return t

    def stick(self, x, y=128, what=""):
        self.left = (x, y)
        return self._send(what or "stick %d,%d" % (x, y))

    def trigger(self, r2, what=""):
        self.dev.triggers = (0, r2)
        return self._send(what or "R2=%d" % r2)

    def tilt(self, roll_degrees, what=""):
        """The pad rolled by `roll_degrees` about its long axis (right side down is positive), in g's as the
        calibrated sensor reports them (the driver's resolution: 8192 per g): x = g·sin θ, y = g·cos θ."""
        import math
        g = 8192
        self.accel = (int(g * math.sin(math.radians(roll_degrees))), int(g * math.cos(math.radians(roll_degrees))), 0)
        return self._send(what or "roll %d" % roll_degrees)

    def destroy(self):
        """UHID_DESTROY (an unplug, or the Bluetooth link gone); returns when it was written."""
        self.streaming = False
        with Pump.lock, self.send_lock:
            t = monotonic()
            dev = self.dev
            if not dev._is_destroyed:
                try:
                    os.write(dev._fd, struct.pack("<I", UHID_DESTROY))
                except OSError:
                    pass
                dev._ready = False
                UHIDDevice._devices.remove(dev)
                dev._remove_fd_from_poll(dev._fd)
                os.close(dev._fd)
                dev._is_destroyed = True
            self.destroy_returned_at = monotonic()
        return t

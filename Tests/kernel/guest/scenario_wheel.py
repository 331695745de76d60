#!/usr/bin/python3
"""Scenario wheel: a racing wheel and its pedals drive a TCP car with the shipped config/wheel.toml, and the
wheel centres itself while the engine is on (issue 33, item 4).

0. The G29 on /dev/uhid does not work: hid-logitech's lg_probe (6.1) returns -EINVAL for a HID device that is
   not usbhid's (`hid_is_usb`; it reads the USB interface number and lg4ff the USB device descriptor), and
   hid-generic defers to the matching special driver, so nothing binds it and there is no input node. dmesg:
   `logitech: probe of 0003:046D:C24F.0001 failed with error -22`. Checked once per run.

A. A Logitech G29 as a real USB device through the kernel's own driver: a configfs USB gadget (usb_gadget.py:
   libcomposite, usb_f_hid) on dummy_hcd, 046d:c24f, bcdDevice 0x8900, strings "Logitech" / "G29 Driving Force
   Racing Wheel", the G29's HID report descriptor (G29_REPORT_DESCRIPTOR), bound to dummy_udc.0. The guest's
   usbcore + usbhid + hid-logitech (hid-lg4ff) enumerate it; the test writes the wheel's 12-byte input reports
   to /dev/hidg0 and reads there every output report hid-lg4ff sends the wheel (CLOCK_MONOTONIC stamped).
   bcdDevice: lg4ff_init reads the USB device descriptor's bcdDevice; lg4ff_identify_multimode_wheel matches
   (bcdDevice & 0xff00) == 0x8900 (or & 0xfff8 == 0x1350) to a G29, whose reported id c24f is already its own
   (native) mode, so lg4ff sends no mode switch and the device does not re-enumerate; `real_id` reads
   "G29: G29 Racing Wheel" and `alternate_modes` marks native. (0xc294 with that bcdDevice would be switched.)
   The descriptor: no public dump of the c24f descriptor's bytes was found (searched: kernel sources and
   mailing list, SDL, new-lg4ff, oversteer, GIMX/TitanTwo dumps, which have the PS4-mode c260 one). It is built
   from what is documented: the G29's 12-byte report (bytes 0-3 hat + buttons, 4-5 the wheel little-endian,
   6 gas, 7 brake, 8 clutch, 9-11 the shifter; lg4ff_raw_event's pedal offset 6 for the G29 agrees), the real
   G25/G27/DFGT descriptors' shape (a 4-bit null-state hat, one bit per button, 8-bit pedals Z/Rz/Y, a
   7-byte vendor output report without a report id, which lg4ff_init requires: hid_validate_values(output,
   id 0, field 0, 7 values)) and an evtest of a real G29 (the axes and 25 buttons below). Its vendor bytes are
   constant padding here: mapped as data they would give ABS_MISC/BTN_MISC codes a real G29 does not show.

   What hid-logitech made of it (describe_node, every run): /dev/input/eventN "Logitech G29 Driving Force Racing
   Wheel", bus USB 046d:c24f, version 0x0101, phys usb-dummy_hcd.0-1/input0, driver "logitech"; ABS_X 0..65535,
   ABS_Y (clutch) / ABS_Z (gas) / ABS_RZ (brake) 0..255, all four fuzz 0 flat 0 (lg_input_mapped makes them
   MULTIAXIS, so hid-input gives them no joystick flat), ABS_HAT0X/HAT0Y -1..1; 25 keys BTN_TRIGGER..BTN_DEAD
   (with the unnamed codes 300-302) and BTN_TRIGGER_HAPPY1..9; FF_CONSTANT, FF_GAIN (memless), FF_AUTOCENTER;
   sysfs range 900, combine_pedals 0. Against what the uinput wheel assumed: the same axes, ranges, buttons and
   FF bits. Differences: (1) version 0x0101, not 0x111: usbhid takes the version from the HID descriptor's
   bcdHID, which f_hid fixes at 1.01 (a real G29 says 1.11); carbridge matches wheels by vendor:product, so
   nothing depends on it. (2) Until the wheel's first input report the kernel's state of every axis is 0: the
   wheel hard left and every pedal floored (the uinput wheel started centred at 255). The host polls the wheel
   only while its node is open, and usbhid drops every report that arrives in the 50 ms after the first open
   (usbhid_open), so a report the wheel had ready at the plug is lost: carbridge opens a node whose state says
   "floored" until the wheel reports again. carbridge takes that state as known values, not as input (no frame,
   no brake), and after an unplug its rest rule then rightly holds back a gas press that is the wheel's first
   report (the pedal was never seen at rest): the test sends the wheel's at-rest report once carbridge has the
   node (UsbG29.report_state), as a wheel that reports its state would. (3) Force feedback on the wire: hid-lg4ff
   itself sends centring off (f5 00 00 00 00 00 00), range 900 (f8 81 84 03 00 00 00) and LEDs off (f8 12 00
   ...) at every plug; FF_AUTOCENTER 32767 (centring 0.5 of 0xffff) becomes fe 0d 04 04 5f 00 00 then 14 00
   00 00 00 00 00 (lg4ff_set_autocenter_default, non-MOMO: (0x0c*m)>>1 / 0xaaaa and 0x80*m / 0xaaaa), and
   FF_AUTOCENTER 0 becomes f5 00 00 00 00 00 00.

   Checks: `[devices] gamepad = "auto"` takes the USB wheel; lg4ff's init reaches the wheel; once carbridge has
   it, centring off on the wire; Options (BTN_BASE4) -> the autocentre command on the wire (the first engine on
   of the run only reported; the later ones within PLAY_BOUND_MS); gas ABS_Z 200 -> M,0,50,1; the wheel at 30
   degrees (raw 34952) -> R,1,50,1; the brake ABS_RZ 100 -> the stop frame R,1,0,1 (once); Options -> E,0,0,0
   and centring off on the wire within PLAY_BOUND_MS; on again; no range command but lg4ff's own 900
   (carbridge sets none) and the `range` file still 900; unplugged while moving (the UDC unbound) -> the stop
   frame within USB_UNPLUG_BOUND_S (100 ms), nothing moving after it, the node and HID device gone, carbridge
   running. Measured (METRIC stop_after_usb_unplug): 66 ms on an otherwise idle host; 126 to 1449 ms while
   other TCG guests shared its 2 cores (load average 5 to 9), when part B's uinput unplug took 95 to 471 ms
   too: the time goes to the unbind itself (usb_unbind_write, 20-70 ms), the host side's disconnect through
   hub_wq, usbhid and evdev up to carbridge's "lost" (usb_unplug_to_carbridge_lost, 94-306 ms) and
   carbridge's own stop (40-150 ms), all of them starved. Fault 1, re-enumeration (the wheel back 0.3 s later, as after a USB reset): lg4ff initialises
   it again, carbridge takes the new node and, the engine being on, sends the autocentre command again; after
   the wheel's at-rest report the first press of the gas drives (the rest rule is met); after a lift it drives. Fault 2: a hat value of 15 (outside 0..7) changes
   nothing; a 6-byte report (half the report) is dropped by hid-core (dmesg: "Event data for report 0
   was too short (12 vs 6)"; Debian's 6.1.192 returns -EINVAL where older kernels padded it with zeros, which
   would have read as both pedals floored): nothing changes, the car keeps going; a full report and the gas
   drive again. SIGTERM with the engine on
   -> centring off on the wire before the exit, E,0,0,0 last, exit 0; only centring commands ever reach the
   wheel (no constant force); the gadget is removed cleanly.

B. A uinput wheel with FF_SPRING (as new-lg4ff or hid-logitech-hidpp give a G29/G920/G923; the Debian 6.1 kernel
   has neither a spring in hid-lg4ff nor new-lg4ff, so this one stays uinput: its test side plays the driver,
   reading the EV_UINPUT requests from its uinput fd, answering each upload and erase, recording each effect
   and each EV_FF write; it never opens its own event node, scenario rumble's QuietUInput): FF_CONSTANT,
   FF_SPRING, FF_DAMPER, FF_GAIN, FF_AUTOCENTER; carbridge prefers the spring: one upload, FF_SPRING, both
   sides' saturation 0.5 of 0xffff and coefficients 0.5 of 0x7fff, centre 0, endless (length 0); a stop of it
   (value 0) once it has the wheel; Options -> a play of that effect (value 1, only reported); Options -> its
   stop (value 0, within PLAY_BOUND_MS); no FF_AUTOCENTER write; the gas drives; unplugging the wheel while
   moving stops the car within UNPLUG_BOUND_S; carbridge keeps running and exits 0 on SIGTERM.

Before issue 33's item 4 carbridge had no wheel mapping: the config's `source = "wheel"` was an error, so
carbridge did not start (A and B fail at their first check), and nothing ever wrote FF_AUTOCENTER or
uploaded a spring.

Run by scenarios.py (its __main__ loads scenario_NAME.py for the names it is given).
"""
import ctypes, glob, os, select, signal, struct, subprocess, threading, time
import evdev
from evdev import AbsInfo, ff, ecodes as e
import kharness as k
from kharness import Carbridge, monotonic
from scenarios import wait_pad_ready, HOTPLUG_S
from scenario_rumble import QuietUInput, EVENT, EV_UINPUT, UI_FF_UPLOAD, UI_FF_ERASE
from usb_gadget import UsbHidGadget, hex_bytes

TITLE = "racing wheel (a USB G29 on dummy_hcd through hid-logitech/hid-lg4ff, then a uinput wheel with FF_SPRING): wheel, gas, brake, engine; centring while the engine is on"
PORT = 47030
GAP_S = 0.35
# As scenario rumble's: one write on the loop, against a debug build in a TCG guest on a shared host.
PLAY_BOUND_MS = 500.0
UNPLUG_BOUND_S = 0.25
CENTRING = 0.5               # config/wheel.toml's [feedback] centring
AUTOCENTER_ON = int(CENTRING * 65535)
OPTIONS = e.BTN_BASE4        # 297: the G29's Options button, button 10 of its HID report
WHEEL_30_DEG = 34952         # 32767.5 + 30/450 of the half range: 30 degrees of a 900-degree wheel
WHEEL_NAME = "Logitech G29 Driving Force Racing Wheel"

SPRING_EFFECTS = [e.FF_CONSTANT, e.FF_SPRING, e.FF_DAMPER, e.FF_GAIN, e.FF_AUTOCENTER]


class Wheel(k.Pad):
    """A G29-like uinput wheel with the force-feedback bits `effects`. A thread answers the kernel's upload
    and erase requests at once and records the effects and every EV_FF write."""

    BUTTONS = list(range(e.BTN_TRIGGER, e.BTN_DEAD + 1)) + list(range(e.BTN_TRIGGER_HAPPY1, e.BTN_TRIGGER_HAPPY9 + 1))

    def __init__(self, effects, name=WHEEL_NAME, product=0xC24F):
        wheel = AbsInfo(value=32768, min=0, max=65535, fuzz=0, flat=0, resolution=0)
        pedal = AbsInfo(value=255, min=0, max=255, fuzz=0, flat=0, resolution=0)
        hat = AbsInfo(value=0, min=-1, max=1, fuzz=0, flat=0, resolution=0)
        caps = {
            e.EV_KEY: self.BUTTONS,
            e.EV_ABS: [(e.ABS_X, wheel), (e.ABS_Y, pedal), (e.ABS_Z, pedal), (e.ABS_RZ, pedal),
                       (e.ABS_HAT0X, hat), (e.ABS_HAT0Y, hat)],
            e.EV_MSC: [e.MSC_SCAN],
            e.EV_FF: effects,
        }
        self.ui = QuietUInput(caps, name=name, vendor=0x046D, product=product, version=0x111, bustype=e.BUS_USB)
        self.node = self.ui.node()
        self.actions = []
        self.lock = threading.Lock()
        self.requests = []    # (arrival time, "upload"/"erase", request id)
        self.effects = {}     # effect id -> dict(type, length, right/left saturation and coefficient, centre)
        self.erased = []      # (time, effect id)
        self.plays = []       # (kernel time, effect id, value)
        self.autocenter = []  # (kernel time, value)
        self.errors = []
        self.serving = True
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        fd = self.ui.fd
        while self.serving:
            try:
                ready, _, _ = select.select([fd], [], [], 0.1)
            except (OSError, ValueError):
                return
            if not ready:
                continue
            try:
                data = os.read(fd, EVENT.size * 64)
            except BlockingIOError:
                continue
            except OSError:
                return
            for offset in range(0, len(data) - EVENT.size + 1, EVENT.size):
                sec, usec, etype, code, value = EVENT.unpack_from(data, offset)
                stamp = sec + usec / 1e6
                if etype == EV_UINPUT and code in (UI_FF_UPLOAD, UI_FF_ERASE):
                    kind = "upload" if code == UI_FF_UPLOAD else "erase"
                    with self.lock:
                        self.requests.append((monotonic(), kind, value))
                    try:
                        self._answer(kind, value)
                    except Exception as error:   # recorded, checked by the scenario
                        with self.lock:
                            self.errors.append("%s %d: %r" % (kind, value, error))
                elif etype == e.EV_FF:
                    with self.lock:
                        if code == e.FF_AUTOCENTER:
                            self.autocenter.append((stamp, value))
                        elif code < e.FF_GAIN:
                            self.plays.append((stamp, code, value))

    def _answer(self, kind, request_id):
        # python3-evdev 1.6's begin_upload/begin_erase set the wrong field for the request id: fill it here.
        if kind == "upload":
            upload = ff.UInputUpload()
            upload.request_id = request_id
            if self.ui.dll._uinput_begin_upload(self.ui.fd, ctypes.byref(upload)):
                raise OSError("UI_BEGIN_FF_UPLOAD failed")
            effect = upload.effect
            condition = effect.u.ff_condition_effect[0]
            with self.lock:
                self.effects[effect.id] = dict(
                    type=effect.type, length=effect.ff_replay.length,
                    right_saturation=condition.right_saturation, left_saturation=condition.left_saturation,
                    right_coeff=condition.right_coeff, left_coeff=condition.left_coeff, center=condition.center)
            upload.retval = 0
            if self.ui.dll._uinput_end_upload(self.ui.fd, ctypes.byref(upload)):
                raise OSError("UI_END_FF_UPLOAD failed")
        else:
            erase = ff.UInputErase()
            erase.request_id = request_id
            if self.ui.dll._uinput_begin_erase(self.ui.fd, ctypes.byref(erase)):
                raise OSError("UI_BEGIN_FF_ERASE failed")
            with self.lock:
                self.erased.append((monotonic(), erase.effect_id))
            erase.retval = 0
            if self.ui.dll._uinput_end_erase(self.ui.fd, ctypes.byref(erase)):
                raise OSError("UI_END_FF_ERASE failed")

    def snapshot(self):
        with self.lock:
            return (list(self.requests), dict(self.effects), list(self.plays), list(self.autocenter),
                    list(self.erased), list(self.errors))

    def close(self):
        """Unplugs the wheel (UI_DEV_DESTROY); returns its time."""
        self.serving = False
        if self.thread.is_alive():
            self.thread.join(2)
        t = monotonic()
        super().close()
        return t


def shipped_config(port):
    """config/wheel.toml as the repository ships it, driving the TCP car on `port`."""
    path = os.path.join(k.REPO, "config", "wheel.toml")
    with open(path) as f:
        text = f.read()
    assert 'url = "sim"' in text, "config/wheel.toml sets url = \"sim\""
    return text.replace('url = "sim"', 'url = "tcp://127.0.0.1:%d"' % port)


def start_run(sc, label, port):
    work = os.path.join(sc.work, label)
    os.makedirs(work, exist_ok=True)
    os.chmod(work, 0o777)
    car = k.TcpCar(os.path.join(work, "car.log"), port)
    sc.require(car.start(), "%s: the TCP car (Tests/kernel/build/tcpcar) listens on 127.0.0.1:%d" % (label, port))
    sc.cleanups.append(car.stop)
    cb = Carbridge(work, shipped_config(port))
    cb.start()
    sc.cleanups.append(lambda: cb.stop(signal.SIGTERM, 5))
    k.wait_until(lambda: car.connected() or not cb.alive(), 45)
    sc.require(car.connected(), "%s: carbridge starts with config/wheel.toml and connects to the TCP car" % label,
               "exit status %s" % (cb.proc.poll(),))
    first = car.wait_frame(lambda f: True, 0, 5.0)
    sc.check(first is not None and first.text == "E,0,0,0", "%s: handshake E,0,0,0 first" % label, first.text if first else "nothing")
    return car, cb


def plug(sc, cb, wheel, label):
    sc.cleanups.append(wheel.close)
    sc.cleanups.append(lambda: sc.note("%s wheel actions: %s" % (label, ["%.3f %s" % a for a in wheel.actions])))
    t = monotonic()
    sc.require(k.wait_until(lambda: cb.has_open(wheel.node), HOTPLUG_S),
               "%s: [devices] gamepad = \"auto\" takes the wheel %s" % (label, wheel.node))
    wait_pad_ready(sc, cb, wheel, t)
    return t


def check_timed(sc, found, cause_t, what, metric, timed=True):
    """`found` (time, …) came after `cause_t`: within PLAY_BOUND_MS when `timed` (the first engine on of a
    run runs code paths for the first time, the debug build under TCG: only reported)."""
    sc.check(found is not None, what, "nothing")
    if found is None:
        return
    after = (found[0] - cause_t) * 1000.0
    sc.metric(metric, after, "ms")
    if timed:
        sc.check(-1.0 <= after <= PLAY_BOUND_MS, "%s within %.0f ms" % (what, PLAY_BOUND_MS), "%.1f ms" % after)


def frame_after(car, text, since):
    """The first frame `text` the car received after `since`. tcpcar writes its lines 200 ms after its input
    stops (and at exit), so this is asked once the car is stopped, not while a stream runs."""
    return next((f for f in car.frames() if f.t >= since and f.text == text), None)


def check_frame(sc, car, text, since, what, metric=None):
    frame = frame_after(car, text, since)
    sc.check(frame is not None, what, k.dedup([f for f in car.frames() if f.t >= since]))
    if frame is not None and metric:
        sc.metric(metric, (frame.t - since) * 1000.0, "ms")


# ---------------------------------------------------------------- A: a real USB G29 through hid-logitech / hid-lg4ff

# The G29's HID report descriptor (native mode, 046d:c24f): a 12-byte input report without a report ID (hat in
# bits 0-3, 25 buttons in bits 4-28, 3 padding bits, the wheel 16 bits little-endian, then gas, brake, clutch
# and three shifter bytes) and a 7-byte output report (lg4ff's commands). See the module docstring for where
# it comes from.
G29_REPORT_DESCRIPTOR = bytes([
    0x05, 0x01,                    # Usage Page (Generic Desktop)
    0x09, 0x04,                    # Usage (Joystick)
    0xA1, 0x01,                    # Collection (Application)
    0x15, 0x00,                    #   Logical Minimum (0)
    0x25, 0x07,                    #   Logical Maximum (7)
    0x35, 0x00,                    #   Physical Minimum (0)
    0x46, 0x3B, 0x01,              #   Physical Maximum (315)
    0x65, 0x14,                    #   Unit (Degrees)
    0x09, 0x39,                    #   Usage (Hat Switch)
    0x75, 0x04,                    #   Report Size (4)
    0x95, 0x01,                    #   Report Count (1)
    0x81, 0x42,                    #   Input (Data,Var,Abs,Null State)
    0x65, 0x00,                    #   Unit (None)
    0x25, 0x01,                    #   Logical Maximum (1)
    0x45, 0x01,                    #   Physical Maximum (1)
    0x05, 0x09,                    #   Usage Page (Button)
    0x19, 0x01,                    #   Usage Minimum (1)
    0x29, 0x19,                    #   Usage Maximum (25)
    0x75, 0x01,                    #   Report Size (1)
    0x95, 0x19,                    #   Report Count (25)
    0x81, 0x02,                    #   Input (Data,Var,Abs)
    0x95, 0x03,                    #   Report Count (3)
    0x81, 0x01,                    #   Input (Const): padding to 32 bits
    0x05, 0x01,                    #   Usage Page (Generic Desktop)
    0x27, 0xFF, 0xFF, 0x00, 0x00,  #   Logical Maximum (65535)
    0x47, 0xFF, 0xFF, 0x00, 0x00,  #   Physical Maximum (65535)
    0x75, 0x10,                    #   Report Size (16)
    0x95, 0x01,                    #   Report Count (1)
    0x09, 0x30,                    #   Usage (X): the wheel
    0x81, 0x02,                    #   Input (Data,Var,Abs)
    0x26, 0xFF, 0x00,              #   Logical Maximum (255)
    0x46, 0xFF, 0x00,              #   Physical Maximum (255)
    0x75, 0x08,                    #   Report Size (8)
    0x95, 0x03,                    #   Report Count (3)
    0x09, 0x32,                    #   Usage (Z): gas
    0x09, 0x35,                    #   Usage (Rz): brake
    0x09, 0x31,                    #   Usage (Y): clutch
    0x81, 0x02,                    #   Input (Data,Var,Abs)
    0x95, 0x03,                    #   Report Count (3)
    0x81, 0x01,                    #   Input (Const): the shifter's bytes, not mapped
    0x06, 0x00, 0xFF,              #   Usage Page (Vendor 0xFF00)
    0x09, 0x02,                    #   Usage (0x02)
    0x95, 0x07,                    #   Report Count (7)
    0x91, 0x02,                    #   Output (Data,Var,Abs): lg4ff's 7-byte commands
    0xC0,                          # End Collection
])
G29_BCD_DEVICE = 0x8900          # lg4ff_g29_ident_info2: (bcdDevice & 0xff00) == 0x8900 -> a G29 in native mode
G29_INPUT_LENGTH = 12
USB_UNPLUG_BOUND_S = 0.10        # as scenario 2's pad unplug (the uinput wheel of part B keeps UNPLUG_BOUND_S, 250 ms)
G29_BUTTONS = list(range(e.BTN_TRIGGER, e.BTN_DEAD + 1)) + list(range(e.BTN_TRIGGER_HAPPY1, e.BTN_TRIGGER_HAPPY9 + 1))


def lg4ff_autocenter(magnitude):
    """What hid-lg4ff (6.1, lg4ff_set_autocenter_default, a non-MOMO wheel) sends for FF_AUTOCENTER `magnitude`:
    the output reports, in order."""
    if magnitude == 0:
        return [bytes([0xF5, 0, 0, 0, 0, 0, 0])]
    if magnitude <= 0xAAAA:
        expand_a, expand_b = 0x0C * magnitude, 0x80 * magnitude
    else:
        expand_a = 0x0C * 0xAAAA + 0x06 * (magnitude - 0xAAAA)
        expand_b = 0x80 * 0xAAAA + 0xFF * (magnitude - 0xAAAA)
    expand_a >>= 1
    return [bytes([0xFE, 0x0D, expand_a // 0xAAAA, expand_a // 0xAAAA, expand_b // 0xAAAA, 0, 0]),
            bytes([0x14, 0, 0, 0, 0, 0, 0])]


CENTRING_OFF = lg4ff_autocenter(0)                  # f5 00 00 00 00 00 00
CENTRING_ON = lg4ff_autocenter(AUTOCENTER_ON)       # fe 0d 04 04 5f 00 00, 14 00 00 00 00 00 00
RANGE_900 = bytes([0xF8, 0x81, 0x84, 0x03, 0, 0, 0])   # lg4ff_set_range_g25(900), sent by lg4ff_init
LEDS_OFF = bytes([0xF8, 0x12, 0, 0, 0, 0, 0])          # lg4ff_set_leds(0), sent by lg4ff_init (G27/G29)
DRIVER_INIT = CENTRING_OFF + [RANGE_900, LEDS_OFF]


def hexs(reports):
    return [hex_bytes(d) for d in reports]


class UsbG29:
    """A Logitech G29 as a real USB device (usb_gadget.UsbHidGadget on dummy_hcd): the test writes its 12-byte
    input reports and records the output reports hid-lg4ff sends it. press/axis mirror k.Pad's."""

    def __init__(self, name="g29"):
        self.gadget = UsbHidGadget(name, 0x046D, 0xC24F, G29_BCD_DEVICE, G29_REPORT_DESCRIPTOR, report_length=16,
                                   manufacturer="Logitech", product_name="G29 Driving Force Racing Wheel")
        self.actions = []
        self.node = None
        self.reset_state()

    def reset_state(self):
        self.hat, self.buttons = 8, 0      # hat 8 = centred (the null state)
        self.x, self.gas, self.brake, self.clutch = 32768, 255, 255, 255

    def report(self):
        word = (self.hat & 0xF) | (self.buttons << 4)
        return (word.to_bytes(4, "little") + self.x.to_bytes(2, "little")
                + bytes([self.gas, self.brake, self.clutch, 0, 0, 0]))

    def send(self, what, data=None):
        t = self.gadget.write_report(self.report() if data is None else data)
        self.actions.append((t, what))
        return t

    def plug(self):
        """Plugs the wheel in with everything at rest; returns the time of the plug and the input node."""
        self.reset_state()
        t = self.gadget.plug()
        self.node = self.gadget.wait_input_node(10)
        # queued until the host polls the interrupt IN endpoint (usbhid does once the node is open)
        self.send("at rest")
        return t

    def report_state(self, what="state: at rest", timeout_s=3.0):
        """The wheel's first report once the host listens: usbhid drops every report that arrives in the 50 ms
        after the node's first open (usbhid_open: HID_RESUME_RUNNING, msleep(50)), so the one queued at the plug
        is lost and the kernel's state stays 0 (hard left, pedals floored) until the wheel reports again. Sends
        the state until the kernel has it (read through the node; carbridge holds it open, so this open starts
        no new window); True when it did."""
        want = {e.ABS_X: self.x, e.ABS_Z: self.gas, e.ABS_RZ: self.brake, e.ABS_Y: self.clutch}

        def arrived():
            self.send(what)
            dev = evdev.InputDevice(self.node)
            try:
                return all(dev.absinfo(code).value == value for code, value in want.items())
            finally:
                dev.close()
        return bool(k.wait_until(arrived, timeout_s, 0.02))

    def press(self, code, what=""):
        bit = 1 << G29_BUTTONS.index(code)
        self.buttons |= bit
        t = self.send(what or e.BTN.get(code, code))
        self.buttons &= ~bit
        self.send("released")
        return t

    def axis(self, code, value, what=""):
        field = {e.ABS_X: "x", e.ABS_Z: "gas", e.ABS_RZ: "brake", e.ABS_Y: "clutch"}[code]
        setattr(self, field, value)
        return self.send(what or "%s=%d" % (e.ABS[code], value))

    def unplug(self):
        t = self.gadget.unplug()
        self.actions.append((t, "unplugged (UDC unbound)"))
        return t

    def outputs(self, since=0.0):
        return self.gadget.outputs(since)

    def wait_outputs(self, want, since, timeout_s):
        """Waits until the output reports after `since` contain `want` in a row; returns the first one's time."""
        want = list(want)

        def find():
            got = self.outputs(since)
            data = [d for _, d in got]
            for i in range(len(data) - len(want) + 1):
                if data[i:i + len(want)] == want:
                    return (got[i][0],)
            return None
        return k.wait_until(find, timeout_s)


def dmesg():
    return subprocess.run(["dmesg"], capture_output=True, text=True).stdout


def phase_uhid(sc):
    """The same G29 on /dev/uhid: hid-logitech's lg_probe refuses a device that is not usbhid's (hid_is_usb)."""
    subprocess.run(["modprobe", "uhid"], capture_output=True)
    before = len(dmesg().splitlines())
    fd = os.open("/dev/uhid", os.O_RDWR)
    try:
        name = b"Logitech G29 Driving Force Racing Wheel"
        create = struct.pack("<I128s64s64sHHIIII4096s", 11, name, b"uhid-test", b"", len(G29_REPORT_DESCRIPTOR),
                             e.BUS_USB, 0x046D, 0xC24F, 0x111, 0, G29_REPORT_DESCRIPTOR)   # UHID_CREATE2
        os.write(fd, create)
        hid = k.wait_until(lambda: [d for d in glob.glob("/sys/bus/hid/devices/0003:046D:C24F.*")
                                    if "uhid" in os.path.realpath(d)], 5)
        sc.check(bool(hid), "uhid: the G29 on /dev/uhid is a HID device", hid)
        line = k.wait_until(lambda: next((l for l in dmesg().splitlines()[before:]
                                          if "logitech" in l and "C24F" in l and "probe" in l), None), 5)
        sc.check(line is not None and "-22" in line,
                 "uhid: hid-logitech refuses it (lg_probe: !hid_is_usb -> -EINVAL)", line)
        if line:
            sc.note("uhid dmesg: %s" % line.strip())
        if hid:
            sc.check(not os.path.exists(hid[0] + "/driver"), "uhid: no driver binds it (hid-generic defers to hid-logitech)",
                     os.path.realpath(hid[0] + "/driver") if os.path.exists(hid[0] + "/driver") else "")
            sc.check(not glob.glob(hid[0] + "/input/input*"), "uhid: no input node")
    finally:
        os.write(fd, struct.pack("<I", 1) + bytes(4372))   # UHID_DESTROY
        os.close(fd)


def describe_node(sc, wheel):
    """What hid-logitech made of the USB G29: one line per property in the detail log; returns the facts."""
    dev = evdev.InputDevice(wheel.node)
    try:
        caps = dev.capabilities(absinfo=True)
        facts = dict(name=dev.name, bustype=dev.info.bustype, vendor=dev.info.vendor, product=dev.info.product,
                     version=dev.info.version, phys=dev.phys,
                     abs={code: (info.min, info.max, info.fuzz, info.flat) for code, info in caps.get(e.EV_ABS, [])},
                     keys=sorted(caps.get(e.EV_KEY, [])), ff=sorted(caps.get(e.EV_FF, [])),
                     events=sorted(caps.keys()))
    finally:
        dev.close()
    hid = wheel.gadget.hid_devices()
    facts["hid"] = [os.path.basename(d) for d in hid]
    facts["driver"] = [os.path.basename(os.path.realpath(d + "/driver")) for d in hid if os.path.exists(d + "/driver")]
    facts["sysfs"] = {}
    for d in hid[:1]:
        for attr in ("range", "combine_pedals", "real_id", "alternate_modes"):
            try:
                facts["sysfs"][attr] = open(os.path.join(d, attr)).read().strip()
            except OSError:
                facts["sysfs"][attr] = None
    sc.note("node %s: %r" % (wheel.node, {k_: v for k_, v in facts.items() if k_ not in ("abs", "keys")}))
    sc.note("abs (min, max, fuzz, flat): %s" % {e.ABS.get(c, c): v for c, v in facts["abs"].items()})
    sc.note("keys (%d): %s" % (len(facts["keys"]), [e.BTN.get(c, e.KEY.get(c, c)) for c in facts["keys"]]))
    sc.note("ff: %s" % [e.FF.get(c, c) for c in facts["ff"]])
    return facts


def check_node(sc, facts):
    sc.check(facts["driver"] == ["logitech"], "A: hid-logitech binds the USB G29", facts["driver"])
    sc.check(facts["name"] == WHEEL_NAME, "A: the kernel names it %r" % WHEEL_NAME, facts["name"])
    sc.check((facts["bustype"], facts["vendor"], facts["product"]) == (e.BUS_USB, 0x046D, 0xC24F),
             "A: bus USB, 046d:c24f", (facts["bustype"], facts["vendor"], facts["product"]))
    sc.check(facts["abs"].get(e.ABS_X) == (0, 65535, 0, 0), "A: ABS_X 0..65535, no fuzz, no flat", facts["abs"].get(e.ABS_X))
    for code in (e.ABS_Y, e.ABS_Z, e.ABS_RZ):
        sc.check(facts["abs"].get(code) == (0, 255, 0, 0), "A: %s 0..255, no fuzz, no flat" % e.ABS[code],
                 facts["abs"].get(code))
    for code in (e.ABS_HAT0X, e.ABS_HAT0Y):
        sc.check(facts["abs"].get(code) == (-1, 1, 0, 0), "A: %s -1..1" % e.ABS[code], facts["abs"].get(code))
    sc.check(sorted(facts["abs"]) == sorted([e.ABS_X, e.ABS_Y, e.ABS_Z, e.ABS_RZ, e.ABS_HAT0X, e.ABS_HAT0Y]),
             "A: no other axis", [e.ABS.get(c, c) for c in facts["abs"]])
    sc.check(facts["keys"] == G29_BUTTONS, "A: 25 buttons BTN_TRIGGER..BTN_DEAD, BTN_TRIGGER_HAPPY1..9",
             [e.BTN.get(c, c) for c in facts["keys"]])
    sc.check(facts["ff"] == sorted([e.FF_CONSTANT, e.FF_GAIN, e.FF_AUTOCENTER]),
             "A: force feedback FF_CONSTANT, FF_GAIN, FF_AUTOCENTER (hid-lg4ff, memless)", [e.FF.get(c, c) for c in facts["ff"]])
    sc.check(facts["sysfs"].get("range") == "900", "A: lg4ff's range is 900", facts["sysfs"].get("range"))
    sc.check(facts["sysfs"].get("real_id") is not None,
             "A: lg4ff identified a multimode G29 in native mode (bcdDevice 0x%04x: real_id exists)" % G29_BCD_DEVICE,
             facts["sysfs"])


def phase_autocenter(sc):
    label = "A"
    car, cb = start_run(sc, label, PORT)
    wheel = UsbG29()
    try:
        wheel.gadget.create()
    except (OSError, subprocess.CalledProcessError, RuntimeError) as error:
        sc.require(False, "A: a USB gadget on dummy_hcd (libcomposite, usb_f_hid, configfs)", repr(error))
    sc.cleanups.append(wheel.gadget.remove)
    sc.cleanups.append(lambda: sc.note("A: output reports the wheel received: %s"
                                       % ["%.3f %s" % (t, hex_bytes(d)) for t, d in wheel.outputs()]))
    sc.cleanups.append(lambda: sc.note("A: wheel actions: %s" % ["%.3f %s" % a for a in wheel.actions]))
    t_plug = wheel.plug()
    sc.require(wheel.node is not None, "A: the USB G29 gets an input node (usbhid + hid-logitech)",
               wheel.gadget.hid_devices())
    sc.note("A: plugged at %.3f: %s" % (t_plug, wheel.node))
    init = wheel.wait_outputs(DRIVER_INIT, t_plug, 5.0)
    sc.check(init is not None, "A: hid-lg4ff's init reaches the wheel: centring off, range 900, LEDs off",
             hexs(d for _, d in wheel.outputs()))
    sc.check(any("Force feedback support for Logitech Gaming Wheels" in l for l in dmesg().splitlines()),
             "A: dmesg: hid-lg4ff's force feedback is set up")
    sc.require(k.wait_until(lambda: cb.has_open(wheel.node), HOTPLUG_S),
               "A: [devices] gamepad = \"auto\" takes the USB wheel %s" % wheel.node)
    wait_pad_ready(sc, cb, wheel, t_plug)
    t_taken = monotonic()
    sc.check(wheel.report_state(), "A: the wheel's first report after carbridge opened it reaches the kernel's state")
    # once carbridge has the wheel: FF_AUTOCENTER 0 (the engine is off) -> lg4ff's f5 on the wire
    after_init = (init[0] + 0.001) if init else t_plug
    released = wheel.wait_outputs(CENTRING_OFF, after_init, 5.0)
    sc.check(released is not None, "A: once carbridge has the wheel, the wheel receives centring off (f5 00 ...)",
             hexs(d for _, d in wheel.outputs(after_init)))
    facts = describe_node(sc, wheel)
    check_node(sc, facts)
    time.sleep(GAP_S)
    # the first engine on of a run: only reported (first-time code paths, debug build under TCG)
    t_on = wheel.press(OPTIONS, "Options: engine on")
    on = wheel.wait_outputs(CENTRING_ON, t_on - 0.01, 3.0)
    check_timed(sc, on, t_on, "A: engine on: the wheel receives autocentre %s (FF_AUTOCENTER %d)"
                % (hexs(CENTRING_ON), AUTOCENTER_ON), "autocenter_first_on_after_press", timed=False)
    time.sleep(GAP_S)
    t_gas = wheel.axis(e.ABS_Z, 200, "gas 55/255")
    time.sleep(GAP_S)
    t_turn = wheel.axis(e.ABS_X, WHEEL_30_DEG, "wheel 30 degrees right")
    time.sleep(GAP_S)
    t_brake = wheel.axis(e.ABS_RZ, 100, "brake")
    time.sleep(GAP_S)
    wheel.axis(e.ABS_RZ, 255, "brake released")
    wheel.axis(e.ABS_Z, 255, "gas released")
    time.sleep(GAP_S)
    t_off = wheel.press(OPTIONS, "Options: engine off")
    off = wheel.wait_outputs(CENTRING_OFF, t_off - 0.01, 3.0)
    check_timed(sc, off, t_off, "A: engine off: the wheel receives centring off", "autocenter_off_after_press")
    time.sleep(GAP_S)
    t_on2 = wheel.press(OPTIONS, "Options: engine on again")
    on2 = wheel.wait_outputs(CENTRING_ON, t_on2 - 0.01, 3.0)
    check_timed(sc, on2, t_on2, "A: engine on again: the wheel receives the autocentre command",
                "autocenter_on_again_after_press")
    # carbridge sets no range: only lg4ff's own 900 at the plug, and the sysfs file still says 900
    ranges = [d for _, d in wheel.outputs(t_plug) if d[:2] == bytes([0xF8, 0x81])]
    sc.check(ranges == [RANGE_900], "A: no range command but lg4ff's 900 at the plug (carbridge sets no range)", hexs(ranges))
    hid = wheel.gadget.hid_devices()
    sc.check(bool(hid) and open(hid[0] + "/range").read().strip() == "900", "A: the range file still reads 900")
    time.sleep(GAP_S)

    # Unplugged while moving (the UDC unbound): the stop frame within USB_UNPLUG_BOUND_S.
    # (tcpcar writes its lines once its input has been quiet for 200 ms: the frames of a stream are read
    # after the car stopped)
    t_move = wheel.axis(e.ABS_Z, 200, "gas: moving (the wheel still at 30 degrees)")
    time.sleep(GAP_S)
    old_node = wheel.node
    t_unplug = wheel.unplug()
    car.wait_frame(lambda f: f.motion and f.s == 0, t_unplug, 3.0)
    gone = k.wait_until(lambda: not os.path.exists(old_node) and not wheel.gadget.hid_devices(), 5)
    sc.check(bool(gone), "A: the unplug removes the input node and the HID device")
    time.sleep(0.4)   # tcpcar's 200 ms quiet period: every line is in its log
    stop = next((f for f in car.frames() if f.t >= t_unplug and f.motion and f.s == 0), None)
    sc.check(stop is not None and stop.t - t_unplug <= USB_UNPLUG_BOUND_S,
             "A: unplugging the USB wheel while moving (UDC unbind) stops the car within %.0f ms"
             % (USB_UNPLUG_BOUND_S * 1000), "%.1f ms" % ((stop.t - t_unplug) * 1000) if stop else "no stop frame")
    sc.metric("usb_unbind_write", wheel.gadget.unbind_s * 1000.0, "ms")
    lost = cb.log_lines(r"gamepad .* lost", t_unplug - 1.0)
    if lost:
        sc.metric("usb_unplug_to_carbridge_lost", (lost[0][0] - t_unplug) * 1000.0, "ms")
    if stop is not None:
        sc.metric("stop_after_usb_unplug", (stop.t - t_unplug) * 1000.0, "ms")
        late = [f.text for f in car.frames() if f.t > stop.t and f.motion and f.s > 0]
        sc.check(not late, "A: no motion frame after the stop frame", late)
    sc.check(cb.alive(), "A: carbridge still running after the unplug")
    moving = [f.text for f in car.frames() if t_move <= f.t < t_unplug]
    sc.check(moving and set(moving) == {"R,1,50,1"}, "A: moving before the unplug: R,1,50,1 streamed", k.dedup(
        [f for f in car.frames() if t_move <= f.t < t_unplug]))

    # Fault 1, re-enumeration: the same wheel back 0.3 s later (a USB reset, a mode switch). lg4ff initialises
    # it again (centring off); carbridge takes the new node and sets the centring to the engine's state (on).
    time.sleep(0.3)
    t_replug = wheel.plug()
    sc.require(wheel.node is not None, "A: re-enumerated: the wheel is back with an input node")
    sc.check(wheel.wait_outputs(DRIVER_INIT, t_replug, 5.0) is not None,
             "A: re-enumerated: hid-lg4ff initialises it again (centring off, range 900, LEDs off)")
    sc.check(bool(k.wait_until(lambda: cb.has_open(wheel.node), HOTPLUG_S)),
             "A: re-enumerated: carbridge takes the new node %s" % wheel.node)
    wait_pad_ready(sc, cb, wheel, t_replug)
    sc.check(wheel.report_state(), "A: re-enumerated: the wheel's first report (everything at rest) reaches the kernel")
    again = wheel.wait_outputs(CENTRING_ON, t_replug, 5.0)
    sc.check(again is not None, "A: re-enumerated with the engine on: the wheel receives the autocentre command again",
             hexs(d for _, d in wheel.outputs(t_replug)))
    time.sleep(GAP_S)
    t_gas2 = wheel.axis(e.ABS_Z, 200, "gas after the re-enumeration: first press")
    time.sleep(GAP_S)
    t_lift2 = wheel.axis(e.ABS_Z, 255, "gas lifted")
    time.sleep(GAP_S)
    t_gas2b = wheel.axis(e.ABS_Z, 200, "gas after the re-enumeration: second press")
    time.sleep(GAP_S)

    # Fault 2, out-of-range and short reports while moving. A hat of 15 (outside 0..7, the null state's
    # range) changes nothing; a 6-byte report (half of the 12) is dropped by hid-core (Debian's 6.1.192:
    # hid_report_raw_event returns -EINVAL; kernels before that fix padded it with zeros, which would have
    # read as both pedals floored): the kernel keeps the last state and the car keeps going.
    t_hat = wheel.send("hat 15 (out of range)", bytes([0x0F]) + wheel.report()[1:])
    time.sleep(GAP_S)
    t_short = wheel.send("a 6-byte report", wheel.report()[:6])
    too_short = k.wait_until(lambda: next((l for l in dmesg().splitlines() if "too short" in l and "C24F" in l), None), 2)
    sc.check(too_short is not None, "A: fault: hid-core logs the short report", too_short)
    if too_short:
        sc.note("A: dmesg: %s" % too_short.strip())
    time.sleep(GAP_S)
    t_full = wheel.axis(e.ABS_Z, 255, "a full report: gas lifted")
    sc.check(car.wait_frame(lambda f: f.motion and f.s == 0, t_full, 3.0) is not None, "A: the gas lifted: stopped")
    time.sleep(0.4)
    # The rest rule (docs/input.md): after the unplug the gas must be back at rest before it drives. The wheel's
    # first report said so (gas 255 after the kernel's 0), so the first press drives. (Without that report the
    # kernel's state is 0 = floored when carbridge opens the node; the first report would then be the press
    # itself and carbridge rightly holds it back until a lift: seen in the first runs.)
    first = [f.text for f in car.frames() if t_gas2 <= f.t < t_lift2]
    sc.check(first[:1] == ["M,0,50,1"], "A: re-enumerated with the pedals at rest: the first press of the gas drives (M,0,50,1)",
             k.dedup([f for f in car.frames() if t_gas2 <= f.t < t_lift2]) or "nothing")
    driven = [f.text for f in car.frames() if t_gas2b <= f.t < t_hat]
    sc.check(driven and set(driven) == {"M,0,50,1"}, "A: re-enumerated: after a lift the gas drives (M,0,50,1)",
             k.dedup([f for f in car.frames() if t_gas2b <= f.t < t_hat]))
    hat_frames = [f.text for f in car.frames() if t_hat <= f.t < t_short]
    sc.check(hat_frames and set(hat_frames) == {"M,0,50,1"}, "A: fault: a hat value of 15 changes nothing",
             k.dedup([f for f in car.frames() if t_hat <= f.t < t_short]))
    after_short = [f.text for f in car.frames() if t_short <= f.t < t_full]
    sc.check(after_short and set(after_short) == {"M,0,50,1"},
             "A: fault: a short report is dropped: nothing changes, the car keeps going (M,0,50,1)",
             k.dedup([f for f in car.frames() if t_short <= f.t < t_full]))
    time.sleep(GAP_S)
    t_gas3 = wheel.axis(e.ABS_Z, 200, "gas after the short report")
    time.sleep(GAP_S)
    t_lift = wheel.axis(e.ABS_Z, 255, "gas released")
    time.sleep(GAP_S)
    sc.check(car.wait_frame(lambda f: f.motion and f.s == 0, t_lift, 3.0) is not None, "A: the gas lifted again: stopped")
    time.sleep(0.4)
    sc.check([f.text for f in car.frames() if t_gas3 <= f.t < t_lift][:1] == ["M,0,50,1"],
             "A: fault: after a full report the gas drives again", k.dedup([f for f in car.frames() if f.t >= t_gas3]))

    t_term = monotonic()
    status = cb.stop(signal.SIGTERM, 10)
    t_exit = monotonic()
    sc.check(status == 0, "A: carbridge exits 0 on SIGTERM", status)
    last_off = wheel.wait_outputs(CENTRING_OFF, t_term - 0.01, 1.0)
    sc.check(last_off is not None and last_off[0] <= t_exit,
             "A: SIGTERM with the engine on: the wheel receives centring off before the exit",
             hexs(d for _, d in wheel.outputs(t_term - 0.01)))
    # every output report since carbridge took the wheel: only centring commands, in the engine's order
    seq = [d for _, d in wheel.outputs(t_taken - 1.0) if d not in (RANGE_900, LEDS_OFF)]
    sc.note("A: centring commands on the wire: %s" % hexs(seq))
    sc.check(not [d for d in seq if d not in CENTRING_OFF + CENTRING_ON],
             "A: nothing but the autocentre commands reaches the wheel", hexs(seq))
    sc.check(not [d for _, d in wheel.outputs() if d[0] in (0x11, 0x13)], "A: no constant force played")
    car.stop()   # tcpcar writes the lines it buffered
    sc.dump_frames(car.frames(), "A: the car")
    check_frame(sc, car, "M,0,50,1", t_gas, "A: the gas pedal (ABS_Z 200, 255 released) drives: M,0,50,1",
                "gas_to_frame")
    check_frame(sc, car, "R,1,50,1", t_turn, "A: 30 degrees of wheel: R,1,50,1", "wheel_to_frame")
    check_frame(sc, car, "R,1,0,1", t_brake, "A: the brake: the stop frame R,1,0,1", "brake_to_stop_frame")
    check_frame(sc, car, "E,0,0,0", t_off, "A: Options: E,0,0,0")
    got = k.dedup([f for f in car.frames() if f.t < t_move])
    sc.check(got == ["E,0,0,0", "M,0,50,1", "R,1,50,1", "R,1,0,1", "E,0,0,0"],
             "A: exactly the handshake, gas, wheel, brake, engine off before the unplug", got)
    frames = car.frames()
    sc.check(bool(frames) and frames[-1].text == "E,0,0,0" and frames[-1].t >= t_term,
             "A: SIGTERM: E,0,0,0 is the last frame", frames[-1] if frames else None)
    sc.check(len([f for f in car.frames() if f.text == "R,1,0,1" and f.t < t_move]) == 1,
             "A: the brake's stop frame is not streamed")
    t_remove = monotonic()
    wheel.gadget.remove()
    sc.check(not os.path.exists(wheel.gadget.path) and not wheel.gadget.hid_devices(),
             "A: the gadget is removed cleanly (%.0f ms)" % ((monotonic() - t_remove) * 1000))


def phase_spring(sc):
    label = "B"
    car, cb = start_run(sc, label, PORT + 1)
    wheel = Wheel(SPRING_EFFECTS, name="Logitech G920 Driving Force Racing Wheel for Xbox One", product=0xC262)
    plug(sc, cb, wheel, label)
    uploaded = k.wait_until(lambda: wheel.snapshot()[1], 5)
    requests, effects, plays, autocenter, _, errors = wheel.snapshot()
    sc.note("B: requests %s; effects %s" % (requests, effects))
    sc.require(bool(uploaded), "B: carbridge uploads a spring to a wheel with FF_SPRING", requests)
    sc.check(len(effects) == 1, "B: exactly one effect", effects)
    spring_id, spring = next(iter(effects.items()))
    sc.check(spring["type"] == e.FF_SPRING, "B: the effect is FF_SPRING", spring["type"])
    saturation, coefficient = int(CENTRING * 65535), int(CENTRING * 32767)
    sc.check(spring["right_saturation"] == saturation and spring["left_saturation"] == saturation,
             "B: both saturations %d (centring 0.5)" % saturation, spring)
    sc.check(spring["right_coeff"] == coefficient and spring["left_coeff"] == coefficient,
             "B: both coefficients %d" % coefficient, spring)
    sc.check(spring["center"] == 0 and spring["length"] == 0, "B: centred, endless", spring)
    sc.check(not errors, "B: no error answering the kernel", errors)
    stopped = k.wait_until(lambda: wheel.snapshot()[2], 3)
    sc.check(bool(stopped) and [(c, v) for _, c, v in wheel.snapshot()[2]] == [(spring_id, 0)],
             "B: once carbridge has the wheel, the spring stopped (engine off: free)", wheel.snapshot()[2])
    t_on = wheel.press(OPTIONS, "Options: engine on")
    played = k.wait_until(lambda: next(((t, c, v) for t, c, v in wheel.snapshot()[2] if t >= t_on - 0.05 and v == 1), None), 3.0)
    check_timed(sc, played, t_on, "B: engine on: the spring plays", "spring_first_on_after_press", timed=False)
    if played is not None:
        sc.check(played[1] == spring_id, "B: ... the uploaded spring", played)
    time.sleep(GAP_S)
    t_gas = wheel.axis(e.ABS_Z, 200, "gas")
    time.sleep(GAP_S)
    wheel.axis(e.ABS_Z, 255, "gas released")
    time.sleep(GAP_S)
    t_off = wheel.press(OPTIONS, "Options: engine off")
    stop = k.wait_until(lambda: next(((t, c, v) for t, c, v in wheel.snapshot()[2] if t >= t_off - 0.05 and v == 0), None), 3.0)
    check_timed(sc, stop, t_off, "B: engine off: the spring stops", "spring_off_after_press")
    sc.check([(c, v) for _, c, v in wheel.snapshot()[2]] == [(spring_id, 0), (spring_id, 1), (spring_id, 0)],
             "B: exactly: stopped, played, stopped", wheel.snapshot()[2])
    sc.check(not wheel.snapshot()[3], "B: no FF_AUTOCENTER write where the spring is used", wheel.snapshot()[3])
    # Unplugged while moving: the car stops (the wheel is a pad like any other).
    wheel.press(OPTIONS, "Options: engine on")
    time.sleep(GAP_S)
    t_again = wheel.axis(e.ABS_Z, 150, "gas")
    time.sleep(GAP_S)
    t_unplug = wheel.close()
    stop_frame = car.wait_frame(lambda f: f.motion and f.s == 0, t_unplug, 3.0)
    time.sleep(0.4)   # tcpcar's 200 ms quiet period: every line is in its log
    stop_frame = next((f for f in car.frames() if f.t >= t_unplug and f.motion and f.s == 0), None)
    sc.check(stop_frame is not None and stop_frame.t - t_unplug <= UNPLUG_BOUND_S,
             "B: unplugging the wheel stops the car within %.0f ms" % (UNPLUG_BOUND_S * 1000),
             "%.3f s" % (stop_frame.t - t_unplug) if stop_frame else "no stop frame")
    if stop_frame is not None:
        sc.metric("stop_after_wheel_unplug", (stop_frame.t - t_unplug) * 1000.0, "ms")
    sc.check(cb.alive(), "B: carbridge still running after the unplug")
    status = cb.stop(signal.SIGTERM, 10)
    sc.check(status == 0, "B: carbridge exits 0 on SIGTERM", status)
    car.stop()
    sc.dump_frames(car.frames(), "B: the car")
    check_frame(sc, car, "M,0,50,1", t_gas, "B: the gas drives: M,0,50,1", "spring_gas_to_frame")
    check_frame(sc, car, "M,0,90,1", t_again, "B: driving again: M,0,90,1")
    got = k.dedup(car.frames())
    sc.check(got[:5] == ["E,0,0,0", "M,0,50,1", "M,0,0,1", "E,0,0,0", "M,0,90,1"],
             "B: the handshake, gas, gas lifted (the stop frame), engine off, gas again", got)


def run(sc):
    phase_uhid(sc)
    phase_autocenter(sc)
    phase_spring(sc)

#!/usr/bin/python3
"""Scenario sony_pads: a DualSense (hid-playstation, USB and Bluetooth) and a DualShock 4 (hid-sony, USB), each
emulated on /dev/uhid with its real report descriptor and the feature reports its driver asks for at probe
(calibration, pairing, firmware: PyPI's hid-tools, as the kernel's HID selftests use it; guest/hid_devices.py),
so the kernel's own drivers make the evdev nodes carbridge opens. Each drives a TCP car (guest/tcpcar.c).

What the drivers made in the guest (Debian 12, 6.1), and what differs from our uinput pads:
- hid-playstation (DualSense): three input devices on one HID device, in this order: the pad "Sony Interactive
  Entertainment Wireless Controller" (sticks 0..255 with NO flat, triggers ABS_Z/ABS_RZ 0..255, hat -1..1,
  BTN_SOUTH.. BTN_THUMBR, FF_RUMBLE), its "… Motion Sensors" (INPUT_PROP_ACCELEROMETER, ABS_X/Y/Z
  -32768..32768 at 8192 per g, gyro on ABS_RX/RY/RZ, MSC_TIMESTAMP) and its "… Touchpad"; all with the
  pad's MAC as uniq. LEDs: inputN:rgb:indicator (multicolor) and inputN:white:player-1..5; battery
  ps-controller-battery-MAC.
- hid-sony (DualShock 4, USB): the same three, in the other order: Touchpad, Motion Sensors, then the pad
  "Sony Computer Entertainment Wireless Controller" (sticks with flat 15, and MSC_SCAN). LEDs: HIDDEV:red,
  :green, :blue, :global (not multicolor); battery sony_controller_battery_MAC.
- A DualShock 4 over Bluetooth (hid-sony: its calibration report with its CRC) makes the same three nodes.
- A device that answers its driver's probe wrongly gets no node at all (scenario sony_tilt).

Per model: carbridge runs first (`gamepad = "auto"`, `[throttle] axis = "ABS_RZ"`); the pad is created
(hotplug) and picked; Options -> engine on -> the car gets the engine-on state and the pad's motors get the
engine-on pulse as the output report the device receives (motor bytes non-zero, then zero again); R2 at
half travel -> M,0,120,1; stick hard right -> R,2,120,1; UHID_DESTROY (the unplug or the Bluetooth drop)
while moving -> the stop frame within UNPLUG_BOUND_MS; the pad comes back -> picked again, Speed+ drives;
SIGTERM -> E,0,0,0 last, exit 0.

Run by scenarios.py (its __main__ loads scenario_NAME.py for the names it is given).
"""
import os, re, signal, subprocess, time
import kharness as k
from kharness import monotonic
import hid_devices as h
from scenario_rumble import start_run   # a TCP car and carbridge connected to it, the handshake checked

TITLE = "DualSense (hid-playstation, USB + Bluetooth) and DualShock 4 (hid-sony) on uhid: drive, trigger, rumble bytes, unplug -> stop"
PORT = 47060
GAP_S = 0.35
HOTPLUG_S = 15.0
UNPLUG_BOUND_MS = 100.0     # the bound: UHID_DESTROY -> the stop frame
RUMBLE_BOUND_MS = 500.0     # a cue's output report after its cause (as scenario rumble's PLAY_BOUND_MS)

# (label, hid_devices class, MAC, where the motor bytes are in its output report: (report id, right, left),
#  the speed R2 at 128 of 255 gives). The speeds differ: hid-sony gives every 0..255 axis of a DualShock 4 a
# flat of 15, triggers included, and carbridge keeps an axis's flat (docs/input.md), so half travel is
# (128 - 15) / (255 - 15) = 0.47 of the range -> 110; hid-playstation gives no flat -> 0.50 -> 120.
MODELS = [
    ("dualsense_bt", h.DualSenseBluetooth, "a0:ab:51:00:00:01", (0x31, 5, 6), 120),
    ("dualsense_usb", h.DualSenseUSB, "a0:ab:51:00:00:02", (0x02, 3, 4), 120),
    ("ds4_usb", h.DualShock4USB, "a0:ab:51:00:00:03", (0x05, 4, 5), 110),
    ("ds4_bt", h.DualShock4Bluetooth, "a0:ab:51:00:00:06", (0x11, 6, 7), 110),
]
# Where the light bar's colour is in each output report: (report id, index of the flags byte, the flag that
# says the report sets the light bar, index of red). hid-playstation: struct dualsense_output_report_common
# after the report id (USB) or id, seq_tag, tag (Bluetooth): valid_flag1 bit 2 (LIGHTBAR_CONTROL_ENABLE),
# lightbar_red at +44. hid-sony: every DualShock 4 report carries the colour (flags bit 1), red at 6 (USB)
# or 8 (Bluetooth).
LIGHTBARS = {
    "dualsense_bt": (0x31, 4, 0x04, 47),
    "dualsense_usb": (0x02, 2, 0x04, 45),
    "ds4_usb": (0x05, 1, 0x02, 6),
    "ds4_bt": (0x11, 3, 0x02, 8),
}
ENGINE_OFF, DRIVING = (0x30, 0x30, 0x30), (0x00, 0xFF, 0x00)   # config/carbridge.toml's light_engine_off, light_driving
LIGHT_BOUND_S = 2.0    # a state change -> the light bar's report (written off the loop, then the driver's work queue)


def config(port):
    return k.base_config(None, gamepad="auto", url="tcp://127.0.0.1:%d" % port, extra="""
[throttle]
axis = "ABS_RZ"
""")


def motors(report, layout):
    rid, right, left = layout
    if not report or report[0] != rid or len(report) <= max(right, left):
        return None
    return report[right], report[left]


def plug(sc, cb, pad, label):
    """Creates the pad, waits for its driver's nodes and for carbridge to pick its pad node; returns the nodes."""
    t = pad.create()
    nodes = pad.wait_nodes(timeout_s=HOTPLUG_S)
    sc.require(bool(nodes), "%s: the driver makes the pad, motion sensor and touchpad nodes" % label,
               "nodes %s; hid-tools errors: %s" % (pad.nodes(), h.Pump.errors[-1:]))
    picked = k.wait_until(lambda: cb.log_lines(r'gamepad: ".*" \(%s\) picked' % re.escape(nodes["pad"]), t - 0.5), HOTPLUG_S)
    sc.require(bool(picked), "%s: carbridge picks the pad node %s (not its motion sensors or touchpad)" % (label, nodes["pad"]))
    sc.metric("%s_picked_after_create" % label, (picked[0][0] - t) * 1000.0, "ms")
    time.sleep(0.05)
    return nodes


def lightbar(report, layout):
    rid, flags, flag, red = layout
    if not report or report[0] != rid or len(report) <= red + 2 or not report[flags] & flag:
        return None
    return tuple(report[red:red + 3])


def wait_light(pad, layout, colour, since, timeout_s=LIGHT_BOUND_S):
    """The first output report since `since` that sets the light bar to `colour`: (time, colour) or None."""
    return k.wait_until(lambda: next(((t, lightbar(r, layout)) for t, r in pad.outputs_since(since)
                                      if lightbar(r, layout) == colour), None), timeout_s)


def lights_seen(pad, layout, since):
    return [lightbar(r, layout) for _, r in pad.outputs_since(since) if lightbar(r, layout) is not None][-6:]


def first_after(car, text, since):
    return next((f for f in car.frames() if f.t >= since and f.text == text), None)


def stop_after(car, since):
    return next((f for f in car.frames() if f.t >= since and f.motion and f.s == 0), None)


def drive_model(sc, index, label, model, mac, layout, half):
    port = PORT + index
    car, cb = start_run(sc, label, port, config(port))
    pad = h.SonyPad(model, mac)
    sc.cleanups.append(pad.destroy)
    sc.cleanups.append(lambda: sc.note("%s pad actions: %s" % (label, ["%.3f %s" % a for a in pad.actions])))
    t_plug = monotonic()
    nodes = plug(sc, cb, pad, label)
    sc.note("%s: nodes %s, LEDs %s, battery %s" % (label, nodes, [os.path.basename(l) for l in pad.leds()], pad.battery_dir()))
    light = LIGHTBARS[label]
    got = wait_light(pad, light, ENGINE_OFF, t_plug)
    sc.check(got is not None, "%s: the pad's light bar shows the engine off (%s) as the output report the device receives"
             % (label, ENGINE_OFF), lights_seen(pad, light, t_plug))
    pad.report("at rest")
    time.sleep(GAP_S)

    t_on = pad.press(h.OPTIONS, "Options: engine on")
    # the engine-on pulse, as the device receives it: motor bytes non-zero, later both zero again
    def pulse():
        return next(((t, r) for t, r in pad.outputs_since(t_on) if (motors(r, layout) or (0, 0)) != (0, 0)), None)
    got = k.wait_until(pulse, 3.0)
    sc.check(got is not None and (got[0] - t_on) * 1000 <= RUMBLE_BOUND_MS,
             "%s: engine on -> the rumble pulse reaches the device's output report (motor bytes) within %.0f ms"
             % (label, RUMBLE_BOUND_MS),
             "%s; outputs: %s" % ("%.0f ms" % ((got[0] - t_on) * 1000) if got else "none",
                                   [r.hex()[:24] for _, r in pad.outputs_since(t_on)][:6]))
    if got is not None:
        sc.metric("%s_rumble_report_after_engine_on" % label, (got[0] - t_on) * 1000.0, "ms")
        sc.note("%s: engine-on rumble report %s (right, left motors = %s)" % (label, got[1].hex()[:24], motors(got[1], layout)))
        ended = k.wait_until(lambda: next((t for t, r in pad.outputs_since(got[0] + 0.001)
                                           if motors(r, layout) == (0, 0)), None), 3.0)
        sc.check(ended is not None, "%s: the pulse ends: a later output report with both motors at 0" % label)
    time.sleep(GAP_S)

    t_throttle = pad.trigger(128, "R2 half")
    got = wait_light(pad, light, DRIVING, t_throttle)
    sc.check(got is not None, "%s: driving -> the light bar turns %s" % (label, DRIVING), lights_seen(pad, light, t_throttle))
    if got is not None:
        sc.metric("%s_light_after_throttle" % label, (got[0] - t_throttle) * 1000.0, "ms")
    time.sleep(GAP_S)
    t_right = pad.stick(255, 128, "stick right")
    time.sleep(GAP_S)
    pad.watch_removal(nodes["pad"])
    t_destroy = pad.destroy()
    k.wait_until(lambda: pad.removed_at, 3.0)
    sc.require(pad.removed_at is not None, "%s: UHID_DESTROY hangs up the pad's node" % label)
    t_gone = pad.removed_at
    sc.metric("%s_node_hangup_after_uhid_destroy" % label, (t_gone - t_destroy) * 1000.0, "ms")
    time.sleep(1.0)
    # the pad comes back (replugged, or its Bluetooth link again): picked again, Speed+ drives from 0
    pad2 = h.SonyPad(model, mac)
    sc.cleanups.append(pad2.destroy)
    plug(sc, cb, pad2, label + " again")
    pad2.report("at rest")
    time.sleep(GAP_S)
    t_up = pad2.press(h.R1, "Speed+")
    time.sleep(GAP_S)
    t_term = cb.send_signal(signal.SIGTERM)
    status = cb.stop(signal.SIGTERM, 5)
    sc.check(status == 0, "%s: SIGTERM -> exit status 0" % label, "status %s" % status)
    restored = k.wait_until(lambda: next((c for _, c in reversed([(t, lightbar(r, light)) for t, r in pad2.outputs_since(t_term)])
                                          if c is not None), None), LIGHT_BOUND_S)
    sc.check(restored is not None and restored != DRIVING,
             "%s: carbridge's exit gives the light back (the colour the LED files held before it)" % label,
             lights_seen(pad2, light, t_term))
    car.stop()
    time.sleep(0.3)

    frames = car.frames()
    sc.dump_frames(frames, "%s: frames received by the car" % label)
    moving = first_after(car, "M,0,%d,1" % half, t_throttle)
    sc.check(moving is not None and moving.t < t_right, "%s: R2 at half travel -> M,0,%d,1" % (label, half),
             sorted(set(f.text for f in frames if f.t >= t_throttle))[:6])
    right = first_after(car, "R,2,%d,1" % half, t_right)
    sc.check(right is not None and right.t < t_gone, "%s: stick hard right -> R,2,%d,1" % (label, half),
             sorted(set(f.text for f in frames if f.t >= t_right))[:6])
    stop = stop_after(car, t_destroy)   # carbridge may wake before this script's own reader does
    sc.check(stop is not None and (stop.t - t_gone) * 1000 <= UNPLUG_BOUND_MS,
             "%s: UHID_DESTROY while moving -> the stop frame within %.0f ms of the kernel hanging up the node"
             % (label, UNPLUG_BOUND_MS),
             "%.1f ms (%s)" % ((stop.t - t_gone) * 1000, stop.text) if stop else "no stop frame")
    lost = cb.log_lines(r"gamepad .* lost", t_destroy - 0.5)
    sc.note("%s: UHID_DESTROY written %.3f, returned %.3f, node hung up %.3f, carbridge logged the loss %s, stop frame %s"
            % (label, t_destroy, pad.destroy_returned_at, t_gone, "%.3f" % lost[0][0] if lost else "never",
               "%.3f" % stop.t if stop else "never"))
    if stop is not None:
        sc.metric("%s_stop_after_node_hangup" % label, (stop.t - t_gone) * 1000.0, "ms")
        sc.metric("%s_stop_after_uhid_destroy" % label, (stop.t - t_destroy) * 1000.0, "ms")
        moving = [f.text for f in frames if stop.t < f.t < t_up and f.motion and f.s > 0]
        sc.check(not moving, "%s: no motion frame after the stop until the driver acts again" % label, moving[:5])
    up = first_after(car, "R,0,10,1", t_up) or first_after(car, "M,0,10,1", t_up)
    sc.check(up is not None, "%s: the pad back: Speed+ -> S=10" % label,
             sorted(set(f.text for f in frames if f.t >= t_up))[:6])
    last = [f.text for f in frames][-1:]
    sc.check(last == ["E,0,0,0"], "%s: E,0,0,0 is the last frame after SIGTERM" % label, last)
    pad2.destroy()


def load_drivers(sc):
    for module in ("uhid", "hid-playstation", "hid-sony"):
        r = subprocess.run(["modprobe", module], capture_output=True, text=True)
        sc.require(r.returncode == 0, "modprobe %s" % module, r.stderr)
    sc.require(os.path.exists("/dev/uhid"), "/dev/uhid exists")


def run(sc):
    load_drivers(sc)
    for index, (label, model, mac, layout, half) in enumerate(MODELS):
        drive_model(sc, index, label, model, mac, layout, half)
    if h.Pump.errors:
        sc.note("hid-tools answers that raised: %s" % h.Pump.errors[-2:])

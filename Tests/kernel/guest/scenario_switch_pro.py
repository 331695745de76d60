#!/usr/bin/python3
"""Scenario switch_pro: a Nintendo Switch Pro Controller through the kernel's hid-nintendo drives a TCP car.

The controller is emulated on /dev/uhid as BlueZ makes a Bluetooth one (guest/switchpro.py): bus
Bluetooth, 057e:2009, the name "Pro Controller", uniq its address; its test side answers hid-nintendo's
probe (the USB handshake left unanswered, as over Bluetooth; the subcommands: SPI flash reads of the
stick and IMU calibration, report mode 0x30, vibration, IMU, device info, player and home LEDs) and then
streams report 0x30 at 60 Hz. carbridge (started first: the controller hotplugs; `gamepad = "auto"`,
stick steering on ABS_X, + = engine, R = speed up, L = speed down, rumble on by default; under a
NOTIFY_SOCKET, whose STATUS= the test waits on) must pick the controller's gamepad node, not its IMU
node: + then R, R, the stick hard right give exactly M,0,10,1 M,0,20,1 R,2,20,1; the Bluetooth link drops
while moving (UHID_DESTROY): the stop frame (R,2,0,1) within 100 ms of the kernel hanging up the node
(less the time the guest did not run), nothing with S > 0 after it, the loss logged, carbridge keeps
running; SIGTERM: exit 0, E,0,0,0 last.

What the real driver makes (Debian 6.1.0-56, 6.1.192): the probe is synchronous (hid_device_io_start):
80 02 twice, 1 s apart, unanswered (so about 2 s of every Bluetooth probe), then the subcommands 10
(0x8010+2, 0x801b+2, 0x603d+9, 0x6046+9, 0x8026+2, 0x6020+24), 03 30, 48 01, 40 01, 02, 30 01, 38;
dmesg "using factory cal for left stick" / "right stick" / "IMU", "controller MAC = ...". Next to the
HID device's hidraw: the power supply "nintendo_switch_controller_battery_0005:057E:2009.N", LEDs
"...:green:player-1".."player-4" and "...:blue:player-5" (home). Two evdev nodes, "Nintendo Switch Pro
Controller IMU" first (INPUT_PROP_ACCELEROMETER; ABS_X/Y/Z -32767..32767 res 4096 fuzz 10, ABS_RX/RY/RZ
-32767000..32767000 res 14247 fuzz 10; MSC_TIMESTAMP), then "Nintendo Switch Pro Controller": ABS_X/Y
and ABS_RX/RY -32767..32767 fuzz 250 flat 500 (the sticks through the controller's own calibration; up is
negative Y), ABS_HAT0X/HAT0Y -1..1 (the d-pad), BTN_SOUTH = B, BTN_EAST = A, BTN_NORTH = X, BTN_WEST = Y,
BTN_TL/BTN_TR = L/R, BTN_TL2/BTN_TR2 = ZL/ZR, BTN_SELECT = -, BTN_START = +, BTN_MODE = home,
BTN_THUMBL/R, BTN_Z = capture; EV_FF FF_RUMBLE (carbridge uploads its effects: "rumble: ... has
FF_RUMBLE"). Both nodes: version = the HID version | 0x8000 (0x8001 here), phys = the adapter's address,
uniq = the MAC the device-info subcommand answered, in upper case (the HID device's uniq is BlueZ's
lower case). On UHID_DESTROY the driver destroys its rumble workqueue and stops the HID device before its
(devm) input devices are unregistered: the node hangs up 20-100 ms after the destroy under TCG, hence
the bound from the hang-up.

Run by scenarios.py (its __main__ loads scenario_NAME.py for the names it is given).
"""
import os, re, signal, subprocess, time
import evdev
from evdev import ecodes as e
import kharness as k
from kharness import Carbridge, monotonic
import uhid, switchpro
from switchpro import ProController
from scenario_two_instances import NotifySocket
from scenario_tilt_throttle import StallProbe

TITLE = ("Switch Pro Controller through the kernel's hid-nintendo (emulated on /dev/uhid) drives a TCP car: "
         "engine, speed, stick, Bluetooth drop -> stop")
PORT = 47031
MAC = "98:B6:E9:A1:B2:C3"
NODE_S = 15.0
STOP_BOUND_MS = 100.0
NOTIFY_PATH = "/tmp/kt/notify-switch-pro"
GAP_S = 0.3

# kharness's config (stick steering on ABS_X, + = engine, R/L = speed) for the TCP car, any pad
CONFIG = k.base_config(None, gamepad="auto", url="tcp://127.0.0.1:%d" % PORT)


def kernel_log(pattern):
    out = subprocess.run(["dmesg"], capture_output=True, text=True).stdout
    return [line for line in out.split("\n") if re.search(pattern, line)]


def run(sc):
    for module in ("uhid", "hid-nintendo"):
        subprocess.run(["modprobe", module], capture_output=True)
    sc.require(os.path.exists("/dev/uhid"), "/dev/uhid exists (modprobe uhid)")
    sc.require(os.path.isdir("/sys/bus/hid/drivers/nintendo"), "hid-nintendo is loaded (modprobe hid-nintendo)")
    car = k.TcpCar(os.path.join(sc.work, "car.log"), PORT)
    sc.require(car.start(), "the TCP car (Tests/kernel/build/tcpcar) listens on 127.0.0.1:%d" % PORT)
    sc.cleanups.append(car.stop)
    if os.path.exists(NOTIFY_PATH):
        os.unlink(NOTIFY_PATH)
    notify = NotifySocket(NOTIFY_PATH)
    sc.cleanups.append(notify.close)
    cb = Carbridge(sc.work, CONFIG)
    os.environ["NOTIFY_SOCKET"] = notify.path
    try:
        cb.start()
    finally:
        del os.environ["NOTIFY_SOCKET"]
    sc.cleanups.append(lambda: cb.stop(signal.SIGTERM, 3))
    k.wait_until(lambda: car.connected() or not cb.alive(), 45)
    sc.require(car.connected(), "carbridge connects to the TCP car", "exit status %s" % (cb.proc.poll(),))
    first = car.wait_frame(lambda f: True, 0, 5.0)
    sc.check(first is not None and first.text == "E,0,0,0", "handshake E,0,0,0 first", first.text if first else "nothing")

    def status(pattern, since, timeout_s):
        return k.wait_until(lambda: next((t for t, line in notify.assignments()
                                         if t >= since and line.startswith("STATUS=") and re.search(pattern, line[7:])), None),
                           timeout_s)

    # ---- the controller connects; hid-nintendo's probe asks, it answers
    t_create = monotonic()
    pad = ProController(MAC)
    sc.cleanups.append(pad.close)
    nodes = k.wait_until(lambda: (lambda n: n if switchpro.NODE_NAME in n else None)(uhid.event_nodes(uhid.hid_dir(MAC.lower()))),
                         NODE_S)
    t_node = monotonic()
    sc.note("the driver's requests until the node:\n      " + "\n      ".join(pad.conversation()))
    sc.note("dmesg: %s" % kernel_log(r"nintendo|057E:2009")[-12:])
    sc.require(bool(nodes), "hid-nintendo makes \"%s\" from the emulated controller" % switchpro.NODE_NAME,
               "nodes %s" % uhid.event_nodes(uhid.hid_dir(MAC.lower())))
    sc.metric("node_after_create", (t_node - t_create) * 1000.0, "ms")
    node, imu = nodes.get(switchpro.NODE_NAME), nodes.get(switchpro.IMU_NAME)
    sc.check(imu is not None, "and \"%s\"" % switchpro.IMU_NAME, nodes)
    hid = uhid.hid_dir(MAC.lower())
    for sub in ("input", "hidraw", "power_supply", "leds"):
        try:
            sc.note("  %s: %s" % (sub, sorted(os.listdir(os.path.join(hid, sub)))))
        except OSError:
            sc.note("  %s: none" % sub)
    for path in (imu, node):
        if path is None:
            continue
        dev = evdev.InputDevice(path)
        caps = dev.capabilities(absinfo=True)
        sc.note("node %s: name %r phys %r uniq %r info %s props %s" % (path, dev.name, dev.phys, dev.uniq, dev.info,
                                                                         dev.input_props()))
        sc.note("  keys %s" % [e.BTN.get(c, e.KEY.get(c, c)) for c in caps.get(e.EV_KEY, [])])
        for code, info in caps.get(e.EV_ABS, []):
            sc.note("  %s %s" % (e.ABS[code], info))
        if path == node:
            sc.check(dev.uniq == MAC.upper() and (dev.info.bustype, dev.info.vendor, dev.info.product) == (5, 0x057E, 0x2009)
                     and dev.info.version & 0x8000, "the gamepad node: Bluetooth 057e:2009, version | 0x8000, uniq the MAC",
                     (dev.uniq, dev.info))
            absinfo = dict(caps.get(e.EV_ABS, []))
            sc.check(e.ABS_X in absinfo and (absinfo[e.ABS_X].min, absinfo[e.ABS_X].max) == (-32767, 32767)
                     and {e.BTN_START, e.BTN_TR, e.BTN_TL} <= set(caps.get(e.EV_KEY, [])),
                     "ABS_X -32767..32767, BTN_START (+), BTN_TR (R), BTN_TL (L)", absinfo.get(e.ABS_X))
        dev.close()
    sc.note("subcommands: %s" % ["%02x %s" % (c, a[:5].hex()) for _, c, a in pad.subcommands])

    picked = k.wait_until(lambda: cb.log_lines(r'gamepad: ".*" \(%s\) picked' % re.escape(node), t_create - 0.5), 10)
    sc.require(bool(picked), "carbridge picks the controller's gamepad node", cb.log_lines(None, t_create)[-5:])
    sc.metric("picked_after_node", (picked[0][0] - t_node) * 1000.0, "ms")
    sc.check(not (imu and cb.has_open(imu)), "and leaves its IMU node alone (no accelerometer configured)")
    time.sleep(0.3)

    # ---- drive
    probe = StallProbe()
    sc.cleanups.append(probe.stop)
    t0 = monotonic()
    t_engine = pad.tap("PLUS")
    on = status(r"^engine on", t_engine, 3.0)
    sc.check(on is not None, "+ turns the engine on (STATUS=)")
    t_up1 = pad.tap("R")
    status(r"speed 10 forward", t_up1, 3.0)
    t_up2 = pad.tap("R")
    status(r"speed 20 forward", t_up2, 3.0)
    t_right = pad.left_stick(1.0)
    hangup = uhid.HangupWatch(node)
    sc.cleanups.append(hangup.close)
    time.sleep(GAP_S)      # the steering is not in STATUS=: a few stream periods
    t_drop = pad.destroy()
    sc.metric("destroy_write_took", (monotonic() - t_drop) * 1000.0, "ms")
    lost = k.wait_until(lambda: cb.log_lines(r'gamepad .* lost', t_drop - 0.1), 5)
    if lost:
        sc.metric("loss_logged_after_destroy", (lost[0][0] - t_drop) * 1000.0, "ms")
    stop = car.wait_frame(lambda f: f.motion and f.s == 0, t_drop, 3.0)
    t_hangup = hangup.wait(2.0)
    if t_hangup is not None:
        sc.metric("node_hung_up_after_destroy", (t_hangup - t_drop) * 1000.0, "ms")
    time.sleep(1.0)
    frames = [f for f in car.frames() if f.t > t0]
    sc.dump_frames(frames)
    sc.note("writes: + %.3f, R %.3f, R %.3f, stick %.3f, destroy %.3f" % (t_engine, t_up1, t_up2, t_right, t_drop))
    before = [f for f in frames if f.t < t_drop]
    sc.check(k.dedup(before) == ["M,0,10,1", "M,0,20,1", "R,2,20,1"], "exact frames: + R R stick -> M,0,10,1 M,0,20,1 R,2,20,1",
             k.dedup(before))
    r1 = next((f for f in frames if f.t >= t_up1), None)
    if r1 is not None:
        sc.metric("speed_up_to_frame", (r1.t - t_up1) * 1000.0, "ms")
    sc.check(stop is not None, "the controller disconnects (UHID_DESTROY) while moving -> a stop frame (S=0)",
             [f.text for f in frames if f.t >= t_drop][:5])
    if stop is not None:
        sc.note("the stop frame: %s" % stop.text)
        ms = (stop.t - t_drop) * 1000.0
        sc.metric("stop_after_destroy", ms, "ms")
        sc.metric("guest_unscheduled_before_stop_after_destroy", probe.unscheduled(t_drop, stop.t) * 1000.0, "ms")
        # hid-nintendo's remove destroys its rumble workqueue and stops the HID device first; its input devices
        # (devm) are unregistered only after that, so readers learn of the loss 20-100 ms after UHID_DESTROY
        # under TCG. The bound is on carbridge's part: from the hang-up, less the time the guest did not run.
        sc.check(t_hangup is not None, "the kernel hangs up the gamepad node", t_hangup)
        if t_hangup is not None:
            after = (stop.t - t_hangup) * 1000.0
            idle = probe.unscheduled(t_hangup, stop.t) * 1000.0
            sc.metric("stop_after_node_hung_up", after, "ms")
            sc.check(after - idle <= STOP_BOUND_MS, "the stop frame within %.0f ms of the kernel hanging up the node, less "
                     "the time the guest did not run" % STOP_BOUND_MS,
                     "%.1f ms, of which the guest did not run %.1f ms (%.1f ms after UHID_DESTROY)" % (after, idle, ms))
        sc.check(not [f for f in frames if f.t > stop.t and f.s > 0], "nothing with S > 0 after it",
                 [f.text for f in frames if f.t > stop.t][:5])
    probe.stop()
    sc.check(bool(lost), "carbridge logs the controller lost", cb.log_lines(None, t_drop)[-3:])
    if lost:
        sc.note("carbridge: %s" % lost[0][1])
    sc.check(cb.alive(), "carbridge keeps running")
    t_term = monotonic()
    code = cb.stop(signal.SIGTERM, 5)
    time.sleep(0.3)
    sc.check(code == 0, "exit 0 on SIGTERM", code)
    last = [f for f in car.frames() if f.t >= t_term]
    sc.check(bool(last) and last[-1].text == "E,0,0,0", "E,0,0,0 last", k.dedup(last))
    sc.check(not pad.dev.errors, "the emulated controller answered every request without an error", pad.dev.errors)

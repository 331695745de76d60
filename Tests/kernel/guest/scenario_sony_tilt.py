#!/usr/bin/python3
"""Scenario sony_tilt: steering by a DualSense's or DualShock 4's own "Motion Sensors" node, made by the kernel's
hid-playstation or hid-sony from a device emulated on /dev/uhid (guest/hid_devices.py), with
`[devices] accelerometer = "auto"` while another accelerometer (a uinput motion sensor, as a laptop's) was
there first. The drivers make a pad's nodes in different orders (hid-playstation: the pad, then its motion
sensors, then its touchpad; hid-sony: touchpad, motion sensors, then the pad): carbridge must steer by the
pad's own sensors either way, and the other sensor, tilted the other way meanwhile, must not steer. Then the
pad goes (UHID_DESTROY) -> the stop frame. While the DualShock 4 steers, a DualSense comes on USB whose
answer to hid-playstation's pairing-info request fails ("Failed to retrieve DualSense pairing info"): the
driver refuses it and it makes no node; carbridge names it, gives the kernel's reason, and steers on.

Before issue 40, `auto` kept the first accelerometer it saw (the laptop's), so the pad's tilt never steered,
and a refused pad went unmentioned (run against that build, both checks failed).

Run by scenarios.py (its __main__ loads scenario_NAME.py for the names it is given).
"""
import os, re, signal, time
from kharness import monotonic
import kharness as k
import hid_devices as h
from scenario_sony_pads import PORT, GAP_S, HOTPLUG_S, start_run, plug, first_after, stop_after, load_drivers

TITLE = "tilt from a DualSense's / DualShock 4's own Motion Sensors (real drivers on uhid) over another accelerometer; a DS4 the driver refuses"


def tilt_config(port):
    return k.base_config(None, steering="tilt", accelerometer="auto", gamepad="auto",
                         url="tcp://127.0.0.1:%d" % port).replace('tilt_axes = "x,z"', 'tilt_axes = "x,y"')


def tilt_model(sc, index, label, model, mac, roll, expected, refused=None, battery_low=False):
    """Steering by the pad's own Motion Sensors with `accelerometer = "auto"` while another accelerometer (a
    uinput motion sensor, as a laptop's) is there first: the pad's own must steer, whichever of its nodes the
    driver made first (hid-playstation: the pad, then its sensors; hid-sony: the sensors, then the pad)."""
    port = PORT + index
    foreign = k.MotionSensor(name="Laptop Motion Sensor")
    sc.cleanups.append(foreign.close)
    car, cb = start_run(sc, label, port, tilt_config(port))
    picked_foreign = k.wait_until(lambda: cb.log_lines(r'accelerometer: "Laptop Motion Sensor"'), HOTPLUG_S)
    sc.check(bool(picked_foreign), "%s: with no pad yet, `auto` takes the other accelerometer" % label)
    pad = h.SonyPad(model, mac)
    if battery_low:
        pad.dev.battery.capacity = 10          # the report's nibble 1: hid-playstation makes it 15 %
        pad.dev.battery.cable_connected = False   # discharging
    sc.cleanups.append(pad.destroy)
    sc.cleanups.append(lambda: sc.note("%s pad actions: %s" % (label, ["%.3f %s" % a for a in pad.actions])))
    t_plug = monotonic()
    nodes = plug(sc, cb, pad, label)
    if battery_low:
        warned = k.wait_until(lambda: cb.log_lines(r"pad battery low.*15 %", t_plug - 0.5), 10.0)
        sc.check(bool(warned), "%s: a pad about to die (15 %%, discharging) is a warning in the log" % label,
                 [l for _, l in cb.log_lines(r"battery", t_plug - 0.5)][-3:])
    own = k.wait_until(lambda: cb.log_lines(r'accelerometer: ".*Motion Sensors" \(%s\) picked' % re.escape(nodes["motion"])), HOTPLUG_S)
    sc.check(bool(own), "%s: carbridge steers by the pad's own Motion Sensors (%s), not the other accelerometer"
             % (label, nodes["motion"]), [l for _, l in cb.log_lines(r"accelerometer")][-3:])
    time.sleep(GAP_S)
    pad.press(h.OPTIONS, "Options: engine on")
    time.sleep(GAP_S)
    pad.press(h.R1, "Speed+")
    time.sleep(GAP_S)
    foreign.roll(-60)   # the other sensor tilts the other way: it must not steer
    t_roll = pad.tilt(roll, "roll %d" % roll)
    time.sleep(2 * GAP_S)
    t_back = None
    if refused is not None:
        t_back = refuse(sc, cb, pad, refused)
    pad.watch_removal(nodes["pad"])
    t_destroy = pad.destroy()
    k.wait_until(lambda: pad.removed_at, 3.0)
    time.sleep(GAP_S)
    status = cb.stop(signal.SIGTERM, 5)
    sc.check(status == 0, "%s: SIGTERM -> exit status 0" % label, "status %s" % status)
    car.stop()
    time.sleep(0.3)
    frames = car.frames()
    sc.dump_frames(frames, "%s: frames received by the car" % label)
    got = first_after(car, expected, t_roll)
    sc.check(got is not None and got.t < t_destroy, "%s: the pad rolled %d degrees -> %s" % (label, roll, expected),
             sorted(set(f.text for f in frames if f.t >= t_roll))[:6])
    if t_back is not None:
        back = first_after(car, "M,0,10,1", t_back)
        sc.check(back is not None and back.t < t_destroy,
                 "%s: carbridge drives on with the pad it has: level again -> M,0,10,1" % label,
                 sorted(set(f.text for f in frames if f.t >= t_back))[:6])
    stop = stop_after(car, t_destroy)
    sc.check(stop is not None, "%s: the pad (and its sensors) gone -> the stop frame" % label)
    if stop is not None and pad.removed_at:
        sc.metric("%s_stop_after_node_hangup" % label, (stop.t - pad.removed_at) * 1000.0, "ms")
    foreign.close()


def refuse(sc, cb, pad, mac):
    """While `pad` steers: a DualSense on USB that hid-playstation refuses (its pairing-info feature report
    fails) makes no input node; carbridge names it and why (as root it reads the kernel log), and goes on
    steering with `pad`. Returns when the pad was levelled again."""
    refused = h.SonyPad(h.refusing(h.DualSenseUSB, 0x09), mac)
    sc.cleanups.append(refused.destroy)
    t = refused.create()
    said = k.wait_until(lambda: cb.log_lines(r"no kernel driver took .*%s" % re.escape(mac), t - 0.5), 20.0)
    hid = refused._hid_dir()
    sc.note("refused DS4: HID device %s, driver %s, nodes %s" % (
        hid, os.path.realpath(hid + "/driver") if hid and os.path.exists(hid + "/driver") else "none", refused.nodes()))
    sc.check(bool(said) and "054c:0ce6" in said[0][1] and "USB" in said[0][1],
             "a DualSense its driver refuses: carbridge names it (054c:0ce6, USB, its serial)",
             said[0][1] if said else [l for _, l in cb.log_lines(since=t - 0.5)][-4:])
    sc.check(bool(said) and "the kernel said" in said[0][1] and "pairing info" in said[0][1],
             "and says why, in the kernel's words (hid-playstation: its pairing info)", said[0][1] if said else "")
    t_back = pad.tilt(0, "level again")
    time.sleep(2 * GAP_S)
    refused.destroy()
    return t_back


def run(sc):
    load_drivers(sc)
    tilt_model(sc, 10, "tilt_dualsense_bt", h.DualSenseBluetooth, "a0:ab:51:00:00:04", 30, "R,1,10,1", battery_low=True)
    tilt_model(sc, 11, "tilt_ds4_usb", h.DualShock4USB, "a0:ab:51:00:00:05", -70, "L,-2,10,1", refused="a0:ab:51:00:00:09")

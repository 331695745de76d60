#!/usr/bin/python3
"""Scenario generic_pad: a generic DragonRise pad drives with the default config (issue 19).

A cheap USB pad goes through hid-generic and reports BTN_TRIGGER ... BTN_BASE6 and axes X Y Z RX RZ
plus a hat, none of which the default [buttons] table names. This uinput pad looks like one
(0079:0006, version 0x0110, the name the kernel gives it); the config has no [buttons] table.
carbridge must find the pad in the built-in GameControllerDB (SDL's GUID; the DB's line is for
version 0x0107, reached as SDL does without the version), say so in its log, and drive: start
(BTN_BASE4) = engine, right shoulder (BTN_PINKIE) = Speed+, left shoulder (BTN_TOP2) = Speed-,
y/north (BTN_TRIGGER) = gear, the left stick (ABS_X, 0..255) steers. Before the layouts, no button
did anything: the car got only the handshake.

Run by scenarios.py (its __main__ loads scenario_NAME.py for the names it is given).
"""
import re, time
from evdev import AbsInfo, UInput, ecodes as e
import kharness as k
from kharness import dedup, monotonic
from scenarios import start_car, start_bridge, wait_pad_ready, HOTPLUG_S

TITLE = "generic DragonRise pad (hid-generic codes, 0079:0006) drives with no [buttons] table (GameControllerDB layout)"
GAP_S = 0.3
NAME = "DragonRise Inc.   Generic   USB  Joystick  "
BTN_TRIGGER, BTN_TOP2, BTN_PINKIE, BTN_BASE4 = 0x120, 0x124, 0x125, 0x129


class DragonRisePad(k.Pad):
    """The pad as hid-generic makes it: 12 buttons 0x120..0x12b, byte axes, a -1..1 hat."""

    def __init__(self):
        axis = AbsInfo(value=127, min=0, max=255, fuzz=0, flat=15, resolution=0)
        hat = AbsInfo(value=0, min=-1, max=1, fuzz=0, flat=0, resolution=0)
        caps = {
            e.EV_KEY: list(range(0x120, 0x12c)),
            e.EV_ABS: [(e.ABS_X, axis), (e.ABS_Y, axis), (e.ABS_Z, axis), (e.ABS_RX, axis), (e.ABS_RZ, axis),
                       (e.ABS_HAT0X, hat), (e.ABS_HAT0Y, hat)],
        }
        self.ui = UInput(caps, name=NAME, vendor=0x0079, product=0x0006, version=0x0110, bustype=e.BUS_USB)
        self.node = self.ui.device.path
        self.actions = []


def run(sc):
    car = start_car(sc)
    config = k.base_config(car.addr, gamepad="0079:0006")
    config = config[:config.index("\n[buttons]")] + "\n"   # the default table: no [buttons] of our own
    sc.check("[buttons]" not in config, "the config has no [buttons] table")
    cb = start_bridge(sc, car, config)
    pad = DragonRisePad()
    sc.cleanups.append(pad.close)
    sc.cleanups.append(lambda: sc.note("pad actions (time, what): %s" % ["%.3f %s" % a for a in pad.actions]))
    t = monotonic()
    sc.require(k.wait_until(lambda: cb.has_open(pad.node), HOTPLUG_S), "carbridge opens the DragonRise pad %s" % pad.node)
    wait_pad_ready(sc, cb, pad, t)
    # The layout is logged just after "picked" (0.43 s later in the second run: the debug binary's DB lookup
    # under TCG), so wait for it; the first presses below are only read after it anyway (same loop).
    layout = k.wait_until(lambda: cb.log_lines(r"standard layout from the built-in GameControllerDB", t - 0.5), 5)
    sc.check(bool(layout), "carbridge logs the pad's layout from the built-in GameControllerDB")

    pad.press(BTN_BASE4, "start: engine on"); time.sleep(GAP_S)
    pad.press(BTN_PINKIE, "right shoulder: speed+"); time.sleep(GAP_S)
    pad.press(BTN_PINKIE, "right shoulder: speed+"); time.sleep(GAP_S)
    pad.axis(e.ABS_X, 255, "stick right"); time.sleep(GAP_S)
    pad.press(BTN_TRIGGER, "y (north): gear"); time.sleep(GAP_S)
    pad.press(BTN_TOP2, "left shoulder: speed-"); time.sleep(GAP_S)
    pad.press(BTN_TOP2, "left shoulder: speed-"); time.sleep(GAP_S)
    pad.press(BTN_BASE4, "start: engine off")
    time.sleep(0.6)
    frames = car.log.frames(conn=cb.conn)[1:]
    sc.dump_frames(frames, "the car, after the handshake")
    want = ["M,0,10,1", "M,0,20,1", "R,2,20,1", "Y,2,20,0", "Y,2,10,0", "Y,2,0,0", "E,0,0,0"]
    got = dedup(frames)
    sc.check(got == want, "the DragonRise pad drives with the default buttons: exactly %s" % want, "got %s" % got)
    sc.check(cb.alive(), "carbridge still running")

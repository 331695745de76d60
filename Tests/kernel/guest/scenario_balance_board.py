#!/usr/bin/python3
"""Scenario balance_board: hands-free on a balance board, driving a TCP car.

The kernel's hid-wiimote driver makes a Wii Balance Board an evdev device named "Nintendo Wii Remote
Balance Board" (bus Bluetooth, 057e:0306) with BTN_A and four load cells on ABS_HAT0X (top right),
ABS_HAT0Y (bottom right), ABS_HAT1X (top left) and ABS_HAT1Y (bottom left), 0..65535 (fuzz 2, flat 4)
in units of 10 g. This scenario makes a uinput device with that name, those IDs and those axes (after
carbridge started: hotplug) and rides it: step on (60 kg, centred) and stand still -> armed after
arm_after_s (the engine goes on; nothing is sent) -> lean forward a little (M,0,10,1) and more
(M,0,120,1) -> lean left (L,-1,120,1) -> step off at speed -> the stop frame within 100 ms ->
E,0,0,0 engine_off_after_s later. Nobody presses anything.

Run by scenarios.py (its __main__ loads scenario_NAME.py for the names it is given).
"""
import os, signal, subprocess, time
from evdev import UInput, AbsInfo, ecodes as e
import kharness as k
from kharness import Carbridge, monotonic

TITLE = "hands-free balance board (uinput as hid-wiimote makes it) drives a TCP car: arm, lean, steer, step off -> stop"
PORT = 47016
BOARD_NAME = "Nintendo Wii Remote Balance Board"
ARM_S = 2.0
ENGINE_OFF_S = 2.0


class Board:
    """A uinput balance board with hid-wiimote's name, IDs and axes."""

    CELLS = (e.ABS_HAT0X, e.ABS_HAT0Y, e.ABS_HAT1X, e.ABS_HAT1Y)   # TR, BR, TL, BL

    def __init__(self):
        cell = AbsInfo(value=0, min=0, max=65535, fuzz=2, flat=4, resolution=0)
        caps = {e.EV_KEY: [e.BTN_A], e.EV_ABS: [(code, cell) for code in self.CELLS]}
        self.ui = UInput(caps, name=BOARD_NAME, vendor=0x057E, product=0x0306, version=0x8000, bustype=0x05)
        self.node = self.ui.device.path

    def stand(self, kilograms, x=0.0, y=0.0):
        """Cells (10 g units) for `kilograms` with the centre of pressure at (x, y); returns the SYN's time."""
        w = kilograms * 100.0
        values = (w * (1 + x + y) / 4, w * (1 + x - y) / 4, w * (1 - x + y) / 4, w * (1 - x - y) / 4)
        for code, value in zip(self.CELLS, values):
            self.ui.write(e.EV_ABS, code, int(round(value)))
        t = monotonic()
        self.ui.syn()
        return t

    def close(self):
        if self.ui is not None:
            self.ui.close()
            self.ui = None




CONFIG = """[link]
url = "tcp://127.0.0.1:%d"

[drive]
period_ms = 50
max_speed = 240
on_input_lost = "stop"
hysteresis_deg = 2.0

[devices]
gamepad = "none"
board = "auto"

[steering]
source = "board"

[throttle]
source = "board"

[board]
min_weight_kg = 20
weight_hysteresis_kg = 5
deadzone = 0.1
full_scale = 0.5

[handsfree]
arm_after_s = %s
engine_off_after_s = %s
""" % (PORT, ARM_S, ENGINE_OFF_S)


def run(sc):
    car = k.TcpCar(os.path.join(sc.work, "car.log"), PORT)
    sc.require(car.start(), "the TCP car (Tests/kernel/build/tcpcar) listens on 127.0.0.1:%d" % PORT)
    sc.cleanups.append(car.stop)
    cb = Carbridge(sc.work, CONFIG)
    cb.start()
    sc.cleanups.append(lambda: cb.stop(signal.SIGTERM, 3))
    k.wait_until(lambda: car.connected() or not cb.alive(), 45)
    sc.require(car.connected(), "carbridge connects to the TCP car", "exit status %s" % (cb.proc.poll(),))
    first = car.wait_frame(lambda f: True, 0, 5.0)
    sc.check(first is not None and first.text == "E,0,0,0", "handshake E,0,0,0 first", first.text if first else "nothing")

    board = Board()
    sc.cleanups.append(board.close)
    sc.require(bool(k.wait_until(lambda: cb.has_open(board.node), 10)), "carbridge opens the hotplugged board %s" % board.node)
    devices = subprocess.run([k.CARBRIDGE, "devices", "--config", cb.config_path], capture_output=True, text=True, timeout=60)
    sc.note("carbridge devices (exit %s):\n%s%s" % (devices.returncode, devices.stdout, devices.stderr))
    line = next((l for l in devices.stdout.split("\n") if board.node in l), "")
    sc.check("balanceBoard" in line, "`carbridge devices` classifies it as balanceBoard", line)

    # The ride. tcpcar writes its RX lines only after 200 ms without input (or at exit), so the frames
    # are checked after the ride, with their receive times (CLOCK_MONOTONIC, as our write stamps).
    t_on = board.stand(60)
    time.sleep(0.5)
    board.stand(60.2, 0.01, -0.01)   # a still rider sways inside the dead zone
    time.sleep(ARM_S + 0.5)
    t_small = board.stand(60, 0.0, 0.105)
    time.sleep(0.4)
    t_lean = board.stand(60, 0.0, 0.3)
    time.sleep(0.4)
    t_left = board.stand(60, -0.3, 0.3)
    time.sleep(0.4)
    t_off = board.stand(0.5, 0.0, 0.0)
    off = car.wait_frame(lambda f: f.text == "E,0,0,0", t_off, ENGINE_OFF_S + 5.0)
    time.sleep(0.5)
    frames = [f for f in car.frames() if f.t > t_on]
    sc.dump_frames(frames)
    sc.note("writes: on %.3f, small lean %.3f, lean %.3f, left %.3f, off %.3f" % (t_on, t_small, t_lean, t_left, t_off))
    sc.check(not [f for f in frames if f.t < t_small], "stepping on and standing still sends nothing (engine on is silent)",
             [f.text for f in frames if f.t < t_small])
    small = next((f for f in frames if f.t >= t_small), None)
    sc.check(small is not None and small.text == "M,0,10,1" and small.t < t_lean,
             "armed after %.0f s still: a small lean forward gives M,0,10,1" % ARM_S, small.text if small else "nothing")
    stop = next((f for f in frames if f.t >= t_off and f.motion and f.s == 0), None)
    sc.check(stop is not None and stop.text == "L,-1,0,1", "stepping off at speed sends the stop frame", stop.text if stop else "nothing")
    if stop is not None:
        after = (stop.t - t_off) * 1000.0
        sc.metric("stop_after_step_off", after, "ms")
        sc.check(after <= 100.0, "the stop frame within 100 ms of stepping off", "%.1f ms" % after)
    # Frames already on their way when the board's report was written arrive a little after t_off: the
    # rule is about what follows the stop frame.
    sc.check(stop is not None and not [f for f in frames if f.t > stop.t and f.s > 0], "nothing with S > 0 after the stop frame",
             [f.text for f in frames if stop is not None and f.t > stop.t])
    sc.check(off is not None, "E,0,0,0 after engine_off_after_s")
    if off is not None:
        sc.check(abs(off.t - t_off - ENGINE_OFF_S) < 0.5, "... %.0f s after stepping off" % ENGINE_OFF_S,
                 "%.3f s" % (off.t - t_off))
    sc.check(k.dedup(frames) == ["M,0,10,1", "M,0,120,1", "L,-1,120,1", "L,-1,0,1", "M,0,0,1", "E,0,0,0"],
             "exact frames: lean 10, lean 120, left, stop, the empty board centres the wheel, engine off", k.dedup(frames))
    sc.check(cb.alive(), "carbridge kept running")

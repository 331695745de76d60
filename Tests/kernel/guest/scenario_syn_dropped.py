#!/usr/bin/python3
"""Scenario syn_dropped: the kernel drops a pad's events (SYN_DROPPED) while carbridge is stopped; resumed, carbridge
takes the pad's state from the kernel (EVIOCGKEY, EVIOCGABS), so a button pressed in the dropped part counts.

carbridge reads its pads raw and, after SYN_DROPPED, discards up to the next SYN_REPORT and asks the kernel for
the keys down and the axes (EvdevDevice.kernelState). Here: engine on and Speed+ (S=10); carbridge is stopped
(SIGSTOP); Speed+ is pressed and held, then 2,000 stick reports overflow the evdev client buffer, so the press is
among the dropped events; carbridge is continued. Without the kernel's state the assembler would release every
key it knew (none) and the press would be lost: S would stay 10. A second reader of the same node, never read
during the flood, shows that its buffer overflowed (SYN_DROPPED).

Run by scenarios.py (its __main__ loads scenario_NAME.py for the names it is given).
"""
import signal, time
from evdev import InputDevice, ecodes as e
import kharness as k
from kharness import monotonic
from scenarios import GAP_S, plug_pad, proc_stat, start_bridge, start_car

TITLE = "SYN_DROPPED while carbridge is stopped: a Speed+ press in the dropped events still counts (the kernel's state)"
FLOOD_REPORTS = 2000


def process_state(pid):
    return proc_stat(pid)[0]


def run(sc):
    car = start_car(sc)
    cb = start_bridge(sc, car, k.base_config(car.addr))
    pad = plug_pad(sc, cb)
    witness = InputDevice(pad.node)   # a second client of the node: its buffer is the same size as carbridge's
    sc.cleanups.append(witness.close)
    pad.press(e.BTN_START, "engine on"); time.sleep(GAP_S)
    t = pad.press(e.BTN_TR, "speed+")
    sc.require(car.log.wait_frame(lambda f: f.text == "M,0,10,1", t, 2.0) is not None, "moving at S=10 before the stop")
    while witness.read_one() is not None:   # the witness starts empty
        pass

    cb.send_signal(signal.SIGSTOP)
    sc.require(k.wait_until(lambda: process_state(cb.proc.pid) == "T", 5.0), "carbridge is stopped (SIGSTOP)")
    pad.ui.write(e.EV_KEY, e.BTN_TR, 1)      # Speed+ down, held ...
    pad.ui.syn()
    for i in range(FLOOD_REPORTS):           # ... then the stick, inside its dead zone, until the buffers overflow
        pad.ui.write(e.EV_ABS, e.ABS_X, 40 if i % 2 else -40)
        pad.ui.syn()
    dropped = False
    while True:
        event = witness.read_one()
        if event is None:
            break
        dropped = dropped or (event.type == e.EV_SYN and event.code == e.SYN_DROPPED)
    sc.require(dropped, "the flood overflowed an evdev client buffer (the witness read SYN_DROPPED)")

    t = cb.send_signal(signal.SIGCONT)
    fr = car.log.wait_frame(lambda f: f.motion and f.s >= 20, t, 3.0)
    sc.check(fr is not None, "after SIGCONT the held Speed+ counts: a frame with S >= 20 (the kernel's key state)",
             [f.text for f in car.log.frames(t)][:5])
    if fr is not None:
        sc.metric("resync_frame_after_sigcont", (fr.t - t) * 1000.0, "ms")
    pad.ui.write(e.EV_KEY, e.BTN_TR, 0)
    pad.ui.syn()
    time.sleep(GAP_S)
    t = pad.press(e.BTN_START, "engine off")
    sc.check(car.log.wait_frame(lambda f: f.text == "E,0,0,0", t, 2.0) is not None,
             "the pad still drives after the resync: Engine off -> E,0,0,0")
    sc.check(cb.alive(), "carbridge keeps running")

#!/usr/bin/python3
"""The carbridge kernel scenarios, run one at a time: scenarios.py N (a number of TITLES below) or scenarios.py
NAME (guest/scenario_NAME.py, a scenario kept in a file of its own, named after what it tests).

Each scenario checks many things and writes exactly one PASS/FAIL line (the first failed checks
are named in it), timing figures as METRIC lines, and keeps its logs in $R/s<N>/ (or $R/<NAME>/):
detail.log (every check), carbridge.log, car.log (every line the car received, CLOCK_MONOTONIC
stamped), carbridge.toml. The car is hci1 ("RoboCar", channel 1); carbridge uses hci0.
"""
import grp, os, re, signal, subprocess, sys, time, traceback
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from evdev import ecodes as e
import kharness as k
from kharness import Abort, Car, Carbridge, MotionSensor, Pad, Scenario, StubAccelerometer, TcpCarLog, console, dedup, monotonic

FLUSH_DONE_AFTER_SIGTERM_S = 0.5   # SIGTERM -> "shutdown: E,0,0,0 delivered" (measured 60-70 ms)
EXIT_AFTER_SIGTERM_S = 1.0         # SIGTERM -> exit; a flush that waits out its 1 s window alone takes longer
RELAXED_PAUSE_S = 22.0       # scenario 10: how long the car does not read
GAP_S = 0.25          # time between driver actions: several 50 ms stream periods
HOTPLUG_S = 8.0       # how long carbridge may take to open a hotplugged device


def start_car(sc, status_every_s=0.0, **options):
    car = Car(os.path.join(sc.work, "car.log"), status_every_s, **options)
    sc.require(car.addr is not None, "hci1 (the car's controller) has an address")
    sc.require(car.start(), "car RFCOMM server listening on hci1 channel 1")
    sc.cleanups.append(car.stop)
    return car


HANDSHAKE_MS = 100.0          # after a reconnect the stop frame must arrive this soon after the car accepted
FIRST_HANDSHAKE_MS = None     # the first connection of a just-started carbridge: only reported (17-440 ms
                              # measured, 1-1.5 s with the host's load average at 11-14): its first RFCOMM
                              # session and first-time code paths under TCG are too load-dependent to bound


def check_handshake(sc, car, accepted, conn, want, what, metric=None, bound_ms=HANDSHAKE_MS):
    """Safety handshake (protocol 6): the first line the car receives on connection `conn` (accepted at
    `accepted`) is `want` (E,0,0,0 with the engine off, the stop frame with it on), within bound_ms."""
    first = car.log.wait_frame(lambda f: True, 0, 5.0, conn=conn)
    sc.check(first is not None and first.text == want,
             "handshake: the first line on %s is %s" % (what, want), first.text if first else "nothing within 5 s")
    if first is not None:
        latency = (first.t - accepted) * 1000.0
        if metric:
            sc.metric(metric, latency, "ms")
        if bound_ms is not None:
            sc.check(latency <= bound_ms, "handshake %s arrives within %.0f ms of the car accepting %s"
                     % (want, bound_ms, what), "%.1f ms" % latency)
    return first


def start_bridge(sc, car, config, user=None):
    """Starts carbridge, waits for its connection and checks the handshake E,0,0,0 on it."""
    cb = Carbridge(sc.work, config, user=user)
    since = monotonic()
    try:
        cb.start()
    except (OSError, RuntimeError) as error:
        sc.require(False, "carbridge starts", error)
    sc.cleanups.append(lambda: cb.stop(signal.SIGTERM, 3))
    # Starting the debug binary from the 9p share under TCG takes 3-6 s, and once 15.5 s with the host's
    # other builds running: the 15 s limit counts from carbridge's first log line, not from exec.
    connected = k.wait_until(lambda: car.log.connections(since) or not cb.alive(), 45)
    sc.require(cb.alive(), "carbridge keeps running after start", "exit status %s" % (cb.proc.poll(),))
    sc.require(bool(car.log.connections(since)), "carbridge connects to the car over RFCOMM within 45 s of exec")
    accepted, cb.conn = car.log.connections(since)[0]
    first = cb.log_lines(None, since - 1.0)
    sc.metric("connect_after_start", (accepted - since) * 1000.0, "ms")
    if first:
        sc.metric("first_log_line_after_exec", (first[0][0] - since) * 1000.0, "ms")
        sc.check(accepted - first[0][0] <= 15.0, "carbridge connects to the car within 15 s of its first log line",
                 "%.1f s" % (accepted - first[0][0]))
    cb.handshake = check_handshake(sc, car, accepted, cb.conn, "E,0,0,0", "the first connection (engine off)",
                                   "handshake_after_connect", FIRST_HANDSHAKE_MS)
    return cb


def wait_pad_ready(sc, cb, pad, since):
    """Waits until carbridge reads the pad: its fd shows in /proc/PID/fd as soon as open(2) returns,
    before libevdev has taken the device's state and the fd is on the event loop, and a button press
    in that window can be lost (seen in about 1 of 3 scenarios under load). carbridge logs
    'gamepad: "NAME" (NODE) picked by ...' once it reads the device."""
    picked = k.wait_until(lambda: cb.log_lines(r'gamepad: ".*" \(%s\) picked' % re.escape(pad.node), since - 0.5), HOTPLUG_S)
    sc.require(bool(picked), "carbridge logs that it picked the pad %s" % pad.node)
    sc.note("pad %s picked at %.3f (carbridge's log)" % (pad.node, picked[0][0]))
    time.sleep(0.05)


def plug_pad(sc, cb, what="pad"):
    pad = Pad()
    sc.cleanups.append(pad.close)
    sc.cleanups.append(lambda: sc.note("%s actions (time, what): %s" % (what, ["%.3f %s" % a for a in pad.actions])))
    t = monotonic()
    opened = k.wait_until(lambda: cb.has_open(pad.node), HOTPLUG_S)
    sc.require(opened, "carbridge opens the hotplugged %s (%s) within %.0f s" % (what, pad.node, HOTPLUG_S))
    sc.metric("%s_hotplug_open" % what.replace(" ", "_"), (monotonic() - t) * 1000.0, "ms")
    wait_pad_ready(sc, cb, pad, t)
    return pad


def latencies(sc, car, actions_expected):
    """uinput write -> car receipt, for each (write time, expected frame text)."""
    out = []
    for t, text in actions_expected:
        fr = next((f for f in car.log.frames(t) if f.text == text), None)
        if fr is not None:
            out.append((fr.t - t) * 1000.0)
    if out:
        sc.metric("input_to_car_latency_p50", k.percentile(out, 50), "ms")
        sc.metric("input_to_car_latency_max", max(out), "ms")
        sc.note("input->car latencies (ms): " + ", ".join("%.1f" % v for v in out))
    return out


# ------------------------------------------------------------------------------------------------
def scenario_1(sc):
    """Gamepad drive over RFCOMM, pad hotplugged after start: exact frames in order, 50 ms stream."""
    car = start_car(sc, status_every_s=1.0)
    cb = start_bridge(sc, car, k.base_config(car.addr))
    pad = plug_pad(sc, cb)
    t_begin = monotonic()
    time.sleep(GAP_S)
    expect = []   # (write time, frame text the action must produce)
    pad.press(e.BTN_START, "engine on"); time.sleep(GAP_S)
    for s in (10, 20, 30, 40):
        expect.append((pad.press(e.BTN_TR, "speed+"), "M,0,%d,1" % s)); time.sleep(GAP_S)
    expect.append((pad.axis(e.ABS_X, 32767, "steer right hard"), "R,2,40,1")); time.sleep(GAP_S)
    expect.append((pad.press(e.BTN_NORTH, "gear"), "Y,2,40,0")); time.sleep(GAP_S)
    expect.append((pad.press(e.BTN_EAST, "F2"), "G,2,40,0")); time.sleep(GAP_S)
    for s in (30, 20, 10, 0):
        expect.append((pad.press(e.BTN_TL, "speed-"), "Y,2,%d,0" % s)); time.sleep(GAP_S)
    expect.append((pad.press(e.BTN_START, "engine off"), "E,0,0,0"))
    time.sleep(0.6)
    t_end = monotonic()
    everything = car.log.frames()
    sc.dump_frames(everything, "every line the car received")
    sc.check(len(set(f.conn for f in everything)) == 1, "one connection throughout", sorted(set(f.conn for f in everything)))
    sc.require(everything and everything[0].text == "E,0,0,0", "the handshake E,0,0,0 is the first line")
    frames = everything[1:]   # what the driving produced, after the handshake
    sc.check(cb.alive(), "carbridge still running (the car's STATUS lines did not upset it)")
    sc.check(all(f.valid for f in frames), "every received line is a well-formed T,A,S,D frame",
             [f.text for f in frames if not f.valid][:3])
    want = ["M,0,10,1", "M,0,20,1", "M,0,30,1", "M,0,40,1", "R,2,40,1", "Y,2,40,0", "G,2,40,0", "Y,2,40,0",
            "Y,2,30,0", "Y,2,20,0", "Y,2,10,0", "Y,2,0,0", "E,0,0,0"]
    got = dedup(frames)
    sc.check(got == want, "the car receives exactly the spec's frames in order (repeats = streaming)",
             "got %s" % got)
    sc.check(not [f for f in frames if f.t < pad.actions[0][0]], "nothing but the handshake is sent before Engine on")
    sc.check([f.text for f in frames].count("Y,2,0,0") == 1, "the S=0 frame is sent once, no streaming at S=0")
    sc.check(frames and frames[-1].text == "E,0,0,0" and [f.text for f in frames].count("E,0,0,0") == 1,
             "E,0,0,0 once after the handshake, and nothing after it")
    # streaming: every frame with S>0 is followed by another within about one period
    intervals = k.stream_intervals_ms(frames)
    sc.check(len(intervals) >= 30, "streaming while S>0 (%d repeat intervals)" % len(intervals))
    if intervals:
        p50, p99 = k.percentile(intervals, 50), k.percentile(intervals, 99)
        sc.metric("stream_interval_p50", p50, "ms")
        sc.metric("stream_interval_p99", p99, "ms")
        sc.metric("stream_interval_min", min(intervals), "ms")
        sc.metric("stream_interval_max", max(intervals), "ms")
        sc.check(45.0 <= p50 <= 55.0, "stream interval p50 is 50 ms (45..55)", "%.1f ms" % p50)
        sc.check(p99 <= 100.0, "stream interval p99 <= 100 ms", "%.1f ms" % p99)
    moving = [(a, b) for a, b in zip(frames, frames[1:]) if a.motion and a.s > 0]
    gaps = [(b.t - a.t) * 1000.0 for a, b in moving]
    sc.check(not gaps or max(gaps) <= 150.0, "no gap over 150 ms while S>0", "max %.1f ms" % max(gaps or [0]))
    # event frames restart the period: after an event frame the next stream frame comes ~50 ms later
    doubled = [(a.text, b.text, round((b.t - a.t) * 1000, 1)) for a, b in moving if b.t - a.t < 0.025 and a.text != b.text]
    sc.note("event frames closer than 25 ms to the previous frame: %s" % doubled)
    latencies(sc, car, expect)


def scenario_2(sc):
    """Unplug while moving: stop frame within 100 ms, nothing moving after it; replug works."""
    car = start_car(sc)
    cb = start_bridge(sc, car, k.base_config(car.addr))
    pad = plug_pad(sc, cb)
    pad.press(e.BTN_START, "engine on"); time.sleep(GAP_S)
    pad.press(e.BTN_TR, "speed+"); time.sleep(GAP_S)
    pad.press(e.BTN_TR, "speed+"); time.sleep(0.5)
    sc.require(car.log.wait_frame(lambda f: f.text == "M,0,20,1", 0, 1.0), "moving at S=20 before the unplug")
    t_unplug = monotonic()
    pad.close()           # UI_DEV_DESTROY: the kernel removes the device (about 50 ms of this under TCG)
    t_unplugged = monotonic()
    time.sleep(1.0)
    after = car.log.frames(t_unplug)
    sc.dump_frames(car.log.frames(t_unplug - 0.3), "frames around the unplug")
    stop = next((f for f in after if f.motion and f.s == 0), None)
    sc.check(stop is not None and stop.text == "M,0,0,1", "stop frame M,0,0,1 after the unplug",
             [f.text for f in after][:5])
    if stop is not None:
        latency = (stop.t - t_unplug) * 1000.0
        sc.metric("stop_latency_after_unplug", latency, "ms")
        sc.metric("stop_latency_after_unplug_returned", (stop.t - t_unplugged) * 1000.0, "ms")
        sc.check(latency <= 100.0, "stop frame within 100 ms of the unplug", "%.1f ms" % latency)
        moving_after = [f.text for f in after if f.t >= stop.t and f.s > 0]
        sc.check(not moving_after, "no motion frame after the stop frame", moving_after[:3])
        sc.check(all(f.s > 0 or f is stop for f in after if f.t <= stop.t),
                 "the stop frame is the first frame with S=0 after the unplug")
    sc.check(cb.alive(), "carbridge keeps running without its pad")
    pid = cb.proc.pid
    pad2 = plug_pad(sc, cb, "re-created pad")
    sc.check(cb.alive() and cb.proc.pid == pid, "same carbridge process (no restart)")
    t = pad2.press(e.BTN_TR, "speed+ on the new pad")
    fr = car.log.wait_frame(lambda f: f.motion and f.s > 0, t, 2.0)
    sc.check(fr is not None and fr.text == "M,0,10,1", "the re-created pad drives again: Speed+ -> M,0,10,1 (S was reset)",
             fr.text if fr else "nothing")
    time.sleep(GAP_S)
    t = pad2.press(e.BTN_START, "engine off")
    sc.check(car.log.wait_frame(lambda f: f.text == "E,0,0,0", t, 2.0) is not None, "Engine off from the new pad -> E,0,0,0")


def tilt_steps(sc, car, sensor, steps, hold_s=0.7):
    """Sets each tilt and checks the angle range A of the frames received in the hold's last 250 ms."""
    results = []
    for degrees, want_a, why in steps:
        t = sensor.roll(degrees)
        time.sleep(hold_s)
        tail = [f for f in car.log.frames(monotonic() - 0.25) if f.motion]
        got = sorted(set(f.a for f in tail))
        results.append((degrees, want_a, got))
        sc.check(got == [want_a], "tilt %+d deg -> A=%d (%s)" % (degrees, want_a, why), "A in last 250 ms: %s" % got)
        first = next((f for f in car.log.frames(t) if f.motion and f.a == want_a), None)
        if first is not None and results[-2:-1] and results[-2][1] != want_a:
            sc.metric("tilt_to_frame_latency_%+d" % degrees, (first.t - t) * 1000.0, "ms")
    return results


TILT_STEPS = [
    (0, 0, "level"),
    (30, 1, "right"),
    (70, 2, "hard right"),
    (59, 2, "hysteresis: 59 is not below 60-2"),
    (50, 1, "back into range 1"),
    (14, 1, "hysteresis: 14 is not below 15-2"),
    (0, 0, "level again"),
    (-16, 0, "hysteresis: -16 is not beyond -15-2"),
    (-30, -1, "left"),
    (-75, -2, "hard left"),
]


def scenario_3(sc):
    """Tilt drive from the real mxc4005 IIO driver on i2c-stub; unbind -> input lost -> stop frame."""
    acc = StubAccelerometer()
    acc.delete()
    sc.require(acc.create(), "mxc4005 IIO device created on i2c-stub")
    sc.cleanups.append(acc.delete)
    car = start_car(sc)
    cb = start_bridge(sc, car, k.base_config(car.addr, steering="tilt", accelerometer="auto"))
    pad = plug_pad(sc, cb)
    pad.press(e.BTN_START, "engine on"); time.sleep(GAP_S)
    pad.press(e.BTN_TR, "speed+"); time.sleep(GAP_S)
    pad.press(e.BTN_TR, "speed+"); time.sleep(GAP_S)
    t0 = monotonic()
    sc.require(car.log.wait_frame(lambda f: f.motion and f.s == 20, 0, 1.0), "moving at S=20 with the tilt source")
    tilt_steps(sc, car, acc, TILT_STEPS)
    seq = [f.a for f in car.log.frames(t0) if f.motion]
    ranges = [a for i, a in enumerate(seq) if i == 0 or seq[i - 1] != a]
    sc.check(ranges == [0, 1, 2, 1, 0, -1, -2], "A changes exactly 0,1,2,1,0,-1,-2 (no flicker)", ranges)
    t_unbind = acc.unbind()
    time.sleep(1.5)
    after = car.log.frames(t_unbind)
    sc.dump_frames(car.log.frames(t0), "frames since moving")
    stop = next((f for f in after if f.motion and f.s == 0), None)
    sc.check(stop is not None, "input lost (IIO device unbound) -> stop frame with S=0", [f.text for f in after][:5])
    if stop is not None:
        sc.metric("stop_latency_after_iio_unbind", (stop.t - t_unbind) * 1000.0, "ms")
        sc.check(stop.t - t_unbind <= 0.6, "stop frame within 600 ms of the unbind (500 ms input timeout at most)",
                 "%.0f ms" % ((stop.t - t_unbind) * 1000))
        sc.check(not [f for f in after if f.t > stop.t and f.s > 0], "no motion frame after the stop frame")
    sc.check(cb.alive(), "carbridge keeps running after losing its tilt sensor")


def scenario_4(sc):
    """An evdev accelerometer (uinput, INPUT_PROP_ACCELEROMETER, like a DualSense's motion sensor) steers."""
    car = start_car(sc)
    sensor = MotionSensor()
    sc.cleanups.append(sensor.close)
    cb = start_bridge(sc, car, k.base_config(car.addr, steering="tilt", accelerometer="Harness Motion Sensor"))
    pad = plug_pad(sc, cb)
    sc.check(k.wait_until(lambda: cb.has_open(sensor.node), HOTPLUG_S), "carbridge opens the motion sensor %s" % sensor.node)
    pad.press(e.BTN_START, "engine on"); time.sleep(GAP_S)
    pad.press(e.BTN_TR, "speed+"); time.sleep(GAP_S)
    t0 = monotonic()
    sc.require(car.log.wait_frame(lambda f: f.motion and f.s == 10, 0, 1.0), "moving at S=10 with the tilt source")
    tilt_steps(sc, car, sensor, [(0, 0, "level"), (30, 1, "right"), (-70, -2, "hard left"), (0, 0, "level")])
    t_stall = sensor.stop_feeding()
    time.sleep(1.2)
    stop = next((f for f in car.log.frames(t_stall) if f.motion and f.s == 0), None)
    sc.dump_frames(car.log.frames(t0), "frames since moving")
    if stop is not None:
        sc.metric("stop_latency_after_sensor_stall", (stop.t - t_stall) * 1000.0, "ms")
    sc.note("sensor stalled: stop frame %s" % (stop,))
    sc.check(cb.alive(), "carbridge keeps running")


def scenario_5(sc):
    """Link loss (the car's listener killed) -> reconnect with back-off, S reset, no stale frames."""
    car = start_car(sc)
    cb = start_bridge(sc, car, k.base_config(car.addr))
    pad = plug_pad(sc, cb)
    pad.press(e.BTN_START, "engine on"); time.sleep(GAP_S)
    for _ in range(4):
        pad.press(e.BTN_TR, "speed+"); time.sleep(GAP_S)
    sc.require(car.log.wait_frame(lambda f: f.text == "M,0,40,1", 0, 1.0), "moving at S=40")

    # The car's listener dies (its process is killed, so the kernel closes the RFCOMM link), stays
    # away for 2 s (carbridge's connects are refused meanwhile), then comes back.
    # (Taking hci1 down instead is no use with btvirt: the emulated hci0 never learns that the ACL
    # link is gone, so no bridge could notice, and the stale link makes later connects fail EBUSY.)
    t_down = monotonic()
    car.kill()
    time.sleep(2.0)
    sc.require(car.start(), "car listener restarted")
    t_back = car.log.times("LISTEN", t_down)[0]
    connect = k.wait_until(lambda: car.log.times("CONNECT", t_back), 10)
    sc.require(bool(connect), "carbridge reconnects by itself within 10 s of the listener's return")
    conn2 = car.log.connections(t_back)[0][1]
    check_handshake(sc, car, connect[0], conn2, "M,0,0,1", "the new connection (engine on: the stop frame)",
                    "handshake_after_reconnect")
    sc.check(cb.alive(), "carbridge kept running through the outage")
    sc.metric("reconnect_after_listener_back", (connect[0] - t_back) * 1000.0, "ms")
    sc.check(connect[0] - t_back <= 6.0, "reconnect within 6 s of the listener's return (back-off capped at 5 s)",
             "%.1f s" % (connect[0] - t_back))
    time.sleep(1.0)   # the driver does nothing for a second
    idle = car.log.frames(connect[0])
    sc.dump_frames(car.log.frames(t_down - 0.3), "frames around the outage")
    sc.check(not [f for f in car.log.frames(t_down + 0.05, connect[0])], "nothing received while the car was away")
    sc.check(not [f for f in idle if f.s > 0], "no motion after the reconnect until the driver acts (S was reset)",
             [f.text for f in idle][:5])
    sc.check([f.text for f in idle] == ["M,0,0,1"], "the handshake stop frame is the only frame while the driver waits",
             [f.text for f in idle][:5])
    sc.check(len(idle) <= 2, "no burst of stale frames after the reconnect", "%d frames" % len(idle))
    t = pad.press(e.BTN_TR, "speed+ after reconnect")
    fr = car.log.wait_frame(lambda f: f.motion and f.s > 0, t, 1.5)
    sc.check(fr is not None and fr.text == "M,0,10,1", "Speed+ after the reconnect -> M,0,10,1 (not the old S=40)",
             fr.text if fr else "nothing")
    time.sleep(0.5)
    streaming = [f for f in car.log.frames(t) if f.text == "M,0,10,1"]
    sc.check(len(streaming) >= 6, "streaming resumes at S=10", "%d frames in 0.5 s" % len(streaming))
    t = pad.press(e.BTN_START, "engine off")
    sc.check(car.log.wait_frame(lambda f: f.text == "E,0,0,0", t, 2.0) is not None, "Engine off -> E,0,0,0 on the new link")


def scenario_6(sc):
    """carbridge scan lists the car's address and name."""
    car = k.bdaddr("hci1")
    sc.require(os.access(k.CARBRIDGE, os.X_OK), "carbridge binary present", k.CARBRIDGE)
    t = monotonic()
    try:
        p = subprocess.run([k.CARBRIDGE, "scan", "--adapter", "hci0", "--seconds", "8"], capture_output=True, text=True,
                           timeout=40)
        out, err, rc = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired as te:
        out, err, rc = (te.stdout or b"").decode(), (te.stderr or b"").decode(), "timeout"
    sc.metric("scan_duration", (monotonic() - t) * 1000.0, "ms")
    with open(os.path.join(sc.work, "carbridge.log"), "w") as f:
        f.write("$ carbridge scan --adapter hci0 --seconds 8\n--- stdout\n%s--- stderr\n%s--- exit %s\n" % (out, err, rc))
    sc.note("scan stdout: %r" % out)
    sc.check(rc == 0, "carbridge scan exits 0", rc)
    pattern = re.compile(r"^%s\s+RoboCar\s*$" % re.escape(car), re.IGNORECASE)
    sc.check(any(pattern.match(line) for line in out.splitlines()), "scan prints '%s  RoboCar'" % car, out.strip()[:200])


def scenario_7(sc):
    """SIGTERM while moving: E,0,0,0 reaches the car before the connection closes; exit 0."""
    car = start_car(sc)
    cb = start_bridge(sc, car, k.base_config(car.addr))
    pad = plug_pad(sc, cb)
    pad.press(e.BTN_START, "engine on"); time.sleep(GAP_S)
    for _ in range(3):
        pad.press(e.BTN_TR, "speed+"); time.sleep(GAP_S)
    sc.require(car.log.wait_frame(lambda f: f.text == "M,0,30,1", 0, 1.0), "moving at S=30")
    t_term = monotonic()
    rc = cb.stop(signal.SIGTERM, 5)
    t_exit = monotonic()
    sc.check(rc == 0, "carbridge exits 0 on SIGTERM", rc)
    sc.metric("exit_after_sigterm", (t_exit - t_term) * 1000.0, "ms")
    # The flush ends when the RFCOMM queue is empty (SO_SNDBUF - TIOCOUTQ, protocol 5.6), not when the
    # 1 s flush window runs out (before 85a0334 TIOCOUTQ, the free space, was read as the queue, so the
    # flush never saw it empty and the exit took about 1.09 s).
    flushed = cb.log_lines(r"shutdown: ")
    sc.note("carbridge's shutdown lines: %s" % flushed)
    done = [t for t, text in flushed if "shutdown: E,0,0,0 delivered" in text]
    sc.check(bool(done), "carbridge logs 'shutdown: E,0,0,0 delivered'", [text for _, text in flushed])
    if done:
        sc.metric("flush_done_after_sigterm", (done[0] - t_term) * 1000.0, "ms")
        sc.check(done[0] - t_term <= FLUSH_DONE_AFTER_SIGTERM_S, "the flush ends within %.0f ms of SIGTERM (it does not wait "
                 "out the 1 s flush window)" % (FLUSH_DONE_AFTER_SIGTERM_S * 1000), "%.0f ms" % ((done[0] - t_term) * 1000))
    sc.check(t_exit - t_term <= EXIT_AFTER_SIGTERM_S, "carbridge exits within %.0f ms of SIGTERM (was about 1.09 s)"
             % (EXIT_AFTER_SIGTERM_S * 1000), "%.0f ms" % ((t_exit - t_term) * 1000))
    eof = k.wait_until(lambda: car.log.times("EOF", t_term), 3)
    sc.check(bool(eof), "the car sees the connection close")
    after = [(t, kind, text) for t, kind, text in car.log.events() if t >= t_term - 0.01 and kind in ("RX", "EOF")]
    sc.note("car events after SIGTERM: %s" % after)
    rx = [text for t, kind, text in after if kind == "RX"]
    sc.check("E,0,0,0" in rx, "E,0,0,0 received after SIGTERM", rx[-3:])
    if "E,0,0,0" in rx and eof:
        t_e = next(t for t, kind, text in after if kind == "RX" and text == "E,0,0,0")
        sc.metric("engine_off_after_sigterm", (t_e - t_term) * 1000.0, "ms")
        sc.check(t_e <= eof[0], "E,0,0,0 arrives before the connection closes")
        sc.check(rx[-1] == "E,0,0,0", "E,0,0,0 is the last line the car receives", rx[-3:])


def scenario_8(sc):
    """udev/70-carbridge.rules installed; carbridge runs unprivileged in the rules' group, opens pad + IIO."""
    rules = os.path.join(k.REPO, "udev", "70-carbridge.rules")
    sc.require(os.path.exists(rules), "udev/70-carbridge.rules exists in the repository")
    text = open(rules).read()
    groups = re.findall(r'GROUP\s*=\s*"([^"]+)"', text)
    sc.require(bool(groups), "the rules set a GROUP for the devices", "no GROUP= in the rules")
    group = groups[0]
    sc.note("rules group: %s (all groups named: %s)" % (group, sorted(set(groups))))
    # the group first: udev resolves GROUP= names when it loads the rules
    if subprocess.run(["getent", "group", group], capture_output=True).returncode != 0:
        subprocess.run(["groupadd", "--system", group], check=True)
    os.makedirs("/etc/udev/rules.d", exist_ok=True)
    with open("/etc/udev/rules.d/70-carbridge.rules", "w") as f:
        f.write(text)
    subprocess.run(["udevadm", "control", "--reload"], check=True)
    if subprocess.run(["id", "driver"], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/sh", "--groups", group, "driver"], check=True)
    sc.note(subprocess.run(["id", "driver"], capture_output=True, text=True).stdout.strip())
    acc = StubAccelerometer()
    acc.delete()
    sc.require(acc.create(), "mxc4005 IIO device created on i2c-stub")
    sc.cleanups.append(acc.delete)
    subprocess.run(["udevadm", "settle", "-t", "10"])
    car = start_car(sc)
    os.chmod(os.path.join(sc.work, "car.log"), 0o644)
    cb = start_bridge(sc, car, k.base_config(car.addr, steering="tilt", accelerometer="auto"), user="driver")
    status = open("/proc/%d/status" % cb.proc.pid).read()
    uid = re.search(r"^Uid:\s+(\d+)", status, re.M).group(1)
    sc.check(uid != "0", "carbridge runs as an unprivileged user (uid %s)" % uid)
    t_plug = monotonic()
    pad = Pad()
    sc.cleanups.append(pad.close)
    subprocess.run(["udevadm", "settle", "-t", "10"])
    for node in (pad.node, "/dev/" + os.path.basename(acc.iio)):
        if os.path.exists(node):
            st = os.stat(node)
            sc.note("%s: mode %o group %s" % (node, st.st_mode & 0o777, grp.getgrgid(st.st_gid).gr_name))
    sc.require(k.wait_until(lambda: cb.has_open(pad.node), HOTPLUG_S),
               "the unprivileged carbridge opens the hotplugged pad %s within %.0f s" % (pad.node, HOTPLUG_S))
    wait_pad_ready(sc, cb, pad, t_plug)
    pad.press(e.BTN_START, "engine on"); time.sleep(GAP_S)
    t = pad.press(e.BTN_TR, "speed+")
    sc.check(car.log.wait_frame(lambda f: f.text == "M,0,10,1", t, 1.5) is not None,
             "the unprivileged carbridge reads the pad: Speed+ -> M,0,10,1")
    t = acc.roll(30)
    sc.check(car.log.wait_frame(lambda f: f.text == "R,1,10,1", t, 1.5) is not None,
             "the unprivileged carbridge reads the IIO accelerometer: tilt right -> R,1,10,1")
    t = pad.press(e.BTN_START, "engine off")
    sc.check(car.log.wait_frame(lambda f: f.text == "E,0,0,0", t, 1.5) is not None, "Engine off -> E,0,0,0")
    pad_light_rule(sc, group)


def pad_light_rule(sc, group):
    """The rules' LED lines under the guest's real udev: a DualSense made by hid-playstation (on uhid) gets its
    light bar's brightness and multi_intensity in `group`, group-writable, and the unprivileged user can set the
    colour; its player LEDs stay root's."""
    import hid_devices as h
    for module in ("uhid", "hid-playstation"):
        subprocess.run(["modprobe", module], capture_output=True)
    pad = h.SonyPad(h.DualSenseBluetooth, "a0:ab:51:00:00:08")
    sc.cleanups.append(pad.destroy)
    pad.create()
    sc.require(bool(pad.wait_nodes()), "a DualSense (hid-playstation on uhid) for the LED rule")
    subprocess.run(["udevadm", "settle", "-t", "10"])
    leds = pad.leds()
    bar = next((l for l in leds if l.endswith(":rgb:indicator")), None)
    player = next((l for l in leds if ":white:player-" in l), None)
    sc.require(bar is not None, "hid-playstation made the light bar's LED", leds)
    def owned(path):
        st = os.stat(path)
        return grp.getgrgid(st.st_gid).gr_name == group and bool(st.st_mode & 0o020)
    for name in ("brightness", "multi_intensity"):
        ok = k.wait_until(lambda: owned(os.path.join(bar, name)), 5.0)
        st = os.stat(os.path.join(bar, name))
        sc.check(ok, "the rule gives %s's %s to group %s, group-writable" % (os.path.basename(bar), name, group),
                 "mode %o group %s" % (st.st_mode & 0o777, grp.getgrgid(st.st_gid).gr_name))
    if player is not None:
        sc.check(not owned(os.path.join(player, "brightness")), "the player LEDs stay root's")
    since = monotonic()
    wrote = subprocess.run(["setpriv", "--reuid", "driver", "--regid", "driver", "--init-groups", "--", "sh", "-c",
                            "echo '0 255 0' > %s/multi_intensity && echo 255 > %s/brightness" % (bar, bar)],
                           capture_output=True, text=True)
    sc.check(wrote.returncode == 0, "the user in group %s sets the light bar's colour" % group, wrote.stderr.strip())
    got = k.wait_until(lambda: next((r for _, r in pad.outputs_since(since)
                                     if r[0] == 0x31 and r[4] & 0x04 and tuple(r[47:50]) == (0, 255, 0)), None), 3.0)
    sc.check(got is not None, "and the pad receives it (its output report's light bar: 00 ff 00)",
             [r.hex()[:100] for _, r in pad.outputs_since(since)][-2:])
    pad.destroy()


MAX_IN_FLIGHT = 2       # [link] max_in_flight, the default: motion frames allowed in carbridge's kernel queue
STALL_TIMEOUT_S = 1.0   # [link] stall_timeout_ms = 1000, the default
STALL_SLACK_S = 0.5     # the stall must be noticed within STALL_TIMEOUT_S + this of the queue's last drain


def stalled_car_phase(sc, car, cb, pad, max_in_flight, stall_expected, paused_for_s=None):
    """Streams at S=20, makes the car stop reading its socket, then read again. Returns a dict of what
    happened on the old connection, from the car's kernel receive stamps (KTS lines):

    - "pause", "resume": when the car stopped and started reading again (car log);
    - "stall": carbridge's log time of "link down: ... stalled" (None when not logged);
    - "buffered": arrival stamps of the frames that reached the car's socket after it stopped reading
      and before the stall was noticed (before `resume` when no stall is expected) -- what was already in
      the car's own receive buffer, the frames it took for RFCOMM flow control to back up into carbridge;
    - "late": stamps of the frames that arrived after that, i.e. only once the car read again: the ones
      that were still in carbridge's kernel queue;
    - "after_resume": frames (lines) the car read on the old connection after it resumed."""
    conn = cb.conn
    pad.press(e.BTN_START, "engine on"); time.sleep(GAP_S)
    pad.press(e.BTN_TR, "speed+"); time.sleep(GAP_S)
    pad.press(e.BTN_TR, "speed+"); time.sleep(0.5)
    sc.require(car.log.wait_frame(lambda f: f.text == "M,0,20,1", 0, 1.0, conn=conn), "streaming M,0,20,1 before the car stops reading")
    reading = car.log.kernel_times(conn)
    sc.require(len(reading) >= 5, "the car's kernel receive stamps (SO_TIMESTAMPNS) are there", "%d stamps" % len(reading))
    # the stamps are the kernel's arrival times: just before the car's own receive times while it reads. The car
    # logs an skb's stamp (KTS) before the lines it read with it (RX), so one snapshot of the log pairs the last
    # stamp that already has its lines after it with the first of them (a snapshot taken between the two
    # writes has a newer stamp without its lines).
    events = [(t, kind, text) for t, kind, c, text in car.log.events_conn() if c == conn and kind in ("KTS", "RX")]
    pairs = [(float(text), events[i + 1][0]) for i, (t, kind, text) in enumerate(events[:-1])
             if kind == "KTS" and events[i + 1][1] == "RX"]
    sc.require(bool(pairs), "the car logged a kernel stamp followed by the lines it received with it")
    stamp, read = pairs[-1]
    lag = [(read - stamp) * 1000.0]
    sc.note("last frame while reading: kernel stamp %.6f, read at %.6f (%.1f ms later)" % (stamp, read, lag[0]))
    # what this proves is the clock (a stamp on another clock is off by years); the upper bound leaves a car
    # process that a loaded guest schedules late its time
    sc.check(0.0 <= lag[0] <= 1000.0, "kernel stamps are CLOCK_MONOTONIC arrival times (just before the car reads)", "%.1f ms" % lag[0])
    sock = [text for t, kind, c, text in car.log.events_conn() if kind == "SOCK" and c == conn]
    sc.note("car socket: %s" % sock)

    t_pause = car.pause()
    sc.require(t_pause is not None, "the car stops reading (PAUSE logged)")
    out = {"pause": t_pause, "stall": None}
    if stall_expected:
        seen = k.wait_until(lambda: cb.log_lines(r"link down: .*stalled", t_pause), 40, 0.05)
        sc.require(bool(seen), "carbridge reports the stalled link (\"link down: ... stalled\") within 40 s of the car stopping to read")
        out["stall"] = seen[0][0]
        sc.note("carbridge: %s (seen by the scenario at %.3f)" % (seen[0], monotonic()))
        time.sleep(1.0)   # carbridge retries meanwhile; the old RFCOMM channel still holds its queue
    else:
        time.sleep(paused_for_s)
        # from now on carbridge streams M,0,30,1: every M,0,20,1 read after the resume is stale
        pad.press(e.BTN_TR, "speed+ while the car does not read"); time.sleep(0.2)
    sc.note("carbridge's link lines while the car was not reading: %s" % cb.log_lines(r"link |connecting", t_pause))
    t_resume = car.resume()
    sc.require(t_resume is not None, "the car reads again (RESUME logged)")
    out["resume"] = t_resume
    cut = out["stall"] if stall_expected else t_resume
    if stall_expected:
        k.wait_until(lambda: car.log.times("EOF", t_resume, conn=conn) or car.log.times("RXERR", t_resume, conn=conn), 5)
        time.sleep(0.3)
    else:
        time.sleep(1.5)
    stamps = car.log.kernel_times(conn)
    out["buffered"] = [t for t in stamps if t_pause <= t <= cut]
    out["late"] = [t for t in stamps if t > cut]
    out["after_resume"] = car.log.frames(t_resume, conn=conn)
    out["closed"] = (car.log.times("EOF", t_resume, conn=conn) + car.log.times("RXERR", t_resume, conn=conn))
    return out


def scenario_9(sc):
    """The RFCOMM car stops reading while carbridge streams: stall noticed, link closed, small backlog, reconnect."""
    car = start_car(sc, rcvbuf=1, timestamps=True)   # SO_RCVBUF 1: the kernel's minimum (about 2.3 kB)
    link = "max_in_flight = %d\nstall_timeout_ms = %d\n" % (MAX_IN_FLIGHT, int(STALL_TIMEOUT_S * 1000))
    cb = start_bridge(sc, car, k.base_config(car.addr, link_extra=link))
    pad = plug_pad(sc, cb)
    r = stalled_car_phase(sc, car, cb, pad, MAX_IN_FLIGHT, True)
    t_pause, t_stall, t_resume = r["pause"], r["stall"], r["resume"]
    buffered, late, after = r["buffered"], r["late"], r["after_resume"]
    sc.dump_frames(car.log.frames(t_pause - 0.3, conn=cb.conn), "old connection from just before the car stopped reading")
    sc.note("kernel arrival stamps after the pause: %d before the stall was noticed (last %s), %d after: %s"
            % (len(buffered), ("%.6f" % buffered[-1]) if buffered else "-", len(late), ["%.6f" % t for t in late]))
    sc.metric("frames_until_backed_up", len(buffered), "frames")
    sc.require(bool(buffered), "frames reached the car's socket after it stopped reading")
    t_drain = buffered[-1]   # the last frame that left carbridge's kernel queue before the stall
    sc.metric("backup_time_after_pause", (t_drain - t_pause) * 1000.0, "ms")
    detect = t_stall - t_drain
    sc.metric("stall_detect_after_last_drain", detect * 1000.0, "ms")
    sc.check(detect <= STALL_TIMEOUT_S + STALL_SLACK_S,
             "stall noticed within stall_timeout_ms + 0.5 s of the queue's last drain", "%.0f ms" % (detect * 1000))
    sc.check(detect >= STALL_TIMEOUT_S - 0.1, "no stall declared while the queue still drained (not before stall_timeout_ms)",
             "%.0f ms" % (detect * 1000))
    sc.check(bool(r["closed"]), "carbridge closed the link: the car sees the old connection end once it reads again")
    sc.metric("frames_after_resume_old_connection", len(after), "frames")
    sc.metric("late_frames_after_resume", len(late), "frames")
    sc.check(len(late) <= MAX_IN_FLIGHT, "at most max_in_flight (%d) frames reach the car after the stall (the rest was "
             "in its own receive buffer)" % MAX_IN_FLIGHT, "%d late" % len(late))
    # The car stops reading at an arbitrary point of the 50 ms stream: a frame that reached its socket just
    # before the pause and was read only after the resume was in its receive buffer too (arrival stamps
    # before t_pause, so `buffered` does not count it).
    unread_at_pause = [float(text) for t, kind, c, text in car.log.events_conn()
                       if kind == "KTS" and c == cb.conn and t >= t_resume and float(text) < t_pause]
    sc.metric("frames_unread_at_pause", len(unread_at_pause), "frames")
    sc.check(len(after) <= len(buffered) + len(unread_at_pause) + MAX_IN_FLIGHT,
             "backlog after resuming <= frames already in the car's receive buffer + max_in_flight",
             "%d > %d + %d unread at the pause + %d" % (len(after), len(buffered), len(unread_at_pause), MAX_IN_FLIGHT))
    sc.check(all(f.text == "M,0,20,1" for f in after), "the backlog is only the stale stream frame", dedup(after))
    # reconnect; the old RFCOMM channel (DLCI) is free only after its last frames and DISC went out
    conns = k.wait_until(lambda: [c for c in car.log.connections(t_pause) if c[1] != cb.conn], 10)
    sc.require(bool(conns), "carbridge reconnects within 10 s of the car reading again")
    accepted, conn2 = conns[0]
    sc.metric("reconnect_after_stall", (accepted - t_stall) * 1000.0, "ms")
    sc.metric("reconnect_after_resume", (accepted - t_resume) * 1000.0, "ms")
    sc.note("carbridge's link lines: %s" % cb.log_lines(r"link |connecting", t_pause))
    sc.check(accepted - t_resume <= 6.0, "reconnect within 6 s of the car reading again (back-off capped at 5 s)",
             "%.1f s" % (accepted - t_resume))
    check_handshake(sc, car, accepted, conn2, "M,0,0,1", "the new connection (engine on: the stop frame)",
                    "handshake_after_stall_reconnect")
    time.sleep(0.5)
    idle = car.log.frames(conn=conn2)
    sc.check([f.text for f in idle] == ["M,0,0,1"], "nothing else on the new connection until the driver acts",
             [f.text for f in idle][:5])
    sc.check(cb.alive(), "carbridge kept running")
    t = pad.press(e.BTN_TR, "speed+ after the reconnect")
    fr = car.log.wait_frame(lambda f: f.motion and f.s > 0, t, 1.5, conn=conn2)
    sc.check(fr is not None and fr.text == "M,0,10,1", "Speed+ on the new connection -> M,0,10,1 (S was reset)",
             fr.text if fr else "nothing")
    time.sleep(GAP_S)
    t = pad.press(e.BTN_START, "engine off")
    sc.check(car.log.wait_frame(lambda f: f.text == "E,0,0,0", t, 2.0, conn=conn2) is not None,
             "Engine off -> E,0,0,0 on the new connection")


def scenario_10(sc):
    """The same stalled car against carbridge with the queue rule relaxed (max_in_flight 64, no stall
    within 60 s), roughly the behaviour before 85a0334: how big the stale backlog gets."""
    car = start_car(sc, rcvbuf=1, timestamps=True)
    cb = start_bridge(sc, car, k.base_config(car.addr, link_extra="max_in_flight = 64\nstall_timeout_ms = 60000\n"))
    pad = plug_pad(sc, cb)
    # scenario 9 measured about 14.6 s (292 frames) until flow control reaches carbridge; 64 frames more take 3.2 s
    r = stalled_car_phase(sc, car, cb, pad, 64, False, paused_for_s=RELAXED_PAUSE_S)
    after = r["after_resume"]
    stale = [f for f in after if f.text == "M,0,20,1"]
    from_queue = len(stale) - len(r["buffered"])   # beyond what was in the car's own receive buffer
    sc.note("relaxed: %d frames were in the car's receive buffer, %d stale M,0,20,1 read after resuming, "
            "so %d came from carbridge's kernel queue; then: %s" % (len(r["buffered"]), len(stale), from_queue,
                                                                     dedup(after)[:4]))
    sc.metric("relaxed_stale_frames_after_resume_old_connection", len(stale), "frames")
    sc.metric("relaxed_stale_frames_from_kernel_queue", from_queue, "frames")
    sc.metric("relaxed_stale_stream_time_from_kernel_queue", from_queue * 50.0, "ms")
    sc.check(from_queue > MAX_IN_FLIGHT, "with the limit relaxed, more than %d stale frames come from carbridge's "
             "kernel queue (the bound checked in scenario 9 can fail)" % MAX_IN_FLIGHT, "%d" % from_queue)
    sc.check(any(f.text == "M,0,30,1" for f in after), "the fresh M,0,30,1 arrives after the stale backlog")
    sc.check(cb.alive(), "carbridge kept running")


# ------------------------------------------------------------------------------------------------
# Scenario 11: the guest latency figure (issue 9): carbridge against a C reference reader, one run.
LAT_RATE_HZ = 500           # input reports (one axis change each) per second
LAT_WARMUP = 100            # events written first and checked, but not in the figures
LAT_EVENTS = 1500           # measured events (3 s at 500 Hz)
LAT_MAX_STREAM_S = 10.0     # a loaded host slows the writer down: stop writing after this long ...
LAT_MIN_EVENTS = 300        # ... and fail with fewer measured events than this
LAT_STARVED_RATE = 0.8      # below 80 % of LAT_RATE_HZ the writer was starved by its host: said in a NOTE
LAT_PORTS = (7011, 7012)    # the TCP car's ports: carbridge's, the reference reader's
LAT_STEER = {-2: -30000, -1: -16000, 0: 0, 1: 16000, 2: 30000}   # ABS_X for each range A


def lat_trigger(speed):
    """The ABS_RZ value (0..255) that [throttle] (deadzone 0.05, full scale 240: speed = v × 240 rounded down to
    10, protocol §4) turns into `speed` from either neighbouring step: the middle of the step, half a step from
    both boundaries, beyond the quarter-step hysteresis of `[throttle] hysteresis`."""
    return 0 if speed == 0 else int(round(255 * (speed + 5) / 240.0))


def lat_events():
    """One period of the stream: (axis code, value, the frame carbridge must send) per input report, each
    report changing one axis. ABS_X gives A (with deadzone 0.1 and θ = 90·v' the values are θ ≈ ±82°,
    ±39°, 0°, far from every range boundary and its 2° hysteresis) and the throttle trigger ABS_RZ gives
    S. A snake through A = -2..2 × S = 0..230: every report changes A or S, so each is one motion frame,
    and all 120 frames of a period differ, so a frame names its event even when carbridge falls behind
    and sends only the newest state. The period starts at (A, S) = (-1, 0) and ends, after (-2, 230), with
    one S step to (-2, 0); the stream begins with ABS_X to A = -2 (from the pad's 0, 0)."""
    out = []
    for row, speed in enumerate(range(0, 240, 10)):
        if row:
            out.append((e.ABS_RZ, lat_trigger(speed), speed, out[-1][3]))
        for a in (range(-2, 3) if row % 2 == 0 else range(2, -3, -1)):
            if not out or out[-1][3] != a:
                out.append((e.ABS_X, LAT_STEER[a], speed, a))
    out = out[1:] + [(e.ABS_RZ, 0, 0, out[-1][3])]   # snake from (-1, 0) on, then S 230 -> 0 at A = -2
    return [(code, value, "%s,%d,%d,1" % ("L" if a < 0 else "R" if a > 0 else "M", a, speed))
            for code, value, speed, a in out]


def proc_stat(pid):
    """The fields of /proc/PID/stat after the command name (which may hold spaces and parentheses): [0] is
    the state, [7]/[9] the minor/major faults, [11]/[12] utime/stime in clock ticks. OSError once it is gone."""
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()


def cpu_seconds(pid):
    """(utime + stime from /proc/PID/stat in seconds, the sum of the threads' schedstat run times in
    seconds or None): the CPU a process used so far."""
    try:
        fields = proc_stat(pid)
        ticks = (int(fields[11]) + int(fields[12])) / float(os.sysconf("SC_CLK_TCK"))
    except (OSError, IndexError, ValueError):
        return None, None
    run = 0
    try:
        for task in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/schedstat" % (pid, task)) as f:
                run += int(f.read().split()[0])
    except (OSError, IndexError, ValueError):
        run = None
    return ticks, (run / 1e9 if run is not None else None)


def page_faults(pid):
    """(minor, major) page faults of a process so far, from /proc/PID/stat; (None, None) once it is gone."""
    try:
        fields = proc_stat(pid)
        return int(fields[7]), int(fields[9])
    except (OSError, IndexError, ValueError):
        return None, None


def write_stream(pad, values, rate_hz, max_s):
    """Writes each (EV_ABS code, value) + SYN_REPORT to the uinput device in one write(2), on a fixed grid of
    1/rate_hz (or later: sleeps overshoot under TCG; a write late by more than a period restarts the
    grid, so there are no bursts), for at most max_s seconds; returns [(CLOCK_MONOTONIC before the
    write, after it)] per event written."""
    import gc, struct
    record = struct.Struct("llHHi")   # struct input_event on x86_64: timeval, type, code, value
    packets = [record.pack(0, 0, e.EV_ABS, c, v) + record.pack(0, 0, e.EV_SYN, e.SYN_REPORT, 0) for c, v in values]
    fd = pad.ui.fd
    period = 1.0 / rate_hz
    stamps = []
    gc.disable()
    try:
        due = time.monotonic() + period
        end = due + max_s
        for packet in packets:
            if due > end:
                break
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)   # no busy wait: the readers need the CPU more
            before = time.monotonic()
            os.write(fd, packet)
            stamps.append((before, time.monotonic()))
            due = due + period if before - due < period else before + period
    finally:
        gc.enable()
    return stamps


def start_latency_car(sc):
    """Scenario 11's TCP car (guest/tcpcar.c) on LAT_PORTS (carbridge's, the reference reader's), loopback up;
    stopped by the scenario's cleanups. Returns (its TcpCarLog, its process)."""
    subprocess.run(["ip", "link", "set", "lo", "up"], capture_output=True)
    log = TcpCarLog(os.path.join(sc.work, "car.log"))
    car = subprocess.Popen([os.path.join(k.HELPERS, "tcpcar"), log.path] + [str(port) for port in LAT_PORTS],
                           stdout=subprocess.DEVNULL, stderr=open(log.path + ".stderr", "w"))
    sc.cleanups.append(lambda: (car.poll() is None and car.terminate(), car.wait(5)))
    sc.require(k.wait_until(lambda: sum(p[0] == "LISTEN" for p in log.lines()) == len(LAT_PORTS), 10),
               "the TCP car listens on 127.0.0.1:%d and :%d" % LAT_PORTS)
    return log, car


def start_reference_reader(sc, pad, log):
    """Scenario 11's C reader (guest/refreader.c) on `pad`'s node, streaming to the TCP car's second port;
    stopped by the scenario's cleanups. Returns (its process, the path of its output) once it is ready and
    connected."""
    ref_out = os.path.join(sc.work, "refreader.log")
    ref = subprocess.Popen([os.path.join(k.HELPERS, "refreader"), pad.node, "127.0.0.1", str(LAT_PORTS[1])],
                           stdout=open(ref_out, "w"), stderr=subprocess.STDOUT)
    sc.cleanups.append(lambda: (ref.poll() is None and ref.terminate(), ref.wait(5)))
    sc.require(k.wait_until(lambda: "ready" in open(ref_out).read() and log.connects(LAT_PORTS[1]), 10),
               "the reference reader opens %s and connects to the car" % pad.node, open(ref_out).read().strip())
    return ref, ref_out


def scenario_11(sc):
    """500 Hz ABS_X through a uinput pad to a TCP car: carbridge vs a C libevdev reader, one run."""
    refreader, tcpcar = os.path.join(k.HELPERS, "refreader"), os.path.join(k.HELPERS, "tcpcar")
    sc.require(os.access(refreader, os.X_OK) and os.access(tcpcar, os.X_OK),
               "the C helpers are built (run.sh compiles guest/refreader.c and guest/tcpcar.c into %s)" % k.HELPERS)
    cb_port, ref_port = LAT_PORTS
    log, car = start_latency_car(sc)
    # max_in_flight 64 (the most it takes): the kernel-queue rule (protocol 5.6) merges motion frames while
    # 2 are unacknowledged, which a car process that a loaded TCG guest schedules late triggers (about half
    # the frames merged in a trial run); this scenario measures the input -> car path, scenarios 9/10 the rule
    cfg = k.base_config(None, url="tcp://127.0.0.1:%d" % cb_port, link_extra="max_in_flight = 64\n",
                        extra='\n[throttle]\naxis = "ABS_RZ"\n')   # deadzone 0.05, full scale 240
    # the binary measured: run.sh --latency-bin (scripts/test.sh passes a release build), else the tested one;
    # a debug build costs several times the instructions per event and falls behind a 500 Hz pad under TCG
    version = subprocess.run([k.CARBRIDGE_LATENCY, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    debug_build = "debug build" in version
    sc.note("measuring %s (%s)" % (k.CARBRIDGE_LATENCY, version or "no --version output"))
    sc.metric("carbridge_build", "debug" if debug_build else "release", "build")
    cb = Carbridge(sc.work, cfg, binary=k.CARBRIDGE_LATENCY)
    since = monotonic()
    cb.start()
    sc.cleanups.append(lambda: cb.stop(signal.SIGTERM, 3))
    k.wait_until(lambda: log.connects(cb_port) or not cb.alive(), 45)
    sc.require(bool(log.connects(cb_port)), "carbridge connects to the TCP car within 45 s of exec",
               "exit status %s" % (cb.proc.poll(),))
    sc.metric("connect_after_start", (log.connects(cb_port)[0] - since) * 1000.0, "ms")
    pad = plug_pad(sc, cb)
    # the reference reader opens the same node after carbridge (evdev wakes its clients in the order they opened it)
    ref, ref_out = start_reference_reader(sc, pad, log)
    pad.press(e.BTN_START, "engine on")
    time.sleep(0.3)

    n_total = LAT_WARMUP + LAT_EVENTS
    period = lat_events()
    cycle = [(e.ABS_X, LAT_STEER[-2], "L,-2,0,1")] + [period[i % len(period)] for i in range(n_total - 1)]
    cpu0 = {name: cpu_seconds(p.pid) for name, p in (("carbridge", cb.proc), ("ref", ref))}
    faults0 = {name: page_faults(p.pid) for name, p in (("carbridge", cb.proc), ("ref", ref))}
    stamps = write_stream(pad, [(c, v) for c, v, _ in cycle], LAT_RATE_HZ, LAT_MAX_STREAM_S)
    time.sleep(0.3)
    cycle = cycle[:len(stamps)]
    n_total = len(stamps)
    with open(os.path.join(sc.work, "writes.log"), "w") as f:   # CLOCK_MONOTONIC ns before/after each write
        f.writelines("%d %d %d %d %s\n" % (round(a * 1e9), round(b * 1e9), c, v, t) for (a, b), (c, v, t) in zip(stamps, cycle))
    cpu1 = {name: cpu_seconds(p.pid) for name, p in (("carbridge", cb.proc), ("ref", ref))}
    faults1 = {name: page_faults(p.pid) for name, p in (("carbridge", cb.proc), ("ref", ref))}
    t_stream = (stamps[0][0], stamps[-1][1])
    pad.press(e.BTN_START, "engine off")
    time.sleep(0.5)
    sc.check(cb.alive(), "carbridge kept running")
    ref.terminate()
    ref.wait(5)
    car.terminate()
    car.wait(5)
    sc.note("reference reader: %s" % open(ref_out).read().strip().replace("\n", " | "))

    span = t_stream[1] - t_stream[0]
    late = [b - a for (a, _), (b, _) in zip(stamps, stamps[1:]) if b - a > 1.5 / LAT_RATE_HZ]
    write_us = sorted((b - a) * 1e6 for a, b in stamps)
    sc.note("%d events in %.3f s (%.0f Hz), %d gaps over 1.5 periods (max %.1f ms), write(2) p50 %.0f us max %.0f us"
            % (n_total, span, (n_total - 1) / span, len(late), max(late or [0]) * 1000, k.percentile(write_us, 50),
               write_us[-1]))
    sc.metric("stream_rate", (n_total - 1) / span, "Hz")
    sc.metric("events_measured", n_total - LAT_WARMUP, "events")
    sc.check(n_total - LAT_WARMUP >= LAT_MIN_EVENTS, "at least %d events measured (after %d warm-up events)"
             % (LAT_MIN_EVENTS, LAT_WARMUP), "%d written in %.0f s" % (n_total, LAT_MAX_STREAM_S))

    cb_rx, ref_rx = log.rx(cb_port), log.rx(ref_port)
    sc.require(bool(cb_rx) and cb_rx[0][3] == "E,0,0,0", "handshake: the first line carbridge sends is E,0,0,0",
               cb_rx[0][3] if cb_rx else "nothing")
    cb_stream = [r for r in cb_rx[1:] if t_stream[0] <= r[0]]
    sc.check(len(cb_rx) == len(cb_stream) + 1, "carbridge sends nothing but the handshake before the stream",
             [r[3] for r in cb_rx[1:len(cb_rx) - len(cb_stream)]][:5])
    sc.check(bool(cb_stream) and cb_stream[-1][3] == "E,0,0,0", "engine off -> E,0,0,0 last",
             cb_stream[-1][3] if cb_stream else "nothing")
    if cb_stream and cb_stream[-1][3] == "E,0,0,0":
        cb_stream = cb_stream[:-1]
    # while S > 0 carbridge repeats the motion frame after 50 ms without one (a writer stalled that long):
    # consecutive reports always change the frame, so a line equal to the one before is such a repeat
    before = len(cb_stream)
    cb_stream = [r for n, r in enumerate(cb_stream) if n == 0 or r[3] != cb_stream[n - 1][3]]
    sc.metric("carbridge_stream_repeats", before - len(cb_stream), "frames")
    want_cb = [text for _, _, text in cycle]
    want_ref = ["A,%d,%d" % (c, v) for c, v, _ in cycle]
    got_cb, got_ref = [r[3] for r in cb_stream], [r[3] for r in ref_rx]

    def mismatch(got, want):
        bad = next((i for i, (g, w) in enumerate(zip(got, want)) if g != w), None)
        return "%d lines for %d events%s" % (len(got), len(want), "" if bad is None else
                                             "; event %d: got %s, want %s" % (bad, got[bad], want[bad]))
    sc.check(got_ref == want_ref, "reference reader: exactly one correct line per report (%d)" % n_total,
             mismatch(got_ref, want_ref))
    arrival = lambda r: r[1] if r[1] is not None else r[0]

    def events_of(rx, want):
        """The report each line is the frame of: the first report after the previous line's whose frame it is
        and that was written before the line arrived. Exact while carbridge skips fewer than len(period)
        reports at a time (frames repeat only every 120 reports), however far behind it is; it skips when
        it reads several reports at once (only the newest state is sent) or loses them (SYN_DROPPED).
        Returns (the lines that are such a frame, their report indexes, the lines that are not: a state
        never written, older than the frame before, or arriving before its report)."""
        lines, out, bad, j = [], [], [], 0
        for n, r in enumerate(rx):
            k = j
            while k < len(want) and want[k] != r[3]:
                k += 1
            if k == len(want) or stamps[k][0] > arrival(r):
                bad.append((n, r[3]))
                continue
            lines.append(r)
            out.append(k)
            j = k + 1
        if out and lines[-1][3] == want[-1]:
            out[-1] = len(want) - 1   # the state the car ends in is the last report's
        return lines, out, bad
    cb_lines, cb_events, cb_bad = events_of(cb_stream, want_cb) if got_cb != want_cb else (cb_stream, list(range(n_total)), [])
    rate = (n_total - 1) / span
    starved = rate < LAT_STARVED_RATE * LAT_RATE_HZ
    sc.metric("carbridge_frames_out_of_order", len(cb_bad), "frames")
    if cb_bad:
        # seen only on a starved guest, after SYN_DROPPED: libevdev's resync reads the state after reports that
        # are still queued and come again (an older frame), and the resync's axes become one frame each (a mix)
        sc.note("frames that are no report's, older than the frame before, or early (line, frame): %s" % cb_bad[:10])
    # Reported, not judged: one CI-like run on a quiet host (writer at 490 Hz) flagged 2 of 772 frames
    # while carbridge skipped up to 240 reports at a time, beyond the period of 120 within which the
    # matcher above is exact; whether those 2 are real (resync after SYN_DROPPED was seen on starved
    # guests) or the matcher's is open. The safety-relevant facts stay checks: the handshake, the
    # exact reference, carbridge's last frame.
    console("NOTE: s11 %d carbridge frames not matched to a report in order (writer %.0f Hz of %d%s; reported, not judged)"
            % (len(cb_bad), rate, LAT_RATE_HZ, ", starved guest" if starved else ""))
    sc.check(bool(got_cb) and got_cb[-1] == want_cb[-1], "carbridge: its last frame is the last report's (%s)"
             % want_cb[-1], "last frame: %s" % (got_cb[-1] if got_cb else None))
    missed = n_total - len(cb_stream)
    skips = sorted(b - a - 1 for a, b in zip(cb_events, cb_events[1:]) if b - a > 1)
    sc.note("carbridge skipped reports %d times, the largest skips: %s" % (len(skips), skips[-5:]))
    sc.metric("carbridge_frames", len(cb_stream), "frames")
    sc.metric("carbridge_events_without_frame", missed, "events")
    sc.note("carbridge: %d frames for %d events (%d events without a frame of their own)" % (len(cb_stream), n_total, missed))
    # CPU while streaming: /proc/PID/stat (clock ticks) and the threads' schedstat (ns)
    cpu = {}
    for name in ("carbridge", "ref"):
        (s0, r0), (s1, r1) = cpu0[name], cpu1[name]
        cpu[name] = ((s1 - s0) * 1000.0 if s0 is not None and s1 is not None else None,
                     (r1 - r0) * 1000.0 if r0 is not None and r1 is not None else None)
        sc.note("%s CPU during the stream: stat %s ms, schedstat %s ms" % (name, cpu[name][0], cpu[name][1]))
        if None not in faults0[name] + faults1[name]:
            minor, major = (b - a for a, b in zip(faults0[name], faults1[name]))
            sc.metric("page_faults_minor_%s" % name, minor, "faults")   # during the stream
            sc.metric("page_faults_major_%s" % name, major, "faults")
    source = 1 if cpu["carbridge"][1] is not None and cpu["ref"][1] is not None else 0
    if cpu["carbridge"][source] is not None and cpu["ref"][source] is not None:
        sc.metric("cpu_carbridge", cpu["carbridge"][source], "ms")
        sc.metric("cpu_ref", cpu["ref"][source], "ms")
        if cpu["ref"][source] > 0:
            sc.metric("cpu_ratio", "%.2f" % (cpu["carbridge"][source] / cpu["ref"][source]), "x")
    if got_ref != want_ref or not cb_events or cb_events[-1] != n_total - 1 \
            or n_total <= LAT_WARMUP:
        return

    def latencies_us(rx, events):
        """uinput write -> kernel arrival at the car of the first frame of that event or a newer one (µs),
        for the measured events; and how many of those arrival stamps were upper bounds."""
        out, inexact, n = [], 0, 0
        for i in range(LAT_WARMUP, n_total):
            while events[n] < i:
                n += 1
            out.append((arrival(rx[n]) - stamps[i][0]) * 1e6)
            inexact += not rx[n][2] or rx[n][1] is None
        return out, inexact
    cb_lat, cb_inexact = latencies_us(cb_lines, cb_events)
    ref_lat, ref_inexact = latencies_us(ref_rx, list(range(n_total)))
    car_lag = [(u - kt) * 1e6 for u, kt, _, _ in cb_rx + ref_rx if kt is not None]
    sc.note("stamps that are upper bounds (several lines in one read): carbridge %d, reference %d of %d; "
            "the car read lines %.0f us (p50) after their kernel arrival" % (cb_inexact, ref_inexact, len(cb_lat),
                                                                              k.percentile(car_lag, 50)))
    sc.check(min(cb_lat + ref_lat) >= 0.0, "every line reached the car after its uinput write (clocks agree)",
             "min %.0f us" % min(cb_lat + ref_lat))
    figures = {}
    for p in (50, 90, 99):
        figures[p] = (k.percentile(cb_lat, p), k.percentile(ref_lat, p))
        sc.metric("latency_carbridge_p%d" % p, figures[p][0], "us")
    for p in (50, 90, 99):
        sc.metric("latency_ref_p%d" % p, figures[p][1], "us")
    for p in (50, 90, 99):
        sc.metric("latency_diff_p%d" % p, figures[p][0] - figures[p][1], "us")
    sc.metric("latency_ratio_p50", "%.2f" % (figures[50][0] / figures[50][1]) if figures[50][1] > 0 else "nan", "x")
    paired = [a - b for a, b in zip(cb_lat, ref_lat)]
    sc.metric("latency_paired_diff_p50", k.percentile(paired, 50), "us")
    sc.metric("stamps_inexact", cb_inexact + ref_inexact, "lines")
    # The latency and CPU figures against the C reader are reported side by side, not judged: under TCG they
    # move with the host's load, and the performance budgets are counted deterministically on the host
    # (Benchmarks/Thresholds, scripts/rss.sh, scripts/startup.sh).
    console("NOTE: s11 %s build, writer %.0f Hz of %d%s: p50 carbridge %.0f us, C reader %.0f us (reported, not judged)"
            % ("debug" if debug_build else "release", rate, LAT_RATE_HZ, " (starved guest)" if starved else "",
               figures[50][0], figures[50][1]))


TITLES = {
    1: "gamepad drive over RFCOMM (hotplugged pad, exact frames, 50 ms stream)",
    2: "unplug while moving -> stop frame within 100 ms; replug drives again",
    3: "tilt drive from the mxc4005 IIO driver (ranges, hysteresis, unbind -> stop)",
    4: "evdev accelerometer (INPUT_PROP_ACCELEROMETER) steers",
    5: "link loss (car listener killed) -> reconnect with back-off, S reset, no stale burst",
    6: "carbridge scan lists the car's address and name",
    7: "SIGTERM while moving -> E,0,0,0 before the connection closes",
    8: "udev rules + unprivileged user in the configured group opens pad and IIO",
    9: "RFCOMM car stops reading -> stall noticed, link closed, backlog <= its buffer + max_in_flight, reconnect",
    10: "comparison: the stalled car with max_in_flight 64 and no stall timeout (old behaviour) -> stale backlog",
    11: "latency: 500 Hz stick + trigger reports via uinput to a TCP car, carbridge and a C libevdev reader side by side (figures reported)",
    13: "bluetoothd: unprivileged scan, pair with PIN (wrong PIN fails), run --link rfcomm://NAME (SDP channel), raw fallback",
}


# Numbered scenarios that run only when named (`--only 10`): measurements of the old behaviour, which check
# nothing of the current code (scenario 9 checks the stall rule itself).
ON_REQUEST = {10}


class TimeLimit(Exception):
    pass


from bluez_scenario import scenario_13  # noqa: E402  (issue 11: BlueZ over D-Bus)


def on_sigterm(*_):
    raise TimeLimit()


if __name__ == "__main__":
    if sys.argv[1:] == ["--list"]:   # the scenarios, for run.sh and main.sh: numbers first, then names
        import glob
        # a scenario whose file says `IN_DEFAULT_RUN = False` (a measurement, not a check) runs only when named
        own = sorted(os.path.basename(f)[len("scenario_"):-3]
                     for f in glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenario_*.py"))
                     if "\nIN_DEFAULT_RUN = False" not in open(f).read())
        print(" ".join([str(n) for n in sorted(TITLES) if n not in ON_REQUEST] + own))
        sys.exit(0)
    # A number is one of TITLES; a name, a scenario kept in a file of its own (guest/scenario_NAME.py: TITLE
    # and run(sc)).
    n = int(sys.argv[1]) if sys.argv[1].isdigit() else sys.argv[1]
    own_file = None if n in TITLES else __import__("scenario_%s" % n)
    sc = Scenario(n, TITLES[n] if own_file is None else own_file.TITLE)
    # main.sh's `timeout` sends SIGTERM: stop the car and carbridge (cleanups) and keep the logs, so a
    # slow scenario does not leave a car holding channel 1 for the next one.
    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        (own_file.run if own_file is not None else globals()["scenario_%d" % n])(sc)
    except TimeLimit:
        sc.check(False, "the scenario finished within main.sh's time limit")
    except Abort as abort:
        sc.note("scenario stopped early: %s" % abort)
    except Exception as error:
        traceback.print_exc()
        sc.check(False, "the scenario script ran without an error", repr(error))
    sys.exit(0 if sc.finish() else 1)

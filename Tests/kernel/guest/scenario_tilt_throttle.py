#!/usr/bin/python3
"""Scenario tilt_throttle: an IIO accelerometer's pitch is the throttle (issue 16), hands-free, on a TCP car.

The real mxc4005 IIO driver on i2c-stub (scenario 3's sensor; each pose one I2C block write of X/Y/Z) with `[steering] source = "tilt"`, `[throttle] source = "tilt"` and `[handsfree] arm_tilt = true`,
as config/handsfree-tilt.toml sets a tilt rig up. Nobody presses anything:

- the rig starts leaning (no arming), is held level 1.2 s, wobbles (a lean past the dead zone), is held
  level again: the engine goes on (STATUS= "engine on" on carbridge's NOTIFY_SOCKET) no sooner than
  arm_after_s after the second level pose, so the wobble restarted the count; arming sends nothing;
- pitch 7°, 9°, 12°, 40° forward: exactly M,0,10,1 M,0,20,1 M,0,40,1 M,0,120,1 (steps of 10 from the dead
  zone, capped at max_speed);
- lean back: the stop frame M,0,0,1 within 100 ms of the register write, nothing with S > 0 after it;
- straight from leaning back to 12° forward: nothing (after a stop the lean must come back to neutral);
  level, then 12°: M,0,40,1;
- the driver unbound while moving: the stop frame within 100 ms of the unbind (not counting the time the
  guest measurably did not run: the host is shared), nothing with S > 0 after;
- SIGTERM: exit 0, E,0,0,0 last.

The car's receive times (guest/tcpcar.c, CLOCK_MONOTONIC) are compared with the time just before each
register write (an I2C_SMBUS ioctl from this process) or the unbind began. Run by scenarios.py (its
__main__ loads scenario_NAME.py for the names it is given).
"""
import ctypes, fcntl, math, os, signal, subprocess, threading, time
import kharness as k
from kharness import Carbridge, StubAccelerometer, monotonic
from scenario_two_instances import NotifySocket

TITLE = "tilt throttle from the real mxc4005 IIO driver: arm held level (a wobble restarts), pitch steps of 10, lean back and unbind -> stop"
PORT = 47021
ARM_S = 2.0
HOLD_S = 0.5            # how long the rider holds each pose: several 50 ms stream periods and 20 ms samples
STOP_BOUND_MS = 100.0
STATUS_LATE_S = 0.5 + 0.4   # STATUS= is rate-limited to one per 0.5 s (the newest is sent when it ends), + slack

CONFIG = """[link]
url = "tcp://127.0.0.1:%d"

[drive]
period_ms = 50
max_speed = 120
on_input_lost = "stop"
hysteresis_deg = 2.0
idle_timeout_s = 0

[devices]
gamepad = "none"
accelerometer = "auto"

[steering]
source = "tilt"
tilt_axes = "x,z"
neutral_deg = 0.0
sensitivity = 1.0
smoothing_ms = 0
sample_rate_hz = 50.0
input_timeout_ms = 500

[throttle]
source = "tilt"
pitch_axes = "y,z"
neutral_deg = 0.0
deadzone_deg = 6.0
full_deg = 26.0
reverse = false

[handsfree]
arm_tilt = true
arm_after_s = %s
""" % (PORT, ARM_S)




class SmbusData(ctypes.Union):
    """union i2c_smbus_data (linux/i2c.h): a block is its length byte, up to 32 bytes, one spare."""
    _fields_ = [("byte", ctypes.c_uint8), ("word", ctypes.c_uint16), ("block", ctypes.c_uint8 * 34)]


class SmbusIoctlData(ctypes.Structure):
    """struct i2c_smbus_ioctl_data (linux/i2c-dev.h)."""
    _fields_ = [("read_write", ctypes.c_uint8), ("command", ctypes.c_uint8), ("size", ctypes.c_uint32),
                ("data", ctypes.POINTER(SmbusData))]


class StallProbe:
    """A thread that sleeps 2 ms at a time and keeps every wake-up time: the gaps show when the guest
    (not only carbridge) did not run."""

    def __init__(self):
        self.times = [monotonic()]
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while self.running:
            time.sleep(0.002)
            self.times.append(monotonic())

    def stop(self):
        self.running = False
        self.thread.join(1)

    def gaps(self, since, until, over=0.0):
        """[(start, length)] of the gaps between wake-ups longer than `over` that overlap [since, until]."""
        return [(a, b - a) for a, b in zip(self.times, self.times[1:]) if b >= since and a <= until and b - a > over]

    def unscheduled(self, since, until, over=0.015):
        """Seconds of [since, until] inside gaps longer than `over` (less the 2 ms sleep itself): time in
        which this thread, and so most likely nothing in the guest, ran."""
        return sum(max(0.0, min(a + length, until) - max(a + 0.002, since)) for a, length in self.gaps(since, until, over))

    def longest(self, since, until):
        """The longest gap between wake-ups that overlaps [since, until], in seconds."""
        return max([length for _, length in self.gaps(since, until)] or [0.0])


class Rig:
    """The mxc4005 as a tilt rig: pitch about the x axis (y = g·sin, z = g·cos, so atan2(y, z) is the pitch).

    A pose is the same I2C block write of X/Y/Z as StubAccelerometer.write_vector's `i2cset … i`, made
    from this process through /dev/i2c-N (I2C_SLAVE_FORCE, then the I2C_SMBUS ioctl): starting i2cset
    took up to 360 ms under TCG on a loaded host, which made the write's instant unknowable to within
    the 100 ms bounds; the ioctl is stamped to within a millisecond."""

    I2C_SLAVE_FORCE = 0x0706
    I2C_SMBUS = 0x0720
    I2C_SMBUS_WRITE = 0
    I2C_SMBUS_I2C_BLOCK_DATA = 8

    def __init__(self, acc):
        self.acc = acc
        self.fd = os.open("/dev/i2c-%d" % acc.bus, os.O_RDWR)
        fcntl.ioctl(self.fd, self.I2C_SLAVE_FORCE, acc.ADDR)
        self.writes = []   # (before, after, what)

    def write_vector(self, x, y, z):
        """X/Y/Z (1 g = 1024) into registers 0x03…0x08 in one block write; returns (before, after) it."""
        payload = StubAccelerometer._reg(x) + StubAccelerometer._reg(y) + StubAccelerometer._reg(z)
        data = SmbusData()
        data.block[0] = len(payload)
        for i, byte in enumerate(payload):
            data.block[1 + i] = byte
        args = SmbusIoctlData(self.I2C_SMBUS_WRITE, 0x03, self.I2C_SMBUS_I2C_BLOCK_DATA, ctypes.pointer(data))
        before = monotonic()
        fcntl.ioctl(self.fd, self.I2C_SMBUS, args)
        return before, monotonic()

    def pitch(self, degrees, what=""):
        """Writes the pose; returns the monotonic time just before the write (the earliest the sensor can
        show it, so the latencies measured from it are never flattered)."""
        before, after = self.write_vector(0, int(round(1024 * math.sin(math.radians(degrees)))),
                                          int(round(1024 * math.cos(math.radians(degrees)))))
        self.writes.append((before, after, what or "pitch %+g" % degrees))
        return before

    def close(self):
        os.close(self.fd)


def run(sc):
    acc = StubAccelerometer()
    acc.delete()
    sc.require(acc.create(), "mxc4005 IIO device created on i2c-stub")
    sc.cleanups.append(acc.delete)
    rig = Rig(acc)
    sc.cleanups.append(rig.close)
    sc.cleanups.append(lambda: sc.note("register writes (before, after, what): %s"
                                       % ["%.4f %.4f %s" % w for w in rig.writes]))
    rig.pitch(12, "leaning at start")   # not still: nothing arms before the rider holds it level

    car = k.TcpCar(os.path.join(sc.work, "car.log"), PORT)
    sc.require(car.start(), "the TCP car (Tests/kernel/build/tcpcar) listens on 127.0.0.1:%d" % PORT)
    sc.cleanups.append(car.stop)
    # Not in sc.work: finish() copies that directory, and a socket cannot be copied.
    if os.path.exists("/tmp/kt/notify-21"):
        os.unlink("/tmp/kt/notify-21")
    notify = NotifySocket("/tmp/kt/notify-21")
    sc.cleanups.append(notify.close)
    cb = Carbridge(sc.work, CONFIG)
    since = monotonic()
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
    picked = k.wait_until(lambda: cb.log_lines(r'accelerometer: .*picked', since - 1.0), 10)
    sc.require(bool(picked), "carbridge picks the mxc4005 (accelerometer = \"auto\")")
    # The first samples reach the mapper shortly after the pick; give it a few periods.
    time.sleep(0.2)

    # Arming: level 1.2 s, a wobble, level again until armed.
    rig.pitch(0, "level")
    time.sleep(1.2)
    rig.pitch(12, "wobble")
    time.sleep(0.3)
    level = rig.pitch(0, "level again")
    on = k.wait_until(lambda: next((t for t, line in notify.assignments()
                                    if line.startswith("STATUS=engine on") and t >= since), None), ARM_S + 3.0)
    sc.note("STATUS= lines: %s" % ["%.3f %s" % (t, line) for t, line in notify.assignments() if line.startswith("STATUS=")])
    sc.check(on is not None, "held level: armed (STATUS= engine on)")
    if on is not None:
        sc.metric("engine_on_status_after_level", (on - level) * 1000.0, "ms")
        sc.check(on >= level + ARM_S, "not armed before %.0f s level after the wobble (the wobble restarted the count)"
                 % ARM_S, "engine on %.3f s after the last level write" % (on - level))
        sc.check(on <= level + ARM_S + STATUS_LATE_S, "armed %.0f s after the last level pose (STATUS= within its 0.5 s rate limit)"
                 % ARM_S, "%.3f s" % (on - level))
    time.sleep(0.3)

    # The throttle: steps of 10 past the dead zone, capped at max_speed.
    t_lean = rig.pitch(7, "lean 7")
    time.sleep(HOLD_S)
    rig.pitch(9, "lean 9"); time.sleep(HOLD_S)
    rig.pitch(12, "lean 12"); time.sleep(HOLD_S)
    rig.pitch(40, "lean 40"); time.sleep(HOLD_S)
    # Leaning back stops (reverse = false).
    t_back = rig.pitch(-10, "lean back")
    time.sleep(HOLD_S)
    # Straight from leaning back to forward: the throttle waits for neutral.
    rig.pitch(12, "lean 12 straight from leaning back")
    time.sleep(HOLD_S)
    t_neutral = rig.pitch(0, "level")
    time.sleep(HOLD_S)
    t_again = rig.pitch(12, "lean 12 again")
    time.sleep(HOLD_S)
    probe = StallProbe()
    time.sleep(0.2)
    t_unbind = monotonic()
    unbound = acc.unbind()
    sc.metric("unbind_write_took", (unbound - t_unbind) * 1000.0, "ms")
    time.sleep(0.5)
    probe.stop()
    # How long the guest itself (this process's 2 ms sleeps) went unscheduled around the unbind: a stop
    # that comes late because nothing in the guest ran is the host's load, not carbridge's.
    stall = probe.longest(t_unbind - 0.2, t_unbind + 0.5)
    sc.metric("guest_longest_unscheduled_around_unbind", stall * 1000.0, "ms")
    sc.note("the guest unscheduled over 15 ms (start after the unbind, ms): %s"
            % ["%+.1f for %.1f" % ((a - t_unbind) * 1000.0, length * 1000.0) for a, length in probe.gaps(t_unbind - 0.2, t_unbind + 0.5, 0.015)])
    time.sleep(0.5)
    status = cb.stop(signal.SIGTERM, 5)
    car.wait_frame(lambda f: f.text == "E,0,0,0", t_unbind, 3.0)
    car.stop()   # tcpcar writes its buffered RX lines at exit

    frames = [f for f in car.frames() if f.t > since]
    sc.dump_frames(frames)
    sc.check(not [f for f in frames if f.t < t_lean and f.text != "E,0,0,0"],
             "leaning, level, a wobble, arming: nothing sent before the first lean", [f.text for f in frames if f.t < t_lean])
    # The jump from 12° to 40° is one register block write, but the driver's channels are read one by one
    # (in_accel_y_raw, then in_accel_z_raw): a sample taken between them mixes the two poses, a pitch between
    # them, so the speed may pass a step on its way up to the cap, as a rider leaning forward would. Only that
    # is let through: steps strictly rising between 40 and 120, right before the cap.
    seen = k.dedup(frames)
    ramp = []
    if "M,0,40,1" in seen and "M,0,120,1" in seen:
        start, cap = seen.index("M,0,40,1"), seen.index("M,0,120,1")
        ramp = seen[start + 1:cap]
        speeds = [int(t.split(",")[2]) for t in ramp if t.startswith("M,0,") and t.endswith(",1")]
        if len(speeds) == len(ramp) and all(40 < s < 120 for s in speeds) and speeds == sorted(set(speeds)):
            seen = seen[:start + 1] + seen[cap:]
            if ramp:
                sc.note("a torn sample on the way to the cap (a channel read between the two poses): %s" % ramp)
    sc.check(seen == ["E,0,0,0", "M,0,10,1", "M,0,20,1", "M,0,40,1", "M,0,120,1", "M,0,0,1", "M,0,40,1", "M,0,0,1",
                      "E,0,0,0"],
             "exact frames: 10, 20, 40, 120 (cap), lean back stops, 40 after neutral, unbind stops, engine off at exit",
             k.dedup(frames))
    lean = next((f for f in frames if f.t >= t_lean), None)
    sc.check(lean is not None and lean.text == "M,0,10,1", "the first lean past the dead zone is the first step M,0,10,1",
             lean.text if lean else "nothing")
    if lean is not None:
        sc.metric("first_lean_to_frame", (lean.t - t_lean) * 1000.0, "ms")
    sc.check(max([f.s for f in frames] or [0]) == 120, "never above max_speed 120", max([f.s for f in frames] or [0]))

    back = next((f for f in frames if f.t >= t_back and f.motion and f.s == 0), None)
    sc.check(back is not None and back.text == "M,0,0,1", "leaning back at speed: the stop frame M,0,0,1", back.text if back else "nothing")
    if back is not None:
        ms = (back.t - t_back) * 1000.0
        sc.metric("stop_after_lean_back", ms, "ms")
        sc.check(ms <= STOP_BOUND_MS, "the stop frame within %.0f ms of leaning back" % STOP_BOUND_MS, "%.1f ms" % ms)
        sc.check(not [f for f in frames if back.t < f.t < t_again and f.s > 0],
                 "nothing with S > 0 after the lean-back stop until the rider comes back to neutral and leans again",
                 [f.text for f in frames if back.t < f.t < t_again and f.s > 0][:5])
    again = next((f for f in frames if f.t >= t_again and f.s > 0), None)
    sc.check(again is not None and again.text == "M,0,40,1" and t_neutral < again.t,
             "level, then 12 deg: M,0,40,1 (the throttle starts again after neutral)", again.text if again else "nothing")

    stop = next((f for f in frames if f.t >= t_unbind and f.motion and f.s == 0), None)
    last_stream = next((f for f in reversed(frames) if f.t < t_unbind), None)
    if stop is not None and last_stream is not None:
        sc.metric("car_silent_before_unbind_stop", (stop.t - last_stream.t) * 1000.0, "ms")
    lost = cb.log_lines(r'accelerometer .* lost', t_unbind - 1.0)
    noticed = "carbridge logged the loss %.1f ms after the unbind" % ((lost[0][0] - t_unbind) * 1000.0) if lost else "no loss logged"
    if lost:
        sc.metric("loss_logged_after_unbind", (lost[0][0] - t_unbind) * 1000.0, "ms")
    sc.check(stop is not None and stop.text == "M,0,0,1", "the IIO driver unbound while moving: the stop frame M,0,0,1",
             [f.text for f in frames if f.t >= t_unbind][:5])
    if stop is not None:
        ms = (stop.t - t_unbind) * 1000.0
        sc.metric("stop_after_iio_unbind", ms, "ms")
        # The unbind makes udevd and the kernel work in the guest while the host (2 cores shared with other
        # builds) deschedules the guest's vCPUs for tens of ms at a time: 104-141 ms measured with the guest
        # not running for most of the excess. The bound is on carbridge's part: the time the probe thread
        # shows the guest not running (gaps over 15 ms) between the unbind and the stop frame is left out.
        idle = probe.unscheduled(t_unbind, stop.t) * 1000.0
        sc.metric("guest_unscheduled_between_unbind_and_stop", idle, "ms")
        sc.check(ms - idle <= STOP_BOUND_MS,
                 "the stop frame within %.0f ms of the unbind, less the time the guest did not run" % STOP_BOUND_MS,
                 "%.1f ms, of which the guest did not run %.1f ms; %s" % (ms, idle, noticed))
        sc.check(not [f for f in frames if f.t > stop.t and f.s > 0], "nothing with S > 0 after the unbind's stop frame",
                 [f.text for f in frames if f.t > stop.t][:5])
    sc.check(status == 0, "SIGTERM: exit status 0", status)
    sc.check(bool(frames) and frames[-1].text == "E,0,0,0", "E,0,0,0 is the last frame", frames[-1].text if frames else "nothing")

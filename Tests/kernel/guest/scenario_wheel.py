#!/usr/bin/python3
"""Scenario wheel: a racing wheel and its pedals drive a TCP car with the shipped config/wheel.toml, and the
wheel centres itself while the engine is on (issue 33, item 4).

Two uinput wheels made to look like what the kernel gives a Logitech G29 (046d:c24f, "Logitech G29 Driving
Force Racing Wheel", version 0x111, as an evtest of a real one on Linux 6.8 shows it): ABS_X 0..65535 (900
degrees), ABS_Y clutch / ABS_Z gas / ABS_RZ brake 0..255 and 255 when released, a -1..1 hat, 25 buttons
BTN_TRIGGER..BTN_DEAD and BTN_TRIGGER_HAPPY1..9, EV_MSC/MSC_SCAN. Their test side plays the wheel's driver: it
reads the EV_UINPUT requests from its uinput fd, answers each upload and erase, and records every effect it
was given and every EV_FF write (a play with its effect id, or FF_AUTOCENTER with its value) with the
kernel's CLOCK_MONOTONIC stamp. The wheels never open their own event node (scenario rumble's QuietUInput).

  A. force feedback as the kernel's hid-lg4ff gives a G29: FF_CONSTANT, FF_GAIN, FF_AUTOCENTER (no spring).
     `[devices] gamepad = "auto"` takes it; carbridge uploads nothing and writes FF_AUTOCENTER 0 once it has
     the wheel (the engine is off: the wheel is free); Options (BTN_BASE4) -> engine on -> FF_AUTOCENTER at
     [feedback] centring 0.5 of 0xffff (32767) (this first engine on of the run only reported; the later
     ones within PLAY_BOUND_MS); gas ABS_Z 200 -> M,0,50,1; the wheel at
     30 degrees (raw 34952) -> R,1,50,1; the brake ABS_RZ 100 -> the stop frame R,1,0,1; brake and gas
     released; Options -> E,0,0,0 and FF_AUTOCENTER 0 within PLAY_BOUND_MS; Options -> on again (32767);
     SIGTERM with the engine on -> E,0,0,0 and FF_AUTOCENTER 0 before the exit, exit 0. Exactly those
     FF_AUTOCENTER values, in that order.
  B. force feedback with FF_SPRING too (as new-lg4ff or hid-logitech-hidpp give a wheel: FF_CONSTANT,
     FF_SPRING, FF_DAMPER, FF_GAIN, FF_AUTOCENTER): carbridge prefers the spring: one upload, FF_SPRING,
     both sides' saturation 0.5 of 0xffff and coefficients 0.5 of 0x7fff, centre 0, endless (length 0);
     a stop of it (value 0) once it has the wheel; Options -> a play of that effect (value 1, only reported);
     Options -> its stop (value 0, within PLAY_BOUND_MS); no FF_AUTOCENTER write; the gas drives; unplugging the wheel while moving stops the
     car within UNPLUG_BOUND_S; carbridge keeps running and exits 0 on SIGTERM.

Before issue 33's item 4 carbridge had no wheel mapping: the config's `source = "wheel"` was an error, so
carbridge did not start (A and B fail at their first check), and nothing ever wrote FF_AUTOCENTER or
uploaded a spring.

Run by scenarios.py (its __main__ loads scenario_NAME.py for the names it is given).
"""
import ctypes, os, select, signal, threading, time
from evdev import AbsInfo, ff, ecodes as e
import kharness as k
from kharness import Carbridge, monotonic
from scenarios import wait_pad_ready, HOTPLUG_S
from scenario_rumble import QuietUInput, EVENT, EV_UINPUT, UI_FF_UPLOAD, UI_FF_ERASE

TITLE = "racing wheel (a G29-like uinput wheel with FF_AUTOCENTER, then FF_SPRING): wheel, gas, brake, engine; centring while the engine is on"
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

LG4FF_EFFECTS = [e.FF_CONSTANT, e.FF_GAIN, e.FF_AUTOCENTER]
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


def autocenter_values(wheel, since=0.0):
    return [v for t, v in wheel.snapshot()[3] if t >= since]


def wait_autocenter(wheel, value, since, timeout_s):
    return k.wait_until(lambda: next(((t, v) for t, v in wheel.snapshot()[3] if t >= since and v == value), None),
                        timeout_s)


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


def phase_autocenter(sc):
    label = "A"
    car, cb = start_run(sc, label, PORT)
    wheel = Wheel(LG4FF_EFFECTS)
    t_plug = plug(sc, cb, wheel, label)
    released = k.wait_until(lambda: autocenter_values(wheel), 5)
    sc.check(autocenter_values(wheel) == [0], "A: once carbridge has the wheel, FF_AUTOCENTER 0 (engine off: free)",
             autocenter_values(wheel))
    sc.check(bool(released), "A: ... written within 5 s of the plug", "%.3f" % (monotonic() - t_plug))
    requests, effects, plays, _, _, errors = wheel.snapshot()
    sc.check(not requests and not effects, "A: a wheel without FF_SPRING gets no upload", (requests, effects))
    sc.check(not errors, "A: no error answering the kernel", errors)

    # The first engine on runs code paths for the first time (the debug build under TCG): only reported.
    t_on = wheel.press(OPTIONS, "Options: engine on")
    check_timed(sc, wait_autocenter(wheel, AUTOCENTER_ON, t_on - 0.05, 3.0), t_on,
                "A: engine on: FF_AUTOCENTER %d (centring 0.5)" % AUTOCENTER_ON, "autocenter_first_on_after_press",
                timed=False)
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
    check_timed(sc, wait_autocenter(wheel, 0, t_off - 0.05, 3.0), t_off, "A: engine off: FF_AUTOCENTER 0",
                "autocenter_off_after_press")
    time.sleep(GAP_S)
    t_on2 = wheel.press(OPTIONS, "Options: engine on again")
    check_timed(sc, wait_autocenter(wheel, AUTOCENTER_ON, t_on2 - 0.05, 3.0), t_on2,
                "A: engine on again: FF_AUTOCENTER %d" % AUTOCENTER_ON, "autocenter_on_again_after_press")
    time.sleep(GAP_S)
    t_term = monotonic()
    status = cb.stop(signal.SIGTERM, 10)
    sc.check(status == 0, "A: carbridge exits 0 on SIGTERM", status)
    sc.check(autocenter_values(wheel, t_term - 0.05) == [0],
             "A: SIGTERM with the engine on: the shutdown's engine off releases the wheel (FF_AUTOCENTER 0)",
             autocenter_values(wheel, t_term - 0.05))
    sc.check(autocenter_values(wheel) == [0, AUTOCENTER_ON, 0, AUTOCENTER_ON, 0],
             "A: exactly: free, on, off, on, off", autocenter_values(wheel))
    sc.check(not wheel.snapshot()[2], "A: no effect played", wheel.snapshot()[2])
    car.stop()   # tcpcar writes the lines it buffered
    sc.dump_frames(car.frames(), "A: the car")
    check_frame(sc, car, "M,0,50,1", t_gas, "A: the gas pedal (ABS_Z 200, 255 released) drives: M,0,50,1",
                "gas_to_frame")
    check_frame(sc, car, "R,1,50,1", t_turn, "A: 30 degrees of wheel: R,1,50,1", "wheel_to_frame")
    check_frame(sc, car, "R,1,0,1", t_brake, "A: the brake: the stop frame R,1,0,1", "brake_to_stop_frame")
    check_frame(sc, car, "E,0,0,0", t_off, "A: Options: E,0,0,0")
    got = k.dedup(car.frames())
    sc.check(got == ["E,0,0,0", "M,0,50,1", "R,1,50,1", "R,1,0,1", "E,0,0,0"],
             "A: exactly the handshake, gas, wheel, brake, then engine off (twice: Options, the shutdown)", got)
    sc.check([f.text for f in car.frames()].count("E,0,0,0") == 3, "A: E,0,0,0 three times: handshake, Options, shutdown",
             [f.text for f in car.frames()].count("E,0,0,0"))
    sc.check(len([f for f in car.frames() if f.text == "R,1,0,1"]) == 1, "A: the brake's stop frame is not streamed")
    wheel.close()


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
    phase_autocenter(sc)
    phase_spring(sc)

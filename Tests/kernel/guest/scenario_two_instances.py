#!/usr/bin/python3
"""Scenario two_instances: two cars, two pads, two carbridge processes on one machine (as two instances of
config/carbridge@.service): each config pins its own pad (by name) and its own car (RFCOMM
channel 1 and 2 of the car controller hci1), each runs under its own NOTIFY_SOCKET with a watchdog,
and the red one has a kiosk turn limit. Each pad drives only its own car; a turn ending on one car
leaves the other driving; SIGTERM stops both.

Run by scenarios.py (its __main__ loads scenario_NAME.py for the names it is given).
"""
import os, re, signal, socket, subprocess, threading, time
from evdev import ecodes as e
import kharness as k
from kharness import Car, Carbridge, Pad, dedup, monotonic

TITLE = "two instances: two pads pinned by name, two RFCOMM cars, each pad drives only its car; turn limit; sd_notify"
GAP_S = 0.3
SESSION_LIMIT_S = 6.0     # the red instance's kiosk.session_limit_s
WATCHDOG_USEC = 2000000   # pings every second


class ChannelCar(Car):
    """car.py on hci1 at RFCOMM channel `channel` (kharness.Car always uses channel 1)."""

    def __init__(self, log_path, channel):
        Car.__init__(self, log_path)
        self.channel = channel

    def start(self, timeout_s=30):
        since = monotonic()
        cmd = [k.PY, os.path.join(k.GUEST, "car.py"), "--addr", self.addr, "--channel", str(self.channel),
               "--log", self.log_path, "--status-every", "0"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(self.log_path + ".stderr", "a"))
        return bool(k.wait_until(lambda: self.log.times("LISTEN", since), timeout_s))


class NotifySocket:
    """systemd's side of sd_notify: an AF_UNIX datagram socket; every datagram kept with its time."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.settimeout(0.1)
        self.messages = []
        self.running = True
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        while self.running:
            try:
                data = self.sock.recv(4096)
            except socket.timeout:
                continue
            except OSError:
                return
            self.messages.append((monotonic(), data.decode("utf-8", "replace")))

    def assignments(self):
        return [(t, line) for t, text in list(self.messages) for line in text.split("\n")]

    def statuses(self):
        return [line[7:] for _, line in self.assignments() if line.startswith("STATUS=")]

    def pings(self):
        return [t for t, line in self.assignments() if line == "WATCHDOG=1"]

    def close(self):
        self.running = False
        self.thread.join(1)
        self.sock.close()


def config(car_addr, channel, pad_name, extra=""):
    cfg = k.base_config(car_addr, gamepad=pad_name, extra=extra)
    return cfg.replace('url = "rfcomm://%s/1"' % car_addr, 'url = "rfcomm://%s/%d"' % (car_addr, channel))


def start_instance(sc, name, car, cfg, notify):
    """Starts one carbridge in its own directory with its own NOTIFY_SOCKET; checks the handshake."""
    workdir = os.path.join(sc.work, name)
    os.makedirs(workdir, exist_ok=True)
    cb = Carbridge(workdir, cfg)
    os.environ["NOTIFY_SOCKET"] = notify.path
    os.environ["WATCHDOG_USEC"] = str(WATCHDOG_USEC)
    since = monotonic()
    try:
        cb.start()
    finally:
        del os.environ["NOTIFY_SOCKET"]
        del os.environ["WATCHDOG_USEC"]
    sc.cleanups.append(lambda: cb.stop(signal.SIGTERM, 3))
    k.wait_until(lambda: car.log.connections(since) or not cb.alive(), 45)
    sc.require(cb.alive(), "%s: carbridge keeps running after start" % name, "exit status %s" % (cb.proc.poll(),))
    sc.require(bool(car.log.connections(since)), "%s: carbridge connects to its car (channel %d) within 45 s"
               % (name, car.channel))
    accepted, cb.conn = car.log.connections(since)[0]
    first = car.log.wait_frame(lambda f: True, 0, 5.0, conn=cb.conn)
    sc.check(first is not None and first.text == "E,0,0,0", "%s: handshake E,0,0,0 is the first line" % name,
             first.text if first else "nothing")
    sc.check(k.wait_until(lambda: any(line == "READY=1" for _, line in notify.assignments()), 10),
             "%s: READY=1 on its NOTIFY_SOCKET" % name)
    return cb


def picked(sc, cb, name, pad):
    line = k.wait_until(lambda: cb.log_lines(r'gamepad: "%s" \(%s\) picked' % (re.escape(pad.name), re.escape(pad.node))), 8.0)
    sc.require(bool(line), "%s: carbridge picks %s (%s)" % (name, pad.name, pad.node))


def run(sc):
    cars = {}
    for name, channel in (("red", 1), ("blue", 2)):
        car = ChannelCar(os.path.join(sc.work, "car-%s.log" % name), channel)
        sc.require(car.addr is not None, "hci1 (the cars' controller) has an address")
        sc.require(car.start(), "car %s listening on hci1 channel %d" % (name, channel))
        sc.cleanups.append(car.stop)
        cars[name] = car
    # Both pads exist before either carbridge starts: "auto" would give both processes the same one.
    pads = {}
    for name in ("red", "blue"):
        pad = Pad(name="Harness Pad %s" % name.capitalize())
        pad.name = "Harness Pad %s" % name.capitalize()
        sc.cleanups.append(pad.close)
        pads[name] = pad
    sc.note("pads: red %s, blue %s" % (pads["red"].node, pads["blue"].node))
    notify = {}
    for name in ("red", "blue"):
        notify[name] = NotifySocket(os.path.join("/tmp/kt", "notify-%s" % name))
        sc.cleanups.append(notify[name].close)
    red_extra = "\n[kiosk]\nsession_limit_s = %.1f\n" % SESSION_LIMIT_S
    cb = {
        "red": start_instance(sc, "red", cars["red"], config(cars["red"].addr, 1, pads["red"].name, red_extra), notify["red"]),
        "blue": start_instance(sc, "blue", cars["blue"], config(cars["blue"].addr, 2, pads["blue"].name), notify["blue"]),
    }
    for name in ("red", "blue"):
        picked(sc, cb[name], name, pads[name])
    time.sleep(0.2)
    for name, other in (("red", "blue"), ("blue", "red")):
        sc.check(cb[name].has_open(pads[name].node), "%s: carbridge holds its own pad open" % name)
        sc.check(not cb[name].has_open(pads[other].node), "%s: carbridge does not open the %s pad" % (name, other))

    red, blue = pads["red"], pads["blue"]
    red_on = red.press(e.BTN_START, "red engine on"); time.sleep(GAP_S)
    red.press(e.BTN_TR, "red speed+"); time.sleep(GAP_S)
    red.press(e.BTN_TR, "red speed+"); time.sleep(GAP_S)
    blue.press(e.BTN_START, "blue engine on"); time.sleep(GAP_S)
    blue.press(e.BTN_TR, "blue speed+"); time.sleep(GAP_S)
    blue.press(e.BTN_NORTH, "blue gear"); time.sleep(GAP_S)
    red.axis(e.ABS_X, 32767, "red steer right"); time.sleep(GAP_S)
    time.sleep(0.5)
    driven = {name: cars[name].log.frames(conn=cb[name].conn)[1:] for name in cars}
    sc.dump_frames(driven["red"], "red car, after the handshake")
    sc.dump_frames(driven["blue"], "blue car, after the handshake")
    sc.check(dedup(driven["red"]) == ["M,0,10,1", "M,0,20,1", "R,2,20,1"],
             "the red car gets exactly the red pad's frames", dedup(driven["red"]))
    sc.check(dedup(driven["blue"]) == ["M,0,10,1", "B,0,10,0"],
             "the blue car gets exactly the blue pad's frames", dedup(driven["blue"]))
    sc.check(len(driven["red"]) >= 20 and len(driven["blue"]) >= 20, "both cars stream at once",
             "%d red, %d blue frames" % (len(driven["red"]), len(driven["blue"])))
    # STATUS= follows each instance's own state (rate-limited to one update per 0.5 s).
    k.wait_until(lambda: notify["red"].statuses()[-1:] == ["engine on, speed 20 forward, link up"], 3)
    k.wait_until(lambda: notify["blue"].statuses()[-1:] == ["engine on, speed 10 reverse, link up"], 3)
    sc.check(notify["red"].statuses()[-1:] == ["engine on, speed 20 forward, link up"], "red: STATUS shows its state",
             notify["red"].statuses())
    sc.check(notify["blue"].statuses()[-1:] == ["engine on, speed 10 reverse, link up"], "blue: STATUS shows its state",
             notify["blue"].statuses())

    # The red turn ends at its limit: stop frame, then E,0,0,0; the blue car keeps streaming.
    end = cars["red"].log.wait_frame(lambda f: f.text == "E,0,0,0", red_on, SESSION_LIMIT_S + 5, conn=cb["red"].conn)
    sc.require(end is not None, "red: the turn ends with E,0,0,0 within %.0f s of Engine" % (SESSION_LIMIT_S + 5))
    sc.metric("turn_end_after_engine_on", (end.t - red_on) * 1000.0, "ms")
    sc.check(abs(end.t - red_on - SESSION_LIMIT_S) <= 0.5, "red: the turn ends %.0f s after Engine (±0.5 s)"
             % SESSION_LIMIT_S, "%.2f s" % (end.t - red_on))
    time.sleep(1.0)
    red_frames = cars["red"].log.frames(conn=cb["red"].conn)[1:]
    sc.check(dedup(red_frames) == ["M,0,10,1", "M,0,20,1", "R,2,20,1", "R,2,0,1", "E,0,0,0"],
             "red: the stop frame R,2,0,1 then E,0,0,0 at the limit, nothing after", dedup(red_frames))
    blue_after = cars["blue"].log.frames(end.t + 0.2, conn=cb["blue"].conn)
    sc.check(len(blue_after) >= 10 and all(f.text == "B,0,10,0" for f in blue_after),
             "blue: still streaming B,0,10,0 after the red turn ended", dedup(blue_after))
    k.wait_until(lambda: notify["red"].statuses()[-1:] == ["engine off, speed 0 forward, link up"], 3)
    sc.check(notify["red"].statuses()[-1:] == ["engine off, speed 0 forward, link up"],
             "red: STATUS shows the engine off", notify["red"].statuses())
    # A new red turn with the next Engine press; the blue pad still cannot reach the red car.
    red.press(e.BTN_START, "red engine on again"); time.sleep(GAP_S)
    red.press(e.BTN_TR, "red speed+"); time.sleep(GAP_S)
    again = cars["red"].log.frames(end.t + 0.01, conn=cb["red"].conn)
    sc.check(dedup(again)[:1] == ["R,2,10,1"], "red: the next Engine press starts a new turn", dedup(again))

    for name in ("red", "blue"):
        pings = notify[name].pings()
        gaps = [b - a for a, b in zip(pings, pings[1:])]
        sc.check(len(pings) >= 5 and gaps and max(gaps) < WATCHDOG_USEC / 1e6,
                 "%s: WATCHDOG=1 about every %.1f s, never a gap of the whole timeout" % (name, WATCHDOG_USEC / 2e6),
                 "%d pings, max gap %.2f s" % (len(pings), max(gaps or [0])))
        if gaps:
            sc.metric("%s_watchdog_gap_max" % name, max(gaps) * 1000.0, "ms")

    # SIGTERM both: each car's last line is E,0,0,0, and STOPPING=1 reaches each socket.
    for name in ("red", "blue"):
        status = cb[name].stop(signal.SIGTERM, 5)
        sc.check(status == 0, "%s: exit status 0 after SIGTERM" % name, status)
        frames = cars[name].log.frames(conn=cb[name].conn)
        sc.check(frames and frames[-1].text == "E,0,0,0", "%s: E,0,0,0 is the car's last line" % name,
                 frames[-1].text if frames else "nothing")
        sc.check(any(line == "STOPPING=1" for _, line in notify[name].assignments()), "%s: STOPPING=1" % name)
    sc.check(len(set(f.conn for f in cars["red"].log.frames())) == 1 and
             len(set(f.conn for f in cars["blue"].log.frames())) == 1, "one connection per car throughout")

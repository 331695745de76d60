"""Shared guest-side helpers for the carbridge kernel tests (python3 + python3-evdev, Debian 12).

Results: every check ends in one line "PASS: <name>" or "FAIL: <name>: <why>" in $R/results.txt
(and on the console); timing figures are "METRIC: <name> <value> <unit>" lines. Each scenario keeps
its logs (detail log, carbridge's log, the car's log with monotonic timestamps, config) in
$R/s<N>/; they are written to /tmp first (fast) and copied at the end.
"""
import glob, os, re, select, shutil, signal, subprocess, sys, time
from signal import SIGTERM
import evdev
from evdev import UInput, AbsInfo, ecodes as e


def wall_to_monotonic(hours, minutes, seconds):
    """CLOCK_MONOTONIC seconds for today's local time hours:minutes:seconds (the nearest such moment)."""
    now_wall, now_mono = time.time(), time.monotonic()
    today = time.localtime(now_wall)
    wall = time.mktime((today.tm_year, today.tm_mon, today.tm_mday, hours, minutes, 0, 0, 0, -1)) + seconds
    if wall - now_wall > 43200:
        wall -= 86400
    elif now_wall - wall > 43200:
        wall += 86400
    return wall - (now_wall - now_mono)

RESULTS = os.environ.get("R", "/mnt/results")
REPO = os.environ.get("REPO", "/mnt/repo")
CARBRIDGE = os.environ.get("CARBRIDGE", REPO + "/.build/debug/carbridge")
# the binary the latency scenario (11) measures: run.sh passes a release build when it has one
CARBRIDGE_LATENCY = os.environ.get("CARBRIDGE_LATENCY") or CARBRIDGE
GUEST = os.path.dirname(os.path.abspath(__file__))
# C helpers run.sh compiles on the host (guest/refreader.c, guest/tcpcar.c) into Tests/kernel/build
HELPERS = os.path.join(os.path.dirname(GUEST), "build")
PY = "/usr/bin/python3"
PAD_NAME = "Harness Gamepad"


def monotonic():
    """CLOCK_MONOTONIC seconds, the clock the car log uses."""
    return time.monotonic()


def console(line):
    """Writes a progress line to the guest console (the host shows PASS/FAIL/METRIC/NOTE lines)."""
    try:
        with open("/dev/console", "w") as c:
            c.write(line + "\n")
    except OSError:
        pass


def record(line):
    """Appends a PASS/FAIL/METRIC line to results.txt and shows it."""
    with open(os.path.join(RESULTS, "results.txt"), "a") as f:
        f.write(line + "\n")
    console(line)
    print(line, flush=True)


def result(ok, name, why=""):
    record(("PASS: " if ok else "FAIL: ") + name + ("" if ok or not why else ": " + why))
    return ok


def wait_until(predicate, timeout_s, step_s=0.02):
    """Polls predicate until it returns a true value or timeout_s passes; returns its last value."""
    end = monotonic() + timeout_s
    while True:
        value = predicate()
        if value or monotonic() >= end:
            return value
        time.sleep(step_s)


def exec_ms(argv, timeout_s=60):
    """Runs argv (stdin, stdout and stderr /dev/null) and returns exec -> exit in milliseconds, woken by
    the exit itself (select on a pidfd). subprocess's wait with a timeout polls instead, sleeping up to
    50 ms between polls, so the start-up floors it timed came out in steps of up to 50 ms."""
    t = monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    fd = os.pidfd_open(proc.pid)
    try:
        ready, _, _ = select.select([fd], [], [], timeout_s)
        elapsed = (monotonic() - t) * 1000.0
        if not ready:
            proc.kill()
            proc.wait()
            raise subprocess.TimeoutExpired(argv, timeout_s)
        proc.wait()
    finally:
        os.close(fd)
    return elapsed


def percentile(values, p):
    """Nearest-rank percentile of a non-empty list."""
    s = sorted(values)
    k = max(0, min(len(s) - 1, int(round(p / 100.0 * len(s) + 0.5)) - 1))
    return s[k]


def holds_open(pid, node):
    """True when process `pid` has `node` open (through /proc/PID/fd)."""
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                if os.readlink("/proc/%d/fd/%s" % (pid, fd)) == node:
                    return True
            except OSError:
                pass
    except OSError:
        pass
    return False


# ---------------------------------------------------------------- frames and the car's log

FRAME_RE = re.compile(r"^([MLRBXYFGHIJE]),(-?\d+),(\d+),([01])$")


class Frame:
    """One received line, parsed as T,A,S,D when it is a frame."""

    def __init__(self, t, text, conn=0):
        self.t = t
        self.text = text
        self.conn = conn   # the car's connection number (1, 2, … in the order accepted)
        m = FRAME_RE.match(text)
        self.valid = bool(m)
        if m:
            self.kind, self.a, self.s, self.d = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))
        else:
            self.kind, self.a, self.s, self.d = "?", 0, 0, 0

    @property
    def motion(self):
        return self.kind in "MLRBXY"

    def __repr__(self):
        return "%.3f:%s" % (self.t, self.text)


class CarLog:
    """The car's log file, parsed on demand. Kinds carry the connection number ("RX/2"); events()
    gives (time, kind without it, text), events_conn() (time, kind, connection, text)."""

    def __init__(self, path):
        self.path = path

    def events_conn(self):
        out = []
        try:
            with open(self.path) as f:
                for line in f:
                    parts = line.rstrip("\n").split(" ", 2)
                    if len(parts) >= 2:
                        kind, _, conn = parts[1].partition("/")
                        out.append((float(parts[0]), kind, int(conn) if conn else 0, parts[2] if len(parts) > 2 else ""))
        except FileNotFoundError:
            pass
        return out

    def events(self):
        return [(t, kind, text) for t, kind, _, text in self.events_conn()]

    def frames(self, since=0.0, until=float("inf"), conn=None):
        return [Frame(t, text, c) for t, kind, c, text in self.events_conn()
                if kind == "RX" and since <= t <= until and (conn is None or c == conn)]

    def times(self, kind, since=0.0, conn=None):
        return [t for t, k, c, _ in self.events_conn() if k == kind and t >= since and (conn is None or c == conn)]

    def connections(self, since=0.0):
        """[(accept time, connection number)] of the connections accepted since `since`."""
        return [(t, c) for t, k, c, _ in self.events_conn() if k == "CONNECT" and t >= since]

    def kernel_times(self, conn):
        """The kernel arrival times (KTS lines, car --timestamps) of the skbs of one connection."""
        return [float(text) for t, k, c, text in self.events_conn() if k == "KTS" and c == conn]

    def wait_frame(self, predicate, since, timeout_s, conn=None):
        """Waits for the first frame after `since` that satisfies predicate; returns it or None."""
        def find():
            for fr in self.frames(since, conn=conn):
                if predicate(fr):
                    return fr
            return None
        return wait_until(find, timeout_s)


def dedup(frames):
    """The texts of frames with consecutive repeats (streaming) collapsed."""
    out = []
    for fr in frames:
        if not out or out[-1] != fr.text:
            out.append(fr.text)
    return out


def stream_intervals_ms(frames):
    """Gaps between consecutive identical motion frames with S>0: the streaming period as received."""
    return [(b.t - a.t) * 1000.0 for a, b in zip(frames, frames[1:])
            if a.text == b.text and a.motion and a.s > 0]


# ---------------------------------------------------------------- Bluetooth

def bdaddr(hci):
    out = subprocess.run(["hciconfig", hci], capture_output=True, text=True).stdout
    m = re.search(r"BD Address: ([0-9A-F:]{17})", out)
    return m.group(1) if m else None


class Car:
    """The car process (car.py) listening on hci1 channel 1."""

    def __init__(self, log_path, status_every_s=0.0, rcvbuf=0, timestamps=False):
        self.log = CarLog(log_path)
        self.log_path = log_path
        self.status_every_s = status_every_s
        self.rcvbuf = rcvbuf
        self.timestamps = timestamps
        self.addr = bdaddr("hci1")
        self.proc = None

    def start(self, timeout_s=30):
        """Starts car.py; True once it listens. (Python's start from the 9p share took over 10 s once,
        with the host's load average above 10.)"""
        since = monotonic()
        cmd = [PY, os.path.join(GUEST, "car.py"), "--addr", self.addr, "--channel", "1", "--log", self.log_path,
               "--status-every", str(self.status_every_s)]
        if self.rcvbuf:
            cmd += ["--rcvbuf", str(self.rcvbuf)]
        if self.timestamps:
            cmd += ["--timestamps"]
        # a restarted car appends to the same log: its connections continue the numbering
        cmd += ["--first-connection", str(1 + max([c for _, c in self.log.connections()] or [0]))]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(self.log_path + ".stderr", "a"))
        return bool(wait_until(lambda: self.log.times("LISTEN", since), timeout_s))

    def _control(self, sig, kind, timeout_s=2):
        since = monotonic()
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
        got = wait_until(lambda: self.log.times(kind, since), timeout_s, 0.005)
        return got[0] if got else None

    def pause(self):
        """Stops reading the open connections (SIGUSR1); returns the car's PAUSE time or None."""
        return self._control(signal.SIGUSR1, "PAUSE")

    def resume(self):
        """Reads them again (SIGUSR2); returns the car's RESUME time or None."""
        return self._control(signal.SIGUSR2, "RESUME")

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.kill()


# ---------------------------------------------------------------- uinput devices

class Pad:
    """An Xbox-360-like uinput gamepad (045e:028e), named "Harness Gamepad"."""

    BUTTONS = [e.BTN_SOUTH, e.BTN_EAST, e.BTN_NORTH, e.BTN_WEST, e.BTN_TL, e.BTN_TR,
               e.BTN_SELECT, e.BTN_START, e.BTN_MODE, e.BTN_THUMBL, e.BTN_THUMBR]

    @classmethod
    def capabilities(cls):
        """The pad's keys and axes (sticks, triggers, hat), as UInput takes them."""
        stick = AbsInfo(value=0, min=-32768, max=32767, fuzz=16, flat=128, resolution=0)
        trigger = AbsInfo(value=0, min=0, max=255, fuzz=0, flat=0, resolution=0)
        hat = AbsInfo(value=0, min=-1, max=1, fuzz=0, flat=0, resolution=0)
        return {
            e.EV_KEY: cls.BUTTONS,
            e.EV_ABS: [(e.ABS_X, stick), (e.ABS_Y, stick), (e.ABS_RX, stick), (e.ABS_RY, stick),
                       (e.ABS_Z, trigger), (e.ABS_RZ, trigger), (e.ABS_HAT0X, hat), (e.ABS_HAT0Y, hat)],
        }

    def __init__(self, name=PAD_NAME):
        self.ui = UInput(self.capabilities(), name=name, vendor=0x045E, product=0x028E, version=0x110, bustype=e.BUS_USB)
        self.node = self.ui.device.path
        self.actions = []   # (monotonic time of the SYN, description)

    def press(self, button, what=""):
        """Presses and releases a button; returns the monotonic time the press was delivered."""
        self.ui.write(e.EV_KEY, button, 1)
        t = monotonic()
        self.ui.syn()
        self.ui.write(e.EV_KEY, button, 0)
        self.ui.syn()
        self.actions.append((t, what or e.BTN.get(button, button)))
        return t

    def axis(self, code, value, what=""):
        self.ui.write(e.EV_ABS, code, value)
        t = monotonic()
        self.ui.syn()
        self.actions.append((t, what or "%s=%d" % (e.ABS[code], value)))
        return t

    def close(self):
        if self.ui is not None:
            self.ui.close()
            self.ui = None


class MotionSensor:
    """A uinput accelerometer with INPUT_PROP_ACCELEROMETER, like a DualSense's motion sensor device.

    A real sensor reports continuously; a background thread writes samples at `rate_hz` (with a
    1-count jitter, since the input core drops unchanged values) until stop_feeding()."""

    def __init__(self, name="Harness Motion Sensor", units_per_g=8192, rate_hz=100):
        import threading
        acc = AbsInfo(value=0, min=-32768, max=32767, fuzz=0, flat=0, resolution=units_per_g)
        gyro = AbsInfo(value=0, min=-32768, max=32767, fuzz=0, flat=0, resolution=1024)
        caps = {e.EV_ABS: [(e.ABS_X, acc), (e.ABS_Y, acc), (e.ABS_Z, acc),
                           (e.ABS_RX, gyro), (e.ABS_RY, gyro), (e.ABS_RZ, gyro)],
                e.EV_MSC: [e.MSC_TIMESTAMP]}
        self.ui = UInput(caps, name=name, vendor=0x054C, product=0x0CE6, version=0x8111, bustype=e.BUS_USB,
                         input_props=[e.INPUT_PROP_ACCELEROMETER])
        self.node = self.ui.device.path
        self.units_per_g = units_per_g
        self.vector = (0, 0, units_per_g)
        self.period_s = 1.0 / rate_hz
        self.feeding = True
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._feed, daemon=True)
        self.thread.start()

    def roll(self, degrees):
        """Tilts about the y axis: x = g·sin θ, z = g·cos θ, so atan2(x, z) = θ."""
        import math
        g = self.units_per_g
        with self.lock:
            self.vector = (int(round(g * math.sin(math.radians(degrees)))), 0,
                           int(round(g * math.cos(math.radians(degrees)))))
        return monotonic()

    def _feed(self):
        n = 0
        while self.feeding:
            with self.lock:
                x, y, z = self.vector
                jitter = n & 1
                if self.ui is None:
                    return
                self.ui.write(e.EV_ABS, e.ABS_X, x + jitter)
                self.ui.write(e.EV_ABS, e.ABS_Y, y + jitter)
                self.ui.write(e.EV_ABS, e.ABS_Z, z + jitter)
                self.ui.write(e.EV_MSC, e.MSC_TIMESTAMP, (n * 10000) & 0x7FFFFFFF)
                self.ui.syn()
            n += 1
            time.sleep(self.period_s)

    def stop_feeding(self):
        self.feeding = False
        self.thread.join(2)
        return monotonic()

    def close(self):
        self.stop_feeding()
        with self.lock:
            if self.ui is not None:
                self.ui.close()
                self.ui = None


# ---------------------------------------------------------------- IIO accelerometer on i2c-stub

class StubAccelerometer:
    """The real mxc4005 IIO driver on an i2c-stub chip at 0x15.

    Registers (MXC4005): 0x03/0x05/0x07 = X/Y/Z, 12-bit, left-justified, big-endian; 1 g = 1024
    counts at the default ±2 g range. A tilt writes all six bytes in one I2C block write, so the
    driver never reads a torn sample."""

    ADDR = 0x15

    def __init__(self):
        self.bus = None
        for adapter in glob.glob("/sys/bus/i2c/devices/i2c-*"):
            try:
                if open(adapter + "/name").read().strip() == "SMBus stub driver":
                    self.bus = int(adapter.rsplit("-", 1)[1])
            except OSError:
                pass
        if self.bus is None:
            raise RuntimeError("no i2c-stub adapter (modprobe i2c-stub chip_addr=0x15)")
        self.iio = None

    def _i2cset(self, register, values, mode):
        subprocess.run(["i2cset", "-f", "-y", str(self.bus), hex(self.ADDR), hex(register)] + [hex(v) for v in values]
                       + [mode], check=True, capture_output=True)

    @staticmethod
    def _reg(counts):
        v = (max(-2048, min(2047, counts)) & 0xFFF) << 4
        return [(v >> 8) & 0xFF, v & 0xFF]

    def write_vector(self, x, y, z):
        self._i2cset(0x03, self._reg(x) + self._reg(y) + self._reg(z), "i")
        return monotonic()

    def roll(self, degrees):
        import math
        return self.write_vector(int(round(1024 * math.sin(math.radians(degrees)))), 0,
                                 int(round(1024 * math.cos(math.radians(degrees)))))

    def create(self, timeout_s=10):
        """Preloads the registers and instantiates the mxc4005; returns the iio:deviceN sysfs dir."""
        self._i2cset(0x0E, [0x02], "b")   # device id
        self._i2cset(0x0D, [0x00], "b")   # CONTROL: ±2 g
        self.write_vector(0, 0, 1024)
        with open("/sys/bus/i2c/devices/i2c-%d/new_device" % self.bus, "w") as f:
            f.write("mxc4005 0x15\n")
        self.iio = wait_until(self.find, timeout_s, 0.1)
        return self.iio

    @staticmethod
    def find():
        for d in glob.glob("/sys/bus/iio/devices/iio:device*"):
            try:
                if open(d + "/name").read().strip() == "mxc4005":
                    return d
            except OSError:
                pass
        return None

    def client(self):
        return "%d-%04x" % (self.bus, self.ADDR)

    def unbind(self):
        with open("/sys/bus/i2c/drivers/mxc4005/unbind", "w") as f:
            f.write(self.client())
        return monotonic()

    def delete(self):
        if os.path.exists("/sys/bus/i2c/devices/" + self.client()):
            with open("/sys/bus/i2c/devices/i2c-%d/delete_device" % self.bus, "w") as f:
                f.write("0x15\n")
        wait_until(lambda: self.find() is None, 5, 0.1)


# ---------------------------------------------------------------- carbridge

def base_config(car_addr, steering="stick", accelerometer=None, gamepad=PAD_NAME, extra="", link_extra="", url=None):
    """carbridge's config for the car at `car_addr` (RFCOMM channel 1), or at `url` when given."""
    cfg = """[link]
url = "%s"
""" % (url or "rfcomm://%s/1" % car_addr) + link_extra + """
[drive]
period_ms = 50
max_speed = 240
on_input_lost = "stop"
hysteresis_deg = 2.0
idle_timeout_s = 0

[devices]
gamepad = "%s"
""" % gamepad
    if accelerometer:
        cfg += 'accelerometer = "%s"\n' % accelerometer
    if steering == "stick":
        cfg += """
[steering]
source = "stick"
mode = "x"
axis_x = "ABS_X"
deadzone = 0.1
input_timeout_ms = 500
"""
    else:
        cfg += """
[steering]
source = "tilt"
tilt_axes = "x,z"
neutral_deg = 0.0
sensitivity = 1.0
smoothing_ms = 0
input_timeout_ms = 500
"""
    cfg += """
[buttons]
BTN_START = "engine"
BTN_TR = "speed_up"
BTN_TL = "speed_down"
BTN_NORTH = "gear"
BTN_SOUTH = "f1"
BTN_EAST = "f2"
""" + extra
    return cfg


class Carbridge:
    """`carbridge run --config FILE --log-level debug --no-keyboard --no-view`, logging to a file."""

    def __init__(self, workdir, config_text, user=None, binary=CARBRIDGE):
        self.config_path = os.path.join(workdir, "carbridge.toml")
        self.log_path = os.path.join(workdir, "carbridge.log")
        with open(self.config_path, "w") as f:
            f.write(config_text)
        os.chmod(self.config_path, 0o644)
        self.user = user
        self.binary = binary
        self.proc = None

    def start(self):
        if not os.access(self.binary, os.X_OK):
            raise RuntimeError("no carbridge binary at %s (swift build)" % self.binary)
        cmd = [self.binary, "run", "--config", self.config_path, "--log-level", "debug", "--no-keyboard", "--no-view"]
        if self.user:
            cmd = ["setpriv", "--reuid", self.user, "--regid", self.user, "--init-groups", "--"] + cmd
        self.log = open(self.log_path, "a")
        self.log.write("# %.6f start: %s\n" % (monotonic(), " ".join(cmd)))
        self.log.flush()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
                                     cwd="/tmp")
        return self.proc

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def has_open(self, node):
        """True when the carbridge process holds `node` open (checked through /proc/PID/fd)."""
        return self.alive() and holds_open(self.proc.pid, node)

    def log_lines(self, pattern=None, since=0.0):
        """[(time, text)] of carbridge's log lines ("<HH:MM:SS.mmm local time> <level> <label>: <message>")
        matching the regular expression `pattern`, with each time converted to CLOCK_MONOTONIC seconds
        (the car's log clock), to the millisecond."""
        out = []
        try:
            with open(self.log_path) as f:
                for line in f:
                    m = re.match(r"^(\d\d):(\d\d):(\d\d\.\d+) (.*)$", line.rstrip("\n"))
                    if not m:
                        continue
                    t = wall_to_monotonic(int(m.group(1)), int(m.group(2)), float(m.group(3)))
                    if t >= since and (pattern is None or re.search(pattern, m.group(4))):
                        out.append((t, m.group(4)))
        except FileNotFoundError:
            pass
        return out

    def send_signal(self, sig):
        t = monotonic()
        if self.alive():
            self.proc.send_signal(sig)
        return t

    def stop(self, sig=SIGTERM, timeout_s=5):
        """Signals carbridge and waits; returns its exit status (None if it had to be killed)."""
        if self.proc is None:
            return None
        if self.log.closed:
            return self.proc.returncode
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                self.log.write("# killed: did not exit within %ss of signal %d\n" % (timeout_s, sig))
                return None
        self.log.write("# %.6f exit status %s\n" % (monotonic(), self.proc.returncode))
        self.log.close()
        return self.proc.returncode


# ---------------------------------------------------------------- a scenario: many checks, one verdict

class Scenario:
    """Collects the checks of one scenario; finish() writes its single PASS/FAIL line."""

    def __init__(self, number, title):
        self.number = number   # a scenario of scenarios.py's TITLES (an int), or the NAME of guest/scenario_NAME.py
        self.tag = "s%d" % number if isinstance(number, int) else number   # its METRIC prefix and results directory
        self.title = title
        self.work = "/tmp/kt/" + self.tag
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)
        os.chmod(self.work, 0o777)
        self.failures = []
        self.metrics = []
        self.cleanups = []
        self.started = monotonic()
        sys.stdout = sys.stderr = open(os.path.join(self.work, "detail.log"), "w", buffering=1)
        print("=== scenario %s: %s" % (number, title), flush=True)

    def check(self, ok, what, detail=""):
        print("  %s %s%s" % ("ok  " if ok else "FAIL", what, (" -- " + str(detail)) if detail != "" and not ok else ""),
              flush=True)
        if not ok:
            self.failures.append(what + ((" (" + str(detail) + ")") if detail != "" else ""))
        return ok

    def note(self, text):
        print("  .. " + text, flush=True)

    def metric(self, name, value, unit):
        self.metrics.append("METRIC: %s %s %s %s" % (self.tag, name, ("%.1f" % value) if isinstance(value, float) else value, unit))

    def require(self, ok, what, detail=""):
        """A check whose failure makes the rest of the scenario meaningless."""
        if not self.check(ok, what, detail):
            raise Abort(what)

    def dump_frames(self, frames, title="frames received by the car"):
        print("  %s (%d):" % (title, len(frames)), flush=True)
        for fr in frames:
            print("     %.6f %s" % (fr.t, fr.text), flush=True)

    def finish(self):
        for cleanup in reversed(self.cleanups):
            try:
                cleanup()
            except Exception as error:   # cleanup must not hide the verdict
                print("  cleanup error: %r" % error, flush=True)
        dest = os.path.join(RESULTS, self.tag)
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(self.work, dest)
        for m in self.metrics:
            record(m)
        name = "scenario %s: %s" % (self.number, self.title)
        result(not self.failures, name, "; ".join(self.failures[:3]) + (" ..." if len(self.failures) > 3 else ""))
        print("=== scenario %s done in %.1fs" % (self.number, monotonic() - self.started), flush=True)
        return not self.failures


class Abort(Exception):
    pass


class TcpCarLog:
    """tcpcar's log (guest/tcpcar.c): CONNECT/EOF lines and RX lines with two CLOCK_MONOTONIC stamps."""

    def __init__(self, path):
        self.path = path

    def lines(self):
        try:
            with open(self.path) as f:
                return [line.rstrip("\n").split(" ", 5) for line in f]
        except FileNotFoundError:
            return []

    def connects(self, port):
        return [int(p[2]) / 1e9 for p in self.lines() if p[0] == "CONNECT" and int(p[1]) == port]

    def rx(self, port):
        """[(receive time s, kernel arrival time s or None, exact stamp?, line)] in arrival order."""
        out = []
        for p in self.lines():
            if p[0] == "RX" and int(p[1]) == port:
                kernel = int(p[3])
                out.append((int(p[2]) / 1e9, kernel / 1e9 if kernel >= 0 else None, p[4] == "1",
                            p[5] if len(p) > 5 else ""))
        return out


class TcpCar(TcpCarLog):
    """guest/tcpcar.c on `port`, started and stopped here: [(receive time, line)] (its RX lines are written
    200 ms after input stops, and at exit)."""

    def __init__(self, path, port):
        super().__init__(path)
        self.port, self.proc = port, None

    def start(self):
        tcpcar = os.path.join(HELPERS, "tcpcar")
        if not os.access(tcpcar, os.X_OK):
            return False
        subprocess.run(["ip", "link", "set", "lo", "up"], capture_output=True)
        self.proc = subprocess.Popen([tcpcar, self.path, str(self.port)], stdout=subprocess.DEVNULL,
                                     stderr=open(self.path + ".stderr", "w"))
        return bool(wait_until(lambda: any(p[0] == "LISTEN" for p in self.lines()), 10))

    def connected(self):
        return any(p[0] == "CONNECT" for p in self.lines())

    def frames(self):
        return [Frame(int(p[2]) / 1e9, p[5] if len(p) > 5 else "") for p in self.lines() if p[0] == "RX"]

    def wait_frame(self, predicate, since, timeout_s):
        return wait_until(lambda: next((f for f in self.frames() if f.t >= since and predicate(f)), None), timeout_s)

    def stop(self):
        """SIGTERM: tcpcar writes its buffered lines and exits (closing carbridge's connection)."""
        t = monotonic()
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(5)
        return t

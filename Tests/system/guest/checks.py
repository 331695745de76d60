#!/usr/bin/python3
"""The system stage's checks (issue 15, item 3), run in the Debian guest with systemd as PID 1.

The package arrives on the share; the guest has no network (QEMU -nic none), so `apt install` takes
the package's dependencies from apt's cache, filled when the image was built (Tests/system/run.sh).
A uinput pad (python3-evdev, kharness.Pad) and a TCP car on 127.0.0.1 (tcpcar.py, which stamps every
frame with CLOCK_MONOTONIC) are driven against carbridge@red, the instance the package's template unit
makes from /etc/carbridge/red.toml. Every check writes one PASS/FAIL line to $R/results.txt (and the
console); figures are METRIC lines; the commands and their output go to $R/detail.log. Every wait is
for an event (a frame in the car's log, a journal line, a unit state) with a timeout, never a sleep.
"""
import glob, json, os, pwd, grp, signal, stat, subprocess, sys, threading, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kharness as k   # noqa: E402  (the kernel stage's Pad, CarLog, wait_until, PASS/FAIL lines)
from evdev import ecodes as e   # noqa: E402

SHARE = k.RESULTS
GUEST = os.path.dirname(os.path.abspath(__file__))
UNIT = "carbridge@red.service"
PAD_NAME = "System Test Pad"
PORT = 4210
DASHBOARD_PORT = 8080
CAR_LOG = "/run/carbridge-system-test/car.log"
DEB = sorted(glob.glob(os.path.join(SHARE, "carbridge_*.deb")))[-1]
DETAIL = open(os.path.join(SHARE, "detail.log"), "a", buffering=1)
# RestartSec= and WatchdogSec= of the shipped carbridge@.service: the restarts below cannot be faster.
RESTART_SEC = 1.0
WATCHDOG_SEC = 2.0
HANDSHAKE = "E,0,0,0"
# The goal of issue 41 for both units' `systemd-analyze security` exposure (lower is better).
EXPOSURE_GOAL = 2.0
PROBE_UNIT = "carbridge@probe.service"
TILT_UNIT = "carbridge@tilt.service"
SERIAL_UNIT = "carbridge@serial.service"
SIGSYS_UNIT = "carbridge@sigsys.service"
# An address of the guest's own (on lo) outside the units' IPAddressAllow= (TEST-NET-2, RFC 5737).
DENIED_ADDRESS = "198.51.100.7"
SERIAL_CAR_LOG = "/run/carbridge-system-test/serial-car.log"
MOTION_NAME = "System Test Motion Sensor"


def log(text):
    DETAIL.write("[%9.3f] %s\n" % (k.monotonic(), text))


def run(cmd, timeout=180, cwd=None):
    """Runs a command; logs it and each output line with the time it came; returns (exit status, output)."""
    log("$ " + " ".join(cmd))
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, cwd=cwd)
    killer = threading.Timer(timeout, p.kill)
    killer.start()
    lines = []
    for line in p.stdout:
        lines.append(line)
        if line.strip() and not line.startswith("(Reading database ..."):
            DETAIL.write("[%9.3f]   %s" % (k.monotonic(), line if line.endswith("\n") else line + "\n"))
    rc = p.wait()
    killer.cancel()
    log("  -> exit %d" % rc)
    return rc, "".join(lines)


def out_of(cmd):
    return run(cmd)[1].strip()


def show(prop, unit=UNIT):
    """A property of carbridge@red, or of `unit` (systemctl show -p PROP --value)."""
    return subprocess.run(["systemctl", "show", "-p", prop, "--value", unit], capture_output=True, text=True).stdout.strip()


def is_active(unit=UNIT):
    return subprocess.run(["systemctl", "is-active", unit], capture_output=True, text=True).stdout.strip()


def main_pid():
    pid = show("MainPID")
    return int(pid) if pid.isdigit() else 0



def uids(pid):
    """The real, effective, saved and file-system uids of `pid` (from /proc/PID/status)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("Uid:"):
                return [int(x) for x in line.split()[1:]]
    return []


def journal(priority=None, since_cursor=None):
    """carbridge@red's journal entries as dicts (journalctl -o json), optionally at or above a priority."""
    cmd = ["journalctl", "-u", UNIT, "-o", "json", "--no-pager"]
    if priority:
        cmd += ["-p", priority]
    if since_cursor:
        cmd += ["--after-cursor", since_cursor]
    text = subprocess.run(cmd, capture_output=True, text=True).stdout
    entries = []
    for line in text.splitlines():
        try:
            entries.append(json.loads(line))
        except ValueError:
            pass
    return entries


def journal_lines(priority, text, unit=UNIT):
    """How many of carbridge@red's (or `unit`'s) journal lines at `priority` (journalctl -p) contain `text`."""
    out = subprocess.run(["journalctl", "-u", unit, "-p", priority, "-o", "cat", "--no-pager"],
                         capture_output=True, text=True).stdout
    return sum(1 for line in out.splitlines() if text in line)


def journal_messages(unit, cursor=None):
    """`unit`'s journal messages (after `cursor`), as text."""
    cmd = ["journalctl", "-u", unit, "-o", "cat", "--no-pager"] + (["--after-cursor", cursor] if cursor else [])
    return subprocess.run(cmd, capture_output=True, text=True).stdout.splitlines()


def journal_cursor_of(unit):
    out = subprocess.run(["journalctl", "-u", unit, "-n", "1", "--show-cursor", "--no-pager", "-o", "cat"],
                         capture_output=True, text=True).stdout
    lines = [x for x in out.splitlines() if x.startswith("-- cursor: ")]
    return lines[-1][len("-- cursor: "):] if lines else None


def remove_dropins(unit):
    """Removes the test's drop-ins of `unit`. No daemon-reload: the instance does not run again (and
    apt remove reloads systemd anyway), so the reload's seconds under TCG are saved."""
    for f in glob.glob("/etc/systemd/system/%s.d/*" % unit):
        os.unlink(f)
    os.rmdir("/etc/systemd/system/%s.d" % unit)


def journal_cursor():
    entries = journal()
    return entries[-1]["__CURSOR"] if entries else None


class Checks:
    """Runs the checks in order; each records its PASS/FAIL line. A failed prerequisite ends the run."""

    def __init__(self):
        self.car = None
        self.cars = k.CarLog(CAR_LOG)
        self.pad = None
        self.failed = 0
        self.stopped_at = None   # when restart_check sent its signal (CLOCK_MONOTONIC seconds)

    def check(self, ok, name, why=""):
        ok = bool(ok)
        k.result(ok, name, why)
        log(("PASS " if ok else "FAIL ") + name + ("" if ok else ": " + why))
        if not ok:
            self.failed += 1
        return ok

    def metric(self, name, value, unit):
        k.record("METRIC: %s %.0f %s" % (name, value, unit))

    # ------------------------------------------------------------------ helpers on the car and the pad

    def last_connection(self):
        conns = self.cars.connections()
        return conns[-1][1] if conns else 0

    def wait_new_connection_frame(self, after_conn, timeout_s):
        """The first frame on the first connection numbered above `after_conn` (None on timeout)."""
        def first():
            for fr in self.cars.frames():
                if fr.conn > after_conn:
                    return fr
            return None
        return k.wait_until(first, timeout_s)

    def plug_pad(self):
        """A new uinput pad; returns its node once udev gave it to group carbridge (or after 10 s)."""
        self.pad = k.Pad(name=PAD_NAME)
        node = self.pad.node
        gid = grp.getgrnam("carbridge").gr_gid if self.group_exists("carbridge") else -1
        k.wait_until(lambda: os.path.exists(node) and os.stat(node).st_gid == gid, 10, 0.05)
        return node

    @staticmethod
    def group_exists(name):
        try:
            grp.getgrnam(name)
            return True
        except KeyError:
            return False

    def start_moving(self, pid, what, engine_on=False):
        """Engine on (unless it is) and Speed+ once: the car streams M,0,10,1. True once it streams."""
        if not k.wait_until(lambda: k.holds_open(pid, self.pad.node), 15, 0.05):
            log("%s: PID %d never opened %s" % (what, pid, self.pad.node))
            return False
        since = k.monotonic()
        if not engine_on:
            self.pad.press(e.BTN_START, "engine")
        self.pad.press(e.BTN_TR, "speed+")
        got = self.cars.wait_frame(lambda fr: fr.text == "M,0,10,1", since, 10)
        # moving = streaming: a second frame at speed 10
        streaming = got and self.cars.wait_frame(lambda fr: fr.text == "M,0,10,1" and fr.t > got.t, since, 5)
        log("%s: %s" % (what, "moving (M,0,10,1 streams)" if streaming else "not moving: %s" % self.cars.frames(since)))
        return bool(streaming)

    # ------------------------------------------------------------------ the checks

    def run(self):
        log("=== system checks, package %s" % DEB)
        self.check(os.readlink("/proc/1/exe").endswith("/systemd") and os.path.isdir("/run/systemd/system"),
                   "systemd is PID 1", "PID 1 is %s" % os.readlink("/proc/1/exe"))
        k.record("METRIC: guest-uptime-at-checks %.1f s" % float(open("/proc/uptime").read().split()[0]))
        failed_units = out_of(["systemctl", "list-units", "--failed", "--plain", "--no-legend"])
        self.check(failed_units == "" and out_of(["systemctl", "is-active", "multi-user.target"]) == "active",
                   "boot: multi-user.target active, no failed unit", failed_units.replace("\n", "; "))
        self.check(not os.path.exists("/usr/bin/swift") and not glob.glob("/usr/lib/swift*")
                   and "default" not in out_of(["ip", "route"]),
                   "the guest has no Swift and no network", out_of(["ip", "route"]))
        user_before = self.user_exists()

        # apt install ./carbridge_…deb, exactly as docs/deployment.md says
        os.makedirs("/root/pkg", exist_ok=True)
        local = os.path.join("/root/pkg", os.path.basename(DEB))
        subprocess.run(["cp", DEB, local], check=True)
        t = k.monotonic()
        rc, out = run(["apt", "install", "-y", "./" + os.path.basename(DEB)], cwd="/root/pkg")
        self.metric("apt-install", (k.monotonic() - t) * 1000, "ms")
        status = out_of(["dpkg-query", "-W", "-f=${Status} ${Version}", "carbridge"])
        version = status.split()[-1] if status else ""
        if not self.check(rc == 0 and status.startswith("install ok installed"),
                          "apt install ./%s with no network (dependencies from the image's apt cache)" % os.path.basename(DEB),
                          "exit %d, status '%s': %s" % (rc, status, out.strip().splitlines()[-3:])):
            return
        self.check(out_of(["carbridge", "--version"]) == version,
                   "carbridge --version prints the package's version %s (no Swift runtime in the guest)" % version,
                   "carbridge --version says '%s'" % out_of(["carbridge", "--version"]))

        # the carbridge user (sysusers)
        groups = out_of(["id", "-nG", "carbridge"]).split()
        try:
            pw = pwd.getpwnam("carbridge")
            account = "uid %d, shell %s" % (pw.pw_uid, pw.pw_shell)
            system_user = pw.pw_uid < 1000 and pw.pw_shell.endswith("nologin")
        except KeyError:
            account, system_user = "no such user", False
        self.check(not user_before and system_user and all(g in groups for g in ("input", "bluetooth", "dialout")),
                   "the carbridge system user, created by the package (sysusers), in groups input, bluetooth, dialout",
                   "existed before: %s; %s; groups %s" % (user_before, account, groups))
        conffiles = out_of(["dpkg-query", "-W", "-f=${Conffiles}", "carbridge"])
        self.check("/etc/carbridge/carbridge.toml" in conffiles and os.path.isfile("/etc/carbridge/carbridge.toml"),
                   "/etc/carbridge/carbridge.toml is a conffile", "Conffiles: %s" % conffiles)
        # It may hold [dashboard] token: the service's group reads it, other users do not (postinst's statoverride).
        st = os.stat("/etc/carbridge/carbridge.toml")
        override = out_of(["dpkg-statoverride", "--list", "/etc/carbridge/carbridge.toml"])
        self.check(st.st_uid == 0 and grp.getgrgid(st.st_gid).gr_name == "carbridge" and stat.S_IMODE(st.st_mode) == 0o640
                   and override.split()[:2] == ["root", "carbridge"] and int(override.split()[2], 8) == 0o640,
                   "the config (it may hold the dashboard's token) is 0640 root:carbridge, kept by a statoverride",
                   "mode %o, uid %d, gid %d, override %r" % (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, override))

        self.exposure_check()

        # the car, the pad and the instance's config
        os.makedirs(os.path.dirname(CAR_LOG), exist_ok=True)
        self.car = subprocess.Popen(["/usr/bin/python3", os.path.join(GUEST, "tcpcar.py"), "--port", str(PORT), "--log", CAR_LOG],
                                    stdout=DETAIL, stderr=DETAIL)
        if not self.check(k.wait_until(lambda: self.cars.times("LISTEN"), 30), "the TCP car listens on 127.0.0.1:%d" % PORT):
            return
        node = self.plug_pad()
        st = os.stat(node)
        self.check(grp.getgrgid(st.st_gid).gr_name == "carbridge" and stat.S_IMODE(st.st_mode) == 0o660,
                   "udev (the package's 70-carbridge.rules) gives the pad %s to group carbridge, mode 0660" % node,
                   "group %s, mode %o" % (grp.getgrgid(st.st_gid).gr_name, stat.S_IMODE(st.st_mode)))
        with open("/etc/carbridge/red.toml", "w") as f:
            # the kiosk's dashboard (config/kiosk.toml's, view only): the run becomes carbridge-dashboard
            f.write(k.base_config(None, url="tcp://127.0.0.1:%d" % PORT, gamepad=PAD_NAME,
                                  extra='\n[dashboard]\nlisten = "127.0.0.1:%d"\n' % DASHBOARD_PORT))
        os.chmod("/etc/carbridge/red.toml", 0o644)
        run(["carbridge", "check-config", "/etc/carbridge/red.toml"])

        # systemctl enable --now carbridge@red: ready (Type=notify), the handshake first
        t = k.monotonic()
        rc, out = run(["systemctl", "enable", "--now", "carbridge@red"], timeout=60)
        self.metric("enable-now", (k.monotonic() - t) * 1000, "ms")
        enabled = out_of(["systemctl", "is-enabled", "carbridge@red"])
        if not self.check(rc == 0 and is_active() == "active" and enabled == "enabled",
                          "systemctl enable --now carbridge@red: active (READY=1) and enabled",
                          "exit %d, is-active %s, is-enabled %s" % (rc, is_active(), enabled)):
            run(["journalctl", "-u", UNIT, "--no-pager"])
            return
        first = self.wait_new_connection_frame(0, 15)
        self.check(first is not None and first.text == HANDSHAKE,
                   "the car's first frame from carbridge@red is the handshake %s" % HANDSHAKE, "first frame %s" % first)
        pid = main_pid()
        ids = uids(pid) if pid else []
        carbridge_uid = pwd.getpwnam("carbridge").pw_uid
        opened = k.wait_until(lambda: k.holds_open(pid, node), 15, 0.05)
        self.check(pid and ids and all(u == carbridge_uid for u in ids) and opened,
                   "the service runs as user carbridge (not root) and has opened the pad %s" % node,
                   "MainPID %d, uids %s (carbridge is %d), holds %s open: %s" % (pid, ids, carbridge_uid, node, bool(opened)))

        # the dashboard is on, so the unit's main process (the same PID, as Type=notify needs) is now the
        # package's carbridge-dashboard, and it serves /metrics
        exe = os.readlink("/proc/%d/exe" % pid) if pid else None
        try:
            metrics = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % DASHBOARD_PORT, timeout=10).read().decode()
        except OSError as error:
            metrics = "GET /metrics: %s" % error
        self.check(exe == "/usr/libexec/carbridge/carbridge-dashboard" and "carbridge_link_up 1" in metrics,
                   "with [dashboard] listen set, the unit's main process is /usr/libexec/carbridge/carbridge-dashboard "
                   "and serves /metrics (link up)", "exe %s, metrics: %s" % (exe, metrics[:160]))

        self.confinement_check(pid)
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/" % DASHBOARD_PORT, timeout=10) as reply:
                page_status, page = reply.status, reply.read().decode(errors="replace")
        except OSError as error:
            page_status, page = None, "GET /: %s" % error
        self.check(page_status == 200 and "<html" in page.lower(),
                   "the dashboard serves its page under the unit's confinement (GET / answers 200 with HTML)",
                   "status %s, body %s" % (page_status, page[:160]))

        # the pad drives the car: engine, Speed+ twice
        since = k.monotonic()
        self.pad.press(e.BTN_START, "engine")
        self.pad.press(e.BTN_TR, "speed+")
        self.pad.press(e.BTN_TR, "speed+")
        # a few stream frames at 20, so a stray frame after them would be seen too
        k.wait_until(lambda: len([fr for fr in self.cars.frames(since) if fr.text == "M,0,20,1"]) >= 3, 10)
        frames = k.dedup(self.cars.frames(since))
        self.check(frames == ["M,0,10,1", "M,0,20,1"],
                   "the pad drives the car: engine, Speed+, Speed+ give exactly M,0,10,1 then M,0,20,1 (streamed)",
                   "frames %s" % frames)

        # systemctl status shows STATUS=
        expected = "engine on, speed 20 forward, link up"
        k.wait_until(lambda: show("StatusText") == expected, 10, 0.05)
        status_out = run(["systemctl", "status", "--no-pager", "carbridge@red"])[1]
        self.check('Status: "%s"' % expected in status_out,
                   "systemctl status carbridge@red shows the STATUS= line \"%s\"" % expected,
                   "StatusText '%s'" % show("StatusText"))

        # unplug the pad while moving: the stop frame, and a warning in the journal. `journalctl -p warning`
        # (the command) lists warning and worse; -p warning..warning shows it is exactly a warning.
        lost = '"%s" lost' % PAD_NAME
        before = journal_lines("warning", lost)
        since = k.monotonic()
        self.pad.close()
        stop = self.cars.wait_frame(lambda fr: fr.text == "M,0,0,1", since, 10)
        listed = k.wait_until(lambda: journal_lines("warning", lost) > before, 15, 0.1)
        exactly = journal_lines("warning..warning", lost) > before
        run(["journalctl", "-u", UNIT, "-p", "warning", "--no-pager"])
        self.check(stop is not None and listed and exactly,
                   "unplugging the pad: the car gets M,0,0,1 and journalctl -u carbridge@red -p warning lists the loss at warning priority",
                   "stop frame %s, listed by -p warning: %s, by -p warning..warning: %s" % (stop, bool(listed), exactly))

        # plug it back: carbridge opens it again (hotplug)
        node = self.plug_pad()
        if not self.check(self.start_moving(main_pid(), "replugged pad", engine_on=True),
                          "a replugged pad is opened again and drives the car (M,0,10,1 streams)"):
            return

        # kill -9 while moving: Restart=always after RestartSec, the new process's first frame is the handshake
        self.restart_check("kill -9", signal.SIGKILL, minimum_s=RESTART_SEC, metric="kill9-to-handshake")
        if not self.check(self.start_moving(main_pid(), "after kill -9"), "the restarted process drives the car again"):
            return
        # kill -STOP: the watchdog pings stop; systemd kills it after WatchdogSec and restarts it
        cursor = journal_cursor()
        # The pings come every WatchdogSec/2, so systemd's deadline falls between WatchdogSec/2 and
        # WatchdogSec after the stop; RestartSec follows.
        self.restart_check("kill -STOP (hung loop)", signal.SIGSTOP, minimum_s=WATCHDOG_SEC / 2 + RESTART_SEC,
                           metric="sigstop-to-handshake")
        timeouts = [x for x in journal(None, cursor) if "Watchdog timeout" in str(x.get("MESSAGE", ""))]
        self.check(timeouts, "the journal says systemd's watchdog killed it", "no 'Watchdog timeout' line")
        if timeouts and self.stopped_at:
            # the journal's monotonic stamp is CLOCK_MONOTONIC of this boot, the clock of time.monotonic()
            self.metric("sigstop-to-watchdog-kill", int(timeouts[0]["__MONOTONIC_TIMESTAMP"]) / 1000 - self.stopped_at * 1000, "ms")

        # reinstalling the same package while the unit runs (and the car moves): a clean restart
        if not self.check(self.start_moving(main_pid(), "before reinstall"), "the watchdog-restarted process drives the car again"):
            return
        old_pid, old_conn = main_pid(), self.last_connection()
        t = k.monotonic()
        rc, out = run(["apt", "install", "-y", "--reinstall", "./" + os.path.basename(DEB)], cwd="/root/pkg")
        new = self.wait_new_connection_frame(old_conn, 20)
        old_frames = self.cars.frames(t, conn=old_conn)
        self.check(rc == 0 and new is not None and new.text == HANDSHAKE and main_pid() not in (0, old_pid)
                   and old_frames and old_frames[-1].text == HANDSHAKE and is_active() == "active"
                   and show("Result") == "success",
                   "apt install --reinstall while carbridge@red drives: the old process sends E,0,0,0, a new PID's first frame is the handshake",
                   "exit %d, old PID %d's last frame %s, new PID %d's first %s, %s, Result %s" % (
                       rc, old_pid, old_frames[-1:] if old_frames else None, main_pid(), new, is_active(), show("Result")))

        # systemctl stop while moving: E,0,0,0 reaches the car before the unit is inactive
        if not self.check(self.start_moving(main_pid(), "before stop"), "the reinstalled package's process drives the car"):
            return
        conn = self.last_connection()
        t = k.monotonic()
        rc, _ = run(["systemctl", "stop", "carbridge@red"], timeout=30)
        stopped_at = k.monotonic()
        state = is_active()
        frames = self.cars.frames(t, conn=conn)
        engine_off = [fr for fr in frames if fr.text == HANDSHAKE]
        self.check(rc == 0 and state == "inactive" and engine_off and engine_off[0].t <= stopped_at and frames[-1].text == HANDSHAKE,
                   "systemctl stop while moving: E,0,0,0 is the car's last frame and arrives before the unit is inactive",
                   "exit %d, %s, frames since stop %s, stop returned at %.3f" % (rc, state, k.dedup(frames), stopped_at))
        if engine_off:
            self.metric("stop-to-E", (engine_off[0].t - t) * 1000, "ms")

        self.serial_link_check()
        self.sigsys_check()
        self.syscall_probe_check()
        self.refused_save_check()

        # apt remove keeps /etc/carbridge, apt purge removes it
        rc, _ = run(["apt", "remove", "-y", "carbridge"])
        status = out_of(["dpkg-query", "-W", "-f=${Status}", "carbridge"])
        self.check(rc == 0 and status == "deinstall ok config-files" and not os.path.exists("/usr/bin/carbridge")
                   and os.path.isfile("/etc/carbridge/carbridge.toml") and os.path.isfile("/etc/carbridge/red.toml"),
                   "apt remove: the program goes, /etc/carbridge (carbridge.toml, red.toml) stays",
                   "exit %d, status '%s', /etc/carbridge: %s" % (rc, status, os.listdir("/etc/carbridge") if os.path.isdir("/etc/carbridge") else "gone"))
        rc, _ = run(["apt", "purge", "-y", "carbridge"])
        status = out_of(["dpkg-query", "-W", "-f=${Status}", "carbridge"])
        links = glob.glob("/etc/systemd/system/*/carbridge@*")
        override = out_of(["dpkg-statoverride", "--list", "/etc/carbridge/carbridge.toml"])
        self.check(rc == 0 and not os.path.exists("/etc/carbridge") and not links and "installed" not in status.replace("not-installed", "")
                   and override == "",
                   "apt purge: /etc/carbridge, the carbridge@red enable link and the config's statoverride are gone",
                   "exit %d, status '%s', /etc/carbridge exists: %s, links %s, override %r"
                   % (rc, status, os.path.exists("/etc/carbridge"), links, override))

    # ------------------------------------------------------------------ the units' confinement (issue 41)

    def exposure_check(self):
        """`systemd-analyze security` of both packaged units, as METRIC lines, against EXPOSURE_GOAL."""
        scores = {}
        for unit in ("carbridge.service", UNIT):
            rc, out = run(["systemd-analyze", "security", "--no-pager", unit], timeout=120)
            line = [x for x in out.splitlines() if "Overall exposure level" in x]
            try:
                scores[unit] = float(line[-1].split(":")[1].split()[0])
            except (IndexError, ValueError):
                scores[unit] = None
            if scores[unit] is not None:
                k.record("METRIC: exposure %s %.1f (systemd-analyze security; 0 best, 10 worst)" % (unit, scores[unit]))
        self.check(all(v is not None and v <= EXPOSURE_GOAL for v in scores.values()),
                   "systemd-analyze security: carbridge.service and %s at exposure <= %.1f" % (UNIT, EXPOSURE_GOAL),
                   "scores %s" % scores)

    def confinement_check(self, pid):
        """The running service (carbridge-dashboard by now) is under the seccomp filter, without W+X memory,
        and sees a /proc with its own processes only."""
        status = {}
        try:
            with open("/proc/%d/status" % pid) as f:
                for line in f:
                    key, _, value = line.partition(":")
                    status[key] = value.strip()
            with open("/proc/%d/mountinfo" % pid) as f:
                proc = [line for line in f if " /proc " in line and " - proc " in line]
            with open("/proc/%d/uid_map" % pid) as f:
                uid_map = " ".join(f.read().split())
        except OSError as error:
            proc, uid_map = ["unreadable: %s" % error], "unreadable"
        props = {p: show(p) for p in ("SystemCallErrorNumber", "MemoryDenyWriteExecute", "ProtectProc", "ProcSubset",
                                      "PrivateIPC", "IPAddressDeny")}
        log("PID %d: Seccomp %s, NoNewPrivs %s; /proc: %s; %s" % (pid, status.get("Seccomp"), status.get("NoNewPrivs"), proc, props))
        self.check(status.get("Seccomp") == "2" and status.get("NoNewPrivs") == "1"
                   and proc and "hidepid=invisible" in proc[0] and "subset=pid" in proc[0]
                   and props["MemoryDenyWriteExecute"] == "yes" and props["PrivateIPC"] == "yes"
                   and props["SystemCallErrorNumber"] in ("1", "EPERM") and props["IPAddressDeny"] != ""
                   and uid_map not in ("0 0 4294967295", "unreadable"),
                   "the running service is confined: seccomp filter (errors EPERM), MemoryDenyWriteExecute, PrivateIPC, "
                   "IPAddressDeny, its /proc hidepid=invisible,subset=pid, a user namespace of its own",
                   "Seccomp %s, NoNewPrivs %s, /proc %s, uid_map '%s', %s" % (
                       status.get("Seccomp"), status.get("NoNewPrivs"), proc[:1], uid_map, props))

    def serial_link_check(self):
        """A serial:// link under the unit's filter (termios ioctls, a tty's reads and writes): the car on the
        master side of a pty, its slave standing in for a USB serial adapter (group dialout). The packaged
        unit allows ttyUSB/ttyACM/rfcomm devices only, so a drop-in adds this pty to DeviceAllow=."""
        master, slave = os.openpty()
        tty = os.ttyname(slave)
        os.chown(tty, 0, grp.getgrnam("dialout").gr_gid)
        os.chmod(tty, 0o660)
        dropin = "/etc/systemd/system/%s.d" % SERIAL_UNIT
        os.makedirs(dropin, exist_ok=True)
        with open(os.path.join(dropin, "pty.conf"), "w") as f:
            f.write("[Service]\nDeviceAllow=%s rw\n" % tty)
        with open("/etc/carbridge/serial.toml", "w") as f:
            f.write(k.base_config(None, url="serial://%s?baud=9600" % tty, gamepad=PAD_NAME))
        os.chmod("/etc/carbridge/serial.toml", 0o644)
        car = k.CarLog(SERIAL_CAR_LOG)
        reading = [True]

        def serial_car():
            """Logs each line carbridge writes to the tty, as tcpcar.py does a connection's (connection 1)."""
            import select
            with open(SERIAL_CAR_LOG, "w", buffering=1) as out:
                out.write("%.6f CONNECT/1 %s\n" % (time.monotonic(), tty))
                pending = b""
                while reading[0]:
                    if not select.select([master], [], [], 0.2)[0]:
                        continue
                    try:
                        data = os.read(master, 4096)
                    except OSError:
                        continue
                    now = time.monotonic()
                    *lines, pending = (pending + data).split(b"\n")
                    for line in lines:
                        out.write("%.6f RX/1 %s\n" % (now, line.rstrip(b"\r").decode("utf-8", "backslashreplace")))
        reader = threading.Thread(target=serial_car, daemon=True)
        reader.start()
        try:
            run(["systemctl", "daemon-reload"])
            rc, _ = run(["systemctl", "start", SERIAL_UNIT], timeout=60)
            first = car.wait_frame(lambda fr: True, 0, 15)
            pid = int(show("MainPID", SERIAL_UNIT) or 0)
            since = k.monotonic()
            moving = False
            if pid and k.wait_until(lambda: k.holds_open(pid, self.pad.node), 15, 0.05):
                self.pad.press(e.BTN_START, "engine")
                self.pad.press(e.BTN_TR, "speed+")
                got = car.wait_frame(lambda fr: fr.text == "M,0,10,1", since, 10)
                moving = got and car.wait_frame(lambda fr: fr.text == "M,0,10,1" and fr.t > got.t, since, 5)
            run(["systemctl", "stop", SERIAL_UNIT], timeout=30)
            frames = car.frames()
            self.check(rc == 0 and first is not None and first.text == HANDSHAKE and moving and frames and frames[-1].text == HANDSHAKE,
                       "a serial:// link (a pty of group dialout) under the unit's confinement: handshake, the pad drives "
                       "(M,0,10,1 streams), E,0,0,0 last on stop",
                       "exit %d, first frame %s, moving %s, frames %s" % (rc, first, bool(moving), k.dedup(frames)[-6:]))
            if not moving:
                run(["journalctl", "-u", SERIAL_UNIT, "--no-pager"])
        finally:
            reading[0] = False
            reader.join(2)
            os.close(master)
            os.close(slave)
            remove_dropins(SERIAL_UNIT)

    def sigsys_check(self):
        """carbridge itself makes a call the filter refuses: the dashboard's dispatch worker threads set their
        priority (setpriority, in @resources) as they start. With the packaged SystemCallErrorNumber=EPERM the
        dashboard runs (the checks above); the same unit with the setting reset by a drop-in (the filter's
        default action, kill) dies of SIGSYS. So EPERM is what keeps the service from a crash loop."""
        path = "/etc/carbridge/sigsys.toml"
        with open("/etc/carbridge/red.toml") as src, open(path, "w") as dst:
            dst.write(src.read())
        os.chmod(path, 0o644)
        dropin = "/etc/systemd/system/%s.d" % SIGSYS_UNIT
        os.makedirs(dropin, exist_ok=True)
        with open(os.path.join(dropin, "kill.conf"), "w") as f:
            f.write("[Service]\nSystemCallErrorNumber=\nRestart=no\n")
        try:
            run(["systemctl", "daemon-reload"])
            run(["systemctl", "start", "--no-block", SIGSYS_UNIT], timeout=60)
            ended = k.wait_until(lambda: show("ActiveState", SIGSYS_UNIT) in ("inactive", "failed")
                                 and show("ExecMainStatus", SIGSYS_UNIT) not in ("", "0"), 60, 0.1)
            result, code, status = show("Result", SIGSYS_UNIT), show("ExecMainCode", SIGSYS_UNIT), show("ExecMainStatus", SIGSYS_UNIT)
            run(["journalctl", "-u", SIGSYS_UNIT, "--no-pager"])
            # ExecMainCode 2 is CLD_KILLED, 3 CLD_DUMPED; status 31 is SIGSYS
            self.check(ended and status == str(int(signal.SIGSYS)) and code in ("2", "3"),
                       "carbridge itself reaches the filter: with SystemCallErrorNumber= reset (kill) the dashboard's "
                       "setpriority kills the unit with SIGSYS; the packaged EPERM keeps it running",
                       "ended %s, Result %s, ExecMainCode %s, ExecMainStatus %s" % (bool(ended), result, code, status))
        finally:
            run(["systemctl", "stop", SIGSYS_UNIT], timeout=30)
            run(["systemctl", "reset-failed", SIGSYS_UNIT])
            remove_dropins(SIGSYS_UNIT)
            os.unlink(path)

    def probe_run(self, tty):
        """Runs guest/probe.py as carbridge@probe: the packaged template unit, all its confinement, with only
        ExecStart= (and what a one-shot program needs, and the test's tty in DeviceAllow=) changed by a drop-in.
        Returns (Result, {call: outcome})."""
        dropin = "/etc/systemd/system/%s.d" % PROBE_UNIT
        os.makedirs(dropin, exist_ok=True)
        with open(os.path.join(dropin, "probe.conf"), "w") as f:
            f.write("[Service]\nType=exec\nWatchdogSec=0\nRestart=no\nExecStart=\n"
                    "ExecStart=/usr/bin/python3 -u %s %s %s\nDeviceAllow=%s rw\n" % (
                        os.path.join(GUEST, "probe.py"), tty, DENIED_ADDRESS, tty))
        run(["systemctl", "daemon-reload"])
        cursor = journal_cursor_of(PROBE_UNIT)
        run(["systemctl", "start", PROBE_UNIT], timeout=60)
        done = k.wait_until(lambda: is_active(PROBE_UNIT) in ("inactive", "failed")
                            and any("PROBE done" in x for x in journal_messages(PROBE_UNIT, cursor)), 30, 0.1)
        messages = journal_messages(PROBE_UNIT, cursor)
        log("probe: %s, %s" % (show("Result", PROBE_UNIT), messages))
        outcome = {}
        for m in messages:
            parts = m.split()
            if len(parts) >= 2 and parts[0] == "PROBE":
                outcome[parts[1]] = " ".join(parts[2:])
        result = show("Result", PROBE_UNIT) if done else "timeout (%s)" % is_active(PROBE_UNIT)
        run(["systemctl", "reset-failed", PROBE_UNIT])
        return result, outcome

    def syscall_probe_check(self):
        """A call outside the unit's filter fails with EPERM and the process lives on (no SIGSYS): shown with
        a probe program in the real template unit, since no carbridge code path makes such a call."""
        master, slave = os.openpty()   # a tty of group dialout, as a USB serial adapter's
        tty = os.ttyname(slave)
        os.chown(tty, 0, grp.getgrnam("dialout").gr_gid)
        os.chmod(tty, 0o660)
        run(["ip", "addr", "add", DENIED_ADDRESS + "/32", "dev", "lo"])
        try:
            result, got = self.probe_run(tty)
            expect = {"sched_setaffinity": "EPERM", "setpriority": "EPERM", "mmap-write-exec": "EPERM", "open-dialout-tty": "ok"}
            self.check(result == "success" and all(got.get(call) == want for call, want in expect.items()),
                       "in the unit, calls outside its filter (sched_setaffinity, setpriority) and a writable+executable "
                       "mapping fail with EPERM, the process runs on and exits 0; the dialout tty opens",
                       "Result %s, outcomes %s (expected %s)" % (result, got, expect))
            # (the cgroup's filter drops packets silently: a TCP connect is not refused but goes unanswered)
            self.check(got.get("connect-localhost") == "ECONNREFUSED" and got.get("connect-denied") in ("timeout", "EPERM"),
                       "in the unit, IPAddressDeny=any with the allow list: localhost is reached (ECONNREFUSED from a closed "
                       "port), %s, outside the list, is not (its packets dropped: the connect times out)" % DENIED_ADDRESS,
                       "outcomes %s" % got)
            # PrivateUsers=yes: the supplementary groups are unmapped in the namespace (nobody), the primary one is not
            nobody = str(grp.getgrnam("nogroup").gr_gid)
            shown = got.get("groups", "").split(",")
            self.check(got.get("open-dialout-tty") == "ok" and shown.count(nobody) == 3
                       and str(grp.getgrnam("carbridge").gr_gid) in shown,
                       "in the unit's user namespace (PrivateUsers=yes) input, bluetooth and dialout show as nobody, "
                       "yet the dialout tty opens",
                       "outcomes %s (nogroup is %s)" % (got, nobody))
        finally:
            run(["ip", "addr", "del", DENIED_ADDRESS + "/32", "dev", "lo"])
            os.close(master)
            os.close(slave)
            remove_dropins(PROBE_UNIT)

    def refused_save_check(self):
        """A forbidden action: a calibrate button saving into /etc/carbridge, read-only to the unit. The save is
        refused and logged; the service runs on (no restart) and still drives."""
        sensor = k.MotionSensor(name=MOTION_NAME)
        path = "/etc/carbridge/tilt.toml"
        try:
            k.wait_until(lambda: os.path.exists(sensor.node), 10, 0.05)
            text = k.base_config(None, steering="tilt", accelerometer=MOTION_NAME, gamepad=PAD_NAME,
                                 url="tcp://127.0.0.1:%d" % PORT, extra='BTN_SELECT = "calibrate"\n')
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, 0o644)
            conn = self.last_connection()
            rc, _ = run(["systemctl", "start", TILT_UNIT], timeout=60)
            first = self.wait_new_connection_frame(conn, 15)
            pid = int(show("MainPID", TILT_UNIT) or 0)
            opened = pid and k.wait_until(lambda: k.holds_open(pid, self.pad.node) and k.holds_open(pid, sensor.node), 15, 0.05)
            if not self.check(rc == 0 and first is not None and opened, "carbridge@tilt (tilt steering, a calibrate button) starts and opens the pad and the sensor",
                              "exit %d, first frame %s, PID %d opened both: %s" % (rc, first, pid, bool(opened))):
                run(["journalctl", "-u", TILT_UNIT, "--no-pager"])
                return
            restarts = show("NRestarts", TILT_UNIT)
            refused = "could not save it in %s" % path
            self.pad.press(e.BTN_SELECT, "calibrate")
            logged = k.wait_until(lambda: journal_lines("err", refused, TILT_UNIT) > 0, 15, 0.1)
            run(["journalctl", "-u", TILT_UNIT, "-p", "err", "--no-pager"])
            moving = self.start_moving(pid, "after the refused save")
            with open(path) as f:
                unchanged = f.read() == text
            self.check(logged and unchanged and moving and is_active(TILT_UNIT) == "active"
                       and show("NRestarts", TILT_UNIT) == restarts and int(show("MainPID", TILT_UNIT) or 0) == pid,
                       "a calibrate press saving into read-only /etc/carbridge: refused and logged at err, the file unchanged, "
                       "the same process runs on (NRestarts unchanged) and drives the car",
                       "logged: %s, file unchanged: %s, drives: %s, %s, NRestarts %s -> %s, PID %d -> %s" % (
                           bool(logged), unchanged, moving, is_active(TILT_UNIT), restarts, show("NRestarts", TILT_UNIT),
                           pid, show("MainPID", TILT_UNIT)))
        finally:
            run(["systemctl", "stop", TILT_UNIT], timeout=30)
            sensor.close()
            if os.path.exists(path):
                os.unlink(path)

    def user_exists(self):
        try:
            pwd.getpwnam("carbridge")
            return True
        except KeyError:
            return False

    def restart_check(self, what, sig, minimum_s, metric):
        """Sends `sig` to the main process while the car moves; checks systemd's restart and the handshake."""
        old_pid, old_conn = main_pid(), self.last_connection()
        restarts = show("NRestarts")
        t = self.stopped_at = k.monotonic()
        os.kill(old_pid, sig)
        first = self.wait_new_connection_frame(old_conn, minimum_s + 30)
        new_pid = main_pid()
        delay = (first.t - t) if first else None
        self.check(first is not None and first.text == HANDSHAKE and delay >= minimum_s and new_pid not in (0, old_pid)
                   and show("NRestarts") != restarts,
                   "%s while moving: systemd restarts carbridge@red (not before %.0f s) and the car's first frame from the new process is the handshake"
                   % (what, minimum_s),
                   "first frame %s after %s s, PID %d -> %d, NRestarts %s -> %s" % (
                       first, "%.3f" % delay if delay is not None else "-", old_pid, new_pid, restarts, show("NRestarts")))
        if delay is not None:
            self.metric(metric, delay * 1000, "ms")
        elif new_pid in (0, old_pid) and old_pid:
            # no restart: kill what is left (a stopped process) so that the later checks still run
            log("%s: no restart; SIGKILL to PID %d" % (what, old_pid))
            try:
                os.kill(old_pid, signal.SIGKILL)
            except OSError:
                pass
            self.wait_new_connection_frame(old_conn, RESTART_SEC + 30)

    def close(self):
        if self.pad:
            self.pad.close()
        if self.car and self.car.poll() is None:
            self.car.terminate()
            self.car.wait(5)
        try:
            with open(CAR_LOG) as src, open(os.path.join(SHARE, "car.log"), "w") as dst:
                dst.write(src.read())
        except OSError:
            pass


def main():
    checks = Checks()
    try:
        checks.run()
    except Exception as error:   # a broken step is a failure with its reason, not a silent end
        import traceback
        log(traceback.format_exc())
        checks.check(False, "the checks ran to the end", "%s: %s" % (type(error).__name__, error))
    finally:
        checks.close()
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())

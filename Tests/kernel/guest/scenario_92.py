#!/usr/bin/python3
"""Measurement 92: start-up, binaries interleaved: exec -> the TCP car's accept (scenario 22's start), and
its parts: `--version` (the Swift runtime and argument-parser's root parse), `--help`, `run --help`
(argument-parser's parse of `run`) and `check-config` (the `run`-sized parse and the config load), each the
median of the rounds (run.sh --rounds; default 6)."""
import os, signal, subprocess
import kharness as k
from kharness import Carbridge, TcpCarLog, monotonic
from measure import binaries, rounds, median

TITLE = "measurement: start-up (exec -> connected) and its parts, binaries interleaved"
PORT = 7092


def run(sc):
    tcpcar = os.path.join(k.HELPERS, "tcpcar")
    subprocess.run(["ip", "link", "set", "lo", "up"], capture_output=True)
    log = TcpCarLog(os.path.join(sc.work, "car.log"))
    car = subprocess.Popen([tcpcar, log.path, str(PORT)], stdout=subprocess.DEVNULL, stderr=open(log.path + ".stderr", "w"))
    sc.cleanups.append(lambda: (car.poll() is None and car.terminate(), car.wait(5)))
    sc.require(k.wait_until(lambda: any(p[0] == "LISTEN" for p in log.lines()), 10), "the TCP car listens")
    bins = binaries(sc)
    cfg = k.base_config(None, url="tcp://127.0.0.1:%d" % PORT, extra='\n[throttle]\naxis = "ABS_RZ"\n')
    config = os.path.join(sc.work, "carbridge.toml")
    with open(config, "w") as f:
        f.write(cfg)
    times = {}
    for rnd in range(rounds(6)):
        for tag, binary in (bins if rnd % 2 == 0 else bins[::-1]):
            for part, argv in (("version", [binary, "--version"]), ("help", [binary, "--help"]),
                               ("run_help", [binary, "run", "--help"]), ("check_config", [binary, "check-config", config])):
                times.setdefault((tag, part), []).append(k.exec_ms(argv))
            work = os.path.join(sc.work, "%s-%d" % (tag, rnd))
            os.makedirs(work)
            cb = Carbridge(work, cfg, binary=binary)
            before = len(log.connects(PORT))
            since = monotonic()
            cb.start()
            connected = k.wait_until(lambda: len(log.connects(PORT)) > before or not cb.alive(), 45)
            sc.check(bool(connected) and len(log.connects(PORT)) > before, "%s round %d: carbridge connects" % (tag, rnd))
            if len(log.connects(PORT)) > before:
                times.setdefault((tag, "exec_to_connected"), []).append((log.connects(PORT)[-1] - since) * 1000.0)
            cb.stop(signal.SIGTERM, 5)
    for (tag, part), values in sorted(times.items()):
        sc.metric("startup_%s_%s" % (part, tag), "%.1f" % median(values), "ms")
        k.console("NOTE: s92 %s %s: median %.1f ms (%s)" % (tag, part, median(values), " ".join("%.0f" % v for v in values)))

#!/usr/bin/python3
"""Measurement 93: how many pages of memory one input report makes carbridge and the C reader touch.

Why it matters under TCG: after a context switch the guest's TLB is empty, and QEMU fills every entry by
walking the page tables, so each page a reader touches per report costs it CPU; a probe build that
touched 40 more data pages per report moved the CPU ratio by about 0.06, one that ran about 1,500
more instructions by 0.02 (docs/performance.md, "The per-report path, seventh pass").

Scenario 11's set-up (the first binary of run.sh --measure, the TCP car, a uinput pad, the C reader on the
same node) with one report at a time: both processes' accessed bits are cleared (/proc/PID/clear_refs),
one ABS_X report that changes the steering range is written, and once both readers' lines have reached
the car, /proc/PID/smaps says which pages were referenced since ("Referenced:"), per mapping. Reported:
the median pages per report of each reader, split into code, the binary's data, heap, stack and the
rest; and, for carbridge, each mapping's median. A figure, not a check."""
import collections, os, re, signal, time
from evdev import ecodes as e
import kharness as k
from kharness import Carbridge
from scenarios import start_latency_car, start_reference_reader, plug_pad, LAT_PORTS, LAT_STEER
from measure import binaries, median

TITLE = "measurement: pages of memory one report touches, carbridge and the C reader"
REPORTS = 40
MAPPING = re.compile(r"^([0-9a-f]+)-[0-9a-f]+ (\S+) \S+ \S+ \S+\s*(.*)$")


def referenced(pid):
    """{(mapping name, permissions): pages referenced since the last clear_refs}, mappings with none left out."""
    out, key = {}, None
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            m = MAPPING.match(line)
            if m:
                key = (os.path.basename(m.group(3)) or "[anon]", m.group(2))
                continue
            if line.startswith("Referenced:"):
                pages = int(line.split()[1]) // 4
                if pages:
                    out[key] = out.get(key, 0) + pages
    return out


def kind(key, binary_name):
    name, perms = key
    if "x" in perms:
        return "code"
    if name == binary_name:
        return "binary data"
    if name in ("[heap]", "[stack]"):
        return name.strip("[]")
    return "other"


def run(sc):
    tag, binary = binaries(sc)[0]
    cb_port, ref_port = LAT_PORTS
    log, car = start_latency_car(sc)
    cfg = k.base_config(None, url="tcp://127.0.0.1:%d" % cb_port, link_extra="max_in_flight = 64\n",
                        extra='\n[throttle]\naxis = "ABS_RZ"\n')
    cb = Carbridge(sc.work, cfg, binary=binary)
    cb.start()
    sc.cleanups.append(lambda: cb.stop(signal.SIGTERM, 3))
    sc.require(k.wait_until(lambda: log.connects(cb_port) or not cb.alive(), 45), "carbridge connects")
    pad = plug_pad(sc, cb)
    ref, _ = start_reference_reader(sc, pad, log)
    pad.press(e.BTN_START, "engine on")   # speed 0: no frame repeats between the reports
    time.sleep(0.5)
    procs = {"carbridge": (cb.proc.pid, os.path.basename(binary)), "C reader": (ref.pid, "refreader")}
    samples = {name: [] for name in procs}
    for i in range(REPORTS):
        counts = (len(log.rx(cb_port)), len(log.rx(ref_port)))
        for pid, _ in procs.values():
            with open("/proc/%d/clear_refs" % pid, "w") as f:
                f.write("1")
        pad.axis(e.ABS_X, LAT_STEER[2 if i % 2 else -2])
        arrived = k.wait_until(lambda: len(log.rx(cb_port)) > counts[0] and len(log.rx(ref_port)) > counts[1], 5)
        sc.require(arrived, "report %d: both readers' lines reach the car" % i)
        for name, (pid, _) in procs.items():
            samples[name].append(referenced(pid))
        time.sleep(0.1)
    for name, (_, binary_name) in procs.items():
        rows = samples[name][5:]   # the first reports map and fault in what the later ones reuse
        totals = [sum(r.values()) for r in rows]
        split = collections.OrderedDict((c, median([sum(v for key, v in r.items() if kind(key, binary_name) == c)
                                                         for r in rows]))
                                        for c in ("code", "binary data", "heap", "stack", "other"))
        metric = name.replace(" ", "_")
        sc.metric("pages_per_report_%s" % metric, median(totals), "pages")
        k.console("NOTE: s93 %s: %d pages per report (median of %d; min %d, max %d): %s" % (
            name, median(totals), len(rows), min(totals), max(totals),
            ", ".join("%s %d" % item for item in split.items())))
        if name == "carbridge":
            keys = sorted({key for r in rows for key in r})
            k.console("NOTE: s93 carbridge per mapping (median pages): %s" % ", ".join(
                "%s %s %d" % (key[0], key[1], median([r.get(key, 0) for r in rows])) for key in keys
                if median([r.get(key, 0) for r in rows]) > 0))
    sc.check(all(samples.values()), "both readers measured")

#!/usr/bin/python3
"""Measurement 90: carbridge's CPU against the C reader's in scenario 11's set-up, binaries interleaved.

For each round and each binary (run.sh --measure; the order alternates between rounds): a fresh carbridge
(max_in_flight 64, as scenario 11) and a fresh reference reader (guest/refreader.c) on a new uinput pad,
1,600 reports at 500 Hz, each one motion frame, to the TCP car. Reported per round: the CPU both used while
streaming (the threads' schedstat), its ratio, and the context switches (voluntary / involuntary) of both;
at the end each binary's ratios, median and mean. A figure, not a check: under TCG one round moves by
±0.05, so compare binaries within one run, over several rounds."""
import os, signal, subprocess, time
from evdev import ecodes as e
import kharness as k
from kharness import Carbridge, TcpCarLog
from scenarios import start_latency_car, lat_events, plug_pad, write_stream, cpu_seconds, proc_stat, LAT_PORTS, LAT_STEER
from measure import binaries, rounds, median

TITLE = "measurement: CPU against the C reader (scenario 11's stream), binaries interleaved"
REPORTS = 1600


def switches(pid):
    """(voluntary, involuntary) context switches of all the process's threads so far."""
    counts = {}
    for task in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/status" % (pid, task)) as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.endswith("ctxt_switches"):
                    counts[key] = counts.get(key, 0) + int(value)
    return counts.get("voluntary_ctxt_switches", 0), counts.get("nonvoluntary_ctxt_switches", 0)


def user_system_ticks(pid):
    """(utime, stime) of the process so far in clock ticks, from /proc/PID/stat: sampled at the tick, so a
    split of the CPU time into user space and the kernel that is only right over many ticks."""
    fields = proc_stat(pid)
    return int(fields[11]), int(fields[12])


def run(sc):
    refreader = os.path.join(k.HELPERS, "refreader")
    bins = binaries(sc)
    cb_port, ref_port = LAT_PORTS
    log, car = start_latency_car(sc)
    cfg = k.base_config(None, url="tcp://127.0.0.1:%d" % cb_port, link_extra="max_in_flight = 64\n",
                        extra='\n[throttle]\naxis = "ABS_RZ"\n')
    period = lat_events()
    cycle = [(e.ABS_X, LAT_STEER[-2])] + [(c, v) for c, v, _ in (period[i % len(period)] for i in range(REPORTS - 1))]
    ratios = {tag: [] for tag, _ in bins}
    totals = {tag: {"cb": (0, 0), "ref": (0, 0)} for tag, _ in bins}   # clock ticks (user, system), all rounds
    for rnd in range(rounds(6)):
        for tag, binary in (bins if rnd % 2 == 0 else bins[::-1]):
            work = os.path.join(sc.work, "%s-%d" % (tag, rnd))
            os.makedirs(work)
            cb = Carbridge(work, cfg, binary=binary)
            before = len(log.connects(cb_port))
            cb.start()
            sc.require(k.wait_until(lambda: len(log.connects(cb_port)) > before or not cb.alive(), 45),
                       "%s round %d: carbridge connects" % (tag, rnd))
            pad = plug_pad(sc, cb)
            ref_out = os.path.join(work, "refreader.log")
            ref = subprocess.Popen([refreader, pad.node, "127.0.0.1", str(ref_port)], stdout=open(ref_out, "w"),
                                   stderr=subprocess.STDOUT)
            sc.require(k.wait_until(lambda: "ready" in open(ref_out).read(), 10), "the reference reader starts")
            pad.press(e.BTN_START, "engine on")
            time.sleep(0.5)
            procs = (("cb", cb.proc), ("ref", ref))
            cpu0 = {name: cpu_seconds(p.pid)[1] for name, p in procs}
            ticks0 = {name: user_system_ticks(p.pid) for name, p in procs}
            sw0 = {name: switches(p.pid) for name, p in procs}
            stamps = write_stream(pad, cycle, 500, 10.0)
            time.sleep(0.3)
            cpu1 = {name: cpu_seconds(p.pid)[1] for name, p in procs}
            ticks1 = {name: user_system_ticks(p.pid) for name, p in procs}
            sw1 = {name: switches(p.pid) for name, p in procs}
            pad.press(e.BTN_START, "engine off")
            time.sleep(0.3)
            cb.stop(signal.SIGTERM, 5)
            ref.terminate()
            ref.wait(5)
            pad.close()
            rate = (len(stamps) - 1) / (stamps[-1][1] - stamps[0][0])
            ours, theirs = (cpu1["cb"] - cpu0["cb"]) * 1000, (cpu1["ref"] - cpu0["ref"]) * 1000
            ratios[tag].append(ours / theirs)
            k.console("NOTE: s90 round %d %s: writer %.0f Hz, CPU %.1f ms vs the C reader's %.1f ms: %.3fx; context "
                      "switches voluntary %d vs %d, involuntary %d vs %d" % (
                          rnd, tag, rate, ours, theirs, ours / theirs, sw1["cb"][0] - sw0["cb"][0],
                          sw1["ref"][0] - sw0["ref"][0], sw1["cb"][1] - sw0["cb"][1], sw1["ref"][1] - sw0["ref"][1]))
            split = {name: tuple(b - a for a, b in zip(ticks0[name], ticks1[name])) for name, _ in procs}
            for name in split:
                totals[tag][name] = tuple(t + d for t, d in zip(totals[tag][name], split[name]))
            k.console("NOTE: s90 round %d %s: clock ticks user/system: carbridge %d/%d, the C reader %d/%d"
                      % ((rnd, tag) + split["cb"] + split["ref"]))
    for tag, values in ratios.items():
        sc.metric("cpu_ratio_median_%s" % tag, "%.3f" % median(values), "x")
        sc.metric("cpu_ratio_mean_%s" % tag, "%.3f" % (sum(values) / len(values)), "x")
        k.console("NOTE: s90 %s: CPU ratios %s" % (tag, " ".join("%.2f" % x for x in values)))
        (cu, cs), (ru, rs) = totals[tag]["cb"], totals[tag]["ref"]
        k.console("NOTE: s90 %s: clock ticks over all rounds, user/system: carbridge %d/%d, the C reader %d/%d"
                  % (tag, cu, cs, ru, rs))
    sc.check(all(ratios.values()), "every binary measured in every round")

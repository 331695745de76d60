#!/usr/bin/python3
"""Measurement 91: what one input report costs carbridge in instructions on the real path, under callgrind.

The first binary of run.sh --measure (without debug info: valgrind cannot read the toolchain's DWARF) runs
`carbridge run` under `valgrind --tool=callgrind` reading a uinput pad (libevdev, udev, the TCP car, scenario
11's config), twice: 200 and 800 reports of scenario 11's stream at 50 Hz (slow enough that every report is
read alone, even under valgrind in TCG). The difference of the two profiles is the cost of 600 reports
without start-up and shutdown: Tests/kernel/tools/callgrind_report.py prints it per report (results/s91/
cg-200.out and cg-800.out). METRIC: the instructions per report from the two totals. The stream timer's
early wake-ups come every 20 ms here (every 25th report at 500 Hz), so timer costs weigh more than in
scenario 11."""
import os, re, signal, subprocess, time
from evdev import ecodes as e
import kharness as k
from kharness import TcpCarLog, Pad
from scenarios import start_latency_car, lat_events, write_stream, LAT_PORTS, LAT_STEER
from measure import binaries

TITLE = "measurement: instructions per input report under callgrind (the real libevdev path)"
COUNTS = (200, 800)


def run(sc):
    cb_port, ref_port = LAT_PORTS
    log, car = start_latency_car(sc)
    config = os.path.join(sc.work, "carbridge.toml")
    with open(config, "w") as f:
        f.write(k.base_config(None, url="tcp://127.0.0.1:%d" % cb_port, link_extra="max_in_flight = 64\n",
                              extra='\n[throttle]\naxis = "ABS_RZ"\n'))
    tag, binary = binaries(sc)[0]
    stripped = os.path.join(sc.work, "carbridge-" + tag)
    subprocess.run(["strip", "--strip-debug", "-o", stripped, binary], check=True)
    period = lat_events()
    totals = {}
    for count in COUNTS:
        pad = Pad()
        out, out_log = os.path.join(sc.work, "cg-%d.out" % count), os.path.join(sc.work, "cg-%d.log" % count)
        proc = subprocess.Popen(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, "--dump-instr=no",
                                 "--demangle=no", stripped, "run", "--config", config, "--no-keyboard", "--no-view"],
                                stdin=subprocess.DEVNULL, stdout=open(out_log, "w"), stderr=subprocess.STDOUT)
        sc.cleanups.append(lambda proc=proc: proc.poll() is None and proc.kill())
        sc.require(k.wait_until(lambda: re.search(r"picked", open(out_log).read()), 180),
                   "%d reports: carbridge (callgrind) picks the pad" % count, open(out_log).read()[-2000:])
        time.sleep(1.0)
        pad.press(e.BTN_START, "engine on")
        time.sleep(1.0)
        cycle = [(e.ABS_X, LAT_STEER[-2])] + [(c, v) for c, v, _ in (period[i % len(period)] for i in range(count - 1))]
        written = write_stream(pad, cycle, 50, 60.0)
        time.sleep(1.0)
        pad.press(e.BTN_START, "engine off")
        time.sleep(1.0)
        proc.send_signal(signal.SIGTERM)
        proc.wait(180)
        pad.close()
        sc.check(len(written) == count, "%d reports written" % count, "%d" % len(written))
        found = re.search(r"Collected : (\d+)", open(out_log).read())
        sc.require(found is not None, "%d reports: callgrind wrote its totals" % count)
        totals[count] = int(found.group(1))
    per_report = (totals[COUNTS[1]] - totals[COUNTS[0]]) / float(COUNTS[1] - COUNTS[0])
    sc.metric("instructions_per_report_%s" % tag, "%.0f" % per_report, "instructions")
    k.console("NOTE: s91 %s: %.0f instructions per report (callgrind totals %s); per function: "
              "Tests/kernel/tools/callgrind_report.py Tests/kernel/out/results/s91/cg-%d.out "
              "Tests/kernel/out/results/s91/cg-%d.out %d" % (tag, per_report, totals, COUNTS[0], COUNTS[1],
                                                            COUNTS[1] - COUNTS[0]))

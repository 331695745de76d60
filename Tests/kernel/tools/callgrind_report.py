#!/usr/bin/python3
"""What one unit of work costs, from two callgrind profiles of the same program that did different amounts of it.

    callgrind_report.py LOW.out HIGH.out UNITS [--callers NAME | --tree NAME [DEPTH] | --names] [--limit N]

UNITS is how many more units HIGH did (kernel measurement 91: 600 input reports). Prints the instructions
per unit, then per function (self instructions, calls per unit), demangled with `swift demangle` when it is
on PATH. --callers NAME: who calls the functions whose mangled name contains NAME, per unit. --tree NAME:
the inclusive costs below the first function whose mangled name contains NAME, top down. --names: the
mangled name of every function the extra units ran (any self cost, or called at least once in 20 units),
costliest first, one per line: Linker/carbridge.steady, which scripts/symbol-order.sh links first. Start-up and
shutdown cancel out in the difference, so what is left is the steady path; profiles made with
--dump-instr=no (function level) and callgrind's name compression, as measurement 91 writes them.
"""
import collections
import re
import shutil
import signal
import subprocess
import sys


def parse(path):
    """(self cost per function, calls per (caller, callee), inclusive cost per (caller, callee))."""
    names = {}
    self_cost = collections.Counter()
    calls = collections.Counter()
    inclusive = collections.Counter()
    function = callee = None
    pending = None

    def name(field):
        match = re.match(r"\((\d+)\)(?: (.*))?", field)
        if match.group(2):
            names[match.group(1)] = match.group(2)
        return names.get(match.group(1), "?")

    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("fn="):
            function = name(line[3:])
        elif line.startswith("cfn="):
            callee = name(line[4:])
        elif line.startswith("calls="):
            pending = int(line[6:].split()[0])
        elif line and (line[0].isdigit() or line[0] in "+-*"):
            parts = line.split()
            if len(parts) < 2:
                continue
            if pending is not None:  # the cost line that follows a call is the call's inclusive cost
                calls[(function, callee)] += pending
                inclusive[(function, callee)] += int(parts[1])
                pending = None
            else:
                self_cost[function] += int(parts[1])
    return self_cost, calls, inclusive


def demangled(symbols):
    symbols = list(symbols)
    if not symbols or shutil.which("swift") is None:
        return {s: s for s in symbols}
    out = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(symbols), capture_output=True,
                         text=True).stdout.split("\n")
    return dict(zip(symbols, out)) if len(out) >= len(symbols) else {s: s for s in symbols}


def difference(low, high, units):
    return {key: (high[key] - low.get(key, 0)) / units for key in high}


def main(argv):
    if len(argv) < 4:
        print(__doc__.strip(), file=sys.stderr)
        return 64
    low, high, units = parse(argv[1]), parse(argv[2]), float(argv[3])
    options = argv[4:]
    limit = 60
    if "--limit" in options:
        limit = int(options[options.index("--limit") + 1])
    self_cost = difference(low[0], high[0], units)
    calls = difference(low[1], high[1], units)
    inclusive = difference(low[2], high[2], units)
    if "--callers" in options:
        pattern = options[options.index("--callers") + 1]
        rows = sorted(((count, caller) for (caller, callee), count in calls.items() if pattern in callee and count >= 0.1),
                      reverse=True)
        names = demangled(caller for _, caller in rows)
        for count, caller in rows[:limit]:
            print("%7.2f  %s" % (count, names[caller][:150]))
        return 0
    if "--tree" in options:
        index = options.index("--tree")
        pattern = options[index + 1]
        depth = int(options[index + 2]) if len(options) > index + 2 and options[index + 2].isdigit() else 6
        edges = collections.defaultdict(list)
        for (caller, callee), cost in inclusive.items():
            if cost >= 10:
                edges[caller].append((cost, callee))
        roots = [f for f in edges if pattern in f]
        if not roots:
            print("no function matching %s calls anything" % pattern, file=sys.stderr)
            return 1
        names = demangled(set(edges) | {c for children in edges.values() for _, c in children})

        def show(function, level, seen):
            for cost, child in sorted(edges.get(function, []), reverse=True):
                print("%s%7.0f %s" % ("  " * level, cost, names.get(child, child)[:110]))
                if level < depth and child not in seen:
                    show(child, level + 1, seen | {child})

        print("%s (self %.0f)" % (names[roots[0]][:110], self_cost.get(roots[0], 0)))
        show(roots[0], 1, {roots[0]})
        return 0
    called = collections.Counter()
    for (_, callee), count in calls.items():
        called[callee] += count
    if "--names" in options:
        steady = {f for f, cost in self_cost.items() if cost >= 0.5} | {f for f, count in called.items() if count >= 0.05}
        for function in sorted(steady, key=lambda f: (-self_cost.get(f, 0), f)):
            print(function)
        return 0
    rows = sorted(((cost, called[f], f) for f, cost in self_cost.items() if cost >= 5 or called[f] >= 0.5), reverse=True)
    print("per unit: %.0f instructions in %d functions, %.1f calls" % (
        sum(r[0] for r in rows), len(rows), sum(r[1] for r in rows)))
    names = demangled(f for _, _, f in rows[:limit])
    for cost, count, function in rows[:limit]:
        print("%8.1f %7.2f  %s" % (cost, count, names[function][:150]))
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends it quietly
    sys.exit(main(sys.argv))

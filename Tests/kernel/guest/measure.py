#!/usr/bin/python3
"""Shared by the measurement scenarios (90 and above; run only with run.sh --only N --measure TAG=PATH,...):
the binaries to measure, copied into the guest's tmpfs (pages of a binary on the 9p share are not in the
guest's page cache), and the rounds."""
import os, shutil
import kharness as k


def binaries(sc):
    """[(tag, path in tmpfs)] from MEASURE ("tag=path,tag=path"); the scenario-11 binary as "bin" without it."""
    items = [item.split("=", 1) for item in os.environ.get("MEASURE", "").split(",") if "=" in item]
    if not items:
        items = [("bin", k.CARBRIDGE_LATENCY)]
    out = []
    for tag, path in items:
        local = os.path.join(sc.work, "measure-" + tag)
        shutil.copyfile(path, local)
        os.chmod(local, 0o755)
        out.append((tag, local))
    return out


def rounds(default):
    """MEASURE_ROUNDS (run.sh --rounds), or `default`."""
    value = int(os.environ.get("MEASURE_ROUNDS", "0") or 0)
    return value if value > 0 else default


def median(values):
    values = sorted(values)
    return values[len(values) // 2] if values else float("nan")

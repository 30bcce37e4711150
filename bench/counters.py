#!/usr/bin/env python3
"""What reading the device counters costs: the quick suite on a loop ext4
with the counters on and off (FSBENCH_DEVICE_COUNTERS=off), alternating in
one run, and for every headline metric the ratio of its phase's time with
them to its time without (the median over rounds, min-max beside it).

Every timed phase reads /proc/diskstats twice (at its start and at its
end), so the cost is two snapshots per phase whatever its length: the
shortest phase is where it weighs most. The noise of one phase between two
runs on a shared VM is far above 1 %, so the bench also prints the bound
that does not depend on it: two snapshots (their cost measured on the same
target by examples/snapshot_cost.rs) as a share of the shortest phase.

    sudo python3 bench/counters.py                  # fresh 4 GiB loop ext4, 3 rounds
    sudo python3 bench/counters.py --rounds 5 --scale 0.5
    sudo python3 bench/counters.py --dir /lab/ext4

Needs: e2fsprogs, util-linux (losetup), cargo.
"""
import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FSBENCH = REPO / "target" / "release" / "fsbench"


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def loop_ext4(mib):
    """A fresh ext4 on a loop device; returns (mount point, undo)."""
    image = tempfile.mktemp(prefix="fsbench-counters-", suffix=".img", dir="/var/tmp")
    mnt = tempfile.mkdtemp(prefix="fsbench-counters-", dir="/var/tmp")
    sh(["truncate", "-s", f"{mib}M", image])
    sh(["mkfs.ext4", "-q", "-F", image])
    dev = sh(["losetup", "--find", "--show", image]).strip()
    sh(["mount", dev, mnt])

    def undo():
        subprocess.run(["umount", mnt])
        subprocess.run(["losetup", "-d", dev])
        os.unlink(image)
        os.rmdir(mnt)

    return mnt, undo


def run_quick(target, scale, counters):
    """Headline metric name -> elapsed seconds of its phase, for one run."""
    env = dict(os.environ)
    if not counters:
        env["FSBENCH_DEVICE_COUNTERS"] = "off"
    out = sh([str(FSBENCH), "run", target, "--scale", str(scale), "-r", "1",
              "--json", "-", "--no-save", "-q"], env=env)
    record = json.loads(out)
    phases = {}
    with_device = 0
    for workload in record["targets"][0]["workloads"]:
        name = workload.get("label") or workload["workload"]
        for metric in workload["metrics"]:
            with_device += metric.get("device") is not None
            # Space figures are read after their phase: not a phase's time.
            if metric.get("detail") or metric["unit"] == "×":
                continue
            phases[f"{name}/{metric['name']}"] = metric["elapsed_s"]
    if (with_device > 0) != counters:
        sys.exit(f"{with_device} metrics with counters, FSBENCH_DEVICE_COUNTERS "
                 f"{'on' if counters else 'off'}")
    return phases


def snapshot_cost_s(target):
    """One snapshot's cost on `target`'s devices, as examples/snapshot_cost.rs measures it."""
    out = sh(["cargo", "run", "--release", "--quiet", "--example", "snapshot_cost", "--", target],
             cwd=REPO)
    found = re.search(r"one snapshot: ([0-9.]+)(ns|µs|us|ms)", out)
    if not found:
        sys.exit(f"no snapshot cost in the example's output:\n{out}")
    value, unit = float(found.group(1)), found.group(2)
    return value * {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3}[unit]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", help="file system to test (default: a fresh loop ext4)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0, help="the quick suite's --scale")
    ap.add_argument("--no-build", action="store_true")
    args = ap.parse_args()
    if not args.no_build:
        sh(["cargo", "build", "--release"], cwd=REPO)
    undo = None
    target = args.dir
    if target is None:
        target, undo = loop_ext4(4096)
    try:
        ratios = {}
        on_times = {}
        for round_ in range(args.rounds):
            order = [True, False]
            random.shuffle(order)
            runs = {counters: run_quick(target, args.scale, counters) for counters in order}
            for name, on in runs[True].items():
                off = runs[False].get(name)
                if off:
                    ratios.setdefault(name, []).append(on / off)
                    on_times.setdefault(name, []).append(on)
            print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr)
        cost = snapshot_cost_s(target)
    finally:
        if undo:
            undo()
    print(f"{'phase':40} {'time on':>9} {'on/off':>7}  spread")
    for name, values in ratios.items():
        print(f"{name:40} {statistics.median(on_times[name]):8.3f}s "
              f"{statistics.median(values):7.3f}  {min(values):.3f}-{max(values):.3f}")
    shortest = min(on_times, key=lambda n: statistics.median(on_times[n]))
    shortest_s = statistics.median(on_times[shortest])
    print(f"\nshortest phase: {shortest}, {shortest_s:.3f} s; measured on/off "
          f"{statistics.median(ratios[shortest]):.3f}")
    print(f"one snapshot: {cost * 1e6:.1f} µs; two per phase = "
          f"{100 * 2 * cost / shortest_s:.4f} % of the shortest phase")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""What `fsbench crash`'s recorder costs on this machine, in one run, against
the issue's goals:

1. Slowdown of a workload on a recorded disk. One `fsbench run --configs`
   builds the same ext4 twice on images in /var/tmp (the machine's disk):
   `plain` (a loop device with direct I/O on the image) and `recorded`
   (`recorded = true`: the loop device on the recorder's FUSE disk, every
   write and flush appended to a block log beside the image). fsbench
   interleaves the two configurations' repetitions (--repeat). Two io jobs:
   a bulk write (1 MiB sequential O_DIRECT writes, fsync at the end) and an
   fsync-bound one (4 KiB O_DSYNC writes). Goals: under 2x for bulk writes,
   none measurable for fsync-bound work (the recorded disk not slower in
   every repetition). The recorder logs a flush without syncing its log
   (it models the disk, not the host), so the plain image pays the host
   disk's flushes and the recorded one does not.
2. Crash states checked per second: `fsbench crash` of a 256 MiB ext4,
   200 cuts. Goal: 200 states in under 2 minutes, wall time.
3. Peak memory against the block log's size: `fsbench crash` with a
   workload of 4, 16 and 64 MiB; the peak RSS of the fsbench process
   itself (its VmHWM, polled), beside the bytes its log recorded. Goal:
   bounded whatever the log's size (the 64 MiB run's peak under 1.5x the
   4 MiB run's).

    sudo python3 bench/crash.py
    sudo python3 bench/crash.py --repeat 5 --bulk 2g --seconds 5

Needs root, /dev/fuse, e2fsprogs, cargo (FSBENCH=path/to/fsbench uses that
binary instead of building this tree). fsbench makes and removes everything
in its own scratch directories in --images, also on an error or Ctrl-C.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FSBENCH = Path(os.environ.get("FSBENCH", REPO / "target" / "release" / "fsbench"))
IMAGE_DIR = "/var/tmp"  # on the machine's disk, not in RAM

EXT4 = '''
[[config]]
name = "{name}"
mkfs = "mkfs.ext4 -F {{dev}}"
type = "ext4"
recorded = {recorded}
'''
BULK, SYNCED = "bulk-write-1m", "dsync-write-4k"
BULK_GOAL = 2.0
STATES_GOAL = (200, 120.0)  # states, seconds
RSS_GOAL = 1.5


def command(args, json_path):
    """The fsbench command line of `args` writing its result to `json_path`."""
    return [str(FSBENCH)] + args + ["--json", str(json_path)]


def fsbench(args, json_path):
    """Runs fsbench with --json; its result. Its output is shown on failure."""
    done = subprocess.run(command(args, json_path), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"fsbench {' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    return json.loads(Path(json_path).read_text())


def write(path, text):
    path.write_text(text)
    return path


def slowdown(args, scratch):
    """{job: {config: [rate per repetition]}} of plain and recorded ext4."""
    configs = write(scratch / "configs.toml",
                    EXT4.format(name="plain", recorded="false")
                    + EXT4.format(name="recorded", recorded="true"))
    suite = write(scratch / "suite.toml", f'''description = "the recorder's cost"
repeat = 1
[[workload]]
kind = "io"
args = [
    "-s", "256m", "--warmup", "1s",
    "--job", "{BULK}: -b 1m --read 0 --seek 0 --direct --end-fsync --amount {args.bulk}",
    "--job", "{SYNCED}: -b 4k --read 0 --seek 100 --sync dsync --duration {args.seconds}s",
]
''')
    result = fsbench(["run", "--suite", str(suite), "--configs", str(configs),
                      "--images", args.images, "--image-size", "1g",
                      "--repeat", str(args.repeat), "--precision", "off", "--no-save", "-q"],
                     scratch / "run.json")
    rates = {BULK: {}, SYNCED: {}}
    for target in result["targets"]:
        for workload in target["workloads"]:
            job = workload["label"]
            metric = "mib_per_s" if job == BULK else "io_rate"
            value = next(m["value"] for m in workload["metrics"] if m["name"] == metric)
            rates[job].setdefault(target["name"], []).append(value)
    return rates


def slowdown_table(rates, repeat):
    lines = [f"## 1. the recorder's slowdown: ext4 on a plain vs a recorded loop image "
             f"({IMAGE_DIR}, direct I/O), medians of {repeat} interleaved repetitions",
             f"{'job':<16}{'unit':>7}{'plain':>10}{'recorded':>10}{'slowdown':>10}"
             f"{'per repetition':>20}  goal"]
    for job, unit in ((BULK, "MiB/s"), (SYNCED, "IO/s")):
        plain, recorded = rates[job]["plain"], rates[job]["recorded"]
        pairs = [p / r for p, r in zip(plain, recorded)]
        ratio = statistics.median(plain) / statistics.median(recorded)
        if job == BULK:
            goal, met = f"under {BULK_GOAL:.0f}x", ratio < BULK_GOAL
        else:
            # Not slower in every repetition: on this noisy machine, a
            # slowdown no repetition escapes is the least that measures.
            goal, met = "none measurable (not slower in every repetition)", min(pairs) <= 1.0
        lines.append(f"{job:<16}{unit:>7}{statistics.median(plain):>10.1f}"
                     f"{statistics.median(recorded):>10.1f}{ratio:>9.2f}x"
                     f"{min(pairs):>12.2f}x-{max(pairs):.2f}x  {goal}: {'met' if met else 'NOT met'}")
    return "\n".join(lines)


def crash_args(configs, images, cuts, workload):
    """`fsbench crash` of `configs` on 256 MiB images."""
    return ["crash", "--configs", str(configs), "--images", images, "--image-size", "256m",
            "--cuts", str(cuts), "--workload-size", workload]


def states_per_second(args, configs, scratch):
    json_path = scratch / "states.json"
    clock = time.monotonic()
    result = fsbench(crash_args(configs, args.images, args.cuts, "16m"), json_path)
    wall = time.monotonic() - clock
    durability = result["targets"][0]["durability"]
    states, seconds = durability["states"], durability["check_seconds"]
    wanted, limit = STATES_GOAL
    met = states >= wanted and wall < limit
    return "\n".join([
        "## 2. crash states checked per second: ext4, 256 MiB image, 16 MiB workload, "
        f"{args.cuts} cuts (cache model)",
        f"states {states}, checked in {seconds:.1f} s: {states / seconds:.1f} states/s; "
        f"recording {durability['record_seconds']:.1f} s; whole run {wall:.1f} s wall",
        f"goal: {wanted} states in under {limit:.0f} s: {'met' if met else 'NOT met'}"])


def peak_rss(cmd):
    """(exit status, fsbench's own VmHWM in KiB polled until it exits,
    ru_maxrss of it and the children it waited for in KiB)."""
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=err)
        peak = 0
        while True:
            peak = max(peak, vm_hwm(proc.pid))
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                proc.returncode = os.waitstatus_to_exitcode(status)
                break
            time.sleep(0.01)
        if proc.returncode != 0:
            err.seek(0)
            sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err.read()}")
    return peak, usage.ru_maxrss


def vm_hwm(pid):
    """The process's peak resident set so far, KiB; 0 once it is gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    line = next((l for l in text.splitlines() if l.startswith("VmHWM:")), "VmHWM: 0 kB")
    return int(line.split()[1])


def memory_vs_log(args, configs, scratch):
    lines = ["## 3. peak memory vs the block log's size: ext4, 256 MiB image, "
             f"{args.rss_cuts} cuts",
             f"{'workload':>9}{'log bytes':>14}{'fsbench VmHWM':>15}{'with mkfs/fsck':>16}"]
    peaks = []
    for workload in ("4m", "16m", "64m"):
        json_path = scratch / f"rss-{workload}.json"
        peak, with_children = peak_rss(
            command(crash_args(configs, args.images, args.rss_cuts, workload), json_path))
        logged = json.loads(json_path.read_text())["targets"][0]["durability"]["written_bytes"]
        peaks.append((logged, peak))
        lines.append(f"{workload:>9}{logged:>14,}{peak / 1024:>11.1f} MiB"
                     f"{with_children / 1024:>12.1f} MiB")
    (small_log, small), (big_log, big) = peaks[0], peaks[-1]
    growth = big / small
    lines.append(f"goal: bounded whatever the log's size (peak under {RSS_GOAL}x while the log "
                 f"grows {big_log / small_log:.1f}x): {growth:.2f}x, "
                 f"{'met' if growth < RSS_GOAL else 'NOT met'}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3, help="repetitions of part 1")
    ap.add_argument("--bulk", default="1g", help="bytes each bulk write job writes")
    ap.add_argument("--seconds", type=float, default=3, help="the fsync-bound job's duration")
    ap.add_argument("--cuts", type=int, default=200, help="crash states of part 2")
    ap.add_argument("--rss-cuts", type=int, default=50, help="crash states of part 3's runs")
    ap.add_argument("--images", default=IMAGE_DIR, help="where the images and logs go")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root: fsbench mounts the recorder, loop devices and file systems")
    if "FSBENCH" not in os.environ:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
    with tempfile.TemporaryDirectory(prefix="fsb-bench-crash-") as scratch:
        scratch = Path(scratch)
        configs = write(scratch / "ext4.toml", EXT4.format(name="ext4", recorded="false"))
        sections = [slowdown_table(slowdown(args, scratch), args.repeat),
                    states_per_second(args, configs, scratch),
                    memory_vs_log(args, configs, scratch)]
    print(f"# fsbench crash's recorder on this machine ({os.cpu_count()} CPUs; images in "
          f"{args.images}); only ratios within this run mean anything")
    for section in sections:
        print()
        print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())

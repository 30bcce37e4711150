#!/usr/bin/env python3
"""Do `fsbench io --fio FILE` and fio measure the same thing? Runs the same
job files through Debian's fio and through fsbench, alternating, in one
run, on one file system (by default an ext4 on a loop device this script
creates with direct I/O to its image, so that neither tool's reads are
served by the host's cache of the image: fsbench drops that cache before
each job, fio does not), both writing fio's JSON (`--output-format=json` and
`--fio-json`). Prints per job and figure (bandwidth, IOPS, clat p50 and
p99, and fdatasync p99 where the job syncs) the median of fsbench / fio
over the rounds and its min-max spread, and checks that both ran the same
jobs in the same groups and, for size-bound jobs, moved the same bytes.
With --burners N the rounds run twice, quiet and then with N CPU burners
started from this script's session (a busy host), and the table has both
ratios side by side.

    sudo python3 bench/fio_agreement.py                      # fresh 4 GiB loop ext4 (direct I/O)
    sudo python3 bench/fio_agreement.py --dir /lab/xfs --rounds 5
    sudo python3 bench/fio_agreement.py --jobs my.fio --jobs other.fio
    sudo python3 bench/fio_agreement.py --burners 4          # quiet and busy
    sudo FSBENCH=/path/to/fsbench python3 bench/fio_agreement.py

Needs: fio (Debian package), mkfs.ext4, cargo.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from agreement import run, settle
from burners import Burners, describe

REPO = Path(__file__).resolve().parent.parent
# $FSBENCH: another build to compare (then nothing is built)
FSBENCH = Path(os.environ.get("FSBENCH", REPO / "target" / "release" / "fsbench"))

# The jobs compared by default: fio's common shapes, each measured alone
# (stonewall) so neither tool's figure is the other jobs' load. Direct I/O
# where the figure is the device's; the etcd check buffered, as etcd runs it.
DEFAULT_JOBS = """\
[global]
directory=DIR
size=256m
stonewall
[seq-write-1m]
rw=write
bs=1m
direct=1
[seq-read-1m]
rw=read
bs=1m
direct=1
[rand-read-4k]
rw=randread
bs=4k
direct=1
time_based
ramp_time=1
runtime=4
[rand-write-4k-qd16]
rw=randwrite
bs=4k
direct=1
ioengine=io_uring
iodepth=16
time_based
ramp_time=1
runtime=4
[etcd]
rw=write
ioengine=sync
fdatasync=1
bs=2300
size=4m
"""

# (figure, where in a direction's block, how to read it)
FIGURES = [
    ("bw", lambda d: d["bw_bytes"]),
    ("iops", lambda d: d["iops"]),
    ("p50", lambda d: d["clat_ns"].get("percentile", {}).get("50.000000")),
    ("p99", lambda d: d["clat_ns"].get("percentile", {}).get("99.000000")),
]


def loop_ext4(size):
    """An ext4 on a loop device that reads and writes its image with
    O_DIRECT: (image, device, mount)."""
    image = tempfile.mktemp(prefix="fsbench-fio-agree-", suffix=".img")
    mount = tempfile.mkdtemp(prefix="fsbench-fio-agree-")
    run(["truncate", "-s", size, image])
    device = run(["losetup", "--find", "--show", "--direct-io=on", image]).strip()
    run(["mkfs.ext4", "-q", "-F", device])
    run(["mount", device, mount])
    return image, device, mount


def fio_json(tool, jobfile, workdir, out):
    """One run of `jobfile` by `tool`; its fio JSON."""
    settle()
    if tool == "fio":
        cmd = ["fio", "--output-format=json", "--output", out, jobfile]
    else:
        cmd = [str(FSBENCH), "io", "--fio", jobfile, workdir, "-q", "--fio-json", out]
    run(cmd)
    for name in os.listdir(workdir):
        path = os.path.join(workdir, name)
        if os.path.isfile(path):
            os.unlink(path)
    return json.loads(Path(out).read_text())


def shape(document):
    """(name, group, direction moved, bytes) per job: what both must agree on."""
    rows = []
    for job in document["jobs"]:
        moved = {d: job[d]["io_bytes"] for d in ("read", "write") if job[d]["io_bytes"]}
        rows.append((job["jobname"], job["groupid"], tuple(sorted(moved)), moved))
    return rows


def figures(document):
    """{(job, figure): value} for each direction a job moved bytes in."""
    values = {}
    for job in document["jobs"]:
        for direction in ("read", "write"):
            block = job[direction]
            if not block["io_bytes"]:
                continue
            for name, pick in FIGURES:
                values[(job["jobname"], f"{direction} {name}")] = pick(block)
        sync = job.get("sync", {}).get("lat_ns", {})
        if sync.get("N"):
            values[(job["jobname"], "sync p99")] = sync["percentile"]["99.000000"]
    return values


def agreement(fio_runs, ours_runs):
    """Rows of (job, figure, fio median, fsbench median, ratio median, spread)."""
    rows = []
    for key in figures(fio_runs[0]):
        pairs = [(f.get(key), o.get(key)) for f, o in
                 zip(map(figures, fio_runs), map(figures, ours_runs))]
        ratios = [o / f for f, o in pairs if f and o]
        if not ratios:
            continue
        fio_median = statistics.median(f for f, _ in pairs if f)
        our_median = statistics.median(o for _, o in pairs if o)
        rows.append((key[0], key[1], fio_median, our_median, statistics.median(ratios),
                     f"{min(ratios):.2f}-{max(ratios):.2f}"))
    return rows


def check_shapes(fio_runs, ours_runs, time_based):
    """Same jobs, groups and directions; the same bytes where size-bound."""
    problems = []
    for f, o in zip(fio_runs, ours_runs):
        a, b = shape(f), shape(o)
        if [r[:3] for r in a] != [r[:3] for r in b]:
            problems.append(f"jobs differ: fio {[r[:3] for r in a]} fsbench {[r[:3] for r in b]}")
        for (name, _, _, mine), (_, _, _, theirs) in zip(b, a):
            if name not in time_based and mine != theirs:
                problems.append(f"{name}: fsbench moved {mine}, fio {theirs}")
    return sorted(set(problems))


def time_based_jobs(text):
    """The jobs that run for a time (their bytes differ between tools); a
    time_based in [global] makes every job after it one."""
    jobs, current, every = set(), None, False
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            current = None if line == "[global]" else line.strip("[]")
            if current and every:
                jobs.add(current)
        elif line in ("time_based", "time_based=1"):
            if current:
                jobs.add(current)
            else:
                every = True
    return jobs


def human(figure, value):
    if figure.endswith("bw"):
        return f"{value / 2**20:.1f} MiB/s"
    if figure.endswith("iops"):
        return f"{value:.0f}"
    return f"{value / 1000:.1f} us"


def alternating_rounds(jobfile, workdir, rounds, tmp):
    """(fio's documents, fsbench's), one of each per round."""
    fio_runs, ours_runs = [], []
    for r in range(rounds):
        # Alternating, and each round starting with the other tool, so
        # drift and order hit both alike.
        order = ["fio", "fsbench"] if r % 2 == 0 else ["fsbench", "fio"]
        for tool in order:
            document = fio_json(tool, jobfile, workdir, os.path.join(tmp, f"{tool}{r}.json"))
            (fio_runs if tool == "fio" else ours_runs).append(document)
    return fio_runs, ours_runs


def compare(jobfile_text, workdir, rounds, label, burners):
    """Quiet rounds, then (with burners) busy ones; prints both tables' rows
    side by side. True when both tools ran the same jobs and bytes."""
    with tempfile.TemporaryDirectory(prefix="fsbench-fio-agree-") as tmp:
        jobfile = os.path.join(tmp, "jobs.fio")
        Path(jobfile).write_text(jobfile_text.replace("DIR", workdir))
        sets = {"quiet": alternating_rounds(jobfile, workdir, rounds, tmp)}
        if burners:
            with Burners(burners):
                sets["busy"] = alternating_rounds(jobfile, workdir, rounds, tmp)
    time_based = time_based_jobs(jobfile_text)
    print(f"\n{label}: {rounds} rounds, fsbench / fio (median, min-max over rounds)"
          + (f"; busy: {describe(burners)}" if burners else ""))
    busy_head = f"{'busy fio':>14}{'fsbench':>14}{'ratio':>8}  spread" if burners else ""
    print(f"{'job':<22}{'figure':<14}{'fio':>14}{'fsbench':>14}{'ratio':>8}  {'spread':<11}{busy_head}")
    busy_rows = {row[:2]: row for row in agreement(*sets["busy"])} if burners else {}
    for job, figure, theirs, ours, ratio, spread in agreement(*sets["quiet"]):
        line = (f"{job:<22}{figure:<14}{human(figure, theirs):>14}{human(figure, ours):>14}"
                f"{ratio:>8.2f}  {spread:<11}")
        if (job, figure) in busy_rows:
            _, _, b_theirs, b_ours, b_ratio, b_spread = busy_rows[job, figure]
            line += (f"{human(figure, b_theirs):>14}{human(figure, b_ours):>14}"
                     f"{b_ratio:>8.2f}  {b_spread}")
        print(line)
    problems = sorted({p for runs in sets.values() for p in check_shapes(*runs, time_based)})
    print("jobs, groups and bytes: " + ("the same" if not problems else "; ".join(problems)))
    return not problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", help="file system to run on (default: a fresh loop ext4)")
    ap.add_argument("--size", default="4G", help="size of the loop ext4 (default 4G)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jobs", action="append", help="job file(s) to compare instead "
                    "(a DIR in them is replaced by the directory)")
    ap.add_argument("--burners", type=int, default=0, metavar="N",
                    help="also run the rounds with N CPU burners (a busy host), "
                    "started from this script's session")
    args = ap.parse_args()
    if "FSBENCH" not in os.environ:
        run(["cargo", "build", "--release", "--quiet", "--manifest-path", str(REPO / "Cargo.toml")])
    print(run(["fio", "--version"]).strip(), "against", run([str(FSBENCH), "--version"]).strip())
    image = None
    if args.dir:
        workdir = args.dir
    else:
        image, device, workdir = loop_ext4(args.size)
    try:
        sets = [(Path(j).read_text(), j) for j in args.jobs] if args.jobs else [(DEFAULT_JOBS, "default jobs")]
        ok = all([compare(text, workdir, args.rounds, label, args.burners)
                  for text, label in sets])
    finally:
        if image:
            run(["umount", workdir])
            run(["losetup", "-d", device])
            os.rmdir(workdir)
            os.unlink(image)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

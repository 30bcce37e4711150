#!/usr/bin/env python3
"""Compare fsbench's bonnie mode with bonnie++, fio (psync) and the bare
syscall floor (shared/lab/floor.c), all in one run on one file system, and
print ratios. Machines are noisy: only the ratios of one run mean anything.

    sudo python3 bench/compare.py                 # mounts its own tmpfs
    sudo python3 bench/compare.py --dir /lab/ext4 --rounds 5
    sudo python3 bench/compare.py --meta-only --rounds 9   # fsbench's file tests against the floor

The metadata table's 'vs floor' is fsbench's rate over the floor's (above
1: fsbench issues its system calls with less around them than the bare
loop), the median of the rounds' ratios and their min-max; a figure whose
median falls below 1 is named on a line of its own.

Needs: bonnie++ and fio (Debian packages), a C compiler, cargo.
"""
import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FLOOR_C = REPO.parent / "shared" / "lab" / "floor.c"
FSBENCH = REPO / "target" / "release" / "fsbench"

# bonnie's CSV (format 1.98) field indexes, 0-based.
CSV = {"put_block": 11, "get_block": 17, "seq_create": 26, "seq_stat": 28,
       "seq_del": 30, "ran_create": 32, "ran_stat": 34, "ran_del": 36}
META = ["seq_create", "seq_stat", "seq_del", "ran_create", "ran_stat", "ran_del"]


def run(cmd, **kw):
    settle()
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def settle():
    """Each measured command starts with no dirty data from the previous one."""
    subprocess.run(["sync"], check=True)


def build():
    run(["cargo", "build", "--release", "--quiet"], cwd=REPO)
    floor = Path(tempfile.gettempdir()) / "fsbench-floor"
    run(["cc", "-O2", "-o", str(floor), str(FLOOR_C)])
    return floor


def csv_fields(stdout):
    line = [l for l in stdout.splitlines() if l.startswith("1.98,")][-1]
    return line.split(",")


def rate(fields, name, unit_kib):
    """A bonnie CSV rate as files/s or MiB/s; None for '+++++'."""
    text = fields[CSV[name]]
    if not text or text.startswith("+"):
        return None
    value = float(text)
    return value / 1024 if unit_kib else value


def bonnie_like(tool, workdir, args):
    base = [str(FSBENCH), "bonnie"] if tool == "fsbench" else ["bonnie++", "-u", "root"]
    out = run(base + ["-d", workdir, "-m", tool, "-q"] + args).stdout
    return csv_fields(out)


def floor_meta(floor, workdir, files):
    d = Path(workdir) / "floor-meta"
    d.mkdir()
    out = run([str(floor), "meta", str(d), str(files)]).stdout
    shutil.rmtree(d)
    vals = dict(re.findall(r"^(\w+) ([\d.]+)", out, re.M))
    return {"create": float(vals["create"]), "stat": float(vals["stat"]),
            "delete": float(vals["delete"])}


def floor_seq(floor, workdir, mib, block):
    out = run([str(floor), "seq", workdir, str(mib), str(block)]).stdout
    vals = dict(re.findall(r"^(\w+) ([\d.]+)", out, re.M))
    return float(vals["seqwrite"]), float(vals["seqread"])


def fio(workdir, rw, mib, block):
    out = run(["fio", "--name=seq", f"--directory={workdir}", "--ioengine=psync",
               f"--rw={rw}", f"--bs={block}", f"--size={mib}m", "--end_fsync=1",
               # bonnie's block write extends a new file; fio would otherwise
               # preallocate it and only copy into existing pages.
               "--fallocate=none",
               "--output-format=terse", "--terse-version=3"]).stdout
    f = out.strip().split(";")
    kib = float(f[6]) if rw == "read" else float(f[47])   # bw in KiB/s
    for p in Path(workdir).glob("seq.0.0"):
        p.unlink()
    return kib / 1024


def median(xs):
    xs = sorted(x for x in xs if x is not None)
    return xs[len(xs) // 2] if xs else None


def paired_ratio(a, b):
    """Median over rounds of a/b, each round's two figures measured close
    together in time: the machine's drift cancels out of each ratio."""
    return median([x / y for x, y in zip(a, b) if x and y])


def ratio_text(a, b):
    r = paired_ratio(a, b)
    return f"{r:6.2f}x" if r else "     -"


def spread_text(a, b):
    """min-max of the per-round ratios a/b."""
    ratios = [x / y for x, y in zip(a, b) if x and y]
    return f"{min(ratios):.2f}-{max(ratios):.2f}" if ratios else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", help="file system to test (default: a fresh tmpfs)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds; each ratio is the median of the per-round ratios")
    ap.add_argument("--files", type=int, default=100, help="-n for fsbench (x1024 files)")
    ap.add_argument("--bonnie-files", type=int, default=400,
                    help="-n for bonnie++ (large enough that it prints figures, not +++++)")
    ap.add_argument("--meta-only", action="store_true",
                    help="only fsbench's file tests and the floor's (no bonnie++, fio or data tests)")
    ap.add_argument("--mib", type=int, default=4096,
                    help="data size for block tests (bonnie++ needs >= 0.5 s per phase to print a figure)")
    args = ap.parse_args()

    floor = build()
    mount = None
    workdir = args.dir
    if workdir is None:
        mount = tempfile.mkdtemp(prefix="fsbench-bench-")
        size = f"size={1024 if args.meta_only else 2 * args.mib + 1024}m"
        run(["mount", "-t", "tmpfs", "-o", size, "tmpfs", mount])
        workdir = mount
    try:
        report(floor, workdir, args)
    finally:
        if mount:
            run(["umount", mount])
            os.rmdir(mount)


def report(floor, workdir, args):
    files = args.files * 1024
    meta = {k: {"fsbench": [], "fsbench_big": [], "bonnie++": []} for k in META}
    floor_m = {"create": [], "stat": [], "delete": []}
    seq = {k: {"fsbench": [], "bonnie++": [], "fio": [], "floor": []} for k in ["put_block", "get_block"]}
    data_args = ["-s", str(args.mib), "-r", str(args.mib // 2), "-f", "-n", "0", "-z", "1"]

    def meta_run(key, tool, n):
        fields = bonnie_like(tool, workdir, ["-s", "0", "-n", str(n), "-r", "0", "-z", "1"])
        for k in META:
            meta[k][key].append(rate(fields, k, False))

    def data_run(tool):
        fields = bonnie_like(tool, workdir, data_args)
        for k in seq:
            seq[k][tool].append(rate(fields, k, True))

    def floor_meta_runs():
        for k, v in floor_meta(floor, workdir, files).items():
            floor_m[k].append(v)

    def floor_runs():
        floor_meta_runs()
        w, r = floor_seq(floor, workdir, args.mib, 8192)
        seq["put_block"]["floor"].append(w)
        seq["get_block"]["floor"].append(r)

    def fio_runs():
        seq["put_block"]["fio"].append(fio(workdir, "write", args.mib, 8192))
        seq["get_block"]["fio"].append(fio(workdir, "read", args.mib, 8192))

    jobs = [floor_runs, fio_runs,
            lambda: meta_run("fsbench", "fsbench", args.files),
            lambda: meta_run("fsbench_big", "fsbench", args.bonnie_files),
            lambda: meta_run("bonnie++", "bonnie++", args.bonnie_files),
            lambda: data_run("fsbench"), lambda: data_run("bonnie++")]
    if args.meta_only:
        jobs = [floor_meta_runs, lambda: meta_run("fsbench", "fsbench", args.files)]
    order = random.Random(1)
    for _ in range(args.rounds):
        # A new order every round: what ran just before (a metadata run
        # leaves the allocator and slab caches in another state than a data
        # run) and drift must not favour one tool.
        order.shuffle(jobs)
        for job in jobs:
            job()

    print(f"# {workdir}: {args.rounds} rounds, tools in a new random order each round; medians, and ratios as the median of per-round ratios")
    print(f"## metadata, files/s (fsbench -n {args.files}; fsbench and bonnie++ -n {args.bonnie_files})")
    bonnie_head = "" if args.meta_only else \
        f"{'fsb -n' + str(args.bonnie_files):>11}{'bonnie++':>10}{'vs bonnie':>10}"
    print(f"{'test':<11}{'fsbench':>10}{'floor':>10}{'vs floor':>9} {'spread':>10}  {bonnie_head}")
    floor_of = {"seq_create": "create", "ran_create": "create", "seq_stat": "stat",
                "ran_stat": "stat", "seq_del": "delete", "ran_del": "delete"}
    below = []
    for k in META:
        fs, fl = meta[k]["fsbench"], floor_m[floor_of[k]]
        fb, bo = meta[k]["fsbench_big"], meta[k]["bonnie++"]
        against_bonnie = ("" if args.meta_only else
                          f"{median(fb) or 0:>11.0f}{median(bo) or 0:>10.0f}{ratio_text(fb, bo):>10}")
        print(f"{k:<11}{median(fs) or 0:>10.0f}{median(fl):>10.0f}{ratio_text(fs, fl):>9} "
              f"{spread_text(fs, fl):>10}  {against_bonnie}")
        if k.startswith("seq_") and (paired_ratio(fs, fl) or 0) < 1:
            below.append(f"{k} {paired_ratio(fs, fl) or 0:.2f}x")
    if below:
        print("BELOW THE FLOOR (fsbench slower than the bare syscall loop): " + ", ".join(below))
    if args.meta_only:
        return
    print(f"## block I/O, MiB/s ({args.mib} MiB file, 8 KiB blocks)")
    print(f"{'test':<11}{'fsbench':>10}{'fio psync':>10}{'vs fio':>8}{'bonnie++':>10}{'vs bonnie':>10}{'floor':>10}{'vs floor':>9}")
    for k in ["put_block", "get_block"]:
        fs, fi, bo, fl = seq[k]["fsbench"], seq[k]["fio"], seq[k]["bonnie++"], seq[k]["floor"]
        print(f"{k:<11}{median(fs) or 0:>10.0f}{median(fi):>10.0f}{ratio_text(fs, fi):>8}"
              f"{median(bo) or 0:>10.0f}{ratio_text(fs, bo):>10}{median(fl):>10.0f}{ratio_text(fs, fl):>9}")
    print("(floor's delete and create loops run in name order; ran_* phases use random names,")
    print(" so their 'vs floor' compares a harder job against the floor's easiest one)")


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Do fsbench's bonnie mode and bonnie++ measure the same thing? Runs both,
alternating, with the same options on one file system (by default a
loop-mounted ext4 this script creates), and prints each figure's mean and
min-max spread for both, and whether fsbench's mean lies inside bonnie++'s
own run-to-run spread, with an exact permutation test of the two means.
The per-char and file tests are CPU-bound (one syscall per byte, a few per
file), so their rate is the CPU the process got; the CPU each tool spent
per MiB or per file (%CP / rate) is printed for them too, which is what
says whether the two do the same work on a machine that is busy with
something else.

    sudo python3 bench/agreement.py                      # fresh 8 GiB loop ext4
    sudo python3 bench/agreement.py --dir /lab/xfs --rounds 5

Needs: bonnie++ (Debian package), mkfs.ext4, cargo.
"""
import argparse
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FSBENCH = REPO / "target" / "release" / "fsbench"

# (name, CSV index of the rate in format 1.98, unit)
FIELDS = [("putc", 9, "KiB/s"), ("put_block", 11, "KiB/s"), ("rewrite", 13, "KiB/s"),
          ("getc", 15, "KiB/s"), ("get_block", 17, "KiB/s"), ("seeks", 19, "/s"),
          ("seq_create", 26, "/s"), ("seq_stat", 28, "/s"), ("seq_del", 30, "/s"),
          ("ran_create", 32, "/s"), ("ran_stat", 34, "/s"), ("ran_del", 36, "/s")]


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def csv_line(stdout):
    return [l for l in stdout.splitlines() if l.startswith("1.98,")][-1].split(",")


def settle():
    """Start every run from the same state: no dirty data from the previous
    run still being written back (a loop device's image is a file on the host
    file system), and no cached data."""
    run(["sync"])
    Path("/proc/sys/vm/drop_caches").write_text("3\n")


def number(text):
    """A CSV figure; None for bonnie++'s '+++++' (under 0.5 s) or an empty field."""
    return None if (not text or text.startswith("+")) else float(text)


def one_run(tool, workdir, opts):
    settle()
    base = [str(FSBENCH), "bonnie"] if tool == "fsbench" else ["bonnie++", "-u", "root"]
    fields = csv_line(run(base + ["-d", workdir, "-m", tool, "-q"] + opts))
    values = {}
    for name, index, _ in FIELDS:
        values[name] = number(fields[index])
        # %CP follows each rate.
        values[name + "_cpu"] = number(fields[index + 1])
    return values


def loop_ext4(size):
    image = tempfile.mktemp(prefix="fsbench-agree-", suffix=".img")
    mount = tempfile.mkdtemp(prefix="fsbench-agree-")
    run(["truncate", "-s", size, image])
    run(["mkfs.ext4", "-q", "-F", image])
    run(["mount", "-o", "loop", image, mount])
    return image, mount


def describe(xs):
    """Mean and min-max; 'k of n' when bonnie++ printed '+++++' in the other
    runs: then its mean is that of its slowest runs alone."""
    runs = len(xs)
    xs = [x for x in xs if x is not None]
    if not xs:
        return None, "+++++ (under 0.5 s)"
    some = "" if len(xs) == runs else f" {len(xs)} of {runs}"
    return statistics.mean(xs), f"{statistics.mean(xs):>10.0f} ({min(xs):.0f}-{max(xs):.0f}){some}"


def permutation_p(a, b):
    """Exact two-sided permutation test of mean(a) == mean(b): the share of
    all splits of the pooled runs whose difference of means is at least the
    observed one. With 3 runs each the smallest possible p is 0.1."""
    pooled = a + b
    observed = abs(statistics.mean(a) - statistics.mean(b))
    splits = extreme = 0
    for chosen in itertools.combinations(range(len(pooled)), len(a)):
        left = [pooled[i] for i in chosen]
        right = [pooled[i] for i in range(len(pooled)) if i not in chosen]
        splits += 1
        if abs(statistics.mean(left) - statistics.mean(right)) >= observed - 1e-9:
            extreme += 1
    return extreme / splits


# The CPU-bound figures and how their CPU cost is shown: (name, unit, scale
# from CPU seconds per unit of the CSV rate).
CPU_COST = [("putc", "ms/MiB", 1024 * 1000), ("getc", "ms/MiB", 1024 * 1000),
            ("seq_create", "us/file", 1e6), ("seq_del", "us/file", 1e6),
            ("ran_create", "us/file", 1e6), ("ran_del", "us/file", 1e6)]


def cpu_cost(runs, name, scale):
    """CPU per unit of work, run by run: %CP / rate (KiB/s or files/s)."""
    return [r[name + "_cpu"] / 100 / r[name] * scale
            for r in runs if r[name] and r[name + "_cpu"] is not None]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", help="file system to test (default: a fresh loop-mounted ext4)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--opts", default="-s 2048 -r 1024 -n 64 -z 1",
                    help="bonnie options given to both tools")
    args = ap.parse_args()
    run(["cargo", "build", "--release", "--quiet", "--manifest-path", str(REPO / "Cargo.toml")])
    image = None
    workdir = args.dir
    if workdir is None:
        image, workdir = loop_ext4("8G")
    try:
        opts = args.opts.split()
        results = {"bonnie++": [], "fsbench": []}
        tools = list(results)
        for round_no in range(args.rounds):
            # ABBA order, so neither tool always runs first.
            for tool in tools if round_no % 2 == 0 else reversed(tools):
                results[tool].append(one_run(tool, workdir, opts))
        print(f"# {workdir}, options: {args.opts}, {args.rounds} rounds each, ABBA order, sync + drop_caches before each")
        print(f"{'test':<11}{'bonnie++ mean (min-max)':>40}{'fsbench mean (min-max)':>34}  ratio  within spread     p")
        for name, _, unit in FIELDS:
            b_vals = [r[name] for r in results["bonnie++"]]
            f_vals = [r[name] for r in results["fsbench"]]
            b_mean, b_text = describe(b_vals)
            f_mean, f_text = describe(f_vals)
            verdict, ratio, p = "-", "    -", "    -"
            if b_mean and f_mean:
                b_had = [x for x in b_vals if x is not None]
                f_had = [x for x in f_vals if x is not None]
                verdict = "yes" if min(b_had) <= f_mean <= max(b_had) else "no"
                ratio = f"{f_mean / b_mean:5.2f}"
                p = f"{permutation_p(b_had, f_had):5.2f}"
            print(f"{name:<11}{b_text:>40}{f_text:>34}  {ratio}  {verdict:<13} {p}   {unit}")
        print("CPU per unit of work (%CP / rate), mean (min-max):")
        for name, unit, scale in CPU_COST:
            cells = []
            for tool in tools:
                xs = cpu_cost(results[tool], name, scale)
                cells.append(f"{tool} {statistics.mean(xs):.1f} ({min(xs):.1f}-{max(xs):.1f})" if xs else f"{tool} -")
            print(f"{name:<11}{unit:<9}" + "   ".join(cells))
    finally:
        if image:
            run(["umount", workdir])
            os.rmdir(workdir)
            os.unlink(image)


if __name__ == "__main__":
    sys.exit(main())

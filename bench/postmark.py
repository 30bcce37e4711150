#!/usr/bin/env python3
"""fsbench's PostMark mode against PostMark 1.53 itself, on one tmpfs, for
the same configuration in both I/O modes: wall time (median of alternating
runs) and peak RSS, printed as ratios with the targets they must meet:

    fsbench wall time / postmark wall time   <= 1.0
    fsbench peak RSS  <= 2 x postmark's + 16 MiB

    sudo python3 bench/postmark.py                  # 20000 files, 200000 transactions
    sudo python3 bench/postmark.py --rounds 5 --dir /lab/ext4

Needs: root (to mount the tmpfs), Debian's postmark and time packages,
cargo. Exits 1 if a target is missed. Machines are noisy: compare the
ratios of one run, not absolute times across machines.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FSBENCH = REPO / "target" / "release" / "fsbench"
POSTMARK = "/usr/bin/postmark"
TIME = "/usr/bin/time"
RSS_SLACK_KIB = 16 * 1024


def config(location, number, transactions, buffering):
    return "\n".join([
        f"set location {location}",
        f"set number {number}",
        f"set transactions {transactions}",
        f"set buffering {buffering}",
        "set report terse",
        "run",
        "quit",
        "",
    ])


def timed(cmd, cwd):
    """Runs cmd under /usr/bin/time; returns (wall seconds, peak RSS KiB)."""
    subprocess.run(["sync"], check=True)
    out = subprocess.run([TIME, "-f", "%e %M"] + cmd, cwd=cwd, check=True,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True)
    wall, rss = out.stderr.strip().splitlines()[-1].split()
    return float(wall), int(rss)


def one_mode(workdir, configs, args, buffering):
    runs = {"postmark": [], "fsbench": []}
    for tool in runs:
        loc = Path(workdir) / f"{tool}-work"
        loc.mkdir(exist_ok=True)
        (Path(configs) / f"{tool}-{buffering}.cfg").write_text(
            config(loc, args.number, args.transactions, buffering))
    commands = {
        "postmark": [POSTMARK, f"postmark-{buffering}.cfg"],
        "fsbench": [str(FSBENCH), "postmark", f"fsbench-{buffering}.cfg"],
    }
    for round_no in range(args.rounds):
        # Alternate who goes first, so drift and warm-up favour neither.
        order = ["postmark", "fsbench"] if round_no % 2 == 0 else ["fsbench", "postmark"]
        for tool in order:
            runs[tool].append(timed(commands[tool], configs))
    for tool in runs:
        (Path(workdir) / f"{tool}-work").rmdir()
    wall = {t: statistics.median(w for w, _ in r) for t, r in runs.items()}
    rss = {t: max(m for _, m in r) for t, r in runs.items()}
    return wall, rss


def report(workdir, args):
    ok = True
    print(f"# {workdir}: set number {args.number}, set transactions {args.transactions}; "
          f"medians of {args.rounds} alternating runs")
    print(f"{'buffering':<10}{'postmark s':>11}{'fsbench s':>10}{'ratio':>7}{'<=1.0':>6}"
          f"{'postmark RSS':>14}{'fsbench RSS':>13}{'limit':>14}{'ok':>4}")
    for buffering in ["true", "false"]:
        with tempfile.TemporaryDirectory(prefix="fsb-bench-pm-cfg-") as configs:
            wall, rss = one_mode(workdir, configs, args, buffering)
        ratio = wall["fsbench"] / wall["postmark"]
        limit = 2 * rss["postmark"] + RSS_SLACK_KIB
        time_ok, rss_ok = ratio <= 1.0, rss["fsbench"] <= limit
        ok = ok and time_ok and rss_ok
        print(f"{buffering:<10}{wall['postmark']:>11.2f}{wall['fsbench']:>10.2f}{ratio:>7.2f}"
              f"{'yes' if time_ok else 'NO':>6}{rss['postmark']:>10} KiB{rss['fsbench']:>9} KiB"
              f"{limit:>10} KiB{'yes' if rss_ok else 'NO':>4}")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", help="file system to test (default: a fresh 2 GiB tmpfs)")
    ap.add_argument("--rounds", type=int, default=3, help="runs per tool and mode (median)")
    ap.add_argument("--number", type=int, default=20000)
    ap.add_argument("--transactions", type=int, default=200000)
    args = ap.parse_args()
    for tool in [POSTMARK, TIME]:
        if not os.path.exists(tool):
            sys.exit(f"{tool} is missing: apt-get install postmark time")
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
    mount = None
    workdir = args.dir
    if workdir is None:
        mount = tempfile.mkdtemp(prefix="fsb-bench-pm-")
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2g", "tmpfs", mount], check=True)
        workdir = mount
    try:
        ok = report(workdir, args)
    finally:
        if mount:
            subprocess.run(["umount", mount], check=True)
            os.rmdir(mount)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Seed 000's sync-log experiment on this machine: netatalk's CNID database
fdatasync()s on every create and delete, and where it lives decides how slow
small-file work is (same disk as the data: copies 2-3x and deletes up to 6x
slower than with the database on tmpfs or another disk).

This script sets up, by itself, the data file system and three places for
fsbench's sync log (`--sync-log`):

    ext4    a loop-mounted ext4 whose image lives on this machine's disk
            (the data; fdatasync on a loop device reaches the image file)
    same    the log on that ext4 itself (`--sync-log target`)
    tmpfs   a tmpfs
    zram    an ext4 on a zram device (another fast disk); if zram cannot be
            had, a second loop ext4 whose image is in RAM, and it says so

then runs PostMark 5000/5000 unbuffered (seed 000's postmark.cfg) and a
tree copy + delete of the photo library (small scale) with the log in each
place, in alternating order per round, and prints per workload the median
time of each placement and its slowdown against the fastest. Expected (seed
000): the same disk slowest, tmpfs fastest.

    sudo python3 bench/synclog.py
    sudo python3 bench/synclog.py --rounds 5 --number 2000 --scale 0.05

Needs root, e2fsprogs, util-linux (losetup, zramctl), cargo. Everything it
mounts and every loop or zram device it sets up is removed at the end, also
after an error or Ctrl-C.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET_DIR = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
FSBENCH = TARGET_DIR / "release" / "fsbench"
IMAGE_DIR = "/var/tmp"  # on the machine's disk, not in RAM


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


class Lab:
    """The mounts and devices of one run; `close` undoes all of them, in
    reverse order, whatever happened."""

    def __init__(self, root):
        self.root = Path(root)
        self.undo = []
        self.notes = []

    def mountpoint(self, name):
        path = self.root / name
        path.mkdir()
        self.undo.append(lambda: path.rmdir())
        return path

    def mount(self, args, name):
        path = self.mountpoint(name)
        run(["mount"] + args + [str(path)])
        self.undo.append(lambda: run(["umount", str(path)]))
        return path

    def loop_ext4(self, name, image_dir, size_mib):
        image = Path(image_dir) / f"fsb-bench-synclog-{name}.img"
        with open(image, "wb") as f:
            f.truncate(size_mib << 20)
        self.undo.append(lambda: image.unlink())
        device = run(["losetup", "--find", "--show", str(image)]).stdout.strip()
        self.undo.append(lambda: run(["losetup", "-d", device]))
        run(["mkfs.ext4", "-q", "-F", device])
        return self.mount([device], name)

    def tmpfs(self, name, size):
        return self.mount(["-t", "tmpfs", "-o", f"size={size}", "tmpfs"], name)

    def zram_ext4(self, name, size_mib):
        """ext4 on a free zram device; None (with a note) when impossible."""
        try:
            if not Path("/sys/class/zram-control").exists():
                run(["modprobe", "zram"])
            before = set(os.listdir("/sys/block"))
            device = run(["zramctl", "--find", "--size", f"{size_mib}M"]).stdout.strip()
        except (subprocess.CalledProcessError, FileNotFoundError) as e:
            self.notes.append(f"zram unavailable ({error_text(e)})")
            return None
        number = device.removeprefix("/dev/zram")
        if f"zram{number}" not in before:
            self.undo.append(lambda: Path("/sys/class/zram-control/hot_remove").write_text(number))
        # Through sysfs: `zramctl --reset` also removes the device, even
        # one that existed before this script.
        self.undo.append(lambda: Path(f"/sys/block/zram{number}/reset").write_text("1"))
        run(["mkfs.ext4", "-q", "-F", device])
        return self.mount([device], name)

    def close(self):
        for step in reversed(self.undo):
            try:
                step()
            except Exception as e:  # keep undoing the rest
                print(f"cleanup step failed: {error_text(e)}", file=sys.stderr)


def error_text(e):
    return getattr(e, "stderr", "") or str(e)


def fsbench(args, json_path):
    """Runs fsbench with --json; returns the first workload result."""
    run([str(FSBENCH)] + args + ["--json", str(json_path)], stdin=subprocess.DEVNULL)
    result = json.loads(Path(json_path).read_text())
    return result["targets"][0]["workloads"][0]


def metric(workload, name):
    return next(m for m in workload["metrics"] if m["name"] == name)


def postmark(data, log, args, scratch):
    config = scratch / "pm.cfg"
    config.write_text(f"set location {data}\nset number {args.number}\n"
                      f"set transactions {args.transactions}\nset buffering false\n"
                      "set report terse\nrun\n")
    workload = fsbench(["postmark", str(config)] + log, scratch / "pm.json")
    # Every create and delete waits for its record: the whole run counts.
    return metric(workload, "create")["elapsed_s"], workload


def tree(data, log, args, scratch):
    workload = fsbench(["tree", str(data), "--dataset", "photos", "--scale", str(args.scale),
                        "--ops", "copy,delete", "-q"] + log, scratch / "tree.json")
    seconds = metric(workload, "copy_s")["value"] + metric(workload, "delete_s")["value"]
    return seconds, workload


def measure(workloads, placements, data, args, scratch):
    """{workload: {placement: [(seconds, result), ...]}}, placements in a
    rotating order per round so drift hits all alike."""
    times = {w: {p: [] for p, _ in placements} for w in workloads}
    for round_no in range(args.rounds):
        shift = round_no % len(placements)
        order = placements[shift:] + placements[:shift]
        for name, workload in workloads.items():
            for placement, log in order:
                times[name][placement].append(workload(data, log, args, scratch))
        print(f"round {round_no + 1}/{args.rounds} done", file=sys.stderr)
    return times


def table(title, runs):
    medians = {p: statistics.median(s for s, _ in r) for p, r in runs.items()}
    fastest = min(medians.values())
    lines = [f"## {title}",
             f"{'sync log on':<16}{'fs':<8}{'seconds':>10}{'records':>9}{'syncs':>8}"
             f"{'sync p50 ms':>13}{'slowdown':>10}"]
    for placement, results in runs.items():
        last = results[-1][1]
        log = last["params"]["sync_log"]
        p50 = statistics.median(
            (metric(r, "sync_log_syncs")["latency"] or {}).get("p50_ns", 0) for _, r in results)
        lines.append(f"{placement:<16}{log['fs_type'] or '?':<8}{medians[placement]:>10.3f}"
                     f"{log['records']:>9}{log['syncs']:>8}{p50 / 1e6:>13.3f}"
                     f"{medians[placement] / fastest:>9.2f}x")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3, help="runs per placement (median)")
    ap.add_argument("--number", type=int, default=5000, help="PostMark's set number")
    ap.add_argument("--transactions", type=int, default=5000, help="PostMark's set transactions")
    ap.add_argument("--scale", type=float, default=0.02, help="photos dataset scale")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root: the script mounts file systems")
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
    lab = Lab(tempfile.mkdtemp(prefix="fsb-bench-synclog-"))
    try:
        data = lab.loop_ext4("ext4", IMAGE_DIR, 2048)
        ram = lab.tmpfs("tmpfs", "256m")
        other = lab.zram_ext4("zram", 512)
        other_name = "ext4 on zram"
        if other is None:
            backing = lab.tmpfs("backing", "600m")
            other = lab.loop_ext4("ram-ext4", backing, 512)
            other_name = "ext4 in RAM"
            lab.notes.append("instead: a loop ext4 on a tmpfs-backed image")
        placements = [("same ext4", ["--sync-log", "target"]),
                      ("tmpfs", ["--sync-log", str(ram)]),
                      (other_name, ["--sync-log", str(other)])]
        workloads = {
            f"PostMark {args.number}/{args.transactions} unbuffered: seconds from first create "
            "to last delete": postmark,
            f"tree photos (scale {args.scale}) copy + delete: seconds": tree,
        }
        with tempfile.TemporaryDirectory(prefix="fsb-bench-synclog-cfg-") as scratch:
            times = measure(workloads, placements, data, args, Path(scratch))
        print(f"# data on ext4 (loop, image in {IMAGE_DIR}); medians of {args.rounds} "
              "alternating rounds; slowdown against the fastest placement")
        for note in lab.notes:
            print(f"# note: {note}")
        for title, runs in times.items():
            print()
            print(table(title, runs))
    finally:
        lab.close()
        lab.root.rmdir()
    return 0


if __name__ == "__main__":
    sys.exit(main())

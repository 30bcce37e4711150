#!/usr/bin/env python3
"""Compare `fsbench io` with fio (psync, and io_uring at queue depth 32)
on the same jobs, in one run on one file system, and print ratios against
issue 4's targets. Runs alternate between the tools and each figure is the
median of the rounds: only the ratios of one run mean anything.

Latency also has a ground truth: bench/iolat.c, a bare loop with a clock
read either side of each pread/pwrite. fio's p99 for 4k random reads on
tmpfs sits well above it (fio's own work lands inside its clat window on
1-2 % of I/Os); fsbench is checked against both.

    sudo python3 bench/io.py                 # its own tmpfs, and an ext4 on a loop device in it
    sudo python3 bench/io.py --rounds 5 --seconds 5
    sudo python3 bench/io.py --uring-dir /lab/ext4   # io_uring comparison on another ext4

Needs: fio (Debian package), e2fsprogs, util-linux (losetup), a C compiler, cargo.
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
FSBENCH = REPO / "target" / "release" / "fsbench"
IOLAT = Path(tempfile.gettempdir()) / "fsbench-iolat"

# name, block size, fio rw, fsbench --read, fsbench --seek, what is compared
PSYNC_JOBS = [
    ("seq-read-1m", "1m", "read", "100", "0", "mib_per_s"),
    ("seq-write-1m", "1m", "write", "0", "0", "mib_per_s"),
    ("rand-read-4k", "4k", "randread", "100", "100", "iops"),
]
# Issue 4's targets: fsbench / fio at least this much.
TARGETS = {"mib_per_s": 0.95, "iops": 0.90}
LATENCY_TOLERANCE = 0.10


def run(cmd, **kw):
    subprocess.run(["sync"], check=True)
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def fio(directory, bs, rw, size, seconds, engine="psync", depth=1, direct=False):
    cmd = ["fio", "--name=job", f"--directory={directory}", f"--size={size}",
           f"--bs={bs}", f"--rw={rw}", f"--ioengine={engine}", f"--iodepth={depth}",
           f"--direct={int(direct)}", "--norandommap", "--randrepeat=0",
           f"--runtime={seconds}", "--time_based", "--output-format=json"]
    job = json.loads(run(cmd).stdout)["jobs"][0]
    side = job["write" if "write" in rw else "read"]
    pct = side["clat_ns"]["percentile"]
    for f in Path(directory).glob("job.*"):
        f.unlink()
    return {"mib_per_s": side["bw_bytes"] / 2**20, "iops": side["iops"],
            "p50_ns": pct["50.000000"], "p99_ns": pct["99.000000"]}


def fsbench(directory, bs, read, seek, size, seconds, extra=()):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        run([str(FSBENCH), "io", directory, "-s", size, "-b", bs, "--read", read,
             "--seek", seek, "--duration", f"{seconds}s", "--warmup", "0", "-q",
             "--json", out.name, *extra])
        result = json.load(open(out.name))
    metrics = {m["name"]: m for m in result["targets"][0]["workloads"][0]["metrics"]}
    lat = metrics["write_resp_ms" if read == "0" else "read_resp_ms"]["latency"]
    return {"mib_per_s": metrics["mib_per_s"]["value"], "iops": metrics["io_rate"]["value"],
            "p50_ns": lat["p50_ns"], "p99_ns": lat["p99_ns"]}


def floor(directory, bs, rw, size, seconds):
    block = 1 << 20 if bs == "1m" else 4096
    mib = int(size.rstrip("g")) * 1024
    out = run([str(IOLAT), f"{directory}/iolat.dat", str(mib), str(block), str(seconds), rw]).stdout
    values = dict(line.split() for line in out.splitlines())
    return {k: float(v) for k, v in values.items()}


def median_of(samples, key):
    return statistics.median(s[key] for s in samples)


def compare(name, measure_fio, measure_fsbench, measure_floor, rounds, key):
    """Rows (job, figure, fio, floor, fsbench, fsbench/fio, fsbench/floor, ok)."""
    runs = {"fio": [], "floor": [], "fsbench": []}
    for _ in range(rounds):
        runs["fio"].append(measure_fio())
        if measure_floor:
            runs["floor"].append(measure_floor())
        runs["fsbench"].append(measure_fsbench())
    rows = []
    for figure in (key, "p50_ns", "p99_ns"):
        fio_v, fsb_v = median_of(runs["fio"], figure), median_of(runs["fsbench"], figure)
        floor_v = median_of(runs["floor"], figure) if runs["floor"] else None
        vs_fio = fsb_v / fio_v
        vs_floor = fsb_v / floor_v if floor_v else None
        if figure == key:
            ok, target = vs_fio >= TARGETS[key], f"vs fio >= {TARGETS[key]}"
        else:
            ok = abs(vs_fio - 1) <= LATENCY_TOLERANCE
            target = f"vs fio 1 ± {LATENCY_TOLERANCE}"
        rows.append((name, figure, fio_v, floor_v, fsb_v, vs_fio, vs_floor, ok, target))
    return rows


def mount_tmpfs():
    mnt = tempfile.mkdtemp(prefix="fsb-bench-")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4g", "tmpfs", mnt], check=True)
    return mnt


def mount_loop_ext4(backing_dir):
    """An ext4 on a loop device whose image lives in `backing_dir`."""
    image = Path(backing_dir) / "ext4.img"
    with open(image, "wb") as f:
        f.truncate(1536 << 20)
    device = run(["losetup", "--find", "--show", str(image)]).stdout.strip()
    run(["mkfs.ext4", "-q", "-F", device])
    mnt = tempfile.mkdtemp(prefix="fsb-bench-ext4-")
    run(["mount", device, mnt])
    return mnt, device


def unmount_loop(mnt, device):
    subprocess.run(["umount", mnt])
    subprocess.run(["losetup", "-d", device])
    os.rmdir(mnt)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", help="file system to test (default: a fresh tmpfs)")
    ap.add_argument("--size", default="1g", help="file size (default 1g)")
    ap.add_argument("--seconds", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--uring-dir", help="ext4 for the io_uring qd 32 O_DIRECT comparison "
                    "(default: one on a loop device in the tmpfs)")
    args = ap.parse_args()
    if os.geteuid() != 0 and not args.dir:
        sys.exit("run as root (to mount a tmpfs), or give --dir")
    run(["cargo", "build", "--release", "--quiet"], cwd=REPO)
    run(["cc", "-O2", "-o", str(IOLAT), str(REPO / "bench" / "iolat.c")])
    mnt = args.dir or mount_tmpfs()
    loop = None
    if not args.uring_dir:
        loop = mount_loop_ext4(mnt)
    uring_dir = args.uring_dir or loop[0]
    rows = []
    try:
        for name, bs, rw, read, seek, key in PSYNC_JOBS:
            rows += compare(
                name,
                lambda: fio(mnt, bs, rw, args.size, args.seconds),
                lambda: fsbench(mnt, bs, read, seek, args.size, args.seconds),
                lambda: floor(mnt, bs, rw, args.size, args.seconds),
                args.rounds, key)
        rows += compare(
            "uring-rand-read-4k-qd32-direct",
            lambda: fio(uring_dir, "4k", "randread", args.size, args.seconds,
                        engine="io_uring", depth=32, direct=True),
            lambda: fsbench(uring_dir, "4k", "100", "100", args.size, args.seconds,
                            ["--engine", "io_uring", "--iodepth", "32", "--direct"]),
            None, args.rounds, "iops")
    finally:
        if loop:
            unmount_loop(*loop)
        if not args.dir:
            subprocess.run(["umount", mnt])
            os.rmdir(mnt)
    print(f"{'job':31} {'figure':10} {'fio':>11} {'floor':>11} {'fsbench':>11} "
          f"{'/fio':>6} {'/floor':>6}  target")
    for name, what, fio_v, floor_v, fsb_v, vs_fio, vs_floor, ok, target in rows:
        floor_text = f"{floor_v:11.1f}" if floor_v else f"{'-':>11}"
        floor_ratio = f"{vs_floor:6.3f}" if vs_floor else f"{'-':>6}"
        print(f"{name:31} {what:10} {fio_v:11.1f} {floor_text} {fsb_v:11.1f} "
              f"{vs_fio:6.3f} {floor_ratio}  {target} {'ok' if ok else 'MISSED'}")
    return 0 if all(r[7] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

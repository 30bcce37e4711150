#!/usr/bin/env python3
"""Does fsbench keep up with fio as threads are added? `fsbench io` and fio
on the same jobs at 1, 2, 4, ... threads up to the machine's CPUs (up to 4 x
that for io_uring), on a tmpfs and on a real disk, printing per thread
count fsbench / fio and each tool's per-thread efficiency.

Jobs (fio: one file shared by all --numjobs, --group_reporting,
--norandommap --randrepeat=0, --ramp_time + --runtime --time_based, and
for sequential reads a slice of the file per job, --offset_increment, so
that no job reads what another has just read; fsbench: `io -s SIZE -j N
--duration --warmup`, its threads share the file and one sequential
stream):

    rand-read-4k             4 KiB random reads, psync (fsbench's sync engine)
    seq-read-1m              1 MiB sequential reads, psync
    uring-rand-read-4k-qd32  4 KiB random reads, io_uring, queue depth 32, O_DIRECT (disk only)

File systems: a fresh tmpfs (RAM), and "disk": a fresh ext4 on a loop
device whose image is in --dir (default /var/tmp, the machine's disk), the
loop device switched to direct I/O so that reads reach the disk and not the
host's page cache of the image; every job there is O_DIRECT. Thread counts,
file sizes and the file systems' sizes come from os.cpu_count(), the free
memory and the free space of --dir, so the same command runs on a 2-, 16-
or 128-core machine.

fio reads one file per file system, laid out once; fsbench cannot be
pointed at an existing file, so it lays out its own (same size, same file
system) for each measurement, outside its timed part.

fio runs its jobs as processes (its default, and the issue's command line);
fsbench's threads share one process, one file table and one open file. So
fio also runs with --thread (column fio-t; --no-fio-thread leaves it out):
fsbench / fio-t compares the tools on the same model, and fio against fio-t
shows what the model alone costs.

Noise (the machines are shared): every round runs every measurement in a
new random order; fsbench / fio is the median of the per-round ratios, with
their spread (min-max) beside it; efficiency is rate at N / (N x rate at 1)
(the smallest count when 1 is not asked), also a median of per-round
values. Efficiency past the CPU count only says how much waiting overlaps.

--burners N runs the rounds twice, quiet and then with N CPU burners
started from this script's session (a busy host), and adds the busy
fsbench / fio (and / fio-t) ratios, median and spread, to each line.

--counts measures instead what does not depend on the core count, per I/O,
at 1 and 2 threads on a tmpfs: user-space instructions (perf stat -e
instructions:u where the machine has hardware counters, else callgrind,
which runs threads one at a time, so contention costs do not show), and,
as proxies for lock traffic, futex calls and all system calls (strace -f
-c). Each figure is the difference between a run of A I/Os and one of B
I/Os divided by B - A, so start-up, lay-out and exit cancel (fsbench:
`--amount` with `--warmup 0`; fio: `--io_size` per job and `--thread`, so
that its jobs are threads of one process as fsbench's are).

    sudo python3 bench/scaling.py                          # all jobs, 3 rounds of 1 s + 3 s
    sudo python3 bench/scaling.py --seconds 1 --rounds 1   # quick
    sudo python3 bench/scaling.py --only rand-read-4k --threads 1,16,64 --rounds 5
    sudo python3 bench/scaling.py --only uring-rand-read-4k-qd32 --dir /data --size 16g
    sudo python3 bench/scaling.py --counts                 # instructions, futex, syscalls per I/O
    sudo python3 bench/scaling.py --only disk --burners 4  # quiet and with 4 CPU burners
    sudo FSBENCH=/path/to/fsbench python3 bench/scaling.py

Needs: root, fio, e2fsprogs, util-linux (losetup); --counts: strace, and
valgrind or perf; a built fsbench (cargo build --release).
"""
import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import namedtuple
from pathlib import Path

from burners import Burners, describe
from mounts import mount_loop_ext4, mount_tmpfs, unmount

REPO = Path(__file__).resolve().parent.parent
MIB = 1 << 20
GIB = 1 << 30

Job = namedtuple("Job", "name bs rw engine depth seek figure filesystems most")
# most: the largest thread count, in CPUs
JOBS = [
    Job("rand-read-4k", "4k", "randread", "psync", 1, "100", "iops", ("tmpfs", "disk"), 1),
    Job("seq-read-1m", "1m", "read", "psync", 1, "0", "mib_per_s", ("tmpfs", "disk"), 1),
    Job("uring-rand-read-4k-qd32", "4k", "randread", "io_uring", 32, "100", "iops", ("disk",), 4),
]
UNITS = {"iops": "IOPS", "mib_per_s": "MiB/s"}
# fsbench's ceiling on -j
MOST_THREADS = 1024
# --counts: (A, B) I/Os of the two runs whose difference is the figure
COUNT_IOS = {"rand-read-4k": (4096, 36864), "seq-read-1m": (512, 8704),
             "uring-rand-read-4k-qd32": (4096, 36864)}


def run(cmd, **kw):
    try:
        return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)
    except subprocess.CalledProcessError as e:
        sys.exit(f"failed ({e.returncode}): {' '.join(map(str, cmd))}\n{e.stderr[-3000:]}")


def progress(text, last=False):
    """A progress line on stderr: rewritten in place on a terminal, else only the last."""
    if sys.stderr.isatty():
        print(f"\r{text}", end="\n" if last else "", file=sys.stderr, flush=True)
    elif last:
        print(text, file=sys.stderr, flush=True)


def parse_size(text):
    m = re.fullmatch(r"(\d+)([kmgt]?)i?b?", text.strip().lower())
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text}")
    return int(m[1]) << {"": 0, "k": 10, "m": 20, "g": 30, "t": 40}[m[2]]


def mib(n):
    return f"{n // MIB}m"


def available_memory():
    for line in open("/proc/meminfo"):
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def scaled(free):
    """min(4 GiB, a quarter of `free`), in whole 64 MiB."""
    return max(64 * MIB, min(4 * GIB, free // 4) // (64 * MIB) * (64 * MIB))


def thread_counts(limit):
    counts, n = [], 1
    while n < limit:
        counts.append(n)
        n *= 2
    return counts + [limit]


def lay_out(path, size):
    """The file fio reads: random bytes (1 MiB of them, repeated), flushed."""
    chunk = os.urandom(MIB)
    with open(path, "wb") as f:
        for _ in range(size // MIB):
            f.write(chunk)
        f.flush()
        os.fsync(f.fileno())


def fio_region(job, size, threads):
    """fio's --size and --offset_increment: a sequential job's N jobs
    each read their own slice, as fsbench's threads, which share one
    sequential stream, read N neighbouring blocks. Left to read the whole
    file each, fio's jobs would all read the same blocks at about the same
    time, and the ones behind would find them in the CPU's cache (or the
    disk's)."""
    if job.seek != "0" or threads == 1:
        return [f"--size={size}"]
    block = parse_size(job.bs)
    slice_ = size // threads // block * block
    return [f"--size={slice_}", f"--offset_increment={slice_}"]


def fio_cmd(job, path, size, threads, direct, extra=()):
    return ["fio", "--name=job", f"--filename={path}", *fio_region(job, size, threads),
            f"--bs={job.bs}", f"--rw={job.rw}", f"--ioengine={job.engine}",
            f"--iodepth={job.depth}", f"--direct={int(direct)}", f"--numjobs={threads}",
            "--group_reporting", "--norandommap", "--randrepeat=0",
            "--output-format=json", *extra]


def fsbench_cmd(o, job, directory, size, threads, direct, extra=()):
    cmd = [str(o.fsbench), "io", directory, "-s", mib(size), "-b", job.bs, "--read", "100",
           "--seek", job.seek, "-j", str(threads), "-q", *extra]
    if job.engine == "io_uring":
        cmd += ["--engine", "io_uring", "--iodepth", str(job.depth)]
    return cmd + (["--direct"] if direct else [])


# ---- scaling -------------------------------------------------------------

def fio_rate(o, job, fs, threads, as_threads=False):
    cmd = fio_cmd(job, fs["file"], fs["size"], threads, fs["direct"],
                  [f"--ramp_time={o.warmup}", f"--runtime={o.seconds}", "--time_based",
                   *(["--thread"] if as_threads else [])])
    subprocess.run(["sync"], check=True)
    side = json.loads(run(cmd).stdout)["jobs"][0]["read"]
    return side["iops"] if job.figure == "iops" else side["bw_bytes"] / MIB


def fsbench_rate(o, job, fs, threads):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run(["sync"], check=True)
        run(fsbench_cmd(o, job, fs["dir"], fs["size"], threads, fs["direct"],
                        ["--duration", f"{o.seconds}s", "--warmup", f"{o.warmup}s",
                         "--json", out.name]))
        result = json.load(open(out.name))
    metrics = {m["name"]: m for m in result["targets"][0]["workloads"][0]["metrics"]}
    return metrics["io_rate" if job.figure == "iops" else "mib_per_s"]["value"]


def plan(o, jobs, filesystems):
    """[(fs, job, threads)] to measure."""
    cpus = os.cpu_count() or 1
    todo = []
    for fs in filesystems:
        for job in jobs:
            if fs in job.filesystems:
                counts = o.threads or thread_counts(min(MOST_THREADS, job.most * cpus))
                todo += [(fs, job, n) for n in counts]
    return todo


def make_filesystems(o, wanted):
    """{name: {dir, file, size, direct, undo, text}} for the file systems asked."""
    made = {}
    try:
        if "tmpfs" in wanted:
            size = o.size or scaled(available_memory())
            # fio's file and fsbench's side by side, and the 5 % fsbench
            # wants free beyond its file
            mnt = mount_tmpfs(mib(2 * size + size // 8 + 64 * MIB))
            made["tmpfs"] = {"dir": mnt, "size": size, "direct": False,
                             "undo": lambda mnt=mnt: unmount(mnt),
                             "text": f"tmpfs, {size // MIB} MiB file"}
        if "disk" in wanted:
            size = o.size or scaled(shutil.disk_usage(o.dir).free)
            # Both files, and room for two deleted ones: ext4 frees a deleted
            # file's blocks only at its next journal commit, and an io_uring
            # run's last reference to its file goes when the kernel has torn
            # its rings down, after the process has exited. The image is
            # sparse: the room costs nothing.
            # A directory of its own: never another run's ext4.img.
            images = tempfile.mkdtemp(prefix="fsb-scaling-", dir=o.dir)
            try:
                mnt, device = mount_loop_ext4(images, (4 * size + 512 * MIB) // MIB)
            except BaseException:
                shutil.rmtree(images)
                raise
            dio = subprocess.run(["losetup", "--direct-io=on", device],
                                 capture_output=True).returncode == 0
            made["disk"] = {"dir": mnt, "size": size, "direct": True,
                            "undo": lambda mnt=mnt, device=device, images=images: (
                                unmount(mnt, device), shutil.rmtree(images)),
                            "text": f"ext4 on {device} (image in {o.dir}, loop direct I/O "
                                    f"{'on' if dio else 'OFF: the host caches the image'}), "
                                    f"{size // MIB} MiB file, O_DIRECT"}
        for fs in made.values():
            fs["file"] = f"{fs['dir']}/fio.dat"
            lay_out(fs["file"], fs["size"])
    except BaseException:
        for fs in made.values():
            fs["undo"]()
        raise
    return made


def tools(o):
    return ["fio", "fsbench"] + (["fio-thread"] if o.fio_thread else [])


def run_rounds(o, todo, filesystems):
    """{(fs, job name, threads, tool): [rate of each round]}, a new random order each round."""
    keys = [(fs, job, n, tool) for fs, job, n in todo for tool in tools(o)]
    results = {(fs, job.name, n, tool): [] for fs, job, n, tool in keys}
    order = random.Random(4)
    for number in range(o.rounds):
        order.shuffle(keys)
        start = time.monotonic()
        for done, (fs, job, n, tool) in enumerate(keys, 1):
            if tool == "fsbench":
                rate = fsbench_rate(o, job, filesystems[fs], n)
            else:
                rate = fio_rate(o, job, filesystems[fs], n, tool == "fio-thread")
            results[fs, job.name, n, tool].append(rate)
            progress(f"round {number + 1}/{o.rounds}: {done}/{len(keys)}")
        progress(f"round {number + 1}/{o.rounds} done ({time.monotonic() - start:.0f} s)",
                 last=True)
    return results


def ratio_text(over, under):
    """Median of the per-round ratios over / under, and their min-max."""
    ratios = [a / b for a, b in zip(over, under) if b]
    if not ratios:
        return f"{'-':>7} {'-':>13}"
    return (f"{statistics.median(ratios):7.3f} "
            f"{min(ratios):6.3f}-{max(ratios):<6.3f}")


def print_scaling(o, todo, results, filesystems, busy=None):
    print(f"# {o.rounds} round(s) of {o.warmup} s warm-up + {o.seconds} s per measurement, "
          f"{os.cpu_count()} CPUs; rates are medians over rounds")
    if busy:
        print(f"# busy: the same rounds again with {describe(o.burners)}")
    for name, fs in filesystems.items():
        print(f"# {name}: {fs['text']}")
    print("# fio: --numjobs processes (fio's default, as in the issue)"
          + ("; fio-t: fio --thread, jobs as threads of one process, as fsbench's are"
             if o.fio_thread else ""))
    print("# fsb/fio: median of the per-round ratios, spread = their min-max; "
          "eff: rate at N / (N x rate at the fewest threads), median over rounds")
    with_t = o.fio_thread
    print(f"{'fs':5} {'job':23} {'unit':5} {'thr':>4} {'fio':>10} "
          + (f"{'fio-t':>10} " if with_t else "")
          + f"{'fsbench':>10} {'fsb/fio':>7} {'spread':>13} "
          + (f"{'fsb/fio-t':>9} {'spread':>13} " if with_t else "")
          + f"{'eff fio':>7} " + (f"{'fio-t':>6} " if with_t else "") + f"{'fsb':>6}"
          + (f" {'busy fsb/fio':>12} {'spread':>13}" if busy else "")
          + (f" {'busy fsb/fio-t':>14} {'spread':>13}" if busy and with_t else ""))
    for fs, job, n in todo:
        base = min(m for f, j, m in todo if f == fs and j == job)
        rates = {tool: results[fs, job.name, n, tool] for tool in tools(o)}
        eff = {}
        for tool, values in rates.items():
            ones = results[fs, job.name, base, tool]
            eff[tool] = statistics.median(r * base / (n * one) if one else 0.0
                                          for r, one in zip(values, ones))
        med = {tool: statistics.median(values) for tool, values in rates.items()}
        line = (f"{fs:5} {job.name:23} {UNITS[job.figure]:5} {n:4} {med['fio']:10.0f} "
                + (f"{med['fio-thread']:10.0f} " if with_t else "")
                + f"{med['fsbench']:10.0f} {ratio_text(rates['fsbench'], rates['fio'])} ")
        if with_t:
            line += f"  {ratio_text(rates['fsbench'], rates['fio-thread'])} "
        line += f"{eff['fio']:7.3f} " + (f"{eff['fio-thread']:6.3f} " if with_t else "")
        line += f"{eff['fsbench']:6.3f}"
        if busy:
            loaded = {tool: busy[fs, job.name, n, tool] for tool in tools(o)}
            line += f"      {ratio_text(loaded['fsbench'], loaded['fio'])}"
            if with_t:
                line += f"        {ratio_text(loaded['fsbench'], loaded['fio-thread'])}"
        print(line)


# ---- counts --------------------------------------------------------------

def perf_counts_instructions():
    """Whether `perf stat -e instructions:u` counts on this machine."""
    if not shutil.which("perf"):
        return False
    r = subprocess.run(["perf", "stat", "-x,", "-e", "instructions:u", "true"],
                       capture_output=True, text=True)
    first = (r.stderr.strip().splitlines() or [""])[-1].split(",")[0]
    return r.returncode == 0 and first.isdigit()


def instructions(cmd, scratch, use_perf):
    if use_perf:
        out = Path(scratch) / "perf.txt"
        run(["perf", "stat", "-x,", "-o", str(out), "-e", "instructions:u", "--", *cmd])
        for line in out.read_text().splitlines():
            if "instructions" in line:
                return int(line.split(",")[0])
        raise RuntimeError(f"no instruction count in {out}")
    proc = subprocess.Popen(["valgrind", "--tool=callgrind",
                             f"--callgrind-out-file={scratch}/cg.%p", *cmd],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = proc.communicate()[1]
    if proc.returncode:
        raise RuntimeError(f"valgrind: {err.strip().splitlines()[-1:]}")
    # The process's own file: a child it forks would inherit its counts.
    out = Path(scratch) / f"cg.{proc.pid}"
    total = next(int(line.split()[1]) for line in out.read_text().splitlines()
                 if line.startswith("totals:"))
    out.unlink()
    return total


def syscalls(cmd, scratch):
    """(futex calls, all calls) of cmd and its threads."""
    out = Path(scratch) / "strace.txt"
    run(["strace", "-f", "-c", "-o", str(out), "--", *cmd])
    futex = total = 0
    for line in out.read_text().splitlines():
        fields = line.split()
        if len(fields) >= 5 and fields[0][0].isdigit():
            if fields[-1] == "futex":
                futex = int(fields[3])
            elif fields[-1] == "total":
                total = int(fields[3])
    return futex, total


def count_cmd(o, tool, job, fs, threads, ios):
    block = parse_size(job.bs)
    if tool == "fio":
        return fio_cmd(job, fs["file"], fs["size"], threads, False,
                       ["--thread", f"--io_size={ios // threads * block}"])
    return fsbench_cmd(o, job, fs["dir"], fs["size"], threads, False,
                       ["--amount", str(ios * block), "--warmup", "0"])


def run_counts(o, jobs):
    use_perf = perf_counts_instructions()
    if not use_perf and not shutil.which("valgrind"):
        sys.exit("--counts: no hardware counters for perf, and no valgrind")
    if not shutil.which("strace"):
        sys.exit("--counts: needs strace")
    size = o.size or 64 * MIB
    counts = o.threads or [1, 2]
    mnt = mount_tmpfs(mib(2 * size + size // 8 + 64 * MIB))
    fs = {"dir": mnt, "file": f"{mnt}/fio.dat", "size": size}
    rows = []
    try:
        lay_out(fs["file"], size)
        with tempfile.TemporaryDirectory(prefix="fsb-counts-") as scratch:
            for job in jobs:
                a, b = COUNT_IOS[job.name]
                for threads in counts:
                    # whole I/Os per fio job
                    a_n, b_n = a // threads * threads, b // threads * threads
                    for tool in ("fio", "fsbench"):
                        figures = []
                        try:
                            for ios in (a_n, b_n):
                                cmd = count_cmd(o, tool, job, fs, threads, ios)
                                figures.append((instructions(cmd, scratch, use_perf),
                                                *syscalls(cmd, scratch)))
                            per_io = [(y - x) / (b_n - a_n) for x, y in zip(*figures)]
                        except RuntimeError as e:
                            per_io = None
                            print(f"{tool} {job.name} -j {threads}: {e}", file=sys.stderr)
                        rows.append((tool, job.name, threads, per_io))
                        progress(f"{len(rows)} of {len(jobs) * len(counts) * 2} counted",
                                 last=len(rows) == len(jobs) * len(counts) * 2)
    finally:
        unmount(mnt)
    print(f"# per I/O on a tmpfs ({size // MIB} MiB file), from the difference between runs "
          f"of A and B I/Os (start-up cancels); instructions: "
          + ("perf stat -e instructions:u" if use_perf else
             "callgrind, user space (it runs threads one at a time: no contention)")
          + "; futex and all system calls: strace -f -c")
    print("# io_uring runs here without O_DIRECT; fio runs with --thread")
    print(f"{'tool':8} {'job':24} {'A':>6} {'B':>6} {'threads':>7} {'instr/IO':>10} "
          f"{'fsb/fio':>7} {'futex/IO':>9} {'syscalls/IO':>11}")
    fio_instr = {}
    for tool, name, threads, per_io in rows:
        a, b = COUNT_IOS[name]
        head = f"{tool:8} {name:24} {a:6} {b:6} {threads:7}"
        if per_io is None:
            print(f"{head} {'failed':>10}")
            continue
        instr, futex, calls = per_io
        if tool == "fio":
            fio_instr[name, threads] = instr
        vs = fio_instr.get((name, threads)) if tool == "fsbench" else None
        print(f"{head} {instr:10.1f} {f'{instr / vs:.3f}' if vs else '':>7} "
              f"{futex:9.4f} {calls:11.4f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=lambda s: sorted({int(n) for n in s.split(",")}),
                    help="thread counts, e.g. 1,2,4 (default: 1, 2, 4, ... up to the CPUs, "
                    "4 x that for io_uring; --counts: 1,2)")
    ap.add_argument("--seconds", type=int, default=3, help="measured seconds (default 3)")
    ap.add_argument("--warmup", type=int, default=1, help="warm-up seconds left out (default 1)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    ap.add_argument("--size", type=parse_size,
                    help="file size (default: min(4 GiB, a quarter of the free memory) on "
                    "the tmpfs, min(4 GiB, a quarter of --dir's free space) on the disk; "
                    "--counts: 64m)")
    ap.add_argument("--only", action="append", metavar="JOB",
                    choices=[j.name for j in JOBS] + ["tmpfs", "disk"],
                    help="only this job, or only this file system (repeatable): "
                    + ", ".join(j.name for j in JOBS) + ", tmpfs, disk")
    ap.add_argument("--dir", default="/var/tmp",
                    help="directory on the disk for the ext4 image (default /var/tmp)")
    ap.add_argument("--fsbench", type=Path,
                    default=Path(os.environ.get("FSBENCH", REPO / "target/release/fsbench")),
                    help="fsbench binary (default: $FSBENCH, else target/release/fsbench)")
    ap.add_argument("--fio-thread", action=argparse.BooleanOptionalAction, default=True,
                    help="also run fio with --thread (its jobs as threads of one process, "
                    "as fsbench's are) and print fsbench / that (default: on)")
    ap.add_argument("--burners", type=int, default=0, metavar="N",
                    help="also run the rounds with N CPU burners (a busy host), started "
                    "from this script's session, and print the busy ratios")
    ap.add_argument("--counts", action="store_true",
                    help="instructions, futex and system calls per I/O at 1 and 2 threads")
    o = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root (it mounts a tmpfs and a loop device)")
    if not o.fsbench.is_file():
        sys.exit(f"no fsbench at {o.fsbench}: cargo build --release, or give --fsbench")
    if not shutil.which("fio"):
        sys.exit("needs fio (apt-get install fio)")
    if o.size is not None and o.size % MIB:
        sys.exit("--size: a whole number of MiB")
    if o.threads and (min(o.threads) < 1 or max(o.threads) > MOST_THREADS):
        sys.exit(f"--threads: from 1 to {MOST_THREADS}")
    only = set(o.only or ())
    jobs = [j for j in JOBS if j.name in only or not only & {j.name for j in JOBS}]
    if o.counts:
        run_counts(o, jobs)
        return 0
    wanted = [f for f in ("tmpfs", "disk") if f in only or not only & {"tmpfs", "disk"}]
    todo = plan(o, jobs, wanted)
    if not todo:
        sys.exit("nothing to run: the io_uring job runs on the disk only")
    filesystems = make_filesystems(o, {fs for fs, _, _ in todo})
    try:
        count = len(tools(o)) * len(todo)
        print(f"{count} measurements per round, about "
              f"{count * (o.warmup + o.seconds + 1) / 60:.0f} min each plus fsbench's "
              "lay-outs", file=sys.stderr, flush=True)
        results = run_rounds(o, todo, filesystems)
        busy = None
        if o.burners:
            with Burners(o.burners):
                busy = run_rounds(o, todo, filesystems)
    finally:
        for fs in filesystems.values():
            fs["undo"]()
    print_scaling(o, todo, results, filesystems, busy)
    return 0


if __name__ == "__main__":
    sys.exit(main())

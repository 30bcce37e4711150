//! `fsbench io --fio JOBFILE`: fio job files run as is on a tmpfs the
//! test mounts (files in `directory=` or the target), with fio's numbers
//! of jobs and bytes; `--lint` prints what the linter finds and runs
//! nothing; bad files get one line naming file:line and key, exit 2, and
//! write nothing; the sentinel survives and SIGINT cleans up; `--fio-json`
//! writes every key the real fio writes for the same file, and fio-plot
//! draws it.
mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{
    Running, Sentinel, TmpfsMount, assert_no_scratch_left, listing, path_arg as arg, read_json,
    run, wait_for_scratch, wait_until,
};

/// A job file outside the mount, with `MNT` replaced by the mount.
fn jobfile(mnt: &TmpfsMount, body: &str) -> tempfile::NamedTempFile {
    common::file_naming_mount(mnt, ".fio", body)
}

/// The repository's example job files.
fn example(name: &str) -> String {
    format!("{}/examples/fio/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// kubestr's four jobs, shortened: the linter flags the missing
/// stonewall and gtod_reduce; all four run, each one result.
const KUBESTR: &str = "\
[global]
randrepeat=0
verify=0
ioengine=libaio
direct=1
gtod_reduce=1
directory=MNT
[read_iops]
bs=4K
iodepth=16
size=8m
readwrite=randread
time_based
runtime=1
[write_iops]
bs=4K
iodepth=16
size=8m
readwrite=randwrite
time_based
runtime=1
[read_bw]
bs=128K
iodepth=16
size=8m
readwrite=randread
time_based
runtime=1
[write_bw]
bs=128k
iodepth=16
size=8m
readwrite=randwrite
time_based
runtime=1
";

#[test]
fn a_kubestr_like_file_runs_four_jobs_and_is_linted() {
    let Some(mnt) = TmpfsMount::new("128m") else {
        return;
    };
    let sentinel = Sentinel::plant(mnt.path());
    let jobs = jobfile(&mnt, KUBESTR);
    let before = listing(mnt.path());
    let lint = run(&["io", "--fio", arg(&jobs), "--lint"]);
    lint.assert_success().assert_no_panic();
    let lines: Vec<&str> = lint.stdout.lines().collect();
    assert_eq!(
        lines.iter().filter(|l| l.contains("] stonewall: ")).count(),
        3,
        "{lint}"
    );
    // The [global] gtod_reduce=1 is told once, naming the four jobs.
    let told = |key: &str| lines.iter().filter(|l| l.contains(key)).count();
    assert_eq!(told("] gtod_reduce: "), 1, "{lint}");
    assert!(
        lines[0].contains(".fio:6: [read_iops, write_iops, read_bw, write_bw] gtod_reduce:"),
        "{lint}"
    );
    assert_eq!(listing(mnt.path()), before, "--lint writes nothing");

    let json = std::env::temp_dir().join(format!("fsb-fio-{}.json", std::process::id()));
    let out = run(&["io", "--fio", arg(&jobs), "--json", json.to_str().unwrap()]);
    out.assert_success().assert_no_panic();
    assert!(out.stderr.contains("fio lint: "), "{out}");
    let result = read_json(&json);
    std::fs::remove_file(&json).unwrap();
    let target = &result["targets"][0];
    assert_eq!(target["path"], mnt.arg(), "directory= is the target");
    let jobs = target["workloads"].as_array().unwrap();
    let labels: Vec<&str> = jobs.iter().map(|j| j["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["read_iops", "write_iops", "read_bw", "write_bw"]);
    let notes = jobs[1]["notes"].to_string();
    assert!(
        notes.contains("fio lint:") && notes.contains("libaio ran on io_uring"),
        "{notes}"
    );
    sentinel.assert_intact();
    assert_no_scratch_left(mnt.path());
}

/// Bytes the job moved in its measured part: the samples of its MiB/s.
fn bytes_moved(job: &serde_json::Value) -> u64 {
    let metrics = job["metrics"].as_array().unwrap();
    let mib_per_s = metrics.iter().find(|m| m["name"] == "mib_per_s").unwrap();
    mib_per_s["samples"].as_u64().unwrap()
}

/// Size-bound jobs, `numjobs` clones on their own files or a shared one,
/// and `group_reporting`.
const CLONES: &str = "\
[global]
directory=MNT
stonewall
size=4m
[w]
rw=write
bs=64k
fdatasync=8
loops=2
[r]
rw=read
bs=64k
numjobs=2
filename=w.0.0
group_reporting
[c]
rw=randwrite
bs=64k
numjobs=2
[mix]
rw=randrw
bssplit=4k/50:64k/
rwmixread=70
norandommap
";

/// fsbench's fio JSON of `jobs` (`fsbench io --fio JOBS --fio-json`,
/// which must succeed), and what it printed.
fn fsbench_fio_json(jobs: &tempfile::NamedTempFile) -> (serde_json::Value, common::Output) {
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("fsbench-fio.json");
    let out = run(&[
        "io",
        "--fio",
        arg(jobs),
        "--fio-json",
        json.to_str().unwrap(),
    ]);
    out.assert_success().assert_no_panic();
    (read_json(&json), out)
}

/// Per job of fio's JSON, its name and `figures` of it.
fn per_job<T>(
    json: &serde_json::Value,
    figures: impl Fn(&serde_json::Value) -> T,
) -> Vec<(String, T)> {
    let jobs = json["jobs"].as_array().unwrap();
    let entry =
        |job: &serde_json::Value| (job["jobname"].as_str().unwrap().to_string(), figures(job));
    jobs.iter().map(entry).collect()
}

/// The figure `key` of direction `dir` ("read", "write") of a fio job.
fn count(job: &serde_json::Value, dir: &str, key: &str) -> u64 {
    job[dir][key].as_u64().unwrap()
}

/// The jobs of fio's JSON: name, then group, bytes read and written.
fn fio_jobs(json: &serde_json::Value) -> Vec<(String, [u64; 3])> {
    per_job(json, |job| {
        [
            job["groupid"].as_u64().unwrap(),
            count(job, "read", "io_bytes"),
            count(job, "write", "io_bytes"),
        ]
    })
}

/// fio's numbers of jobs and bytes: size × loops per clone; numjobs
/// clones, each on its own file (`c.0.0`, `c.1.0`) unless filename= names
/// one, each its own result unless group_reporting adds them up into one;
/// the --fio-json entries are fio's own for the same file.
#[test]
fn size_bound_jobs_and_clones_move_what_fio_moves() {
    let Some(mnt) = TmpfsMount::new("128m") else {
        return;
    };
    let jobs = jobfile(&mnt, CLONES);
    let fio = real_fio(&mnt, &jobs);
    let out_dir = tempfile::tempdir().unwrap();
    let (json, fio_json) = (
        out_dir.path().join("r.json"),
        out_dir.path().join("fio.json"),
    );
    let out = run(&[
        "io",
        "--fio",
        arg(&jobs),
        mnt.path().to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "--fio-json",
        fio_json.to_str().unwrap(),
    ]);
    out.assert_success().assert_no_panic();
    let result = read_json(&json);
    let jobs = result["targets"][0]["workloads"].as_array().unwrap();
    let labels: Vec<&str> = jobs.iter().map(|j| j["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["w", "r", "c clone=0", "c clone=1", "mix"]);
    let param = |job: usize, key: &str| jobs[job]["params"]["job"][key].clone();
    let file = |job: usize| jobs[job]["params"]["file"]["name"].clone();
    assert_eq!(param(0, "stop")["amount"], 8u64 << 20);
    assert_eq!(
        param(1, "clone_files"),
        serde_json::json!([0, 0]),
        "both on w.0.0"
    );
    assert_eq!((param(1, "threads"), file(1)), (1.into(), "w.0.0".into()));
    assert_eq!(param(1, "stop")["amount"], 4u64 << 20, "per clone");
    assert_eq!(
        (file(2), file(3), file(4)),
        ("c.0.0".into(), "c.1.0".into(), "mix.0.0".into())
    );
    // The mix's last I/O (random sizes, no random map) may run past size
    // by up to its largest block, as fio's.
    let moved = [8u64 << 20, 8 << 20, 4 << 20, 4 << 20, 4 << 20];
    let past = [0, 0, 0, 0, 64 << 10];
    for ((job, bytes), past) in jobs.iter().zip(moved).zip(past) {
        let moved = bytes_moved(job);
        assert!(
            (bytes..=bytes + past).contains(&moved),
            "{moved} != {bytes}: {job}"
        );
    }
    assert!(out.stdout.contains("r: (groupid=1, jobs=2)"), "{out}");
    assert_eq!(
        out.stdout.matches("c: (groupid=2, jobs=1)").count(),
        2,
        "{out}"
    );
    let (ours, theirs) = (fio_jobs(&read_json(&fio_json)), fio_jobs(&fio));
    assert_eq!(ours.len(), theirs.len(), "{ours:?}\n{theirs:?}");
    for (mine, fio) in ours.iter().zip(&theirs) {
        // The same job in the same group, and size-bound, the same bytes
        // each way (fio's bssplit mix without the random map ends past
        // size by its last block, as fsbench's).
        assert_eq!(mine, fio, "{ours:?}\n{theirs:?}");
    }
    assert_no_scratch_left(mnt.path());
}

/// Jobs whose I/O fio draws at random: the issue's bssplit mix with the
/// random map (fio visits each block once a pass and cuts an I/O where a
/// done block begins: 6448 I/Os, not the 3849 of independent draws), and
/// without it; sequential mixes; loops; clones (fio seeds each clone from
/// its number); io_uring; group_reporting.
const DRAWN: &str = "\
[global]
directory=MNT
size=32m
stonewall
[mix]
rw=randrw
rwmixread=70
bssplit=4k/50:64k/50
size=128m
[nomap]
rw=randrw
rwmixread=70
bssplit=4k/50:64k/50
norandommap
[seqmix]
rw=rw
rwmixread=60
bssplit=4k/30:16k/70
[loops]
rw=randread
bs=8k
loops=2
[clones]
rw=randwrite
bssplit=4k/10:8k/20:64k/
numjobs=2
[uring]
rw=randrw
ioengine=io_uring
iodepth=8
bssplit=4k/50:32k/50
[grouped]
rw=randrw
bssplit=4k/50:32k/50
numjobs=3
group_reporting
";

/// Reads, writes and bytes each way of fio's JSON's jobs.
fn ios(json: &serde_json::Value) -> Vec<(String, [u64; 4])> {
    per_job(json, |job| {
        [
            count(job, "read", "total_ios"),
            count(job, "write", "total_ios"),
            count(job, "read", "io_bytes"),
            count(job, "write", "io_bytes"),
        ]
    })
}

/// Every job does fio's I/Os: the same reads and writes, and the same
/// bytes each way, as the real fio for the same file (fio's draws, its
/// seeds and its random map).
#[test]
fn random_jobs_do_fio_s_ios() {
    let Some(mnt) = TmpfsMount::new("512m") else {
        return;
    };
    let jobs = jobfile(&mnt, DRAWN);
    let fio = real_fio(&mnt, &jobs);
    let sentinel = Sentinel::plant(mnt.path());
    let (ours, theirs) = (ios(&fsbench_fio_json(&jobs).0), ios(&fio));
    assert_eq!(ours, theirs);
    assert_eq!(ours[0].1[0] + ours[0].1[1], 6448, "the issue's figure");
    sentinel.assert_intact();
    assert_no_scratch_left(mnt.path());
}

/// etcd's disk check: 2300-byte buffered writes, each followed by
/// fdatasync (shortened to 2 MiB): fsbench writes the blocks fio writes.
#[test]
fn the_etcd_check_writes_what_fio_writes() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let jobs = jobfile(
        &mnt,
        "[etcd]\ndirectory=MNT\nrw=write\nioengine=sync\nfdatasync=1\nbs=2300\nsize=2m\n",
    );
    let fio = real_fio(&mnt, &jobs);
    let sentinel = Sentinel::plant(mnt.path());
    let (ours, out) = fsbench_fio_json(&jobs);
    let write = |json: &serde_json::Value, key: &str| json["jobs"][0]["write"][key].as_u64();
    // 2 MiB of 2300-byte blocks: 911 whole ones, as fio leaves the rest.
    assert_eq!(write(&fio, "total_ios"), Some(911), "{fio:#}");
    for key in ["total_ios", "io_bytes"] {
        assert_eq!(write(&ours, key), write(&fio, key), "{key}: {out}");
    }
    // Every write was followed by an fdatasync, timed on its own.
    let syncs = |json: &serde_json::Value| json["jobs"][0]["sync"]["lat_ns"]["N"].as_u64();
    assert_eq!(syncs(&ours), syncs(&fio), "{out}");
    assert!(out.stdout.contains("    sync percentiles ("), "{out}");
    sentinel.assert_intact();
    assert_no_scratch_left(mnt.path());
}

/// startdelay: the second job of a group starts 2 s after the first, and
/// the wait is not in its measured time.
#[test]
fn startdelay_starts_a_job_later_and_is_not_measured() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let jobs = jobfile(
        &mnt,
        "[global]\ndirectory=MNT\nsize=4m\nrw=read\ntime_based\nruntime=1\n[first]\n[late]\nstartdelay=2\n",
    );
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("r.json");
    let started = std::time::Instant::now();
    let out = run(&["io", "--fio", arg(&jobs), "--json", json.to_str().unwrap()]);
    let wall = started.elapsed().as_secs_f64();
    out.assert_success().assert_no_panic();
    assert!(
        !out.stderr.contains("startdelay"),
        "applied, not noted: {out}"
    );
    let result = read_json(&json);
    let workloads = result["targets"][0]["workloads"].as_array().unwrap();
    let elapsed = |i: usize| {
        let metrics = workloads[i]["metrics"].as_array().unwrap();
        metrics[0]["elapsed_s"].as_f64().unwrap()
    };
    // The late job waited 2 s and then ran its 1 s: the run took both.
    assert!(wall >= 2.0 + elapsed(1), "{wall} s: {out}");
    // If the wait were measured, the late job's time would pass 2 s.
    assert!(elapsed(1) < 2.0, "{}: {out}", elapsed(1));
    assert!(elapsed(0) < 2.0, "{}: {out}", elapsed(0));
    assert_no_scratch_left(mnt.path());
}

/// After the run, the linter says what the device counters saw: a
/// buffered read of a file the page cache holds never reached the disk.
#[test]
fn the_linter_tells_what_the_counters_measured() {
    let Some(fs) = common::LoopFs::new(&["mkfs.ext4", "-q"], "defaults", 128) else {
        return;
    };
    let sentinel = Sentinel::plant(fs.path());
    let dir = tempfile::tempdir().unwrap();
    let jobs = dir.path().join("cached.fio");
    std::fs::write(
        &jobs,
        "[cached]\nrw=read\nbs=1m\nsize=16m\ntime_based\nramp_time=1\nruntime=1\n",
    )
    .unwrap();
    let out = run(&["io", "--fio", jobs.to_str().unwrap(), &fs.arg()]);
    out.assert_success().assert_no_panic();
    let measured: Vec<&str> = (out.stderr.lines())
        .filter(|l| l.contains("fio lint (measured): "))
        .collect();
    assert_eq!(measured.len(), 1, "{out}");
    assert!(
        measured[0].contains("cached.fio:1: [cached] direct: ")
            && measured[0].contains("served from the page cache: ")
            && measured[0].contains("instead: direct=1"),
        "{out}"
    );
    sentinel.assert_intact();
    assert_no_scratch_left(fs.path());
}

#[test]
fn the_examples_lint_and_the_include_set_runs() {
    let Some(mnt) = TmpfsMount::new("128m") else {
        return;
    };
    for name in ["kubestr.fio", "bssplit.fio", "etcd.fio"] {
        run(&["io", "--fio", &example(name), "--lint"]).assert_success();
    }
    let out = run_with_env(
        &["io", "--fio", &example("include-set.fio"), &mnt.arg()],
        "4m",
    );
    out.assert_success().assert_no_panic();
    // fio's report: seq-write, then rand-read's numjobs=4 clones.
    assert_eq!(out.stdout.matches("(groupid=").count(), 5, "{out}");
    assert_eq!(
        out.stdout.matches("rand-read: (groupid=1, jobs=1)").count(),
        4,
        "{out}"
    );
    let unset = run(&["io", "--fio", &example("include-set.fio"), "--lint"]);
    unset.assert_error(2, &["common.fio:5: ${FIO_SIZE} is not set"]);
    assert_no_scratch_left(mnt.path());
}

/// `fsbench args` with FIO_SIZE set to `size`.
fn run_with_env(args: &[&str], size: &str) -> common::Output {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_fsbench"));
    command.args(args).env("FIO_SIZE", size);
    Running::spawn_command(&mut command, args.join(" ")).wait()
}

#[test]
fn bad_job_files_name_file_line_and_key_and_write_nothing() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let cases = [
        ("[j]\nsize=1m\nrw=read:4k\n", ":3: rw: 'read:4k'"),
        (
            "[j]\nsize=1m\nioengine=posixaio\n",
            ":3: ioengine: 'posixaio'",
        ),
        (
            "[j]\nsize=1m\nzonemode=zbd\n",
            ":3: zonemode: not a fio option",
        ),
        ("[j]\nrw=write\n", "size= is needed"),
        ("size=1m\n", ":1: 'size=1m' comes before any [section]"),
        (
            "[j]\nsize=${FSBENCH_SURELY_UNSET}\n",
            ":2: ${FSBENCH_SURELY_UNSET} is not set",
        ),
        (
            "[j]\nsize=1m\nbs=2300\ndirect=1\n",
            ":3: bs: block size 2300 must be a positive multiple of 512 bytes with direct=1",
        ),
        (
            "[j]\nsize=1m\nnumjobs=4000000000\n",
            ":3: numjobs: 4000000000 threads: use 1 to 1024",
        ),
    ];
    for (body, needle) in cases {
        let jobs = jobfile(&mnt, body);
        let out = run(&["io", "--fio", arg(&jobs), &mnt.arg()]);
        out.assert_error(2, &[needle]);
        assert_eq!(std::fs::read_dir(mnt.path()).unwrap().count(), 0, "{out}");
    }
    run(&["io", "--fio", "/nonexistent/jobs.fio"]).assert_error(2, &["cannot read job file"]);
    run(&["io", "--fio", "/dev/zero"]).assert_error(2, &["not a regular file"]);
    run(&["io", "--lint"]).assert_code(2).assert_no_panic();
    run(&["io", "--fio", "x.fio", "-b", "8k"])
        .assert_code(2)
        .assert_no_panic();
}

#[test]
fn sigint_mid_job_file_cleans_up() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let sentinel = Sentinel::plant(mnt.path());
    let jobs = jobfile(
        &mnt,
        "[long]\nsize=16m\nrw=randrw\ntime_based\nruntime=60\n",
    );
    let mut fsbench = Running::spawn(&["io", "--fio", arg(&jobs), &mnt.arg()]);
    let scratch = wait_for_scratch(mnt.path(), &mut fsbench);
    wait_until(common::STARTUP_TIMEOUT, "the laid-out file", || {
        assert!(fsbench.is_running(), "the run ended too early");
        std::fs::metadata(scratch.join("long.0.0")).is_ok_and(|m| m.len() == 16 << 20)
    });
    std::thread::sleep(Duration::from_millis(300));
    fsbench.signal(libc::SIGINT);
    let out = fsbench.wait();
    out.assert_code(130).assert_no_panic();
    assert!(out.stderr.contains("scratch data removed"), "{out}");
    sentinel.assert_intact();
    assert_no_scratch_left(mnt.path());
}

/// Four jobs one after another: size-bound sequential writes and random
/// reads, a time-based 70/30 mix, io_uring at depth 8.
const FOUR_JOBS: &str = "\
[global]
directory=MNT
size=8m
bs=4k
stonewall
[w]
rw=write
[r]
rw=randread
[m]
rw=randrw
rwmixread=70
time_based
runtime=2
[u]
ioengine=io_uring
iodepth=8
rw=randread
time_based
runtime=1
";

/// Every key path of `value` (`jobs.2.read.clat_ns.percentile.99.000000`)
/// with its JSON type, fio's integers told from its decimals.
fn shape(value: &serde_json::Value, path: &str, into: &mut BTreeMap<String, &'static str>) {
    use serde_json::Value::*;
    let kind = match value {
        Null => "null",
        Bool(_) => "bool",
        Number(n) if n.is_f64() => "float",
        Number(_) => "integer",
        String(_) => "string",
        Array(items) => {
            for (index, item) in items.iter().enumerate() {
                shape(item, &format!("{path}{index}."), into);
            }
            "array"
        }
        Object(map) => {
            for (key, item) in map {
                shape(item, &format!("{path}{key}."), into);
            }
            "object"
        }
    };
    into.insert(path.trim_end_matches('.').to_string(), kind);
}

fn shape_of(value: &serde_json::Value) -> BTreeMap<String, &'static str> {
    let mut paths = BTreeMap::new();
    shape(value, "", &mut paths);
    paths
}

/// fio's JSON of `jobs` (run by the real fio on the mount), its files
/// removed after it.
fn real_fio(mnt: &TmpfsMount, jobs: &tempfile::NamedTempFile) -> serde_json::Value {
    let out = mnt.join("fio.json");
    // fio saves a verify job's state in its working directory: the mount,
    // never the checkout.
    let status = std::process::Command::new(common::require_tool("fio"))
        .current_dir(mnt.path())
        .args(["--output-format=json", "--output"])
        .arg(&out)
        .arg(jobs.path())
        .status()
        .unwrap();
    assert!(status.success(), "fio failed: {status}");
    let json = read_json(&out);
    for entry in std::fs::read_dir(mnt.path()).unwrap() {
        std::fs::remove_file(entry.unwrap().path()).unwrap();
    }
    json
}

fn close(a: f64, b: f64, within: f64) -> bool {
    (a - b).abs() <= within * a.abs().max(b.abs()).max(1.0)
}

/// The figures of one read or write block agree with each other as fio's
/// do: bw_bytes = io_bytes / runtime, bw in KiB/s, iops × bs = bw_bytes,
/// N = total_ios, percentiles rising from min.
fn assert_consistent(block: &serde_json::Value, bs: f64, what: &str) {
    let f = |key: &str| {
        block[key]
            .as_f64()
            .unwrap_or_else(|| panic!("{what}.{key}"))
    };
    let ios = f("total_ios");
    if ios == 0.0 {
        assert_eq!(block["clat_ns"]["N"], 0, "{what}");
        return;
    }
    let seconds = f("runtime") / 1000.0;
    assert!(
        close(f("bw_bytes"), f("io_bytes") / seconds, 0.01),
        "{what}: {block}"
    );
    assert!(
        (f("bw") - f("bw_bytes") / 1024.0).abs() <= 1.0,
        "{what}: {block}"
    );
    assert!(
        close(f("iops") * bs, f("bw_bytes"), 0.01),
        "{what}: {block}"
    );
    assert_eq!(f("io_kbytes"), (f("io_bytes") / 1024.0).floor(), "{what}");
    assert_eq!(f("io_bytes"), ios * bs, "{what}");
    for latency in ["clat_ns", "lat_ns"] {
        assert_eq!(block[latency]["N"].as_f64(), Some(ios), "{what}.{latency}");
        let l = |key: &str| block[latency][key].as_f64().unwrap();
        assert!(
            l("min") <= l("mean") && l("mean") <= l("max"),
            "{what}: {block}"
        );
    }
    let mut percentiles: Vec<(f64, f64)> = block["clat_ns"]["percentile"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(p, ns)| (p.parse().unwrap(), ns.as_f64().unwrap()))
        .collect();
    percentiles.sort_by(|a, b| a.0.total_cmp(&b.0));
    let values: Vec<f64> = percentiles.iter().map(|&(_, ns)| ns).collect();
    assert!(
        values.windows(2).all(|w| w[0] <= w[1]),
        "{what}: {values:?}"
    );
    assert!(
        block["clat_ns"]["min"].as_f64().unwrap() <= values[0],
        "{what}"
    );
    assert!(
        f("bw_min") <= f("bw_mean") + 1.0 && f("bw_mean") <= f("bw_max") + 1.0,
        "{what}"
    );
}

/// `--fio-json` writes every key fio writes for the same job file, with
/// the same JSON type, the same jobs, groups and options, the same bytes
/// for size-bound jobs and the same read share for a mix; its figures
/// agree with each other as fio's do.
#[test]
fn fio_json_has_fio_s_keys_types_and_consistent_figures() {
    let Some(mnt) = TmpfsMount::new("128m") else {
        return;
    };
    let jobs = jobfile(&mnt, FOUR_JOBS);
    let fio = real_fio(&mnt, &jobs);
    let (ours, out) = fsbench_fio_json(&jobs);

    let (theirs, mine) = (shape_of(&fio), shape_of(&ours));
    let missing: Vec<String> = theirs
        .iter()
        .filter(|(path, kind)| mine.get(*path) != Some(kind))
        .map(|(path, kind)| format!("{path}: fio {kind}, fsbench {:?}", mine.get(path)))
        .collect();
    assert!(missing.is_empty(), "{}", missing.join("\n"));
    assert!(
        ours["fio version"]
            .as_str()
            .unwrap()
            .starts_with("fsbench-")
    );
    assert_eq!(ours["global options"], fio["global options"]);

    let (fio_jobs, our_jobs) = (
        fio["jobs"].as_array().unwrap(),
        ours["jobs"].as_array().unwrap(),
    );
    assert_eq!(our_jobs.len(), 4);
    for (theirs, mine) in fio_jobs.iter().zip(our_jobs) {
        let name = mine["jobname"].as_str().unwrap();
        for key in ["jobname", "groupid", "job options"] {
            assert_eq!(mine[key], theirs[key], "{name}.{key}");
        }
        for dir in ["read", "write"] {
            assert_consistent(&mine[dir], 4096.0, &format!("fsbench {name}.{dir}"));
            assert_consistent(&theirs[dir], 4096.0, &format!("fio {name}.{dir}"));
        }
    }
    let bytes = |jobs: &[serde_json::Value], job: usize, dir: &str| {
        jobs[job][dir]["io_bytes"].as_f64().unwrap()
    };
    for (job, dir) in [(0, "write"), (1, "read")] {
        assert_eq!(
            bytes(our_jobs, job, dir),
            bytes(fio_jobs, job, dir),
            "job {job}"
        );
    }
    let read_share = |jobs: &[serde_json::Value]| {
        bytes(jobs, 2, "read") / (bytes(jobs, 2, "read") + bytes(jobs, 2, "write"))
    };
    assert!(
        close(read_share(our_jobs), 0.7, 0.03),
        "{}",
        read_share(our_jobs)
    );
    assert!(
        close(read_share(fio_jobs), 0.7, 0.03),
        "{}",
        read_share(fio_jobs)
    );
    let runtime = our_jobs[2]["read"]["runtime"].as_f64().unwrap();
    assert!(close(runtime, 2000.0, 0.1), "{runtime}");
    assert!(
        ours.get("disk_util").is_none(),
        "tmpfs has no devices, as in fio"
    );
    // The terminal report is fio's, with the JSON's figures.
    for (name, group) in [("w", 0), ("r", 1), ("m", 2), ("u", 3)] {
        let header = format!("{name}: (groupid={group}, jobs=1): err= 0: pid=");
        assert!(out.stdout.contains(&header), "{header}\n{out}");
        let status = format!("Run status group {group} (all jobs):");
        assert!(out.stdout.contains(&status), "{status}\n{out}");
    }
    let runtime = &our_jobs[0]["write"]["runtime"];
    let write_status = format!("io=8192KiB (8389kB), run={runtime}-{runtime}msec");
    assert!(out.stdout.contains(&write_status), "{write_status}\n{out}");
    for line in [
        "  write: IOPS=",
        "  read: IOPS=",
        "    clat percentiles (",
        "  cpu          : usr=",
    ] {
        assert!(out.stdout.contains(line), "{line}\n{out}");
    }
    assert_no_scratch_left(mnt.path());
}

/// The keys of the first `"percentile"` map of a JSON text, in the
/// order written.
fn percentile_keys_as_written(text: &str) -> Vec<f64> {
    let start = text.find("\"percentile\"").expect("a percentile map");
    let map = &text[start..start + text[start..].find('}').unwrap()];
    let quoted = map.split('"').skip(3).step_by(2);
    quoted.map(|key| key.parse().unwrap()).collect()
}

/// fio's names, as the real fio writes them: a `${VAR}` in a section's
/// name stays as written, every option is under fio's name (`readwrite`
/// is `rw`, `blocksize` `bs`...), no `global options` without a
/// `[global]`, and the percentiles in numeric order.
#[test]
fn names_options_and_key_order_are_fio_s() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let jobs = jobfile(
        &mnt,
        "[job-${FSBENCH_RWMODE}]\ndirectory=MNT\nreadwrite=randread\nblocksize=4k\nsize=1m\n\
         time_based\ntimeout=1\nnr_files=1\n",
    );
    let fio = real_fio(&mnt, &jobs);
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("fsbench-fio.json");
    let args = [
        "io",
        "--fio",
        arg(&jobs),
        "-q",
        "--fio-json",
        json.to_str().unwrap(),
    ];
    run(&args).assert_success().assert_no_panic();
    let text = std::fs::read_to_string(&json).unwrap();
    let ours: serde_json::Value = serde_json::from_str(&text).unwrap();
    let (mine, theirs) = (&ours["jobs"][0], &fio["jobs"][0]);
    assert_eq!(mine["jobname"], "job-${FSBENCH_RWMODE}");
    assert_eq!(mine["jobname"], theirs["jobname"]);
    assert_eq!(mine["job options"]["rw"], "randread");
    assert_eq!(mine["job options"], theirs["job options"]);
    assert!(fio.get("global options").is_none() && ours.get("global options").is_none());
    let written = percentile_keys_as_written(&text);
    let mut fio_keys: Vec<f64> = theirs["read"]["clat_ns"]["percentile"]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.parse().unwrap())
        .collect();
    fio_keys.sort_by(f64::total_cmp);
    assert_eq!(written, fio_keys, "{text}");
    assert_no_scratch_left(mnt.path());
}

#[test]
fn fio_json_refuses_what_it_cannot_write_in_one_line() {
    let Some(mnt) = TmpfsMount::new("16m") else {
        return;
    };
    let jobs = jobfile(&mnt, "[j]\nsize=1m\n");
    let cases: [(&[&str], &str); 5] = [
        (
            &["io", "/tmp", "--fio-json", "x.json"],
            "give --fio JOBFILE",
        ),
        (
            &[
                "io",
                "--fio",
                arg(&jobs),
                "--fio-json",
                "/nonexistent/x.json",
            ],
            "cannot write in /nonexistent",
        ),
        (
            &["io", "--fio", arg(&jobs), "--fio-json", "/tmp"],
            "is a directory",
        ),
        (
            &["io", "--fio", arg(&jobs), "--fio-json", "x.json", "--lint"],
            "--lint runs nothing",
        ),
        (
            &["io", "--fio", arg(&jobs), "--fio-json", "x.json", "-r", "2"],
            "leave out --repeat",
        ),
    ];
    for (args, needle) in cases {
        run(args).assert_error(2, &["--fio-json", needle]);
    }
    assert_eq!(std::fs::read_dir(mnt.path()).unwrap().count(), 0);
}

/// kubestr's default job file (pkg/fio/fio_jobs.go), shortened, with the
/// `numjobs` fio-plot needs of every file (fio's own JSON of kubestr's
/// file, which has none, is not drawn either): `readwrite=` is fio's `rw`,
/// which fio-plot looks for.
const KUBESTR_DEFAULT: &str = "\
[global]
randrepeat=0
verify=0
ioengine=libaio
direct=1
gtod_reduce=1
numjobs=1
directory=MNT
[job1]
name=read_iops
bs=4K
iodepth=64
size=8m
readwrite=randread
time_based
ramp_time=1s
runtime=1s
";

/// fio-plot (PyPI), a real reader of fio's JSON, draws fsbench's of
/// kubestr's file: its IOPS/latency bars and its latency histogram.
/// scripts/test.sh installs it and names it in FSBENCH_FIO_PLOT; without
/// it the test says so and skips.
#[test]
fn fio_plot_draws_fsbench_s_json() {
    let fio_plot = std::env::var_os("FSBENCH_FIO_PLOT").map(std::path::PathBuf::from);
    let Some(fio_plot) = fio_plot.filter(|p| p.is_file()) else {
        eprintln!("skipped: FSBENCH_FIO_PLOT does not name fio-plot (scripts/test.sh installs it)");
        return;
    };
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let jobs = jobfile(&mnt, KUBESTR_DEFAULT);
    let results = tempfile::tempdir().unwrap();
    let json = results.path().join("fsbench.json");
    run(&[
        "io",
        "--fio",
        arg(&jobs),
        "-q",
        "--fio-json",
        json.to_str().unwrap(),
    ])
    .assert_success();
    for graph in ["-l", "-H"] {
        let png = results.path().join(format!("graph{graph}.png"));
        let out = std::process::Command::new(&fio_plot)
            .arg("-i")
            .arg(results.path())
            .args([
                "-T", "fsbench", "-r", "randread", "-d", "64", "-n", "1", graph, "-o",
            ])
            .arg(&png)
            .env("MPLBACKEND", "Agg")
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "fio-plot {graph}: {said}");
        let size = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
        assert!(size > 10_000, "fio-plot {graph} drew {size} bytes: {said}");
    }
    assert_no_scratch_left(mnt.path());
}

/// `verify` with clones under group_reporting: every clone's file is laid
/// out with its stamps and checked.
#[test]
fn verified_clones_check_their_own_files() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let jobs = jobfile(
        &mnt,
        "[w]\nsize=2m\nbs=4k\nrw=randrw\nverify=crc32c\nnumjobs=3\ngroup_reporting\n",
    );
    let out = run(&["io", "--fio", arg(&jobs), &mnt.arg()]);
    out.assert_success().assert_no_panic();
    assert!(out.stdout.contains("w: (groupid=0, jobs=3)"), "{out}");
    assert_no_scratch_left(mnt.path());
}

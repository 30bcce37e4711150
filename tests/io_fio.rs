//! `fsbench io --fio JOBFILE`: fio job files run as is on a tmpfs the
//! test mounts (files in `directory=` or the target), with fio's numbers
//! of jobs and bytes; `--lint` prints what the linter finds and runs
//! nothing; bad files get one line naming file:line and key, exit 2, and
//! write nothing; the sentinel survives and SIGINT cleans up.
mod common;

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

#[test]
fn size_bound_jobs_move_what_fio_moves() {
    let Some(mnt) = TmpfsMount::new("128m") else {
        return;
    };
    let jobs = jobfile(
        &mnt,
        "[global]\nstonewall\nsize=4m\n[w]\nrw=write\nbs=64k\nfdatasync=8\nloops=2\n\
         [r]\nrw=read\nbs=64k\nnumjobs=2\nfilename=w.0.0\n\
         [mix]\nrw=randrw\nbssplit=4k/50:64k/\nrwmixread=70\nnorandommap\n",
    );
    let json = mnt.join("r.json");
    let out = run(&[
        "io",
        "--fio",
        arg(&jobs),
        mnt.path().to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    out.assert_success().assert_no_panic();
    let result = read_json(&json);
    let jobs = result["targets"][0]["workloads"].as_array().unwrap();
    assert_eq!(jobs.len(), 3);
    assert_eq!(jobs[0]["params"]["job"]["stop"]["amount"], 8u64 << 20);
    assert_eq!(jobs[1]["params"]["job"]["threads"], 2);
    assert_eq!(jobs[1]["params"]["file"]["name"], "w.0.0");
    assert_eq!(jobs[1]["params"]["job"]["stop"]["amount"], 8u64 << 20);
    assert_eq!(jobs[2]["params"]["file"]["name"], "mix.2.0");
    for (job, bytes) in jobs.iter().zip([8u64 << 20, 8 << 20, 4 << 20]) {
        let moved = bytes_moved(job);
        assert!(
            moved.abs_diff(bytes) <= bytes / 100,
            "{moved} != {bytes}: {job}"
        );
    }
    std::fs::remove_file(json).unwrap();
    assert_no_scratch_left(mnt.path());
}

#[test]
fn the_examples_lint_and_the_include_set_runs() {
    let Some(mnt) = TmpfsMount::new("128m") else {
        return;
    };
    for name in ["kubestr.fio", "bssplit.fio", "etcd-2560.fio"] {
        run(&["io", "--fio", &example(name), "--lint"]).assert_success();
    }
    let etcd = run(&["io", "--fio", &example("etcd.fio"), "--lint"]);
    etcd.assert_error(2, &["etcd.fio:9: bs: block size 2300", "whole sectors"]);
    let out = run_with_env(
        &["io", "--fio", &example("include-set.fio"), &mnt.arg()],
        "4m",
    );
    out.assert_success().assert_no_panic();
    assert_eq!(out.stdout.matches("Starting RD=").count(), 2, "{out}");
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
        ("[j]\nsize=1m\nbs=2300\n", ":3: bs: block size 2300"),
    ];
    for (body, needle) in cases {
        let jobs = jobfile(&mnt, body);
        let out = run(&["io", "--fio", arg(&jobs), &mnt.arg()]);
        out.assert_error(2, &[needle]);
        assert_eq!(std::fs::read_dir(mnt.path()).unwrap().count(), 0, "{out}");
    }
    run(&["io", "--fio", "/nonexistent/jobs.fio"]).assert_error(2, &["cannot read job file"]);
    run(&["io", "--fio", "/dev/zero"]).assert_error(2, &["larger than 1 MiB"]);
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

//! `--sync-log`: one record per metadata operation (counted in the log file
//! itself), group commit counted in system calls (strace), bad log
//! directories refused before the run, and the safety rules for the log's
//! own scratch directory: sentinels next to it and next to the target's
//! survive a normal end, an error, a full log file system, a full target
//! and SIGINT, and no scratch directory is left. Root only: every test
//! mounts its own file systems.
mod common;
#[path = "postmark_support.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{
    Frozen, Output, Running, STARTUP_TIMEOUT, Sentinel, TmpfsMount, assert_no_scratch_left,
    fill_file_system, read_json, run, scratch_dirs, tmpfs_with_sentinel, wait_for_scratch,
    wait_until,
};
use support::{location, samples, workloads, write_config};

/// PostMark settings that keep a run busy for seconds (every byte its own
/// system call) while it creates small files quickly enough to log often;
/// their planned log (44,000 records at most) fits in `LOG_SIZE`.
const SLOW: [&str; 5] = [
    "set buffering false",
    "set write 1",
    "set size 500 1000",
    "set number 2000",
    "set transactions 20000",
];

/// The log directory's tmpfs in the tests that run `SLOW`.
const LOG_SIZE: &str = "32m";

/// A target and a log directory, each its own tmpfs with a sentinel.
struct Stage {
    target: TmpfsMount,
    log: TmpfsMount,
    sentinels: [Sentinel; 2],
    /// Configurations and results, outside both mounts.
    outside: tempfile::TempDir,
}

impl Stage {
    fn new(target_size: &str, log_size: &str) -> Option<Stage> {
        let (target, target_sentinel) = tmpfs_with_sentinel(target_size)?;
        let (log, log_sentinel) = tmpfs_with_sentinel(log_size)?;
        Some(Stage {
            target,
            log,
            sentinels: [target_sentinel, log_sentinel],
            outside: tempfile::tempdir().unwrap(),
        })
    }

    /// A PostMark configuration running in the target, then `run`.
    fn postmark_config(&self, lines: &[&str]) -> PathBuf {
        let mut all = vec![location(self.target.path())];
        all.extend(lines.iter().map(|l| l.to_string()));
        all.push("run".into());
        write_config(self.outside.path(), "pm.cfg", &all)
    }

    fn json(&self) -> PathBuf {
        self.outside.path().join("result.json")
    }

    /// `postmark CFG --json J --sync-log LOG EXTRA...`.
    fn postmark_args(&self, lines: &[&str], extra: &[&str]) -> Vec<String> {
        let config = self.postmark_config(lines);
        let mut args = vec![
            "postmark".to_string(),
            config.display().to_string(),
            "--json".into(),
            self.json().display().to_string(),
            "--sync-log".into(),
            self.log.arg(),
        ];
        args.extend(extra.iter().map(|a| a.to_string()));
        args
    }

    /// Nothing of fsbench's is left in either mount, and the sentinels
    /// are intact.
    fn assert_clean(&self) {
        assert_no_scratch_left(self.target.path());
        assert_no_scratch_left(self.log.path());
        for sentinel in &self.sentinels {
            sentinel.assert_intact();
        }
    }
}

/// The records of a kept log file, split into (sequence, op, name).
fn records(log: &Path) -> Vec<(u64, String, String)> {
    let text = std::fs::read_to_string(log)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", log.display()));
    text.lines()
        .map(|line| {
            let mut parts = line.splitn(3, ' ');
            let seq = parts.next().unwrap().parse().expect("a sequence number");
            let op = parts.next().expect("an op").to_string();
            let name = parts.next().expect("a name").to_string();
            (seq, op, name)
        })
        .collect()
}

/// The one kept log scratch directory in `dir`, and its log file.
fn kept_log(dir: &Path) -> PathBuf {
    let kept = scratch_dirs(dir);
    assert_eq!(kept.len(), 1, "one kept log directory in {}", dir.display());
    kept[0].join("sync-r0.log")
}

fn count(records: &[(u64, String, String)], op: &str) -> u64 {
    records.iter().filter(|r| r.1 == op).count() as u64
}

/// `name` and each path under `dir` as `name/...`, sorted: what a copy
/// of `dir` named `name` holds.
fn paths_as(dir: &Path, name: &str) -> Vec<String> {
    let mut paths = vec![name.to_string()];
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = format!("{name}/{}", entry.file_name().to_string_lossy());
        match entry.file_type().unwrap().is_dir() {
            true => paths.extend(paths_as(&entry.path(), &path)),
            false => paths.push(path),
        }
    }
    paths.sort_unstable();
    paths
}

/// The result's only workload.
fn only_workload(json: &Path) -> serde_json::Value {
    let all = workloads(&read_json(json));
    assert_eq!(all.len(), 1);
    all.into_iter().next().unwrap()
}

#[test]
fn postmark_logs_one_record_per_create_and_delete() {
    let Some(stage) = Stage::new("128m", "16m") else {
        return;
    };
    let settings = [
        "set number 300",
        "set transactions 600",
        "set subdirectories 3",
        "set threads 2",
    ];
    let out = run(&stage.postmark_args(&settings, &["--keep"]));
    out.assert_success().assert_no_panic();
    let workload = only_workload(&stage.json());
    let log = records(&kept_log(stage.log.path()));
    let sequence: Vec<u64> = log.iter().map(|r| r.0).collect();
    assert_eq!(sequence, (1..=log.len() as u64).collect::<Vec<_>>());
    assert_eq!(count(&log, "create"), samples(&workload, "create"));
    assert_eq!(count(&log, "delete"), samples(&workload, "delete"));
    assert_eq!(
        log.len() as u64,
        count(&log, "create") + count(&log, "delete")
    );
    assert!(
        log.iter().any(|r| r.2.starts_with("t1/s")),
        "names t<k>/s<n>/<number>"
    );
    assert_eq!(samples(&workload, "sync_log_records"), log.len() as u64);
    assert_eq!(samples(&workload, "sync_log_syncs"), log.len() as u64);
    let params = &workload["params"]["sync_log"];
    assert_eq!(params["fs_type"], "tmpfs");
    assert_eq!(params["mode"], "fdatasync");
    assert!(
        workload["risks"][0]["message"]
            .as_str()
            .unwrap()
            .contains("sync log in"),
        "a log on tmpfs is not durable: {workload}"
    );
    // `fsbench clean` finds the kept log directory like any scratch dir.
    run(&["clean", &stage.log.arg()]).assert_success();
    run(&["clean", &stage.target.arg()]).assert_success();
    stage.assert_clean();
}

#[test]
fn tree_logs_one_record_per_entry_copied_extracted_and_removed() {
    for threads in ["1", "3"] {
        let Some((mnt, sentinel)) = tmpfs_with_sentinel("128m") else {
            return;
        };
        let json = mnt.join("result.json");
        let out = run(&[
            "tree",
            &mnt.arg(),
            "--scale",
            "0.003",
            "--ops",
            "copy,untar,delete",
            "--threads",
            threads,
            "--sync-log",
            "target",
            "--keep",
            "-q",
            "--json",
            json.to_str().unwrap(),
        ]);
        out.assert_success().assert_no_panic();
        assert!(out.stdout.contains("sync log: "), "{out}");
        let workload = only_workload(&json);
        let scratch = &scratch_dirs(mnt.path())[0];
        let log = records(&scratch.join("sync-r0.log"));
        let created = samples(&workload, "copy_s") + samples(&workload, "untar_s");
        assert_eq!(count(&log, "create"), created, "threads {threads}");
        assert_eq!(count(&log, "delete"), samples(&workload, "delete_s"));
        assert_eq!(samples(&workload, "sync_log_records"), log.len() as u64);
        let mut deleted: Vec<&str> = log
            .iter()
            .filter(|r| r.1 == "delete")
            .map(|r| r.2.as_str())
            .collect();
        deleted.sort_unstable();
        let copied = paths_as(&scratch.join("r0/src"), "copy");
        assert_eq!(deleted, copied, "threads {threads}: one delete per entry");
        run(&["clean", &mnt.arg()]).assert_success();
        std::fs::remove_file(&json).unwrap();
        assert_no_scratch_left(mnt.path());
        sentinel.assert_intact();
    }
}

/// fdatasync and fsync calls of `args`, counted by `strace -f -c`.
fn sync_calls(outside: &Path, args: &[String]) -> (Output, u64, u64) {
    let log = outside.join("strace.txt");
    let mut command = Command::new("strace");
    command
        .args(["-f", "-y", "-e", "trace=fdatasync,fsync", "-o"])
        .arg(&log)
        .arg(common::FSBENCH)
        .args(args);
    let out =
        Running::spawn_command(&mut command, format!("strace fsbench {}", args.join(" "))).wait();
    let text = std::fs::read_to_string(&log)
        .unwrap_or_else(|e| panic!("no strace log ({e}): is strace installed?\n{out}"));
    // The scratch directories' markers are synced with their directory
    // and its parent when they are made, and the result file (--json) as
    // it is saved, through a temporary file: those are not the log's syncs.
    let of_the_log = |line: &&str| {
        let file = line.split('<').nth(1).unwrap_or_default();
        let file = Path::new(file.split('>').next().unwrap_or_default());
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        let fsbench_own = name == ".fsbench-scratch"
            || name.starts_with("fsbench-")
            || name.ends_with(".fsbench-tmp")
            || file.is_dir();
        !fsbench_own
    };
    let calls = |name: &str| {
        let call = format!(" {name}(");
        text.lines()
            .filter(|line| line.contains(&call) && !line.contains("resumed"))
            .filter(of_the_log)
            .count() as u64
    };
    (out, calls("fdatasync"), calls("fsync"))
}

/// PostMark's records in each of its phases: the pool's creates, the
/// transactions' creates and deletes, the final deletes.
fn records_per_phase(workload: &serde_json::Value) -> [u64; 3] {
    let transactions = samples(workload, "create_mixed") + samples(workload, "delete_mixed");
    [
        samples(workload, "create_alone"),
        transactions,
        samples(workload, "delete_alone"),
    ]
}

/// The syncs of a PostMark run with batches of `batch`: each phase syncs
/// its records in full batches, then the rest as it ends.
fn phase_syncs(workload: &serde_json::Value, batch: u64) -> u64 {
    let phases = records_per_phase(workload);
    phases.iter().map(|records| records.div_ceil(batch)).sum()
}

#[test]
fn batching_divides_the_syncs_by_the_batch_size() {
    let Some(stage) = Stage::new("128m", "16m") else {
        return;
    };
    let settings = ["set number 200", "set transactions 300"];
    for (batch, mode) in [("1", "fdatasync"), ("10", "fdatasync"), ("7", "fsync")] {
        let extra = ["--sync-log-batch", batch, "--sync-log-mode", mode];
        let (out, fdatasyncs, fsyncs) = sync_calls(
            stage.outside.path(),
            &stage.postmark_args(&settings, &extra),
        );
        out.assert_success();
        let workload = only_workload(&stage.json());
        let records = samples(&workload, "sync_log_records");
        let expected = phase_syncs(&workload, batch.parse().unwrap());
        let counted = if mode == "fsync" { fsyncs } else { fdatasyncs };
        assert_eq!(counted, expected, "batch {batch}: {records} records");
        assert_eq!(fdatasyncs + fsyncs, expected, "no other sync calls");
        assert_eq!(samples(&workload, "sync_log_syncs"), expected);
    }
    let (out, fdatasyncs, fsyncs) = sync_calls(
        stage.outside.path(),
        &stage.postmark_args(&settings, &["--sync-log-mode", "none"]),
    );
    out.assert_success();
    assert_eq!((fdatasyncs, fsyncs), (0, 0));
    assert_eq!(
        only_workload(&stage.json())["risks"][0]["code"],
        "sync_log_not_synced"
    );
    stage.assert_clean();
}

#[test]
fn each_logging_phase_syncs_its_last_records_before_it_ends() {
    // 8,000 records of at most 17 bytes: a 2 MiB log directory is enough.
    let Some(stage) = Stage::new("128m", "2m") else {
        return;
    };
    let settings = ["set number 2000", "set transactions 2000"];
    let larger_than_any_phase = ["--sync-log-batch", "100000"];
    let (out, fdatasyncs, _) = sync_calls(
        stage.outside.path(),
        &stage.postmark_args(&settings, &larger_than_any_phase),
    );
    out.assert_success();
    let workload = only_workload(&stage.json());
    assert!(records_per_phase(&workload).iter().all(|&r| r > 0));
    // One sync as each phase ends, not one after the run.
    assert_eq!(samples(&workload, "sync_log_syncs"), 3, "{workload}");
    assert_eq!(fdatasyncs, 3);
    let json = stage.outside.path().join("tree.json");
    let target = stage.target.arg();
    let tree = [
        "tree",
        &target,
        "--scale",
        "0.003",
        "--ops",
        "copy,untar,delete",
        "--sync-log",
        &stage.log.arg(),
        "--sync-log-batch",
        "100000",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ];
    run(&tree).assert_success().assert_no_panic();
    let workload = only_workload(&json);
    assert_eq!(samples(&workload, "sync_log_syncs"), 3, "one per operation");
    stage.assert_clean();
}

/// A read-only tmpfs, for a log directory fsbench cannot write.
fn read_only_mount() -> Option<TmpfsMount> {
    TmpfsMount::with_options("size=1m,ro")
}

#[test]
fn bad_log_directories_are_refused_before_anything_is_written() {
    let Some(stage) = Stage::new("64m", "2m") else {
        return;
    };
    let read_only = read_only_mount().unwrap();
    let missing = stage.log.join("nope");
    let file = stage.log.join("SENTINEL");
    // Every one is the user's input, refused before the run (exit 2); the
    // last is too small only for PostMark's log.
    let cases = [
        (missing.display().to_string(), true, "does not exist"),
        (file.display().to_string(), true, "is not a directory"),
        (read_only.arg(), true, "is not writable"),
        (stage.log.arg(), false, "not enough space"),
    ];
    let code = 2;
    for (dir, tree_too, needle) in cases {
        // 202,000 records of at most 21 bytes: 4 MB, more than the 2 MiB
        // log mount holds.
        let pm = stage.postmark_config(&["set number 1000", "set transactions 100000"]);
        let postmark = ["postmark", pm.to_str().unwrap(), "--sync-log", dir.as_str()];
        run(&postmark).assert_error(code, &["--sync-log", needle]);
        if tree_too {
            let target = stage.target.arg();
            let tree = [
                "tree",
                &target,
                "--scale",
                "0.002",
                "--sync-log",
                dir.as_str(),
            ];
            run(&tree).assert_error(code, &["--sync-log", needle]);
        }
    }
    run(&["tree", &stage.target.arg(), "--sync-log-batch", "2"]).assert_code(2);
    run(&[
        "tree",
        &stage.target.arg(),
        "--sync-log",
        "target",
        "--sync-log-batch",
        "0",
    ])
    .assert_code(2);
    stage.assert_clean();
}

#[test]
fn suite_entries_take_the_log_flags_and_the_report_compares_placements() {
    let Some(stage) = Stage::new("128m", "16m") else {
        return;
    };
    let commands =
        r#"commands = ["set number 100", "set transactions 200", "set buffering false"]"#;
    let suite = format!(
        "[[workload]]\nkind = \"postmark\"\nlabel = \"no-log\"\n{commands}\n\n\
         [[workload]]\nkind = \"postmark\"\nlabel = \"log-elsewhere\"\n{commands}\nargs = \"--sync-log {}\"\n\n\
         [[workload]]\nkind = \"postmark\"\nlabel = \"log-target\"\n{commands}\nargs = [\"--sync-log\", \"target\", \"--sync-log-batch\", \"4\"]\n",
        stage.log.arg()
    );
    let suite_path = stage.outside.path().join("suite.toml");
    std::fs::write(&suite_path, suite).unwrap();
    let json = stage.json();
    let out = run(&[
        "run",
        "--suite",
        suite_path.to_str().unwrap(),
        "--target",
        &format!("t={}", stage.target.arg()),
        "--no-save",
        "--json",
        json.to_str().unwrap(),
    ]);
    out.assert_success();
    assert!(out.stdout.contains("Sync-log placement"), "{out}");
    assert!(out.stdout.contains("target, batch 4"), "{out}");
    let all = workloads(&read_json(&json));
    let logged = &all[1];
    let records = logged["params"]["sync_log"]["records"].as_u64().unwrap();
    assert_eq!(
        records,
        samples(logged, "create") + samples(logged, "delete")
    );
    let markdown = run(&["report", json.to_str().unwrap(), "--markdown"]);
    assert!(
        markdown.stdout.contains("## Sync-log placement"),
        "{markdown}"
    );
    let html = stage.outside.path().join("report.html");
    run(&[
        "report",
        json.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ])
    .assert_success();
    let html = std::fs::read_to_string(html).unwrap();
    assert!(html.contains("<section id=\"sync-log-placement\">"));
    assert!(html.contains("log-elsewhere"));
    stage.assert_clean();
}

#[test]
fn normal_end_and_a_failing_run_leave_nothing_behind() {
    let Some(stage) = Stage::new("128m", "16m") else {
        return;
    };
    let out = run(&stage.postmark_args(&["set number 100"], &[]));
    out.assert_success();
    stage.assert_clean();
    // The user's command fails after the copy wrote the log: exit 1.
    let failing = [
        "tree",
        &stage.target.arg(),
        "--scale",
        "0.002",
        "--ops",
        "copy",
        "--cmd",
        "false",
        "--sync-log",
        &stage.log.arg(),
    ];
    run(&failing).assert_error(1, &["--cmd false"]);
    stage.assert_clean();
}

/// Starts a busy PostMark run logging to the stage's log directory and
/// waits until its log has records; returns the run and the log file.
fn busy_logged_run(stage: &Stage) -> (Running, PathBuf) {
    let mut fsbench = Running::spawn(&stage.postmark_args(&SLOW, &[]));
    let log_dir = wait_for_scratch(stage.log.path(), &mut fsbench);
    let log = log_dir.join("sync-r0.log");
    wait_until(STARTUP_TIMEOUT, "records in the sync log", || {
        assert!(fsbench.is_running(), "the run ended too early");
        std::fs::metadata(&log).is_ok_and(|m| m.len() > 0)
    });
    (fsbench, log)
}

/// Fills `mount` (one of the stage's) while a busy logged run is frozen:
/// the run must fail (exit 1, an error naming `needles`) and leave nothing.
fn fill_mid_run(stage: &Stage, mount: &TmpfsMount, needles: &[&str]) {
    let (fsbench, _) = busy_logged_run(stage);
    let filler = mount.join("filler");
    {
        let _frozen = Frozen::new(&fsbench);
        fill_file_system(&filler);
    }
    fsbench.wait().assert_error(1, needles);
    std::fs::remove_file(&filler).unwrap();
    stage.assert_clean();
}

#[test]
fn a_full_log_file_system_fails_the_run_cleanly() {
    let Some(stage) = Stage::new("128m", LOG_SIZE) else {
        return;
    };
    fill_mid_run(&stage, &stage.log, &["sync log", "No space left on device"]);
}

#[test]
fn a_full_target_fails_the_run_cleanly_and_removes_the_log() {
    let Some(stage) = Stage::new("24m", LOG_SIZE) else {
        return;
    };
    fill_mid_run(&stage, &stage.target, &["No space left on device"]);
}

#[test]
fn sigint_mid_run_exits_130_and_removes_the_log() {
    let Some(stage) = Stage::new("128m", LOG_SIZE) else {
        return;
    };
    let (fsbench, _) = busy_logged_run(&stage);
    fsbench.signal(libc::SIGINT);
    fsbench.wait().assert_interrupted_and_cleaned_up();
    stage.assert_clean();
}

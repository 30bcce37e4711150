//! `fsbench postmark` keeps to its scratch directories (one per location)
//! and removes them on every way out: normal end, a failure mid-run, a
//! full file system, SIGINT; `--keep` leaves them for `fsbench clean`.
//! Each test plants sentinels next to the scratch directories (root only:
//! every test mounts its own tmpfs).
mod common;
#[path = "postmark_support.rs"]
mod support;

use std::path::{Path, PathBuf};

use common::{
    Frozen, Running, STARTUP_TIMEOUT, Sentinel, TmpfsMount, assert_no_scratch_left,
    fill_file_system, read_json, scratch_dirs, wait_for_scratch, wait_until,
};
use support::{location, subdir, write_config};

/// Settings that keep a run busy for seconds: every byte is its own
/// system call.
const SLOW: [&str; 4] = [
    "set buffering false",
    "set write 1",
    "set read 1",
    "set transactions 1000000",
];

/// Starts `fsbench postmark` on a configuration made of `lines` and
/// `run`, kept outside the mount so only fsbench writes there.
fn start(config_dir: &Path, lines: &[impl AsRef<str>], extra: &[&str]) -> Running {
    let mut all: Vec<&str> = lines.iter().map(AsRef::as_ref).collect();
    all.push("run");
    let config = write_config(config_dir, "pm.cfg", &all);
    let mut args = vec!["postmark", config.to_str().unwrap()];
    args.extend(extra);
    Running::spawn(&args)
}

/// The same, for a run kept busy by `SLOW`.
fn start_slow(config_dir: &Path, lines: &[String]) -> Running {
    let mut all = lines.to_vec();
    all.extend(SLOW.iter().map(|s| s.to_string()));
    start(config_dir, &all, &[])
}

/// Waits until `path` exists while `run` is still running.
fn wait_for_file(path: &Path, run: &mut Running) {
    wait_until(STARTUP_TIMEOUT, "a PostMark file", || {
        assert!(run.is_running(), "the run ended too early");
        path.exists()
    });
}

#[test]
fn normal_end_removes_every_scratch_dir_and_nothing_else() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let (a, b) = (subdir(mnt.path(), "a"), subdir(mnt.path(), "b"));
    let sentinels = [Sentinel::plant(&a), Sentinel::plant(&b)];
    let outside = tempfile::tempdir().unwrap();
    let json = outside.path().join("result.json");
    let add_b = format!("set location +{}", b.display());
    let fsbench = start(
        outside.path(),
        &[
            &location(&a),
            &add_b,
            "set subdirectories 3",
            "set threads 2",
        ],
        &["--json", json.to_str().unwrap()],
    );
    let out = fsbench.wait();
    out.assert_success().assert_no_panic();
    assert_eq!(out.stderr, "", "{out}");
    for (dir, sentinel) in [&a, &b].iter().zip(&sentinels) {
        assert_no_scratch_left(dir);
        sentinel.assert_intact();
    }
    let result = read_json(&json);
    let targets = result["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 2);
    for target in targets {
        assert!(
            target["cleanup"]["removed"].as_u64().unwrap() > 0,
            "{target}"
        );
    }
}

/// Someone deletes one of PostMark's files mid-run: PostMark would print
/// an error per access and go on; fsbench stops with one clear error.
#[test]
fn a_file_removed_from_outside_fails_the_run_cleanly() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let sentinel = Sentinel::plant(mnt.path());
    let outside = tempfile::tempdir().unwrap();
    let lines = [location(mnt.path()), "set number 300".into()];
    let mut fsbench = start_slow(outside.path(), &lines);
    let scratch = wait_for_scratch(mnt.path(), &mut fsbench);
    let first = scratch.join("1");
    wait_for_file(&first, &mut fsbench);
    // Wait until file 1 is complete, so fsbench is past writing it.
    wait_for_file(&scratch.join("2"), &mut fsbench);
    std::fs::remove_file(&first).unwrap();
    let out = fsbench.wait();
    out.assert_error(1, &["1 in ", "No such file or directory"]);
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

#[test]
fn file_system_filled_from_outside_mid_run_fails_cleanly() {
    let Some(mnt) = TmpfsMount::new("16m") else {
        return;
    };
    let sentinel = Sentinel::plant(mnt.path());
    let outside = tempfile::tempdir().unwrap();
    let lines = [
        location(mnt.path()),
        "set number 1000".into(),
        "set size 500 4000".into(),
    ];
    let mut fsbench = start_slow(outside.path(), &lines);
    let scratch = wait_for_scratch(mnt.path(), &mut fsbench);
    wait_for_file(&scratch.join("1"), &mut fsbench);
    let filler = mnt.join("filler");
    // Frozen in its creation phase while the space goes, so it surely
    // meets the full file system (below).
    let filled = {
        let _frozen = Frozen::new(&fsbench);
        fill_file_system(&filler)
    };
    let out = fsbench.wait();
    out.assert_error(1, &["No space left on device"]);
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
    assert_eq!(std::fs::metadata(&filler).unwrap().len(), filled);
}

/// A busy run over two locations with two instances each, once
/// instance 1 has files; returns the two location directories.
fn busy_two_location_run(mnt: &TmpfsMount, outside: &Path) -> (Running, [PathBuf; 2]) {
    let (a, b) = (subdir(mnt.path(), "a"), subdir(mnt.path(), "b"));
    let add_b = format!("set location +{}", b.display());
    let mut fsbench = start_slow(outside, &[location(&a), add_b, "set threads 2".into()]);
    let scratch = wait_for_scratch(&a, &mut fsbench);
    wait_for_file(&scratch.join("t1").join("2"), &mut fsbench);
    (fsbench, [a, b])
}

#[test]
fn sigint_mid_run_exits_130_and_removes_every_scratch_dir() {
    let Some(mnt) = TmpfsMount::new("256m") else {
        return;
    };
    let outside = tempfile::tempdir().unwrap();
    let sentinel = Sentinel::plant(mnt.path());
    let (fsbench, dirs) = busy_two_location_run(&mnt, outside.path());
    fsbench.signal(libc::SIGINT);
    let out = fsbench.wait();
    out.assert_interrupted_and_cleaned_up();
    assert!(
        !out.stdout.contains("Time:"),
        "no report for a stopped run\n{out}"
    );
    for dir in &dirs {
        assert_no_scratch_left(dir);
    }
    sentinel.assert_intact();
}

/// `--keep` leaves each location's marked scratch directory (emptied by
/// PostMark's own deletion phase), which `fsbench clean` then removes.
#[test]
fn keep_leaves_marked_scratch_dirs_for_clean() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let outside = tempfile::tempdir().unwrap();
    let sentinel = Sentinel::plant(mnt.path());
    let fsbench = start(outside.path(), &[&location(mnt.path())], &["--keep"]);
    let out = fsbench.wait();
    out.assert_success();
    assert!(out.stderr.contains("kept scratch data in"), "{out}");
    let kept = scratch_dirs(mnt.path());
    assert_eq!(kept.len(), 1, "{out}");
    let names: Vec<String> = std::fs::read_dir(&kept[0])
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, [".fsbench-scratch"]);
    common::run(&["clean", &mnt.arg()]).assert_success();
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

//! `fsbench run`: a suite on several targets, interleaved per repetition;
//! the result record, the saved file, refusals before anything is written,
//! and cleanup of every target's scratch directory on errors and signals.
mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{
    Running, SMALL_SUITE, Sentinel, TmpfsMount, assert_no_scratch_left, read_json, run,
    scratch_dirs, wait_until,
};

fn write_suite(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("suite.toml");
    std::fs::write(&path, text).unwrap();
    path
}

struct TwoTargets {
    a: TmpfsMount,
    b: TmpfsMount,
    sentinels: [Sentinel; 2],
}

fn two_targets() -> Option<TwoTargets> {
    let a = TmpfsMount::new("256m")?;
    let b = TmpfsMount::new("256m")?;
    let sentinels = [Sentinel::plant(a.path()), Sentinel::plant(b.path())];
    Some(TwoTargets { a, b, sentinels })
}

impl TwoTargets {
    fn args(&self) -> Vec<String> {
        vec![
            "--target".into(),
            format!("a={}", self.a.arg()),
            "--target".into(),
            format!("b={}", self.b.arg()),
        ]
    }

    fn assert_clean(&self) {
        assert_no_scratch_left(self.a.path());
        assert_no_scratch_left(self.b.path());
        for sentinel in &self.sentinels {
            sentinel.assert_intact();
        }
    }
}

fn run_args(suite: &Path, extra: &[&str]) -> Vec<String> {
    let mut args = vec![
        "run".to_string(),
        "--suite".into(),
        suite.display().to_string(),
        "--no-save".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

#[test]
fn a_suite_runs_on_two_targets_interleaved_and_cleans_up() {
    let Some(targets) = two_targets() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let suite = write_suite(dir.path(), SMALL_SUITE);
    let json = dir.path().join("run.json");
    let mut args = run_args(&suite, &["--repeat", "2", "--verbose"]);
    args.extend(targets.args());
    args.extend(["--json".into(), json.display().to_string()]);
    let out = run(&args);
    out.assert_success().assert_no_panic();
    targets.assert_clean();

    let record = read_json(&json);
    let names: Vec<&str> = record["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b"]);
    for target in record["targets"].as_array().unwrap() {
        let labels: Vec<(String, u64)> = target["workloads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| {
                (
                    w["label"]
                        .as_str()
                        .unwrap_or(w["workload"].as_str().unwrap())
                        .to_string(),
                    w["repetition"].as_u64().unwrap(),
                )
            })
            .collect();
        let expected: Vec<(String, u64)> = (0..2)
            .flat_map(|rep| {
                ["files", "postmark", "rand-read", "tree", "meta"].map(|l| (l.to_string(), rep))
            })
            .collect();
        assert_eq!(labels, expected, "{}", target["name"]);
        assert!(
            target["env"].is_object(),
            "every target carries its environment"
        );
        for workload in target["workloads"].as_array().unwrap() {
            assert!(
                !workload["metrics"].as_array().unwrap().is_empty(),
                "{workload}"
            );
        }
    }
    // Interleaved: repetition 1 of a, then of b; repetition 2 starts with
    // b, so that neither always runs first.
    let order: Vec<&str> = out
        .stderr
        .lines()
        .filter_map(|l| l.strip_prefix("fsbench: "))
        .filter_map(|l| l.split_once(": ").map(|(target, _)| target))
        .filter(|t| *t == "a" || *t == "b")
        .collect();
    let runs_of = |t: &str| std::iter::repeat_n(t.to_string(), 5);
    let expected: Vec<String> = runs_of("a")
        .chain(runs_of("b"))
        .chain(runs_of("b"))
        .chain(runs_of("a"))
        .collect();
    assert_eq!(order, expected, "{out}");
    // The table names both targets and every workload.
    for needle in ["a", "b", "files", "postmark", "rand-read", "tree", "meta"] {
        assert!(out.stdout.contains(needle), "{needle} missing\n{out}");
    }
    assert!(
        out.stderr.contains("overhead"),
        "--verbose prints the breakdown\n{out}"
    );

    // The saved result renders as HTML with every workload of the suite.
    let html = dir.path().join("run.html");
    let out = run(&[
        "report",
        json.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    out.assert_success();
    let page = std::fs::read_to_string(&html).unwrap();
    for needle in ["files", "postmark", "rand-read", "tree", "meta", "<svg"] {
        assert!(
            page.contains(needle),
            "{needle} missing from the HTML report"
        );
    }
}

/// `fsbench run` with neither HOME nor XDG_DATA_HOME set, started in `cwd`.
fn run_without_data_home(cwd: &Path, suite: &Path, target: &str) -> common::Output {
    Running::spawn_command(
        std::process::Command::new(common::FSBENCH)
            .current_dir(cwd)
            .env_remove("HOME")
            .env_remove("XDG_DATA_HOME")
            .args([
                "run",
                "--suite",
                suite.to_str().unwrap(),
                "--target",
                target,
            ]),
        "fsbench run (without a data home)".into(),
    )
    .wait()
}

/// Without a data home the result goes to ./fsbench-results, unless the
/// current directory is the target (see tests/results.rs for the default).
#[test]
fn without_a_data_home_the_result_is_saved_under_fsbench_results() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let sentinel = Sentinel::plant(mnt.path());
    let cwd = tempfile::tempdir().unwrap();
    let suite = write_suite(
        cwd.path(),
        "[[workload]]\nkind = \"bonnie\"\nargs = \"-s 0 -n 1 -r 0\"\n",
    );
    let out = run_without_data_home(cwd.path(), &suite, &mnt.arg());
    out.assert_success();
    let saved: Vec<_> = std::fs::read_dir(cwd.path().join("fsbench-results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(saved.len(), 1, "{out}");
    let record = read_json(&saved[0]);
    assert_eq!(record["kind"], "fsbench-result");
    assert!(
        out.stderr.contains(&format!(
            "{}",
            saved[0].file_name().unwrap().to_string_lossy()
        )),
        "the saved path is printed\n{out}"
    );
    // Measuring the current directory: nothing may be saved on it.
    let out = run_without_data_home(mnt.path(), &suite, ".");
    out.assert_error(2, &["--save-dir", "XDG_DATA_HOME"]);
    assert_no_scratch_left(mnt.path());
    assert!(!mnt.join("fsbench-results").exists(), "{out}");
    sentinel.assert_intact();
}

#[test]
fn every_builtin_suite_builds_for_every_scale() {
    // Building fails before the target is looked at; a missing target is
    // therefore reported only when every workload of the suite is valid.
    for suite in ["quick", "seeds", "metadata", "throughput"] {
        for scale in ["0.001", "1"] {
            let out = run(&[
                "run",
                "--suite",
                suite,
                "--scale",
                scale,
                "--no-save",
                "--target",
                "/nonexistent/fsbench-target",
            ]);
            out.assert_error(2, &["/nonexistent/fsbench-target", "does not exist"]);
        }
    }
}

#[test]
fn show_suite_prints_a_suite_that_runs_as_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&["run", "--show-suite", "quick"]);
    out.assert_success();
    let path = write_suite(dir.path(), &out.stdout);
    let out = run(&[
        "run",
        "--suite",
        path.to_str().unwrap(),
        "--target",
        "/nonexistent/x",
    ]);
    out.assert_error(2, &["does not exist"]);
    let out = run(&["run", "--list-suites"]);
    out.assert_success();
    for name in ["quick", "seeds", "metadata", "throughput"] {
        assert!(out.stdout.contains(name), "{out}");
    }
}

/// Bad suites and flags: one line naming the problem, exit 2, nothing
/// written on the target.
#[test]
fn bad_input_is_refused_before_anything_is_written() {
    let Some(mnt) = TmpfsMount::new("16m") else {
        return;
    };
    let sentinel = Sentinel::plant(mnt.path());
    let dir = tempfile::tempdir().unwrap();
    let target = mnt.arg();
    let cases: [(&str, &[&str], &[&str]); 12] = [
        ("[[workload]]\nkind = \"iozone\"\n", &[], &["iozone"]),
        (
            "[[workload]]\nkind = \"io\"\nthreads = 3\n",
            &[],
            &["threads"],
        ),
        (
            "[[workload]]\nkind = \"io\"\nargs = \"--frobnicate 3\"\n",
            &[],
            &["--frobnicate", "workload 1"],
        ),
        (
            "[[workload]]\nkind = \"bonnie\"\nargs = \"-s 0 -n 1 -x 3\"\n",
            &[],
            &["-x", "--repeat"],
        ),
        (
            "[[workload]]\nkind = \"postmark\"\ncommands = [\"set number 10\", \"run\"]\n",
            &[],
            &["run", "implicit"],
        ),
        (
            "[[workload]]\nkind = \"postmark\"\ncommands = [\"set location /tmp\"]\n",
            &[],
            &["set location"],
        ),
        (
            "[[workload]]\nkind = \"postmark\"\ncommands = [\"set number -5\"]\n",
            &[],
            &["number"],
        ),
        ("[[workload]\n", &[], &["suite.toml:1:"]),
        (
            "[[workload]]\nkind = \"io\"\nargs = \"-s {x}\"\n",
            &[],
            &["{x}"],
        ),
        (
            "[[workload]]\nkind = \"bonnie\"\nargs = \"-s 0 -n 1\"\n",
            &["--scale", "0"],
            &["--scale"],
        ),
        (
            "[[workload]]\nkind = \"bonnie\"\nargs = \"-s 0 -n 1\"\n",
            &["--repeat", "0"],
            &["--repeat 0"],
        ),
        (
            "[[workload]]\nkind = \"bonnie\"\nargs = \"-s 0 -n 1\"\n",
            &["--baseline", "zzz"],
            &["--baseline zzz"],
        ),
    ];
    for (suite, extra, needles) in cases {
        let path = write_suite(dir.path(), suite);
        let mut args = run_args(&path, extra);
        args.extend(["--target".into(), target.clone()]);
        run(&args).assert_error(2, needles);
    }
    let out = run(&["run", "--suite", "nosuchsuite", "--target", &target]);
    out.assert_error(2, &["nosuchsuite", "quick"]);
    let out = run(&["run", "--no-save", "--target", &target, "--target", &target]);
    out.assert_error(2, &["two targets are named"]);
    assert_no_scratch_left(mnt.path());
    assert_eq!(common::fsbench_entries(mnt.path()), Vec::<String>::new());
    sentinel.assert_intact();
}

/// A target without room is refused before any target is touched.
#[test]
fn a_full_second_target_is_refused_before_the_first_is_touched() {
    let Some(a) = TmpfsMount::new("256m") else {
        return;
    };
    let Some(b) = TmpfsMount::new("2m") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let suite = write_suite(
        dir.path(),
        "[[workload]]\nkind = \"io\"\nargs = \"-s 64m --duration 0.4s --interval 0.2s --warmup 0\"\n",
    );
    let mut args = run_args(&suite, &[]);
    args.extend([
        "--target".into(),
        format!("a={}", a.arg()),
        "--target".into(),
        format!("b={}", b.arg()),
    ]);
    let out = run(&args);
    out.assert_code(2);
    let line = out.assert_one_line_error();
    assert!(line.contains(&b.arg()), "{out}");
    assert!(scratch_dirs(a.path()).is_empty());
    assert!(scratch_dirs(b.path()).is_empty());
}

#[test]
fn sigint_mid_run_removes_every_targets_scratch_dir() {
    let Some(targets) = two_targets() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let suite = write_suite(
        dir.path(),
        "[[workload]]\nkind = \"io\"\nargs = \"-s 16m --duration 60s --interval 0.2s\"\n",
    );
    let mut args = run_args(&suite, &[]);
    args.extend(targets.args());
    let mut fsbench = Running::spawn(&args);
    wait_until(common::STARTUP_TIMEOUT, "both scratch dirs", || {
        assert!(fsbench.is_running(), "the run ended too early");
        !scratch_dirs(targets.a.path()).is_empty() && !scratch_dirs(targets.b.path()).is_empty()
    });
    fsbench.signal(libc::SIGINT);
    let out = fsbench.wait();
    out.assert_code(130).assert_no_panic();
    assert!(out.stderr.contains("interrupted"), "{out}");
    targets.assert_clean();
}

/// Ctrl-C after the first workload finished: the run exits 130, its
/// scratch data is gone, and what finished is saved (without an end time,
/// which marks it partial) where the run says.
#[test]
fn an_interrupted_run_saves_what_finished() {
    let Some(mnt) = TmpfsMount::new("256m") else {
        return;
    };
    let sentinel = Sentinel::plant(mnt.path());
    let dir = tempfile::tempdir().unwrap();
    let suite = write_suite(
        dir.path(),
        "[[workload]]\nkind = \"meta\"\nlabel = \"first\"\nargs = \"-n 200\"\n\n\
         [[workload]]\nkind = \"io\"\nlabel = \"long\"\nargs = \"-s 8m --duration 60s\"\n",
    );
    let save_dir = dir.path().join("results");
    let running = Running::spawn(&[
        "run",
        "--suite",
        suite.to_str().unwrap(),
        "--target",
        &format!("a={}", mnt.arg()),
        "--save-dir",
        save_dir.to_str().unwrap(),
    ]);
    // The io workload's data file exists once the first workload is over.
    let io_file = || {
        scratch_dirs(mnt.path())
            .iter()
            .flat_map(|top| scratch_dirs(top))
            .any(|nested| nested.join("io.dat").exists())
    };
    wait_until(Duration::from_secs(60), "the second workload", io_file);
    running.signal(libc::SIGINT);
    let out = running.wait();
    out.assert_code(130).assert_no_panic();
    let saved: Vec<PathBuf> = std::fs::read_dir(&save_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(saved.len(), 1, "{out}");
    assert!(
        out.stderr.contains(&saved[0].display().to_string()),
        "says where\n{out}"
    );
    let record = read_json(&saved[0]);
    assert!(record["finished"].is_null(), "marked partial: {record}");
    let workloads = record["targets"][0]["workloads"].as_array().unwrap();
    assert_eq!(workloads.len(), 1, "{record}");
    assert_eq!(workloads[0]["label"], "first");
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

/// The default target `.` is recorded, and named, by the absolute path it
/// was.
#[test]
fn the_current_directory_is_recorded_by_its_absolute_path() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let suite = write_suite(
        dir.path(),
        "[[workload]]\nkind = \"meta\"\nargs = \"-n 50 --ops create\"\n",
    );
    let json = dir.path().join("r.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fsbench"))
        .current_dir(mnt.path())
        .args(["run", "--no-save", "--suite"])
        .arg(&suite)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let record = read_json(&json);
    assert_eq!(record["targets"][0]["path"], mnt.arg());
    // Named by the directory "." is, so every report says which it was.
    assert_eq!(record["targets"][0]["name"], mnt.arg());
}

/// `--precision`: the suite repeats from 3 repetitions on until every
/// headline metric is precise enough (or --max-repeat), and the result says
/// how many ran and why they stopped.
#[test]
fn precision_stops_between_the_minimum_and_max_repeat_and_says_why() {
    let Some(targets) = two_targets() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let suite = write_suite(
        dir.path(),
        r#"
description = "one io job"
repeat = 1

[[workload]]
kind = "io"
label = "rand-read"
args = "-s 8m -b 4k --read 100 --duration 0.4s --interval 0.2s --warmup 0"
"#,
    );
    let json = dir.path().join("run.json");
    let mut args = run_args(&suite, &["--precision", "50%", "--max-repeat", "4"]);
    args.extend(targets.args());
    args.extend(["--json".into(), json.display().to_string()]);
    let out = run(&args);
    out.assert_success().assert_no_panic();
    targets.assert_clean();

    let record = read_json(&json);
    let stopping = &record["stopping"];
    let repetitions = stopping["repetitions"].as_u64().unwrap();
    assert!((3..=4).contains(&repetitions), "{stopping}");
    assert_eq!(stopping["max_repeat"], 4, "{stopping}");
    assert_eq!(stopping["precision"], 0.5, "{stopping}");
    let reason = stopping["reason"].as_str().unwrap();
    let settled = reason.starts_with("every headline metric within ±50 % (95 % CI)");
    let exhausted = reason.starts_with("--max-repeat 4 reached: ");
    assert!(settled || (exhausted && repetitions == 4), "{reason}");
    for target in record["targets"].as_array().unwrap() {
        let results = target["workloads"].as_array().unwrap();
        assert_eq!(results.len() as u64, repetitions, "{}", target["name"]);
        let last = results.last().unwrap()["repetition"].as_u64().unwrap();
        assert_eq!(last + 1, repetitions);
    }
    let line = format!("fsbench: {repetitions} repetitions: {reason}");
    assert!(out.stderr.contains(&line), "{out}");
}

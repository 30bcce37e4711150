//! Where `fsbench run` saves its result by default (the data home, never
//! the directory it is started from) and `fsbench results`, which lists
//! the saved runs whatever else the directory holds.
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{
    FSBENCH, Output, Running, read_json, run, scratch_dirs, tmpfs_with_sentinel, wait_until,
};

/// A suite of one bonnie file test: a second or so.
const TINY_SUITE: &str = "description = \"tiny\"\nrepeat = 2\n\n[[workload]]\n\
kind = \"bonnie\"\nargs = \"-s 0 -n 1 -r 0\"\n";

/// fsbench started in `cwd` with only the data-home variables given set
/// (neither inherited from the test's environment).
fn fsbench_in(cwd: &Path, vars: &[(&str, &Path)], args: &[&str]) -> Output {
    let mut command = Command::new(FSBENCH);
    command
        .current_dir(cwd)
        .env_remove("HOME")
        .env_remove("XDG_DATA_HOME")
        .args(args);
    for (name, value) in vars {
        command.env(name, value);
    }
    Running::spawn_command(&mut command, format!("fsbench {}", args.join(" "))).wait()
}

/// Two quick io entries and a slower third, twice: a run killed once the
/// first two are saved is killed inside the third.
const KILLED_SUITE: &str = "description = \"killed\"\nrepeat = 2\n\
[[workload]]\nkind = \"io\"\nlabel = \"first\"\n\
args = \"-s 1m --duration 0.3s -b 64k --warmup 0\"\n\
[[workload]]\nkind = \"io\"\nlabel = \"second\"\n\
args = \"-s 1m --duration 0.3s -b 64k --warmup 0\"\n\
[[workload]]\nkind = \"io\"\nlabel = \"third\"\n\
args = \"-s 1m --duration 3s -b 64k --warmup 0\"\n";

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    entries.map(|e| e.unwrap().path()).collect()
}

fn entries(dir: &Path) -> usize {
    std::fs::read_dir(dir).unwrap().count()
}

#[test]
fn a_run_is_saved_in_the_data_home_and_listed() {
    let cwd = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let suites = tempfile::tempdir().unwrap();
    let suite = suites.path().join("tiny.toml");
    std::fs::write(&suite, TINY_SUITE).unwrap();
    let vars = [("XDG_DATA_HOME", data.path()), ("HOME", home.path())];
    let (a_arg, b_arg) = (
        format!("a={}", a.path().display()),
        format!("b={}", b.path().display()),
    );
    let suite_arg = suite.to_str().unwrap();
    let out = fsbench_in(
        cwd.path(),
        &vars,
        &[
            "run", "--suite", suite_arg, "-t", &a_arg, "-t", &b_arg, "--repeat", "2",
        ],
    );
    out.assert_success();
    let results = data.path().join("fsbench/results");
    let saved = json_files(&results);
    assert_eq!(saved.len(), 1, "{out}");
    let saved = &saved[0];
    assert!(
        out.stderr
            .contains(&format!("result saved to {}", saved.display())),
        "{out}"
    );
    assert_eq!(read_json(saved)["suite"], suite_arg);
    assert_eq!(entries(cwd.path()), 0, "nothing in the current directory");
    assert_eq!(entries(home.path()), 0, "XDG_DATA_HOME wins over HOME");

    let listed = fsbench_in(cwd.path(), &vars, &["results"]);
    listed.assert_success();
    let name = saved.file_name().unwrap().to_str().unwrap();
    for needle in [name, "tiny.toml", "a, b", "local time"] {
        assert!(listed.stdout.contains(needle), "{needle}\n{listed}");
    }
    assert!(listed.stdout.lines().all(|l| l.chars().count() <= 100));

    let machine = fsbench_in(cwd.path(), &vars, &["results", "--json", "-"]);
    machine.assert_success();
    let listing: serde_json::Value = serde_json::from_str(&machine.stdout).unwrap();
    let run = &listing["runs"][0];
    assert_eq!(run["suite"], suite_arg);
    assert_eq!(run["targets"], serde_json::json!(["a", "b"]));
    assert_eq!(run["repetitions"], 2);
    assert_eq!(run["complete"], true);
    assert!(run["verdict"].as_str().unwrap().starts_with("b"), "{run}");

    let last = fsbench_in(cwd.path(), &vars, &["results", "--last"]);
    last.assert_success();
    assert_eq!(last.stdout.trim_end(), saved.to_str().unwrap());
    let report = fsbench_in(cwd.path(), &vars, &["report", last.stdout.trim_end()]);
    report.assert_success();
    assert_eq!(entries(cwd.path()), 0, "{report}");
}

#[test]
fn files_that_are_not_whole_results_are_listed_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-two-targets.json");
    let text = std::fs::read_to_string(fixture).unwrap();
    std::fs::write(dir.path().join("good.json"), &text).unwrap();
    let mut partial: serde_json::Value = serde_json::from_str(&text).unwrap();
    partial["finished"] = serde_json::Value::Null;
    std::fs::write(dir.path().join("partial.json"), partial.to_string()).unwrap();
    // A result cut in two, as a write without the atomic rename would
    // leave it after a power cut, and the temporary file of a save a crash
    // cut short.
    std::fs::write(dir.path().join("bad.json"), &text[..text.len() / 2]).unwrap();
    std::fs::write(dir.path().join(".good.json.fsbench-tmp"), &text[..99]).unwrap();
    std::fs::write(dir.path().join("report.txt"), "PostMark's report\n").unwrap();
    let args = ["results", "--dir", dir.path().to_str().unwrap()];
    let out = fsbench_in(dir.path(), &[], &args);
    out.assert_success();
    for needle in [
        "good.json",
        "partial.json",
        "bad.json",
        "unreadable",
        "incomplete",
        "1 other file",
    ] {
        assert!(out.stdout.contains(needle), "{needle}\n{out}");
    }
    let cut_short: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains("cut short"))
        .collect();
    assert_eq!(cut_short.len(), 1, "{out}");
    assert!(cut_short[0].contains(".good.json.fsbench-tmp"), "{out}");
    let last = fsbench_in(dir.path(), &[], &["results", "--last", "--dir", args[2]]);
    last.assert_success();
    assert!(last.stdout.trim_end().ends_with("good.json"), "{last}");
}

#[test]
fn no_saved_results_is_said_not_failed() {
    let home = tempfile::tempdir().unwrap();
    let vars = [("HOME", home.path())];
    let out = fsbench_in(home.path(), &vars, &["results"]);
    out.assert_success();
    let expected = home.path().join(".local/share/fsbench/results");
    assert_eq!(
        out.stdout.trim_end(),
        format!("no saved results in {}", expected.display())
    );
    let empty = tempfile::tempdir().unwrap();
    let dir = empty.path().to_str().unwrap();
    let out = fsbench_in(home.path(), &vars, &["results", "--dir", dir]);
    out.assert_success();
    assert!(out.stdout.starts_with("no saved results in "), "{out}");
    let out = fsbench_in(home.path(), &vars, &["results", "--last", "--dir", dir]);
    out.assert_error(1, &["no complete saved result in"]);
    let file = empty.path().join("file");
    std::fs::write(&file, "").unwrap();
    let out = fsbench_in(
        home.path(),
        &vars,
        &["results", "--dir", file.to_str().unwrap()],
    );
    out.assert_error(2, &["cannot read the results directory"]);
}

#[test]
fn a_run_refused_before_measuring_leaves_no_results_directory() {
    let home = tempfile::tempdir().unwrap();
    let missing = home.path().join("missing");
    let out = fsbench_in(
        home.path(),
        &[("HOME", home.path())],
        &["run", "-t", missing.to_str().unwrap()],
    );
    out.assert_error(2, &["does not exist"]);
    assert_eq!(entries(home.path()), 0, "{out}");
}

/// The results a saved run holds, in the order they were measured.
fn saved_results(path: &Path) -> Vec<serde_json::Value> {
    let run = read_json(path);
    run["targets"][0]["workloads"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The run's saved file, once it holds `count` results; None before.
fn saved_with(dir: &Path, count: usize) -> Option<PathBuf> {
    // Not a save's temporary file (hidden): the result itself.
    let is_result = |path: &PathBuf| !path.file_name().unwrap().to_string_lossy().starts_with('.');
    let mut files = std::fs::read_dir(dir).ok()?.flatten().map(|e| e.path());
    let file = files.find(is_result)?;
    let held = std::fs::read_to_string(&file)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())?;
    let results = held["targets"][0]["workloads"].as_array()?.len();
    (results >= count).then_some(file)
}

/// kill -9 after two finished workloads: the saved file is a valid,
/// incomplete result holding both; `fsbench results` says so; `fsbench
/// clean` removes the scratch directory; `--resume` measures the rest into
/// the same file, the first two results untouched, and the precision rule
/// still decides how many repetitions run (2 or 3: whole ones).
#[test]
fn a_killed_run_keeps_what_it_measured_and_resume_finishes_it() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("killed.toml");
    std::fs::write(&suite, KILLED_SUITE).unwrap();
    let results = dir.path().join("results");
    let target = format!("t={}", mnt.arg());
    let (suite_arg, results_arg) = (suite.to_str().unwrap(), results.to_str().unwrap());
    let args = [
        "run",
        "--suite",
        suite_arg,
        "-t",
        &target,
        "--save-dir",
        results_arg,
        "-q",
        "--precision",
        "5%",
        "--repeat",
        "2",
        "--max-repeat",
        "3",
    ];
    let mut fsbench = Running::spawn(&args);
    let mut file = PathBuf::new();
    wait_until(Duration::from_secs(60), "two results saved", || {
        assert!(fsbench.is_running(), "the run ended before it was killed");
        saved_with(&results, 2).map(|found| file = found).is_some()
    });
    fsbench.signal(libc::SIGKILL);
    let out = fsbench.wait();
    assert_eq!(out.status.code(), None, "killed by a signal\n{out}");

    let before = read_json(&file);
    assert_eq!(before["kind"], "fsbench-result");
    assert!(before["finished"].is_null(), "{before}");
    let kept = saved_results(&file);
    let labels: Vec<&str> = kept.iter().map(|w| w["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["first", "second"], "the third was in flight");

    let listed = run(&["results", "--dir", results_arg]);
    listed.assert_success();
    let name = file.file_name().unwrap().to_str().unwrap();
    assert!(listed.stdout.contains(name), "{listed}");
    assert!(listed.stdout.contains("incomplete"), "{listed}");
    run(&["results", "--dir", results_arg, "--last"])
        .assert_error(1, &["no complete saved result"]);

    run(&["clean", &mnt.arg()]).assert_success();
    assert!(scratch_dirs(mnt.path()).is_empty());
    sentinel.assert_intact();

    let file_arg = file.to_str().unwrap();
    let resumed = run(&["run", "--resume", file_arg]);
    resumed.assert_success();
    assert!(
        resumed
            .stderr
            .contains(&format!("result saved to {file_arg}")),
        "{resumed}"
    );
    let after = read_json(&file);
    assert!(after["finished"].is_string(), "{after}");
    assert_eq!(after["run_id"], before["run_id"]);
    let finished = saved_results(&file);
    let mut measured: Vec<(u64, &str)> = finished
        .iter()
        .map(|w| {
            (
                w["repetition"].as_u64().unwrap(),
                w["label"].as_str().unwrap(),
            )
        })
        .collect();
    measured.sort();
    let repetitions = after["stopping"]["repetitions"].as_u64().unwrap();
    assert!((2..=3).contains(&repetitions), "{}", after["stopping"]);
    let each = ["first", "second", "third"];
    let expected: Vec<(u64, &str)> = (0..repetitions)
        .flat_map(|r| each.map(|l| (r, l)))
        .collect();
    assert_eq!(measured, expected, "every workload once per repetition");
    assert_eq!(
        finished[..2],
        kept[..],
        "the results before the kill are kept as they were"
    );
    assert_eq!(
        json_files(&results),
        [file.clone()],
        "one file, resumed in place"
    );
    assert!(scratch_dirs(mnt.path()).is_empty());
    sentinel.assert_intact();

    let listed = run(&["results", "--dir", results_arg, "--last"]);
    listed.assert_success();
    assert_eq!(listed.stdout.trim_end(), file_arg);
    run(&["run", "--resume", file_arg]).assert_error(2, &["complete", "nothing to resume"]);
}

/// A single-workload command's `--json FILE` is saved as it goes too:
/// killed after a repetition, the file holds it, without an end time.
#[test]
fn a_killed_single_command_keeps_its_json_so_far() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("io.json");
    let target = mnt.arg();
    let args = [
        "io",
        &target,
        "-s",
        "8m",
        "--duration",
        "1s",
        "--interval",
        "0.5s",
        "--repeat",
        "20",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ];
    let mut fsbench = Running::spawn(&args);
    wait_until(Duration::from_secs(60), "a repetition saved", || {
        assert!(fsbench.is_running(), "the run ended before it was killed");
        saved_with(dir.path(), 1).is_some()
    });
    fsbench.signal(libc::SIGKILL);
    let out = fsbench.wait();
    assert_eq!(out.status.code(), None, "killed by a signal\n{out}");
    let kept = read_json(&json);
    assert!(kept["finished"].is_null(), "{kept}");
    let results = saved_results(&json);
    assert!(!results.is_empty() && results.len() < 20, "{kept}");
    assert_eq!(results[0]["repetition"], 0);
    run(&["clean", &mnt.arg()]).assert_success();
    assert!(scratch_dirs(mnt.path()).is_empty());
    sentinel.assert_intact();
}

/// A PostMark session's `--json FILE` follows the same lifecycle: each
/// `run` saved as it ends, without an end time while the session goes on,
/// so killed in its second run the file holds the first, incomplete.
#[test]
fn a_killed_postmark_session_keeps_its_runs_so_far_as_incomplete() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("256m") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("pm.json");
    // Beside, not in, the directory the saved file is looked for in.
    let configs = tempfile::tempdir().unwrap();
    let config = configs.path().join("pm.cfg");
    let session = format!(
        "set location {}\nset number 200\nset transactions 200\nrun\nset transactions 100000000\nrun\nquit\n",
        mnt.path().display()
    );
    std::fs::write(&config, session).unwrap();
    let args = [
        "postmark",
        config.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ];
    let mut fsbench = Running::spawn(&args);
    wait_until(Duration::from_secs(60), "the first run saved", || {
        assert!(
            fsbench.is_running(),
            "the session ended before it was killed"
        );
        saved_with(dir.path(), 1).is_some()
    });
    fsbench.signal(libc::SIGKILL);
    let out = fsbench.wait();
    assert_eq!(out.status.code(), None, "killed by a signal\n{out}");
    let kept = read_json(&json);
    assert!(kept["finished"].is_null(), "{kept}");
    assert_eq!(saved_results(&json).len(), 1, "{kept}");
    run(&["clean", &mnt.arg()]).assert_success();
    assert!(scratch_dirs(mnt.path()).is_empty());
    sentinel.assert_intact();
}

/// What `--resume` cannot finish is refused in one line, exit 2, before
/// anything is measured: a complete run, another command's, one without
/// its suite, targets that are gone, and files that are not results.
#[test]
fn resume_refuses_what_it_cannot_finish() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-two-targets.json");
    let text = std::fs::read_to_string(fixture).unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let edited = |name: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        let mut run: serde_json::Value = serde_json::from_str(&text).unwrap();
        run["finished"] = serde_json::Value::Null;
        edit(&mut run);
        write(name, &run.to_string())
    };
    let command = |line: &str| serde_json::json!(line.split(' ').collect::<Vec<_>>());
    let cases = [
        (write("complete.json", &text), vec!["this run is complete"]),
        (
            edited("bonnie.json", &|run| {
                run["command"] = command("fsbench bonnie -d /tmp")
            }),
            vec!["made by `fsbench bonnie`"],
        ),
        (
            edited("older.json", &|run| {
                run["command"] = command("fsbench run -t /tmp")
            }),
            vec!["does not hold its suite", "cannot be rebuilt"],
        ),
        (
            edited("gone.json", &|run| {
                run["command"] = command("fsbench run -t /nonexistent/fsbench-gone");
                run["suite"] = "s.toml".into();
                run["suite_text"] = TINY_SUITE.into();
            }),
            vec!["/nonexistent/fsbench-gone", "does not exist"],
        ),
        (
            write("fio.json", r#"{"fio version": "fio-3.36", "jobs": []}"#),
            vec!["not an fsbench result"],
        ),
        (
            write(
                "newer.json",
                &text.replacen("\"schema_version\": 1", "\"schema_version\": 9", 1),
            ),
            vec!["schema version 9 is newer"],
        ),
        (
            write("truncated.json", &text[..text.len() / 2]),
            vec!["truncated, not a whole result"],
        ),
    ];
    for (file, needles) in &cases {
        let out = run(&["run", "--resume", file]);
        out.assert_error(2, needles);
        assert!(out.stdout.is_empty(), "{out}");
    }
    let with_more = run(&["run", "--resume", &cases[0].0, "-t", "/tmp"]);
    with_more.assert_code(2).assert_no_panic();
}

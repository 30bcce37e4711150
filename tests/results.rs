//! Where `fsbench run` saves its result by default (the data home, never
//! the directory it is started from) and `fsbench results`, which lists
//! the saved runs whatever else the directory holds.
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{FSBENCH, Output, Running, read_json};

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
    std::fs::write(dir.path().join("bad.json"), "{ truncated").unwrap();
    std::fs::write(dir.path().join("report.txt"), "PostMark's report\n").unwrap();
    let args = ["results", "--dir", dir.path().to_str().unwrap()];
    let out = fsbench_in(dir.path(), &[], &args);
    out.assert_success();
    for needle in [
        "good.json",
        "partial.json",
        "bad.json",
        "unreadable",
        "1 other file",
    ] {
        assert!(out.stdout.contains(needle), "{needle}\n{out}");
    }
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

//! What a newcomer meets first: a run that says how far it got where
//! stderr is a log, tables that keep to `COLUMNS`, a resume command whole
//! on its line, TOML errors that point at the place, a `--help` that
//! names every built-in suite, hints that name what to type, and reports
//! that say when a result is partial.
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{FSBENCH, Running, Sentinel, TmpfsMount, run};

const TWO_TARGETS: &str = include_str!("fixtures/run-two-targets.json");

/// The lines fsbench's progress printed: "fsbench: [N/M] ...".
fn step_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|line| line.starts_with("fsbench: ["))
        .collect()
}

#[test]
fn off_a_terminal_each_finished_step_is_a_plain_line() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let sentinel = Sentinel::plant(mnt.path());
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("two.toml");
    let files = "kind = \"bonnie\"\nargs = \"-s 0 -n 1 -r 0\"\n";
    let text = format!("[[workload]]\nlabel = \"a\"\n{files}[[workload]]\nlabel = \"b\"\n{files}");
    std::fs::write(&suite, text).unwrap();
    let target = format!("t={}", mnt.arg());
    let args = ["run", "--suite", suite.to_str().unwrap(), "-t", &target];
    let out = run(&[&args[..], &["--no-save", "--repeat", "2"]].concat());
    out.assert_success().assert_no_panic();
    let lines = step_lines(&out.stderr);
    let expected = [
        "[1/4] a on t, repetition 1/2: done in ",
        "[2/4] b on t, repetition 1/2: done in ",
        "[3/4] a on t, repetition 2/2: done in ",
        "[4/4] b on t, repetition 2/2: done in ",
    ];
    assert_eq!(lines.len(), expected.len(), "{out}");
    for (line, start) in lines.iter().zip(expected) {
        let rest = line.strip_prefix("fsbench: ").unwrap();
        assert!(rest.starts_with(start) && rest.ends_with(" s"), "{out}");
    }
    assert!(!out.stderr.contains('\x1b'), "no escape codes\n{out}");
    assert!(!out.stderr.contains('\r'), "no redrawn line\n{out}");
    // Quiet is quiet.
    let quiet = run(&[&args[..], &["--no-save", "-q"]].concat());
    quiet.assert_success();
    assert!(step_lines(&quiet.stderr).is_empty(), "{quiet}");
    sentinel.assert_intact();
}

/// A results directory holding one run of `fsbench run` killed partway.
fn results_with_a_killed_run() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("a-results-directory-with-a-long-name-")
        .tempdir()
        .unwrap();
    let mut run: serde_json::Value = serde_json::from_str(TWO_TARGETS).unwrap();
    run["finished"] = serde_json::Value::Null;
    run["command"] = serde_json::json!(["fsbench", "run", "-t", "a=/a", "-t", "b=/b"]);
    let file = dir.path().join("killed-run.json");
    std::fs::write(&file, serde_json::to_string(&run).unwrap()).unwrap();
    (dir, file)
}

fn with_columns(args: &[&str], columns: &str) -> common::Output {
    let mut command = Command::new(FSBENCH);
    command.args(args).env("COLUMNS", columns);
    Running::spawn_command(&mut command, format!("COLUMNS={columns} fsbench {args:?}")).wait()
}

/// The lines of a comfy-table table.
fn table_lines(text: &str) -> Vec<&str> {
    let drawn = |line: &&str| line.starts_with(['┌', '│', '├', '└', '╞', '╭', '╰']);
    text.lines().filter(drawn).collect()
}

#[test]
fn columns_sizes_the_tables_and_the_resume_command_stays_whole() {
    let (dir, file) = results_with_a_killed_run();
    let args = ["results", "--dir", dir.path().to_str().unwrap()];
    let wide = run(&args);
    wide.assert_success();
    let widest = |text: &str| {
        let lines = table_lines(text);
        assert!(!lines.is_empty(), "a table\n{text}");
        lines.iter().map(|l| l.chars().count()).max().unwrap()
    };
    assert!(widest(&wide.stdout) > 60, "{wide}");
    for columns in ["60", "72"] {
        let narrow = with_columns(&args, columns);
        narrow.assert_success();
        let width: usize = columns.parse().unwrap();
        assert!(widest(&narrow.stdout) <= width, "{narrow}");
        // The command to copy is a line of its own, whole.
        let command = format!("fsbench run --resume {}", file.display());
        assert!(narrow.stdout.lines().any(|l| l == command), "{narrow}");
        assert!(
            table_lines(&narrow.stdout)
                .iter()
                .all(|l| !l.contains("--resume")),
            "{narrow}"
        );
    }
    // The report's tables too.
    let report = with_columns(&["report", file.to_str().unwrap()], "70");
    report.assert_success();
    assert!(widest(&report.stdout) <= 70, "{report}");
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn toml_errors_give_the_file_the_line_and_the_column() {
    let dir = tempfile::tempdir().unwrap();
    let suite = write(
        dir.path(),
        "suite.toml",
        "[[workload]]\nkind = \"io\"\n  threads = 4\n",
    );
    let out = run(&["run", "--no-save", "--suite", &suite, "-t", "/nonexistent"]);
    let line = out.assert_error(2, &[]);
    assert!(
        line.starts_with(&format!(
            "fsbench: error: suite {suite}:3:3: unknown field `threads`"
        )),
        "{out}"
    );
    let configs = write(
        dir.path(),
        "configs.toml",
        "[[config]]\nname = \"a\"\nmkfs = \"mkfs.ext4\"\noptions = [\n",
    );
    let out = run(&[
        "run",
        "--no-save",
        "--configs",
        &configs,
        "--images",
        "/nonexistent",
    ]);
    let line = out.assert_error(2, &[]);
    assert!(
        line.starts_with(&format!("fsbench: error: --configs {configs}:4:")),
        "{out}"
    );
}

#[test]
fn run_help_names_every_built_in_suite() {
    let out = run(&["run", "--help"]);
    out.assert_success();
    // The --suite option's paragraph: from its line to the next option's.
    let lines: Vec<&str> = out.stdout.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim_start().starts_with("--suite"))
        .unwrap_or_else(|| panic!("no --suite\n{out}"));
    let end = lines[start + 1..]
        .iter()
        .position(|l| l.trim_start().starts_with('-'))
        .map_or(lines.len(), |at| start + 1 + at);
    let paragraph = lines[start..end].join(" ");
    let names = fsbench::suite::builtin_names();
    assert!(names.contains(&"safety") && names.contains(&"synclog"));
    for name in names {
        assert!(paragraph.contains(name), "{name} missing: {paragraph}");
    }
}

#[test]
fn two_targets_of_one_name_are_told_a_name_that_is_free() {
    let out = run(&["run", "--no-save", "-t", "a=/x", "-t", "a=/y"]);
    let line = out.assert_error(2, &["two targets are named 'a'"]);
    assert!(line.ends_with("e.g. --target a2=/y"), "{out}");
    let out = run(&[
        "run",
        "--no-save",
        "-t",
        "a=/x",
        "-t",
        "a2=/z",
        "-t",
        "a=/y",
    ]);
    let line = out.assert_error(2, &[]);
    assert!(line.ends_with("e.g. --target a3=/y"), "{out}");
    let out = run(&["run", "--no-save", "-t", "r=/x", "--reference", "r=/y"]);
    let line = out.assert_error(2, &[]);
    assert!(line.ends_with("e.g. --reference r2=/y"), "{out}");
}

#[test]
fn an_incomplete_result_says_so_at_the_top_of_every_report() {
    let (_dir, file) = results_with_a_killed_run();
    let file = file.to_str().unwrap();
    let complete = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(complete.path(), TWO_TARGETS).unwrap();
    let complete = complete.path().to_str().unwrap();
    for (format, marker, top) in [
        ("terminal", "INCOMPLETE: the run did not finish", 3),
        ("markdown", "> **Incomplete**: the run did not finish", 3),
        (
            "html",
            "<strong>Incomplete</strong>: the run did not finish",
            200,
        ),
    ] {
        let out = run(&["report", file, "--format", format]);
        out.assert_success();
        let at = out.stdout.lines().position(|l| l.contains(marker));
        assert!(at.is_some_and(|at| at < top), "{format}\n{out}");
        let words = out.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words.contains("these are the 18 results it measured"),
            "{out}"
        );
        let whole = run(&["report", complete, "--format", format]);
        whole.assert_success();
        assert!(
            !whole.stdout.to_lowercase().contains("incomplete"),
            "{whole}"
        );
    }
}

#[test]
fn a_target_without_room_is_told_the_flag_that_sizes_the_run() {
    let Some(mnt) = TmpfsMount::new("2m") else {
        return;
    };
    let target = format!("t={}", mnt.arg());
    let out = run(&["run", "--no-save", "-t", &target]);
    let line = out.assert_error(2, &["not enough"]);
    assert!(
        line.contains("use a smaller --scale (this run's is 1)"),
        "{out}"
    );
    let out = run(&["run", "--no-save", "-t", &target, "--scale", "0.5"]);
    let line = out.assert_error(2, &["not enough"]);
    assert!(line.contains("--scale (this run's is 0.5)"), "{out}");
}

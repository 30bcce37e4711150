//! What a newcomer meets first: a run that says how far it got where
//! stderr is a log, tables that keep to `COLUMNS`, a resume command whole
//! on its line, TOML errors that point at the place, a `--help` that
//! names every built-in suite, hints that name what to type, and reports
//! that say when a result is partial.
mod common;

use std::path::Path;

use common::{Sentinel, TmpfsMount, run};

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

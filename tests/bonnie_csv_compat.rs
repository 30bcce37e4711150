//! bonnie++ 2.00a's own report tools accept fsbench's CSV: bon_csv2html
//! and bon_csv2txt (Debian's bonnie++ package) read single lines, `-x`
//! output with its header line, and lines with skipped test groups.
mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{TmpfsMount, assert_no_scratch_left, bonnie_args, require_tool, run};

/// Runs `fsbench bonnie -d MNT ARGS` and returns its stdout (CSV lines).
fn csv_of(mnt: &TmpfsMount, args: &[&str]) -> String {
    let out = run(&bonnie_args(&mnt.arg(), args));
    out.assert_success().assert_no_panic();
    assert_no_scratch_left(mnt.path());
    out.stdout
}

/// [`csv_of`] on a fresh 64 MiB tmpfs; None (skipped) when not root.
fn csv_on_tmpfs(args: &[&str]) -> Option<String> {
    let mnt = TmpfsMount::new("64m")?;
    Some(csv_of(&mnt, args))
}

struct ToolOutput {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl ToolOutput {
    /// The input and all the tool printed, for assertion messages.
    fn context(&self, input: &str) -> String {
        format!(
            "input:\n{input}\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        )
    }
}

/// Pipes `input` into `tool` and captures what it prints.
fn pipe_into(tool: &Path, input: &str) -> ToolOutput {
    let mut child = Command::new(tool)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", tool.display()));
    let mut stdin = child.stdin.take().unwrap();
    let text = input.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    ToolOutput {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// bon_csv2html: exit 0, a table with one row per data line (the bold
/// machine name starts each row), nothing rejected.
fn check_html(input: &str, machines: &[&str]) {
    let out = pipe_into(&require_tool("bon_csv2html"), input);
    let context = out.context(input);
    assert_eq!(out.code, Some(0), "bon_csv2html failed\n{context}");
    assert!(out.stdout.contains("<table"), "no table\n{context}");
    assert!(
        !out.stderr.contains("Can't process"),
        "lines rejected\n{context}"
    );
    for machine in machines {
        let rows = out.stdout.matches(&format!(">{machine}<")).count();
        let expected = input
            .lines()
            .filter(|l| l.starts_with(&format!("1.98,fsbench,{machine},")))
            .count();
        assert_eq!(rows, expected, "rows for {machine}\n{context}");
    }
}

/// bon_csv2txt: exit 0, a row per data line (it truncates names so that
/// name and label fit 19 columns: keep test names short), and no data line refused with
/// "Expected 1.98" (it refuses the header line of `-x`, as it does for
/// bonnie++'s own header line).
fn check_txt(input: &str, machines: &[&str]) {
    let out = pipe_into(&require_tool("bon_csv2txt"), input);
    let context = out.context(input);
    assert_eq!(out.code, Some(0), "bon_csv2txt failed\n{context}");
    let refused: Vec<&str> = out
        .stderr
        .split("Expected 1.98")
        .skip(1)
        .filter(|rest| !rest.starts_with(", got format_version from format_version,"))
        .collect();
    assert!(refused.is_empty(), "data lines refused\n{context}");
    for machine in machines {
        assert!(
            out.stdout.lines().any(|l| l.starts_with(machine)),
            "no row for {machine}\n{context}"
        );
    }
}

/// Both of bonnie++'s report tools accept `input` with a row for each of
/// `machines`.
fn check_report_tools(input: &str, machines: &[&str]) {
    check_html(input, machines);
    check_txt(input, machines);
}

#[test]
fn single_csv_line_is_accepted() {
    let Some(csv) = csv_on_tmpfs(&[
        "-s", "8", "-f1", "-n", "1", "-r", "0", "-m", "single", "-z", "42", "-q",
    ]) else {
        return;
    };
    assert_eq!(csv.lines().count(), 1);
    check_report_tools(&csv, &["single"]);
    // The data row is labelled from fields 6-9, as bonnie++'s is.
    let txt = pipe_into(&require_tool("bon_csv2txt"), &csv).stdout;
    assert!(
        txt.lines()
            .any(|l| l.starts_with("single ") && l.contains(" 8M::8192:5 ")),
        "{txt}"
    );
}

#[test]
fn x2_output_with_header_line_is_accepted() {
    let Some(csv) = csv_on_tmpfs(&[
        "-s", "8", "-f1", "-n", "1", "-r", "0", "-m", "double", "-z", "1", "-x", "2",
    ]) else {
        return;
    };
    assert!(csv.starts_with("format_version,"), "{csv}");
    assert_eq!(csv.lines().count(), 3);
    check_report_tools(&csv, &["double"]);
}

#[test]
fn lines_with_skipped_test_groups_and_options_are_accepted() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let (size, files) = ("8:16k:100:2", "1:4k:1k:2");
    let runs: [&[&str]; 4] = [
        &["-s", "0", "-n", "1:-1", "-r", "0", "-m", "links", "-q"],
        &["-s", "8", "-f", "-n", "0", "-r", "0", "-m", "nofiles", "-q"],
        &[
            "-s", size, "-f1", "-n", files, "-r", "0", "-m", "sized", "-q",
        ],
        &["-s", "0", "-n", "1:-2::2", "-r", "0", "-m", "syml", "-q"],
    ];
    let csv: String = runs.iter().map(|args| csv_of(&mnt, args)).collect();
    assert_eq!(csv.lines().count(), 4, "{csv}");
    let machines = ["links", "nofiles", "sized", "syml"];
    check_report_tools(&csv, &machines);
}

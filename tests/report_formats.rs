//! Golden (snapshot) tests of every report format for a fixed result file
//! made from real runs (tests/fixtures/run-two-targets.json, see
//! tests/fixtures/README.md). A change of output shows as a diff; when it
//! is intended, regenerate the golden files with
//! `UPDATE_GOLDEN=1 cargo test --release --test report_formats`.
mod common;

use std::path::PathBuf;

use common::run;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn fixture_arg(name: &str) -> String {
    fixture(name).display().to_string()
}

/// `fsbench report run-two-targets.json EXTRA...` must print exactly the
/// golden file `golden` (or rewrite it under UPDATE_GOLDEN).
fn assert_golden(extra: &[&str], golden: &str) {
    let mut args = vec!["report".to_string(), fixture_arg("run-two-targets.json")];
    args.extend(extra.iter().map(|a| a.to_string()));
    let out = run(&args);
    out.assert_success().assert_no_panic();
    let path = fixture(golden);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &out.stdout).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with UPDATE_GOLDEN=1)", path.display()));
    if out.stdout != expected {
        let first_difference = out
            .stdout
            .lines()
            .zip(expected.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        panic!(
            "{golden} differs from the output, first at line {}:\n  expected: {:?}\n  actual:   {:?}\n{out}",
            first_difference + 1,
            expected.lines().nth(first_difference),
            out.stdout.lines().nth(first_difference),
        );
    }
}

#[test]
fn terminal_tables_match_golden() {
    assert_golden(&[], "run-two-targets.golden.txt");
}

#[test]
fn markdown_matches_golden() {
    assert_golden(&["--markdown"], "run-two-targets.golden.md");
}

#[test]
fn csv_matches_golden() {
    assert_golden(&["--csv"], "run-two-targets.golden.csv");
}

#[test]
fn csv_per_repetition_matches_golden() {
    assert_golden(
        &["--csv", "--repetitions"],
        "run-two-targets.golden-repetitions.csv",
    );
}

#[test]
fn terminal_with_other_baseline_matches_golden() {
    assert_golden(
        &["--baseline", "tmpfs-huge"],
        "run-two-targets.golden-baseline.txt",
    );
}

/// `--json -` re-serialises the result: the same JSON value as the input.
#[test]
fn json_is_the_result_itself() {
    let out = run(&[
        "report",
        &fixture_arg("run-two-targets.json"),
        "--json",
        "-",
    ]);
    out.assert_success();
    let original: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("run-two-targets.json")).unwrap())
            .unwrap();
    assert_eq!(without_fingerprints(&out.stdout), original);
    assert!(
        out.stdout.contains("\n  \"kind\": \"fsbench-result\""),
        "pretty-printed\n{out}"
    );
}

/// A result as JSON, each target's fingerprint taken out after checking
/// it is there: the fixture was saved before results carried them, and
/// reading it gives each target one, and changes nothing else.
fn without_fingerprints(text: &str) -> serde_json::Value {
    let mut result: serde_json::Value = serde_json::from_str(text).unwrap();
    for target in result["targets"].as_array_mut().unwrap() {
        let fingerprint = target.as_object_mut().unwrap().remove("fingerprint");
        assert!(fingerprint.is_some_and(|f| f["id"].is_string()), "{text}");
    }
    result
}

/// `fsbench report run-two-targets.json ARGS`, successful: its stdout.
fn report_stdout(args: &[&str]) -> String {
    let mut all = vec!["report".to_string(), fixture_arg("run-two-targets.json")];
    all.extend(args.iter().map(|a| a.to_string()));
    let out = run(&all);
    out.assert_success().assert_no_panic();
    out.stdout
}

/// `--format NAME` prints exactly what the flag it replaces prints.
#[test]
fn format_flag_equals_the_short_flags() {
    let pairs: [(&[&str], &[&str]); 4] = [
        (&["--format", "terminal"], &[]),
        (&["--format", "markdown"], &["--markdown"]),
        (&["--format", "csv"], &["--csv"]),
        (
            &["--format", "csv", "--repetitions"],
            &["--csv", "--repetitions"],
        ),
    ];
    for (format, flag) in pairs {
        assert_eq!(report_stdout(format), report_stdout(flag), "{format:?}");
    }
}

/// `--format json` is the result itself, which `fsbench report` reads
/// again: re-emitting that gives the same bytes, and reporting it the
/// same tables as the original.
#[test]
fn format_json_round_trips_through_report() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.json");
    let copy_arg = copy.display().to_string();
    let to_stdout = report_stdout(&["--format", "json"]);
    report_stdout(&["--format", "json", "-o", &copy_arg]);
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), to_stdout);
    let original: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("run-two-targets.json")).unwrap())
            .unwrap();
    assert_eq!(without_fingerprints(&to_stdout), original);
    let again = run(&["report", &copy_arg, "--format", "json"]);
    assert_eq!(again.assert_success().stdout, to_stdout, "{again}");
    let tables = run(&["report", &copy_arg, "--format", "markdown"]);
    assert_eq!(
        tables.assert_success().stdout,
        report_stdout(&["--markdown"])
    );
}

/// `--format html` writes to `-o FILE`, the same page as `--html FILE`.
#[test]
fn format_html_goes_to_the_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let [by_format, by_flag] = ["format.html", "flag.html"].map(|n| dir.path().join(n));
    let stdout = report_stdout(&["--format", "html", "-o", by_format.to_str().unwrap()]);
    assert_eq!(stdout, "");
    report_stdout(&["--html", by_flag.to_str().unwrap()]);
    let page = std::fs::read_to_string(&by_format).unwrap();
    assert_eq!(page, std::fs::read_to_string(&by_flag).unwrap());
    assert!(page.contains("<html"), "{page:.300}");
}

/// An unknown format, or --repetitions with a format other than CSV, is
/// one line naming the problem (and, for a format, the formats there are),
/// exit 2, nothing on stdout.
#[test]
fn bad_format_flags_are_one_line_errors() {
    let fixture = fixture_arg("run-two-targets.json");
    for (args, needles) in [
        (
            &["--format", "xml"][..],
            &["--format xml", "terminal, markdown, csv, html, json"][..],
        ),
        (
            &["--format", "markdown", "--repetitions"],
            &["--repetitions", "csv"],
        ),
    ] {
        let mut all = vec!["report", fixture.as_str()];
        all.extend(args);
        let out = run(&all);
        out.assert_error(2, needles);
        assert_eq!(out.stdout, "", "{out}");
    }
}

/// Every warning (flags and notes) reaches every text format, with the
/// footnote markers that refer to it.
#[test]
fn every_format_carries_the_warnings() {
    let flags = [
        "ran under 0.5 s: measured, but less precise",
        "data fits in RAM: likely served from the page cache",
    ];
    for format in [&[][..], &["--markdown"][..]] {
        let mut args = vec!["report", "tests/fixtures/run-two-targets.json"];
        args.extend(format);
        let out = run(&args);
        for flag in flags {
            assert!(out.stdout.contains(flag), "{flag:?} missing\n{out}");
        }
        assert!(
            out.stdout.contains("[1]") && out.stdout.contains("[2]"),
            "{out}"
        );
    }
    let csv = run(&["report", "tests/fixtures/run-two-targets.json", "--csv"]);
    assert!(csv.stdout.contains("too_short;fits_in_page_cache"), "{csv}");
}

/// The HTML format is dispatched to the HTML reporter and written to FILE.
#[test]
fn html_goes_to_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.html");
    let out = run(&[
        "report",
        &fixture_arg("run-two-targets.json"),
        "--html",
        &path.display().to_string(),
    ]);
    out.assert_success();
    assert_eq!(out.stdout, "", "{out}");
    let html = std::fs::read_to_string(&path).unwrap();
    assert!(
        html.contains("<html") && html.contains("tmpfs-huge"),
        "{html:.300}"
    );
}

/// A target's risk flags (from its environment record) come first in the
/// terminal and Markdown reports, before any table.
#[test]
fn risks_come_before_the_tables() {
    let mut record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("run-two-targets.json")).unwrap())
            .unwrap();
    let env = &mut record["targets"][1]["env"];
    env["risks"] = serde_json::json!([
        {"code": "data_writeback", "message": "data=writeback: stale blocks after a crash"}
    ]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("risky.json");
    std::fs::write(&path, record.to_string()).unwrap();
    let name = record["targets"][1]["name"].as_str().unwrap().to_string();
    for format in [None, Some("--markdown")] {
        let mut args = vec!["report".to_string(), path.display().to_string()];
        args.extend(format.map(str::to_string));
        let out = run(&args);
        out.assert_success();
        let risk = out
            .stdout
            .find("data=writeback: stale blocks after a crash")
            .unwrap_or_else(|| panic!("no risk line\n{out}"));
        let first_table = out.stdout.find("| target").or(out.stdout.find("│ target"));
        assert!(
            risk < first_table.unwrap(),
            "the risk must come first\n{out}"
        );
        assert!(
            out.stdout[..risk].contains(&name),
            "the risk names its target\n{out}"
        );
    }
}

//! `fsbench report` and `fsbench compare` on bad input (one line, exit 2)
//! and `compare` on runs whose metrics differ (listed, not an error).
mod common;

use std::path::{Path, PathBuf};

use common::run;

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

/// Writes `text` to a file in `dir`; returns its path.
fn file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The fixture with one top-level field replaced.
fn fixture_with(field: &str, value: serde_json::Value) -> String {
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("run-before.json")).unwrap())
            .unwrap();
    json[field] = value;
    json.to_string()
}

/// Each bad input fails alike in `report` and in `compare` (as either file).
fn assert_bad_input(path: &Path, needles: &[&str]) {
    let path = path.display().to_string();
    let good = fixture("run-before.json");
    for args in [
        vec!["report", path.as_str()],
        vec!["report", path.as_str(), "--markdown"],
        vec!["compare", good.as_str(), path.as_str()],
        vec!["compare", path.as_str(), good.as_str()],
    ] {
        let out = run(&args);
        out.assert_error(2, needles);
        assert_eq!(out.stdout, "", "{out}");
    }
}

#[test]
fn missing_file() {
    let dir = tempfile::tempdir().unwrap();
    assert_bad_input(&dir.path().join("nope.json"), &["cannot read", "nope.json"]);
}

#[test]
fn not_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(dir.path(), "run.csv", "1.98,2.00a,vm,1,...\n");
    assert_bad_input(&path, &["run.csv", "not JSON"]);
}

#[test]
fn json_of_another_kind() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(dir.path(), "package.json", r#"{"name": "left-pad"}"#);
    assert_bad_input(
        &path,
        &["package.json", "not an fsbench result", "no \"kind\""],
    );
    let path = file(
        dir.path(),
        "other.json",
        &fixture_with("kind", "vdbench".into()),
    );
    assert_bad_input(&path, &["other.json", "kind \"vdbench\""]);
}

#[test]
fn newer_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(
        dir.path(),
        "future.json",
        &fixture_with("schema_version", 99.into()),
    );
    assert_bad_input(&path, &["future.json", "schema version 99", "newer"]);
}

#[test]
fn malformed_result() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(
        dir.path(),
        "cut.json",
        &fixture_with("targets", "none".into()),
    );
    assert_bad_input(&path, &["cut.json", "malformed"]);
}

#[test]
fn unknown_baseline_lists_the_targets() {
    let out = run(&[
        "report",
        &fixture("run-two-targets.json"),
        "--baseline",
        "xfs",
    ]);
    out.assert_error(2, &["--baseline xfs", "tmpfs, tmpfs-huge"]);
}

#[test]
fn compare_needs_two_runs() {
    let out = run(&["compare", &fixture("run-before.json")]);
    out.assert_code(2).assert_no_panic();
    assert_eq!(out.stdout, "");
}

/// run-after.json has no file tests but a random-read pattern: the common
/// metrics are compared, the others listed as missing, exit 0.
#[test]
fn compare_lists_missing_metrics() {
    let out = run(&[
        "compare",
        &fixture("run-before.json"),
        &fixture("run-after.json"),
    ]);
    out.assert_success().assert_no_panic();
    let text = &out.stdout;
    assert!(text.contains("matched by position"), "{out}");
    for common in [
        "sequential write (MiB/s) ↑",
        "sequential rewrite (MiB/s) ↑",
        "sequential read (MiB/s) ↑",
        "random seeks (seeks/s) ↑",
    ] {
        // A row is two lines: the workload over the metric, the change
        // and the CI's lower bound on the first.
        let lines: Vec<&str> = text.lines().collect();
        let at = (1..lines.len())
            .find(|&i| lines[i].contains(&format!(" {common} ")))
            .unwrap_or_else(|| panic!("no row for {common}\n{out}"));
        let first = lines[at - 1];
        assert!(first.contains("bonnie") && first.contains('%'), "{first}");
    }
    // The list of what is missing is wrapped to the width.
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        text.contains(
            "tmpfs · bonnie: sequential create (files/s), sequential stat (files/s), \
             sequential delete (files/s), random create (files/s), random stat (files/s), \
             random delete (files/s): in run-before.json; missing in run-after.json"
        ),
        "{out}"
    );
    assert!(
        text.contains("tmpfs · 4k-rand-read: I/O rate (IO/s), throughput (MiB/s),"),
        "{out}"
    );
    assert!(
        text.contains("in run-after.json; missing in run-before.json"),
        "{out}"
    );
}

/// A run compared with itself changes by exactly 0 %, nowhere significant.
#[test]
fn compare_with_itself_is_no_change() {
    let path = fixture("run-two-targets.json");
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.json");
    std::fs::copy(&path, &copy).unwrap();
    let out = run(&["compare", &path, &copy.display().to_string()]);
    out.assert_success();
    let rows: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("│ tmpfs"))
        .collect();
    assert_eq!(
        rows.len(),
        2 * (10 + 6 + 6),
        "every metric of both targets\n{out}"
    );
    for row in rows {
        assert!(row.contains("+0.0% ") && !row.contains('*'), "{row}");
    }
    assert!(!out.stdout.contains("Not in every run"), "{out}");
}

#[test]
fn compare_writes_the_chart() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("change.svg");
    let out = run(&[
        "compare",
        &fixture("run-before.json"),
        &fixture("run-after.json"),
        "--svg",
        &svg.display().to_string(),
    ]);
    out.assert_success();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.contains("<svg") && text.contains("sequential write (MiB/s) ↑"),
        "{text:.300}"
    );
    assert!(
        text.contains("run-after.json vs run-before.json: change"),
        "the title names both runs: {text:.600}"
    );
    for entry in ["better", "worse", "not significant"] {
        assert!(text.contains(&format!("\n{entry}\n")), "legend {entry}");
    }
}

/// ext4 against the same ext4 with data=writeback and barriers off: the
/// lost safety is the first thing `compare` says, before any number.
#[test]
fn compare_says_first_what_a_configuration_can_now_lose() {
    let mkfs = ["mkfs.ext4", "-q", "-F"];
    let Some(safe) = common::LoopFs::new(&mkfs, "defaults", 64) else {
        return;
    };
    let risky = common::LoopFs::new(&mkfs, "data=writeback,barrier=0", 64).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let result = |fs: &common::LoopFs, name: &str| {
        let json = dir.path().join(name);
        let target = fs.path().to_str().unwrap();
        run(&[
            "meta",
            target,
            "-n",
            "300",
            "-q",
            "--json",
            json.to_str().unwrap(),
        ])
        .assert_success();
        json.to_str().unwrap().to_string()
    };
    let (a, b) = (result(&safe, "safe.json"), result(&risky, "risky.json"));
    let out = run(&["compare", &a, &b]);
    out.assert_success();
    let risk = out.stdout.find("RISK gained").expect(&out.stdout);
    let first_number = out.stdout.find("create (ops/s)").expect(&out.stdout);
    assert!(risk < first_number, "the risk comes first\n{}", out.stdout);
    assert!(out.stdout.contains("data=writeback"), "{}", out.stdout);
    assert!(out.stdout.contains("barrier"), "{}", out.stdout);
}

/// `compare`'s output, tables included, fits 100 columns when stdout is
/// not a terminal: two runs of two targets under long file names, the
/// later one faster (stars, verdicts, wide intervals).
#[test]
fn compare_fits_100_columns() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("run-two-targets.json")).unwrap();
    let before = file(dir.path(), "two-targets-before-the-change.json", &text);
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    for target in json["targets"].as_array_mut().unwrap() {
        for workload in target["workloads"].as_array_mut().unwrap() {
            for metric in workload["metrics"].as_array_mut().unwrap() {
                let value = metric["value"].as_f64().unwrap();
                metric["value"] = serde_json::json!(value * 1.5);
            }
        }
    }
    let after = file(
        dir.path(),
        "two-targets-after-the-change.json",
        &json.to_string(),
    );
    let out = run(&[
        "compare",
        &before.display().to_string(),
        &after.display().to_string(),
    ]);
    out.assert_success();
    assert!(out.stdout.contains("better"), "{out}");
    for line in out.stdout.lines() {
        assert!(
            line.chars().count() <= 100,
            "{} chars: {line}\n{out}",
            line.chars().count()
        );
    }
}

//! The terminal report on the fixture run: a row per metric and a column
//! per target within 100 columns, even with five targets; the baseline
//! marked once, in its column's header; metrics named as people say them,
//! with the better direction.
use std::path::Path;

use fsbench::analysis::summary::Summary;
use fsbench::report::Reporter;
use fsbench::report::terminal::{DEFAULT_WIDTH, Terminal};
use fsbench::result::RunResult;
use fsbench::results::load;
use serde_json::Value;

fn fixture_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-two-targets.json")
}

fn fixture() -> RunResult {
    load(&fixture_path()).unwrap()
}

/// The fixture's JSON, to be edited before it is read as a result.
fn fixture_value() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture_path()).unwrap()).unwrap()
}

fn terminal(run: &RunResult) -> String {
    Terminal {
        width: DEFAULT_WIDTH,
    }
    .render(run, &Summary::of(run))
    .unwrap()
}

/// The fixture's two targets copied into five, with names as long as
/// people give them.
fn five_targets() -> RunResult {
    let mut value = fixture_value();
    let targets = value["targets"].as_array().unwrap().clone();
    let names = [
        "ext4-default",
        "xfs-nobarrier",
        "btrfs-zstd",
        "tmpfs-huge",
        "f2fs",
    ];
    let five: Vec<Value> = (names.iter().enumerate())
        .map(|(i, name)| {
            let mut target = targets[i % 2].clone();
            target["name"] = Value::from(*name);
            target
        })
        .collect();
    value["targets"] = Value::Array(five);
    serde_json::from_value(value).unwrap()
}

/// Table lines that hold a metric's cells: they name it with its arrow.
fn metric_rows(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.starts_with('│') && (l.contains(" ↑ ") || l.contains(" ↓ ")))
        .collect()
}

#[test]
fn five_targets_fit_in_100_columns() {
    let text = terminal(&five_targets());
    for line in text.lines() {
        assert!(
            line.chars().count() <= DEFAULT_WIDTH,
            "{} characters: {line}\n{text}",
            line.chars().count()
        );
    }
    // Every target still has its column, and every metric its row.
    let header = text
        .lines()
        .find(|l| l.starts_with('│') && l.contains("metric"))
        .unwrap();
    for name in [
        "ext4-default",
        "xfs-nobarrier",
        "btrfs-zstd",
        "tmpfs-huge",
        "f2fs",
    ] {
        assert!(header.contains(name), "{header}");
    }
    assert!(text.contains("I/O rate (IO/s) ↑"), "{text}");
}

#[test]
fn the_baseline_is_marked_once_per_table_not_per_cell() {
    let text = terminal(&fixture());
    let tables = text.matches("│ metric").count();
    assert_eq!(tables, 3, "one table per workload\n{text}");
    let in_tables = text.lines().filter(|l| l.starts_with('│'));
    let marks: usize = in_tables.map(|l| l.matches("(baseline)").count()).sum();
    assert_eq!(marks, tables, "in each table's header\n{text}");
    let rows = metric_rows(&text);
    assert_eq!(rows.len(), 10 + 6 + 6, "a row per headline metric\n{text}");
    for row in rows {
        let cells: Vec<&str> = row.split('┆').skip(1).map(str::trim).collect();
        let [baseline, other] = cells[..] else {
            panic!("two targets: {row}");
        };
        let is_ratio = |word: &str| word.trim_end_matches('*').ends_with('x');
        assert!(
            !baseline.split(' ').any(is_ratio) && !baseline.contains('='),
            "no ratio and no = on the baseline: {row}"
        );
        assert!(
            other.split(' ').any(is_ratio),
            "the other target's ratio: {row}"
        );
    }
}

#[test]
fn metric_names_say_their_unit_and_better_direction() {
    let text = terminal(&fixture());
    for name in [
        "sequential write (MiB/s) ↑",
        "sequential create (files/s) ↑",
        "I/O rate (IO/s) ↑",
        "response (ms) ↓",
        "max response (ms) ↓",
    ] {
        let row = |r: &&str| r.starts_with(&format!("│ {name} "));
        assert!(metric_rows(&text).iter().any(row), "{name}\n{text}");
    }
    for raw in ["put_block", "seq_create", "io_rate", "resp_ms"] {
        assert!(!text.contains(raw), "{raw} is not shown\n{text}");
    }
    assert!(
        text.contains("↓ = lower is better, ↑ = higher is better"),
        "{text}"
    );
}

/// A tree's elapsed time, as the tree workload names it (`find_s`, in s,
/// lower is better).
#[test]
fn a_tree_time_is_shown_as_find_in_seconds() {
    let mut value = fixture_value();
    for target in value["targets"].as_array_mut().unwrap() {
        for workload in target["workloads"].as_array_mut().unwrap() {
            for metric in workload["metrics"].as_array_mut().unwrap() {
                if metric["name"] == "put_block" {
                    metric["name"] = Value::from("find_s");
                    metric["unit"] = Value::from("s");
                    metric["direction"] = Value::from("lower_is_better");
                }
            }
        }
    }
    let text = terminal(&serde_json::from_value(value).unwrap());
    let row = metric_rows(&text)
        .into_iter()
        .find(|r| r.contains("find (s) ↓"))
        .unwrap_or_else(|| panic!("no row named find (s) ↓\n{text}"));
    assert!(!text.contains("find_s"), "{row}");
}

/// A detail metric's cells are not in the tables, so the warnings they
/// carry are pointed at from its name in the details line: every warning
/// the legend lists is referred to from something shown.
#[test]
fn a_detail_metrics_warnings_are_marked_on_its_name() {
    let mut run = fixture();
    for metric in run
        .targets
        .iter_mut()
        .flat_map(|t| &mut t.workloads)
        .filter(|w| w.name() == "4k-rand-read")
        .flat_map(|w| &mut w.metrics)
        .filter(|m| m.name == "resp_max_ms")
    {
        metric.detail = true;
    }
    let summary = Summary::of(&run);
    let detail = summary
        .workloads
        .iter()
        .filter(|w| w.name == "4k-rand-read")
        .flat_map(|w| &w.metrics)
        .find(|m| m.name == "resp_max_ms")
        .unwrap();
    let mut warnings: Vec<usize> = detail
        .cells
        .iter()
        .flatten()
        .flat_map(|c| c.warnings.clone())
        .collect();
    warnings.sort_unstable();
    warnings.dedup();
    assert!(!warnings.is_empty(), "the fixture's io figures are flagged");
    let text = terminal(&run);
    let line = text
        .lines()
        .find(|l| l.contains("other units") && l.contains("max response"))
        .unwrap_or_else(|| panic!("{text}"));
    let expected = format!("max response (ms){}", fsbench::report::markers(&warnings));
    assert!(line.contains(&expected), "{line}");
}

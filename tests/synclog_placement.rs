//! The built-in `synclog` suite, run for real at a tiny scale on a tmpfs
//! of the test's own: its sync-log placement tables keep the workload run
//! without a sync log as their reference row, first, with its figures and
//! its slowdown against the fastest placement, for PostMark and for the
//! tree alike (the tree's was dropped: the file-system growth it records in
//! its `params.space` counts the log file of the logged workloads, so its
//! parameters never matched theirs). Root only: it mounts its tmpfs.
mod common;

use common::{TmpfsMount, read_json, run};
use fsbench::analysis::Summary;
use fsbench::analysis::placement::{PlacementTable, cell_text, placement_tables};
use fsbench::results::load;

/// The suite's workloads, per kind: (without a log, with the log on the
/// target, with the log never synced).
const POSTMARK: [&str; 3] = ["pm-no-log", "pm-log-target", "pm-log-unsynced"];
const TREE: [&str; 3] = ["photos-no-log", "photos-log-target", "photos-log-unsynced"];

fn table<'t>(tables: &'t [PlacementTable], kind: &str) -> &'t PlacementTable {
    tables
        .iter()
        .find(|t| t.kind == kind)
        .unwrap_or_else(|| panic!("no {kind} placement table in {tables:#?}"))
}

#[test]
fn the_synclog_suite_keeps_the_no_log_row_as_the_reference() {
    let Some(target) = TmpfsMount::new("256m") else {
        return;
    };
    let outside = tempfile::tempdir().unwrap();
    let json = outside.path().join("result.json");
    let json_arg = json.to_str().unwrap();
    run(&[
        "run",
        "--suite",
        "synclog",
        "--scale",
        "0.02",
        "-q",
        "--no-save",
        "--json",
        json_arg,
        "--target",
        &format!("ram={}", target.arg()),
    ])
    .assert_success()
    .assert_no_panic();
    // The result is as the suite made it: three workloads of each kind.
    let value = read_json(&json);
    let labels: Vec<&str> = value["targets"][0]["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["label"].as_str().unwrap())
        .collect();
    for label in POSTMARK.iter().chain(&TREE) {
        assert!(labels.contains(label), "{label} not in {labels:?}");
    }

    let result = load(&json).unwrap();
    let tables = placement_tables(&result, &Summary::of(&result));
    assert_eq!(tables.len(), 2, "{tables:#?}");
    for (kind, labels) in [("postmark", POSTMARK), ("tree", TREE)] {
        let table = table(&tables, kind);
        let rows: Vec<(&str, &str)> = table
            .rows
            .iter()
            .map(|r| (r.workload.as_str(), r.placement.as_str()))
            .collect();
        assert_eq!(
            rows,
            [
                (labels[0], "no sync log"),
                (labels[1], "target"),
                (labels[2], "target, mode none"),
            ],
            "{table:#?}"
        );
        // The reference row has its figures, each with its slowdown
        // against the fastest placement (1.00x where it is the fastest).
        let reference = &table.rows[0];
        assert!(!reference.cells.is_empty(), "{table:#?}");
        for cell in &reference.cells {
            let cell = cell.unwrap_or_else(|| panic!("a figure missing: {table:#?}"));
            assert!(cell.mean > 0.0 && cell.factor >= 1.0, "{table:#?}");
        }
        // Every column has its fastest placement at 1.00x.
        for c in 0..table.columns.len() {
            let fastest = table.rows.iter().filter_map(|r| r.cells[c]).any(|cell| {
                cell_text(Some(cell)).ends_with("(1.00x)") && (cell.factor - 1.0).abs() < 1e-12
            });
            assert!(fastest, "column {c}: {table:#?}");
        }
    }

    // The reports show it: the terminal's placement section names both
    // workloads without a log.
    let report = run(&["report", json_arg]);
    report.assert_success();
    let section = report
        .stdout
        .split_once("Sync-log placement.")
        .unwrap_or_else(|| panic!("no placement section:\n{report}"))
        .1;
    for label in [POSTMARK[0], TREE[0]] {
        assert!(section.contains(label), "{label} missing:\n{section}");
    }
    let markdown = run(&["report", json_arg, "--markdown"]);
    let section = markdown
        .stdout
        .split_once("## Sync-log placement")
        .unwrap_or_else(|| panic!("no placement section:\n{markdown}"))
        .1;
    assert!(
        section.contains(&format!("| {} | no sync log |", TREE[0])),
        "{section}"
    );
}

//! One headline metric per operation: the other views of the same
//! operation (a tree operation's MB/s beside its time, MiB/s beside IO/s,
//! a one-direction job's read response time beside its response time)
//! are details — in the JSON and folded in the reports, never a second
//! table column or a second rating.
mod common;

use common::{TmpfsMount, metric_named, read_json, run};
use serde_json::Value;

fn is_detail(result: &Value, name: &str) -> bool {
    metric_named(result, name)["detail"] == true
}

#[test]
fn a_tree_operation_is_headlined_by_its_time() {
    let Some(mnt) = TmpfsMount::new("128m") else {
        return;
    };
    let json = mnt.join("t.json");
    run(&[
        "tree",
        &mnt.arg(),
        "--dataset",
        "small",
        "--scale",
        "0.005",
        "--ops",
        "copy,find",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ])
    .assert_success();
    let record = read_json(&json);
    let result = &record["targets"][0]["workloads"][0];
    assert!(!is_detail(result, "copy_s") && !is_detail(result, "find_s"));
    assert!(is_detail(result, "copy_mb_s") && is_detail(result, "copy_entries_s"));
    assert!(is_detail(result, "find_entries_s"));
}

#[test]
fn an_io_job_has_one_throughput_and_one_response_time() {
    let Some(mnt) = TmpfsMount::new("128m") else {
        return;
    };
    let job = |xfer: &str| {
        let json = mnt.join(&format!("io-{xfer}.json"));
        run(&[
            "io",
            &mnt.arg(),
            "-s",
            "16m",
            "-b",
            xfer,
            "--duration",
            "0.3s",
            "--interval",
            "0.1s",
            "-q",
            "--json",
            json.to_str().unwrap(),
        ])
        .assert_success();
        read_json(&json)["targets"][0]["workloads"][0].clone()
    };
    let small = job("4k");
    assert!(!is_detail(&small, "io_rate") && is_detail(&small, "mib_per_s"));
    let large = job("1m");
    assert!(is_detail(&large, "io_rate") && !is_detail(&large, "mib_per_s"));
    // Reads only: the read response time is the response time.
    assert!(!is_detail(&small, "resp_ms") && is_detail(&small, "read_resp_ms"));
}

/// The fixture with `get_block` marked as a detail: reports leave it out
/// of the tables and the profile, and show it folded.
#[test]
fn reports_fold_the_details() {
    /// How reports name `get_block`.
    const SHOWN: &str = "sequential read (MiB/s)";
    let dir = tempfile::tempdir().unwrap();
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/run-two-targets.json");
    let mut record: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    for target in record["targets"].as_array_mut().unwrap() {
        for workload in target["workloads"].as_array_mut().unwrap() {
            for metric in workload["metrics"].as_array_mut().unwrap() {
                if metric["name"] == "get_block" {
                    metric["detail"] = Value::Bool(true);
                }
            }
        }
    }
    let path = dir.path().join("r.json");
    std::fs::write(&path, serde_json::to_string(&record).unwrap()).unwrap();
    let terminal = run(&["report", path.to_str().unwrap()]);
    terminal.assert_success();
    let in_tables = terminal
        .stdout
        .lines()
        .filter(|l| l.contains(SHOWN) && !l.contains("the same in other units"))
        .count();
    assert_eq!(in_tables, 0, "no table column\n{}", terminal.stdout);
    assert!(
        terminal
            .stdout
            .contains(&format!("the same in other units: {SHOWN}")),
        "{}",
        terminal.stdout
    );
    let markdown = run(&["report", path.to_str().unwrap(), "--format", "markdown"]);
    markdown.assert_success();
    let folded = markdown.stdout.find("<details>").expect(&markdown.stdout);
    let shown = markdown.stdout.find(SHOWN).expect(&markdown.stdout);
    assert!(folded < shown, "get_block only in the folded details");
}

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
fn an_io_job_has_one_headline_its_throughput_or_under_a_rate_its_response_time() {
    let Some(mnt) = TmpfsMount::new("128m") else {
        return;
    };
    let job = |xfer: &str, extra: &[&str]| {
        let json = mnt.join(&format!("io-{xfer}-{}.json", extra.len()));
        let mut args = vec![
            "io".to_string(),
            mnt.arg(),
            "-s".into(),
            "16m".into(),
            "-b".into(),
            xfer.into(),
            "--duration".into(),
            "0.3s".into(),
            "--interval".into(),
            "0.1s".into(),
            "-q".into(),
            "--json".into(),
            json.display().to_string(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        run(&args).assert_success();
        read_json(&json)["targets"][0]["workloads"][0].clone()
    };
    let headlines = |job: &Value| -> Vec<String> {
        let metrics = job["metrics"].as_array().unwrap();
        let names = metrics
            .iter()
            .map(|m| m["name"].as_str().unwrap().to_string());
        names.filter(|name| !is_detail(job, name)).collect()
    };
    // Flat out, the throughput: IO/s for small transfers, MiB/s for large;
    // the response times (threads / rate) are details.
    assert_eq!(headlines(&job("4k", &[])), ["io_rate"]);
    assert_eq!(headlines(&job("1m", &[])), ["mib_per_s"]);
    // Under a rate the throughput is what was asked: the response time is
    // the answer.
    assert_eq!(headlines(&job("4k", &["--rate", "2000"])), ["resp_ms"]);
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

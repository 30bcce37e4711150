//! `fsbench durability` and the risk flags: every probe does the writes it
//! reports, the verdict follows the configuration, risky mount options are
//! flagged (and defaults are not), and the usual safety rules hold.
mod common;

use common::{LoopFs, Sentinel, TmpfsMount, assert_no_scratch_left, read_json, run};

const PROBES: [&str; 6] = [
    "fsync_overwrite",
    "fdatasync_overwrite",
    "fsync_append",
    "fdatasync_append",
    "osync_write",
    "odsync_write",
];

#[test]
fn every_probe_does_the_writes_it_reports_and_tmpfs_is_not_durable() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let sentinel = Sentinel::plant(mnt.path());
    let json = mnt.join("d.json");
    let out = run(&[
        "durability",
        &mnt.arg(),
        "--writes",
        "40",
        "--json",
        json.to_str().unwrap(),
    ]);
    out.assert_success().assert_no_panic();
    let record = read_json(&json);
    let workload = &record["targets"][0]["workloads"][0];
    let metrics = workload["metrics"].as_array().unwrap();
    let names: Vec<&str> = metrics
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, PROBES);
    for metric in metrics {
        assert_eq!(metric["samples"], 40, "{metric}");
        assert_eq!(metric["latency"]["count"], 40, "{metric}");
        assert!(metric["value"].as_f64().unwrap() > 0.0, "{metric}");
    }
    assert_eq!(workload["params"]["verdict"]["conclusion"], "not_durable");
    assert!(out.stdout.contains("NOT DURABLE"), "{out}");
    assert!(
        out.stdout.contains("tmpfs"),
        "the reason names the cause\n{out}"
    );
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

fn risk_codes(path: &str) -> Vec<String> {
    let out = run(&["env", path, "--json", "-"]);
    out.assert_success();
    let record: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    record["targets"][0]["env"]["risks"]
        .as_array()
        .map(|risks| {
            risks
                .iter()
                .map(|r| r["code"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn risky_ext4_options_are_flagged_and_defaults_are_not() {
    let Some(default) = LoopFs::new(&["mkfs.ext4", "-q", "-F"], "defaults", 64) else {
        return;
    };
    assert_eq!(risk_codes(&default.arg()), Vec::<String>::new());
    drop(default);
    let risky = LoopFs::new(&["mkfs.ext4", "-q", "-F"], "data=writeback,barrier=0", 64).unwrap();
    // With barriers off, a write-back device cache is never flushed: that
    // is flagged too, when the device has one.
    let cache = std::fs::read_to_string(format!(
        "/sys/block/{}/queue/write_cache",
        risky.device.trim_start_matches("/dev/")
    ))
    .unwrap_or_default();
    let mut expected = vec!["nobarrier", "data_writeback"];
    if cache.trim() == "write back" {
        expected.push("write_back_cache");
    }
    assert_eq!(risk_codes(&risky.arg()), expected);
    drop(risky);
    let no_journal = LoopFs::new(
        &["mkfs.ext4", "-q", "-F", "-O", "^has_journal"],
        "defaults",
        64,
    )
    .unwrap();
    assert_eq!(risk_codes(&no_journal.arg()), ["no_journal"]);
}

#[test]
fn a_probe_that_cannot_fit_is_refused_before_it_writes() {
    let Some(mnt) = TmpfsMount::new("1m") else {
        return;
    };
    let sentinel = Sentinel::plant(mnt.path());
    // The append probes need 4 KiB per write; the check before the run
    // refuses what cannot fit.
    let out = run(&["durability", &mnt.arg(), "--writes", "100000"]);
    out.assert_error(2, &["space"]);
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    let file = dir.path().join("f");
    std::fs::write(&file, b"x").unwrap();
    let cases: [(&[&str], &str); 7] = [
        (&["durability"], "TARGET"),
        (&["durability", path, "--writes", "0"], "--writes 0"),
        (&["durability", path, "--duration=-1"], "'-1' is not a time"),
        (&["durability", path, "--seconds", "0s"], "--duration 0s"),
        (&["durability", path, "-d", "2h"], "--duration 7200s"),
        (&["durability", "/nonexistent/x"], "does not exist"),
        (&["durability", file.to_str().unwrap()], "not a directory"),
    ];
    for (args, needle) in cases {
        run(args).assert_error(2, &[needle]);
    }
}

/// A loop device says it is rotational whatever lies beneath (here a
/// tmpfs): its fast flushes are no evidence, and the verdict says so.
#[test]
fn a_loop_device_gets_no_verdict_from_its_speed() {
    let Some(fs) = LoopFs::new(&["mkfs.ext4", "-q", "-F"], "defaults", 64) else {
        return;
    };
    let json = tempfile::NamedTempFile::new().unwrap();
    let out = run(&[
        "durability",
        fs.path().to_str().unwrap(),
        "--writes",
        "20",
        "--json",
        json.path().to_str().unwrap(),
    ]);
    out.assert_success().assert_no_panic();
    let record = read_json(json.path());
    let verdict = &record["targets"][0]["workloads"][0]["params"]["verdict"];
    assert_eq!(verdict["conclusion"], "unknown", "{verdict}");
    assert!(
        out.stdout.contains("cannot tell (virtual or loop device)"),
        "{out}"
    );
}

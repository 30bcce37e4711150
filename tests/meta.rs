//! `fsbench meta`: every operation does the work it reports on a real file
//! system, bad input is a one-line error, a suite runs it on several
//! targets, and the usual safety rules hold (sentinel, Ctrl-C).
mod common;

use common::{
    LoopFs, Running, Sentinel, TmpfsMount, assert_no_scratch_left, metric_names, read_json, run,
    wait_for_scratch,
};

const OPS: [&str; 10] = [
    "create",
    "rename",
    "chmod",
    "setxattr",
    "getxattr",
    "symlink",
    "link",
    "readdir_stat",
    "truncate",
    "unlink",
];

/// Runs `fsbench meta DIR ARGS --json` and returns the output and the result.
fn meta(dir: &str, args: &[&str], json: &std::path::Path) -> (common::Output, serde_json::Value) {
    let mut all = vec!["meta", dir];
    all.extend(args);
    all.extend(["--json", json.to_str().unwrap()]);
    let out = run(&all);
    out.assert_success().assert_no_panic();
    let record = read_json(json);
    (out, record["targets"][0]["workloads"][0].clone())
}

#[test]
fn every_operation_counts_every_file_on_ext4() {
    let Some(fs) = LoopFs::new(&["mkfs.ext4", "-q", "-F"], "defaults", 64) else {
        return;
    };
    let sentinel = Sentinel::plant(fs.path());
    let json = tempfile::NamedTempFile::new().unwrap();
    let dir = fs.path().to_str().unwrap();
    let (out, result) = meta(dir, &["-n", "600", "--dirs", "4", "-j", "2"], json.path());
    let metrics = result["metrics"].as_array().unwrap();
    let names: Vec<&str> = metrics
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    let expected: Vec<String> = OPS.iter().map(|op| format!("{op}_ops_s")).collect();
    assert_eq!(names, expected);
    for metric in metrics {
        let name = metric["name"].as_str().unwrap();
        // `ls -l` lists each file, its symlink and its hard link.
        let per_file = if name == "readdir_stat_ops_s" { 3 } else { 1 };
        assert_eq!(metric["samples"], 600 * per_file, "{name}");
        assert_eq!(metric["unit"], "ops/s", "{name}");
        assert_eq!(metric["direction"], "higher_is_better", "{name}");
        let rate = metric["value"].as_f64().unwrap();
        let elapsed = metric["elapsed_s"].as_f64().unwrap();
        let samples = metric["samples"].as_f64().unwrap();
        assert!(
            rate > 0.0 && (rate * elapsed - samples).abs() < 1e-6 * samples,
            "{metric}"
        );
        let latency = &metric["latency"];
        assert_eq!(
            latency["count"], metric["samples"],
            "one latency per call: {name}"
        );
        assert!(
            latency["p50_ns"].as_u64() <= latency["p99_ns"].as_u64(),
            "{latency}"
        );
        assert!(
            latency["p99_ns"].as_u64() <= latency["max_ns"].as_u64(),
            "{latency}"
        );
    }
    // The live table: one row per operation, named as every view names it
    // (`readdir stat`), without the unit its column gives.
    for op in OPS {
        let named = format!("{} ", op.replace('_', " "));
        assert!(
            out.stdout.lines().any(|l| l.starts_with(&named)),
            "{op}\n{out}"
        );
    }
    assert!(!out.stdout.contains("readdir_stat"), "{out}");
    assert_eq!(result["params"]["files"], 600);
    assert_no_scratch_left(fs.path());
    sentinel.assert_intact();
}

/// ramfs keeps no user extended attributes: the two phases are skipped
/// with a note, the others run.
#[test]
fn without_user_xattrs_the_xattr_phases_are_skipped_with_a_note() {
    let Some(mnt) = TmpfsMount::ramfs() else {
        return;
    };
    let json = mnt.join("m.json");
    let (_, result) = meta(&mnt.arg(), &["-n", "200"], &json);
    let names = metric_names(&result);
    assert!(
        !names.contains(&"setxattr_ops_s") && !names.contains(&"getxattr_ops_s"),
        "{names:?}"
    );
    assert!(names.contains(&"rename_ops_s"), "{names:?}");
    let notes = result["notes"].to_string();
    assert!(notes.contains("extended attributes"), "{notes}");
}

#[test]
fn only_the_chosen_operations_are_timed_and_the_rest_is_said() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let json = mnt.join("m.json");
    let (_, result) = meta(
        &mnt.arg(),
        &["-n", "100", "--ops", "rename,readdir_stat"],
        &json,
    );
    let names = metric_names(&result);
    assert_eq!(names, ["rename_ops_s", "readdir_stat_ops_s"]);
    let notes = result["notes"].to_string();
    assert!(
        notes.contains("create") && notes.contains("unlink"),
        "untimed steps are named: {notes}"
    );
    assert_no_scratch_left(mnt.path());
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let Some(mnt) = TmpfsMount::new("16m") else {
        return;
    };
    let cases: [(&[&str], &str); 6] = [
        (&["-n", "0"], "0 files"),
        (&["-n", "10", "--dirs", "11"], "directories"),
        (&["-n", "10", "-j", "0"], "threads"),
        (&["--ops", "rename,move"], "'move'"),
        (&["--size", "lots"], "lots"),
        (&["--repeat", "0"], "--repeat 0"),
    ];
    for (args, needle) in cases {
        let mut all = vec!["meta".to_string(), mnt.arg()];
        all.extend(args.iter().map(|a| a.to_string()));
        run(&all).assert_error(2, &[needle]);
    }
    run(&["meta", "/nonexistent/dir"]).assert_error(2, &["does not exist"]);
    assert_no_scratch_left(mnt.path());
}

/// More files than the file system has inodes for: refused before anything
/// is written, or (when the estimate fits) a clean failure; either way the
/// sentinel survives and no scratch data is left.
#[test]
fn running_out_of_inodes_loses_nothing() {
    let Some(mnt) = TmpfsMount::with_options("size=16m,nr_inodes=400") else {
        return;
    };
    let sentinel = Sentinel::plant(mnt.path());
    let out = run(&["meta", &mnt.arg(), "-n", "1000"]);
    assert_ne!(out.code(), 0, "{out}");
    out.assert_no_panic();
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

#[test]
fn ctrl_c_stops_it_and_removes_everything() {
    let Some(mnt) = TmpfsMount::new("256m") else {
        return;
    };
    let sentinel = Sentinel::plant(mnt.path());
    let mut running = Running::spawn(&["meta", &mnt.arg(), "-n", "1000000"]);
    wait_for_scratch(mnt.path(), &mut running);
    std::thread::sleep(std::time::Duration::from_millis(300));
    running.signal(libc::SIGINT);
    running.wait().assert_interrupted_and_cleaned_up();
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

/// A suite entry takes the same flags without the target and runs on each
/// target side by side.
#[test]
fn a_suite_runs_it_on_two_targets() {
    let (Some(a), Some(b)) = (TmpfsMount::new("64m"), TmpfsMount::new("64m")) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("meta.toml");
    std::fs::write(
        &suite,
        "[[workload]]\nkind = \"meta\"\nlabel = \"small-files\"\nargs = \"-n 200 --dirs 2 --ops create,unlink\"\n",
    )
    .unwrap();
    let json = dir.path().join("run.json");
    let out = run(&[
        "run",
        "--suite",
        suite.to_str().unwrap(),
        "-t",
        &format!("a={}", a.arg()),
        "-t",
        &format!("b={}", b.arg()),
        "--no-save",
        "--json",
        json.to_str().unwrap(),
    ]);
    out.assert_success().assert_no_panic();
    let record = read_json(&json);
    for target in record["targets"].as_array().unwrap() {
        let result = &target["workloads"][0];
        assert_eq!(result["label"], "small-files");
        assert_eq!(result["metrics"][0]["samples"], 200, "{result}");
    }
    assert!(out.stdout.contains("small-files"), "{out}");
    assert_no_scratch_left(a.path());
    assert_no_scratch_left(b.path());
}

/// Without `-n`, each thread gets 10,000 files: more threads, as long a
/// phase (not a shorter, less precise one).
#[test]
fn the_default_file_count_grows_with_the_threads() {
    let Some((mnt, sentinel)) = common::tmpfs_with_sentinel("256m") else {
        return;
    };
    let json = tempfile::NamedTempFile::new().unwrap();
    let (_, result) = meta(
        mnt.path().to_str().unwrap(),
        &["-j", "2", "--ops", "create"],
        json.path(),
    );
    assert_eq!(result["metrics"][0]["samples"], 20_000, "{result}");
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

//! `fsbench postmark` without the reference binary and without root (it
//! works in temporary directories): the counts and byte totals of fixed
//! configurations (taken from PostMark 1.53 itself), `set threads`, the
//! report layouts, the JSON result, the command language with every kind
//! of bad input, `.pmrc` and stdin.
mod common;
#[path = "postmark_support.rs"]
mod support;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{FSBENCH, Output, read_json};
use support::{
    DEFAULTS, MIXED, SEED_000, TWO_LOCATIONS, json_bytes, json_counts, location, report_counts,
    samples, subdir, with_locations, workloads, write_config,
};

/// Runs `fsbench postmark ARGS` in `dir` with `stdin` as its input.
fn postmark_in(dir: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(FSBENCH)
        .arg("postmark")
        .args(args)
        .current_dir(dir)
        // Report files go to the data home: the test's directory, not the real one.
        .env("HOME", dir)
        .env("XDG_DATA_HOME", dir.join("data"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start fsbench");
    let mut input = child.stdin.take().unwrap();
    // A run that fails early may close stdin first: that is its answer.
    let _ = input.write_all(stdin.as_bytes());
    drop(input);
    let out = child.wait_with_output().unwrap();
    Output {
        cmd: format!("fsbench postmark {}", args.join(" ")),
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs a configuration file made of `lines` (stdin empty) in `dir`,
/// with `--json`; returns the output and the JSON.
fn run_config(dir: &Path, lines: &[impl AsRef<str>]) -> (Output, serde_json::Value) {
    let config = write_config(dir, "pm.cfg", lines);
    let json = dir.join("result.json");
    let out = postmark_in(
        dir,
        &[config.to_str().unwrap(), "--json", json.to_str().unwrap()],
        "",
    );
    out.assert_success().assert_no_panic();
    (out, read_json(&json))
}

/// The fixed vectors, each in its own session.
#[test]
fn fixed_vectors_match_postmark() {
    for vector in [&DEFAULTS, &SEED_000, &TWO_LOCATIONS, &MIXED] {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (subdir(dir.path(), "a"), subdir(dir.path(), "b"));
        let mut lines = with_locations(vector.settings, &a, &b);
        lines.push("run".into());
        let (_, json) = run_config(dir.path(), &lines);
        let run = &workloads(&json)[0];
        assert_eq!(json_counts(run), vector.counts, "{lines:?}");
        assert_eq!(json_bytes(run), vector.bytes, "{lines:?}");
        // A run over two locations is recorded once, under the first.
        let targets = json["targets"].as_array().unwrap();
        let locations = vector
            .settings
            .iter()
            .filter(|s| s.starts_with("set location"))
            .count();
        assert_eq!(targets.len(), locations);
        assert_eq!(targets[0]["path"], a.to_str().unwrap());
        assert!(
            targets[1..]
                .iter()
                .all(|t| t["workloads"] == serde_json::json!([]))
        );
    }
}

/// `set threads 3` is three independent runs with seeds 42, 43, 44,
/// whose PostMark counts add up.
#[test]
fn threads_are_independent_instances_with_consecutive_seeds() {
    let dir = tempfile::tempdir().unwrap();
    let w = subdir(dir.path(), "w");
    let (out, json) = run_config(dir.path(), &[&location(&w), "set threads 3", "run"]);
    let run = &workloads(&json)[0];
    let seeds = [
        DEFAULTS.counts,
        [746, 500, 246, 234, 266, 746, 492, 254],
        [774, 500, 274, 269, 231, 774, 548, 226],
    ];
    let sum: [u64; 8] = std::array::from_fn(|i| seeds.iter().map(|s| s[i]).sum());
    assert_eq!(json_counts(run), sum);
    assert_eq!(report_counts(&out.stdout), sum);
    assert_eq!(samples(run, "transactions"), 1500);
    assert_eq!(
        json_bytes(run),
        (
            1_430_770 + 1_339_887 + 1_561_453,
            4_662_068 + 4_412_590 + 4_535_057
        )
    );
    let notes = run["notes"].to_string();
    assert!(notes.contains("seeds 42..44"), "{notes}");
    assert_eq!(std::fs::read_dir(&w).unwrap().count(), 0, "nothing left");
}

/// Digit runs become `N`, so a line can be compared with a template.
fn shape(line: &str) -> String {
    let mut out = String::new();
    for c in line.chars() {
        if !c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('N') {
            out.push('N');
        }
    }
    out.replace("kilobytes", "UNIT")
        .replace("megabytes", "UNIT")
}

#[test]
fn verbose_report_has_postmarks_layout_with_seconds_to_the_millisecond() {
    let dir = tempfile::tempdir().unwrap();
    let w = subdir(dir.path(), "w");
    let (out, _) = run_config(dir.path(), &[&location(&w), "run"]);
    let template = "Creating files...Done
Performing transactions..........Done
Deleting files...Done
Time:
\tN.N seconds total
\tN.N seconds of transactions (N.N per second)

Files:
\tN created (N.N per second)
\t\tCreation alone: N files (N.N per second)
\t\tMixed with transactions: N files (N.N per second)
\tN read (N.N per second)
\tN appended (N.N per second)
\tN deleted (N.N per second)
\t\tDeletion alone: N files (N.N per second)
\t\tMixed with transactions: N files (N.N per second)

Data:
\tN.N UNIT read (N.N UNIT per second)
\tN.N UNIT written (N.N UNIT per second)";
    let shapes: Vec<String> = out.stdout.lines().map(shape).collect();
    assert_eq!(shapes, template.lines().collect::<Vec<_>>(), "{out}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    let decimals = |number: &str| number.split_once('.').map(|(_, f)| f.len());
    for seconds in &lines[4..6] {
        assert_eq!(
            decimals(seconds.trim().split(' ').next().unwrap()),
            Some(3),
            "{seconds}"
        );
    }
    for line in lines
        .iter()
        .filter(|l| l.ends_with(" per second)") && !l.contains("bytes"))
    {
        let rate = line.rsplit('(').next().unwrap().split(' ').next().unwrap();
        assert_eq!(decimals(rate), Some(2), "{line}");
    }
    assert!(lines[18].starts_with("\t1.36 megabytes read ("), "{out}");
    assert!(lines[19].starts_with("\t4.45 megabytes written ("), "{out}");
    assert_eq!(out.stderr, "");
}

#[test]
fn terse_report_is_one_line_of_thirteen_figures() {
    let dir = tempfile::tempdir().unwrap();
    let w = subdir(dir.path(), "w");
    let (out, _) = run_config(dir.path(), &[&location(&w), "set report terse", "run"]);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    let fields: Vec<&str> = lines[3].split(' ').collect();
    assert_eq!(fields.len(), 13, "{out}");
    for (i, field) in fields.iter().enumerate() {
        let decimals = if i < 2 { 3 } else { 2 };
        let (whole, fraction) = field.split_once('.').unwrap();
        assert!(
            whole.parse::<u64>().is_ok() && fraction.len() == decimals,
            "{field}"
        );
    }
}

/// Per-operation latency (one sample per counted operation) and CPU %
/// for every figure, in the units and over the intervals of the report.
#[test]
fn json_has_latency_and_cpu_per_operation() {
    let dir = tempfile::tempdir().unwrap();
    let w = subdir(dir.path(), "w");
    let (_, json) = run_config(dir.path(), &[&location(&w), "run"]);
    let run = &workloads(&json)[0];
    assert_eq!(run["workload"], "postmark");
    assert_eq!(run["params"]["number"], 500);
    assert_eq!(run["params"]["buffered"], true);
    for (name, count) in [
        ("create", 764),
        ("create_alone", 500),
        ("read", 243),
        ("append", 257),
        ("delete", 764),
        ("delete_mixed", 236),
    ] {
        let metric = support::metric_of(run, name);
        assert_eq!(metric["unit"], "files/s");
        assert_eq!(metric["latency"]["count"], count, "{metric}");
        assert!(metric["latency"]["p50_ns"].as_u64().unwrap() > 0);
        assert!(metric["cpu_percent"].as_f64().is_some());
        assert!(metric["value"].as_f64().unwrap() > 0.0);
    }
    let total = support::metric_of(run, "create")["elapsed_s"]
        .as_f64()
        .unwrap();
    let data = support::metric_of(run, "data_written");
    assert_eq!(data["unit"], "MiB/s");
    assert_eq!(data["elapsed_s"].as_f64().unwrap(), total);
    let flags = support::metric_of(run, "transactions")["flags"].to_string();
    assert!(
        flags.contains("too_short"),
        "a 500-transaction run is flagged: {flags}"
    );
}

/// PostMark prints "out of files!" and no report; fsbench reports what ran.
#[test]
fn out_of_files_reports_what_ran() {
    let dir = tempfile::tempdir().unwrap();
    let w = subdir(dir.path(), "w");
    let (out, json) = run_config(
        dir.path(),
        &[
            &location(&w),
            "set number 20",
            "set transactions 100",
            "set bias create 0",
            "run",
        ],
    );
    assert!(
        out.stdout.starts_with(
            "Creating files...Done\nPerforming transactions..out of files!\n\
             For this workload, either increase the number of files or\n\
             decrease the number of transactions.\nDeleting files...Done\nTime:\n"
        ),
        "{out}"
    );
    let run = &workloads(&json)[0];
    let ran = samples(run, "transactions");
    assert!(ran > 0 && ran < 100);
    assert!(
        out.stdout
            .ends_with(&format!("\nOut of files: {ran} of 100 transactions ran.\n"))
    );
    assert!(run["notes"].to_string().contains("out of files"));
    assert_eq!(json_counts(run)[5], 20, "all 20 files deleted");
}

/// PostMark divides by zero below 10 transactions; fsbench runs them.
#[test]
fn fewer_than_ten_transactions_run() {
    let dir = tempfile::tempdir().unwrap();
    let w = subdir(dir.path(), "w");
    let (out, json) = run_config(dir.path(), &[&location(&w), "set transactions 5", "run"]);
    assert!(
        out.stdout.contains("Performing transactions.....Done\n"),
        "{out}"
    );
    assert_eq!(samples(&workloads(&json)[0], "transactions"), 5);
}

#[test]
fn pmrc_then_stdin_commands() {
    let dir = tempfile::tempdir().unwrap();
    let w = subdir(dir.path(), "w");
    write_config(dir.path(), ".pmrc", &[&location(&w), "set number 50"]);
    let out = postmark_in(dir.path(), &[], "set report terse\nshow\nrun\nquit\nrun\n");
    out.assert_success().assert_no_panic();
    assert!(
        out.stdout.contains("The base number of files is 50\n"),
        "{out}"
    );
    assert!(out.stdout.contains("Report format is terse.\n"), "{out}");
    let terse: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.split(' ').count() == 13)
        .collect();
    assert_eq!(terse.len(), 1, "one run: quit ends the session\n{out}");
    assert!(
        !out.stdout.contains("pm>"),
        "no prompt when stdin is not a terminal"
    );
}

/// A configuration file names report files inside the results directory,
/// where `fsbench run` saves (`$XDG_DATA_HOME/fsbench/results`), not in
/// the current directory.
#[test]
fn report_and_show_go_to_files() {
    let dir = tempfile::tempdir().unwrap();
    let w = subdir(dir.path(), "w");
    let report = dir.path().join("data/fsbench/results/report.txt");
    let (out, _) = run_config(
        dir.path(),
        &[&location(&w), "run report.txt", "show report.txt"],
    );
    assert_eq!(
        out.stdout,
        "Creating files...Done\nPerforming transactions..........Done\nDeleting files...Done\n"
    );
    let text = std::fs::read_to_string(&report).unwrap();
    assert!(text.starts_with("Time:\n"), "{text}");
    assert!(text.contains("Current configuration is:\n"));
    assert!(text.contains(&format!("\t{} (weight=1)\n", w.display())));
    assert!(!dir.path().join("fsbench-results").exists());
}

/// Bad input: one line on stderr, exit 2, nothing run or written.
fn assert_config_error(lines: &[&str], needles: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let w = subdir(dir.path(), "w");
    let set_w = location(&w);
    let mut all = vec![set_w.as_str()];
    all.extend(lines);
    all.push("run");
    let config = write_config(dir.path(), "pm.cfg", &all);
    let out = postmark_in(dir.path(), &[config.to_str().unwrap()], "");
    let line = out.assert_error(2, needles);
    assert!(
        line.contains(&format!("pm.cfg:{}:", lines.len() + 1)),
        "{out}"
    );
    assert_eq!(out.stdout, "", "{out}");
    assert_eq!(std::fs::read_dir(&w).unwrap().count(), 0, "{out}");
}

#[test]
fn bad_commands_and_values_are_one_line_errors() {
    let cases: [(&[&str], &[&str]); 10] = [
        (&["frobnicate"], &["unknown command 'frobnicate'"]),
        (&["set nubmer 5000"], &["unknown setting"]),
        (&["set numbers 100000"], &["unknown setting"]),
        (&["set number lots"], &["invalid number of files", "'lots'"]),
        (&["set size 10K 20K"], &["'10K'", "would read it as 10"]),
        (
            &["set size 5000 100"],
            &["high bound 100 is below the low bound 5000"],
        ),
        (&["set seed"], &["invalid seed", "no value"]),
        (&["set location"], &["no directory name specified"]),
        (&["set buffering maybe"], &["true/false"]),
        (
            &["set size 100", "set bias read 12"],
            &["no bias specified", "out of range"],
        ),
    ];
    for (lines, needles) in cases {
        assert_config_error(lines, needles);
    }
}

#[test]
fn missing_or_unreadable_config_file_is_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    for (name, why) in [
        ("missing.cfg", "cannot read configuration file"),
        (".", "not a regular file (a directory)"),
    ] {
        let out = postmark_in(dir.path(), &[name], "");
        out.assert_error(2, &["configuration file", why, name]);
    }
}

#[test]
fn missing_location_and_bad_report_file_stop_before_running() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nowhere");
    let out = postmark_in(dir.path(), &[], &format!("{}\nrun\n", location(&missing)));
    out.assert_error(2, &["<stdin>:2:", "does not exist"]);
    let w = subdir(dir.path(), "w");
    let bad = format!("{}\nrun no/dir/r.txt\n", location(&w));
    let out = postmark_in(dir.path(), &[], &bad);
    out.assert_error(2, &["cannot direct output to file"]);
    assert_eq!(std::fs::read_dir(&w).unwrap().count(), 0);
}

#[test]
fn help_lists_postmarks_commands() {
    let dir = tempfile::tempdir().unwrap();
    let out = postmark_in(dir.path(), &[], "help set bias\n?\n");
    out.assert_success();
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines[..2],
        [
            "set bias read - Sets the chance of choosing read over append",
            "set bias create - Sets the chance of choosing create over delete"
        ]
    );
    assert_eq!(lines.len(), 2 + 18);
    assert!(out.stdout.contains("set threads - "));
}

//! `fsbench bonnie` on a private tmpfs: every test runs and reports the work
//! it was asked to do, in the JSON result model, the CSV line (format 1.98,
//! 50 fields) and the table; the flags change what bonnie++'s flags change.
//! On a loop ext4, the device counters show the data phases doing what
//! bonnie++ 2.00a's do.
mod common;

use std::path::Path;

use common::{
    DATA_METRICS, FILE_METRICS, Output, TmpfsMount, assert_no_scratch_left, bonnie_args,
    quick_bonnie_args, read_json, run,
};
use serde_json::Value;

const MIB: u64 = 1 << 20;

/// 1-based CSV field numbers of each metric's rate (its CPU follows it).
fn rate_field(metric: &str) -> usize {
    match metric {
        "putc" => 10,
        "put_block" => 12,
        "rewrite" => 14,
        "getc" => 16,
        "get_block" => 18,
        "seeks" => 20,
        "seq_create" => 27,
        "seq_stat" => 29,
        "seq_del" => 31,
        "ran_create" => 33,
        "ran_stat" => 35,
        "ran_del" => 37,
        other => panic!("unknown metric {other}"),
    }
}

/// 1-based CSV field number of each metric's latency.
fn latency_field(metric: &str) -> usize {
    let all: Vec<&str> = DATA_METRICS
        .iter()
        .chain(FILE_METRICS.iter())
        .copied()
        .collect();
    39 + all.iter().position(|m| *m == metric).unwrap()
}

/// CSV field `n` (1-based, as bonnie++'s documentation numbers them).
fn field(csv: &[String], n: usize) -> &str {
    &csv[n - 1]
}

/// What one metric must show: unit, samples (bytes, seeks or files) and
/// the number of latency samples (chunks, seeks or files).
struct Expect {
    name: &'static str,
    unit: &'static str,
    samples: u64,
    ops: u64,
}

fn data_expectations(size_mib: u64, per_char_mib: u64, chunk: u64, seeks: u64) -> Vec<Expect> {
    let mut out = Vec::new();
    let block = |name| Expect {
        name,
        unit: "MiB/s",
        samples: size_mib * MIB,
        ops: size_mib * MIB / chunk,
    };
    let per_char = |name| Expect {
        name,
        unit: "MiB/s",
        samples: per_char_mib * MIB,
        ops: per_char_mib * MIB / chunk,
    };
    if per_char_mib > 0 {
        out.push(per_char("putc"));
    }
    out.push(block("put_block"));
    out.push(block("rewrite"));
    if per_char_mib > 0 {
        out.push(per_char("getc"));
    }
    out.push(block("get_block"));
    out.push(Expect {
        name: "seeks",
        unit: "seeks/s",
        samples: seeks,
        ops: seeks,
    });
    out
}

/// The twelve tests of `-s 8 -f1 -n 1` with the default chunk and seeks.
fn s8_f1_n1_expectations() -> Vec<Expect> {
    let mut expected = data_expectations(8, 1, 8192, 8192);
    expected.extend(file_expectations(1024));
    expected
}

fn file_expectations(files: u64) -> Vec<Expect> {
    FILE_METRICS
        .iter()
        .map(|&name| Expect {
            name,
            unit: "files/s",
            samples: files,
            ops: files,
        })
        .collect()
}

fn num(value: &Value, key: &str) -> f64 {
    value[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing or not a number in {value}"))
}

fn int(value: &Value, key: &str) -> u64 {
    value[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} missing or not an integer in {value}"))
}

/// Checks one metric of the JSON result against what the run had to do.
fn check_metric(metric: &Value, expect: &Expect) {
    let name = expect.name;
    assert_eq!(metric["name"], name);
    assert_eq!(metric["unit"], expect.unit, "{name}");
    assert_eq!(metric["direction"], "higher_is_better", "{name}");
    assert_eq!(int(metric, "samples"), expect.samples, "{name}: samples");
    let value = num(metric, "value");
    let elapsed = num(metric, "elapsed_s");
    assert!(value.is_finite() && value > 0.0, "{name}: value {value}");
    assert!(
        elapsed > 0.0 && elapsed < 120.0,
        "{name}: elapsed {elapsed}"
    );
    // The rate is the work over the wall time, in the metric's unit.
    let per_second = expect.samples as f64 / elapsed;
    let expected_value = if expect.unit == "MiB/s" {
        per_second / MIB as f64
    } else {
        per_second
    };
    assert!(
        (value - expected_value).abs() <= expected_value * 1e-6,
        "{name}: value {value} is not samples/elapsed ({expected_value})"
    );
    let cpu = num(metric, "cpu_percent");
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    // No upper bound for seeks: its late phase start (the bug of
    // `seek_phase_contains_every_seek`) also inflates its CPU share.
    let max_cpu = if name == "seeks" {
        f64::MAX
    } else {
        100.0 * cpus + 50.0
    };
    assert!(cpu >= 0.0 && cpu <= max_cpu, "{name}: cpu_percent {cpu}");
    let latency = &metric["latency"];
    assert!(latency.is_object(), "{name}: no latency summary");
    assert_eq!(int(latency, "count"), expect.ops, "{name}: latency count");
    let [min, p50, p90, p99, p999, max] =
        ["min_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns"].map(|k| int(latency, k));
    assert!(
        min > 0 && min <= p50 && p50 <= p90 && p90 <= p99 && p99 <= p999 && p999 <= max,
        "{name}: latency quantiles out of order: {latency}"
    );
    let mean = num(latency, "mean_ns");
    assert!(
        min as f64 <= mean && mean <= max as f64 * 1.001,
        "{name}: mean {mean}"
    );
    // Every latency sample lies within the phase. Not checked for seeks
    // here: its phase clock starts late (a bug, see
    // `seek_phase_contains_every_seek`), which would make these tests flaky.
    if name != "seeks" {
        assert!(
            max as f64 <= elapsed * 1e9 * 1.01,
            "{name}: max latency {max} ns longer than the phase ({elapsed} s)"
        );
    }
    let flags: Vec<&str> = metric["flags"]
        .as_array()
        .unwrap_or_else(|| panic!("{name}: flags missing"))
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(
        flags.contains(&"too_short"),
        elapsed < 0.5,
        "{name}: too_short flag does not match elapsed {elapsed}: {flags:?}"
    );
}

/// bonnie++'s latency text: the maximum, truncated to us, ms or s.
fn latency_text(max_ns: u64) -> String {
    let us = max_ns / 1000;
    if us > 99_999_999 {
        format!("{}s", us / 1_000_000)
    } else if us > 99_999 {
        format!("{}ms", us / 1000)
    } else {
        format!("{us}us")
    }
}

/// The CSV line says what the JSON says: rates (KiB/s, seeks/s, files/s),
/// CPU and maximum latency of each metric; the fields of tests that did
/// not run are empty.
fn check_csv_matches_json(csv: &[String], metrics: &[Value]) {
    for name in DATA_METRICS.iter().chain(FILE_METRICS.iter()) {
        let rate = field(csv, rate_field(name));
        let cpu = field(csv, rate_field(name) + 1);
        let latency = field(csv, latency_field(name));
        let Some(metric) = metrics.iter().find(|m| m["name"] == *name) else {
            assert!(
                rate.is_empty() && cpu.is_empty() && latency.is_empty(),
                "{name} did not run but has CSV fields: {rate:?} {cpu:?} {latency:?}"
            );
            continue;
        };
        let value = num(metric, "value");
        let shown: f64 = rate
            .parse()
            .unwrap_or_else(|_| panic!("{name}: CSV rate {rate:?} is not a number"));
        let expected = match *name {
            "seeks" => value,
            _ if metric["unit"] == "MiB/s" => (value * 1024.0).floor(),
            _ => value.floor(),
        };
        assert!(
            (shown - expected).abs() <= 1.0,
            "{name}: CSV rate {rate} but JSON value {value}"
        );
        let shown_cpu: f64 = cpu
            .parse()
            .unwrap_or_else(|_| panic!("{name}: CPU {cpu:?}"));
        assert!(
            (shown_cpu - num(metric, "cpu_percent").floor()).abs() <= 1.0,
            "{name}: CSV CPU {cpu}"
        );
        assert_eq!(
            latency,
            latency_text(int(&metric["latency"], "max_ns")),
            "{name}: CSV latency"
        );
    }
}

fn json_path(dir: &tempfile::TempDir) -> String {
    dir.path().join("result.json").to_str().unwrap().to_string()
}

/// Runs `fsbench bonnie -d MNT ARGS --json J` (J outside the mount) and
/// returns the output and the parsed result.
fn bonnie(mnt: &TmpfsMount, args: &[&str]) -> (Output, Value) {
    let out_dir = tempfile::tempdir().unwrap();
    // World-writable: with -u the result is written by that user.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(out_dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let json = json_path(&out_dir);
    let mut full = bonnie_args(&mnt.arg(), args);
    full.extend(["--json".to_string(), json.clone()]);
    let out = run(&full);
    out.assert_success().assert_no_panic();
    assert_no_scratch_left(mnt.path());
    let value = read_json(Path::new(&json));
    (out, value)
}

/// [`bonnie`] on a fresh 64 MiB tmpfs; None (skipped) when not root.
fn bonnie_on_tmpfs(args: &[&str]) -> Option<(TmpfsMount, Output, Value)> {
    let mnt = TmpfsMount::new("64m")?;
    let (out, result) = bonnie(&mnt, args);
    Some((mnt, out, result))
}

fn workloads(result: &Value) -> &Vec<Value> {
    result["targets"][0]["workloads"]
        .as_array()
        .expect("targets[0].workloads")
}

fn metrics(workload: &Value) -> &Vec<Value> {
    workload["metrics"].as_array().expect("metrics")
}

fn metric_names(workload: &Value) -> Vec<&str> {
    metrics(workload)
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect()
}

fn check_metrics(workload: &Value, expected: &[Expect]) {
    let names: Vec<&str> = expected.iter().map(|e| e.name).collect();
    assert_eq!(metric_names(workload), names, "metrics and their order");
    for (metric, expect) in metrics(workload).iter().zip(expected) {
        check_metric(metric, expect);
    }
}

fn assert_csv_shape(csv: &[String], machine: &str, seed: &str) {
    assert_eq!(csv.len(), 50, "CSV must have 50 fields: {csv:?}");
    assert_eq!(field(csv, 1), "1.98");
    assert_eq!(field(csv, 2), "fsbench");
    assert_eq!(field(csv, 3), machine);
    assert_eq!(field(csv, 5), seed);
}

/// What a single run must show: the metrics of `workload` are `expected`,
/// and the one CSV line of `out` has the shape for `machine` and `seed` and
/// says what the JSON says. Returns that CSV line.
fn check_single_run(
    out: &Output,
    workload: &Value,
    expected: &[Expect],
    machine: &str,
    seed: &str,
) -> Vec<String> {
    check_metrics(workload, expected);
    let csv = out.csv();
    assert_csv_shape(&csv, machine, seed);
    check_csv_matches_json(&csv, metrics(workload));
    csv
}

#[test]
fn all_twelve_tests_do_the_requested_work() {
    let Some((mnt, out, result)) = bonnie_on_tmpfs(&[
        "-s", "8", "-f1", "-n", "1", "-r", "0", "-m", "t", "-z", "42",
    ]) else {
        return;
    };
    assert_eq!(out.stderr, "", "a clean run prints nothing on stderr");
    assert!(!out.stdout.contains("+++++"), "never +++++\n{out}");

    assert_eq!(result["kind"], "fsbench-result");
    assert_eq!(result["schema_version"], 1);
    let target = &result["targets"][0];
    assert_eq!(target["path"], mnt.arg());
    assert_eq!(target["env"]["fs_type"], "tmpfs");
    let cleanup = &target["cleanup"];
    assert_eq!(cleanup["foreign_count"], 0, "{cleanup}");
    assert!(int(cleanup, "passes") <= 1, "{cleanup}");
    let runs = workloads(&result);
    assert_eq!(runs.len(), 1);
    let workload = &runs[0];
    assert_eq!(workload["workload"], "bonnie");
    assert_eq!(workload["repetition"], 0);
    assert_eq!(workload["params"]["file_size_mib"], 8);
    assert_eq!(workload["params"]["seed"]["number"], 42);

    let csv = check_single_run(&out, workload, &s8_f1_n1_expectations(), "t", "42");
    // -r 0: RAM unknown, so nothing is flagged as served from the cache.
    for metric in metrics(workload) {
        assert!(
            !metric["flags"].to_string().contains("fits_in_page_cache"),
            "{metric}"
        );
    }

    assert_eq!(field(&csv, 4), "1", "concurrency");
    assert_eq!(field(&csv, 6), "8M", "file size");
    assert_eq!(field(&csv, 7), "", "default chunk is left empty");
    assert_eq!(field(&csv, 8), "8192", "seeks");
    assert_eq!(field(&csv, 9), "5", "seekers");
    assert_eq!(field(&csv, 22), "1", "num_files");
    for n in 23..=26 {
        assert_eq!(field(&csv, n), "", "field {n}: defaults are empty");
    }

    // The table: both halves, named and labelled like bonnie++'s.
    let table: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        table
            .iter()
            .filter(|l| l.starts_with("Version fsbench"))
            .count(),
        2,
        "{out}"
    );
    assert!(
        table
            .iter()
            .any(|l| l.starts_with("t ") && l.contains(" 8M ")),
        "data row labelled 't ... 8M'\n{out}"
    );
    assert!(table.iter().filter(|l| l.starts_with("Latency")).count() == 2);
    assert!(
        out.stdout.trim_end().ends_with(&csv.join(",")),
        "the CSV line comes last"
    );
}

#[test]
fn s0_runs_only_file_tests_and_leaves_data_fields_empty() {
    let Some((_, out, result)) =
        bonnie_on_tmpfs(&["-s", "0", "-n", "1", "-r", "0", "-m", "f", "-z", "7"])
    else {
        return;
    };
    let workload = &workloads(&result)[0];
    let csv = check_single_run(&out, workload, &file_expectations(1024), "f", "7");
    for n in 6..=21 {
        assert_eq!(
            field(&csv, n),
            "",
            "field {n} must be empty with -s 0: {csv:?}"
        );
    }
    assert_eq!(field(&csv, 22), "1");
    for n in 27..=38 {
        assert!(!field(&csv, n).is_empty(), "field {n} must be set: {csv:?}");
    }
    assert!(!out.stdout.contains("Sequential Output"), "{out}");
    assert!(out.stdout.contains("Sequential Create"), "{out}");
}

#[test]
fn n0_runs_only_data_tests_and_leaves_file_fields_empty() {
    let Some((_, out, result)) =
        bonnie_on_tmpfs(&["-s", "8", "-f1", "-n", "0", "-r", "0", "-m", "d", "-z", "7"])
    else {
        return;
    };
    let workload = &workloads(&result)[0];
    let expected = data_expectations(8, 1, 8192, 8192);
    let csv = check_single_run(&out, workload, &expected, "d", "7");
    for n in 22..=38 {
        assert_eq!(
            field(&csv, n),
            "",
            "field {n} must be empty with -n 0: {csv:?}"
        );
    }
    for n in 10..=21 {
        assert!(!field(&csv, n).is_empty(), "field {n} must be set: {csv:?}");
    }
    assert!(out.stdout.contains("Sequential Output"), "{out}");
    assert!(!out.stdout.contains("Sequential Create"), "{out}");
}

/// `-n SPEC` with `-s 0`: all six file tests over 1024 entries; CSV fields
/// 23-25 (max, min, dirs) as given.
fn file_variant(spec: &str, kind: Value, dirs: u64, csv_max_min_dirs: [&str; 3]) {
    let Some((_, out, result)) =
        bonnie_on_tmpfs(&["-s", "0", "-n", spec, "-r", "0", "-m", "v", "-z", "3"])
    else {
        return;
    };
    let workload = &workloads(&result)[0];
    assert_eq!(workload["params"]["files"]["kind"], kind, "-n {spec}");
    assert_eq!(workload["params"]["files"]["dirs"], dirs, "-n {spec}");
    let csv = check_single_run(&out, workload, &file_expectations(1024), "v", "3");
    assert_eq!(
        [field(&csv, 23), field(&csv, 24), field(&csv, 25)],
        csv_max_min_dirs,
        "-n {spec}: max, min, dirs"
    );
}

#[test]
fn sized_files_in_two_directories() {
    file_variant(
        "1:4k:1k:2",
        serde_json::json!({"sized": {"max": 4096, "min": 1024}}),
        2,
        ["4096", "1024", "2"],
    );
}

#[test]
fn hard_links() {
    file_variant("1:-1", serde_json::json!("hard_links"), 1, ["link", "", ""]);
}

#[test]
fn symlinks_across_two_directories() {
    file_variant(
        "1:-2::2",
        serde_json::json!("sym_links"),
        2,
        ["symlink", "", "2"],
    );
}

#[test]
fn x3_prints_header_and_three_csv_lines_only() {
    let Some((_, out, result)) = bonnie_on_tmpfs(&[
        "-s", "8", "-f1", "-n", "1", "-r", "0", "-m", "x", "-z", "5", "-x", "3",
    ]) else {
        return;
    };
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "header + 3 CSV lines, no table\n{out}");
    assert!(lines[0].starts_with("format_version,"), "{out}");
    assert_eq!(
        lines[0].split(',').count(),
        50,
        "header names all 50 fields"
    );
    for line in &lines[1..] {
        let csv: Vec<String> = line.split(',').map(str::to_string).collect();
        assert_csv_shape(&csv, "x", "5");
    }
    assert!(!out.stdout.contains("Version"), "-x prints no table\n{out}");
    let runs = workloads(&result);
    assert_eq!(runs.len(), 3);
    let expected = s8_f1_n1_expectations();
    for (i, (workload, line)) in runs.iter().zip(&lines[1..]).enumerate() {
        assert_eq!(workload["repetition"], i as u64);
        check_metrics(workload, &expected);
        let csv: Vec<String> = line.split(',').map(str::to_string).collect();
        check_csv_matches_json(&csv, metrics(workload));
    }
}

#[test]
fn x1_prints_one_csv_line_without_header() {
    let Some((_, out, result)) =
        bonnie_on_tmpfs(&["-s", "0", "-n", "1", "-r", "0", "-m", "one", "-x", "1"])
    else {
        return;
    };
    assert_eq!(out.stdout.lines().count(), 1, "{out}");
    assert_csv_shape(&out.csv(), "one", field(&out.csv(), 5));
    assert_eq!(workloads(&result).len(), 1);
}

#[test]
fn quiet_sends_the_table_to_stderr_and_only_csv_to_stdout() {
    let Some((_, out, _)) = bonnie_on_tmpfs(&[
        "-s", "8", "-f1", "-n", "1", "-r", "0", "-m", "q", "-z", "1", "-q",
    ]) else {
        return;
    };
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "only the CSV line on stdout\n{out}");
    assert!(lines[0].starts_with("1.98,fsbench,q,"), "{out}");
    assert!(out.stderr.contains("Version fsbench"), "{out}");
    assert!(out.stderr.contains("Sequential Output"), "{out}");
    assert!(out.stderr.contains("Sequential Create"), "{out}");
    assert!(!out.stderr.contains("1.98,"), "no CSV on stderr\n{out}");
}

#[test]
fn fsync_after_every_write() {
    let Some((_, out, result)) = bonnie_on_tmpfs(&[
        "-s", "8", "-f1", "-n", "1", "-r", "0", "-m", "b", "-z", "1", "-b",
    ]) else {
        return;
    };
    let workload = &workloads(&result)[0];
    assert_eq!(workload["params"]["fsync_every_write"], true);
    check_metrics(workload, &s8_f1_n1_expectations());
    assert_eq!(out.csv().len(), 50);
}

#[test]
fn direct_io_runs_or_fails_cleanly() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let out_dir = tempfile::tempdir().unwrap();
    let json = json_path(&out_dir);
    let out = run(&bonnie_args(
        &mnt.arg(),
        &[
            "-s", "8", "-f", "-n", "0", "-r", "0", "-m", "D", "-z", "1", "-D", "--json", &json,
        ],
    ));
    assert_no_scratch_left(mnt.path());
    if out.code() == 0 {
        let result = read_json(Path::new(&json));
        let workload = &workloads(&result)[0];
        assert_eq!(workload["params"]["direct"], true);
        check_metrics(workload, &data_expectations(8, 0, 8192, 8192));
        check_csv_matches_json(&out.csv(), metrics(workload));
    } else {
        // Kernels before 6.6 refuse O_DIRECT on tmpfs: a clean failure.
        out.assert_error(1, &[]);
        assert!(!Path::new(&json).exists(), "no result for a failed run");
    }
}

#[test]
fn size_spec_sets_chunk_seeks_and_seekers() {
    let size = "8:16k:100:2"; // size:chunk:seeks:seekers
    let Some((_, out, result)) = bonnie_on_tmpfs(&[
        "-s", size, "-f1", "-n", "0", "-c", "2", "-r", "0", "-m", "c", "-z", "9",
    ]) else {
        return;
    };
    let workload = &workloads(&result)[0];
    assert_eq!(workload["params"]["chunk"], 16384);
    assert_eq!(workload["params"]["seekers"], 2);
    let expected = data_expectations(8, 1, 16384, 100);
    let csv = check_single_run(&out, workload, &expected, "c", "9");
    assert_eq!(
        [
            field(&csv, 4),
            field(&csv, 6),
            field(&csv, 7),
            field(&csv, 8),
            field(&csv, 9)
        ],
        ["2", "8M", "16k", "100", "2"],
        "concurrency, size, chunk, seeks, seekers"
    );
    // bonnie++'s row label: size:chunk:concurrency:seeks:seekers.
    assert!(out.stdout.contains("8M:16k:2:100:2"), "{out}");
}

#[test]
fn ram_size_flags_reads_served_from_the_page_cache() {
    let Some((_, out, result)) =
        bonnie_on_tmpfs(&["-s", "8", "-f1", "-n", "0", "-r", "1024", "-m", "r"])
    else {
        return;
    };
    let workload = &workloads(&result)[0];
    for metric in metrics(workload) {
        let name = metric["name"].as_str().unwrap();
        let flagged = metric["flags"].to_string().contains("fits_in_page_cache");
        let reads_cached = matches!(name, "rewrite" | "getc" | "get_block" | "seeks");
        assert_eq!(flagged, reads_cached, "{name}: {metric}");
    }
    assert!(out.stdout.contains("Note: data fits in RAM"), "{out}");
}

#[test]
fn random_number_file_is_used_and_named_in_the_csv() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let rand = mnt.join("random.bin");
    let values: [i32; 4] = [12345, -678, 0x7fff_fff0, 3];
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
    std::fs::write(&rand, &bytes).unwrap();
    let rand_arg = rand.to_str().unwrap();
    let (out, result) = bonnie(
        &mnt,
        &[
            "-s", "1", "-f", "-n", "1", "-r", "0", "-m", "z", "-Z", rand_arg,
        ],
    );
    assert_eq!(
        result["targets"][0]["workloads"][0]["params"]["seed"]["file"],
        rand_arg
    );
    let csv = out.csv();
    assert_csv_shape(&csv, "z", rand_arg);
    assert_eq!(std::fs::read(&rand).unwrap(), bytes, "-Z file unchanged");
}

#[test]
fn named_target_and_comma_in_machine_name() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let spec = format!("fast={}", mnt.arg());
    let out_dir = tempfile::tempdir().unwrap();
    let json = json_path(&out_dir);
    let out = run(&bonnie_args(
        &spec,
        &[
            "-s", "0", "-n", "1", "-r", "0", "-m", "a,b", "-z", "2", "--json", &json,
        ],
    ));
    out.assert_success();
    assert_no_scratch_left(mnt.path());
    let result = read_json(Path::new(&json));
    assert_eq!(result["targets"][0]["name"], "fast");
    assert_eq!(result["targets"][0]["path"], mnt.arg());
    // The CSV has no quoting: a comma in the name must not add a field.
    assert_csv_shape(&out.csv(), "a_b", "2");
}

#[test]
fn runs_as_another_user_with_u() {
    let Some((_, out, result)) = bonnie_on_tmpfs(&[
        "-s", "1", "-f", "-n", "1", "-r", "0", "-m", "u", "-u", "nobody",
    ]) else {
        return;
    };
    assert_eq!(out.csv().len(), 50);
    assert_eq!(
        workloads(&result)[0]["metrics"].as_array().unwrap().len(),
        10
    );
}

/// Likely bug: `--json -` with `bonnie` writes the JSON after the table and
/// the CSV line on stdout, so stdout is not a JSON document (`fsbench env
/// --json -` prints only the JSON).
#[test]
fn json_to_stdout_is_a_json_document() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let out = run(&quick_bonnie_args(&mnt.arg(), &["-m", "j", "--json", "-"]));
    out.assert_success();
    assert_no_scratch_left(mnt.path());
    let parsed: Result<Value, _> = serde_json::from_str(&out.stdout);
    assert!(parsed.is_ok(), "stdout is not one JSON document\n{out}");
}

/// Bug: in `seeks()` (src/workload/bonnie/data.rs) the main thread starts
/// the phase clock only after `start.wait()` has released the seekers, so
/// when it is scheduled late the seekers have done part (or all) of the
/// work before the clock starts: elapsed_s is too short and seeks/s too
/// high (seen: 8192 seeks "in" 0.1 ms = 73 million seeks/s on tmpfs). A
/// single seek can then take longer than the whole phase. With more
/// seekers than cores it shows on nearly every run.
#[test]
fn seek_phase_contains_every_seek() {
    let size = "8::8192:32"; // 8192 seeks by 32 seekers
    let Some((_, _, result)) = bonnie_on_tmpfs(&[
        "-s", size, "-f", "-n", "0", "-r", "0", "-m", "s", "-z", "1", "-x", "3",
    ]) else {
        return;
    };
    for workload in workloads(&result) {
        let seeks = metrics(workload)
            .iter()
            .find(|m| m["name"] == "seeks")
            .unwrap();
        let elapsed_ns = num(seeks, "elapsed_s") * 1e9;
        let latency = &seeks["latency"];
        let max = int(latency, "max_ns") as f64;
        // Each seeker's seeks run one after another inside the phase.
        let busy_per_seeker = num(latency, "mean_ns") * int(latency, "count") as f64 / 32.0;
        assert!(
            max <= elapsed_ns * 1.01 && busy_per_seeker <= elapsed_ns * 1.01,
            "repetition {}: one seek took {max} ns, the seekers were busy {busy_per_seeker} ns \
             each, but the phase lasted only {elapsed_ns} ns",
            workload["repetition"]
        );
    }
}

/// The device bytes (`device.read_bytes` / `written_bytes`) of one metric.
fn device_bytes(metric: &Value) -> (u64, u64) {
    let device = &metric["device"];
    (int(device, "read_bytes"), int(device, "written_bytes"))
}

/// What bonnie++ 2.00a's data phases do on a loop ext4, seen from the loop
/// device (strace and /proc/diskstats of both tools' phases agree): every
/// write phase ends with fsync + close inside its time, so the device has
/// taken the phase's bytes before the clock stops; the read phases that
/// follow find the file just written still in the page cache (bonnie++
/// neither drops it nor reopens with O_DIRECT; only its 2×RAM rule, which
/// `-r` defeats, keeps it out) and read nothing from the device. A size at
/// 2×`-r` keeps the RAM rule quiet, so only the counters flag the cache.
#[test]
fn data_phases_write_through_to_the_device_and_read_from_the_cache_as_bonnie_does() {
    let Some(mut device) = common::LoopDevice::new("256m") else {
        return;
    };
    device.mkfs("ext4");
    let mnt = device.mount();
    let out_dir = tempfile::tempdir().unwrap();
    let json = json_path(&out_dir);
    let args = [
        "-s", "64", "-f1", "-n", "0", "-r", "32", "-m", "l", "-z", "1",
    ];
    let mut full = bonnie_args(&mnt.display().to_string(), &args);
    full.extend(["--json".to_string(), json.clone()]);
    run(&full).assert_success().assert_no_panic();
    assert_no_scratch_left(&mnt);
    let result = read_json(Path::new(&json));
    let workload = &workloads(&result)[0];
    for metric in metrics(workload) {
        let name = metric["name"].as_str().unwrap();
        let flags = metric["flags"].to_string();
        assert!(!flags.contains("fits_in_page_cache"), "{name}: {metric}");
        let (read, written) = device_bytes(metric);
        let size = match name {
            "putc" | "getc" => MIB,
            _ => 64 * MIB,
        };
        match name {
            // Written and fsynced inside the phase: all of it on the device.
            "putc" | "put_block" => assert!(written >= size, "{name}: {metric}"),
            // Read from the cache, each chunk written back before the clock stops.
            "rewrite" => {
                assert!(written >= size && read < size / 10, "{name}: {metric}");
                assert!(flags.contains("served_from_cache"), "{name}: {metric}");
            }
            "getc" | "get_block" => {
                assert!(read < size / 10, "{name}: {metric}");
                assert!(flags.contains("served_from_cache"), "{name}: {metric}");
            }
            _ => {}
        }
    }
}

/// Empty files move no data: their tests weigh the device bytes per file
/// (what a create or a delete costs the storage); files with data do not.
#[test]
fn file_tests_of_empty_files_weigh_device_bytes_per_file() {
    let Some(mut device) = common::LoopDevice::new("256m") else {
        return;
    };
    device.mkfs("ext4");
    let mnt = device.mount();
    for (files, per_file) in [("1", true), ("1:4096:4096", false)] {
        let out_dir = tempfile::tempdir().unwrap();
        let json = json_path(&out_dir);
        let args = ["-s", "0", "-n", files, "-r", "0", "-m", "l", "-z", "1"];
        let mut full = bonnie_args(&mnt.display().to_string(), &args);
        full.extend(["--json".to_string(), json.clone()]);
        run(&full).assert_success().assert_no_panic();
        let result = read_json(Path::new(&json));
        let workload = &workloads(&result)[0];
        for metric in metrics(workload) {
            let name = metric["name"].as_str().unwrap();
            let per_op = &metric["device"]["bytes_per_op"];
            assert_eq!(per_op.is_number(), per_file, "{files} {name}: {metric}");
        }
        if per_file {
            let create = metrics(workload)
                .iter()
                .find(|m| m["name"] == "seq_create")
                .unwrap();
            let per_op = create["device"]["bytes_per_op"].as_f64().unwrap();
            assert!(per_op > 0.0, "creating 1024 files wrote metadata: {create}");
        }
    }
    assert_no_scratch_left(&mnt);
}

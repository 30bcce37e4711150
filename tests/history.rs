//! `fsbench history` and `fsbench compare --last` over a series of saved
//! runs made from one real result: a step change at a known run, where
//! the kernel and the mount options changed too, must be found at that run,
//! with its size and what changed, in every format. Series of a saved
//! two-target result (44 series) with seeded normal noise: a large step in
//! few runs is found, noise over every metric is no change, and a change
//! under the minimum effect is none.
mod common;

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::{FSBENCH, Output, Running, TmpfsMount, run};
use fsbench::rng::{Random, WyRand};
use serde_json::Value;

/// Runs in the series, and the first run after the step.
const RUNS: usize = 16;
const STEP_AT: usize = 10;
/// After the step every figure is this share of what it was.
const STEP: f64 = 0.75;
const NEW_KERNEL: &str = "6.6.0-history";
const NEW_OPTIONS: &str = "rw,noatime";

/// One real result of `fsbench io` on a tmpfs this test mounts (once per
/// test binary); None when not root.
fn real_result() -> Option<&'static Value> {
    static RESULT: OnceLock<Option<Value>> = OnceLock::new();
    RESULT
        .get_or_init(|| {
            let mount = TmpfsMount::new("64m")?;
            let json = mount.join("result.json");
            let out = run(&[
                "--json",
                json.to_str().unwrap(),
                "io",
                "-s",
                "4m",
                "--duration",
                "0.2s",
                "--warmup",
                "0",
                "--job",
                "seq-write:-b 1m --read 0 --seek seq",
                &mount.arg(),
            ]);
            out.assert_success();
            Some(serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap())
        })
        .as_ref()
}

fn run_id(index: usize) -> String {
    format!("20260101T000000Z-{index:012x}")
}

/// `base` as run `index` of a series: started `index` days after the
/// first, with an id of its own.
fn as_run(base: &Value, index: usize) -> Value {
    let mut run = base.clone();
    let started = chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z").unwrap()
        + chrono::Duration::days(index as i64);
    run["started"] = Value::String(started.to_rfc3339());
    run["run_id"] = Value::String(run_id(index));
    run
}

/// Every figure of `run` times `factor(name, metric)`, `name` being
/// `target/workload/metric`: the same for each repetition of a metric.
fn scale(run: &mut Value, mut factor: impl FnMut(&str, &Value) -> f64) {
    for target in run["targets"].as_array_mut().unwrap() {
        let target_name = target["name"].as_str().unwrap().to_string();
        for workload in target["workloads"].as_array_mut().unwrap() {
            let label = workload["label"].as_str().or(workload["workload"].as_str());
            let prefix = format!("{target_name}/{}", label.unwrap());
            for metric in workload["metrics"].as_array_mut().unwrap() {
                let name = format!("{prefix}/{}", metric["name"].as_str().unwrap());
                let value = metric["value"].as_f64().unwrap() * factor(&name, metric);
                metric["value"] = serde_json::json!(value);
            }
        }
    }
}

/// Every target of `run` mounted with `options`.
fn remount(run: &mut Value, options: &str) {
    for target in run["targets"].as_array_mut().unwrap() {
        target["env"]["mount_options"] = Value::String(options.into());
    }
}

/// Run `index` of the series: the real result started `index` days after
/// the first, every figure scaled by a small wobble and, from `STEP_AT`
/// on, by `STEP`, with the new kernel and mount options.
fn cloned(base: &Value, index: usize) -> Value {
    let mut run = as_run(base, index);
    // ±1 %: noise well under the step, the same for every run of the test.
    let wobble = 1.0 + ((index * 7) % 5) as f64 * 0.005 - 0.01;
    let factor = wobble * if index >= STEP_AT { STEP } else { 1.0 };
    scale(&mut run, |_, _| factor);
    if index >= STEP_AT {
        run["host"]["kernel"] = Value::String(NEW_KERNEL.into());
        remount(&mut run, NEW_OPTIONS);
    }
    run
}

/// A folder of the series; None when not root.
fn series_dir() -> Option<(tempfile::TempDir, &'static Value)> {
    let base = real_result()?;
    let dir = tempfile::tempdir().unwrap();
    for index in 0..RUNS {
        write(
            dir.path(),
            &format!("run-{index:02}.json"),
            &cloned(base, index),
        );
    }
    Some((dir, base))
}

fn write(dir: &Path, name: &str, run: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(run).unwrap()).unwrap();
    path
}

fn history(args: &[&str]) -> Output {
    let mut all = vec!["history"];
    all.extend(args);
    let out = run(&all);
    out.assert_no_panic();
    out
}

/// What the base run had, for the "what changed" phrases.
fn old_kernel_and_options(base: &Value) -> (String, String) {
    let kernel = base["host"]["kernel"].as_str().unwrap().to_string();
    let options = base["targets"][0]["env"]["mount_options"].as_str().unwrap();
    (kernel, options.to_string())
}

#[test]
fn the_step_is_found_at_its_run_with_its_size_and_cause_in_csv() {
    let Some((dir, base)) = series_dir() else {
        return;
    };
    let out = history(&[dir.path().to_str().unwrap(), "--format", "csv"]);
    out.assert_success();
    let mut reader = csv::Reader::from_reader(out.stdout.as_bytes());
    let header = reader.headers().unwrap().clone();
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    // The one job's headline metric, and only it, changed.
    assert_eq!(rows.len(), 1, "{}", out.stdout);
    let row = &rows[0];
    assert_eq!(&row[column("workload")], "seq-write");
    assert_eq!(row[column("index")].parse::<usize>().unwrap(), STEP_AT);
    assert_eq!(&row[column("run_before")], run_id(STEP_AT - 1));
    assert_eq!(&row[column("run_after")], run_id(STEP_AT));
    let change: f64 = row[column("change_percent")].parse().unwrap();
    assert!((change - (STEP - 1.0) * 100.0).abs() < 2.0, "{change}");
    let p: f64 = row[column("p_value")].parse().unwrap();
    assert!(p < 0.01, "{p}");
    let (kernel, options) = old_kernel_and_options(base);
    let what = &row[column("what_changed")];
    assert!(
        what.contains(&format!("kernel {kernel} → {NEW_KERNEL}")),
        "{what}"
    );
    assert!(
        what.contains(&format!("mount options {options} → {NEW_OPTIONS}")),
        "{what}"
    );
}

#[test]
fn terminal_and_markdown_tell_the_change_in_one_sentence() {
    let Some((dir, base)) = series_dir() else {
        return;
    };
    let (kernel, _) = old_kernel_and_options(base);
    let between = format!("between {} and {}", run_id(STEP_AT - 1), run_id(STEP_AT));
    let markdown = history(&[dir.path().to_str().unwrap(), "--format", "markdown"]);
    markdown.assert_success();
    let items: Vec<&str> = markdown
        .stdout
        .lines()
        .filter(|line| line.starts_with("- ") && line.contains("seq-write"))
        .collect();
    assert_eq!(items.len(), 1, "{}", markdown.stdout);
    for needle in ["fell 2", "worse", &between, &format!("→ {NEW_KERNEL}")] {
        assert!(items[0].contains(needle), "{needle:?} in {}", items[0]);
    }
    assert!(
        markdown.stdout.contains("2 different fingerprints"),
        "{markdown}"
    );
    // The terminal wraps the same sentence: read it with its lines joined.
    let terminal = history(&[dir.path().to_str().unwrap()]);
    terminal.assert_success();
    let joined = terminal
        .stdout
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let sentence = &items[0][2..];
    assert!(joined.contains(sentence), "{sentence}\nin\n{joined}");
    assert!(joined.contains(&format!("kernel {kernel} → {NEW_KERNEL}")));
}

/// The points of the SVG polylines drawn `stroke-width="2"` (the series'
/// line and its marks; axes and ticks are thinner).
fn thick_lines(svg: &str) -> Vec<Vec<(f64, f64)>> {
    svg.split("<polyline")
        .skip(1)
        .filter(|element| element.contains(r#"stroke-width="2""#))
        .map(|element| {
            let points = element.split(r#"points=""#).nth(1).unwrap();
            let points = &points[..points.find('"').unwrap()];
            points
                .split_whitespace()
                .map(|pair| {
                    let (x, y) = pair.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        })
        .collect()
}

#[test]
fn the_html_page_marks_the_change_between_the_runs_around_it() {
    let Some((dir, _)) = series_dir() else {
        return;
    };
    let page = dir.path().join("history.html");
    let out = history(&[
        dir.path().to_str().unwrap(),
        "--format",
        "html",
        "-o",
        page.to_str().unwrap(),
    ]);
    out.assert_success();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("fell 2"), "the change is told");
    let svgs: Vec<&str> = html.split("<svg").skip(1).collect();
    assert_eq!(svgs.len(), 1, "one series, one chart");
    let lines = thick_lines(svgs[0]);
    let series = lines
        .iter()
        .find(|l| l.len() == RUNS)
        .expect("the series' line");
    let marks: Vec<f64> = lines
        .iter()
        .filter(|l| l.len() == 2 && l[0].0 == l[1].0)
        .map(|l| l[0].0)
        .collect();
    assert!(!marks.is_empty(), "a change point is marked");
    let (before, after) = (series[STEP_AT - 1].0, series[STEP_AT].0);
    for x in marks {
        assert!(
            before < x && x < after,
            "mark at {x}, runs at {before} and {after}"
        );
    }
    // The line falls at the step: SVG's y grows downwards.
    assert!(series[STEP_AT].1 > series[STEP_AT - 1].1);
}

#[test]
fn bad_files_are_one_line_each_and_hide_nothing() {
    let Some((dir, base)) = series_dir() else {
        return;
    };
    let whole = serde_json::to_string(base).unwrap();
    std::fs::write(dir.path().join("cut.json"), &whole[..whole.len() / 2]).unwrap();
    std::fs::write(dir.path().join("package.json"), r#"{"name": "left-pad"}"#).unwrap();
    let mut newer = base.clone();
    newer["schema_version"] = serde_json::json!(999);
    write(dir.path(), "newer.json", &newer);
    let out = history(&[dir.path().to_str().unwrap(), "--format", "csv"]);
    out.assert_success();
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    for (file, why) in [
        ("cut.json", "truncated"),
        ("package.json", "not an fsbench result"),
        ("newer.json", "newer"),
    ] {
        let line = lines.iter().find(|l| l.contains(file)).expect(file);
        assert!(line.contains(why), "{line}");
    }
    assert!(out.stdout.contains(&run_id(STEP_AT)), "{out}");
}

#[test]
fn too_few_runs_or_none_are_said() {
    let Some(base) = real_result() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for index in 0..3 {
        write(dir.path(), &format!("{index}.json"), &cloned(base, index));
    }
    let out = history(&[dir.path().to_str().unwrap()]);
    out.assert_success();
    assert!(
        out.stdout.contains("too few runs for a change point"),
        "{out}"
    );
    let empty = tempfile::tempdir().unwrap();
    history(&[empty.path().to_str().unwrap()]).assert_error(2, &["no fsbench result"]);
}

/// `fsbench compare --last FILE` with `dir` as the results directory.
fn compare_last(data_home: &Path, file: &Path) -> Output {
    let mut command = Command::new(FSBENCH);
    command
        .args(["compare", "--last"])
        .arg(file)
        .env("XDG_DATA_HOME", data_home);
    let out = Running::spawn_command(&mut command, format!("compare --last {file:?}")).wait();
    out.assert_no_panic();
    out
}

#[test]
fn compare_last_takes_the_latest_earlier_comparable_run() {
    let Some(base) = real_result() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let results = home.path().join("fsbench/results");
    std::fs::create_dir_all(&results).unwrap();
    for index in [0, STEP_AT - 1] {
        write(&results, &format!("{index}.json"), &cloned(base, index));
    }
    // A later run, and one of other workloads: neither is the one.
    write(&results, "later.json", &cloned(base, STEP_AT + 3));
    let mut other = cloned(base, STEP_AT - 2);
    other["targets"][0]["workloads"][0]["label"] = Value::String("other".into());
    write(&results, "other.json", &other);
    let elsewhere = tempfile::tempdir().unwrap();
    let new = write(elsewhere.path(), "new.json", &cloned(base, STEP_AT));
    let out = compare_last(home.path(), &new);
    out.assert_success();
    let first_line = out.stdout.lines().next().unwrap_or("");
    assert!(
        first_line.starts_with(&format!("{}.json", STEP_AT - 1)),
        "{out}"
    );
    assert!(out.stdout.contains(&format!("→ {NEW_KERNEL}")), "{out}");
    // Nothing earlier: one line.
    let first = write(elsewhere.path(), "first.json", &cloned(base, 0));
    std::fs::remove_file(results.join("0.json")).unwrap();
    compare_last(home.path(), &first).assert_error(2, &["--last", "no saved run"]);
}

/// `--dir` names the results directory `--last` looks in (as `fsbench
/// results --dir`), and means nothing without `--last`.
#[test]
fn compare_last_looks_in_the_directory_given() {
    let Some(base) = real_result() else {
        return;
    };
    let empty_home = tempfile::tempdir().unwrap();
    let runs = tempfile::tempdir().unwrap();
    write(runs.path(), "earlier.json", &cloned(base, 1));
    let elsewhere = tempfile::tempdir().unwrap();
    let new = write(elsewhere.path(), "new.json", &cloned(base, 2));
    let compare = |args: &[&OsStr]| {
        let mut command = Command::new(FSBENCH);
        command
            .arg("compare")
            .args(args)
            .env("XDG_DATA_HOME", empty_home.path());
        let out = Running::spawn_command(&mut command, format!("compare {args:?}")).wait();
        out.assert_no_panic();
        out
    };
    let (last, dir) = (OsStr::new("--last"), OsStr::new("--dir"));
    let out = compare(&[last, new.as_os_str(), dir, runs.path().as_os_str()]);
    out.assert_success();
    assert!(out.stdout.starts_with("earlier.json"), "{out}");
    compare(&[last, new.as_os_str()]).assert_error(2, &["--last", "no saved run"]);
    let earlier = runs.path().join("earlier.json");
    compare(&[
        earlier.as_os_str(),
        new.as_os_str(),
        dir,
        runs.path().as_os_str(),
    ])
    .assert_error(2, &["--dir: only with --last"]);
}

/// The saved result of two tmpfs targets, each with bonnie and two io
/// patterns over 3 repetitions: 44 series, as many as a quick suite has.
fn two_targets() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-two-targets.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// From run `at` on, the metrics whose `target/workload/metric` name starts
/// with `metrics` are `factor` times worse (slower, or longer), on targets
/// remounted with -o sync.
struct Step {
    at: usize,
    factor: f64,
    metrics: &'static str,
}

/// A history of `runs` runs of the two-target result in a new folder: each
/// metric of each run `1 + spread·N(0, 1)` times its figure (seeded by
/// `seed`), with `step` if any and the runs' `--min-effect` if given.
fn noisy_history(
    runs: usize,
    seed: u64,
    spread: f64,
    step: Option<Step>,
    min_effect: Option<f64>,
) -> tempfile::TempDir {
    let base = two_targets();
    let options = base["targets"][0]["env"]["mount_options"].as_str().unwrap();
    let synced = format!("{options},sync");
    let dir = tempfile::tempdir().unwrap();
    let mut rng = WyRand::new(seed);
    for index in 0..runs {
        let mut run = as_run(&base, index);
        let stepped = step.as_ref().filter(|s| index >= s.at);
        let mut factors: HashMap<String, f64> = HashMap::new();
        scale(&mut run, |name, metric| {
            let noise = *factors
                .entry(name.to_string())
                .or_insert_with(|| 1.0 + spread * rng.normal());
            let worse = match stepped.filter(|s| name.starts_with(s.metrics)) {
                Some(s) if metric["direction"] == "higher_is_better" => 1.0 / s.factor,
                Some(s) => s.factor,
                None => 1.0,
            };
            noise * worse
        });
        if stepped.is_some() {
            remount(&mut run, &synced);
        }
        if let Some(fraction) = min_effect {
            run["min_effect"] = serde_json::json!(fraction);
        }
        write(dir.path(), &format!("run-{index:02}.json"), &run);
    }
    dir
}

/// The history's change points as CSV rows, each a map of column to value.
fn change_rows(dir: &Path) -> Vec<HashMap<String, String>> {
    let out = history(&[dir.to_str().unwrap(), "--format", "csv"]);
    out.assert_success();
    let mut reader = csv::Reader::from_reader(out.stdout.as_bytes());
    let header = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|row| {
            let row = row.unwrap();
            header
                .iter()
                .map(String::from)
                .zip(row.iter().map(String::from))
                .collect()
        })
        .collect()
}

#[test]
fn an_800x_drop_in_8_runs_is_found_at_its_run_with_its_size() {
    let step = Step {
        at: 4,
        factor: 800.0,
        metrics: "tmpfs/64k-seq-write/",
    };
    let dir = noisy_history(8, 42, 0.02, Some(step), None);
    let rows = change_rows(dir.path());
    let mut metrics: Vec<&str> = rows.iter().map(|r| r["metric"].as_str()).collect();
    metrics.sort_unstable();
    // Every figure of the one workload on the one target, and nothing else.
    assert_eq!(
        metrics,
        [
            "io_rate",
            "mib_per_s",
            "resp_max_ms",
            "resp_ms",
            "resp_stddev_ms",
            "write_resp_ms"
        ],
        "{rows:?}"
    );
    for row in &rows {
        assert_eq!(
            (&row["target"][..], &row["workload"][..]),
            ("tmpfs", "64k-seq-write")
        );
        assert_eq!(row["index"], "4");
        assert_eq!(row["run_before"], run_id(3));
        assert_eq!(row["run_after"], run_id(4));
        let ratio = 1.0 + row["change_percent"].parse::<f64>().unwrap() / 100.0;
        let size = if ratio < 1.0 { 1.0 / ratio } else { ratio };
        assert!((size / 800.0 - 1.0).abs() < 0.05, "{row:?}");
        assert!(row["p_value"].parse::<f64>().unwrap() < 1e-6, "{row:?}");
        assert!(row["what_changed"].contains(",sync"), "{row:?}");
    }
    let terminal = history(&[dir.path().to_str().unwrap()]);
    let joined = terminal
        .stdout
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    // "fell 790x": the size as a factor, not "fell 100 %".
    let said = joined
        .split("tmpfs · 64k-seq-write · throughput (MiB/s) fell ")
        .nth(1)
        .and_then(|rest| rest.split_once("x (worse"))
        .map(|(factor, _)| factor.parse::<f64>().unwrap());
    assert!(
        said.is_some_and(|f| (f / 800.0 - 1.0).abs() < 0.05),
        "{joined}"
    );
}

#[test]
fn twelve_runs_of_noise_over_every_metric_show_no_change() {
    for seed in 1..=10 {
        let dir = noisy_history(12, seed, 0.02, None, None);
        let rows = change_rows(dir.path());
        assert!(rows.is_empty(), "seed {seed}: {rows:?}");
    }
}

#[test]
fn a_30_percent_step_in_12_runs_is_found_among_44_series() {
    let step = Step {
        at: 6,
        factor: 1.0 / 0.7,
        metrics: "tmpfs/4k-rand-read/io_rate",
    };
    let rows = change_rows(noisy_history(12, 7, 0.02, Some(step), None).path());
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["metric"], "io_rate");
    assert_eq!(rows[0]["index"], "6");
    let percent: f64 = rows[0]["change_percent"].parse().unwrap();
    assert!((percent + 30.0).abs() < 3.0, "{percent}");
}

#[test]
fn a_change_under_the_runs_minimum_effect_is_none() {
    // 3 % in 0.2 % noise: certain, and under the default 5 %.
    let small = || Step {
        at: 6,
        factor: 1.0 / 0.97,
        metrics: "tmpfs/4k-rand-read/io_rate",
    };
    let rows = change_rows(noisy_history(12, 3, 0.002, Some(small()), None).path());
    assert!(rows.is_empty(), "{rows:?}");
    // Runs saved with --min-effect 2 % ask for it.
    let dir = noisy_history(12, 3, 0.002, Some(small()), Some(0.02));
    let rows = change_rows(dir.path());
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (&rows[0]["metric"][..], &rows[0]["index"][..]),
        ("io_rate", "6")
    );
    let out = history(&[dir.path().to_str().unwrap()]);
    assert!(out.stdout.contains("none under 2 %"), "{out}");
}

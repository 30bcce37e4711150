//! A sweep's parameters in every report format: four configurations of a
//! 2 × 2 matrix (recsize × ssb), run in an order that is not the matrix's,
//! each with values of its own, so that a row given another target's
//! figures, or the parameters of another, shows. The sweep table has a
//! row per configuration in the matrix's order, its parameters and the
//! means of that configuration; the CSV has a column per parameter; the
//! HTML a `#sweep` table; a result without parameters none of these.
//!
//! The goldens (`tests/fixtures/run-sweep.golden.*`) are regenerated with
//! `UPDATE_GOLDEN=1 cargo test --release --test report_sweep`.
use std::path::PathBuf;

use fsbench::analysis::Summary;
use fsbench::analysis::sweep::Sweep;
use fsbench::report::Reporter;
use fsbench::report::csv::Csv;
use fsbench::report::html::Html;
use fsbench::report::markdown::Markdown;
use fsbench::report::number;
use fsbench::report::terminal::{DEFAULT_WIDTH, Terminal};
use fsbench::result::RunResult;
use serde_json::{Value, json};

/// The configurations in run order: (name, recsize, ssb).
const RUN_ORDER: [(&str, &str, &str); 4] = [
    ("zfs-128k-0", "128k", "0"),
    ("zfs-1M-64k", "1M", "64k"),
    ("zfs-1M-0", "1M", "0"),
    ("zfs-128k-64k", "128k", "64k"),
];

/// The configurations in the matrix's order (recsize, then ssb, each in
/// the order of its values).
const MATRIX_ORDER: [&str; 4] = ["zfs-128k-0", "zfs-128k-64k", "zfs-1M-0", "zfs-1M-64k"];

/// (workload label, metric, unit, direction) of the run.
const METRICS: [(&str, &str, &str, &str); 3] = [
    ("tree", "copy_s", "s", "lower_is_better"),
    ("tree", "find_s", "s", "lower_is_better"),
    ("4k-rand-read", "io_rate", "IO/s", "higher_is_better"),
];

const REPETITIONS: usize = 2;
/// The sweep table's columns: each metric's readable title.
const METRIC_TITLES: [&str; 3] = [
    "tree: copy (s) ↓",
    "tree: find (s) ↓",
    "4k-rand-read: I/O rate (IO/s) ↑",
];
/// The sweep table's header in Markdown and HTML.
const SWEEP_HEADER: [&str; 6] = [
    "target",
    "recsize",
    "ssb",
    METRIC_TITLES[0],
    METRIC_TITLES[1],
    METRIC_TITLES[2],
];

/// Target `t`'s (run order) value of metric `m` in repetition `r`: a
/// figure of its own for every target and metric. The mean over the two
/// repetitions is `mean(t, m)`.
fn value(t: usize, m: usize, r: usize) -> f64 {
    mean(t, m) - 0.5 + r as f64
}

fn mean(t: usize, m: usize) -> f64 {
    100.0 * (t + 1) as f64 + 10.0 * m as f64 + 0.5
}

/// The result of the 2 × 2 sweep, built as `fsbench run --configs` records
/// it (with a fixed date and host, so it renders the same every time).
fn sweep_value() -> Value {
    let targets: Vec<Value> = (RUN_ORDER.iter().enumerate())
        .map(|(t, (name, recsize, ssb))| {
            let mut target = target(t, name);
            target["built"] = json!({
                "mkfs": format!("zpool create -O recordsize={recsize} -O special_small_blocks={ssb} p {{dev}}"),
                "options": "",
                "parameters": {"recsize": recsize, "ssb": ssb},
                "commands": [],
            });
            target
        })
        .collect();
    run_value(targets)
}

fn run_value(targets: Vec<Value>) -> Value {
    json!({
        "kind": "fsbench-result",
        "schema_version": 1,
        "fsbench_version": "0.0.0-test",
        "run_id": "sweep-test",
        "command": ["fsbench", "run", "--configs", "zfs.toml", "--images", "/var/tmp/img"],
        "started": "2026-01-02T03:04:05Z",
        "finished": "2026-01-02T04:04:05Z",
        "host": fixture_host(),
        "targets": targets,
    })
}

/// The host of the report tests' fixture run.
fn fixture_host() -> Value {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-two-targets.json");
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    fixture["host"].clone()
}

/// Target `t` (run order) named `name`, its workloads measured with
/// `value`, not built.
fn target(t: usize, name: &str) -> Value {
    let mut workloads = Vec::new();
    for label in ["tree", "4k-rand-read"] {
        for r in 0..REPETITIONS {
            let metrics: Vec<Value> = (METRICS.iter().enumerate())
                .filter(|(_, (l, ..))| *l == label)
                .map(|(m, (_, metric, unit, direction))| {
                    json!({
                        "name": metric, "value": value(t, m, r), "unit": unit,
                        "direction": direction, "samples": 1, "elapsed_s": 10.0,
                        "cpu_percent": null, "latency": null, "flags": []
                    })
                })
                .collect();
            let (kind, label) = match label {
                "tree" => ("tree", ""),
                other => ("io", other),
            };
            workloads.push(json!({
                "workload": kind, "label": label, "repetition": r, "params": {},
                "metrics": metrics, "notes": []
            }));
        }
    }
    json!({
        "name": name, "path": format!("/var/tmp/img/mnt/{name}"), "env": null,
        "workloads": workloads, "cleanup": null
    })
}

fn sweep_run() -> RunResult {
    serde_json::from_value(sweep_value()).unwrap()
}

/// The same run, without the configurations' parameters.
fn plain_run() -> RunResult {
    let mut value = sweep_value();
    for target in value["targets"].as_array_mut().unwrap() {
        target["built"]["parameters"] = json!({});
    }
    serde_json::from_value(value).unwrap()
}

fn render(reporter: &dyn Reporter, run: &RunResult) -> String {
    reporter.render(run, &Summary::of(run)).unwrap()
}

fn terminal(run: &RunResult) -> String {
    render(
        &Terminal {
            width: DEFAULT_WIDTH,
        },
        run,
    )
}

/// Run-order index of the configuration named `name`.
fn run_index(name: &str) -> usize {
    RUN_ORDER.iter().position(|(n, ..)| *n == name).unwrap()
}

/// The parameters of the configuration named `name`: [recsize, ssb].
fn parameters_of(name: &str) -> [&'static str; 2] {
    let (_, recsize, ssb) = RUN_ORDER[run_index(name)];
    [recsize, ssb]
}

/// The cells of a Markdown row (`| a | b |`), trimmed.
fn cells(line: &str) -> Vec<&str> {
    let cells: Vec<&str> = line.split('|').map(str::trim).collect();
    cells[1..cells.len() - 1].to_vec()
}

/// The cells of a terminal table's row (`│ a ┆ b │`), trimmed.
fn terminal_cells(line: &str) -> Vec<&str> {
    let inner = line.trim().trim_start_matches('│').trim_end_matches('│');
    inner.split('┆').map(str::trim).collect()
}

/// Each configuration's row: its name, its parameters, then the mean of
/// each metric, those of that configuration and no other.
fn assert_rows(rows: &[Vec<String>], what: &str) {
    assert_eq!(rows.len(), 4, "a row per configuration in {what}: {rows:?}");
    let names: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(names, MATRIX_ORDER, "in the matrix's order in {what}");
    for row in rows {
        let t = run_index(&row[0]);
        assert_eq!(row[1..3], parameters_of(&row[0]), "{what}: {row:?}");
        let means: Vec<String> = (0..METRICS.len()).map(|m| number(mean(t, m))).collect();
        assert_eq!(row[3..], means, "{what}: {row:?}");
    }
}

#[test]
fn the_sweep_knows_each_targets_parameters_and_orders_them_as_the_matrix() {
    let run = sweep_run();
    let sweep = Sweep::of(&run).expect("a sweep");
    assert_eq!(sweep.names, ["recsize", "ssb"]);
    for (t, (_, recsize, ssb)) in RUN_ORDER.iter().enumerate() {
        assert_eq!(sweep.values(t), [*recsize, *ssb]);
    }
    let order: Vec<&str> = (sweep.order().iter()).map(|&t| RUN_ORDER[t].0).collect();
    assert_eq!(order, MATRIX_ORDER);
    assert_eq!(Sweep::of(&plain_run()), None);
}

/// A target without a parameter another has: an empty value, after those
/// with it.
#[test]
fn a_missing_parameter_is_empty_and_sorts_last() {
    let mut value = sweep_value();
    value["targets"][0]["built"]["parameters"] = json!({"recsize": "128k"});
    value["targets"][1]
        .as_object_mut()
        .unwrap()
        .remove("built")
        .unwrap();
    let run: RunResult = serde_json::from_value(value).unwrap();
    let sweep = Sweep::of(&run).unwrap();
    assert_eq!(sweep.values(0), ["128k", ""]);
    assert_eq!(sweep.values(1), ["", ""]);
    assert_eq!(sweep.order(), [3, 0, 2, 1]);
}

#[test]
fn the_sweep_table_has_a_row_per_configuration_with_its_own_figures() {
    let run = sweep_run();
    let summary = Summary::of(&run);
    let table = summary.sweep.as_ref().unwrap().table(&summary);
    assert_eq!(table.parameters, ["recsize", "ssb"]);
    let titles: Vec<&str> = table.columns.iter().map(|c| c.title.as_str()).collect();
    assert_eq!(titles, METRIC_TITLES);
    let rows: Vec<Vec<String>> = (table.rows.iter())
        .map(|row| {
            let mut cells = vec![row.name.clone()];
            cells.extend(row.parameters.iter().cloned());
            cells.extend(row.cells.iter().map(|c| number(c.unwrap().mean)));
            cells
        })
        .collect();
    assert_rows(&rows, "the sweep table");
    // Lower is better for the times (the first target in run order), higher
    // for the rate (the last).
    let best: Vec<Vec<bool>> = (table.rows.iter())
        .map(|row| row.cells.iter().map(|c| c.unwrap().best).collect())
        .collect();
    let best_of = |column: usize| {
        let rows: Vec<&str> = (table.rows.iter().zip(&best))
            .filter(|(_, b)| b[column])
            .map(|(row, _)| row.name.as_str())
            .collect();
        rows
    };
    assert_eq!(best_of(0), ["zfs-128k-0"]);
    assert_eq!(best_of(1), ["zfs-128k-0"]);
    assert_eq!(best_of(2), ["zfs-128k-64k"]);
}

#[test]
fn the_terminal_shows_the_sweep_table_and_parameter_rows() {
    let text = terminal(&sweep_run());
    for line in text.lines() {
        assert!(line.chars().count() <= DEFAULT_WIDTH, "{line}\n{text}");
    }
    let start = text.find("Sweep: recsize × ssb").expect("a sweep table");
    let end = start + text[start..].find("\n\n").unwrap();
    let section = &text[start..end];
    // The metric columns may be split over several tables, each with the
    // target and its parameters: join each configuration's rows.
    let mut rows: Vec<Vec<String>> = Vec::new();
    for line in section.lines().filter(|l| l.starts_with("│ zfs-")) {
        let line_cells: Vec<String> = terminal_cells(line)
            .iter()
            .map(|c| c.trim_end_matches(" ★").to_string())
            .collect();
        match rows.iter_mut().find(|r| r[0] == line_cells[0]) {
            Some(row) => {
                assert_eq!(row[1..3], line_cells[1..3], "{section}");
                row.extend(line_cells[3..].iter().cloned());
            }
            None => rows.push(line_cells),
        }
    }
    assert_rows(&rows, &format!("the terminal's\n{section}"));
    // Every workload table has the parameters under its target header.
    let tables = text.matches("│ metric").count();
    assert_eq!(tables, 2, "{text}");
    let header = text.lines().find(|l| l.starts_with("│ metric")).unwrap();
    let targets: Vec<&str> = terminal_cells(header)[1..]
        .iter()
        .map(|c| c.split(' ').next().unwrap())
        .collect();
    assert_eq!(targets, RUN_ORDER.map(|(n, ..)| n));
    for (p, name) in ["recsize", "ssb"].into_iter().enumerate() {
        let rows: Vec<&str> = (text.lines())
            .filter(|l| l.starts_with(&format!("│ {name} ")))
            .collect();
        assert_eq!(rows.len(), tables, "{name} in every table\n{text}");
        for row in rows {
            let values = terminal_cells(row)[1..].to_vec();
            let expected: Vec<&str> = RUN_ORDER.iter().map(|c| [c.1, c.2][p]).collect();
            assert_eq!(values, expected, "{row}");
        }
    }
}

/// The Markdown sweep table, `| ... |` rows under `## Sweep`.
#[test]
fn markdown_has_the_sweep_table() {
    let text = render(&Markdown, &sweep_run());
    let start = text.find("\n## Sweep\n").expect("a sweep section");
    let end = start + 1 + text[start + 1..].find("\n## ").unwrap();
    let section = &text[start..end];
    let lines: Vec<&str> = section.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(cells(lines[0]), SWEEP_HEADER);
    let rows: Vec<Vec<String>> = lines[2..]
        .iter()
        .map(|l| {
            (cells(l).iter())
                .map(|c| c.trim_matches('*').to_string())
                .collect()
        })
        .collect();
    assert_rows(&rows, &format!("the Markdown\n{section}"));
    // The workload tables (a row per target) have the parameters after
    // the target.
    let tree = text.find("\n## tree").unwrap();
    let header = text[tree..].lines().find(|l| l.starts_with('|')).unwrap();
    assert_eq!(cells(header)[..3], ["target", "recsize", "ssb"]);
}

#[test]
fn csv_has_a_column_per_parameter() {
    for per_repetition in [false, true] {
        let text = render(&Csv { per_repetition }, &sweep_run());
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
        assert_eq!(header[..4], ["run", "target", "recsize", "ssb"]);
        let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        let expected_rows = match per_repetition {
            true => 4 * REPETITIONS * METRICS.len(),
            false => 4 * METRICS.len(),
        };
        assert_eq!(records.len(), expected_rows);
        let column = |name: &str| header.iter().position(|h| h == name).unwrap();
        for record in &records {
            let target = &record[1];
            assert_eq!(
                [&record[2], &record[3]],
                parameters_of(target),
                "{record:?}"
            );
            if !per_repetition {
                let t = run_index(target);
                let m = METRICS
                    .iter()
                    .position(|(l, name, ..)| {
                        *l == &record[column("workload")] && *name == &record[column("metric")]
                    })
                    .unwrap();
                let value: f64 = record[column("value")].parse().unwrap();
                assert_eq!(value, mean(t, m), "{record:?}");
            }
        }
    }
}

/// The text of every `<tag ...>...</tag>` in `html`, tags inside removed.
fn elements(html: &str, tag: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find(&format!("<{tag}")) {
        let after = &rest[start..];
        let open_end = after.find('>').unwrap() + 1;
        let close = after.find(&format!("</{tag}>")).unwrap();
        out.push(strip_tags(&after[open_end..close]).trim().to_string());
        rest = &after[close..];
    }
    out
}

fn strip_tags(html: &str) -> String {
    let mut text = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.replace("&#x2f;", "/").replace("&amp;", "&")
}

#[test]
fn html_has_the_sweep_table() {
    let html = render(&Html, &sweep_run());
    let start = html
        .find("<section id=\"sweep\">")
        .expect("a #sweep section");
    let end = start + html[start..].find("</section>").unwrap();
    let section = &html[start..end];
    let head = &section[section.find("<thead>").unwrap()..section.find("</thead>").unwrap()];
    assert_eq!(elements(head, "th"), SWEEP_HEADER);
    let body = &section[section.find("<tbody>").unwrap()..];
    let rows: Vec<Vec<String>> = body
        .split("<tr>")
        .skip(1)
        .map(|row| {
            let row = &row[..row.find("</tr>").unwrap()];
            let mut cells = elements(row, "th");
            cells.extend(elements(row, "td"));
            cells
        })
        .collect();
    assert_rows(&rows, &format!("the HTML\n{section}"));
    assert!(html.contains("<a href=\"#sweep\">Sweep</a>"), "linked");
    // The workload tables: a row per parameter, above the metrics.
    let tree = &html[html.find("<section id=\"workload-1\">").unwrap()..];
    let tbody = &tree[tree.find("<tbody>").unwrap()..tree.find("</tbody>").unwrap()];
    let first = tbody.split("<tr").nth(1).unwrap();
    let mut cells = elements(first, "th");
    cells.extend(elements(first, "td"));
    let mut expected = vec!["recsize".to_string()];
    expected.extend(RUN_ORDER.iter().map(|c| c.1.to_string()));
    assert_eq!(cells, expected);
}

#[test]
fn without_parameters_there_is_no_sweep() {
    let run = plain_run();
    assert!(Summary::of(&run).sweep.is_none());
    let text = terminal(&run);
    assert!(
        !text.contains("Sweep") && !text.contains("recsize"),
        "{text}"
    );
    let markdown = render(&Markdown, &run);
    assert!(!markdown.contains("## Sweep") && !markdown.contains("recsize"));
    let html = render(&Html, &run);
    assert!(!html.contains("id=\"sweep\"") && !html.contains("href=\"#sweep\""));
    for per_repetition in [false, true] {
        let csv = render(&Csv { per_repetition }, &run);
        let header = csv.lines().next().unwrap();
        let fixed = match per_repetition {
            true => fsbench::report::csv::REPETITION_HEADER.join(","),
            false => fsbench::report::csv::SUMMARY_HEADER.join(","),
        };
        assert_eq!(header, fixed);
    }
}

fn golden(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Each text format of the sweep, as a golden file.
#[test]
fn sweep_reports_match_goldens() {
    let run = sweep_run();
    let outputs = [
        ("run-sweep.golden.txt", terminal(&run)),
        ("run-sweep.golden.md", render(&Markdown, &run)),
        (
            "run-sweep.golden.csv",
            render(
                &Csv {
                    per_repetition: false,
                },
                &run,
            ),
        ),
    ];
    for (name, text) in outputs {
        let path = golden(name);
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (run with UPDATE_GOLDEN=1)", path.display()));
        assert!(
            text == expected,
            "{name} differs (UPDATE_GOLDEN=1 to accept after reading the diff):\n{text}"
        );
    }
}

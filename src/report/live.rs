//! What a single-workload command prints as each repetition ends, where
//! no compatibility format (bonnie++'s, vdbench's, PostMark's) applies:
//! the tree table of seed 000, and latency tables such as the durability
//! probes' (with their verdict). Rows name their operation as every view
//! does (`report::names`); the unit is the column's.
use std::fmt::Write as _;

use crate::analysis::names;
use crate::report::markdown::padded_table;
use crate::result::{Flag, MIN_PRECISE_SECONDS, WorkloadResult};
use crate::workload::tree::{Source, TreeConfig, TreeWorkload};

/// The line before a tree run's tables: what the dataset is, on which target.
pub fn tree_heading(config: &TreeConfig, target: &str, workload: &TreeWorkload) -> String {
    let what = match &config.source {
        Source::Dataset { kind, scale, seed } => {
            format!("dataset {} (scale {scale}, seed {seed})", kind.name())
        }
        Source::Dir(path) => format!("source {} (read-only)", path.display()),
    };
    format!(
        "fsbench tree: {what} on {target}\n{}\n",
        workload.description().summary()
    )
}

/// The table's text columns (operation, flags), left-aligned; the numbers
/// are right-aligned.
const TEXT_COLUMNS: &[usize] = &[0, 6];

/// Seed 000's table: one row per operation, elapsed s and MB/s (plus
/// entries/s, and seed 002's space used: bytes on disk per byte of what
/// the operation laid down, and CPU %), as Markdown.
pub fn tree_table(result: &WorkloadResult) -> String {
    let mut rows = vec![[
        "operation".to_string(),
        "elapsed (s)".into(),
        "MB/s".into(),
        "entries/s".into(),
        "space (×)".into(),
        "CPU %".into(),
        "flags".into(),
    ]];
    for elapsed in result.metrics.iter().filter(|m| m.unit == "s") {
        let Some(op) = elapsed.name.strip_suffix("_s") else {
            continue;
        };
        let rate = |suffix: &str, decimals: usize| {
            result
                .metric(&format!("{op}_{suffix}"))
                .map_or("-".to_string(), |m| format!("{:.decimals$}", m.value))
        };
        let flags: Vec<&str> = elapsed.flags.iter().map(|f| f.short()).collect();
        rows.push([
            names::words(&elapsed.name),
            format!("{:.3}", elapsed.value),
            rate("mb_s", 3),
            rate("entries_s", 0),
            rate("space", 2),
            elapsed
                .cpu_percent
                .map_or("-".into(), |c| format!("{c:.0}")),
            flags.join(","),
        ]);
    }
    let mut text = format!("\nrepetition {}\n", result.repetition + 1);
    text.push_str(&padded_table(&rows, TEXT_COLUMNS));
    if let Some(line) = sync_log_line(result) {
        text.push_str(&line);
    }
    for note in &result.notes {
        text.push_str(&format!("note: {note}\n"));
    }
    if result.metrics.iter().any(|m| !m.flags.is_empty()) {
        text.push_str("flags: short = under 0.5 s (less precise); cached = the data fits in RAM and was not dropped from it\n");
    }
    for elapsed in result.metrics.iter().filter(|m| m.unit == "s") {
        for flag in elapsed.flags.iter().filter(|f| f.from_device()) {
            let text_of = elapsed.flag_text(*flag);
            text.push_str(&format!("{}: {text_of}\n", names::words(&elapsed.name)));
        }
    }
    text
}

/// `sync log: 87 records, 87 syncs (fdatasync, batch 1) in /mnt/ram (tmpfs); sync p50 0.6 µs, p99 1.3 µs`
fn sync_log_line(result: &WorkloadResult) -> Option<String> {
    let log = result.params.get("sync_log")?;
    let syncs = result.metric("sync_log_syncs")?;
    let latency = syncs.latency.as_ref().map_or(String::new(), |l| {
        let us = |ns: u64| ns as f64 / 1e3;
        format!(
            "; sync p50 {:.1} µs, p99 {:.1} µs",
            us(l.p50_ns),
            us(l.p99_ns)
        )
    });
    Some(format!(
        "sync log: {} records, {} syncs ({}, batch {}) in {} ({}){latency}\n",
        log["records"],
        log["syncs"],
        log["mode"].as_str().unwrap_or("?"),
        log["batch"],
        log["placement"].as_str().unwrap_or("?"),
        log["fs_type"].as_str().unwrap_or("?"),
    ))
}

/// One row per probe, then the verdict.
pub fn durability_table(result: &WorkloadResult) -> String {
    let columns = Columns {
        what: "probe (4 KiB)",
        count: "writes",
        rate: "writes/s",
    };
    latency_table(result, &columns)
}

/// The headings of a latency table (its rows are named by
/// `names::words`, without the unit the rate's heading gives).
pub struct Columns {
    pub what: &'static str,
    pub count: &'static str,
    pub rate: &'static str,
}

/// One row per metric with latencies: how many, how many per second, and
/// the latency percentiles in ms; then which were too short to time
/// precisely, and the result's notes.
pub fn latency_table(result: &WorkloadResult, columns: &Columns) -> String {
    let mut text = format!(
        "{:<20} {:>8} {:>10} {:>9} {:>9} {:>9} {:>9}\n",
        columns.what, columns.count, columns.rate, "p50 ms", "p99 ms", "p99.9 ms", "max ms"
    );
    let ms = |ns: u64| ns as f64 / 1e6;
    for metric in &result.metrics {
        let Some(l) = &metric.latency else {
            continue;
        };
        let _ = writeln!(
            text,
            "{:<20} {:>8} {:>10.1} {:>9.3} {:>9.3} {:>9.3} {:>9.3}",
            names::words(&metric.name),
            metric.samples,
            metric.value,
            ms(l.p50_ns),
            ms(l.p99_ns),
            ms(l.p999_ns),
            ms(l.max_ns)
        );
    }
    text.push('\n');
    let short: Vec<String> = result
        .metrics
        .iter()
        .filter(|m| m.flags.contains(&Flag::TooShort))
        .map(|m| names::words(&m.name))
        .collect();
    if !short.is_empty() {
        let _ = writeln!(
            text,
            "{}: under {MIN_PRECISE_SECONDS} s, less precise (give it more work)",
            short.join(", ")
        );
    }
    for line in &result.notes {
        let _ = writeln!(text, "{line}");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Direction, LatencySummary, Metric};

    fn latency() -> LatencySummary {
        LatencySummary {
            count: 1,
            min_ns: 1000,
            mean_ns: 1000.0,
            p50_ns: 1000,
            p90_ns: 1000,
            p99_ns: 1000,
            p999_ns: 1000,
            p9999_ns: 1000,
            max_ns: 1000,
            histogram: None,
        }
    }

    fn result(metrics: Vec<Metric>) -> WorkloadResult {
        WorkloadResult {
            workload: "test".into(),
            metrics,
            ..Default::default()
        }
    }

    #[test]
    fn tree_rows_are_named_as_every_view_names_them() {
        let ops = ["generate_s", "cmd1_s", "stream_write_s"];
        let mut metrics: Vec<Metric> = ops
            .iter()
            .map(|op| Metric::test(op, "s", Direction::LowerIsBetter, 1.0))
            .collect();
        metrics.push(Metric::test(
            "generate_space",
            "×",
            Direction::LowerIsBetter,
            40.96,
        ));
        let table = tree_table(&result(metrics));
        assert!(table.contains(" space (×) |"), "{table}");
        let generate = table.lines().find(|l| l.contains("dataset generation"));
        assert!(generate.is_some_and(|l| l.contains(" 40.96 |")), "{table}");
        for row in ["| dataset generation ", "| command 1 ", "| stream write "] {
            assert!(table.contains(row), "{row}\n{table}");
        }
        assert!(
            !table.contains("cmd1") && !table.contains("stream_write"),
            "{table}"
        );
    }

    #[test]
    fn latency_rows_are_named_as_every_view_names_them() {
        let mut metric = Metric::test(
            "readdir_stat_ops_s",
            "ops/s",
            Direction::HigherIsBetter,
            9.0,
        )
        .with_latency(Some(latency()));
        metric.flags.push(Flag::TooShort);
        let osync = Metric::test("osync_write", "writes/s", Direction::HigherIsBetter, 9.0)
            .with_latency(Some(latency()));
        let columns = Columns {
            what: "operation",
            count: "ops",
            rate: "ops/s",
        };
        let table = latency_table(&result(vec![metric, osync]), &columns);
        let rows: Vec<&str> = table.lines().collect();
        assert!(rows[1].starts_with("readdir stat "), "{table}");
        assert!(rows[2].starts_with("O_SYNC write "), "{table}");
        assert!(table.contains("readdir stat: under 0.5 s"), "{table}");
    }
}

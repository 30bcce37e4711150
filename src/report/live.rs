//! What a single-workload command prints as each repetition ends, where
//! no compatibility format (bonnie++'s, vdbench's, PostMark's) applies:
//! the tree table of seed 000, and latency tables such as the durability
//! probes' (with their verdict).
use std::fmt::Write as _;

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
const TEXT_COLUMNS: &[usize] = &[0, 5];

/// Seed 000's table: one row per operation, elapsed s and MB/s (plus
/// entries/s and CPU %), as Markdown.
pub fn tree_table(result: &WorkloadResult) -> String {
    let mut rows = vec![[
        "operation".to_string(),
        "elapsed (s)".into(),
        "MB/s".into(),
        "entries/s".into(),
        "CPU %".into(),
        "flags".into(),
    ]];
    for elapsed in result.metrics.iter().filter(|m| m.unit == "s") {
        let op = elapsed.name.trim_end_matches("_s");
        let rate = |suffix: &str, decimals: usize| {
            result
                .metric(&format!("{op}_{suffix}"))
                .map_or("-".to_string(), |m| format!("{:.decimals$}", m.value))
        };
        let flags: Vec<&str> = elapsed
            .flags
            .iter()
            .map(|f| match f {
                crate::result::Flag::TooShort => "short",
                crate::result::Flag::FitsInPageCache => "cached",
                crate::result::Flag::WritesCached => "unsynced",
            })
            .collect();
        rows.push([
            op.to_string(),
            format!("{:.3}", elapsed.value),
            rate("mb_s", 3),
            rate("entries_s", 0),
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
        suffix: "",
    };
    latency_table(result, &columns)
}

/// The headings of a latency table, and what its row names drop from the
/// metric names.
pub struct Columns {
    pub what: &'static str,
    pub count: &'static str,
    pub rate: &'static str,
    pub suffix: &'static str,
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
            metric
                .name
                .strip_suffix(columns.suffix)
                .unwrap_or(&metric.name),
            metric.samples,
            metric.value,
            ms(l.p50_ns),
            ms(l.p99_ns),
            ms(l.p999_ns),
            ms(l.max_ns)
        );
    }
    text.push('\n');
    let short: Vec<&str> = result
        .metrics
        .iter()
        .filter(|m| m.flags.contains(&Flag::TooShort))
        .map(|m| m.name.strip_suffix(columns.suffix).unwrap_or(&m.name))
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

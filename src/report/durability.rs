//! The durability table (`fsbench crash`, and beside the throughput
//! tables where a run measured it): per configuration what its power cuts
//! lost, and each configuration's loss rate against the first one's by
//! Fisher's exact test.
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};

use super::terminal::{fitted, wrap};
use crate::measure::stats::fisher_exact;
use crate::result::RunResult;
use crate::result::durability::Durability;

/// The section's title in every report.
pub const TITLE: &str = "Durability (simulated power cuts)";

/// How to read the table.
pub const LEGEND: &str = "lost data: cuts that lost acknowledged data or the file system (unmountable, fsck errors); acked: the workload was told its data was durable (fsync, fdatasync, O_DSYNC, the atomic replace idiom); silent: the data was lost yet the file system mounted and its fsck was clean";

/// The columns: what a reader needs to judge a configuration's safety.
pub const HEADER: [&str; 9] = [
    "configuration",
    "cuts",
    "lost data",
    "silent",
    "fsck errors",
    "unmountable",
    "acked ops lost / corrupt",
    "unsynced lost",
    "flushes",
];

/// The run's targets whose power cuts were measured, with what they
/// found, in the run's order.
pub fn judged(run: &RunResult) -> Vec<(String, Durability)> {
    run.targets
        .iter()
        .filter_map(|t| Some((t.name.clone(), t.durability.clone()?)))
        .collect()
}

/// The table's rows, as text.
pub fn rows(judged: &[(String, Durability)]) -> Vec<[String; 9]> {
    judged
        .iter()
        .map(|(name, d)| {
            [
                name.clone(),
                format!("{} ({})", d.states, how(d)),
                format!("{} of {}", d.failed(), d.states),
                d.states_silent.to_string(),
                d.states_fsck_errors.to_string(),
                d.states_unmountable.to_string(),
                format!("{} / {}", d.acknowledged_lost, d.acknowledged_corrupt),
                d.unacknowledged_lost.to_string(),
                d.flushes.to_string(),
            ]
        })
        .collect()
}

/// The disk model, and the sync log left unsynced where it was.
fn how(d: &Durability) -> String {
    match d.sync_log_unsynced {
        true => format!("{}, log unsynced", d.model.name()),
        false => d.model.name().to_string(),
    }
}

/// Each configuration after the first against it, counting the cuts that
/// lost data or the file system: "ext4-nobarrier loses data in more cuts
/// than ext4-defaults (24 of 200 against 0 of 200; Fisher's exact test p <
/// 0.001)".
pub fn comparisons(judged: &[(String, Durability)]) -> Vec<String> {
    let Some((first, base)) = judged.first() else {
        return Vec::new();
    };
    judged[1..]
        .iter()
        .filter_map(|(name, d)| {
            let (a, n) = (d.failed() as u64, d.states as u64);
            let (b, m) = (base.failed() as u64, base.states as u64);
            let p = fisher_exact(a, n, b, m)?;
            let how = match (p < 0.05, a * m > b * n) {
                (false, _) => "shows no measurable difference in lost cuts from",
                (true, true) => "loses data in more cuts than",
                (true, false) => "loses data in fewer cuts than",
            };
            Some(format!(
                "{name} {how} {first} ({a} of {n} against {b} of {m}; Fisher's exact test {})",
                crate::report::p_phrase(p)
            ))
        })
        .collect()
}

/// Below the table, in every report: each configuration's one line,
/// then the comparisons.
pub fn findings(judged: &[(String, Durability)]) -> Vec<String> {
    judged
        .iter()
        .map(|(name, d)| format!("{name}: durability: {}", d.summary()))
        .chain(comparisons(judged))
        .collect()
}

/// The terminal's durability section, the table fitted to `width`: the
/// table, the findings, the legend.
pub fn text(judged: &[(String, Durability)], width: usize) -> String {
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header(HEADER);
    for row in rows(judged) {
        table.add_row(row);
    }
    for column in 1..HEADER.len() {
        if let Some(column) = table.column_mut(column) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut out = format!("{TITLE}\n{}\n", fitted(table, width));
    for line in findings(judged) {
        out += &wrap(&line, width, "  ");
    }
    out += &wrap(LEGEND, width, "  ");
    out
}

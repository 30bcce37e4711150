//! The durability table (`fsbench crash`, and beside the throughput
//! tables where a run measured it): per configuration what its power cuts
//! lost, and each configuration's loss rate against the first one's by
//! Fisher's exact test.
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};

use crate::crash::Durability;
use crate::measure::stats::fisher_exact;

/// The columns: what a reader needs to judge a configuration's safety.
const HEADER: [&str; 9] = [
    "configuration",
    "cuts",
    "lost acked data",
    "silent",
    "fsck errors",
    "unmountable",
    "acked ops lost / corrupt",
    "unsynced lost",
    "flushes",
];

/// The table's rows, as text.
fn rows(judged: &[(String, Durability)]) -> Vec<[String; 9]> {
    judged
        .iter()
        .map(|(name, d)| {
            [
                name.clone(),
                format!("{} ({})", d.states, d.model.name()),
                format!("{} of {}", d.states_losing, d.states),
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

/// Each configuration after the first against it: "ext4-nobarrier loses
/// acknowledged data in more cuts than ext4-defaults (24 of 200 against 0
/// of 200; Fisher's exact test p < 0.001)".
pub fn comparisons(judged: &[(String, Durability)]) -> Vec<String> {
    let Some((first, base)) = judged.first() else {
        return Vec::new();
    };
    judged[1..]
        .iter()
        .filter_map(|(name, d)| {
            let (a, n) = (d.states_losing as u64, d.states as u64);
            let (b, m) = (base.states_losing as u64, base.states as u64);
            let p = fisher_exact(a, n, b, m)?;
            let how = match (p < 0.05, a * m > b * n) {
                (false, _) => "shows no measurable difference in lost cuts from",
                (true, true) => "loses acknowledged data in more cuts than",
                (true, false) => "loses acknowledged data in fewer cuts than",
            };
            Some(format!(
                "{name} {how} {first} ({a} of {n} against {b} of {m}; Fisher's exact test {})",
                crate::report::p_phrase(p)
            ))
        })
        .collect()
}

/// The terminal's durability section: the table, each configuration's
/// one line, the comparisons.
pub fn text(judged: &[(String, Durability)]) -> String {
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
    let mut out = format!("Durability (simulated power cuts)\n{table}\n");
    for (name, d) in judged {
        out += &format!("{name}: durability: {}\n", d.summary());
    }
    for line in comparisons(judged) {
        out += &line;
        out.push('\n');
    }
    out += "acked: the workload was told its data was durable (fsync, fdatasync, O_DSYNC, the atomic replace idiom); silent: the data was lost yet the file system mounted and its fsck was clean\n";
    out
}

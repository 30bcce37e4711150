//! Seed 000's conclusion made visible: where workloads of a run differ
//! only in where their sync log lives (`--sync-log`: same kind, same
//! parameters otherwise), one table per target compares the placements:
//! each one's headline figures and its slowdown against the fastest
//! placement (1.00x = the fastest). The workload run without a sync log
//! is the reference row, first, with its figures where it has them.
//! Groups are found from the results' `params` (their settings: what a
//! workload recorded there as it ran is left out, `RECORDS`), so any suite
//! that sweeps placements gets the table.
use serde_json::Value;

use super::Summary;
use super::summary::{MetricSummary, WorkloadSummary, slowdowns};
use crate::result::{RunResult, WorkloadResult};

/// The key of the sync log's settings in a result's `params`.
const SYNC_LOG_KEY: &str = "sync_log";

/// What a workload records in its `params` besides its settings: readings
/// taken as it ran, which a sync log changes by being there. A tree's
/// `space` (the file system's used bytes and inodes around each
/// operation) counts the log file when the log is on the target, so a
/// workload without a log never reads the same as one with it; these are
/// left out when workloads are grouped, with the sync log itself.
const RECORDS: [&str; 2] = [SYNC_LOG_KEY, "space"];

/// The placement of a workload without a sync log: the reference row.
const NO_SYNC_LOG: &str = "no sync log";

/// The metrics of a tree's dataset generation: setup the sync log leaves
/// out.
const UNLOGGED_SETUP: &str = "generate_";

/// The placements of one group of workloads, on one target.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacementTable {
    pub kind: String,
    pub target: String,
    /// The compared figures: (metric name, unit).
    pub columns: Vec<(String, String)>,
    pub rows: Vec<PlacementRow>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PlacementRow {
    pub workload: String,
    /// Where the log was (`target`, a directory, `no sync log`), with its
    /// mode and batch when not the defaults.
    pub placement: String,
    /// Per column: the mean and the slowdown against the fastest row.
    pub cells: Vec<Option<Slowdown>>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slowdown {
    pub mean: f64,
    /// How many times slower than the fastest placement (>= 1).
    pub factor: f64,
}

/// The placement tables of a run: for every group of at least two
/// workloads that differ only in their sync log, one table per target
/// that has values.
pub fn placement_tables(run: &RunResult, summary: &Summary) -> Vec<PlacementTable> {
    let mut tables = Vec::new();
    for group in groups(run, summary) {
        let first = group[0].workload;
        let columns = group_columns(&group);
        for (t, target) in summary.targets.iter().enumerate() {
            let rows = rows_on_target(&group, &columns, t);
            if rows.iter().any(|r| r.cells.iter().any(Option::is_some)) {
                tables.push(PlacementTable {
                    kind: first.kind.clone(),
                    target: target.clone(),
                    columns: columns
                        .iter()
                        .map(|m| (m.name.clone(), m.unit.clone()))
                        .collect(),
                    rows,
                });
            }
        }
    }
    tables
}

/// A workload of a group and its placement (`placement_label`).
pub(super) struct Member<'s> {
    pub(super) workload: &'s WorkloadSummary,
    pub(super) placement: String,
}

/// The run's groups of workloads that differ only in their sync log (the
/// one without a log first), each with the figures its table compares:
/// what the verdict's placement lines test.
pub(super) fn compared_groups<'s>(
    run: &RunResult,
    summary: &'s Summary,
) -> Vec<(Vec<Member<'s>>, Vec<&'s MetricSummary>)> {
    groups(run, summary)
        .into_iter()
        .map(|group| {
            let columns = group_columns(&group);
            (group, columns)
        })
        .collect()
}

/// The workloads that are placements of a sync log compared with each
/// other: what their logs risk is the comparison's subject, not the
/// configuration's.
pub fn placed_workloads(run: &RunResult, summary: &Summary) -> Vec<String> {
    groups(run, summary)
        .iter()
        .flatten()
        .map(|member| member.workload.name.clone())
        .collect()
}

/// The workloads alike but for their sync log, in groups of at least two
/// placements (so one of them at least is a sync log); in each, the
/// workload without a log (the reference) first, the others in the run's
/// order.
fn groups<'s>(run: &RunResult, summary: &'s Summary) -> Vec<Vec<Member<'s>>> {
    let mut groups: Vec<(Value, Vec<Member>)> = Vec::new();
    for workload in &summary.workloads {
        let Some(first) = first_result(run, &workload.name) else {
            continue;
        };
        let key = serde_json::json!([first.workload, settings(&first.params)]);
        let member = Member {
            workload,
            placement: placement_label(first),
        };
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(member),
            None => groups.push((key, vec![member])),
        }
    }
    groups
        .into_iter()
        .map(|(_, members)| members)
        .filter(|members| {
            let mut placements: Vec<&str> = members.iter().map(|m| m.placement.as_str()).collect();
            placements.sort_unstable();
            placements.dedup();
            placements.len() >= 2
        })
        .map(|mut members| {
            members.sort_by_key(|m| m.placement != NO_SYNC_LOG);
            members
        })
        .collect()
}

/// The first result of a workload, on any target.
fn first_result<'r>(run: &'r RunResult, name: &str) -> Option<&'r WorkloadResult> {
    run.targets
        .iter()
        .flat_map(|t| &t.workloads)
        .find(|w| w.name() == name)
}

/// A workload's parameters without its sync log and the readings it
/// recorded (`RECORDS`): what must be equal for two workloads to differ
/// only in their sync log.
fn settings(params: &Value) -> Value {
    let mut params = params.clone();
    if let Some(object) = params.as_object_mut() {
        for key in RECORDS {
            object.remove(key);
        }
    }
    params
}

/// `target`, `/mnt/ram`, `target, mode none, batch 10`, or `no sync log`.
pub fn placement_label(result: &WorkloadResult) -> String {
    let Some(log) = result.params.get(SYNC_LOG_KEY) else {
        return NO_SYNC_LOG.to_string();
    };
    let mut label = log["placement"].as_str().unwrap_or("?").to_string();
    if let Some(mode) = log["mode"].as_str().filter(|m| *m != "fdatasync") {
        label.push_str(&format!(", mode {mode}"));
    }
    if let Some(batch) = log["batch"].as_u64().filter(|b| *b != 1) {
        label.push_str(&format!(", batch {batch}"));
    }
    label
}

/// The columns of a group's table: each member's headline figures
/// (`headline_metrics`), in the order the members give them, each once;
/// a member without one of them (a workload without a log has no log's
/// figures, but may lack others too) shows `–` there.
fn group_columns<'s>(members: &[Member<'s>]) -> Vec<&'s MetricSummary> {
    let mut columns: Vec<&MetricSummary> = Vec::new();
    for member in members {
        for metric in headline_metrics(member.workload) {
            if !columns.iter().any(|c| c.name == metric.name) {
                columns.push(metric);
            }
        }
    }
    columns
}

/// The figures a placement changes most visibly: the times (`*_s`) of a
/// workload that reports them (tree), else its top-level rates, named
/// without a qualifier (PostMark's transactions, create, read, append,
/// delete). The sync log's own figures are left out: they are the cause;
/// so is a tree's dataset generation, which the log does not record (its
/// differences between placements are noise).
fn headline_metrics(workload: &WorkloadSummary) -> Vec<&MetricSummary> {
    let own = |m: &&MetricSummary| {
        !m.name.starts_with(SYNC_LOG_KEY) && !m.name.starts_with(UNLOGGED_SETUP)
    };
    let times: Vec<&MetricSummary> = workload
        .metrics
        .iter()
        .filter(own)
        .filter(|m| m.unit == "s")
        .collect();
    if !times.is_empty() {
        return times;
    }
    workload
        .metrics
        .iter()
        .filter(own)
        .filter(|m| !m.name.contains('_'))
        .collect()
}

/// One row per member on target `t`, slowdowns taken per column.
fn rows_on_target(members: &[Member], columns: &[&MetricSummary], t: usize) -> Vec<PlacementRow> {
    let means: Vec<Vec<Option<f64>>> = members
        .iter()
        .map(|member| {
            columns
                .iter()
                .map(|column| mean_of(member.workload, &column.name, t))
                .collect()
        })
        .collect();
    let factors: Vec<Vec<Option<f64>>> = columns
        .iter()
        .enumerate()
        .map(|(c, column)| {
            let values: Vec<Option<f64>> = means.iter().map(|row| row[c]).collect();
            slowdowns(&values, column.direction)
        })
        .collect();
    members
        .iter()
        .enumerate()
        .map(|(r, member)| PlacementRow {
            workload: member.workload.name.clone(),
            placement: member.placement.clone(),
            cells: (0..columns.len())
                .map(|c| {
                    let mean = means[r][c]?;
                    let factor = factors[c][r]?;
                    Some(Slowdown { mean, factor })
                })
                .collect(),
        })
        .collect()
}

fn mean_of(workload: &WorkloadSummary, metric: &str, t: usize) -> Option<f64> {
    let metric = workload.metrics.iter().find(|m| m.name == metric)?;
    metric.cells[t].as_ref().map(|cell| cell.stats.mean)
}

/// A cell as the text formats show it: `12.35 (2.41x)`.
pub fn cell_text(cell: Option<Slowdown>) -> String {
    match cell {
        Some(cell) => format!("{} ({:.2}x)", super::number(cell.mean), cell.factor),
        None => "–".to_string(),
    }
}

/// The title of a table: `postmark on ext4`.
pub fn title(table: &PlacementTable) -> String {
    format!("{} on {}", table.kind, table.target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Direction, Metric, TargetResult};

    fn metric(name: &str, unit: &str, value: f64) -> Metric {
        let direction = match unit {
            "s" => Direction::LowerIsBetter,
            _ => Direction::HigherIsBetter,
        };
        Metric::test(name, unit, direction, value)
    }

    /// A tree result with `copy_s` seconds and its sync log at `placement`.
    fn tree(label: &str, placement: Option<&str>, copy_s: f64, scale: f64) -> WorkloadResult {
        let mut params = serde_json::json!({"scale": scale});
        if let Some(placement) = placement {
            params["sync_log"] =
                serde_json::json!({"placement": placement, "mode": "fdatasync", "batch": 1});
        }
        WorkloadResult {
            workload: "tree".into(),
            label: label.into(),
            params,
            metrics: vec![
                metric("generate_s", "s", copy_s / 2.0),
                metric("copy_s", "s", copy_s),
                metric("copy_mb_s", "MB/s", 1.0 / copy_s),
                metric("sync_log_syncs", "syncs/s", 10.0),
            ],
            ..Default::default()
        }
    }

    fn run_of(workloads: Vec<WorkloadResult>) -> RunResult {
        let mut run = crate::driver::recording::new_run_result("test");
        run.targets.push(TargetResult::test("ext4", workloads));
        run
    }

    #[test]
    fn workloads_differing_only_in_their_log_form_a_table() {
        let run = run_of(vec![
            tree("same-disk", Some("target"), 6.0, 0.1),
            tree("ram", Some("/mnt/ram"), 1.0, 0.1),
            tree("none", None, 0.9, 0.1),
            tree("other-scale", Some("target"), 3.0, 0.5),
        ]);
        let tables = placement_tables(&run, &Summary::of(&run));
        assert_eq!(tables.len(), 1, "{tables:?}");
        let table = &tables[0];
        assert_eq!(title(table), "tree on ext4");
        assert_eq!(table.columns, [("copy_s".to_string(), "s".to_string())]);
        let rows = first_column(table);
        assert_eq!(
            rows,
            [
                ("none", "no sync log", "0.9000 (1.00x)".to_string()),
                ("same-disk", "target", "6.000 (6.67x)".to_string()),
                ("ram", "/mnt/ram", "1.000 (1.11x)".to_string()),
            ]
        );
    }

    /// Each row's workload, placement and first figure as shown.
    fn first_column(table: &PlacementTable) -> Vec<(&str, &str, String)> {
        table
            .rows
            .iter()
            .map(|r| {
                (
                    r.workload.as_str(),
                    r.placement.as_str(),
                    cell_text(r.cells[0]),
                )
            })
            .collect()
    }

    /// What the tree records of the file system's growth around an
    /// operation (`params.space`), as the tree workload writes it: the
    /// log file on the target is one more inode and block.
    fn with_space(mut result: WorkloadResult, inodes: u64) -> WorkloadResult {
        result.params["space"] = serde_json::json!({
            "copy": {
                "before": {"bytes": 4_739_072, "inodes": 53},
                "after": {"bytes": 4_739_072 + 4096 * (inodes - 88), "inodes": inodes},
                "entries": 35,
                "logical_bytes": 4_683_276,
            }
        });
        result
    }

    /// The built-in `synclog` suite's tree entries as a real run records
    /// them: the workload without a log read 88 inodes after its copy, the
    /// logged ones 89 (their log file). The workload without a log is the
    /// reference row, first, with its figures and its slowdown.
    #[test]
    fn the_workload_without_a_log_stays_though_its_readings_differ() {
        let no_log = with_space(tree("photos-no-log", None, 2.0, 0.02), 88);
        let mut unsynced = tree("photos-log-unsynced", Some("target"), 1.0, 0.02);
        unsynced.params["sync_log"]["mode"] = "none".into();
        let run = run_of(vec![
            no_log,
            with_space(tree("photos-log-target", Some("target"), 4.0, 0.02), 89),
            with_space(unsynced, 89),
        ]);
        let tables = placement_tables(&run, &Summary::of(&run));
        assert_eq!(tables.len(), 1, "{tables:?}");
        let rows = first_column(&tables[0]);
        assert_eq!(
            rows,
            [
                ("photos-no-log", "no sync log", "2.000 (2.00x)".to_string()),
                ("photos-log-target", "target", "4.000 (4.00x)".to_string()),
                (
                    "photos-log-unsynced",
                    "target, mode none",
                    "1.000 (1.00x)".to_string()
                ),
            ]
        );
    }

    /// A workload without a log listed after the logged ones is still the
    /// reference row, first; a figure only some placements have is a
    /// column, `–` where a placement lacks it.
    #[test]
    fn the_reference_row_comes_first_and_missing_figures_are_dashes() {
        let mut no_log = tree("none", None, 3.0, 0.1);
        no_log.metrics.retain(|m| m.name != "copy_s");
        no_log.metrics.push(metric("delete_s", "s", 1.0));
        let run = run_of(vec![tree("same-disk", Some("target"), 6.0, 0.1), no_log]);
        let tables = placement_tables(&run, &Summary::of(&run));
        assert_eq!(tables.len(), 1, "{tables:?}");
        let table = &tables[0];
        let columns: Vec<&str> = table.columns.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(columns, ["delete_s", "copy_s"]);
        let none = &table.rows[0];
        assert_eq!(none.placement, "no sync log");
        assert_eq!(cell_text(none.cells[0]), "1.000 (1.00x)");
        assert_eq!(cell_text(none.cells[1]), "–");
        assert_eq!(table.rows[1].workload, "same-disk");
        assert_eq!(cell_text(table.rows[1].cells[0]), "–");
        assert_eq!(cell_text(table.rows[1].cells[1]), "6.000 (1.00x)");
    }

    #[test]
    fn no_table_without_a_placement_sweep() {
        let run = run_of(vec![
            tree("a", None, 1.0, 0.1),
            tree("b", None, 1.0, 0.1),
            tree("c", Some("target"), 1.0, 0.2),
        ]);
        assert!(placement_tables(&run, &Summary::of(&run)).is_empty());
    }
}

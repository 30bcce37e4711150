//! The CSV format, long (tidy) layout for spreadsheets and pandas.
//!
//! Default: one row per target × workload × metric with the columns
//! `run,target,workload,metric,unit,value,ci_low,ci_high,n` (value = mean of
//! the repetitions, ci = its 95 % interval), then, for those who want more,
//! `sd,min,median,max,best,ratio,ratio_ci_low,ratio_ci_high,p_value,
//! significant,flags,warnings` (ratio and test against the baseline; flags
//! `;`-separated; warnings as footnote numbers of `fsbench report`). Empty
//! fields mean "not applicable" (one repetition, no baseline value...).
//!
//! With `per_repetition`: one row per measurement,
//! `run,target,workload,repetition,metric,unit,value,elapsed_s,flags`.
//!
//! A sweep (`report::sweep`) adds, in both layouts, one column per
//! parameter after `target`, named after it (`param_` before a name that is
//! already a column's), empty where a target has no such parameter, so a
//! spreadsheet's pivot can take them as its axes.
use super::{Reporter, Summary};
use crate::analysis::summary::{Cell, MetricSummary, WorkloadSummary};
use crate::analysis::sweep::Sweep;
use crate::result::{Flag, RunResult};

pub struct Csv {
    pub per_repetition: bool,
}

pub const SUMMARY_HEADER: [&str; 21] = [
    "run",
    "target",
    "workload",
    "metric",
    "unit",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "sd",
    "min",
    "median",
    "max",
    "best",
    "ratio",
    "ratio_ci_low",
    "ratio_ci_high",
    "p_value",
    "significant",
    "flags",
    "warnings",
];

pub const REPETITION_HEADER: [&str; 9] = [
    "run",
    "target",
    "workload",
    "repetition",
    "metric",
    "unit",
    "value",
    "elapsed_s",
    "flags",
];

impl Reporter for Csv {
    fn render(&self, run: &RunResult, summary: &Summary) -> anyhow::Result<String> {
        let mut writer = ::csv::Writer::from_writer(Vec::new());
        let sweep = summary.sweep.as_ref();
        if self.per_repetition {
            writer.write_record(with_parameters(
                REPETITION_HEADER.map(String::from).to_vec(),
                sweep,
                |s| parameter_columns(&REPETITION_HEADER, s),
            ))?;
            for (t, record) in repetition_records(run) {
                writer.write_record(with_parameters(record, sweep, |s| s.values(t)))?;
            }
        } else {
            writer.write_record(with_parameters(
                SUMMARY_HEADER.map(String::from).to_vec(),
                sweep,
                |s| parameter_columns(&SUMMARY_HEADER, s),
            ))?;
            for workload in &summary.workloads {
                for metric in &workload.metrics {
                    for (t, cell) in metric.cells.iter().enumerate() {
                        if let Some(cell) = cell {
                            let record = summary_record(summary, workload, metric, t, cell);
                            writer.write_record(with_parameters(record, sweep, |s| s.values(t)))?;
                        }
                    }
                }
            }
        }
        Ok(String::from_utf8(writer.into_inner()?)?)
    }
}

/// `record` with the sweep's `parameters` after its second field (the
/// target); `record` itself without a sweep.
fn with_parameters(
    mut record: Vec<String>,
    sweep: Option<&Sweep>,
    parameters: impl FnOnce(&Sweep) -> Vec<String>,
) -> Vec<String> {
    if let Some(sweep) = sweep {
        let after_target = record.split_off(2);
        record.extend(parameters(sweep));
        record.extend(after_target);
    }
    record
}

/// The parameters' column names: each parameter's name, after `param_`
/// where `header` already has a column of that name.
fn parameter_columns(header: &[&str], sweep: &Sweep) -> Vec<String> {
    sweep
        .names
        .iter()
        .map(|name| match header.contains(&name.as_str()) {
            true => format!("param_{name}"),
            false => name.clone(),
        })
        .collect()
}

fn summary_record(
    summary: &Summary,
    workload: &WorkloadSummary,
    metric: &MetricSummary,
    target: usize,
    cell: &Cell,
) -> Vec<String> {
    let s = &cell.stats;
    let vs = cell.vs_baseline.as_ref();
    // An unbounded interval has no bounds to write: empty cells.
    let ratio_bounds = vs.and_then(|v| v.ci95).and_then(|i| i.bounds());
    let mut warnings: Vec<usize> = workload.notes[target].clone();
    warnings.extend(&cell.warnings);
    vec![
        summary.run_id.clone(),
        summary.targets[target].clone(),
        workload.name.clone(),
        metric.name.clone(),
        metric.unit.clone(),
        s.mean.to_string(),
        optional(s.ci95.map(|c| c.0)),
        optional(s.ci95.map(|c| c.1)),
        s.n.to_string(),
        s.sd.to_string(),
        s.min.to_string(),
        s.median.to_string(),
        s.max.to_string(),
        (metric.best == Some(target)).to_string(),
        optional(vs.map(|v| v.ratio)),
        optional(ratio_bounds.map(|c| c.0)),
        optional(ratio_bounds.map(|c| c.1)),
        optional(vs.and_then(|v| v.p_value)),
        vs.map_or(String::new(), |v| v.significant.to_string()),
        flag_names(&cell.flags),
        warnings
            .iter()
            .map(|i| (i + 1).to_string())
            .collect::<Vec<_>>()
            .join(";"),
    ]
}

/// Each measurement's record, with the index of its target.
fn repetition_records(run: &RunResult) -> Vec<(usize, Vec<String>)> {
    let mut records = Vec::new();
    for (t, target) in run.targets.iter().enumerate() {
        for workload in &target.workloads {
            for metric in &workload.metrics {
                records.push((
                    t,
                    vec![
                        run.run_id.clone(),
                        target.name.clone(),
                        workload.name().to_string(),
                        workload.repetition.to_string(),
                        metric.name.clone(),
                        metric.unit.clone(),
                        metric.value.to_string(),
                        metric.elapsed_s.to_string(),
                        flag_names(&metric.flags),
                    ],
                ));
            }
        }
    }
    records
}

fn optional(value: Option<f64>) -> String {
    value.map_or(String::new(), |v| v.to_string())
}

/// Flags as in the JSON (`too_short;fits_in_page_cache;writes_cached`).
fn flag_names(flags: &[Flag]) -> String {
    flags
        .iter()
        .filter_map(|f| serde_json::to_value(f).ok())
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect::<Vec<_>>()
        .join(";")
}

//! The HTML page's charts, from the summary and the result: the change of
//! every metric against the baseline, a bar chart and latency percentiles
//! per metric, and the time series of workloads that report over time.
use super::numbers;
use crate::analysis::summary::{Comparison, MetricSummary, WorkloadSummary};
use crate::analysis::{Summary, names};
use crate::report::charts::{self, Bar, LatencyLine, TimeLine};
use crate::report::compare::ChangeRow;
use crate::result::{IntervalSample, RunResult, WorkloadResult};

/// Per target other than the baseline: every metric's change against the
/// baseline, as the diverging bar chart of `fsbench compare`.
pub(super) fn overview_charts(summary: &Summary) -> anyhow::Result<Vec<String>> {
    let mut svgs = Vec::new();
    for t in (0..summary.targets.len()).filter(|&t| t != summary.baseline) {
        let rows: Vec<ChangeRow> = summary
            .workloads
            .iter()
            .flat_map(|w| w.metrics.iter().map(move |m| (w, m)))
            .filter_map(|(workload, metric)| {
                let comparison = metric.cells[t].as_ref()?.vs_baseline?;
                Some(change_row(workload, metric, &comparison))
            })
            .collect();
        if !rows.is_empty() {
            let title =
                charts::change_title(&summary.targets[t], &summary.targets[summary.baseline]);
            svgs.push(charts::relative_change(&title, &rows)?);
        }
    }
    Ok(svgs)
}

/// A ratio to the baseline as a change in %, labelled with the workload
/// and the metric's name with its arrow (a decrease is an improvement
/// where it points down).
fn change_row(
    workload: &WorkloadSummary,
    metric: &MetricSummary,
    comparison: &Comparison,
) -> ChangeRow {
    let name = names::headed(&metric.name, &metric.unit, metric.direction);
    let label = format!("{} {name}", workload.name);
    ChangeRow::of(label, comparison, metric.direction)
}

/// One bar per target with a value: the mean, its 95 % CI, and the
/// markers of its warnings.
pub(super) fn metric_bar_chart(
    summary: &Summary,
    workload: &WorkloadSummary,
    metric: &MetricSummary,
) -> anyhow::Result<String> {
    let bars: Vec<Bar> = metric
        .cells
        .iter()
        .enumerate()
        .filter_map(|(t, cell)| {
            let cell = cell.as_ref()?;
            let markers: String = numbers(&cell.warnings)
                .iter()
                .map(|n| format!(" [{n}]"))
                .collect();
            Some(Bar {
                label: summary.targets[t].clone(),
                value: cell.stats.mean,
                ci95: cell.stats.ci95,
                color: t,
                marker: markers,
            })
        })
        .collect();
    charts::bar_chart(
        &format!(
            "{}: {}",
            workload.name,
            names::human(&metric.name, &metric.unit)
        ),
        &format!("{} ({})", metric.unit, names::better(metric.direction)),
        &bars,
    )
}

/// The latency percentiles of each target's median repetition; None when
/// no target recorded latencies for this metric.
pub(super) fn latency_chart(
    summary: &Summary,
    workload: &WorkloadSummary,
    metric: &MetricSummary,
) -> anyhow::Result<Option<String>> {
    let lines: Vec<LatencyLine> = metric
        .cells
        .iter()
        .enumerate()
        .filter_map(|(t, cell)| {
            Some(LatencyLine {
                label: summary.targets[t].clone(),
                color: t,
                latency: cell.as_ref()?.latency.clone()?,
            })
        })
        .filter(|line| line.latency.count > 0)
        .collect();
    if lines.is_empty() {
        return Ok(None);
    }
    let name = names::human(&metric.name, &metric.unit);
    let title = format!("{}: {name} latency", workload.name);
    charts::latency_percentiles(&title, &lines).map(Some)
}

/// The interval values charted over time, in this order; a workload with
/// none of them gets its first value charted.
const SERIES: [&str; 2] = ["mib_per_s", "resp_ms"];

/// Time series of the workload called `name`: one chart per charted value,
/// one line per target and repetition.
pub(super) fn series_charts(run: &RunResult, name: &str) -> anyhow::Result<Vec<String>> {
    let per_target: Vec<Vec<&WorkloadResult>> = run
        .targets
        .iter()
        .map(|t| {
            t.workloads
                .iter()
                .filter(|w| w.name() == name && !w.intervals.is_empty())
                .collect()
        })
        .collect();
    let all = || per_target.iter().flatten();
    let Some(first) = all().next() else {
        return Ok(Vec::new());
    };
    let present: Vec<String> = SERIES
        .iter()
        .filter(|key| all().any(|w| w.intervals.iter().any(|i| i.values.contains_key(**key))))
        .map(|key| key.to_string())
        .collect();
    let keys = if present.is_empty() {
        first.intervals[0].values.keys().take(1).cloned().collect()
    } else {
        present
    };
    let warmup_end = all()
        .flat_map(|w| &w.intervals)
        .filter(|i| i.warmup)
        .map(|i| i.start_s + i.seconds)
        .reduce(f64::max);
    keys.iter()
        .map(|key| {
            // An interval value is named as the metric of the same name.
            let unit = first.metric(key).map_or("", |m| m.unit.as_str());
            let axis = &names::human(key, unit);
            let lines = time_lines(run, &per_target, key);
            let title = format!("{name}: {axis} over time");
            charts::time_series(&title, axis, &lines, warmup_end)
        })
        .collect()
}

/// One line per target and repetition, a step per interval (its value is
/// an average over the interval), its cliff marked; in the throughput
/// chart, the devices' MiB/s (read + written) dashed beside it. Only the
/// first repetition of a target is named in the legend.
fn time_lines(run: &RunResult, per_target: &[Vec<&WorkloadResult>], key: &str) -> Vec<TimeLine> {
    let mut lines = Vec::new();
    for (t, repetitions) in per_target.iter().enumerate() {
        for (r, workload) in repetitions.iter().enumerate() {
            let name = &run.targets[t].name;
            let cliffs = workload.metrics.iter().find_map(|m| m.cliff.as_ref());
            lines.push(TimeLine {
                label: (r == 0).then(|| name.clone()),
                color: t,
                points: steps(workload, |i| i.values.get(key).copied()),
                dashed: false,
                marks: cliffs.map(|c| c.at_s).into_iter().collect(),
            });
            let device = steps(workload, device_mib_per_s);
            if key == THROUGHPUT && !device.is_empty() {
                lines.push(TimeLine {
                    label: (r == 0).then(|| format!("{name}: devices")),
                    color: t,
                    points: device,
                    dashed: true,
                    marks: Vec::new(),
                });
            }
        }
    }
    lines
}

/// The charted throughput, beside which the devices' is drawn.
const THROUGHPUT: &str = SERIES[0];

/// A step per interval that has a `value`.
fn steps(
    workload: &WorkloadResult,
    value: impl Fn(&IntervalSample) -> Option<f64>,
) -> Vec<(f64, f64)> {
    workload
        .intervals
        .iter()
        .filter_map(|i| {
            let value = value(i)?;
            Some([(i.start_s, value), (i.start_s + i.seconds, value)])
        })
        .flatten()
        .collect()
}

/// What the counted devices read and wrote in an interval, in MiB/s;
/// None without them (tmpfs).
fn device_mib_per_s(interval: &IntervalSample) -> Option<f64> {
    let read = interval.values.get("device_read_mib_per_s")?;
    let written = interval.values.get("device_write_mib_per_s")?;
    Some(read + written)
}

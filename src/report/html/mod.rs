//! The self-contained HTML report: one file with inline CSS and inline SVG
//! charts (no scripts, no network), for a browser or a blog post.
//!
//! It shows, top to bottom: the risk flags (what a configuration can
//! lose on a crash); warnings and flags; the host and each target's
//! environment side by side (rows that differ highlighted); seed 000's
//! profile table; the relative change of every metric against the
//! baseline; then per workload a table (rows = metrics, columns = targets),
//! a bar chart per metric with 95 % CI whiskers, latency percentile plots
//! and the time series of workloads that report over time. A sweep
//! (`report::sweep`) adds the `#sweep` table after the warnings and a row
//! per parameter at the top of each workload table.
//!
//! The page is a pure function of the result: the same JSON gives the same
//! bytes (nothing about the time of rendering goes in).
mod durability;
mod figures;

use minijinja::Environment;
use serde::Serialize;

use super::charts;
use super::terminal;
use super::{PLACEMENT_INTRO, Reporter, mean_ci, number, ratio, ratio_ci, workload_title};
use crate::analysis::placement::{self, placement_tables};
use crate::analysis::summary::{Cell, DeviceShare, Level, MetricSummary, WorkloadSummary};
use crate::analysis::verdict::{Verdict, VerdictLines};
use crate::analysis::{Summary, names};
use crate::result::env::TargetEnv;
use crate::result::{RunResult, TargetResult};
use crate::size::format_bytes;
use durability::DurabilityView;
use figures::{latency_chart, metric_bar_chart, overview_charts, series_charts};

pub struct Html;

const TEMPLATE_NAME: &str = "report.html";
const TEMPLATE: &str = include_str!("../../../templates/report.html");

impl Reporter for Html {
    fn render(&self, run: &RunResult, summary: &Summary) -> anyhow::Result<String> {
        let page = Page::of(run, summary)?;
        let mut env = Environment::new();
        env.add_template(TEMPLATE_NAME, TEMPLATE)?;
        Ok(env
            .get_template(TEMPLATE_NAME)?
            .render(minijinja::value::Serde(&page))?)
    }
}

/// Everything the template shows, already formatted.
#[derive(Serialize)]
struct Page {
    title: String,
    /// `report::incomplete_note`, for a run that did not finish.
    incomplete: Option<String>,
    run: RunView,
    host: Vec<Field>,
    targets: Vec<TargetView>,
    baseline: String,
    verdict: VerdictView,
    risks: Vec<RiskView>,
    warnings: Vec<WarningView>,
    environment: Vec<EnvRow>,
    profiles: Vec<ProfileView>,
    placement_intro: &'static str,
    placements: Vec<PlacementView>,
    /// What the power cuts lost; None where none were measured.
    durability: Option<DurabilityView>,
    /// The sweep table (`report::sweep`); None without a sweep.
    sweep: Option<SweepView>,
    /// One relative-change chart per target other than the baseline.
    overview: Vec<String>,
    workloads: Vec<WorkloadView>,
}

/// The verdict block, formatted (`report::verdict`).
#[derive(Serialize)]
struct VerdictView {
    /// Sync-log placements against no log, before the targets.
    placements: Vec<PlacementVerdictView>,
    heading: String,
    targets: Vec<VerdictLines>,
    /// The ceilings a reference sets, and why the repetitions stopped.
    notes: Vec<String>,
    legend: Vec<String>,
}

impl VerdictView {
    fn of(verdict: &Verdict) -> VerdictView {
        let targets = verdict.lines();
        let compared = targets.iter().any(|t| t.counts.is_some());
        VerdictView {
            placements: verdict
                .placements
                .iter()
                .map(|p| PlacementVerdictView {
                    heading: p.heading.clone(),
                    lines: p.lines.clone(),
                })
                .collect(),
            heading: verdict.heading(),
            notes: verdict.notes(),
            legend: match compared {
                true => verdict.legend(),
                false => Vec::new(),
            },
            targets,
        }
    }
}

/// One group of placements on one target (`verdict::PlacementVerdict`).
#[derive(Serialize)]
struct PlacementVerdictView {
    heading: String,
    lines: Vec<String>,
}

#[derive(Serialize)]
struct RunView {
    id: String,
    command: String,
    started: String,
    finished: String,
    fsbench_version: String,
}

#[derive(Serialize)]
struct Field {
    name: &'static str,
    value: String,
}

#[derive(Serialize)]
struct TargetView {
    name: String,
    path: String,
    color: String,
}

#[derive(Serialize)]
struct WarningView {
    /// 1-based, as in the tables' markers.
    number: usize,
    text: String,
    /// Where it applies ("bonnie put_block: xfs, ext4"); empty for notes
    /// on the run as a whole.
    affects: Vec<String>,
}

/// One environment property, one value per target.
#[derive(Serialize)]
struct EnvRow {
    name: &'static str,
    values: Vec<String>,
    /// The targets differ here: the row is highlighted.
    differs: bool,
}

#[derive(Serialize)]
struct ProfileView {
    target: String,
    color: String,
    levels: [&'static str; 3],
}

/// A sync-log placement table, cells already formatted.
#[derive(Serialize)]
struct PlacementView {
    title: String,
    columns: Vec<String>,
    rows: Vec<PlacementRowView>,
}

#[derive(Serialize)]
struct PlacementRowView {
    workload: String,
    placement: String,
    cells: Vec<String>,
}

/// The sweep table: a row per configuration, its parameters, then each
/// headline metric's mean.
#[derive(Serialize)]
struct SweepView {
    parameters: Vec<String>,
    /// The metrics' titles, after the parameters.
    columns: Vec<String>,
    rows: Vec<SweepRowView>,
}

#[derive(Serialize)]
struct SweepRowView {
    target: String,
    color: String,
    parameters: Vec<String>,
    cells: Vec<SweepCellView>,
}

#[derive(Serialize)]
struct SweepCellView {
    /// The mean, or "–" where the target has no value.
    value: String,
    missing: bool,
    best: bool,
}

/// A sweep parameter's row in a workload table: its value per target.
#[derive(Serialize)]
struct ParameterRow {
    name: String,
    values: Vec<String>,
}

#[derive(Serialize)]
struct WorkloadView {
    anchor: String,
    title: String,
    columns: Vec<ColumnView>,
    /// The sweep's parameters, above the metrics; empty without a sweep.
    parameters: Vec<ParameterRow>,
    rows: Vec<MetricRow>,
    /// The same operations in other units, shown folded.
    detail_rows: Vec<MetricRow>,
    bar_charts: Vec<String>,
    latency_charts: Vec<String>,
    series_charts: Vec<String>,
}

/// A target's column in a workload table.
#[derive(Serialize)]
struct ColumnView {
    name: String,
    color: String,
    baseline: bool,
    /// Warning numbers of the workload's notes on this target.
    notes: Vec<usize>,
}

#[derive(Serialize)]
struct MetricRow {
    /// `names::headed`: readable name, unit and arrow.
    name: String,
    better: &'static str,
    cells: Vec<CellView>,
}

#[derive(Serialize)]
struct CellView {
    /// "mean ± CI half-width", or "–" where the target has no value.
    value: String,
    n: usize,
    best: bool,
    warnings: Vec<usize>,
    /// Ratio to the baseline ("1.32x*") and its interval.
    ratio: Option<String>,
    ratio_ci: Option<String>,
    significant: bool,
    device: Option<DeviceBar>,
}

/// What the devices did for a cell's figure: its text ("dev 98%", "dev
/// 4.0 KiB/op") and, for a share of the workload's bytes, a bar of it
/// (full at 100 %, longer ones capped and marked), in the warning colour
/// when the counters flagged the figure as not the storage's.
#[derive(Serialize)]
struct DeviceBar {
    text: String,
    /// Width of the bar in % of its track; None for a per-operation figure.
    width: Option<f64>,
    over: bool,
    flagged: bool,
}

impl DeviceBar {
    fn of(cell: &Cell) -> Option<DeviceBar> {
        let share = cell.device?;
        let width = match share {
            DeviceShare::Percent(p) => Some((p.clamp(0.0, 100.0) * 10.0).round() / 10.0),
            DeviceShare::PerOperation(_) => None,
        };
        Some(DeviceBar {
            text: super::device_text(share),
            width,
            over: matches!(share, DeviceShare::Percent(p) if p > 100.0),
            flagged: cell.flags.iter().any(|f| f.from_device()),
        })
    }
}

impl Page {
    fn of(run: &RunResult, summary: &Summary) -> anyhow::Result<Page> {
        let names = summary.targets.join(" vs ");
        Ok(Page {
            title: format!("fsbench: {names}"),
            incomplete: super::incomplete_note(run),
            run: run_view(run),
            host: host_fields(run),
            targets: run
                .targets
                .iter()
                .enumerate()
                .map(|(t, target)| TargetView {
                    name: target.name.clone(),
                    path: target.path.clone(),
                    color: charts::target_color_hex(t),
                })
                .collect(),
            baseline: summary
                .targets
                .get(summary.baseline)
                .cloned()
                .unwrap_or_default(),
            verdict: VerdictView::of(&Verdict::of(run, summary)),
            risks: summary
                .risks
                .iter()
                .map(|(target, text)| RiskView {
                    target: target.clone(),
                    text: text.clone(),
                })
                .collect(),
            warnings: warning_views(summary),
            environment: environment_rows(&run.targets),
            profiles: profile_views(summary),
            placement_intro: PLACEMENT_INTRO,
            placements: placement_views(run, summary),
            durability: DurabilityView::of(run),
            sweep: sweep_view(summary),
            overview: overview_charts(summary)?,
            workloads: summary
                .workloads
                .iter()
                .enumerate()
                .map(|(i, workload)| workload_view(run, summary, workload, i))
                .collect::<anyhow::Result<_>>()?,
        })
    }
}

const TIME_FORMAT: &str = "%Y-%m-%d %H:%M:%S UTC";

fn run_view(run: &RunResult) -> RunView {
    RunView {
        id: run.run_id.clone(),
        command: crate::shell::quoted(&run.command),
        started: run.started.format(TIME_FORMAT).to_string(),
        finished: run.finished.map_or_else(
            || "did not finish".to_string(),
            |end| {
                let seconds = (end - run.started).num_milliseconds() as f64 / 1000.0;
                format!("{} ({} s)", end.format(TIME_FORMAT), number(seconds))
            },
        ),
        fsbench_version: run.fsbench_version.clone(),
    }
}

fn host_fields(run: &RunResult) -> Vec<Field> {
    let host = &run.host;
    let or_dash = |value: &Option<String>| value.clone().unwrap_or_else(|| "-".into());
    vec![
        Field {
            name: "host",
            value: host.hostname.clone(),
        },
        Field {
            name: "OS",
            value: or_dash(&host.os),
        },
        Field {
            name: "kernel",
            value: format!("{} ({})", host.kernel, host.arch),
        },
        Field {
            name: "CPU",
            value: format!("{} × {}", host.cpu_count, or_dash(&host.cpu_model)),
        },
        Field {
            name: "RAM",
            value: format_bytes(host.ram_bytes),
        },
    ]
}

/// A risk flag of a target, as the terminal report's `RISK` lines say it.
#[derive(Serialize)]
struct RiskView {
    target: String,
    text: String,
}

/// The warnings with their numbers and the cells they apply to.
fn warning_views(summary: &Summary) -> Vec<WarningView> {
    summary
        .warnings
        .iter()
        .enumerate()
        .map(|(index, text)| WarningView {
            number: index + 1,
            text: text.clone(),
            affects: affected_cells(summary, index),
        })
        .collect()
}

/// "bonnie put_block: xfs, ext4" for each metric with a cell that refers to
/// warning `index`, and "bonnie: xfs" for workload notes.
fn affected_cells(summary: &Summary, index: usize) -> Vec<String> {
    let targets_where = |refers: &dyn Fn(usize) -> bool| -> Vec<&str> {
        (0..summary.targets.len())
            .filter(|&t| refers(t))
            .map(|t| summary.targets[t].as_str())
            .collect()
    };
    let mut affects = Vec::new();
    for workload in &summary.workloads {
        let noted = targets_where(&|t| workload.notes[t].contains(&index));
        if !noted.is_empty() {
            affects.push(format!("{}: {}", workload.name, noted.join(", ")));
        }
        for metric in &workload.metrics {
            let flagged = targets_where(&|t| {
                metric.cells[t]
                    .as_ref()
                    .is_some_and(|c| c.warnings.contains(&index))
            });
            if !flagged.is_empty() {
                let name = format!(
                    "{} {}",
                    workload.name,
                    names::human(&metric.name, &metric.unit)
                );
                affects.push(format!("{name}: {}", flagged.join(", ")));
            }
        }
    }
    affects
}

type EnvField = fn(&TargetEnv) -> String;

/// The environment rows, in the order an engineer checks them.
const ENV_FIELDS: [(&str, EnvField); 11] = [
    ("file system", |e| e.fs_type.clone()),
    ("mount point", |e| e.mount_point.clone()),
    ("mount options", |e| e.mount_options.clone()),
    ("source", source_text),
    ("block device", |e| or_dash(&e.block_device)),
    ("rotational", |e| {
        e.rotational
            .map_or("-", |r| if r { "yes" } else { "no" })
            .to_string()
    }),
    ("I/O scheduler", |e| or_dash(&e.scheduler)),
    ("write cache", |e| or_dash(&e.write_cache)),
    ("RAID level", |e| or_dash(&e.raid_level)),
    ("free space", free_space_text),
    ("free inodes", |e| {
        format!("{} of {}", e.free_inodes, e.total_inodes)
    }),
];

fn or_dash(value: &Option<String>) -> String {
    value.clone().unwrap_or_else(|| "-".to_string())
}

fn source_text(env: &TargetEnv) -> String {
    match &env.loop_backing_file {
        Some(file) => format!("{} (backed by {file})", env.source),
        None => env.source.clone(),
    }
}

fn free_space_text(env: &TargetEnv) -> String {
    let total = format_bytes(env.total_bytes);
    let free = format_bytes(env.free_bytes);
    format!("{free} of {total}")
}

/// The path, then `ENV_FIELDS`, one value per target ("-" for a target
/// without an environment record).
fn environment_rows(targets: &[TargetResult]) -> Vec<EnvRow> {
    let path = env_row("path", targets.iter().map(|t| t.path.clone()).collect());
    let fields = ENV_FIELDS.iter().map(|&(name, field)| {
        let values = targets
            .iter()
            .map(|t| t.env.as_ref().map_or_else(|| "-".to_string(), field))
            .collect();
        env_row(name, values)
    });
    let mut rows: Vec<EnvRow> = std::iter::once(path).chain(fields).collect();
    // What the disks are, where some target's record says (results from
    // before it was recorded have no such row).
    if targets
        .iter()
        .any(|t| t.env.as_ref().is_some_and(|e| e.device_facts.is_some()))
    {
        let facts = |t: &TargetResult| {
            let facts = t.env.as_ref().and_then(|e| e.device_facts.as_ref());
            facts.map_or_else(|| "-".to_string(), |f| f.described())
        };
        rows.push(env_row("device", targets.iter().map(facts).collect()));
    }
    if targets.iter().any(|t| t.built.is_some()) {
        rows.extend(built_rows(targets));
    }
    rows
}

/// How fsbench built the targets (`fsbench run --configs`).
fn built_rows(targets: &[TargetResult]) -> Vec<EnvRow> {
    type BuiltField = fn(&crate::result::built::Built) -> String;
    let fields: [(&'static str, BuiltField); 7] = [
        ("built by mkfs", |b| b.mkfs.clone()),
        ("built on", terminal::built_on),
        ("mounted source", |b| b.source.clone()),
        ("built mount options", terminal::built_options),
        ("sweep parameters", |b| {
            b.parameters
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", ")
        }),
        ("measured one after another: shares", |b| {
            b.shares.clone().unwrap_or_default()
        }),
        ("builds (time building)", |b| {
            format!("{} ({:.1} s)", b.builds, b.build_seconds)
        }),
    ];
    fields
        .iter()
        .map(|&(name, field)| {
            let values = targets
                .iter()
                .map(|t| t.built.as_ref().map_or_else(|| "-".to_string(), field))
                .collect();
            env_row(name, values)
        })
        // A row says something only where some configuration has it.
        .filter(|row| row.values.iter().any(|v| !v.is_empty() && v != "-"))
        .collect()
}

fn env_row(name: &'static str, values: Vec<String>) -> EnvRow {
    let differs = values.windows(2).any(|pair| pair[0] != pair[1]);
    EnvRow {
        name,
        values,
        differs,
    }
}

/// The sync-log placement tables, cells formatted as the text formats do.
fn placement_views(run: &RunResult, summary: &Summary) -> Vec<PlacementView> {
    placement_tables(run, summary)
        .iter()
        .map(|table| PlacementView {
            title: placement::title(table),
            columns: table
                .columns
                .iter()
                .map(|(name, unit)| names::human(name, unit))
                .collect(),
            rows: table
                .rows
                .iter()
                .map(|row| PlacementRowView {
                    workload: row.workload.clone(),
                    placement: row.placement.clone(),
                    cells: row.cells.iter().map(|&c| placement::cell_text(c)).collect(),
                })
                .collect(),
        })
        .collect()
}

/// The sweep table, formatted as the text formats do.
fn sweep_view(summary: &Summary) -> Option<SweepView> {
    let table = summary.sweep.as_ref()?.table(summary);
    Some(SweepView {
        parameters: table.parameters.clone(),
        columns: table.columns.iter().map(|c| c.title.clone()).collect(),
        rows: table
            .rows
            .iter()
            .map(|row| SweepRowView {
                target: row.name.clone(),
                color: charts::target_color_hex(row.target),
                parameters: row.parameters.clone(),
                cells: row
                    .cells
                    .iter()
                    .map(|cell| SweepCellView {
                        value: cell.map_or("–".to_string(), |c| number(c.mean)),
                        missing: cell.is_none(),
                        best: cell.is_some_and(|c| c.best),
                    })
                    .collect(),
            })
            .collect(),
    })
}

/// Seed 000's table, shown when there is something to compare.
fn profile_views(summary: &Summary) -> Vec<ProfileView> {
    if summary.targets.len() < 2 {
        return Vec::new();
    }
    let text = |level: Option<Level>| level.map_or("-", Level::as_str);
    summary
        .profiles()
        .into_iter()
        .enumerate()
        .map(|(t, profile)| ProfileView {
            target: profile.target,
            color: charts::target_color_hex(t),
            levels: [
                text(profile.write),
                text(profile.read),
                text(profile.metadata),
            ],
        })
        .collect()
}

fn workload_view(
    run: &RunResult,
    summary: &Summary,
    workload: &WorkloadSummary,
    index: usize,
) -> anyhow::Result<WorkloadView> {
    let columns = summary
        .targets
        .iter()
        .enumerate()
        .map(|(t, name)| ColumnView {
            name: name.clone(),
            color: charts::target_color_hex(t),
            baseline: t == summary.baseline && summary.targets.len() > 1,
            notes: numbers(&workload.notes[t]),
        })
        .collect();
    let row = |metric: &MetricSummary| MetricRow {
        name: names::headed(&metric.name, &metric.unit, metric.direction),
        better: names::better(metric.direction),
        cells: metric
            .cells
            .iter()
            .enumerate()
            .map(|(t, cell)| cell_view(cell.as_ref(), metric.best == Some(t)))
            .collect(),
    };
    let parameters = summary.sweep.iter().flat_map(|sweep| {
        (sweep.names.iter().enumerate()).map(|(p, name)| ParameterRow {
            name: name.clone(),
            values: (0..summary.targets.len())
                .map(|t| sweep.value(t, p).to_string())
                .collect(),
        })
    });
    Ok(WorkloadView {
        anchor: format!("workload-{}", index + 1),
        title: workload_title(workload),
        columns,
        parameters: parameters.collect(),
        rows: workload.headline().map(row).collect(),
        detail_rows: workload.details().map(row).collect(),
        bar_charts: workload
            .headline()
            .map(|metric| metric_bar_chart(summary, workload, metric))
            .collect::<anyhow::Result<_>>()?,
        latency_charts: workload
            .metrics
            .iter()
            .filter_map(|metric| latency_chart(summary, workload, metric).transpose())
            .collect::<anyhow::Result<_>>()?,
        series_charts: series_charts(run, &workload.name)?,
    })
}

/// 0-based warning indexes as the 1-based numbers the page shows.
fn numbers(indexes: &[usize]) -> Vec<usize> {
    indexes.iter().map(|i| i + 1).collect()
}

fn cell_view(cell: Option<&Cell>, best: bool) -> CellView {
    let Some(cell) = cell else {
        return CellView {
            value: "–".to_string(),
            n: 0,
            best: false,
            warnings: Vec::new(),
            ratio: None,
            ratio_ci: None,
            significant: false,
            device: None,
        };
    };
    CellView {
        value: mean_ci(&cell.stats),
        n: cell.stats.n,
        best,
        warnings: numbers(&cell.warnings),
        ratio: cell.vs_baseline.as_ref().map(ratio),
        ratio_ci: cell.vs_baseline.as_ref().and_then(ratio_ci),
        significant: cell.vs_baseline.is_some_and(|c| c.significant),
        device: DeviceBar::of(cell),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_is_quoted_so_it_can_be_typed_again() {
        let args = ["fsbench", "run", "--target", "a b=/mnt/x y", "it's"].map(String::from);
        assert_eq!(
            crate::shell::quoted(&args),
            r"fsbench run --target 'a b=/mnt/x y' 'it'\''s'"
        );
    }

    #[test]
    fn environment_rows_that_differ_are_marked() {
        assert!(env_row("fs", vec!["xfs".into(), "ext4".into()]).differs);
        assert!(!env_row("fs", vec!["xfs".into(), "xfs".into()]).differs);
        assert!(!env_row("fs", vec!["xfs".into()]).differs);
    }

    #[test]
    fn a_run_without_targets_renders_without_a_baseline() {
        let run = crate::driver::recording::new_run_result("empty");
        let page = Html.render(&run, &Summary::with_baseline(&run, 0)).unwrap();
        assert!(page.contains("<html"), "{page}");
    }
}

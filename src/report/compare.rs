//! Relative change between saved runs (`fsbench compare A.json B.json ...`):
//! each later run against the first, per target, workload and metric, with
//! the change's 95 % interval and test (on the log scale, see
//! `stats::ratio`). Metrics that some runs lack are listed, never an error.
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};

use super::charts::change_title;
use super::{UNBOUNDED, UNBOUNDED_REASON, mean_and_half, mean_ci, p_text, terminal};
use crate::analysis::config_diff;
use crate::analysis::names;
use crate::analysis::summary::{
    Cell, Class, Comparison, MetricSummary, Summary, WorkloadSummary, classify, decide_together,
};
use crate::analysis::verdict::{self, Finding, TargetVerdict, Verdict};
use crate::measure::stats::RatioInterval;
use crate::result::{Direction, RunResult};

/// One bar of the relative-change chart: a metric of a workload on a
/// target, as the change of a later run against the first, in %.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeRow {
    pub label: String,
    pub change_pct: f64,
    pub ci95_pct: Option<(f64, f64)>,
    pub significant: bool,
    /// The change is for the better in the metric's direction (whatever
    /// its sign), which is what the bar's colour shows.
    pub improved: bool,
}

impl ChangeRow {
    /// The bar of a ratio `comparison` of a metric going in `direction`,
    /// as a change in %.
    pub fn of(label: String, comparison: &Comparison, direction: Direction) -> ChangeRow {
        ChangeRow {
            label,
            change_pct: percent(comparison.ratio),
            ci95_pct: comparison
                .ci95
                .and_then(RatioInterval::bounds)
                .map(|(low, high)| (percent(low), percent(high))),
            significant: comparison.significant,
            improved: direction.is_improvement(comparison.ratio),
        }
    }
}

/// A saved run and what to call it (its file name as given).
pub struct Input {
    pub name: String,
    pub run: RunResult,
}

/// Where a metric lives: the same key is looked up in every run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    pub target: String,
    pub workload: String,
    pub metric: String,
}

impl Key {
    /// `target · workload · metric` with the metric as `shown`, without
    /// the target when there is one.
    fn label(&self, with_target: bool, shown: &str) -> String {
        match with_target {
            true => format!("{} · {} · {shown}", self.target, self.workload),
            false => format!("{} · {shown}", self.workload),
        }
    }
}

/// A metric present in the first run and a later one.
pub struct Change {
    pub key: Key,
    pub unit: String,
    pub direction: Direction,
    /// Another view of an operation a headline metric reports.
    pub detail: bool,
    pub class: Option<Class>,
    pub before: Cell,
    pub after: Cell,
    /// None when the first run's mean is 0 (no ratio).
    pub comparison: Option<Comparison>,
}

impl Change {
    /// The change as the verdict reads it, when it has a ratio and both
    /// runs' figures are `verdict::claimable`.
    fn finding(&self) -> Option<Finding> {
        let claimable = [&self.before, &self.after]
            .iter()
            .all(|cell| verdict::claimable(&cell.flags));
        if !claimable {
            return None;
        }
        Some(Finding {
            what: verdict::what(&self.key.workload, &self.key.metric),
            unit: self.unit.clone(),
            direction: self.direction,
            class: self.class,
            comparison: self.comparison?,
            not_from_device: self.after.flags.iter().any(|f| f.from_device()),
            repetitions: self.before.values.len().min(self.after.values.len()),
        })
    }

    /// The metric's name as every view shows it (`names::headed`).
    fn shown(&self) -> String {
        names::headed(&self.key.metric, &self.unit, self.direction)
    }

    /// Better, worse, or no verdict when the change is not significant.
    pub fn verdict(&self) -> &'static str {
        let Some(c) = self.comparison.filter(|c| c.significant) else {
            return "";
        };
        match self.direction.is_improvement(c.ratio) {
            true => "better",
            false => "worse",
        }
    }
}

/// The later run `after` against the first.
pub struct Versus {
    pub before: String,
    pub after: String,
    pub changes: Vec<Change>,
    /// Per target, the answer: counts, classes, safety, sentence.
    pub verdict: Verdict,
}

impl Versus {
    /// The later run against the first and its verdict, per target, over
    /// the headline metrics both runs have.
    fn of(before: &str, after: &Input, mut changes: Vec<Change>) -> Versus {
        let mut targets: Vec<String> = Vec::new();
        for change in &changes {
            if !targets.contains(&change.key.target) {
                targets.push(change.key.target.clone());
            }
        }
        for target in &targets {
            decide_target_together(&mut changes, target);
        }
        let judged = targets
            .iter()
            .enumerate()
            .map(|(position, name)| {
                let findings: Vec<Finding> = changes
                    .iter()
                    .filter(|c| c.key.target == *name && !c.detail)
                    .filter_map(Change::finding)
                    .collect();
                // Matched by position, the later run's target has another name.
                let own = after.run.targets.iter().find(|t| t.name == *name);
                let target = own.or(after.run.targets.get(position));
                TargetVerdict::judge(
                    name.as_str(),
                    before,
                    &findings,
                    target.map(verdict::Safety::of).unwrap_or_default(),
                    verdict::min_effect_of(&after.run),
                )
            })
            .collect();
        Versus {
            before: before.to_string(),
            after: after.name.clone(),
            verdict: Verdict {
                baseline: before.to_string(),
                lone: false,
                targets: judged,
                ceilings: Vec::new(),
                stopping: None,
                placements: Vec::new(),
            },
            changes,
        }
    }
}

/// `target`'s changes decided as one family of its headline metrics, as
/// `fsbench run`'s tables decide them (`summary::decide_together`).
fn decide_target_together(changes: &mut [Change], target: &str) {
    let family: Vec<Comparison> = changes
        .iter()
        .filter(|c| c.key.target == target && !c.detail)
        .filter_map(|c| c.comparison)
        .collect();
    let all = changes
        .iter_mut()
        .filter(|c| c.key.target == target)
        .filter_map(|c| c.comparison.as_mut());
    decide_together(family.iter(), all);
}

/// A metric some runs lack.
pub struct Missing {
    pub key: Key,
    /// The metric's name as every view shows it (`names::human`).
    pub shown: String,
    /// Names of the runs that have it.
    pub present_in: Vec<String>,
    pub absent_from: Vec<String>,
}

impl Missing {
    /// Same target and workload, missing from the same runs: listed on one
    /// line.
    fn same_group(&self, other: &Missing) -> bool {
        self.key.target == other.key.target
            && self.key.workload == other.key.workload
            && self.absent_from == other.absent_from
    }
}

pub struct Comparisons {
    /// Each run has one target, so targets were matched by position and
    /// keys carry the first run's target name.
    pub by_position: bool,
    /// Target names per run, in run order (for the header).
    pub targets: Vec<(String, Vec<String>)>,
    pub versus: Vec<Versus>,
    pub missing: Vec<Missing>,
    /// What each later run changed in a target's configuration (risk
    /// flags, mount options), shown before any number.
    pub configuration: String,
}

impl Comparisons {
    /// Compares every later input with the first.
    pub fn of(inputs: &[Input]) -> Comparisons {
        let by_position = inputs.iter().all(|i| i.run.targets.len() == 1);
        let summaries: Vec<Summary> = inputs.iter().map(|i| Summary::of(&i.run)).collect();
        let keys = all_keys(&summaries, by_position);
        let first = &inputs[0].name;
        let versus = inputs
            .iter()
            .zip(&summaries)
            .skip(1)
            .map(|(input, summary)| {
                let changes = keys
                    .iter()
                    .filter_map(|key| change(key, &summaries[0], summary, by_position))
                    .collect();
                Versus::of(first, input, changes)
            })
            .collect();
        let missing = keys
            .iter()
            .filter_map(|key| missing(key, inputs, &summaries, by_position))
            .collect();
        let configuration = inputs
            .iter()
            .skip(1)
            .map(|input| {
                let diffs = config_diff::differences(&inputs[0].run, &input.run, by_position);
                config_diff::render(&diffs, first, &input.name)
            })
            .collect();
        Comparisons {
            configuration,
            by_position,
            targets: inputs
                .iter()
                .map(|i| (i.name.clone(), target_names(&i.run)))
                .collect(),
            versus,
            missing,
        }
    }

    /// The bars of the relative-change chart: every change with a ratio,
    /// labelled with the later run's name when there are several.
    pub fn rows(&self) -> Vec<ChangeRow> {
        let with_target = self.with_target();
        let mut rows = Vec::new();
        for versus in &self.versus {
            for change in &versus.changes {
                let Some(c) = &change.comparison else {
                    continue;
                };
                let mut label = change.key.label(with_target, &change.shown());
                if self.versus.len() > 1 {
                    label = format!("{}: {label}", versus.after);
                }
                rows.push(ChangeRow::of(label, c, change.direction));
            }
        }
        rows
    }

    /// Whether changes name their target: some run has several.
    fn with_target(&self) -> bool {
        !self.by_position && self.targets.iter().any(|(_, t)| t.len() > 1)
    }

    /// The title of the chart of `rows`: the later runs against the first.
    pub fn chart_title(&self) -> String {
        let later: Vec<&str> = self.versus.iter().map(|v| v.after.as_str()).collect();
        let first = self.targets.first().map_or("", |(name, _)| name.as_str());
        change_title(&later.join(", "), first)
    }

    /// The terminal text: a header naming the runs, one table per later
    /// run, the missing metrics, and how to read it; no line wider than
    /// `width` (but for a word that is).
    pub fn render_text(&self, width: usize) -> String {
        let mut out = String::new();
        for (name, targets) in &self.targets {
            out.push_str(&format!("{name}: {}\n", targets.join(", ")));
        }
        if self.by_position && self.targets.iter().any(|(_, t)| t != &self.targets[0].1) {
            out.push_str("(one target per run: matched by position)\n");
        }
        if !self.configuration.is_empty() {
            out.push('\n');
            out.push_str(&self.configuration);
        }
        for versus in &self.versus {
            let verdict = format!("{}: {}", versus.after, versus.verdict.text());
            out.push('\n');
            out.push_str(&terminal::wrap_lines(&verdict, width));
        }
        for versus in &self.versus {
            out.push_str(&format!("\n{} against {}\n", versus.after, versus.before));
            match versus.changes.is_empty() {
                true => out.push_str("no metric in common\n"),
                false => out.push_str(&format!(
                    "{}\n",
                    change_table(versus, self.with_target(), width)
                )),
            }
        }
        if !self.missing.is_empty() {
            out.push_str("\nNot in every run:\n");
            for group in self.missing.chunk_by(|a, b| a.same_group(b)) {
                let metrics: Vec<&str> = group.iter().map(|m| m.shown.as_str()).collect();
                let first = &group[0];
                let line = format!(
                    "  {} · {}: {}: in {}; missing in {}",
                    first.key.target,
                    first.key.workload,
                    metrics.join(", "),
                    first.present_in.join(", "),
                    first.absent_from.join(", ")
                );
                out.push_str(&terminal::wrap(&line, width, "    "));
            }
        }
        let legend = format!(
            "change = ratio to the first run − 1 ({}); CI = its 95 % interval; {}",
            super::RATIO_LEGEND,
            names::ARROWS
        );
        out.push('\n');
        out.push_str(&terminal::wrap(&legend, width, ""));
        if self.any_unbounded() {
            out.push_str(&terminal::wrap(UNBOUNDED_REASON, width, ""));
        }
        out
    }

    /// Whether some change's interval is unbounded (then the legend says why).
    fn any_unbounded(&self) -> bool {
        self.versus
            .iter()
            .flat_map(|v| &v.changes)
            .any(|c| c.comparison.and_then(|c| c.ci95) == Some(RatioInterval::Unbounded))
    }
}

/// How a change table sets out its rows, widest first: `fsbench compare`
/// takes the first that fits the width.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Layout {
    /// A column each for the target (when there are several), workload,
    /// metric, the two runs, change, CI, p and verdict, on one line.
    OneLine,
    /// Two lines a row: the workload (after its target) over the metric,
    /// mean over ± CI, change over verdict, and the CI's bounds.
    Stacked,
    /// `Stacked`, the runs' columns headed `before` and `after` (the
    /// line above the table names them).
    StackedShortHeads,
}

/// The table of `versus`'s changes in the first layout that fits `width`;
/// the narrowest, wrapped between words, when none does.
fn change_table(versus: &Versus, with_target: bool, width: usize) -> String {
    let roomy = [Layout::OneLine, Layout::Stacked]
        .into_iter()
        .map(|layout| layout_table(versus, with_target, layout))
        .find(|table| terminal::fits(table, width));
    match roomy {
        Some(table) => table.to_string(),
        None => terminal::fitted(
            layout_table(versus, with_target, Layout::StackedShortHeads),
            width,
        ),
    }
}

fn layout_table(versus: &Versus, with_target: bool, layout: Layout) -> Table {
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED);
    let (before, after) = match layout {
        Layout::StackedShortHeads => ("before", "after"),
        _ => (versus.before.as_str(), versus.after.as_str()),
    };
    let mut header: Vec<&str> = Vec::new();
    if layout == Layout::OneLine {
        if with_target {
            header.push("target");
        }
        header.extend(["workload", "metric"]);
    } else {
        header.push("metric");
    }
    header.extend([before, after, "change", "95 % CI", "p"]);
    if layout == Layout::OneLine {
        header.push("");
    }
    let first_number = header.iter().position(|h| *h == before).unwrap_or(0);
    table.set_header(header);
    for change in &versus.changes {
        let c = change.comparison.as_ref();
        let change_cell = c.map_or("–".into(), change_text);
        let ci = c.and_then(|c| c.ci95);
        let p = c.and_then(|c| c.p_value).map_or("–".into(), p_text);
        let mut row: Vec<String> = Vec::new();
        if layout == Layout::OneLine {
            if with_target {
                row.push(change.key.target.clone());
            }
            row.extend([
                change.key.workload.clone(),
                change.shown(),
                mean_ci(&change.before.stats),
                mean_ci(&change.after.stats),
                change_cell,
                ci.map_or("–".into(), change_ci_text),
                p,
                change.verdict().to_string(),
            ]);
        } else {
            let place = match with_target {
                true => format!("{} · {}", change.key.target, change.key.workload),
                false => change.key.workload.clone(),
            };
            row.extend([
                format!("{place}\n{}", change.shown()),
                stacked_mean_ci(&change.before.stats),
                stacked_mean_ci(&change.after.stats),
                format!("{change_cell}\n{}", change.verdict()),
                ci.map_or("–".into(), |ci| change_ci_text(ci).replace(" … ", " …\n")),
                p,
            ]);
        }
        table.add_row(row);
    }
    for index in first_number..first_number + 5 {
        if let Some(column) = table.column_mut(index) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

/// The mean over `± half-width` (none for a single repetition).
fn stacked_mean_ci(stats: &crate::measure::stats::Stats) -> String {
    match mean_and_half(stats) {
        (mean, Some(half)) => format!("{mean}\n± {half}"),
        (mean, None) => mean,
    }
}

/// `+5.0% … +19.0%`, or `unbounded`.
fn change_ci_text(interval: RatioInterval) -> String {
    match interval.bounds() {
        Some((low, high)) => format!("{:+.1}% … {:+.1}%", percent(low), percent(high)),
        None => UNBOUNDED.to_string(),
    }
}

/// `+12.3%*` (star when significant).
fn change_text(c: &Comparison) -> String {
    let star = if c.significant { "*" } else { "" };
    format!("{:+.1}%{star}", percent(c.ratio))
}

fn percent(ratio: f64) -> f64 {
    (ratio - 1.0) * 100.0
}

fn target_names(run: &RunResult) -> Vec<String> {
    run.targets.iter().map(|t| t.name.clone()).collect()
}

/// Every (target, workload, metric) of any run, in order of appearance.
/// Matched by position, every run's only target is called by the first
/// run's name.
fn all_keys(summaries: &[Summary], by_position: bool) -> Vec<Key> {
    let mut keys: Vec<Key> = Vec::new();
    for summary in summaries {
        for (t, target) in summary.targets.iter().enumerate() {
            let target = match by_position {
                true => &summaries[0].targets[0],
                false => target,
            };
            for workload in &summary.workloads {
                for metric in workload.metrics.iter().filter(|m| m.cells[t].is_some()) {
                    let key = Key {
                        target: target.clone(),
                        workload: workload.name.clone(),
                        metric: metric.name.clone(),
                    };
                    if !keys.contains(&key) {
                        keys.push(key);
                    }
                }
            }
        }
    }
    keys
}

/// The cell of `key` in a run, with its workload and metric.
fn lookup<'a>(
    summary: &'a Summary,
    key: &Key,
    by_position: bool,
) -> Option<(&'a Cell, &'a WorkloadSummary, &'a MetricSummary)> {
    let target = match by_position {
        true => 0,
        false => summary.targets.iter().position(|t| *t == key.target)?,
    };
    let workload = summary.workloads.iter().find(|w| w.name == key.workload)?;
    let metric = workload.metrics.iter().find(|m| m.name == key.metric)?;
    let cell = metric.cells.get(target)?.as_ref()?;
    Some((cell, workload, metric))
}

fn change(key: &Key, before: &Summary, after: &Summary, by_position: bool) -> Option<Change> {
    let (b, workload, metric) = lookup(before, key, by_position)?;
    let (a, _, _) = lookup(after, key, by_position)?;
    Some(Change {
        key: key.clone(),
        unit: metric.unit.clone(),
        direction: metric.direction,
        detail: metric.detail,
        class: classify(workload, metric),
        comparison: Comparison::of(&b.values, &a.values),
        before: b.clone(),
        after: a.clone(),
    })
}

fn missing(
    key: &Key,
    inputs: &[Input],
    summaries: &[Summary],
    by_position: bool,
) -> Option<Missing> {
    let (present, absent): (Vec<_>, Vec<_>) = inputs
        .iter()
        .zip(summaries)
        .partition(|(_, s)| lookup(s, key, by_position).is_some());
    let (_, _, metric) = lookup(present.first()?.1, key, by_position)?;
    let shown = names::human(&key.metric, &metric.unit);
    let names = |runs: Vec<(&Input, &Summary)>| runs.iter().map(|(i, _)| i.name.clone()).collect();
    (!absent.is_empty()).then(|| Missing {
        key: key.clone(),
        shown,
        present_in: names(present),
        absent_from: names(absent),
    })
}

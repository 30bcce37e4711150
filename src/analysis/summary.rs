//! What every report format shows, computed once from a `RunResult`: per
//! workload and metric, one cell per target with the statistics of its
//! repetitions, the ratio to the baseline target with its confidence
//! interval and significance, the best target, and the warnings (flags and
//! workload notes) that must accompany the numbers.
use super::flag_notes::FlagNotes;
use super::sweep::Sweep;
use super::verdict::own_risks;
use crate::measure::stats::{self, RatioInterval, Stats, first_is_warm_up};
use crate::result::{Direction, Flag, LatencySummary, Metric, RunResult, WorkloadResult};

#[derive(Debug, Clone)]
pub struct Summary {
    pub run_id: String,
    /// Target names in run order.
    pub targets: Vec<String>,
    /// Index into `targets` of the target ratios are taken against.
    pub baseline: usize,
    pub workloads: Vec<WorkloadSummary>,
    /// Texts a reader must see with the numbers. Tables refer to them by
    /// index (`report::marker`); warnings no cell refers to concern the run
    /// as a whole (e.g. a workload missing on a target).
    pub warnings: Vec<String>,
    /// What each target's configuration can lose on a crash (`storage::env::risk`),
    /// as `(target, message)`; reports show them first.
    pub risks: Vec<(String, String)>,
    /// Indices of the reference targets (`--reference`): the ceiling the
    /// others are measured against, never rated or marked best.
    pub references: Vec<usize>,
    /// The sweep's parameters of the targets (`fsbench run --configs` with
    /// a matrix); None when no target has any.
    pub sweep: Option<Sweep>,
}

#[derive(Debug, Clone)]
pub struct WorkloadSummary {
    /// `WorkloadResult::name()`: label, or kind.
    pub name: String,
    pub kind: String,
    pub metrics: Vec<MetricSummary>,
    /// Per target (same order as `Summary::targets`): indices into
    /// `Summary::warnings` of the workload's notes on that target.
    pub notes: Vec<Vec<usize>>,
}

#[derive(Debug, Clone)]
pub struct MetricSummary {
    pub name: String,
    pub unit: String,
    pub direction: Direction,
    /// One per target; None where the target has no value.
    pub cells: Vec<Option<Cell>>,
    /// The target with the best mean, when at least two targets have one.
    pub best: Option<usize>,
    /// Another view of an operation a headline metric reports
    /// (`Metric::detail`): shown folded, left out of the profiles.
    pub detail: bool,
}

impl WorkloadSummary {
    /// The metrics that answer for an operation: tables and ratings.
    pub fn headline(&self) -> impl Iterator<Item = &MetricSummary> {
        self.metrics.iter().filter(|m| !m.detail)
    }

    /// The same operations in other units: shown folded.
    pub fn details(&self) -> impl Iterator<Item = &MetricSummary> {
        self.metrics.iter().filter(|m| m.detail)
    }
}

#[derive(Debug, Clone)]
pub struct Cell {
    /// One value per repetition, in repetition order.
    pub values: Vec<f64>,
    pub stats: Stats,
    /// Flags of any repetition, each once.
    pub flags: Vec<Flag>,
    /// Indices into `Summary::warnings` of the flags' descriptions.
    pub warnings: Vec<usize>,
    /// None for the baseline itself and where the baseline has no value.
    pub vs_baseline: Option<Comparison>,
    /// Latency of the median repetition (histograms of separate runs cannot
    /// be merged from their summaries).
    pub latency: Option<LatencySummary>,
    /// What the devices did for the figure, over the repetitions that
    /// have device counters; None without them.
    pub device: Option<DeviceShare>,
}

/// What the devices under the target did for a cell's figure, as the mean
/// over its repetitions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DeviceShare {
    /// Device bytes ÷ the bytes the workload moved, in %
    /// (`DeviceEvidence::ratio`).
    Percent(f64),
    /// Device bytes per operation, for a phase that moves no file data
    /// (`DeviceEvidence::bytes_per_op`).
    PerOperation(f64),
}

/// A cell against the baseline's cell of the same metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    /// mean / baseline mean.
    pub ratio: f64,
    /// 95 % interval of the ratio (on the log scale, see `stats::ratio`);
    /// None with fewer than 2 repetitions.
    pub ci95: Option<RatioInterval>,
    /// Welch's two-sided p-value (of the logarithms, see `stats::ratio`);
    /// None with fewer than 2 repetitions.
    pub p_value: Option<f64>,
    /// Significant read together with the target's other headline
    /// metrics (Benjamini–Hochberg at `stats::ALPHA`, `decide_together`):
    /// the one test the tables' `*` and the verdict share. Plain p < 0.05
    /// until the family is known.
    pub significant: bool,
}

impl Comparison {
    /// `a` is the baseline's values, `b` the compared values.
    pub fn of(a: &[f64], b: &[f64]) -> Option<Comparison> {
        let ratio = stats::ratio(a, b)?;
        Some(Comparison {
            ratio: ratio.ratio,
            ci95: ratio.ci95,
            p_value: ratio.p,
            significant: ratio.p.is_some_and(|p| p < stats::ALPHA),
        })
    }
}

/// Decides the significance of a target's comparisons as one family: the
/// Benjamini–Hochberg threshold over `family` (its headline metrics' tested
/// comparisons) applied to every comparison in `all` (those and their
/// other views), so that among 30 metrics the one or two that p < 0.05
/// gives by chance are not starred, and a star means what the verdict
/// counts.
pub fn decide_together<'a>(
    family: impl Iterator<Item = &'a Comparison>,
    all: impl Iterator<Item = &'a mut Comparison>,
) {
    let p_values: Vec<f64> = family.filter_map(|c| c.p_value).collect();
    let threshold = stats::benjamini_hochberg_threshold(&p_values, stats::ALPHA);
    for comparison in all {
        comparison.significant = comparison
            .p_value
            .is_some_and(|p| threshold.is_some_and(|t| p <= t));
    }
}

/// Seed 000's rating of a target against the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    High,
    Medium,
    Low,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::High => "high",
            Level::Medium => "medium",
            Level::Low => "low",
        }
    }

    /// From a score in (0, 1], 1 = best of all targets on every metric.
    fn of_score(score: f64) -> Level {
        if score >= HIGH_SCORE {
            Level::High
        } else if score >= MEDIUM_SCORE {
            Level::Medium
        } else {
            Level::Low
        }
    }
}

/// Within 20 % of the best target (geometric mean over the metrics of a
/// class) is "high"; within a factor 2 "medium"; below that "low".
const HIGH_SCORE: f64 = 0.8;
const MEDIUM_SCORE: f64 = 0.5;

#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    pub target: String,
    pub write: Option<Level>,
    pub read: Option<Level>,
    pub metadata: Option<Level>,
}

/// What a metric says about a file system, for the profile table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Write,
    Read,
    Metadata,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Write => "write",
            Class::Read => "read",
            Class::Metadata => "metadata",
        }
    }
}

impl Summary {
    /// Whether some ratio's interval is unbounded, so a legend must say
    /// what that means.
    pub fn has_unbounded_ratio(&self) -> bool {
        self.workloads
            .iter()
            .flat_map(|w| &w.metrics)
            .flat_map(|m| m.cells.iter().flatten())
            .any(|c| c.vs_baseline.and_then(|v| v.ci95) == Some(RatioInterval::Unbounded))
    }

    /// The summary with the first target as the baseline.
    pub fn of(run: &RunResult) -> Summary {
        Summary::with_baseline(run, 0)
    }

    /// The summary with `targets[baseline]` as the baseline.
    pub fn with_baseline(run: &RunResult, baseline: usize) -> Summary {
        let references: Vec<usize> = (0..run.targets.len())
            .filter(|&t| run.targets[t].reference)
            .collect();
        let mut builder = Builder {
            references: references.clone(),
            ..Builder::default()
        };
        let targets: Vec<String> = run.targets.iter().map(|t| t.name.clone()).collect();
        let mut workloads: Vec<WorkloadSummary> = workload_names(run)
            .into_iter()
            .map(|(name, kind)| builder.workload(run, &name, kind, baseline))
            .collect();
        for t in 0..targets.len() {
            decide_target_together(&mut workloads, t);
        }
        super::access_order::flag(run, &mut workloads, |text| builder.warning(text));
        builder.missing_workloads(run);
        let mut summary = Summary {
            run_id: run.run_id.clone(),
            targets,
            baseline,
            workloads,
            warnings: builder.texts(),
            risks: Vec::new(),
            references,
            sweep: Sweep::of(run),
        };
        summary.risks = risks_of(run, &super::placement::placed_workloads(run, &summary));
        summary
    }

    /// Whether target `t` is a reference (`--reference`).
    pub fn is_reference(&self, t: usize) -> bool {
        self.references.contains(&t)
    }

    /// Seed 000's profile table: per target, write / read / metadata rated
    /// high, medium or low relative to the other targets. None where fewer
    /// than two targets have a metric of that class.
    pub fn profiles(&self) -> Vec<Profile> {
        let scores = |class| self.class_scores(class);
        let (write, read, metadata) = (
            scores(Class::Write),
            scores(Class::Read),
            scores(Class::Metadata),
        );
        let level = |scores: &[Option<f64>], t: usize| scores[t].map(Level::of_score);
        self.targets
            .iter()
            .enumerate()
            .filter(|(t, _)| !self.is_reference(*t))
            .map(|(t, target)| Profile {
                target: target.clone(),
                write: level(&write, t),
                read: level(&read, t),
                metadata: level(&metadata, t),
            })
            .collect()
    }

    /// Per target, the geometric mean over the metrics of `class` of its
    /// mean relative to the best target's (so 1 = best everywhere).
    fn class_scores(&self, class: Class) -> Vec<Option<f64>> {
        let mut log_sums = vec![(0.0, 0usize); self.targets.len()];
        for workload in &self.workloads {
            for metric in workload.headline() {
                if classify(workload, metric) != Some(class) {
                    continue;
                }
                for (t, relative) in relative_to_best(metric, &self.references) {
                    log_sums[t].0 += relative.ln();
                    log_sums[t].1 += 1;
                }
            }
        }
        log_sums
            .into_iter()
            .map(|(sum, count)| (count > 0).then(|| (sum / count as f64).exp()))
            .collect()
    }
}

/// Each target's mean relative to the best mean, in (0, 1]; empty unless at
/// least two targets other than the references have a positive mean.
fn relative_to_best(metric: &MetricSummary, references: &[usize]) -> Vec<(usize, f64)> {
    let means: Vec<Option<f64>> = metric
        .cells
        .iter()
        .enumerate()
        .map(|(t, c)| c.as_ref().filter(|_| !references.contains(&t)))
        .map(|c| c.map(|c| c.stats.mean))
        .collect();
    let relative: Vec<(usize, f64)> = slowdowns(&means, metric.direction)
        .into_iter()
        .enumerate()
        .filter_map(|(t, slowdown)| slowdown.map(|s| (t, 1.0 / s)))
        .collect();
    if relative.len() < 2 {
        return Vec::new();
    }
    relative
}

/// The best of `values`, given as (index, value): the highest where higher
/// is better, else the lowest; of equal values the first. The only place
/// that decides which value is best, so that the best target of a table,
/// the profile ratings and the placement slowdowns always agree.
fn best_of(
    values: impl IntoIterator<Item = (usize, f64)>,
    direction: Direction,
) -> Option<(usize, f64)> {
    let better = |a: f64, b: f64| match direction {
        Direction::HigherIsBetter => a > b,
        Direction::LowerIsBetter => a < b,
    };
    values
        .into_iter()
        .reduce(|best, next| if better(next.1, best.1) { next } else { best })
}

/// Each value's slowdown against the best one (the lowest time or the
/// highest rate): 1 for the best, above 1 for the others. Values that are
/// missing or not positive have none (a ratio to them means nothing).
pub fn slowdowns(values: &[Option<f64>], direction: Direction) -> Vec<Option<f64>> {
    let positive = values
        .iter()
        .enumerate()
        .filter_map(|(i, value)| value.filter(|v| *v > 0.0).map(|v| (i, v)));
    let Some((_, best)) = best_of(positive, direction) else {
        return vec![None; values.len()];
    };
    values
        .iter()
        .map(|value| {
            let value = value.filter(|v| *v > 0.0)?;
            Some(match direction {
                Direction::LowerIsBetter => value / best,
                Direction::HigherIsBetter => best / value,
            })
        })
        .collect()
}

/// The profile class of a headline metric, from its name, unit and
/// workload; None for latencies and for metrics that mix reads and writes.
///
/// - metadata: names with create/stat/del/unlink/mkdir/rename/link/chmod/
///   xattr/truncate/find (bonnie's file tests, PostMark's file creations
///   and deletions, `fsbench meta`, a tree's find and delete), counted in
///   files or operations per second or timed in seconds;
/// - read / write: byte rates (unit with "B/s") and phase times (unit "s")
///   whose name says read/get or write/put/rewrite/written (a tree's
///   generate, copy and untar write; its concat and stream read); a name
///   that says neither (io's mib_per_s) takes the direction of the
///   workload, from its name (a label such as `seq-read`).
pub fn classify(workload: &WorkloadSummary, metric: &MetricSummary) -> Option<Class> {
    let name = metric.name.to_ascii_lowercase();
    let timed = metric.unit == "s" && metric.direction == Direction::LowerIsBetter;
    if !timed && metric.direction != Direction::HigherIsBetter {
        return None;
    }
    const METADATA: [&str; 11] = [
        "create", "stat", "del", "unlink", "mkdir", "rename", "link", "chmod", "xattr", "truncate",
        "find",
    ];
    if METADATA.iter().any(|word| name.contains(word)) && !metric.unit.contains("B/s") {
        return Some(Class::Metadata);
    }
    if !(timed || metric.unit.contains("B/s") || is_io_rate(metric)) {
        return None;
    }
    direction_in(&name).or_else(|| direction_in(&workload.name.to_ascii_lowercase()))
}

/// An io job's operations per second: a read or write rate like MiB/s
/// (its headline for small transfers).
fn is_io_rate(metric: &MetricSummary) -> bool {
    metric.unit == "IO/s"
}

/// Read or write, when `text` names exactly one of them.
fn direction_in(text: &str) -> Option<Class> {
    let reads = ["read", "get", "concat", "stream"]
        .iter()
        .any(|w| text.contains(w));
    let writes = ["write", "put", "written", "generate", "copy", "untar"]
        .iter()
        .any(|w| text.contains(w));
    match (reads, writes) {
        (true, false) => Some(Class::Read),
        (false, true) => Some(Class::Write),
        _ => None,
    }
}

/// Target `t`'s comparisons with the baseline, decided as one family of
/// its headline metrics (`decide_together`).
fn decide_target_together(workloads: &mut [WorkloadSummary], t: usize) {
    let of_target = |m: &MetricSummary| m.cells.get(t)?.as_ref()?.vs_baseline;
    let family: Vec<Comparison> = workloads
        .iter()
        .flat_map(|w| w.headline())
        .filter_map(of_target)
        .collect();
    let all = workloads
        .iter_mut()
        .flat_map(|w| &mut w.metrics)
        .filter_map(|m| m.cells.get_mut(t)?.as_mut()?.vs_baseline.as_mut());
    decide_together(family.iter(), all);
}

/// Workload names in order of first appearance over the targets, with the
/// kind of their first occurrence.
fn workload_names(run: &RunResult) -> Vec<(String, String)> {
    let mut names: Vec<(String, String)> = Vec::new();
    for workload in run.targets.iter().flat_map(|t| &t.workloads) {
        if !names.iter().any(|(n, _)| n == workload.name()) {
            names.push((workload.name().to_string(), workload.workload.clone()));
        }
    }
    names
}

/// Every target's risk flags (probed, then declared by its
/// configuration), then those of its workloads (a sync log's), each once,
/// in target order; not those of the workloads named `placed`, placements
/// of a sync log the run compares on purpose (the placement verdict says
/// which of them is never synced).
fn risks_of(run: &RunResult, placed: &[String]) -> Vec<(String, String)> {
    let mut risks: Vec<(String, String)> = Vec::new();
    for target in &run.targets {
        let own = own_risks(target).into_iter().map(|r| r.message);
        let unplaced = target
            .workloads
            .iter()
            .filter(|w| !placed.contains(&w.name().to_string()));
        let workloads = unplaced.flat_map(|w| {
            w.risks
                .iter()
                .map(move |r| format!("{}: {}", w.name(), r.message))
        });
        for message in own.chain(workloads) {
            let risk = (target.name.clone(), message);
            if !risks.contains(&risk) {
                risks.push(risk);
            }
        }
    }
    risks
}

/// Collects warnings while cells are built, so that each text appears once
/// and keeps its first index, and each kind of flag is one warning
/// (`flag_notes`).
#[derive(Default)]
struct Builder {
    warnings: Vec<Warning>,
    flag_notes: FlagNotes,
    /// Targets that never count as best.
    references: Vec<usize>,
}

/// A warning as the builder collects it: a text, or a kind of flag whose
/// text is known once every cell was seen.
#[derive(PartialEq)]
enum Warning {
    Text(String),
    Flagged(Flag),
}

impl Builder {
    fn warning(&mut self, text: &str) -> usize {
        self.index_of(Warning::Text(text.to_string()))
    }

    fn index_of(&mut self, warning: Warning) -> usize {
        match self.warnings.iter().position(|w| *w == warning) {
            Some(index) => index,
            None => {
                self.warnings.push(warning);
                self.warnings.len() - 1
            }
        }
    }

    /// The warnings' texts, in their order.
    fn texts(&self) -> Vec<String> {
        self.warnings
            .iter()
            .map(|w| match w {
                Warning::Text(text) => text.clone(),
                Warning::Flagged(flag) => self.flag_notes.text(*flag),
            })
            .collect()
    }

    fn workload(
        &mut self,
        run: &RunResult,
        name: &str,
        kind: String,
        baseline: usize,
    ) -> WorkloadSummary {
        // Repetitions of this workload, per target.
        let reps: Vec<Vec<&WorkloadResult>> = run
            .targets
            .iter()
            .map(|t| t.workloads.iter().filter(|w| w.name() == name).collect())
            .collect();
        let notes = reps
            .iter()
            .map(|per_target| self.notes(per_target))
            .collect();
        let metrics = metric_names(&reps)
            .into_iter()
            .map(|first| self.metric(first, &reps, baseline))
            .collect();
        WorkloadSummary {
            name: name.to_string(),
            kind,
            metrics,
            notes,
        }
    }

    /// Indices of the distinct notes of a target's repetitions.
    fn notes(&mut self, reps: &[&WorkloadResult]) -> Vec<usize> {
        let mut indices = Vec::new();
        for note in reps.iter().flat_map(|w| &w.notes) {
            let index = self.warning(note);
            if !indices.contains(&index) {
                indices.push(index);
            }
        }
        indices
    }

    fn metric(
        &mut self,
        first: &Metric,
        reps: &[Vec<&WorkloadResult>],
        baseline: usize,
    ) -> MetricSummary {
        let mut cells: Vec<Option<Cell>> = reps
            .iter()
            .map(|per_target| self.cell(first, per_target))
            .collect();
        let baseline_values = cells
            .get(baseline)
            .and_then(|c| c.as_ref())
            .map(|c| c.values.clone());
        if let Some(base) = baseline_values {
            for (t, cell) in cells.iter_mut().enumerate() {
                if let Some(cell) = cell.as_mut().filter(|_| t != baseline) {
                    cell.vs_baseline = Comparison::of(&base, &cell.values);
                }
            }
        }
        let best = best_target(&cells, first.direction, &self.references);
        MetricSummary {
            name: first.name.clone(),
            unit: first.unit.clone(),
            direction: first.direction,
            cells,
            best,
            detail: first.detail,
        }
    }

    /// Metric `first`'s cell of one target, from its repetitions.
    fn cell(&mut self, first: &Metric, reps: &[&WorkloadResult]) -> Option<Cell> {
        let mut measured: Vec<&Metric> =
            reps.iter().filter_map(|w| w.metric(&first.name)).collect();
        let values: Vec<f64> = measured.iter().map(|m| m.value).collect();
        let stats = Stats::of(&values)?;
        let mut flags: Vec<Flag> = Vec::new();
        for flag in measured.iter().flat_map(|m| &m.flags) {
            if !flags.contains(flag) {
                flags.push(*flag);
            }
        }
        if !first.detail {
            self.flag_notes.measured(measured.len());
        }
        // One warning per kind of flag, with the figures of every
        // repetition that raised it.
        let mut warnings: Vec<usize> = flags
            .iter()
            .map(|&flag| {
                let flagged: Vec<&Metric> = measured
                    .iter()
                    .copied()
                    .filter(|m| m.flags.contains(&flag))
                    .collect();
                self.flag_notes.raised(flag, &flagged, !first.detail);
                self.index_of(Warning::Flagged(flag))
            })
            .collect();
        let direction = first.direction;
        if first_is_warm_up(&values, |a, b| direction.is_improvement(b / a)) {
            flags.push(Flag::WarmUp);
            warnings.push(self.warning(&warm_up_text(first, &values)));
        }
        let device = device_share(&measured);
        measured.sort_by(|a, b| a.value.total_cmp(&b.value));
        let latency = measured[(measured.len() - 1) / 2].latency.clone();
        Some(Cell {
            values,
            stats,
            flags,
            warnings,
            vs_baseline: None,
            latency,
            device,
        })
    }

    /// A warning for each workload a target lacks while others have it.
    fn missing_workloads(&mut self, run: &RunResult) {
        for (name, _) in workload_names(run) {
            for target in &run.targets {
                if !target.workloads.iter().any(|w| w.name() == name) {
                    self.warning(&format!("{}: no result for workload {name}", target.name));
                }
            }
        }
    }
}

/// The warm-up warning with its figures: "warm-up: the first
/// repetition (60.0 MiB/s) was significantly worse than the others
/// (99.0–101.0 MiB/s), and is in the mean".
fn warm_up_text(metric: &Metric, values: &[f64]) -> String {
    let unit = &metric.unit;
    let others = &values[1..];
    let low = others.iter().copied().fold(f64::INFINITY, f64::min);
    let high = others.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!(
        "warm-up: the first repetition ({} {unit}) was significantly worse than the \
         others ({}–{} {unit}), and is in the mean",
        super::number(values[0]),
        super::number(low),
        super::number(high)
    )
}

/// The device bytes of the repetitions' phases over the bytes their
/// workload moved, else per operation; None when none has device counters.
fn device_share(measured: &[&Metric]) -> Option<DeviceShare> {
    let mean = |values: Vec<f64>| {
        (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
    };
    let evidence = || measured.iter().filter_map(|m| m.device.as_ref());
    let ratios = evidence().filter_map(|d| d.ratio()).collect();
    let per_op = evidence().filter_map(|d| d.bytes_per_op).collect();
    mean(ratios)
        .map(|r| DeviceShare::Percent(100.0 * r))
        .or_else(|| mean(per_op).map(DeviceShare::PerOperation))
}

/// Metric names in order of first appearance over targets and repetitions.
fn metric_names<'a>(reps: &[Vec<&'a WorkloadResult>]) -> Vec<&'a Metric> {
    let mut firsts: Vec<&Metric> = Vec::new();
    for metric in reps.iter().flatten().flat_map(|w| &w.metrics) {
        if !firsts.iter().any(|m| m.name == metric.name) {
            firsts.push(metric);
        }
    }
    firsts
}

/// The target with the best mean, references left out; None unless two
/// targets have a value.
fn best_target(
    cells: &[Option<Cell>],
    direction: Direction,
    references: &[usize],
) -> Option<usize> {
    let means: Vec<(usize, f64)> = cells
        .iter()
        .enumerate()
        .filter(|(t, _)| !references.contains(t))
        .filter_map(|(t, c)| c.as_ref().map(|c| (t, c.stats.mean)))
        .collect();
    if means.len() < 2 {
        return None;
    }
    best_of(means, direction).map(|(t, _)| t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_follows_the_direction_and_a_tie_goes_to_the_first() {
        let values = [(0, 2.0), (1, 5.0), (2, 1.0), (3, 5.0), (4, 1.0)];
        assert_eq!(best_of(values, Direction::HigherIsBetter), Some((1, 5.0)));
        assert_eq!(best_of(values, Direction::LowerIsBetter), Some((2, 1.0)));
        assert_eq!(best_of([], Direction::LowerIsBetter), None);
    }

    #[test]
    fn slowdowns_are_against_the_best_value() {
        let times = [Some(2.0), Some(1.0), None, Some(6.0), Some(0.0)];
        assert_eq!(
            slowdowns(&times, Direction::LowerIsBetter),
            [Some(2.0), Some(1.0), None, Some(6.0), None]
        );
        let rates = [Some(100.0), Some(50.0), Some(25.0)];
        assert_eq!(
            slowdowns(&rates, Direction::HigherIsBetter),
            [Some(1.0), Some(2.0), Some(4.0)]
        );
        assert_eq!(slowdowns(&[None], Direction::HigherIsBetter), [None]);
    }

    /// A run of one workload on targets a and b: per metric, a's and b's
    /// repetitions.
    fn run_of(metrics: &[(&str, [f64; 3], [f64; 3])]) -> RunResult {
        use crate::result::TargetResult;
        let mut record = crate::driver::recording::new_run_result("test");
        for side in 0..2 {
            let workloads = (0..3)
                .map(|repetition| WorkloadResult {
                    workload: "io".into(),
                    repetition: repetition as u32,
                    metrics: metrics
                        .iter()
                        .map(|(name, a, b)| {
                            let value = [a, b][side][repetition];
                            Metric::test(name, "MiB/s", Direction::HigherIsBetter, value)
                        })
                        .collect(),
                    ..Default::default()
                })
                .collect();
            record
                .targets
                .push(TargetResult::test(["a", "b"][side], workloads));
        }
        record
    }

    /// A borderline metric (p < 0.05 alone) among ten is not starred, and
    /// the verdict does not count it either; a clear one is both starred
    /// and counted: the table and the verdict use one test.
    #[test]
    fn the_star_and_the_verdict_use_one_test() {
        let same = [10.0, 10.2, 9.8];
        let mut metrics = vec![
            ("clear", [10.0, 10.1, 9.9], [20.0, 20.2, 19.8]),
            ("borderline", [10.0, 10.2, 9.8], [10.6, 10.9, 10.4]),
        ];
        let names: Vec<String> = (0..8).map(|i| format!("m{i}")).collect();
        metrics.extend(names.iter().map(|n| (n.as_str(), same, [10.1, 9.9, 10.0])));
        let run = run_of(&metrics);
        let summary = Summary::of(&run);
        let compared = |name: &str| {
            let metric = summary.workloads[0].metrics.iter().find(|m| m.name == name);
            metric.unwrap().cells[1]
                .as_ref()
                .unwrap()
                .vs_baseline
                .unwrap()
        };
        let borderline = compared("borderline");
        assert!(borderline.p_value.unwrap() < 0.05, "{borderline:?}");
        assert!(!borderline.significant, "{borderline:?}");
        assert!(compared("clear").significant);
        let verdict = super::super::verdict::Verdict::of(&run, &summary);
        let b = &verdict.targets[1];
        assert_eq!((b.faster, b.slower), (1, 0), "{:?}", b.sentence);
    }
}

//! The answer on top of every report: per target against the baseline, how
//! many headline metrics are significantly faster, slower or no different;
//! the geometric mean speed-up per class (write, read, metadata) with its
//! interval; what the configuration can lose on a crash and what the
//! durability check concluded; and one sentence in the seed articles'
//! style, made only of significant differences.
//!
//! A difference counts when it is significant and at least the minimum
//! effect (`DEFAULT_MIN_EFFECT`, 5 %, or the run's `--min-effect`): a 1 %
//! difference that many repetitions make significant is "no practical
//! difference". Space on disk is measured, not sampled: its differences
//! are exact, said apart after the speeds, and never counted as wins.
//!
//! `fsbench run`'s reports build it from a `Summary`, `fsbench compare`
//! from its changes: both give a target's findings (one per headline metric
//! measured on both sides) to `TargetVerdict::judge`.
mod alone;
mod classes;
mod finding;
mod placements;
mod safety;

pub use classes::ClassSpeedup;
use classes::{class_lines, class_speedups};
pub use finding::{Finding, times, what};
use finding::{UNDECIDED_AT, larger_first};
pub use placements::PlacementVerdict;
pub use safety::{Safety, durability, own_risks, risks};

use super::precision::percent;
use super::summary::{Cell, Class, Comparison, MetricSummary, Summary, classify};
use crate::measure::stats::{ALPHA, benjamini_hochberg};
use crate::result::{Flag, RunResult};

/// Everything the verdict says of one target.
#[derive(Debug, Clone)]
pub struct TargetVerdict {
    pub target: String,
    /// Significantly better, significantly worse, no significant
    /// difference, and compared without a test (a single repetition).
    pub faster: usize,
    pub slower: usize,
    pub same: usize,
    /// Not significant, but as large as `UNDECIDED_AT` or more: more
    /// repetitions would decide (not counted in `same`).
    pub undecided: usize,
    pub untested: usize,
    pub classes: Vec<ClassSpeedup>,
    /// Per class, what it says (`classes::class_lines`).
    class_lines: Vec<String>,
    /// Of `faster`, how many figures the device counters flagged as the
    /// page cache's.
    pub faster_not_from_device: usize,
    /// Of `same`, how many are significant but under the minimum effect.
    pub negligible: usize,
    /// The minimum effect the counts used (0.05 = 5 %).
    pub min_effect: f64,
    /// Space on disk differences of at least the minimum effect, largest
    /// first ("1.3x larger tree-photos dataset space on disk").
    pub space: Vec<String>,
    /// What the target can lose on a crash.
    pub safety: Safety,
    /// Whether this is the baseline: only its safety is said.
    pub baseline: bool,
    /// The answer in one sentence; None without a significant difference.
    pub sentence: Option<String>,
    /// A lone target's headline figures per class, with their evidence
    /// (`alone::figure_lines`); empty where there is a comparison.
    pub figures: Vec<String>,
}

/// How many differences each way a sentence names, the largest first;
/// the rest it counts ("and 2 more slower").
#[derive(Debug, Clone, Copy)]
pub(super) struct Naming {
    pub faster: usize,
    pub slower: usize,
}

/// Up to this many differences each way make a target's sentence.
const SENTENCE: Naming = Naming {
    faster: 3,
    slower: 2,
};

/// "headline metric" after "1 other", else "headline metrics".
fn other_metrics(n: usize) -> &'static str {
    match n {
        1 => "headline metric",
        _ => "headline metrics",
    }
}

/// "1 headline metric", "14 headline metrics".
fn headline_metrics(n: usize) -> String {
    match n {
        1 => "1 headline metric".to_string(),
        n => format!("{n} headline metrics"),
    }
}
/// The sentence names up to this many undecided differences (see
/// `finding::UNDECIDED_AT`), the largest first.
const SENTENCE_UNDECIDED: usize = 1;

/// The smallest difference a verdict counts, as a fraction, unless the run
/// says otherwise (`--min-effect`): below it a significant difference is
/// no practical one. 5 % is about what repeated runs of one configuration
/// on a quiet machine drift by (page-cache state, block placement), so a
/// smaller difference would not hold on the user's own machine.
pub const DEFAULT_MIN_EFFECT: f64 = 0.05;

/// Whether `ratio` (new / old, either way) is at least `min_effect` on the
/// log scale (0.05: 1.05x faster or slower): below it a difference, even a
/// significant one, is no practical one.
pub fn is_practical(ratio: f64, min_effect: f64) -> bool {
    ratio.ln().abs() >= (1.0 + min_effect).ln()
}

/// The run's minimum effect (`RunResult::min_effect`), else the default.
pub fn min_effect_of(run: &RunResult) -> f64 {
    run.min_effect.unwrap_or(DEFAULT_MIN_EFFECT)
}

impl TargetVerdict {
    /// The verdict on `target` from its findings against the baseline.
    pub fn judge(
        target: &str,
        baseline: &str,
        findings: &[Finding],
        safety: Safety,
        min_effect: f64,
    ) -> TargetVerdict {
        TargetVerdict::judge_naming(target, baseline, findings, safety, min_effect, SENTENCE)
    }

    /// `judge`, its sentence naming as many differences as `naming` says.
    pub(super) fn judge_naming(
        target: &str,
        baseline: &str,
        findings: &[Finding],
        safety: Safety,
        min_effect: f64,
        naming: Naming,
    ) -> TargetVerdict {
        let findings = &read_together(findings);
        let space = space_phrases(findings, min_effect);
        let speeds: Vec<Finding> = findings.iter().filter(|f| !f.exact()).cloned().collect();
        let counted = |better: bool| {
            speeds
                .iter()
                .filter(move |f| f.counts(min_effect) && (f.speedup() >= 1.0) == better)
        };
        let faster = counted(true).count();
        let faster_not_from_device = counted(true).filter(|f| f.not_from_device).count();
        let slower = counted(false).count();
        let untested = speeds.iter().filter(|f| !f.tested()).count();
        let undecided = speeds.iter().filter(|f| f.undecided()).count();
        TargetVerdict {
            target: target.to_string(),
            faster,
            faster_not_from_device,
            slower,
            same: speeds.len() - faster - slower - undecided - untested,
            negligible: speeds.iter().filter(|f| f.negligible(min_effect)).count(),
            min_effect,
            undecided,
            untested,
            classes: class_speedups(&speeds),
            class_lines: class_lines(&speeds, min_effect),
            sentence: sentence(
                (target, baseline),
                &speeds,
                &space,
                &safety,
                min_effect,
                naming,
            ),
            space,
            safety,
            baseline: false,
            figures: Vec::new(),
        }
    }

    /// "faster in 2, slower in 1, no difference in 14 of 17 headline metrics".
    pub fn counts_text(&self) -> String {
        let total = self.faster + self.slower + self.same + self.undecided + self.untested;
        if self.untested == total {
            return format!(
                "{total} headline metrics, 1 repetition: no test of significance \
                 (use --repeat 3 or --precision 5%)"
            );
        }
        let caveat = match self.faster_not_from_device {
            0 => String::new(),
            n => format!(" ({n} of them the page cache's figures, not the device's)"),
        };
        let undecided = match self.undecided {
            0 => String::new(),
            n => format!(", not yet decided in {n} (over {UNDECIDED_AT}x apart: repeat more)"),
        };
        let negligible = match self.negligible {
            0 => String::new(),
            n => format!(
                " ({n} of them significant but under {})",
                percent(self.min_effect)
            ),
        };
        let mut text = format!(
            "faster in {}{caveat}, slower in {}, no difference in {}{negligible}{undecided} of {total} headline metrics",
            self.faster, self.slower, self.same
        );
        if self.untested > 0 {
            text += &format!(" ({} without repetitions to test)", self.untested);
        }
        text
    }

    /// "write 7.6x (5.1x–9.8x) · read: 11x faster sync-read, no difference
    /// in 2": speed per class.
    pub fn classes_text(&self) -> String {
        self.class_lines.join(" · ")
    }

    /// "risks: data=writeback, barriers off · durability: not tested".
    pub fn safety_text(&self) -> String {
        let risks = match self.safety.risks.is_empty() {
            true => "none found".to_string(),
            false => self.safety.risks.join(", "),
        };
        let durability = self.safety.durability.as_deref().unwrap_or("not tested");
        format!("risks: {risks} · durability: {durability}")
    }
}

/// The space differences of at least `min_effect`, largest first (ties
/// by name, so a result always gives the same order).
fn space_phrases(findings: &[Finding], min_effect: f64) -> Vec<String> {
    let mut space: Vec<&Finding> = findings
        .iter()
        .filter(|f| f.exact() && f.practical(min_effect))
        .collect();
    space.sort_by(|a, b| larger_first(a, b));
    space.iter().map(|f| f.phrase()).collect()
}

/// The findings with their significance corrected for being read together
/// (`stats::benjamini_hochberg` over the tested ones): a count of
/// differences among 30 metrics must not include the one or two that
/// p < 0.05 gives by chance.
fn read_together(findings: &[Finding]) -> Vec<Finding> {
    let tested: Vec<usize> = (0..findings.len())
        .filter(|&i| findings[i].tested())
        .collect();
    let p_values: Vec<f64> = tested
        .iter()
        .filter_map(|&i| findings[i].comparison.p_value)
        .collect();
    let kept = benjamini_hochberg(&p_values, ALPHA);
    let mut corrected = findings.to_vec();
    for (&index, significant) in tested.iter().zip(kept) {
        corrected[index].comparison.significant = significant;
    }
    corrected
}

/// "ext4-wb: 7.6x faster sync-write-4k, 1.3x faster postmark creates; no
/// difference in 14 other headline metrics; not crash-safe: data=writeback".
/// Speed differences are named only when they count (significant and at
/// least the minimum effect), largest first; then those not yet decided;
/// then space on disk, exact and never first. Without any, the sentence
/// says that none was found, and without a test (one repetition) there is
/// no sentence: a sentence never rests on noise.
fn sentence(
    (target, baseline): (&str, &str),
    speeds: &[Finding],
    space: &[String],
    safety: &Safety,
    min_effect: f64,
    naming: Naming,
) -> Option<String> {
    let tested = speeds.iter().filter(|f| f.tested()).count();
    // Speeds without a test leave no sentence; space alone, exact, does.
    if tested == 0 && (!speeds.is_empty() || space.is_empty()) {
        return None;
    }
    let mut counted: Vec<&Finding> = speeds.iter().filter(|f| f.counts(min_effect)).collect();
    counted.sort_by(|a, b| larger_first(a, b));
    let pick = |better: bool, most: usize| -> Vec<String> {
        let way: Vec<&&Finding> = counted
            .iter()
            .filter(|f| (f.speedup() >= 1.0) == better)
            .collect();
        let mut named: Vec<String> = way.iter().take(most).map(|f| f.decided_phrase()).collect();
        if way.len() > most {
            let word = if better { "faster" } else { "slower" };
            named.push(format!("and {} more {word}", way.len() - most));
        }
        named
    };
    let undecided = undecided_clause(speeds);
    let mut clauses: Vec<String> = [pick(true, naming.faster), pick(false, naming.slower)]
        .into_iter()
        .filter(|c| !c.is_empty())
        .map(|c| c.join(", "))
        .collect();
    // What was decided leads, "no difference" included; what is not yet
    // decided comes after, as undecided: an A/A run whose largest
    // difference is noise must not open with it.
    let undecided_count = speeds.iter().filter(|f| f.undecided()).count();
    let same = tested - counted.len() - undecided_count;
    let threshold = percent(min_effect);
    clauses.push(match counted.is_empty() {
        _ if same == 0 => String::new(),
        true => format!(
            "no difference of {threshold} or more from {baseline} in {}",
            headline_metrics(same)
        ),
        false => format!("no difference in {same} other {}", other_metrics(same)),
    });
    clauses.extend(undecided);
    clauses.retain(|c| !c.is_empty());
    if !space.is_empty() {
        clauses.push(space.join(", "));
    }
    clauses.extend(safety.clause());
    Some(format!("{target}: {}.", clauses.join("; ")))
}

/// "not yet decided at 3 repetitions: 1.6x slower postmark append (about
/// 5 more would decide), and 4 more": the largest differences that more
/// repetitions would decide, named after everything that was decided.
fn undecided_clause(speeds: &[Finding]) -> Option<String> {
    let mut undecided: Vec<&Finding> = speeds.iter().filter(|f| f.undecided()).collect();
    undecided.sort_by(|a, b| larger_first(a, b));
    let repetitions = undecided.first()?.repetitions;
    let named: Vec<String> = undecided
        .iter()
        .take(SENTENCE_UNDECIDED)
        .map(|f| f.undecided_phrase())
        .collect();
    let rest = match undecided.len().saturating_sub(SENTENCE_UNDECIDED) {
        0 => String::new(),
        n => format!(", and {n} more"),
    };
    Some(format!(
        "not yet decided at {repetitions} repetitions: {}{rest}",
        named.join(", ")
    ))
}

/// The verdict of a run: each target against the baseline, and the
/// reference targets as the ceiling the others reach a fraction of.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub baseline: String,
    /// A lone target: nothing to compare it with, only its safety.
    pub lone: bool,
    pub targets: Vec<TargetVerdict>,
    /// "ext4 reaches write 12 % · read 80 % of tmpfs (the reference)".
    pub ceilings: Vec<String>,
    /// How many repetitions ran and why they stopped, when `--precision`
    /// decided it.
    pub stopping: Option<String>,
    /// Sync-log placements against no log, said before the targets: a
    /// placement suite's answer.
    pub placements: Vec<PlacementVerdict>,
}

impl Verdict {
    /// Every target other than the baseline against it, the baseline
    /// first with its safety alone (what it can lose is half of the
    /// comparison); a lone target gets its safety line.
    pub fn of(run: &RunResult, summary: &Summary) -> Verdict {
        let baseline = summary.baseline;
        let placed = super::placement::placed_workloads(run, summary);
        let order =
            std::iter::once(baseline).chain((0..summary.targets.len()).filter(|&t| t != baseline));
        let judged = order
            .filter(|&t| t < summary.targets.len() && !summary.is_reference(t))
            .map(|t| {
                let findings = match t == baseline {
                    true => Vec::new(),
                    false => findings(summary, t, baseline),
                };
                let target = &run.targets[t];
                let mut verdict = TargetVerdict::judge(
                    &target.name,
                    &summary.targets[baseline],
                    &findings,
                    Safety::of_configuration(target, &placed),
                    min_effect_of(run),
                );
                verdict.baseline = t == baseline && summary.targets.len() > 1;
                if summary.targets.len() == 1 {
                    verdict.figures = alone::figure_lines(summary, t);
                }
                verdict
            })
            .collect();
        Verdict {
            baseline: summary.targets.get(baseline).cloned().unwrap_or_default(),
            lone: summary.targets.len() == 1,
            targets: judged,
            ceilings: ceilings(summary),
            stopping: run.stopping.as_ref().map(|s| s.to_string()),
            placements: placements::placement_verdicts(run, summary, min_effect_of(run)),
        }
    }

    /// The targets compared with the baseline (all but the baseline).
    pub fn compared(&self) -> Vec<&TargetVerdict> {
        self.targets.iter().filter(|t| !t.baseline).collect()
    }

    /// The verdict as lines of text, shared by the terminal, Markdown and
    /// HTML views: a heading, then per target its counts, classes, safety
    /// and sentence.
    pub fn lines(&self) -> Vec<VerdictLines> {
        self.targets
            .iter()
            .map(|t| VerdictLines {
                target: match t.baseline {
                    true => format!("{} (the baseline)", t.target),
                    false => t.target.clone(),
                },
                counts: (!self.lone && !t.baseline).then(|| t.counts_text()),
                classes: (!t.classes.is_empty()).then(|| t.classes_text()),
                figures: t.figures.clone(),
                safety: t.safety_text(),
                sentence: t.sentence.clone(),
            })
            .collect()
    }

    /// "Verdict against ext4 (the baseline)", or for a lone target "Verdict".
    pub fn heading(&self) -> String {
        match self.lone {
            true => "Verdict".to_string(),
            false => format!("Verdict against {} (the baseline)", self.baseline),
        }
    }

    /// How to read the counts and the classes' figures, with the minimum
    /// effect the counts used.
    pub fn legend(&self) -> Vec<String> {
        let min_effect = self
            .targets
            .first()
            .map_or(DEFAULT_MIN_EFFECT, |t| t.min_effect);
        vec![
            format!(
                "faster/slower: significant after Benjamini–Hochberg over a target's headline \
                 metrics (FDR 5 %, Welch's test of the logarithms) and at least {} apart \
                 (set by --min-effect)",
                percent(min_effect)
            ),
            "write/read/metadata: geometric mean speed-up vs the baseline (>1 = better), \
             approx. 95 % CI, where every metric of the class agrees; else what was decided"
                .to_string(),
        ]
    }

    /// What follows the targets: the ceilings a reference sets, what a
    /// lone target's figures are, why the repetitions stopped.
    pub fn notes(&self) -> Vec<String> {
        let alone = self.lone.then(|| alone::ALONE_NOTE.to_string());
        self.ceilings
            .iter()
            .cloned()
            .chain(alone)
            .chain(self.stopping.clone())
            .collect()
    }

    /// The terminal's block: heading, an indented block per target, the
    /// ceilings and the stopping reason.
    pub fn text(&self) -> String {
        if self.targets.is_empty() {
            return String::new();
        }
        let mut out = String::new();
        for placement in &self.placements {
            out += &format!("Placements: {}:\n", placement.heading);
            for line in &placement.lines {
                out += &format!("→ {line}\n");
            }
        }
        out += &format!("{}:\n", self.heading());
        for lines in self.lines() {
            out += &format!("  {}\n", lines.target);
            for line in lines.details() {
                out += &format!("    {line}\n");
            }
        }
        if !self.lone {
            for line in self.legend() {
                out += &format!("  ({line})\n");
            }
        }
        for note in self.notes() {
            out += &format!("  {note}\n");
        }
        for sentence in self.targets.iter().filter_map(|t| t.sentence.as_ref()) {
            out += &format!("→ {sentence}\n");
        }
        out
    }
}

/// A target's verdict, formatted.
#[derive(Debug, Clone, serde::Serialize)]
pub struct VerdictLines {
    pub target: String,
    pub counts: Option<String>,
    pub classes: Option<String>,
    /// A lone target's figures, a line per class.
    pub figures: Vec<String>,
    pub safety: String,
    pub sentence: Option<String>,
}

impl VerdictLines {
    /// The counts, classes, figures and safety, in that order, those it
    /// has.
    pub fn details(&self) -> Vec<String> {
        let mut details: Vec<String> = [self.counts.clone(), self.classes.clone()]
            .into_iter()
            .flatten()
            .collect();
        details.extend(self.figures.iter().cloned());
        details.push(self.safety.clone());
        details
    }
}

/// Whether a figure may stand in the verdict's claims: one the device
/// counters show a cache served (`Flag::ServedFromCache`: a cold `find`
/// that read 0 B from its device) is the cache's, and a comparison with
/// it, on either side, says nothing of the storage.
pub fn claimable(flags: &[Flag]) -> bool {
    !flags.contains(&Flag::ServedFromCache)
}

/// Target `t`'s headline metrics against the same metrics of target
/// `against` (the baseline, or a reference), where both have them and
/// both are `claimable`.
fn findings(summary: &Summary, t: usize, against: usize) -> Vec<Finding> {
    let mut findings = Vec::new();
    for workload in &summary.workloads {
        for metric in workload.headline() {
            let (Some(cell), Some(base)) = (&metric.cells[t], &metric.cells[against]) else {
                continue;
            };
            if !claimable(&cell.flags) || !claimable(&base.flags) {
                continue;
            }
            let what = what(&workload.name, &metric.name);
            let class = classify(workload, metric);
            findings.extend(finding_of(what, metric, class, base, cell));
        }
    }
    findings
}

/// A cell against another of the same metric (`base`), where both have
/// values to compare.
fn finding_of(
    what: String,
    metric: &MetricSummary,
    class: Option<Class>,
    base: &Cell,
    cell: &Cell,
) -> Option<Finding> {
    Some(Finding {
        what,
        unit: metric.unit.clone(),
        direction: metric.direction,
        class,
        comparison: Comparison::of(&base.values, &cell.values)?,
        not_from_device: cell.flags.iter().any(|f| f.from_device()),
        repetitions: cell.values.len().min(base.values.len()),
    })
}

/// Per target that is not a reference: what fraction of each reference it
/// reaches per class ("ext4 reaches write 12 % · read 80 % of tmpfs").
fn ceilings(summary: &Summary) -> Vec<String> {
    let mut lines = Vec::new();
    for &reference in &summary.references {
        for t in (0..summary.targets.len()).filter(|&t| !summary.is_reference(t)) {
            let findings = findings(summary, t, reference);
            let parts: Vec<String> = class_speedups(&findings)
                .iter()
                .map(|c| format!("{} {:.0} %", c.class.as_str(), 100.0 * c.speedup))
                .collect();
            if !parts.is_empty() {
                lines.push(format!(
                    "{} reaches {} of {} (the reference)",
                    summary.targets[t],
                    parts.join(" · "),
                    summary.targets[reference]
                ));
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::summary::Class;
    use crate::measure::stats::RatioInterval::{self, Bounded};
    use crate::result::{Direction, Metric, TargetResult};

    fn finding(what: &str, ratio: f64, p: Option<f64>, class: Option<Class>) -> Finding {
        Finding {
            what: what.into(),
            unit: "MiB/s".into(),
            direction: Direction::HigherIsBetter,
            class,
            comparison: Comparison {
                ratio,
                ci95: p.map(|_| Bounded(ratio / 1.05, ratio * 1.05)),
                p_value: p,
                significant: p.is_some_and(|p| p < ALPHA),
            },
            not_from_device: false,
            repetitions: 3,
        }
    }

    #[test]
    fn the_sentence_names_the_significant_differences_and_the_risks() {
        let mut findings = vec![finding("sync-write", 7.6, Some(1e-6), Some(Class::Write))];
        findings.extend((0..5).map(|i| finding(&format!("m{i}"), 1.01, Some(0.6), None)));
        let risks = vec!["data=writeback".to_string(), "barriers off".to_string()];
        let verdict = TargetVerdict::judge(
            "ext4-wb",
            "ext4",
            &findings,
            Safety {
                risks,
                ..Safety::default()
            },
            DEFAULT_MIN_EFFECT,
        );
        assert_eq!((verdict.faster, verdict.slower, verdict.same), (1, 0, 5));
        assert_eq!(
            verdict.sentence.as_deref(),
            Some(
                "ext4-wb: 7.6x faster sync-write (7.2x–8.0x); no difference in 5 other headline metrics; \
                 not crash-safe: data=writeback, barriers off."
            )
        );
        assert!(verdict.safety_text().contains("durability: not tested"));
    }

    /// A risk of a workload (a sync log never synced, or on tmpfs) is a
    /// risk of the run: said where the target's own are, never "none".
    #[test]
    fn a_workload_risk_is_among_the_targets_risks() {
        let risk = |code: &str| crate::result::env::Risk {
            code: code.into(),
            message: "m".into(),
        };
        let workload = crate::result::WorkloadResult {
            risks: vec![risk("sync_log_not_synced"), risk("sync_log_volatile")],
            ..Default::default()
        };
        let target: TargetResult = serde_json::from_value(serde_json::json!({
            "name": "a", "path": "/a", "env": null, "workloads": [], "cleanup": null
        }))
        .unwrap();
        assert!(risks(&target).is_empty());
        let target = TargetResult {
            workloads: vec![workload],
            ..target
        };
        assert_eq!(
            risks(&target),
            ["sync log never synced", "sync log: volatile (RAM)"]
        );
    }

    #[test]
    fn a_chance_difference_among_many_metrics_is_no_discovery() {
        // p = 0.03 passes alone, not among 30 read together.
        let mut findings: Vec<Finding> = (0..29)
            .map(|i| finding(&format!("m{i}"), 1.0, Some(0.5), None))
            .collect();
        findings.push(finding("lucky", 1.2, Some(0.03), None));
        assert!(findings[29].comparison.significant);
        let verdict =
            TargetVerdict::judge("b", "a", &findings, Safety::default(), DEFAULT_MIN_EFFECT);
        assert_eq!((verdict.faster, verdict.same), (0, 30));
        assert_eq!(
            verdict.sentence.as_deref(),
            Some("b: no difference of 5 % or more from a in 30 headline metrics.")
        );
    }

    #[test]
    fn without_repetitions_there_is_no_test_and_no_sentence() {
        let findings = [finding("seq-write", 3.0, None, Some(Class::Write))];
        let verdict =
            TargetVerdict::judge("b", "a", &findings, Safety::default(), DEFAULT_MIN_EFFECT);
        assert_eq!(verdict.sentence, None);
        assert_eq!(verdict.untested, 1);
        assert!(verdict.counts_text().contains("no test of significance"));
        // The class figure is still the ratio, without an interval.
        assert_eq!(verdict.classes_text(), "write 3.0x");
    }

    /// A class mean of a decided 11.5x and an undecided 1.19x would be
    /// 3.7x, a figure no workload measured: the class says what was
    /// decided instead; a class whose members all agree keeps its mean.
    #[test]
    fn a_class_says_what_was_decided_not_a_mean_of_decided_and_undecided() {
        let findings = [
            finding("seq-write", 1.19, Some(0.3), Some(Class::Write)),
            finding("sync-write-4k", 11.5, Some(1e-6), Some(Class::Write)),
            finding("seq-read", 2.0, Some(1e-6), Some(Class::Read)),
            finding("rand-read", 2.0, Some(1e-6), Some(Class::Read)),
        ];
        let verdict =
            TargetVerdict::judge("b", "a", &findings, Safety::default(), DEFAULT_MIN_EFFECT);
        assert_eq!(
            verdict.classes_text(),
            "write: 12x faster sync-write-4k, no difference in 1 · read 2.0x (1.9x–2.1x)"
        );
    }

    #[test]
    fn a_shorter_time_is_a_speed_up_and_slower_is_said_as_slower() {
        let mut time = finding("tree find", 0.5, Some(1e-5), Some(Class::Metadata));
        time.direction = Direction::LowerIsBetter;
        let rate = finding("seq-read", 0.25, Some(1e-5), Some(Class::Read));
        let verdict = TargetVerdict::judge(
            "b",
            "a",
            &[time, rate],
            Safety::default(),
            DEFAULT_MIN_EFFECT,
        );
        assert_eq!((verdict.faster, verdict.slower), (1, 1));
        assert_eq!(
            verdict.sentence.as_deref(),
            Some("b: 2.0x faster tree find (1.9x–2.1x); 4.0x slower seq-read (3.8x–4.2x).")
        );
        let metadata = &verdict.classes.iter().find(|c| c.class == Class::Metadata);
        assert_eq!(metadata.map(|c| c.speedup), Some(2.0));
    }

    /// The case: sync-write-4k 2648 ± 1461 against 37267 ± 23338
    /// at three repetitions, 14x apart but not significant after the
    /// correction: said as undecided with how many more repetitions would
    /// decide, never as "no difference".
    #[test]
    fn a_large_difference_not_yet_significant_is_undecided_not_the_same() {
        let big = Finding {
            comparison: Comparison {
                ratio: 14.07,
                ci95: Some(Bounded(0.9, 220.0)),
                p_value: Some(0.08),
                significant: false,
            },
            ..finding("sync-write-4k", 14.07, None, Some(Class::Write))
        };
        let mut findings = vec![big];
        findings.extend((0..24).map(|i| finding(&format!("m{i}"), 1.02, Some(0.7), None)));
        let judged = |findings: &[Finding]| {
            TargetVerdict::judge(
                "nobarrier",
                "defaults",
                findings,
                Safety::default(),
                DEFAULT_MIN_EFFECT,
            )
        };
        let verdict = judged(&findings);
        assert_eq!(
            (
                verdict.faster,
                verdict.slower,
                verdict.undecided,
                verdict.same
            ),
            (0, 0, 1, 24)
        );
        // ln(220/0.9)/2 = 2.75 against ln 14.07 = 2.64: n × (2.75/2.64)² = 3.25.
        assert_eq!(
            verdict.sentence.as_deref(),
            Some(
                "nobarrier: no difference of 5 % or more from defaults in 24 headline metrics; \
                 not yet decided at 3 repetitions: 14x faster sync-write-4k (about 1 more would \
                 decide)."
            )
        );
        assert!(
            verdict
                .counts_text()
                .contains("not yet decided in 1 (over 1.5x apart: repeat more)"),
            "{}",
            verdict.counts_text()
        );
        // Decided differences lead, the undecided follow, however large.
        findings.push(finding("seq-read", 1.3, Some(1e-6), Some(Class::Read)));
        findings.push(finding("postmark append", 1.0 / 1.6, Some(0.2), None));
        let verdict = judged(&findings);
        assert_eq!(
            verdict.sentence.as_deref(),
            Some(
                "nobarrier: 1.3x faster seq-read (1.2x–1.4x); no difference in 24 other headline metrics; \
                 not yet decided at 3 repetitions: 14x faster sync-write-4k (about 1 more would \
                 decide), and 1 more."
            )
        );
        // A small difference that is not significant is "no difference".
        let small = [finding("m", 1.2, Some(0.3), None)];
        let verdict = TargetVerdict::judge("b", "a", &small, Safety::default(), DEFAULT_MIN_EFFECT);
        assert_eq!((verdict.undecided, verdict.same), (0, 1));
    }

    #[test]
    fn a_win_the_device_counters_flagged_is_counted_with_its_caveat() {
        let cached = Finding {
            not_from_device: true,
            ..finding("seq-read", 8.0, Some(1e-6), Some(Class::Read))
        };
        let findings = [
            cached,
            finding("seq-write", 2.0, Some(1e-6), Some(Class::Write)),
        ];
        let verdict =
            TargetVerdict::judge("b", "a", &findings, Safety::default(), DEFAULT_MIN_EFFECT);
        assert_eq!((verdict.faster, verdict.faster_not_from_device), (2, 1));
        assert!(
            verdict
                .counts_text()
                .starts_with("faster in 2 (1 of them the page cache's figures, not the device's)"),
            "{}",
            verdict.counts_text()
        );
        assert_eq!(
            verdict.sentence.as_deref(),
            Some(
                "b: 8.0x faster seq-read (7.6x–8.4x; page cache, not the device), 2.0x faster seq-write \
                 (1.9x–2.1x)."
            )
        );
    }

    #[test]
    fn less_space_on_disk_is_said_as_smaller_not_faster() {
        let space = |what: &str, ratio| Finding {
            unit: crate::result::SPACE_UNIT.into(),
            direction: Direction::LowerIsBetter,
            ..finding(what, ratio, Some(1e-5), None)
        };
        let findings = [
            space("tree copy space on disk", 1.25),
            space("tree dataset space on disk", 0.5),
            space("tree photos space on disk", 1.01),
        ];
        let verdict = TargetVerdict::judge(
            "zstd",
            "lz4",
            &findings,
            Safety::default(),
            DEFAULT_MIN_EFFECT,
        );
        assert_eq!(
            verdict.sentence.as_deref(),
            Some(
                "zstd: 2.0x smaller tree dataset space on disk, 1.2x larger tree copy space on disk."
            )
        );
        assert!(verdict.classes.is_empty(), "space is no speed class");
    }

    /// Space is exact, never a win among the speeds, and said after them;
    /// a 1 % space difference is none at all ("trivia first" was the bug).
    #[test]
    fn space_differences_come_after_the_speeds_and_are_not_counted() {
        let space = |what: &str, ratio| Finding {
            unit: crate::result::SPACE_UNIT.into(),
            direction: Direction::LowerIsBetter,
            ..finding(what, ratio, Some(0.0), None)
        };
        let findings = [
            space("tree-photos dataset space on disk", 1.01),
            space("copy space on disk", 1.4),
            finding("seq-write", 1.3, Some(1e-4), Some(Class::Write)),
            finding("seq-read", 1.0, Some(0.8), Some(Class::Read)),
        ];
        let verdict = TargetVerdict::judge(
            "btrfs",
            "ext4",
            &findings,
            Safety::default(),
            DEFAULT_MIN_EFFECT,
        );
        assert_eq!((verdict.faster, verdict.slower, verdict.same), (1, 0, 1));
        assert_eq!(
            verdict.sentence.as_deref(),
            Some(
                "btrfs: 1.3x faster seq-write (1.2x–1.4x); no difference in 1 other headline metric; \
                 1.4x larger copy space on disk."
            )
        );
        assert!(verdict.counts_text().ends_with("of 2 headline metrics"));
    }

    /// A significant difference under the minimum effect is no practical
    /// one: counted as no difference, and the counts say how many.
    #[test]
    fn a_significant_difference_under_the_minimum_effect_counts_as_none() {
        let findings = [
            finding("postmark create", 1.03, Some(1e-6), Some(Class::Metadata)),
            finding("seq-write", 1.08, Some(1e-6), Some(Class::Write)),
        ];
        let judged =
            |min_effect| TargetVerdict::judge("b", "a", &findings, Safety::default(), min_effect);
        let verdict = judged(DEFAULT_MIN_EFFECT);
        assert_eq!(
            (verdict.faster, verdict.same, verdict.negligible),
            (1, 1, 1)
        );
        assert!(
            verdict
                .counts_text()
                .contains("no difference in 1 (1 of them significant but under 5 %) of 2"),
            "{}",
            verdict.counts_text()
        );
        assert_eq!(
            verdict.sentence.as_deref(),
            Some(
                "b: 1.08x faster seq-write (1.03x–1.1x); no difference in 1 other headline metric."
            )
        );
        let verdict = judged(0.1);
        assert_eq!((verdict.faster, verdict.same), (0, 2));
        assert_eq!(
            verdict.sentence.as_deref(),
            Some("b: no difference of 10 % or more from a in 2 headline metrics.")
        );
        assert_eq!(judged(0.01).faster, 2);
    }

    /// Equal differences are named in one order whatever order the
    /// metrics came in: one result, one sentence.
    #[test]
    fn equal_differences_are_named_in_one_order() {
        // Equal but for rounding, as PostMark's rates over one time are.
        let findings = vec![
            finding(
                "postmark data read",
                1.4 * (1.0 + 1e-15),
                Some(1e-6),
                Some(Class::Read),
            ),
            finding(
                "postmark create",
                1.4 * (1.0 - 1e-15),
                Some(1e-6),
                Some(Class::Metadata),
            ),
            finding("postmark delete", 1.4, Some(1e-6), Some(Class::Metadata)),
            finding("postmark data written", 1.4, Some(1e-6), Some(Class::Write)),
        ];
        let sentence = |findings: &[Finding]| {
            TargetVerdict::judge("b", "a", findings, Safety::default(), DEFAULT_MIN_EFFECT).sentence
        };
        let mut reversed = findings.clone();
        reversed.reverse();
        assert_eq!(sentence(&findings), sentence(&reversed));
        assert_eq!(
            sentence(&findings).as_deref(),
            Some(
                "b: 1.4x faster postmark create (1.3x–1.5x), 1.4x faster postmark data read \
                 (1.3x–1.5x), 1.4x faster postmark data written (1.3x–1.5x), and 1 more faster."
            )
        );
    }

    #[test]
    fn a_class_figure_is_the_geometric_mean_with_a_combined_interval() {
        let findings = [
            finding("a", 4.0, Some(1e-4), Some(Class::Write)),
            finding("b", 1.0, Some(0.9), Some(Class::Write)),
        ];
        let classes = class_speedups(&findings);
        assert_eq!(classes.len(), 1);
        assert!((classes[0].speedup - 2.0).abs() < 1e-9);
        let Some(Bounded(low, high)) = classes[0].ci95 else {
            panic!("bounded intervals combine into a bounded one");
        };
        // Each metric is ±10 %: the mean of two is narrower than either.
        assert!(low < 2.0 && high > 2.0 && high / low < 1.1 * 1.1 / 0.9 / 0.9);
        let mut unbounded = findings.to_vec();
        unbounded[1].comparison.ci95 = Some(RatioInterval::Unbounded);
        assert_eq!(
            class_speedups(&unbounded)[0].ci95,
            Some(RatioInterval::Unbounded)
        );
    }

    /// A tree's runs on two targets, three repetitions each: `find_s`
    /// (`find` seconds, the first flagged with `find_flags`) and `copy_s`.
    fn two_trees(find: [f64; 2], copy: [f64; 2], find_flags: [Vec<Flag>; 2]) -> RunResult {
        let mut run = crate::driver::recording::new_run_result("test");
        for (t, name) in ["a", "b"].into_iter().enumerate() {
            let repetition = |i: usize| {
                let jitter = 1.0 + 0.01 * i as f64;
                let mut find_s =
                    Metric::test("find_s", "s", Direction::LowerIsBetter, find[t] * jitter);
                if i == 0 {
                    find_s.flags = find_flags[t].clone();
                }
                let copy_s =
                    Metric::test("copy_s", "s", Direction::LowerIsBetter, copy[t] * jitter);
                crate::result::WorkloadResult {
                    workload: "tree".into(),
                    metrics: vec![find_s, copy_s],
                    ..Default::default()
                }
            };
            run.targets
                .push(TargetResult::test(name, (0..3).map(repetition).collect()));
        }
        run
    }

    /// ext4's find read 0 B from its device after the caches were emptied
    /// (its metadata pinned by the journal): "9.2x slower find" would be
    /// the cache against the device. A figure served from the cache on
    /// either side is no claim; the other metrics still are.
    #[test]
    fn a_figure_the_cache_served_is_not_claimed_on_either_side() {
        let claimed = |run: &RunResult| -> Vec<String> {
            let summary = Summary::of(run);
            findings(&summary, 1, 0)
                .iter()
                .map(|f| f.what.clone())
                .collect()
        };
        let cached = || vec![Flag::TooShort, Flag::ServedFromCache];
        let (find, copy) = ([0.001, 0.0092], [1.0, 2.0]);
        let both = claimed(&two_trees(find, copy, [vec![Flag::TooShort], vec![]]));
        assert_eq!(both, ["tree find", "tree copy"]);
        for flags in [[cached(), vec![]], [vec![], cached()]] {
            assert_eq!(claimed(&two_trees(find, copy, flags)), ["tree copy"]);
        }
        let run = two_trees(find, copy, [cached(), vec![]]);
        let verdict = Verdict::of(&run, &Summary::of(&run));
        let sentence = verdict.targets[1].sentence.clone().unwrap_or_default();
        assert!(!sentence.contains("find"), "{sentence}");
        assert!(sentence.contains("2.0x slower tree copy"), "{sentence}");
    }
}

//! Reports: views of one saved result. `analysis` computes what every
//! format shows (statistics over repetitions, ratios to the baseline, the
//! verdict, warnings); each format is one module implementing `Reporter`,
//! registered in `format`.
pub mod charts;
pub mod compare;
pub mod csv;
pub mod durability;
pub mod format;
pub mod html;
pub mod live;
pub mod markdown;
pub mod scale_out;
pub mod terminal;

use crate::analysis::Summary;
use crate::analysis::summary::WorkloadSummary;
pub use crate::analysis::{UNBOUNDED, device_text, mean_and_half, mean_ci, number};
use crate::result::RunResult;

/// One output format.
pub trait Reporter {
    fn render(&self, run: &RunResult, summary: &Summary) -> anyhow::Result<String>;
}

/// What every format says first, after "Incomplete", of a result without an end (a run killed,
/// failed or interrupted partway, or still running): its figures are what
/// it measured so far, not the run it was asked for. None once it finished.
pub fn incomplete_note(run: &RunResult) -> Option<String> {
    if run.finished.is_some() {
        return None;
    }
    let results = match run.results_count() {
        1 => "1 result".to_string(),
        n => format!("{n} results"),
    };
    Some(format!(
        "the run did not finish (it stopped partway, or is still running): \
         these are the {results} it measured before"
    ))
}

/// What the placement tables say, for every format's introduction.
pub const PLACEMENT_INTRO: &str = "Workloads that differ only in where their sync log lives \
     (--sync-log): each figure, and in brackets its slowdown against the fastest placement (1.00x).";

/// Footnote marker of warning `index` (0-based) in tables: `[1]`, `[2]`...
pub fn marker(index: usize) -> String {
    format!("[{}]", index + 1)
}

/// Markers of several warnings, joined without spaces (`[1][3]`).
pub fn markers(indices: &[usize]) -> String {
    indices.iter().map(|&i| marker(i)).collect()
}

/// A p-value as a sentence says it: `p = 0.020`, `p < 0.001`.
pub fn p_phrase(p: f64) -> String {
    match p < 0.001 {
        true => "p < 0.001".to_string(),
        false => format!("p = {}", p_text(p)),
    }
}

/// A p-value in two significant digits, `<0.001` below that.
pub fn p_text(p: f64) -> String {
    match p {
        p if !p.is_finite() => "–".to_string(),
        p if p < 0.001 => "<0.001".to_string(),
        p if p >= 0.1 => format!("{p:.2}"),
        p if p >= 0.01 => format!("{p:.3}"),
        p => format!("{p:.4}"),
    }
}

/// A ratio to the baseline, `1.32x`, with `*` when significant.
pub fn ratio(comparison: &crate::analysis::summary::Comparison) -> String {
    let star = if comparison.significant { "*" } else { "" };
    format!("{:.2}x{star}", comparison.ratio)
}

/// The ratio's interval, `1.20–1.45`, with more decimals when two would
/// show a narrow interval as one number; `unbounded` when the data bound it
/// on no side a ratio can take (`RatioInterval::Unbounded`).
pub fn ratio_ci(comparison: &crate::analysis::summary::Comparison) -> Option<String> {
    let Some((low, high)) = comparison.ci95?.bounds() else {
        return Some(UNBOUNDED.to_string());
    };
    let places = (2..=4)
        .find(|&p| format!("{low:.p$}") != format!("{high:.p$}"))
        .unwrap_or(4);
    Some(format!("{low:.places$}–{high:.places$}"))
}

/// How every view's ratio and star are computed (`stats::ratio`), for
/// their legends.
pub const RATIO_LEGEND: &str = "ratio of geometric means, * = significant as the verdict counts it (Welch's t-test of the logarithms, Benjamini–Hochberg over the target's headline metrics, FDR 5 %; an interval that misses 1 without a * is p < 0.05 alone)";

/// Why an interval is unbounded, for the legends of views that show one.
pub const UNBOUNDED_REASON: &str =
    "unbounded = a mean's 95 % CI includes 0, so the ratio has no finite positive bounds";

/// `bonnie (3 repetitions)`, or the kind too when the name is a label.
pub fn workload_title(workload: &WorkloadSummary) -> String {
    let counts: Vec<usize> = workload
        .metrics
        .iter()
        .flat_map(|m| m.cells.iter().flatten().map(|c| c.stats.n))
        .collect();
    let n = match (counts.iter().min(), counts.iter().max()) {
        (Some(1), Some(1)) => "1 repetition".to_string(),
        (Some(low), Some(high)) if low == high => format!("{low} repetitions"),
        (Some(low), Some(high)) => format!("{low}–{high} repetitions"),
        _ => "no values".to_string(),
    };
    if workload.name == workload.kind {
        format!("{} ({n})", workload.name)
    } else {
        format!("{} ({}, {n})", workload.name, workload.kind)
    }
}

/// The target's name, `(baseline)` on the baseline, `(reference)` on a
/// reference, and the markers of the workload's notes on it, joined by
/// `separator` (a space, or a line break where a table column must stay
/// narrow).
pub fn target_label(
    summary: &Summary,
    workload: &WorkloadSummary,
    target: usize,
    separator: &str,
) -> String {
    let mut parts = vec![summary.targets[target].clone()];
    if target == summary.baseline && summary.targets.len() > 1 {
        parts.push("(baseline)".to_string());
    }
    if summary.is_reference(target) {
        parts.push("(reference)".to_string());
    }
    let notes = markers(&workload.notes[target]);
    if !notes.is_empty() {
        parts.push(notes);
    }
    parts.join(separator)
}

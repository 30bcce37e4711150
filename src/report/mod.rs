//! Reports: views of one saved result. `summary` computes what every format
//! shows (statistics over repetitions, ratios to the baseline, warnings);
//! each format is one module implementing `Reporter`, registered in
//! `format`.
mod access_order;
pub mod charts;
pub mod compare;
pub mod config_diff;
pub mod csv;
pub mod durability;
mod flag_notes;
pub mod format;
pub mod html;
pub mod live;
pub mod markdown;
pub mod names;
pub mod placement;
pub mod precision;
pub mod scale_out;
pub mod summary;
pub mod sweep;
pub mod terminal;
pub mod verdict;

use crate::result::RunResult;
pub use summary::Summary;
use summary::WorkloadSummary;

/// One output format.
pub trait Reporter {
    fn render(&self, run: &RunResult, summary: &Summary) -> anyhow::Result<String>;
}

/// The target a saved result's ratios and verdict are taken against, as
/// the run that made it took them: the one its command line named with
/// `--baseline` (`fsbench run --baseline NAME`: the result keeps the
/// command line, not the choice), when that is one of its targets and not
/// a reference; else the first target that is not a reference.
pub fn baseline_of(run: &RunResult) -> usize {
    let named = asked_baseline(&run.command)
        .filter(|_| run.made_by() == "fsbench run")
        .and_then(|name| {
            run.targets
                .iter()
                .position(|t| t.name == name && !t.reference)
        });
    named.unwrap_or_else(|| run.targets.iter().position(|t| !t.reference).unwrap_or(0))
}

/// The value of `--baseline` on a command line (`--baseline NAME` or
/// `--baseline=NAME`), before any `--` that ends the options.
fn asked_baseline(command: &[String]) -> Option<&str> {
    let mut words = command.iter().skip(1).map(String::as_str);
    let mut asked = None;
    while let Some(word) = words.next() {
        match word {
            "--" => break,
            "--baseline" => asked = words.next(),
            _ => {
                if let Some(name) = word.strip_prefix("--baseline=") {
                    asked = Some(name);
                }
            }
        }
    }
    asked
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

/// Decimals that show a value to about four significant digits without
/// false precision in large numbers (`151322`, `683.4`, `12.35`, `0.2852`).
fn decimals(value: f64) -> usize {
    match value.abs() {
        v if v >= 1000.0 => 0,
        v if v >= 100.0 => 1,
        v if v >= 10.0 => 2,
        v if v >= 1.0 || v == 0.0 => 3,
        v => (3 - v.log10().floor() as i64).clamp(3, 9) as usize,
    }
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

/// A value as every format prints it (tables, chart labels and axes), so a
/// figure reads the same wherever it appears; a dash for a value that is
/// not finite.
pub fn number(value: f64) -> String {
    if !value.is_finite() {
        return "–".to_string();
    }
    format!("{value:.*}", decimals(value))
}

/// "dev 98%": the device bytes as a share of the bytes the workload
/// moved, or "dev 4.0 KiB/op" for a phase that moves no data; a cell has
/// it only when its result has device counters.
pub fn device_text(share: summary::DeviceShare) -> String {
    use summary::DeviceShare;
    match share {
        DeviceShare::Percent(p) if p > 0.0 && p < 1.0 => format!("dev {p:.1}%"),
        DeviceShare::Percent(p) => format!("dev {p:.0}%"),
        DeviceShare::PerOperation(bytes) => {
            format!("dev {}/op", crate::size::format_bytes(bytes as u64))
        }
    }
}

/// `mean ± half-width` of the 95 % CI, or the mean alone for a single
/// repetition.
pub fn mean_ci(stats: &crate::measure::stats::Stats) -> String {
    match mean_and_half(stats) {
        (mean, Some(half)) => format!("{mean} ± {half}"),
        (mean, None) => mean,
    }
}

/// The two halves of `mean_ci`, both with the mean's decimals so they
/// line up, for a view that sets them on separate lines; no half-width
/// for a single repetition.
pub fn mean_and_half(stats: &crate::measure::stats::Stats) -> (String, Option<String>) {
    let places = decimals(stats.mean);
    let half = stats.ci95_half_width().map(|h| format!("{h:.places$}"));
    (format!("{:.places$}", stats.mean), half)
}

/// A ratio to the baseline, `1.32x`, with `*` when significant.
pub fn ratio(comparison: &summary::Comparison) -> String {
    let star = if comparison.significant { "*" } else { "" };
    format!("{:.2}x{star}", comparison.ratio)
}

/// The ratio's interval, `1.20–1.45`, with more decimals when two would
/// show a narrow interval as one number; `unbounded` when the data bound it
/// on no side a ratio can take (`RatioInterval::Unbounded`).
pub fn ratio_ci(comparison: &summary::Comparison) -> Option<String> {
    let Some((low, high)) = comparison.ci95?.bounds() else {
        return Some(UNBOUNDED.to_string());
    };
    let places = (2..=4)
        .find(|&p| format!("{low:.p$}") != format!("{high:.p$}"))
        .unwrap_or(4);
    Some(format!("{low:.places$}–{high:.places$}"))
}

/// What every view prints for an unbounded ratio interval.
pub const UNBOUNDED: &str = "unbounded";

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_have_about_four_significant_digits() {
        for (value, text) in [
            (151_322.4, "151322"),
            (683.44, "683.4"),
            (12.345_6, "12.35"),
            (1.0, "1.000"),
            (0.285_24, "0.2852"),
            (0.012_346, "0.01235"),
            (-2500.0, "-2500"),
            (0.0, "0.000"),
            (f64::NAN, "–"),
        ] {
            assert_eq!(number(value), text, "{value}");
        }
    }

    /// Every finite f64 reads back as the bits written (serde_json's
    /// `float_roundtrip`; without it about one in ten is a unit off).
    #[test]
    fn numbers_read_back_exactly() {
        let mut values = vec![
            0.1 + 0.2,
            1.0 / 3.0,
            5e-324,
            f64::MIN_POSITIVE,
            f64::MAX,
            -0.0,
            2.5e22,
            42_241.345_678_901_23,
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        while values.len() < 20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let any = f64::from_bits(state);
            // Figures as runs make them, and any bits at all.
            let figure = (state >> 11) as f64 / (1u64 << 53) as f64 * 1e5;
            values.extend([any, figure].into_iter().filter(|v| v.is_finite()));
        }
        let text = serde_json::to_string(&values).unwrap();
        let read: serde_json::Value = serde_json::from_str(&text).unwrap();
        let read = read.as_array().unwrap();
        for (written, read) in values.iter().zip(read) {
            assert_eq!(read.as_f64().map(f64::to_bits), Some(written.to_bits()));
        }
    }

    /// `fsbench run --baseline NAME` is kept in the result only as its
    /// command line: a report of it takes the same baseline.
    #[test]
    fn a_saved_run_keeps_the_baseline_its_command_line_named() {
        let mut run: RunResult =
            serde_json::from_str(include_str!("../../tests/fixtures/run-two-targets.json"))
                .unwrap();
        let mut baseline = |line: &str| {
            run.command = line.split_whitespace().map(String::from).collect();
            baseline_of(&run)
        };
        assert_eq!(baseline("fsbench run -t a -t b"), 0);
        assert_eq!(baseline("fsbench run -t a -t b --baseline tmpfs-huge"), 1);
        assert_eq!(baseline("fsbench --json x run --baseline=tmpfs-huge -q"), 1);
        assert_eq!(baseline("fsbench run --baseline gone"), 0, "no such target");
        assert_eq!(baseline("fsbench run -- --baseline tmpfs-huge"), 0);
        assert_eq!(baseline("fsbench io --baseline tmpfs-huge"), 0, "not run's");
        run.targets[0].reference = true;
        let mut baseline = |line: &str| {
            run.command = line.split_whitespace().map(String::from).collect();
            baseline_of(&run)
        };
        assert_eq!(baseline("fsbench run"), 1, "never a reference");
        assert_eq!(baseline("fsbench run --baseline tmpfs"), 1);
    }
}

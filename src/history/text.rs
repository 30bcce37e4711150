//! The history as text: the terminal's lines, Markdown and CSV. Each
//! change point is one sentence ([`sentence`]), the same in every format.
use super::{Change, History, Series, changepoint};
use crate::analysis::names;
use crate::analysis::precision::percent;
use crate::analysis::verdict::times;
use crate::report::{number, p_phrase, terminal::wrap};

/// What the method promises, for the end of every format.
pub fn method_line(history: &History) -> String {
    format!(
        "Method: binary segmentation, each split by Student's t-test of the logarithms \
         (Bonferroni over the splits tried); false discovery rate {} over the {} series \
         tested (Benjamini–Hochberg): with no change anywhere, at most 1 history in {:.0} \
         shows a change point; none under {} (the runs' minimum effect); at least {} runs, \
         {} on each side of a change.",
        percent(changepoint::LEVEL),
        history.tested(),
        1.0 / changepoint::LEVEL,
        percent(history.min_effect),
        changepoint::MIN_POINTS,
        changepoint::MIN_SEGMENT,
    )
}

/// `tmpfs · seq-write · MB/s fell 23 % (worse, p = 0.003) between RUN and
/// RUN; what changed there: kernel 6.1 → 6.6`.
pub fn sentence(series: &Series, change: &Change) -> String {
    let (before, after) = series.around(change);
    let what_changed = match change.what_changed.is_empty() {
        true => "nothing in the fingerprint changed there".to_string(),
        false => format!("what changed there: {}", change.what_changed.join("; ")),
    };
    format!(
        "{} {} ({}) between {} and {}; {what_changed}",
        series_name(series),
        movement(change),
        judgement(series, change),
        before.run_id,
        after.run_id,
    )
}

/// `target · workload · metric (unit)`.
pub fn series_name(series: &Series) -> String {
    let key = &series.key;
    let metric = names::human(&key.metric, &series.unit);
    format!("{} · {} · {metric}", key.target, key.workload)
}

/// `fell 23 %`, `rose 4.5 %`; `fell 800x`, `rose 3.2x` from half or
/// twice on (where a percentage reads "fell 100 %"); or the means where
/// there is no ratio.
fn movement(change: &Change) -> String {
    let point = &change.point;
    let Some(relative) = point.relative_change else {
        return format!(
            "went from {} to {}",
            number(point.mean_before),
            number(point.mean_after)
        );
    };
    let verb = if relative < 0.0 { "fell" } else { "rose" };
    let ratio = 1.0 + relative;
    let percent = relative.abs() * 100.0;
    match ratio {
        r if r > 0.0 && r <= 0.5 => format!("{verb} {}", times(1.0 / r)),
        r if r >= 2.0 => format!("{verb} {}", times(r)),
        _ if percent < 10.0 => format!("{verb} {percent:.1} %"),
        _ => format!("{verb} {percent:.0} %"),
    }
}

/// `worse, p = 0.003`: better or worse in the metric's direction.
fn judgement(series: &Series, change: &Change) -> String {
    let point = &change.point;
    let p = p_phrase(point.p_value);
    match point.relative_change {
        Some(relative) if series.direction.is_improvement(1.0 + relative) => {
            format!("better, {p}")
        }
        Some(_) => format!("worse, {p}"),
        None => p,
    }
}

/// `30 runs from 2026-01-02 to 2026-03-04, 12 series`.
pub(super) fn overview(history: &History) -> String {
    let starts = history.series.iter().flat_map(|s| &s.points);
    let first = starts.clone().map(|p| p.started).min();
    let last = starts.map(|p| p.started).max();
    let span = match (first, last) {
        (Some(first), Some(last)) => format!(
            " from {} to {}",
            first.format("%Y-%m-%d"),
            last.format("%Y-%m-%d")
        ),
        _ => String::new(),
    };
    let plural = |n: usize, word: &str| match n {
        1 => format!("1 {word}"),
        n => format!("{n} {word}s"),
    };
    format!(
        "{}{span}, {} series (target · workload · metric)",
        plural(history.runs, "run"),
        history.series.len()
    )
}

/// How many long-enough series showed no change point.
pub(super) fn quiet_line(history: &History) -> String {
    let long = history.tested();
    match long - history.changed().count() {
        0 if long > 0 => "Every series long enough to have one has a change point.".to_string(),
        quiet => {
            format!("No change point in {quiet} of the {long} series long enough to have one.")
        }
    }
}

/// The terminal's text, no line wider than `width` (but for a word).
pub fn terminal(history: &History, width: usize) -> String {
    let mut out = wrap(&overview(history), width, "");
    for note in &history.notes {
        out += &wrap(note, width, "  ");
    }
    let changed: Vec<&Series> = history.changed().collect();
    if !changed.is_empty() {
        out += "\nChange points:\n";
        for series in changed {
            for change in &series.changes {
                out += &wrap(&format!("  {}", sentence(series, change)), width, "    ");
            }
        }
    }
    out += "\n";
    out += &wrap(&quiet_line(history), width, "");
    out += &wrap(&method_line(history), width, "");
    out
}

/// Markdown: a title, the overview and notes, a list of change points.
pub fn markdown(history: &History) -> String {
    let mut out = format!("# fsbench history\n\n{}.\n\n", overview(history));
    for note in &history.notes {
        out += &format!("- {note}\n");
    }
    out += "\n## Change points\n\n";
    for series in history.changed() {
        for change in &series.changes {
            out += &format!("- {}\n", sentence(series, change));
        }
    }
    out += &format!("\n{}\n\n{}\n", quiet_line(history), method_line(history));
    out
}

/// The CSV's columns: one row per change point.
const CSV_HEADER: [&str; 13] = [
    "target",
    "workload",
    "metric",
    "unit",
    "index",
    "run_before",
    "run_after",
    "started_after",
    "mean_before",
    "mean_after",
    "change_percent",
    "p_value",
    "what_changed",
];

/// CSV, one row per change point: `index` is the 0-based place of the
/// first run after the change in the series, `what_changed` the
/// fingerprint's differences joined by `; `.
pub fn csv(history: &History) -> anyhow::Result<String> {
    let mut writer = ::csv::Writer::from_writer(Vec::new());
    writer.write_record(CSV_HEADER)?;
    for series in history.changed() {
        for change in &series.changes {
            let (before, after) = series.around(change);
            let point = &change.point;
            let key = &series.key;
            writer.write_record([
                key.target.clone(),
                key.workload.clone(),
                key.metric.clone(),
                series.unit.clone(),
                point.index.to_string(),
                before.run_id.clone(),
                after.run_id.clone(),
                after.started.to_rfc3339(),
                point.mean_before.to_string(),
                point.mean_after.to_string(),
                point
                    .relative_change
                    .map_or(String::new(), |r| format!("{:.2}", r * 100.0)),
                point.p_value.to_string(),
                change.what_changed.join("; "),
            ])?;
        }
    }
    Ok(String::from_utf8(writer.into_inner()?)?)
}

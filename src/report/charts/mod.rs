//! SVG charts for the reports, drawn with plotters: a bar chart per metric
//! (one bar per target, 95 % CI whiskers), latency percentile plots, time
//! series of the io workloads, and the diverging "graph of relative change"
//! of `fsbench compare`.
//!
//! Every chart is a complete `<svg>` document with its title, axis names
//! and units inside it, so it can be cut out of the HTML report and put in a
//! blog post as is. Charts take plain data (labels, numbers, colour
//! indexes), not the summary model, so new workloads need nothing here.
//!
//! Here: the look every chart shares (palette, fonts, sizes) and the SVG
//! canvas. Each kind of chart is a module: `bars` (one horizontal bar per
//! row), `change` (the diverging change chart, on those rows) and `lines`
//! (percentiles and time series); `legend` is their legend strip.
mod bars;
mod change;
mod legend;
mod lines;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::report::number;
use crate::result::LatencySummary;
pub use bars::bar_chart;
pub use change::{change_title, relative_change};
pub use lines::{latency_percentiles, runs_series, time_series};

/// Colours of the targets, by run order, the same in every chart and in the
/// HTML tables (Tableau 10: distinct hues that survive grey-scale printing).
const TARGET_COLORS: [RGBColor; 10] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0xff, 0x9d, 0xa7),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0xba, 0xb0, 0xac),
];

/// Relative change: improvements, deteriorations (in the metric's
/// direction, whatever the sign of the change), and changes within the noise.
const BETTER_COLOR: RGBColor = RGBColor(0x2b, 0x6c, 0xb0);
const WORSE_COLOR: RGBColor = RGBColor(0xd0, 0x5a, 0x2c);
const INSIGNIFICANT_COLOR: RGBColor = RGBColor(0xc4, 0xc4, 0xc4);
const INK: RGBColor = RGBColor(0x33, 0x33, 0x33);
const GRID: RGBColor = RGBColor(0xe6, 0xe6, 0xe6);
const WARMUP_SHADE: RGBColor = RGBColor(0xf0, 0xf0, 0xf0);

const FONT: &str = "sans-serif";
/// Font sizes in CSS px. Plotters' SVG backend writes a font size 1.24
/// times smaller than the one asked for, hence `PLOTTERS_FONT_SCALE`.
const CAPTION_SIZE: f64 = 15.0 * PLOTTERS_FONT_SCALE;
const LABEL_SIZE: f64 = 12.5 * PLOTTERS_FONT_SCALE;
const PLOTTERS_FONT_SCALE: f64 = 1.24;
/// Average advance of a character of `LABEL_SIZE` sans-serif, generous, to
/// size label areas so no text is cut (the browser, not plotters, lays the
/// text out).
const LABEL_CHAR_WIDTH: f64 = 7.2;

const CHART_WIDTH: u32 = 560;
const MARGIN: u32 = 12;
/// Room for the half of the last x tick label that overhangs the plot.
const RIGHT_MARGIN: u32 = 36;
const CAPTION_HEIGHT: u32 = 34;
const X_AXIS_HEIGHT: u32 = 44;
const Y_AXIS_WIDTH: u32 = 64;
const BAR_ROW_HEIGHT: u32 = 34;
/// Change charts list every metric of a run: denser rows.
const CHANGE_ROW_HEIGHT: u32 = 26;
/// Space above and below each bar, within its row.
const BAR_GAP: u32 = 7;
const CHANGE_BAR_GAP: u32 = 5;
const LINE_CHART_HEIGHT: u32 = 320;
/// Share of the value axis kept free right of the longest bar for its label.
const VALUE_LABEL_ROOM: f64 = 1.28;

/// One bar of a per-metric chart: one target's mean.
#[derive(Debug, Clone)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    /// 95 % confidence interval of `value`, drawn as a whisker.
    pub ci95: Option<(f64, f64)>,
    /// Target index, for its colour.
    pub color: usize,
    /// Footnote marker shown after the value, e.g. "†" for a flagged result.
    pub marker: String,
}

/// One target's latency percentiles in a percentile plot.
#[derive(Debug, Clone)]
pub struct LatencyLine {
    pub label: String,
    pub color: usize,
    pub latency: LatencySummary,
}

/// One line of a time series chart: (seconds, value) points, or (run,
/// value) over saved runs.
#[derive(Debug, Clone)]
pub struct TimeLine {
    /// Legend entry; None for a further repetition of a target already named.
    pub label: Option<String>,
    pub color: usize,
    pub points: Vec<(f64, f64)>,
    /// Drawn dashed: another view of the same run (the devices' rate
    /// beside the workload's).
    pub dashed: bool,
    /// Places on x marked by a vertical line across the chart: where the
    /// line's throughput fell off a cliff, or where a history changed.
    pub marks: Vec<f64>,
}

/// The colour of target `index` (run order), as CSS `#rrggbb`.
pub fn target_color_hex(index: usize) -> String {
    let RGBColor(r, g, b) = target_color(index);
    format!("#{r:02x}{g:02x}{b:02x}")
}

fn target_color(index: usize) -> RGBColor {
    TARGET_COLORS[index % TARGET_COLORS.len()]
}

/// An axis tick: a value as the tables print it (`report::number`), without
/// trailing zeros ("0.01", "2.5", "10").
fn format_tick(value: f64) -> String {
    let text = number(value);
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// A formatted change with an explicit "+" when it is an increase.
fn signed(text: String, value: f64) -> String {
    if value > 0.0 {
        format!("+{text}")
    } else {
        text
    }
}

fn label_font() -> TextStyle<'static> {
    (FONT, LABEL_SIZE).into_font().color(&INK)
}

/// Estimated width of `text` in the label font, in px.
fn text_width(text: &str) -> i32 {
    (text.chars().count() as f64 * LABEL_CHAR_WIDTH) as i32
}

/// Largest value an axis reaches. A result's figures are far below it;
/// past it (a corrupt or hand-edited result) the axis maths of the chart
/// library loses all precision, and at infinity it never ends.
const MAX_AXIS_VALUE: f64 = 1e30;

/// `range` as an axis of chart `title`, or an error when either end is not
/// a number of sensible size.
fn drawable(title: &str, range: std::ops::Range<f64>) -> anyhow::Result<std::ops::Range<f64>> {
    let sensible = |v: f64| v.abs() <= MAX_AXIS_VALUE;
    anyhow::ensure!(
        sensible(range.start) && sensible(range.end) && range.start < range.end,
        "chart {title:?}: its values ({:e} to {:e}) are out of the range a chart can show",
        range.start,
        range.end
    );
    Ok(range)
}

/// Runs `draw` on a white SVG canvas of `size` pixels and returns the SVG.
fn render_svg(
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> anyhow::Result<()>,
) -> anyhow::Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE)?;
        draw(&root)?;
        root.present()?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_colours_are_stable_and_wrap() {
        assert_eq!(target_color_hex(0), "#4e79a7");
        assert_eq!(target_color_hex(10), target_color_hex(0));
        assert_ne!(target_color_hex(1), target_color_hex(0));
    }

    #[test]
    fn empty_charts_are_errors_not_blank_images() {
        assert!(bar_chart("t", "u", &[]).is_err());
        assert!(relative_change("t", &[]).is_err());
        assert!(time_series("t", "u", &[], None).is_err());
    }
}

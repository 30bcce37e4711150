//! SVG charts for the reports, drawn with plotters: a bar chart per metric
//! (one bar per target, 95 % CI whiskers), latency percentile plots, time
//! series of the io workloads, and the diverging "graph of relative change"
//! of `fsbench compare`.
//!
//! Every chart is a complete `<svg>` document with its title, axis names
//! and units inside it, so it can be cut out of the HTML report and put in a
//! blog post as is. Charts take plain data (labels, numbers, colour
//! indexes), not the summary model, so new workloads need nothing here.
mod change;

use plotters::coord::Shift;
use plotters::coord::ranged1d::SegmentedCoord;
use plotters::coord::types::{RangedCoordf64, RangedCoordusize};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::report::number;
use crate::result::LatencySummary;
pub use change::{relative_change, relative_change_titled};

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

/// Relative change: increases, decreases, and changes within the noise.
const INCREASE_COLOR: RGBColor = RGBColor(0x2b, 0x6c, 0xb0);
const DECREASE_COLOR: RGBColor = RGBColor(0xd0, 0x5a, 0x2c);
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

/// One line of a time series chart: (seconds, value) points.
#[derive(Debug, Clone)]
pub struct TimeLine {
    /// Legend entry; None for a further repetition of a target already named.
    pub label: Option<String>,
    pub color: usize,
    pub points: Vec<(f64, f64)>,
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

/// Horizontal bars, one per target (first on top), starting at zero, with
/// the CI as whiskers and the value written at the end of each bar.
pub fn bar_chart(title: &str, axis: &str, bars: &[Bar]) -> anyhow::Result<String> {
    anyhow::ensure!(!bars.is_empty(), "bar chart {title:?} has no bars");
    let rows = bars.len();
    let limits = Limits::of(bars.iter().map(|bar| (bar.value, bar.ci95)));
    let x_range = drawable(title, limits.axis(VALUE_LABEL_ROOM))?;
    let height = CAPTION_HEIGHT + X_AXIS_HEIGHT + MARGIN * 2 + BAR_ROW_HEIGHT * rows as u32;
    let label_width = label_area_width(bars.iter().map(|bar| bar.label.as_str()));
    let row_of = |i: usize| rows - 1 - i;
    render_svg((CHART_WIDTH, height), |root| {
        let frame = RowFrame {
            title,
            labels: bars.iter().map(|bar| bar.label.as_str()).collect(),
            label_width,
            x_range: x_range.clone(),
            x_labels: 6,
            x_format: &|v| format_tick(*v),
            x_desc: axis,
        };
        let mut chart = frame.draw(root)?;
        chart.draw_series(
            bars.iter()
                .enumerate()
                .map(|(i, bar)| row_bar(row_of(i), bar.value, target_color(bar.color), BAR_GAP)),
        )?;
        for (i, bar) in bars.iter().enumerate() {
            let row = SegmentValue::CenterOf(row_of(i));
            if let Some(ci95) = bar.ci95 {
                draw_whisker(&mut chart, ci95, &limits, row.clone())?;
            }
            let end = limits.extent(bar.value, bar.ci95).1.max(0.0);
            let text = format!("{}{}", number(bar.value), bar.marker);
            draw_bar_label(&mut chart, (end, row), text, label_font(), HPos::Left)?;
        }
        Ok(())
    })
}

/// Latency percentiles (p50 .. p99.99, max) per target on a log scale, in
/// the time unit that suits the middle of the range.
pub fn latency_percentiles(title: &str, lines: &[LatencyLine]) -> anyhow::Result<String> {
    let percentiles: Vec<Vec<(usize, f64)>> = lines
        .iter()
        .map(|line| percentile_points(&line.latency))
        .collect();
    let all_ns = || percentiles.iter().flatten().map(|&(_, ns)| ns);
    let max_ns = all_ns().fold(0.0, f64::max);
    let min_ns = all_ns().fold(f64::INFINITY, f64::min);
    anyhow::ensure!(max_ns > 0.0, "latency chart {title:?} has no samples");
    let (unit, scale) = time_unit((min_ns * max_ns).sqrt());
    let y_range = drawable(title, (min_ns / scale / 1.6)..(max_ns / scale * 1.6))?;
    let legend = Legend::new(
        lines
            .iter()
            .map(|line| (line.label.clone(), target_color(line.color)))
            .collect(),
    );
    render_svg((CHART_WIDTH, LINE_CHART_HEIGHT + legend.height), |root| {
        let plot = legend.draw_under_title(root, title)?;
        let mut chart = ChartBuilder::on(&plot)
            .margin(MARGIN)
            .margin_right(RIGHT_MARGIN)
            .x_label_area_size(X_AXIS_HEIGHT)
            .y_label_area_size(Y_AXIS_WIDTH)
            .build_cartesian_2d(
                (0..PERCENTILE_NAMES.len() - 1).into_segmented(),
                y_range.log_scale(),
            )?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .light_line_style(TRANSPARENT)
            .bold_line_style(GRID)
            .axis_style(INK)
            .x_labels(PERCENTILE_NAMES.len())
            .x_label_formatter(&|segment| match segment {
                SegmentValue::CenterOf(i) => PERCENTILE_NAMES.get(*i).unwrap_or(&"").to_string(),
                _ => String::new(),
            })
            .x_desc("percentile")
            .y_label_formatter(&|v| format_tick(*v))
            .y_desc(format!("latency ({unit}, log scale)"))
            .label_style(label_font())
            .axis_desc_style(label_font())
            .draw()?;
        for (line, points) in lines.iter().zip(&percentiles) {
            let color = target_color(line.color);
            let coords = points
                .iter()
                .map(|&(i, ns)| (SegmentValue::CenterOf(i), ns / scale));
            chart.draw_series(LineSeries::new(coords.clone(), color.stroke_width(2)))?;
            chart.draw_series(coords.map(|c| Circle::new(c, 3, color.filled())))?;
        }
        Ok(())
    })
}

const PERCENTILE_NAMES: [&str; 6] = ["p50", "p90", "p99", "p99.9", "p99.99", "max"];

/// (percentile index, ns) for each recorded percentile; p99.99 is 0 in
/// results written before it was recorded and is then left out.
fn percentile_points(latency: &LatencySummary) -> Vec<(usize, f64)> {
    [
        latency.p50_ns,
        latency.p90_ns,
        latency.p99_ns,
        latency.p999_ns,
        latency.p9999_ns,
        latency.max_ns,
    ]
    .into_iter()
    .enumerate()
    .filter(|&(_, ns)| ns > 0)
    .map(|(i, ns)| (i, ns as f64))
    .collect()
}

/// The unit that shows `typical_ns` with one to three integer digits, and
/// its size in ns. Latency axes take the geometric middle of their range,
/// so neither end needs many zeros.
fn time_unit(typical_ns: f64) -> (&'static str, f64) {
    match typical_ns {
        ns if ns < 1e3 => ("ns", 1.0),
        ns if ns < 1e6 => ("µs", 1e3),
        ns if ns < 1e9 => ("ms", 1e6),
        _ => ("s", 1e9),
    }
}

/// Values over time, one line per target and repetition, with the warm-up
/// (shown but not measured) shaded.
pub fn time_series(
    title: &str,
    axis: &str,
    lines: &[TimeLine],
    warmup_until_s: Option<f64>,
) -> anyhow::Result<String> {
    let points = || lines.iter().flat_map(|line| line.points.iter());
    anyhow::ensure!(
        points().next().is_some(),
        "time series {title:?} has no points"
    );
    let x_max = points().map(|p| p.0).fold(0.0, f64::max);
    let y_max = points().map(|p| p.1).fold(0.0, f64::max);
    let x_range = drawable(title, 0.0..x_max.max(f64::MIN_POSITIVE))?;
    let y_range = drawable(title, 0.0..(y_max * 1.1).max(f64::MIN_POSITIVE))?;
    let warmup_end = warmup_until_s.filter(|&end| end > 0.0);
    let mut entries: Vec<(String, RGBColor)> = lines
        .iter()
        .filter_map(|line| Some((line.label.clone()?, target_color(line.color))))
        .collect();
    if warmup_end.is_some() {
        entries.push(("warm-up (not measured)".to_string(), WARMUP_SHADE));
    }
    let legend = Legend::new(entries);
    render_svg((CHART_WIDTH, LINE_CHART_HEIGHT + legend.height), |root| {
        let plot = legend.draw_under_title(root, title)?;
        let mut chart = ChartBuilder::on(&plot)
            .margin(MARGIN)
            .margin_right(RIGHT_MARGIN)
            .x_label_area_size(X_AXIS_HEIGHT)
            .y_label_area_size(Y_AXIS_WIDTH)
            .build_cartesian_2d(x_range, y_range.clone())?;
        chart
            .configure_mesh()
            .light_line_style(TRANSPARENT)
            .bold_line_style(GRID)
            .axis_style(INK)
            .x_desc("time (s)")
            .x_label_formatter(&|v| format_tick(*v))
            .y_desc(axis)
            .y_label_formatter(&|v| format_tick(*v))
            .label_style(label_font())
            .axis_desc_style(label_font())
            .draw()?;
        if let Some(end) = warmup_end {
            chart.draw_series(std::iter::once(Rectangle::new(
                [(0.0, y_range.start), (end, y_range.end)],
                WARMUP_SHADE.filled(),
            )))?;
        }
        for line in lines {
            let style = target_color(line.color).stroke_width(2);
            chart.draw_series(LineSeries::new(line.points.clone(), style))?;
        }
        Ok(())
    })
}

/// The frame of a chart with one horizontal bar per row: caption, row
/// labels (the first on top), value axis and grid.
struct RowFrame<'f> {
    title: &'f str,
    labels: Vec<&'f str>,
    label_width: u32,
    x_range: std::ops::Range<f64>,
    x_labels: usize,
    x_format: &'f dyn Fn(&f64) -> String,
    x_desc: &'f str,
}

impl RowFrame<'_> {
    /// Draws the frame on `root`; bars go in row `rows - 1 - i` for label `i`.
    fn draw<'a, 'b>(
        &self,
        root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    ) -> anyhow::Result<BarChartContext<'a, 'b>> {
        let rows = self.labels.len();
        let mut chart = ChartBuilder::on(root)
            .caption(self.title, (FONT, CAPTION_SIZE).into_font().color(&INK))
            .margin(MARGIN)
            .margin_right(RIGHT_MARGIN)
            .x_label_area_size(X_AXIS_HEIGHT)
            .y_label_area_size(self.label_width)
            .build_cartesian_2d(self.x_range.clone(), (0..rows - 1).into_segmented())?;
        let label_of = |segment: &SegmentValue<usize>| match segment {
            SegmentValue::CenterOf(row) if *row < rows => self.labels[rows - 1 - row].to_string(),
            _ => String::new(),
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .light_line_style(TRANSPARENT)
            .bold_line_style(GRID)
            .axis_style(INK)
            .y_labels(rows)
            .y_label_formatter(&label_of)
            .x_labels(self.x_labels)
            .x_label_formatter(self.x_format)
            .x_desc(self.x_desc)
            .label_style(label_font())
            .axis_desc_style(label_font())
            .draw()?;
        Ok(chart)
    }
}

/// The bar of row `row`, from 0 to `end`, `gap` px short of its neighbours.
fn row_bar(
    row: usize,
    end: f64,
    color: RGBColor,
    gap: u32,
) -> Rectangle<(f64, SegmentValue<usize>)> {
    let mut rect = Rectangle::new(
        [
            (0.0, SegmentValue::Exact(row)),
            (end, SegmentValue::Exact(row + 1)),
        ],
        color.filled(),
    );
    rect.set_margin(gap, gap, 0, 0);
    rect
}

/// A chart with horizontal bars: values across, one category per row.
type BarChartContext<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, SegmentedCoord<RangedCoordusize>>>;

/// `text` next to the point `at`, 6 px off towards `side` (Left: the text
/// starts there; Right: it ends there).
fn draw_bar_label(
    chart: &mut BarChartContext<'_, '_>,
    at: (f64, SegmentValue<usize>),
    text: String,
    font: TextStyle<'static>,
    side: HPos,
) -> anyhow::Result<()> {
    let offset = if matches!(side, HPos::Right) { -6 } else { 6 };
    let pos = Pos::new(side, VPos::Center);
    chart.draw_series(std::iter::once(
        EmptyElement::at(at) + Text::new(text, (offset, 0), font.pos(pos)),
    ))?;
    Ok(())
}

/// Whiskers are drawn up to this many times the largest bar: one very
/// uncertain value must not squash every bar into a sliver.
const WHISKER_REACH: f64 = 2.0;

/// Where a bar chart's data is drawn: bars whole, whiskers cut at the
/// limits (and then drawn without a cap, to show that they go on).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Limits {
    low: f64,
    high: f64,
}

impl Limits {
    /// Limits for (value, CI) pairs: from 0, or the lowest bar if below,
    /// to the highest bar, widened for whiskers up to `WHISKER_REACH`
    /// times the longest bar.
    fn of(bars: impl Iterator<Item = (f64, Option<(f64, f64)>)>) -> Limits {
        let bars: Vec<_> = bars.collect();
        let longest = bars.iter().map(|(v, _)| v.abs()).fold(0.0, f64::max);
        let reach = longest * WHISKER_REACH;
        let fold = |pick: fn(f64, f64) -> f64, end: fn(&(f64, f64)) -> f64| {
            bars.iter()
                .map(|(value, ci)| ci.as_ref().map_or(*value, end).clamp(-reach, reach))
                .chain(bars.iter().map(|(value, _)| *value))
                .fold(0.0, pick)
        };
        let low = fold(f64::min, |ci| ci.0);
        let high = fold(f64::max, |ci| ci.1);
        // Whiskers of positive bars stop at 0: a CI below zero for a rate
        // is an artefact of the normal approximation, not a finding.
        let all_positive = bars.iter().all(|(value, _)| *value >= 0.0);
        Limits {
            low: if all_positive { 0.0 } else { low },
            high,
        }
    }

    /// Both sides of zero, each at least `MIN_SIDE` of the other (a
    /// diverging chart: room for labels on either side of the zero line).
    fn diverging(self) -> Limits {
        const MIN_SIDE: f64 = 0.3;
        let low = self.low.min(-self.high * MIN_SIDE);
        let high = self.high.max(-self.low * MIN_SIDE).max(f64::MIN_POSITIVE);
        Limits { low, high }
    }

    /// The value axis: the limits widened by `room` for the value labels.
    fn axis(&self, room: f64) -> std::ops::Range<f64> {
        let high = if self.high > 0.0 {
            self.high * room
        } else {
            1.0
        };
        (self.low * room)..high
    }

    /// `value` cut to the limits.
    fn clamp(&self, value: f64) -> f64 {
        value.clamp(self.low, self.high)
    }

    /// The smallest and largest x a bar and its (cut) whisker reach.
    fn extent(&self, value: f64, ci95: Option<(f64, f64)>) -> (f64, f64) {
        let (lo, hi) = ci95.unwrap_or((value, value));
        (value.min(lo.max(self.low)), value.max(hi.min(self.high)))
    }
}

/// A CI whisker at row `y`: a line from `lo` to `hi` cut at the limits,
/// with a cap at each end that is not cut.
fn draw_whisker(
    chart: &mut BarChartContext<'_, '_>,
    (lo, hi): (f64, f64),
    limits: &Limits,
    y: SegmentValue<usize>,
) -> anyhow::Result<()> {
    let style = INK.stroke_width(1);
    let (start, end) = (lo.max(limits.low), hi.min(limits.high));
    chart.draw_series(std::iter::once(PathElement::new(
        vec![(start, y.clone()), (end, y.clone())],
        style,
    )))?;
    let caps = [(lo, start), (hi, end)]
        .into_iter()
        .filter(|(whole, cut)| whole == cut)
        .map(|(x, _)| {
            EmptyElement::at((x, y.clone())) + PathElement::new(vec![(0, -6), (0, 6)], style)
        });
    chart.draw_series(caps)?;
    Ok(())
}

/// Room for the longest category label left of a horizontal bar chart.
fn label_area_width<'a>(labels: impl Iterator<Item = &'a str>) -> u32 {
    labels.map(text_width).max().unwrap_or(0) as u32 + 16
}

fn label_font() -> TextStyle<'static> {
    (FONT, LABEL_SIZE).into_font().color(&INK)
}

/// A legend strip between a line chart's title and its plot: entries left
/// to right, wrapping, so it never hides a line.
struct Legend {
    entries: Vec<(String, RGBColor)>,
    /// Top-left corner of each entry's swatch, in the strip.
    positions: Vec<(i32, i32)>,
    height: u32,
}

const LEGEND_ROW_HEIGHT: u32 = 20;
const LEGEND_SWATCH_WIDTH: i32 = 14;
const LEGEND_GAP: i32 = 22;

impl Legend {
    fn new(entries: Vec<(String, RGBColor)>) -> Legend {
        let first_x = (MARGIN + Y_AXIS_WIDTH) as i32;
        let last_x = (CHART_WIDTH - MARGIN) as i32;
        let (mut x, mut row) = (first_x, 0);
        let mut positions = Vec::with_capacity(entries.len());
        for (label, _) in &entries {
            let width = LEGEND_SWATCH_WIDTH + 6 + text_width(label);
            if x > first_x && x + width > last_x {
                (x, row) = (first_x, row + 1);
            }
            positions.push((x, row * LEGEND_ROW_HEIGHT as i32 + 4));
            x += width + LEGEND_GAP;
        }
        let rows = if entries.is_empty() { 0 } else { row + 1 };
        Legend {
            entries,
            positions,
            height: rows as u32 * LEGEND_ROW_HEIGHT,
        }
    }

    /// Draws the title and the legend; returns the area left for the plot.
    fn draw_under_title<'a>(
        &self,
        root: &DrawingArea<SVGBackend<'a>, Shift>,
        title: &str,
    ) -> anyhow::Result<DrawingArea<SVGBackend<'a>, Shift>> {
        let body = root
            .margin(MARGIN / 2, 0, 0, 0)
            .titled(title, (FONT, CAPTION_SIZE).into_font().color(&INK))?;
        let (strip, plot) = body.split_vertically(self.height);
        let half_row = LEGEND_ROW_HEIGHT as i32 / 2 - 4;
        for ((label, color), &(x, y)) in self.entries.iter().zip(&self.positions) {
            strip.draw(&Rectangle::new(
                [
                    (x, y + half_row - 5),
                    (x + LEGEND_SWATCH_WIDTH, y + half_row + 5),
                ],
                color.filled(),
            ))?;
            strip.draw(&Text::new(
                label.clone(),
                (x + LEGEND_SWATCH_WIDTH + 6, y + half_row),
                label_font().pos(Pos::new(HPos::Left, VPos::Center)),
            ))?;
        }
        Ok(plot)
    }
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
    use super::change::change_reach;
    use super::*;
    use crate::report::compare::ChangeRow;

    #[test]
    fn target_colours_are_stable_and_wrap() {
        assert_eq!(target_color_hex(0), "#4e79a7");
        assert_eq!(target_color_hex(10), target_color_hex(0));
        assert_ne!(target_color_hex(1), target_color_hex(0));
    }

    fn bar(label: &str, value: f64, ci95: Option<(f64, f64)>, color: usize) -> Bar {
        Bar {
            label: label.into(),
            value,
            ci95,
            color,
            marker: String::new(),
        }
    }

    #[test]
    fn bar_chart_draws_one_bar_per_target_with_whiskers() {
        let svg = bar_chart(
            "block write",
            "MiB/s",
            &[
                bar("xfs", 812.0, Some((790.0, 834.0)), 0),
                bar("ext4", 640.7, None, 1),
            ],
        )
        .unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains(&target_color_hex(0).to_uppercase()), "{svg}");
        for text in ["812.0", "640.7", "xfs", "ext4", "block write", "MiB/s"] {
            assert!(
                svg.contains(&format!("\n{text}\n")),
                "{text} missing: {svg}"
            );
        }
    }

    #[test]
    fn a_wild_whisker_is_cut_not_allowed_to_squash_the_bars() {
        let limits = Limits::of([(100.0, Some((-50.0, 900.0))), (80.0, None)].into_iter());
        assert_eq!(
            limits,
            Limits {
                low: 0.0,
                high: 200.0
            }
        );
        assert_eq!(limits.extent(100.0, Some((-50.0, 900.0))), (0.0, 200.0));
        let modest = Limits::of([(100.0, Some((90.0, 110.0)))].into_iter());
        assert_eq!(
            modest,
            Limits {
                low: 0.0,
                high: 110.0
            }
        );
    }

    #[test]
    fn change_limits_leave_room_on_both_sides_of_zero() {
        let limits = Limits::of([(-30.0, Some((-40.0, -20.0))), (10.0, None)].into_iter());
        assert_eq!(
            limits,
            Limits {
                low: -40.0,
                high: 10.0
            }
        );
        assert_eq!(
            limits.diverging(),
            Limits {
                low: -40.0,
                high: 12.0
            }
        );
        let rising = Limits::of([(50.0, None)].into_iter()).diverging();
        assert_eq!(
            rising,
            Limits {
                low: -15.0,
                high: 50.0
            }
        );
    }

    #[test]
    fn one_outlier_change_is_cut_not_allowed_to_squash_the_others() {
        let changes = [12.0, -30.0, 8.0, 20.0, -5.0, 3590.0, 15.0, -25.0];
        assert_eq!(change_reach(changes.into_iter()), 90.0);
        let modest = [12.0, -30.0, 8.0, 20.0];
        assert_eq!(change_reach(modest.into_iter()), 30.0);
        assert_eq!(change_reach([0.5, -1.0].into_iter()), 1.0);
        let rows: Vec<ChangeRow> = changes
            .iter()
            .map(|&change_pct| ChangeRow {
                label: format!("m{change_pct}"),
                change_pct,
                ci95_pct: None,
                significant: false,
            })
            .collect();
        let svg = relative_change(&rows).unwrap();
        assert!(
            svg.contains("\n+3590 %\n"),
            "the cut bar keeps its value: {svg}"
        );
        assert!(
            !svg.contains("+3000"),
            "the axis does not reach the outlier: {svg}"
        );
    }

    #[test]
    fn latency_unit_suits_the_middle_of_the_range() {
        assert_eq!(time_unit((500.0f64 * 30e6).sqrt()).0, "µs");
        assert_eq!(time_unit(999.0).0, "ns");
        assert_eq!(time_unit(2e9).0, "s");
    }

    #[test]
    fn empty_charts_are_errors_not_blank_images() {
        assert!(bar_chart("t", "u", &[]).is_err());
        assert!(relative_change(&[]).is_err());
        assert!(time_series("t", "u", &[], None).is_err());
    }

    #[test]
    fn relative_change_marks_significant_rows() {
        let rows = [
            ChangeRow {
                label: "bonnie / block write".into(),
                change_pct: 12.34,
                ci95_pct: Some((5.0, 19.0)),
                significant: true,
            },
            ChangeRow {
                label: "bonnie / create".into(),
                change_pct: -3.0,
                ci95_pct: Some((-9.0, 3.0)),
                significant: false,
            },
        ];
        let svg = relative_change(&rows).unwrap();
        assert!(svg.contains("\n+12.34 %*\n"), "{svg}");
        assert!(svg.contains("\n-3.000 %\n"), "{svg}");
    }

    #[test]
    fn percentiles_leave_out_unrecorded_p9999() {
        let latency = LatencySummary {
            count: 10,
            min_ns: 1,
            mean_ns: 5.0,
            p50_ns: 5,
            p90_ns: 9,
            p99_ns: 10,
            p999_ns: 10,
            p9999_ns: 0,
            max_ns: 10,
            histogram: None,
        };
        let indexes: Vec<usize> = percentile_points(&latency).iter().map(|p| p.0).collect();
        assert_eq!(indexes, [0, 1, 2, 3, 5]);
    }
}

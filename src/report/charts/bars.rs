//! Charts with one horizontal bar per row: the frame (caption, row labels,
//! value axis), the bars, their CI whiskers and value labels, and the
//! limits that keep one wild whisker from squashing the rest. `bar_chart`
//! draws one bar per target; the change chart (`change`) builds on the same
//! rows.
use plotters::coord::Shift;
use plotters::coord::ranged1d::SegmentedCoord;
use plotters::coord::types::{RangedCoordf64, RangedCoordusize};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{
    BAR_GAP, BAR_ROW_HEIGHT, Bar, CAPTION_HEIGHT, CAPTION_SIZE, CHART_WIDTH, FONT, GRID, INK,
    MARGIN, RIGHT_MARGIN, VALUE_LABEL_ROOM, X_AXIS_HEIGHT, drawable, format_tick, label_font,
    render_svg, target_color, text_width,
};
use crate::report::number;

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

/// The frame of a chart with one horizontal bar per row: caption, row
/// labels (the first on top), value axis and grid.
pub(super) struct RowFrame<'f> {
    pub(super) title: &'f str,
    pub(super) labels: Vec<&'f str>,
    pub(super) label_width: u32,
    pub(super) x_range: std::ops::Range<f64>,
    pub(super) x_labels: usize,
    pub(super) x_format: &'f dyn Fn(&f64) -> String,
    pub(super) x_desc: &'f str,
}

impl RowFrame<'_> {
    /// Draws the frame on `root`; bars go in row `rows - 1 - i` for label `i`.
    pub(super) fn draw<'a, 'b>(
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
pub(super) fn row_bar(
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
pub(super) type BarChartContext<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, SegmentedCoord<RangedCoordusize>>>;

/// `text` next to the point `at`, 6 px off towards `side` (Left: the text
/// starts there; Right: it ends there).
pub(super) fn draw_bar_label(
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
pub(super) struct Limits {
    low: f64,
    high: f64,
}

impl Limits {
    /// Limits for (value, CI) pairs: from 0, or the lowest bar if below,
    /// to the highest bar, widened for whiskers up to `WHISKER_REACH`
    /// times the longest bar.
    pub(super) fn of(bars: impl Iterator<Item = (f64, Option<(f64, f64)>)>) -> Limits {
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
    pub(super) fn diverging(self) -> Limits {
        const MIN_SIDE: f64 = 0.3;
        let low = self.low.min(-self.high * MIN_SIDE);
        let high = self.high.max(-self.low * MIN_SIDE).max(f64::MIN_POSITIVE);
        Limits { low, high }
    }

    /// The value axis: the limits widened by `room` for the value labels.
    pub(super) fn axis(&self, room: f64) -> std::ops::Range<f64> {
        let high = if self.high > 0.0 {
            self.high * room
        } else {
            1.0
        };
        (self.low * room)..high
    }

    /// `value` cut to the limits.
    pub(super) fn clamp(&self, value: f64) -> f64 {
        value.clamp(self.low, self.high)
    }

    /// The smallest and largest x a bar and its (cut) whisker reach.
    pub(super) fn extent(&self, value: f64, ci95: Option<(f64, f64)>) -> (f64, f64) {
        let (lo, hi) = ci95.unwrap_or((value, value));
        (value.min(lo.max(self.low)), value.max(hi.min(self.high)))
    }
}

/// A CI whisker at row `y`: a line from `lo` to `hi` cut at the limits,
/// with a cap at each end that is not cut.
pub(super) fn draw_whisker(
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
pub(super) fn label_area_width<'a>(labels: impl Iterator<Item = &'a str>) -> u32 {
    labels.map(text_width).max().unwrap_or(0) as u32 + 16
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::charts::target_color_hex;

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
}

//! Seed 004's "graph of relative change" (`fsbench compare --svg` and the
//! HTML report's change section): one diverging bar per metric.
use plotters::prelude::*;
use plotters::style::text_anchor::HPos;

use super::bars::{
    BarChartContext, Limits, RowFrame, draw_bar_label, draw_whisker, label_area_width, row_bar,
};
use super::legend::Legend;
use super::{
    BETTER_COLOR, CAPTION_HEIGHT, CHANGE_BAR_GAP, CHANGE_ROW_HEIGHT, CHART_WIDTH, FONT, INK,
    INSIGNIFICANT_COLOR, LABEL_SIZE, MARGIN, RIGHT_MARGIN, VALUE_LABEL_ROOM, WORSE_COLOR,
    X_AXIS_HEIGHT, drawable, format_tick, label_font, render_svg, signed,
};
use crate::report::compare::ChangeRow;
use crate::report::number;

/// The title of a change chart of `compared` against `baseline` (names of
/// runs or targets), saying how to read it.
pub fn change_title(compared: &str, baseline: &str) -> String {
    format!("{compared} vs {baseline}: change (95 % CI; * significant, Benjamini–Hochberg FDR 5 %)")
}

/// Seed 004's "graph of relative change": one horizontal bar per metric,
/// diverging from 0 %, with CI whiskers; significant changes in colour
/// (blue better, orange worse, in each metric's direction: a time that fell
/// is blue like a rate that rose) and marked "*", the others grey; a
/// legend under the axis says so.
pub fn relative_change(title: &str, rows: &[ChangeRow]) -> anyhow::Result<String> {
    anyhow::ensure!(
        !rows.is_empty(),
        "no metric to chart: the runs have none in common"
    );
    let count = rows.len();
    let reach = change_reach(rows.iter().map(|row| row.change_pct));
    let limits = Limits::of(
        rows.iter()
            .map(|row| (row.change_pct.clamp(-reach, reach), row.ci95_pct)),
    )
    .diverging();
    let x_range = drawable(title, limits.axis(VALUE_LABEL_ROOM * 1.1))?;
    let label_width = label_area_width(rows.iter().map(|row| row.label.as_str()));
    let legend = change_legend(label_width);
    let chart_height =
        CAPTION_HEIGHT + X_AXIS_HEIGHT + MARGIN * 2 + CHANGE_ROW_HEIGHT * count as u32;
    let row_of = |i: usize| count - 1 - i;
    let size = (CHART_WIDTH + label_width, chart_height + legend.height);
    render_svg(size, |root| {
        let (root, strip) = root.split_vertically(chart_height);
        let frame = RowFrame {
            title,
            labels: rows.iter().map(|row| row.label.as_str()).collect(),
            label_width,
            x_range: x_range.clone(),
            x_labels: 9,
            x_format: &|v| signed(format_tick(*v), *v),
            x_desc: "change (%)",
        };
        let mut chart = frame.draw(&root)?;
        chart.draw_series(std::iter::once(PathElement::new(
            vec![
                (0.0, SegmentValue::Exact(0)),
                (0.0, SegmentValue::Exact(count)),
            ],
            INK.stroke_width(1),
        )))?;
        chart.draw_series(rows.iter().enumerate().map(|(i, row)| {
            let end = limits.clamp(row.change_pct);
            row_bar(row_of(i), end, change_color(row), CHANGE_BAR_GAP)
        }))?;
        for (i, row) in rows.iter().enumerate() {
            let y = SegmentValue::CenterOf(row_of(i));
            if let Some(ci95) = row.ci95_pct {
                draw_whisker(&mut chart, ci95, &limits, y.clone())?;
            }
            let end = limits.clamp(row.change_pct);
            if end != row.change_pct {
                draw_cut_mark(&mut chart, end, y.clone())?;
            }
            draw_change_label(&mut chart, row, &limits, y)?;
        }
        legend.draw(&strip)?;
        Ok(())
    })
}

/// Significant changes coloured by whether they are improvements, not by
/// their sign: for a time, lower is better.
fn change_color(row: &ChangeRow) -> RGBColor {
    match (row.significant, row.improved) {
        (false, _) => INSIGNIFICANT_COLOR,
        (true, true) => BETTER_COLOR,
        (true, false) => WORSE_COLOR,
    }
}

/// What the bar colours mean, under the plot (from the start of the plot
/// to the right margin of a chart with labels `label_width` px wide).
fn change_legend(label_width: u32) -> Legend {
    let entries = [
        ("better", BETTER_COLOR),
        ("worse", WORSE_COLOR),
        ("not significant", INSIGNIFICANT_COLOR),
    ];
    Legend::between(
        entries
            .map(|(label, color)| (label.to_string(), color))
            .into(),
        (MARGIN + label_width) as i32,
        (CHART_WIDTH + label_width - RIGHT_MARGIN) as i32,
    )
}

/// How far the change axis reaches: every bar, unless a few outliers
/// would squash the rest into slivers (a metric that went from 0.01 s to
/// 0.4 s is +3,900 %); then `OUTLIER_REACH` times the upper quartile of the
/// changes' sizes, and the longer bars are cut there and marked.
fn change_reach(changes: impl Iterator<Item = f64>) -> f64 {
    const OUTLIER_REACH: f64 = 3.0;
    const MIN_REACH_PCT: f64 = 10.0;
    let mut sizes: Vec<f64> = changes.map(f64::abs).collect();
    sizes.sort_by(f64::total_cmp);
    let largest = sizes.last().copied().unwrap_or(0.0);
    let upper_quartile = sizes.get(sizes.len() * 3 / 4).copied().unwrap_or(0.0);
    largest.min((upper_quartile * OUTLIER_REACH).max(MIN_REACH_PCT))
}

/// Two white slashes across the end of a bar cut at the axis limit: the
/// bar goes on (its label gives the value).
fn draw_cut_mark(
    chart: &mut BarChartContext<'_, '_>,
    end: f64,
    y: SegmentValue<usize>,
) -> anyhow::Result<()> {
    let toward_zero = if end > 0.0 { -1 } else { 1 };
    let slash = |at: i32| {
        EmptyElement::at((end, y.clone()))
            + PathElement::new(
                vec![(at * toward_zero - 2, 7), (at * toward_zero + 2, -7)],
                WHITE.stroke_width(2),
            )
    };
    chart.draw_series([slash(8), slash(13)])?;
    Ok(())
}

/// "+12.3 %*" beyond the far end of the bar (or its whisker), on the side
/// the bar grows to; bold when significant.
fn draw_change_label(
    chart: &mut BarChartContext<'_, '_>,
    row: &ChangeRow,
    limits: &Limits,
    y: SegmentValue<usize>,
) -> anyhow::Result<()> {
    let (lo, hi) = limits.extent(limits.clamp(row.change_pct), row.ci95_pct);
    let marker = if row.significant { "*" } else { "" };
    let text = format!(
        "{} %{marker}",
        signed(number(row.change_pct), row.change_pct)
    );
    let font = if row.significant {
        (FONT, LABEL_SIZE, FontStyle::Bold).into_font().color(&INK)
    } else {
        label_font()
    };
    if row.change_pct >= 0.0 {
        draw_bar_label(chart, (hi.max(0.0), y), text, font, HPos::Left)
    } else {
        draw_bar_label(chart, (lo.min(0.0), y), text, font, HPos::Right)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::summary::Comparison;
    use crate::result::Direction;

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
                improved: false,
            })
            .collect();
        let svg = relative_change("t", &rows).unwrap();
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
    fn relative_change_marks_significant_rows() {
        let rows = [
            ChangeRow {
                label: "bonnie / block write".into(),
                change_pct: 12.34,
                ci95_pct: Some((5.0, 19.0)),
                significant: true,
                improved: true,
            },
            ChangeRow {
                label: "bonnie / create".into(),
                change_pct: -3.0,
                ci95_pct: Some((-9.0, 3.0)),
                significant: false,
                improved: false,
            },
        ];
        let svg = relative_change("t", &rows).unwrap();
        assert!(svg.contains("\n+12.34 %*\n"), "{svg}");
        assert!(svg.contains("\n-3.000 %\n"), "{svg}");
    }

    /// The fills of the change bars, in the order of the rows, as
    /// `#RRGGBB` (the legend's swatches come after them).
    fn bar_fills(svg: &str, rows: usize) -> Vec<String> {
        let colors = [BETTER_COLOR, WORSE_COLOR, INSIGNIFICANT_COLOR]
            .map(|RGBColor(r, g, b)| format!("fill=\"#{r:02X}{g:02X}{b:02X}\""));
        svg.lines()
            .filter(|line| line.starts_with("<rect"))
            .filter_map(|line| colors.iter().find(|c| line.contains(c.as_str())))
            .map(|c| c[6..13].to_string())
            .take(rows)
            .collect()
    }

    #[test]
    fn bars_are_coloured_by_improvement_not_by_sign() {
        let row = |label: &str, comparison_ratio: f64, direction: Direction| {
            let comparison = Comparison {
                ratio: comparison_ratio,
                ci95: None,
                p_value: Some(0.001),
                significant: true,
            };
            ChangeRow::of(label.into(), &comparison, direction)
        };
        let rows = [
            row("find_s", 0.41, Direction::LowerIsBetter),
            row("find_entries_s", 2.43, Direction::HigherIsBetter),
            row("resp_ms", 2.41, Direction::LowerIsBetter),
        ];
        let svg = relative_change("A vs B", &rows).unwrap();
        let fills = bar_fills(&svg, rows.len());
        let hex = |RGBColor(r, g, b): RGBColor| format!("#{r:02X}{g:02X}{b:02X}");
        let (better, worse) = (hex(BETTER_COLOR), hex(WORSE_COLOR));
        assert_eq!(fills, [better.clone(), better, worse], "{svg}");
        assert!(
            svg.contains("better") && svg.contains("worse"),
            "legend: {svg}"
        );
    }
}

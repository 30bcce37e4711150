//! Seed 004's "graph of relative change" (`fsbench compare --svg` and the
//! HTML report's change section): one diverging bar per metric.
use plotters::prelude::*;
use plotters::style::text_anchor::HPos;

use super::bars::{
    BarChartContext, Limits, RowFrame, draw_bar_label, draw_whisker, label_area_width, row_bar,
};
use super::{
    CAPTION_HEIGHT, CHANGE_BAR_GAP, CHANGE_ROW_HEIGHT, CHART_WIDTH, DECREASE_COLOR, FONT,
    INCREASE_COLOR, INK, INSIGNIFICANT_COLOR, LABEL_SIZE, MARGIN, VALUE_LABEL_ROOM, X_AXIS_HEIGHT,
    drawable, format_tick, label_font, render_svg, signed,
};
use crate::report::compare::ChangeRow;
use crate::report::number;

/// Seed 004's "graph of relative change": one horizontal bar per metric,
/// diverging from 0 %, with CI whiskers; significant changes in colour
/// (blue up, orange down) and marked "*", the others grey.
pub fn relative_change(rows: &[ChangeRow]) -> anyhow::Result<String> {
    relative_change_titled(
        "Relative change (95 % CI; * significant, Welch p < 0.05)",
        rows,
    )
}

/// `relative_change` under another title (e.g. naming the two sides).
pub fn relative_change_titled(title: &str, rows: &[ChangeRow]) -> anyhow::Result<String> {
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
    let height = CAPTION_HEIGHT + X_AXIS_HEIGHT + MARGIN * 2 + CHANGE_ROW_HEIGHT * count as u32;
    let label_width = label_area_width(rows.iter().map(|row| row.label.as_str()));
    let row_of = |i: usize| count - 1 - i;
    render_svg((CHART_WIDTH + label_width, height), |root| {
        let frame = RowFrame {
            title,
            labels: rows.iter().map(|row| row.label.as_str()).collect(),
            label_width,
            x_range: x_range.clone(),
            x_labels: 9,
            x_format: &|v| signed(format_tick(*v), *v),
            x_desc: "change (%)",
        };
        let mut chart = frame.draw(root)?;
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
        Ok(())
    })
}

fn change_color(row: &ChangeRow) -> RGBColor {
    match (row.significant, row.change_pct >= 0.0) {
        (false, _) => INSIGNIFICANT_COLOR,
        (true, true) => INCREASE_COLOR,
        (true, false) => DECREASE_COLOR,
    }
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
}

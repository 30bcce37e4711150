//! Line charts: latency percentiles per target on a log scale, and values
//! over time with the warm-up shaded and cliffs marked; each with a legend
//! under its title.
use plotters::coord::Shift;
use plotters::prelude::*;

use super::legend::Legend;
use super::{
    CHART_WIDTH, GRID, INK, LINE_CHART_HEIGHT, LatencyLine, MARGIN, RIGHT_MARGIN, TimeLine,
    WARMUP_SHADE, X_AXIS_HEIGHT, Y_AXIS_WIDTH, drawable, format_tick, label_font, render_svg,
    target_color,
};
use crate::result::LatencySummary;

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
        let mut chart = framed(&plot).build_cartesian_2d(
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

/// Values over time, one line per target and repetition (dashed lines are
/// another view of a run, e.g. its devices), with the warm-up (shown but
/// not measured) shaded and each line's marks (cliffs) drawn as vertical
/// lines in its colour.
pub fn time_series(
    title: &str,
    axis: &str,
    lines: &[TimeLine],
    warmup_until_s: Option<f64>,
) -> anyhow::Result<String> {
    let axes = Axes {
        x: "time (s)",
        y: axis,
        marks: "│ cliff: throughput fell and stayed low",
    };
    line_chart(title, &axes, lines, warmup_until_s)
}

/// A metric over saved runs (`fsbench history`): x is the run's place,
/// 1 the oldest; each line's marks are its change points.
pub fn runs_series(title: &str, axis: &str, lines: &[TimeLine]) -> anyhow::Result<String> {
    let axes = Axes {
        x: "run (1 = the oldest)",
        y: axis,
        marks: "│ change point",
    };
    line_chart(title, &axes, lines, None)
}

/// What a line chart's axes and marks are called.
struct Axes<'a> {
    x: &'a str,
    y: &'a str,
    /// The legend's entry for the vertical marks, when a line has any.
    marks: &'a str,
}

/// Lines over x from 0, each line's points joined (dashed where it says
/// so) and its marks drawn as vertical dashed lines in its colour, with
/// the range up to `shaded_until` shaded as a warm-up.
fn line_chart(
    title: &str,
    axes: &Axes<'_>,
    lines: &[TimeLine],
    shaded_until: Option<f64>,
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
    let warmup_end = shaded_until.filter(|&end| end > 0.0);
    let mut entries: Vec<(String, RGBColor)> = lines
        .iter()
        .filter_map(|line| Some((line.label.clone()?, target_color(line.color))))
        .collect();
    if warmup_end.is_some() {
        entries.push(("warm-up (not measured)".to_string(), WARMUP_SHADE));
    }
    if lines.iter().any(|line| !line.marks.is_empty()) {
        entries.push((axes.marks.to_string(), INK));
    }
    let legend = Legend::new(entries);
    render_svg((CHART_WIDTH, LINE_CHART_HEIGHT + legend.height), |root| {
        let plot = legend.draw_under_title(root, title)?;
        let mut chart = framed(&plot).build_cartesian_2d(x_range, y_range.clone())?;
        chart
            .configure_mesh()
            .light_line_style(TRANSPARENT)
            .bold_line_style(GRID)
            .axis_style(INK)
            .x_desc(axes.x)
            .x_label_formatter(&|v| format_tick(*v))
            .y_desc(axes.y)
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
            let color = target_color(line.color);
            let points = line.points.clone();
            match line.dashed {
                true => {
                    chart.draw_series(DashedLineSeries::new(points, 6, 4, color.stroke_width(1)))?
                }
                false => chart.draw_series(LineSeries::new(points, color.stroke_width(2)))?,
            };
            for &x in &line.marks {
                let across = [(x, y_range.start), (x, y_range.end)];
                chart.draw_series(DashedLineSeries::new(across, 3, 3, color.stroke_width(2)))?;
            }
        }
        Ok(())
    })
}

/// The frame every line chart shares: its margins and axis areas.
fn framed<'a, 'b, DB: DrawingBackend>(
    plot: &'a DrawingArea<DB, Shift>,
) -> ChartBuilder<'a, 'b, DB> {
    let mut builder = ChartBuilder::on(plot);
    builder
        .margin(MARGIN)
        .margin_right(RIGHT_MARGIN)
        .x_label_area_size(X_AXIS_HEIGHT)
        .y_label_area_size(Y_AXIS_WIDTH);
    builder
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_unit_suits_the_middle_of_the_range() {
        assert_eq!(time_unit((500.0f64 * 30e6).sqrt()).0, "µs");
        assert_eq!(time_unit(999.0).0, "ns");
        assert_eq!(time_unit(2e9).0, "s");
    }

    #[test]
    fn a_cliff_is_marked_and_told_in_the_legend_and_the_devices_dashed() {
        let line = |dashed, marks| TimeLine {
            label: Some("ext4".into()),
            color: 0,
            points: vec![(0.0, 100.0), (5.0, 100.0), (5.0, 20.0), (10.0, 20.0)],
            dashed,
            marks,
        };
        let plain = time_series("t", "MiB/s", &[line(false, Vec::new())], None).unwrap();
        assert!(!plain.contains("cliff"));
        let marked = time_series("t", "MiB/s", &[line(false, vec![5.0])], None).unwrap();
        assert!(marked.contains("cliff: throughput fell and stayed low"));
        let lines = |svg: &str| svg.matches("<polyline").count();
        assert!(lines(&marked) > lines(&plain), "the mark is drawn");
        let device = time_series("t", "MiB/s", &[line(true, Vec::new())], None).unwrap();
        assert!(
            lines(&device) > lines(&plain),
            "a dashed line is drawn in dashes"
        );
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

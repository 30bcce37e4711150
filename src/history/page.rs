//! The history as an HTML page: the change points told as in the other
//! formats, and each series drawn over the runs (SVG), its change points
//! marked between the runs either side of them.
use minijinja::Environment;
use serde::Serialize;

use super::text::{method_line, overview, quiet_line, sentence, series_name};
use super::{History, Series};
use crate::report::charts::{TimeLine, runs_series};

const TEMPLATE_NAME: &str = "history.html";
const TEMPLATE: &str = include_str!("../../templates/history.html");

/// Everything the template shows, already formatted.
#[derive(Serialize)]
struct Page {
    overview: String,
    notes: Vec<String>,
    changes: Vec<String>,
    quiet: String,
    charts: Vec<String>,
    method: String,
}

/// The page: series with change points drawn first.
pub fn html(history: &History) -> anyhow::Result<String> {
    let quiet = history.series.iter().filter(|s| s.changes.is_empty());
    let charts = history
        .changed()
        .chain(quiet)
        .map(chart)
        .collect::<anyhow::Result<Vec<String>>>()?;
    let page = Page {
        overview: overview(history),
        notes: history.notes.clone(),
        changes: history
            .changed()
            .flat_map(|series| series.changes.iter().map(|c| sentence(series, c)))
            .collect(),
        quiet: quiet_line(history),
        charts,
        method: method_line(history),
    };
    let mut env = Environment::new();
    env.add_template(TEMPLATE_NAME, TEMPLATE)?;
    Ok(env
        .get_template(TEMPLATE_NAME)?
        .render(minijinja::value::Serde(&page))?)
}

/// The series as a line over its runs (x = 1 for the oldest), each change
/// point a mark halfway between the last run before it and the first after.
fn chart(series: &Series) -> anyhow::Result<String> {
    let line = TimeLine {
        label: None,
        color: 0,
        points: (1..)
            .zip(&series.points)
            .map(|(x, point)| (f64::from(x), point.value))
            .collect(),
        dashed: false,
        marks: series
            .changes
            .iter()
            .map(|c| c.point.index as f64 + 0.5)
            .collect(),
    };
    runs_series(&series_name(series), &series.unit, &[line])
}

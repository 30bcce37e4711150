//! `fsbench history`: saved runs as series over time, per target,
//! workload (with its parameters) and headline metric, and the change
//! points in each (`changepoint`, every series of the history read
//! together), each explained by what changed in the target's fingerprint
//! there (`result::fingerprint`).
//!
//! A series keeps the target's name, the workload's name and parameters
//! and the metric: changing one of those measures something else. It
//! spans every other change of the fingerprint (kernel, mount options,
//! mkfs options, device, fsbench, host): those are what a user changes on
//! purpose and asks the history about, so they are what a change point is
//! explained by, not where a series ends.
pub mod changepoint;
mod collect;
mod last;
mod page;
mod text;

use chrono::{DateTime, Utc};

use crate::analysis::Summary;
use crate::analysis::verdict::min_effect_of;
use crate::result::fingerprint::{self, Fingerprint};
use crate::result::{Direction, RunResult, TargetResult};
use changepoint::ChangePoint;
pub use collect::{Collected, collect};
pub use last::latest_comparable;
pub use page::html;
pub use text::{csv, markdown, terminal};

/// What makes values of different runs one series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeriesKey {
    pub target: String,
    /// The workload as reports name it (its label, or its kind).
    pub workload: String,
    /// Its parameters, as the fingerprint holds them.
    pub parameters: std::collections::BTreeMap<String, String>,
    pub metric: String,
}

/// One run's value of a series.
#[derive(Debug, Clone)]
pub struct Point {
    pub run_id: String,
    pub started: DateTime<Utc>,
    /// The mean over the run's repetitions.
    pub value: f64,
    pub fingerprint: Fingerprint,
}

/// A change point, and what changed in the fingerprint between the runs
/// on either side of it.
#[derive(Debug, Clone)]
pub struct Change {
    pub point: ChangePoint,
    pub what_changed: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Series {
    pub key: SeriesKey,
    pub unit: String,
    pub direction: Direction,
    /// In the order the runs started.
    pub points: Vec<Point>,
    pub changes: Vec<Change>,
}

impl Series {
    /// The runs on either side of `change`.
    pub fn around(&self, change: &Change) -> (&Point, &Point) {
        let index = change.point.index;
        (&self.points[index - 1], &self.points[index])
    }

    /// Whether there are enough runs to find a change point.
    pub fn long_enough(&self) -> bool {
        self.points.len() >= changepoint::MIN_POINTS
    }
}

/// Every series of the runs, with its change points, and what a reader
/// must know about the series as a whole.
#[derive(Debug)]
pub struct History {
    pub runs: usize,
    pub series: Vec<Series>,
    /// The smallest change reported: the largest of the runs' minimum
    /// effects (`--min-effect`, else 5 %), so none of them is undercut.
    pub min_effect: f64,
    /// One line each: targets whose runs had several fingerprints, series
    /// too short for a change point.
    pub notes: Vec<String>,
}

impl History {
    /// The series of `runs` (in any order) and their change points.
    pub fn of(mut runs: Vec<RunPoints>) -> History {
        runs.sort_by(|a, b| a.started.cmp(&b.started).then(a.run_id.cmp(&b.run_id)));
        let count = runs.len();
        let min_effect = runs.iter().map(|r| r.min_effect).fold(0.0, f64::max);
        let mut series: Vec<Series> = Vec::new();
        for run in runs {
            add_run(&mut series, run);
        }
        let values: Vec<Vec<f64>> = series
            .iter()
            .map(|s| s.points.iter().map(|p| p.value).collect())
            .collect();
        let slices: Vec<&[f64]> = values.iter().map(Vec::as_slice).collect();
        let found = changepoint::find_all(&slices, min_effect);
        for (one, points) in series.iter_mut().zip(found) {
            one.changes = explained(one, points);
        }
        let mut notes = mixed_fingerprints(&series);
        notes.extend(too_short(&series));
        History {
            runs: count,
            series,
            min_effect,
            notes,
        }
    }

    /// How many series were long enough to test.
    pub fn tested(&self) -> usize {
        self.series.iter().filter(|s| s.long_enough()).count()
    }

    /// The series with at least one change point.
    pub fn changed(&self) -> impl Iterator<Item = &Series> {
        self.series.iter().filter(|s| !s.changes.is_empty())
    }
}

/// What a history keeps of one run: its point in each series it has a
/// value of, and nothing else of the file.
#[derive(Debug)]
pub struct RunPoints {
    run_id: String,
    started: DateTime<Utc>,
    min_effect: f64,
    points: Vec<(SeriesKey, String, Direction, Point)>,
}

impl RunPoints {
    /// Each headline metric of each target of `run`: its series' key,
    /// unit and direction, and the run's point.
    pub fn of(run: &RunResult) -> RunPoints {
        let summary = Summary::of(run);
        let mut points = Vec::new();
        for target in &run.targets {
            let Some(column) = summary.targets.iter().position(|t| *t == target.name) else {
                continue;
            };
            let fingerprint = fingerprint_of(run, target);
            for workload in &summary.workloads {
                for metric in workload.headline() {
                    let Some(cell) = &metric.cells[column] else {
                        continue;
                    };
                    let key = SeriesKey {
                        target: target.name.clone(),
                        workload: workload.name.clone(),
                        parameters: fingerprint
                            .workloads
                            .get(&workload.name)
                            .cloned()
                            .unwrap_or_default(),
                        metric: metric.name.clone(),
                    };
                    let point = Point {
                        run_id: run.run_id.clone(),
                        started: run.started,
                        value: cell.stats.mean,
                        fingerprint: fingerprint.clone(),
                    };
                    points.push((key, metric.unit.clone(), metric.direction, point));
                }
            }
        }
        RunPoints {
            run_id: run.run_id.clone(),
            started: run.started,
            min_effect: min_effect_of(run),
            points,
        }
    }
}

/// Adds each of `run`'s points to its series.
fn add_run(series: &mut Vec<Series>, run: RunPoints) {
    for (key, unit, direction, point) in run.points {
        match series.iter_mut().find(|s| s.key == key) {
            Some(found) => found.points.push(point),
            None => series.push(Series {
                key,
                unit,
                direction,
                points: vec![point],
                changes: Vec::new(),
            }),
        }
    }
}

/// The target's saved fingerprint, or one computed now.
fn fingerprint_of(run: &RunResult, target: &TargetResult) -> Fingerprint {
    target
        .fingerprint
        .clone()
        .unwrap_or_else(|| Fingerprint::of(run, target))
}

/// The change points of a series, each with what changed there in the
/// fingerprint (the other workloads' parameters left out: they do not
/// explain this one's figures).
fn explained(series: &Series, found: Vec<ChangePoint>) -> Vec<Change> {
    found
        .into_iter()
        .map(|point| {
            let before = only_workload(&series.points[point.index - 1].fingerprint, &series.key);
            let after = only_workload(&series.points[point.index].fingerprint, &series.key);
            Change {
                what_changed: fingerprint::differences(&before, &after),
                point,
            }
        })
        .collect()
}

fn only_workload(fingerprint: &Fingerprint, key: &SeriesKey) -> Fingerprint {
    let mut narrowed = fingerprint.clone();
    narrowed.workloads.retain(|name, _| *name == key.workload);
    narrowed
}

/// A line per target whose runs do not all have one fingerprint: its
/// series span them, and the reader should know.
fn mixed_fingerprints(series: &[Series]) -> Vec<String> {
    let mut targets: Vec<&str> = Vec::new();
    for one in series {
        if !targets.contains(&one.key.target.as_str()) {
            targets.push(&one.key.target);
        }
    }
    let mut notes = Vec::new();
    for target in targets {
        let mut ids: Vec<&str> = series
            .iter()
            .filter(|s| s.key.target == target)
            .flat_map(|s| s.points.iter().map(|p| p.fingerprint.id.as_str()))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        if ids.len() > 1 {
            notes.push(format!(
                "{target}: its runs have {} different fingerprints; each series spans them, \
                 and a change point says what changed at it",
                ids.len()
            ));
        }
    }
    notes
}

/// A line on the series with too few runs for a change point, if any.
fn too_short(series: &[Series]) -> Option<String> {
    let short = series.iter().filter(|s| !s.long_enough()).count();
    let most = series.iter().map(|s| s.points.len()).max().unwrap_or(0);
    let needed = changepoint::MIN_POINTS;
    match short {
        0 => None,
        n if n == series.len() => Some(format!(
            "too few runs for a change point: the longest series has {most}, at least {needed} \
             are needed ({} on each side of a change, to measure its spread)",
            changepoint::MIN_SEGMENT
        )),
        1 => Some(format!(
            "1 series has fewer than {needed} runs, too few for a change point"
        )),
        n => Some(format!(
            "{n} series have fewer than {needed} runs, too few for a change point"
        )),
    }
}

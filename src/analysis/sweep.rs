//! A sweep's parameters (`fsbench run --configs` with a `matrix`) as every
//! view shows them: which parameters there are, in which order, each
//! target's value, and the sweep table (a row per configuration, its
//! parameters, then each headline metric's mean). The one place that
//! decides these, so the terminal, Markdown, HTML and CSV agree; a result
//! without parameters has no `Sweep`, and its reports are as before.
use super::Summary;
use super::names;
use super::summary::{MetricSummary, WorkloadSummary};
use crate::result::RunResult;

/// The parameters of a run's configurations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sweep {
    /// Every parameter some target has, in the configurations file's
    /// (`BTreeMap`) order.
    pub names: Vec<String>,
    /// Per target (the order of `RunResult::targets`), per name: its
    /// value, None where the target has no such parameter.
    values: Vec<Vec<Option<String>>>,
}

impl Sweep {
    /// None when no target has a parameter (a run without a sweep).
    pub fn of(run: &RunResult) -> Option<Sweep> {
        let parameters: Vec<_> = run
            .targets
            .iter()
            .map(|t| t.built.as_ref().map(|b| &b.parameters))
            .collect();
        let mut names: Vec<String> = parameters
            .iter()
            .flatten()
            .flat_map(|p| p.keys().cloned())
            .collect();
        names.sort();
        names.dedup();
        if names.is_empty() {
            return None;
        }
        let values = parameters
            .iter()
            .map(|p| {
                names
                    .iter()
                    .map(|name| p.and_then(|p| p.get(name)).cloned())
                    .collect()
            })
            .collect();
        Some(Sweep { names, values })
    }

    /// Target `target`'s value of parameter `parameter` (an index into
    /// `names`); empty where it has none.
    pub fn value(&self, target: usize, parameter: usize) -> &str {
        self.values
            .get(target)
            .and_then(|values| values[parameter].as_deref())
            .unwrap_or("")
    }

    /// Target `target`'s values, one per name (empty where it has none).
    pub fn values(&self, target: usize) -> Vec<String> {
        (0..self.names.len())
            .map(|p| self.value(target, p).to_string())
            .collect()
    }

    /// The targets in the sweep table's order: by the first parameter's
    /// value, then the second's..., each parameter's values in the order
    /// they first appear among the targets (the file's order of the
    /// matrix's values); a target without a parameter after those with it;
    /// otherwise in run order.
    pub fn order(&self) -> Vec<usize> {
        let ranks: Vec<Vec<usize>> = (0..self.values.len())
            .map(|t| {
                (0..self.names.len())
                    .map(|p| self.rank(t, p))
                    .collect::<Vec<usize>>()
            })
            .collect();
        let mut order: Vec<usize> = (0..self.values.len()).collect();
        order.sort_by(|&a, &b| ranks[a].cmp(&ranks[b]));
        order
    }

    /// Where target `target`'s value of `parameter` first appears among
    /// the targets' values; past every value where it has none.
    fn rank(&self, target: usize, parameter: usize) -> usize {
        let Some(value) = &self.values[target][parameter] else {
            return usize::MAX;
        };
        let mut seen: Vec<&String> = Vec::new();
        for other in self.values.iter().filter_map(|v| v[parameter].as_ref()) {
            if !seen.contains(&other) {
                seen.push(other);
            }
        }
        seen.iter().position(|v| *v == value).unwrap_or(usize::MAX)
    }

    /// The sweep table of `summary` (whose `sweep` this is).
    pub fn table<'s>(&self, summary: &'s Summary) -> SweepTable<'s> {
        let several = summary.workloads.len() > 1;
        let columns: Vec<SweepColumn<'s>> = summary
            .workloads
            .iter()
            .flat_map(|workload| {
                workload.headline().map(move |metric| SweepColumn {
                    title: column_title(workload, metric, several),
                    workload,
                    metric,
                })
            })
            .collect();
        let rows = self
            .order()
            .into_iter()
            .map(|t| SweepRow {
                target: t,
                name: summary.targets[t].clone(),
                parameters: self.values(t),
                cells: columns
                    .iter()
                    .map(|c| {
                        c.metric.cells[t].as_ref().map(|cell| SweepCell {
                            mean: cell.stats.mean,
                            best: c.metric.best == Some(t),
                        })
                    })
                    .collect(),
            })
            .collect();
        SweepTable {
            parameters: self.names.clone(),
            columns,
            rows,
        }
    }
}

/// A headline metric's readable name, after its workload's when there are
/// several workloads (`bonnie: sequential write (MiB/s) ↑`).
fn column_title(workload: &WorkloadSummary, metric: &MetricSummary, several: bool) -> String {
    let name = names::headed(&metric.name, &metric.unit, metric.direction);
    match several {
        true => format!("{}: {name}", workload.name),
        false => name,
    }
}

/// A row per configuration (target), in `Sweep::order`: its parameters,
/// then the mean of each headline metric of every workload.
#[derive(Debug, Clone)]
pub struct SweepTable<'s> {
    /// The parameters' names: the first columns.
    pub parameters: Vec<String>,
    /// The metrics' columns, after the parameters.
    pub columns: Vec<SweepColumn<'s>>,
    pub rows: Vec<SweepRow>,
}

#[derive(Debug, Clone)]
pub struct SweepColumn<'s> {
    /// `names::headed`, after the workload's name when there are several.
    pub title: String,
    pub workload: &'s WorkloadSummary,
    pub metric: &'s MetricSummary,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SweepRow {
    /// Index into `Summary::targets`.
    pub target: usize,
    /// The target's (configuration's) name.
    pub name: String,
    /// One value per parameter, empty where the target has none.
    pub parameters: Vec<String>,
    /// One per column: None where the target has no value.
    pub cells: Vec<Option<SweepCell>>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweepCell {
    /// The mean over the repetitions.
    pub mean: f64,
    /// The best target of the metric (`MetricSummary::best`).
    pub best: bool,
}

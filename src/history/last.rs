//! `fsbench compare --last FILE`: the saved run a new result is compared
//! with, the latest comparable one that started before it.
use std::path::{Path, PathBuf};

use super::collect;
use crate::result::RunResult;

/// The latest run in `dir` that started before `new` and measured the same
/// targets with the same workloads (by name), with its file; None when
/// there is none. Files that cannot be read are passed over: they are
/// not comparable.
pub fn latest_comparable(dir: &Path, new: &RunResult) -> Option<(PathBuf, RunResult)> {
    collect(&[dir.to_path_buf()])
        .runs
        .into_iter()
        .filter(|(_, run)| run.run_id != new.run_id && run.started < new.started)
        .filter(|(_, run)| measured(run) == measured(new))
        .max_by(|(_, a), (_, b)| a.started.cmp(&b.started))
}

/// The (target, workload) names a run measured, sorted.
fn measured(run: &RunResult) -> Vec<(&str, &str)> {
    let mut pairs: Vec<(&str, &str)> = run
        .targets
        .iter()
        .flat_map(|t| t.workloads.iter().map(|w| (t.name.as_str(), w.name())))
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}

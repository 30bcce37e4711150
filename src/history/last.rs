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
    let comparable = |path: &Path, run: RunResult| {
        let before = run.run_id != new.run_id && run.started < new.started;
        (before && measured(&run) == measured(new)).then(|| (run.started, path.to_path_buf()))
    };
    // Only each comparable run's start and file are kept; the latest is
    // read again.
    let (_, path) = collect(&[dir.to_path_buf()], comparable)
        .runs
        .into_iter()
        .max()?;
    let run = crate::results::load(&path).ok()?;
    Some((path, run))
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

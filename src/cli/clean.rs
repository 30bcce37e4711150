//! `fsbench clean TARGET...`: remove scratch directories of killed runs.
use clap::Args;

use std::path::Path;

use super::output::{Stream, check_json_path, emit};
use crate::result::TargetResult;
use crate::runner::{new_run_id, new_run_result, write_json};
use crate::target::Target;
use crate::target::cleanup::{find_leftovers, remove_scratch};

#[derive(Debug, Args)]
pub struct CleanArgs {
    /// Directories that were benchmarked (the parents of fsbench-* dirs).
    #[arg(value_name = "TARGET", required = true)]
    targets: Vec<String>,
    /// Also remove scratch directories of runs that are still alive.
    #[arg(long)]
    force: bool,
}

pub fn run(args: CleanArgs, json: Option<&Path>) -> anyhow::Result<()> {
    check_json_path(json)?;
    let mut record = new_run_result(&new_run_id());
    for spec in &args.targets {
        let target = Target::parse(spec)?;
        target.require_dir()?;
        let leftovers = find_leftovers(&target.path)?;
        if leftovers.is_empty() {
            say(format!(
                "{}: no fsbench scratch directories",
                target.path.display()
            ))?;
        }
        for leftover in leftovers {
            if leftover.is_live() && !args.force {
                let pid = leftover.marker.as_ref().map_or(0, |m| m.pid);
                say(format!(
                    "{}: skipped, its run (pid {pid}) is still running; --force removes it",
                    leftover.path.display()
                ))?;
                continue;
            }
            let report = remove_scratch(&leftover.path)?;
            say(format!(
                "{}: removed {} entries",
                leftover.path.display(),
                report.removed + 1
            ))?;
            record.targets.push(TargetResult {
                name: target.name.clone(),
                path: leftover.path.display().to_string(),
                env: None,
                workloads: Vec::new(),
                cleanup: Some(report),
            });
        }
    }
    record.finished = Some(chrono::Utc::now());
    match json {
        Some(path) => write_json(&record, path),
        None => Ok(()),
    }
}

fn say(line: String) -> anyhow::Result<()> {
    emit(Stream::Stdout, &(line + "\n"))
}

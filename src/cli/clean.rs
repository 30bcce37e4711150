//! `fsbench clean TARGET...`: remove scratch directories of killed runs.
use clap::Args;

use super::output::{Stream, emit};
use crate::error::usage;
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

pub fn run(args: CleanArgs) -> anyhow::Result<()> {
    for spec in &args.targets {
        let target = Target::parse(spec)?;
        if !target.path.exists() {
            return usage(format!("target {} does not exist", target.path.display()));
        }
        if !target.path.is_dir() {
            return usage(format!(
                "target {} is not a directory",
                target.path.display()
            ));
        }
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
        }
    }
    Ok(())
}

fn say(line: String) -> anyhow::Result<()> {
    emit(Stream::Stdout, &(line + "\n"))
}

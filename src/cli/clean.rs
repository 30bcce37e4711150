//! `fsbench clean TARGET...`: remove scratch directories of killed runs.
use clap::Args;

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
        if !target.path.is_dir() {
            return crate::error::usage(format!(
                "target {} is not a directory",
                target.path.display()
            ));
        }
        let leftovers = find_leftovers(&target.path)?;
        if leftovers.is_empty() {
            println!("{}: no fsbench scratch directories", target.path.display());
        }
        for leftover in leftovers {
            if leftover.is_live() && !args.force {
                let pid = leftover.marker.as_ref().map_or(0, |m| m.pid);
                println!(
                    "{}: skipped, its run (pid {pid}) is still running; --force removes it",
                    leftover.path.display()
                );
                continue;
            }
            let report = remove_scratch(&leftover.path)?;
            println!(
                "{}: removed {} entries",
                leftover.path.display(),
                report.removed + 1
            );
        }
    }
    Ok(())
}

//! `fsbench clean TARGET...`: remove scratch directories of killed runs.
use clap::Args;

use std::path::Path;
use std::time::{Duration, Instant};

use super::flags::Targets;
use super::output::check_json_path;
use crate::console::{Stream, emit, stderr_line};
use crate::driver::recording::{new_run_id, new_run_result};
use crate::result::TargetResult;
use crate::result::cleanup::CleanupReport;
use crate::storage::Target;
use crate::storage::cleanup::{Leftover, find_leftovers};
use crate::storage::made;
use crate::storage::marker::FoundMarker;

#[derive(Debug, Args)]
pub struct CleanArgs {
    // Directories that were benchmarked (the parents of fsbench-* dirs).
    #[command(flatten)]
    targets: Targets,
    /// Also remove scratch directories of runs that are still alive (or
    /// that fsbench cannot tell are dead: a run on another host of a file
    /// system without locks).
    #[arg(long)]
    force: bool,
}

pub fn run(args: CleanArgs, json: Option<&Path>) -> anyhow::Result<()> {
    check_json_path(json)?;
    let mut record = new_run_result(&new_run_id());
    let mut stay = Stay::default();
    let specs = args.targets.specs();
    if specs.is_empty() {
        // Not the current directory by default: removing is not a look.
        return crate::error::usage(
            "give the directories that were benchmarked: fsbench clean TARGET...",
        );
    }
    for spec in &specs {
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
            let path = leftover.path.display().to_string();
            match clean_one(leftover, args.force)? {
                Cleanup::Removed(report) => record.targets.push(TargetResult {
                    name: target.name.clone(),
                    path,
                    env: None,
                    workloads: Vec::new(),
                    cleanup: Some(report),
                    reference: false,
                    built: None,
                    durability: None,
                    fingerprint: None,
                }),
                Cleanup::Failed(e) => {
                    stay.failed += 1;
                    stderr_line!("fsbench: {path}: {e:#}");
                }
                Cleanup::NotTrusted => stay.not_trusted += 1,
                Cleanup::Live => {}
            }
        }
    }
    record.finished = Some(chrono::Utc::now());
    if let Some(path) = json {
        crate::results::save(&record, path)?;
    }
    // Every leftover was tried; the exit code says whether all went.
    stay.verdict()
}

/// The leftovers that stay after `clean`, by why (a live run's scratch
/// directory is no leftover: it is in use).
#[derive(Default)]
struct Stay {
    /// fsbench's, but its removal failed.
    failed: usize,
    /// Its marker could not be read, or does not make it this user's
    /// dead run (a forgery, another run's name, another user's, a marker
    /// a crash left empty): fsbench does not touch it.
    not_trusted: usize,
}

impl Stay {
    fn verdict(&self) -> anyhow::Result<()> {
        let mut why = Vec::new();
        if self.failed > 0 {
            why.push(format!("{} could not be removed", self.failed));
        }
        if self.not_trusted > 0 {
            why.push(format!(
                "{} have a marker fsbench cannot trust (remove them yourself if they are yours)",
                self.not_trusted
            ));
        }
        match why.is_empty() {
            true => Ok(()),
            false => anyhow::bail!(
                "{} scratch director(ies) stay: {} (see above)",
                self.failed + self.not_trusted,
                why.join("; ")
            ),
        }
    }
}

/// How long a killed run whose recorder was aborted may take to exit (it
/// takes milliseconds: its I/O fails at once).
const KILLED_PATIENCE: Duration = Duration::from_secs(10);

enum Cleanup {
    Removed(CleanupReport),
    Failed(anyhow::Error),
    /// Its marker is not a dead run's of this user (the reason is said).
    NotTrusted,
    /// Its run is alive (said).
    Live,
}

/// Removes one leftover if it is a dead run's, or if `force`d and fsbench's.
fn clean_one(leftover: Leftover, force: bool) -> anyhow::Result<Cleanup> {
    let shown = leftover.path.display().to_string();
    let found = match &leftover.marker {
        Ok(found) => found,
        Err(not_ours) => {
            say(format!("{shown}: skipped, {not_ours}"))?;
            return Ok(Cleanup::NotTrusted);
        }
    };
    if !force && found.is_live() {
        match free_killed_run(&leftover, found, &shown) {
            Ok(true) => {}
            Ok(false) => {
                say(format!(
                    "{shown}: skipped, its run (pid {} on {}) is still running; --force removes it",
                    found.marker.pid, found.marker.host
                ))?;
                return Ok(Cleanup::Live);
            }
            Err(e) => return Ok(Cleanup::Failed(e)),
        }
    }
    // A killed `run --configs` left its file systems mounted on loop
    // devices backed by images in here: released first, from its record,
    // through the directory opened above (never its path again).
    match crate::configs::build::release_leftovers(leftover.dir()) {
        Ok(done) => {
            for line in done {
                say(format!("{shown}: {line}"))?;
            }
        }
        Err(e) => return Ok(Cleanup::Failed(e)),
    }
    Ok(match leftover.remove() {
        Ok(report) => {
            say(format!("{shown}: removed {} entries", report.removed + 1))?;
            Cleanup::Removed(report)
        }
        Err(e) => Cleanup::Failed(e),
    })
}

/// A crash run killed while its I/O waited on its own FUSE recorder
/// (`storage::recorder`) never exits and keeps its lock. Only for a run
/// with a kill pending (never a healthy one) are its recorders' FUSE
/// connections aborted, which ends that wait; true once it has exited and
/// let go of the lock (held here from then on).
fn free_killed_run(leftover: &Leftover, found: &FoundMarker, shown: &str) -> anyhow::Result<bool> {
    if !found.is_killed() {
        return Ok(false);
    }
    // Another user's record may name anyone's recorder.
    let made::Found::Trusted(made) = made::read_leftover(leftover.dir())? else {
        return Ok(false);
    };
    let aborted = made::abort_recorders(leftover.dir(), &made);
    if aborted.is_empty() {
        return Ok(false);
    }
    say(format!(
        "{shown}: its run (pid {}) was killed while it waited on its own recorder",
        found.marker.pid
    ))?;
    for line in aborted {
        say(format!("{shown}: {line}"))?;
    }
    let clock = Instant::now();
    while found.is_live() {
        if clock.elapsed() > KILLED_PATIENCE {
            say(format!("{shown}: its killed run has not exited"))?;
            return Ok(false);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(true)
}

fn say(line: String) -> anyhow::Result<()> {
    emit(Stream::Stdout, &(line + "\n"))
}

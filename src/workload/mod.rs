//! Workloads: what is measured, separate from how I/O is issued (`io`) and
//! how results are shown (`compat`, `report`). Each workload implements
//! [`Workload`] and yields the common [`WorkloadResult`].
pub mod bonnie;
pub mod durability;
pub mod pattern;
pub mod postmark;
pub mod synclog;
pub mod threads;
pub mod tree;

use std::io::{IsTerminal, Write};

use crate::result::WorkloadResult;
use crate::storage::Target;
use crate::storage::scratch::Scratch;

pub trait Workload {
    /// Short kind name, e.g. "bonnie"; the `workload` field of results.
    fn kind(&self) -> &'static str;
    /// The most bytes the workload has on disk at once, for the free-space
    /// check before it starts.
    fn planned_bytes(&self) -> u64;
    /// The most files and directories it has at once, for the free-inode check.
    fn planned_files(&self) -> u64;
    /// Checks, before anything is written, what the workload writes
    /// outside the target (a sync log's directory); nothing by default.
    fn check_outside(&self) -> anyhow::Result<()> {
        Ok(())
    }
    /// Checks, before anything is written, that the workload can run on
    /// `target` (a tree's `--source` must not contain it); nothing by
    /// default.
    fn check_target(&self, _target: &Target) -> anyhow::Result<()> {
        Ok(())
    }
    /// How many results one repetition yields: `run` is called this many
    /// times per repetition (an io plan runs one job per call).
    fn steps(&self) -> u32 {
        1
    }
    /// Runs one step of a repetition inside the scratch directory.
    fn run(&mut self, ctx: &RunContext<'_>) -> anyhow::Result<WorkloadResult>;
}

/// What a workload gets from the runner.
pub struct RunContext<'a> {
    pub scratch: &'a Scratch,
    pub repetition: u32,
    pub progress: &'a Progress,
}

/// Phase-by-phase progress on stderr, only when stderr is a terminal (and
/// the user did not ask for quiet): logs and pipes stay clean. A
/// single-workload command prints one line per phase; `fsbench run` shows
/// a progress bar and the phase as its message.
pub struct Progress {
    display: Display,
}

enum Display {
    Off,
    Lines,
    Bar(indicatif::ProgressBar),
}

impl Progress {
    pub fn new(quiet: bool) -> Self {
        let shown = !quiet && crate::scale::is_root() && std::io::stderr().is_terminal();
        let display = match shown {
            true => Display::Lines,
            false => Display::Off,
        };
        Progress { display }
    }

    /// Phases show as the message of `bar` (which hides itself when stderr
    /// is not a terminal).
    pub fn with_bar(bar: indicatif::ProgressBar) -> Self {
        Progress {
            display: Display::Bar(bar),
        }
    }

    /// Announces a phase ("Writing intelligently...").
    pub fn start(&self, what: &str) {
        match &self.display {
            Display::Off => {}
            Display::Lines => {
                eprint!("{what}...");
                let _ = std::io::stderr().flush();
            }
            Display::Bar(bar) => bar.set_message(what.to_string()),
        }
    }

    /// Ends the line started by `start`.
    pub fn done(&self, seconds: f64) {
        if let Display::Lines = self.display {
            eprintln!("done ({seconds:.3} s)");
        }
    }
}

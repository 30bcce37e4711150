//! Workloads: what is measured, separate from how I/O is issued (`io`) and
//! how results are shown (`compat`, `report`). Each workload implements
//! [`Workload`] and yields the common [`WorkloadResult`].
pub mod bonnie;
pub mod durability;
#[cfg(test)]
pub mod fake;
pub mod meta;
pub mod pattern;
pub mod postmark;
pub mod progress;
pub mod space;
pub mod synclog;
pub mod threads;
pub mod tree;

use crate::result::WorkloadResult;
use crate::result::env::TargetEnv;
use crate::storage::Target;
use crate::storage::scratch::Scratch;
pub use progress::Progress;

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
    /// What it has on disk at once in the scratch directory of its
    /// `location`-th target: all of it in the first (its own), nothing in
    /// the others, unless it spreads over several (PostMark's locations).
    fn planned_at(&self, location: usize) -> Space {
        match location {
            0 => Space {
                bytes: self.planned_bytes(),
                files: self.planned_files(),
            },
            _ => Space::default(),
        }
    }
    /// How many results one repetition yields: the driver calls `run` with
    /// steps 0..steps() in every repetition (an io plan runs one job per
    /// step).
    fn steps(&self) -> u32 {
        1
    }
    /// How long step `step` of a repetition is planned to take, in
    /// seconds, when the workload fixes it (an io job's warm-up and
    /// duration): the progress bar's ETA before the step has been timed
    /// once. None by default: the time is learnt as the first repetition
    /// runs.
    fn planned_seconds(&self, _step: u32) -> Option<f64> {
        None
    }
    /// Runs one step of a repetition inside the scratch directory.
    fn run(&mut self, ctx: &RunContext<'_>) -> anyhow::Result<WorkloadResult>;
}

/// Bytes and files on a file system, for the free-space check.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Space {
    pub bytes: u64,
    pub files: u64,
}

/// A workload borrowed by the driver, so its owner can read what it kept
/// (PostMark's summary for its report) once the run is over.
impl<W: Workload + ?Sized> Workload for &mut W {
    fn kind(&self) -> &'static str {
        (**self).kind()
    }
    fn planned_bytes(&self) -> u64 {
        (**self).planned_bytes()
    }
    fn planned_files(&self) -> u64 {
        (**self).planned_files()
    }
    fn check_outside(&self) -> anyhow::Result<()> {
        (**self).check_outside()
    }
    fn check_target(&self, target: &Target) -> anyhow::Result<()> {
        (**self).check_target(target)
    }
    fn planned_at(&self, location: usize) -> Space {
        (**self).planned_at(location)
    }
    fn steps(&self) -> u32 {
        (**self).steps()
    }
    fn planned_seconds(&self, step: u32) -> Option<f64> {
        (**self).planned_seconds(step)
    }
    fn run(&mut self, ctx: &RunContext<'_>) -> anyhow::Result<WorkloadResult> {
        (**self).run(ctx)
    }
}

/// How caches are made cold before the phases of the workloads that empty
/// them (the tree's operations), when the run decides (`fsbench run
/// --cold`) rather than each workload's own setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColdMode {
    /// Nothing is emptied: phases read what earlier ones left cached.
    None,
    /// sync, then drop_caches (the page cache, dentries and inodes).
    Drop,
    /// sync, then the file system is unmounted and mounted again: every
    /// cache of it goes, also those drop_caches leaves (ZFS's ARC). Only
    /// for configurations fsbench built (`--configs`).
    Remount,
}

/// What a workload is told about making caches cold.
#[derive(Clone, Copy, Default)]
pub enum Cold<'a> {
    /// Its own setting (a tree's `--no-drop-caches`).
    #[default]
    AsWorkload,
    None,
    Drop,
    /// Unmounts and mounts the target again; the workload calls it with
    /// every descriptor of its own on the target closed (or parked).
    Remount(&'a dyn Fn() -> anyhow::Result<()>),
}

/// What a workload gets from the driver.
pub struct RunContext<'a> {
    /// Its scratch directory (on the first of its locations).
    pub scratch: &'a Scratch,
    /// Every target's scratch directory, in order, for a workload that
    /// spreads over several (PostMark's `set location`); `scratch` is the
    /// first.
    pub locations: &'a [Location<'a>],
    pub repetition: u32,
    /// Which of the repetition's `steps()` this is.
    pub step: u32,
    pub progress: &'a Progress,
    /// What the driver found out about the (first) target: file system,
    /// mount options, device; None when it could not be probed.
    pub env: Option<&'a TargetEnv>,
    /// How caches are made cold before its phases.
    pub cold: Cold<'a>,
}

/// A target's scratch directory, with the target's name for messages.
pub struct Location<'a> {
    pub name: &'a str,
    pub scratch: &'a Scratch,
}

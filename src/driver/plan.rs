//! A driver's plan: the parts to run, the targets they run on, and how
//! (spread, repetitions, stopping rule, scratch, caches, resume), built
//! with `Plan::new` and its setters.
use std::ops::Range;

use crate::result::RunResult;
use crate::storage::Target;
use crate::storage::distinct::check_distinct;
use crate::workload::progress::Schedule;
use crate::workload::{ColdMode, Progress, Space, Workload};

/// Read after each whole repetition with the record so far: the reason to
/// stop repeating, or None to go on (`report::precision`'s rule).
pub type StopRule<'w> = Box<dyn FnMut(&RunResult) -> Option<String> + 'w>;

/// What to run, where, and how often.
pub struct Plan<'w> {
    pub(super) targets: Vec<Target>,
    pub(super) parts: Vec<Part<'w>>,
    pub(super) spread: Spread,
    /// The repetitions to run, by number: `0..N`, or for a later `run` of
    /// a PostMark session the next number of the session's count.
    pub(super) repetitions: Range<u32>,
    /// Stops before the end of `repetitions` when it gives a reason; None:
    /// every repetition runs.
    pub(super) until: Option<StopRule<'w>>,
    /// Keep the scratch directories instead of removing them.
    pub(super) keep: bool,
    pub(super) progress: Progress,
    /// The name of the scratch directories (`fsbench-<id>`); None: the
    /// run's id.
    pub(super) scratch_id: Option<String>,
    /// How caches are made cold before workloads' phases; None: each
    /// workload's own setting.
    pub(super) cold: Option<ColdMode>,
    /// Unmounts and mounts the target of this name again (configurations
    /// fsbench built), for `ColdMode::Remount`.
    pub(super) remount: Option<&'w Remount<'w>>,
    /// Said on standard error once the plan is checked, before anything
    /// is written: how the run will repeat (`fsbench run`'s precision
    /// rule), never above a refusal.
    pub(super) preface: Option<String>,
    /// What a target without room for the plan is told to do: "use a
    /// smaller --scale" for a suite's plan, `storage::SMALLER_SIZE` (the
    /// default) for a command's own sizes.
    pub(super) remedy: String,
    /// Measure only what the record lacks (`fsbench run --resume`): per
    /// target and repetition, the parts whose every step has its result
    /// there are skipped; a part cut short is measured again whole.
    pub(super) resume: bool,
}

/// Unmounts and mounts a target again, by its name.
pub type Remount<'w> = dyn Fn(&str) -> anyhow::Result<()> + 'w;

/// How the parts use the targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spread {
    /// Side by side: every target runs every part, with an instance of its
    /// own (a workload may keep state, such as an io data file, in its
    /// target's scratch directory).
    EachTarget,
    /// One instance per part uses every target's scratch directory at once
    /// (PostMark's locations); its results are recorded under the first
    /// target, the others carry their environment and cleanup.
    AcrossTargets,
}

impl Spread {
    /// For `target`: which instance of a part it holds, and which of that
    /// instance's locations it is.
    pub(super) fn placement(self, target: usize) -> (usize, usize) {
        match self {
            Spread::EachTarget => (target, 0),
            Spread::AcrossTargets => (0, target),
        }
    }
}

/// One workload of a plan: a suite entry, or a command's workload.
pub struct Part<'w> {
    /// The name its results take; None: the workload's own (or its kind).
    pub label: Option<String>,
    /// One instance per target (`EachTarget`) or one (`AcrossTargets`).
    pub instances: Vec<Box<dyn Workload + 'w>>,
}

impl<'w> Plan<'w> {
    /// `parts` on `targets`, side by side, once, no rule to stop sooner,
    /// scratch directories removed and named after the run, no progress
    /// shown, caches as each workload makes them, nothing resumed: the
    /// setters below say otherwise.
    pub fn new(targets: Vec<Target>, parts: Vec<Part<'w>>) -> Plan<'w> {
        Plan {
            targets,
            parts,
            spread: Spread::EachTarget,
            repetitions: 0..1,
            until: None,
            keep: false,
            progress: Progress::new(true),
            scratch_id: None,
            cold: None,
            remount: None,
            preface: None,
            remedy: crate::storage::SMALLER_SIZE.into(),
            resume: false,
        }
    }

    pub fn spread(self, spread: Spread) -> Plan<'w> {
        Plan { spread, ..self }
    }

    pub fn repetitions(self, repetitions: Range<u32>) -> Plan<'w> {
        Plan {
            repetitions,
            ..self
        }
    }

    pub fn until(self, until: Option<StopRule<'w>>) -> Plan<'w> {
        Plan { until, ..self }
    }

    pub fn keep(self, keep: bool) -> Plan<'w> {
        Plan { keep, ..self }
    }

    pub fn progress(self, progress: Progress) -> Plan<'w> {
        Plan { progress, ..self }
    }

    pub fn scratch_id(self, scratch_id: Option<String>) -> Plan<'w> {
        Plan { scratch_id, ..self }
    }

    pub fn cold(self, cold: Option<ColdMode>) -> Plan<'w> {
        Plan { cold, ..self }
    }

    pub fn remount(self, remount: Option<&'w Remount<'w>>) -> Plan<'w> {
        Plan { remount, ..self }
    }

    pub fn preface(self, preface: Option<String>) -> Plan<'w> {
        Plan { preface, ..self }
    }

    pub fn remedy(self, remedy: String) -> Plan<'w> {
        Plan { remedy, ..self }
    }

    pub fn resume(self, resume: bool) -> Plan<'w> {
        Plan { resume, ..self }
    }
}

impl Plan<'_> {
    /// The instance target `target` runs, and which of its locations that
    /// target is.
    pub(super) fn instance(&self, part: usize, target: usize) -> (&dyn Workload, usize) {
        let (index, location) = self.spread.placement(target);
        (self.parts[part].instances[index].as_ref(), location)
    }

    /// The targets that run the parts (the others only lend directories).
    pub(super) fn running_targets(&self) -> usize {
        match self.spread {
            Spread::EachTarget => self.targets.len(),
            Spread::AcrossTargets => 1,
        }
    }

    /// Every part's data may stay in the scratch directory until the end
    /// (an io file is laid out once), so the space check adds them up, for
    /// every rank of an MPI job.
    pub(super) fn check(&self) -> anyhow::Result<()> {
        check_distinct(&self.targets)?;
        for (index, target) in self.targets.iter().enumerate() {
            let space = (0..self.parts.len())
                .map(|part| {
                    let (workload, location) = self.instance(part, index);
                    workload.planned_at(location)
                })
                .fold(Space::default(), |sum, s| Space {
                    bytes: sum.bytes + s.bytes,
                    files: sum.files + s.files,
                });
            target.check(space.bytes, space.files, &self.remedy)?;
            for part in 0..self.parts.len() {
                let (workload, _) = self.instance(part, index);
                workload.check_target(target)?;
            }
        }
        self.parts
            .iter()
            .flat_map(|p| &p.instances)
            .try_for_each(|w| w.check_outside())
    }

    /// The slot of target `target`'s first step among the steps of a
    /// repetition (targets in order, each its parts' steps).
    pub(super) fn first_slot(&self, target: usize) -> usize {
        (0..target)
            .flat_map(|t| (0..self.parts.len()).map(move |part| (t, part)))
            .map(|(t, part)| self.instance(part, t).0.steps() as usize)
            .sum()
    }

    /// The steps of a repetition, by slot (targets in order), with the time
    /// each workload plans for them, and how many repetitions there are:
    /// what the progress bar's ETA starts from.
    pub(super) fn schedule(&self) -> Schedule {
        let planned = (0..self.running_targets())
            .flat_map(|target| {
                (0..self.parts.len()).flat_map(move |part| {
                    let (workload, _) = self.instance(part, target);
                    (0..workload.steps()).map(move |step| workload.planned_seconds(step))
                })
            })
            .collect();
        Schedule::new(planned, self.repetitions.len() as u32, self.until.is_some())
    }

    /// The most of `steps` of `target`'s repetition (parts in order, each
    /// its steps) that whole parts make up.
    pub(super) fn whole_parts_within(&self, target: usize, steps: usize) -> usize {
        let mut whole = 0;
        for part in 0..self.parts.len() {
            let next = whole + self.instance(part, target).0.steps() as usize;
            if next > steps {
                break;
            }
            whole = next;
        }
        whole
    }

    /// "3", or "≤10" when a stopping rule may end the run sooner: the
    /// repetitions a step's "2/3" counts against.
    pub(super) fn repetition_count_text(&self) -> String {
        let end = self.repetitions.end;
        match self.until {
            Some(_) => format!("≤{end}"),
            None => end.to_string(),
        }
    }
}

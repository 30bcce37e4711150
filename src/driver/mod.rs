//! The driver: the one lifecycle of running workloads on targets, shared
//! by `fsbench run` (a suite on several targets), every `fsbench <kind>`
//! (a one-part plan on one target) and PostMark's `run` command (one
//! workload spread over its `set location`s).
//!
//! Every part is built and every target checked before anything is
//! written; each target's environment is probed; each gets a scratch
//! directory (and, with several parts, one per part inside it); then, per
//! repetition, each target in turn runs every part (interleaved, so drift
//! such as a warming device or a neighbour's load hits all targets alike;
//! each repetition starts with the next target, so order effects do too).
//! Each result is combined over the MPI ranks as it ends and added to the
//! record at once, so a failure or an interrupt keeps what was measured
//! (and `fsbench run` saves the record after each one). A plan that
//! resumes a record measures only what the record lacks.
//! A plan may stop repeating early: its stopping rule reads the record
//! after each whole repetition.
//! Scratch directories are removed at the end, on errors and on signals.
mod plan;
pub mod recording;
mod scratch;

use std::time::{Duration, Instant};

use crate::console::stderr_line;
use crate::result::env::TargetEnv;
use crate::result::{RunResult, TargetResult, WorkloadResult, fingerprint};
use crate::scale;
use crate::storage::Target;
use crate::storage::env::probe_target;
use crate::workload::progress::Step;
use crate::workload::{Cold, ColdMode, Location, RunContext};
pub use plan::{Part, Plan, Remount, Spread, StopRule};
pub use recording::Recording;
use scratch::TargetScratch;

/// What `run` tells its caller: where the time went, and why the
/// repetitions stopped early, if the plan's rule stopped them (on rank 0,
/// which alone holds the results the rule reads).
#[derive(Debug, Default)]
pub struct Ran {
    pub overhead: Overhead,
    pub stopped: Option<String>,
}

/// Where the wall time of a run went, for `--verbose`: everything that is
/// not a workload's own `run` is fsbench's overhead.
#[derive(Debug, Default, Clone)]
pub struct Overhead {
    pub check: Duration,
    pub probe: Duration,
    pub scratch_setup: Duration,
    pub workloads: Duration,
    pub cleanup: Duration,
}

impl Overhead {
    /// Adds another plan run's times (configurations measured round by
    /// round run the driver once per round).
    pub fn add(&mut self, other: &Overhead) {
        self.check += other.check;
        self.probe += other.probe;
        self.scratch_setup += other.scratch_setup;
        self.workloads += other.workloads;
        self.cleanup += other.cleanup;
    }

    /// Adds the time spent building the plan's workloads to the checks.
    pub fn plus_build(mut self, build: Duration) -> Overhead {
        self.check += build;
        self
    }

    /// Where the wall time went: the workloads, and fsbench's own overhead.
    pub fn breakdown(&self, report: Duration, wall: Duration) -> String {
        let wall_s = wall.as_secs_f64();
        let share = |d: Duration| 100.0 * d.as_secs_f64() / wall_s;
        let work = self.workloads;
        let outside = wall.saturating_sub(work);
        let rows = [
            ("suite, workloads and checks", self.check),
            ("environment probe", self.probe),
            ("scratch directories", self.scratch_setup),
            ("cleanup", self.cleanup),
            ("report and save", report),
        ];
        let mut text = format!(
            "fsbench: wall {wall_s:.3} s; workloads {:.3} s ({:.1} %); overhead {:.3} s ({:.1} %):\n",
            work.as_secs_f64(),
            share(work),
            outside.as_secs_f64(),
            share(outside)
        );
        for (what, time) in rows {
            text += &format!(
                "  {what:<28} {:>9.3} s {:>5.1} %\n",
                time.as_secs_f64(),
                share(time)
            );
        }
        text
    }
}

/// Runs `plan`: every target gets its entry in the recording's record
/// (with its environment), every result is added there as it ends, shown
/// to `on_result` with the record so far and the target's name, and the
/// record saved (`Recording::saved`). Returns where
/// the time went and why the repetitions stopped early, if they did.
///
/// Under MPI every rank runs the same plan on the same targets in the
/// same order, each in scratch directories of its own; the workloads'
/// phases keep the ranks in step, and each result is combined over all
/// ranks as it ends: rank 0 alone gets it (in `record` and `on_result`).
pub fn run(
    mut plan: Plan<'_>,
    recording: &mut Recording,
    mut on_result: impl FnMut(&RunResult, &str, &WorkloadResult) -> anyhow::Result<()>,
) -> anyhow::Result<Ran> {
    let mut overhead = Overhead::default();
    let clock = Instant::now();
    plan.check()?;
    overhead.check = clock.elapsed();
    if let Some(preface) = plan.preface.take() {
        stderr_line!("fsbench: {preface}");
    }

    let clock = Instant::now();
    let envs: Vec<Option<TargetEnv>> = plan
        .targets
        .iter()
        .map(|target| probe_target(&target.path).ok())
        .collect();
    let slots: Vec<usize> = plan
        .targets
        .iter()
        .zip(&envs)
        .map(|(target, env)| slot_of(&mut recording.record, target, env))
        .collect();
    overhead.probe = clock.elapsed();

    let clock = Instant::now();
    let scratch_id = scale::scratch_id(
        plan.scratch_id
            .as_deref()
            .unwrap_or(&recording.record.run_id),
    )?;
    let scratches = scale::agree(
        plan.targets
            .iter()
            .map(|target| TargetScratch::create(target, plan.parts.len(), &scratch_id, plan.keep))
            .collect::<anyhow::Result<Vec<_>>>(),
    )?;
    overhead.scratch_setup = clock.elapsed();

    let clock = Instant::now();
    let outcome = repeat(
        &mut plan,
        &scratches,
        &envs,
        recording,
        &slots,
        &mut on_result,
    );
    overhead.workloads = clock.elapsed();
    plan.progress.finish();
    // The workloads' open files go before their directories do.
    drop(plan.parts);
    let stopped = outcome?;

    let clock = Instant::now();
    for (index, scratch) in scratches.into_iter().enumerate() {
        let target = &mut recording.record.targets[slots[index]];
        target.cleanup = scratch.finish();
        if let Some(unusual) = target.cleanup.as_ref().and_then(|c| c.unusual()) {
            stderr_line!("fsbench: {}: {unusual}", target.name);
        }
    }
    overhead.cleanup = clock.elapsed();
    Ok(Ran { overhead, stopped })
}

/// The record's entry for `target`: the one of that name a plan run
/// before on the same record made (configurations built again for each
/// repetition, or measured round after round, stay one target), or a new
/// one with its environment.
fn slot_of(record: &mut RunResult, target: &Target, env: &Option<TargetEnv>) -> usize {
    if let Some(index) = record.targets.iter().position(|t| t.name == target.name) {
        return index;
    }
    record.targets.push(TargetResult {
        name: target.name.clone(),
        // Absolute, so `.` still says which directory it was.
        path: std::path::absolute(&target.path)
            .unwrap_or_else(|_| target.path.clone())
            .display()
            .to_string(),
        env: env.clone(),
        workloads: Vec::new(),
        cleanup: None,
        reference: false,
        built: None,
        durability: None,
        fingerprint: None,
    });
    record.targets.len() - 1
}

/// Every repetition of the plan, until its stopping rule gives a reason
/// (returned) or the repetitions run out; each result goes into the record
/// (target `t` at `slots[t]`), then to `on_result` as it ends, then the
/// record is saved, so the
/// rule sees every result of the repetitions so far. A repetition that a
/// resumed record already held whole is not read by the rule again: the
/// run it came from read it and went on.
fn repeat(
    plan: &mut Plan<'_>,
    scratches: &[TargetScratch],
    envs: &[Option<TargetEnv>],
    recording: &mut Recording,
    slots: &[usize],
    on_result: &mut impl FnMut(&RunResult, &str, &WorkloadResult) -> anyhow::Result<()>,
) -> anyhow::Result<Option<String>> {
    plan.progress.plan(plan.schedule());
    for repetition in plan.repetitions.clone() {
        let held = match plan.resume {
            true => whole_parts_held(plan, &mut recording.record, slots, repetition),
            false => vec![0; plan.running_targets()],
        };
        let measured = run_repetition(
            plan,
            scratches,
            envs,
            repetition,
            &held,
            |target, result| {
                let slot = slots[target];
                let record = &mut recording.record;
                record.targets[slot].workloads.push(result);
                // Its workloads' parameters are part of the fingerprint.
                fingerprint::refresh(record);
                let target = &record.targets[slot];
                on_result(
                    record,
                    &target.name,
                    &target.workloads[target.workloads.len() - 1],
                )?;
                recording.saved()
            },
        )?;
        if measured == 0 {
            continue;
        }
        if let Some(reason) = stop_after_repetition(plan.until.as_mut(), &recording.record)? {
            return Ok(Some(reason));
        }
    }
    Ok(None)
}

/// Per running target, how many of its steps of `repetition` the record
/// holds the results of, counting only parts held whole: the results of a
/// part cut short are taken out of the record, to be measured again with
/// their part. A target's results of one repetition are its last ones,
/// in the order its steps ran.
fn whole_parts_held(
    plan: &Plan<'_>,
    record: &mut RunResult,
    slots: &[usize],
    repetition: u32,
) -> Vec<usize> {
    (0..plan.running_targets())
        .map(|target| {
            let workloads = &mut record.targets[slots[target]].workloads;
            let held = workloads
                .iter()
                .filter(|w| w.repetition == repetition)
                .count();
            let whole = plan.whole_parts_within(target, held);
            workloads.truncate(workloads.len() - (held - whole));
            whole
        })
        .collect()
}

/// The stopping rule's reason to stop, read on rank 0 (which alone holds
/// the results) and agreed on by every rank, so all stop together.
fn stop_after_repetition(
    until: Option<&mut StopRule<'_>>,
    record: &RunResult,
) -> anyhow::Result<Option<String>> {
    let Some(rule) = until else {
        return Ok(None);
    };
    let reason = scale::is_root().then(|| rule(record)).flatten();
    scale::from_root(Ok(reason))
}

/// One repetition: each running target in turn runs every part, each part
/// its `steps()`, but for its first `held[target]` steps (a resumed
/// record's); `keep` gets each result (on rank 0) with the index of its
/// target. Returns how many steps ran.
fn run_repetition(
    plan: &mut Plan<'_>,
    scratches: &[TargetScratch],
    envs: &[Option<TargetEnv>],
    repetition: u32,
    held: &[usize],
    mut keep: impl FnMut(usize, WorkloadResult) -> anyhow::Result<()>,
) -> anyhow::Result<usize> {
    let of_count = plan.repetition_count_text();
    let mut ran = 0;
    for target in rotated(plan.running_targets(), repetition) {
        let env = &envs[target];
        let (remount, name) = (plan.remount, plan.targets[target].name.clone());
        let remount_here = || remount_target(remount, &name, &scratches[target]);
        let mut slot = plan.first_slot(target);
        let first_slot = slot;
        let progress = &plan.progress;
        for (index, part) in plan.parts.iter_mut().enumerate() {
            let locations = locations_of(&plan.targets, scratches, plan.spread, target, index);
            let instance = &mut part.instances[plan.spread.placement(target).0];
            let steps = instance.steps();
            for step in 0..steps {
                if slot - first_slot < held[target] {
                    progress.skip_step(slot);
                    slot += 1;
                    continue;
                }
                ran += 1;
                let what = Step {
                    repetition: format!("{}/{of_count}", repetition + 1),
                    target: plan.targets[target].name.clone(),
                    workload: part.label.as_deref().unwrap_or(instance.kind()).to_string(),
                };
                progress.begin_step(what, slot);
                slot += 1;
                let ctx = RunContext {
                    scratch: locations[0].scratch,
                    locations: &locations,
                    repetition,
                    step,
                    progress,
                    env: env.as_ref(),
                    cold: cold(plan.cold, &remount_here),
                };
                // Every timed phase of the step reads the counters of the
                // devices (or the network mount) under its (first) target.
                let devices = env.as_ref().map_or(&[][..], |e| &e.devices[..]);
                let network = env.as_ref().and_then(|e| e.network.as_ref());
                let watch = crate::measure::devices::watch(devices, network);
                let ran = instance.run(&ctx);
                drop(watch);
                // A rank's failure is agreed on here, before any rank
                // removes its scratch directories.
                let combined = scale::combine(ran, env.as_ref())?;
                progress.end_step();
                if let Some(mut result) = combined {
                    name_result(&mut result, part.label.as_deref(), steps, repetition);
                    keep(target, result)?;
                }
            }
        }
    }
    Ok(ran)
}

/// What a workload is told about making caches cold under `mode`.
fn cold<'a>(mode: Option<ColdMode>, remount: &'a dyn Fn() -> anyhow::Result<()>) -> Cold<'a> {
    match mode {
        None => Cold::AsWorkload,
        Some(ColdMode::None) => Cold::None,
        Some(ColdMode::Drop) => Cold::Drop,
        Some(ColdMode::Remount) => Cold::Remount(remount),
    }
}

/// Unmounts and mounts target `name` again, the driver's own descriptors
/// on it (the scratch directories') parked meanwhile; the workload's are
/// closed by the workload.
fn remount_target(
    remount: Option<&Remount<'_>>,
    name: &str,
    scratch: &TargetScratch,
) -> anyhow::Result<()> {
    let Some(remount) = remount else {
        return crate::error::usage(format!(
            "--cold remount: {name} is not a configuration fsbench built (--configs): it cannot be remounted"
        ));
    };
    scratch.park()?;
    let remounted = remount(name);
    let unparked = scratch.unpark();
    remounted.and(unparked)
}

/// The targets in the order repetition `repetition` runs them: each
/// repetition starts with the next one, so that no target always runs
/// first. What a run leaves behind for the next (a page cache another
/// target filled, a device warmed up, memory fragmented) then falls on
/// each target in turn instead of always on the same one, where it would
/// look like a difference between them.
fn rotated(targets: usize, repetition: u32) -> impl Iterator<Item = usize> {
    let first = repetition as usize % targets.max(1);
    (0..targets).map(move |i| (first + i) % targets)
}

/// The scratch directories part `part` runs in on `target`: its own, or
/// (spread across targets) every target's.
fn locations_of<'a>(
    targets: &'a [Target],
    scratches: &'a [TargetScratch],
    spread: Spread,
    target: usize,
    part: usize,
) -> Vec<Location<'a>> {
    let location = |index: usize| Location {
        name: &targets[index].name,
        scratch: scratches[index].of_part(part),
    };
    match spread {
        Spread::EachTarget => vec![location(target)],
        Spread::AcrossTargets => (0..targets.len()).map(location).collect(),
    }
}

/// Names a result after its part. A workload with several results per
/// repetition (one per io pattern) keeps its own labels, under the part's
/// when it has one; a single result takes the part's label when it has one.
fn name_result(result: &mut WorkloadResult, label: Option<&str>, steps: u32, repetition: u32) {
    result.repetition = repetition;
    let own = std::mem::take(&mut result.label);
    result.label = match (label, own.is_empty(), steps > 1) {
        (Some(given), false, true) => format!("{given}/{own}"),
        (Some(given), _, _) => given.to_string(),
        (None, true, _) => result.workload.clone(),
        (None, false, _) => own,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_repetition_starts_with_the_next_target() {
        let order = |repetition| rotated(3, repetition).collect::<Vec<_>>();
        assert_eq!(order(0), [0, 1, 2]);
        assert_eq!(order(1), [1, 2, 0]);
        assert_eq!(order(2), [2, 0, 1]);
        assert_eq!(order(3), [0, 1, 2]);
        assert_eq!(rotated(1, 5).collect::<Vec<_>>(), [0]);
    }

    fn named(own: &str, label: Option<&str>, steps: u32) -> String {
        let mut result = WorkloadResult {
            workload: "io".into(),
            label: own.into(),
            repetition: 7,
            ..Default::default()
        };
        name_result(&mut result, label, steps, 2);
        assert_eq!(result.repetition, 2);
        result.label
    }

    #[test]
    fn results_are_named_after_their_part() {
        assert_eq!(named("", None, 1), "io");
        assert_eq!(named("", Some("seq-read"), 1), "seq-read");
        assert_eq!(named("4k-rand-read", Some("seq-read"), 1), "seq-read");
        assert_eq!(named("4k-rand-read", None, 1), "4k-rand-read");
        assert_eq!(
            named("4k-rand-read", Some("patterns"), 20),
            "patterns/4k-rand-read"
        );
        assert_eq!(named("4k-rand-read", None, 20), "4k-rand-read");
    }
}

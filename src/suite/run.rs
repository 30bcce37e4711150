//! Running a suite on several targets: every workload is built and every
//! target checked before anything is written; then, per repetition, each
//! target in turn runs the whole suite (interleaved, so drift such as a
//! warming device or a neighbour's load hits all targets alike).
use std::time::{Duration, Instant};

use super::{Entry, Suite};
use crate::result::{RunResult, TargetResult, WorkloadResult};
use crate::scale;
use crate::storage::Target;
use crate::storage::distinct::check_distinct;
use crate::storage::env::probe_target;
use crate::storage::scratch::Scratch;
use crate::workload::{Progress, RunContext, Workload};

/// Builds the workload an entry describes, at a scale.
pub type Builder<'a> = dyn Fn(&Entry, f64) -> anyhow::Result<Box<dyn Workload>> + 'a;

pub struct SuiteOptions {
    pub repeat: u32,
    pub scale: f64,
    pub keep: bool,
    /// Progress across every target and step; hidden when not a terminal.
    pub bar: indicatif::ProgressBar,
}

/// Where the wall time of a run went, for `--verbose`: everything that is
/// not a workload's own `run` is fsbench's overhead.
#[derive(Debug, Default, Clone)]
pub struct Overhead {
    pub build_and_check: Duration,
    pub probe: Duration,
    pub scratch_setup: Duration,
    pub workloads: Duration,
    pub cleanup: Duration,
}

/// One target's workloads, one per suite entry, in suite order.
struct TargetPlan<'s> {
    target: Target,
    workloads: Vec<(&'s Entry, Box<dyn Workload>)>,
}

impl TargetPlan<'_> {
    fn steps_per_repetition(&self) -> u64 {
        self.workloads
            .iter()
            .map(|(_, w)| u64::from(w.steps()))
            .sum()
    }

    /// Every workload's data may stay in the scratch directory until the
    /// end (an io file is laid out once), so the check adds them up, for
    /// every rank of an MPI job.
    fn check(&self) -> anyhow::Result<()> {
        let bytes: u64 = self.workloads.iter().map(|(_, w)| w.planned_bytes()).sum();
        let files: u64 = self.workloads.iter().map(|(_, w)| w.planned_files()).sum();
        self.target.check(bytes, files)?;
        self.workloads.iter().try_for_each(|(_, w)| {
            w.check_outside()?;
            w.check_target(&self.target)
        })
    }
}

/// Runs `suite` on `targets`; every finished workload result is added to
/// `record` (so a failure keeps what was measured) and shown to
/// `on_result`. Returns where the time went.
///
/// Under MPI every rank runs the same suite on the same targets in the
/// same order, each in scratch directories of its own; the workloads'
/// phases keep the ranks in step, and each result is combined over all
/// ranks as it ends: rank 0 alone gets it (in `record` and `on_result`).
pub fn run_suite(
    suite: &Suite,
    targets: &[Target],
    build: &Builder<'_>,
    options: &SuiteOptions,
    record: &mut RunResult,
    mut on_result: impl FnMut(&str, &WorkloadResult),
) -> anyhow::Result<Overhead> {
    let mut overhead = Overhead::default();
    let bar = &options.bar;
    let clock = Instant::now();
    check_distinct(targets)?;
    let mut plans = build_plans(suite, targets, build, options.scale)?;
    for plan in &plans {
        plan.check()?;
    }
    overhead.build_and_check = clock.elapsed();

    let clock = Instant::now();
    for plan in &plans {
        record.targets.push(TargetResult {
            name: plan.target.name.clone(),
            path: plan.target.path.display().to_string(),
            env: probe_target(&plan.target.path).ok(),
            workloads: Vec::new(),
            cleanup: None,
        });
    }
    overhead.probe = clock.elapsed();

    let clock = Instant::now();
    let scratch_id = scale::scratch_id(&record.run_id)?;
    let scratches = scale::agree(
        plans
            .iter()
            .map(|plan| TargetScratch::create(plan, &scratch_id, options.keep))
            .collect::<anyhow::Result<Vec<_>>>(),
    )?;
    overhead.scratch_setup = clock.elapsed();

    let steps: u64 = plans.iter().map(TargetPlan::steps_per_repetition).sum();
    bar.set_length(steps * u64::from(options.repeat));
    let progress = Progress::with_bar(bar.clone());
    let clock = Instant::now();
    for repetition in 0..options.repeat {
        for (index, (plan, scratch)) in plans.iter_mut().zip(&scratches).enumerate() {
            for ((entry, workload), dir) in plan.workloads.iter_mut().zip(&scratch.nested) {
                bar.set_prefix(format!(
                    "{}/{} {} {}",
                    repetition + 1,
                    options.repeat,
                    plan.target.name,
                    entry.label()
                ));
                let ctx = RunContext {
                    scratch: dir,
                    repetition,
                    progress: &progress,
                };
                let steps = workload.steps();
                for _ in 0..steps {
                    // A rank's failure is agreed on here, before any rank
                    // removes its scratch directories.
                    let combined = scale::combine(workload.run(&ctx))?;
                    bar.inc(1);
                    let Some(mut result) = combined else {
                        continue;
                    };
                    name_result(&mut result, entry, steps, repetition);
                    on_result(&plan.target.name, &result);
                    record.targets[index].workloads.push(result);
                }
            }
        }
    }
    overhead.workloads = clock.elapsed();
    bar.finish_and_clear();

    let clock = Instant::now();
    drop(plans);
    for (index, scratch) in scratches.into_iter().enumerate() {
        let cleanup = scratch.finish();
        if let Some(unusual) = cleanup.as_ref().and_then(|c| c.unusual()) {
            eprintln!("fsbench: {}: {unusual}", record.targets[index].name);
        }
        record.targets[index].cleanup = cleanup;
    }
    overhead.cleanup = clock.elapsed();
    Ok(overhead)
}

/// A target's scratch directory and, inside it, one per suite entry.
struct TargetScratch {
    // Declared first so the nested ones drop (and are removed) first.
    nested: Vec<Scratch>,
    top: Scratch,
}

impl TargetScratch {
    fn create(plan: &TargetPlan<'_>, run_id: &str, keep: bool) -> anyhow::Result<Self> {
        let top = Scratch::create(&plan.target.path, run_id, keep)?;
        let nested = (1..=plan.workloads.len())
            .map(|n| top.nested(&format!("{run_id}-w{n}")))
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(TargetScratch { nested, top })
    }

    /// Removes them all; one report for the target.
    fn finish(self) -> Option<crate::storage::cleanup::CleanupReport> {
        let mut nested_reports = Vec::new();
        for dir in self.nested {
            let name = dir
                .path()
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            nested_reports.push((dir.finish(), name));
        }
        let mut report = self.top.finish();
        if let Some(report) = &mut report {
            for (nested, name) in nested_reports {
                report.absorb(nested.unwrap_or_default(), &name);
            }
        }
        report
    }
}

/// Builds every entry for every target, so a bad parameter is reported
/// before any target is touched. Each target gets its own instances: a
/// workload may keep state (an io data file) in its target's scratch dir.
fn build_plans<'s>(
    suite: &'s Suite,
    targets: &[Target],
    build: &Builder<'_>,
    scale: f64,
) -> anyhow::Result<Vec<TargetPlan<'s>>> {
    targets
        .iter()
        .map(|target| {
            let workloads = suite
                .workloads
                .iter()
                .enumerate()
                .map(|(index, entry)| {
                    let workload = build(entry, scale).map_err(|e| {
                        let at = format!(
                            "suite {}, workload {} ({})",
                            suite.name,
                            index + 1,
                            entry.label()
                        );
                        match e.downcast::<crate::error::UsageError>() {
                            Ok(usage) => crate::error::UsageError(format!("{at}: {usage}")).into(),
                            Err(other) => other.context(at),
                        }
                    })?;
                    Ok((entry, workload))
                })
                .collect::<anyhow::Result<Vec<_>>>()?;
            Ok(TargetPlan {
                target: target.clone(),
                workloads,
            })
        })
        .collect()
}

/// Names a result after its suite entry. A workload with several results
/// per repetition (one per io pattern) keeps its own labels, under the
/// entry's when the suite gives one; a single result takes the entry's
/// label when the suite gives one.
fn name_result(result: &mut WorkloadResult, entry: &Entry, steps: u32, repetition: u32) {
    result.repetition = repetition;
    let own = std::mem::take(&mut result.label);
    result.label = match (entry.label.as_deref(), own.is_empty(), steps > 1) {
        (Some(given), false, true) => format!("{given}/{own}"),
        (Some(given), _, _) => given.to_string(),
        (None, true, _) => entry.kind.clone(),
        (None, false, _) => own,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(label: Option<&str>) -> Entry {
        Entry {
            kind: "io".into(),
            label: label.map(str::to_string),
            args: Default::default(),
            commands: Vec::new(),
        }
    }

    fn named(own: &str, entry_label: Option<&str>, steps: u32) -> String {
        let mut result = WorkloadResult {
            workload: "io".into(),
            label: own.into(),
            repetition: 7,
            ..Default::default()
        };
        name_result(&mut result, &entry(entry_label), steps, 2);
        assert_eq!(result.repetition, 2);
        result.label
    }

    #[test]
    fn results_are_named_after_their_entry() {
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

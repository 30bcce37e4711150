//! `fsbench run`'s session: a suite measured on targets, or on the
//! configurations it builds round by round, repeated until the precision
//! rule is met, with its references, its power cuts, and its record saved
//! after every result and finished at the end.
//!
//! `cli/run.rs` reads the command line into a [`Request`] and prints the
//! [`Outcome`]; everything between is here. How a suite entry becomes a
//! workload comes with the request (`Request::build`: the registry's
//! parsers), so the session knows no command line.
mod runner;
pub mod spec;
#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::configs::place::Place;
use crate::configs::rounds::BuildLog;
use crate::crash;
use crate::driver::{Overhead, Recording};
use crate::result::RunResult;
use crate::suite::SuiteWorkload;
use crate::workload::ColdMode;
use runner::Runner;
pub use spec::{Registry, RunSpec};

/// How the suite runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    pub scale: f64,
    /// Keep the scratch directories (`--keep`).
    pub keep: bool,
    pub cold: Option<ColdMode>,
    /// No progress bar.
    pub quiet: bool,
    /// A line per result measured.
    pub verbose: bool,
    /// Build every configuration anew for each repetition.
    pub fresh: bool,
    /// Leave out a configuration that cannot be built and measure the
    /// others, instead of ending the run.
    pub keep_going: bool,
}

/// A suite's crash entry, planned: its options, where its recorded disks
/// go, and the configurations it cuts off.
struct CrashPlan<'a> {
    options: &'a crash::Options,
    place: &'a Place,
    recordables: Vec<crash::Recordable<'a>>,
}

/// What a session measured: the finished record (saved), where the time
/// went, and what was built.
pub struct Outcome {
    pub record: RunResult,
    pub overhead: Overhead,
    pub builds: BuildLog,
    /// The time the final saves took.
    pub save_time: Duration,
}

/// Runs the session. On an error after something was measured, the record
/// so far is written to the request's files (still incomplete) before the
/// error is returned; one refused before anything was measured leaves the
/// files as they were. None on an MPI rank other than 0: rank 0 holds the
/// combined results and alone saves them.
pub fn run(spec: RunSpec, registry: &dyn Registry) -> anyhow::Result<Option<Outcome>> {
    let RunSpec {
        suite,
        targets,
        references,
        configs,
        crash,
        precision,
        repeat,
        options,
        policy,
        record,
        resumed,
        scratch_id,
        save_path,
        json,
    } = spec;
    let host = record.host.clone();
    let build = |listed: &SuiteWorkload, scale| registry.build(listed, scale, &policy, &host);
    let crash = match (&crash, &configs) {
        (Some(crash), Some((configs, _))) => Some(CrashPlan {
            options: &crash.options,
            place: &crash.place,
            recordables: crash::recordables(configs, &crash.place)?,
        }),
        _ => None,
    };
    let reference_names: Vec<String> = references.iter().map(|t| t.name.clone()).collect();
    let files = save_path.iter().chain(&json).map(PathBuf::as_path);
    let mut recording = Recording::new(record, files).with_references(reference_names);
    let mut runner = Runner {
        suite: &suite,
        build: &build,
        options,
        precision,
        references,
        recording: &mut recording,
        overhead: Overhead::default(),
        preface: precision.map(|rule| rule.plan_text()),
        scratch_id: &scratch_id,
        resumed,
    };
    let mut builds = BuildLog::default();
    let measured = match &configs {
        Some((configs, place)) => runner.measure_configs(configs, place, repeat, &mut builds),
        None => runner.measure_targets(targets, 0..repeat, true, true, None),
    };
    let overhead = runner.overhead.clone();
    recording.mark_references();
    let record = &mut recording.record;
    record_builds(record, &builds);
    crate::result::fingerprint::refresh(record);
    let stopped = measured.and_then(|stopped| {
        if let Some(crash) = &crash {
            judge_crash(crash, &scratch_id, record)?;
        }
        Ok(stopped)
    });
    let stopped = match stopped {
        Ok(stopped) => stopped,
        Err(e) => return Err(recording.failed(e)),
    };
    if !crate::scale::is_root() {
        return Ok(None);
    }
    recording.record.stopping = precision.map(|rule| rule.stopping(&recording.record, stopped));
    let clock = Instant::now();
    recording.finish()?;
    Ok(Some(Outcome {
        record: recording.record,
        overhead,
        builds,
        save_time: clock.elapsed(),
    }))
}

/// Each built target's record of how it was built.
fn record_builds(record: &mut RunResult, builds: &BuildLog) {
    for target in &mut record.targets {
        target.built = builds
            .built
            .iter()
            .find(|(name, _)| *name == target.name)
            .map(|(_, built)| built.clone());
    }
}

/// Cuts off every configuration that was measured and puts what it lost
/// in its target's record as it ends: a failure keeps the ones before it.
fn judge_crash(plan: &CrashPlan, run_id: &str, record: &mut RunResult) -> anyhow::Result<()> {
    let measured: Vec<_> = plan
        .recordables
        .iter()
        .filter(|r| record.targets.iter().any(|t| t.name == r.config.name))
        .collect();
    crash::judge_all(
        measured,
        plan.place,
        plan.options,
        run_id,
        |config, durability| {
            if let Some(target) = record.targets.iter_mut().find(|t| t.name == config.name) {
                target.durability = Some(durability);
            }
        },
    )
}

//! What runs the suite on targets through the driver: for the whole run,
//! or round by round as configurations are built (`configs::rounds`).
use std::ops::Range;
use std::path::PathBuf;
use std::time::Instant;

use super::Options;
use crate::analysis::precision::Precision;
use crate::configs::Config;
use crate::configs::place::Place;
use crate::configs::rounds::{self, BuildLog};
use crate::console::stderr_line;
use crate::driver::{Overhead, Plan, Recording, Remount, StopRule};
use crate::result::RunResult;
use crate::storage::Target;
use crate::suite::Suite;
use crate::suite::plan::Builder;
use crate::workload::Progress;

pub(super) struct Runner<'a> {
    pub(super) suite: &'a Suite,
    pub(super) build: &'a Builder<'a>,
    pub(super) options: Options,
    pub(super) precision: Option<Precision>,
    /// The references, measured with the targets (with the first round of
    /// configurations).
    pub(super) references: Vec<Target>,
    pub(super) recording: &'a mut Recording,
    pub(super) overhead: Overhead,
    /// How the run repeats, said once, by the first plan that passes its
    /// checks.
    pub(super) preface: Option<String>,
    pub(super) scratch_id: &'a str,
    /// Measure only what the record lacks (`--resume`).
    pub(super) resumed: bool,
}

impl Runner<'_> {
    /// Builds the configurations round by round and measures each round
    /// (`configs::rounds::run`), recording what they share.
    pub(super) fn measure_configs(
        &mut self,
        configs: &[Config],
        place: &Place,
        repeat: u32,
        builds: &mut BuildLog,
    ) -> anyhow::Result<Option<String>> {
        let building = rounds::Building {
            fresh: self.options.fresh,
            keep_going: self.options.keep_going,
        };
        let scratch_id = self.scratch_id.to_string();
        let measured = rounds::run(
            configs,
            place,
            building,
            0..repeat,
            &scratch_id,
            self,
            builds,
        );
        rounds::mark_shared(configs, place, builds);
        measured.map(|()| builds.stopped.take())
    }

    /// Runs the suite on `targets` (and the references, `with_references`)
    /// over `repetitions` through the driver; `until`: with the precision
    /// rule, if one was asked for.
    pub(super) fn measure_targets(
        &mut self,
        targets: Vec<Target>,
        repetitions: Range<u32>,
        with_references: bool,
        until: bool,
        remount: Option<&Remount<'_>>,
    ) -> anyhow::Result<Option<String>> {
        let rule = self.precision.filter(|_| until);
        let until = rule.map(|rule| {
            Box::new(move |record: &RunResult| rule.reached(record)) as StopRule<'static>
        });
        let progress = match self.options.quiet {
            true => Progress::new(true),
            false => Progress::bar(),
        };
        let references = self.references.iter().filter(|_| with_references);
        let targets: Vec<Target> = targets.into_iter().chain(references.cloned()).collect();
        let clock = Instant::now();
        let parts = self
            .suite
            .parts(targets.len(), self.build, self.options.scale)?;
        let plan = Plan::new(targets, parts)
            .repetitions(repetitions)
            .until(until)
            .keep(self.options.keep)
            .progress(progress)
            .cold(self.options.cold)
            .remount(remount)
            .preface(self.preface.take())
            .remedy(format!(
                "use a smaller --scale (this run's is {})",
                self.options.scale
            ))
            .scratch_id(Some(self.scratch_id.to_string()))
            .resume(self.resumed);
        let build_time = clock.elapsed();
        let verbose = self.options.verbose;
        let ran = crate::driver::run(plan, self.recording, |_, target, result| {
            if verbose {
                stderr_line!("fsbench: {target}: {} done", result.name());
            }
            Ok(())
        })?;
        self.overhead.add(&ran.overhead.plus_build(build_time));
        Ok(ran.stopped)
    }
}

impl rounds::Measure for Runner<'_> {
    fn measure(
        &mut self,
        targets: &[(String, PathBuf)],
        repetitions: Range<u32>,
        with_references: bool,
        remount: &Remount<'_>,
    ) -> anyhow::Result<Option<String>> {
        let targets = targets
            .iter()
            .map(|(name, path)| Target {
                name: name.clone(),
                path: path.clone(),
            })
            .collect();
        let until = !self.options.fresh;
        self.measure_targets(targets, repetitions, with_references, until, Some(remount))
    }

    fn stop_after_repetition(&mut self) -> anyhow::Result<Option<String>> {
        // Rank 0 alone holds the results: every rank follows its reason.
        let rule = self.precision.filter(|_| crate::scale::is_root());
        let reason = rule.and_then(|rule| rule.reached(&self.recording.record));
        crate::scale::from_root(Ok(reason))
    }

    fn planned_bytes(&self) -> anyhow::Result<u64> {
        let parts = self.suite.parts(1, self.build, self.options.scale)?;
        Ok(parts.iter().map(|p| p.instances[0].planned_bytes()).sum())
    }
}

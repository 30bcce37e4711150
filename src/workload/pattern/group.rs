//! A fio group: jobs that run at once, each on its own threads and file,
//! started together; each keeps a result of its own. A job's clones
//! reported as one (`Job::clone_files`) run as copies among them and their
//! outcomes are added up into the job's.
use std::ops::Range;
use std::os::fd::{AsFd, BorrowedFd};
use std::time::Duration;

use super::counters::IntervalFigures;
use super::engine::JobOutcome;
use super::outcome::{Ran, result};
use super::{
    Event, FileSpec, IoWorkload, Job, LaidOut, conclude, counters, measured, open_job, run_open,
    usable,
};
use crate::measure::PhaseTiming;
use crate::result::WorkloadResult;
use crate::workload::RunContext;

impl IoWorkload {
    /// Runs the jobs of `steps` (one fio group) at once, each on its own
    /// threads and file, started together; returns the first one's result
    /// and keeps the others' for their steps. Their interval lines are
    /// told when all have ended, job by job.
    pub(super) fn run_group(
        &mut self,
        ctx: &RunContext<'_>,
        steps: Range<usize>,
    ) -> anyhow::Result<WorkloadResult> {
        let mut jobs = Vec::new();
        for step in steps.clone() {
            let job = &self.plan.jobs[step];
            for file in job.copies().iter().map(|copy| copy.file) {
                self.lay_out(ctx, file)?;
            }
            let mut notes = Vec::new();
            let job = usable(&self.plan.jobs[step], &mut self.sink, &mut notes)?.into_owned();
            jobs.push((job, notes));
        }
        // Every copy (a job, or one clone of it) with the job it adds to.
        let copies: Vec<(usize, Job)> = (jobs.iter().enumerate())
            .flat_map(|(index, (job, _))| job.copies().into_iter().map(move |c| (index, c)))
            .collect();
        ctx.progress
            .show(&format!("Running {} jobs at once", copies.len()));
        let (files, laid_out) = (&self.plan.files, &self.laid_out);
        let only: Vec<&Job> = copies.iter().map(|(_, job)| job).collect();
        // Under MPI the phase is the group's first job (all start together).
        let outcomes = crate::scale::phase(
            |outcomes: &Vec<JobOutcome>| started(&outcomes[0]),
            || run_at_once(ctx.scratch.dir(), &only, files, laid_out),
        )?;
        let mut per_job: Vec<Vec<JobOutcome>> = jobs.iter().map(|_| Vec::new()).collect();
        for ((index, _), outcome) in copies.iter().zip(outcomes) {
            per_job[*index].push(outcome);
        }
        let mut results = Vec::new();
        for ((job, notes), outcomes) in jobs.iter().zip(per_job) {
            let outcome = added_up(outcomes);
            let file = &self.plan.files[job.file];
            (self.sink)(Event::Start(job, file))?;
            for row in &outcome.rows {
                (self.sink)(Event::Interval(row))?;
            }
            let average = conclude(job, &outcome, &mut self.sink)?;
            let timing = measured(&outcome, &average);
            let ran = Ran {
                job,
                file,
                outcome,
                average,
                timing,
            };
            results.push(result(
                ran,
                notes.clone(),
                self.ram_bytes,
                ctx,
                &mut self.sink,
            )?);
        }
        let mut results = steps.zip(results);
        let (_, first) = results.next().expect("a group has jobs");
        self.ran_at_once.extend(results);
        Ok(first)
    }
}

/// A job's clones' outcomes as one (group_reporting): counters, histograms
/// and what the access pattern decided added up, interval lines added by
/// index (the clones started together, so line i is the same second for
/// all). CPU, usage and the devices' counters are the process's and the
/// target's over the same time: the first clone's already count them all.
fn added_up(outcomes: Vec<JobOutcome>) -> JobOutcome {
    let mut outcomes = outcomes.into_iter();
    let mut sum = outcomes.next().expect("a job runs at least one copy");
    for clone in outcomes {
        for (index, row) in clone.rows.into_iter().enumerate() {
            match sum.rows.get_mut(index) {
                Some(kept) => {
                    kept.counters.add(&row.counters);
                    kept.seconds = kept.seconds.max(row.seconds);
                    kept.figures =
                        IntervalFigures::new(&kept.counters, kept.seconds, kept.figures.cpu);
                }
                None => {
                    sum.rows.push(row);
                    sum.interval_devices.push(None);
                }
            }
        }
        sum.decisions.add(&clone.decisions);
        sum.read_latency.merge(&clone.read_latency);
        sum.write_latency.merge(&clone.write_latency);
        sum.sync_latency.merge(&clone.sync_latency);
        sum.sync_s = match (sum.sync_s, clone.sync_s) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        sum.bad_blocks.extend(clone.bad_blocks);
    }
    sum
}

/// The measured part of an outcome as its phase timing (the group's
/// first job's stands for the group under MPI).
fn started(outcome: &JobOutcome) -> PhaseTiming {
    let average = counters::average(&outcome.rows);
    match average {
        Some(average) => measured(outcome, &average),
        None => PhaseTiming::new(outcome.started, Duration::ZERO, Duration::ZERO),
    }
}

/// Runs `jobs` at once, each on its own threads and open file, and
/// returns their outcomes in order.
fn run_at_once(
    dir: BorrowedFd<'_>,
    jobs: &[&Job],
    files: &[FileSpec],
    laid_out: &[Option<LaidOut>],
) -> anyhow::Result<Vec<JobOutcome>> {
    let fds = jobs
        .iter()
        .map(|job| open_job(dir, job, &files[job.file]))
        .collect::<anyhow::Result<Vec<_>>>()?;
    std::thread::scope(|scope| {
        let running: Vec<_> = jobs
            .iter()
            .zip(&fds)
            .map(|(&job, fd)| {
                let file = &files[job.file];
                let keys = laid_out[job.file].as_ref().and_then(|f| f.keys.as_ref());
                scope.spawn(move || run_open(job, fd.as_fd(), file, keys, &mut |_| Ok(())))
            })
            .collect();
        running
            .into_iter()
            .map(|job| job.join().expect("I/O job thread panicked"))
            .collect()
    })
}

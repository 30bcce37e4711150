//! I/O pattern workloads (vdbench / fio style): one file per storage
//! definition, laid out once in the scratch directory, and jobs that read
//! and write it with a given transfer size, read %, seek %, threads,
//! O_DIRECT or page cache, for a duration or an amount, reporting one line
//! per interval and latency histograms per direction.
mod access;
mod board;
pub mod chance;
pub mod counters;
mod data;
mod engine;
pub mod fio;
mod group;
pub mod job;
mod outcome;
pub mod patterns;
pub mod text;
mod verify;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Range;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::{Duration, Instant};

pub use access::Decisions;
use anyhow::Context;
pub use counters::Row;
pub use job::{Engine, Job, Seek, Stop, SyncFlag, Warmup, XferSize};
use rustix::fs::{Mode, OFlags};

use super::{RunContext, Workload};
use crate::error::usage;
use crate::measure::{LatencyRecorder, PhaseTiming, devices};
use crate::result::WorkloadResult;
use crate::rng::{Random, WyRand};
use crate::size::format_bytes;
use engine::JobOutcome;
use outcome::{Ran, result};
pub use verify::BadBlock;
use verify::KeyMap;

/// A file the jobs work on (vdbench's storage definition).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FileSpec {
    /// Its name inside the scratch directory.
    pub name: String,
    pub size: u64,
    /// How it is made before the jobs run.
    #[serde(skip_serializing_if = "Layout::is_written")]
    pub layout: Layout,
}

/// How a file is made before the jobs run. fio writes a file only for a
/// job that reads it (or `overwrite=1`); a job that only writes gets it
/// allocated (`fallocate=native`, fio's default) or sparse
/// (`fallocate=none`), so its writes fill unwritten extents or holes, as
/// an application's appends and preallocated logs (etcd's WAL) do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    /// Written whole with stamped data (vdbench, fsbench's own jobs).
    #[default]
    Written,
    /// Its blocks reserved (fallocate), not written.
    Allocated,
    /// Its size set, no block reserved.
    Sparse,
}

impl Layout {
    fn is_written(&self) -> bool {
        *self == Layout::Written
    }
}

/// Files and the jobs to run on them, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub files: Vec<FileSpec>,
    pub jobs: Vec<Job>,
}

impl Plan {
    /// Checks every job against its file, and that verification is on for
    /// all jobs of a file or for none (a job without it would write blocks
    /// the others cannot check).
    pub fn check(&self) -> anyhow::Result<()> {
        if self.jobs.is_empty() {
            return usage("nothing to run: no jobs");
        }
        for file in &self.files {
            job::check_whole_sectors("file size", file.size)
                .map_err(|e| crate::error::UsageError(format!("{}: {e}", file.name)))?;
        }
        for job in &self.jobs {
            let known = |index: &usize| *index < self.files.len();
            let Some(file) = self
                .files
                .get(job.file)
                .filter(|_| job.clone_files.iter().all(known))
            else {
                return usage(format!("job {} names a file that does not exist", job.name));
            };
            job.check(file.size)
                .map_err(|e| crate::error::UsageError(format!("{}: {e}", job.name)))?;
        }
        for (index, file) in self.files.iter().enumerate() {
            let jobs: Vec<&Job> = self.jobs.iter().filter(|j| j.uses_file(index)).collect();
            if jobs.iter().any(|j| j.verify) && !jobs.iter().all(|j| j.verify) {
                return usage(format!(
                    "{}: verification must be on for every job on the file or for none",
                    file.name
                ));
            }
            if let Some(key) = self.key_block(index)
                && let Some(job) = jobs
                    .iter()
                    .find(|j| j.xfer.sizes().iter().any(|s| s % key != 0))
            {
                return usage(format!(
                    "{}: --verify needs every transfer size to be a multiple of the smallest one used on the file ({key} bytes)",
                    job.name
                ));
            }
        }
        Ok(())
    }

    /// The steps that run at once with step `step`: its neighbours of the
    /// same fio group, or itself alone.
    fn group_of(&self, step: usize) -> Range<usize> {
        let group = self.jobs[step].group;
        if group.is_none() {
            return step..step + 1;
        }
        let same = |j: &&Job| j.group == group;
        let before = self.jobs[..step].iter().rev().take_while(same).count();
        let after = self.jobs[step..].iter().take_while(same).count();
        step - before..step + after
    }

    /// The verification key block of file `index`: the smallest transfer
    /// size of its jobs; None when they do not verify.
    fn key_block(&self, index: usize) -> Option<u64> {
        self.jobs
            .iter()
            .filter(|j| j.uses_file(index) && j.verify)
            .map(|j| j.xfer.smallest())
            .min()
    }
}

/// What the workload tells its caller while it runs.
pub enum Event<'a> {
    /// A job is about to start.
    Start(&'a Job, &'a FileSpec),
    /// Something the user must know, e.g. a fallback to another engine.
    Warning(&'a str),
    /// An interval ended.
    Interval(&'a Row),
    /// The job ended: its average line (warm-up excluded).
    Average(&'a Row),
    /// `--verify` found a bad block (all are told after the job).
    BadBlock(&'a BadBlock),
    /// The job ended and was measured: what fio's reports need, which the
    /// result's summaries leave out (the whole latency histograms, the
    /// process's usage).
    Finished(Finished<'a>),
}

/// What a job measured, as it ended (`Event::Finished`).
pub struct Finished<'a> {
    pub job: &'a Job,
    /// Every interval, the warm-up included (marked).
    pub rows: &'a [Row],
    /// The measured part (warm-up left out).
    pub average: &'a Row,
    /// Response times of the measured part, per direction.
    pub read_latency: &'a LatencyRecorder,
    pub write_latency: &'a LatencyRecorder,
    /// The fdatasyncs every N writes, timed on their own.
    pub sync_latency: &'a LatencyRecorder,
    pub usage: &'a crate::measure::ProcessUsage,
    /// What the devices under the target did over the measured part.
    pub device: Option<&'a devices::Delta>,
}

pub type Sink = Box<dyn FnMut(Event<'_>) -> anyhow::Result<()>>;

/// A file in the scratch directory, with its verification state.
struct LaidOut {
    keys: Option<KeyMap>,
}

/// Runs a plan's jobs, one per step of a repetition, all in one scratch
/// directory, so each file is laid out once.
pub struct IoWorkload {
    plan: Plan,
    /// Each file once laid out.
    laid_out: Vec<Option<LaidOut>>,
    /// Marks verification data as this run's.
    tag: u32,
    sink: Sink,
    ram_bytes: u64,
    /// Results of jobs that ran at once with an earlier step's job (a
    /// fio group), by step.
    ran_at_once: BTreeMap<usize, WorkloadResult>,
    /// Under MPI: each rank runs its jobs on the files of a rank on the
    /// next host (`scale::next_host_peer`).
    cross_host: bool,
}

impl IoWorkload {
    /// `ram_bytes`: the host's RAM, to flag results whose data fits in it.
    pub fn new(plan: Plan, sink: Sink, ram_bytes: u64) -> anyhow::Result<IoWorkload> {
        plan.check()?;
        Ok(IoWorkload {
            laid_out: plan.files.iter().map(|_| None).collect(),
            tag: WyRand::new(plan.jobs[0].seed ^ u64::from(std::process::id())).next_u64() as u32,
            plan,
            sink,
            ram_bytes,
            ran_at_once: BTreeMap::new(),
            cross_host: false,
        })
    }

    /// Each rank's jobs run on the files a rank on the next host laid out
    /// (IOR's `-C`): no host reads what it wrote from its own cache.
    pub fn across_hosts(mut self) -> IoWorkload {
        self.cross_host = true;
        self
    }

    fn lay_out(&mut self, ctx: &RunContext<'_>, index: usize) -> anyhow::Result<()> {
        if self.laid_out[index].is_some() {
            return Ok(());
        }
        let file = &self.plan.files[index];
        let keys = self
            .plan
            .key_block(index)
            .map(|key| KeyMap::new(file.size, key, self.tag));
        ctx.progress.start(&format!(
            "Laying out {} ({})",
            file.name,
            format_bytes(file.size)
        ));
        let clock = Instant::now();
        data::lay_out(
            ctx.scratch.dir(),
            file,
            self.plan.jobs[0].seed,
            keys.as_ref(),
            ctx.progress,
        )?;
        ctx.progress.done(clock.elapsed().as_secs_f64());
        self.laid_out[index] = Some(LaidOut { keys });
        Ok(())
    }
}

impl Workload for IoWorkload {
    fn kind(&self) -> &'static str {
        "io"
    }

    fn planned_bytes(&self) -> u64 {
        self.plan.files.iter().map(|f| f.size).sum()
    }

    fn planned_files(&self) -> u64 {
        self.plan.files.len() as u64
    }

    /// One job per step.
    fn steps(&self) -> u32 {
        self.plan.jobs.len() as u32
    }

    /// A job bound by a duration runs its warm-up and duration (the data
    /// file's layout before the first job comes on top); a fio group runs
    /// at its first step, for as long as its longest job.
    fn planned_seconds(&self, step: u32) -> Option<f64> {
        let step = step as usize;
        self.plan.jobs.get(step)?;
        let group = self.plan.group_of(step);
        if group.start != step {
            return Some(0.0);
        }
        let times = self.plan.jobs[group].iter().map(Job::run_time);
        times
            .map(|time| time.map(|t| t.as_secs_f64()))
            .try_fold(0.0, |longest, time| Some(time?.max(longest)))
    }

    fn run(&mut self, ctx: &RunContext<'_>) -> anyhow::Result<WorkloadResult> {
        let step = ctx.step as usize;
        if let Some(result) = self.ran_at_once.remove(&step) {
            return Ok(result);
        }
        let group = self.plan.group_of(step);
        if group.len() > 1 || !self.plan.jobs[step].clone_files.is_empty() {
            return self.run_group(ctx, group);
        }
        let index = self.plan.jobs[step].file;
        self.lay_out(ctx, index)?;
        let file = &self.plan.files[index];
        let keys = self.laid_out[index].as_ref().and_then(|f| f.keys.as_ref());
        let mut notes = Vec::new();
        let job = usable(&self.plan.jobs[step], &mut self.sink, &mut notes)?;
        ctx.progress.show(&format!("Running {}", job.label()));
        let peer = match self.cross_host {
            true => Some(peer_directory(ctx)?),
            false => None,
        };
        if let Some((rank, _)) = &peer {
            notes.push(format!(
                "cross-host (IOR -C): each rank ran on the file a rank on the next host laid out; \
                 rank 0 on rank {rank}'s"
            ));
        }
        let dir = peer
            .as_ref()
            .map_or(ctx.scratch.dir(), |(_, fd)| fd.as_fd());
        let sink = &mut self.sink;
        // Under MPI the ranks run the job together, each on its own file
        // (or its peer's); the phase is the measured part (after the
        // warm-up).
        let (outcome, average, timing) = crate::scale::phase(
            |(_, _, timing)| *timing,
            || {
                let (outcome, average) = measure(dir, &job, file, keys, sink)?;
                let timing = measured(&outcome, &average);
                Ok((outcome, average, timing))
            },
        )?;
        let ran = Ran {
            job: &job,
            file,
            outcome,
            average,
            timing,
        };
        result(ran, notes, self.ram_bytes, ctx, &mut self.sink)
    }
}

/// The scratch directory of this rank's peer on the next host, opened,
/// with the peer's rank. Every rank laid out its files before the phase's
/// start, which every rank reaches only when all have.
fn peer_directory(ctx: &RunContext<'_>) -> anyhow::Result<(u32, OwnedFd)> {
    let peer = crate::scale::next_host_peer()?;
    let path = crate::scale::rank_scratch(ctx.scratch.path(), peer);
    let flags = OFlags::DIRECTORY | OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::open(&path, flags, Mode::empty())
        .with_context(|| format!("cannot open rank {peer}'s directory {}", path.display()))?;
    Ok((peer, fd))
}

/// The job as it will run: on the sync engine when io_uring is refused
/// here, which a warning and a note say.
fn usable<'a>(
    job: &'a Job,
    sink: &mut Sink,
    notes: &mut Vec<String>,
) -> anyhow::Result<Cow<'a, Job>> {
    let Some(reason) = engine::uring_refusal(job) else {
        return Ok(Cow::Borrowed(job));
    };
    let fallback = job.sync_fallback();
    crate::workload::threads::check_count(u64::from(fallback.threads)).map_err(|e| {
        crate::error::UsageError(format!(
            "{reason}, and the sync engine in its place would need {e:#}: lower --threads × --iodepth"
        ))
    })?;
    let warning = format!(
        "{reason}: running the sync engine with {} threads instead",
        fallback.threads
    );
    sink(Event::Warning(&warning))?;
    notes.push(warning);
    Ok(Cow::Owned(fallback))
}

/// The measured part of a job (its intervals after the warm-up) as a
/// phase timing; the metrics' `elapsed_s` is its `elapsed`.
fn measured(outcome: &JobOutcome, average: &Row) -> PhaseTiming {
    PhaseTiming::new(
        outcome.started + Duration::from_secs_f64(average.start_s),
        Duration::from_secs_f64(average.seconds),
        Duration::ZERO,
    )
    .with_device(outcome.device)
}

/// Opens the file for `job`, runs it with its events going to `sink`, and
/// returns what it measured and its average line.
fn measure(
    dir: BorrowedFd<'_>,
    job: &Job,
    file: &FileSpec,
    keys: Option<&KeyMap>,
    sink: &mut Sink,
) -> anyhow::Result<(JobOutcome, Row)> {
    let fd = open_job(dir, job, file)?;
    sink(Event::Start(job, file))?;
    let outcome = run_open(job, fd.as_fd(), file, keys, &mut |row| {
        sink(Event::Interval(row))
    })?;
    let average = conclude(job, &outcome, sink)?;
    Ok((outcome, average))
}

/// The job's file, checked for its O_DIRECT alignment and opened as the
/// job opens it.
fn open_job(dir: BorrowedFd<'_>, job: &Job, file: &FileSpec) -> anyhow::Result<OwnedFd> {
    data::check_direct_alignment(dir, &file.name, job)?;
    data::open_for(dir, &file.name, job)
}

/// Runs `job` on its open file; an O_DIRECT refusal is explained.
fn run_open(
    job: &Job,
    fd: BorrowedFd<'_>,
    file: &FileSpec,
    keys: Option<&KeyMap>,
    on_row: &mut dyn FnMut(&Row) -> anyhow::Result<()>,
) -> anyhow::Result<JobOutcome> {
    wait_to_start(job.start_delay)?;
    engine::run_job(job, fd, file.size, keys, on_row)
        .map_err(|e| data::explain_direct_error(e, job))
}

/// Sleeps a job's start delay, a stop signal ending the wait.
fn wait_to_start(delay: Duration) -> anyhow::Result<()> {
    let until = Instant::now() + delay;
    let left = || {
        until
            .checked_duration_since(Instant::now())
            .filter(|l| !l.is_zero())
    };
    while let Some(left) = left() {
        crate::interrupt::check()?;
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
    Ok(())
}

/// Tells the job's average line and bad blocks; its average, or why
/// there is none.
fn conclude(job: &Job, outcome: &JobOutcome, sink: &mut Sink) -> anyhow::Result<Row> {
    let average = counters::average(&outcome.rows);
    if let Some(average) = &average {
        sink(Event::Average(average))?;
    }
    if !outcome.bad_blocks.is_empty() {
        return verify_failure(job, &outcome.bad_blocks, sink);
    }
    let Some(average) = average else {
        return usage(format!(
            "{}: the job ended during its warm-up, so nothing was measured (use --warmup 0 or a longer run)",
            job.name
        ));
    };
    Ok(average)
}

/// Tells every bad block, then fails the run with a summary (vdbench
/// stops at the end of the run definition that found any).
fn verify_failure<T>(job: &Job, bad: &[BadBlock], sink: &mut Sink) -> anyhow::Result<T> {
    for block in bad {
        sink(Event::BadBlock(block))?;
    }
    let limit = if bad.len() >= job.verify_errors as usize {
        format!(
            ", the limit (--verify-errors {}); the run stopped there",
            job.verify_errors
        )
    } else {
        String::new()
    };
    anyhow::bail!(
        "verify: {} bad block{} in run {}{limit}; the first: {}",
        bad.len(),
        if bad.len() == 1 { "" } else { "s" },
        job.name,
        bad[0].describe()
    )
}

//! `fsbench io`: vdbench/fio-style I/O patterns on a file fsbench lays out
//! in its scratch directory: from flags, the built-in suite `patterns`, or
//! a vdbench parameter file.
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, SystemTime};

use clap::{Args, FromArgMatches, ValueEnum};

use super::{EntryInput, Kind, new_record, run_single};
use crate::cli::flags::{OneTarget, RunFlags, parse_flags, refuse_in_suite};
use crate::cli::output::{check_json_path, check_output_path, tables_stream};
use crate::compat::fio;
use crate::compat::vdbench::parmfile::{Overrides, ParmFile};
use crate::compat::vdbench::sink::{report_sink, warnings_sink};
use crate::error::usage;
use crate::measure::series::SteadyRule;
use crate::console::{Stream, emit};
use crate::size::parse_size;
use crate::storage::Target;
use crate::units::{size_arg, time_arg};
use crate::workload::Workload;
use crate::workload::pattern::job::{Arrival, DEFAULT_VERIFY_ERRORS, FLAG_JOB, parse_time};
use crate::workload::pattern::text::{parse_rate, parse_seek, parse_steady_slope, parse_xfer};
use crate::workload::pattern::{
    Engine, FileSpec, IoWorkload, Job, Layout, Plan, Seek, Stop, SyncFlag, Warmup, patterns,
};

pub const KIND: Kind = Kind {
    name: "io",
    about: "vdbench/fio-style I/O patterns: transfer size, read %, seek %, \
threads, O_DIRECT; interval lines and latency percentiles",
    under_mpi: true,
    takes_commands: false,
    apart: true,
    args: IoArgs::augment_args,
    run: |matches, json| IoArgs::from_arg_matches(matches)?.run(json),
    entry: suite_workload,
};

const IO_EXAMPLES: &str = "\
Examples:
  fsbench io /mnt/test                             30 s of 4k random reads, 1 thread, on a 1 GiB file
  fsbench io /mnt/test -b 1m --seek 0 --read 0     sequential 1 MiB writes
  fsbench io /mnt/test -b 4k --read 70 --seek 50 -j 8 --direct --duration 60s --warmup 5s
  fsbench io /mnt/test --suite patterns --duration 10s     seed 003's patterns, cached and O_DIRECT
  fsbench io --vdbench parmfile.txt                a vdbench parameter file (sd/wd/rd subset)
  fsbench io --fio jobs.fio                        a fio job file (files in its directory= or here)
  fsbench io --fio jobs.fio --lint                 what the job file really measures; runs nothing
  fsbench io --fio jobs.fio --fio-json out.json    and its results as fio's --output-format=json
  fsbench io /mnt/test -b 4k --read 50 --verify    check every block read: offset and write generation
  fsbench io /mnt/test -d 4s --job 'w:-b 1m --read 0 --seek 0' --job 'r:-b 4k'   two jobs, one file

Output: vdbench's interval lines (one per --interval) and the avg_F-L line,
which leaves out the warm-up (by default the first interval, as in vdbench);
for --fio, fio's report at the end (per job, Run status group, Disk stats).";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SuiteName {
    /// Seed 003's nine access patterns with the page cache, then O_DIRECT.
    Patterns,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum EngineArg {
    Sync,
    #[value(name = "io_uring")]
    IoUring,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ArrivalArg {
    /// Exponential gaps (Poisson arrivals, bursty): vdbench's default.
    Exponential,
    /// Gaps uniform on [0, 2 × mean].
    Uniform,
    /// Equal gaps (vdbench's deterministic).
    Fixed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SyncArg {
    /// O_DSYNC (vdbench's o_sync/o_dsync on Linux).
    Dsync,
    /// O_SYNC.
    Sync,
}

#[derive(Debug, Args)]
#[command(after_help = IO_EXAMPLES)]
pub struct IoArgs {
    // With --vdbench, the target defaults to the directory of the luns.
    #[command(flatten)]
    target: OneTarget,
    /// Run a vdbench parameter file (sd=/wd=/rd= subset; luns become files
    /// in the scratch directory).
    #[arg(long, value_name = "PARMFILE", conflicts_with_all = ["suite", "jobs", "size", "xfersize", "read", "seek", "threads", "engine", "iodepth", "direct", "sync", "fdatasync_every", "end_fsync", "no_end_sync", "until_steady", "amount", "rate"])]
    vdbench: Option<PathBuf>,
    /// Run a fio job file; repeat for several, run in order ([global],
    /// [jobs], numjobs clones; files go in directory= or the target);
    /// prints fio's report.
    #[arg(long, value_name = "JOBFILE", conflicts_with_all = ["vdbench", "suite", "jobs", "size", "xfersize", "read", "seek", "threads", "engine", "iodepth", "direct", "sync", "fdatasync_every", "end_fsync", "no_end_sync", "until_steady", "amount", "rate", "duration", "warmup", "interval"])]
    fio: Vec<PathBuf>,
    /// With --fio: print what the linter finds in the job files and run
    /// nothing.
    #[arg(long, requires = "fio")]
    lint: bool,
    /// With --fio: also write the results in fio's --output-format=json
    /// shape to FILE, for the tools that read fio's JSON.
    #[arg(long, value_name = "FILE")]
    fio_json: Option<PathBuf>,
    /// Run a built-in suite.
    #[arg(long, value_enum, conflicts_with_all = ["jobs", "read", "seek", "direct", "amount"])]
    suite: Option<SuiteName>,
    /// A named job on the one data file, in order; repeat for several.
    /// FLAGS are this command's job flags (-b, --read, --seek, --direct,
    /// --sync, --no-end-sync, --duration, ...) and override the ones given
    /// outside any --job, which apply to every job. Results are named
    /// after NAME.
    #[arg(long = "job", id = "jobs", value_name = "NAME:FLAGS")]
    jobs: Vec<String>,
    /// Size of the data file fsbench creates [default: 1g].
    #[arg(short = 's', long, value_name = "SIZE", value_parser = size_arg)]
    size: Option<String>,
    #[command(flatten)]
    job: JobFlags,
    /// Seed of the random draws (default: from the clock; the result
    /// records it).
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Stamp every written block with its offset and write generation and
    /// check them on every read (slower; finds lost writes).
    #[arg(long)]
    verify: bool,
    /// With --verify: stop a run after N bad blocks (vdbench's
    /// data_errors); all of them are reported [default: 50].
    #[arg(long, value_name = "N", requires = "verify")]
    verify_errors: Option<u32>,
    /// Under MPI: each rank runs its jobs on the file a rank on the next
    /// host laid out (IOR's -C), so no host reads what it wrote from its
    /// own cache.
    #[arg(long, conflicts_with_all = ["vdbench", "fio", "verify"])]
    cross_host: bool,
    #[command(flatten)]
    run: RunFlags,
}

/// What one job does: the flags a command line gives its job (or a
/// suite's template), and each `--job NAME:FLAGS` its own. Defaults are
/// applied when the job is built, so a `--job` can tell what it set
/// from what it inherits.
#[derive(Debug, Clone, Default, Args)]
pub struct JobFlags {
    /// Transfer size, or a mix like 4k:30,64k:70 (size:percent) [default: 4k].
    #[arg(short = 'b', long, value_name = "SIZE[:PCT,...]", value_parser = xfer_arg)]
    xfersize: Option<String>,
    /// Percent of I/Os that are reads [default: 100].
    #[arg(long, value_name = "PCT")]
    read: Option<f64>,
    /// Percent of I/Os that seek to a random block: 0/seq = sequential,
    /// 100/random, eof = one sequential pass [default: random].
    #[arg(long, value_name = "PCT|seq|random|eof")]
    seek: Option<String>,
    /// Threads, all sharing one sequential position; at most 1024, and
    /// threads × --iodepth at most 1024 when io_uring falls back to the
    /// sync engine [default: 1; suite: 8].
    #[arg(short = 'j', long, value_name = "N")]
    threads: Option<u32>,
    /// I/O engine [default: sync].
    #[arg(long, value_enum)]
    engine: Option<EngineArg>,
    /// I/Os in flight per thread (io_uring engine) [default: 1].
    #[arg(long, value_name = "N")]
    iodepth: Option<u32>,
    /// O_DIRECT: bypass the page cache (aligned buffers).
    #[arg(long)]
    direct: bool,
    /// Open with O_DSYNC or O_SYNC.
    #[arg(long, value_enum)]
    sync: Option<SyncArg>,
    /// fdatasync after every N writes of each thread [default: 0, never].
    #[arg(long, value_name = "N")]
    fdatasync_every: Option<u32>,
    /// fsync the file when the job's I/O ends, inside its measured time
    /// (fio's end_fsync): the write rate then includes the flush. The
    /// default now; kept so that older command lines work, and to undo a
    /// shared --no-end-sync in a --job.
    #[arg(long, conflicts_with = "no_end_sync")]
    end_fsync: bool,
    /// Leave out the closing fsync of a job that writes: its time is then
    /// the page cache's (flagged not_yet_on_device where the device did
    /// not see the writes).
    #[arg(long)]
    no_end_sync: bool,
    /// End the job once its MiB/s is steady (over the last 10 intervals
    /// the fitted line changes by under SLOPE % of their mean), with
    /// --duration the most it runs [SLOPE default: 10%].
    #[arg(long, value_name = "SLOPE", num_args = 0..=1, require_equals = true, default_missing_value = "10%")]
    until_steady: Option<String>,
    /// Measured time, after the warm-up [default: 30s; suite: 5s per run].
    #[arg(short = 'd', long, value_name = "TIME", value_parser = time_arg)]
    duration: Option<String>,
    /// Transfer this many bytes after the warm-up instead of a duration.
    #[arg(long, value_name = "SIZE", conflicts_with = "duration", value_parser = size_arg)]
    amount: Option<String>,
    /// Time before the measurement, shown but left out of the averages;
    /// without it the first interval is left out (vdbench's rule).
    #[arg(short = 'w', long, value_name = "TIME", value_parser = time_arg)]
    warmup: Option<String>,
    /// Reporting interval [default: 1s].
    #[arg(short = 'i', long, value_name = "TIME", value_parser = time_arg)]
    interval: Option<String>,
    /// Total I/Os per second, or `max` [default: max].
    #[arg(long, value_name = "IOPS|max")]
    rate: Option<String>,
    /// Spacing of the I/Os under --rate (vdbench's distribution=)
    /// [default: exponential].
    #[arg(long, value_enum)]
    arrival: Option<ArrivalArg>,
}

impl JobFlags {
    /// These flags over `base`: what they set wins, the rest is `base`'s.
    /// A duration or an amount replaces both (one says when the job stops).
    fn over(self, base: &JobFlags) -> JobFlags {
        let base = base.clone();
        let (duration, amount) = match self.duration.is_some() || self.amount.is_some() {
            true => (self.duration, self.amount),
            false => (base.duration, base.amount),
        };
        JobFlags {
            xfersize: self.xfersize.or(base.xfersize),
            read: self.read.or(base.read),
            seek: self.seek.or(base.seek),
            threads: self.threads.or(base.threads),
            engine: self.engine.or(base.engine),
            iodepth: self.iodepth.or(base.iodepth),
            direct: self.direct || base.direct,
            sync: self.sync.or(base.sync),
            fdatasync_every: self.fdatasync_every.or(base.fdatasync_every),
            // A job's own choice of closing sync wins over the shared one.
            end_fsync: self.end_fsync || (base.end_fsync && !self.no_end_sync),
            no_end_sync: self.no_end_sync || (base.no_end_sync && !self.end_fsync),
            until_steady: self.until_steady.or(base.until_steady),
            duration,
            amount,
            warmup: self.warmup.or(base.warmup),
            interval: self.interval.or(base.interval),
            rate: self.rate.or(base.rate),
            arrival: self.arrival.or(base.arrival),
        }
    }
}

/// Clap's check of `-b`: one size or a mix, parsed as the job will parse it.
fn xfer_arg(text: &str) -> Result<String, String> {
    parse_xfer(text)
        .map(|_| text.to_string())
        .map_err(|e| e.to_string())
}

/// `--job NAME:FLAGS`: the job's name and its flags (split at blanks, as
/// a suite's `args` line), or a one-line reason it is malformed.
fn parse_job(spec: &str) -> anyhow::Result<(String, JobFlags)> {
    let Some((name, flags)) = spec.split_once(':') else {
        return usage(format!(
            "--job '{spec}': give NAME:FLAGS, e.g. --job 'seq-write:-b 1m --read 0 --seek 0'"
        ));
    };
    let name = name.trim();
    let fine = |c: char| c.is_ascii_alphanumeric() || "-_.".contains(c);
    if name.is_empty() || !name.chars().all(fine) {
        return usage(format!(
            "--job '{spec}': the name '{name}' must be letters, digits, '-', '_' or '.'"
        ));
    }
    let tokens: Vec<String> = flags.split_whitespace().map(str::to_string).collect();
    let flags = parse_flags::<JobFlags>(&tokens)
        .map_err(|e| crate::error::UsageError(format!("--job {name}: {e}")))?;
    Ok((name.to_string(), flags))
}

/// File name of the data file in flag and suite mode.
const DATA_FILE: &str = "io.dat";
const DEFAULT_SIZE: u64 = 1 << 30;
const DEFAULT_DURATION: Duration = Duration::from_secs(30);
const SUITE_DURATION: Duration = Duration::from_secs(5);
/// Seed 003 ran vdbench with its defaults: 4k transfers, 8 threads.
const SUITE_THREADS: u32 = 8;

impl IoArgs {
    /// The plan, the directory to run it in and, for job files, what
    /// fio's reports say of their jobs.
    fn plan(&self) -> anyhow::Result<(Plan, Target, Option<fio::Known>)> {
        if let Some(path) = &self.vdbench {
            let (plan, target) = self.vdbench_plan(path)?;
            return Ok((plan, target, None));
        }
        if !self.fio.is_empty() {
            let loaded = self.fio_jobs(crate::storage::env::probe_host().ram_bytes)?;
            for finding in fio::lint::merged(&loaded.findings) {
                let line = format!("fsbench: warning: fio lint: {finding}\n");
                emit(Stream::Stderr, &line)?;
            }
            let target = match (self.target.spec(), &loaded.directory) {
                (Some(spec), _) => spec.to_string(),
                (None, Some(directory)) => directory.clone(),
                (None, None) => ".".into(),
            };
            return Ok((loaded.plan, Target::parse(&target)?, Some(loaded.known)));
        }
        let Some(target) = self.target.spec() else {
            return usage("give the directory to test (fsbench io DIR ...)");
        };
        Ok((self.flag_plan()?, Target::parse(target)?, None))
    }

    /// A job file's run as fio reports it: its terminal report (one per
    /// repetition), and `--fio-json`'s file.
    fn fio_report(
        &self,
        to: Stream,
        reports: &[fio::report::JobReport],
        described: &fio::report::Described,
        target: &Path,
    ) -> anyhow::Result<()> {
        let disks = fio::report::disks(target);
        let now = chrono::Local::now();
        for pass in reports.chunk_by(|a, b| a.repetition == b.repetition) {
            let document = fio::report::document(pass, described, &disks, now);
            let jobs: Vec<u32> = pass.iter().map(fio::report::JobReport::jobs).collect();
            let text = fio::printout::text(&document, &jobs, std::process::id());
            emit(to, &format!("\n{text}"))?;
            if let Some(path) = &self.fio_json {
                fio::report::write(path, &document)?;
            }
        }
        Ok(())
    }

    /// `--fio-json FILE`: only with a job file's one run, into a file that
    /// can be written (checked before the run, whose results it holds).
    fn check_fio_json(&self) -> anyhow::Result<()> {
        let Some(path) = &self.fio_json else {
            return Ok(());
        };
        if self.fio.is_empty() {
            return usage("--fio-json FILE writes a fio job file's results: give --fio JOBFILE");
        }
        if self.lint {
            return usage("--fio-json with --lint: --lint runs nothing, so there is nothing to write");
        }
        if self.run.repeat != 1 {
            return usage("--fio-json writes one run, as fio does: leave out --repeat");
        }
        if crate::scale::size() > 1 {
            return usage("--fio-json writes one process's run: run it without mpirun");
        }
        check_output_path("--fio-json", path)
    }

    /// The plan of the flags (and `--suite` or `--job`s): one data file
    /// all jobs share, laid out once.
    fn flag_plan(&self) -> anyhow::Result<Plan> {
        let jobs = match self.suite {
            Some(SuiteName::Patterns) => patterns::jobs(&self.job("suite".into(), &self.job)?),
            None if self.jobs.is_empty() => vec![self.job(FLAG_JOB.into(), &self.job)?],
            None => self.named_jobs()?,
        };
        let size = match &self.size {
            Some(text) => parse_size(text, 1)?,
            None => DEFAULT_SIZE,
        };
        let files = vec![FileSpec {
            name: DATA_FILE.into(),
            size,
            layout: Layout::Written,
        }];
        Ok(Plan { files, jobs })
    }

    fn vdbench_plan(&self, path: &Path) -> anyhow::Result<(Plan, Target)> {
        let parsed = ParmFile::read(path)?;
        let overrides = Overrides {
            elapsed: self.job.duration.as_deref().map(parse_time).transpose()?,
            interval: self.job.interval.as_deref().map(parse_time).transpose()?,
            warmup: warmup(&self.job)?,
            verify: self.verify || parsed.validate,
            verify_errors: self
                .verify_errors
                .or(parsed.data_errors)
                .unwrap_or(DEFAULT_VERIFY_ERRORS),
            seed: self.seed(),
        };
        let (plan, lun_dir) = parsed.plan(&overrides)?;
        let target = match self.target.spec() {
            Some(spec) => Target::parse(spec)?,
            None => Target::parse(&lun_dir.display().to_string())?,
        };
        Ok((plan, target))
    }

    /// The `--fio` job files' plan and the linter's findings.
    fn fio_jobs(&self, ram_bytes: u64) -> anyhow::Result<fio::Loaded> {
        let overrides = fio::Overrides {
            seed: self.seed,
            clock_seed: self.seed(),
            verify: self.verify,
        };
        fio::load(&self.fio, &overrides, ram_bytes)
    }

    /// `--lint`: the findings on stdout, one a line.
    fn lint(&self) -> anyhow::Result<()> {
        let loaded = self.fio_jobs(crate::storage::env::probe_host().ram_bytes)?;
        let merged = fio::lint::merged(&loaded.findings);
        let mut text: String = merged.iter().map(|f| format!("{f}\n")).collect();
        if loaded.findings.is_empty() {
            text = "fio lint: no findings\n".into();
        }
        emit(Stream::Stdout, &text)
    }

    /// Every `--job`, its own flags over the shared ones, in order; a
    /// name used twice would make two results of one name.
    fn named_jobs(&self) -> anyhow::Result<Vec<Job>> {
        let mut jobs: Vec<Job> = Vec::new();
        for spec in &self.jobs {
            let (name, flags) = parse_job(spec)?;
            if jobs.iter().any(|j| j.name == name) {
                return usage(format!("--job {name}: the name is used twice"));
            }
            let job = self
                .job(name.clone(), &flags.over(&self.job))
                .map_err(|e| crate::error::UsageError(format!("--job {name}: {e:#}")))?;
            jobs.push(job);
        }
        Ok(jobs)
    }

    /// The job `flags` describe, named `name` ("suite": the template of
    /// `--suite`), with the defaults for what they leave out.
    fn job(&self, name: String, flags: &JobFlags) -> anyhow::Result<Job> {
        let suite = self.suite.is_some();
        let duration = match &flags.duration {
            Some(text) => parse_time(text)?,
            None if suite => SUITE_DURATION,
            None => DEFAULT_DURATION,
        };
        let seek = parse_seek(flags.seek.as_deref().unwrap_or("random"))?;
        Ok(Job {
            name,
            loops: Vec::new(),
            file: 0,
            xfer: parse_xfer(flags.xfersize.as_deref().unwrap_or("4k"))?,
            read_pct: flags.read.unwrap_or(100.0),
            seek,
            threads: flags
                .threads
                .unwrap_or(if suite { SUITE_THREADS } else { 1 }),
            engine: match flags.engine.unwrap_or(EngineArg::Sync) {
                EngineArg::Sync => Engine::Sync,
                EngineArg::IoUring => Engine::IoUring,
            },
            queue_depth: flags.iodepth.unwrap_or(1),
            direct: flags.direct,
            sync: match flags.sync {
                None => SyncFlag::None,
                Some(SyncArg::Dsync) => SyncFlag::Dsync,
                Some(SyncArg::Sync) => SyncFlag::Sync,
            },
            fdatasync_every: flags.fdatasync_every.unwrap_or(0),
            end_fsync: !flags.no_end_sync,
            steady: steady_rule(flags)?,
            until_steady: flags.until_steady.is_some(),
            start_delay: Duration::ZERO,
            stop: match &flags.amount {
                Some(text) => Stop::Amount(parse_size(text, 1)?),
                None => Stop::Duration(duration),
            },
            // An amount or a single pass counts from the start unless a
            // warm-up is asked for; a timed run leaves out its first interval.
            warmup: warmup(flags)?.unwrap_or(if flags.amount.is_some() || seek == Seek::Eof {
                Warmup::Time(Duration::ZERO)
            } else {
                Warmup::FirstInterval
            }),
            interval: match &flags.interval {
                Some(text) => parse_time(text)?,
                None => Duration::from_secs(1),
            },
            rate: parse_rate(flags.rate.as_deref())?,
            arrival: match flags.arrival.unwrap_or(ArrivalArg::Exponential) {
                ArrivalArg::Exponential => Arrival::Exponential,
                ArrivalArg::Uniform => Arrival::Uniform,
                ArrivalArg::Fixed => Arrival::Fixed,
            },
            seed: self.seed(),
            verify: self.verify,
            verify_errors: self.verify_errors.unwrap_or(DEFAULT_VERIFY_ERRORS),
            notes: Vec::new(),
            group: None,
            clone_files: Vec::new(),
            fio: None,
            clone_draws: Vec::new(),
        })
    }

    fn seed(&self) -> u64 {
        self.seed.unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        })
    }
}

/// The steady-state rule: `--until-steady=SLOPE`'s limit, or the default.
fn steady_rule(flags: &JobFlags) -> anyhow::Result<SteadyRule> {
    let slope = match &flags.until_steady {
        Some(text) => parse_steady_slope(text)?,
        None => SteadyRule::default().slope,
    };
    Ok(SteadyRule {
        slope,
        ..SteadyRule::default()
    })
}

/// `--warmup`, when given.
fn warmup(flags: &JobFlags) -> anyhow::Result<Option<Warmup>> {
    Ok(flags
        .warmup
        .as_deref()
        .map(parse_time)
        .transpose()?
        .map(Warmup::Time))
}

/// The io workload of a suite entry (`fsbench run`): `args` are
/// `fsbench io`'s flags without the target, e.g. `-b 4k --read 100
/// --duration 5s` or `--suite patterns --duration 2s`. It runs one job per
/// step; its interval lines are not printed (the suite reports), but
/// warnings and bad blocks go to stderr.
fn suite_workload(input: &EntryInput<'_>) -> anyhow::Result<Box<dyn Workload>> {
    let io: IoArgs = parse_flags(input.args)?;
    refuse_in_suite(
        "TARGET",
        io.target.spec().is_some(),
        "the targets are fsbench run's --target",
    )?;
    refuse_in_suite("--vdbench", io.vdbench.is_some(), "give the flags instead")?;
    refuse_in_suite("--lint", io.lint, "run fsbench io --fio FILE --lint")?;
    refuse_in_suite(
        "--fio-json",
        io.fio_json.is_some(),
        "run fsbench io --fio FILE --fio-json OUT",
    )?;
    io.run.refuse_in_suite()?;
    // A job file's directory= gives way to the run's targets.
    let plan = match io.fio.is_empty() {
        true => io.flag_plan()?,
        false => io.fio_jobs(input.host.ram_bytes)?.plan,
    };
    let workload = IoWorkload::new(plan, warnings_sink(), input.host.ram_bytes)?;
    Ok(Box::new(io.placed(workload)?))
}

impl IoArgs {
    /// The workload, reading across hosts if asked (refused before
    /// anything runs where there is no other host).
    fn placed(&self, workload: IoWorkload) -> anyhow::Result<IoWorkload> {
        match (self.cross_host, crate::scale::size()) {
            (false, _) => Ok(workload),
            (true, 1) => usage(
                "--cross-host reads another host's files: run under mpirun with ranks on two hosts or more",
            ),
            (true, _) => Ok(workload.across_hosts()),
        }
    }

    fn run(self, json: Option<&Path>) -> anyhow::Result<()> {
        self.check_fio_json()?;
        if self.lint {
            return self.lint();
        }
        let how = self.run.single()?;
        let (plan, target, known) = self.plan()?;
        check_json_path(json)?;
        let report_to = tables_stream(json);
        let averages = Rc::new(RefCell::new(Vec::new()));
        let jobs_per_pass = plan.jobs.len();
        let fio_reports = Rc::new(RefCell::new(Vec::new()));
        // A job file's run reports as fio does, at the end; the other
        // runs as vdbench does, as they go.
        let sink = match &known {
            Some(known) => fio::report::collecting(
                warnings_sink(),
                known.described.clone(),
                fio_reports.clone(),
            ),
            None => report_sink(report_to, self.run.quiet, averages.clone()),
        };
        let record = new_record();
        let target_path = target.path.clone();
        let mut workload = self.placed(IoWorkload::new(plan, sink, record.host.ram_bytes)?)?;
        let (mut measured, mut told) = (Vec::new(), Vec::new());
        run_single(record, target, &mut workload, how, json, |result| {
            if let Some(known) = &known {
                measured.extend(fio::lint::measured(&known.jobs, result, &mut told));
            }
            Ok(())
        })?;
        if let Some(known) = &known {
            let reports = fio_reports.borrow();
            self.fio_report(report_to, &reports, &known.described, &target_path)?;
            for finding in fio::lint::merged(&measured) {
                let line = format!("fsbench: warning: fio lint (measured): {finding}\n");
                emit(Stream::Stderr, &line)?;
            }
        }
        if self.suite.is_some() {
            for pass in averages.borrow().chunks(jobs_per_pass) {
                let rows = pass.iter().map(|(name, f)| (name.as_str(), f));
                emit(report_to, &format!("\n{}", patterns::summary_table(rows)))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite(args: &str) -> anyhow::Result<Box<dyn Workload>> {
        super::super::build_for_test("io", args)
    }

    #[test]
    fn a_suite_entry_gives_one_step_per_job() {
        let single = suite("-b 4k --read 100 --seek random --duration 5s").unwrap();
        assert_eq!((single.kind(), single.steps()), ("io", 1));
        assert_eq!(single.planned_bytes(), DEFAULT_SIZE);
        let patterns = suite("--suite patterns --duration 2s -s 64m").unwrap();
        assert_eq!(patterns.steps(), 18);
        assert_eq!(patterns.planned_bytes(), 64 << 20);
        let fio = suite("--fio examples/fio/kubestr.fio").unwrap();
        assert_eq!((fio.steps(), fio.planned_files()), (4, 4));
    }

    #[test]
    fn a_suite_entry_refuses_what_does_not_belong_there() {
        let cases = [
            ("--bogus 3", "'--bogus'"),
            ("--vdbench parm.txt", "--vdbench"),
            ("/mnt/x -b 4k", "TARGET is not for suites"),
            ("--repeat 3", "--repeat"),
            ("-b 1000 --direct", "multiple of 512"),
            (
                "--fio examples/fio/kubestr.fio --lint",
                "--lint is not for suites",
            ),
            ("--fio examples/fio/missing.fio", "missing.fio"),
        ];
        for (args, needle) in cases {
            let err = suite(args).err().expect(args).to_string();
            assert!(err.contains(needle) && !err.contains('\n'), "{args}: {err}");
        }
    }

    #[test]
    fn a_malformed_job_is_refused_in_one_line() {
        let cases: [(&[&str], &str); 8] = [
            (&["--job", "seq"], "--job 'seq': give NAME:FLAGS"),
            (&["--job", ":-b 4k"], "the name '' must be"),
            (&["--job", "a/b:-b 4k"], "the name 'a/b' must be"),
            (
                &["--job", "w:--bogus"],
                "--job w: unexpected argument '--bogus'",
            ),
            (
                &["--job", "w:--size 1g"],
                "--job w: unexpected argument '--size'",
            ),
            (&["--job", "w:-b 1000 --direct"], "w: transfer size"),
            (
                &["--job", "w:-b 4k", "--job", "w:-b 8k"],
                "--job w: the name is used twice",
            ),
            (
                &["--job", "w:-b 4k", "--suite", "patterns"],
                "cannot be used with",
            ),
        ];
        for (args, needle) in cases {
            let err = super::super::build_list_for_test("io", args)
                .err()
                .expect(needle);
            let err = err.to_string();
            assert!(
                err.contains(needle) && !err.contains('\n'),
                "{args:?}: {err}"
            );
        }
    }

    #[test]
    fn named_jobs_share_one_file_and_override_the_shared_flags() {
        let args = [
            "-s",
            "64m",
            "--duration",
            "2s",
            "--direct",
            "--no-end-sync",
            "--job",
            "w:-b 1m --read 0 --seek 0 --end-fsync",
            "--job",
            "r:--duration 3s --until-steady=5%",
        ];
        let io = super::super::build_list_for_test("io", &args).unwrap();
        assert_eq!((io.steps(), io.planned_files()), (2, 1));
        let plan = plan_of(&args);
        let [w, r] = &plan.jobs[..] else {
            panic!("{:?}", plan.jobs)
        };
        assert_eq!((w.label(), r.label()), ("w".to_string(), "r".to_string()));
        assert_eq!(
            (w.xfer.largest(), w.read_pct, w.end_fsync),
            (1 << 20, 0.0, true)
        );
        assert_eq!(
            (r.xfer.largest(), r.read_pct, r.end_fsync),
            (4096, 100.0, false)
        );
        assert!(r.until_steady && !w.until_steady);
        assert_eq!((r.steady.slope, w.steady.slope), (0.05, 0.1));
        assert!(w.direct && r.direct, "shared flags apply to every job");
        assert_eq!(w.stop, Stop::Duration(Duration::from_secs(2)));
        assert_eq!(r.stop, Stop::Duration(Duration::from_secs(3)));
    }

    fn plan_of(args: &[&str]) -> Plan {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        parse_flags::<IoArgs>(&args).unwrap().flag_plan().unwrap()
    }

    /// The quick suite's io jobs: one file, reads past the page cache, a
    /// flushed streaming write and an O_DSYNC write (never flagged
    /// writes_cached: `Job::flushes_writes`).
    #[test]
    fn the_quick_suite_runs_its_io_jobs_on_one_file_past_the_page_cache() {
        let quick = crate::suite::Suite::load("quick").unwrap();
        let entries: Vec<_> = quick.workloads.iter().filter(|w| w.kind == "io").collect();
        assert_eq!(entries.len(), 1, "one io entry, so one layout");
        let args = entries[0].scaled_args(1.0).unwrap();
        let plan = parse_flags::<IoArgs>(&args).unwrap().flag_plan().unwrap();
        assert_eq!(plan.files.len(), 1);
        let names: Vec<String> = plan.jobs.iter().map(Job::label).collect();
        assert_eq!(
            names,
            [
                "seq-write-1m",
                "seq-read-1m",
                "rand-read-4k",
                "sync-write-4k"
            ]
        );
        assert!(plan.jobs.iter().all(|j| j.file == 0));
        assert!(plan.jobs.iter().filter(|j| j.reads()).all(|j| j.direct));
        assert!(
            plan.jobs
                .iter()
                .filter(|j| j.writes())
                .all(Job::flushes_writes)
        );
        let synced = &plan.jobs[3];
        assert_eq!(
            (synced.sync, synced.xfer.largest()),
            (SyncFlag::Dsync, 4096)
        );
    }
}

//! fio jobs into fsbench's: one fsbench job per `[job]` and clone
//! (`numjobs`: each clone one thread on its own file, or on the shared
//! `filename=`; under `group_reporting` the clones are one job whose
//! result adds theirs up), `time_based` + `runtime` as a duration,
//! otherwise `size` × `loops` bytes per clone, `ramp_time` as the warm-up,
//! and files named as fio names them (`$jobname.$jobnum.$filenum`, where
//! `$jobnum` is the clone's number, or the shared `filename=`).
use std::time::Duration;

use super::jobfile::FioJob;
use crate::error::{UsageError, usage};
use crate::workload::pattern::fio::{Direction, FioDraws, FioFile, Seeds, Service};
use crate::workload::pattern::job::{Arrival, DEFAULT_VERIFY_ERRORS, check_whole_sectors};
use crate::workload::pattern::{Engine, FileSpec, Job, Layout, Plan, Stop, Warmup, XferSize};

/// fio's seed when `randrepeat` is on (its default): the same random
/// offsets every run.
const FIO_RANDSEED: u64 = 0xb189_9bed;

/// fio's default `randseed`.
const FIO_DEFAULT_RANDSEED: u64 = 0x89;

/// The run-wide settings the command line adds.
#[derive(Debug, Clone, Copy, Default)]
pub struct Overrides {
    /// `--seed`: wins over randseed and randrepeat.
    pub seed: Option<u64>,
    /// The seed when fio would draw a fresh one (randrepeat=0).
    pub clock_seed: u64,
    /// `--verify`.
    pub verify: bool,
}

/// A job file's plan, the directory its files go in (`directory=` of the
/// first job that gives one), and for each planned job the index of the
/// fio job it comes from.
pub struct Planned {
    pub plan: Plan,
    pub directory: Option<String>,
    pub origins: Vec<usize>,
}

/// The plan of `jobs`; `first_thread` is fio's thread number of their
/// first clone (1 for a run's first job file: fio numbers every clone of
/// every job, and seeds each from its number).
pub fn plan(jobs: &[FioJob], o: &Overrides, first_thread: u64) -> anyhow::Result<Planned> {
    let mut files: Vec<FileSpec> = Vec::new();
    let mut planned = Vec::new();
    let mut origins = Vec::new();
    let groups = groups(jobs);
    let mut thread = first_thread;
    for (index, job) in jobs.iter().enumerate() {
        let size = job
            .filesize
            .or(job.size)
            .ok_or_else(|| UsageError(format!("{}: [{}]: size= is needed (fsbench creates the file; fio would size it from the device)", job.at, job.name)))?;
        let layout = layout_for(job, o);
        let clone_files: Vec<usize> = (0..job.numjobs)
            .map(|clone| file_of(&mut files, file_name(job, clone), size, layout))
            .collect();
        let draws: Vec<FioDraws> = (clone_files.iter().enumerate())
            .map(|(clone, &file)| fio_draws(job, o, thread + clone as u64, file, size))
            .collect();
        thread += u64::from(job.numjobs);
        let mut fsbench = job_of(job, clone_files[0], groups[index], o)?;
        fsbench.notes.extend(group_note(jobs, &groups, index));
        let clones = match job.group_reporting && job.numjobs > 1 {
            true => vec![Job {
                clone_files,
                fio: draws.first().cloned(),
                clone_draws: draws,
                ..fsbench
            }],
            false => clones(&fsbench, &clone_files, draws),
        };
        origins.extend(clones.iter().map(|_| index));
        planned.extend(clones);
    }
    // A file several jobs use is as large as the largest one's.
    for job in &mut planned {
        let draws = job.fio.iter_mut().chain(&mut job.clone_draws);
        for file in draws.flat_map(|d| &mut d.files) {
            file.size = files[file.file].size;
        }
    }
    Ok(Planned {
        plan: Plan {
            files,
            jobs: planned,
        },
        directory: jobs.iter().find_map(|j| j.directory.clone()),
        origins,
    })
}

/// How fio makes the job's file: written whole for a job that reads it,
/// verifies it or asks (overwrite=1); otherwise as fallocate= says.
fn layout_for(job: &FioJob, o: &Overrides) -> Layout {
    match job.reads() > 0.0 || job.verify || o.verify || job.overwrite {
        true => Layout::Written,
        false => job.fallocate,
    }
}

/// The index of the file `name`, added to `files` unless a job before
/// named it (a shared file is as large as its largest job needs, and
/// written whole if any of its jobs needs it so).
fn file_of(files: &mut Vec<FileSpec>, name: String, size: u64, layout: Layout) -> usize {
    match files.iter().position(|f| f.name == name) {
        Some(shared) => {
            let file = &mut files[shared];
            file.size = file.size.max(size);
            if layout == Layout::Written {
                file.layout = layout;
            }
            shared
        }
        None => {
            files.push(FileSpec { name, size, layout });
            files.len() - 1
        }
    }
}

/// A job's clones, each its own job and result, on its file with its
/// draws; named apart in fsbench's reports (`clone=N`), all `job`'s name
/// for fio's.
fn clones(job: &Job, files: &[usize], draws: Vec<FioDraws>) -> Vec<Job> {
    let clone = |(number, (&file, draws)): (usize, (&usize, FioDraws))| Job {
        file,
        loops: match files.len() {
            1 => Vec::new(),
            _ => vec![("clone".into(), number.to_string())],
        },
        fio: Some(draws),
        ..job.clone()
    };
    files.iter().zip(draws).enumerate().map(clone).collect()
}

/// fio's draws of one clone of `job`, fio's thread `thread`, on the plan's
/// file `file` of `size` bytes.
fn fio_draws(job: &FioJob, o: &Overrides, thread: u64, file: usize, size: u64) -> FioDraws {
    let direction = match (job.mixed, job.reads()) {
        (true, read_pct) => Direction::Mix(read_pct as u32),
        (false, 100.0) => Direction::Read,
        (false, _) => Direction::Write,
    };
    FioDraws {
        seeds: seeds(job, o, thread),
        direction,
        random: job.random,
        random_map: !job.norandommap,
        sizes: fio_sizes(&job.xfer),
        size: job.io_size().unwrap_or(size),
        loops: job.loops,
        time_based: job.time_based,
        files: vec![FioFile {
            file,
            io_size: job.io_size().unwrap_or(size).min(size),
            size,
        }],
        service: Service::RoundRobin(1),
        verify: job.verify,
        serving: 0,
    }
}

/// fio's seeds of a clone: randseed (fio's default 0x89), and with
/// randrepeat=0 and no randseed, a fresh seed; `--seed` is a randseed
/// with randrepeat=0, so that every generator follows it.
fn seeds(job: &FioJob, o: &Overrides, thread: u64) -> Seeds {
    let (rand_seed, repeatable) = match (o.seed, job.randseed, job.randrepeat) {
        (Some(seed), _, _) => (seed, false),
        (None, Some(seed), repeatable) => (seed, repeatable),
        (None, None, true) => (FIO_DEFAULT_RANDSEED, true),
        (None, None, false) => (o.clock_seed, false),
    };
    Seeds {
        rand_seed,
        thread,
        repeatable,
    }
}

/// The block sizes with fio's whole percentages, in the order fio draws
/// them (by percentage, rising; fio's shares are whole numbers: an open
/// share of a third is 33).
fn fio_sizes(xfer: &XferSize) -> Vec<(u64, u32)> {
    let mut sizes: Vec<(u64, u32)> = match xfer {
        XferSize::Fixed(size) => vec![(*size, 100)],
        XferSize::Mix(pairs) => pairs
            .iter()
            .map(|&(size, pct)| (size, pct as u32))
            .collect(),
    };
    sizes.sort_by_key(|&(_, pct)| pct);
    sizes
}

/// Each job's group: a new one starts at every job with stonewall or
/// new_group (fio runs a group's jobs at once, groups one after another).
pub fn groups(jobs: &[FioJob]) -> Vec<usize> {
    let mut group = 0;
    jobs.iter()
        .enumerate()
        .map(|(index, job)| {
            if index > 0 && job.new_group {
                group += 1;
            }
            group
        })
        .collect()
}

/// What a job of a group of several is told: they ran at once.
fn group_note(jobs: &[FioJob], groups: &[usize], index: usize) -> Option<String> {
    let others: Vec<&str> = jobs
        .iter()
        .zip(groups)
        .enumerate()
        .filter(|(i, (_, g))| *i != index && **g == groups[index])
        .map(|(_, (job, _))| job.name.as_str())
        .collect();
    (!others.is_empty()).then(|| {
        format!(
            "fio group {}: ran at once with {}, as in fio: each figure is measured under the others' load (and the device counters and CPU % are the group's)",
            groups[index],
            others.join(", ")
        )
    })
}

/// fio's name for the file of clone `clone` of the job.
fn file_name(job: &FioJob, clone: u32) -> String {
    match &job.filename {
        Some(name) => name.clone(),
        None => job
            .filename_format
            .replace("$jobname", &job.name)
            .replace("$jobnum", &clone.to_string())
            .replace("$filenum", "0"),
    }
}

/// The fsbench job of one fio job on file `file`, in fio group `group`.
fn job_of(job: &FioJob, file: usize, group: usize, o: &Overrides) -> anyhow::Result<Job> {
    if job.direct || job.verify || o.verify {
        for size in job.xfer.sizes() {
            check_whole_sectors("block size", size).map_err(|e| {
                UsageError(format!(
                    "{}: bs: {e:#} with direct=1 or verify: O_DIRECT needs whole sectors and fsbench verifies per sector; buffered, any size runs",
                    job.line_of("bs")
                ))
            })?;
        }
    }
    let ramp = job.ramp_time.unwrap_or(Duration::ZERO);
    // Intervals must divide the warm-up; whole seconds read best.
    let interval = match ramp.subsec_nanos() {
        0 => Duration::from_secs(1),
        _ => Duration::from_millis(100),
    };
    Ok(Job {
        name: job.name.clone(),
        loops: Vec::new(),
        file,
        xfer: job.xfer.clone(),
        read_pct: job.reads(),
        seek: crate::workload::pattern::Seek::Percent(if job.random { 100.0 } else { 0.0 }),
        // A clone is one fio process: one thread.
        threads: 1,
        engine: job.engine,
        // fio's synchronous engines ignore iodepth (the linter says so).
        queue_depth: match job.engine {
            Engine::IoUring => job.iodepth,
            Engine::Sync => 1,
        },
        direct: job.direct,
        sync: job.sync,
        fdatasync_every: match job.fdatasync_every {
            0 => job.fsync_every,
            n => n,
        },
        end_fsync: job.end_fsync,
        steady: Default::default(),
        until_steady: false,
        start_delay: job.startdelay,
        stop: stop(job)?,
        warmup: Warmup::Time(ramp),
        interval,
        rate: rate(job),
        // fio spaces rate-limited I/Os evenly.
        arrival: Arrival::Fixed,
        seed: o.seed.or(job.randseed).unwrap_or(match job.randrepeat {
            true => FIO_RANDSEED,
            false => o.clock_seed,
        }),
        verify: job.verify || o.verify,
        verify_errors: DEFAULT_VERIFY_ERRORS,
        notes: reading_notes(job),
        group: Some(group as u32),
        clone_files: Vec::new(),
        // Each clone's, set by `plan`.
        fio: None,
        clone_draws: Vec::new(),
    })
}

/// time_based + runtime: a duration; otherwise the bytes fio moves:
/// size per clone and pass.
fn stop(job: &FioJob) -> anyhow::Result<Stop> {
    if job.time_based {
        return match job.runtime {
            Some(runtime) if !runtime.is_zero() => Ok(Stop::Duration(runtime)),
            _ => usage(format!(
                "{}: time_based: runtime= is needed (how long the job runs)",
                job.line_of("time_based")
            )),
        };
    }
    let mut per_clone = job.io_size().unwrap_or(0);
    // A pass ends with the I/O that reaches size. Random offsets without
    // the random map, or reads and writes each at their own sequential
    // position, may take it past size, by less than a block (the job's
    // draws end it; this is the most it moves). Otherwise fio moves whole
    // blocks within size: 22m of bs=2300 is 10029 of them, the 1972 bytes
    // left over are not written.
    let past_size = match job.random {
        true => job.norandommap,
        false => job.mixed,
    };
    match (past_size, &job.xfer) {
        (true, _) => per_clone += job.xfer.largest(),
        (false, XferSize::Fixed(size)) => per_clone -= per_clone % size,
        (false, XferSize::Mix(_)) => {}
    }
    per_clone
        .checked_mul(u64::from(job.loops))
        .map(Stop::Amount)
        .ok_or_else(|| UsageError(format!("{}: size × loops is too large", job.at)).into())
}

/// rate_iops, or rate= (bytes/s) over the mean block size.
fn rate(job: &FioJob) -> Option<f64> {
    job.rate_iops.or_else(|| {
        job.rate_bytes.map(|bytes| {
            let mean = match &job.xfer {
                XferSize::Fixed(size) => *size as f64,
                XferSize::Mix(pairs) => pairs.iter().map(|(s, pct)| *s as f64 * pct / 100.0).sum(),
            };
            bytes as f64 / mean
        })
    })
}

/// How fsbench read what fio would do differently.
fn reading_notes(job: &FioJob) -> Vec<String> {
    let mut notes = Vec::new();
    if job.libaio {
        notes.push(format!(
            "{}: ioengine=libaio ran on io_uring (fsbench's asynchronous engine)",
            job.line_of("ioengine")
        ));
    }
    if job.fsync_every > 0 && job.fdatasync_every == 0 {
        notes.push(format!(
            "{}: fsync={} ran as fdatasync (the file's size does not change, so both flush the same data)",
            job.line_of("fsync"),
            job.fsync_every
        ));
    }
    if job.numjobs > 1 {
        let files = match &job.filename {
            Some(name) => format!("all on {name}"),
            None => "each on its own file".into(),
        };
        let reported = match job.group_reporting {
            true => "reported as one (group_reporting)",
            false => "each its own result (clone=N); group_reporting reports them as one",
        };
        notes.push(format!(
            "{}: numjobs={}: {} clones at once, one thread each, {files}, {reported}",
            job.line_of("numjobs"),
            job.numjobs,
            job.numjobs
        ));
    }
    notes
}

//! A fio job file's jobs: `[global]` options, then each job's own, read
//! into what each job does (`FioJob`). Keys that change nothing fsbench
//! measures are accepted; keys fsbench cannot honour are refused naming
//! file:line and key.
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use super::lexer::{Opt, Section, read_sections};
use super::values;
use crate::error::{UsageError, usage};
use crate::workload::pattern::{Engine, Layout, SyncFlag, XferSize};

/// What one `[job]` says, `[global]` first.
#[derive(Debug, Clone, PartialEq)]
pub struct FioJob {
    pub name: String,
    /// Where its `[name]` header is.
    pub at: String,
    /// Where each option that set something was (key → file:line), for
    /// the linter and for errors raised after parsing.
    pub set_at: BTreeMap<&'static str, String>,
    pub read_pct: f64,
    pub random: bool,
    /// rw=rw/randrw: the read share comes from rwmixread.
    pub mixed: bool,
    pub rwmixread: f64,
    pub engine: Engine,
    /// ioengine=libaio, run on io_uring.
    pub libaio: bool,
    pub xfer: XferSize,
    pub size: Option<u64>,
    pub filesize: Option<u64>,
    pub filename: Option<String>,
    pub directory: Option<String>,
    pub filename_format: String,
    pub iodepth: u32,
    pub direct: bool,
    /// How its file is made when the job only writes it (fallocate=).
    pub fallocate: Layout,
    /// overwrite=1: the file is written whole before the job writes it.
    pub overwrite: bool,
    pub numjobs: u32,
    /// stonewall or new_group: this job starts a new group.
    pub new_group: bool,
    pub runtime: Option<Duration>,
    pub time_based: bool,
    pub loops: u32,
    pub startdelay: Duration,
    pub ramp_time: Option<Duration>,
    /// rate= in bytes/s.
    pub rate_bytes: Option<u64>,
    pub rate_iops: Option<f64>,
    /// fsync=N and fdatasync=N (fsbench issues fdatasync for both).
    pub fsync_every: u32,
    pub fdatasync_every: u32,
    pub end_fsync: bool,
    pub sync: SyncFlag,
    pub norandommap: bool,
    pub randrepeat: bool,
    pub randseed: Option<u64>,
    pub verify: bool,
    pub group_reporting: bool,
    pub gtod_reduce: bool,
    pub disable_lat: bool,
    /// The `key=value` options of its own section and of the `[global]`s
    /// before it, under fio's names (`${VAR}` substituted): fio's JSON shows them
    /// as "job options" and "global options" (bare flags left out, as fio
    /// leaves them out).
    pub options: Vec<(String, String)>,
    pub global_options: Vec<(String, String)>,
    kb_base: u64,
}

impl FioJob {
    fn new(section: &Section) -> FioJob {
        FioJob {
            name: section.name.clone(),
            at: section.at.clone(),
            set_at: BTreeMap::new(),
            read_pct: 100.0,
            random: false,
            mixed: false,
            rwmixread: 50.0,
            // fio's default engine on Linux is psync.
            engine: Engine::Sync,
            libaio: false,
            xfer: XferSize::Fixed(4096),
            size: None,
            filesize: None,
            filename: None,
            directory: None,
            filename_format: "$jobname.$jobnum.$filenum".into(),
            iodepth: 1,
            direct: false,
            // fio's default on Linux: fallocate=native.
            fallocate: Layout::Allocated,
            overwrite: false,
            numjobs: 1,
            new_group: false,
            runtime: None,
            time_based: false,
            loops: 1,
            startdelay: Duration::ZERO,
            ramp_time: None,
            rate_bytes: None,
            rate_iops: None,
            fsync_every: 0,
            fdatasync_every: 0,
            end_fsync: false,
            sync: SyncFlag::None,
            norandommap: false,
            randrepeat: true,
            randseed: None,
            verify: false,
            group_reporting: false,
            gtod_reduce: false,
            disable_lat: false,
            options: valued(&section.options),
            global_options: Vec::new(),
            kb_base: 1024,
        }
    }

    /// Where `key` was set, else the job's header.
    pub fn line_of(&self, key: &str) -> &str {
        self.set_at.get(key).unwrap_or(&self.at)
    }

    /// The share of reads once rwmixread is known.
    pub fn reads(&self) -> f64 {
        if self.mixed {
            self.rwmixread
        } else {
            self.read_pct
        }
    }

    /// Bytes each clone moves per pass: size, else the file's size.
    pub fn io_size(&self) -> Option<u64> {
        self.size.or(self.filesize)
    }
}

/// The jobs of a job file, in order.
pub fn read(path: &Path) -> anyhow::Result<Vec<FioJob>> {
    jobs(&read_sections(path)?)
}

pub(super) fn jobs(sections: &[Section]) -> anyhow::Result<Vec<FioJob>> {
    let mut global: Vec<Opt> = Vec::new();
    let mut jobs = Vec::new();
    for section in sections {
        if section.name == "global" {
            // Later [global]s add to the options of the jobs after them.
            global.extend(section.options.iter().cloned());
            continue;
        }
        let mut job = FioJob::new(section);
        job.global_options = valued(&global);
        for opt in global.iter().chain(&section.options) {
            apply(&mut job, opt)
                .map_err(|e| UsageError(format!("{}: {}: {e:#}", opt.at, opt.key)))?;
        }
        jobs.push(job);
    }
    if jobs.is_empty() {
        return usage("the job file has no [job] section: nothing to run");
    }
    Ok(jobs)
}

/// The options that have a value, as (key, value).
fn valued(options: &[Opt]) -> Vec<(String, String)> {
    let pairs = options
        .iter()
        .filter_map(|o| Some((o.key.clone(), o.value.clone()?)));
    pairs.collect()
}

/// Sets what `opt` says on `job`.
fn apply(job: &mut FioJob, opt: &Opt) -> anyhow::Result<()> {
    let value = opt.value.as_deref();
    let text = || value.ok_or_else(|| UsageError("needs a value (key=value)".into()));
    let kb_base = job.kb_base;
    let size = |v: &str| values::size(v, kb_base);
    let key: &'static str = match opt.key.as_str() {
        "rw" => {
            rw(job, text()?)?;
            "rw"
        }
        "ioengine" => {
            engine(job, text()?)?;
            "ioengine"
        }
        "bs" => {
            job.xfer = block_size(text()?, kb_base)?;
            "bs"
        }
        "bssplit" => {
            job.xfer = values::bssplit(text()?, kb_base)?;
            "bs"
        }
        "size" => {
            job.size = Some(size(text()?)?);
            "size"
        }
        "filesize" => {
            job.filesize = Some(size(text()?)?);
            "filesize"
        }
        "nrfiles" => {
            if values::count(text()?)? != 1 {
                return usage("fsbench runs each job on one file; give nrfiles=1");
            }
            "nrfiles"
        }
        "filename" => {
            job.filename = Some(plain_name(text()?)?);
            "filename"
        }
        "directory" => {
            job.directory = Some(text()?.to_string());
            "directory"
        }
        "filename_format" => {
            job.filename_format = filename_format(text()?)?;
            "filename_format"
        }
        "iodepth" => {
            job.iodepth = values::count(text()?)?.max(1);
            "iodepth"
        }
        "direct" => {
            job.direct = values::flag(value)?;
            "direct"
        }
        "buffered" => {
            job.direct = !values::flag(value)?;
            "direct"
        }
        "numjobs" => {
            let clones = values::count(text()?)?.max(1);
            // Each clone is a thread (and a file): refused here, before
            // any is planned.
            crate::workload::threads::check_count(u64::from(clones))?;
            job.numjobs = clones;
            "numjobs"
        }
        "stonewall" | "new_group" => {
            job.new_group = values::flag(value)?;
            "stonewall"
        }
        "runtime" => {
            job.runtime = Some(values::time(text()?)?);
            "runtime"
        }
        "time_based" => {
            job.time_based = values::flag(value)?;
            "time_based"
        }
        "loops" => {
            job.loops = values::count(text()?)?.max(1);
            "loops"
        }
        "startdelay" => {
            job.startdelay = values::time(text()?)?;
            "startdelay"
        }
        "ramp_time" => {
            job.ramp_time = Some(values::time(text()?)?);
            "ramp_time"
        }
        "rate" => {
            job.rate_bytes = Some(one_direction(text()?, size)?);
            "rate"
        }
        "rate_iops" => {
            job.rate_iops = Some(f64::from(one_direction(text()?, values::count)?));
            "rate"
        }
        "rwmixread" => {
            job.rwmixread = values::percent(text()?)?;
            "rwmixread"
        }
        "rwmixwrite" => {
            job.rwmixread = 100.0 - values::percent(text()?)?;
            "rwmixread"
        }
        "fsync" => {
            job.fsync_every = values::count(text()?)?;
            "fsync"
        }
        "fdatasync" => {
            job.fdatasync_every = values::count(text()?)?;
            "fdatasync"
        }
        "end_fsync" => {
            job.end_fsync = values::flag(value)?;
            "end_fsync"
        }
        "sync" => {
            job.sync = sync(value)?;
            "sync"
        }
        "norandommap" => {
            job.norandommap = values::flag(value)?;
            "norandommap"
        }
        "randrepeat" => {
            job.randrepeat = values::flag(value)?;
            "randrepeat"
        }
        "randseed" => {
            let seed = text()?;
            job.randseed = Some(
                seed.parse()
                    .map_err(|_| UsageError(format!("'{seed}' is not a whole number")))?,
            );
            "randseed"
        }
        "verify" => {
            job.verify = !matches!(text()?, "0" | "null");
            "verify"
        }
        "kb_base" => {
            job.kb_base = match text()? {
                "1024" => 1024,
                "1000" => 1000,
                other => return usage(format!("'{other}': use 1000 or 1024")),
            };
            "kb_base"
        }
        "group_reporting" => {
            job.group_reporting = values::flag(value)?;
            "group_reporting"
        }
        "gtod_reduce" => {
            job.gtod_reduce = values::flag(value)?;
            "gtod_reduce"
        }
        "disable_lat" | "disable_clat" => {
            job.disable_lat = values::flag(value)?;
            "disable_lat"
        }
        // The job's name, its text, threads instead of processes, cache
        // invalidation before the run (fsbench drops the file's pages
        // itself), unlinking it (fsbench removes its scratch directory),
        // percentile and slat reporting: none changes what fsbench
        // measures.
        "name" => {
            job.name = text()?.to_string();
            "name"
        }
        "fallocate" => {
            job.fallocate = match text()? {
                "none" | "0" => Layout::Sparse,
                "native" | "posix" | "1" | "keep" | "truncate" => Layout::Allocated,
                other => {
                    return usage(format!(
                        "'{other}': use none, native, posix, keep or truncate"
                    ));
                }
            };
            "fallocate"
        }
        "overwrite" => {
            job.overwrite = values::flag(value)?;
            "overwrite"
        }
        "description"
        | "thread"
        | "invalidate"
        | "unlink"
        | "clat_percentiles"
        | "lat_percentiles"
        | "percentile_list"
        | "disable_slat"
        | "disable_bw_measurement" => "harmless",
        _ => return usage("not a fio option fsbench supports"),
    };
    job.set_at.insert(key, opt.at.clone());
    Ok(())
}

/// `rw=`: direction and randomness; `:N` (skips between sequential I/Os)
/// and trims are refused.
fn rw(job: &mut FioJob, value: &str) -> anyhow::Result<()> {
    let (mode, skip) = value.split_once(':').unwrap_or((value, ""));
    if !skip.is_empty() {
        return usage(format!(
            "'{value}': fsbench cannot leave holes between sequential I/Os (the ':{skip}' part); give rw={mode}"
        ));
    }
    let (read_pct, random, mixed) = match mode {
        "read" => (100.0, false, false),
        "write" => (0.0, false, false),
        "randread" => (100.0, true, false),
        "randwrite" => (0.0, true, false),
        "rw" => (50.0, false, true),
        "randrw" => (50.0, true, true),
        "trim" | "randtrim" | "trimwrite" | "randtrimwrite" => {
            return usage(format!("'{mode}': fsbench does not trim"));
        }
        other => return usage(format!("'{other}' is not a fio rw mode")),
    };
    (job.read_pct, job.random, job.mixed) = (read_pct, random, mixed);
    Ok(())
}

fn engine(job: &mut FioJob, value: &str) -> anyhow::Result<()> {
    (job.engine, job.libaio) = match value {
        "psync" | "sync" | "pvsync" | "pvsync2" | "vsync" => (Engine::Sync, false),
        "io_uring" => (Engine::IoUring, false),
        "libaio" => (Engine::IoUring, true),
        other => {
            return usage(format!(
                "'{other}': fsbench runs psync/sync/pvsync (its sync engine), io_uring and libaio (on io_uring)"
            ));
        }
    };
    Ok(())
}

/// `bs=`; `bs=4k,64k` (different read and write sizes) is refused.
fn block_size(value: &str, kb_base: u64) -> anyhow::Result<XferSize> {
    if value.contains(',') {
        return usage(format!(
            "'{value}': separate read and write block sizes are not supported; give one (or bssplit=)"
        ));
    }
    Ok(XferSize::Fixed(values::size(value, kb_base)?))
}

/// `rate=` and `rate_iops=`: one value for all I/Os (`r,w` is refused).
fn one_direction<T>(value: &str, parse: impl Fn(&str) -> anyhow::Result<T>) -> anyhow::Result<T> {
    if value.contains(',') {
        return usage(format!(
            "'{value}': separate read and write rates are not supported; give one rate"
        ));
    }
    parse(value)
}

/// A file name inside the scratch directory.
fn plain_name(value: &str) -> anyhow::Result<String> {
    if value.contains(['/', ':']) {
        return usage(format!(
            "'{value}': fsbench uses one plain file name it creates in its scratch directory (give directory= for where)"
        ));
    }
    Ok(value.to_string())
}

/// `filename_format=` with `$jobname`, `$jobnum` and `$filenum`.
fn filename_format(value: &str) -> anyhow::Result<String> {
    let rest = value
        .replace("$jobname", "")
        .replace("$jobnum", "")
        .replace("$filenum", "");
    if rest.contains('$') {
        return usage(format!(
            "'{value}': fsbench knows $jobname, $jobnum and $filenum"
        ));
    }
    plain_name(value)
}

/// `sync=`: 0/none, 1/sync (O_SYNC), dsync (O_DSYNC).
fn sync(value: Option<&str>) -> anyhow::Result<SyncFlag> {
    match value {
        None | Some("1" | "sync") => Ok(SyncFlag::Sync),
        Some("0" | "none") => Ok(SyncFlag::None),
        Some("dsync") => Ok(SyncFlag::Dsync),
        Some(other) => usage(format!("'{other}': use 0, 1, sync or dsync")),
    }
}

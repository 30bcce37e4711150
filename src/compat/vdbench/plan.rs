//! A parameter file's definitions into fsbench's jobs: each rd= with its
//! wd= and sd=, vdbench's defaults and precedence, the command line's
//! overrides, and one job per value of its for-loops and rates.
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::parmfile::{Loop, MAX_RUNS, Overrides, ParmFile, Rd, Sd, Wd};
use crate::error::{UsageError, usage};
use crate::workload::pattern::job::{
    Engine, Job, Seek, Stop, SyncFlag, Warmup, XferSize, check_whole_sectors, short_size,
};
use crate::workload::pattern::{FileSpec, Layout, Plan};

/// vdbench's defaults.
const DEFAULT_THREADS: u32 = 8;
const DEFAULT_XFER: u64 = 4096;
const DEFAULT_ELAPSED: Duration = Duration::from_secs(30);
/// vdbench 5.04.06 starts from 1 s (5.04.07's guide says min(elapsed/2, 60)).
const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);

impl ParmFile {
    /// The jobs and files to run, and the directory of the luns (the
    /// target when the command line names none).
    pub fn plan(&self, overrides: &Overrides) -> anyhow::Result<(Plan, PathBuf)> {
        let mut files: Vec<(&Sd, FileSpec)> = Vec::new();
        let mut jobs = Vec::new();
        let mut lun_dir: Option<PathBuf> = None;
        for rd in &self.rds {
            let wd = find(&self.wds, rd.wd.as_deref(), "wd", &rd.name)?;
            let sd = find(&self.sds, wd.sd.as_deref(), "sd", &wd.name)?;
            let index = match files.iter().position(|(s, _)| s.name == sd.name) {
                Some(index) => index,
                None => {
                    let (dir, spec) = lun_file(sd)?;
                    check_same_dir(&mut lun_dir, dir, &sd.name)?;
                    if files.iter().any(|(_, f)| f.name == spec.name) {
                        return usage(format!(
                            "sd={}: another sd= uses a lun with the same file name {}",
                            sd.name, spec.name
                        ));
                    }
                    files.push((sd, spec));
                    files.len() - 1
                }
            };
            let base = base_job(rd, wd, sd, index, overrides)?;
            check_run_count(rd, jobs.len())?;
            jobs.extend(expand(&base, &rd.loops, rd.rates.as_deref())?);
        }
        // vdbench's rule for every transfer, buffered ones too.
        for size in jobs.iter().flat_map(|j| j.xfer.sizes()) {
            check_whole_sectors("transfer size", size)?;
        }
        let plan = Plan {
            files: files.into_iter().map(|(_, f)| f).collect(),
            jobs,
        };
        Ok((plan, lun_dir.expect("every run has an sd")))
    }
}

fn find<'a, T>(list: &'a [T], wanted: Option<&str>, kind: &str, from: &str) -> anyhow::Result<&'a T>
where
    T: Named,
{
    let Some(wanted) = wanted else {
        return usage(format!("{from}: no {kind}= given"));
    };
    if wanted.starts_with('(') || wanted.contains('*') {
        return usage(format!(
            "{from}: {kind}={wanted}: fsbench runs one {kind} per definition (no lists or wildcards)"
        ));
    }
    list.iter()
        .find(|item| item.name() == wanted)
        .ok_or_else(|| UsageError(format!("{from}: {kind}={wanted} is not defined")).into())
}

trait Named {
    fn name(&self) -> &str;
}

impl Named for Sd {
    fn name(&self) -> &str {
        &self.name
    }
}

impl Named for Wd {
    fn name(&self) -> &str {
        &self.name
    }
}

/// The file an sd= describes: fsbench creates it under its scratch
/// directory with the lun's file name.
fn lun_file(sd: &Sd) -> anyhow::Result<(PathBuf, FileSpec)> {
    let Some(lun) = &sd.lun else {
        return usage(format!("sd={}: no lun= given", sd.name));
    };
    let path = Path::new(lun);
    if lun.starts_with("/dev/") || lun.starts_with("\\\\.\\") {
        return usage(format!(
            "sd={}: lun={lun} is a device; fsbench only uses files it creates in its scratch directory",
            sd.name
        ));
    }
    let Some(size) = sd.size else {
        return usage(format!(
            "sd={}: size= is needed (fsbench creates the file {lun})",
            sd.name
        ));
    };
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| UsageError(format!("sd={}: lun={lun} has no file name", sd.name)))?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((
        dir,
        FileSpec {
            name: name.to_string(),
            size,
            layout: Layout::Written,
        },
    ))
}

fn check_same_dir(known: &mut Option<PathBuf>, dir: PathBuf, sd: &str) -> anyhow::Result<()> {
    match known {
        Some(first) if *first != dir => usage(format!(
            "sd={sd}: its lun is in {}, another one in {}; fsbench runs on one target directory",
            dir.display(),
            first.display()
        )),
        Some(_) => Ok(()),
        None => {
            *known = Some(dir);
            Ok(())
        }
    }
}

/// The job of an RD before its loops, with vdbench's precedence.
fn base_job(rd: &Rd, wd: &Wd, sd: &Sd, file: usize, o: &Overrides) -> anyhow::Result<Job> {
    let flags = rd.flags.or(wd.flags).or(sd.flags).unwrap_or_default();
    if rd.rates.is_none() {
        return usage(format!("rd={}: iorate= is missing", rd.name));
    }
    let warmup = match (o.warmup, rd.warmup) {
        (Some(warmup), _) => warmup,
        (None, Some(time)) if !time.is_zero() => Warmup::Time(time),
        // vdbench's warmup=0: the first interval is left out.
        (None, _) => Warmup::FirstInterval,
    };
    Ok(Job {
        name: rd.name.clone(),
        loops: Vec::new(),
        file,
        xfer: wd.xfer.clone().unwrap_or(XferSize::Fixed(DEFAULT_XFER)),
        read_pct: wd.read_pct.unwrap_or(100.0),
        seek: wd.seek.unwrap_or(Seek::Percent(100.0)),
        threads: sd.threads.unwrap_or(DEFAULT_THREADS),
        engine: Engine::Sync,
        queue_depth: 1,
        direct: flags.direct,
        sync: flags.sync.unwrap_or(SyncFlag::None),
        fdatasync_every: 0,
        // vdbench does not sync at the end of a run.
        end_fsync: false,
        steady: Default::default(),
        until_steady: false,
        start_delay: Duration::ZERO,
        stop: Stop::Duration(o.elapsed.or(rd.elapsed).unwrap_or(DEFAULT_ELAPSED)),
        warmup,
        interval: o.interval.or(rd.interval).unwrap_or(DEFAULT_INTERVAL),
        rate: None,
        arrival: rd.arrival.unwrap_or_default(),
        seed: o.seed,
        verify: o.verify,
        verify_errors: o.verify_errors,
        notes: Vec::new(),
        group: None,
        clone_files: Vec::new(),
        fio: None,
        clone_draws: Vec::new(),
    })
}

/// Refuses `rd` when its runs, after the `earlier` runs of the file, would
/// pass [`MAX_RUNS`]; counted before any is made.
fn check_run_count(rd: &Rd, earlier: usize) -> anyhow::Result<()> {
    let rates = rd.rates.as_ref().map_or(1, Vec::len);
    let total = rd
        .loops
        .iter()
        .try_fold(rates, |runs, each| runs.checked_mul(each.len()))
        .and_then(|runs| runs.checked_add(earlier));
    match total {
        Some(total) if total <= MAX_RUNS => Ok(()),
        _ => usage(format!(
            "rd={}: the for-loops and rates expand to more than {MAX_RUNS} runs in all (fsbench's limit)",
            rd.name
        )),
    }
}

/// One job per combination of loop values (first loop outermost), the
/// rates innermost.
fn expand(base: &Job, loops: &[Loop], rates: Option<&[Option<f64>]>) -> anyhow::Result<Vec<Job>> {
    let mut jobs = vec![base.clone()];
    for each in loops {
        jobs = jobs.iter().flat_map(|job| each.apply(job)).collect();
    }
    let rates = rates.unwrap_or(&[None]);
    let several = rates.len() > 1;
    Ok(jobs
        .iter()
        .flat_map(|job| {
            rates.iter().map(move |&rate| {
                let mut job = job.clone();
                job.rate = rate;
                if several {
                    let shown = rate.map_or("max".to_string(), |r| format!("{r}"));
                    job.loops.push(("iorate".into(), shown));
                }
                job
            })
        })
        .collect())
}

impl Loop {
    /// How many values the loop takes.
    fn len(&self) -> usize {
        match self {
            Loop::Xfer(sizes) => sizes.len(),
            Loop::Threads(counts) => counts.len(),
            Loop::ReadPct(pcts) => pcts.len(),
            Loop::Seek(seeks) => seeks.len(),
        }
    }

    fn apply(&self, job: &Job) -> Vec<Job> {
        let with = |key: &str, value: String, set: &dyn Fn(&mut Job)| {
            let mut job = job.clone();
            set(&mut job);
            job.loops.push((key.into(), value));
            job
        };
        match self {
            Loop::Xfer(sizes) => sizes
                .iter()
                .map(|&s| with("xfersize", short_size(s), &|j| j.xfer = XferSize::Fixed(s)))
                .collect(),
            Loop::Threads(counts) => counts
                .iter()
                .map(|&t| with("threads", t.to_string(), &|j| j.threads = t))
                .collect(),
            Loop::ReadPct(pcts) => pcts
                .iter()
                .map(|&p| with("rdpct", format!("{p}"), &|j| j.read_pct = p))
                .collect(),
            Loop::Seek(seeks) => seeks
                .iter()
                .map(|&s| with("seekpct", s.describe(), &|j| j.seek = s))
                .collect(),
        }
    }
}

//! What a fio job file really measures: the mistakes real job files make
//! (kubestr's four jobs at once, `gtod_reduce`, `iodepth` on psync,
//! buffered files the page cache holds...), each one line with the line
//! that causes it, what it does to the figures and what to write instead.
use std::fmt;

use super::jobfile::FioJob;
use super::plan::groups;
use crate::result::{Flag, WorkloadResult};
use crate::size::format_bytes;
use crate::workload::pattern::{Engine, SyncFlag};

/// One finding of the linter.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The job's name.
    pub job: String,
    /// file:line of the option (or header) that causes it.
    pub at: String,
    pub key: &'static str,
    /// What it does to the figures.
    pub effect: String,
    /// What to write instead.
    pub instead: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: [{}] {}: {}; instead: {}",
            self.at, self.job, self.key, self.effect, self.instead
        )
    }
}

/// Every finding on `jobs`, job by job; `ram_bytes` is the host's RAM
/// (0: unknown, the page-cache check is skipped).
pub fn lint(jobs: &[FioJob], ram_bytes: u64) -> Vec<Finding> {
    let groups = groups(jobs);
    let mut findings = Vec::new();
    for (index, job) in jobs.iter().enumerate() {
        let shared_group = groups.iter().filter(|g| **g == groups[index]).count() > 1;
        let checks = [
            concurrent(job, shared_group && index > 0 && !job.new_group),
            sync_iodepth(job),
            page_cache(job, ram_bytes),
            hidden_latency(job),
            no_ramp(job),
            runtime_cap(job),
        ];
        findings.extend(checks.into_iter().flatten());
    }
    findings
}

/// `findings` with the ones a `[global]` option causes in several jobs
/// (same line, key and effect) told once, naming every job.
pub fn merged(findings: &[Finding]) -> Vec<Finding> {
    let mut merged: Vec<Finding> = Vec::new();
    for finding in findings {
        let same = |m: &&mut Finding| {
            (m.at.as_str(), m.key, m.effect.as_str())
                == (finding.at.as_str(), finding.key, finding.effect.as_str())
        };
        match merged.iter_mut().find(same) {
            Some(earlier) => earlier.job = format!("{}, {}", earlier.job, finding.job),
            None => merged.push(finding.clone()),
        }
    }
    merged
}

fn finding(job: &FioJob, key: &'static str, effect: String, instead: &str) -> Finding {
    Finding {
        job: job.name.clone(),
        at: job.line_of(key).to_string(),
        key,
        effect,
        instead: instead.to_string(),
    }
}

/// A job that starts with the ones before it (no stonewall).
fn concurrent(job: &FioJob, with_previous: bool) -> Option<Finding> {
    with_previous.then(|| {
        finding(
            job,
            "stonewall",
            "no stonewall: fio runs this job at once with the ones before it, so each figure is measured under the others' load (fsbench runs them at once too)".into(),
            "stonewall in [global] or in each job, to measure each alone",
        )
    })
}

fn sync_iodepth(job: &FioJob) -> Option<Finding> {
    (job.iodepth > 1 && job.engine == Engine::Sync).then(|| {
        finding(
            job,
            "iodepth",
            format!(
                "iodepth={} with a synchronous engine (psync is fio's default) is ignored: one I/O in flight per job",
                job.iodepth
            ),
            "ioengine=io_uring (or libaio) for a queue depth, or numjobs= for more synchronous streams",
        )
    })
}

/// Buffered I/O the page cache can hold: its reads come from RAM, and
/// its writes stay there unless the job flushes them.
fn page_cache(job: &FioJob, ram_bytes: u64) -> Option<Finding> {
    let footprint = job.io_size()?.saturating_mul(u64::from(job.numjobs));
    if job.direct || ram_bytes == 0 || footprint >= ram_bytes {
        return None;
    }
    let flushed = job.fsync_every > 0
        || job.fdatasync_every > 0
        || job.end_fsync
        || job.sync != SyncFlag::None;
    let served = match (job.reads() > 0.0, job.reads() < 100.0 && !flushed) {
        (true, true) => "the page cache serves the reads and holds the writes",
        (true, false) => "the page cache serves the reads",
        (false, true) => "the writes stay in the page cache",
        (false, false) => return None,
    };
    Some(finding(
        job,
        "direct",
        format!(
            "buffered I/O on {} (size × numjobs), under this host's {} of RAM: {served}, not the device",
            format_bytes(footprint),
            format_bytes(ram_bytes)
        ),
        "direct=1, or a size larger than RAM",
    ))
}

fn hidden_latency(job: &FioJob) -> Option<Finding> {
    let key = match (job.gtod_reduce, job.disable_lat) {
        (true, _) => "gtod_reduce",
        (false, true) => "disable_lat",
        _ => return None,
    };
    Some(finding(
        job,
        key,
        format!("{key}=1 makes fio skip the latency figures (fsbench measures them anyway)"),
        "leave it out: the clock costs far less than an I/O",
    ))
}

fn no_ramp(job: &FioJob) -> Option<Finding> {
    (job.time_based && job.ramp_time.is_none()).then(|| {
        finding(
            job,
            "time_based",
            "a time-based job without ramp_time counts its start (empty queues, cold caches) in the figures".into(),
            "ramp_time=5s (or more) before the measured runtime",
        )
    })
}

/// runtime without time_based: fio stops at whichever comes first.
fn runtime_cap(job: &FioJob) -> Option<Finding> {
    (job.runtime.is_some() && !job.time_based).then(|| {
        finding(
            job,
            "runtime",
            "runtime without time_based caps a size-bound job in fio; fsbench moves the whole size"
                .into(),
            "time_based (run for runtime) or no runtime (move size bytes)",
        )
    })
}

/// What the device counters showed of a job's run, as findings: the page
/// cache served its reads, or held its writes past its end. The evidence
/// is the metric's own flag and figures. `told` holds the (job, flag)
/// pairs found before (a job with several metrics so flagged, or several
/// repetitions, is told once per flag).
pub fn measured(
    jobs: &[FioJob],
    result: &WorkloadResult,
    told: &mut Vec<(String, Flag)>,
) -> Vec<Finding> {
    let Some(job) = jobs.iter().find(|j| names(&result.label, &j.name)) else {
        return Vec::new();
    };
    let cached = [
        (Flag::ServedFromCache, "direct=1, or a size larger than RAM"),
        (
            Flag::NotYetOnDevice,
            "end_fsync=1 or fdatasync=N (or direct=1)",
        ),
        (Flag::AbsorbedByCache, "direct=1, or a size larger than RAM"),
    ];
    let headline = result.metrics.iter().filter(|m| !m.detail);
    let flagged: Vec<_> = headline
        .flat_map(|m| m.flags.iter().map(move |f| (m, *f)))
        .collect();
    cached
        .into_iter()
        .filter_map(|(flag, instead)| {
            let (metric, _) = flagged.iter().find(|(_, f)| *f == flag)?;
            let pair = (job.name.clone(), flag);
            (!told.contains(&pair)).then(|| told.push(pair))?;
            let effect = format!("{}: {}", metric.name, metric.flag_text(flag));
            Some(finding(job, "direct", effect, instead))
        })
        .collect()
}

/// Whether a result's label is the job's (its name, then any loop values).
fn names(label: &str, job: &str) -> bool {
    label
        .strip_prefix(job)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
}

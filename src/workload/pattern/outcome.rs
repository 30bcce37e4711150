//! A finished job as its result: the metrics (through the one metric
//! path, `measure::phase`), its notes, its interval series and steadiness,
//! its parameters, and the events that tell it as it ends.
use serde_json::json;

use super::counters::{self, Row};
use super::engine::JobOutcome;
use super::job::{Job, SyncFlag};
use super::{Event, FileSpec, Finished, Sink};
use crate::measure::phase::Measured;
use crate::measure::series::{self, Point};
use crate::measure::{LatencyRecorder, PhaseTiming, devices};
use crate::result::{AcrossRanks, Flag, IntervalSample, Metric, Steady, WorkloadResult};
use crate::workload::RunContext;

/// From this average transfer size on, a job's throughput is told in
/// MiB/s rather than IO/s.
const LARGE_TRANSFER: u64 = 64 << 10;

/// What one job measured, for its result.
pub(super) struct Ran<'a> {
    pub(super) job: &'a Job,
    pub(super) file: &'a FileSpec,
    pub(super) outcome: JobOutcome,
    pub(super) average: Row,
    pub(super) timing: PhaseTiming,
}

/// The result of a job that ran.
pub(super) fn result(
    ran: Ran<'_>,
    mut notes: Vec<String>,
    ram_bytes: u64,
    ctx: &RunContext<'_>,
    sink: &mut Sink,
) -> anyhow::Result<WorkloadResult> {
    let Ran {
        job,
        file,
        outcome,
        average,
        timing,
    } = ran;
    sink(Event::Finished(Finished {
        job,
        rows: &outcome.rows,
        average: &average,
        read_latency: &outcome.read_latency,
        write_latency: &outcome.write_latency,
        sync_latency: &outcome.sync_latency,
        usage: &outcome.usage,
        device: outcome.device.as_ref(),
    }))?;
    let measured = job_phase(job, file, (&outcome, &average), timing, ram_bytes, ctx);
    let steady = steadiness(job, &outcome);
    notes.extend(job_notes(job, &steady));
    let metrics = metrics(&average, &outcome, &measured, job.rate.is_some());
    tell_cliff(job, &metrics, sink)?;
    Ok(WorkloadResult {
        workload: "io".to_string(),
        label: job.label(),
        repetition: ctx.repetition,
        params: params(job, file, &outcome),
        metrics,
        notes,
        // Under MPI the job's result keeps rank 0's time series: each
        // rank's intervals count from its own job's start, so a sum by
        // interval index would add slices of different moments.
        intervals: intervals(&outcome),
        steady: Some(steady),
        ..Default::default()
    })
}

/// A cliff in the job's throughput is told as it ends (reports tell it
/// again from the result), with its figures.
fn tell_cliff(job: &Job, metrics: &[Metric], sink: &mut Sink) -> anyhow::Result<()> {
    let flagged = metrics.iter().find(|m| m.flags.contains(&Flag::Cliff));
    match flagged {
        Some(metric) => {
            let text = format!("{}: {}", job.label(), metric.flag_text(Flag::Cliff));
            sink(Event::Warning(&text))
        }
        None => Ok(()),
    }
}

/// What every metric of the job shares: its measured phase and CPU %
/// (which the engine takes itself), whether its reads could come from RAM
/// (the target lives there, or the file fits in RAM and is read through
/// the page cache), what its writes may have left in the page cache, and
/// where its throughput fell off a cliff.
fn job_phase(
    job: &Job,
    file: &FileSpec,
    (outcome, average): (&JobOutcome, &Row),
    timing: PhaseTiming,
    ram_bytes: u64,
    ctx: &RunContext<'_>,
) -> Measured {
    let in_memory = crate::storage::env::in_memory(ctx.scratch.dir());
    let written = outcome.rows.iter().map(|r| r.counters.write.bytes).sum();
    Measured {
        cpu_percent: Some(outcome.cpu_percent),
        fits_in_page_cache: job.reads() && (in_memory || !job.direct && file.size < ram_bytes),
        ..Measured::over(&timing)
    }
    .moved(average.counters.read.bytes, average.counters.write.bytes)
    .left_dirty(unsynced_bytes(job, file.size, written))
    .reached_device(each_write_reaches_device(job), job.direct)
    .fell(series::cliff(&points(outcome), warmup_rows(outcome)))
}

/// The job's intervals as a throughput series.
fn points(outcome: &JobOutcome) -> Vec<Point> {
    let point = |row: &Row| Point {
        start_s: row.start_s,
        seconds: row.seconds,
        bytes: row.counters.bytes(),
    };
    outcome.rows.iter().map(point).collect()
}

/// How many leading intervals are warm-up.
fn warmup_rows(outcome: &JobOutcome) -> usize {
    outcome.rows.iter().take_while(|row| row.warmup).count()
}

/// Whether and when the job's throughput was steady, by its rule.
fn steadiness(job: &Job, outcome: &JobOutcome) -> Steady {
    job.steady.reached(&points(outcome), warmup_rows(outcome))
}

/// Bytes a job may have left dirty in the page cache, unsynced: what it
/// wrote (warm-up included), at most the file; None when it wrote nothing
/// or its writes reached the storage inside its time.
pub(super) fn unsynced_bytes(job: &Job, file_size: u64, written: u64) -> Option<u64> {
    (job.writes() && !job.flushes_writes()).then(|| written.min(file_size))
}

/// Whether every byte the job writes goes to the device (O_DIRECT,
/// O_SYNC/O_DSYNC), so the device writes at least as much. A buffered
/// write synced later is on the device too, but overwrites of one block
/// meanwhile reach it once.
fn each_write_reaches_device(job: &Job) -> bool {
    job.writes() && (job.direct || job.sync != SyncFlag::None)
}

fn params(job: &Job, file: &FileSpec, outcome: &JobOutcome) -> serde_json::Value {
    json!({
        "job": job,
        "file": file,
        "observed": outcome.decisions,
    })
}

/// Every interval line, the warm-up included (marked), as the time
/// series, with the devices' MiB/s each way where they were counted.
fn intervals(outcome: &JobOutcome) -> Vec<IntervalSample> {
    let devices = outcome.interval_devices.iter();
    outcome
        .rows
        .iter()
        .zip(devices)
        .zip(1..)
        .map(|((row, device), index)| {
            let mut sample = row.sample(index);
            if let Some(device) = device {
                sample.values.extend(device_rates(device, row.seconds));
            }
            sample
        })
        .collect()
}

/// An interval's device bytes as MiB/s, named as the time series' values.
fn device_rates(device: &devices::Delta, seconds: f64) -> [(String, f64); 2] {
    let mib_per_s = |bytes: u64| counters::ratio(bytes as f64 / (1u64 << 20) as f64, seconds);
    [
        (
            "device_read_mib_per_s".into(),
            mib_per_s(device.counters.read_bytes),
        ),
        (
            "device_write_mib_per_s".into(),
            mib_per_s(device.counters.written_bytes),
        ),
    ]
}

/// The average line as metrics (its figures as vdbench computed them);
/// latency histograms on the response-time metrics (all I/Os, reads,
/// writes).
///
/// One job is one operation, with one headline metric. Running flat out,
/// its throughput is the answer (IO/s for small transfers, MiB/s for large
/// ones) and its mean response time is the same measurement seen from the
/// other side (threads / rate, Little's law); under `--rate` the
/// throughput is what was asked for and the response time is the answer.
/// Every other figure, the maximum and the standard deviation included
/// (too noisy to settle in a few repetitions), is a detail.
fn metrics(
    average: &Row,
    outcome: &JobOutcome,
    measured: &Measured,
    rate_limited: bool,
) -> Vec<Metric> {
    let f = &average.figures;
    let c = &average.counters;
    let mut all = LatencyRecorder::new();
    all.merge(&outcome.read_latency);
    all.merge(&outcome.write_latency);
    use crate::result::Direction::{HigherIsBetter as Higher, LowerIsBetter as Lower};
    let rate = |name, unit, value, samples| measured.metric(name, unit, Higher, value, samples);
    let response = |name, value, samples, how| {
        measured
            .metric(name, "ms", Lower, value, samples)
            .with_across_ranks(how)
    };
    let mean_response = |name, value, samples, latency: &LatencyRecorder| {
        response(name, value, samples, AcrossRanks::Mean).with_latency(latency.summary_for_metric())
    };
    let large = c.ops() > 0 && c.bytes() / c.ops() >= LARGE_TRANSFER;
    let mut metrics = vec![
        rate("io_rate", "IO/s", f.io_rate, c.ops()).with_detail(large || rate_limited),
        rate("mib_per_s", "MiB/s", f.mib_per_s, c.bytes()).with_detail(!large || rate_limited),
        mean_response("resp_ms", f.resp_ms, c.ops(), &all).with_detail(!rate_limited),
    ];
    let directions = [
        (
            "read_resp_ms",
            f.read_resp_ms,
            c.read.ops,
            &outcome.read_latency,
        ),
        (
            "write_resp_ms",
            f.write_resp_ms,
            c.write.ops,
            &outcome.write_latency,
        ),
    ];
    for (name, value, ops, latency) in directions {
        if ops > 0 {
            metrics.push(mean_response(name, value, ops, latency).as_detail());
        }
    }
    metrics.push(response("resp_max_ms", f.resp_max_ms(), c.ops(), AcrossRanks::Max).as_detail());
    metrics.push(
        response(
            "resp_stddev_ms",
            f.resp_stddev_ms,
            c.ops(),
            AcrossRanks::StdDevOf("resp_ms".into()),
        )
        .as_detail(),
    );
    // The closing fsync's share of the job's time (the rest is what the
    // writes took to reach the page cache, or the device with O_DIRECT).
    if let Some(sync_s) = outcome.sync_s {
        metrics.push(measured.part_seconds("sync_s", sync_s));
    }
    metrics
}

/// When `--until-steady` ended the job before its last interval, in
/// seconds since it started.
fn ended_steady(job: &Job, steady: &Steady) -> Option<f64> {
    let before_the_end = steady.interval < job.total_intervals();
    steady.at_s.filter(|_| job.until_steady && before_the_end)
}

fn job_notes(job: &Job, steady: &Steady) -> Vec<String> {
    let mut notes = job.notes.clone();
    if job.rate.is_some() {
        notes.push(
            "rate-limited: response times start when an I/O is issued; time an I/O waited behind schedule is not counted (as in vdbench)".into(),
        );
    }
    if job.fdatasync_every > 0 {
        notes.push(format!(
            "{} of a thread is followed by fdatasync, counted in that write's response time",
            crate::units::every_nth(u64::from(job.fdatasync_every), "write")
        ));
    }
    if job.end_fsync && job.writes() {
        notes
            .push("the file was fsynced when the job's I/O ended, inside its measured time".into());
    }
    if let Some(at_s) = ended_steady(job, steady) {
        notes.push(format!(
            "--until-steady: the job ended at steady state after {at_s:.1} s, before its duration"
        ));
    }
    if job.verify {
        notes.push(
            "verified: every write first reads and checks the blocks it overwrites; its response time includes that read".into(),
        );
    }
    notes
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::workload::pattern::job;

    /// The flags of a job's write rate after it wrote 256 MiB of a 256 MiB
    /// file, under a 4 GiB dirty threshold.
    fn flags_after_256_mib(job: &Job) -> Vec<Flag> {
        let mib256 = 256 << 20;
        let timing = PhaseTiming::new(
            std::time::Instant::now(),
            Duration::from_secs(2),
            Duration::ZERO,
        );
        Measured::over(&timing)
            .left_dirty_under(unsynced_bytes(job, mib256, mib256), Some(4 << 30))
            .metric(
                "mib_per_s",
                "MiB/s",
                crate::result::Direction::HigherIsBetter,
                128.0,
                1,
            )
            .flags
    }

    #[test]
    fn an_unsynced_write_under_the_dirty_threshold_is_flagged_cached() {
        let write = Job {
            read_pct: 0.0,
            ..job::tests::job()
        };
        assert_eq!(flags_after_256_mib(&write), [Flag::WritesCached]);
        let flushed = [
            Job {
                sync: SyncFlag::Dsync,
                ..write.clone()
            },
            Job {
                direct: true,
                ..write.clone()
            },
            Job {
                end_fsync: true,
                ..write.clone()
            },
            Job {
                fdatasync_every: 8,
                ..write.clone()
            },
            job::tests::job(),
        ];
        for job in flushed {
            assert!(flags_after_256_mib(&job).is_empty(), "{job:?}");
        }
    }

    #[test]
    fn the_fdatasync_note_says_its_ordinal_right() {
        let steady = Steady {
            window: 5,
            slope_limit: 0.05,
            interval: None,
            at_s: None,
            mib_per_s: None,
        };
        let note = |every: u32| {
            let job = Job {
                fdatasync_every: every,
                ..job::tests::job()
            };
            let notes = job_notes(&job, &steady);
            notes.into_iter().find(|n| n.contains("fdatasync")).unwrap()
        };
        assert!(
            note(1).starts_with("every write of a thread"),
            "{}",
            note(1)
        );
        assert!(note(2).starts_with("every 2nd write"), "{}", note(2));
        assert!(note(21).starts_with("every 21st write"), "{}", note(21));
    }
}

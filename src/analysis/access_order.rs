//! `random_faster_than_sequential`: on one target, an io job that seeks
//! randomly moving more MiB/s than the same job reading or writing
//! sequentially (same file size, transfer size, read %, O_DIRECT, sync,
//! engine, threads and queue depth). A disk or an SSD is never faster at
//! random offsets: the random figure came from a cache, or the sequential
//! one was held back by something else.
use serde_json::Value;

use super::summary::WorkloadSummary;
use crate::result::{Flag, RunResult};

/// The random job's throughput must exceed the sequential one's by this
/// much: closer figures are noise around equal (RAM serves both alike).
pub const MARGIN: f64 = 1.1;

/// The metric compared: the io job's throughput.
const THROUGHPUT: &str = "mib_per_s";

/// What makes two io jobs the same but for their seeks: the job's
/// parameters that change what each I/O costs, and the file's size.
const SHAPE: &[&str] = &[
    "xfer",
    "read_pct",
    "direct",
    "sync",
    "engine",
    "threads",
    "queue_depth",
    "fdatasync_every",
];

/// An io workload's seek % and the rest of its shape; None for other
/// kinds, or a result without its parameters.
fn shape_of(params: &Value) -> Option<(f64, Vec<Value>)> {
    let job = params.get("job")?;
    let seek = job.get("seek")?.get("percent")?.as_f64()?;
    let mut shape: Vec<Value> = SHAPE.iter().map(|key| job[*key].clone()).collect();
    shape.push(params.get("file")?.get("size")?.clone());
    Some((seek, shape))
}

/// One io workload on one target: its index in the summary, its shape,
/// and its mean throughput there.
struct Job {
    workload: usize,
    seek: f64,
    shape: Vec<Value>,
    mean: f64,
}

/// Flags, on every target, each fully random io job whose throughput
/// exceeds a fully sequential one's of the same shape by `MARGIN`, with a
/// warning (`warn` adds its text and returns its number) naming both.
pub(super) fn flag(
    run: &RunResult,
    workloads: &mut [WorkloadSummary],
    mut warn: impl FnMut(&str) -> usize,
) {
    for (t, target) in run.targets.iter().enumerate() {
        let jobs: Vec<Job> = workloads
            .iter()
            .enumerate()
            .filter_map(|(w, summary)| {
                let result = target.workloads.iter().find(|r| r.name() == summary.name)?;
                let (seek, shape) = shape_of(&result.params).filter(|_| summary.kind == "io")?;
                let cell = summary.metrics.iter().find(|m| m.name == THROUGHPUT)?;
                let mean = cell.cells.get(t)?.as_ref()?.stats.mean;
                Some(Job {
                    workload: w,
                    seek,
                    shape,
                    mean,
                })
            })
            .collect();
        for random in jobs.iter().filter(|j| j.seek >= 100.0) {
            let sequential = jobs
                .iter()
                .filter(|j| j.seek <= 0.0 && j.shape == random.shape)
                .find(|j| random.mean > MARGIN * j.mean);
            if let Some(sequential) = sequential {
                let text = format!(
                    "random faster than sequential: {} at {:.1} MiB/s against {}'s {:.1} MiB/s \
                     on the same file, transfer size and access (the random figure came from a \
                     cache, or the sequential run was held back)",
                    workloads[random.workload].name,
                    random.mean,
                    workloads[sequential.workload].name,
                    sequential.mean
                );
                let number = warn(&text);
                mark(&mut workloads[random.workload], t, number);
            }
        }
    }
}

/// Adds the flag and warning `number` to the throughput cell of target `t`.
fn mark(workload: &mut WorkloadSummary, t: usize, number: usize) {
    let metric = workload.metrics.iter_mut().find(|m| m.name == THROUGHPUT);
    let Some(cell) = metric.and_then(|m| m.cells.get_mut(t)?.as_mut()) else {
        return;
    };
    if !cell.flags.contains(&Flag::RandomFasterThanSequential) {
        cell.flags.push(Flag::RandomFasterThanSequential);
        cell.warnings.push(number);
    }
}

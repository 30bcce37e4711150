//! IOR/mdtest's aggregation of per-rank results: a phase's rate is the
//! work of all ranks over (latest end − earliest start) on the common
//! clock; the stonewall view is the work all ranks had done when the first
//! finished; latency histograms are added, not averaged.
use serde::{Deserialize, Serialize};

use super::log::{Latency, Span};
use crate::measure::LatencyRecorder;
use crate::result::{
    Figure, Flag, HostPart, LatencySummary, MIN_PRECISE_SECONDS, Metric, RankPart, ScaleOut,
    Spread, WorkloadResult,
};
use crate::target::env::HostEnv;

/// One rank's contribution, as it travels to rank 0.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankReport {
    pub rank: u32,
    pub host: HostEnv,
    pub result: WorkloadResult,
    pub spans: Vec<Span>,
    pub latencies: Vec<Latency>,
}

/// How `ScaleOut::clock` describes the common clock (see `scale::clock`).
pub const CLOCK: &str =
    "monotonic clock of each rank, zeroed when all ranks left a barrier at start-up";

/// One rank's part in one metric.
struct Part<'a> {
    report: &'a RankReport,
    metric: &'a Metric,
    span: &'a Span,
}

/// The job's result: rank 0's with every metric aggregated over all
/// ranks, and the spread, hosts and ranks behind it.
pub fn aggregate(reports: &[RankReport]) -> anyhow::Result<WorkloadResult> {
    let first = reports
        .first()
        .ok_or_else(|| anyhow::anyhow!("no rank reported"))?;
    let mut all_parts = Vec::new();
    for metric in &first.result.metrics {
        all_parts.push(parts_of(reports, &metric.name)?);
    }
    let origin = all_parts
        .iter()
        .flatten()
        .map(|p| p.span.start_s)
        .fold(f64::INFINITY, f64::min);
    let mut result = first.result.clone();
    result.metrics = all_parts.iter().map(|parts| combined(parts)).collect();
    let hosts = hosts_of(reports);
    result.notes.push(format!(
        "{} ranks on {} host(s): each rate is all ranks' work over (latest end - earliest start)",
        reports.len(),
        hosts.len()
    ));
    result.scale = Some(ScaleOut {
        ranks: reports.len() as u32,
        clock: CLOCK.into(),
        spread: all_parts
            .iter()
            .map(|parts| spread(parts, origin))
            .collect(),
        hosts: hosts
            .iter()
            .map(|&host| host_part(host, reports, &all_parts, origin))
            .collect(),
        per_rank: reports
            .iter()
            .map(|r| rank_part(r, &all_parts, origin))
            .collect(),
    });
    Ok(result)
}

/// Every rank's metric `name` and the phase it was measured over.
fn parts_of<'a>(reports: &'a [RankReport], name: &str) -> anyhow::Result<Vec<Part<'a>>> {
    reports
        .iter()
        .map(|report| {
            let metric = report
                .result
                .metric(name)
                .ok_or_else(|| anyhow::anyhow!("rank {} has no metric {name}", report.rank))?;
            let span = report
                .spans
                .iter()
                .find(|s| s.elapsed_s == metric.elapsed_s)
                .ok_or_else(|| {
                    anyhow::anyhow!("rank {}: metric {name} has no timed phase", report.rank)
                })?;
            Ok(Part {
                report,
                metric,
                span,
            })
        })
        .collect()
}

fn earliest_start(parts: &[&Part<'_>]) -> f64 {
    parts
        .iter()
        .map(|p| p.span.start_s)
        .fold(f64::INFINITY, f64::min)
}

fn latest_end(parts: &[&Part<'_>]) -> f64 {
    parts
        .iter()
        .map(|p| p.span.end_s)
        .fold(f64::NEG_INFINITY, f64::max)
}

/// Units per sample of a metric (1/MiB for MiB/s, 1e-6 for MB/s, 1 for
/// files/s), recovered from a rank's own figure: value = samples × unit /
/// elapsed.
fn unit_scale(parts: &[&Part<'_>]) -> f64 {
    parts
        .iter()
        .map(|p| p.metric)
        .find(|m| m.samples > 0 && m.elapsed_s > 0.0 && m.value > 0.0)
        .map_or(1.0, |m| m.value * m.elapsed_s / m.samples as f64)
}

/// The metric's value for `samples` of work over `seconds`: a time metric
/// (unit "s") is the time itself, anything else a rate.
fn value_of(metric: &Metric, samples: f64, seconds: f64, unit_scale: f64) -> f64 {
    match (metric.unit.as_str(), seconds > 0.0) {
        ("s", _) => seconds,
        (_, true) => samples * unit_scale / seconds,
        (_, false) => 0.0,
    }
}

/// The metric over `parts` (all ranks, or one host's).
fn combined(parts: &[Part<'_>]) -> Metric {
    let refs: Vec<&Part<'_>> = parts.iter().collect();
    combined_of(&refs)
}

fn combined_of(parts: &[&Part<'_>]) -> Metric {
    let model = parts[0].metric;
    let elapsed_s = latest_end(parts) - earliest_start(parts);
    let samples: u64 = parts.iter().map(|p| p.metric.samples).sum();
    let cpu: Vec<f64> = parts.iter().filter_map(|p| p.metric.cpu_percent).collect();
    let mut flags: Vec<Flag> = parts
        .iter()
        .flat_map(|p| p.metric.flags.iter().copied())
        .filter(|&f| f != Flag::TooShort)
        .collect();
    flags.sort_by_key(|f| *f as u8);
    flags.dedup();
    if elapsed_s < MIN_PRECISE_SECONDS {
        flags.insert(0, Flag::TooShort);
    }
    Metric {
        value: value_of(model, samples as f64, elapsed_s, unit_scale(parts)),
        samples,
        elapsed_s,
        // Each rank's CPU % is of its own process: the mean says how busy
        // a rank was.
        cpu_percent: (!cpu.is_empty()).then(|| cpu.iter().sum::<f64>() / cpu.len() as f64),
        latency: merged_latency(parts),
        flags,
        ..model.clone()
    }
}

/// The ranks' histograms added up, when every rank has one.
fn merged_latency(parts: &[&Part<'_>]) -> Option<LatencySummary> {
    let mut merged = LatencyRecorder::new();
    for part in parts {
        let summary = part.metric.latency.as_ref()?;
        let latency = part
            .report
            .latencies
            .iter()
            .find(|l| &l.summary == summary)?;
        merged.merge(&LatencyRecorder::from_buckets(&latency.buckets));
    }
    merged.summarize()
}

fn spread(parts: &[Part<'_>], origin: f64) -> Spread {
    let refs: Vec<&Part<'_>> = parts.iter().collect();
    let model = parts[0].metric;
    let start = earliest_start(&refs);
    let first_done = parts
        .iter()
        .map(|p| p.span.end_s)
        .fold(f64::INFINITY, f64::min);
    let stonewall_samples: f64 = parts
        .iter()
        .map(|p| p.metric.samples as f64 * p.span.done_at(first_done))
        .sum();
    let own: Vec<f64> = parts
        .iter()
        .map(|p| p.span.end_s - p.span.start_s)
        .collect();
    Spread {
        name: model.name.clone(),
        first_done_s: first_done - origin,
        last_done_s: latest_end(&refs) - origin,
        stonewall_samples,
        stonewall_value: value_of(
            model,
            stonewall_samples,
            first_done - start,
            unit_scale(&refs),
        ),
        fastest_s: own.iter().copied().fold(f64::INFINITY, f64::min),
        slowest_s: own.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    }
}

fn figure(parts: &[&Part<'_>], origin: f64) -> Figure {
    let metric = combined_of(parts);
    Figure {
        name: metric.name,
        value: metric.value,
        samples: metric.samples,
        elapsed_s: metric.elapsed_s,
        start_s: earliest_start(parts) - origin,
    }
}

/// Each host's environment, in the order of its first rank.
fn hosts_of(reports: &[RankReport]) -> Vec<&HostEnv> {
    let mut hosts: Vec<&HostEnv> = Vec::new();
    for report in reports {
        if !hosts.iter().any(|h| h.hostname == report.host.hostname) {
            hosts.push(&report.host);
        }
    }
    hosts
}

fn host_part(
    env: &HostEnv,
    reports: &[RankReport],
    all_parts: &[Vec<Part<'_>>],
    origin: f64,
) -> HostPart {
    let host = env.hostname.as_str();
    let on_host = |p: &&Part<'_>| p.report.host.hostname == host;
    HostPart {
        host: host.to_string(),
        env: env.clone(),
        ranks: reports
            .iter()
            .filter(|r| r.host.hostname == host)
            .map(|r| r.rank)
            .collect(),
        metrics: all_parts
            .iter()
            .map(|parts| figure(&parts.iter().filter(on_host).collect::<Vec<_>>(), origin))
            .collect(),
    }
}

fn rank_part(report: &RankReport, all_parts: &[Vec<Part<'_>>], origin: f64) -> RankPart {
    let own = |p: &&Part<'_>| p.report.rank == report.rank;
    RankPart {
        rank: report.rank,
        host: report.host.hostname.clone(),
        metrics: all_parts
            .iter()
            .map(|parts| figure(&parts.iter().filter(own).collect::<Vec<_>>(), origin))
            .collect(),
    }
}

//! IOR/mdtest's aggregation of per-rank results: a phase's rate is the
//! work of all ranks over (latest end − earliest start) on the common
//! clock; the stonewall view is the work all ranks had done when the first
//! finished; latency histograms are added, not averaged.
use serde::{Deserialize, Serialize};

use super::clock::{self, Readings};
use super::log::{Latency, Span};
use crate::measure::LatencyRecorder;
use crate::measure::devices::Delta;
use crate::measure::phase::Measured;
use crate::result::env::{HostEnv, TargetEnv};
use crate::result::{
    AcrossRanks, DeviceEvidence, Figure, Flag, HostPart, LatencySummary, MIN_PRECISE_SECONDS,
    Metric, RankPart, ScaleOut, Spread, Straggler, WorkloadResult,
};

/// One rank's contribution, as it travels to rank 0.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankReport {
    pub rank: u32,
    pub host: HostEnv,
    pub result: WorkloadResult,
    pub spans: Vec<Span>,
    pub latencies: Vec<Latency>,
    /// Each metric's ids, in the order of `result.metrics`: the result's
    /// JSON leaves them out, so they travel beside it.
    metric_ids: Vec<MetricIds>,
    /// The rank's clock readings at start-up (`scale::clock`).
    #[serde(default)]
    pub clock: Readings,
    #[serde(default)]
    pub setup: Setup,
}

/// What, besides the host, must be the same on every host for the job's
/// figures to be one system's: fsbench itself, and how the host sees the
/// target.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Setup {
    pub fsbench: String,
    pub fs_type: String,
    pub mount_options: String,
}

impl Setup {
    pub fn of(target: Option<&TargetEnv>) -> Setup {
        Setup {
            fsbench: env!("CARGO_PKG_VERSION").to_string(),
            fs_type: target.map(|t| t.fs_type.clone()).unwrap_or_default(),
            mount_options: target.map(|t| t.mount_options.clone()).unwrap_or_default(),
        }
    }
}

/// What ties a metric to its span and to the histogram of its latency.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct MetricIds {
    phase: Option<u64>,
    histogram: Option<u64>,
}

impl RankReport {
    pub fn new(
        rank: u32,
        host: HostEnv,
        result: WorkloadResult,
        spans: Vec<Span>,
        latencies: Vec<Latency>,
    ) -> Self {
        let metric_ids = ids_of(&result.metrics);
        RankReport {
            rank,
            host,
            result,
            spans,
            latencies,
            metric_ids,
            clock: Readings::default(),
            setup: Setup::default(),
        }
    }
}

fn ids_of(metrics: &[Metric]) -> Vec<MetricIds> {
    metrics
        .iter()
        .map(|m| MetricIds {
            phase: m.phase,
            histogram: m.latency.as_ref().and_then(|l| l.histogram),
        })
        .collect()
}

/// How `ScaleOut::clock` describes the common clock (see `scale::clock`).
pub const CLOCK: &str =
    "monotonic clock of each rank, zeroed when all ranks left a barrier at start-up";

/// One rank's part in one metric.
struct Part<'a> {
    report: &'a RankReport,
    metric: &'a Metric,
    span: &'a Span,
    /// The histogram of the metric's latency, if it has one.
    latency: Option<&'a Latency>,
}

/// The job's result: rank 0's with every metric aggregated over all
/// ranks, and the spread, hosts and ranks behind it.
pub fn aggregate(reports: &[RankReport]) -> anyhow::Result<WorkloadResult> {
    let first = reports
        .first()
        .ok_or_else(|| anyhow::anyhow!("no rank reported"))?;
    let mut all_parts = Vec::new();
    let mut left_out = Vec::new();
    for metric in &first.result.metrics {
        match parts_of(reports, &metric.name) {
            Ok(parts) => all_parts.push(parts),
            // A space figure needs every rank's logical bytes: without one
            // rank's, rank 0's growth over the others' bytes would overstate
            // it. Left out rather than wrong (a rank whose reading failed,
            // or saw the file system shrink, reports none).
            Err(e) if metric.across_ranks == AcrossRanks::FileSystemGrowth => {
                left_out.push(format!("{}: left out ({e})", metric.name));
            }
            Err(e) => return Err(e),
        }
    }
    let origin = all_parts
        .iter()
        .flatten()
        .map(|p| p.span.start_s)
        .fold(f64::INFINITY, f64::min);
    let mut result = first.result.clone();
    result.metrics = all_parts.iter().map(|parts| combined(parts)).collect();
    result.notes.extend(left_out);
    let hosts = hosts_of(reports);
    result.notes.push(format!(
        "{} ranks on {} host(s): each rate is all ranks' work over (latest end - earliest start)",
        reports.len(),
        hosts.len()
    ));
    result.notes.extend(differences(reports));
    let readings: Vec<&Readings> = reports.iter().map(|r| &r.clock).collect();
    let clock_spread_s = clock::spread(&readings);
    let wall_clock_skew_s = clock::wall_skew(&readings);
    let spreads: Vec<Spread> = all_parts
        .iter()
        .map(|parts| spread(parts, origin))
        .collect();
    result
        .notes
        .extend(clock_notes(&spreads, clock_spread_s, wall_clock_skew_s));
    result.notes.extend(straggler_notes(&spreads));
    result.scale = Some(ScaleOut {
        ranks: reports.len() as u32,
        clock: CLOCK.into(),
        clock_spread_s,
        wall_clock_skew_s,
        spread: spreads,
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
    reports.iter().map(|report| part_of(report, name)).collect()
}

fn part_of<'a>(report: &'a RankReport, name: &str) -> anyhow::Result<Part<'a>> {
    let (metric, ids) = report
        .result
        .metrics
        .iter()
        .zip(&report.metric_ids)
        .find(|(m, _)| m.name == name)
        .ok_or_else(|| anyhow::anyhow!("rank {} has no metric {name}", report.rank))?;
    let span = report
        .spans
        .iter()
        .find(|s| Some(s.phase) == ids.phase)
        .ok_or_else(|| anyhow::anyhow!("rank {}: metric {name} has no timed phase", report.rank))?;
    let latency = report
        .latencies
        .iter()
        .find(|l| Some(l.id) == ids.histogram);
    Ok(Part {
        report,
        metric,
        span,
        latency,
    })
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

/// The job's value of the metric over `parts`, given their `samples`
/// over `seconds` (see [`AcrossRanks`]): work over time, or the statistic
/// of the samples that the metric is, computed exactly from the ranks'.
fn combined_value(parts: &[&Part<'_>], samples: f64, seconds: f64) -> f64 {
    let model = parts[0].metric;
    let weight = |p: &&Part<'_>| p.metric.samples as f64;
    let total: f64 = parts.iter().map(weight).sum();
    match &model.across_ranks {
        AcrossRanks::ByUnit => value_of(model, samples, seconds, unit_scale(parts)),
        AcrossRanks::Mean if total > 0.0 => {
            parts
                .iter()
                .map(|p| weight(p) * p.metric.value)
                .sum::<f64>()
                / total
        }
        AcrossRanks::Mean => 0.0,
        AcrossRanks::Max => parts
            .iter()
            .map(|p| p.metric.value)
            .fold(f64::NEG_INFINITY, f64::max),
        // The ranks write on one shared file system and take their readings
        // in step (`workload::space`), so each rank's growth is the whole
        // job's: rank 0's (the first part; its value × its samples is the
        // growth it read) over the logical bytes of every rank. Summing the
        // ranks' growths would count every byte once per rank.
        AcrossRanks::FileSystemGrowth if total > 0.0 => {
            parts[0].metric.value * weight(&parts[0]) / total
        }
        AcrossRanks::FileSystemGrowth => 0.0,
        AcrossRanks::StdDevOf(_) if total <= 0.0 => 0.0,
        AcrossRanks::StdDevOf(mean_name) => {
            // Each rank's sum and sum of squares, from its count n, mean m
            // and standard deviation s: n·m and n·(s² + m²). A rank without
            // the mean metric counts as m = 0 (then this is the ranks'
            // root mean square deviation).
            let mean_of =
                |p: &&Part<'_>| p.report.result.metric(mean_name).map_or(0.0, |m| m.value);
            let sum: f64 = parts.iter().map(|p| weight(p) * mean_of(p)).sum();
            let squares: f64 = parts
                .iter()
                .map(|p| weight(p) * (p.metric.value.powi(2) + mean_of(p).powi(2)))
                .sum();
            let mean = sum / total;
            (squares / total - mean * mean).max(0.0).sqrt()
        }
    }
}

/// The metric over `parts` (all ranks, or one host's).
fn combined(parts: &[Part<'_>]) -> Metric {
    let refs: Vec<&Part<'_>> = parts.iter().collect();
    combined_of(&refs)
}

/// The parts' samples together, and their span: latest end − earliest
/// start.
fn work_of(parts: &[&Part<'_>]) -> (u64, f64) {
    let samples = parts.iter().map(|p| p.metric.samples).sum();
    (samples, latest_end(parts) - earliest_start(parts))
}

/// The metric over the job's phase: `parts`' work over their span, made
/// like any measured metric (flagged for the span, not for a rank's time).
fn combined_of(parts: &[&Part<'_>]) -> Metric {
    let model = parts[0].metric;
    let (samples, elapsed_s) = work_of(parts);
    let value = combined_value(parts, samples as f64, elapsed_s);
    let metric = job_phase(parts, elapsed_s)
        .metric(&model.name, &model.unit, model.direction, value, samples)
        .with_latency(merged_latency(parts))
        .with_across_ranks(model.across_ranks.clone())
        .with_detail(model.detail);
    match model.across_ranks {
        // Read after a sync, outside the phase: the phase's flags (too
        // short, writes cached) say nothing of it (`workload::space`).
        AcrossRanks::FileSystemGrowth => Metric {
            flags: Vec::new(),
            ..metric
        },
        _ => metric,
    }
}

/// The phase all `parts` make, `elapsed_s` long: its data cached, or its
/// writes left in the page cache, if any rank's were.
fn job_phase(parts: &[&Part<'_>], elapsed_s: f64) -> Measured {
    let cpu: Vec<f64> = parts.iter().filter_map(|p| p.metric.cpu_percent).collect();
    Measured {
        elapsed_s,
        // Each rank's CPU % is of its own process: the mean says how busy
        // a rank was.
        cpu_percent: (!cpu.is_empty()).then(|| cpu.iter().sum::<f64>() / cpu.len() as f64),
        fits_in_page_cache: parts
            .iter()
            .any(|p| p.metric.flags.contains(&Flag::FitsInPageCache)),
        writes_cached: parts
            .iter()
            .any(|p| p.metric.flags.contains(&Flag::WritesCached)),
        // Over all ranks: no timing of this rank.
        phase: None,
        // Ranks on one host read the same counters: one rank's per host.
        device: per_host_delta(parts, elapsed_s),
        read_bytes: summed(parts, |d| d.workload_read_bytes),
        written_bytes: summed(parts, |d| d.workload_written_bytes),
        unsynced: None,
        writes_reached_device: parts.iter().all(|p| {
            p.metric
                .device
                .as_ref()
                .is_some_and(|d| d.write_amplification.is_some())
        }),
        reads_bypassed_cache: false,
        // The ranks' own counters raised it where they read nothing.
        meant_cold: false,
        device_flags: device_flags(parts),
        // The job keeps rank 0's time series, so its cliff too.
        cliff: parts
            .iter()
            .find(|p| p.report.rank == 0)
            .and_then(|p| p.metric.cliff.clone()),
    }
}

/// What the devices did for the job: the counters of the first rank of
/// each host (the others on it read the same ones), summed over hosts,
/// over the job's `elapsed_s`; None unless every host's has counters.
/// Each host has its own links to a network file system: the job's link
/// is their sum (two clients on 1 GbE move at most 2 Gb/s together),
/// unknown where one host's is.
fn per_host_delta(parts: &[&Part<'_>], elapsed_s: f64) -> Option<Delta> {
    let mut hosts: Vec<&str> = Vec::new();
    let mut sum: Option<Delta> = None;
    let mut links = Some(0u64);
    for part in parts {
        let host = part.report.host.hostname.as_str();
        if hosts.contains(&host) {
            continue;
        }
        hosts.push(host);
        let evidence = part.metric.device.as_ref()?;
        let delta = Delta::from_evidence(evidence, part.metric.elapsed_s);
        links = links.zip(delta.link_bytes_per_s).map(|(a, b)| a + b);
        sum = Some(sum.map_or(delta, |s| s.plus(&delta)));
    }
    sum.map(|delta| Delta {
        elapsed_s,
        link_bytes_per_s: links,
        ..delta
    })
}

/// The bytes all ranks moved in a direction, from their evidence; None
/// unless every rank says.
fn summed(parts: &[&Part<'_>], bytes: impl Fn(&DeviceEvidence) -> Option<u64>) -> Option<u64> {
    parts
        .iter()
        .map(|p| p.metric.device.as_ref().and_then(&bytes))
        .sum()
}

/// The flags any rank's device counters raised, each once.
fn device_flags(parts: &[&Part<'_>]) -> Vec<Flag> {
    let mut flags: Vec<Flag> = Vec::new();
    let raised = parts.iter().flat_map(|p| &p.metric.flags);
    for &flag in raised.filter(|f| f.from_device()) {
        if !flags.contains(&flag) {
            flags.push(flag);
        }
    }
    flags
}

/// The ranks' histograms added up, when every rank has one.
fn merged_latency(parts: &[&Part<'_>]) -> Option<LatencySummary> {
    let mut merged = LatencyRecorder::new();
    for part in parts {
        merged.merge(&LatencyRecorder::from_buckets(&part.latency?.buckets));
    }
    merged.summary()
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
    let least = |wait: fn(&Span) -> f64| {
        parts
            .iter()
            .map(|p| wait(p.span))
            .fold(f64::INFINITY, f64::min)
    };
    let latest_start = parts
        .iter()
        .map(|p| p.span.start_s)
        .fold(f64::NEG_INFINITY, f64::max);
    Spread {
        name: model.name.clone(),
        first_done_s: first_done - origin,
        last_done_s: latest_end(&refs) - origin,
        stonewall_samples,
        // A statistic of the samples (a mean, a maximum) has no stonewall
        // view: it is the job's value.
        stonewall_value: combined_value(&refs, stonewall_samples, first_done - start),
        fastest_s: own.iter().copied().fold(f64::INFINITY, f64::min),
        slowest_s: own.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        start_skew_s: latest_start - start,
        barrier_s: least(|s| s.start_wait_s) + least(|s| s.end_wait_s),
        straggler: straggler(parts),
    }
}

/// A lag under this share of the phase's span is the ranks' usual spread.
const STRAGGLER_SHARE: f64 = 0.1;

/// The host whose ranks ended last, when it ended `STRAGGLER_SHARE` of
/// the span or more after every other host; on one host, the rank.
fn straggler(parts: &[Part<'_>]) -> Option<Straggler> {
    let hosts: Vec<&str> = parts
        .iter()
        .map(|p| p.report.host.hostname.as_str())
        .collect();
    let one_host = hosts.iter().all(|h| *h == hosts[0]);
    let group = |p: &Part<'_>| match one_host {
        true => format!("rank {}", p.report.rank),
        false => p.report.host.hostname.clone(),
    };
    let last = parts
        .iter()
        .max_by(|a, b| a.span.end_s.total_cmp(&b.span.end_s))?;
    let name = group(last);
    let others_end = parts
        .iter()
        .filter(|p| group(p) != name)
        .map(|p| p.span.end_s)
        .fold(f64::NEG_INFINITY, f64::max);
    let refs: Vec<&Part<'_>> = parts.iter().collect();
    let span = latest_end(&refs) - earliest_start(&refs);
    let lag_s = last.span.end_s - others_end;
    // A phase too short to time precisely has no telling lag either.
    let judged = span >= MIN_PRECISE_SECONDS && lag_s.is_finite();
    (judged && lag_s >= STRAGGLER_SHARE * span).then(|| Straggler {
        ranks: parts
            .iter()
            .filter(|p| group(p) == name)
            .map(|p| p.report.rank)
            .collect(),
        name,
        lag_s,
        share: lag_s / span,
    })
}

/// One note per straggler, naming every metric of its phase: "straggler
/// in seq_read: h2 (ranks 1,3) ended 4.210 s after the others, 38 % of
/// the phase's span: ...".
fn straggler_notes(spreads: &[Spread]) -> Vec<String> {
    let mut found: Vec<(&Straggler, Vec<&str>)> = Vec::new();
    for spread in spreads {
        let Some(s) = spread.straggler.as_ref() else {
            continue;
        };
        // The metrics of one phase share its straggler exactly.
        match found.iter_mut().find(|(seen, _)| *seen == s) {
            Some((_, names)) => names.push(&spread.name),
            None => found.push((s, vec![&spread.name])),
        }
    }
    found
        .into_iter()
        .map(|(s, names)| {
            let ranks: Vec<String> = s.ranks.iter().map(u32::to_string).collect();
            let who = match s.name.starts_with("rank ") {
                true => s.name.clone(),
                false => format!("{} (ranks {})", s.name, ranks.join(",")),
            };
            format!(
                "straggler in {}: {who} ended {:.3} s after the others, {:.0} % of the phase's \
                 span: the others waited for it; the stonewall rate leaves its tail out",
                names.join(", "),
                s.lag_s,
                s.share * 100.0
            )
        })
        .collect()
}

/// A common clock that agrees less closely than this share of a phase's
/// span makes that phase's rate uncertain by as much.
const CLOCK_SHARE: f64 = 0.01;

/// Hosts whose wall clocks differ by more than this have results whose
/// timestamps disagree (the figures use the common clock).
const WALL_SKEW_S: f64 = 1.0;

/// Warnings on the clocks: phases too short for how closely the common
/// clock agrees, and wall clocks apart.
fn clock_notes(spreads: &[Spread], spread_s: Option<f64>, skew_s: Option<f64>) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(spread_s) = spread_s {
        let short: Vec<&str> = spreads
            .iter()
            // The slowest rank's own time: the phase's length, at least.
            .filter(|s| spread_s > CLOCK_SHARE * s.slowest_s)
            .map(|s| s.name.as_str())
            .collect();
        if !short.is_empty() {
            notes.push(format!(
                "the ranks' clocks agree within {:.3} ms, over 1 % of the span of {}: \
                 their rates are that uncertain (run longer phases)",
                spread_s * 1e3,
                short.join(", ")
            ));
        }
    }
    if let Some(skew_s) = skew_s.filter(|&s| s > WALL_SKEW_S) {
        notes.push(format!(
            "the hosts' wall clocks differ by {skew_s:.1} s: their logs' times disagree \
             (the figures use the common clock)"
        ));
    }
    notes
}

/// One warning per thing the hosts differ in (kernel, file system, mount
/// options, fsbench version), naming what each host has.
fn differences(reports: &[RankReport]) -> Vec<String> {
    type Facet = fn(&RankReport) -> String;
    let facets: [(&str, Facet); 4] = [
        ("kernel", |r| r.host.kernel.clone()),
        ("file system", |r| r.setup.fs_type.clone()),
        ("mount options", |r| r.setup.mount_options.clone()),
        ("fsbench version", |r| r.setup.fsbench.clone()),
    ];
    let mut notes = Vec::new();
    for (what, facet) in facets {
        let mut seen: Vec<(String, String)> = Vec::new();
        for report in reports {
            let host = &report.host.hostname;
            if !seen.iter().any(|(h, _)| h == host) {
                seen.push((host.clone(), facet(report)));
            }
        }
        if seen.iter().any(|(_, value)| *value != seen[0].1) {
            let each: Vec<String> = seen.iter().map(|(h, v)| format!("{h}: {v}")).collect();
            notes.push(format!(
                "hosts differ in {what} ({}): the job's figures mix them",
                each.join("; ")
            ));
        }
    }
    notes
}

/// The value of a host's or a rank's part (of the `job`'s parts), without
/// the flags and the merged latency histograms that only the job's metric
/// shows. Space on disk is no one part's (each reading counts every rank's
/// writes): its figure is the job's.
fn figure(job: &[Part<'_>], parts: &[&Part<'_>], origin: f64) -> Figure {
    let (samples, elapsed_s) = work_of(parts);
    let value = match parts[0].metric.across_ranks {
        AcrossRanks::FileSystemGrowth => {
            let job: Vec<&Part<'_>> = job.iter().collect();
            combined_value(&job, 0.0, 0.0)
        }
        _ => combined_value(parts, samples as f64, elapsed_s),
    };
    Figure {
        name: parts[0].metric.name.clone(),
        value,
        samples,
        elapsed_s,
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
            .map(|parts| {
                let on_host: Vec<&Part<'_>> = parts.iter().filter(on_host).collect();
                figure(parts, &on_host, origin)
            })
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
            .map(|parts| figure(parts, &parts.iter().filter(own).collect::<Vec<_>>(), origin))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Direction;

    const MIB: f64 = (1u64 << 20) as f64;

    /// The id of the timed phase the test metrics are measured over.
    const PHASE: u64 = 0;

    fn host(name: &str) -> HostEnv {
        HostEnv {
            hostname: name.into(),
            kernel: "6.1".into(),
            kernel_version: String::new(),
            os: None,
            arch: "x86_64".into(),
            cpu_model: None,
            cpu_count: 2,
            ram_bytes: 1 << 30,
        }
    }

    /// A rate metric as a workload reports it: `samples` over `seconds`,
    /// in `unit` (value = samples × scale / seconds).
    fn rate(name: &str, unit: &str, scale: f64, samples: u64, seconds: f64) -> Metric {
        Metric {
            name: name.into(),
            value: samples as f64 * scale / seconds,
            unit: unit.into(),
            direction: Direction::HigherIsBetter,
            samples,
            elapsed_s: seconds,
            cpu_percent: Some(50.0),
            latency: None,
            flags: Vec::new(),
            across_ranks: Default::default(),
            phase: Some(PHASE),
            detail: false,
            device: None,
            cliff: None,
        }
    }

    fn span(start_s: f64, seconds: f64, ops: u64, checkpoints: Vec<(f64, u64)>) -> Span {
        Span {
            phase: PHASE,
            start_s,
            end_s: start_s + seconds,
            ops,
            checkpoints,
            start_wait_s: 0.0,
            end_wait_s: 0.0,
        }
    }

    fn rank(rank: u32, on: &str, metrics: Vec<Metric>, spans: Vec<Span>) -> RankReport {
        let result = WorkloadResult {
            workload: "bonnie".into(),
            metrics,
            ..Default::default()
        };
        RankReport::new(rank, host(on), result, spans, Vec::new())
    }

    /// Rank 0: 100 files in [10, 11]; rank 1: 300 files in [10.5, 12.5],
    /// a checkpoint every 0.5 s; rank 2 (another host): 200 files in
    /// [10.25, 11.25], no checkpoints.
    fn three_ranks() -> Vec<RankReport> {
        vec![
            rank(
                0,
                "a",
                vec![rate("create", "files/s", 1.0, 100, 1.0)],
                vec![span(10.0, 1.0, 100, vec![])],
            ),
            rank(
                1,
                "a",
                vec![rate("create", "files/s", 1.0, 300, 2.0)],
                vec![span(
                    10.5,
                    2.0,
                    300,
                    vec![(10.75, 30), (11.25, 90), (12.0, 240)],
                )],
            ),
            rank(
                2,
                "b",
                vec![rate("create", "files/s", 1.0, 200, 1.0)],
                vec![span(10.25, 1.0, 0, vec![])],
            ),
        ]
    }

    #[test]
    fn rate_is_all_work_over_latest_end_minus_earliest_start() {
        let result = aggregate(&three_ranks()).unwrap();
        let create = &result.metrics[0];
        assert_eq!(create.samples, 600);
        assert_eq!(create.elapsed_s, 2.5);
        assert_eq!(create.value, 600.0 / 2.5);
        // Not the sum of per-rank rates (100 + 150 + 200 = 450), nor the
        // work over the slowest rank's own time (600 / 2 = 300).
        assert!(create.flags.is_empty());
    }

    #[test]
    fn stonewall_counts_what_every_rank_had_done_when_the_first_finished() {
        let result = aggregate(&three_ranks()).unwrap();
        let spread = &result.scale.unwrap().spread[0];
        // First done: rank 0 at 11.0 (1.0 after the earliest start).
        assert_eq!(spread.first_done_s, 1.0);
        assert_eq!(spread.last_done_s, 2.5);
        // Rank 1 at 11.0: halfway between its checkpoints 30 and 90 → 60
        // of 300; rank 2 (no checkpoints): 0.75 of its time → 150 of 200.
        assert!((spread.stonewall_samples - (100.0 + 60.0 + 150.0)).abs() < 1e-9);
        assert!((spread.stonewall_value - 310.0).abs() < 1e-9);
        assert_eq!(spread.fastest_s, 1.0);
        assert_eq!(spread.slowest_s, 2.0);
    }

    #[test]
    fn hosts_and_ranks_are_broken_down() {
        let scale = aggregate(&three_ranks()).unwrap().scale.unwrap();
        assert_eq!(scale.ranks, 3);
        let hosts: Vec<(&str, &[u32])> = scale
            .hosts
            .iter()
            .map(|h| (h.host.as_str(), h.ranks.as_slice()))
            .collect();
        assert_eq!(hosts, [("a", &[0, 1][..]), ("b", &[2][..])]);
        // Host a: 400 files from 10.0 to 12.5.
        let a = &scale.hosts[0].metrics[0];
        assert_eq!((a.samples, a.elapsed_s, a.value), (400, 2.5, 160.0));
        assert_eq!(scale.hosts[1].metrics[0].start_s, 0.25);
        let ranks: Vec<f64> = scale.per_rank.iter().map(|r| r.metrics[0].value).collect();
        assert_eq!(ranks, [100.0, 150.0, 200.0]);
        assert_eq!(scale.per_rank[1].metrics[0].start_s, 0.5);
    }

    /// 64 MiB written and a time metric, both over [start, start + seconds].
    fn writer(number: u32, start: f64, seconds: f64) -> RankReport {
        let time = Metric {
            unit: "s".into(),
            value: seconds,
            direction: Direction::LowerIsBetter,
            ..rate("copy_s", "s", 1.0, 10, seconds)
        };
        rank(
            number,
            "a",
            vec![
                rate("put_block", "MiB/s", 1.0 / MIB, 64 << 20, seconds),
                time,
            ],
            vec![span(start, seconds, 0, vec![])],
        )
    }

    #[test]
    fn units_and_time_metrics_keep_their_meaning() {
        let reports = vec![writer(0, 0.0, 2.0), writer(1, 1.0, 3.0)];
        let result = aggregate(&reports).unwrap();
        assert!((result.metrics[0].value - 128.0 / 4.0).abs() < 1e-9);
        assert_eq!(result.metrics[1].value, 4.0);
        assert_eq!(result.metrics[1].samples, 20);
    }

    #[test]
    fn latency_histograms_are_added_not_averaged() {
        let mut reports = three_ranks();
        reports.truncate(2);
        for (report, (ns, count)) in reports.iter_mut().zip([(1_000, 100), (3_000, 300)]) {
            let mut recorder = LatencyRecorder::new();
            for _ in 0..count {
                recorder.record_ns(ns);
            }
            let id = u64::from(report.rank);
            report.result.metrics[0].latency = Some(LatencySummary {
                histogram: Some(id),
                ..recorder.summary().unwrap()
            });
            report.latencies.push(Latency {
                id,
                buckets: recorder.buckets(),
            });
            report.metric_ids = ids_of(&report.result.metrics);
        }
        let result = aggregate(&reports).unwrap();
        let latency = result.metrics[0].latency.as_ref().unwrap();
        assert_eq!(latency.count, 400);
        assert_eq!(latency.min_ns, 1_000);
        // Three quarters of the operations took 3 µs: so did the median.
        // Averaging the ranks' medians would say 2 µs.
        assert!((2_995..=3_005).contains(&latency.p50_ns), "{latency:?}");
        assert!((latency.mean_ns - 2_500.0).abs() < 10.0);
    }

    #[test]
    fn a_rank_without_the_metric_or_its_phase_is_an_error() {
        let mut reports = three_ranks();
        reports[2].spans.clear();
        let err = aggregate(&reports).unwrap_err().to_string();
        assert!(err.contains("rank 2") && err.contains("create"), "{err}");
        reports[2].result.metrics.clear();
        assert!(aggregate(&reports).is_err());
        assert!(aggregate(&[]).is_err());
    }

    #[test]
    fn metrics_find_their_phase_by_its_id_even_at_equal_times() {
        let second = Metric {
            phase: Some(PHASE + 1),
            ..rate("delete", "files/s", 1.0, 100, 1.0)
        };
        let later = Span {
            phase: PHASE + 1,
            ..span(5.0, 1.0, 100, vec![])
        };
        let reports = vec![rank(
            0,
            "a",
            vec![rate("create", "files/s", 1.0, 100, 1.0), second],
            vec![span(0.0, 1.0, 100, vec![]), later],
        )];
        let scale = aggregate(&reports).unwrap().scale.unwrap();
        let starts: Vec<f64> = scale.per_rank[0]
            .metrics
            .iter()
            .map(|m| m.start_s)
            .collect();
        assert_eq!(starts, [0.0, 5.0]);
    }

    #[test]
    fn a_short_aggregate_is_flagged() {
        let reports = vec![rank(
            0,
            "a",
            vec![rate("create", "files/s", 1.0, 10, 0.1)],
            vec![span(0.0, 0.1, 10, vec![])],
        )];
        let result = aggregate(&reports).unwrap();
        assert_eq!(result.metrics[0].flags, [Flag::TooShort]);
    }

    #[test]
    fn a_rank_whose_counters_flagged_its_figure_flags_the_job_without_counters() {
        let mut cached = rate("read", "MiB/s", 1.0, 10, 1.0);
        cached.flags = vec![Flag::ServedFromCache];
        let reports = vec![
            rank(0, "a", vec![cached], vec![span(0.0, 1.0, 10, vec![])]),
            rank(
                1,
                "b",
                vec![rate("read", "MiB/s", 1.0, 10, 1.0)],
                vec![span(0.0, 1.0, 10, vec![])],
            ),
        ];
        let result = aggregate(&reports).unwrap();
        assert_eq!(result.metrics[0].flags, [Flag::ServedFromCache]);
        assert!(result.metrics[0].device.is_none(), "no double counting");
    }

    /// A read of `workload` bytes whose rank saw its host's device read
    /// `device` bytes.
    fn read_with_device(workload: u64, device: u64) -> Metric {
        Metric {
            device: Some(DeviceEvidence {
                read_bytes: device,
                written_bytes: 0,
                ops: 10,
                util_percent: 50.0,
                queue_depth: 1.0,
                service_ms: 2.0,
                workload_read_bytes: Some(workload),
                workload_written_bytes: Some(0),
                read_ratio: Some(device as f64 / workload as f64),
                ..Default::default()
            }),
            ..rate("read", "MiB/s", 1.0, workload, 1.0)
        }
    }

    #[test]
    fn the_job_counts_each_hosts_devices_once_against_every_ranks_bytes() {
        let mib = 1u64 << 20;
        // Host a: two ranks read 100 MiB each, and both see a's device
        // read 200 MiB; host b: one rank, 100 MiB from its device.
        let reports = vec![
            rank(
                0,
                "a",
                vec![read_with_device(100 * mib, 200 * mib)],
                vec![span(0.0, 1.0, 10, vec![])],
            ),
            rank(
                1,
                "a",
                vec![read_with_device(100 * mib, 200 * mib)],
                vec![span(0.0, 1.0, 10, vec![])],
            ),
            rank(
                2,
                "b",
                vec![read_with_device(100 * mib, 100 * mib)],
                vec![span(0.0, 1.0, 10, vec![])],
            ),
        ];
        let result = aggregate(&reports).unwrap();
        let device = result.metrics[0]
            .device
            .as_ref()
            .expect("per-host counters");
        assert_eq!(device.read_bytes, 300 * mib, "a's once, and b's");
        assert_eq!(device.workload_read_bytes, Some(300 * mib));
        assert_eq!(device.read_ratio, Some(1.0));
        assert!(
            result.metrics[0].flags.is_empty(),
            "{:?}",
            result.metrics[0].flags
        );
        // A host without counters: no job figure rather than a partial one.
        let mut partial = reports;
        partial[2].result.metrics[0].device = None;
        assert!(aggregate(&partial).unwrap().metrics[0].device.is_none());
    }

    fn ending(rank_no: u32, on: &str, start: f64, end: f64) -> RankReport {
        rank(
            rank_no,
            on,
            vec![rate("read", "MiB/s", 1.0, 100, end - start)],
            vec![span(start, end - start, 10, vec![])],
        )
    }

    /// h2's one rank, behind a slow link, ends 4 s after h1's two: it is
    /// named with its lag; ranks a few percent apart are no stragglers.
    #[test]
    fn the_host_the_others_waited_for_is_named_with_its_lag() {
        let reports = vec![
            ending(0, "h1", 0.0, 1.0),
            ending(1, "h2", 0.0, 5.0),
            ending(2, "h1", 0.0, 0.98),
        ];
        let result = aggregate(&reports).unwrap();
        let spread = &result.scale.as_ref().unwrap().spread[0];
        let straggler = spread.straggler.as_ref().expect("h2 is the straggler");
        assert_eq!(
            (straggler.name.as_str(), &straggler.ranks[..]),
            ("h2", &[1][..])
        );
        assert!((straggler.lag_s - 4.0).abs() < 1e-9);
        assert!((straggler.share - 0.8).abs() < 1e-9);
        assert!(
            result.notes.iter().any(|n| n.starts_with(
                "straggler in read: h2 (ranks 1) ended 4.000 s after the others, 80 %"
            )),
            "{:?}",
            result.notes
        );
        let even = vec![ending(0, "h1", 0.0, 1.0), ending(1, "h2", 0.0, 1.05)];
        let spread = &aggregate(&even).unwrap().scale.unwrap().spread[0];
        assert_eq!(spread.straggler, None);
        // On one host, the rank.
        let one = vec![ending(0, "h", 0.0, 1.0), ending(1, "h", 0.0, 2.0)];
        let spread = &aggregate(&one).unwrap().scale.unwrap().spread[0];
        assert_eq!(spread.straggler.as_ref().unwrap().name, "rank 1");
        // A phase under half a second has no telling lag.
        let short = vec![ending(0, "h1", 0.0, 0.05), ending(1, "h2", 0.0, 0.2)];
        let spread = &aggregate(&short).unwrap().scale.unwrap().spread[0];
        assert_eq!(spread.straggler, None);
    }

    /// The last rank into an agreement waits only for the messages: the
    /// least wait on each side is the coordination's cost; the ranks'
    /// start skew is inside the span.
    #[test]
    fn coordination_is_the_least_wait_and_the_start_skew() {
        let mut reports = vec![ending(0, "h1", 0.0, 1.0), ending(1, "h2", 0.001, 1.0)];
        for (report, (start, end)) in reports.iter_mut().zip([(0.002, 0.0003), (0.0001, 0.004)]) {
            report.spans[0].start_wait_s = start;
            report.spans[0].end_wait_s = end;
        }
        let spread = &aggregate(&reports).unwrap().scale.unwrap().spread[0];
        assert!(
            (spread.barrier_s - 0.0004).abs() < 1e-12,
            "{}",
            spread.barrier_s
        );
        assert!((spread.start_skew_s - 0.001).abs() < 1e-12);
    }

    #[test]
    fn hosts_that_differ_are_told_what_in() {
        let mut reports = vec![ending(0, "h1", 0.0, 1.0), ending(1, "h2", 0.0, 1.0)];
        assert!(differences(&reports).is_empty());
        reports[1].host.kernel = "6.6".into();
        reports[1].setup.mount_options = "rw,noatime".into();
        let notes = differences(&reports);
        assert_eq!(
            notes,
            [
                "hosts differ in kernel (h1: 6.1; h2: 6.6): the job's figures mix them",
                "hosts differ in mount options (h1: ; h2: rw,noatime): the job's figures mix them",
            ]
        );
    }

    /// The lab run: two client hosts on links shaped to 1 GbE, each
    /// rank re-reading 400 MiB it had written, its interfaces receiving a
    /// fifth of that. 800 MiB/s in all is three times what both links
    /// carry together, and mostly the page cache's: both flags, from the
    /// hosts' own counters and their links added up.
    #[test]
    fn a_job_faster_than_its_hosts_links_together_is_flagged() {
        let mib = 1u64 << 20;
        let over_link = |workload: u64, received: u64| {
            let mut metric = read_with_device(workload, received);
            metric.device.as_mut().unwrap().link_bytes_per_s = Some(125_000_000);
            metric
        };
        let reports = vec![
            rank(
                0,
                "h1",
                vec![over_link(400 * mib, 80 * mib)],
                vec![span(0.0, 1.0, 10, vec![])],
            ),
            rank(
                1,
                "h2",
                vec![over_link(400 * mib, 80 * mib)],
                vec![span(0.0, 1.0, 10, vec![])],
            ),
        ];
        let result = aggregate(&reports).unwrap();
        let metric = &result.metrics[0];
        assert_eq!(
            metric.device.as_ref().unwrap().link_bytes_per_s,
            Some(250_000_000)
        );
        assert!(
            metric.flags.contains(&Flag::ExceedsDevice),
            "{:?}",
            metric.flags
        );
        assert!(
            metric.flags.contains(&Flag::ServedFromCache),
            "{:?}",
            metric.flags
        );
        // 200 MiB/s in all, over the network: within the two links, not
        // within one.
        let honest = vec![
            rank(
                0,
                "h1",
                vec![over_link(100 * mib, 100 * mib)],
                vec![span(0.0, 1.0, 10, vec![])],
            ),
            rank(
                1,
                "h2",
                vec![over_link(100 * mib, 100 * mib)],
                vec![span(0.0, 1.0, 10, vec![])],
            ),
        ];
        assert!(aggregate(&honest).unwrap().metrics[0].flags.is_empty());
    }

    /// A statistic of the samples, as the io workload reports its response
    /// times: `value` over `samples` of the phase.
    fn statistic(name: &str, value: f64, samples: u64, across_ranks: AcrossRanks) -> Metric {
        Metric {
            value,
            unit: "ms".into(),
            direction: Direction::LowerIsBetter,
            across_ranks,
            ..rate(name, "ms", 1.0, samples, 1.0)
        }
    }

    /// Rank 0: response times 1 and 3 ms; rank 1: 5, 5, 5 and 9 ms.
    fn responder(number: u32, start: f64, times: &[f64]) -> RankReport {
        let n = times.len() as f64;
        let mean = times.iter().sum::<f64>() / n;
        let stddev = (times.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / n).sqrt();
        let max = times.iter().copied().fold(0.0, f64::max);
        let samples = times.len() as u64;
        rank(
            number,
            "a",
            vec![
                rate("io_rate", "IO/s", 1.0, samples, 1.0),
                statistic("resp_ms", mean, samples, AcrossRanks::Mean),
                statistic("resp_max_ms", max, samples, AcrossRanks::Max),
                statistic(
                    "resp_stddev_ms",
                    stddev,
                    samples,
                    AcrossRanks::StdDevOf("resp_ms".into()),
                ),
            ],
            vec![span(start, 1.0, 0, vec![])],
        )
    }

    #[test]
    fn statistics_of_samples_combine_exactly_not_as_rates() {
        let reports = vec![
            responder(0, 0.0, &[1.0, 3.0]),
            responder(1, 1.0, &[5.0, 5.0, 5.0, 9.0]),
        ];
        let result = aggregate(&reports).unwrap();
        let value = |name: &str| result.metric(name).unwrap().value;
        // The six response times together: 1, 3, 5, 5, 5, 9.
        let all = [1.0, 3.0, 5.0, 5.0, 5.0, 9.0];
        let mean = all.iter().sum::<f64>() / 6.0;
        let stddev = (all.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / 6.0).sqrt();
        assert!((value("resp_ms") - mean).abs() < 1e-9);
        assert_eq!(value("resp_max_ms"), 9.0);
        assert!((value("resp_stddev_ms") - stddev).abs() < 1e-9);
        // The rate stays work over the span: 6 I/Os over [0, 2].
        assert_eq!(value("io_rate"), 3.0);
        assert_eq!(result.metric("resp_ms").unwrap().samples, 6);
        // Per rank, each is the rank's own.
        let scale = result.scale.unwrap();
        assert_eq!(scale.per_rank[1].metrics[2].value, 9.0);
        assert_eq!(scale.per_rank[0].metrics[1].value, 2.0);
        // No stonewall view of a statistic: it is the job's value.
        assert!((scale.spread[1].stonewall_value - mean).abs() < 1e-9);
    }

    /// Each rank's closing fsync, timed on its own: the job's is the
    /// slowest rank's, not the span of the phase it closed (the bug it
    /// was: 2 ranks' 1.7 ms fsyncs read 2.000 s, their 2 s phase).
    #[test]
    fn a_part_of_a_phase_is_the_slowest_ranks_not_the_span() {
        let sync = |seconds: f64| Metric {
            value: seconds,
            direction: Direction::LowerIsBetter,
            across_ranks: AcrossRanks::Max,
            detail: true,
            ..rate("sync_s", "s", 1.0, 1, 2.0)
        };
        let reports = vec![
            rank(0, "a", vec![sync(0.0017)], vec![span(0.0, 2.0, 0, vec![])]),
            rank(1, "b", vec![sync(0.0031)], vec![span(0.0, 2.0, 0, vec![])]),
        ];
        let result = aggregate(&reports).unwrap();
        assert_eq!(result.metric("sync_s").unwrap().value, 0.0031);
        let scale = result.scale.unwrap();
        let own: Vec<f64> = scale.per_rank.iter().map(|r| r.metrics[0].value).collect();
        assert_eq!(own, [0.0017, 0.0031]);
        let hosts: Vec<f64> = scale.hosts.iter().map(|h| h.metrics[0].value).collect();
        assert_eq!(hosts, [0.0017, 0.0031]);
    }

    /// A copy of `bytes` on a shared file system of 4 ranks that grew by
    /// `grew` in all while they copied, as rank `number` read it: its
    /// reading counts every rank's copy (`workload::space`).
    fn copier(number: u32, on: &str, bytes: u64, grew: f64) -> RankReport {
        let space = Metric {
            value: grew / bytes as f64,
            unit: crate::result::SPACE_UNIT.into(),
            direction: Direction::LowerIsBetter,
            across_ranks: AcrossRanks::FileSystemGrowth,
            ..rate("copy_space", "", 1.0, bytes, 0.1)
        };
        rank(
            number,
            on,
            vec![rate("copy_mb_s", "MB/s", 1e-6, bytes, 0.1), space],
            vec![span(number as f64 * 0.01, 0.1, 0, vec![])],
        )
    }

    #[test]
    fn space_on_a_shared_file_system_is_rank_0s_growth_over_all_ranks_bytes() {
        // 100 MB in all grew the file system by 120 MB: 1.2 on disk per
        // byte. Each rank alone (its reading over its own bytes) would say
        // 4.8; their sum of growths over the bytes, 4.8 too.
        let mb = 25_000_000;
        let reports: Vec<RankReport> = (0..4)
            .map(|r| copier(r, ["a", "b"][r as usize / 2], mb, 120e6))
            .collect();
        assert_eq!(reports[1].result.metrics[1].value, 4.8);
        let result = aggregate(&reports).unwrap();
        let space = result.metric("copy_space").unwrap();
        assert!((space.value - 1.2).abs() < 1e-9, "{}", space.value);
        assert_eq!(space.samples, 4 * mb);
        assert!(
            space.flags.is_empty(),
            "a sync came first: {:?}",
            space.flags
        );
        // The rate beside it is still all ranks' work over the span.
        assert_eq!(result.metric("copy_mb_s").unwrap().samples, 4 * mb);
        // Not any rank's or host's own: every part shows the job's figure.
        let scale = result.scale.unwrap();
        for part in scale.per_rank.iter().map(|r| &r.metrics[1]) {
            assert!((part.value - 1.2).abs() < 1e-9);
        }
        assert!((scale.hosts[1].metrics[1].value - 1.2).abs() < 1e-9);
        assert!((scale.spread[1].stonewall_value - 1.2).abs() < 1e-9);
    }

    #[test]
    fn a_space_figure_missing_on_a_rank_is_left_out_not_overstated() {
        // Rank 2's reading failed: it has its copy's rate, not its space.
        let mut reports: Vec<RankReport> = (0..3).map(|r| copier(r, "a", 1000, 6000.0)).collect();
        let rate = reports[2].result.metrics[0].clone();
        reports[2] = rank(2, "a", vec![rate], reports[2].spans.clone());
        let result = aggregate(&reports).unwrap();
        assert!(result.metric("copy_space").is_none());
        assert!(result.metric("copy_mb_s").is_some());
        assert!(
            result
                .notes
                .iter()
                .any(|n| n.starts_with("copy_space: left out")),
            "{:?}",
            result.notes
        );
    }
}

//! fio's reports of a job file's run: what fsbench measured of each job,
//! kept as it ends (`collecting`), merged as fio merges a group under
//! `group_reporting`, and written in fio's `--output-format=json` shape
//! (`document`) in fio's units: bandwidth in KiB/s (`bw`) and bytes/s
//! (`bw_bytes`), runtimes in ms, latencies in ns.
//!
//! fsbench times one response per I/O (from its preparation to its
//! completion being taken, fio's total latency), so `clat_ns` and `lat_ns`
//! hold the same figures and `slat_ns` is empty. What fsbench does not
//! count is written as fio writes it when it has no data (0): `slat_ns`,
//! `sync` (an fdatasync's time is inside its write's response time),
//! `trim`, `short_ios`, `drop_ios`, `iodepth_level`, `iodepth_submit`,
//! `iodepth_complete`, and the disks' merges.
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

use serde_json::{Map, Value, json};

use super::jobfile::FioJob;
use crate::measure::devices::Delta;
use crate::measure::{LatencyRecorder, ProcessUsage};
use crate::workload::pattern::counters::{Counters, DirCounters};
use crate::workload::pattern::{Event, Finished, Row, Sink};

/// fio's default `percentile_list`.
const PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// The upper bounds of fio's latency distribution buckets in each unit
/// (`latency_ns`, `latency_us`; `latency_ms` adds 2000 and `>=2000`).
const LATENCY_BOUNDS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];

/// What fio's reports say of the jobs beside their figures: the
/// `[global]` options and each job's own, in the plan's order.
#[derive(Debug, Clone, Default)]
pub struct Described {
    /// Every file's `[global]` options, in order (a later value of a key
    /// replaces an earlier one).
    pub global_options: Vec<(String, String)>,
    pub jobs: Vec<JobOptions>,
}

#[derive(Debug, Clone)]
pub struct JobOptions {
    pub options: Vec<(String, String)>,
    pub group_reporting: bool,
}

impl Described {
    /// Adds one job file's jobs; `origins`: per planned job, the index of
    /// its fio job.
    pub(super) fn add(&mut self, jobs: &[FioJob], origins: &[usize]) {
        for job in origins.iter().map(|&index| &jobs[index]) {
            self.jobs.push(JobOptions {
                options: job.options.clone(),
                group_reporting: job.group_reporting,
            });
        }
        let globals = jobs.last().map_or(&[][..], |j| &j.global_options[..]);
        for (key, value) in globals {
            match self.global_options.iter_mut().find(|(k, _)| k == key) {
                Some(kept) => kept.1 = value.clone(),
                None => self.global_options.push((key.clone(), value.clone())),
            }
        }
    }
}

/// One direction of a job as measured (fio's `read` or `write` block).
#[derive(Default)]
struct Side {
    ops: u64,
    bytes: u64,
    resp_sum_ns: u64,
    resp_max_ns: u64,
    latency: LatencyRecorder,
    /// Each measured interval's (bytes, I/Os, seconds): fio's bandwidth
    /// and IOPS samples.
    samples: Vec<(u64, u64, f64)>,
}

impl Side {
    fn of(rows: &[Row], pick: fn(&Counters) -> DirCounters, latency: &LatencyRecorder) -> Side {
        let mut side = Side {
            latency: latency.clone(),
            ..Side::default()
        };
        for row in rows.iter().filter(|r| !r.warmup) {
            let c = pick(&row.counters);
            side.ops += c.ops;
            side.bytes += c.bytes;
            side.resp_sum_ns += c.resp_sum_ns;
            side.resp_max_ns = side.resp_max_ns.max(c.resp_max_ns);
            side.samples.push((c.bytes, c.ops, row.seconds));
        }
        side
    }

    /// Adds a job that ran at once with this one (group_reporting):
    /// jobs of a group start together, so their intervals add up by index.
    fn absorb(&mut self, other: &Side) {
        self.ops += other.ops;
        self.bytes += other.bytes;
        self.resp_sum_ns += other.resp_sum_ns;
        self.resp_max_ns = self.resp_max_ns.max(other.resp_max_ns);
        self.latency.merge(&other.latency);
        for (index, &(bytes, ops, seconds)) in other.samples.iter().enumerate() {
            match self.samples.get_mut(index) {
                Some(mine) => *mine = (mine.0 + bytes, mine.1 + ops, mine.2.max(seconds)),
                None => self.samples.push((bytes, ops, seconds)),
            }
        }
    }

    /// fio's block of this direction, over `runtime_s` (the job's
    /// measured time), in a group that moved `group_bytes_per_s` this way.
    fn json(&self, runtime_s: f64, group_bytes_per_s: f64) -> Value {
        if self.ops == 0 {
            return Side::empty_json();
        }
        // As fio computes them: over the runtime's whole milliseconds.
        let runtime_ms = ms(runtime_s).max(1);
        let bw_bytes = (u128::from(self.bytes) * 1000 / u128::from(runtime_ms)) as u64;
        let kib =
            |&(bytes, _, seconds): &(u64, u64, f64)| per_second(bytes as f64 / 1024.0, seconds);
        let iops = |&(_, ops, seconds): &(u64, u64, f64)| per_second(ops as f64, seconds);
        let bw = Spread::of(self.samples.iter().map(kib));
        let io = Spread::of(self.samples.iter().map(iops));
        // fio: the mean of the job's samples against the group's whole
        // bandwidth, at most 100 %.
        let bw_agg = match group_bytes_per_s > 0.0 {
            true => (bw.mean * 100.0 / (group_bytes_per_s / 1024.0)).min(100.0),
            false => 0.0,
        };
        let (clat, lat) = self.latencies();
        json!({
            "io_bytes": self.bytes,
            "io_kbytes": self.bytes / 1024,
            "bw_bytes": bw_bytes,
            "bw": bw_bytes / 1024,
            "iops": self.ops as f64 * 1000.0 / runtime_ms as f64,
            "runtime": runtime_ms,
            "total_ios": self.ops,
            "short_ios": 0,
            "drop_ios": 0,
            "slat_ns": no_latency(),
            "clat_ns": clat,
            "lat_ns": lat,
            "bw_min": bw.min as u64,
            "bw_max": bw.max as u64,
            "bw_agg": bw_agg,
            "bw_mean": bw.mean,
            "bw_dev": bw.stddev,
            "bw_samples": bw.count,
            "iops_min": io.min as u64,
            "iops_max": io.max as u64,
            "iops_mean": io.mean,
            "iops_stddev": io.stddev,
            "iops_samples": io.count,
        })
    }

    /// A direction without I/O, as fio writes it.
    fn empty_json() -> Value {
        json!({
            "io_bytes": 0, "io_kbytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0,
            "runtime": 0, "total_ios": 0, "short_ios": 0, "drop_ios": 0,
            "slat_ns": no_latency(), "clat_ns": no_latency(), "lat_ns": no_latency(),
            "bw_min": 0, "bw_max": 0, "bw_agg": 0.0, "bw_mean": 0.0, "bw_dev": 0.0,
            "bw_samples": 0, "iops_min": 0, "iops_max": 0, "iops_mean": 0.0,
            "iops_stddev": 0.0, "iops_samples": 0,
        })
    }

    /// `clat_ns` (with fio's percentile map) and `lat_ns`: both fsbench's
    /// one response time. The mean and maximum are the exact counters';
    /// the minimum, deviation and percentiles the histogram's (3
    /// significant digits).
    fn latencies(&self) -> (Value, Value) {
        let buckets = self.latency.buckets();
        let n: u64 = buckets.iter().map(|&(_, count)| count).sum();
        let mean = self.resp_sum_ns as f64 / self.ops as f64;
        let lat = json!({
            "min": buckets.first().map_or(0, |&(value, _)| value),
            "max": self.resp_max_ns,
            "mean": mean,
            "stddev": stddev(&buckets, mean),
            "N": n,
        });
        let mut clat = lat.clone();
        clat["percentile"] = Value::Object(percentiles(&buckets));
        (clat, lat)
    }
}

/// fio's `sync` block: the fdatasyncs' times from their histogram, with
/// fio's percentile map; `total_ios` is 0 as fio writes it.
fn sync_json(latency: &LatencyRecorder) -> Value {
    let buckets = latency.buckets();
    let n: u64 = buckets.iter().map(|&(_, count)| count).sum();
    if n == 0 {
        return json!({"total_ios": 0, "lat_ns": no_latency()});
    }
    let sum: f64 = buckets
        .iter()
        .map(|&(v, count)| v as f64 * count as f64)
        .sum();
    let mean = sum / n as f64;
    json!({"total_ios": 0, "lat_ns": {
        "min": buckets.first().map_or(0, |&(value, _)| value),
        "max": buckets.last().map_or(0, |&(value, _)| value),
        "mean": mean,
        "stddev": stddev(&buckets, mean),
        "N": n,
        "percentile": percentiles(&buckets),
    }})
}

/// fio's latency block without samples.
fn no_latency() -> Value {
    json!({"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0})
}

fn per_second(amount: f64, seconds: f64) -> f64 {
    crate::workload::pattern::counters::ratio(amount, seconds)
}

/// Seconds as fio's whole milliseconds.
fn ms(seconds: f64) -> u64 {
    (seconds * 1000.0).round() as u64
}

/// Min, max, mean and sample standard deviation of fio's bandwidth or
/// IOPS samples.
struct Spread {
    min: f64,
    max: f64,
    mean: f64,
    stddev: f64,
    count: u64,
}

impl Spread {
    fn of(values: impl Iterator<Item = f64>) -> Spread {
        let values: Vec<f64> = values.collect();
        let count = values.len();
        if count == 0 {
            return Spread {
                min: 0.0,
                max: 0.0,
                mean: 0.0,
                stddev: 0.0,
                count: 0,
            };
        }
        let mean = values.iter().sum::<f64>() / count as f64;
        let squares: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
        Spread {
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(0.0, f64::max),
            mean,
            stddev: match count {
                1 => 0.0,
                _ => (squares / (count - 1) as f64).sqrt(),
            },
            count: count as u64,
        }
    }
}

/// The sample standard deviation of a histogram's values around `mean`.
fn stddev(buckets: &[(u64, u64)], mean: f64) -> f64 {
    let n: u64 = buckets.iter().map(|&(_, count)| count).sum();
    if n < 2 {
        return 0.0;
    }
    let squares: f64 = buckets
        .iter()
        .map(|&(value, count)| count as f64 * (value as f64 - mean).powi(2))
        .sum();
    (squares / (n - 1) as f64).sqrt()
}

/// fio's percentile map (`"99.900000": ns`) of a latency histogram's
/// buckets (value, count): per percentile, the value at or below which
/// that share of the samples lies, as HdrHistogram's `value_at_quantile`
/// gives it. Empty without samples (fio then writes no map).
pub fn percentiles(buckets: &[(u64, u64)]) -> Map<String, Value> {
    let total: u64 = buckets.iter().map(|&(_, count)| count).sum();
    let mut map = Map::new();
    if total == 0 {
        return map;
    }
    for pct in PERCENTILES {
        let rank = ((pct / 100.0 * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        let value = buckets.iter().find_map(|&(value, count)| {
            seen += count;
            (seen >= rank).then_some(value)
        });
        map.insert(format!("{pct:.6}"), value.unwrap_or(0).into());
    }
    map
}

/// fio's latency distribution (`latency_ns`, `latency_us`, `latency_ms`):
/// the % of I/Os at or under each bound and over the one before.
fn distribution(buckets: &[(u64, u64)]) -> [Map<String, Value>; 3] {
    let total: u64 = buckets.iter().map(|&(_, count)| count).sum();
    let units: [(u64, &[u64]); 3] = [
        (1, &LATENCY_BOUNDS),
        (1_000, &LATENCY_BOUNDS),
        (
            1_000_000,
            &[2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000],
        ),
    ];
    let mut counted = vec![0u64; 10 + 10 + 11 + 1];
    for &(value, count) in buckets {
        let bounds = units
            .iter()
            .flat_map(|&(scale, bounds)| bounds.iter().map(move |b| b * scale));
        let index = bounds.take_while(|&bound| value > bound).count();
        counted[index] += count;
    }
    let share = |count: u64| Value::from(100.0 * count as f64 / total.max(1) as f64);
    let mut at = counted.into_iter();
    units.map(|(scale, bounds)| {
        let mut map: Map<String, Value> = bounds
            .iter()
            .map(|b| (b.to_string(), share(at.next().unwrap_or(0))))
            .collect();
        if scale == 1_000_000 {
            map.insert(">=2000".into(), share(at.next().unwrap_or(0)));
        }
        map
    })
}

/// What fio reports of one job (or of a group under group_reporting).
pub struct JobReport {
    pub name: String,
    pub group: u32,
    /// Which repetition of the run (`--repeat`) it belongs to.
    pub repetition: u32,
    /// How many jobs it adds up (fio's `jobs=`): a job's clones, and the
    /// jobs of its group under group_reporting.
    jobs: u32,
    options: Vec<(String, String)>,
    group_reporting: bool,
    queue_depth: u32,
    read: Side,
    write: Side,
    /// fdatasync every N writes (fio's `sync`).
    sync: LatencyRecorder,
    /// The measured part, and the whole job (its ramp included).
    measured_s: f64,
    elapsed_s: f64,
    usage: ProcessUsage,
    device: Option<Delta>,
}

impl JobReport {
    fn new(finished: &Finished<'_>, described: &JobOptions, repetition: u32) -> JobReport {
        let rows = finished.rows;
        JobReport {
            name: finished.job.name.clone(),
            group: finished.job.group.unwrap_or(0),
            repetition,
            jobs: finished.job.clone_files.len().max(1) as u32,
            options: described.options.clone(),
            group_reporting: described.group_reporting,
            queue_depth: finished.job.queue_depth,
            read: Side::of(rows, |c| c.read, finished.read_latency),
            write: Side::of(rows, |c| c.write, finished.write_latency),
            sync: finished.sync_latency.clone(),
            measured_s: finished.average.seconds,
            elapsed_s: rows.iter().map(|r| r.seconds).sum(),
            usage: *finished.usage,
            device: finished.device.copied(),
        }
    }

    /// How many jobs it adds up.
    pub fn jobs(&self) -> u32 {
        self.jobs
    }

    /// Whether fio reports `next` inside this one: both ask for
    /// group_reporting in the same group (of the same repetition).
    fn takes(&self, next: &JobReport) -> bool {
        let same = self.group == next.group && self.repetition == next.repetition;
        self.group_reporting && next.group_reporting && same
    }

    /// Merges a job of the same group (group_reporting). The jobs ran at
    /// once, so the process's usage and the devices' counters over their
    /// time are this job's already.
    fn absorb(&mut self, other: JobReport) {
        self.jobs += other.jobs;
        self.read.absorb(&other.read);
        self.write.absorb(&other.write);
        self.sync.merge(&other.sync);
        self.measured_s = self.measured_s.max(other.measured_s);
        self.elapsed_s = self.elapsed_s.max(other.elapsed_s);
    }

    /// The process's CPU time as a % of the job's measured time.
    fn cpu_percent(&self, time: std::time::Duration) -> f64 {
        100.0 * per_second(time.as_secs_f64(), self.measured_s)
    }

    /// fio's entry of `jobs[]`; `group` is the bandwidth of its group.
    fn json(&self, group: &GroupRates) -> Value {
        let mut all = LatencyRecorder::new();
        all.merge(&self.read.latency);
        all.merge(&self.write.latency);
        let [ns, us, ms_] = distribution(&all.buckets());
        let depths = |keys: &[&str]| -> Map<String, Value> {
            keys.iter().map(|k| (k.to_string(), 0.0.into())).collect()
        };
        let submit = depths(&["0", "4", "8", "16", "32", "64", ">=64"]);
        json!({
            "jobname": self.name,
            "groupid": self.group,
            "error": 0,
            "eta": 0,
            "elapsed": self.elapsed_s.round() as u64,
            "job options": options(&self.options),
            "read": self.read.json(self.measured_s, group.read),
            "write": self.write.json(self.measured_s, group.write),
            "trim": Side::empty_json(),
            "sync": sync_json(&self.sync),
            "job_runtime": ms(self.measured_s),
            "usr_cpu": self.cpu_percent(self.usage.user),
            "sys_cpu": self.cpu_percent(self.usage.system),
            "ctx": self.usage.context_switches,
            "majf": self.usage.major_faults,
            "minf": self.usage.minor_faults,
            "iodepth_level": depths(&["1", "2", "4", "8", "16", "32", ">=64"]),
            "iodepth_submit": submit.clone(),
            "iodepth_complete": submit,
            "latency_ns": ns,
            "latency_us": us,
            "latency_ms": ms_,
            "latency_depth": self.queue_depth,
            "latency_target": 0,
            "latency_percentile": 100.0,
            "latency_window": 0,
        })
    }
}

fn options(pairs: &[(String, String)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(key, value)| (key.clone(), Value::from(value.as_str())))
        .collect()
}

/// A group's bandwidth per direction, bytes/s: all its jobs' bytes over
/// its longest job's time (fio's aggregate, `bw_agg`'s 100 %).
#[derive(Default)]
struct GroupRates {
    read: f64,
    write: f64,
}

impl GroupRates {
    fn of(reports: &[JobReport], group: u32) -> GroupRates {
        let members = || reports.iter().filter(move |r| r.group == group);
        let longest = members().map(|r| r.measured_s).fold(0.0, f64::max);
        let bytes = |side: fn(&JobReport) -> &Side| members().map(|r| side(r).bytes).sum::<u64>();
        GroupRates {
            read: per_second(bytes(|r| &r.read) as f64, longest),
            write: per_second(bytes(|r| &r.write) as f64, longest),
        }
    }
}

/// The sink of a job file's run: passes every event on to `inner`, and
/// keeps each job's report as it ends, in the plan's order (`described`'s
/// order, once per repetition), a group under group_reporting merged into
/// its first job's.
pub fn collecting(
    mut inner: Sink,
    described: Described,
    reports: Rc<RefCell<Vec<JobReport>>>,
) -> Sink {
    let mut ended = 0;
    Box::new(move |event| {
        if let Event::Finished(finished) = &event
            && !described.jobs.is_empty()
        {
            let options = &described.jobs[ended % described.jobs.len()];
            let repetition = (ended / described.jobs.len()) as u32;
            ended += 1;
            let report = JobReport::new(finished, options, repetition);
            let mut kept = reports.borrow_mut();
            match kept.last_mut() {
                Some(last) if last.takes(&report) => last.absorb(report),
                _ => kept.push(report),
            }
        }
        inner(event)
    })
}

/// fio's whole JSON document of a run: `reports` in order, the run's
/// `[global]` options, and `disk_util` over `disks` (the target's counted
/// devices; none without counters, as fio on tmpfs).
pub fn document(
    reports: &[JobReport],
    described: &Described,
    disks: &[String],
    now: chrono::DateTime<chrono::Local>,
) -> Value {
    let jobs: Vec<Value> = reports
        .iter()
        .map(|r| r.json(&GroupRates::of(reports, r.group)))
        .collect();
    let mut document = json!({
        "fio version": format!("fsbench-{}", env!("CARGO_PKG_VERSION")),
        "timestamp": now.timestamp(),
        "timestamp_ms": now.timestamp_millis(),
        "time": now.format("%a %b %e %H:%M:%S %Y").to_string(),
        "jobs": jobs,
    });
    // fio writes the object only when a [global] set something.
    if !described.global_options.is_empty() {
        document["global options"] = options(&described.global_options).into();
    }
    if let Some(disk) = disk_util(reports, disks) {
        document["disk_util"] = json!([disk]);
    }
    document
}

/// fio's `disk_util` entry: the counted devices' counters over every
/// group's measured time (one job's per group: the jobs of a group ran at
/// once, over the same counters). Several counted devices (a multi-device
/// btrfs) are one entry, named `a+b`, their counters summed as fsbench
/// reads them. Merges are not counted: 0.
fn disk_util(reports: &[JobReport], disks: &[String]) -> Option<Value> {
    if disks.is_empty() {
        return None;
    }
    let mut groups: Vec<u32> = Vec::new();
    let mut sum = Delta::of(&Default::default(), 0.0);
    for report in reports {
        let Some(delta) = report.device.filter(|_| !groups.contains(&report.group)) else {
            continue;
        };
        groups.push(report.group);
        let (c, d) = (&mut sum.counters, &delta.counters);
        c.reads += d.reads;
        c.writes += d.writes;
        c.read_ms += d.read_ms;
        c.write_ms += d.write_ms;
        c.io_ms += d.io_ms;
        c.weighted_ms += d.weighted_ms;
        sum.elapsed_s += delta.elapsed_s;
    }
    if groups.is_empty() {
        return None;
    }
    let c = &sum.counters;
    Some(json!({
        "name": disks.join("+"),
        "read_ios": c.reads,
        "write_ios": c.writes,
        "read_merges": 0,
        "write_merges": 0,
        "read_ticks": c.read_ms,
        "write_ticks": c.write_ms,
        "in_queue": c.weighted_ms,
        "util": (100.0 * per_second(c.io_ms as f64 / 1000.0, sum.elapsed_s)).min(100.0),
    }))
}

/// The devices whose counters are the target's (`disk_util`'s name).
pub fn disks(target: &Path) -> Vec<String> {
    let devices = crate::storage::devices::resolve(target).into_iter();
    devices.filter(|d| d.counted).map(|d| d.name).collect()
}

/// Writes a run's fio JSON `document` to `path` (`--fio-json`).
pub fn write(path: &Path, document: &Value) -> anyhow::Result<()> {
    crate::results::write_file(path, &text(document))
        .map_err(|e| anyhow::anyhow!("--fio-json: {e}"))
}

/// The document's text, its maps in fio's order (`FioOrder`).
fn text(document: &Value) -> String {
    serde_json::to_string_pretty(&FioOrder(document)).expect("a JSON value always serializes")
        + "\n"
}

/// A JSON value written with the keys of each of its maps that are
/// numbers (percentiles, latency buckets, I/O depths) first, in numeric
/// order, as fio writes them ("5.000000" before "40.000000"), the others
/// after them in the map's order.
struct FioOrder<'a>(&'a Value);

impl serde::Serialize for FioOrder<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self.0 {
            Value::Object(map) => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                let number = |key: &str| key.parse::<f64>().ok();
                entries.sort_by(|(a, _), (b, _)| match (number(a), number(b)) {
                    (Some(a), Some(b)) => a.total_cmp(&b),
                    (Some(_), None) => std::cmp::Ordering::Less,
                    (None, Some(_)) => std::cmp::Ordering::Greater,
                    (None, None) => std::cmp::Ordering::Equal,
                });
                let mut out = serializer.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    out.serialize_entry(key, &FioOrder(value))?;
                }
                out.end()
            }
            Value::Array(items) => serializer.collect_seq(items.iter().map(FioOrder)),
            other => other.serialize(serializer),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorder(values: impl IntoIterator<Item = u64>) -> LatencyRecorder {
        let mut recorder = LatencyRecorder::new();
        for ns in values {
            recorder.record_ns(ns);
        }
        recorder
    }

    #[test]
    fn percentiles_rise_and_follow_the_histogram() {
        let buckets = recorder((1..=1000).map(|i| i * 1000)).buckets();
        let map = percentiles(&buckets);
        let keys: Vec<&str> = map.keys().map(String::as_str).collect();
        assert!(keys.contains(&"1.000000") && keys.contains(&"99.990000"));
        let values: Vec<u64> = PERCENTILES
            .iter()
            .map(|p| map[&format!("{p:.6}")].as_u64().unwrap())
            .collect();
        assert!(values.windows(2).all(|w| w[0] <= w[1]), "{values:?}");
        let p50 = map["50.000000"].as_u64().unwrap();
        assert!(p50.abs_diff(500_000) <= 500, "{p50}");
        assert!(percentiles(&[]).is_empty());
    }

    /// Written out, the percentiles and buckets come in fio's numeric
    /// order (a map alone orders its keys as strings).
    #[test]
    fn numbered_keys_are_written_in_numeric_order() {
        let buckets = recorder((1..=100).map(|i| i * 1000)).buckets();
        let [_, us, ms] = distribution(&buckets);
        let document =
            json!({"b": 1, "percentile": percentiles(&buckets), "us": us, "ms": ms, "a": 2});
        let written = text(&document);
        let at = |key: &str| written.find(&format!("\"{key}\"")).unwrap();
        let order = [
            "1.000000",
            "5.000000",
            "10.000000",
            "40.000000",
            "99.990000",
        ];
        assert!(order.windows(2).all(|w| at(w[0]) < at(w[1])), "{written}");
        assert!(at("2") < at("4") && at("750") < at("1000"), "{written}");
        assert!(at("2000") < at(">=2000") && at("a") < at("b"), "{written}");
        let read: Value = serde_json::from_str(&written).unwrap();
        assert_eq!(read, document, "the same document");
    }

    #[test]
    fn the_distribution_puts_each_io_under_its_bound() {
        let buckets = recorder([3, 900, 1_500, 3_000_000, 5_000_000_000]).buckets();
        let [ns, us, ms] = distribution(&buckets);
        assert_eq!(ns["4"], 20.0);
        assert_eq!(ns["1000"], 20.0);
        assert_eq!(us["2"], 20.0);
        assert_eq!(ms["4"], 20.0);
        assert_eq!(ms[">=2000"], 20.0);
        assert_eq!((ns.len(), us.len(), ms.len()), (10, 10, 12));
    }

    #[test]
    fn bandwidth_samples_spread_and_groups_add_by_interval() {
        let mut side = Side {
            ops: 3,
            bytes: 3 << 20,
            samples: vec![(1 << 20, 1, 1.0), (2 << 20, 2, 1.0)],
            ..Side::default()
        };
        side.absorb(&Side {
            samples: vec![(1 << 20, 1, 1.0)],
            ..Side::default()
        });
        assert_eq!(side.samples, [(2 << 20, 2, 1.0), (2 << 20, 2, 1.0)]);
        let spread = Spread::of([1024.0, 3072.0].into_iter());
        assert_eq!(
            (spread.min, spread.max, spread.mean),
            (1024.0, 3072.0, 2048.0)
        );
        assert!((spread.stddev - 1448.15).abs() < 0.01, "{}", spread.stddev);
    }
}

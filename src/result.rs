//! The one result model. Every workload yields named metrics with units and a
//! direction; every report format is a view of this model, and its JSON form
//! (versioned) is the source of truth that later commands re-read.
pub mod built;
pub mod cleanup;
pub mod durability;
pub mod env;
pub mod fingerprint;

use serde::{Deserialize, Serialize};

use crate::size::format_bytes;

use cleanup::CleanupReport;
use env::{HostEnv, Risk, TargetEnv};

/// Bumped on any incompatible change of the JSON layout.
pub const SCHEMA_VERSION: u32 = 1;

/// The unit of a space ratio: bytes on disk per byte of file contents
/// (1 = no overhead; below 1 = compressed; well above 1 = small files
/// rounded up to blocks).
pub const SPACE_UNIT: &str = "×";

/// The unit of inodes used per entry made.
pub const INODES_UNIT: &str = "inodes/entry";

/// A phase shorter than this is reported but flagged as imprecise (the
/// limit bonnie++ uses to hide results behind "+++++").
pub const MIN_PRECISE_SECONDS: f64 = 0.5;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    /// Always "fsbench-result": lets readers recognise the file.
    pub kind: String,
    pub schema_version: u32,
    pub fsbench_version: String,
    pub run_id: String,
    pub command: Vec<String>,
    /// The suite `fsbench run` ran: a built-in suite's name or the file
    /// given; absent for the other commands and older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<String>,
    /// The suite's TOML as the run read it, so that `fsbench run --resume`
    /// rebuilds the same plan even if the file changed since; absent for
    /// the other commands and older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_text: Option<String>,
    pub started: chrono::DateTime<chrono::Utc>,
    /// When the run ended; None while it runs (`fsbench run` saves as it
    /// goes) and for a run stopped before its end: an incomplete result.
    pub finished: Option<chrono::DateTime<chrono::Utc>>,
    pub host: HostEnv,
    pub targets: Vec<TargetResult>,
    /// How many repetitions ran and why they stopped, when the run repeated
    /// until its results were precise enough (`fsbench run --precision`);
    /// results without it ran the repetitions they were asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopping: Option<Stopping>,
    /// The smallest difference the verdict counts, as a fraction (0.05 =
    /// 5 %), when the run asked for another than the default
    /// (`report::verdict::DEFAULT_MIN_EFFECT`): kept so that every
    /// rendering of the result gives the run's verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_effect: Option<f64>,
}

/// Why a run that repeats until its results are precise enough stopped
/// (`report::precision`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stopping {
    /// The repetitions that ran.
    pub repetitions: u32,
    /// The most it would have run.
    pub max_repeat: u32,
    /// The 95 % confidence interval's half-width asked for, as a fraction
    /// of the mean (0.05 for `--precision 5%`).
    pub precision: f64,
    /// Why it stopped: every headline metric precise (or significantly
    /// different from the baseline), or `--max-repeat` reached with the
    /// metrics still too wide.
    pub reason: String,
}

impl RunResult {
    /// The repetitions measured: one more than the highest repetition
    /// index of any result (0 without results).
    pub fn repetitions_measured(&self) -> u32 {
        let workloads = self.targets.iter().flat_map(|t| &t.workloads);
        workloads.map(|w| w.repetition + 1).max().unwrap_or(0)
    }

    /// The results the record holds, over every target.
    pub fn results_count(&self) -> usize {
        self.targets.iter().map(|t| t.workloads.len()).sum()
    }

    /// What made the record, for report titles: `fsbench bonnie`, `fsbench
    /// run`. It is the first word of the command line after the program
    /// and its global flags (`--json FILE`); records without one were
    /// made by `fsbench run`.
    pub fn made_by(&self) -> String {
        let mut words = self.command.iter().skip(1);
        let subcommand = loop {
            match words.next().map(String::as_str) {
                Some("--json") => {
                    words.next();
                }
                Some(word) if word.starts_with('-') => {}
                // A subcommand is a lowercase word; anything else is a
                // record put together from several command lines.
                Some(word) if word.chars().all(|c| c.is_ascii_lowercase()) => break word,
                _ => break "run",
            }
        };
        format!("fsbench {subcommand}")
    }
}

impl std::fmt::Display for Stopping {
    /// "4 repetitions: every headline metric ...", the line `fsbench run`
    /// ends with.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plural = if self.repetitions == 1 { "" } else { "s" };
        write!(
            f,
            "{} repetition{plural}: {}",
            self.repetitions, self.reason
        )
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetResult {
    pub name: String,
    pub path: String,
    pub env: Option<TargetEnv>,
    pub workloads: Vec<WorkloadResult>,
    /// What removing the scratch directory took; None when `--keep` was used.
    pub cleanup: Option<CleanupReport>,
    /// Measured as the ceiling the others are shown against
    /// (`--reference`), not compared or rated.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reference: bool,
    /// How fsbench built the target (`fsbench run --configs`): the
    /// commands it ran, the sweep's parameters, mkfs's output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub built: Option<built::Built>,
    /// What simulated power cuts found (`fsbench crash`, or a crash
    /// entry of a suite run on configurations fsbench built).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durability: Option<durability::Durability>,
    /// What makes its runs comparable (`fingerprint`), for whoever reads
    /// the JSON; fsbench computes it anew on load (`fingerprint::refresh`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<fingerprint::Fingerprint>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WorkloadResult {
    /// Workload kind, e.g. "bonnie".
    pub workload: String,
    /// What reports call this workload instance, unique within a run (a
    /// suite may run one kind several times, e.g. ten I/O patterns);
    /// empty means the kind.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub label: String,
    /// 0-based repetition index.
    pub repetition: u32,
    /// The workload's parameters as it understood them.
    pub params: serde_json::Value,
    pub metrics: Vec<Metric>,
    /// Things a reader must know to interpret the numbers.
    pub notes: Vec<String>,
    /// The time series of a workload that reports over time (io).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<IntervalSample>,
    /// Whether the time series reached a steady state (io).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<Steady>,
    /// What the workload's own setup can lose on a crash (a sync log that
    /// is never synced, or on a volatile file system); reports show them
    /// with the targets' risks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub risks: Vec<Risk>,
    /// A run of several ranks (`mpirun -np N`): `metrics` are then the
    /// aggregate of all ranks, and this holds the spread, stonewall and the
    /// per-host and per-rank figures behind them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<ScaleOut>,
}

impl WorkloadResult {
    /// The label reports show: `label`, or the kind when it has none.
    pub fn name(&self) -> &str {
        if self.label.is_empty() {
            &self.workload
        } else {
            &self.label
        }
    }

    pub fn metric(&self, name: &str) -> Option<&Metric> {
        self.metrics.iter().find(|m| m.name == name)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    HigherIsBetter,
    LowerIsBetter,
}

impl Direction {
    /// Whether going from a value to `ratio` times it is an improvement.
    /// The one place reports decide "better" or "worse": a time that fell
    /// improved as much as a rate that rose, so neither the sign of the
    /// change nor its colour may be read on its own.
    pub fn is_improvement(self, ratio: f64) -> bool {
        match self {
            Direction::HigherIsBetter => ratio > 1.0,
            Direction::LowerIsBetter => ratio < 1.0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Flag {
    /// The phase took less than `MIN_PRECISE_SECONDS`.
    TooShort,
    /// The data fits in RAM, so reads likely came from the page cache.
    FitsInPageCache,
    /// The phase's writes were not synced and fewer than the kernel lets
    /// stay dirty, so no write waited for the storage.
    WritesCached,
    /// The devices under the target read under half of the bytes the
    /// phase read (`measure::phase::EVIDENCE_FRACTION`): most of its reads
    /// came from the page cache (measured, where
    /// `FitsInPageCache` guesses from sizes); or nothing at all in a phase
    /// meant to be cold (`Measured::meant_cold`: a `find` after the caches
    /// were emptied). The figures are the metric's `device`
    /// (`Metric::flag_text`).
    ServedFromCache,
    /// The phase wrote without a sync and the devices wrote under half of
    /// its bytes by its end: most were still in the page cache.
    NotYetOnDevice,
    /// The phase's writes were synced by its end, but through the page
    /// cache, and the devices wrote under half of its bytes: rewrites of
    /// the same blocks met in the page cache and reached the device once.
    /// The figure is the page cache's, not the storage's.
    AbsorbedByCache,
    /// O_DIRECT reads, or writes on the device by the phase's end, that
    /// the devices did under half of: served by something no counted
    /// device did (holes, compression, deduplication, an uncounted
    /// device), not by the storage under test.
    ExceedsDevice,
    /// A fully random io job moved more MiB/s than the same job done
    /// sequentially on the same target (`report::access_order`): raised
    /// by the summary, never on one metric.
    RandomFasterThanSequential,
    /// The first repetition was significantly worse than the others
    /// (`stats::first_is_warm_up`): raised by the summary over
    /// repetitions, never on one metric.
    WarmUp,
    /// The throughput fell and stayed under 60 % of its earlier rate
    /// (`measure::series::cliff`): the phase's figures average two
    /// regimes. The figures are the metric's `cliff`.
    Cliff,
    /// The devices moved far more bytes during the phase than this process
    /// caused (`measure::phase::disturbed`): another process's I/O on the
    /// same devices was measured with the workload's. The figures are the
    /// metric's `device` (`own_io_bytes` beside `read_bytes` and
    /// `written_bytes`).
    Disturbed,
    /// Other processes used more than a stated share of the CPUs during
    /// the phase, or the hypervisor stole more than a stated share of
    /// their time (`measure::phase::busy_host`). The figures are the
    /// metric's `device` (`others_cpu_percent`, `steal_percent`,
    /// `load_1m`).
    BusyHost,
}

impl Flag {
    /// A word for a table's flags column.
    pub fn short(self) -> &'static str {
        match self {
            Flag::TooShort => "short",
            Flag::FitsInPageCache => "cached",
            Flag::WritesCached => "unsynced",
            Flag::ServedFromCache => "from-cache",
            Flag::NotYetOnDevice => "not-on-device",
            Flag::AbsorbedByCache => "absorbed",
            Flag::ExceedsDevice => "exceeds-device",
            Flag::WarmUp => "warm-up",
            Flag::RandomFasterThanSequential => "random>seq",
            Flag::Cliff => "cliff",
            Flag::Disturbed => "disturbed",
            Flag::BusyHost => "busy-host",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Flag::TooShort => "ran under 0.5 s: measured, but less precise",
            Flag::FitsInPageCache => "data fits in RAM: likely served from the page cache",
            Flag::WritesCached => {
                "writes not synced and fewer than the page cache holds dirty: measured the page cache, not the storage"
            }
            Flag::ServedFromCache => {
                "served from the page cache: the device read under half of the bytes read"
            }
            Flag::NotYetOnDevice => {
                "not yet on the device: no sync, and the device wrote under half of the bytes written"
            }
            Flag::AbsorbedByCache => {
                "absorbed by the page cache: synced, but the device wrote under half of the bytes written (rewrites met in the cache)"
            }
            Flag::ExceedsDevice => {
                "exceeds the device: bytes that went past the page cache, but the device did under half of them"
            }
            Flag::RandomFasterThanSequential => {
                "random faster than sequential on the same file and transfer size: the random figure came from a cache"
            }
            Flag::WarmUp => {
                "warm-up: the first repetition was significantly worse than the others, and is in the mean"
            }
            Flag::Cliff => {
                "throughput fell off a cliff: it fell under 60 % of its earlier rate and stayed there"
            }
            Flag::Disturbed => {
                "disturbed: the devices moved far more than fsbench itself caused during the phase: other processes' I/O was measured with it"
            }
            Flag::BusyHost => {
                "busy host: other processes used over 50 % of the CPU capacity during the phase, or the hypervisor stole over 10 % of it"
            }
        }
    }

    /// Whether the device counters raised the flag (its figures are in
    /// the metric's `device`).
    pub fn from_device(self) -> bool {
        matches!(
            self,
            Flag::ServedFromCache
                | Flag::NotYetOnDevice
                | Flag::AbsorbedByCache
                | Flag::ExceedsDevice
        )
    }

    /// Whether the flag says the phase shared the machine with other
    /// work (its figures are in the metric's `device`): the figure is the
    /// storage's under that load, not alone. Not the page cache's
    /// (`from_device`).
    pub fn from_noise(self) -> bool {
        matches!(self, Flag::Disturbed | Flag::BusyHost)
    }
}

/// What the devices under the target did over a metric's phase
/// (`measure::devices`), and the bytes the workload moved in it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DeviceEvidence {
    /// Bytes the counted devices read and wrote (sectors × 512).
    pub read_bytes: u64,
    pub written_bytes: u64,
    /// Reads and writes the devices completed.
    pub ops: u64,
    /// % of the phase with I/O in flight.
    pub util_percent: f64,
    /// Requests in flight on average.
    pub queue_depth: f64,
    /// Milliseconds per request on average.
    pub service_ms: f64,
    /// Where the kernel counts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discards: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flushes: Option<u64>,
    /// Bytes the workload read and wrote in the phase, where it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload_read_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload_written_bytes: Option<u64>,
    /// The evidence ratios: device bytes ÷ workload bytes, per direction
    /// the workload moved bytes in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_ratio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_ratio: Option<f64>,
    /// Device bytes written ÷ bytes written, for writes that reached the
    /// device (synced, or O_DIRECT): what the file system's journal,
    /// metadata and alignment cost on top of the data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_amplification: Option<f64>,
    /// Device bytes (read and written) per operation, for a phase of
    /// operations that move no file data (create, stat, delete): what a
    /// metadata operation costs the storage, where journaling modes differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_op: Option<f64>,
    /// A network mount's fastest link, bytes/s (`Delta::link_bytes_per_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_bytes_per_s: Option<u64>,
    /// What the disks holding loop devices' images beneath the counted
    /// devices read and wrote: under a loop device, whether the bytes
    /// reached a disk or the host's page cache of the image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backing_read_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backing_written_bytes: Option<u64>,
    /// Bytes this process (and the children it waited for) caused to be
    /// read from and written to storage over the phase (/proc/self/io's
    /// read_bytes + write_bytes; writes counted when their pages were
    /// dirtied): what the devices' bytes are weighed against for other
    /// processes' I/O (`Flag::Disturbed`). Block devices only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_io_bytes: Option<u64>,
    /// The written part of `own_io_bytes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_written_bytes: Option<u64>,
    /// Bytes dirty in the page cache at the phase's start that this
    /// process may have written (the lesser of /proc/meminfo's Dirty +
    /// Writeback and all it had written by then): writeback of its own
    /// earlier writes may move them during the phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carried_dirty_bytes: Option<u64>,
    /// The 1-minute load average at the phase's end (/proc/loadavg).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_1m: Option<f64>,
    /// CPU time the hypervisor stole over the phase, % of all CPU time
    /// (/proc/stat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_percent: Option<f64>,
    /// CPU time other processes (kernel threads included) used over the
    /// phase, % of the machine's capacity (elapsed × online CPUs): the
    /// busy time of /proc/stat less this process's own (/proc/self/stat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_cpu_percent: Option<f64>,
}

impl DeviceEvidence {
    /// `read_ratio`, or the disks' under loop images if lower.
    pub fn lowest_read_ratio(&self) -> Option<f64> {
        lowest(
            self.read_ratio,
            self.backing_read_bytes,
            self.workload_read_bytes,
        )
    }

    /// `write_ratio`, or the disks' under loop images if lower.
    pub fn lowest_write_ratio(&self) -> Option<f64> {
        let written = self.workload_written_bytes;
        lowest(self.write_ratio, self.backing_written_bytes, written)
    }

    /// Who wrote the least of the phase's written bytes (the counted
    /// devices, or the disk under their loop images), what it wrote, and
    /// the bytes the phase wrote: what a write flag tells.
    fn written_share(&self) -> Option<(&'static str, u64, u64)> {
        let written = self.workload_written_bytes?;
        Some(match self.backing_did_less(false) {
            true => (
                "the disk under the loop device's image",
                self.backing_written_bytes?,
                written,
            ),
            false => ("the device", self.written_bytes, written),
        })
    }

    /// Whether the disks under loop images did less than the counted
    /// devices in a direction (`read`): the figures a flag then says.
    fn backing_did_less(&self, read: bool) -> bool {
        let (counted, lowest) = match read {
            true => (self.read_ratio, self.lowest_read_ratio()),
            false => (self.write_ratio, self.lowest_write_ratio()),
        };
        lowest < counted
    }

    /// The evidence with `bytes_per_op` over the phase's `operations`,
    /// when the workload said it moved no data bytes in it.
    pub fn over_operations(mut self, operations: u64) -> DeviceEvidence {
        let device = self.read_bytes + self.written_bytes;
        // Said, not merely unsaid: a phase that moves data it does not
        // count would put its data on its operations.
        let no_data = self.workload_read_bytes == Some(0) && self.workload_written_bytes == Some(0);
        self.bytes_per_op = (no_data && operations > 0).then(|| device as f64 / operations as f64);
        self
    }

    /// `Flag::Disturbed` with its figures: "disturbed: the devices moved
    /// 400.0 MiB during the phase, 100× the 4.0 MiB fsbench itself caused:
    /// other processes' I/O was measured with it".
    fn disturbed_text(&self) -> Option<String> {
        let own = self.own_io_bytes?;
        let moved = self.read_bytes + self.written_bytes;
        let times = match own {
            0 => format!("while fsbench itself caused {}", format_bytes(0)),
            own => {
                let times = moved as f64 / own as f64;
                let decimals = if times < 10.0 { 1 } else { 0 };
                format!(
                    "{times:.decimals$}× the {} fsbench itself caused",
                    format_bytes(own)
                )
            }
        };
        let carried = match self.carried_dirty_bytes {
            Some(bytes) if bytes > 0 => {
                format!(" (and {} it had left dirty before)", format_bytes(bytes))
            }
            _ => String::new(),
        };
        Some(format!(
            "disturbed: the devices moved {} during the phase, {times}{carried}: \
             other processes' I/O was measured with it",
            format_bytes(moved)
        ))
    }

    /// `Flag::BusyHost` with its figures: "busy host: other processes used
    /// 67 % of the CPU capacity during the phase, the hypervisor stole 0 %
    /// (1-minute load 3.10): measured on a busy machine".
    fn busy_text(&self) -> Option<String> {
        let percent = |p: Option<f64>| p.map_or("?".to_string(), |p| format!("{p:.0} %"));
        let load = self
            .load_1m
            .map_or(String::new(), |l| format!(" (1-minute load {l:.2})"));
        Some(format!(
            "busy host: other processes used {} of the CPU capacity during the phase, \
             the hypervisor stole {}{load}: measured on a busy machine",
            percent(self.others_cpu_percent),
            percent(self.steal_percent),
        ))
        .filter(|_| self.others_cpu_percent.is_some() || self.steal_percent.is_some())
    }

    /// Device bytes ÷ workload bytes over the directions the workload
    /// moved bytes in; None when it moved none (or did not say).
    pub fn ratio(&self) -> Option<f64> {
        let read = self.workload_read_bytes.filter(|&b| b > 0);
        let written = self.workload_written_bytes.filter(|&b| b > 0);
        let moved = read.unwrap_or(0) + written.unwrap_or(0);
        let device =
            read.map_or(0, |_| self.read_bytes) + written.map_or(0, |_| self.written_bytes);
        (moved > 0).then(|| device as f64 / moved as f64)
    }
}

/// Where a job's throughput fell off a cliff (`measure::series::cliff`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cliff {
    /// The first slow interval (1-based, as `IntervalSample::index`).
    pub interval: u32,
    /// When it fell, in seconds since the job started, and the bytes the
    /// job had moved by then (warm-up included): estimated inside the
    /// interval where it fell from the rates on either side.
    pub at_s: f64,
    pub bytes: u64,
    /// MiB/s over the measured intervals before, and over the slow ones.
    pub before_mib_per_s: f64,
    pub after_mib_per_s: f64,
}

/// Whether and when a job's throughput reached a steady state
/// (`measure::series::SteadyRule`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Steady {
    /// The rule: over `window` intervals, the least-squares line of the
    /// MiB/s changes by under `slope_limit` (a fraction) of their mean.
    pub window: u32,
    pub slope_limit: f64,
    /// The interval that ended the first steady window (1-based), its end
    /// in seconds since the job started and the window's mean MiB/s;
    /// all absent when the job never was steady.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mib_per_s: Option<f64>,
}

/// The lower of a `ratio` and `beneath` ÷ `moved`.
fn lowest(ratio: Option<f64>, beneath: Option<u64>, moved: Option<u64>) -> Option<f64> {
    let ratio = ratio?;
    let beneath = beneath
        .zip(moved.filter(|&m| m > 0))
        .map(|(b, m)| b as f64 / m as f64);
    Some(beneath.map_or(ratio, |b| b.min(ratio)))
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Metric {
    pub name: String,
    pub value: f64,
    pub unit: String,
    pub direction: Direction,
    /// Operations (or bytes, for throughput) that went into `value`.
    pub samples: u64,
    /// Wall time of the phase, from a monotonic ns clock.
    pub elapsed_s: f64,
    /// CPU time of the whole process over the phase / wall time, in %.
    pub cpu_percent: Option<f64>,
    pub latency: Option<LatencySummary>,
    pub flags: Vec<Flag>,
    /// How the metric combines over the ranks of an MPI job; left out of
    /// the JSON when it follows from the unit (see [`AcrossRanks`]).
    #[serde(default, skip_serializing_if = "AcrossRanks::follows_unit")]
    pub across_ranks: AcrossRanks,
    /// The timing this metric was measured over (`PhaseTiming::id`), if
    /// any: how rank 0 of an MPI job finds the metric's span. Internal,
    /// so not in the JSON.
    #[serde(skip)]
    pub phase: Option<u64>,
    /// Another view of an operation a headline metric already reports (a
    /// tree operation's MB/s beside its time, MiB/s beside IO/s): kept in
    /// the JSON and in the reports' details, but not tested or rated
    /// twice. Results without the field have headline metrics only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub detail: bool,
    /// What the devices under the target did over the phase; absent
    /// without devices (tmpfs) and in results made before it was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceEvidence>,
    /// Where the phase's throughput fell off a cliff (`Flag::Cliff`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cliff: Option<Cliff>,
}

#[cfg(test)]
impl TargetResult {
    /// A target at /mnt/NAME with only its workloads, as tests build one.
    pub fn test(name: &str, workloads: Vec<WorkloadResult>) -> TargetResult {
        TargetResult {
            name: name.to_string(),
            path: format!("/mnt/{name}"),
            env: None,
            workloads,
            cleanup: None,
            reference: false,
            built: None,
            durability: None,
            fingerprint: None,
        }
    }
}

#[cfg(test)]
impl Metric {
    /// A metric of one phase with only what a test looks at.
    pub fn test(name: &str, unit: &str, direction: Direction, value: f64) -> Metric {
        Metric {
            name: name.into(),
            value,
            unit: unit.into(),
            direction,
            samples: 1,
            elapsed_s: 1.0,
            cpu_percent: None,
            latency: None,
            flags: Vec::new(),
            across_ranks: Default::default(),
            phase: None,
            detail: false,
            device: None,
            cliff: None,
        }
    }
}

impl Metric {
    /// A flag as a reader is told it: with the device counters that
    /// raised it ("served from the page cache: the device read 0.3 MiB of
    /// the 512 MiB read"), else its description.
    pub fn flag_text(&self, flag: Flag) -> String {
        let device = self.device.as_ref();
        let figures = match flag {
            Flag::ServedFromCache => device.and_then(|d| {
                // A phase of metadata alone (find) counts no bytes read: it
                // was flagged for a device that read nothing at all.
                let Some(read) = d.workload_read_bytes.filter(|&read| read > 0) else {
                    return (d.read_bytes == 0).then(|| {
                        "read 0 B from its device: served from the cache, not cold".to_string()
                    });
                };
                let (what, bytes) = match d.backing_did_less(true) {
                    true => (
                        "the disk under the loop device's image",
                        d.backing_read_bytes?,
                    ),
                    false => ("the device", d.read_bytes),
                };
                Some(format!(
                    "served from the page cache: {what} read {} of the {} read",
                    format_bytes(bytes),
                    format_bytes(read)
                ))
            }),
            Flag::NotYetOnDevice => {
                device
                    .and_then(DeviceEvidence::written_share)
                    .map(|(what, bytes, written)| {
                        format!(
                            "not yet on the device: no sync, and {what} wrote {} of the {} written",
                            format_bytes(bytes),
                            format_bytes(written)
                        )
                    })
            }
            Flag::AbsorbedByCache => device.and_then(DeviceEvidence::written_share).map(
                |(what, bytes, written)| {
                    format!(
                        "absorbed by the page cache: synced, but {what} wrote {} of the {} written \
                         (rewrites of the same blocks met in the page cache)",
                        format_bytes(bytes),
                        format_bytes(written)
                    )
                },
            ),
            Flag::ExceedsDevice => device.map(|d| match d.link_bytes_per_s {
                Some(link) => format!(
                    "exceeds the device: {} moved in {:.1} s, more than the network's \
                     links carry at {}/s (a client's cache served it)",
                    format_bytes(
                        d.workload_read_bytes.unwrap_or(0) + d.workload_written_bytes.unwrap_or(0)
                    ),
                    self.elapsed_s,
                    format_bytes(link)
                ),
                None => format!(
                    "exceeds the device: the phase read {} and wrote {} past the page cache, \
                     the device read {} and wrote {} (holes, compression, or a device not counted)",
                    format_bytes(d.workload_read_bytes.unwrap_or(0)),
                    format_bytes(d.workload_written_bytes.unwrap_or(0)),
                    format_bytes(d.read_bytes),
                    format_bytes(d.written_bytes)
                ),
            }),
            Flag::Disturbed => device.and_then(DeviceEvidence::disturbed_text),
            Flag::BusyHost => device.and_then(DeviceEvidence::busy_text),
            Flag::Cliff => self.cliff.as_ref().map(|c| {
                format!(
                    "throughput fell off a cliff after {} ({:.1} s): from {:.0} to {:.0} MiB/s",
                    format_bytes(c.bytes),
                    c.at_s,
                    c.before_mib_per_s,
                    c.after_mib_per_s
                )
            }),
            _ => None,
        };
        figures.unwrap_or_else(|| flag.describe().to_string())
    }

    /// The metric as a detail (see [`Metric::detail`]).
    pub fn as_detail(self) -> Metric {
        self.with_detail(true)
    }

    /// The metric, a detail or not.
    pub fn with_detail(mut self, detail: bool) -> Metric {
        self.detail = detail;
        self
    }

    /// The metric with the latency of the operations behind it. The
    /// workload says which of a phase's metrics carries a histogram, so
    /// that reports show it, and MPI ranks send it, once.
    pub fn with_latency(mut self, latency: Option<LatencySummary>) -> Metric {
        self.latency = latency;
        self
    }

    /// The metric combined over MPI ranks as `how` says, not by its unit.
    pub fn with_across_ranks(mut self, how: AcrossRanks) -> Metric {
        self.across_ranks = how;
        self
    }
}

/// How the ranks' values of a metric make the job's (`scale::aggregate`).
/// Work over time is the default; a metric that is a statistic of its
/// samples (a mean response time, a maximum, a standard deviation) says
/// which statistic it is, so that it is combined exactly instead of being
/// taken for a rate.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AcrossRanks {
    /// By the unit: unit "s" is the phase's time, so the job's is the span
    /// from the earliest start to the latest end; any other unit is work
    /// over time (`samples` × unit / `elapsed_s`), so the job's is all
    /// ranks' samples over that span.
    #[default]
    ByUnit,
    /// The mean of the metric's samples (e.g. a mean response time): the
    /// ranks' means weighted by their samples.
    Mean,
    /// The largest of the samples: the largest rank's.
    Max,
    /// The (population) standard deviation of the samples whose mean is
    /// the metric named here: pooled exactly from every rank's count, mean
    /// and standard deviation.
    StdDevOf(String),
    /// A ratio of what the one shared file system grew by to the work's
    /// samples (space on disk per logical byte, `workload::space`): every
    /// rank's reading of the file system counts every rank's writes, so
    /// the job's value is rank 0's growth over all ranks' samples.
    FileSystemGrowth,
}

impl AcrossRanks {
    pub fn follows_unit(&self) -> bool {
        *self == AcrossRanks::ByUnit
    }
}

/// Per-operation latency, from an HdrHistogram, in nanoseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub min_ns: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    /// p99.99; 0 in results written before it was recorded.
    #[serde(default)]
    pub p9999_ns: u64,
    pub max_ns: u64,
    /// The id under which an MPI rank kept the histogram behind this
    /// summary for rank 0 (`LatencyRecorder::summary_for_metric`).
    /// Internal, so not in the JSON.
    #[serde(skip)]
    pub histogram: Option<u64>,
}

/// One reporting interval of a workload that reports over time (one line
/// of vdbench's interval report).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalSample {
    /// 1-based interval number.
    pub index: u32,
    /// Start, in seconds since the workload started.
    pub start_s: f64,
    pub seconds: f64,
    /// A warm-up interval: shown, but left out of the metrics.
    pub warmup: bool,
    /// Named values, unit in the name (`mib_per_s`, `resp_ms`; the
    /// devices' `device_read_mib_per_s` and `device_write_mib_per_s`
    /// where the target has counted devices).
    pub values: std::collections::BTreeMap<String, f64>,
}

/// How the ranks of an MPI run shared the work. Every time is in seconds on
/// the job's common clock, relative to the earliest start of the metric's
/// phase on any rank.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScaleOut {
    pub ranks: u32,
    /// How the ranks' clocks were made comparable.
    pub clock: String,
    /// One per aggregate metric, in the same order.
    pub spread: Vec<Spread>,
    pub hosts: Vec<HostPart>,
    pub per_rank: Vec<RankPart>,
    /// How closely the ranks' common clock agrees: the least spread of
    /// their readings as they left the same barriers, seconds (None from
    /// a version before it was checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_spread_s: Option<f64>,
    /// How far apart the hosts' wall clocks are, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_clock_skew_s: Option<f64>,
}

/// The timing of one metric's phase across ranks (IOR/mdtest's view).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub name: String,
    /// When the first rank finished (the stonewall).
    pub first_done_s: f64,
    /// When the last rank finished: the aggregate's elapsed time.
    pub last_done_s: f64,
    /// Work all ranks had done by `first_done_s` (interpolated from their
    /// progress checkpoints), and the rate over that interval.
    pub stonewall_samples: f64,
    pub stonewall_value: f64,
    /// The fastest and slowest rank's own elapsed time.
    pub fastest_s: f64,
    pub slowest_s: f64,
    /// What coordinating the ranks cost the phase: how far apart they
    /// started it (inside the aggregate's span) and the agreements around
    /// it (outside), seconds.
    #[serde(default)]
    pub start_skew_s: f64,
    #[serde(default)]
    pub barrier_s: f64,
    /// The host (or, on one host, the rank) that ended well after all the
    /// others, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub straggler: Option<Straggler>,
}

/// A part of the job the others waited for at the end of a phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Straggler {
    /// The host's name, or "rank N" when the job ran on one host.
    pub name: String,
    pub ranks: Vec<u32>,
    /// How long after the others it ended, and that as a share of the
    /// aggregate's span (latest end - earliest start).
    pub lag_s: f64,
    pub share: f64,
}

/// One host's ranks and their work, aggregated like the whole job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostPart {
    pub host: String,
    pub ranks: Vec<u32>,
    pub env: HostEnv,
    pub metrics: Vec<Figure>,
}

/// One rank's own figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankPart {
    pub rank: u32,
    pub host: String,
    pub metrics: Vec<Figure>,
}

/// A metric's value over a part of the job (a host, a rank).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub name: String,
    pub value: f64,
    pub samples: u64,
    pub elapsed_s: f64,
    /// Start of the part's phase, relative to the job's earliest start.
    pub start_s: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A result written before runs could stop on precision.
    const OLD: &str = include_str!("../tests/fixtures/run-two-targets.json");

    #[test]
    fn a_record_is_titled_by_the_command_that_made_it() {
        let mut record: RunResult = serde_json::from_str(OLD).unwrap();
        let made_by = |record: &mut RunResult, line: &str| {
            record.command = line.split_whitespace().map(String::from).collect();
            record.made_by()
        };
        assert_eq!(
            made_by(&mut record, "fsbench bonnie -d ."),
            "fsbench bonnie"
        );
        assert_eq!(
            made_by(&mut record, "/x/fsbench --json b.json io /t"),
            "fsbench io"
        );
        assert_eq!(made_by(&mut record, ""), "fsbench run");
        record.command = vec!["/x/fsbench".into(), "/x/fsbench io /t".into()];
        assert_eq!(record.made_by(), "fsbench run");
    }

    #[test]
    fn results_without_a_stopping_record_still_load_and_stay_without_one() {
        let old: RunResult = serde_json::from_str(OLD).unwrap();
        assert_eq!(old.stopping, None);
        let written = serde_json::to_value(&old).unwrap();
        assert!(written.get("stopping").is_none());
    }

    #[test]
    fn a_stopping_record_round_trips() {
        let mut run: RunResult = serde_json::from_str(OLD).unwrap();
        run.stopping = Some(Stopping {
            repetitions: 4,
            max_repeat: 10,
            precision: 0.05,
            reason: "every headline metric within ±5 % (95 % CI)".into(),
        });
        let text = serde_json::to_string(&run).unwrap();
        let back: RunResult = serde_json::from_str(&text).unwrap();
        assert_eq!(back.stopping, run.stopping);
        assert_eq!(back.schema_version, SCHEMA_VERSION);
    }

    /// Device evidence written before the host's figures were recorded
    /// loads without them, and writes none back; with them, they round
    /// trip, and the noise flags have their names.
    #[test]
    fn evidence_without_the_hosts_figures_still_loads_and_they_round_trip() {
        let old = r#"{"read_bytes": 1, "written_bytes": 2, "ops": 3,
            "util_percent": 4.0, "queue_depth": 0.5, "service_ms": 1.0}"#;
        let evidence: DeviceEvidence = serde_json::from_str(old).unwrap();
        assert_eq!((evidence.own_io_bytes, evidence.load_1m), (None, None));
        let written = serde_json::to_value(&evidence).unwrap();
        for field in [
            "own_io_bytes",
            "others_cpu_percent",
            "steal_percent",
            "load_1m",
        ] {
            assert!(written.get(field).is_none(), "{field}: {written}");
        }
        let noisy = DeviceEvidence {
            own_io_bytes: Some(5),
            own_written_bytes: Some(4),
            carried_dirty_bytes: Some(0),
            load_1m: Some(3.1),
            steal_percent: Some(0.5),
            others_cpu_percent: Some(67.0),
            ..evidence
        };
        let text = serde_json::to_string(&noisy).unwrap();
        assert!(text.contains(r#""own_io_bytes":5"#), "{text}");
        assert_eq!(
            serde_json::from_str::<DeviceEvidence>(&text).unwrap(),
            noisy
        );
        let flags = serde_json::to_string(&[Flag::Disturbed, Flag::BusyHost]).unwrap();
        assert_eq!(flags, r#"["disturbed","busy_host"]"#);
        assert!(Flag::Disturbed.from_noise() && !Flag::Disturbed.from_device());
        // Without figures a noise flag says its description.
        let bare = Metric::test("t", "s", Direction::LowerIsBetter, 1.0);
        assert_eq!(bare.flag_text(Flag::BusyHost), Flag::BusyHost.describe());
        assert_eq!(bare.flag_text(Flag::Disturbed), Flag::Disturbed.describe());
    }
}

//! What one I/O run does: the job a `fsbench io` command line, a suite
//! entry or one vdbench run definition (with its for-loop values) describes.
use std::time::Duration;

use serde::{Serialize, Serializer};

use crate::error::usage;
use crate::measure::series::SteadyRule;
use crate::rng::{Random, WyRand};
use crate::size::format_bytes;

/// O_DIRECT transfers and verified blocks are whole sectors (vdbench's rule
/// for every transfer); buffered transfers may be any size, as fio's are
/// (etcd's check writes 2300-byte blocks).
pub const SECTOR: u64 = 512;

/// One I/O run on one file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Job {
    /// The run's name (vdbench's RD name).
    pub name: String,
    /// vdbench's "For loops" values of this run, e.g. `xfersize=4k threads=8`.
    pub loops: Vec<(String, String)>,
    /// Index of the file in the plan.
    pub file: usize,
    pub xfer: XferSize,
    /// Chance (%) that an I/O is a read.
    pub read_pct: f64,
    pub seek: Seek,
    /// Concurrent I/O streams sharing one sequential position.
    pub threads: u32,
    pub engine: Engine,
    /// I/Os each thread keeps in flight (io_uring engine only).
    pub queue_depth: u32,
    /// O_DIRECT (aligned buffers, no page cache).
    pub direct: bool,
    pub sync: SyncFlag,
    /// fdatasync after every N writes of a thread; 0 = never.
    pub fdatasync_every: u32,
    /// fsync the file when the job's I/O ends, inside its measured time
    /// (fio's end_fsync): a write job's figures then include getting its
    /// data to stable storage. On by default from the command line and
    /// suites (`--no-end-sync` turns it off), off in vdbench parameter
    /// files (vdbench does not sync).
    pub end_fsync: bool,
    /// When the job's MiB/s counts as steady (recorded in the result).
    pub steady: SteadyRule,
    /// End a duration-bound job once it is steady (the duration is then
    /// the most it runs).
    pub until_steady: bool,
    pub stop: Stop,
    /// fio's startdelay: the job starts this long after its group does;
    /// the wait is not part of its measured time.
    #[serde(
        serialize_with = "as_seconds",
        skip_serializing_if = "Duration::is_zero"
    )]
    pub start_delay: Duration,
    pub warmup: Warmup,
    #[serde(serialize_with = "as_seconds")]
    pub interval: Duration,
    /// Total I/Os per second; None = as fast as possible (vdbench's max).
    pub rate: Option<f64>,
    /// How I/Os are spaced under a rate limit.
    pub arrival: Arrival,
    pub seed: u64,
    /// Stamp every written block with its offset and write generation and
    /// check both on every read.
    pub verify: bool,
    /// With `verify`: stop the job after this many bad blocks (vdbench's
    /// `data_errors`); every one found is reported.
    pub verify_errors: u32,
    /// What the result should say of this job beyond its figures: how a
    /// job file was read (e.g. fio's libaio run on io_uring) and what its
    /// linter found.
    #[serde(skip)]
    pub notes: Vec<String>,
    /// fio's group: neighbouring jobs of one group run at once (each on
    /// its own threads and file, started together); None runs alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<u32>,
    /// fio's `numjobs` clones reported as one (`group_reporting`): a copy
    /// of the job (one clone) runs at once on each of these files (the
    /// same file repeated where they share one), and the job's result is
    /// theirs added up. Empty: the job runs as itself on `file`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clone_files: Vec<usize>,
    /// A job from a fio job file draws its I/O as fio does (its
    /// directions, sizes, offsets, random map and files); None: as
    /// vdbench does, from `read_pct`, `xfer` and `seek`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fio: Option<super::fio::FioDraws>,
    /// The fio draws of each clone of `clone_files` (each clone is a fio
    /// thread of its own, with its own seeds).
    #[serde(skip)]
    pub clone_draws: Vec<super::fio::FioDraws>,
}

/// The name of the job a `fsbench io` command line (not a suite or a
/// parameter file) describes; its label is a description instead.
pub const FLAG_JOB: &str = "io";

/// vdbench's default `data_errors=50`.
pub const DEFAULT_VERIFY_ERRORS: u32 = 50;

/// Inter-arrival times of a rate-limited job (vdbench's `distribution=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrival {
    /// Exponential gaps (Poisson arrivals, bursty): vdbench's default.
    #[default]
    Exponential,
    /// Gaps uniform on [0, 2 × mean].
    Uniform,
    /// Every gap the mean (vdbench's `deterministic`).
    Fixed,
}

/// Transfer size: fixed, or drawn per I/O from (size, %) pairs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum XferSize {
    Fixed(u64),
    Mix(Vec<(u64, f64)>),
}

/// vdbench's seekpct.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Seek {
    /// Each I/O is random with this chance (%), else it continues where the
    /// previous I/O of the job ended (0 = sequential, wrapping at the end).
    Percent(f64),
    /// Sequential, and the job ends at the end of the file (one pass).
    Eof,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Engine {
    /// One blocking pread/pwrite per I/O per thread (vdbench, fio psync).
    Sync,
    /// io_uring with `queue_depth` I/Os in flight per thread.
    IoUring,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncFlag {
    None,
    /// O_DSYNC (what vdbench's o_sync/o_dsync/o_rsync open on Linux).
    Dsync,
    /// O_SYNC.
    Sync,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// Measured time after the warm-up.
    #[serde(serialize_with = "as_seconds")]
    Duration(Duration),
    /// Bytes transferred after the warm-up.
    Amount(u64),
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Warmup {
    /// vdbench's default (warmup=0): the first interval is shown but left
    /// out of the averages, and it is part of the duration.
    FirstInterval,
    /// This much time runs before the duration and is left out.
    #[serde(serialize_with = "as_seconds")]
    Time(Duration),
}

impl Arrival {
    /// The time to the next I/O, in seconds, for a mean gap of `mean`.
    pub fn gap(self, mean: f64, rng: &mut WyRand) -> f64 {
        match self {
            // Inverse transform; 1 - u is in (0, 1], so the log is finite.
            Arrival::Exponential => -mean * (1.0 - rng.unit()).ln(),
            Arrival::Uniform => 2.0 * mean * rng.unit(),
            Arrival::Fixed => mean,
        }
    }
}

fn as_seconds<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

impl XferSize {
    pub fn sizes(&self) -> Vec<u64> {
        match self {
            XferSize::Fixed(size) => vec![*size],
            XferSize::Mix(pairs) => pairs.iter().map(|(size, _)| *size).collect(),
        }
    }

    pub fn largest(&self) -> u64 {
        self.sizes().into_iter().max().unwrap_or(0)
    }

    pub fn smallest(&self) -> u64 {
        self.sizes().into_iter().min().unwrap_or(0)
    }

    /// vdbench's spelling: `4k` or `(4k,30,64k,70)`.
    pub fn describe(&self) -> String {
        match self {
            XferSize::Fixed(size) => short_size(*size),
            XferSize::Mix(pairs) => {
                let items: Vec<String> = pairs
                    .iter()
                    .map(|(size, pct)| format!("{},{pct}", short_size(*size)))
                    .collect();
                format!("({})", items.join(","))
            }
        }
    }

    /// `whole_sectors`: O_DIRECT or verification needs every transfer in
    /// whole sectors; buffered transfers only need a byte.
    fn check(&self, whole_sectors: bool) -> anyhow::Result<()> {
        for size in self.sizes() {
            match whole_sectors {
                true => check_whole_sectors("transfer size", size)?,
                false if size == 0 => return usage("transfer size 0: use at least 1 byte"),
                false => {}
            }
        }
        if let XferSize::Mix(pairs) = self {
            // Checked one by one first: out-of-range shares can still sum
            // to 100 (101 and -1), and NaN or infinity never compare.
            if let Some((size, pct)) = pairs.iter().find(|(_, pct)| !(0.0..=100.0).contains(pct)) {
                return usage(format!(
                    "transfer size mix {}: the percentage of {} is {pct}, not a number from 0 to 100",
                    self.describe(),
                    short_size(*size)
                ));
            }
            let total: f64 = pairs.iter().map(|(_, pct)| pct).sum();
            if (total - 100.0).abs() > 0.01 {
                return usage(format!(
                    "transfer size mix {}: the percentages must add up to 100 (they add up to {total})",
                    self.describe()
                ));
            }
        }
        Ok(())
    }
}

/// `4096` → `4k`, `1048576` → `1m`: vdbench's way of printing sizes.
pub fn short_size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "t"),
        (1 << 30, "g"),
        (1 << 20, "m"),
        (1 << 10, "k"),
    ];
    UNITS
        .iter()
        .find(|(unit, _)| bytes >= *unit && bytes.is_multiple_of(*unit))
        .map(|(unit, suffix)| format!("{}{suffix}", bytes / unit))
        .unwrap_or_else(|| bytes.to_string())
}

impl Seek {
    /// vdbench's spelling: `0`, `50`, `100`, `eof`.
    pub fn describe(&self) -> String {
        match self {
            Seek::Percent(pct) => format!("{pct}"),
            Seek::Eof => "eof".into(),
        }
    }
}

impl Job {
    /// How many leading intervals are warm-up (left out of the averages).
    pub fn warmup_intervals(&self) -> u32 {
        match self.warmup {
            Warmup::FirstInterval => 1,
            Warmup::Time(time) => intervals_in(time, self.interval),
        }
    }

    /// All intervals of a duration-bound job (warm-up included); None when
    /// the job ends by amount or at end of file.
    pub fn total_intervals(&self) -> Option<u32> {
        let Stop::Duration(duration) = self.stop else {
            return None;
        };
        let measured = intervals_in(duration, self.interval);
        Some(match self.warmup {
            Warmup::FirstInterval => measured,
            Warmup::Time(_) => self.warmup_intervals() + measured,
        })
    }

    /// Total run time of a duration-bound job, warm-up included.
    pub fn run_time(&self) -> Option<Duration> {
        let Stop::Duration(duration) = self.stop else {
            return None;
        };
        Some(match self.warmup {
            Warmup::FirstInterval => duration,
            Warmup::Time(warmup) => warmup + duration,
        })
    }

    pub fn reads(&self) -> bool {
        self.read_pct > 0.0
    }

    pub fn writes(&self) -> bool {
        self.read_pct < 100.0
    }

    /// Whether its writes reach the storage inside the measured time:
    /// O_DIRECT, O_SYNC/O_DSYNC, fdatasync every N writes or an fsync at
    /// the end. Otherwise they may all stay in the page cache.
    pub fn flushes_writes(&self) -> bool {
        self.direct || self.sync != SyncFlag::None || self.fdatasync_every > 0 || self.end_fsync
    }

    /// What reports call this run: the run's name with its loop values
    /// (`rd1 threads=8`), or for a job from flags a short description
    /// (`4k-rand-read-direct`).
    pub fn label(&self) -> String {
        if self.name == FLAG_JOB {
            return self.description();
        }
        let loops = self.loops.iter().map(|(k, v)| format!(" {k}={v}"));
        std::iter::once(self.name.clone()).chain(loops).collect()
    }

    /// Whether it (or one of its clones) works on file `index`.
    pub fn uses_file(&self, index: usize) -> bool {
        self.file == index || self.clone_files.contains(&index)
    }

    /// What runs of it: one copy per clone, each on its own file, or the
    /// job itself.
    pub fn copies(&self) -> Vec<Job> {
        if self.clone_files.is_empty() {
            return vec![self.clone()];
        }
        let copy = |(index, &file): (usize, &usize)| Job {
            file,
            clone_files: Vec::new(),
            fio: self.clone_draws.get(index).or(self.fio.as_ref()).cloned(),
            clone_draws: Vec::new(),
            ..self.clone()
        };
        self.clone_files.iter().enumerate().map(copy).collect()
    }

    /// Moves its files' indices on by `by` (its plan joined after another
    /// plan's files).
    pub fn move_files(&mut self, by: usize) {
        self.file += by;
        for file in &mut self.clone_files {
            *file += by;
        }
        let draws = self.fio.iter_mut().chain(&mut self.clone_draws);
        for file in draws.flat_map(|d| &mut d.files) {
            file.file += by;
        }
    }

    /// `4k-rand-read`, `1m-seq-write-direct`, `4k-seek50-read70-t8-qd32`.
    fn description(&self) -> String {
        let xfer = match &self.xfer {
            XferSize::Fixed(size) => short_size(*size),
            XferSize::Mix(_) => "mix".into(),
        };
        let seek = match self.seek {
            Seek::Percent(0.0) => "seq".into(),
            Seek::Percent(100.0) => "rand".into(),
            Seek::Percent(pct) => format!("seek{pct}"),
            Seek::Eof => "eof".into(),
        };
        let direction = match self.read_pct {
            100.0 => "read".into(),
            0.0 => "write".into(),
            pct => format!("read{pct}"),
        };
        let mut parts = vec![xfer, seek, direction];
        if self.threads > 1 {
            parts.push(format!("t{}", self.threads));
        }
        if self.engine == Engine::IoUring {
            parts.push(format!("qd{}", self.queue_depth));
        }
        if self.direct {
            parts.push("direct".into());
        }
        parts.join("-")
    }

    /// Refuses, with a one-line reason, a job that cannot run on a file of
    /// `file_size` bytes.
    pub fn check(&self, file_size: u64) -> anyhow::Result<()> {
        self.xfer.check(self.whole_sectors())?;
        check_percent("read %", self.read_pct)?;
        if let Seek::Percent(pct) = self.seek {
            check_percent("seek %", pct)?;
        }
        crate::workload::threads::check_count(u64::from(self.threads))?;
        self.check_engine()?;
        if file_size < self.xfer.largest() {
            return usage(format!(
                "the file ({}) is smaller than the largest transfer size ({})",
                format_bytes(file_size),
                format_bytes(self.xfer.largest())
            ));
        }
        self.check_timing()?;
        self.check_steady()?;
        if let Some(rate) = self.rate
            && !valid_rate(rate)
        {
            return usage(format!("rate {rate}: {RATE_HINT}"));
        }
        if self.verify {
            self.check_verify()?;
        }
        if self.verify_errors == 0 {
            return usage("the bad-block limit must be at least 1");
        }
        Ok(())
    }

    /// O_DIRECT needs whole sectors, and verification keys each one.
    fn whole_sectors(&self) -> bool {
        self.direct || self.verify
    }

    fn check_engine(&self) -> anyhow::Result<()> {
        if self.queue_depth == 0 || self.queue_depth > 4096 {
            return usage(format!("queue depth {}: use 1 to 4096", self.queue_depth));
        }
        if self.queue_depth > 1 && self.engine == Engine::Sync {
            return usage(format!(
                "queue depth {} needs --engine io_uring: the sync engine has one I/O in flight per thread (use --threads for more)",
                self.queue_depth
            ));
        }
        if self.engine == Engine::IoUring {
            let sync_only = [
                (self.verify, "--verify"),
                (self.rate.is_some(), "a rate limit"),
                (self.fdatasync_every > 0, "--fdatasync-every"),
            ];
            if let Some((_, what)) = sync_only.iter().find(|(asked, _)| *asked) {
                return usage(format!("{what} runs on the sync engine only"));
            }
        }
        Ok(())
    }

    /// The sync engine with as many threads as I/Os the io_uring job
    /// would keep in flight: what runs when io_uring cannot.
    pub fn sync_fallback(&self) -> Job {
        Job {
            engine: Engine::Sync,
            threads: self.threads.saturating_mul(self.queue_depth),
            queue_depth: 1,
            ..self.clone()
        }
    }

    fn check_timing(&self) -> anyhow::Result<()> {
        if self.interval < Duration::from_millis(10) {
            return usage(format!("interval {:?}: use at least 10 ms", self.interval));
        }
        if let Warmup::Time(warmup) = self.warmup
            && !is_multiple(warmup, self.interval)
        {
            return usage(format!(
                "warm-up {} s must be a whole number of intervals ({} s)",
                warmup.as_secs_f64(),
                self.interval.as_secs_f64()
            ));
        }
        match self.stop {
            Stop::Duration(duration) if duration.is_zero() => {
                usage("the duration must be positive")
            }
            Stop::Duration(duration)
                if self.warmup == Warmup::FirstInterval && duration < 2 * self.interval =>
            {
                usage(format!(
                    "duration {} s is under two intervals of {} s: the first interval is warm-up, so nothing would be measured (give --warmup 0 to count every interval)",
                    duration.as_secs_f64(),
                    self.interval.as_secs_f64()
                ))
            }
            Stop::Amount(0) => usage("the amount to transfer must be positive"),
            Stop::Amount(amount) if self.whole_sectors() && !amount.is_multiple_of(SECTOR) => {
                usage(format!("amount {amount}: use a multiple of {SECTOR} bytes"))
            }
            _ => Ok(()),
        }
    }

    fn check_steady(&self) -> anyhow::Result<()> {
        let slope = self.steady.slope;
        if !(slope > 0.0 && slope <= 1.0) {
            return usage(format!(
                "steady state slope {}%: use more than 0 and at most 100 %",
                slope * 100.0
            ));
        }
        if self.until_steady && !matches!(self.stop, Stop::Duration(_)) {
            return usage(
                "--until-steady ends a timed job early: give --duration (the most it runs), not --amount",
            );
        }
        Ok(())
    }

    /// Verification tracks key blocks of the smallest transfer size, so
    /// every transfer must cover whole key blocks.
    fn check_verify(&self) -> anyhow::Result<()> {
        let key = self.xfer.smallest();
        if self.xfer.sizes().iter().any(|s| !s.is_multiple_of(key)) {
            return usage(format!(
                "--verify: every transfer size must be a multiple of the smallest ({})",
                short_size(key)
            ));
        }
        Ok(())
    }
}

/// The slowest rate a job may be paced at: one I/O per 1000 s. Slower
/// ones are typing errors, and their gaps would not fit a clock.
pub const MIN_RATE: f64 = 1e-3;

/// What a rate that cannot pace a job is told; callers put the flag or
/// parameter that gave it first.
pub const RATE_HINT: &str = "give I/Os per second (at least 0.001, one per 1000 s) or max";

/// A rate (I/Os per second) that can pace a job.
pub fn valid_rate(rate: f64) -> bool {
    rate.is_finite() && rate >= MIN_RATE
}

/// A typed rate, if it is a number that can pace a job.
pub fn rate_value(text: &str) -> Option<f64> {
    text.parse().ok().filter(|&rate| valid_rate(rate))
}

/// Files, and O_DIRECT or verified transfers, are made of whole sectors:
/// O_DIRECT needs them, and verification keys every sector.
pub fn check_whole_sectors(what: &str, bytes: u64) -> anyhow::Result<()> {
    if bytes == 0 || !bytes.is_multiple_of(SECTOR) {
        return usage(format!(
            "{what} {bytes} must be a positive multiple of {SECTOR} bytes"
        ));
    }
    Ok(())
}

fn check_percent(what: &str, value: f64) -> anyhow::Result<()> {
    if (0.0..=100.0).contains(&value) {
        Ok(())
    } else {
        usage(format!("{what} {value}: use 0 to 100"))
    }
}

fn intervals_in(time: Duration, interval: Duration) -> u32 {
    (time.as_secs_f64() / interval.as_secs_f64() - 1e-9)
        .ceil()
        .max(0.0) as u32
}

fn is_multiple(time: Duration, interval: Duration) -> bool {
    time.as_nanos().is_multiple_of(interval.as_nanos())
}

/// The one duration parser (a bare number is seconds), shared by every
/// native duration flag.
pub use crate::units::parse_time;

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A small valid job for tests: 4k random reads, 1 s of 100 ms intervals.
    pub fn job() -> Job {
        Job {
            name: "t".into(),
            loops: Vec::new(),
            file: 0,
            xfer: XferSize::Fixed(4096),
            read_pct: 100.0,
            seek: Seek::Percent(100.0),
            threads: 1,
            engine: Engine::Sync,
            queue_depth: 1,
            direct: false,
            sync: SyncFlag::None,
            fdatasync_every: 0,
            end_fsync: false,
            steady: SteadyRule::default(),
            until_steady: false,
            start_delay: Duration::ZERO,
            stop: Stop::Duration(Duration::from_secs(1)),
            warmup: Warmup::FirstInterval,
            interval: Duration::from_millis(100),
            rate: None,
            arrival: Arrival::Exponential,
            seed: 1,
            verify: false,
            verify_errors: DEFAULT_VERIFY_ERRORS,
            notes: Vec::new(),
            group: None,
            clone_files: Vec::new(),
            fio: None,
            clone_draws: Vec::new(),
        }
    }

    /// Mean, coefficient of variation and share below the mean of 200 000
    /// gaps of mean 1.
    fn gap_statistics(arrival: Arrival) -> (f64, f64, f64) {
        let mut rng = WyRand::new(42);
        let gaps: Vec<f64> = (0..200_000).map(|_| arrival.gap(1.0, &mut rng)).collect();
        let n = gaps.len() as f64;
        let mean = gaps.iter().sum::<f64>() / n;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let below = gaps.iter().filter(|&&g| g < 1.0).count() as f64 / n;
        (mean, var.sqrt() / mean, below)
    }

    #[test]
    fn arrival_gaps_have_their_distributions() {
        // Exponential: CV 1, P(gap < mean) = 1 - 1/e.
        let (mean, cv, below) = gap_statistics(Arrival::Exponential);
        assert!((mean - 1.0).abs() < 0.01, "{mean}");
        assert!((cv - 1.0).abs() < 0.01, "{cv}");
        assert!((below - (1.0 - (-1.0f64).exp())).abs() < 0.005, "{below}");
        // Uniform on [0, 2]: CV 1/sqrt(3), half below the mean.
        let (mean, cv, below) = gap_statistics(Arrival::Uniform);
        assert!((mean - 1.0).abs() < 0.01, "{mean}");
        assert!((cv - 1.0 / 3f64.sqrt()).abs() < 0.01, "{cv}");
        assert!((below - 0.5).abs() < 0.005, "{below}");
        assert_eq!(gap_statistics(Arrival::Fixed), (1.0, 0.0, 0.0));
        // Seeded: the same seed gives the same gaps.
        let draw = |seed| Arrival::Exponential.gap(1.0, &mut WyRand::new(seed));
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
    }

    #[test]
    fn labels_name_the_run_or_describe_it() {
        let mut j = job();
        assert_eq!(j.label(), "t");
        j.loops = vec![("threads".into(), "8".into())];
        assert_eq!(j.label(), "t threads=8");
        j.name = FLAG_JOB.into();
        assert_eq!(j.label(), "4k-rand-read");
        j.direct = true;
        assert_eq!(j.label(), "4k-rand-read-direct");
        j.seek = Seek::Percent(50.0);
        j.read_pct = 70.0;
        j.threads = 8;
        j.engine = Engine::IoUring;
        j.queue_depth = 32;
        j.direct = false;
        assert_eq!(j.label(), "4k-seek50-read70-t8-qd32");
        j.xfer = XferSize::Fixed(1 << 20);
        j.seek = Seek::Percent(0.0);
        j.read_pct = 0.0;
        assert_eq!(j.label(), "1m-seq-write-t8-qd32");
    }

    #[test]
    fn parses_times() {
        assert_eq!(parse_time("30").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_time("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_time("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_time("0.5s").unwrap(), Duration::from_millis(500));
        for bad in ["", "x", "5d", "1.2.3"] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn counts_intervals_like_vdbench() {
        let mut j = job();
        assert_eq!(j.total_intervals(), Some(10));
        assert_eq!(j.warmup_intervals(), 1);
        j.warmup = Warmup::Time(Duration::from_millis(300));
        assert_eq!(j.total_intervals(), Some(13));
        assert_eq!(j.warmup_intervals(), 3);
        assert_eq!(j.run_time(), Some(Duration::from_millis(1300)));
    }

    #[test]
    fn refuses_bad_jobs() {
        type Change = Box<dyn Fn(&mut Job)>;
        let cases: Vec<(Change, &str)> = vec![
            (
                Box::new(|j| {
                    j.direct = true;
                    j.xfer = XferSize::Fixed(1000);
                }),
                "multiple of 512",
            ),
            (
                Box::new(|j| {
                    j.verify = true;
                    j.xfer = XferSize::Fixed(2300);
                }),
                "multiple of 512",
            ),
            (Box::new(|j| j.xfer = XferSize::Fixed(0)), "transfer size 0"),
            (
                Box::new(|j| j.xfer = XferSize::Mix(vec![(4096, 50.0), (8192, 40.0)])),
                "add up to 100",
            ),
            (
                Box::new(|j| j.xfer = XferSize::Mix(vec![(4096, 101.0), (8192, -1.0)])),
                "percentage of 4k is 101",
            ),
            (
                Box::new(|j| j.xfer = XferSize::Mix(vec![(4096, 50.0), (8192, f64::NAN)])),
                "percentage of 8k is NaN",
            ),
            (Box::new(|j| j.read_pct = 101.0), "read %"),
            (Box::new(|j| j.queue_depth = 8), "io_uring"),
            (
                Box::new(|j| j.stop = Stop::Duration(Duration::from_millis(150))),
                "two intervals",
            ),
            (
                Box::new(|j| j.warmup = Warmup::Time(Duration::from_millis(150))),
                "whole number",
            ),
            (
                Box::new(|j| j.xfer = XferSize::Fixed(1 << 20)),
                "smaller than",
            ),
            (
                Box::new(|j| {
                    j.until_steady = true;
                    j.stop = Stop::Amount(1 << 20);
                }),
                "--until-steady ends a timed job",
            ),
            (Box::new(|j| j.steady.slope = 0.0), "steady state slope 0%"),
            (
                Box::new(|j| {
                    j.verify = true;
                    j.xfer = XferSize::Mix(vec![(4096, 50.0), (6144, 50.0)]);
                }),
                "multiple of the smallest",
            ),
        ];
        for (change, needle) in cases {
            let mut j = job();
            change(&mut j);
            let err = j.check(64 << 10).unwrap_err().to_string();
            assert!(err.contains(needle), "{err} lacks {needle}");
        }
        job().check(64 << 10).unwrap();
    }

    #[test]
    fn buffered_transfers_may_be_any_size() {
        let mut j = job();
        j.xfer = XferSize::Fixed(2300);
        j.check(64 << 10).unwrap();
    }

    #[test]
    fn prints_sizes_like_vdbench() {
        assert_eq!(short_size(4096), "4k");
        assert_eq!(short_size(1 << 20), "1m");
        assert_eq!(short_size(1536), "1536");
        assert_eq!(
            XferSize::Mix(vec![(4096, 30.0), (65536, 70.0)]).describe(),
            "(4k,30,64k,70)"
        );
    }
}

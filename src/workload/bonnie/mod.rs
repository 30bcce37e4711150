//! The Bonnie++ workload: the data tests (per-char and block write, rewrite,
//! per-char and block read, random seeks) and the file tests (sequential and
//! random create / stat / delete), with bonnie++ 2.00a's syscalls, names and
//! order, timed with monotonic ns clocks instead of `gettimeofday`.
mod data;
mod files;
mod names;
pub mod rng;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{RunContext, Workload};
use crate::measure::phase::{Measured, Rate};
use crate::measure::{LatencyRecorder, PhaseTiming};
use crate::result::{LatencySummary, Metric, WorkloadResult};
use rng::RandomSource;

pub const MIB: u64 = 1 << 20;

/// Everything `bonnie++`'s flags decide, in fsbench's terms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BonnieConfig {
    /// `-m`: the label of the CSV line and table.
    pub machine: String,
    /// `-s`: size of the data-test file in MiB; 0 skips the data tests.
    pub file_size_mib: u64,
    /// `-s size:chunk`: bytes per read/write of the data tests.
    pub chunk: usize,
    /// `-s size:chunk:seeks`: operations of the random-seek test.
    pub seeks: u64,
    /// `-s size:chunk:seeks:seekers`: threads of the random-seek test.
    pub seekers: u32,
    /// `-f[N]`: MiB written and read one byte per syscall; 0 skips them.
    pub byte_io_mib: u64,
    pub files: FileTestConfig,
    /// `-r`: RAM in MiB (0 = unknown: no page-cache flags, 300 MiB default size).
    pub ram_mib: u64,
    /// `-c`: a label, and a multiplier of the 2×RAM guideline, as in bonnie++.
    pub concurrency: u32,
    /// `-b`: fsync after every write and every file creation.
    pub fsync_every_write: bool,
    /// `-D`: O_DIRECT for the block tests.
    pub direct: bool,
    /// `--shared-dir`: under MPI, every rank's file tests in one directory.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shared_dir: bool,
    pub seed: Seed,
}

/// `-n num[:max[:min[:dirs[:chunk]]]]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileTestConfig {
    /// Number of files in units of 1024; 0 skips the file tests.
    pub num_k: u64,
    pub kind: FileKind,
    pub dirs: u64,
    /// Bytes per read/write of file data.
    pub chunk: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// Regular files with sizes uniform in min..=max (both 0: empty files).
    Sized { max: u64, min: u64 },
    /// `max = -1`: hard links to the first file.
    HardLinks,
    /// `max = -2`: symbolic links to the first file.
    SymLinks,
}

impl FileKind {
    /// Empty files or links: creating, stating and deleting them writes
    /// only metadata.
    pub fn moves_no_data(self) -> bool {
        !matches!(self, FileKind::Sized { max, .. } if max > 0)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Seed {
    Number(u32),
    /// `-Z`: random numbers read from this file.
    File(PathBuf),
}

impl BonnieConfig {
    pub fn total_files(&self) -> u64 {
        self.files.num_k * 1024
    }

    /// True when the data file is smaller than twice RAM: reads and seeks
    /// then mostly measure the page cache (bonnie++'s own rule, which it
    /// enforces by refusing to run; fsbench runs and flags instead).
    fn data_fits_in_cache(&self) -> bool {
        self.ram_mib > 0 && self.file_size_mib * u64::from(self.concurrency) < 2 * self.ram_mib
    }
}

/// The twelve tests, in bonnie++'s order and with its CSV names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Test {
    PutChar,
    PutBlock,
    Rewrite,
    GetChar,
    GetBlock,
    Seeks,
    SeqCreate,
    SeqStat,
    SeqDelete,
    RandCreate,
    RandStat,
    RandDelete,
}

impl Test {
    pub const ALL: [Test; 12] = [
        Test::PutChar,
        Test::PutBlock,
        Test::Rewrite,
        Test::GetChar,
        Test::GetBlock,
        Test::Seeks,
        Test::SeqCreate,
        Test::SeqStat,
        Test::SeqDelete,
        Test::RandCreate,
        Test::RandStat,
        Test::RandDelete,
    ];

    /// The metric name: bonnie++'s CSV column name.
    pub fn metric_name(self) -> &'static str {
        match self {
            Test::PutChar => "putc",
            Test::PutBlock => "put_block",
            Test::Rewrite => "rewrite",
            Test::GetChar => "getc",
            Test::GetBlock => "get_block",
            Test::Seeks => "seeks",
            Test::SeqCreate => "seq_create",
            Test::SeqStat => "seq_stat",
            Test::SeqDelete => "seq_del",
            Test::RandCreate => "ran_create",
            Test::RandStat => "ran_stat",
            Test::RandDelete => "ran_del",
        }
    }

    /// bonnie++'s progress message.
    fn progress_text(self) -> &'static str {
        match self {
            Test::PutChar => "Writing a byte at a time",
            Test::PutBlock => "Writing intelligently",
            Test::Rewrite => "Rewriting",
            Test::GetChar => "Reading a byte at a time",
            Test::GetBlock => "Reading intelligently",
            Test::Seeks => "Random seeks",
            Test::SeqCreate => "Create files in sequential order",
            Test::SeqStat => "Stat files in sequential order",
            Test::SeqDelete => "Delete files in sequential order",
            Test::RandCreate => "Create files in random order",
            Test::RandStat => "Stat files in random order",
            Test::RandDelete => "Delete files in random order",
        }
    }

    /// The data tests measured in bytes (MiB/s), not in operations.
    pub fn moves_data(self) -> bool {
        matches!(
            self,
            Test::PutChar | Test::PutBlock | Test::Rewrite | Test::GetChar | Test::GetBlock
        )
    }

    /// What the test's count is reported as: bytes as MiB/s, seeks or
    /// files per second.
    pub fn rate(self) -> Rate {
        match self {
            _ if self.moves_data() => Rate::MIB_PER_S,
            Test::Seeks => Rate::per_second("seeks/s"),
            _ => Rate::per_second("files/s"),
        }
    }

    /// The file tests: create, stat, delete, in either order.
    fn is_file_test(self) -> bool {
        !matches!(
            self,
            Test::PutChar
                | Test::PutBlock
                | Test::Rewrite
                | Test::GetChar
                | Test::GetBlock
                | Test::Seeks
        )
    }

    /// Tests whose figure depends on data already in the page cache.
    fn reads_cached_data(self) -> bool {
        matches!(
            self,
            Test::Rewrite | Test::GetChar | Test::GetBlock | Test::Seeks
        )
    }
}

/// What one test measured: `work` is bytes for throughput tests, seeks or
/// files for the others.
pub struct Outcome {
    pub test: Test,
    pub timing: PhaseTiming,
    pub work: u64,
    pub latency: Option<LatencySummary>,
}

impl Outcome {
    pub fn new(test: Test, timing: PhaseTiming, work: u64, latency: &LatencyRecorder) -> Self {
        Outcome {
            test,
            timing,
            work,
            latency: latency.summary_for_metric(),
        }
    }

    fn to_metric(&self, config: &BonnieConfig) -> Metric {
        let measured = Measured {
            fits_in_page_cache: self.test.reads_cached_data() && config.data_fits_in_cache(),
            ..Measured::over(&self.timing)
        };
        // The bytes the data tests move, each way, for the device counters.
        let measured = match self.test {
            Test::GetChar | Test::GetBlock => measured.moved(self.work, 0),
            Test::Rewrite => measured.moved(self.work, self.work),
            Test::PutChar | Test::PutBlock => measured.moved(0, self.work),
            // Empty files, links: the file tests move no file data.
            _ if self.test.is_file_test() && config.files.kind.moves_no_data() => {
                measured.moved(0, 0)
            }
            _ => measured,
        };
        measured
            .rate(self.test.metric_name(), self.test.rate(), self.work)
            .with_latency(self.latency.clone())
    }
}

pub struct Bonnie {
    config: BonnieConfig,
    random: RandomInput,
}

/// What each repetition's random numbers start from.
enum RandomInput {
    Seed(u32),
    /// `-Z`: the file's values, read once before anything is written.
    Values(Vec<u32>),
}

impl Bonnie {
    pub fn new(config: BonnieConfig) -> anyhow::Result<Bonnie> {
        let random = match &config.seed {
            Seed::Number(n) => RandomInput::Seed(*n),
            Seed::File(path) => RandomInput::Values(RandomSource::read_values_file(path)?),
        };
        Ok(Bonnie { config, random })
    }

    /// A fresh source per repetition: every run replays the same sequence.
    fn random_source(&self) -> RandomSource {
        match &self.random {
            RandomInput::Seed(n) => RandomSource::seeded(*n),
            RandomInput::Values(values) => RandomSource::from_values(values.clone()),
        }
    }
}

impl Workload for Bonnie {
    fn kind(&self) -> &'static str {
        "bonnie"
    }

    fn planned_bytes(&self) -> u64 {
        let data = self.config.file_size_mib * MIB;
        // Files occupy whole 4 KiB blocks; saturate rather than wrap, so an
        // absurd size is refused by the space check instead of slipping by.
        let per_file = match self.config.files.kind {
            FileKind::Sized { max, .. } => max.saturating_add(4095) / 4096 * 4096,
            FileKind::HardLinks | FileKind::SymLinks => 0,
        };
        // The data file is deleted before the file tests start.
        data.max(self.config.total_files().saturating_mul(per_file))
    }

    fn planned_files(&self) -> u64 {
        self.config.total_files() + self.config.files.dirs + 2
    }

    fn run(&mut self, ctx: &RunContext<'_>) -> anyhow::Result<WorkloadResult> {
        let config = &self.config;
        // Every repetition replays the same random sequence, as bonnie++ does.
        let mut random = self.random_source();
        let mut outcomes = Vec::new();
        let mut notes = Vec::new();
        if config.file_size_mib > 0 {
            data::run_all(config, ctx, &mut random, &mut outcomes, &mut notes)?;
        }
        if config.files.num_k > 0 {
            files::run_all(config, ctx, &mut random, &mut outcomes, &mut notes)?;
        }
        Ok(WorkloadResult {
            workload: self.kind().to_string(),
            repetition: ctx.repetition,
            params: serde_json::to_value(config)?,
            metrics: outcomes.iter().map(|o| o.to_metric(config)).collect(),
            notes,
            ..Default::default()
        })
    }
}

/// Runs one timed test with bonnie++'s progress messages around it (and,
/// under MPI, in step with the other ranks).
fn announce(
    ctx: &RunContext<'_>,
    test: Test,
    outcomes: &mut Vec<Outcome>,
    body: impl FnOnce() -> anyhow::Result<Outcome>,
) -> anyhow::Result<()> {
    ctx.progress.start(test.progress_text());
    let outcome = crate::scale::phase(|o: &Outcome| o.timing, body)?;
    ctx.progress.done(outcome.timing.elapsed.as_secs_f64());
    outcomes.push(outcome);
    Ok(())
}

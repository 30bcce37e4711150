//! One PostMark instance: its random numbers, content buffer and file
//! table, and the three timed phases (create the pool, transactions,
//! delete the pool). Every random draw happens where PostMark draws, in
//! the same order, so a seed gives the same files, sizes and operations.
//! The file system is reached only through [`FileOps`], so the operation
//! sequence can be checked without touching a disk.
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::PostmarkConfig;
use super::pool::{FileSlot, Pool};
use super::rng::PostmarkRng;
use crate::measure::LatencyRecorder;

/// What the engine needs from the file system.
pub trait FileOps {
    /// Creates `file` with `data` (its whole content) in it.
    fn create(&mut self, file: &FileSlot, data: &[u8]) -> anyhow::Result<()>;
    /// Reads `file.size` bytes of `file`.
    fn read(&mut self, file: &FileSlot) -> anyhow::Result<()>;
    /// Appends `data` to `file`.
    fn append(&mut self, file: &FileSlot, data: &[u8]) -> anyhow::Result<()>;
    fn delete(&mut self, file: &FileSlot) -> anyhow::Result<()>;
}

/// The operations PostMark counts, split by phase as its report is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Creation of the initial pool ("Creation alone").
    CreateAlone,
    /// Creation during transactions ("Mixed with transactions").
    CreateMixed,
    Read,
    Append,
    DeleteMixed,
    /// Deletion of what is left at the end ("Deletion alone").
    DeleteAlone,
}

impl Op {
    pub const ALL: [Op; 6] = [
        Op::CreateAlone,
        Op::CreateMixed,
        Op::Read,
        Op::Append,
        Op::DeleteMixed,
        Op::DeleteAlone,
    ];
}

/// PostMark's counters, with exact byte totals (PostMark keeps bytes in
/// single-precision floats, which drift on large runs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    ops: [u64; Op::ALL.len()],
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Transactions performed: fewer than configured after "out of files".
    pub transactions: u64,
}

impl Counts {
    pub fn of(&self, op: Op) -> u64 {
        self.ops[op as usize]
    }

    pub fn created(&self) -> u64 {
        self.of(Op::CreateAlone) + self.of(Op::CreateMixed)
    }

    pub fn deleted(&self) -> u64 {
        self.of(Op::DeleteAlone) + self.of(Op::DeleteMixed)
    }

    /// Adds another instance's counts.
    pub fn add(&mut self, other: &Counts) {
        for (mine, theirs) in self.ops.iter_mut().zip(other.ops) {
            *mine += theirs;
        }
        self.bytes_read += other.bytes_read;
        self.bytes_written += other.bytes_written;
        self.transactions += other.transactions;
    }
}

#[cfg(test)]
impl Counts {
    pub fn example(ops: [u64; 6], bytes_read: u64, bytes_written: u64, transactions: u64) -> Self {
        Counts {
            ops,
            bytes_read,
            bytes_written,
            transactions,
        }
    }
}

/// Another instance failed, so this one stopped too (its own state is
/// fine; the other instance's error is the one to report).
#[derive(Debug, thiserror::Error)]
#[error("stopped because another instance failed")]
pub struct Aborted;

/// Polled before every operation: a stop signal, or a failed sibling.
pub struct Stop<'a> {
    pub abort: &'a AtomicBool,
}

impl Stop<'_> {
    #[inline]
    pub fn check(&self) -> anyhow::Result<()> {
        crate::interrupt::check()?;
        if self.abort.load(Ordering::Relaxed) {
            return Err(Aborted.into());
        }
        Ok(())
    }
}

pub struct Instance<'c, F> {
    config: &'c PostmarkConfig,
    rng: PostmarkRng,
    /// The first `size high` bytes of PostMark's content buffer: every
    /// create and append writes a prefix of it.
    content: Vec<u8>,
    pool: Pool,
    /// Running totals of the location weights, for the weighted choice.
    weight_bounds: Vec<u32>,
    files: F,
    counts: Counts,
    latency: [LatencyRecorder; Op::ALL.len()],
    /// When the previous operation ended: one clock read per operation.
    last: Instant,
}

impl<'c, F: FileOps> Instance<'c, F> {
    /// Seeds the generator and draws the content buffer, as PostMark's
    /// setup does before its clock starts.
    pub fn new(config: &'c PostmarkConfig, seed: u32, files: F) -> Self {
        let mut rng = PostmarkRng::new(seed);
        let high = config.size_high as usize;
        let content = (0..high).map(|_| 32 + rng.below(95) as u8).collect();
        // PostMark fills 2 × high bytes but only ever writes the first
        // half; the draws for the second half still happen.
        (0..high).for_each(|_| {
            rng.next_u32();
        });
        let weight_bounds = config
            .locations
            .iter()
            .scan(0u32, |total, location| {
                *total += location.weight;
                Some(*total)
            })
            .collect();
        Instance {
            config,
            rng,
            content,
            pool: Pool::new(config.number),
            weight_bounds,
            files,
            counts: Counts::default(),
            latency: std::array::from_fn(|_| LatencyRecorder::new()),
            last: Instant::now(),
        }
    }

    pub fn counts(&self) -> &Counts {
        &self.counts
    }

    /// The file-system side, e.g. for cleanup after the run.
    pub fn files(&self) -> &F {
        &self.files
    }

    pub fn latency(&self, op: Op) -> &LatencyRecorder {
        &self.latency[op as usize]
    }

    /// True when the transactions stopped early because no file was left.
    pub fn ran_out_of_files(&self) -> bool {
        self.counts.transactions < u64::from(self.config.transactions)
    }

    /// "Creating files...": the initial pool of `number` files.
    pub fn create_files(&mut self, stop: &Stop) -> anyhow::Result<()> {
        self.last = Instant::now();
        for _ in 0..self.config.number {
            stop.check()?;
            self.create(Op::CreateAlone)?;
        }
        Ok(())
    }

    /// "Performing transactions": each one reads or appends, then creates
    /// or deletes (a half is skipped when its bias is -1). A dot goes to
    /// `dots` after every tenth of them, as in PostMark.
    pub fn run_transactions(
        &mut self,
        stop: &Stop,
        mut dots: Option<&mut dyn Write>,
    ) -> anyhow::Result<()> {
        let total = self.config.transactions;
        // PostMark divides by total / 10 and crashes below 10.
        let dot_every = (total / 10).max(1);
        self.last = Instant::now();
        for i in 0..total {
            stop.check()?;
            if self.counts.created() == self.counts.deleted() {
                return Ok(()); // out of files
            }
            self.transaction()?;
            self.counts.transactions += 1;
            if i % dot_every == 0
                && let Some(out) = dots.as_deref_mut()
            {
                out.write_all(b".")?;
                out.flush()?;
                self.last = Instant::now();
            }
        }
        Ok(())
    }

    /// "Deleting files...": everything left, in table order.
    pub fn delete_files(&mut self, stop: &Stop) -> anyhow::Result<()> {
        self.last = Instant::now();
        for index in 0..self.pool.slot_count() {
            if self.pool.slot(index).is_live() {
                stop.check()?;
                self.delete(index, Op::DeleteAlone)?;
            }
        }
        Ok(())
    }

    fn transaction(&mut self) -> anyhow::Result<()> {
        if let Some(bias) = self.config.bias_read {
            match self.choose(bias) {
                Choice::First => self.read()?,
                Choice::Second => self.append()?,
            }
        }
        if let Some(bias) = self.config.bias_create {
            match self.choose(bias) {
                Choice::First => self.create(Op::CreateMixed)?,
                Choice::Second => {
                    let index = self.pool.pick_live(&mut self.rng);
                    self.delete(index, Op::DeleteMixed)?;
                }
            }
        }
        Ok(())
    }

    /// PostMark's biased coin: the first choice with probability bias/10.
    fn choose(&mut self, bias: u32) -> Choice {
        if self.rng.below(10) < bias {
            Choice::First
        } else {
            Choice::Second
        }
    }

    /// A new file in the first free slot; nothing at all (no draw, no
    /// count) when all 2 × number slots are live.
    fn create(&mut self, op: Op) -> anyhow::Result<()> {
        let Some(index) = self.pool.free_slot() else {
            return Ok(());
        };
        let location = self.choose_location();
        let subdir = self.choose_subdir();
        let (low, high) = (self.config.size_low, self.config.size_high);
        let file = FileSlot {
            size: low + self.rng.below(high - low),
            number: (self.counts.created() + 1) as u32,
            location,
            subdir,
        };
        self.pool.fill(index, file);
        self.files
            .create(&file, &self.content[..file.size as usize])?;
        self.counts.bytes_written += u64::from(file.size);
        self.finish(op);
        Ok(())
    }

    fn read(&mut self) -> anyhow::Result<()> {
        let index = self.pool.pick_live(&mut self.rng);
        let file = *self.pool.slot(index);
        self.files.read(&file)?;
        self.counts.bytes_read += u64::from(file.size);
        self.finish(Op::Read);
        Ok(())
    }

    /// Appends 1 to (high − size) bytes; a file already at the high bound
    /// is left alone (and not counted), as in PostMark.
    fn append(&mut self) -> anyhow::Result<()> {
        let index = self.pool.pick_live(&mut self.rng);
        let file = *self.pool.slot(index);
        if file.size >= self.config.size_high {
            return Ok(());
        }
        let amount = self.rng.below(self.config.size_high - file.size) + 1;
        self.files.append(&file, &self.content[..amount as usize])?;
        self.pool.grow(index, amount);
        self.counts.bytes_written += u64::from(amount);
        self.finish(Op::Append);
        Ok(())
    }

    fn delete(&mut self, index: usize, op: Op) -> anyhow::Result<()> {
        let file = *self.pool.slot(index);
        self.files.delete(&file)?;
        self.pool.release(index);
        self.finish(op);
        Ok(())
    }

    /// Counts an operation and records its latency.
    #[inline]
    fn finish(&mut self, op: Op) {
        self.counts.ops[op as usize] += 1;
        self.last = self.latency[op as usize].record_since(self.last);
    }

    /// One draw among the locations by weight, only when there are two or
    /// more (PostMark's weighted index table, without the table).
    fn choose_location(&mut self) -> u32 {
        match self.weight_bounds.as_slice() {
            [] | [_] => 0,
            [.., total] => {
                let draw = self.rng.below(*total);
                self.weight_bounds.partition_point(|&bound| bound <= draw) as u32
            }
        }
    }

    /// One draw among `s0`..`sN-1`, only when there are two or more
    /// (PostMark ignores `set subdirectories 1`).
    fn choose_subdir(&mut self) -> Option<u32> {
        let count = self.config.subdirectories;
        (count > 1).then(|| self.rng.below(count))
    }
}

enum Choice {
    First,
    Second,
}

#[cfg(test)]
mod tests {
    use super::super::Location;
    use super::*;

    /// Records operations instead of performing them.
    #[derive(Default)]
    struct Log {
        ops: Vec<String>,
    }

    fn name(file: &FileSlot) -> String {
        let dir = ["A/", "B/"][file.location as usize];
        match file.subdir {
            Some(sub) => format!("{dir}s{sub}/{}", file.number),
            None => format!("{dir}{}", file.number),
        }
    }

    impl FileOps for Log {
        fn create(&mut self, file: &FileSlot, data: &[u8]) -> anyhow::Result<()> {
            self.ops
                .push(format!("create {} {}", name(file), data.len()));
            Ok(())
        }
        fn read(&mut self, file: &FileSlot) -> anyhow::Result<()> {
            self.ops.push(format!("read {} {}", name(file), file.size));
            Ok(())
        }
        fn append(&mut self, file: &FileSlot, data: &[u8]) -> anyhow::Result<()> {
            self.ops
                .push(format!("append {} +{}", name(file), data.len()));
            Ok(())
        }
        fn delete(&mut self, file: &FileSlot) -> anyhow::Result<()> {
            self.ops.push(format!("delete {}", name(file)));
            Ok(())
        }
    }

    /// Runs all three phases; returns the counts and the operation log.
    fn run(config: &PostmarkConfig) -> (Counts, Vec<String>) {
        let abort = AtomicBool::new(false);
        let stop = Stop { abort: &abort };
        let mut instance = Instance::new(config, config.seed, Log::default());
        instance.create_files(&stop).unwrap();
        instance.run_transactions(&stop, None).unwrap();
        instance.delete_files(&stop).unwrap();
        (instance.counts.clone(), instance.files.ops)
    }

    /// (created, created alone, read, appended, deleted, deleted alone,
    /// bytes read, bytes written)
    fn summary(c: &Counts) -> [u64; 8] {
        [
            c.created(),
            c.of(Op::CreateAlone),
            c.of(Op::Read),
            c.of(Op::Append),
            c.deleted(),
            c.of(Op::DeleteAlone),
            c.bytes_read,
            c.bytes_written,
        ]
    }

    fn strip_location(ops: &[String]) -> Vec<String> {
        ops.iter().map(|op| op.replace("A/", "")).collect()
    }

    /// PostMark 1.53's default run, as the real binary performs it.
    #[test]
    fn default_run_matches_postmark() {
        let (counts, ops) = run(&PostmarkConfig::default());
        assert_eq!(
            summary(&counts),
            [764, 500, 243, 257, 764, 528, 1_430_770, 4_662_068]
        );
        let ops = strip_location(&ops);
        assert_eq!(
            ops[..5],
            [
                "create 1 1390",
                "create 2 4732",
                "create 3 3583",
                "create 4 6507",
                "create 5 9640"
            ]
        );
        assert_eq!(
            ops[500..512],
            [
                "append 222 +9",
                "delete 140",
                "append 454 +4156",
                "delete 143",
                "read 154 6736",
                "create 501 6717",
                "append 211 +3850",
                "create 502 2554",
                "append 455 +1090",
                "delete 78",
                "append 257 +5365",
                "create 503 2763"
            ]
        );
    }

    /// A tiny run, every operation checked against strace of PostMark.
    #[test]
    fn tiny_run_matches_postmark_step_by_step() {
        let config = PostmarkConfig {
            size_low: 100,
            size_high: 200,
            number: 3,
            transactions: 10,
            buffered: false,
            write_block: 64,
            read_block: 50,
            ..PostmarkConfig::default()
        };
        let (counts, ops) = run(&config);
        let expected = [
            "create 1 170",
            "create 2 141",
            "create 3 168",
            "append 3 +6",
            "create 4 171",
            "append 1 +24",
            "delete 4",
            "append 3 +19",
            "create 5 131",
            "read 3 193",
            "delete 3",
            "append 1 +6",
            "delete 5",
            "read 1 200",
            "create 6 102",
            "append 6 +7",
            "delete 1",
            "append 6 +60",
            "create 7 152",
            "read 6 169",
            "create 8 146",
            "read 2 141",
            "create 9 164",
            "delete 7",
            "delete 2",
            "delete 8",
            "delete 9",
            "delete 6",
        ];
        assert_eq!(strip_location(&ops), expected);
        assert_eq!(counts.created(), 9);
        assert_eq!(counts.of(Op::Read), 4);
        assert_eq!(counts.of(Op::Append), 6);
        assert_eq!(counts.of(Op::DeleteAlone), 5);
    }

    /// Two weighted locations and four subdirectories: the location and
    /// subdirectory draws come before the size draw.
    #[test]
    fn weighted_locations_and_subdirectories_match_postmark() {
        let location = |path: &str, weight| Location {
            path: path.into(),
            weight,
        };
        let config = PostmarkConfig {
            locations: vec![location("A", 3), location("B", 1)],
            subdirectories: 4,
            number: 10,
            transactions: 20,
            ..PostmarkConfig::default()
        };
        let (counts, ops) = run(&config);
        let names: Vec<&str> = ops[..5]
            .iter()
            .map(|op| op.split(' ').nth(1).unwrap())
            .collect();
        assert_eq!(names, ["A/s0/1", "B/s0/2", "A/s1/3", "A/s0/4", "A/s0/5"]);
        assert_eq!(counts.created(), 21);
        assert_eq!(counts.of(Op::Read), 9);
        assert_eq!(counts.of(Op::Append), 11);
        assert_eq!(counts.of(Op::DeleteAlone), 12);
        // 57.24 and 141.33 kilobytes in PostMark's report.
        assert_eq!(format!("{:.2}", counts.bytes_read as f64 / 1024.0), "57.24");
        assert_eq!(
            format!("{:.2}", counts.bytes_written as f64 / 1024.0),
            "141.33"
        );
    }

    /// The run PostMark's users are told to use (20,000 files, 200,000
    /// transactions): exact byte totals, which PostMark's float counters
    /// print as 660,007,552 and 800,025,216.
    #[test]
    fn large_run_matches_postmark() {
        let config = PostmarkConfig {
            number: 20_000,
            transactions: 200_000,
            subdirectories: 10,
            ..PostmarkConfig::default()
        };
        let (counts, _) = run(&config);
        assert_eq!(
            summary(&counts),
            [
                120_394,
                20_000,
                99_834,
                99_581,
                120_394,
                20_788,
                660_024_542,
                800_060_665
            ]
        );
    }

    #[test]
    fn fewer_than_ten_transactions_run_and_out_of_files_stops_early() {
        let few = PostmarkConfig {
            transactions: 3,
            ..PostmarkConfig::default()
        };
        let (counts, _) = run(&few);
        assert_eq!(counts.transactions, 3);
        let starving = PostmarkConfig {
            number: 20,
            transactions: 100,
            bias_create: Some(0),
            ..PostmarkConfig::default()
        };
        let abort = AtomicBool::new(false);
        let stop = Stop { abort: &abort };
        let mut instance = Instance::new(&starving, 42, Log::default());
        instance.create_files(&stop).unwrap();
        instance.run_transactions(&stop, None).unwrap();
        assert!(instance.ran_out_of_files());
        assert_eq!(instance.counts.deleted(), 20);
        assert!(instance.counts.transactions < 100);
    }

    /// Once all 2 × number slots are live, creates do nothing (no draw):
    /// with bias create 10 and N = 20, PostMark makes 40 files and stops.
    #[test]
    fn a_full_table_makes_creates_do_nothing() {
        let config = PostmarkConfig {
            number: 20,
            transactions: 100,
            subdirectories: 3,
            bias_create: Some(10),
            ..PostmarkConfig::default()
        };
        let (counts, _) = run(&config);
        assert_eq!(counts.created(), 40);
        assert_eq!(counts.of(Op::Read), 52);
        assert_eq!(counts.of(Op::Append), 48);
    }
}

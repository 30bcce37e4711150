//! The PostMark workload (J. Katcher, NetApp TR-3022; version 1.53): a
//! pool of small files is created, then transactions each read or append
//! to a file and create or delete one, then the rest is deleted, the
//! small-file traffic of a mail or news server. fsbench re-implements
//! PostMark's random numbers, draw order, file table, names, sizes and
//! system calls, so a configuration and seed give exactly the operations
//! the original performs, and times them with monotonic ns clocks.
mod engine;
mod files;
mod logged;
mod pool;
pub mod rng;
mod run;
mod stdio;
mod summary;
mod workload;

use serde::Serialize;

use crate::workload::synclog::{LogVolume, decimal_digits};

pub use engine::{Counts, Op};
pub use run::{LocationDir, LogPlan, run};
pub use summary::{RunSummary, Timing};
pub use workload::Postmark;

/// PostMark's file sizes are C `int`s; seeds and counts too.
pub const MAX_INT: u32 = i32::MAX as u32;

/// One `set location` entry: files go there in proportion to `weight`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Location {
    pub path: String,
    pub weight: u32,
}

/// Everything PostMark's `set` commands decide (plus `threads`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PostmarkConfig {
    /// `set size`: sizes are drawn from `size_low..size_high` (the high
    /// bound itself only by appends), or are `size_low` when both are equal.
    pub size_low: u32,
    pub size_high: u32,
    /// `set number`: files in the initial pool (the table holds twice that).
    pub number: u32,
    pub seed: u32,
    pub transactions: u32,
    /// `set location`; empty means the current directory.
    pub locations: Vec<Location>,
    /// `set subdirectories`: `s0`..`sN-1` under each location (1 is like 0).
    pub subdirectories: u32,
    /// `set read`/`set write`: bytes per `fread`/`fwrite` (or syscall when
    /// unbuffered).
    pub read_block: u32,
    pub write_block: u32,
    /// `set buffering`: stdio (true) or raw system calls.
    pub buffered: bool,
    /// `set bias read`: chance in tenths of a read (else an append); None
    /// (PostMark's -1) skips that half of each transaction.
    pub bias_read: Option<u32>,
    /// `set bias create`: chance in tenths of a create (else a delete).
    pub bias_create: Option<u32>,
    /// `set threads` (fsbench): independent instances run side by side.
    pub threads: u32,
}

impl Default for PostmarkConfig {
    /// PostMark's defaults.
    fn default() -> Self {
        PostmarkConfig {
            size_low: 500,
            size_high: 10_000,
            number: 500,
            seed: 42,
            transactions: 500,
            locations: Vec::new(),
            subdirectories: 0,
            read_block: 512,
            write_block: 512,
            buffered: true,
            bias_read: Some(5),
            bias_create: Some(5),
            threads: 1,
        }
    }
}

impl PostmarkConfig {
    /// The seed of instance `k` of `set threads`: seed + k, kept within
    /// PostMark's positive `int` range (instance 0 is the plain PostMark
    /// run).
    pub fn instance_seed(&self, instance: u32) -> u32 {
        let offset = (u64::from(self.seed) - 1 + u64::from(instance)) % u64::from(MAX_INT);
        offset as u32 + 1
    }

    /// Location `index`'s part of the files (all of them with one or none).
    fn share(&self, index: usize) -> f64 {
        let total: u64 = self.locations.iter().map(|l| u64::from(l.weight)).sum();
        match self.locations.get(index) {
            Some(location) if total > 0 => f64::from(location.weight) / total as f64,
            _ => 1.0,
        }
    }

    /// The space location `index` needs: its share of `number` files of
    /// the largest size in 4 KiB blocks, for every instance. This is the
    /// pool's usual peak; a run that grows past it can still fill the file
    /// system, which stops it cleanly.
    pub fn planned_bytes(&self, index: usize) -> u64 {
        let per_file = u64::from(self.size_high).next_multiple_of(4096);
        let all = u64::from(self.threads) * u64::from(self.number) * per_file;
        (all as f64 * self.share(index)).ceil() as u64
    }

    /// Inodes location `index` needs at most: its share of the full table
    /// (2 × number), plus the directories.
    pub fn planned_files(&self, index: usize) -> u64 {
        let threads = u64::from(self.threads);
        let files = (threads as f64 * 2.0 * f64::from(self.number) * self.share(index)).ceil();
        files as u64 + threads * (u64::from(self.subdirectories) + 1)
    }

    /// How much a run's sync log holds: a record per create and delete
    /// (each instance creates its pool and at most one file per
    /// transaction, and deletes no more than it created), each naming the
    /// file as `[t<k>/][s<sub>/]<number>` (the instance with several, the
    /// subdirectory with two or more), files numbered from 1 in creation
    /// order.
    pub fn log_volume(&self) -> LogVolume {
        let created = u64::from(self.number) + u64::from(self.transactions);
        // `t<k>/` or `s<sub>/` with the highest index, when there are several.
        let dir = |count: u32| match count {
            0 | 1 => 0,
            _ => "t/".len() + decimal_digits(u64::from(count - 1)),
        };
        LogVolume {
            records: 2 * created * u64::from(self.threads),
            longest_name: dir(self.threads) + dir(self.subdirectories) + decimal_digits(created),
        }
    }

    /// Memory the instances hold: content buffers and file tables.
    /// Refuses a table and content buffer that would not fit in half of
    /// RAM (PostMark would just fail to allocate, or swap).
    pub fn check_memory(&self, ram_bytes: u64) -> anyhow::Result<()> {
        let needed = self.memory_bytes();
        if ram_bytes > 0 && needed > ram_bytes / 2 {
            return crate::error::usage(format!(
                "set number {} / set size {}: the run needs {} of memory; RAM is {}",
                self.number,
                self.size_high,
                crate::size::format_bytes(needed),
                crate::size::format_bytes(ram_bytes)
            ));
        }
        Ok(())
    }

    pub fn memory_bytes(&self) -> u64 {
        let table = 2 * u64::from(self.number) * std::mem::size_of::<pool::FileSlot>() as u64;
        u64::from(self.threads) * (u64::from(self.size_high) + table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_seeds_count_up_and_stay_positive() {
        let config = PostmarkConfig::default();
        assert_eq!(config.instance_seed(0), 42);
        assert_eq!(config.instance_seed(3), 45);
        let top = PostmarkConfig {
            seed: MAX_INT,
            ..config
        };
        assert_eq!(top.instance_seed(0), MAX_INT);
        assert_eq!(top.instance_seed(1), 1);
    }

    #[test]
    fn plans_split_by_weight() {
        let config = PostmarkConfig {
            number: 1000,
            size_high: 5000,
            locations: vec![
                Location {
                    path: "a".into(),
                    weight: 3,
                },
                Location {
                    path: "b".into(),
                    weight: 1,
                },
            ],
            ..PostmarkConfig::default()
        };
        assert_eq!(config.planned_bytes(0), 750 * 8192);
        assert_eq!(config.planned_bytes(1), 250 * 8192);
        assert_eq!(config.planned_files(1), 500 + 1);
    }

    #[test]
    fn the_longest_logged_name_has_every_prefix_and_the_last_number() {
        let config = PostmarkConfig {
            number: 900,
            transactions: 100,
            subdirectories: 12,
            threads: 3,
            ..PostmarkConfig::default()
        };
        assert_eq!("t2/s11/1000".len(), config.log_volume().longest_name);
        let alone = PostmarkConfig {
            subdirectories: 1,
            threads: 1,
            ..config
        };
        assert_eq!("1000".len(), alone.log_volume().longest_name);
    }
}

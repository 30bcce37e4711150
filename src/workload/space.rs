//! Space on disk per logical byte: how much a file system's used bytes
//! and inodes grew while a workload laid a dataset down, read with
//! `fstatvfs` on the scratch directory before and after.
//!
//! A reading taken right after writing would miss what the file system has
//! not allocated yet (delayed allocation, compression, ZFS's open
//! transaction group): the after reading is taken once the data is synced
//! (`syncfs`), always outside the timed window. Under MPI every rank writes
//! on the one shared file system, so every reading is taken in step (all
//! ranks synced first): rank 0's growth is then the growth of the whole
//! job (`AcrossRanks::FileSystemGrowth`).
use std::os::fd::BorrowedFd;

use serde::Serialize;

use crate::measure::phase::Measured;
use crate::result::{AcrossRanks, Direction, INODES_UNIT, Metric, SPACE_UNIT};

/// What a file system uses: `(f_blocks - f_bfree) × f_frsize` bytes and
/// `f_files - f_ffree` inodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Used {
    pub bytes: u64,
    pub inodes: u64,
}

impl Used {
    /// The file system of `dir` as it is now (no sync).
    pub fn of(dir: BorrowedFd<'_>) -> rustix::io::Result<Used> {
        let vfs = rustix::fs::fstatvfs(dir)?;
        Ok(Used::from_counts(
            vfs.f_blocks,
            vfs.f_bfree,
            vfs.f_frsize,
            vfs.f_files,
            vfs.f_ffree,
        ))
    }

    /// `statvfs`'s counts as what is used; a free count above the total
    /// (which some file systems report for inodes) counts as none used.
    pub fn from_counts(blocks: u64, bfree: u64, frsize: u64, files: u64, ffree: u64) -> Used {
        Used {
            bytes: blocks.saturating_sub(bfree).saturating_mul(frsize),
            inodes: files.saturating_sub(ffree),
        }
    }

    /// The file system of `dir` once what was written is on it: `syncfs`,
    /// then (under MPI) every rank in step before and after the reading,
    /// so that no rank still writes or syncs while it is taken, nor goes
    /// on to remove or write anything before every rank has taken it.
    /// Never call it inside a timed window. Every rank must call it the
    /// same number of times; a failure to sync or read gives None, never
    /// an error, so the ranks stay in step.
    pub fn settled(dir: BorrowedFd<'_>) -> anyhow::Result<Option<Used>> {
        let synced = rustix::fs::syncfs(dir);
        crate::scale::agree(Ok(()))?;
        let reading = synced.and_then(|()| Used::of(dir)).ok();
        crate::scale::agree(Ok(()))?;
        Ok(reading)
    }
}

/// The readings around one operation, and what it laid down: the bytes of
/// file contents it wrote and the entries it made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Growth {
    pub before: Used,
    pub after: Used,
    pub logical_bytes: u64,
    pub entries: u64,
}

impl Growth {
    /// Bytes the file system grew by; None when it shrank (something else
    /// freed space meanwhile: no honest figure).
    pub fn disk_bytes(&self) -> Option<u64> {
        self.after.bytes.checked_sub(self.before.bytes)
    }

    pub fn inodes(&self) -> Option<u64> {
        self.after.inodes.checked_sub(self.before.inodes)
    }

    /// Bytes on disk per logical byte; None without logical bytes or when
    /// the file system shrank.
    pub fn space_per_byte(&self) -> Option<f64> {
        ratio(self.disk_bytes()?, self.logical_bytes)
    }

    /// Inodes used per entry made; None without entries, when the inode
    /// count shrank, or when the file system counts no inodes (btrfs
    /// reports 0 in total: the reading is 0 before and after).
    pub fn inodes_per_entry(&self) -> Option<f64> {
        if self.after.inodes == 0 {
            return None;
        }
        ratio(self.inodes()?, self.entries)
    }

    /// `<op>_space` (on-disk bytes per logical byte, lower is better; a
    /// headline: what a dataset costs on this file system is one of the
    /// things compared) and `<op>_inodes_per_entry` (a detail), over the
    /// operation's phase. They carry no flags: the readings are taken
    /// after a sync, so neither a short phase nor a cached write makes
    /// them less true. Combined over MPI ranks as the growth of the one
    /// shared file system.
    pub fn metrics(&self, op: &str, measured: &Measured) -> Vec<Metric> {
        let mut out = Vec::new();
        let figure = |name: String, unit: &str, value: f64, samples: u64| Metric {
            flags: Vec::new(),
            ..measured
                .metric(name, unit, Direction::LowerIsBetter, value, samples)
                .with_across_ranks(AcrossRanks::FileSystemGrowth)
        };
        if let Some(space) = self.space_per_byte() {
            out.push(figure(
                format!("{op}_space"),
                SPACE_UNIT,
                space,
                self.logical_bytes,
            ));
        }
        if let Some(inodes) = self.inodes_per_entry() {
            let name = format!("{op}_inodes_per_entry");
            out.push(figure(name, INODES_UNIT, inodes, self.entries).as_detail());
        }
        out
    }
}

/// `used / logical`, None for no logical amount (never NaN or infinite).
fn ratio(used: u64, logical: u64) -> Option<f64> {
    (logical > 0).then(|| used as f64 / logical as f64)
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsFd;
    use std::time::{Duration, Instant};

    use super::*;
    use crate::measure::PhaseTiming;

    fn used(bytes: u64, inodes: u64) -> Used {
        Used { bytes, inodes }
    }

    fn growth(before: Used, after: Used, logical_bytes: u64, entries: u64) -> Growth {
        Growth {
            before,
            after,
            logical_bytes,
            entries,
        }
    }

    fn measured() -> Measured {
        // Short enough to flag any other metric as too short.
        let timing = PhaseTiming::new(Instant::now(), Duration::from_millis(10), Duration::ZERO);
        Measured::over(&timing).left_dirty_under(Some(1), Some(1 << 30))
    }

    #[test]
    fn used_is_blocks_minus_free_times_fragment_size() {
        let used = Used::from_counts(1000, 250, 4096, 500, 480);
        assert_eq!(
            used,
            Used {
                bytes: 750 * 4096,
                inodes: 20
            }
        );
        // More free than total (never negative): nothing used.
        assert_eq!(
            Used::from_counts(10, 20, 4096, 0, 5),
            Used {
                bytes: 0,
                inodes: 0
            }
        );
    }

    #[test]
    fn space_per_byte_is_the_growth_over_the_logical_bytes() {
        // 1000 files of 100 bytes, a 4 KiB block each: 40.96 on disk per byte.
        let g = growth(
            used(1 << 20, 10),
            used((1 << 20) + 1000 * 4096, 1010),
            100_000,
            1000,
        );
        assert_eq!(g.space_per_byte(), Some(40.96));
        assert_eq!(g.inodes_per_entry(), Some(1.0));
        let metrics = g.metrics("copy", &measured());
        let names: Vec<&str> = metrics.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["copy_space", "copy_inodes_per_entry"]);
        let space = &metrics[0];
        assert_eq!((space.value, space.unit.as_str()), (40.96, SPACE_UNIT));
        assert_eq!(space.direction, Direction::LowerIsBetter);
        assert_eq!(space.samples, 100_000);
        assert!(!space.detail && metrics[1].detail);
        assert_eq!(space.across_ranks, AcrossRanks::FileSystemGrowth);
        assert!(space.flags.is_empty(), "{:?}", space.flags);
        assert!(space.phase.is_some(), "the MPI aggregate finds its span");
    }

    #[test]
    fn no_logical_bytes_or_entries_give_no_metric_never_nan() {
        let g = growth(used(0, 0), used(4096, 1), 0, 0);
        assert_eq!((g.space_per_byte(), g.inodes_per_entry()), (None, None));
        assert!(g.metrics("concat", &measured()).is_empty());
        // Nothing grew: a true zero, not a missing figure.
        let still = growth(used(8192, 3), used(8192, 3), 10, 1);
        assert_eq!(still.space_per_byte(), Some(0.0));
        for m in still.metrics("copy", &measured()) {
            assert!(m.value.is_finite());
        }
    }

    #[test]
    fn a_file_system_that_shrank_gives_no_figure() {
        let g = growth(used(1 << 20, 100), used(1 << 19, 50), 4096, 1);
        assert_eq!((g.disk_bytes(), g.inodes()), (None, None));
        assert!(g.metrics("copy", &measured()).is_empty());
    }

    #[test]
    fn a_file_system_without_inode_counts_gives_no_inode_figure() {
        let g = growth(used(0, 0), used(4096, 0), 4096, 1);
        assert_eq!(g.inodes_per_entry(), None);
        let names: Vec<String> = g
            .metrics("copy", &measured())
            .into_iter()
            .map(|m| m.name)
            .collect();
        assert_eq!(names, ["copy_space"]);
    }

    #[test]
    fn a_settled_reading_of_a_real_directory() {
        let dir = tempfile::tempdir().unwrap();
        let fd = rustix::fs::open(
            dir.path(),
            rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::RDONLY,
            rustix::fs::Mode::empty(),
        )
        .unwrap();
        let settled = Used::settled(fd.as_fd()).unwrap().expect("readable");
        assert!(settled.bytes > 0);
    }
}

//! The tree operations that walk a tree: find (walk, as `find DIR`), stat
//! (walk + lstat of every entry, as `du`), read (every
//! file, as `find | xargs cat`), concat (every file appended to one), copy
//! (rsync -a / cp -a: data, modes, times, owners as root, xattrs when
//! supported), delete (rm -rf), and the description of a user's tree.
//!
//! Here: what they share (the tally, the data pump) and the operations that
//! only read; copying and deleting are modules of their own.
mod copy;
mod delete;

use std::ffi::CStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::Instant;

use anyhow::Context;
use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use super::dataset::Description;
use super::parallel::{self, Parallel};
use super::walk::{Kind, Visited, Visitor, walk};
use crate::measure::LatencyRecorder;
pub use copy::{Copied, copy_tree};
pub use delete::{delete_logged, delete_tree};

/// What an operation did: entries handled, bytes moved, per-entry latency.
#[derive(Default)]
pub struct Tally {
    pub entries: u64,
    pub bytes: u64,
    pub latency: LatencyRecorder,
}

impl Tally {
    fn merge(&mut self, other: &Tally) {
        self.entries += other.entries;
        self.bytes += other.bytes;
        self.latency.merge(&other.latency);
    }

    /// Counts one entry of `bytes`, timed from `start`; returns when it
    /// ended, which starts the next entry of a loop (one clock read each).
    pub(super) fn add(&mut self, bytes: u64, start: Instant) -> Instant {
        self.entries += 1;
        self.bytes += bytes;
        self.latency.record_since(start)
    }
}

/// Read buffer: large enough for few system calls, small enough to stay in
/// the CPU cache.
const BUF_BYTES: usize = 256 << 10;

/// Moves file data through a user-space buffer, as rsync does.
/// `copy_file_range` would be faster on some file systems, but on XFS and
/// btrfs it shares extents (a reflink) instead of copying: the copy would
/// time metadata, not the data the seeds' rsync moved.
pub struct Pump {
    /// Allocated by the first pump: a thread of `-j 1024` that never
    /// reads a file holds none.
    buf: Vec<u8>,
    block: usize,
}

impl Default for Pump {
    fn default() -> Self {
        Pump::with_block(BUF_BYTES)
    }
}

impl Pump {
    /// A pump that reads at most `block` bytes at a time.
    pub fn with_block(block: usize) -> Self {
        Pump {
            buf: Vec::new(),
            block: block.max(1),
        }
    }

    /// Reads `src` to its end; returns the bytes read.
    pub fn drain(&mut self, src: BorrowedFd<'_>) -> anyhow::Result<u64> {
        self.pump(src, None, |_| {})
    }

    /// `drain`, calling `each` with the length of every block read.
    pub fn drain_blocks(
        &mut self,
        src: BorrowedFd<'_>,
        each: impl FnMut(u64),
    ) -> anyhow::Result<u64> {
        self.pump(src, None, each)
    }

    /// Copies `src` from its offset to its end into `dst` at its offset.
    pub fn copy(&mut self, src: BorrowedFd<'_>, dst: BorrowedFd<'_>) -> anyhow::Result<u64> {
        self.pump(src, Some(dst), |_| {})
    }

    fn pump(
        &mut self,
        src: BorrowedFd<'_>,
        dst: Option<BorrowedFd<'_>>,
        mut each: impl FnMut(u64),
    ) -> anyhow::Result<u64> {
        if self.buf.is_empty() {
            self.buf = vec![0; self.block];
        }
        let mut total = 0;
        loop {
            let n = match rustix::io::read(src, &mut self.buf) {
                Ok(0) => return Ok(total),
                Ok(n) => n,
                Err(Errno::INTR) => continue,
                Err(e) => return Err(e).context("read failed"),
            };
            if let Some(dst) = dst {
                crate::io::write_all(dst, &self.buf[..n])?;
            }
            total += n as u64;
            each(n as u64);
        }
    }
}

fn open_read(parent: BorrowedFd<'_>, name: &CStr) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(
        parent,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// `find DIR`: lists every directory and counts every entry, statting
/// none the listing gives a type for (the walk stats the others, as GNU
/// and BSD find do to know what to descend into). No per-entry latency:
/// an entry costs no system call of its own.
#[derive(Default)]
pub struct Find {
    pub tally: Tally,
}

impl Visitor for Find {
    fn leaf(&mut self, _entry: &Visited<'_>) -> anyhow::Result<()> {
        self.tally.entries += 1;
        Ok(())
    }

    fn enter(&mut self, _entry: &Visited<'_>, _dir: BorrowedFd<'_>) -> anyhow::Result<()> {
        self.tally.entries += 1;
        Ok(())
    }
}

/// The walk with an lstat of every entry, as `du`, `find -ls` and
/// rsync's scan of a tree do; its latency is per lstat.
#[derive(Default)]
pub struct StatAll {
    pub tally: Tally,
}

impl StatAll {
    fn stat(&mut self, entry: &Visited<'_>) -> anyhow::Result<()> {
        let start = Instant::now();
        rustix::fs::statat(entry.parent, entry.name, AtFlags::SYMLINK_NOFOLLOW)
            .with_context(|| format!("cannot stat {}", entry.rel))?;
        self.tally.add(0, start);
        Ok(())
    }
}

impl Visitor for StatAll {
    fn leaf(&mut self, entry: &Visited<'_>) -> anyhow::Result<()> {
        self.stat(entry)
    }

    fn enter(&mut self, entry: &Visited<'_>, _dir: BorrowedFd<'_>) -> anyhow::Result<()> {
        self.stat(entry)
    }
}

/// Reads every regular file to its end; with `out`, appends each to it
/// (seed 003's batch concatenation).
pub struct Read<'o> {
    pub tally: Tally,
    pump: Pump,
    out: Option<BorrowedFd<'o>>,
}

impl<'o> Read<'o> {
    pub fn new(out: Option<BorrowedFd<'o>>) -> Self {
        Read {
            tally: Tally::default(),
            pump: Pump::default(),
            out,
        }
    }
}

impl Visitor for Read<'_> {
    fn leaf(&mut self, entry: &Visited<'_>) -> anyhow::Result<()> {
        if entry.kind != Kind::File {
            return Ok(());
        }
        let start = Instant::now();
        let mut read = || -> anyhow::Result<u64> {
            let file = open_read(entry.parent, entry.name)?;
            match self.out {
                Some(out) => self.pump.copy(file.as_fd(), out),
                None => self.pump.drain(file.as_fd()),
            }
        };
        let bytes = read().with_context(|| format!("cannot read {}", entry.rel))?;
        self.tally.add(bytes, start);
        Ok(())
    }
}

/// Counts what a user's tree holds (for `--source`), without opening files.
#[derive(Default)]
pub struct Describe {
    pub description: Description,
}

impl Visitor for Describe {
    fn leaf(&mut self, entry: &Visited<'_>) -> anyhow::Result<()> {
        match entry.kind {
            Kind::File => {
                let stat = rustix::fs::statat(entry.parent, entry.name, AtFlags::SYMLINK_NOFOLLOW)
                    .with_context(|| format!("cannot stat {}", entry.rel))?;
                self.description.add_file(entry.rel, stat.st_size as u64);
            }
            _ => self.description.add_other(entry.rel),
        }
        Ok(())
    }

    fn enter(&mut self, entry: &Visited<'_>, _dir: BorrowedFd<'_>) -> anyhow::Result<()> {
        self.description.add_dir(entry.rel);
        Ok(())
    }
}

/// The process's umask, read without changing it (`Umask:` in
/// /proc/self/status); 0o022 when unknown.
pub(super) fn current_umask() -> u32 {
    crate::kernel_file::read_text("/proc/self/status", crate::kernel_file::TABLE)
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("Umask:"))?;
            u32::from_str_radix(line["Umask:".len()..].trim(), 8).ok()
        })
        .unwrap_or(0o022)
}

impl Parallel for Find {}
impl Parallel for StatAll {}
impl Parallel for Read<'_> {}

/// Walks `root` with one `make()` visitor, or with `threads` of them in
/// parallel; returns the merged tally.
pub fn tally_walk<V: Parallel>(
    root: BorrowedFd<'_>,
    threads: usize,
    make: impl Fn() -> V,
    tally: impl Fn(&V) -> &Tally,
) -> anyhow::Result<Tally> {
    let visitors = match threads {
        0 | 1 => {
            let mut visitor = make();
            walk(root, &mut visitor)?;
            vec![visitor]
        }
        n => parallel::walk(root, (0..n).map(|_| make()).collect())?,
    };
    let mut total = Tally::default();
    for visitor in &visitors {
        total.merge(tally(visitor));
    }
    Ok(total)
}

//! The data tests ("Sequential Output / Input", "Random Seeks") on one file
//! `Bonnie.<pid>` in the scratch directory. Each timer starts after the
//! file is open and stops after its fsync + close, as in bonnie++ 1.96+.
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::Context;
use crossbeam_utils::CachePadded;
use rustix::fs::{Mode, OFlags, SeekFrom};

use super::rng::RandomSource;
use super::{BonnieConfig, MIB, Outcome, Test, announce};
use crate::interrupt;
use crate::io::{AlignedBuf, read_exact, write_all};
use crate::measure::{LatencyRecorder, PhaseClock, each_timed_reporting};
use crate::storage::just_closed;
use crate::workload::threads::{StartLine, spawn_all};
use crate::workload::{Progress, RunContext};

/// Every `UPDATE_EVERY`-th random value marks a seek that also rewrites.
const UPDATE_EVERY: u32 = 10;

struct DataFile<'a> {
    dir: BorrowedFd<'a>,
    name: String,
    config: &'a BonnieConfig,
    /// Where a pass shows how much of the file it has done.
    progress: &'a Progress,
}

impl DataFile<'_> {
    fn chunks(&self) -> u64 {
        self.config.file_size_mib * (MIB / self.config.chunk as u64)
    }

    fn char_bytes(&self) -> u64 {
        self.config.byte_io_mib.min(self.config.file_size_mib) * MIB
    }

    fn char_chunks(&self) -> u64 {
        self.char_bytes() / self.config.chunk as u64
    }

    /// Times `chunks` calls of `step` (one latency sample each), then fsync +
    /// close, inside the measurement. Each call moves one chunk of data;
    /// the progress bar shows how many bytes are done, between samples (a
    /// compare per chunk when nothing is to be shown; a redraw is in the
    /// phase's time but in no chunk's latency).
    fn timed_pass(
        &self,
        test: Test,
        fd: OwnedFd,
        chunks: u64,
        mut step: impl FnMut(BorrowedFd<'_>, u64) -> anyhow::Result<()>,
    ) -> anyhow::Result<Outcome> {
        let mut latency = LatencyRecorder::new();
        let chunk = self.config.chunk as u64;
        let total = chunks * chunk;
        let clock = PhaseClock::start();
        each_timed_reporting(
            0..chunks,
            &mut latency,
            |i| step(fd.as_fd(), i),
            |done| self.progress.advance_phase(done * chunk, total),
        )?;
        self.sync_and_close(fd)?;
        Ok(Outcome::new(
            test,
            clock.stop(),
            chunks * self.config.chunk as u64,
            &latency,
        ))
    }

    fn direct_flag(&self) -> OFlags {
        if self.config.direct {
            OFlags::DIRECT
        } else {
            OFlags::empty()
        }
    }

    /// Creates the file afresh (bonnie++: unlink, then O_EXCL).
    fn create(&self, flags: OFlags) -> anyhow::Result<OwnedFd> {
        self.remove()?;
        rustix::fs::openat(
            self.dir,
            self.name.as_str(),
            OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC | flags,
            Mode::from_raw_mode(0o600),
        )
        .with_context(|| format!("cannot create {}", self.name))
    }

    fn open(&self, flags: OFlags) -> anyhow::Result<OwnedFd> {
        rustix::fs::openat(
            self.dir,
            self.name.as_str(),
            OFlags::RDWR | OFlags::CLOEXEC | flags,
            Mode::empty(),
        )
        .with_context(|| format!("cannot open {}", self.name))
    }

    fn remove(&self) -> anyhow::Result<()> {
        match just_closed::unlink(self.dir, self.name.as_str()) {
            Ok(()) => Ok(()),
            Err(refused) if refused.errno == rustix::io::Errno::NOENT => Ok(()),
            Err(e) => Err(e).with_context(|| format!("cannot remove {}", self.name)),
        }
    }

    /// bonnie++ 1.96+ closes every test file with fsync + close, inside the
    /// measured time, so write tests include getting the data to stable storage.
    fn sync_and_close(&self, fd: OwnedFd) -> anyhow::Result<()> {
        rustix::fs::fsync(&fd).with_context(|| format!("fsync of {} failed", self.name))?;
        drop(fd);
        Ok(())
    }

    fn after_write(&self, fd: BorrowedFd<'_>) -> anyhow::Result<()> {
        if self.config.fsync_every_write {
            rustix::fs::fsync(fd).with_context(|| format!("fsync of {} failed", self.name))?;
        }
        Ok(())
    }
}

pub(super) fn run_all(
    config: &BonnieConfig,
    ctx: &RunContext<'_>,
    random: &mut RandomSource,
    outcomes: &mut Vec<Outcome>,
    notes: &mut Vec<String>,
) -> anyhow::Result<()> {
    // Every block phase opens with O_DIRECT under -D, so any of them may
    // be the one the file system refuses.
    run_phases(config, ctx, random, outcomes, notes).map_err(|e| explain_direct_io(e, config))
}

fn run_phases(
    config: &BonnieConfig,
    ctx: &RunContext<'_>,
    random: &mut RandomSource,
    outcomes: &mut Vec<Outcome>,
    notes: &mut Vec<String>,
) -> anyhow::Result<()> {
    let file = DataFile {
        dir: ctx.scratch.dir(),
        name: format!("Bonnie.{}", std::process::id()),
        config,
        progress: ctx.progress,
    };
    let per_char = file.char_bytes() > 0;
    if per_char && config.direct {
        notes.push("per-char tests use the page cache: 1-byte writes cannot be O_DIRECT".into());
    }
    if per_char {
        announce(ctx, Test::PutChar, outcomes, || put_char(&file))?;
    }
    announce(ctx, Test::PutBlock, outcomes, || put_block(&file))?;
    announce(ctx, Test::Rewrite, outcomes, || rewrite(&file))?;
    if per_char {
        announce(ctx, Test::GetChar, outcomes, || get_char(&file))?;
    }
    announce(ctx, Test::GetBlock, outcomes, || get_block(&file))?;
    announce(ctx, Test::Seeks, outcomes, || seeks(&file, random))?;
    file.remove()
}

/// EINVAL under `-D` almost always means the file system refuses O_DIRECT
/// or the chunk is not a multiple of the device's logical block size.
fn explain_direct_io(err: anyhow::Error, config: &BonnieConfig) -> anyhow::Error {
    let einval = err
        .chain()
        .any(|c| c.downcast_ref::<rustix::io::Errno>() == Some(&rustix::io::Errno::INVAL));
    if config.direct && einval {
        err.context(format!(
            "-D: O_DIRECT refused; the file system may not support it, or the chunk ({} bytes) is not a multiple of its block size",
            config.chunk
        ))
    } else {
        err
    }
}

/// One `write()` per byte, the 0..127 pattern, over the first `-f` MiB.
/// Latency samples are per chunk of bytes, as in bonnie++.
fn put_char(file: &DataFile<'_>) -> anyhow::Result<Outcome> {
    let fd = file.create(OFlags::empty())?;
    let chunk = file.config.chunk;
    file.timed_pass(Test::PutChar, fd, file.char_chunks(), |fd, _| {
        for i in 0..chunk {
            write_all(fd, &[(i & 0x7f) as u8]).context("per-char write failed")?;
        }
        Ok(())
    })
}

/// Whole chunks; one byte changes between chunks so no two are equal.
fn put_block(file: &DataFile<'_>) -> anyhow::Result<Outcome> {
    let fd = file.create(file.direct_flag())?;
    let mut buf = AlignedBuf::new(file.config.chunk);
    file.timed_pass(Test::PutBlock, fd, file.chunks(), |fd, i| {
        bump_byte(&mut buf, i);
        write_all(fd, &buf).with_context(|| format!("cannot write block {i}"))?;
        file.after_write(fd)
    })
}

/// Read a chunk, dirty one byte, seek back, write it: read + lseek + write.
fn rewrite(file: &DataFile<'_>) -> anyhow::Result<Outcome> {
    let fd = file.open(file.direct_flag())?;
    let mut buf = AlignedBuf::new(file.config.chunk);
    let back = -(file.config.chunk as i64);
    file.timed_pass(Test::Rewrite, fd, file.chunks(), |fd, i| {
        read_exact(fd, &mut buf).with_context(|| format!("cannot read block {i}"))?;
        bump_byte(&mut buf, i);
        rustix::fs::seek(fd, SeekFrom::Current(back)).context("lseek failed")?;
        write_all(fd, &buf).with_context(|| format!("cannot rewrite block {i}"))?;
        file.after_write(fd)
    })
}

/// Changes the byte at `i % len`, so successive chunks differ.
fn bump_byte(buf: &mut [u8], i: u64) {
    let at = i as usize % buf.len();
    buf[at] = buf[at].wrapping_add(1);
}

/// One `read()` per byte over the first `-f` MiB.
fn get_char(file: &DataFile<'_>) -> anyhow::Result<Outcome> {
    let fd = file.open(OFlags::empty())?;
    let chunk = file.config.chunk;
    let mut histogram = [0u64; 256];
    let outcome = file.timed_pass(Test::GetChar, fd, file.char_chunks(), |fd, _| {
        for _ in 0..chunk {
            let mut byte = [0u8; 1];
            read_exact(fd, &mut byte).context("per-char read failed")?;
            // Use every byte, so the loop is real work (bonnie++ does the same).
            histogram[byte[0] as usize] += 1;
        }
        Ok(())
    });
    std::hint::black_box(histogram);
    outcome
}

fn get_block(file: &DataFile<'_>) -> anyhow::Result<Outcome> {
    let fd = file.open(file.direct_flag())?;
    let mut buf = AlignedBuf::new(file.config.chunk);
    file.timed_pass(Test::GetBlock, fd, file.chunks(), |fd, i| {
        read_exact(fd, &mut buf).with_context(|| format!("cannot read block {i}"))
    })
}

/// A seek "ticket": the chunk to read, and whether to rewrite it too.
#[derive(Clone, Copy)]
struct Ticket {
    chunk: u64,
    update: bool,
}

/// bonnie++'s tickets: `rand()` values; one divisible by 10 also rewrites.
fn seek_tickets(count: u64, chunks: u64, random: &mut RandomSource) -> Vec<Ticket> {
    (0..count)
        .map(|_| {
            let value = random.next_value();
            Ticket {
                chunk: u64::from(value) % chunks,
                update: value.is_multiple_of(UPDATE_EVERY),
            }
        })
        .collect()
}

/// `seekers` threads share one queue of tickets; the phase runs from their
/// common start to the last one's fsync + close.
fn seeks(file: &DataFile<'_>, random: &mut RandomSource) -> anyhow::Result<Outcome> {
    let tickets = seek_tickets(file.config.seeks, file.chunks(), random);
    // Taken by every seek of every thread: on a cache line of its own, not
    // beside the tickets' address and length that all of them read.
    let next = CachePadded::new(AtomicUsize::new(0));
    let seekers = file.config.seekers as usize;
    let start = StartLine::new(seekers);
    let fds = (0..seekers)
        .map(|_| file.open(file.direct_flag()))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let (timing, results) = std::thread::scope(|scope| {
        let workers = fds.into_iter().map(|fd| {
            let (tickets, next, start) = (&tickets, &*next, &start);
            move || {
                start.wait()?;
                seeker(file, fd, tickets, next)
            }
        });
        let handles = spawn_all(scope, "seeker", workers, || start.call_off())?;
        // The clock starts before the seekers are released, so no seek
        // happens outside the measured time.
        let clock = PhaseClock::start();
        start.go();
        let results: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().expect("seeker thread panicked"))
            .collect();
        anyhow::Ok((clock.stop(), results))
    })?;
    let mut latency = LatencyRecorder::new();
    for result in results {
        latency.merge(&result?);
    }
    Ok(Outcome::new(
        Test::Seeks,
        timing,
        tickets.len() as u64,
        &latency,
    ))
}

fn seeker(
    file: &DataFile<'_>,
    fd: OwnedFd,
    tickets: &[Ticket],
    next: &AtomicUsize,
) -> anyhow::Result<LatencyRecorder> {
    let chunk = file.config.chunk;
    let mut buf = AlignedBuf::new(chunk);
    let mut latency = LatencyRecorder::new();
    loop {
        interrupt::check()?;
        let Some(ticket) = tickets.get(next.fetch_add(1, Ordering::Relaxed)) else {
            break;
        };
        let began = Instant::now();
        let offset = ticket.chunk * chunk as u64;
        rustix::fs::seek(&fd, SeekFrom::Start(offset)).context("lseek failed")?;
        read_exact(fd.as_fd(), &mut buf)
            .with_context(|| format!("cannot read block {}", ticket.chunk))?;
        if ticket.update {
            let at = ticket.chunk as usize % chunk;
            buf[at] = buf[at].wrapping_sub(1);
            rustix::fs::seek(&fd, SeekFrom::Start(offset)).context("lseek failed")?;
            write_all(fd.as_fd(), &buf)
                .with_context(|| format!("cannot rewrite block {}", ticket.chunk))?;
            file.after_write(fd.as_fd())?;
        }
        latency.record_since(began);
    }
    file.sync_and_close(fd)?;
    Ok(latency)
}

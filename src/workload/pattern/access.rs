//! Which I/O comes next, drawn as vdbench draws it: per I/O a direction
//! (read %), a transfer size, and random-or-sequential (seek %). One
//! sequential position is shared by reads and writes and by all threads of
//! a job; a random I/O lands on a uniform xfersize-aligned block (with
//! replacement) and the sequential position continues right after it. A
//! random-only job leaves the position alone: its threads share nothing
//! per I/O. A job from a fio job file draws as fio does instead
//! (`super::fio`), one sequence for the whole job.
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_utils::CachePadded;
use serde::Serialize;

use super::chance::Chance;
use super::fio::Draws;
use super::job::{Job, Seek, XferSize};
use crate::rng::{Random, WyRand};

/// One I/O: a read or write of `len` bytes at `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    pub write: bool,
    pub offset: u64,
    pub len: u64,
}

/// The job's shared sequential position over `0..high`.
pub struct Stream {
    /// On a cache line of its own: every sequential I/O of every thread
    /// writes it, and what the threads only read (the file, the job)
    /// must not be invalidated with it.
    cursor: CachePadded<AtomicU64>,
    /// The file size rounded down to the largest transfer size (vdbench).
    high: u64,
    /// `seekpct=eof`: no wrap; the job ends at the end.
    stop_at_end: bool,
    /// A fio job's draws, on the file it runs on: one sequence, which
    /// every thread takes its next I/O from (a fio job is one thread;
    /// the sync engine standing in for its io_uring has several).
    fio: Option<Mutex<Draws>>,
}

impl Stream {
    pub fn new(job: &Job, file_size: u64) -> Stream {
        let largest = job.xfer.largest();
        Stream {
            cursor: CachePadded::new(AtomicU64::new(0)),
            high: file_size / largest * largest,
            stop_at_end: job.seek == Seek::Eof,
            fio: job.fio.as_ref().map(|fio| Mutex::new(Draws::new(fio))),
        }
    }

    /// Claims the next `len` bytes (shortened at the end of the range):
    /// (offset, length, wrapped). None once an eof job has reached the end.
    #[inline]
    fn claim(&self, len: u64) -> Option<(u64, u64, bool)> {
        let mut current = self.cursor.load(Ordering::Relaxed);
        loop {
            let wrapped = current >= self.high;
            if wrapped && self.stop_at_end {
                return None;
            }
            let start = if wrapped { 0 } else { current };
            let take = len.min(self.high - start);
            match self.cursor.compare_exchange_weak(
                current,
                start + take,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some((start, take, wrapped)),
                Err(now) => current = now,
            }
        }
    }

    /// After a random I/O, the next sequential one continues from its end.
    #[inline]
    fn continue_after(&self, end: u64) {
        self.cursor.store(end, Ordering::Relaxed);
    }
}

/// What the picker decided, counted per thread and added up per job, so
/// the observed mix can be checked against the parameters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Decisions {
    pub reads: u64,
    pub writes: u64,
    pub sequential: u64,
    pub random: u64,
    /// Sequential I/Os that started over at the beginning of the file.
    pub wraps: u64,
}

impl Decisions {
    pub fn add(&mut self, other: &Decisions) {
        self.reads += other.reads;
        self.writes += other.writes;
        self.sequential += other.sequential;
        self.random += other.random;
        self.wraps += other.wraps;
    }
}

/// Transfer sizes with their cumulative chances, and how many blocks of
/// each size fit in the range.
struct Sizes {
    sizes: Vec<u64>,
    /// Draw `i` is chosen when a uniform u64 is below `limits[i]`.
    limits: Vec<u64>,
    blocks: Vec<u64>,
}

impl Sizes {
    fn new(xfer: &XferSize, high: u64) -> Sizes {
        let pairs = match xfer {
            XferSize::Fixed(size) => vec![(*size, 100.0)],
            XferSize::Mix(pairs) => pairs.clone(),
        };
        let mut cumulative = 0.0;
        let limits = pairs
            .iter()
            .map(|(_, pct)| {
                cumulative += pct;
                if cumulative >= 100.0 - 1e-9 {
                    u64::MAX
                } else {
                    (cumulative / 100.0 * 2f64.powi(64)) as u64
                }
            })
            .collect();
        Sizes {
            sizes: pairs.iter().map(|(size, _)| *size).collect(),
            limits,
            blocks: pairs.iter().map(|(size, _)| high / size).collect(),
        }
    }

    #[inline]
    fn draw(&self, rng: &mut WyRand) -> usize {
        if self.sizes.len() == 1 {
            return 0;
        }
        let value = rng.next_u64();
        self.limits
            .iter()
            .position(|&limit| value < limit)
            .unwrap_or(self.sizes.len() - 1)
    }
}

/// One thread's draws.
pub struct Picker {
    rng: WyRand,
    read: Chance,
    random: Chance,
    sizes: Sizes,
    pub decisions: Decisions,
}

impl Picker {
    pub fn new(job: &Job, stream: &Stream, thread: u32) -> Picker {
        let seek_pct = match job.seek {
            Seek::Percent(pct) => pct,
            Seek::Eof => 0.0,
        };
        Picker {
            rng: WyRand::for_stream(job.seed, u64::from(thread)),
            read: Chance::percent(job.read_pct),
            random: Chance::percent(seek_pct),
            sizes: Sizes::new(&job.xfer, stream.high),
            decisions: Decisions::default(),
        }
    }

    /// The next I/O; None when an eof job has reached the end of the file,
    /// or a fio job has no more I/O on it.
    #[inline]
    pub fn next(&mut self, stream: &Stream) -> Option<Op> {
        if let Some(draws) = &stream.fio {
            return self.fio_next(draws);
        }
        let write = !self.read.draw(&mut self.rng);
        let which = self.sizes.draw(&mut self.rng);
        let size = self.sizes.sizes[which];
        let (offset, len) = if self.random.draw(&mut self.rng) {
            let offset = self.rng.below(self.sizes.blocks[which]) * size;
            // Only a job that also draws sequential I/O needs the shared
            // position moved: a store to it from every thread on every
            // I/O of a random-only job would bounce its cache line
            // between the cores (a third of the rate at 16 threads).
            if self.random != Chance::Always {
                stream.continue_after(offset + size);
            }
            self.decisions.random += 1;
            (offset, size)
        } else {
            let (offset, len, wrapped) = stream.claim(size)?;
            self.decisions.sequential += 1;
            self.decisions.wraps += u64::from(wrapped);
            (offset, len)
        };
        if write {
            self.decisions.writes += 1;
        } else {
            self.decisions.reads += 1;
        }
        Some(Op { write, offset, len })
    }

    /// A fio job's next I/O on the file the run serves, counted as drawn.
    fn fio_next(&mut self, draws: &Mutex<Draws>) -> Option<Op> {
        let drawn = draws
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .next_served()?;
        let d = &mut self.decisions;
        match drawn.random {
            true => d.random += 1,
            false => d.sequential += 1,
        }
        d.wraps += u64::from(drawn.wrapped);
        match drawn.op.write {
            true => d.writes += 1,
            false => d.reads += 1,
        }
        Some(drawn.op)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::pattern::job::tests::job;

    fn draw(job: &Job, file_size: u64, n: usize) -> (Vec<Op>, Decisions) {
        let stream = Stream::new(job, file_size);
        let mut picker = Picker::new(job, &stream, 0);
        let ops = (0..n).map_while(|_| picker.next(&stream)).collect();
        (ops, picker.decisions)
    }

    #[test]
    fn sequential_continues_across_reads_and_writes_and_wraps() {
        let mut j = job();
        j.seek = Seek::Percent(0.0);
        j.read_pct = 50.0;
        let (ops, d) = draw(&j, 16 << 10, 10);
        let offsets: Vec<u64> = ops.iter().map(|o| o.offset).collect();
        assert_eq!(
            offsets,
            [0, 4096, 8192, 12288, 0, 4096, 8192, 12288, 0, 4096]
        );
        assert_eq!(d.wraps, 2);
        assert_eq!(d.sequential, 10);
        assert!(ops.iter().any(|o| o.write) && ops.iter().any(|o| !o.write));
    }

    #[test]
    fn a_random_only_job_leaves_the_shared_position_alone() {
        let mut j = job();
        j.seek = Seek::Percent(100.0);
        let stream = Stream::new(&j, 1 << 20);
        let mut picker = Picker::new(&j, &stream, 0);
        for _ in 0..1000 {
            picker.next(&stream).unwrap();
        }
        assert_eq!(stream.cursor.load(Ordering::Relaxed), 0);
        j.seek = Seek::Percent(50.0);
        let mut picker = Picker::new(&j, &stream, 0);
        for _ in 0..1000 {
            picker.next(&stream).unwrap();
        }
        assert_ne!(stream.cursor.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn eof_makes_one_pass() {
        let mut j = job();
        j.seek = Seek::Eof;
        let (ops, _) = draw(&j, 64 << 10, 100);
        assert_eq!(ops.len(), 16);
    }

    #[test]
    fn random_blocks_are_aligned_in_range_and_followed_by_sequential() {
        let mut j = job();
        j.seek = Seek::Percent(50.0);
        let (ops, d) = draw(&j, 1 << 20, 20_000);
        assert!(
            ops.iter()
                .all(|o| o.offset % 4096 == 0 && o.offset + o.len <= 1 << 20)
        );
        let random_pct = 100.0 * d.random as f64 / 20_000.0;
        assert!((48.0..52.0).contains(&random_pct), "{random_pct}");
        // Every sequential I/O continues the previous I/O (random or not).
        let stream_ok = ops.windows(2).all(|w| {
            let next = (w[0].offset + w[0].len) % (1 << 20);
            w[1].offset == next || w[1].offset % 4096 == 0
        });
        assert!(stream_ok);
    }

    #[test]
    fn size_mix_and_read_share_follow_the_parameters() {
        let mut j = job();
        j.xfer = XferSize::Mix(vec![(4096, 25.0), (65536, 75.0)]);
        j.read_pct = 70.0;
        let (ops, d) = draw(&j, 1 << 24, 40_000);
        let small = ops.iter().filter(|o| o.len == 4096).count() as f64 / 40_000.0;
        assert!((0.24..0.26).contains(&small), "{small}");
        let reads = d.reads as f64 / 40_000.0;
        assert!((0.69..0.71).contains(&reads), "{reads}");
        assert!(ops.iter().all(|o| o.offset % o.len == 0));
    }

    #[test]
    fn sequential_transfer_is_shortened_at_the_end() {
        let mut j = job();
        j.seek = Seek::Percent(0.0);
        j.xfer = XferSize::Mix(vec![(4096, 50.0), (12288, 50.0)]);
        let (ops, _) = draw(&j, 36 << 10, 200);
        assert!(ops.iter().all(|o| o.offset + o.len <= 36 << 10));
        assert!(ops.iter().any(|o| o.len == 8192), "a shortened transfer");
    }
}

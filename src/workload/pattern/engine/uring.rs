//! The io_uring engine: each thread keeps up to `queue_depth` reads and
//! writes in flight on its own ring, each in its own buffer. It works the
//! way fio's io_uring engine does by default: it takes one completion at a
//! time and puts the next I/O into the freed slot at once, each I/O
//! submitted on its own; completions are run by the thread's own system
//! calls (deferred task work, no interrupt per completion); the thread
//! sleeps only when no completion is waiting.
//!
//! One clock read per I/O, after its submission: it ends the response time
//! of the completion taken next and starts that of the I/O submitted next.
//! So a response time runs from right before the I/O is prepared to its
//! completion being taken, time spent in the completion queue included,
//! the window of fio's total latency (lat).
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Instant;

use anyhow::Context;
use io_uring::{EnterFlags, IoUring, opcode, squeue, types};

use super::{FailGuard, Shared, Tally, WorkerOutput, next_op};
use crate::workload::pattern::access::{Op, Picker};
use crate::workload::pattern::data::Payload;

/// One I/O slot: its buffer, and the I/O in it while in flight.
struct Slot {
    payload: Payload,
    op: Op,
    submitted: Instant,
}

/// A ring for the calling thread, which must be the one that uses it.
///
/// Completions are deferred to the thread's next `io_uring_enter` that
/// asks for events (DEFER_TASKRUN, single issuer), as fio sets its rings
/// up: a plain ring interrupts the thread for every completion, which on
/// a fast device costs more than the I/O. Kernels before 6.1 refuse those
/// flags; the thread then gets a plain ring, which works the same way.
pub(super) fn new_ring(depth: u32) -> std::io::Result<IoUring> {
    IoUring::builder()
        .setup_cqsize(depth)
        .setup_coop_taskrun()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(depth)
        .or_else(|_| IoUring::new(depth))
}

/// Why one I/O at a time, measured with bench/io.py (4 KiB random O_DIRECT
/// reads at queue depth 32 on a loop-mounted ext4): submitting the freed
/// slots as one batch gave 0.77-0.90x fio's IOPS. The block layer holds a
/// batch of three or more submissions until the whole batch is issued, and
/// the device waits meanwhile.
pub(super) fn worker(
    shared: &Shared<'_>,
    fd: anyhow::Result<OwnedFd>,
    id: u32,
) -> anyhow::Result<WorkerOutput> {
    let mut guard = FailGuard::new(&shared.board, id);
    let fd = fd?;
    let mut ring = new_ring(shared.job.queue_depth).context("cannot set up io_uring")?;
    // The thread's own descriptor, registered: the ring then takes no
    // reference to the file per I/O (see `own_descriptor`).
    ring.submitter()
        .register_files(&[fd.as_raw_fd()])
        .context("cannot register the data file with io_uring")?;
    let outcome = drive(shared, &mut ring, id, &mut guard);
    // Let go of here rather than when the ring is dropped: the kernel
    // tears a closed ring down later, in a worker of its own, and holds
    // the registered file open until then. Its blocks, once the file is
    // deleted, stayed in use for seconds after the run: a free-space check
    // right after it (the next workload's, the next run's) came up short.
    let _ = ring.submitter().unregister_files();
    outcome
}

/// Keeps the ring's slots busy until the job is over; `guard` is disarmed
/// once every I/O has completed without error.
fn drive(
    shared: &Shared<'_>,
    ring: &mut IoUring,
    id: u32,
    guard: &mut FailGuard<'_>,
) -> anyhow::Result<WorkerOutput> {
    let job = shared.job;
    let timeline = shared.timeline.get().expect("set before the workers start");
    let depth = job.queue_depth;
    let largest = job.xfer.largest() as usize;
    let mut slots: Vec<Slot> = (0..depth)
        .map(|i| Slot {
            payload: Payload::new(largest, job.seed, id * depth + i),
            op: Op {
                write: false,
                offset: 0,
                len: 0,
            },
            submitted: timeline.start,
        })
        .collect();
    let mut free: Vec<usize> = (0..slots.len()).rev().collect();
    let mut picker = Picker::new(job, &shared.stream, id);
    let mut tally = Tally::new(&shared.board, timeline, id as usize);
    let mut failure: Option<anyhow::Error> = None;
    let mut submitting = true;
    let mut now = Instant::now();
    let mut last = timeline.start;
    loop {
        if submitting && failure.is_none() {
            if let Err(e) = crate::interrupt::check() {
                failure = Some(e);
            } else if shared.board.stopping() {
                submitting = false;
            }
        }
        if submitting && failure.is_none() && !free.is_empty() {
            match submit_next(
                shared,
                ring,
                &mut slots,
                &mut free,
                &mut picker,
                &tally,
                now,
            ) {
                Ok(more) => submitting = more,
                Err(e) => {
                    failure = Some(anyhow::Error::new(e).context("io_uring submit failed"));
                }
            }
            now = Instant::now();
            continue;
        }
        if free.len() == slots.len() {
            break;
        }
        // The kernel owns the in-flight buffers: even after a failure we
        // wait for every one of them before the slots can be dropped.
        if ring.completion().is_empty() || !ring.submission().is_empty() {
            match ring.submit_and_wait(1) {
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) => return Err(e).context("io_uring submit failed"),
                Ok(_) => {}
            }
            now = Instant::now();
        }
        let Some(cqe) = ring.completion().next() else {
            continue;
        };
        last = now;
        tally.advance(now);
        let index = cqe.user_data() as usize;
        let slot = &slots[index];
        free.push(index);
        match check_result(cqe.result(), &slot.op) {
            Ok(()) => tally.record(&slot.op, (now - slot.submitted).as_nanos() as u64),
            Err(e) => {
                failure.get_or_insert(e);
            }
        }
        if tally.over(now) || failure.is_some() {
            submitting = false;
        }
    }
    if let Some(e) = failure {
        return Err(e);
    }
    guard.armed = false;
    Ok(tally.finish(last, picker.decisions))
}

/// Puts the next I/O, stamped `now`, into a free slot and submits it;
/// false once the job has no more I/O to give.
fn submit_next(
    shared: &Shared<'_>,
    ring: &mut IoUring,
    slots: &mut [Slot],
    free: &mut Vec<usize>,
    picker: &mut Picker,
    tally: &Tally<'_>,
    now: Instant,
) -> std::io::Result<bool> {
    let Some(op) = next_op(shared, picker, tally.measuring()) else {
        return Ok(false);
    };
    let index = free.pop().expect("called with a free slot");
    let slot = &mut slots[index];
    let entry = prepare(slot, op).user_data(index as u64);
    slot.op = op;
    slot.submitted = now;
    // SAFETY: the buffer lives in `slots`, which the worker keeps (and does
    // not touch) until this I/O's completion has been taken. The queue has
    // room: it holds as many entries as there are slots.
    unsafe { ring.submission().push(&entry) }.expect("a submission entry per slot");
    match submit_queued(ring) {
        // Interrupted: the entry stays queued and goes in with the wait.
        Err(e) if e.raw_os_error() == Some(libc::EINTR) => Ok(true),
        Err(e) => Err(e),
        Ok(_) => Ok(true),
    }
}

/// Submits what is queued, and posts the completions that came in since
/// the last call (with deferred task work, only a call that asks for
/// events runs them, so each submission asks, as fio's do).
fn submit_queued(ring: &mut IoUring) -> std::io::Result<usize> {
    let queued = ring.submission().len() as u32;
    // SAFETY: a plain io_uring_enter with no argument structure.
    unsafe {
        ring.submitter()
            .enter::<libc::sigset_t>(queued, 0, EnterFlags::GETEVENTS.bits(), None)
    }
}

/// The data file's index among the ring's registered files.
const REGISTERED: u32 = 0;

/// The I/O on the ring's registered file.
fn prepare(slot: &mut Slot, op: Op) -> squeue::Entry {
    let fd = types::Fixed(REGISTERED);
    let len = op.len as usize;
    if op.write {
        let data = slot.payload.stamped(op.offset, len);
        opcode::Write::new(fd, data.as_ptr(), len as u32)
            .offset(op.offset)
            .build()
    } else {
        let space = slot.payload.space(len);
        opcode::Read::new(fd, space.as_mut_ptr(), len as u32)
            .offset(op.offset)
            .build()
    }
}

/// A negative result is an errno; a short transfer on a laid-out file
/// means it shrank or the disk is full.
fn check_result(result: i32, op: &Op) -> anyhow::Result<()> {
    let what = if op.write { "write" } else { "read" };
    if result < 0 {
        return Err(rustix::io::Errno::from_raw_os_error(-result))
            .with_context(|| format!("{what} of {} bytes at offset {}", op.len, op.offset));
    }
    if (result as u64) < op.len {
        anyhow::bail!(
            "{what} of {} bytes at offset {}: only {result} bytes transferred (end of file or full disk)",
            op.len,
            op.offset
        );
    }
    Ok(())
}

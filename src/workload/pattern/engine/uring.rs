//! The io_uring engine: each thread keeps up to `queue_depth` reads and
//! writes in flight on its own ring, each in its own buffer. One clock read
//! stamps a whole submitted batch and one a whole reaped batch, so a
//! response time runs from submission to the completion being seen.
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use anyhow::Context;
use io_uring::{IoUring, opcode, squeue, types};

use super::{FailGuard, Shared, Tally, WorkerOutput, next_op};
use crate::workload::pattern::access::{Op, Picker};
use crate::workload::pattern::data::Payload;

/// One I/O slot: its buffer, and the I/O in it while in flight.
struct Slot {
    payload: Payload,
    op: Op,
    submitted: Instant,
}

/// How long a thread polls its completion queue before it sleeps until a
/// completion comes. A sleep and a wake-up per completion cost more CPU
/// than a fast device takes per I/O. Measured with bench/io.py on a
/// loop-mounted ext4 (4 KiB random O_DIRECT reads, queue depth 32):
/// sleeping at once gave 0.77x fio's IOPS, polling first 0.89-0.90x; one
/// run under /usr/bin/time counted ~50,000 voluntary context switches in
/// 4 s before and a few hundred after. The price is CPU time, at most this
/// long per wait, which the CPU % column shows.
const POLL_BEFORE_SLEEP: Duration = Duration::from_micros(100);

/// A ring for one thread. A plain ring: the kernel posts completions as
/// they happen, so polling the completion queue sees them (with deferred
/// task work they would wait for the next system call).
pub(super) fn new_ring(depth: u32) -> std::io::Result<IoUring> {
    IoUring::new(depth)
}

pub(super) fn worker(shared: &Shared<'_>, id: u32) -> anyhow::Result<WorkerOutput> {
    let job = shared.job;
    let timeline = shared.timeline.get().expect("set before the workers start");
    let mut guard = FailGuard::new(&shared.board, id);
    let depth = job.queue_depth;
    let mut ring = new_ring(depth).context("cannot set up io_uring")?;
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
    let mut last = timeline.start;
    loop {
        if submitting && failure.is_none() {
            if let Err(e) = crate::interrupt::check() {
                failure = Some(e);
            } else if shared.board.stopping() {
                submitting = false;
            }
        }
        if submitting && failure.is_none() {
            submitting = fill(
                shared,
                &mut ring,
                &mut slots,
                &mut free,
                &mut picker,
                &tally,
            );
        }
        let in_flight = slots.len() - free.len();
        if in_flight == 0 {
            break;
        }
        // The kernel owns the in-flight buffers: even after a failure we
        // wait for every one of them before the slots can be dropped.
        match submit_and_collect(&mut ring) {
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            Err(e) => return Err(e).context("io_uring submit failed"),
            Ok(()) => {}
        }
        let now = Instant::now();
        last = now;
        tally.advance(now);
        for cqe in ring.completion() {
            let index = cqe.user_data() as usize;
            let slot = &slots[index];
            free.push(index);
            match check_result(cqe.result(), &slot.op) {
                Ok(()) => tally.record(&slot.op, (now - slot.submitted).as_nanos() as u64),
                Err(e) => {
                    failure.get_or_insert(e);
                }
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

/// Submits what `fill` queued and returns once at least one completion is
/// in the queue: polled for up to `POLL_BEFORE_SLEEP`, then waited for.
fn submit_and_collect(ring: &mut IoUring) -> std::io::Result<()> {
    // No system call when there is nothing to submit (draining at the end,
    // or no free slot): the poll below sees completions without one.
    if !ring.submission().is_empty() {
        ring.submit()?;
    }
    let polling = Instant::now();
    while ring.completion().is_empty() {
        if polling.elapsed() >= POLL_BEFORE_SLEEP {
            ring.submit_and_wait(1)?;
            break;
        }
        std::hint::spin_loop();
    }
    Ok(())
}

/// Queues I/Os into the free slots (one clock read for the batch); false
/// once the job has no more I/O to give.
fn fill(
    shared: &Shared<'_>,
    ring: &mut IoUring,
    slots: &mut [Slot],
    free: &mut Vec<usize>,
    picker: &mut Picker,
    tally: &Tally<'_>,
) -> bool {
    let now = Instant::now();
    let fd = types::Fd(shared.fd.as_raw_fd());
    while let Some(&index) = free.last() {
        let Some(op) = next_op(shared, picker, tally.measuring()) else {
            return false;
        };
        let slot = &mut slots[index];
        let entry = prepare(fd, slot, op).user_data(index as u64);
        slot.op = op;
        slot.submitted = now;
        // SAFETY: the buffer lives in `slots`, which the worker keeps (and
        // does not touch) until this I/O's completion has been reaped.
        if unsafe { ring.submission().push(&entry) }.is_err() {
            break;
        }
        free.pop();
    }
    true
}

fn prepare(fd: types::Fd, slot: &mut Slot, op: Op) -> squeue::Entry {
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

//! SIGINT / SIGTERM handling. The first signal only sets a flag that every
//! workload loop polls, so the workload stops at the next operation and the
//! scratch directory is cleaned up; a second SIGINT/SIGTERM kills the process
//! at once (for a user who really wants out). The first signal is answered at
//! once on stderr, from the handler itself, so a user whose run takes a while
//! to reach its next check knows it was heard.
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use signal_hook::consts::{SIGINT, SIGTERM, SIGUSR1};

use crate::error::Interrupted;

static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// Whether this process answers a stop signal on stderr: under MPI only
/// rank 0 does, so a Ctrl-C is answered once, not once per rank.
static ANSWERS: AtomicBool = AtomicBool::new(true);

/// Installs the handlers; call once at start-up.
pub fn install() -> anyhow::Result<()> {
    [SIGINT, SIGTERM].into_iter().try_for_each(stop_on)
}

/// Makes `sig` a stop signal like SIGINT: the first stops the run cleanly,
/// a second kills at once.
fn stop_on(sig: i32) -> anyhow::Result<()> {
    let flag = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Order matters: the conditional shutdown fires only once `flag` is
    // already set, i.e. on the second signal.
    signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, Arc::clone(&flag))?;
    signal_hook::flag::register(sig, Arc::clone(&flag))?;
    // SAFETY: the closure only touches atomics and calls write(2), all
    // async-signal-safe; the message is a static string (no allocation).
    unsafe {
        signal_hook::low_level::register(sig, move || {
            if RECEIVED.swap(sig, Ordering::Relaxed) == 0 && ANSWERS.load(Ordering::Relaxed) {
                let line = stopping_line(sig);
                libc::write(2, line.as_ptr().cast(), line.len());
            }
        })?;
    }
    Ok(())
}

/// What the first stop signal prints before the run reaches its next check.
fn stopping_line(sig: i32) -> &'static str {
    match sig {
        SIGINT => "fsbench: SIGINT: stopping after this operation (again to quit at once)\n",
        SIGTERM => "fsbench: SIGTERM: stopping after this operation (again to quit at once)\n",
        _ => "fsbench: stopping after this operation\n",
    }
}

/// Under MPI, ranks other than 0 stop as quietly as they report.
pub fn leave_answers_to_another_process() {
    ANSWERS.store(false, Ordering::Relaxed);
}

/// Under MPI: OpenMPI's mpirun kills the ranks one second after a Ctrl-C,
/// too soon to clean up, but forwards SIGUSR1 to them, so `kill -USR1
/// <mpirun>` is the way to stop a job cleanly.
pub fn stop_on_sigusr1() -> anyhow::Result<()> {
    stop_on(SIGUSR1)
}

/// The signal received so far, if any.
pub fn received() -> Option<i32> {
    match RECEIVED.load(Ordering::Relaxed) {
        0 => None,
        sig => Some(sig),
    }
}

/// Returns an `Interrupted` error once a stop signal has arrived; workloads
/// call this inside their loops.
#[inline]
pub fn check() -> anyhow::Result<()> {
    match received() {
        None => Ok(()),
        Some(signal) => Err(Interrupted {
            name: signal_name(signal),
            signal,
        }
        .into()),
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        SIGUSR1 => "SIGUSR1",
        _ => "a signal",
    }
}

//! The threads workloads run on: how many one process may start, and
//! starting them so that a thread the system refuses (a process or memory
//! limit) is a one-line error. Before, `thread::scope`'s spawn panicked and
//! the threads already started waited at a barrier for ever, deaf to
//! SIGTERM; here they are told to stop and joined first.
use std::sync::{Condvar, Mutex};
use std::thread::{Builder, Scope, ScopedJoinHandle};

use crate::error::usage;

/// Most threads a workload may start in one process: io threads (and
/// threads × queue depth when io_uring falls back to the sync engine),
/// bonnie seekers, PostMark instances, tree walkers. More is a typing
/// error or a test of the machine's limits, not of the file system.
pub const MAX_THREADS: u32 = 1024;

/// Refuses a thread count of 0 or over [`MAX_THREADS`].
pub fn check_count(count: u64) -> anyhow::Result<()> {
    if count == 0 || count > u64::from(MAX_THREADS) {
        return usage(format!(
            "{count} threads: use 1 to {MAX_THREADS} (fsbench's limit per process)"
        ));
    }
    Ok(())
}

/// Starts one scoped thread per closure of `workers`, named `name`. When
/// the system refuses one, `stop` tells those already started to stop
/// (it must make each of them return soon), they are joined, and the
/// error says which thread could not start.
pub fn spawn_all<'scope, 'env, T, F>(
    scope: &'scope Scope<'scope, 'env>,
    name: &str,
    workers: impl IntoIterator<Item = F>,
    stop: impl FnOnce(),
) -> anyhow::Result<Vec<ScopedJoinHandle<'scope, T>>>
where
    T: Send + 'scope,
    F: FnOnce() -> T + Send + 'scope,
{
    let workers: Vec<F> = workers.into_iter().collect();
    let total = workers.len();
    let mut started = Vec::with_capacity(total);
    for (index, work) in workers.into_iter().enumerate() {
        match Builder::new()
            .name(name.to_string())
            .spawn_scoped(scope, work)
        {
            Ok(handle) => started.push(handle),
            Err(e) => {
                stop();
                // Their outcome is moot: the run fails for this thread.
                started.into_iter().for_each(|h| drop(h.join()));
                anyhow::bail!(
                    "cannot start {name} thread {} of {total}: {e} (a limit on processes or memory?)",
                    index + 1
                );
            }
        }
    }
    Ok(started)
}

/// Where workers wait until all of them have started, so that none
/// begins before the clock does: a barrier that can also be called off
/// when a worker could not be started.
pub struct StartLine {
    workers: usize,
    state: Mutex<Start>,
    changed: Condvar,
}

#[derive(Clone, Copy, PartialEq)]
enum Start {
    Waiting { arrived: usize },
    Go,
    CalledOff,
}

/// What a worker gets when the start was called off; its caller returns
/// the reason instead.
#[derive(Debug, thiserror::Error)]
#[error("the start was called off")]
pub struct CalledOff;

impl StartLine {
    pub fn new(workers: usize) -> StartLine {
        StartLine {
            workers,
            state: Mutex::new(Start::Waiting { arrived: 0 }),
            changed: Condvar::new(),
        }
    }

    /// A worker arrives and waits for the start; Err when it was called
    /// off (the worker then returns at once).
    pub fn wait(&self) -> Result<(), CalledOff> {
        let mut state = self.lock();
        if let Start::Waiting { arrived } = &mut *state {
            *arrived += 1;
            self.changed.notify_all();
        }
        loop {
            match *state {
                Start::Go => return Ok(()),
                Start::CalledOff => return Err(CalledOff),
                Start::Waiting { .. } => state = self.wait_for_change(state),
            }
        }
    }

    /// Waits until every worker has arrived, then starts them all.
    pub fn go(&self) {
        let mut state = self.lock();
        while matches!(*state, Start::Waiting { arrived } if arrived < self.workers) {
            state = self.wait_for_change(state);
        }
        if *state != Start::CalledOff {
            *state = Start::Go;
        }
        self.changed.notify_all();
    }

    /// Releases every waiting worker with [`CalledOff`].
    pub fn call_off(&self) {
        *self.lock() = Start::CalledOff;
        self.changed.notify_all();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Start> {
        // The state is a plain value, valid even if a holder panicked.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait_for_change<'a>(
        &self,
        state: std::sync::MutexGuard<'a, Start>,
    ) -> std::sync::MutexGuard<'a, Start> {
        self.changed.wait(state).unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_over_the_cap_are_refused() {
        assert!(check_count(1).is_ok());
        assert!(check_count(1024).is_ok());
        for count in [0, 1025, 16_777_216] {
            let e = format!("{:#}", check_count(count).unwrap_err());
            assert!(e.contains(&format!("{count} threads")), "{e}");
            assert!(e.contains("1024"), "{e}");
        }
    }

    /// What `arriving` workers of a line for 3 get when the leader does
    /// `then` to it.
    fn start(arriving: usize, then: impl FnOnce(&StartLine)) -> Vec<Result<(), CalledOff>> {
        let line = StartLine::new(3);
        std::thread::scope(|scope| {
            let workers = (0..arriving).map(|_| || line.wait());
            let handles = spawn_all(scope, "test", workers, || {}).unwrap();
            then(&line);
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
    }

    #[test]
    fn workers_start_together_after_go() {
        assert!(start(3, StartLine::go).iter().all(Result::is_ok));
    }

    #[test]
    fn a_called_off_start_releases_the_waiting_workers() {
        // The third worker never comes.
        assert!(start(2, StartLine::call_off).iter().all(Result::is_err));
    }
}

//! Where worker threads hand in their interval counters and the reporting
//! thread collects them. A worker keeps its counters private and touches
//! the board only when it crosses an interval boundary, so the per-I/O path
//! has no shared writes besides the sequential position.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::counters::Counters;

/// Interval boundaries of one job.
#[derive(Debug, Clone)]
pub struct Timeline {
    pub start: Instant,
    pub interval: Duration,
    /// Intervals of a duration-bound job; None when it ends by amount/eof.
    pub total: Option<u32>,
    /// End of a duration-bound job.
    pub end: Option<Instant>,
    /// Leading intervals left out of the averages.
    pub warmup: u32,
}

impl Timeline {
    /// When interval `index` (0-based) ends: the last one ends at `end`.
    pub fn boundary(&self, index: u32) -> Instant {
        let nominal = self.start + self.interval * (index + 1);
        match self.end {
            Some(end) => nominal.min(end),
            None => nominal,
        }
    }

    pub fn is_last(&self, index: u32) -> bool {
        self.total == Some(index + 1)
    }
}

/// What the reporter gets for one interval.
pub struct Collected {
    pub counters: Counters,
    /// Every worker has finished and none has anything after this interval.
    pub done: bool,
    /// When the last worker finished (meaningful when `done`).
    pub finished_at: Option<Instant>,
}

#[derive(Default)]
struct State {
    slots: Vec<Counters>,
    /// Per worker: how many intervals it has closed.
    closed: Vec<u32>,
    finished: Vec<Option<Instant>>,
}

impl State {
    fn all_finished(&self) -> bool {
        self.finished.iter().all(Option::is_some)
    }

    fn add(&mut self, worker: usize, index: u32, counters: &Counters) {
        let slot = index as usize;
        if self.slots.len() <= slot {
            self.slots.resize(slot + 1, Counters::default());
        }
        self.slots[slot].add(counters);
        self.closed[worker] = index + 1;
    }
}

pub struct Board {
    state: Mutex<State>,
    changed: Condvar,
    stop: AtomicBool,
}

impl Board {
    pub fn new(workers: usize) -> Board {
        Board {
            state: Mutex::new(State {
                slots: Vec::new(),
                closed: vec![0; workers],
                finished: vec![None; workers],
            }),
            changed: Condvar::new(),
            stop: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A worker that panicked while holding the lock left consistent
        // counters behind (adds only), so the data stays usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// True once the job is to stop (a worker failed, `--verify` found
    /// its limit of bad blocks, or `--until-steady` saw steady state):
    /// the workers stop at their next I/O.
    #[inline]
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    pub fn stop_all(&self) {
        self.stop.store(true, Ordering::Relaxed);
        self.changed.notify_all();
    }

    /// A worker hands in its counters of interval `index`.
    pub fn close(&self, worker: usize, index: u32, counters: &Counters) {
        self.lock().add(worker, index, counters);
        self.changed.notify_all();
    }

    /// A worker is done (its last interval is `index`), for whatever reason.
    pub fn finish(&self, worker: usize, index: u32, counters: &Counters, at: Instant) {
        let mut state = self.lock();
        state.add(worker, index, counters);
        state.finished[worker] = Some(at);
        drop(state);
        self.changed.notify_all();
    }

    /// A worker failed: it hands in nothing more.
    pub fn abandon(&self, worker: usize) {
        self.lock().finished[worker] = Some(Instant::now());
        self.changed.notify_all();
    }

    /// Sleeps until `deadline`, or less if every worker has finished.
    pub fn sleep_until(&self, deadline: Instant) {
        let mut state = self.lock();
        loop {
            let now = Instant::now();
            if now >= deadline || state.all_finished() {
                return;
            }
            state = self
                .changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Waits until every worker has closed interval `index` (or finished)
    /// and returns the interval's summed counters.
    pub fn collect(&self, index: u32) -> Collected {
        let mut state = self.lock();
        let ready = |s: &State| {
            s.closed
                .iter()
                .zip(&s.finished)
                .all(|(&closed, finished)| closed > index || finished.is_some())
        };
        while !ready(&state) {
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        let counters = state.slots.get(index as usize).copied().unwrap_or_default();
        let done = state.all_finished() && state.closed.iter().all(|&c| c <= index + 1);
        Collected {
            counters,
            done,
            finished_at: state.finished.iter().flatten().max().copied(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_what_workers_close_and_sees_the_end() {
        let board = Board::new(2);
        let mut c = Counters::default();
        c.record(false, 4096, 1000);
        board.close(0, 0, &c);
        board.close(1, 0, &c);
        let first = board.collect(0);
        assert_eq!(first.counters.read.ops, 2);
        assert!(!first.done);
        let now = Instant::now();
        board.finish(0, 1, &c, now);
        board.finish(1, 1, &Counters::default(), now);
        let last = board.collect(1);
        assert_eq!(last.counters.read.ops, 1);
        assert!(last.done);
        assert_eq!(last.finished_at, Some(now));
    }

    #[test]
    fn boundaries_stop_at_the_end() {
        let start = Instant::now();
        let t = Timeline {
            start,
            interval: Duration::from_secs(1),
            total: Some(3),
            end: Some(start + Duration::from_millis(2500)),
            warmup: 1,
        };
        assert_eq!(t.boundary(0), start + Duration::from_secs(1));
        assert_eq!(t.boundary(2), start + Duration::from_millis(2500));
        assert!(t.is_last(2) && !t.is_last(1));
    }
}

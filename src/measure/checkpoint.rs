//! Progress checkpoints of the running phase: a count of operations
//! (every latency sample of an operation is one; a sync log's syncs are
//! not) and a (time, count) point every `EVERY` operations. A measurement
//! of its own, counted where latencies are recorded; MPI scale-out enables
//! it and reads it for its stonewall view (`scale::phase`).
//! Disabled it costs one relaxed load per operation; enabled one atomic
//! add on a counter all threads share, which threads on different cores
//! contend for (not measured).
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Operations between two checkpoints: dense enough to interpolate the
/// progress at any moment, with a lock and a clock read only once per
/// this many operations.
const EVERY: u64 = 64;

static ENABLED: AtomicBool = AtomicBool::new(false);
static OPS: AtomicU64 = AtomicU64::new(0);
static POINTS: Mutex<Vec<(Instant, u64)>> = Mutex::new(Vec::new());

/// Starts counting (for good): only multi-rank runs pay for the counter.
pub fn enable() {
    ENABLED.store(true, Ordering::Relaxed);
}

/// Counts one operation of the running phase (any thread).
#[inline]
pub fn count_op() {
    if !ENABLED.load(Ordering::Relaxed) {
        return;
    }
    let done = OPS.fetch_add(1, Ordering::Relaxed) + 1;
    if done.is_multiple_of(EVERY) {
        let now = Instant::now();
        POINTS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((now, done));
    }
}

/// Starts counting a new phase.
pub fn restart() {
    OPS.store(0, Ordering::Relaxed);
    POINTS.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// The phase's operations and checkpoints, in time order.
pub fn take() -> (u64, Vec<(Instant, u64)>) {
    let mut points = std::mem::take(&mut *POINTS.lock().unwrap_or_else(|e| e.into_inner()));
    // Threads push in any order; counts grow with time.
    points.sort_unstable_by_key(|&(_, count)| count);
    (OPS.load(Ordering::Relaxed), points)
}

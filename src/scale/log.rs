//! What this rank measured besides its `WorkloadResult`, for the
//! aggregation on rank 0: each timed phase's place on the common clock,
//! and the histogram behind each latency summary.
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

/// One timed phase of this rank on the job's common clock (seconds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Span {
    /// The id of the phase's timing, which its metrics carry in
    /// `Metric::phase`: that is how a metric finds its phase.
    pub phase: u64,
    pub start_s: f64,
    pub end_s: f64,
    /// Operations counted over the phase, and (time, count) checkpoints;
    /// none for a phase made of other phases (PostMark's total).
    pub ops: u64,
    pub checkpoints: Vec<(f64, u64)>,
    /// How long this rank waited in the agreements before and after the
    /// phase (outside its timing): the rank that arrives last waits only
    /// for the messages, so the least of the ranks' waits is what the
    /// coordination itself costs.
    #[serde(default)]
    pub start_wait_s: f64,
    #[serde(default)]
    pub end_wait_s: f64,
}

impl Span {
    /// The share of its work this rank had done at time `t`: interpolated
    /// between checkpoints, or by time when it has none.
    pub fn done_at(&self, t: f64) -> f64 {
        if t >= self.end_s {
            return 1.0;
        }
        if t <= self.start_s {
            return 0.0;
        }
        if self.ops == 0 {
            return (t - self.start_s) / (self.end_s - self.start_s);
        }
        let points: Vec<(f64, u64)> = std::iter::once((self.start_s, 0))
            .chain(self.checkpoints.iter().copied())
            .chain(std::iter::once((self.end_s, self.ops)))
            .collect();
        let after = points
            .iter()
            .position(|p| p.0 > t)
            .unwrap_or(points.len() - 1);
        let (t0, c0) = points[after.saturating_sub(1)];
        let (t1, c1) = points[after];
        let count = match t1 > t0 {
            true => c0 as f64 + (c1 as f64 - c0 as f64) * (t - t0) / (t1 - t0),
            false => c1 as f64,
        };
        count / self.ops as f64
    }
}

/// The histogram behind a metric's latency summary, as (value, count)
/// pairs of its recorded buckets: rank 0 adds them up exactly. `id` is
/// the summary's `LatencySummary::histogram`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub id: u64,
    pub buckets: Vec<(u64, u64)>,
}

static SPANS: Mutex<Vec<Span>> = Mutex::new(Vec::new());
static LATENCIES: Mutex<Vec<Latency>> = Mutex::new(Vec::new());
/// The id of the next histogram kept in this process.
static NEXT_LATENCY_ID: AtomicU64 = AtomicU64::new(0);

pub fn add_span(span: Span) {
    SPANS.lock().unwrap_or_else(|e| e.into_inner()).push(span);
}

/// Keeps `buckets` under a new id, which it returns.
pub fn add_latency(buckets: Vec<(u64, u64)>) -> u64 {
    let id = NEXT_LATENCY_ID.fetch_add(1, Ordering::Relaxed);
    LATENCIES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(Latency { id, buckets });
    id
}

/// Everything logged since the last call.
pub fn take() -> (Vec<Span>, Vec<Latency>) {
    let spans = std::mem::take(&mut *SPANS.lock().unwrap_or_else(|e| e.into_inner()));
    let latencies = std::mem::take(&mut *LATENCIES.lock().unwrap_or_else(|e| e.into_inner()));
    (spans, latencies)
}

//! Per-operation latency in an HdrHistogram (ns, 3 significant digits).
use std::sync::OnceLock;
use std::time::Instant;

use hdrhistogram::Histogram;

use super::checkpoint;
use crate::result::LatencySummary;

/// Highest latency tracked exactly: one hour. Longer samples saturate.
const MAX_TRACKABLE_NS: u64 = 3_600_000_000_000;

/// Keeps a metric's histogram (its [`LatencyRecorder::buckets`]) for an
/// aggregation across processes, and returns the id its summary carries.
pub type KeepHistogram = fn(Vec<(u64, u64)>) -> u64;

/// Installed by MPI scale-out in a multi-rank run (a higher layer, hence a
/// hook); unset, nothing is kept.
static KEEP_HISTOGRAM: OnceLock<KeepHistogram> = OnceLock::new();

/// Hands the buckets of every later [`LatencyRecorder::summary_for_metric`]
/// to `keep`. The first call wins; later ones are ignored.
pub fn keep_histograms_with(keep: KeepHistogram) {
    let _ = KEEP_HISTOGRAM.set(keep);
}

pub struct LatencyRecorder {
    histogram: Histogram<u64>,
    /// Whether a sample is one operation of the running phase, for the
    /// progress [`checkpoint`]s (not the sync log's syncs, which come on
    /// top of the operations that wrote the records).
    operations: bool,
}

impl Default for LatencyRecorder {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyRecorder {
    pub fn new() -> Self {
        let histogram = Histogram::new_with_bounds(1, MAX_TRACKABLE_NS, 3)
            .expect("static histogram bounds are valid");
        LatencyRecorder {
            histogram,
            operations: true,
        }
    }

    /// A recorder whose samples are not operations of the phase (see
    /// `operations`).
    pub fn not_operations() -> Self {
        LatencyRecorder {
            operations: false,
            ..Self::new()
        }
    }

    #[inline]
    pub fn record_ns(&mut self, ns: u64) {
        self.histogram.saturating_record(ns.max(1));
        if self.operations {
            checkpoint::count_op();
        }
    }

    /// Records the time since `start` and returns the new "now", so loops
    /// can chain samples with a single clock read per operation.
    #[inline]
    pub fn record_since(&mut self, start: Instant) -> Instant {
        let now = Instant::now();
        self.record_ns(now.duration_since(start).as_nanos() as u64);
        now
    }

    /// Adds another recorder's samples (e.g. one per thread).
    pub fn merge(&mut self, other: &LatencyRecorder) {
        // Both histograms share bounds, so adding cannot fail.
        let _ = self.histogram.add(&other.histogram);
    }

    /// The recorded buckets as (value, count): what an MPI rank sends so
    /// that rank 0 can add histograms up exactly.
    pub fn buckets(&self) -> Vec<(u64, u64)> {
        self.histogram
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }

    /// A recorder holding `buckets` (from [`LatencyRecorder::buckets`]).
    pub fn from_buckets(buckets: &[(u64, u64)]) -> Self {
        let mut recorder = Self::new();
        for &(value, count) in buckets {
            let _ = recorder.histogram.record_n(value.max(1), count);
        }
        recorder
    }

    /// The percentiles of a metric's latency. In a multi-rank run the
    /// histogram is also kept for rank 0, which adds all ranks' up, under
    /// the id the summary carries (see [`keep_histograms_with`]): call it
    /// once per metric, and [`LatencyRecorder::summary`] for any other use.
    pub fn summary_for_metric(&self) -> Option<LatencySummary> {
        let mut summary = self.summary()?;
        summary.histogram = KEEP_HISTOGRAM.get().map(|keep| keep(self.buckets()));
        Some(summary)
    }

    /// The percentiles, with no side effect.
    pub fn summary(&self) -> Option<LatencySummary> {
        let h = &self.histogram;
        if h.is_empty() {
            return None;
        }
        Some(LatencySummary {
            count: h.len(),
            min_ns: h.min(),
            mean_ns: h.mean(),
            p50_ns: h.value_at_quantile(0.50),
            p90_ns: h.value_at_quantile(0.90),
            p99_ns: h.value_at_quantile(0.99),
            p999_ns: h.value_at_quantile(0.999),
            p9999_ns: h.value_at_quantile(0.9999),
            max_ns: h.max(),
            histogram: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_reflects_samples() {
        let mut rec = LatencyRecorder::new();
        for ns in 1..=1000u64 {
            rec.record_ns(ns * 1000);
        }
        let s = rec.summary().unwrap();
        assert_eq!(s.count, 1000);
        assert_eq!(s.min_ns, 1000);
        assert!((s.p50_ns as f64 - 500_000.0).abs() < 1000.0, "{}", s.p50_ns);
        assert!((s.p99_ns as f64 - 990_000.0).abs() < 2000.0, "{}", s.p99_ns);
        assert!((s.max_ns as f64 - 1_000_000.0).abs() < 1000.0);
        assert!((s.mean_ns - 500_500.0).abs() < 1000.0);
    }

    #[test]
    fn buckets_round_trip_exactly() {
        let mut rec = LatencyRecorder::new();
        for ns in [1, 7, 1000, 123_456, 5_000_000_000] {
            rec.record_ns(ns);
        }
        let copy = LatencyRecorder::from_buckets(&rec.buckets());
        assert_eq!(copy.summary(), rec.summary());
    }

    #[test]
    fn merge_adds_counts_and_empty_has_no_summary() {
        let mut a = LatencyRecorder::new();
        assert!(a.summary().is_none());
        let mut b = LatencyRecorder::new();
        a.record_ns(10);
        b.record_ns(1_000_000);
        a.merge(&b);
        let s = a.summary().unwrap();
        assert_eq!(s.count, 2);
        assert!(s.max_ns >= 999_000);
    }
}

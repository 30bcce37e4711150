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

#[derive(Clone)]
pub struct LatencyRecorder {
    /// Made at the first sample: a histogram is 264 KiB, and a recorder
    /// that never records (a thread of `-j 1024` that found no work, a
    /// phase without samples) costs nothing.
    histogram: Option<Histogram<u64>>,
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
        LatencyRecorder {
            histogram: None,
            operations: true,
        }
    }

    #[cold]
    fn empty_histogram() -> Histogram<u64> {
        Histogram::new_with_bounds(1, MAX_TRACKABLE_NS, 3)
            .expect("static histogram bounds are valid")
    }

    /// The histogram, made now if this is the first sample.
    #[inline]
    fn histogram_mut(&mut self) -> &mut Histogram<u64> {
        self.histogram.get_or_insert_with(Self::empty_histogram)
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
        self.histogram_mut().saturating_record(ns.max(1));
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
        let Some(theirs) = other.histogram.as_ref().filter(|h| !h.is_empty()) else {
            return;
        };
        // Both histograms share bounds, so adding cannot fail.
        let _ = self.histogram_mut().add(theirs);
    }

    /// The recorded buckets as (value, count): what an MPI rank sends so
    /// that rank 0 can add histograms up exactly.
    pub fn buckets(&self) -> Vec<(u64, u64)> {
        let Some(histogram) = &self.histogram else {
            return Vec::new();
        };
        histogram
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }

    /// A recorder holding `buckets` (from [`LatencyRecorder::buckets`]).
    pub fn from_buckets(buckets: &[(u64, u64)]) -> Self {
        let mut recorder = Self::new();
        for &(value, count) in buckets {
            let _ = recorder.histogram_mut().record_n(value.max(1), count);
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
        let h = self.histogram.as_ref().filter(|h| !h.is_empty())?;
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

    #[test]
    fn a_recorder_without_samples_holds_no_histogram() {
        let mut idle = LatencyRecorder::new();
        assert!(idle.histogram.is_none(), "made at the first sample");
        assert!(idle.buckets().is_empty());
        let mut busy = LatencyRecorder::new();
        busy.merge(&idle);
        assert!(busy.histogram.is_none(), "merging nothing makes nothing");
        busy.record_ns(5);
        idle.merge(&busy);
        assert_eq!(idle.summary().unwrap().count, 1);
        assert_eq!(LatencyRecorder::from_buckets(&[]).summary(), None);
    }
}

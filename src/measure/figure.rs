//! A count over a timed phase (files, transactions, bytes, a sync log's
//! records) and the one way it becomes a rate metric: per second of the
//! phase, with the phase's CPU % and latency, flagged when the phase was
//! too short to time precisely or its data fit in the page cache.
use crate::measure::PhaseTiming;
use crate::result::{Direction, Flag, LatencySummary, MIN_PRECISE_SECONDS, Metric};

const MIB: f64 = (1u64 << 20) as f64;

/// One figure before it becomes a metric: a count over the interval it is
/// divided by.
pub struct Figure {
    pub name: &'static str,
    pub unit: &'static str,
    /// Files, transactions, seeks, bytes, or a sync log's records or syncs.
    pub work: u64,
    /// The interval this figure is divided by.
    pub phase: PhaseTiming,
    pub latency: Option<LatencySummary>,
}

impl Figure {
    /// The metric: `work` per second (MiB per second for unit "MiB/s").
    pub fn into_metric(self, fits_in_page_cache: bool) -> Metric {
        let elapsed_s = self.phase.elapsed.as_secs_f64();
        let per_second = per_second(self.work as f64, elapsed_s);
        let mut flags = Vec::new();
        if elapsed_s < MIN_PRECISE_SECONDS {
            flags.push(Flag::TooShort);
        }
        if fits_in_page_cache {
            flags.push(Flag::FitsInPageCache);
        }
        Metric {
            name: self.name.to_string(),
            value: if self.unit == "MiB/s" {
                per_second / MIB
            } else {
                per_second
            },
            unit: self.unit.to_string(),
            direction: Direction::HigherIsBetter,
            samples: self.work,
            elapsed_s,
            cpu_percent: Some(self.phase.cpu_percent()),
            latency: self.latency,
            flags,
            across_ranks: Default::default(),
            phase: Some(self.phase.id()),
        }
    }
}

/// `work / seconds`, 0 for an interval too short to measure.
pub fn per_second(work: f64, seconds: f64) -> f64 {
    if seconds > 0.0 { work / seconds } else { 0.0 }
}

//! One headline metric of a target against the baseline's (`Finding`):
//! its speed-up whatever the metric's direction, whether it counts, is
//! undecided or exact (space), and how the sentence says it.
use crate::analysis::summary::{Class, Comparison};
use crate::measure::stats::RatioInterval;
use crate::result::Direction;

/// A difference this large (either way) that is not yet significant is
/// said as undecided, not as "no difference".
pub(super) const UNDECIDED_AT: f64 = 1.5;

/// One headline metric of a target against the same metric of the baseline.
#[derive(Debug, Clone)]
pub struct Finding {
    /// Workload and metric, as a reader says them ("tree-photos find").
    pub what: String,
    /// The metric's unit: a space figure (`result::SPACE_UNIT`)
    /// is smaller or larger, not faster or slower.
    pub unit: String,
    pub direction: Direction,
    pub class: Option<Class>,
    pub comparison: Comparison,
    /// The device counters flagged the target's figure as the page
    /// cache's (`Flag::from_device`): a win it shows is not the storage's,
    /// and the verdict says so.
    pub not_from_device: bool,
    /// Repetitions behind the comparison (the fewer of the two sides).
    pub repetitions: usize,
}

impl Finding {
    /// How many times as fast as the baseline (above 1 = better, whatever
    /// the metric's direction).
    pub(super) fn speedup(&self) -> f64 {
        oriented(self.comparison.ratio, self.direction)
    }

    /// The speed-up's 95 % interval, when both ends are positive.
    pub(super) fn speedup_interval(&self) -> Option<RatioInterval> {
        self.comparison.ci95.map(|ci| match ci.bounds() {
            Some((low, high)) => {
                let (a, b) = (
                    oriented(low, self.direction),
                    oriented(high, self.direction),
                );
                RatioInterval::Bounded(a.min(b), a.max(b))
            }
            None => RatioInterval::Unbounded,
        })
    }

    pub(super) fn tested(&self) -> bool {
        self.comparison.p_value.is_some()
    }

    /// Space on disk: a measured amount, whose difference is exact.
    pub(super) fn exact(&self) -> bool {
        self.unit == crate::result::SPACE_UNIT
    }

    /// The difference's size on the log scale, whichever its direction.
    pub(super) fn size(&self) -> f64 {
        self.speedup().ln().abs()
    }

    /// At least `min_effect` either way (0.05: 1.05x faster or slower).
    pub(super) fn practical(&self, min_effect: f64) -> bool {
        super::is_practical(self.speedup(), min_effect)
    }

    /// A speed difference the verdict counts: significant and practical.
    pub(super) fn counts(&self, min_effect: f64) -> bool {
        !self.exact() && self.comparison.significant && self.practical(min_effect)
    }

    /// Significant, but under the minimum effect.
    pub(super) fn negligible(&self, min_effect: f64) -> bool {
        !self.exact() && self.comparison.significant && !self.practical(min_effect)
    }

    /// Tested, not significant, yet as large as `UNDECIDED_AT` or more:
    /// "no difference" would be wrong, the repetitions were too few.
    pub(super) fn undecided(&self) -> bool {
        !self.exact()
            && self.tested()
            && !self.comparison.significant
            && self.size() >= UNDECIDED_AT.ln()
    }

    /// About how many more repetitions would make its interval exclude
    /// 1, from the observed spread: the interval's half-width on the log
    /// scale shrinks as 1/√n. None where the interval is unbounded.
    pub(super) fn repetitions_to_decide(&self) -> Option<usize> {
        let (low, high) = self.comparison.ci95?.bounds()?;
        let half_width = (high.ln() - low.ln()) / 2.0;
        let effect = self.comparison.ratio.ln().abs();
        let n = self.repetitions as f64;
        let needed = n * (half_width / effect).powi(2);
        Some(((needed - n).ceil() as usize).max(1))
    }

    /// "14x faster sync-write-4k (about 9 more would decide)".
    pub(super) fn undecided_phrase(&self) -> String {
        let more = match self.repetitions_to_decide() {
            Some(k) => format!("about {k} more would decide"),
            None => "more would decide".to_string(),
        };
        format!("{} ({more})", self.phrase())
    }

    /// A decided difference with its interval: "7.6x faster seq-write-1m
    /// (5.1x–9.8x)"; without a bounded one, the phrase alone.
    pub(super) fn decided_phrase(&self) -> String {
        let interval = self
            .speedup_interval()
            .and_then(|ci| ci.bounds())
            .map(|(low, high)| match self.speedup() >= 1.0 {
                // Said the way the phrase is: times faster, or times slower.
                true => format!("{}–{}", times(low), times(high)),
                false => format!("{}–{}", times(1.0 / high), times(1.0 / low)),
            });
        self.phrase_with(interval)
    }

    /// "7.6x faster seq-write-1m", "2.0x slower tree-photos find",
    /// "1.3x smaller tree-photos dataset space on disk".
    pub(super) fn phrase(&self) -> String {
        self.phrase_with(None)
    }

    /// The phrase with `interval` and the page-cache caveat in brackets:
    /// "8.0x faster seq-read (7.2x–8.8x; page cache, not the device)".
    fn phrase_with(&self, interval: Option<String>) -> String {
        let speedup = self.speedup();
        let (better, worse) = match self.exact() {
            true => ("smaller", "larger"),
            false => ("faster", "slower"),
        };
        let caveat = self
            .not_from_device
            .then(|| "page cache, not the device".to_string());
        let notes: Vec<String> = interval.into_iter().chain(caveat).collect();
        let notes = match notes.is_empty() {
            true => String::new(),
            false => format!(" ({})", notes.join("; ")),
        };
        match speedup >= 1.0 {
            true => format!("{} {better} {}{notes}", times(speedup), self.what),
            false => format!("{} {worse} {}{notes}", times(1.0 / speedup), self.what),
        }
    }
}

/// A ratio turned so that above 1 is better.
pub(super) fn oriented(ratio: f64, direction: Direction) -> f64 {
    match direction {
        Direction::HigherIsBetter => ratio,
        Direction::LowerIsBetter => 1.0 / ratio,
    }
}

/// `7.6x`, `12x`, `1.03x`, `0.97x`: about two significant digits, all a
/// benchmark's ratio has, and three near 1 so that a small difference does
/// not read "1.0x slower".
pub fn times(factor: f64) -> String {
    match factor {
        f if f >= 10.0 => format!("{f:.0}x"),
        f if f >= 1.1 => format!("{f:.1}x"),
        f => format!("{f:.2}x"),
    }
}

/// The larger difference first; of equal ones, by what they measure.
/// Sizes are compared to 9 decimals: PostMark's create, delete and data
/// rates are one count over one time, so their speed-ups are equal but for
/// the last bits of rounding, which must not pick the one named.
pub(super) fn larger_first(a: &Finding, b: &Finding) -> std::cmp::Ordering {
    let rounded = |f: &Finding| (f.size() * 1e9).round() as i64;
    rounded(b)
        .cmp(&rounded(a))
        .then_with(|| a.what.cmp(&b.what))
}

/// A metric as a sentence names it: its workload, then the metric's
/// readable name ("4k-rand-read I/O rate", "tree-photos find").
pub fn what(workload: &str, metric: &str) -> String {
    format!("{workload} {}", crate::analysis::names::words(metric))
}

//! Repeating until the results are precise enough (`fsbench run
//! --precision 5%`), like the Phoronix Test Suite's dynamic run count: after
//! each whole repetition, every headline metric of every target must have a
//! 95 % confidence interval within the given fraction of its mean, or (on a
//! target other than the baseline) differ significantly from the baseline;
//! otherwise the run repeats, up to `--max-repeat` and within
//! `--max-time`. A comparison of targets repeats this way by default
//! (`Precision::from_flags`): three repetitions rarely decide a noisy
//! figure, and the verdict must not call an undecided difference "none".
//!
//! The rule reads the same `Summary` the reports show, so "precise" here is
//! the "± x" a reader sees, and "significant" the reports' verdict.
use std::time::{Duration, Instant};

use crate::analysis::summary::{Cell, Summary};
use crate::error::usage;
use crate::measure::stats::RatioInterval;
use crate::result::{RunResult, Stopping};
use crate::workload::progress::short_duration;

/// Repetitions before the rule is first tested when `--repeat` does not
/// say: fewer give a confidence interval too wide to mean much.
pub const DEFAULT_MIN_REPEAT: u32 = 3;

/// The most repetitions when `--max-repeat` does not say.
pub const DEFAULT_MAX_REPEAT: u32 = 10;

/// The precision a comparison repeats for when `--precision` does not say.
pub const DEFAULT_PRECISION: f64 = 0.05;

/// The longest a run repeats when `--max-time` does not say: the first
/// repetitions always run, later ones only when they would end before it.
pub const DEFAULT_MAX_TIME: Duration = Duration::from_secs(30 * 60);

/// The widest metrics a reason names; the others are counted.
const NAMED_WIDE: usize = 5;

/// The stopping rule of a run that repeats until it is precise enough.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Precision {
    /// The largest 95 % CI half-width accepted, as a fraction of the mean.
    pub fraction: f64,
    /// Repetitions before the rule is tested.
    pub min_repeat: u32,
    pub max_repeat: u32,
    /// No repetition starts that would, at the pace so far, end after
    /// this much time since `started`.
    pub max_time: Duration,
    pub started: Instant,
    /// Repetitions measured before `started`, by the process a resumed
    /// run continues: they count at this process's pace against
    /// `max_time`, and are not the pace's.
    pub measured_before: u32,
    /// A ratio whose interval lies within this fraction of 1 either way
    /// is decided: no practical difference (`verdict::DEFAULT_MIN_EFFECT`).
    pub min_effect: f64,
}

/// `fsbench run`'s flags that decide how often it repeats.
#[derive(Debug, Clone, Copy, Default)]
pub struct RepeatFlags<'a> {
    /// `--precision`: a percentage, or `off` for exactly `--repeat`.
    pub precision: Option<&'a str>,
    pub repeat: Option<u32>,
    pub max_repeat: Option<u32>,
    pub max_time: Option<Duration>,
    /// More than one target is measured: a comparison, which repeats
    /// until it is decided unless told otherwise.
    pub comparing: bool,
}

/// A headline metric of a target whose interval is still too wide.
#[derive(Debug, Clone, PartialEq)]
struct Wide {
    /// "a/tree-photos find_s".
    name: String,
    /// Its CI half-width over its mean; None with a single value.
    relative: Option<f64>,
}

impl Precision {
    /// The rule from `fsbench run`'s flags: `--precision` as a percentage,
    /// the minimum from `--repeat` (else `DEFAULT_MIN_REPEAT`), the
    /// maximum from `--max-repeat` (else the larger of the default and the
    /// minimum), the time cap from `--max-time`. A comparison without
    /// `--precision` or `--repeat` gets `DEFAULT_PRECISION`; `--precision
    /// off`, or `--repeat` alone, runs exactly the repetitions asked for
    /// (None). `--max-repeat` or `--max-time` without a rule is a usage
    /// error, as is a maximum below the minimum.
    pub fn from_flags(
        flags: RepeatFlags<'_>,
        min_effect: f64,
    ) -> anyhow::Result<Option<Precision>> {
        let fraction = match flags.precision {
            Some(text) if text.trim().eq_ignore_ascii_case("off") => None,
            Some(text) => Some(parse_percentage(text)?),
            None if flags.comparing && flags.repeat.is_none() => Some(DEFAULT_PRECISION),
            None => None,
        };
        let Some(fraction) = fraction else {
            return match (flags.max_repeat, flags.max_time) {
                (Some(_), _) => usage("--max-repeat needs --precision (e.g. --precision 5%)"),
                (_, Some(_)) => usage("--max-time needs --precision (e.g. --precision 5%)"),
                _ => Ok(None),
            };
        };
        let min_repeat = flags.repeat.unwrap_or(DEFAULT_MIN_REPEAT);
        let max_repeat = flags
            .max_repeat
            .unwrap_or(DEFAULT_MAX_REPEAT.max(min_repeat));
        if max_repeat < min_repeat {
            return usage(format!(
                "--max-repeat {max_repeat}: below the {min_repeat} repetitions run before the precision is tested (--repeat)"
            ));
        }
        Ok(Some(Precision {
            fraction,
            min_repeat,
            max_repeat,
            max_time: flags.max_time.unwrap_or(DEFAULT_MAX_TIME),
            started: Instant::now(),
            measured_before: 0,
            min_effect,
        }))
    }

    /// What the run will do, said before it starts: "repeating until every
    /// headline metric is within ±5 % or decided: 3 to 10 repetitions, at
    /// most 30m00s (--precision, --max-repeat, --max-time; --repeat N
    /// alone for a fixed count)".
    pub fn plan_text(&self) -> String {
        format!(
            "repeating until every headline metric is within ±{} (95 % CI) or its difference \
             from the baseline is decided: {} to {} repetitions, none starting that would end \
             after {} (--precision, --max-repeat, --max-time; --repeat N alone for a fixed count)",
            percent(self.fraction),
            self.min_repeat,
            self.max_repeat,
            short_duration(self.max_time.as_secs())
        )
    }

    /// The reason to stop after the repetitions in `record`, if every
    /// headline metric is settled (and at least `min_repeat` ran); the
    /// driver's stopping rule.
    pub fn reached(&self, record: &RunResult) -> Option<String> {
        let enough = record.repetitions_measured() >= self.min_repeat;
        if enough && self.wide_metrics(record).is_empty() {
            return Some(self.settled_reason(record));
        }
        self.out_of_time(record)
    }

    /// "--max-time 30m00s: another repetition (about 4m10s each) would end
    /// after it; 3 metrics still wider than ±5 %: ..." when the next
    /// repetition, at the pace so far, would end past the time cap.
    fn out_of_time(&self, record: &RunResult) -> Option<String> {
        let done = record.repetitions_measured();
        let done_here = done.saturating_sub(self.measured_before);
        let each = self.started.elapsed().checked_div(done_here)?;
        if each * (done + 1) <= self.max_time {
            return None;
        }
        Some(format!(
            "--max-time {} reached: another repetition (about {} each) would end after it; {}",
            short_duration(self.max_time.as_secs()),
            short_duration(each.as_secs()),
            self.wide_text(record)
        ))
    }

    /// What the record says about how the run stopped: `stopped` is the
    /// rule's reason when it stopped the run, None when `--max-repeat` ran
    /// out first.
    pub fn stopping(&self, record: &RunResult, stopped: Option<String>) -> Stopping {
        let reason = stopped.unwrap_or_else(|| self.exhausted_reason(record));
        Stopping {
            repetitions: record.repetitions_measured(),
            max_repeat: self.max_repeat,
            precision: self.fraction,
            reason,
        }
    }

    /// "every headline metric within ±5 % (95 % CI) or significantly
    /// different from the baseline" (the last part only where there is a
    /// baseline to differ from).
    fn settled_reason(&self, record: &RunResult) -> String {
        let within = format!(
            "every headline metric within ±{} (95 % CI)",
            percent(self.fraction)
        );
        match record.targets.len() {
            0 | 1 => within,
            _ => format!("{within} or significantly different from the baseline"),
        }
    }

    /// "--max-repeat 10 reached: 3 metrics still wider than ±5 %: a/tree
    /// find_s ±12 %, ...", widest first.
    fn exhausted_reason(&self, record: &RunResult) -> String {
        if self.wide_metrics(record).is_empty() {
            return self.settled_reason(record);
        }
        format!(
            "--max-repeat {} reached: {}",
            self.max_repeat,
            self.wide_text(record)
        )
    }

    /// "3 metrics still wider than ±5 %: a/tree find_s ±12 %, ...", widest
    /// first.
    fn wide_text(&self, record: &RunResult) -> String {
        let mut wide = self.wide_metrics(record);
        // A single value (no interval) is the widest of all.
        wide.sort_by(|a, b| {
            let key = |w: &Wide| w.relative.unwrap_or(f64::INFINITY);
            key(b).total_cmp(&key(a))
        });
        let mut named: Vec<String> = wide
            .iter()
            .take(NAMED_WIDE)
            .map(|w| match w.relative {
                Some(relative) => format!("{} ±{}", w.name, percent(relative)),
                None => format!("{} (one value)", w.name),
            })
            .collect();
        if wide.len() > NAMED_WIDE {
            named.push(format!("{} more", wide.len() - NAMED_WIDE));
        }
        let plural = if wide.len() == 1 { "" } else { "s" };
        format!(
            "{} metric{plural} still wider than ±{}: {}",
            wide.len(),
            percent(self.fraction),
            named.join(", ")
        )
    }

    /// Every headline metric of every target that is neither precise
    /// enough nor significantly different from the baseline.
    fn wide_metrics(&self, record: &RunResult) -> Vec<Wide> {
        // The run's baseline as every report of the record takes it: by
        // name, since targets built from configurations are recorded in the
        // order they were built.
        let baseline = crate::analysis::baseline_of(record);
        let summary = Summary::with_baseline(record, baseline);
        let mut wide = Vec::new();
        for workload in &summary.workloads {
            for metric in workload.headline() {
                for (target, cell) in metric.cells.iter().enumerate() {
                    let Some(cell) = cell else { continue };
                    if self.settled(cell, target != baseline) {
                        continue;
                    }
                    wide.push(Wide {
                        name: format!(
                            "{}/{} {}",
                            summary.targets[target], workload.name, metric.name
                        ),
                        relative: relative_half_width(cell),
                    });
                }
            }
        }
        wide
    }

    /// Precise enough, or (off the baseline) significantly different from
    /// it, or surely within the minimum effect of it: more repetitions
    /// would not change what the verdict says.
    fn settled(&self, cell: &Cell, off_baseline: bool) -> bool {
        let precise = relative_half_width(cell).is_some_and(|r| r <= self.fraction);
        let compared = cell.vs_baseline.filter(|_| off_baseline);
        let significant = compared.is_some_and(|c| c.significant);
        let negligible = compared
            .and_then(|c| c.ci95)
            .is_some_and(|ci| self.within_min_effect(ci));
        precise || significant || negligible
    }

    /// The whole interval lies within the minimum effect of 1.
    fn within_min_effect(&self, interval: RatioInterval) -> bool {
        let band = 1.0 + self.min_effect;
        interval
            .bounds()
            .is_some_and(|(low, high)| low >= 1.0 / band && high <= band)
    }
}

/// The CI's half-width over the mean's magnitude; None with fewer than two
/// values. Values that never vary are exact (0) even at a mean of 0.
fn relative_half_width(cell: &Cell) -> Option<f64> {
    let half = cell.stats.ci95_half_width()?;
    Some(match half {
        0.0 => 0.0,
        _ => half / cell.stats.mean.abs(),
    })
}

/// `--precision`'s value: "5%", "5" or "0.5%", a percentage above 0 and
/// below 100, as a fraction (0.05).
pub fn parse_percentage(text: &str) -> anyhow::Result<f64> {
    parse_percentage_of("--precision", text)
}

/// A percentage `flag` was given ("5%", "5" or "0.5%"), above 0 and below
/// 100, as a fraction (0.05).
pub fn parse_percentage_of(flag: &str, text: &str) -> anyhow::Result<f64> {
    let number = text.trim();
    let number = number.strip_suffix('%').unwrap_or(number).trim_end();
    match number.parse::<f64>() {
        Ok(value) if value.is_finite() && value > 0.0 && value < 100.0 => Ok(value / 100.0),
        _ => usage(format!(
            "{flag} {text}: give a percentage above 0 and below 100, e.g. 5%"
        )),
    }
}

/// A fraction as a percentage without needless digits: "5 %", "0.5 %",
/// "12 %".
pub fn percent(fraction: f64) -> String {
    let value = fraction * 100.0;
    let shown = match value >= 10.0 {
        true => format!("{value:.0}"),
        false => format!("{:.1}", value).trim_end_matches(".0").to_string(),
    };
    format!("{shown} %")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Direction, Metric, TargetResult, WorkloadResult};

    fn metric(name: &str, value: f64) -> Metric {
        Metric {
            elapsed_s: value,
            ..Metric::test(name, "s", Direction::LowerIsBetter, value)
        }
    }

    /// A run of `tree` on each target, one find_s value per repetition.
    fn run(targets: &[(&str, &[f64])]) -> RunResult {
        let mut record = crate::driver::recording::new_run_result("test");
        for (name, values) in targets {
            let workloads = values
                .iter()
                .enumerate()
                .map(|(repetition, value)| WorkloadResult {
                    workload: "tree".into(),
                    repetition: repetition as u32,
                    metrics: vec![metric("find_s", *value), metric("copy_s", 1.0).as_detail()],
                    ..Default::default()
                })
                .collect();
            record.targets.push(TargetResult::test(name, workloads));
        }
        record
    }

    fn rule(flags: RepeatFlags<'_>) -> anyhow::Result<Option<Precision>> {
        Precision::from_flags(flags, crate::analysis::verdict::DEFAULT_MIN_EFFECT)
    }

    fn five_percent() -> Precision {
        let flags = RepeatFlags {
            precision: Some("5%"),
            max_repeat: Some(6),
            ..RepeatFlags::default()
        };
        rule(flags).unwrap().unwrap()
    }

    #[test]
    fn stops_once_every_metric_is_precise() {
        let record = run(&[("a", &[10.0, 10.1, 9.9]), ("b", &[10.0, 10.05, 9.95])]);
        let rule = five_percent();
        let reason = rule.reached(&record).expect("precise enough");
        assert_eq!(
            reason,
            "every headline metric within ±5 % (95 % CI) or significantly different from the baseline"
        );
        let stopping = rule.stopping(&record, Some(reason.clone()));
        assert_eq!(stopping.repetitions, 3);
        assert_eq!((stopping.max_repeat, stopping.precision), (6, 0.05));
        assert_eq!(stopping.to_string(), format!("3 repetitions: {reason}"));
    }

    #[test]
    fn stops_when_a_wide_metric_differs_significantly_from_the_baseline() {
        // b varies by ±15 % but is clearly twice the baseline.
        let record = run(&[("a", &[10.0, 10.1, 9.9]), ("b", &[20.0, 23.0, 17.0])]);
        assert!(five_percent().reached(&record).is_some());
        // The baseline itself has no baseline to differ from.
        let mut other_way = record.clone();
        other_way.command = ["fsbench", "run", "--baseline", "b"]
            .map(String::from)
            .to_vec();
        assert_eq!(five_percent().reached(&other_way), None);
    }

    #[test]
    fn keeps_going_while_a_metric_is_wide_or_too_few_ran() {
        let rule = five_percent();
        let wide = run(&[("a", &[10.0, 12.0, 8.0]), ("b", &[10.0, 12.5, 8.5])]);
        assert_eq!(rule.reached(&wide), None);
        let stopping = rule.stopping(&wide, None);
        assert_eq!(
            stopping.reason,
            "--max-repeat 6 reached: 2 metrics still wider than ±5 %: a/tree find_s ±50 %, b/tree find_s ±49 %"
        );
        // Precise, but before the minimum of 3.
        let early = run(&[("a", &[10.0, 10.0]), ("b", &[10.0, 10.0])]);
        assert_eq!(rule.reached(&early), None);
        let exact = run(&[("a", &[10.0, 10.0, 10.0]), ("b", &[10.0, 10.0, 10.0])]);
        assert!(rule.reached(&exact).is_some());
    }

    #[test]
    fn percentages_parse_and_nonsense_is_refused() {
        assert_eq!(parse_percentage("5%").unwrap(), 0.05);
        assert_eq!(parse_percentage("5").unwrap(), 0.05);
        assert_eq!(parse_percentage("0.5%").unwrap(), 0.005);
        assert_eq!(parse_percentage(" 12 %").unwrap(), 0.12);
        for bad in [
            "0", "0%", "-5%", "100%", "150", "abc", "", "%", "5%%", "NaN", "inf",
        ] {
            assert!(parse_percentage(bad).is_err(), "{bad}");
        }
        assert_eq!(percent(0.005), "0.5 %");
        assert_eq!(percent(0.05), "5 %");
        assert_eq!(percent(0.123), "12 %");
    }

    #[test]
    fn the_flags_make_a_rule_or_a_usage_error() {
        let flags = |precision, repeat, max_repeat| RepeatFlags {
            precision,
            repeat,
            max_repeat,
            ..RepeatFlags::default()
        };
        assert_eq!(rule(flags(None, Some(5), None)).unwrap(), None);
        assert!(rule(flags(None, None, Some(5))).is_err());
        let twelve = rule(flags(Some("2"), Some(12), None)).unwrap().unwrap();
        assert_eq!((twelve.min_repeat, twelve.max_repeat), (12, 12));
        assert!(rule(flags(Some("2"), None, Some(2))).is_err());
        assert!(rule(flags(Some("2"), Some(4), Some(3))).is_err());
        let capped = RepeatFlags {
            max_time: Some(Duration::from_secs(60)),
            ..flags(None, None, None)
        };
        assert!(rule(capped).is_err(), "--max-time alone");
    }

    /// Comparing targets repeats until decided unless a fixed count is
    /// asked for; one target runs the suite's count.
    #[test]
    fn a_comparison_repeats_until_decided_by_default() {
        let comparing = RepeatFlags {
            comparing: true,
            ..RepeatFlags::default()
        };
        let default = rule(comparing).unwrap().unwrap();
        assert_eq!(default.fraction, DEFAULT_PRECISION);
        assert_eq!((default.min_repeat, default.max_repeat), (3, 10));
        assert_eq!(default.max_time, DEFAULT_MAX_TIME);
        assert!(default.plan_text().contains("3 to 10 repetitions"));
        assert!(default.plan_text().contains("after 30m00s"));
        let fixed = RepeatFlags {
            repeat: Some(3),
            ..comparing
        };
        assert_eq!(rule(fixed).unwrap(), None);
        let off = RepeatFlags {
            precision: Some("off"),
            ..comparing
        };
        assert_eq!(rule(off).unwrap(), None);
        assert_eq!(rule(RepeatFlags::default()).unwrap(), None);
    }

    /// No repetition starts that would end after the time cap.
    #[test]
    fn the_time_cap_stops_before_a_repetition_that_would_pass_it() {
        let wide = run(&[("a", &[10.0, 12.0, 8.0]), ("b", &[10.0, 12.5, 8.5])]);
        let rule = Precision {
            max_time: Duration::from_secs(3600),
            started: Instant::now() - Duration::from_secs(900),
            ..five_percent()
        };
        // 3 repetitions in 15 minutes: a fourth would end at 20 minutes.
        assert_eq!(rule.reached(&wide), None);
        let tight = Precision {
            max_time: Duration::from_secs(1000),
            ..rule
        };
        let reason = tight.reached(&wide).expect("out of time");
        assert!(
            reason.starts_with(
                "--max-time 16m40s reached: another repetition (about 5m00s each) would end after it; 2 metrics still wider"
            ),
            "{reason}"
        );
    }

    /// A resumed run's earlier repetitions count against the cap at the
    /// pace of the repetitions this process measured.
    #[test]
    fn a_resumed_run_counts_its_earlier_repetitions_at_the_pace_measured_now() {
        let wide = run(&[
            ("a", &[10.0, 12.0, 8.0, 11.0]),
            ("b", &[10.0, 12.5, 8.5, 11.5]),
        ]);
        // Three repetitions came from the killed run; this process measured
        // the fourth in 5 minutes: a fifth would end at 25 minutes.
        let rule = Precision {
            max_time: Duration::from_secs(1800),
            started: Instant::now() - Duration::from_secs(300),
            measured_before: 3,
            ..five_percent()
        };
        assert_eq!(rule.reached(&wide), None);
        let tight = Precision {
            max_time: Duration::from_secs(1200),
            ..rule
        };
        let reason = tight.reached(&wide).expect("out of time");
        assert!(reason.contains("about 5m00s each"), "{reason}");
        // Nothing measured yet by this process: no pace, no stop.
        let fresh = Precision {
            measured_before: 4,
            ..tight
        };
        assert_eq!(fresh.reached(&wide), None);
    }

    /// A difference whose whole interval lies within the minimum effect
    /// is decided (no practical difference): no need to repeat for it.
    #[test]
    fn a_difference_surely_under_the_minimum_effect_is_settled() {
        let rule = Precision {
            fraction: 0.001,
            ..five_percent()
        };
        let close = run(&[
            ("a", &[10.0, 10.1, 9.9, 10.0]),
            ("b", &[10.1, 10.2, 10.0, 10.1]),
        ]);
        // The baseline is not precise to 0.1 %: it alone stays wide.
        let wide = rule.wide_metrics(&close);
        assert_eq!(wide.len(), 1, "{wide:?}");
        assert!(wide[0].name.starts_with("a/"));
    }
}

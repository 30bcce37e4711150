//! Repeating until the results are precise enough (`fsbench run
//! --precision 5%`), like the Phoronix Test Suite's dynamic run count: after
//! each whole repetition, every headline metric of every target must have a
//! 95 % confidence interval within the given fraction of its mean, or (on a
//! target other than the baseline) differ significantly from the baseline;
//! otherwise the run repeats, up to `--max-repeat`.
//!
//! The rule reads the same `Summary` the reports show, so "precise" here is
//! the "± x" a reader sees, and "significant" the reports' verdict.
use crate::error::usage;
use crate::report::summary::{Cell, Summary};
use crate::result::{RunResult, Stopping};

/// Repetitions before the rule is first tested when `--repeat` does not
/// say: fewer give a confidence interval too wide to mean much.
pub const DEFAULT_MIN_REPEAT: u32 = 3;

/// The most repetitions when `--max-repeat` does not say.
pub const DEFAULT_MAX_REPEAT: u32 = 10;

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
    /// The target the others are compared with (`Summary::with_baseline`).
    pub baseline: usize,
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
    /// minimum). None without `--precision`; `--max-repeat` alone is a
    /// usage error, as is a maximum below the minimum.
    pub fn from_flags(
        precision: Option<&str>,
        repeat: Option<u32>,
        max_repeat: Option<u32>,
        baseline: usize,
    ) -> anyhow::Result<Option<Precision>> {
        let Some(text) = precision else {
            return match max_repeat {
                Some(_) => usage("--max-repeat needs --precision (e.g. --precision 5%)"),
                None => Ok(None),
            };
        };
        let fraction = parse_percentage(text)?;
        let min_repeat = repeat.unwrap_or(DEFAULT_MIN_REPEAT);
        let max_repeat = max_repeat.unwrap_or(DEFAULT_MAX_REPEAT.max(min_repeat));
        if max_repeat < min_repeat {
            return usage(format!(
                "--max-repeat {max_repeat}: below the {min_repeat} repetitions run before the precision is tested (--repeat)"
            ));
        }
        Ok(Some(Precision {
            fraction,
            min_repeat,
            max_repeat,
            baseline,
        }))
    }

    /// The reason to stop after the repetitions in `record`, if every
    /// headline metric is settled (and at least `min_repeat` ran); the
    /// driver's stopping rule.
    pub fn reached(&self, record: &RunResult) -> Option<String> {
        let enough = record.repetitions_measured() >= self.min_repeat;
        (enough && self.wide_metrics(record).is_empty()).then(|| self.settled_reason(record))
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
        let mut wide = self.wide_metrics(record);
        if wide.is_empty() {
            return self.settled_reason(record);
        }
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
            "--max-repeat {} reached: {} metric{plural} still wider than ±{}: {}",
            self.max_repeat,
            wide.len(),
            percent(self.fraction),
            named.join(", ")
        )
    }

    /// Every headline metric of every target that is neither precise
    /// enough nor significantly different from the baseline.
    fn wide_metrics(&self, record: &RunResult) -> Vec<Wide> {
        let summary = Summary::with_baseline(record, self.baseline);
        let mut wide = Vec::new();
        for workload in &summary.workloads {
            for metric in workload.headline() {
                for (target, cell) in metric.cells.iter().enumerate() {
                    let Some(cell) = cell else { continue };
                    if self.settled(cell, target) {
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
    /// it: more repetitions would not change what the report says.
    fn settled(&self, cell: &Cell, target: usize) -> bool {
        let precise = relative_half_width(cell).is_some_and(|r| r <= self.fraction);
        let significant =
            target != self.baseline && cell.vs_baseline.is_some_and(|c| c.significant);
        precise || significant
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
    let number = text.trim();
    let number = number.strip_suffix('%').unwrap_or(number).trim_end();
    match number.parse::<f64>() {
        Ok(value) if value.is_finite() && value > 0.0 && value < 100.0 => Ok(value / 100.0),
        _ => usage(format!(
            "--precision {text}: give a percentage above 0 and below 100, e.g. 5%"
        )),
    }
}

/// A fraction as a percentage without needless digits: "5 %", "0.5 %",
/// "12 %".
fn percent(fraction: f64) -> String {
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
        let mut record = crate::driver::record::new_run_result("test");
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
            record.targets.push(TargetResult {
                name: name.to_string(),
                path: format!("/mnt/{name}"),
                env: None,
                workloads,
                cleanup: None,
                reference: false,
                built: None,
            });
        }
        record
    }

    fn five_percent() -> Precision {
        Precision::from_flags(Some("5%"), None, Some(6), 0)
            .unwrap()
            .unwrap()
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
        let other_way = Precision {
            baseline: 1,
            ..five_percent()
        };
        assert_eq!(other_way.reached(&record), None);
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
        assert_eq!(Precision::from_flags(None, Some(5), None, 0).unwrap(), None);
        assert!(Precision::from_flags(None, None, Some(5), 0).is_err());
        let rule = Precision::from_flags(Some("2"), Some(12), None, 1)
            .unwrap()
            .unwrap();
        assert_eq!((rule.min_repeat, rule.max_repeat), (12, 12));
        assert!(Precision::from_flags(Some("2"), None, Some(2), 0).is_err());
        assert!(Precision::from_flags(Some("2"), Some(4), Some(3), 0).is_err());
    }
}

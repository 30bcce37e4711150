//! What a saved result means, apart from how it is shown: statistics over
//! repetitions and ratios to the baseline (`summary`), the verdict and its
//! findings (`verdict`), the stopping rule of a run (`precision`), sweeps,
//! sync-log placements, configuration differences, access order, the
//! notes each flag gets, and the one formatter of a measured number that
//! sentences and tables share. Views (`report`) render it; nothing here
//! knows a format.
mod access_order;
pub mod config_diff;
mod flag_notes;
pub mod names;
pub mod placement;
pub mod precision;
pub mod summary;
pub mod sweep;
pub mod verdict;

use crate::error::usage;
use crate::result::RunResult;
pub use summary::Summary;

/// Index of the `--baseline` target among `targets` (name, whether it is
/// a reference); without one, the first target that is not a reference. A
/// name that is not there, or names a reference (the ceiling, not a
/// baseline), is a usage error that lists the names there are.
pub fn baseline_index(targets: &[(&str, bool)], name: Option<&str>) -> anyhow::Result<usize> {
    let Some(name) = name else {
        return Ok(targets
            .iter()
            .position(|(_, reference)| !reference)
            .unwrap_or(0));
    };
    match targets.iter().position(|(n, _)| *n == name) {
        Some(index) if targets[index].1 => usage(format!(
            "--baseline {name}: a reference target is the ceiling others are shown against, \
             not a baseline"
        )),
        Some(index) => Ok(index),
        None => usage(format!(
            "--baseline {name}: no such target (targets: {})",
            targets
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// The target a saved result's ratios and verdict are taken against, as
/// the run that made it took them: the one its command line named with
/// `--baseline` (`fsbench run --baseline NAME`: the result keeps the
/// command line, not the choice), when that is one of its targets and not
/// a reference; else the first target that is not a reference.
pub fn baseline_of(run: &RunResult) -> usize {
    let named = asked_baseline(&run.command)
        .filter(|_| run.made_by() == "fsbench run")
        .and_then(|name| {
            run.targets
                .iter()
                .position(|t| t.name == name && !t.reference)
        });
    named.unwrap_or_else(|| run.targets.iter().position(|t| !t.reference).unwrap_or(0))
}

/// The value of `--baseline` on a command line (`--baseline NAME` or
/// `--baseline=NAME`), before any `--` that ends the options.
fn asked_baseline(command: &[String]) -> Option<&str> {
    let mut words = command.iter().skip(1).map(String::as_str);
    let mut asked = None;
    while let Some(word) = words.next() {
        match word {
            "--" => break,
            "--baseline" => asked = words.next(),
            _ => {
                if let Some(name) = word.strip_prefix("--baseline=") {
                    asked = Some(name);
                }
            }
        }
    }
    asked
}

/// Decimals that show a value to about four significant digits without
/// false precision in large numbers (`151322`, `683.4`, `12.35`, `0.2852`).
fn decimals(value: f64) -> usize {
    match value.abs() {
        v if v >= 1000.0 => 0,
        v if v >= 100.0 => 1,
        v if v >= 10.0 => 2,
        v if v >= 1.0 || v == 0.0 => 3,
        v => (3 - v.log10().floor() as i64).clamp(3, 9) as usize,
    }
}

/// A value as every format prints it (tables, chart labels and axes), so a
/// figure reads the same wherever it appears; a dash for a value that is
/// not finite.
pub fn number(value: f64) -> String {
    if !value.is_finite() {
        return "–".to_string();
    }
    format!("{value:.*}", decimals(value))
}

/// What every view prints for an unbounded ratio interval.
pub const UNBOUNDED: &str = "unbounded";

/// "dev 98%": the device bytes as a share of the bytes the workload
/// moved, or "dev 4.0 KiB/op" for a phase that moves no data; a cell has
/// it only when its result has device counters.
pub fn device_text(share: summary::DeviceShare) -> String {
    use summary::DeviceShare;
    match share {
        DeviceShare::Percent(p) if p > 0.0 && p < 1.0 => format!("dev {p:.1}%"),
        DeviceShare::Percent(p) => format!("dev {p:.0}%"),
        DeviceShare::PerOperation(bytes) => {
            format!("dev {}/op", crate::size::format_bytes(bytes as u64))
        }
    }
}

/// `mean ± half-width` of the 95 % CI, or the mean alone for a single
/// repetition.
pub fn mean_ci(stats: &crate::measure::stats::Stats) -> String {
    match mean_and_half(stats) {
        (mean, Some(half)) => format!("{mean} ± {half}"),
        (mean, None) => mean,
    }
}

/// The two halves of `mean_ci`, both with the mean's decimals so they
/// line up, for a view that sets them on separate lines; no half-width
/// for a single repetition.
pub fn mean_and_half(stats: &crate::measure::stats::Stats) -> (String, Option<String>) {
    let places = decimals(stats.mean);
    let half = stats.ci95_half_width().map(|h| format!("{h:.places$}"));
    (format!("{:.places$}", stats.mean), half)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_have_about_four_significant_digits() {
        for (value, text) in [
            (151_322.4, "151322"),
            (683.44, "683.4"),
            (12.345_6, "12.35"),
            (1.0, "1.000"),
            (0.285_24, "0.2852"),
            (0.012_346, "0.01235"),
            (-2500.0, "-2500"),
            (0.0, "0.000"),
            (f64::NAN, "–"),
        ] {
            assert_eq!(number(value), text, "{value}");
        }
    }

    /// Every finite f64 reads back as the bits written (serde_json's
    /// `float_roundtrip`; without it about one in ten is a unit off).
    #[test]
    fn numbers_read_back_exactly() {
        let mut values = vec![
            0.1 + 0.2,
            1.0 / 3.0,
            5e-324,
            f64::MIN_POSITIVE,
            f64::MAX,
            -0.0,
            2.5e22,
            42_241.345_678_901_23,
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        while values.len() < 20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let any = f64::from_bits(state);
            // Figures as runs make them, and any bits at all.
            let figure = (state >> 11) as f64 / (1u64 << 53) as f64 * 1e5;
            values.extend([any, figure].into_iter().filter(|v| v.is_finite()));
        }
        let text = serde_json::to_string(&values).unwrap();
        let read: serde_json::Value = serde_json::from_str(&text).unwrap();
        let read = read.as_array().unwrap();
        for (written, read) in values.iter().zip(read) {
            assert_eq!(read.as_f64().map(f64::to_bits), Some(written.to_bits()));
        }
    }

    /// `fsbench run --baseline NAME` is kept in the result only as its
    /// command line: a report of it takes the same baseline.
    #[test]
    fn a_saved_run_keeps_the_baseline_its_command_line_named() {
        let mut run: RunResult =
            serde_json::from_str(include_str!("../../tests/fixtures/run-two-targets.json"))
                .unwrap();
        let mut baseline = |line: &str| {
            run.command = line.split_whitespace().map(String::from).collect();
            baseline_of(&run)
        };
        assert_eq!(baseline("fsbench run -t a -t b"), 0);
        assert_eq!(baseline("fsbench run -t a -t b --baseline tmpfs-huge"), 1);
        assert_eq!(baseline("fsbench --json x run --baseline=tmpfs-huge -q"), 1);
        assert_eq!(baseline("fsbench run --baseline gone"), 0, "no such target");
        assert_eq!(baseline("fsbench run -- --baseline tmpfs-huge"), 0);
        assert_eq!(baseline("fsbench io --baseline tmpfs-huge"), 0, "not run's");
        run.targets[0].reference = true;
        let mut baseline = |line: &str| {
            run.command = line.split_whitespace().map(String::from).collect();
            baseline_of(&run)
        };
        assert_eq!(baseline("fsbench run"), 1, "never a reference");
        assert_eq!(baseline("fsbench run --baseline tmpfs"), 1);
    }
}

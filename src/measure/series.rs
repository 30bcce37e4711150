//! What a throughput time series says beyond its average: whether and when
//! it reached a steady state (fio's `ss=bw_slope`), and whether it fell off
//! a cliff (an SSD's SLC cache running out, a RAID controller going
//! write-through). Pure functions of the intervals, so the io engine can
//! ask while it runs (`--until-steady`) and the result is read once after.
use serde::Serialize;

use crate::result::{Cliff, Steady};

const MIB: f64 = (1u64 << 20) as f64;

/// One interval of the series: when it started (seconds since the job
/// started), how long it lasted and the bytes moved in it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub start_s: f64,
    pub seconds: f64,
    pub bytes: u64,
}

impl Point {
    pub fn mib_per_s(&self) -> f64 {
        rate(self.bytes, self.seconds)
    }
}

fn rate(bytes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes as f64 / MIB / seconds
    } else {
        0.0
    }
}

/// When a series is steady: over the last `window` intervals, the
/// least-squares line through the MiB/s changes by under `slope` (a
/// fraction) of their mean across the window's length. The default, 10
/// intervals and 10 %, is fio's `ss=bw_slope:1%` with `ss_dur=10s` at
/// 1 s intervals (fio's slope is per sample).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SteadyRule {
    pub window: u32,
    pub slope: f64,
}

impl Default for SteadyRule {
    fn default() -> SteadyRule {
        SteadyRule {
            window: 10,
            slope: 0.10,
        }
    }
}

impl SteadyRule {
    /// Whether the last `window` of `rates` is steady.
    pub fn holds(&self, rates: &[f64]) -> bool {
        let window = self.window as usize;
        window >= 2
            && rates.len() >= window
            && relative_change(&rates[rates.len() - window..]) < self.slope
    }

    /// Where `points[measured..]` (the warm-up left out, as fio's
    /// `ss_ramp`) first held steady: the interval that ended the first
    /// steady window (1-based, as `IntervalSample::index`).
    pub fn reached(&self, points: &[Point], measured: usize) -> Steady {
        let rates: Vec<f64> = points.iter().map(Point::mib_per_s).collect();
        let end = (measured..rates.len()).find(|&i| self.holds(&rates[measured..=i]));
        let at = end.map(|i| {
            let window = &rates[i + 1 - self.window as usize..=i];
            let point = &points[i];
            (
                i as u32 + 1,
                point.start_s + point.seconds,
                window.iter().sum::<f64>() / window.len() as f64,
            )
        });
        Steady {
            window: self.window,
            slope_limit: self.slope,
            interval: at.map(|a| a.0),
            at_s: at.map(|a| a.1),
            mib_per_s: at.map(|a| a.2),
        }
    }
}

/// |least-squares slope × length| / mean of `values` (at x = 0, 1, …);
/// infinite when the mean is not positive.
fn relative_change(values: &[f64]) -> f64 {
    let n = values.len() as f64;
    let mean_x = (n - 1.0) / 2.0;
    let mean_y = values.iter().sum::<f64>() / n;
    if mean_y <= 0.0 {
        return f64::INFINITY;
    }
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (x, y) in values.iter().enumerate() {
        let dx = x as f64 - mean_x;
        sxy += dx * (y - mean_y);
        sxx += dx * dx;
    }
    (sxy / sxx * n).abs() / mean_y
}

/// A cliff is a fall under this fraction of the rate before it.
pub const CLIFF_FRACTION: f64 = 0.6;
/// Measured intervals needed before a fall for a rate to fall from.
pub const CLIFF_BEFORE: usize = 3;
/// A fall that lasts to the end of the job must last this many intervals
/// (one slow last interval is its closing fsync, or a partial interval).
pub const CLIFF_AT_END: usize = 3;
/// A fall that recovers must last this many intervals (shorter: a dip).
pub const CLIFF_LASTING: usize = 5;

/// The first cliff in `points[measured..]`: interval k whose MiB/s, and
/// those of the intervals after it, fall under [`CLIFF_FRACTION`] of the
/// rate over the measured intervals before k, for [`CLIFF_LASTING`]
/// intervals or for at least [`CLIFF_AT_END`] up to the end. None
/// without one.
pub fn cliff(points: &[Point], measured: usize) -> Option<Cliff> {
    let rates: Vec<f64> = points.iter().map(Point::mib_per_s).collect();
    let (mut bytes, mut seconds) = (0, 0.0);
    for k in measured..points.len() {
        let before = rate(bytes, seconds);
        let under = |r: &f64| *r < CLIFF_FRACTION * before;
        if k - measured >= CLIFF_BEFORE && before > 0.0 && under(&rates[k]) {
            let run = rates[k..].iter().take_while(|r| under(r)).count();
            if run >= CLIFF_LASTING || (k + run == points.len() && run >= CLIFF_AT_END) {
                return Some(fall(points, k, run, before));
            }
        }
        bytes += points[k].bytes;
        seconds += points[k].seconds;
    }
    None
}

/// The cliff at interval `k`, slow for `run` intervals after a rate of
/// `before`. The fall happened in interval k - 1 or k: both are split
/// into a fast part at `before` and a slow part at the rate after (the
/// run's, k left out when the run has more), which places it more finely
/// than an interval.
fn fall(points: &[Point], k: usize, run: usize, before: f64) -> Cliff {
    let slow = &points[k + usize::from(run > 1)..k + run];
    let after = rate(
        slow.iter().map(|p| p.bytes).sum(),
        slow.iter().map(|p| p.seconds).sum(),
    );
    let pair = &points[k - 1..=k];
    let (pair_mib, pair_s) = (
        pair.iter().map(|p| p.bytes).sum::<u64>() as f64 / MIB,
        pair.iter().map(|p| p.seconds).sum::<f64>(),
    );
    let fast_s = match before > after {
        true => ((pair_mib - after * pair_s) / (before - after)).clamp(0.0, pair_s),
        false => 0.0,
    };
    let bytes_before: u64 = points[..k - 1].iter().map(|p| p.bytes).sum();
    Cliff {
        interval: k as u32 + 1,
        at_s: pair[0].start_s + fast_s,
        bytes: bytes_before + (before * fast_s * MIB) as u64,
        before_mib_per_s: before,
        after_mib_per_s: after,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Random, WyRand};

    /// Half-second intervals moving `rates` MiB/s.
    fn series(rates: &[f64]) -> Vec<Point> {
        rates
            .iter()
            .enumerate()
            .map(|(i, r)| Point {
                start_s: i as f64 * 0.5,
                seconds: 0.5,
                bytes: (r * 0.5 * MIB) as u64,
            })
            .collect()
    }

    /// `n` rates around `level`, ± `spread` (a fraction), seeded.
    fn noisy(n: usize, level: f64, spread: f64, seed: u64) -> Vec<f64> {
        let mut rng = WyRand::new(seed);
        (0..n)
            .map(|_| level * (1.0 + spread * (2.0 * rng.unit() - 1.0)))
            .collect()
    }

    #[test]
    fn a_ramp_then_flat_is_steady_once_a_window_is_flat() {
        // 100, 200, … 500 MiB/s over five intervals, then 500.
        let mut rates: Vec<f64> = (1..=5).map(|i| 100.0 * i as f64).collect();
        rates.extend([500.0; 20]);
        let steady = SteadyRule::default().reached(&series(&rates), 0);
        // Flat from the window ending at interval 14 (intervals 5-14);
        // windows a little earlier change by under 10 % already.
        let at = steady.interval.expect("steady");
        assert!((12..=15).contains(&at), "{steady:?}");
        assert_eq!(steady.at_s, Some(at as f64 * 0.5));
        assert!((steady.mib_per_s.unwrap() - 500.0).abs() < 20.0);
        // The window's line changes by under 10 % there, not the interval before.
        let rule = SteadyRule::default();
        assert!(rule.holds(&rates[..at as usize]));
        assert!(!rule.holds(&rates[..at as usize - 1]));
    }

    #[test]
    fn a_noisy_flat_series_is_steady() {
        let steady = SteadyRule::default().reached(&series(&noisy(30, 300.0, 0.05, 7)), 1);
        assert!(steady.interval.is_some(), "{steady:?}");
        assert!(steady.interval.unwrap() <= 15, "{steady:?}");
    }

    #[test]
    fn a_steady_decline_is_never_steady() {
        // 2 % less every interval: the window's line falls about 20 %.
        let rates: Vec<f64> = (0..40).map(|i| 500.0 * 0.98f64.powi(i)).collect();
        let steady = SteadyRule::default().reached(&series(&rates), 0);
        assert_eq!(steady.interval, None, "{steady:?}");
        assert_eq!((steady.window, steady.slope_limit), (10, 0.1));
    }

    #[test]
    fn the_warmup_is_left_out_of_steady_state() {
        let rates = [500.0; 12];
        let steady = SteadyRule::default().reached(&series(&rates), 2);
        assert_eq!(steady.interval, Some(12), "two warm-up intervals, then ten");
        let few = SteadyRule::default().reached(&series(&rates[..11]), 2);
        assert_eq!(few.interval, None);
    }

    #[test]
    fn a_step_down_is_a_cliff_with_the_rates_before_and_after() {
        let mut rates = noisy(20, 400.0, 0.05, 3);
        rates.extend(noisy(15, 40.0, 0.05, 4));
        let points = series(&rates);
        let cliff = cliff(&points, 0).expect("a cliff");
        assert_eq!(cliff.interval, 21, "the 21st interval (index 20)");
        assert!((cliff.before_mib_per_s - 400.0).abs() < 10.0, "{cliff:?}");
        assert!((cliff.after_mib_per_s - 40.0).abs() < 2.0, "{cliff:?}");
        // 20 intervals of 200 MiB: the fall at about 4000 MiB, 10 s.
        let mib = cliff.bytes as f64 / MIB;
        assert!((mib - 4000.0).abs() < 150.0, "{cliff:?}");
        assert!((cliff.at_s - 10.0).abs() < 0.4, "{cliff:?}");
    }

    #[test]
    fn a_fall_inside_an_interval_is_placed_inside_it() {
        // 100 MiB/s, then 20 from 5.2 s on: interval 11 (5.0–5.5 s) mixed.
        let mut rates = vec![100.0; 10];
        rates.push((100.0 * 0.2 + 20.0 * 0.3) / 0.5);
        rates.extend([20.0; 8]);
        let cliff = cliff(&series(&rates), 0).expect("a cliff");
        assert_eq!(cliff.interval, 11);
        assert!((cliff.at_s - 5.2).abs() < 0.02, "{cliff:?}");
        assert!((cliff.bytes as f64 / MIB - 520.0).abs() < 2.0, "{cliff:?}");
    }

    #[test]
    fn noise_is_no_cliff() {
        assert_eq!(cliff(&series(&noisy(60, 300.0, 0.3, 11)), 1), None);
    }

    #[test]
    fn a_brief_dip_that_recovers_is_no_cliff() {
        let mut rates = vec![300.0; 10];
        rates.extend([30.0; CLIFF_LASTING - 1]);
        rates.extend([300.0; 10]);
        assert_eq!(cliff(&series(&rates), 0), None);
        // A slow last interval (the closing fsync) neither.
        let mut synced = vec![300.0; 10];
        synced.push(10.0);
        assert_eq!(cliff(&series(&synced), 0), None);
        // A dip that lasts is one, though it recovers.
        let mut long = vec![300.0; 10];
        long.extend([30.0; CLIFF_LASTING]);
        long.extend([300.0; 10]);
        assert_eq!(cliff(&series(&long), 0).map(|c| c.interval), Some(11));
    }

    #[test]
    fn a_ramp_up_is_no_cliff_and_the_warmup_is_no_level() {
        let rates: Vec<f64> = (1..=30).map(|i| 10.0 * i as f64).collect();
        assert_eq!(cliff(&series(&rates), 0), None);
        // A fast warm-up (the page cache) then the device's rate.
        let mut warm = vec![2000.0; 2];
        warm.extend([200.0; 20]);
        assert_eq!(cliff(&series(&warm), 2), None);
    }
}

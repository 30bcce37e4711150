//! Change points in the series of a history, all series read together:
//! binary segmentation, each split decided by Student's t-test of the
//! logarithms (`stats::pooled_p`), false alarms held to [`LEVEL`] over
//! every series at once.
//!
//! 1. A segment's best split is the one, each side at least
//!    [`MIN_SEGMENT`] runs, whose two sides the t-test tells apart with
//!    the smallest p; its p-value is that p times the splits tried
//!    (Bonferroni: the best of k tries is up to k times as likely to pass
//!    by chance). The variances are pooled because "no change" means one
//!    distribution on both sides: the test is then exact with n − 2
//!    degrees of freedom, where Welch's approximation passes noise with 2
//!    runs on a side about 3 times as often as it should. A t-test's p falls without bound
//!    as the step grows against the spread, so 4 runs before and 4 after
//!    an 800x drop in 2 % noise give p ≈ 10⁻¹⁴, where a permutation test of 8 runs
//!    cannot go under 2/C(8,4) ≈ 0.03.
//! 2. Each series' first test (its whole length) is read with every other
//!    series' by Benjamini–Hochberg at [`LEVEL`]: of dozens of series of
//!    noise, any shows a change with probability [`LEVEL`] at most,
//!    however many there are.
//! 3. In each of the R series of m kept, the search goes on in the
//!    segments the cuts made, each split tested at LEVEL·R/m (Benjamini &
//!    Bogomolov 2014, "Selective inference on multiple families of
//!    hypotheses"), until no segment has one under it.
//! 4. A change smaller than the minimum effect (the runs' `--min-effect`,
//!    5 % by default) is no change: it is dropped, and the runs on either
//!    side of it are one segment.
//!
//! The logarithms because a storage figure's noise is multiplicative (see
//! `measure::stats`); a series with a zero among its values is tested on
//! the values themselves.
use crate::analysis::verdict::is_practical;
use crate::measure::stats::{self, MIN_SAMPLE, benjamini_hochberg};

/// The fewest runs on either side of a change point: the t-test needs
/// each side's spread.
pub const MIN_SEGMENT: usize = MIN_SAMPLE;

/// The fewest runs in which a change point can be found (a t-test's p
/// has no floor, so two sides of [`MIN_SEGMENT`] can decide any level).
pub const MIN_POINTS: usize = 2 * MIN_SEGMENT;

/// The false discovery rate over all the series of a history: with none
/// changed, the chance that any shows a change point.
pub const LEVEL: f64 = 0.01;

/// A change in a series, between `index - 1` and `index`.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangePoint {
    /// The first value after the change.
    pub index: usize,
    /// The mean of the values from the previous change point (or the
    /// start) up to this one, and from this one to the next (or the end).
    pub mean_before: f64,
    pub mean_after: f64,
    /// The ratio of the values after to those before, less 1 (of the
    /// geometric means, as reports' ratios; of the means where a value is
    /// 0); None when the values before have no positive mean.
    pub relative_change: Option<f64>,
    /// The p-value of the split's test, Bonferroni over the splits tried.
    pub p_value: f64,
}

/// A candidate split: the first index of its right part, and its p-value.
#[derive(Debug, Clone, Copy)]
struct Split {
    index: usize,
    p_value: f64,
}

/// The change points of each of `series`, in order, read together (see
/// the module's comment); changes under `min_effect` are none. A series
/// shorter than [`MIN_POINTS`], or with a value that is not a finite
/// number, is not tested and has none.
pub fn find_all(series: &[&[f64]], min_effect: f64) -> Vec<Vec<ChangePoint>> {
    let firsts: Vec<Option<Split>> = series
        .iter()
        .map(|values| {
            let finite = values.iter().all(|v| v.is_finite());
            finite
                .then(|| best_split(values, 0, values.len()))
                .flatten()
        })
        .collect();
    let tested: Vec<f64> = firsts.iter().flatten().map(|s| s.p_value).collect();
    // One verdict per series tested, in order: drawn only for those.
    let mut kept = benjamini_hochberg(&tested, LEVEL).into_iter();
    let chosen = firsts
        .iter()
        .map(|first| first.filter(|_| kept.next() == Some(true)))
        .collect::<Vec<_>>();
    let families = chosen.iter().flatten().count();
    let within = LEVEL * families as f64 / tested.len().max(1) as f64;
    series
        .iter()
        .zip(chosen)
        .map(|(values, first)| match first {
            Some(first) => practical(values, segmented(values, first, within), min_effect),
            None => Vec::new(),
        })
        .collect()
}

/// The cuts of `values`: `first`, then the best split of any segment the
/// cuts made while its p-value is under `level` (the best of all
/// segments failing, every other fails too).
fn segmented(values: &[f64], first: Split, level: f64) -> Vec<Split> {
    let mut cuts = vec![first];
    loop {
        let bounds = boundaries(values.len(), &cuts);
        let best = bounds
            .windows(2)
            .filter_map(|segment| best_split(values, segment[0], segment[1]))
            .min_by(|a, b| a.p_value.total_cmp(&b.p_value));
        match best {
            Some(split) if split.p_value < level => cuts.push(split),
            _ => break,
        }
    }
    cuts.sort_by_key(|cut| cut.index);
    cuts
}

/// The split of `values[start..end]` whose sides differ most surely, its
/// p-value Bonferroni over the splits tried; None when the segment is too
/// short to split.
fn best_split(values: &[f64], start: usize, end: usize) -> Option<Split> {
    let candidates = (start + MIN_SEGMENT)..=end.checked_sub(MIN_SEGMENT)?;
    let tried = candidates.clone().count();
    candidates
        .filter_map(|index| {
            let p = stats::pooled_p(&values[start..index], &values[index..end])?;
            Some(Split {
                index,
                p_value: (p * tried as f64).min(1.0),
            })
        })
        .min_by(|a, b| a.p_value.total_cmp(&b.p_value))
}

/// The segments' bounds: 0, each cut in order, the length.
fn boundaries(len: usize, cuts: &[Split]) -> Vec<usize> {
    let mut bounds: Vec<usize> = cuts.iter().map(|cut| cut.index).collect();
    bounds.extend([0, len]);
    bounds.sort_unstable();
    bounds
}

/// The cuts told as change points, those under `min_effect` dropped (and
/// the others told again, over the segments the drop joined) until every
/// one left is at least that large.
fn practical(values: &[f64], mut cuts: Vec<Split>, min_effect: f64) -> Vec<ChangePoint> {
    loop {
        let changes = described(values, &cuts);
        let large = |change: &ChangePoint| {
            change
                .relative_change
                .is_none_or(|r| is_practical(1.0 + r, min_effect))
        };
        if changes.iter().all(large) {
            return changes;
        }
        cuts = cuts
            .into_iter()
            .zip(&changes)
            .filter(|(_, change)| large(change))
            .map(|(cut, _)| cut)
            .collect();
    }
}

/// Each cut (in order) with the segments on either side of it.
fn described(values: &[f64], cuts: &[Split]) -> Vec<ChangePoint> {
    let bounds = boundaries(values.len(), cuts);
    let mean = |part: &[f64]| part.iter().sum::<f64>() / part.len() as f64;
    cuts.iter()
        .zip(bounds.windows(3))
        .map(|(cut, around)| {
            let before = &values[around[0]..around[1]];
            let after = &values[around[1]..around[2]];
            ChangePoint {
                index: cut.index,
                mean_before: mean(before),
                mean_after: mean(after),
                relative_change: stats::ratio(before, after).map(|r| r.ratio - 1.0),
                p_value: cut.p_value,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::verdict::DEFAULT_MIN_EFFECT;
    use crate::rng::{Random, WyRand};

    /// `len` values around `mean`, normally spread by `spread` of it (0.02:
    /// 2 % noise).
    fn noise(rng: &mut WyRand, len: usize, mean: f64, spread: f64) -> Vec<f64> {
        (0..len)
            .map(|_| mean * (1.0 + spread * rng.normal()))
            .collect()
    }

    /// `before` runs around 100 and `after` around 100·`factor`, 2 % noise.
    fn step(seed: u64, before: usize, after: usize, factor: f64) -> Vec<f64> {
        let mut rng = WyRand::new(seed);
        let mut values = noise(&mut rng, before, 100.0, 0.02);
        values.extend(noise(&mut rng, after, 100.0 * factor, 0.02));
        values
    }

    /// The change points of one series alone, at the default minimum effect.
    fn find(values: &[f64]) -> Vec<ChangePoint> {
        find_all(&[values], DEFAULT_MIN_EFFECT).remove(0)
    }

    #[test]
    fn an_800x_drop_in_8_runs_is_found_at_its_run_with_its_size() {
        for seed in 0..20 {
            let found = find(&step(seed, 4, 4, 1.0 / 800.0));
            assert_eq!(found.len(), 1, "seed {seed}: {found:?}");
            let change = &found[0];
            assert_eq!(change.index, 4);
            let ratio = 1.0 + change.relative_change.unwrap();
            assert!((ratio * 800.0 - 1.0).abs() < 0.05, "{change:?}");
            // Far under any level a history of dozens of series asks.
            assert!(change.p_value < 1e-6, "{change:?}");
        }
    }

    #[test]
    fn a_30_percent_step_in_12_runs_is_found_where_it_is() {
        for seed in 0..20 {
            let found = find(&step(seed, 6, 6, 1.3));
            assert_eq!(found.len(), 1, "seed {seed}: {found:?}");
            assert_eq!(found[0].index, 6);
            let relative = found[0].relative_change.unwrap();
            assert!((relative - 0.3).abs() < 0.05, "{:?}", found[0]);
        }
    }

    #[test]
    fn a_step_under_the_minimum_effect_is_no_change() {
        // 3 % in 0.2 % noise: certain, but small.
        let mut rng = WyRand::new(3);
        let mut values = noise(&mut rng, 6, 100.0, 0.002);
        values.extend(noise(&mut rng, 6, 103.0, 0.002));
        assert!(find(&values).is_empty());
        let found = find_all(&[&values], 0.02).remove(0);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].index, 6);
        assert!(found[0].p_value < 1e-6, "{found:?}");
    }

    #[test]
    fn two_steps_are_both_found_with_the_means_between_them() {
        let mut rng = WyRand::new(2);
        let mut values = noise(&mut rng, 12, 50.0, 0.01);
        values.extend(noise(&mut rng, 10, 80.0, 0.01));
        values.extend(noise(&mut rng, 12, 60.0, 0.01));
        let found = find(&values);
        let indexes: Vec<usize> = found.iter().map(|c| c.index).collect();
        assert_eq!(indexes, [12, 22]);
        assert!((found[0].mean_after - 80.0).abs() < 1.0, "{found:?}");
        assert!((found[1].mean_before - 80.0).abs() < 1.0, "{found:?}");
        assert!((found[1].mean_after - 60.0).abs() < 1.0, "{found:?}");
    }

    /// How many of `histories` histories of `series` series of `len` runs
    /// made by `values` (from a generator of its own) show a change point.
    fn false_alarms(
        histories: u64,
        series: u64,
        mut values: impl FnMut(&mut WyRand) -> Vec<f64>,
    ) -> usize {
        (0..histories)
            .filter(|&history| {
                let all: Vec<Vec<f64>> = (0..series)
                    .map(|s| values(&mut WyRand::for_stream(history, s)))
                    .collect();
                let slices: Vec<&[f64]> = all.iter().map(Vec::as_slice).collect();
                // No minimum effect: the test alone holds the level.
                find_all(&slices, 0.0).iter().any(|c| !c.is_empty())
            })
            .count()
    }

    #[test]
    fn noise_alone_shows_a_change_in_about_1_history_in_100_however_many_series() {
        // 500 histories, 1 % expected: 5, and 12 would be a rare excess.
        let one = false_alarms(500, 1, |rng| noise(rng, 12, 100.0, 0.02));
        assert!(one <= 12, "{one} of 500 histories of one series");
        let many = false_alarms(500, 25, |rng| noise(rng, 12, 100.0, 0.02));
        assert!(many <= 12, "{many} of 500 histories of 25 series");
    }

    #[test]
    fn outliers_do_not_make_false_alarms() {
        // 1 run in 10 a third slower (a background job, a cold cache):
        // heavy-tailed noise, not the normal noise the test assumes.
        let outlying = |rng: &mut WyRand| -> Vec<f64> {
            (0..12)
                .map(|_| {
                    let slow = if rng.below(10) == 0 { 0.67 } else { 1.0 };
                    100.0 * slow * (1.0 + 0.02 * rng.normal())
                })
                .collect()
        };
        let alarms = false_alarms(500, 1, outlying);
        assert!(alarms <= 12, "{alarms} of 500 histories");
    }

    #[test]
    fn four_runs_can_show_a_change_and_three_cannot() {
        let four = find(&[100.0, 101.0, 1.0, 1.01]);
        assert_eq!(four.len(), 1, "{four:?}");
        assert_eq!(four[0].index, 2);
        assert!(find(&[100.0, 1.0, 1.01]).is_empty());
        assert_eq!(MIN_POINTS, 4);
    }

    #[test]
    fn constant_short_and_not_finite_series_have_no_change() {
        assert!(find(&[]).is_empty());
        assert!(find(&[5.0; 40]).is_empty());
        let mut values = step(1, 6, 6, 0.5);
        values[3] = f64::NAN;
        assert!(find(&values).is_empty());
    }

    #[test]
    fn a_series_with_zeros_is_tested_on_its_values() {
        let values = [0.0, 1.0, 0.0, 1.0, 40.0, 41.0, 39.0, 40.0];
        let found = find(&values);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].index, 4);
        assert!(found[0].relative_change.is_none_or(|r| r > 10.0));
    }

    #[test]
    fn a_change_in_one_series_is_found_among_many_of_noise() {
        let mut all: Vec<Vec<f64>> = (0..40)
            .map(|s| noise(&mut WyRand::new(100 + s), 8, 100.0, 0.02))
            .collect();
        all[17] = step(9, 4, 4, 1.0 / 800.0);
        let slices: Vec<&[f64]> = all.iter().map(Vec::as_slice).collect();
        let found = find_all(&slices, DEFAULT_MIN_EFFECT);
        let changed: Vec<usize> = (0..40).filter(|&s| !found[s].is_empty()).collect();
        assert_eq!(changed, [17]);
        assert_eq!(found[17][0].index, 4);
    }
}

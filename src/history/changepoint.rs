//! Change points in a series of runs: E-divisive means (Matteson & James
//! 2014, "A Nonparametric Approach for Multiple Change Point Analysis of
//! Multivariate Data"), the method of MongoDB's performance CI and Apache
//! Otava (Hunter).
//!
//! A split of a segment into a left part X (m values) and a right part Y
//! (n values) is scored by the energy statistic with α = 1,
//!
//! ```text
//! q = m·n/(m+n) · ( 2/(m·n) Σ|Xi − Yj| − 1/C(m,2) Σ|Xi − Xk| − 1/C(n,2) Σ|Yj − Yk| )
//! ```
//!
//! which grows when the values on either side are closer to each other
//! than to those across (a shift of the mean, or of the spread). The best
//! split of any segment is a change point when a permutation test says so:
//! the values of each segment are shuffled within it [`PERMUTATIONS`]
//! times, and p = (1 + shuffles whose best score is at least as high) /
//! (1 + shuffles). Below [`SIGNIFICANCE`] the split is kept and the search
//! goes on in the segments it made (recursive bisection); otherwise it
//! stops. A series of noise alone so yields a change point in about 1 %
//! of series (the test below checks at most 5 in 100).
//!
//! Deterministic: the shuffles are drawn from a fixed seed.
use crate::rng::{Random, WyRand};

/// The fewest values on either side of a change point: fewer make the
/// within-side distances meaningless (C(1,2) = 0) or pure chance.
pub const MIN_SEGMENT: usize = 3;

/// The fewest values in which a change point can be found.
pub const MIN_POINTS: usize = 2 * MIN_SEGMENT;

/// Shuffles per permutation test: enough to tell p = 0.01 from 0.02, and
/// the smallest p it can give is 0.001.
pub const PERMUTATIONS: usize = 999;

/// The p-value under which a split is a change point. Each test stops the
/// search when it fails, so this is also the chance that a series of noise
/// alone shows a change point.
pub const SIGNIFICANCE: f64 = 0.01;

/// The shuffles' seed: the same series gives the same answer every time.
const SEED: u64 = 0x6564_6976_6973_6976;

/// A change in a series, between `index - 1` and `index`.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangePoint {
    /// The first value after the change.
    pub index: usize,
    /// The mean of the values from the previous change point (or the
    /// start) up to this one, and from this one to the next (or the end).
    pub mean_before: f64,
    pub mean_after: f64,
    /// `mean_after / mean_before − 1`; None when `mean_before` is 0.
    pub relative_change: Option<f64>,
    pub p_value: f64,
}

/// A value that is not a number: no distance to it means anything.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("value {index} of the series is not a finite number ({value})")]
pub struct NotFinite {
    pub index: usize,
    pub value: f64,
}

/// The change points of `values`, in order; none in a series shorter than
/// [`MIN_POINTS`] or without any significant split.
pub fn find(values: &[f64]) -> Result<Vec<ChangePoint>, NotFinite> {
    if let Some(index) = values.iter().position(|v| !v.is_finite()) {
        let value = values[index];
        return Err(NotFinite { index, value });
    }
    let mut rng = WyRand::new(SEED);
    let mut cuts: Vec<(usize, f64)> = Vec::new();
    loop {
        let bounds = boundaries(values.len(), &cuts);
        let Some(best) = best_split(values, &bounds) else {
            break;
        };
        let p_value = permutation_p(values, &bounds, best.score, &mut rng);
        if p_value >= SIGNIFICANCE {
            break;
        }
        cuts.push((best.index, p_value));
    }
    cuts.sort_by_key(|&(index, _)| index);
    Ok(described(values, &cuts))
}

/// A candidate split: the first index of its right part, and its score.
#[derive(Debug, Clone, Copy)]
struct Split {
    index: usize,
    score: f64,
}

/// The segments' bounds: 0, each cut in order, the length.
fn boundaries(len: usize, cuts: &[(usize, f64)]) -> Vec<usize> {
    let mut bounds: Vec<usize> = cuts.iter().map(|&(index, _)| index).collect();
    bounds.extend([0, len]);
    bounds.sort_unstable();
    bounds
}

/// The best-scoring split of any segment (`bounds` as [`boundaries`]
/// makes them); None when no segment can be split or every score is 0
/// (constant segments).
fn best_split(values: &[f64], bounds: &[usize]) -> Option<Split> {
    bounds
        .windows(2)
        .filter_map(|segment| {
            let (start, end) = (segment[0], segment[1]);
            best_in(&values[start..end]).map(|split| Split {
                index: start + split.index,
                score: split.score,
            })
        })
        .filter(|split| split.score > 0.0)
        .max_by(|a, b| a.score.total_cmp(&b.score))
}

/// The best split of one segment, with both parts at least
/// [`MIN_SEGMENT`] long. The sums of distances are carried from one split
/// to the next as the value at the split moves from the right part to the
/// left, so a segment costs O(n²), not O(n³).
fn best_in(x: &[f64]) -> Option<Split> {
    let n = x.len();
    if n < MIN_POINTS {
        return None;
    }
    let distance_sum = |i: usize, range: std::ops::Range<usize>| -> f64 {
        range.map(|k| (x[i] - x[k]).abs()).sum()
    };
    let first = MIN_SEGMENT;
    let mut within_left: f64 = (0..first).map(|i| distance_sum(i, i + 1..first)).sum();
    let mut within_right: f64 = (first..n).map(|j| distance_sum(j, j + 1..n)).sum();
    let mut between: f64 = (0..first).map(|i| distance_sum(i, first..n)).sum();
    let mut best: Option<Split> = None;
    for tau in first..=n - MIN_SEGMENT {
        let score = energy(tau, n - tau, between, within_left, within_right);
        if best.is_none_or(|b| score > b.score) {
            best = Some(Split { index: tau, score });
        }
        let to_left = distance_sum(tau, 0..tau);
        let to_right = distance_sum(tau, tau + 1..n);
        within_left += to_left;
        within_right -= to_right;
        between += to_right - to_left;
    }
    best
}

/// The scaled energy statistic of a split into `m` and `n` values, from
/// the sums of distances between and within its parts.
fn energy(m: usize, n: usize, between: f64, within_left: f64, within_right: f64) -> f64 {
    let (m, n) = (m as f64, n as f64);
    let pairs = |k: f64| k * (k - 1.0) / 2.0;
    let statistic = 2.0 * between / (m * n) - within_left / pairs(m) - within_right / pairs(n);
    m * n / (m + n) * statistic
}

/// The permutation test's p-value of a best score `observed`: how often
/// the values shuffled within their segments score as high. It stops
/// counting once p can no longer fall under [`SIGNIFICANCE`] (only a
/// significant p is reported).
fn permutation_p(values: &[f64], bounds: &[usize], observed: f64, rng: &mut WyRand) -> f64 {
    let enough_to_fail = (SIGNIFICANCE * (PERMUTATIONS + 1) as f64).ceil() as usize;
    let mut shuffled = values.to_vec();
    let mut as_high = 1;
    for _ in 0..PERMUTATIONS {
        for segment in bounds.windows(2) {
            shuffle(&mut shuffled[segment[0]..segment[1]], rng);
        }
        let score = best_split(&shuffled, bounds).map_or(0.0, |s| s.score);
        if score >= observed {
            as_high += 1;
            if as_high >= enough_to_fail {
                break;
            }
        }
    }
    as_high as f64 / (PERMUTATIONS + 1) as f64
}

/// Fisher-Yates.
fn shuffle(values: &mut [f64], rng: &mut WyRand) {
    for i in (1..values.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        values.swap(i, j);
    }
}

/// Each cut with the means of the segments on either side of it.
fn described(values: &[f64], cuts: &[(usize, f64)]) -> Vec<ChangePoint> {
    let bounds = boundaries(values.len(), cuts);
    let mean = |range: &[usize]| {
        let part = &values[range[0]..range[1]];
        part.iter().sum::<f64>() / part.len() as f64
    };
    cuts.iter()
        .zip(bounds.windows(3))
        .map(|(&(index, p_value), around)| {
            let (before, after) = (mean(&around[..2]), mean(&around[1..]));
            ChangePoint {
                index,
                mean_before: before,
                mean_after: after,
                relative_change: (before != 0.0).then(|| after / before - 1.0),
                p_value,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `len` values around `mean`, normally spread with `sd`.
    fn noise(rng: &mut WyRand, len: usize, mean: f64, sd: f64) -> Vec<f64> {
        (0..len)
            .map(|_| {
                let u1 = rng.unit().max(f64::MIN_POSITIVE);
                let normal = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * rng.unit()).cos();
                mean + sd * normal
            })
            .collect()
    }

    #[test]
    fn a_step_is_found_where_it_is_with_its_size() {
        let mut rng = WyRand::new(1);
        let mut values = noise(&mut rng, 15, 100.0, 2.0);
        values.extend(noise(&mut rng, 15, 77.0, 2.0));
        let found = find(&values).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        let change = &found[0];
        assert_eq!(change.index, 15);
        let relative = change.relative_change.unwrap();
        assert!((relative + 0.23).abs() < 0.02, "{change:?}");
        assert!((change.mean_before - 100.0).abs() < 2.0, "{change:?}");
        assert!(change.p_value < 0.002, "{change:?}");
    }

    #[test]
    fn two_steps_are_both_found_with_the_means_between_them() {
        let mut rng = WyRand::new(2);
        let mut values = noise(&mut rng, 12, 50.0, 1.0);
        values.extend(noise(&mut rng, 10, 80.0, 1.0));
        values.extend(noise(&mut rng, 12, 60.0, 1.0));
        let found = find(&values).unwrap();
        let indexes: Vec<usize> = found.iter().map(|c| c.index).collect();
        assert_eq!(indexes, [12, 22]);
        assert!((found[0].mean_after - 80.0).abs() < 1.0, "{found:?}");
        assert!((found[1].mean_before - 80.0).abs() < 1.0, "{found:?}");
        assert!((found[1].mean_after - 60.0).abs() < 1.0, "{found:?}");
    }

    #[test]
    fn noise_alone_shows_a_change_in_at_most_5_of_100_series() {
        let false_alarms = (0..100)
            .filter(|&seed| {
                let values = noise(&mut WyRand::new(seed), 30, 100.0, 5.0);
                !find(&values).unwrap().is_empty()
            })
            .count();
        assert!(false_alarms <= 5, "{false_alarms} false alarms in 100");
    }

    #[test]
    fn short_constant_and_not_finite_series() {
        assert!(find(&[]).unwrap().is_empty());
        // A step, but too few values to tell it from chance.
        assert!(find(&[1.0, 1.0, 1.0, 9.0, 9.0]).unwrap().is_empty());
        assert!(find(&[5.0; 40]).unwrap().is_empty());
        let refused = find(&[1.0, 2.0, f64::NAN, 3.0]).unwrap_err();
        assert_eq!(refused.index, 2);
        assert!(find(&[1.0, f64::INFINITY]).is_err());
    }

    #[test]
    fn the_same_series_gives_the_same_p_value() {
        let mut values = vec![10.0, 11.0, 10.5, 9.8, 10.2, 10.1];
        values.extend([12.0, 12.5, 11.9, 12.2, 12.4, 12.1]);
        assert_eq!(find(&values).unwrap(), find(&values).unwrap());
    }

    #[test]
    fn the_incremental_sums_match_the_definition() {
        let x = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0];
        let best = best_in(&x).unwrap();
        let direct = |tau: usize| {
            let (left, right) = x.split_at(tau);
            let sum = |a: &[f64], b: &[f64]| -> f64 {
                a.iter()
                    .flat_map(|p| b.iter().map(move |q| (p - q).abs()))
                    .sum()
            };
            energy(
                left.len(),
                right.len(),
                sum(left, right),
                sum(left, left) / 2.0,
                sum(right, right) / 2.0,
            )
        };
        let brute = (MIN_SEGMENT..=x.len() - MIN_SEGMENT)
            .max_by(|&a, &b| direct(a).total_cmp(&direct(b)))
            .unwrap();
        assert_eq!(best.index, brute);
        assert!((best.score - direct(brute)).abs() < 1e-9);
    }
}

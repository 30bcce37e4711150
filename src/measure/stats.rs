//! Statistics of repeated measurements: mean, sample standard deviation,
//! Student-t confidence intervals, Welch's t-test between two samples, and
//! the ratio of two samples with its confidence interval and test.
//!
//! Repetitions are few (typically 3–10), so every interval uses Student's t
//! with the right degrees of freedom rather than the normal approximation.
//!
//! Two samples of positive figures (times, rates) are compared on the log
//! scale: a storage timing's noise is multiplicative (a flush that stalls
//! doubles a repetition, it does not add a constant) and skewed to the
//! slow side, so the logarithms are nearer to normal with equal-ish
//! spreads, and a ratio — the quantity reports state — is a difference of
//! logarithms. Welch's test on the raw values lets one slow repetition of
//! the faster side inflate the spread until a 14x difference reads as
//! noise; on the logs the same three repetitions decide it.
use statrs::distribution::{ContinuousCDF, Discrete, Hypergeometric, Normal, StudentsT};

/// Two-sided confidence level of every interval in reports.
pub const CONFIDENCE: f64 = 0.95;

/// A first repetition this much worse than the mean of the others (and
/// beyond their own spread) was a warm-up, not a sample like them.
pub const WARM_UP_FRACTION: f64 = 0.1;

/// Repetitions after the first needed to call it a warm-up.
const WARM_UP_OTHERS: usize = 3;

/// Standard deviations of the other repetitions the first must lie beyond.
const WARM_UP_SDS: f64 = 3.0;

/// Significance level of Welch's test: differences with p below it are
/// called significant.
pub const ALPHA: f64 = 0.05;

/// The fewest values of a sample that has a spread: Welch's test and every
/// interval need this many on each side.
pub const MIN_SAMPLE: usize = 2;

/// Whether the first of `values` (in repetition order) is a warm-up: there
/// are at least `WARM_UP_OTHERS` others (fewer have no spread to speak of), it is worse (by `improved`: whether going from
/// the first to a later value is an improvement) than every one of them,
/// and further from their mean than `WARM_UP_FRACTION` of it and than
/// `WARM_UP_SDS` of their standard deviations.
pub fn first_is_warm_up(values: &[f64], improved: impl Fn(f64, f64) -> bool) -> bool {
    let Some((&first, rest)) = values.split_first() else {
        return false;
    };
    let Some(others) = Stats::of(rest).filter(|s| s.n >= WARM_UP_OTHERS && s.n == rest.len())
    else {
        return false;
    };
    let gap = (first - others.mean).abs();
    rest.iter().all(|&later| improved(first, later))
        && gap > WARM_UP_FRACTION * others.mean.abs()
        && gap > WARM_UP_SDS * others.sd
}

/// Summary statistics of one metric's repeated values.
#[derive(Debug, Clone, PartialEq)]
pub struct Stats {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n - 1 in the denominator); 0 when n = 1.
    pub sd: f64,
    /// 95 % confidence interval of the mean (Student t, n - 1 df); None
    /// when n < 2.
    pub ci95: Option<(f64, f64)>,
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

impl Stats {
    /// Statistics of `values`; None when there is no finite value. Values
    /// that are not finite (NaN, ±inf) are left out.
    pub fn of(values: &[f64]) -> Option<Stats> {
        let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let sd = sample_variance(&sorted, mean).sqrt();
        let ci95 = (n >= 2).then(|| {
            let half = t_quantile(0.5 + CONFIDENCE / 2.0, (n - 1) as f64) * sd / (n as f64).sqrt();
            (mean - half, mean + half)
        });
        Some(Stats {
            n,
            mean,
            sd,
            ci95,
            min: sorted[0],
            median: median_of_sorted(&sorted),
            max: sorted[n - 1],
        })
    }

    /// Half the width of the confidence interval (the "± x" of reports).
    pub fn ci95_half_width(&self) -> Option<f64> {
        self.ci95.map(|(low, high)| (high - low) / 2.0)
    }

    /// Standard error of the mean.
    fn standard_error(&self) -> f64 {
        self.sd / (self.n as f64).sqrt()
    }
}

/// Sum of squared deviations / (n - 1); 0 for a single value.
fn sample_variance(values: &[f64], mean: f64) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    let squares: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
    squares / (values.len() - 1) as f64
}

fn median_of_sorted(sorted: &[f64]) -> f64 {
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// The quantile of Student's t distribution with `df` degrees of freedom at
/// cumulative probability `p` (e.g. `t_quantile(0.975, 4.0)` = 2.776).
/// An infinite `df` gives the normal quantile.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    // statrs' Student t does not converge for infinite df: use the limit.
    if df.is_infinite() {
        return Normal::standard().inverse_cdf(p);
    }
    match StudentsT::new(0.0, 1.0, df) {
        Ok(t) => t.inverse_cdf(p),
        Err(_) => f64::NAN,
    }
}

/// Two-sided tail probability of Student's t: P(|T| >= |t|).
fn two_sided_p(t: f64, df: f64) -> f64 {
    match StudentsT::new(0.0, 1.0, df) {
        Ok(dist) => (2.0 * dist.sf(t.abs())).min(1.0),
        Err(_) => f64::NAN,
    }
}

/// Welch's unequal-variance t-test of two samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    /// (mean(b) - mean(a)) / standard error of the difference.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

impl Welch {
    pub fn significant(&self) -> bool {
        self.p < ALPHA
    }
}

/// Welch's t-test of `b` against `a`; None unless both have at least
/// [`MIN_SAMPLE`] finite values.
///
/// When both samples have no spread the t statistic is undefined; we then
/// report p = 1 for equal means and p = 0 for different means (the samples
/// are as different as a sample can show), with t = 0 or ±inf.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    let (a, b) = (Stats::of(a)?, Stats::of(b)?);
    if a.n < MIN_SAMPLE || b.n < MIN_SAMPLE {
        return None;
    }
    let diff = b.mean - a.mean;
    let (va, vb) = (a.standard_error().powi(2), b.standard_error().powi(2));
    let se = (va + vb).sqrt();
    if se == 0.0 {
        let df = (a.n + b.n - 2) as f64;
        let (t, p) = match diff {
            0.0 => (0.0, 1.0),
            d => (d.signum() * f64::INFINITY, 0.0),
        };
        return Some(Welch { t, df, p });
    }
    let df = satterthwaite_df(&[(va, a.n), (vb, b.n)]);
    let t = diff / se;
    Some(Welch {
        t,
        df,
        p: two_sided_p(t, df),
    })
}

/// The two-sided p-value of Student's t-test of `b` against `a` with their
/// variances pooled, on the logarithms when every value of both is
/// positive (the scale [`ratio`] compares them on), else on the values;
/// None unless both have at least [`MIN_SAMPLE`] finite values.
///
/// The test of "one distribution on both sides" (a series with no change
/// point): the two sides then have one spread, and the pooled t has
/// exactly Student's distribution with n − 2 degrees of freedom, however
/// few the values. Welch's approximation is liberal when one side has 2
/// values, in the tails a test read with others is decided in. As `welch`,
/// p is 0 or 1 when neither side has any spread.
pub fn pooled_p(a: &[f64], b: &[f64]) -> Option<f64> {
    let (a, b) = match (logarithms(a), logarithms(b)) {
        (Some(log_a), Some(log_b)) => (Stats::of(&log_a)?, Stats::of(&log_b)?),
        _ => (Stats::of(a)?, Stats::of(b)?),
    };
    if a.n < MIN_SAMPLE || b.n < MIN_SAMPLE {
        return None;
    }
    let df = (a.n + b.n - 2) as f64;
    let squares = (a.n - 1) as f64 * a.sd.powi(2) + (b.n - 1) as f64 * b.sd.powi(2);
    let se = (squares / df * (1.0 / a.n as f64 + 1.0 / b.n as f64)).sqrt();
    let diff = b.mean - a.mean;
    Some(match se {
        0.0 if diff == 0.0 => 1.0,
        0.0 => 0.0,
        se => two_sided_p(diff / se, df),
    })
}

/// Welch–Satterthwaite degrees of freedom of a sum of variance terms, each
/// given as (variance term, sample size it came from). Terms of zero
/// variance contribute no uncertainty and no degrees of freedom.
fn satterthwaite_df(terms: &[(f64, usize)]) -> f64 {
    let total: f64 = terms.iter().map(|(v, _)| v).sum();
    let denominator: f64 = terms
        .iter()
        .filter(|(v, _)| *v > 0.0)
        .map(|(v, n)| v * v / (*n as f64 - 1.0))
        .sum();
    total * total / denominator
}

/// Which of several tests stay significant when they are read together
/// (Benjamini–Hochberg, false discovery rate `q`): of 30 metrics compared
/// at p < 0.05, one or two differ by chance alone, so a verdict that counts
/// differences needs the correction a single table cell does not. The k
/// smallest p-values are kept, k the largest rank with p(k) <= k/m * q.
pub fn benjamini_hochberg(p_values: &[f64], q: f64) -> Vec<bool> {
    let threshold = benjamini_hochberg_threshold(p_values, q);
    p_values
        .iter()
        .map(|&p| threshold.is_some_and(|t| p <= t))
        .collect()
}

/// The largest p-value Benjamini–Hochberg keeps among `p_values` at FDR
/// `q` (None when it keeps none): a p-value is significant, read with the
/// family, exactly when it is at most this. A figure outside the family
/// (another view of one of its metrics) is judged by the same line.
pub fn benjamini_hochberg_threshold(p_values: &[f64], q: f64) -> Option<f64> {
    let m = p_values.len();
    let mut sorted = p_values.to_vec();
    sorted.sort_by(f64::total_cmp);
    (1..=m)
        .rev()
        .find(|&k| sorted[k - 1] <= k as f64 / m as f64 * q)
        .map(|k| sorted[k - 1])
}

/// The ratio of sample `b` to sample `a`, with its confidence interval and
/// the two-sided p-value of the test that it is 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratio {
    pub ratio: f64,
    /// 95 % interval of the ratio; None when a sample has fewer than two
    /// values.
    pub ci95: Option<RatioInterval>,
    /// Welch's p-value, on the scale the ratio was taken on; None when a
    /// sample has fewer than two values. The interval excludes 1 exactly
    /// when p < `ALPHA`.
    pub p: Option<f64>,
}

/// A 95 % interval of a ratio of means of positive quantities.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RatioInterval {
    /// Both ends finite and positive, lower first.
    Bounded(f64, f64),
    /// Fieller's set is unbounded (the baseline's mean is not
    /// significantly different from 0) or reaches 0 or below (nor is the
    /// other mean): no bounds a ratio of positive quantities could take,
    /// so reports say "unbounded" rather than print impossible numbers.
    Unbounded,
}

impl RatioInterval {
    /// The bounds, if any.
    pub fn bounds(self) -> Option<(f64, f64)> {
        match self {
            RatioInterval::Bounded(low, high) => Some((low, high)),
            RatioInterval::Unbounded => None,
        }
    }
}

/// Sample `b` against sample `a` as a ratio. When every value of both is
/// positive, on the log scale (see the module's comment): the ratio of the
/// geometric means, its interval exp(d ± t·se) and Welch's test on the
/// logarithms, d the difference of the mean logarithms. Otherwise (a zero
/// count among the values) the ratio of the arithmetic means with
/// Fieller's interval and Welch's test on the raw values (`arithmetic_ratio`).
/// None when a sample is empty or a mean is not a positive quantity's.
pub fn ratio(a: &[f64], b: &[f64]) -> Option<Ratio> {
    match (logarithms(a), logarithms(b)) {
        (Some(log_a), Some(log_b)) => geometric_ratio(&log_a, &log_b),
        _ => arithmetic_ratio(a, b),
    }
}

/// The natural logarithms of the finite values, when there is at least one
/// and every one of them is positive.
fn logarithms(values: &[f64]) -> Option<Vec<f64>> {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let positive = !finite.is_empty() && finite.iter().all(|v| *v > 0.0);
    positive.then(|| finite.iter().map(|v| v.ln()).collect())
}

/// exp(mean(log_b) − mean(log_a)), with the interval and p-value of
/// Welch's test of the logarithms. With no spread on either side the
/// interval is the ratio itself, and p is 0 or 1 as `welch` says.
fn geometric_ratio(log_a: &[f64], log_b: &[f64]) -> Option<Ratio> {
    let (sa, sb) = (Stats::of(log_a)?, Stats::of(log_b)?);
    let difference = sb.mean - sa.mean;
    let test = welch(log_a, log_b);
    let ci95 = test.map(|w| {
        let se = (sa.standard_error().powi(2) + sb.standard_error().powi(2)).sqrt();
        let half = match se {
            0.0 => 0.0,
            se => t_quantile(0.5 + CONFIDENCE / 2.0, w.df) * se,
        };
        RatioInterval::Bounded((difference - half).exp(), (difference + half).exp())
    });
    Some(Ratio {
        ratio: difference.exp(),
        ci95,
        p: test.map(|w| w.p),
    })
}

/// mean(b) / mean(a) and its 95 % confidence interval by Fieller's
/// theorem: the ratios ρ for which b̄ − ρ·ā is not significantly different
/// from 0, i.e. (b̄ − ρā)² ≤ t²·(se_b² + ρ²·se_a²), with t from Welch's
/// degrees of freedom. At ρ = 1 that is exactly Welch's test, so the
/// interval excludes 1 if and only if `welch` calls the difference
/// significant: a table never shows a significant ratio whose interval
/// contains 1. The interval is asymmetric around the ratio, as ratios are.
/// None when a sample is empty or a mean is not a positive quantity's
/// (the baseline's 0 or below, the other's below 0): a ratio of such means
/// would be printed as an impossible speed-up.
fn arithmetic_ratio(a: &[f64], b: &[f64]) -> Option<Ratio> {
    let (sa, sb) = (Stats::of(a)?, Stats::of(b)?);
    if sa.mean <= 0.0 || sb.mean < 0.0 {
        return None;
    }
    let test = welch(a, b);
    Some(Ratio {
        ratio: sb.mean / sa.mean,
        ci95: test.map(|w| fieller(&sa, &sb, w.df)),
        p: test.map(|w| w.p),
    })
}

/// Fieller's interval of mean(b) / mean(a) with `df` degrees of freedom.
fn fieller(a: &Stats, b: &Stats, df: f64) -> RatioInterval {
    let (va, vb) = (a.standard_error().powi(2), b.standard_error().powi(2));
    let t2 = t_quantile(0.5 + CONFIDENCE / 2.0, df).powi(2);
    // (ā² − t²va)·ρ² − 2āb̄·ρ + (b̄² − t²vb) ≤ 0: bounded only when the
    // leading coefficient is positive (ā significantly different from 0).
    let leading = a.mean * a.mean - t2 * va;
    if leading <= 0.0 || !leading.is_finite() {
        return RatioInterval::Unbounded;
    }
    let discriminant = a.mean * a.mean * vb + b.mean * b.mean * va - t2 * va * vb;
    let half = t2.sqrt() * discriminant.max(0.0).sqrt();
    let centre = a.mean * b.mean;
    let (low, high) = ((centre - half) / leading, (centre + half) / leading);
    match (low.min(high), low.max(high)) {
        (low, _) if low <= 0.0 => RatioInterval::Unbounded,
        (low, high) => RatioInterval::Bounded(low, high),
    }
}

/// Fisher's exact test of two proportions, `a` of `n` against `b` of
/// `m` (power cuts that lost data, of those made): the two-sided p-value,
/// the probability under equal rates of a table at most as likely as the
/// one seen. Exact, so it holds for the small counts crash tests give
/// (0 of 200 against 24 of 200) where a normal approximation does not.
pub fn fisher_exact(a: u64, n: u64, b: u64, m: u64) -> Option<f64> {
    let hits = a + b;
    let table = Hypergeometric::new(n + m, hits, n).ok()?;
    let seen = table.pmf(a);
    let low = hits.saturating_sub(m);
    let high = hits.min(n);
    // A relative tolerance: tables as likely as the one seen count.
    let p: f64 = (low..=high)
        .map(|k| table.pmf(k))
        .filter(|&q| q <= seen * (1.0 + 1e-7))
        .sum();
    Some(p.min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_first_repetition_is_a_warm_up_in_either_direction() {
        let faster = |a: f64, b: f64| b > a;
        let quicker = |a: f64, b: f64| b < a;
        assert!(first_is_warm_up(&[60.0, 100.0, 101.0, 99.0], faster));
        assert!(first_is_warm_up(&[14.0, 10.0, 10.2, 9.9], quicker));
        // Two others have no spread to weigh the first against.
        assert!(!first_is_warm_up(&[60.0, 100.0, 101.0], faster));
        // The same first value where higher is worse is no warm-up.
        assert!(!first_is_warm_up(&[60.0, 100.0, 101.0, 99.0], quicker));
        // Within 10 % of the others, or within their spread: a sample.
        assert!(!first_is_warm_up(&[95.0, 100.0, 101.0, 99.0], faster));
        assert!(!first_is_warm_up(&[60.0, 100.0, 140.0, 70.0], faster));
        // Not worse than every later one.
        assert!(!first_is_warm_up(&[60.0, 100.0, 101.0, 59.0], faster));
        // Too few repetitions to call it.
        assert!(!first_is_warm_up(&[60.0, 100.0], faster));
        assert!(!first_is_warm_up(&[], faster));
        assert!(!first_is_warm_up(&[60.0, 100.0, f64::NAN], faster));
    }

    fn close(actual: f64, expected: f64, tolerance: f64) {
        assert!(
            (actual - expected).abs() <= tolerance,
            "{actual} is not within {tolerance} of {expected}"
        );
    }

    #[test]
    fn benjamini_hochberg_keeps_the_discoveries_a_ranked_threshold_allows() {
        // m = 5, q = 0.05: thresholds 0.01, 0.02, 0.03, 0.04, 0.05. The
        // third smallest (0.028 <= 0.03) is the largest rank that passes,
        // so the three smallest are kept although 0.011 > 0.01; 0.045
        // (rank 4, above 0.04) is not.
        let p = [0.045, 0.015, 0.2, 0.028, 0.011];
        assert_eq!(
            benjamini_hochberg(&p, 0.05),
            [false, true, false, true, true]
        );
        // A lone chance p = 0.03 among 30 metrics is no discovery.
        let mut many = vec![0.5; 30];
        many[7] = 0.03;
        assert!(benjamini_hochberg(&many, 0.05).iter().all(|s| !s));
        assert!(benjamini_hochberg(&[], 0.05).is_empty());
    }

    #[test]
    fn no_ratio_of_means_that_are_not_positive() {
        assert!(ratio(&[-1.0, -2.0], &[1.0, 2.0]).is_none());
        assert!(ratio(&[0.0, 0.0], &[1.0, 2.0]).is_none());
        assert!(ratio(&[1.0, 2.0], &[-1.0, -3.0]).is_none());
        assert_eq!(ratio(&[1.0, 3.0], &[0.0, 0.0]).map(|r| r.ratio), Some(0.0));
    }

    #[test]
    fn t_quantiles_match_printed_tables() {
        // Two-sided 95 % critical values, e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2.
        for (df, expected) in [
            (1.0, 12.706),
            (2.0, 4.303),
            (4.0, 2.776),
            (9.0, 2.262),
            (30.0, 2.042),
        ] {
            close(t_quantile(0.975, df), expected, 0.0005);
        }
        close(t_quantile(0.95, 10.0), 1.812, 0.0005);
        close(t_quantile(0.025, 4.0), -2.776, 0.0005);
        close(t_quantile(0.975, f64::INFINITY), 1.95996, 0.00001);
    }

    #[test]
    fn stats_of_a_known_sample() {
        let s = Stats::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(
            (s.n, s.mean, s.min, s.median, s.max),
            (8, 5.0, 2.0, 4.5, 9.0)
        );
        // Sum of squares 32, / 7.
        close(s.sd, (32.0f64 / 7.0).sqrt(), 1e-12);
        let half = 2.364624 * s.sd / 8f64.sqrt();
        let (low, high) = s.ci95.unwrap();
        close(low, 5.0 - half, 1e-5);
        close(high, 5.0 + half, 1e-5);
    }

    #[test]
    fn one_value_has_no_interval_and_no_spread() {
        let s = Stats::of(&[3.5]).unwrap();
        assert_eq!((s.n, s.sd, s.ci95, s.median), (1, 0.0, None, 3.5));
        assert!(Stats::of(&[]).is_none());
        assert!(Stats::of(&[f64::NAN]).is_none());
        assert_eq!(Stats::of(&[1.0, f64::NAN, 3.0]).unwrap().n, 2);
    }

    #[test]
    fn welch_matches_scipy() {
        // scipy 1.x: stats.ttest_ind(b, a, equal_var=False) gives
        // t = 1.3084242851737211, p = 0.23303912114085726, df = 6.829566380784675.
        let a = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9];
        let b = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2];
        let w = welch(&a, &b).unwrap();
        close(w.t, 1.3084242851737211, 1e-9);
        close(w.df, 6.829566380784675, 1e-9);
        close(w.p, 0.23303912114085726, 1e-7);
        assert!(!w.significant());
        // t = 5.497816593886472, p = 0.0033311922652668417, df = 4.682690645978267.
        let w = welch(&[101.2, 98.7, 103.5], &[110.4, 108.9, 115.0, 112.2]).unwrap();
        close(w.t, 5.497816593886472, 1e-9);
        close(w.df, 4.682690645978267, 1e-9);
        close(w.p, 0.0033311922652668417, 1e-8);
        assert!(w.significant());
    }

    /// Student's t with pooled variance, by hand (mpmath: t from the
    /// pooled variance, p the regularized incomplete beta
    /// I(df/(df+t²); df/2, 1/2)).
    #[test]
    fn pooled_p_is_students_test_on_the_scale_ratio_takes() {
        // Positive: on the logarithms, t = 1.68107648300306, df = 14.
        let a = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9];
        let b = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2];
        close(pooled_p(&a, &b).unwrap(), 0.114911995150085, 1e-9);
        // A zero: on the values, t = √6, df = 4.
        close(
            pooled_p(&[0.0, 2.0, 4.0], &[4.0, 6.0, 8.0]).unwrap(),
            0.0704839969102199,
            1e-9,
        );
        // Two values a side decide a large step: t = −654.5, df = 2.
        let p = pooled_p(&[100.0, 101.0], &[1.0, 1.01]).unwrap();
        assert!((p / 2.33427574787349e-6 - 1.0).abs() < 1e-6, "{p}");
        assert_eq!(pooled_p(&[2.0, 2.0], &[3.0, 3.0]), Some(0.0));
        assert_eq!(pooled_p(&[2.0, 2.0], &[2.0, 2.0]), Some(1.0));
        assert_eq!(pooled_p(&[2.0], &[2.0, 3.0]), None);
    }

    #[test]
    fn welch_with_no_spread() {
        let same = welch(&[2.0, 2.0], &[2.0, 2.0, 2.0]).unwrap();
        assert_eq!((same.t, same.p), (0.0, 1.0));
        let apart = welch(&[2.0, 2.0], &[3.0, 3.0]).unwrap();
        assert_eq!((apart.t, apart.p), (f64::INFINITY, 0.0));
        // One sample without spread: the df are those of the other sample
        // (scipy: t = 3.464101615137755, p = 0.07417990022744854, df = 2).
        let one = welch(&[2.0, 2.0, 2.0], &[3.0, 4.0, 5.0]).unwrap();
        close(one.df, 2.0, 1e-12);
        close(one.t, 3.464101615137755, 1e-12);
        close(one.p, 0.07417990022744854, 1e-8);
        assert!(welch(&[1.0], &[1.0, 2.0]).is_none());
    }

    #[test]
    fn ratio_interval_by_fieller() {
        // By hand (Python): ā = 100, b̄ = 200, se_a² = 100/3, se_b² = 400/3,
        // Welch df = 2.941176..., t.ppf(0.975, df) = 3.21876..., roots of
        // (ā² − t²se_a²)ρ² − 2āb̄ρ + (b̄² − t²se_b²) = 0.
        let r = arithmetic_ratio(&[100.0, 110.0, 90.0], &[200.0, 220.0, 180.0]).unwrap();
        close(r.ratio, 2.0, 1e-12);
        let (low, high) = r.ci95.unwrap().bounds().unwrap();
        close(low, 1.5318382807681348, 1e-6);
        close(high, 2.611241702351383, 1e-6);
        assert_eq!(ratio(&[5.0], &[10.0]).unwrap().ci95, None);
        assert!(ratio(&[0.0, 0.0], &[1.0, 2.0]).is_none());
    }

    #[test]
    fn positive_samples_are_compared_on_the_log_scale() {
        // scipy: ttest_ind(log(b), log(a), equal_var=False) gives
        // t = 5.928837544168082, p = 0.0042748273662385145,
        // df = 3.933819389612987; exp(d ± t.ppf(0.975, df)·se) =
        // 3.97480344846782 … 46.593149044064 around 13.60876958050656.
        // On the raw values the same samples give p = 0.111.
        let (a, b) = ([1500.0, 2400.0, 4100.0], [20000.0, 30000.0, 62000.0]);
        let r = ratio(&a, &b).unwrap();
        close(r.ratio, 13.60876958050656, 1e-9);
        close(r.p.unwrap(), 0.0042748273662385145, 1e-8);
        let (low, high) = r.ci95.unwrap().bounds().unwrap();
        close(low, 3.97480344846782, 1e-6);
        close(high, 46.593149044064, 1e-5);
        close(welch(&a, &b).unwrap().p, 0.11107249430144897, 1e-6);
    }

    #[test]
    fn a_zero_among_the_values_falls_back_to_the_means() {
        let r = ratio(&[0.0, 2.0, 4.0], &[4.0, 6.0, 8.0]).unwrap();
        close(r.ratio, 3.0, 1e-12);
        close(
            r.p.unwrap(),
            welch(&[0.0, 2.0, 4.0], &[4.0, 6.0, 8.0]).unwrap().p,
            1e-12,
        );
    }

    #[test]
    fn figures_without_spread_have_the_ratio_for_interval() {
        let r = ratio(&[2.0, 2.0], &[3.0, 3.0]).unwrap();
        close(r.ratio, 1.5, 1e-12);
        assert_eq!(r.p, Some(0.0));
        let (low, high) = r.ci95.unwrap().bounds().unwrap();
        close(low, 1.5, 1e-12);
        close(high, 1.5, 1e-12);
    }

    #[test]
    fn ratio_interval_is_unbounded_when_a_mean_could_be_zero() {
        // The baseline's own interval contains 0: Fieller's set is not an
        // interval (the whole line, or all but a gap).
        let r = arithmetic_ratio(&[0.2, 1.0, 3.0], &[0.8, 1.0, 1.3]).unwrap();
        assert_eq!(r.ci95, Some(RatioInterval::Unbounded));
        assert_eq!(
            ratio(&[-1.0, 2.0], &[1.0, 2.0]).unwrap().ci95,
            Some(RatioInterval::Unbounded)
        );
        // The baseline is sure, the other mean could be 0: the lower end
        // would be negative (reports printed intervals like `-0.14 to 0.41`),
        // impossible for a ratio of positive quantities.
        let r = arithmetic_ratio(&[100.0, 110.0, 90.0], &[1.0, 10.0, 30.0]).unwrap();
        assert_eq!(r.ci95, Some(RatioInterval::Unbounded));
    }

    #[test]
    fn ratio_interval_excludes_one_exactly_when_the_test_is_significant() {
        let base = [11710.0, 8000.0, 15400.0];
        for shift in [0.0, 1000.0, 3000.0, 5000.0, 6000.0, 7000.0, 9000.0, 20000.0] {
            let other: Vec<f64> = [18604.0, 16800.0, 20400.0]
                .iter()
                .map(|v| v - 6894.0 + shift)
                .collect();
            for r in [
                ratio(&base, &other).unwrap(),
                arithmetic_ratio(&base, &other).unwrap(),
            ] {
                let (low, high) = r.ci95.unwrap().bounds().unwrap();
                let excludes_one = !(low..=high).contains(&1.0);
                assert_eq!(excludes_one, r.p.unwrap() < ALPHA, "shift {shift}");
            }
        }
    }

    /// Against scipy.stats.fisher_exact on the same tables.
    #[test]
    fn fishers_exact_test_gives_scipys_p_values() {
        // fisher_exact([[0, 200], [24, 176]]): p = 5.724485306203999e-08
        let p = fisher_exact(0, 200, 24, 200).unwrap();
        assert!((p / 5.724485306203999e-08 - 1.0).abs() < 1e-6, "{p}");
        // fisher_exact([[3, 7], [1, 9]]): p = 0.5820433436532508
        assert!((fisher_exact(3, 10, 1, 10).unwrap() - 0.5820).abs() < 1e-4);
        // Equal counts: nothing to tell.
        assert!((fisher_exact(5, 100, 5, 100).unwrap() - 1.0).abs() < 1e-9);
        assert!(fisher_exact(0, 100, 0, 100).unwrap() > 0.999);
    }
}

//! A target's speed-up per class (write, read, metadata): the geometric
//! mean of its findings' speed-ups, with an approximate interval.
use super::finding::Finding;
use crate::measure::stats::{CONFIDENCE, RatioInterval, t_quantile};
use crate::report::summary::Class;

/// The geometric mean speed-up of a class's headline metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassSpeedup {
    pub class: Class,
    pub speedup: f64,
    /// Approximate 95 % interval (log scale: the metrics' intervals
    /// combined as independent errors); None without repetitions.
    pub ci95: Option<RatioInterval>,
    pub metrics: usize,
}

/// Per class, the geometric mean of the metrics' speed-ups; its interval
/// when every metric of the class has a bounded one.
pub(super) fn class_speedups(findings: &[Finding]) -> Vec<ClassSpeedup> {
    [Class::Write, Class::Read, Class::Metadata]
        .into_iter()
        .filter_map(|class| {
            let members: Vec<&Finding> =
                findings.iter().filter(|f| f.class == Some(class)).collect();
            class_speedup(class, &members)
        })
        .collect()
}

fn class_speedup(class: Class, members: &[&Finding]) -> Option<ClassSpeedup> {
    let logs: Vec<f64> = members
        .iter()
        .map(|f| f.speedup())
        .filter(|s| *s > 0.0 && s.is_finite())
        .map(f64::ln)
        .collect();
    if logs.is_empty() || logs.len() != members.len() {
        return None;
    }
    let count = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / count;
    Some(ClassSpeedup {
        class,
        speedup: mean.exp(),
        ci95: combined_interval(members, mean, count),
        metrics: members.len(),
    })
}

/// The interval of a mean of log speed-ups: each metric's interval read as
/// ± z standard errors on the log scale, the errors combined as independent.
fn combined_interval(members: &[&Finding], mean: f64, count: f64) -> Option<RatioInterval> {
    let z = t_quantile(0.5 + CONFIDENCE / 2.0, f64::INFINITY);
    let mut variance = 0.0;
    for finding in members {
        match finding.speedup_interval()? {
            RatioInterval::Bounded(low, high) => {
                let se = (high.ln() - low.ln()) / (2.0 * z);
                variance += se * se;
            }
            RatioInterval::Unbounded => return Some(RatioInterval::Unbounded),
        }
    }
    let half = z * variance.sqrt() / count;
    Some(RatioInterval::Bounded(
        (mean - half).exp(),
        (mean + half).exp(),
    ))
}

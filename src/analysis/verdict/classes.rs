//! A target's speed-up per class (write, read, metadata): the geometric
//! mean of its findings' speed-ups, with an approximate interval, where
//! that mean stands for every member; else what was decided in the class.
use super::finding::{Finding, larger_first, times};
use crate::analysis::summary::Class;
use crate::measure::stats::{CONFIDENCE, RatioInterval, t_quantile};

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

/// Up to this many decided differences a class line names.
const CLASS_NAMED: usize = 2;

/// Per class, what the verdict can say of it. The geometric mean with
/// its interval only where it stands for every member: all decided the
/// same way, or none tested (one repetition: the ratio alone). Else the
/// decided differences by name, then how many are undecided or the same:
/// a mean of 1.19x (no difference) and 11.5x (decided) is 3.7x, a figure
/// no workload measured.
pub(super) fn class_lines(findings: &[Finding], min_effect: f64) -> Vec<String> {
    class_speedups(findings)
        .iter()
        .map(|speedup| {
            let members: Vec<&Finding> = findings
                .iter()
                .filter(|f| f.class == Some(speedup.class))
                .collect();
            match mean_stands_for_all(&members, min_effect) {
                true => mean_text(speedup),
                false => decided_text(speedup.class, &members, min_effect),
            }
        })
        .collect()
}

/// Whether the class mean says what each member says: every member
/// decided the same way, or none tested.
fn mean_stands_for_all(members: &[&Finding], min_effect: f64) -> bool {
    let decided = |better: bool| {
        members
            .iter()
            .all(|f| f.counts(min_effect) && (f.speedup() >= 1.0) == better)
    };
    members.iter().all(|f| !f.tested()) || decided(true) || decided(false)
}

/// "write 7.6x (5.1x–9.8x)".
fn mean_text(c: &ClassSpeedup) -> String {
    let interval = match c.ci95 {
        Some(RatioInterval::Bounded(low, high)) => format!(" ({}–{})", times(low), times(high)),
        Some(RatioInterval::Unbounded) => format!(" ({})", crate::analysis::UNBOUNDED),
        None => String::new(),
    };
    format!("{} {}{interval}", c.class.as_str(), times(c.speedup))
}

/// "write: 11x faster sync-write-4k, no difference in 1".
fn decided_text(class: Class, members: &[&Finding], min_effect: f64) -> String {
    let mut decided: Vec<&Finding> = members
        .iter()
        .copied()
        .filter(|f| f.counts(min_effect))
        .collect();
    decided.sort_by(|a, b| larger_first(a, b));
    let mut parts: Vec<String> = decided
        .iter()
        .take(CLASS_NAMED)
        .map(|f| f.phrase())
        .collect();
    if decided.len() > CLASS_NAMED {
        parts.push(format!("{} more decided", decided.len() - CLASS_NAMED));
    }
    let undecided = members.iter().filter(|f| f.undecided()).count();
    if undecided > 0 {
        parts.push(format!("{undecided} not yet decided"));
    }
    let same = members
        .iter()
        .filter(|f| f.tested() && !f.counts(min_effect) && !f.undecided())
        .count();
    if same > 0 {
        parts.push(format!("no difference in {same}"));
    }
    format!("{}: {}", class.as_str(), parts.join(", "))
}

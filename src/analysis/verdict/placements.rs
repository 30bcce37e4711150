//! Seed 000's answer first: where a run compares placements of a sync log
//! (`report::placement`), the verdict leads with them. Per target and
//! group, each placement against the workload without a log, by the same
//! test and the same words as targets against the baseline (Welch on the
//! logarithms, Benjamini–Hochberg over the placement's figures, the
//! minimum effect), each decided difference with its interval.
use super::{Naming, Safety, TargetVerdict, finding_of};
use crate::analysis::names::words;
use crate::analysis::placement::{Member, compared_groups};
use crate::analysis::summary::{Cell, MetricSummary, Summary};
use crate::result::RunResult;

/// One group of placements on one target, as the verdict says it.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacementVerdict {
    /// "postmark on xfs-4k-sectors against pm-no-log (no sync log)".
    pub heading: String,
    /// Per placement: "pm-log-target (log on the target): 26x slower
    /// transactions (24x–29x), …".
    pub lines: Vec<String>,
}

/// The placement verdicts of a run; empty where it compares none.
pub fn placement_verdicts(
    run: &RunResult,
    summary: &Summary,
    min_effect: f64,
) -> Vec<PlacementVerdict> {
    let mut verdicts = Vec::new();
    for (group, columns) in compared_groups(run, summary) {
        let Some((reference, placed)) = group.split_first() else {
            continue;
        };
        for (t, target) in summary.targets.iter().enumerate() {
            let lines: Vec<String> = placed
                .iter()
                .filter_map(|member| line(reference, member, &columns, t, min_effect))
                .collect();
            if !lines.is_empty() {
                verdicts.push(PlacementVerdict {
                    heading: format!(
                        "{} on {target} against {} ({})",
                        reference.workload.kind, reference.workload.name, reference.placement
                    ),
                    lines,
                });
            }
        }
    }
    verdicts
}

/// What one placement did against the reference on target `t`, or None
/// where they share no figure.
fn line(
    reference: &Member,
    member: &Member,
    columns: &[&MetricSummary],
    t: usize,
    min_effect: f64,
) -> Option<String> {
    let findings: Vec<_> = columns
        .iter()
        .filter_map(|column| {
            finding_of(
                words(&column.name),
                column,
                None,
                cell_of(reference, &column.name, t)?,
                cell_of(member, &column.name, t)?,
            )
        })
        .collect();
    let subject = format!(
        "{} ({})",
        member.workload.name,
        log_phrase(&member.placement)
    );
    // A placement's figures are few: every decided one is named.
    let every = Naming {
        faster: usize::MAX,
        slower: usize::MAX,
    };
    let verdict = TargetVerdict::judge_naming(
        &subject,
        &reference.workload.name,
        &findings,
        Safety::default(),
        min_effect,
        every,
    );
    match verdict.sentence {
        Some(sentence) => Some(sentence),
        None if findings.is_empty() => None,
        None => Some(format!("{subject}: {}.", verdict.counts_text())),
    }
}

/// A member's cell of metric `name` on target `t`.
fn cell_of<'s>(member: &Member<'s>, name: &str, t: usize) -> Option<&'s Cell> {
    let metric = member.workload.metrics.iter().find(|m| m.name == name)?;
    metric.cells.get(t)?.as_ref()
}

/// "log on the target", "log on the target, never synced", "log in
/// /mnt/ram, batch 10", from a placement's label
/// (`placement::placement_label`).
fn log_phrase(placement: &str) -> String {
    let (place, rest) = placement.split_once(", ").unwrap_or((placement, ""));
    let place = match place {
        "target" => "log on the target".to_string(),
        dir => format!("log in {dir}"),
    };
    let rest = rest.replace("mode none", "never synced, not durable");
    match rest.is_empty() {
        true => place,
        false => format!("{place}, {rest}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::verdict::Verdict;
    use crate::result::env::Risk;
    use crate::result::{Direction, Metric, TargetResult, WorkloadResult};

    /// Repetition `rep` of a PostMark run at `rate` transactions/s, its
    /// sync log at `placement` (mode none where `unsynced`).
    fn postmark(label: &str, placement: Option<&str>, rate: f64, rep: u32) -> WorkloadResult {
        let mut params = serde_json::json!({"number": 5000});
        let mut risks = Vec::new();
        if let Some(placement) = placement {
            let mode = if label.ends_with("unsynced") {
                "none"
            } else {
                "fdatasync"
            };
            params["sync_log"] =
                serde_json::json!({"placement": placement, "mode": mode, "batch": 1});
            if mode == "none" {
                risks.push(Risk {
                    code: "sync_log_not_synced".into(),
                    message: "never synced".into(),
                });
            }
        }
        // A spread of a few per cent, as repetitions have.
        let jitter = 1.0 + 0.02 * f64::from(rep % 3);
        WorkloadResult {
            workload: "postmark".into(),
            label: label.into(),
            repetition: rep,
            params,
            metrics: vec![Metric::test(
                "transactions",
                "transactions/s",
                Direction::HigherIsBetter,
                rate * jitter,
            )],
            risks,
            ..Default::default()
        }
    }

    fn seed000_run() -> RunResult {
        let mut workloads = Vec::new();
        for rep in 0..3 {
            workloads.push(postmark("pm-no-log", None, 4000.0, rep));
            workloads.push(postmark("pm-log-target", Some("target"), 150.0, rep));
            workloads.push(postmark("pm-log-unsynced", Some("target"), 4000.0, rep));
        }
        let mut run = crate::driver::recording::new_run_result("test");
        run.targets.push(TargetResult::test("xfs", workloads));
        run
    }

    /// Seed 000's answer leads: the log on the data disk is decided
    /// slower with its interval, the unsynced log no different, and the
    /// placement the suite models on purpose is not the target's risk.
    #[test]
    fn placements_are_tested_against_no_log_and_their_risk_is_not_the_targets() {
        let run = seed000_run();
        let summary = Summary::of(&run);
        let verdicts = placement_verdicts(&run, &summary, 0.05);
        assert_eq!(verdicts.len(), 1, "{verdicts:?}");
        assert_eq!(
            verdicts[0].heading,
            "postmark on xfs against pm-no-log (no sync log)"
        );
        let [target, unsynced] = &verdicts[0].lines[..] else {
            panic!("{verdicts:?}");
        };
        assert!(
            target.starts_with("pm-log-target (log on the target): 27x slower transactions ("),
            "{target}"
        );
        assert_eq!(
            unsynced,
            "pm-log-unsynced (log on the target, never synced, not durable): no difference of \
             5 % or more from pm-no-log in 1 headline metric."
        );
        let verdict = Verdict::of(&run, &summary);
        assert!(verdict.targets[0].safety.risks.is_empty());
        assert!(summary.risks.is_empty(), "{:?}", summary.risks);
        assert!(verdict.text().starts_with("Placements: postmark on xfs"));
    }

    #[test]
    fn a_placement_label_is_said_as_where_the_log_is() {
        assert_eq!(log_phrase("target"), "log on the target");
        assert_eq!(
            log_phrase("target, mode none"),
            "log on the target, never synced, not durable"
        );
        assert_eq!(
            log_phrase("/mnt/ram, batch 10"),
            "log in /mnt/ram, batch 10"
        );
    }
}

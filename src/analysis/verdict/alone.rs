//! What the verdict says of a target measured alone: with nothing to
//! compare it with, its headline figures per class, each with the evidence
//! behind it (what the devices did, the flags), so that one directory's
//! run still answers "how fast is this, and can I trust the number".
use crate::analysis::summary::{Class, Summary, classify};
use crate::analysis::{device_text, mean_ci};

use super::finding::what;

/// Up to this many figures per class: the tables hold the rest.
const FIGURES_PER_CLASS: usize = 4;

/// What the verdict adds under a lone target's name.
pub(super) const ALONE_NOTE: &str = "one target: these are its own figures, with what the \
     devices did for each; name a second target to compare (fsbench run A B), or add \
     --reference ram=/dev/shm for the RAM ceiling";

/// "write: seq-write-1m throughput 4216 MiB/s (dev 107%) · sync-write-4k
/// I/O rate 240 IO/s (dev 183%, busy-host)", per class that target `t` has
/// figures of: the first headline metric of the class in each workload.
pub(super) fn figure_lines(summary: &Summary, t: usize) -> Vec<String> {
    [Class::Write, Class::Read, Class::Metadata]
        .into_iter()
        .filter_map(|class| {
            let figures = class_figures(summary, t, class);
            if figures.is_empty() {
                return None;
            }
            let shown = figures.len().min(FIGURES_PER_CLASS);
            let joined = figures[..shown].join(" · ");
            let rest = match figures.len() - shown {
                0 => String::new(),
                n => format!(" (and {n} more in the tables)"),
            };
            Some(format!("{}: {joined}{rest}", class.as_str()))
        })
        .collect()
}

/// Per workload, its first headline figure of `class` on target `t`.
fn class_figures(summary: &Summary, t: usize, class: Class) -> Vec<String> {
    summary
        .workloads
        .iter()
        .filter_map(|workload| {
            workload.headline().find_map(|metric| {
                let cell = metric.cells.get(t)?.as_ref()?;
                (classify(workload, metric) == Some(class)).then(|| {
                    let evidence: Vec<String> = cell
                        .device
                        .map(device_text)
                        .into_iter()
                        .chain(cell.flags.iter().map(|f| f.short().to_string()))
                        .collect();
                    let evidence = match evidence.is_empty() {
                        true => String::new(),
                        false => format!(" ({})", evidence.join(", ")),
                    };
                    format!(
                        "{} {} {}{evidence}",
                        what(&workload.name, &metric.name),
                        mean_ci(&cell.stats),
                        metric.unit
                    )
                })
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::verdict::Verdict;
    use crate::result::{Direction, Flag, Metric, TargetResult, WorkloadResult};

    fn io(label: &str, metric: &str, unit: &str, value: f64, flags: Vec<Flag>) -> WorkloadResult {
        let mut metric = Metric::test(metric, unit, Direction::HigherIsBetter, value);
        metric.flags = flags;
        WorkloadResult {
            workload: "io".into(),
            label: label.into(),
            params: serde_json::json!({}),
            metrics: vec![metric],
            ..Default::default()
        }
    }

    /// A lone target's verdict gives its figures per class with their
    /// flags, and says what they are, where a comparison would count wins.
    #[test]
    fn a_lone_target_gets_its_figures_with_their_evidence() {
        let mut run = crate::driver::recording::new_run_result("test");
        run.targets.push(TargetResult::test(
            "/home/u/photos",
            vec![
                io("seq-write-1m", "mib_per_s", "MiB/s", 420.0, vec![]),
                io(
                    "seq-read-1m",
                    "mib_per_s",
                    "MiB/s",
                    2089.0,
                    vec![Flag::BusyHost],
                ),
            ],
        ));
        let summary = Summary::of(&run);
        assert_eq!(
            figure_lines(&summary, 0),
            [
                "write: seq-write-1m throughput 420.0 MiB/s",
                "read: seq-read-1m throughput 2089 MiB/s (busy-host)",
            ]
        );
        let text = Verdict::of(&run, &summary).text();
        assert!(text.contains("  /home/u/photos\n"), "{text}");
        assert!(
            text.contains("one target: these are its own figures"),
            "{text}"
        );
    }
}

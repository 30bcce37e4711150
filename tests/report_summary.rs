//! The summary every format shares, computed on the real fixture run:
//! cells hold exactly the repetitions' values, ratios and tests agree with
//! the statistics module, the best target follows the metric's direction,
//! and every flag and note becomes a warning.
use std::path::Path;

use fsbench::measure::stats::{self, Stats};
use fsbench::report::summary::{Class, Level, Summary, classify};
use fsbench::report::{Reporter, load, markdown::Markdown, terminal::Terminal};
use fsbench::result::{Direction, RunResult};

fn fixture() -> RunResult {
    load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-two-targets.json"))
        .unwrap()
}

/// The raw values of a metric on a target, in repetition order.
fn raw(run: &RunResult, target: usize, workload: &str, metric: &str) -> Vec<f64> {
    run.targets[target]
        .workloads
        .iter()
        .filter(|w| w.name() == workload)
        .filter_map(|w| w.metric(metric).map(|m| m.value))
        .collect()
}

#[test]
fn cells_are_the_repetitions_of_each_target() {
    let run = fixture();
    let summary = Summary::of(&run);
    assert_eq!(summary.targets, ["tmpfs", "tmpfs-huge"]);
    let names: Vec<&str> = summary.workloads.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, ["bonnie", "64k-seq-write", "4k-rand-read"]);
    for workload in &summary.workloads {
        for metric in &workload.metrics {
            for (t, cell) in metric.cells.iter().enumerate() {
                let values = raw(&run, t, &workload.name, &metric.name);
                let cell = cell.as_ref().expect("every metric on every target");
                assert_eq!(cell.values, values);
                assert_eq!(cell.values.len(), 3, "three repetitions");
                assert_eq!(Some(&cell.stats), Stats::of(&values).as_ref());
            }
        }
    }
}

#[test]
fn ratios_and_tests_are_against_the_baseline() {
    let run = fixture();
    for baseline in [0, 1] {
        let summary = Summary::with_baseline(&run, baseline);
        let other = 1 - baseline;
        for workload in &summary.workloads {
            for metric in &workload.metrics {
                let base = metric.cells[baseline].as_ref().unwrap();
                let cell = metric.cells[other].as_ref().unwrap();
                assert!(base.vs_baseline.is_none());
                let c = cell.vs_baseline.expect("a comparison");
                let expected = stats::ratio(&base.values, &cell.values).unwrap();
                assert_eq!((c.ratio, c.ci95), (expected.ratio, expected.ci95));
                let welch = stats::welch(&base.values, &cell.values).unwrap();
                assert_eq!(c.p_value, Some(welch.p));
                assert_eq!(c.significant, welch.p < 0.05);
                // Fieller's interval and Welch's test agree on significance.
                let (low, high) = c.ci95.unwrap();
                assert_eq!(
                    c.significant,
                    !(low..=high).contains(&1.0),
                    "{}",
                    metric.name
                );
            }
        }
    }
}

#[test]
fn best_follows_the_direction() {
    let summary = Summary::of(&fixture());
    for metric in summary.workloads.iter().flat_map(|w| &w.metrics) {
        let means: Vec<f64> = metric
            .cells
            .iter()
            .map(|c| c.as_ref().unwrap().stats.mean)
            .collect();
        let best = metric.best.unwrap();
        let other = means[1 - best];
        match metric.direction {
            Direction::HigherIsBetter => assert!(means[best] >= other, "{}", metric.name),
            Direction::LowerIsBetter => assert!(means[best] <= other, "{}", metric.name),
        }
    }
}

#[test]
fn flags_and_notes_become_numbered_warnings() {
    let mut run = fixture();
    run.targets[1].workloads[0].notes = vec!["a note on one repetition".into()];
    run.targets[1]
        .workloads
        .retain(|w| w.name() != "4k-rand-read");
    let summary = Summary::of(&run);
    let bonnie = &summary.workloads[0];
    let note = summary
        .warnings
        .iter()
        .position(|w| w == "a note on one repetition")
        .expect("the note is a warning");
    assert_eq!(bonnie.notes, [vec![], vec![note]]);
    let rewrite = bonnie.metrics.iter().find(|m| m.name == "rewrite").unwrap();
    let cell = rewrite.cells[0].as_ref().unwrap();
    let texts: Vec<&str> = cell
        .warnings
        .iter()
        .map(|&i| summary.warnings[i].as_str())
        .collect();
    let described: Vec<&str> = cell.flags.iter().map(|f| f.describe()).collect();
    assert_eq!(texts, described);
    assert!(
        !cell.flags.is_empty(),
        "bonnie's rewrite of 64 MiB is flagged"
    );
    assert!(
        summary
            .warnings
            .contains(&"tmpfs-huge: no result for workload 4k-rand-read".to_string())
    );
    // And the texts reach the rendered formats.
    for text in [
        Terminal { width: 100 }.render(&run, &summary).unwrap(),
        Markdown.render(&run, &summary).unwrap(),
    ] {
        assert!(text.contains("a note on one repetition"));
        assert!(text.contains("no result for workload 4k-rand-read"));
    }
}

#[test]
fn metrics_are_classified_by_name_unit_and_workload() {
    let summary = Summary::of(&fixture());
    let class_of = |workload: &str, metric: &str| {
        let w = summary
            .workloads
            .iter()
            .find(|w| w.name == workload)
            .unwrap();
        classify(w, w.metrics.iter().find(|m| m.name == metric).unwrap())
    };
    assert_eq!(class_of("bonnie", "put_block"), Some(Class::Write));
    assert_eq!(class_of("bonnie", "rewrite"), Some(Class::Write));
    assert_eq!(class_of("bonnie", "get_block"), Some(Class::Read));
    assert_eq!(class_of("bonnie", "seq_create"), Some(Class::Metadata));
    assert_eq!(class_of("bonnie", "ran_del"), Some(Class::Metadata));
    assert_eq!(class_of("bonnie", "seeks"), None);
    assert_eq!(class_of("64k-seq-write", "mib_per_s"), Some(Class::Write));
    assert_eq!(class_of("4k-rand-read", "mib_per_s"), Some(Class::Read));
    assert_eq!(
        class_of("4k-rand-read", "resp_ms"),
        None,
        "latencies are not rated"
    );
}

#[test]
fn profiles_rate_each_target_against_the_best() {
    let run = fixture();
    let summary = Summary::of(&run);
    let profiles = summary.profiles();
    assert_eq!(profiles.len(), 2);
    // Whoever is best on every metric of a class is "high" in it.
    for profile in &profiles {
        for level in [profile.write, profile.read, profile.metadata] {
            assert!(level.is_some(), "{profile:?}");
        }
    }
    let mut one = run.clone();
    one.targets.truncate(1);
    let alone = Summary::of(&one).profiles();
    assert_eq!(alone[0].write, None, "no rating without another target");
    // A target 3x slower everywhere is rated low against the original.
    let mut slow = run.clone();
    slow.targets.truncate(1);
    let mut copy = slow.targets[0].clone();
    copy.name = "slow".into();
    for metric in copy.workloads.iter_mut().flat_map(|w| &mut w.metrics) {
        metric.value = match metric.direction {
            Direction::HigherIsBetter => metric.value / 3.0,
            Direction::LowerIsBetter => metric.value * 3.0,
        };
    }
    slow.targets.push(copy);
    let rated = Summary::of(&slow).profiles();
    assert_eq!(
        (rated[0].write, rated[0].read, rated[0].metadata),
        (Some(Level::High), Some(Level::High), Some(Level::High))
    );
    assert_eq!(
        (rated[1].write, rated[1].read, rated[1].metadata),
        (Some(Level::Low), Some(Level::Low), Some(Level::Low))
    );
}

//! The summary every format shares, computed on the real fixture run:
//! cells hold exactly the repetitions' values, ratios and tests agree with
//! the statistics module, and one cell's figures match a computation made
//! outside fsbench; the best target follows the metric's direction, and
//! every flag and note becomes a warning.
use std::path::Path;

use fsbench::analysis::summary::{Class, Level, Summary, classify};
use fsbench::measure::stats::{self, Stats};
use fsbench::report::csv::Csv;
use fsbench::report::html::Html;
use fsbench::report::{Reporter, markdown::Markdown, terminal::Terminal};
use fsbench::result::{Direction, Flag, RunResult};
use fsbench::results::load;

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
        // One family per target: its headline metrics, as the verdict reads them.
        let family: Vec<f64> = summary
            .workloads
            .iter()
            .flat_map(|w| w.headline())
            .map(|m| {
                let (base, cell) = (m.cells[baseline].as_ref(), m.cells[other].as_ref());
                stats::ratio(&base.unwrap().values, &cell.unwrap().values)
                    .unwrap()
                    .p
                    .unwrap()
            })
            .collect();
        let threshold = stats::benjamini_hochberg_threshold(&family, 0.05);
        for workload in &summary.workloads {
            for metric in &workload.metrics {
                let base = metric.cells[baseline].as_ref().unwrap();
                let cell = metric.cells[other].as_ref().unwrap();
                assert!(base.vs_baseline.is_none());
                let c = cell.vs_baseline.expect("a comparison");
                let expected = stats::ratio(&base.values, &cell.values).unwrap();
                assert_eq!((c.ratio, c.ci95), (expected.ratio, expected.ci95));
                assert_eq!(c.p_value, expected.p);
                let p = expected.p.unwrap();
                assert_eq!(c.significant, threshold.is_some_and(|t| p <= t));
                // The ratio's interval misses 1 exactly when p < 0.05 alone:
                // every significant ratio's does, not every such one is.
                let (low, high) = c.ci95.unwrap().bounds().unwrap();
                assert_eq!(p < 0.05, !(low..=high).contains(&1.0), "{}", metric.name);
                assert!(!c.significant || p < 0.05, "{}", metric.name);
            }
        }
    }
}

/// `actual` within a relative 1e-6 of `expected`: far below what any
/// report shows, with room for the numerical inversion of Student's t.
fn close(actual: f64, expected: f64, what: &str) {
    let tolerance = 1e-6 * expected.abs();
    assert!(
        (actual - expected).abs() <= tolerance,
        "{what}: {actual}, expected {expected}"
    );
}

/// bonnie's put_block, tmpfs-huge against the baseline tmpfs, against
/// figures computed outside fsbench from the fixture's raw values, with
/// Python's mpmath at 30 digits: mean; sample sd (n - 1); the 95 % interval
/// as mean ± t(0.975, n - 1)·sd/√n; on the logarithms of the values,
/// Welch's t with the Welch–Satterthwaite df and p = 2·P(T > |t|), the
/// ratio of geometric means exp(d) and its interval exp(d ± t(0.975, Welch
/// df)·se), d the difference of the mean logarithms. Student-t tail areas by numerical integration of the
/// density and quantiles by root finding on them (mpmath `quad`, `findroot`),
/// so none of it goes through `measure::stats` or its `statrs` dependency.
#[test]
fn one_cell_matches_an_independent_computation() {
    let summary = Summary::of(&fixture());
    let bonnie = summary
        .workloads
        .iter()
        .find(|w| w.name == "bonnie")
        .unwrap();
    let metric = bonnie
        .metrics
        .iter()
        .find(|m| m.name == "put_block")
        .unwrap();
    let base = &metric.cells[0].as_ref().unwrap().stats;
    close(base.mean, 338.126_728_504_576_1, "tmpfs mean");
    close(base.sd, 24.762_320_456_618_57, "tmpfs sd");
    let (low, high) = base.ci95.unwrap();
    close(low, 276.613_714_427_843_2, "tmpfs CI low");
    close(high, 399.639_742_581_309, "tmpfs CI high");
    close(base.median, 334.716_451_443_291_1, "tmpfs median");
    let cell = metric.cells[1].as_ref().unwrap();
    let stats = &cell.stats;
    close(stats.mean, 428.645_871_509_643_8, "tmpfs-huge mean");
    close(stats.sd, 135.079_838_402_003_8, "tmpfs-huge sd");
    let (low, high) = stats.ci95.unwrap();
    close(low, 93.088_950_838_085_48, "tmpfs-huge CI low");
    close(high, 764.202_792_181_202_1, "tmpfs-huge CI high");
    let c = cell.vs_baseline.unwrap();
    close(c.ratio, 1.225_221_811_068_187_8, "ratio");
    let (low, high) = c.ci95.unwrap().bounds().unwrap();
    close(low, 0.559_502_334_441_747_3, "ratio CI low");
    close(high, 2.683_042_400_198_429_4, "ratio CI high");
    close(
        c.p_value.unwrap(),
        0.404_106_011_533_822_25,
        "Welch p of the logarithms",
    );
    assert!(!c.significant);
    assert_eq!(metric.best, Some(1), "tmpfs-huge has the higher mean");
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
    // One warning per kind of flag: its description, then how many of
    // the run's measurements it flagged.
    assert_eq!(texts.len(), cell.flags.len());
    for (text, flag) in texts.iter().zip(&cell.flags) {
        assert!(text.starts_with(flag.describe()), "{text}");
        assert!(text.ends_with(" measurements)"), "{text}");
    }
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

/// The fixture with tmpfs-huge's bonnie put_block replaced by `values`
/// (one per repetition).
fn with_put_block(values: [f64; 3]) -> RunResult {
    let mut run = fixture();
    set_put_block(&mut run, &values);
    run
}

/// tmpfs-huge's bonnie put_block values, in repetition order.
fn set_put_block(run: &mut RunResult, values: &[f64]) {
    let metrics = run.targets[1]
        .workloads
        .iter_mut()
        .filter(|w| w.name() == "bonnie")
        .flat_map(|w| w.metrics.iter_mut().filter(|m| m.name == "put_block"));
    for (metric, &value) in metrics.zip(values) {
        metric.value = value;
    }
}

/// put_block's row of a CSV summary of tmpfs-huge (its only row on it).
fn put_block_row(csv: &str) -> Vec<String> {
    let row = csv
        .lines()
        .find(|l| l.contains(",tmpfs-huge,bonnie,put_block,"))
        .expect("a put_block row");
    row.split(',').map(str::to_string).collect()
}

#[test]
fn a_ratio_whose_interval_would_reach_below_zero_is_unbounded_everywhere() {
    // Against tmpfs's ~338, a mean of ~45 whose own CI includes 0. A zero
    // among the values has no logarithm, so the ratio falls back to the
    // means and Fieller's interval: -0.2 to 0.5, and a ratio of throughputs
    // cannot be negative.
    let run = with_put_block([0.0, 34.0, 100.0]);
    let summary = Summary::of(&run);
    assert!(summary.has_unbounded_ratio());
    let markdown = Markdown.render(&run, &summary).unwrap();
    assert!(markdown.contains("(unbounded)"), "{markdown}");
    assert!(markdown.contains("includes 0"), "the legend says why");
    assert!(!markdown.contains("(-"), "no negative bound: {markdown}");
    let html = Html.render(&run, &summary).unwrap();
    assert!(html.contains("(unbounded)"), "HTML");
    let csv = Csv {
        per_repetition: false,
    }
    .render(&run, &summary)
    .unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let row = put_block_row(&csv);
    for column in ["ratio_ci_low", "ratio_ci_high"] {
        let i = header.iter().position(|h| *h == column).unwrap();
        assert_eq!(row[i], "", "{column} of an unbounded interval");
    }
    let terminal = Terminal { width: 100 }.render(&run, &summary).unwrap();
    assert!(!terminal.contains("-0."), "no negative ratio: {terminal}");
}

/// The fixture with a fourth repetition of tmpfs-huge's bonnie, and its
/// put_block values replaced by `values`, in repetition order.
fn four_put_blocks(values: [f64; 4]) -> RunResult {
    let mut run = fixture();
    let workloads = &mut run.targets[1].workloads;
    let last_bonnie = workloads
        .iter()
        .rposition(|w| w.name() == "bonnie")
        .unwrap();
    let again = workloads[last_bonnie].clone();
    workloads.insert(last_bonnie + 1, again);
    set_put_block(&mut run, &values);
    run
}

fn put_block_cell(run: &RunResult) -> (Summary, fsbench::analysis::summary::Cell) {
    let summary = Summary::of(run);
    let metrics = &summary.workloads[0].metrics;
    let put_block = metrics.iter().find(|m| m.name == "put_block").unwrap();
    let cell = put_block.cells[1].clone().unwrap();
    (summary, cell)
}

#[test]
fn a_first_repetition_far_worse_than_the_others_is_flagged_warm_up_with_its_figures() {
    // put_block is a rate: a first repetition at a third of the others.
    let (summary, cell) = put_block_cell(&four_put_blocks([100.0, 300.0, 302.0, 301.0]));
    assert_eq!(cell.values, [100.0, 300.0, 302.0, 301.0]);
    assert!(cell.flags.contains(&Flag::WarmUp), "{:?}", cell.flags);
    let texts: Vec<&str> = cell
        .warnings
        .iter()
        .map(|&i| summary.warnings[i].as_str())
        .collect();
    assert!(
        texts.contains(
            &"warm-up: the first repetition (100.0 MiB/s) was significantly worse than the \
              others (300.0–302.0 MiB/s), and is in the mean"
        ),
        "{texts:?}"
    );
    // The slow one is not the first; no slow one; the first is better, not
    // worse; too few repetitions to weigh it.
    for values in [
        [300.0, 100.0, 302.0, 301.0],
        [300.0, 302.0, 301.0, 300.5],
        [900.0, 300.0, 302.0, 301.0],
    ] {
        let (_, cell) = put_block_cell(&four_put_blocks(values));
        assert!(!cell.flags.contains(&Flag::WarmUp), "{values:?}");
    }
    let (_, cell) = put_block_cell(&with_put_block([100.0, 300.0, 302.0]));
    assert!(!cell.flags.contains(&Flag::WarmUp), "three repetitions");
}

/// The fixture with a sequential twin of 4k-rand-read ("4k-seq-read": the
/// same job with seek 0) on every target, its throughput `seq_mib_s`, and
/// its transfer size `xfer`.
fn with_sequential_twin(seq_mib_s: f64, xfer: u64) -> RunResult {
    let mut run = fixture();
    for target in &mut run.targets {
        let twins: Vec<_> = target
            .workloads
            .iter()
            .filter(|w| w.name() == "4k-rand-read")
            .cloned()
            .map(|mut twin| {
                twin.label = "4k-seq-read".into();
                twin.params["job"]["seek"]["percent"] = 0.0.into();
                twin.params["job"]["xfer"]["fixed"] = xfer.into();
                for metric in twin.metrics.iter_mut().filter(|m| m.name == "mib_per_s") {
                    metric.value = seq_mib_s;
                }
                twin
            })
            .collect();
        target.workloads.extend(twins);
    }
    run
}

fn throughput_cell(
    summary: &Summary,
    workload: &str,
    target: usize,
) -> fsbench::analysis::summary::Cell {
    let workload = summary
        .workloads
        .iter()
        .find(|w| w.name == workload)
        .unwrap();
    let metric = workload
        .metrics
        .iter()
        .find(|m| m.name == "mib_per_s")
        .unwrap();
    metric.cells[target].clone().unwrap()
}

#[test]
fn random_io_faster_than_the_same_io_done_sequentially_is_flagged_with_both_figures() {
    // The fixture's 4k random reads run at ~400-600 MiB/s (tmpfs).
    let summary = Summary::of(&with_sequential_twin(100.0, 4096));
    for target in 0..2 {
        let random = throughput_cell(&summary, "4k-rand-read", target);
        assert!(
            random.flags.contains(&Flag::RandomFasterThanSequential),
            "{:?}",
            random.flags
        );
        let texts: Vec<&str> = random
            .warnings
            .iter()
            .map(|&i| summary.warnings[i].as_str())
            .collect();
        let expected = format!(
            "random faster than sequential: 4k-rand-read at {:.1} MiB/s against 4k-seq-read's 100.0 MiB/s",
            random.stats.mean
        );
        assert!(texts.iter().any(|t| t.starts_with(&expected)), "{texts:?}");
        let sequential = throughput_cell(&summary, "4k-seq-read", target);
        assert!(!sequential.flags.contains(&Flag::RandomFasterThanSequential));
    }
    // Sequential faster, or within the margin: nothing to say.
    let random_mean = throughput_cell(&Summary::of(&fixture()), "4k-rand-read", 0)
        .stats
        .mean;
    for seq in [2000.0, random_mean] {
        let summary = Summary::of(&with_sequential_twin(seq, 4096));
        let random = throughput_cell(&summary, "4k-rand-read", 0);
        assert!(
            !random.flags.contains(&Flag::RandomFasterThanSequential),
            "{seq}"
        );
    }
    // Another transfer size is another job: not compared.
    let summary = Summary::of(&with_sequential_twin(100.0, 1 << 20));
    let random = throughput_cell(&summary, "4k-rand-read", 0);
    assert!(!random.flags.contains(&Flag::RandomFasterThanSequential));
}

//! The session and the driver under it, run with fake workloads
//! (`workload::fake`): the order things happen in, the stopping rule,
//! what a failure leaves, and resuming, in milliseconds.
use std::path::PathBuf;

use super::*;
use crate::analysis::precision::{Precision, RepeatFlags};
use crate::analysis::verdict::DEFAULT_MIN_EFFECT;
use crate::driver::recording::new_run_result;
use crate::policy::Policy;
use crate::result::env::HostEnv;
use crate::storage::Target;
use crate::suite::Suite;
use crate::suite::SuiteWorkload;
use crate::suite::plan::Builder;
use crate::workload::Workload;
use crate::workload::fake::{Event, Fake, Log};

/// Two entries, `a` and `b`, each a fake of `steps` steps.
fn suite() -> Suite {
    let text = "[[workload]]\nkind = \"fake\"\nlabel = \"a\"\n\n[[workload]]\nkind = \"fake\"\nlabel = \"b\"\n";
    Suite::parse("fakes", text).unwrap()
}

/// Targets `one` and `two`, each an empty directory of its own, with a
/// sentinel file beside their scratch directories.
struct Places {
    dir: tempfile::TempDir,
}

impl Places {
    fn new() -> Places {
        let dir = tempfile::tempdir().unwrap();
        for name in ["one", "two"] {
            std::fs::create_dir(dir.path().join(name)).unwrap();
            std::fs::write(dir.path().join(name).join("SENTINEL"), name).unwrap();
        }
        Places { dir }
    }

    fn targets(&self) -> Vec<Target> {
        ["one", "two"]
            .iter()
            .map(|name| Target {
                name: name.to_string(),
                path: self.dir.path().join(name),
            })
            .collect()
    }

    fn results(&self) -> PathBuf {
        self.dir.path().join("result.json")
    }

    /// Only the sentinel is left in each target.
    fn assert_clean(&self) {
        for name in ["one", "two"] {
            let entries: Vec<String> = std::fs::read_dir(self.dir.path().join(name))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            assert_eq!(entries, ["SENTINEL"], "{name}");
            let sentinel = std::fs::read_to_string(self.dir.path().join(name).join("SENTINEL"));
            assert_eq!(sentinel.unwrap(), name);
        }
    }
}

/// A spec for `suite` on the places' targets, saved to their results
/// file.
fn request(suite: &Suite, places: &Places, repeat: u32) -> RunSpec {
    RunSpec {
        suite: suite.clone(),
        targets: places.targets(),
        references: Vec::new(),
        configs: None,
        crash: None,
        precision: None,
        repeat,
        options: Options {
            scale: 1.0,
            quiet: true,
            ..Options::default()
        },
        policy: Policy {
            allow_shell: false,
            results_dir: places.dir.path().to_path_buf(),
        },
        record: new_run_result("fake-run"),
        resumed: false,
        scratch_id: "fake-run".into(),
        save_path: Some(places.results()),
        json: None,
    }
}

/// A registry whose every kind is built by `build`.
struct Fakes<'a>(&'a Builder<'a>);

impl Registry for Fakes<'_> {
    fn build(
        &self,
        listed: &SuiteWorkload,
        scale: f64,
        _: &Policy,
        _: &HostEnv,
    ) -> anyhow::Result<Box<dyn Workload>> {
        (self.0)(listed, scale)
    }

    fn runs_under_mpi(&self, _: &str) -> bool {
        true
    }

    fn crash_options(&self, _: &[String]) -> anyhow::Result<crash::Options> {
        anyhow::bail!("the fakes' suites have no crash entry")
    }
}

/// A builder of fakes logging to `log`, made by `fake`.
fn fakes(log: &Log, fake: impl Fn(&Log) -> Fake + 'static) -> Box<Builder<'static>> {
    let log = log.clone();
    Box::new(move |_: &SuiteWorkload, _| Ok(Box::new(fake(&log)) as Box<dyn Workload>))
}

fn ran(log: &Log) -> Vec<(String, u32, u32)> {
    log.borrow()
        .iter()
        .filter_map(|event| match event {
            Event::Ran {
                target,
                repetition,
                step,
            } => Some((target.clone(), *repetition, *step)),
            Event::Dropped { .. } => None,
        })
        .collect()
}

fn run_of(target: &str, repetition: u32, steps: u32) -> Vec<(String, u32, u32)> {
    (0..2 * steps)
        .map(|i| (target.to_string(), repetition, i % steps))
        .collect()
}

#[test]
fn targets_take_turns_and_each_repetition_starts_with_the_next() {
    let places = Places::new();
    let log = Log::default();
    let build = fakes(&log, |log| Fake::new(log, |_, _| 1.0).steps(2));
    let suite = suite();
    let outcome = run(request(&suite, &places, 2), &Fakes(&build))
        .unwrap()
        .unwrap();
    let expected: Vec<_> = [
        run_of("one", 0, 2),
        run_of("two", 0, 2),
        run_of("two", 1, 2),
        run_of("one", 1, 2),
    ]
    .concat();
    assert_eq!(ran(&log), expected);
    let labels: Vec<&str> = outcome.record.targets[0]
        .workloads
        .iter()
        .map(|w| w.label.as_str())
        .collect();
    assert_eq!(
        labels,
        ["a/step0", "a/step1", "b/step0", "b/step1"].repeat(2)
    );
    assert!(outcome.record.finished.is_some());
    places.assert_clean();
}

#[test]
fn workloads_are_dropped_before_their_scratch_directories_go() {
    let places = Places::new();
    let log = Log::default();
    let build = fakes(&log, |log| Fake::new(log, |_, _| 1.0));
    let suite = suite();
    run(request(&suite, &places, 1), &Fakes(&build)).unwrap();
    let drops: Vec<bool> = log
        .borrow()
        .iter()
        .filter_map(|event| match event {
            Event::Dropped { scratch_left } => Some(*scratch_left),
            Event::Ran { .. } => None,
        })
        .collect();
    // Two entries on two targets: four instances, each dropped while the
    // scratch directory it ran in was still there.
    assert_eq!(drops, [true; 4]);
    places.assert_clean();
}

/// With a precision rule: settled figures stop the run at the third
/// repetition; figures that never settle run to --max-repeat.
#[test]
fn the_precision_rule_stops_the_repetitions_once_the_figures_settle() {
    let repetitions = |figure: fn(&str, u32) -> f64| {
        let places = Places::new();
        let log = Log::default();
        let build = fakes(&log, move |log| Fake::new(log, figure));
        let suite = suite();
        let flags = RepeatFlags {
            precision: Some("5%"),
            repeat: None,
            max_repeat: Some(6),
            max_time: None,
            comparing: true,
        };
        let mut request = request(&suite, &places, 6);
        request.precision = Precision::from_flags(flags, DEFAULT_MIN_EFFECT).unwrap();
        let outcome = run(request, &Fakes(&build)).unwrap().unwrap();
        places.assert_clean();
        let stopping = outcome.record.stopping.clone().unwrap();
        (outcome.record.repetitions_measured(), stopping.reason)
    };
    let (settled, reason) = repetitions(|target, _| if target == "one" { 100.0 } else { 50.0 });
    assert_eq!(settled, 3, "{reason}");
    let swinging = |target: &str, repetition: u32| {
        let turn = (repetition as usize + usize::from(target == "two")) % 2;
        [10.0, 100.0][turn]
    };
    let (unsettled, reason) = repetitions(swinging);
    assert_eq!(unsettled, 6, "{reason}");
}

/// A failure in the second repetition keeps the first in the results
/// file (incomplete), removes the scratch directories, and a resumed run
/// measures only what the file lacks.
#[test]
fn a_failed_run_keeps_what_it_measured_and_a_resumed_one_measures_the_rest() {
    let places = Places::new();
    let log = Log::default();
    let build = fakes(&log, |log| Fake::new(log, |_, _| 1.0).failing_on("one", 1));
    let suite = suite();
    let error = run(request(&suite, &places, 2), &Fakes(&build))
        .err()
        .unwrap();
    assert!(
        error.to_string().contains("the fake fails on one"),
        "{error}"
    );
    places.assert_clean();
    let kept = crate::results::load(&places.results()).unwrap();
    assert!(kept.finished.is_none());
    // Repetition 0 whole on both, and repetition 1 on `two` (it starts
    // with the next target) before `one` failed.
    let results: usize = kept.targets.iter().map(|t| t.workloads.len()).sum();
    assert_eq!(results, 6);

    let resumed_log = Log::default();
    let build = fakes(&resumed_log, |log| Fake::new(log, |_, _| 1.0));
    let mut request = request(&suite, &places, 2);
    request.record = kept;
    request.resumed = true;
    let outcome = run(request, &Fakes(&build)).unwrap().unwrap();
    assert_eq!(ran(&resumed_log), run_of("one", 1, 1));
    assert_eq!(outcome.record.repetitions_measured(), 2);
    let saved = crate::results::load(&places.results()).unwrap();
    assert!(saved.finished.is_some());
    let results: usize = saved.targets.iter().map(|t| t.workloads.len()).sum();
    assert_eq!(results, 8);
    places.assert_clean();
}

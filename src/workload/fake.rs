//! A workload that only says what happened to it, for the driver's and
//! the session's tests: the order steps ran in, when it was dropped
//! against when its scratch directory went, a failure on demand, and a
//! figure the test chooses. It writes nothing, so a whole run of it takes
//! milliseconds.
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

use super::{RunContext, Workload};
use crate::result::{Direction, Metric, WorkloadResult};

/// What happened, in order, to every fake of a test.
pub type Log = Rc<RefCell<Vec<Event>>>;

#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A step ran on a target.
    Ran {
        target: String,
        repetition: u32,
        step: u32,
    },
    /// The fake was dropped; whether the scratch directory it last ran in
    /// was still there.
    Dropped { scratch_left: bool },
}

/// The figure a step reports, from its target and repetition.
pub type Figure = Box<dyn Fn(&str, u32) -> f64>;

pub struct Fake {
    log: Log,
    steps: u32,
    figure: Figure,
    /// Fails when it runs on this target in this repetition.
    fail: Option<(String, u32)>,
    last_scratch: Option<PathBuf>,
}

impl Fake {
    /// A fake of one step reporting `figure` as `ops/s`, higher better.
    pub fn new(log: &Log, figure: impl Fn(&str, u32) -> f64 + 'static) -> Fake {
        Fake {
            log: Rc::clone(log),
            steps: 1,
            figure: Box::new(figure),
            fail: None,
            last_scratch: None,
        }
    }

    pub fn steps(mut self, steps: u32) -> Fake {
        self.steps = steps;
        self
    }

    /// Fails when it runs on `target` in `repetition`.
    pub fn failing_on(mut self, target: &str, repetition: u32) -> Fake {
        self.fail = Some((target.to_string(), repetition));
        self
    }
}

impl Workload for Fake {
    fn kind(&self) -> &'static str {
        "fake"
    }

    fn planned_bytes(&self) -> u64 {
        0
    }

    fn planned_files(&self) -> u64 {
        0
    }

    fn steps(&self) -> u32 {
        self.steps
    }

    fn run(&mut self, ctx: &RunContext<'_>) -> anyhow::Result<WorkloadResult> {
        let target = ctx.locations[0].name.to_string();
        self.last_scratch = Some(ctx.scratch.path().to_path_buf());
        self.log.borrow_mut().push(Event::Ran {
            target: target.clone(),
            repetition: ctx.repetition,
            step: ctx.step,
        });
        if self.fail.as_ref() == Some(&(target.clone(), ctx.repetition)) {
            anyhow::bail!(
                "the fake fails on {target} in repetition {}",
                ctx.repetition
            );
        }
        let value = (self.figure)(&target, ctx.repetition);
        Ok(WorkloadResult {
            workload: "fake".into(),
            label: format!("step{}", ctx.step),
            metrics: vec![Metric::test(
                "ops",
                "ops/s",
                Direction::HigherIsBetter,
                value,
            )],
            ..Default::default()
        })
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        let scratch_left = self.last_scratch.as_ref().is_some_and(|p| p.exists());
        self.log.borrow_mut().push(Event::Dropped { scratch_left });
    }
}

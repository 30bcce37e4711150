//! PostMark as a [`Workload`], for suites: one location (the target's
//! scratch directory), the settings from the suite's `set` commands.
use super::{LocationDir, PostmarkConfig, run};
use crate::result::WorkloadResult;
use crate::workload::{RunContext, Workload};

pub struct Postmark {
    config: PostmarkConfig,
    ram_bytes: u64,
}

impl Postmark {
    /// `config` must have no locations: the runner gives it the target.
    pub fn new(config: PostmarkConfig, ram_bytes: u64) -> Self {
        debug_assert!(config.locations.is_empty());
        Postmark { config, ram_bytes }
    }
}

impl Workload for Postmark {
    fn kind(&self) -> &'static str {
        "postmark"
    }

    fn planned_bytes(&self) -> u64 {
        self.config.planned_bytes(0)
    }

    fn planned_files(&self) -> u64 {
        self.config.planned_files(0)
    }

    fn run(&mut self, ctx: &RunContext<'_>) -> anyhow::Result<WorkloadResult> {
        let location = LocationDir {
            name: "target",
            dir: ctx.scratch.dir(),
        };
        ctx.progress.start("PostMark");
        // PostMark's progress lines have no place in a suite's output.
        let summary = run(&self.config, &[location], &mut std::io::sink())?;
        ctx.progress
            .done(summary.timing.total.elapsed.as_secs_f64());
        Ok(summary.to_workload_result(ctx.repetition, self.ram_bytes))
    }
}

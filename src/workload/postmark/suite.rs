//! PostMark as a [`Workload`], for suites: one location (the target's
//! scratch directory), the settings from the suite's `set` commands, and
//! a sync log when the entry's flags ask for one.
use super::{LocationDir, LogPlan, PostmarkConfig, run};
use crate::result::WorkloadResult;
use crate::workload::synclog::{LogSpace, SyncLogConfig};
use crate::workload::{RunContext, Workload};

pub struct Postmark {
    config: PostmarkConfig,
    sync_log: Option<SyncLogConfig>,
    ram_bytes: u64,
}

impl Postmark {
    /// `config` must have no locations: the runner gives it the target.
    pub fn new(config: PostmarkConfig, sync_log: Option<SyncLogConfig>, ram_bytes: u64) -> Self {
        debug_assert!(config.locations.is_empty());
        Postmark {
            config,
            sync_log,
            ram_bytes,
        }
    }

    /// What the sync log adds to the target's plan.
    fn log_on_target(&self) -> LogSpace {
        let log = self.sync_log.as_ref();
        log.map_or_else(LogSpace::default, |l| {
            l.space_on_target(self.config.log_volume())
        })
    }
}

impl Workload for Postmark {
    fn kind(&self) -> &'static str {
        "postmark"
    }

    fn planned_bytes(&self) -> u64 {
        self.config.planned_bytes(0) + self.log_on_target().bytes
    }

    fn planned_files(&self) -> u64 {
        self.config.planned_files(0) + self.log_on_target().files
    }

    fn check_outside(&self) -> anyhow::Result<()> {
        match &self.sync_log {
            Some(log) => log.check(self.config.log_volume()),
            None => Ok(()),
        }
    }

    fn run(&mut self, ctx: &RunContext<'_>) -> anyhow::Result<WorkloadResult> {
        let location = LocationDir {
            name: "target",
            dir: ctx.scratch.dir(),
        };
        let log = self.sync_log.as_ref().map(|config| LogPlan {
            config,
            home: ctx.scratch,
            repetition: ctx.repetition,
        });
        ctx.progress.start("PostMark");
        // PostMark's progress lines have no place in a suite's output.
        let summary = run(&self.config, &[location], log, &mut std::io::sink())?;
        ctx.progress
            .done(summary.timing.total.elapsed.as_secs_f64());
        Ok(summary.to_workload_result(ctx.repetition, self.ram_bytes))
    }
}

//! PostMark as a [`Workload`]: its locations are the scratch directories
//! the driver gives it (one per target: a suite's target, or each `set
//! location` of a PostMark session), with a sync log when asked for.
use std::io::Write;

use super::{LocationDir, LogPlan, PostmarkConfig, RunSummary, run};
use crate::result::WorkloadResult;
use crate::workload::synclog::{LogSpace, SyncLogConfig};
use crate::workload::{RunContext, Space, Workload};

pub struct Postmark<'o> {
    config: PostmarkConfig,
    sync_log: Option<SyncLogConfig>,
    ram_bytes: u64,
    /// Where PostMark's progress lines go; a suite has no place for them.
    out: Option<&'o mut dyn Write>,
    /// The last run's summary, for a session's report.
    last: Option<RunSummary>,
}

impl<'o> Postmark<'o> {
    /// Refuses a configuration whose tables would not fit in memory.
    pub fn new(
        config: PostmarkConfig,
        sync_log: Option<SyncLogConfig>,
        ram_bytes: u64,
    ) -> anyhow::Result<Self> {
        config.check_memory(ram_bytes)?;
        Ok(Postmark {
            config,
            sync_log,
            ram_bytes,
            out: None,
            last: None,
        })
    }

    /// PostMark's progress lines go to `out`.
    pub fn printing_to(mut self, out: &'o mut dyn Write) -> Self {
        self.out = Some(out);
        self
    }

    /// The summary of the last run, once.
    pub fn take_summary(&mut self) -> Option<RunSummary> {
        self.last.take()
    }

    /// What the sync log adds to the first location's plan.
    fn log_on_target(&self) -> LogSpace {
        let log = self.sync_log.as_ref();
        log.map_or_else(LogSpace::default, |l| {
            l.space_on_target(self.config.log_volume())
        })
    }
}

impl Workload for Postmark<'_> {
    fn kind(&self) -> &'static str {
        "postmark"
    }

    fn planned_bytes(&self) -> u64 {
        self.planned_at(0).bytes
    }

    fn planned_files(&self) -> u64 {
        self.planned_at(0).files
    }

    /// Each location holds its weight's share of the files; a log placed
    /// on the target lives in the first, one per rank like the files.
    fn planned_at(&self, location: usize) -> Space {
        let log = match location {
            0 => self.log_on_target(),
            _ => LogSpace::default(),
        };
        Space {
            bytes: self.config.planned_bytes(location) + log.bytes,
            files: self.config.planned_files(location) + log.files,
        }
    }

    fn check_outside(&self) -> anyhow::Result<()> {
        match &self.sync_log {
            Some(log) => log.check(self.config.log_volume()),
            None => Ok(()),
        }
    }

    fn run(&mut self, ctx: &RunContext<'_>) -> anyhow::Result<WorkloadResult> {
        let locations: Vec<LocationDir<'_>> = ctx
            .locations
            .iter()
            .map(|location| LocationDir {
                name: location.name,
                dir: location.scratch.dir(),
            })
            .collect();
        let log = self.sync_log.as_ref().map(|config| LogPlan {
            config,
            home: ctx.scratch,
            repetition: ctx.repetition,
        });
        ctx.progress.start("PostMark");
        let mut sink = std::io::sink();
        let out: &mut dyn Write = match &mut self.out {
            Some(out) => *out,
            None => &mut sink,
        };
        let summary = run(&self.config, &locations, log, out)?;
        ctx.progress
            .done(summary.timing.total.elapsed.as_secs_f64());
        let result = summary.to_workload_result(ctx.repetition, self.ram_bytes);
        self.last = Some(summary);
        Ok(result)
    }
}

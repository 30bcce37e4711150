//! A suite as the driver's plan: every workload it lists, built for every
//! target (each target gets instances of its own: a workload may keep
//! state, such as an io data file, in its target's scratch directory), so
//! a bad parameter is reported before any target is touched.
use super::{Suite, SuiteWorkload};
use crate::driver::{Part, Plan, Spread, StopRule};
use crate::error::UsageError;
use crate::storage::Target;
use crate::workload::{Progress, Workload};

/// Builds the workload a suite lists, its sizes scaled by a factor: the
/// registry's kind for it, with the commands' policy and the host.
pub type Builder<'a> = dyn Fn(&SuiteWorkload, f64) -> anyhow::Result<Box<dyn Workload>> + 'a;

/// How often, how large, what is kept, and how progress shows.
pub struct SuiteOptions {
    /// Repetitions: all of them, or the most when `until` may stop sooner.
    pub repeat: u32,
    /// Stops the repetitions once it gives a reason (`--precision`).
    pub until: Option<StopRule<'static>>,
    pub scale: f64,
    pub keep: bool,
    pub progress: Progress,
}

impl Suite {
    /// The plan that runs this suite on `targets`, side by side.
    pub fn plan(
        &self,
        targets: Vec<Target>,
        build: &Builder<'_>,
        options: SuiteOptions,
    ) -> anyhow::Result<Plan<'static>> {
        let parts = self
            .workloads
            .iter()
            .filter(|listed| listed.kind != super::CRASH)
            .map(|listed| {
                let instances = targets
                    .iter()
                    .map(|_| build(listed, options.scale))
                    .collect::<anyhow::Result<Vec<_>>>()
                    .map_err(|e| self.locate(e, listed))?;
                Ok(Part {
                    label: listed.label.clone(),
                    instances,
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Plan {
            targets,
            parts,
            spread: Spread::EachTarget,
            repetitions: 0..options.repeat,
            until: options.until,
            keep: options.keep,
            progress: options.progress,
            scratch_id: None,
            cold: None,
            remount: None,
            preface: None,
            remedy: format!("use a smaller --scale (this run's is {})", options.scale),
            resume: false,
        })
    }

    /// An error building entry `listed`, with the suite and the entry
    /// named in front, numbered as the suite lists it (a usage error stays
    /// one).
    pub fn locate(&self, e: anyhow::Error, listed: &SuiteWorkload) -> anyhow::Error {
        let index = self
            .workloads
            .iter()
            .position(|w| std::ptr::eq(w, listed))
            .unwrap_or_default();
        let at = format!(
            "suite {}, workload {} ({})",
            self.name,
            index + 1,
            listed.label()
        );
        match e.downcast::<UsageError>() {
            Ok(usage) => UsageError(format!("{at}: {usage}")).into(),
            Err(other) => other.context(at),
        }
    }
}

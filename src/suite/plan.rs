//! A suite as the driver's plan's parts: every workload it lists, built for every
//! target (each target gets instances of its own: a workload may keep
//! state, such as an io data file, in its target's scratch directory), so
//! a bad parameter is reported before any target is touched.
use super::{Suite, SuiteWorkload};
use crate::driver::Part;
use crate::error::UsageError;
use crate::workload::Workload;

/// Builds the workload a suite lists, its sizes scaled by a factor: the
/// registry's kind for it, with the commands' policy and the host.
pub type Builder<'a> = dyn Fn(&SuiteWorkload, f64) -> anyhow::Result<Box<dyn Workload>> + 'a;

impl Suite {
    /// Every workload the suite lists but its crash entry, as the parts
    /// of a plan on `targets` targets: an instance for each, its sizes
    /// scaled by `scale`.
    pub fn parts(
        &self,
        targets: usize,
        build: &Builder<'_>,
        scale: f64,
    ) -> anyhow::Result<Vec<Part<'static>>> {
        self.workloads
            .iter()
            .filter(|listed| listed.kind != super::CRASH)
            .map(|listed| {
                let instances = (0..targets)
                    .map(|_| build(listed, scale))
                    .collect::<anyhow::Result<Vec<_>>>()
                    .map_err(|e| self.locate(e, listed))?;
                Ok(Part {
                    label: listed.label.clone(),
                    instances,
                })
            })
            .collect()
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

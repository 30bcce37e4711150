//! A target's scratch directories for a plan: one, or with several parts
//! one per part inside it (so each part's data is its own, and a part can
//! be kept or inspected on its own).
use crate::result::cleanup::CleanupReport;
use crate::storage::Target;
use crate::storage::scratch::Scratch;

pub struct TargetScratch {
    // Declared first so the nested ones drop (and are removed) first.
    nested: Vec<Scratch>,
    top: Scratch,
}

impl TargetScratch {
    pub fn create(target: &Target, parts: usize, run_id: &str, keep: bool) -> anyhow::Result<Self> {
        let top = Scratch::create(&target.path, run_id, keep)?;
        let nested = match parts {
            0 | 1 => Vec::new(),
            n => (1..=n)
                .map(|n| top.nested(&format!("{run_id}-w{n}")))
                .collect::<anyhow::Result<Vec<_>>>()?,
        };
        Ok(TargetScratch { nested, top })
    }

    /// The directory part `part` runs in.
    pub fn of_part(&self, part: usize) -> &Scratch {
        self.nested.get(part).unwrap_or(&self.top)
    }

    /// Lets go of the target's file system (`Scratch::park`), the nested
    /// directories first.
    pub fn park(&self) -> anyhow::Result<()> {
        self.nested.iter().try_for_each(Scratch::park)?;
        self.top.park()
    }

    /// Takes it back after a remount (`Scratch::unpark`), the top first.
    pub fn unpark(&self) -> anyhow::Result<()> {
        self.top.unpark()?;
        self.nested.iter().try_for_each(Scratch::unpark)
    }

    /// Removes them all; one report for the target.
    pub fn finish(self) -> Option<CleanupReport> {
        let mut nested_reports = Vec::new();
        for dir in self.nested {
            let name = dir
                .path()
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            nested_reports.push((dir.finish(), name));
        }
        let mut report = self.top.finish();
        if let Some(report) = &mut report {
            for (nested, name) in nested_reports {
                report.absorb(nested.unwrap_or_default(), &name);
            }
        }
        report
    }
}

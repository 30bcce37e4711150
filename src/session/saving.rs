//! Saving as the session goes: the record rewritten after every result,
//! so a kill loses at most the workload in flight.
use std::path::PathBuf;

use crate::result::RunResult;

/// The files a run rewrites after each result (its results file, a
/// `--json FILE`).
pub(super) struct Saving {
    files: Vec<PathBuf>,
    /// The references' names: the record marks them only at the end.
    references: Vec<String>,
    /// How many results this process has measured (each saved into
    /// `files`, when there are any).
    saved: usize,
}

impl Saving {
    pub(super) fn new(files: Vec<PathBuf>, references: Vec<String>) -> Saving {
        Saving {
            files,
            references,
            saved: 0,
        }
    }

    /// How many results this process has measured.
    pub(super) fn saved(&self) -> usize {
        self.saved
    }

    /// Saves the record so far, still incomplete (no end time).
    pub(super) fn save(&mut self, record: &RunResult) -> anyhow::Result<()> {
        self.saved += 1;
        if self.files.is_empty() {
            return Ok(());
        }
        let mut record = record.clone();
        mark_references(&mut record, &self.references);
        self.files
            .iter()
            .try_for_each(|path| crate::store::save_in_dir(&record, path))
    }
}

/// Marks the targets named in `references` as references.
pub(super) fn mark_references(record: &mut RunResult, references: &[String]) {
    for target in &mut record.targets {
        target.reference = references.contains(&target.name);
    }
}

//! What a result records of the removal of a scratch directory;
//! `storage::cleanup` removes it.
use serde::{Deserialize, Serialize};

/// How many foreign names a report lists (the count is always exact).
const MAX_LISTED: usize = 20;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CleanupReport {
    /// Entries removed, directories included.
    pub removed: u64,
    /// Entries fsbench did not create (`._x`, `.nfs…`, `.DS_Store`…) that
    /// had to be removed so the directory could go.
    pub foreign_count: u64,
    /// The first few foreign names, relative to the scratch directory.
    pub foreign: Vec<String>,
    /// Most listing passes one directory needed (1 = the normal case).
    pub passes: u32,
    /// Mount points found inside, relative to the scratch directory: left
    /// alone (never descended into), so the scratch directory stays.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mounts_left: Vec<String>,
    /// Why the scratch directory could not be removed, if it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
}

impl CleanupReport {
    pub(crate) fn note_foreign(&mut self, rel: String) {
        self.foreign_count += 1;
        if self.foreign.len() < MAX_LISTED {
            self.foreign.push(rel);
        }
    }

    /// Adds the report of a scratch directory that was nested in this one
    /// (its foreign names prefixed with its directory name).
    pub fn absorb(&mut self, nested: CleanupReport, dir_name: &str) {
        self.removed += nested.removed;
        self.foreign_count += nested.foreign_count;
        let room = MAX_LISTED.saturating_sub(self.foreign.len());
        let names = nested.foreign.into_iter().take(room);
        self.foreign
            .extend(names.map(|name| format!("{dir_name}/{name}")));
        self.passes = self.passes.max(nested.passes);
        let mounts = nested.mounts_left.into_iter();
        self.mounts_left
            .extend(mounts.map(|mount| format!("{dir_name}/{mount}")));
        if self.failed.is_none() {
            self.failed = nested.failed;
        }
    }

    /// A one-line summary when something unusual happened, else None.
    pub fn unusual(&self) -> Option<String> {
        if self.foreign_count == 0 && self.passes <= 1 {
            return None;
        }
        Some(format!(
            "cleanup needed {} listing pass(es) and removed {} entries fsbench did not create: {}",
            self.passes,
            self.foreign_count,
            self.foreign.join(", ")
        ))
    }
}

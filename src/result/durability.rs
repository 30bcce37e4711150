//! What a result records of the power cuts of a configuration (`fsbench
//! crash`, and `fsbench run`'s crash entries); `crash` makes them.
use serde::{Deserialize, Serialize};

/// How the disk behaves at a power cut.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Model {
    Flush,
    #[default]
    Cache,
    Lying,
}

impl Model {
    pub fn name(self) -> &'static str {
        match self {
            Model::Flush => "flush",
            Model::Cache => "cache",
            Model::Lying => "lying",
        }
    }
}

/// What the power cuts of one configuration found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Durability {
    pub model: Model,
    pub seed: u64,
    pub cache_bytes: u64,
    #[serde(default)]
    pub sector_bytes: u64,
    /// Whether the workload's sync log was acknowledged without syncing
    /// (`--unsynced-log`).
    #[serde(default)]
    pub sync_log_unsynced: bool,
    /// Crash states checked.
    pub states: usize,
    /// States where acknowledged data was lost or corrupt.
    pub states_losing: usize,
    /// Of those, the ones that mounted and whose fsck was clean: nothing
    /// would have told the user.
    pub states_silent: usize,
    /// States whose fsck found errors after the replay.
    pub states_fsck_errors: usize,
    /// States that did not mount.
    pub states_unmountable: usize,
    /// Acknowledged operations lost, summed over the states.
    pub acknowledged_lost: usize,
    /// Acknowledged operations whose data was corrupt, summed over the
    /// states.
    pub acknowledged_corrupt: usize,
    /// Unsynced files lost, summed over the states (expected).
    pub unacknowledged_lost: usize,
    /// Files judged by an acknowledged operation, summed over the states
    /// that mounted: how much the verdict rests on.
    #[serde(default)]
    pub acknowledged_judged: usize,
    /// The workload: its operations and how many were acknowledged.
    pub operations: usize,
    pub acknowledged: usize,
    /// What the recorder saw while the workload ran.
    pub writes: u64,
    pub written_bytes: u64,
    pub flushes: u64,
    pub record_seconds: f64,
    pub check_seconds: f64,
    /// The reproducers kept (`--keep-failures`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<String>,
}

impl Durability {
    /// One line: "0 of 200 cuts lost acknowledged data", or "lost
    /// acknowledged data in 24 of 200 cuts (fsck clean: silent in 24)".
    pub fn summary(&self) -> String {
        let mut text = match self.states_losing {
            0 => format!("0 of {} cuts lost acknowledged data", self.states),
            n => format!("lost acknowledged data in {n} of {} cuts", self.states),
        };
        if self.states_silent > 0 {
            text += &format!(" (fsck clean: silent in {})", self.states_silent);
        }
        let loud: Vec<String> = [
            (self.states_fsck_errors, "with fsck errors"),
            (self.states_unmountable, "unmountable"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        if !loud.is_empty() {
            text += &format!("; {}", loud.join(", "));
        }
        text
    }
}

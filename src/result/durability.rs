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
    /// States that lost acknowledged data or the file system: the data
    /// lost or corrupt, the file system unmountable or with fsck errors.
    /// What a power cut can cost the user, counted once per state.
    #[serde(default)]
    pub states_failed: usize,
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
    /// The states that lost acknowledged data or the file system. A result
    /// saved before `states_failed` was recorded counts at least its
    /// losing and its unmountable states (disjoint: an unmountable state
    /// judges no file).
    pub fn failed(&self) -> usize {
        self.states_failed
            .max(self.states_losing + self.states_unmountable)
    }

    /// One line: "0 of 200 cuts lost acknowledged data", or "lost data in
    /// 39 of 40 cuts (7 lost acknowledged data, 5 of them silently; 32 left
    /// it unmountable)".
    pub fn summary(&self) -> String {
        match self.failed() {
            0 => format!("0 of {} cuts lost acknowledged data", self.states),
            n => format!(
                "lost data in {n} of {} cuts ({})",
                self.states,
                self.how_lost()
            ),
        }
    }

    /// What the failed states lost: acknowledged data (and how many of
    /// those nothing would have told the user of), the file system.
    fn how_lost(&self) -> String {
        let mut data = match self.states_losing {
            0 => None,
            n => Some(format!("{n} lost acknowledged data")),
        };
        if let Some(text) = data.as_mut().filter(|_| self.states_silent > 0) {
            *text += &match self.states_silent == self.states_losing {
                true => ", all silently".to_string(),
                false => format!(", {} of them silently", self.states_silent),
            };
        }
        let file_system = [
            (self.states_unmountable, "left it unmountable"),
            (self.states_fsck_errors, "with fsck errors"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect::<Vec<_>>();
        data.into_iter()
            .chain((!file_system.is_empty()).then(|| file_system.join(", ")))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cuts(
        failed: usize,
        losing: usize,
        silent: usize,
        fsck: usize,
        unmountable: usize,
    ) -> Durability {
        Durability {
            states: 40,
            states_failed: failed,
            states_losing: losing,
            states_silent: silent,
            states_fsck_errors: fsck,
            states_unmountable: unmountable,
            ..Durability::default()
        }
    }

    #[test]
    fn an_unmountable_cut_counts_as_a_loss() {
        let btrfs_nobarrier = cuts(39, 7, 5, 0, 32);
        assert_eq!(
            btrfs_nobarrier.summary(),
            "lost data in 39 of 40 cuts (7 lost acknowledged data, 5 of them silently; 32 left it unmountable)"
        );
        let all_unmountable = cuts(40, 0, 0, 0, 40);
        assert_eq!(
            all_unmountable.summary(),
            "lost data in 40 of 40 cuts (40 left it unmountable)"
        );
    }

    #[test]
    fn a_result_saved_without_the_failed_count_counts_losing_and_unmountable_states() {
        assert_eq!(cuts(0, 7, 5, 0, 32).failed(), 39);
        assert_eq!(
            cuts(0, 0, 0, 0, 0).summary(),
            "0 of 40 cuts lost acknowledged data"
        );
        assert_eq!(
            cuts(12, 12, 12, 0, 0).summary(),
            "lost data in 12 of 40 cuts (12 lost acknowledged data, all silently)"
        );
    }
}

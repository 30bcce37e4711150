//! `--sync-log` and its options, shared by `fsbench postmark`, `fsbench
//! tree` and their suite entries.
use clap::Args;

use crate::workload::synclog::{Placement, SyncLogConfig, SyncMode};

#[derive(Debug, Clone, Args)]
pub struct SyncLogArgs {
    /// Emulate a metadata database that syncs on every change (netatalk's
    /// CNID database): append a record per create and delete to a log in
    /// DIR (in a scratch directory of its own) and sync it; `target` puts
    /// it in the target's scratch directory (the same disk as the data).
    #[arg(long, value_name = "DIR|target")]
    sync_log: Option<String>,
    /// How the log is made durable: fdatasync, fsync, or none (not
    /// durable: results are flagged).
    #[arg(long, value_name = "MODE", value_enum, default_value_t = SyncMode::Fdatasync, requires = "sync_log")]
    sync_log_mode: SyncMode,
    /// Group commit: sync once every N records (and once at the end).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "sync_log",
          value_parser = clap::value_parser!(u32).range(1..))]
    sync_log_batch: u32,
}

impl SyncLogArgs {
    /// The log's configuration; None without `--sync-log`.
    pub fn config(&self) -> Option<SyncLogConfig> {
        let placement = Placement::parse(self.sync_log.as_deref()?);
        Some(SyncLogConfig {
            placement,
            mode: self.sync_log_mode,
            batch: self.sync_log_batch,
        })
    }
}

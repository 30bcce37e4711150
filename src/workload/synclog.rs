//! The sync log (`--sync-log`): a metadata database that makes every
//! change durable before it answers, placed anywhere. Seed 000's netatalk
//! keeps its CNID database (Berkeley DB) next to the shares and
//! `fdatasync()`s it on every create and delete; on the data's own disk
//! that made small-file copies 2-3x and deletes up to 6x slower than with
//! the database on tmpfs or another disk. PostMark and the tree workloads
//! append one short record per metadata operation to a log file and sync
//! it (after every record, or every N records: a group commit), so that
//! cost lands in their own timings, wherever the log is placed.
//!
//! Like everything fsbench writes, the log lives in a marked scratch
//! directory: its own, created in the chosen directory, or the target's.
//! All threads share one log behind a mutex, as netatalk's clients share
//! one `cnid_dbd`.
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use anyhow::Context;
use rustix::fs::{Mode, OFlags};
use serde::Serialize;
use serde_json::json;

use crate::measure::phase::{Measured, Rate};
use crate::measure::{LatencyRecorder, PhaseTiming};
use crate::result::env::Risk;
use crate::result::env::TargetEnv;
use crate::result::{Metric, WorkloadResult};
use crate::storage::env::probe_target;
use crate::storage::just_closed;
use crate::storage::scratch::Scratch;

/// `--sync-log target`: the log goes in the target's own scratch directory
/// (seed 000's default: the database on the data's disk).
pub const TARGET_PLACEMENT: &str = "target";

/// The longest record, newline included; longer names are cut. Bounds
/// the log's size for the free-space check when names can be that long.
pub const MAX_RECORD_BYTES: usize = 256;

/// A record's bytes besides its sequence number and name: the operation
/// (`create` and `delete` are equally long), two spaces and the newline.
const RECORD_FIXED_BYTES: usize = "create".len() + 3;

/// How much a workload logs per repetition: what sizes its log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogVolume {
    /// The most records.
    pub records: u64,
    /// The longest name a record can carry, in bytes.
    pub longest_name: usize,
}

impl LogVolume {
    /// The longest record: the sequence number has at most as many digits
    /// as the record count, and no record exceeds `MAX_RECORD_BYTES`.
    fn record_bytes(&self) -> u64 {
        let line = decimal_digits(self.records) + RECORD_FIXED_BYTES + self.longest_name;
        line.min(MAX_RECORD_BYTES) as u64
    }
}

/// Digits of `n` written in decimal: the length of a number in a name.
pub fn decimal_digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |log| log as usize + 1)
}

/// What a workload's logs need where they live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LogSpace {
    pub bytes: u64,
    /// Inodes.
    pub files: u64,
}

/// How each batch of records is made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum SyncMode {
    /// Data and the size, as Berkeley DB's log does.
    Fdatasync,
    /// Data and every inode field.
    Fsync,
    /// Records are written, never synced: not durable (a risk flag says so).
    None,
}

/// Where the log lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// In the target's scratch directory: the same file system as the data.
    Target,
    /// In a scratch directory of its own inside this directory.
    Dir(PathBuf),
}

impl Placement {
    /// `target`, or a directory.
    pub fn parse(text: &str) -> Placement {
        match text {
            TARGET_PLACEMENT => Placement::Target,
            path => Placement::Dir(PathBuf::from(path)),
        }
    }

    /// As the user gave it.
    pub fn label(&self) -> String {
        match self {
            Placement::Target => TARGET_PLACEMENT.to_string(),
            Placement::Dir(path) => path.display().to_string(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncLogConfig {
    pub placement: Placement,
    pub mode: SyncMode,
    /// Records per sync (group commit); 1 syncs every record.
    pub batch: u32,
}

impl SyncLogConfig {
    /// What the log of one repetition of one rank needs in its
    /// directory: its records, and an inode for the file plus, placed
    /// elsewhere, two for its own scratch directory and marker. The one
    /// plan of a log that every workload's checks use.
    pub fn space(&self, volume: LogVolume) -> LogSpace {
        let own_dir = match self.placement {
            Placement::Target => 0,
            Placement::Dir(_) => 2,
        };
        LogSpace {
            bytes: volume.records.saturating_mul(volume.record_bytes()),
            files: 1 + own_dir,
        }
    }

    /// What the log adds to the target's own plan (per rank, as that plan
    /// is): its space, when it lives there.
    pub fn space_on_target(&self, volume: LogVolume) -> LogSpace {
        match self.placement {
            Placement::Target => self.space(volume),
            Placement::Dir(_) => LogSpace::default(),
        }
    }

    /// Refuses, before anything is written, a log directory that is
    /// missing, not a directory, not writable or without room for the
    /// logs of `volume`: under MPI every rank keeps its own log in its own
    /// scratch directory there, so the directory must hold them all.
    pub fn check(&self, volume: LogVolume) -> anyhow::Result<()> {
        let Placement::Dir(path) = &self.placement else {
            return Ok(());
        };
        let ranks = u64::from(crate::scale::size());
        let space = self.space(volume);
        crate::storage::check_room_to_write(
            "--sync-log",
            path,
            space.bytes.saturating_mul(ranks),
            space.files.saturating_mul(ranks),
            crate::storage::SMALLER_SIZE,
        )
    }
}

/// A metadata operation, as the log names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogOp {
    Create,
    Delete,
}

impl LogOp {
    fn name(self) -> &'static str {
        match self {
            LogOp::Create => "create",
            LogOp::Delete => "delete",
        }
    }
}

/// Records `op` on `name` in `log`, when a log is kept.
pub fn record_in(log: Option<&SyncLog>, op: LogOp, name: &str) -> anyhow::Result<()> {
    log.map_or(Ok(()), |log| log.record(op, name))
}

/// One record: `<seq> <op> <name>\n`, at most `MAX_RECORD_BYTES` long.
/// Control characters in the name become `?`, so a record is one line.
pub fn format_record(line: &mut Vec<u8>, seq: u64, op: LogOp, name: &str) {
    use std::io::Write as _;
    line.clear();
    let _ = write!(line, "{seq} {} ", op.name());
    let room = MAX_RECORD_BYTES.saturating_sub(line.len() + 1);
    let mut cut = name.len().min(room);
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    line.extend(
        name[..cut]
            .bytes()
            .map(|b| if b.is_ascii_control() { b'?' } else { b }),
    );
    line.push(b'\n');
}

/// Group commit: a sync is due after every `size` records, and once at
/// the end for the records still waiting.
#[derive(Debug)]
struct Batch {
    size: u32,
    pending: u32,
}

impl Batch {
    fn new(size: u32) -> Self {
        Batch {
            size: size.max(1),
            pending: 0,
        }
    }

    /// Counts a record; true when it completes a batch.
    fn add(&mut self) -> bool {
        self.pending += 1;
        if self.pending < self.size {
            return false;
        }
        self.pending = 0;
        true
    }

    /// True (once) when records wait for a sync.
    fn flush(&mut self) -> bool {
        std::mem::take(&mut self.pending) > 0
    }
}

/// Numbers the log's own scratch directories, so two logs of one run in
/// the same directory (two targets, two workloads) never collide.
static NEXT_LOG_DIR: AtomicU32 = AtomicU32::new(1);

/// Where the log file is, and what removes it.
enum Home {
    /// Its own scratch directory, removed (with the file) at the end.
    Own(Scratch),
    /// A file in the target's scratch directory, removed by name (the
    /// directory itself belongs to the run).
    InTarget { dir: OwnedFd, keep: bool },
}

impl Home {
    fn dir(&self) -> BorrowedFd<'_> {
        match self {
            Home::Own(scratch) => scratch.dir(),
            Home::InTarget { dir, .. } => dir.as_fd(),
        }
    }
}

/// What the mutex guards: the file and the counters.
struct State {
    file: OwnedFd,
    line: Vec<u8>,
    records: u64,
    syncs: u64,
    batch: Batch,
    latency: LatencyRecorder,
}

/// An open sync log: one per repetition of a workload.
pub struct SyncLog {
    config: SyncLogConfig,
    home: Home,
    name: String,
    path: PathBuf,
    env: Option<TargetEnv>,
    state: Mutex<State>,
}

impl SyncLog {
    /// Creates the log of repetition `repetition` of a workload that runs
    /// in `target` (its scratch directory): in `target`, or in a new marked
    /// scratch directory of the configured directory. `--keep` of the
    /// target applies to the log too.
    pub fn open(
        config: &SyncLogConfig,
        target: &Scratch,
        repetition: u32,
    ) -> anyhow::Result<SyncLog> {
        let (home, dir_path) = match &config.placement {
            Placement::Target => {
                let dir = rustix::io::fcntl_dupfd_cloexec(target.dir(), 0)
                    .context("cannot duplicate the scratch directory fd")?;
                let keep = target.keeps();
                (Home::InTarget { dir, keep }, target.path().to_path_buf())
            }
            Placement::Dir(path) => {
                let number = NEXT_LOG_DIR.fetch_add(1, Ordering::Relaxed);
                let id = format!("{}-log{number}", target.id());
                let scratch = Scratch::create(path, &id, target.keeps())?;
                let dir_path = scratch.path().to_path_buf();
                (Home::Own(scratch), dir_path)
            }
        };
        let name = log_file_name(repetition);
        let path = dir_path.join(&name);
        let flags = OFlags::WRONLY
            | OFlags::CREATE
            | OFlags::EXCL
            | OFlags::APPEND
            | OFlags::NOFOLLOW
            | OFlags::CLOEXEC;
        let file = rustix::fs::openat(home.dir(), name.as_str(), flags, Mode::from_raw_mode(0o644))
            .with_context(|| format!("cannot create the sync log {}", path.display()))?;
        Ok(SyncLog {
            config: config.clone(),
            env: probe_target(&dir_path).ok(),
            home,
            name,
            path,
            state: Mutex::new(State {
                file,
                line: Vec::with_capacity(MAX_RECORD_BYTES),
                records: 0,
                syncs: 0,
                batch: Batch::new(config.batch),
                latency: LatencyRecorder::not_operations(),
            }),
        })
    }

    /// Appends one record and, when its batch is complete, syncs the log.
    /// Threads take turns, as clients of one database server do.
    pub fn record(&self, op: LogOp, name: &str) -> anyhow::Result<()> {
        let mut state = self
            .state
            .lock()
            .expect("no thread panicked holding the log");
        let state = &mut *state;
        let seq = state.records + 1;
        format_record(&mut state.line, seq, op, name);
        crate::io::write_all(state.file.as_fd(), &state.line)
            .with_context(|| format!("cannot write the sync log {}", self.path.display()))?;
        state.records = seq;
        if state.batch.add() {
            self.sync(state)?;
        }
        Ok(())
    }

    /// Makes the records so far durable (per the mode) and times it.
    fn sync(&self, state: &mut State) -> anyhow::Result<()> {
        let sync: fn(&OwnedFd) -> rustix::io::Result<()> = match self.config.mode {
            SyncMode::Fdatasync => |file| rustix::fs::fdatasync(file),
            SyncMode::Fsync => |file| rustix::fs::fsync(file),
            // Nothing to sync: no clock read either, per record or batch.
            SyncMode::None => return Ok(()),
        };
        let start = Instant::now();
        sync(&state.file)
            .with_context(|| format!("cannot sync the sync log {}", self.path.display()))?;
        state.latency.record_since(start);
        state.syncs += 1;
        Ok(())
    }

    /// Syncs the records still waiting for their batch to fill. An
    /// operation that logs calls it as its last step, before its clock
    /// stops: its records are durable when it ends, as a server's are
    /// when it answers, and that final sync counts in its own time.
    pub fn commit(&self) -> anyhow::Result<()> {
        let mut state = self
            .state
            .lock()
            .expect("no thread panicked holding the log");
        match state.batch.flush() {
            true => self.sync(&mut state),
            false => Ok(()),
        }
    }

    /// Removes the log (unless `--keep`) and returns what it did. Every
    /// operation that logged has committed its records by then.
    pub fn finish(self) -> anyhow::Result<SyncStats> {
        let state = self.state.into_inner().expect("not shared any more");
        debug_assert_eq!(state.batch.pending, 0, "records left uncommitted");
        drop(state.file);
        match self.home {
            Home::Own(scratch) => {
                // A failure is printed and fails the command once results are saved.
                scratch.finish();
            }
            Home::InTarget { dir, keep: false } => {
                just_closed::unlink(&dir, self.name.as_str())
                    .with_context(|| format!("cannot remove {}", self.path.display()))?;
            }
            Home::InTarget { keep: true, .. } => {}
        }
        Ok(SyncStats {
            config: self.config,
            path: self.path,
            env: self.env,
            records: state.records,
            syncs: state.syncs,
            latency: state.latency,
        })
    }
}

/// What one log did, for the result.
pub struct SyncStats {
    config: SyncLogConfig,
    path: PathBuf,
    env: Option<TargetEnv>,
    pub records: u64,
    pub syncs: u64,
    latency: LatencyRecorder,
}

impl SyncStats {
    /// Adds the log's metrics to `result` (rates over `phase`, the time
    /// the workload spent in operations that log), its placement under
    /// `params.sync_log`, and its risks: records that are never synced,
    /// and whatever the log's own file system can lose.
    pub fn add_to(&self, result: &mut WorkloadResult, phase: PhaseTiming) {
        result.metrics.extend(self.metrics(phase));
        if let Some(params) = result.params.as_object_mut() {
            params.insert("sync_log".into(), self.params());
        }
        result.risks.extend(self.risks());
    }

    /// Records and syncs per second of `phase`, as PostMark's figures
    /// are rates over their phase; the syncs carry the sync latency.
    fn metrics(&self, phase: PhaseTiming) -> [Metric; 2] {
        // A log's records are not file data: never flagged as cached.
        let measured = Measured::over(&phase);
        [
            measured.rate(
                "sync_log_records",
                Rate::per_second("records/s"),
                self.records,
            ),
            measured
                .rate("sync_log_syncs", Rate::per_second("syncs/s"), self.syncs)
                .with_latency(self.latency.summary_for_metric()),
        ]
    }

    fn params(&self) -> serde_json::Value {
        json!({
            "placement": self.config.placement.label(),
            "path": self.path.display().to_string(),
            "fs_type": self.env.as_ref().map(|e| e.fs_type.clone()),
            "mode": self.config.mode,
            "batch": self.config.batch,
            "records": self.records,
            "syncs": self.syncs,
            "env": self.env,
        })
    }

    fn risks(&self) -> Vec<Risk> {
        let mut risks = Vec::new();
        if self.config.mode == SyncMode::None {
            risks.push(Risk {
                code: "sync_log_not_synced".into(),
                message: "results measured with --sync-log-mode none: the metadata log is not durable (never synced), so a crash loses its recent records, and the figures leave out the sync cost the emulated database pays".into(),
            });
        }
        // A log in the target's scratch directory shares the target's
        // risks, which the target's environment already reports.
        if let (Placement::Dir(dir), Some(env)) = (&self.config.placement, &self.env) {
            risks.extend(env.risks.iter().map(|risk| Risk {
                code: format!("sync_log_{}", risk.code),
                message: format!("sync log in {}: {}", dir.display(), risk.message),
            }));
        }
        risks
    }
}

/// The log file's name in its directory, for repetition `repetition`.
pub fn log_file_name(repetition: u32) -> String {
    format!("sync-r{repetition}.log")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(seq: u64, op: LogOp, name: &str) -> String {
        let mut line = Vec::new();
        format_record(&mut line, seq, op, name);
        String::from_utf8(line).unwrap()
    }

    #[test]
    fn a_record_is_one_bounded_line() {
        assert_eq!(record(7, LogOp::Create, "s3/17"), "7 create s3/17\n");
        assert_eq!(record(8, LogOp::Delete, "a\nb\tc"), "8 delete a?b?c\n");
        let long = "é".repeat(400);
        let line = record(u64::MAX, LogOp::Delete, &long);
        assert!(line.len() <= MAX_RECORD_BYTES, "{}", line.len());
        assert!(line.ends_with("é\n"), "cut at a character boundary");
        assert_eq!(line.matches('\n').count(), 1);
    }

    #[test]
    fn a_log_is_planned_at_its_longest_record() {
        let volume = LogVolume {
            records: 44_000,
            longest_name: "t2/s11/1000".len(),
        };
        let longest = record(44_000, LogOp::Create, "t2/s11/1000");
        assert_eq!(volume.record_bytes(), longest.len() as u64);
        let elsewhere = config(Placement::Dir("/x".into()), SyncMode::Fsync, 1);
        let space = elsewhere.space(volume);
        assert_eq!(space.bytes, 44_000 * longest.len() as u64);
        assert_eq!(space.files, 3, "the file, its directory and marker");
        assert_eq!(elsewhere.space_on_target(volume), LogSpace::default());
        let in_target = config(Placement::Target, SyncMode::Fsync, 1);
        assert_eq!(in_target.space_on_target(volume).files, 1);
        let long = LogVolume {
            records: 1,
            longest_name: 4096,
        };
        assert_eq!(
            long.record_bytes(),
            MAX_RECORD_BYTES as u64,
            "names are cut"
        );
        assert_eq!((decimal_digits(0), decimal_digits(10)), (1, 2));
    }

    #[test]
    fn batches_sync_every_n_records_and_the_rest_at_the_end() {
        let syncs = |size: u32, records: u32| {
            let mut batch = Batch::new(size);
            let during = (0..records).filter(|_| batch.add()).count();
            during + usize::from(batch.flush())
        };
        assert_eq!(syncs(1, 25), 25);
        assert_eq!(syncs(10, 25), 3);
        assert_eq!(syncs(10, 30), 3);
        assert_eq!(syncs(10, 0), 0);
        let mut batch = Batch::new(0);
        assert!(batch.add(), "a batch of 0 means 1");
        assert!(!batch.flush());
    }

    fn config(placement: Placement, mode: SyncMode, batch: u32) -> SyncLogConfig {
        SyncLogConfig {
            placement,
            mode,
            batch,
        }
    }

    #[test]
    fn a_log_in_its_own_directory_is_written_synced_and_removed() {
        let target = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let scratch = Scratch::create(target.path(), "t-1", false).unwrap();
        let placement = Placement::Dir(elsewhere.path().to_path_buf());
        let log = SyncLog::open(&config(placement, SyncMode::Fdatasync, 2), &scratch, 0).unwrap();
        for name in ["a", "b", "c"] {
            log.record(LogOp::Create, name).unwrap();
        }
        log.commit().unwrap();
        let text = std::fs::read_to_string(&log.path).unwrap();
        assert_eq!(text, "1 create a\n2 create b\n3 create c\n");
        let stats = log.finish().unwrap();
        assert_eq!((stats.records, stats.syncs), (3, 2));
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    }

    #[test]
    fn an_unsynced_log_raises_a_risk_and_keep_keeps_it() {
        let target = tempfile::tempdir().unwrap();
        let scratch = Scratch::create(target.path(), "t-2", true).unwrap();
        let log =
            SyncLog::open(&config(Placement::Target, SyncMode::None, 1), &scratch, 3).unwrap();
        log.record(LogOp::Delete, "x").unwrap();
        let stats = log.finish().unwrap();
        assert_eq!((stats.records, stats.syncs), (1, 0));
        assert!(
            scratch.path().join(log_file_name(3)).exists(),
            "--keep keeps it"
        );
        let mut result = WorkloadResult {
            params: json!({}),
            ..Default::default()
        };
        let phase = PhaseTiming::new(
            std::time::Instant::now(),
            std::time::Duration::from_secs(2),
            std::time::Duration::ZERO,
        );
        stats.add_to(&mut result, phase);
        assert_eq!(result.risks[0].code, "sync_log_not_synced");
        assert_eq!(result.params["sync_log"]["placement"], "target");
        assert_eq!(result.metric("sync_log_records").unwrap().value, 0.5);
    }
}

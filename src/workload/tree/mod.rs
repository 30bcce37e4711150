//! Real-world tree workloads (seeds 000-003): a dataset shaped like a photo
//! library, large images, a source tree, many mid-size files or a maildir
//! (or the user's own directory, read-only), and the work people time by
//! hand on it: find, stat, read everything, concatenate, untar, copy (rsync -a),
//! their own command (`--cmd`), streaming, rm -rf. Each operation is one
//! set of metrics; caches are dropped between operations when possible.
pub mod command;
pub mod dataset;
mod ops;
mod parallel;
mod repetition;
mod tarball;
mod walk;

use std::ffi::CStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use anyhow::Context;
use rustix::fs::{Mode, OFlags};
use serde_json::json;

use self::command::CommandTemplate;
use self::dataset::{DatasetKind, Description, Plan};
use self::repetition::Repetition;
use crate::error::usage;
use crate::result::WorkloadResult;
use crate::storage::Target;
use crate::workload::synclog::{LogSpace, LogVolume, SyncLogConfig};
use crate::workload::{RunContext, Workload};

/// The operations, in the order they run (whatever order `--ops` names
/// them in): reads first, on a freshly written dataset, then the writers,
/// and `delete` last, on the copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Op {
    Find,
    Stat,
    Read,
    Concat,
    Untar,
    Copy,
    Cmd,
    Stream,
    Delete,
}

const OPS: [(Op, &str); 9] = [
    (Op::Find, "find"),
    (Op::Stat, "stat"),
    (Op::Read, "read"),
    (Op::Concat, "concat"),
    (Op::Untar, "untar"),
    (Op::Copy, "copy"),
    (Op::Cmd, "cmd"),
    (Op::Stream, "stream"),
    (Op::Delete, "delete"),
];

impl Op {
    pub fn parse(name: &str) -> Option<Op> {
        OPS.iter().find(|o| o.1 == name).map(|o| o.0)
    }

    pub fn name(self) -> &'static str {
        OPS.iter().find(|o| o.0 == self).expect("listed").1
    }

    /// Every operation `--ops all` runs (`cmd` runs when `--cmd` is given).
    pub fn all() -> Vec<Op> {
        OPS.iter().map(|o| o.0).filter(|&o| o != Op::Cmd).collect()
    }

    pub fn names() -> String {
        OPS.map(|o| o.1).join(",")
    }

    /// `find,copy` or `all` into sorted operations; `cmd` is added when
    /// `--cmd` is given and required for it.
    pub fn parse_list(list: &str, with_commands: bool) -> anyhow::Result<Vec<Op>> {
        let mut ops = Vec::new();
        for name in list.split(',').map(str::trim) {
            match (name, Op::parse(name)) {
                ("all", _) => ops.extend(Op::all()),
                (_, Some(op)) => ops.push(op),
                (_, None) => {
                    return usage(format!(
                        "--ops {list}: unknown operation '{name}'; use {} or all",
                        Op::names()
                    ));
                }
            }
        }
        match (with_commands, ops.contains(&Op::Cmd)) {
            (true, _) => ops.push(Op::Cmd),
            (false, true) => {
                return usage("--ops cmd: give the command with --cmd 'COMMAND {src} {dst}'");
            }
            (false, false) => {}
        }
        ops.sort();
        ops.dedup();
        Ok(ops)
    }
}

/// Where the tree comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// Generated in the scratch directory.
    Dataset {
        kind: DatasetKind,
        scale: f64,
        seed: u64,
    },
    /// The user's directory, only ever read.
    Dir(PathBuf),
}

impl Source {
    /// The user's `--source` directory, which must exist; kept as its
    /// canonical path, so the check that it does not contain the target
    /// sees through symlinks.
    pub fn dir(dir: &Path) -> anyhow::Result<Source> {
        let shown = dir.display();
        match std::fs::metadata(dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                usage(format!("--source {shown} does not exist"))
            }
            Err(e) => usage(format!("--source {shown}: {e}")),
            Ok(meta) if !meta.is_dir() => usage(format!("--source {shown} is not a directory")),
            Ok(_) => match std::fs::canonicalize(dir) {
                Ok(path) => Ok(Source::Dir(path)),
                Err(e) => usage(format!("--source {shown}: {e}")),
            },
        }
    }
}

#[derive(Debug, Clone)]
pub struct TreeConfig {
    pub source: Source,
    /// Sorted, without duplicates.
    pub ops: Vec<Op>,
    pub commands: Vec<CommandTemplate>,
    /// Size of the stream file; None: the dataset's size (at least 16 MiB).
    pub stream_bytes: Option<u64>,
    pub drop_caches: bool,
    /// Copy, untar and concat end with a sync of the file system inside
    /// their timed window (as bonnie++'s block write ends with fsync, fio's
    /// end_fsync), so their time is the storage's, not the page cache's.
    pub end_sync: bool,
    /// Threads of find, stat, read, copy and delete (1: like find, cat, rsync, rm).
    pub threads: usize,
    /// Leave every operation's output in place (`--keep`).
    pub keep_outputs: bool,
    /// Record every entry copy and untar create and delete removes in a
    /// sync log (`--sync-log`).
    pub sync_log: Option<SyncLogConfig>,
}

pub struct TreeWorkload {
    config: TreeConfig,
    plan: Option<Plan>,
    description: Description,
    ram_bytes: u64,
}

const MIN_STREAM_BYTES: u64 = 16 << 20;

impl TreeWorkload {
    /// Plans the dataset, or walks `--source` (read-only) to describe it;
    /// `ram_bytes`, the host's RAM, flags results whose data fits in it.
    pub fn new(config: TreeConfig, ram_bytes: u64) -> anyhow::Result<Self> {
        let (plan, description) = match &config.source {
            Source::Dataset { kind, scale, seed } => {
                let plan = Plan::new(*kind, *scale, *seed);
                let description = plan.describe();
                (Some(plan), description)
            }
            Source::Dir(path) => (None, describe_dir(path)?),
        };
        Ok(TreeWorkload {
            config,
            plan,
            description,
            ram_bytes,
        })
    }

    pub fn description(&self) -> &Description {
        &self.description
    }

    fn has(&self, op: Op) -> bool {
        self.config.ops.contains(&op)
    }

    /// The threads find, stat, read, copy and delete start: `--threads`,
    /// but no more than the tree has directories. Each directory is one
    /// job of the parallel walk, so threads beyond them could never all
    /// have work: they would only cost memory (`-j 1024` on a tree of 24
    /// directories started 1024 threads). Two stay when several were asked
    /// for, so the walk is still the parallel one.
    fn walkers(&self) -> usize {
        let threads = self.config.threads;
        if threads <= 1 {
            return threads;
        }
        // The root is a job too.
        let jobs = usize::try_from(self.description.dirs.saturating_add(1)).unwrap_or(usize::MAX);
        threads.min(jobs.max(2))
    }

    fn stream_bytes(&self) -> u64 {
        self.config
            .stream_bytes
            .unwrap_or(self.description.bytes.max(MIN_STREAM_BYTES))
    }

    /// The most the run holds at once, counting a tree as `tree`, the tar
    /// and the concatenation as `tar` and `concat`, the stream file as
    /// `stream` (bytes or entries): the dataset, the copy (it lives until
    /// `delete`), and the largest other output (the tar and its extraction
    /// exist together); with `--keep` every output stays.
    fn peak(&self, tree: u64, tar: u64, concat: u64, stream: u64) -> u64 {
        let generated = if self.plan.is_some() { tree } else { 0 };
        let copy = if self.has(Op::Copy) || self.has(Op::Delete) {
            tree
        } else {
            0
        };
        let outputs = [
            (self.has(Op::Untar), tar + tree),
            (self.has(Op::Concat), concat),
            (self.has(Op::Cmd), tree * self.config.commands.len() as u64),
            (self.has(Op::Stream), stream),
        ];
        let present = outputs.iter().filter(|o| o.0).map(|o| o.1);
        let others = if self.config.keep_outputs {
            present.sum()
        } else {
            present.max().unwrap_or(0)
        };
        generated + copy + others
    }

    /// How much a repetition's sync log holds: every entry of the tree
    /// (and its top directory) once per operation that logs, each named
    /// by its path in the tree, behind `copy/` when the copy is deleted (a
    /// tar's directories only add a `/`).
    fn log_volume(&self) -> LogVolume {
        let logging = [Op::Copy, Op::Untar, Op::Delete];
        let ops = logging.iter().filter(|&&op| self.has(op)).count() as u64;
        LogVolume {
            records: ops * (self.description.entries + 1),
            longest_name: "copy/".len() + self.description.longest_path,
        }
    }

    /// What the sync log adds to the target's plan.
    fn log_on_target(&self) -> LogSpace {
        let log = self.config.sync_log.as_ref();
        log.map_or_else(LogSpace::default, |l| l.space_on_target(self.log_volume()))
    }

    fn params(&self) -> serde_json::Value {
        let source = match &self.config.source {
            Source::Dataset { kind, scale, seed } => {
                json!({"dataset": kind, "scale": scale, "seed": seed})
            }
            Source::Dir(path) => json!({"source": path.display().to_string()}),
        };
        json!({
            "source": source,
            "description": self.description,
            "ops": self.config.ops.iter().map(|o| o.name()).collect::<Vec<_>>(),
            "commands": self.config.commands.iter().map(|c| &c.text).collect::<Vec<_>>(),
            "stream_bytes": self.has(Op::Stream).then(|| self.stream_bytes()),
            "threads": self.config.threads,
        })
    }
}

/// Refuses a `--source` that contains the target: the copy would be
/// written into the tree it is reading, and recurse until it fails.
pub fn check_source_outside(source: &Source, target: &Target) -> anyhow::Result<()> {
    let (Source::Dir(source), Ok(target_dir)) = (source, std::fs::canonicalize(&target.path))
    else {
        return Ok(());
    };
    if target_dir.starts_with(source) {
        return usage(format!(
            "--source {} contains the target {}: use a source outside it",
            source.display(),
            target.path.display()
        ));
    }
    Ok(())
}

/// Walks a user's directory (read-only) and describes it.
fn describe_dir(path: &Path) -> anyhow::Result<Description> {
    let dir = open_dir_path(path)?;
    let mut describe = ops::Describe::default();
    walk::walk(dir.as_fd(), &mut describe)
        .with_context(|| format!("cannot read --source {}", path.display()))?;
    Ok(describe.description.finish())
}

fn open_dir_path(path: &Path) -> anyhow::Result<OwnedFd> {
    rustix::fs::open(
        path,
        OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .with_context(|| format!("cannot open {}", path.display()))
}

impl Workload for TreeWorkload {
    fn kind(&self) -> &'static str {
        "tree"
    }

    fn planned_bytes(&self) -> u64 {
        let d = &self.description;
        self.peak(
            d.disk_bytes(),
            tarball::tar_bytes(d),
            d.bytes,
            self.stream_bytes(),
        ) + self.log_on_target().bytes
    }

    fn planned_files(&self) -> u64 {
        // Each tree counts its entries plus one for its top directory; the
        // repetition's directory, the marker and a sync log come on top.
        self.peak(self.description.entries + 1, 1, 1, 1) + 2 + self.log_on_target().files
    }

    fn check_target(&self, target: &Target) -> anyhow::Result<()> {
        check_source_outside(&self.config.source, target)
    }

    fn check_outside(&self) -> anyhow::Result<()> {
        match &self.config.sync_log {
            Some(log) => log.check(self.log_volume()),
            None => Ok(()),
        }
    }

    fn run(&mut self, ctx: &RunContext<'_>) -> anyhow::Result<WorkloadResult> {
        let mut result = WorkloadResult {
            workload: self.kind().into(),
            repetition: ctx.repetition,
            params: self.params(),
            ..Default::default()
        };
        let mut rep = Repetition::start(self, ctx, &mut result)?;
        rep.run_ops()?;
        rep.finish()?;
        Ok(result)
    }
}

fn cstring(name: &str) -> anyhow::Result<std::ffi::CString> {
    Ok(std::ffi::CString::new(name)?)
}

/// Mode of the directories fsbench makes for the dataset and outputs.
const DIR_MODE: u32 = 0o755;

fn make_dir(parent: BorrowedFd<'_>, name: &str) -> anyhow::Result<OwnedFd> {
    rustix::fs::mkdirat(parent, name, Mode::from_raw_mode(DIR_MODE))
        .with_context(|| format!("cannot create {name}"))?;
    open_sub(parent, &cstring(name)?)
}

fn open_sub(parent: BorrowedFd<'_>, name: &CStr) -> anyhow::Result<OwnedFd> {
    crate::storage::cleanup::open_subdir(parent, name)
        .with_context(|| format!("cannot open {}", name.to_string_lossy()))
}

fn create_file(dir: BorrowedFd<'_>, name: &str) -> anyhow::Result<OwnedFd> {
    let flags = OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(0o644))
        .with_context(|| format!("cannot create {name}"))
}

fn open_file(dir: BorrowedFd<'_>, name: &str) -> anyhow::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    rustix::fs::openat(dir, name, flags, Mode::empty())
        .with_context(|| format!("cannot open {name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_more_walkers_than_directories() {
        let tree = |threads: usize, scale: f64| {
            let config = TreeConfig {
                source: Source::Dataset {
                    kind: DatasetKind::Photos,
                    scale,
                    seed: 1,
                },
                ops: Op::all(),
                commands: Vec::new(),
                stream_bytes: None,
                drop_caches: false,
                end_sync: true,
                threads,
                keep_outputs: false,
                sync_log: None,
            };
            TreeWorkload::new(config, 1 << 30).unwrap()
        };
        let small = tree(1024, 0.001);
        let dirs = small.description().dirs as usize;
        assert!((2..1000).contains(&dirs), "{dirs} directories");
        assert_eq!(
            small.walkers(),
            dirs + 1,
            "one per directory, the root's included"
        );
        assert_eq!(tree(16, 0.001).walkers(), 16.min(dirs + 1));
        assert_eq!(tree(1, 0.001).walkers(), 1, "one stays the sequential walk");
        assert_eq!(tree(2, 0.001).walkers(), 2);
        let params = small.params();
        assert_eq!(params["threads"], 1024, "the result says what was asked");
    }

    #[test]
    fn ops_are_sorted_and_checked() {
        let parse = Op::parse_list;
        assert_eq!(
            parse("delete,copy,copy", false).unwrap(),
            [Op::Copy, Op::Delete]
        );
        assert_eq!(parse("copy", true).unwrap(), [Op::Copy, Op::Cmd]);
        assert!(parse("all", false).unwrap().len() >= 7);
        assert!(parse("copy,move", false).is_err());
        assert!(parse("cmd", false).is_err());
    }
}

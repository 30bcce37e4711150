//! `meta`: metadata operations per second, as smallfile and mdtest measure
//! them. The files are created in a fresh directory tree, then each
//! operation runs as a phase of its own over every file (rename, chmod,
//! setxattr, getxattr, symlink, hard link, `ls -l`, truncate, unlink),
//! timed per second and per call (latency percentiles). Threads own
//! disjoint directories, so they contend in the file system alone, never
//! in fsbench.
use serde_json::json;

use self::repetition::Repetition;
use crate::error::usage;
use crate::result::{Metric, WorkloadResult};
use crate::workload::threads;
use crate::workload::{RunContext, Workload};

mod repetition;

/// Most files one run may create: far more than any directory tree a
/// metadata test needs, and small enough that a file's number fits in a
/// u32 (each thread keeps the numbers of its files for the random order).
pub const MAX_FILES: u64 = 100_000_000;

/// Largest `file_size`: files this big measure data throughput (the io and
/// bonnie workloads' business), not metadata.
pub const MAX_FILE_SIZE: u64 = 1 << 30;

/// The operations, in the order they always run (whatever order the user
/// names them in).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MetaOp {
    /// open(O_CREAT | O_EXCL), write `file_size` bytes, close.
    Create,
    /// renameat within the file's directory.
    Rename,
    /// chmod 0600 → 0640.
    Chmod,
    /// lsetxattr `user.fsbench` (64 bytes).
    Setxattr,
    /// lgetxattr `user.fsbench`.
    Getxattr,
    /// A symlink to the file, beside it.
    Symlink,
    /// A hard link to the file, beside it.
    Link,
    /// `ls -l`: read every directory, lstat every entry.
    ReaddirStat,
    /// open, ftruncate to 0 (frees the data; on empty files it still
    /// updates mtime and ctime), close.
    Truncate,
    /// unlink of the file's last name (its symlink and hard link are
    /// removed untimed before).
    Unlink,
}

/// Per operation, by discriminant: its name, metric, and what the progress
/// line says while it runs.
const OPS: [(&str, &str, &str); 10] = [
    ("create", "create_ops_s", "Creating files"),
    ("rename", "rename_ops_s", "Renaming files"),
    ("chmod", "chmod_ops_s", "Changing file modes"),
    ("setxattr", "setxattr_ops_s", "Setting extended attributes"),
    ("getxattr", "getxattr_ops_s", "Reading extended attributes"),
    ("symlink", "symlink_ops_s", "Creating symlinks"),
    ("link", "link_ops_s", "Creating hard links"),
    (
        "readdir_stat",
        "readdir_stat_ops_s",
        "Listing directories (ls -l)",
    ),
    ("truncate", "truncate_ops_s", "Truncating files"),
    ("unlink", "unlink_ops_s", "Deleting files"),
];

impl MetaOp {
    pub const ALL: [MetaOp; 10] = [
        MetaOp::Create,
        MetaOp::Rename,
        MetaOp::Chmod,
        MetaOp::Setxattr,
        MetaOp::Getxattr,
        MetaOp::Symlink,
        MetaOp::Link,
        MetaOp::ReaddirStat,
        MetaOp::Truncate,
        MetaOp::Unlink,
    ];

    pub fn name(self) -> &'static str {
        OPS[self as usize].0
    }

    /// The rate metric's name, e.g. `rename_ops_s`.
    pub fn metric_name(self) -> &'static str {
        OPS[self as usize].1
    }

    fn doing(self) -> &'static str {
        OPS[self as usize].2
    }

    pub fn parse(name: &str) -> Option<MetaOp> {
        MetaOp::ALL.into_iter().find(|op| op.name() == name)
    }

    /// All names, comma separated, for help and error texts.
    pub fn names() -> String {
        OPS.map(|o| o.0).join(",")
    }

    fn is_xattr(self) -> bool {
        matches!(self, MetaOp::Setxattr | MetaOp::Getxattr)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct MetaConfig {
    /// Files in all (over all threads and directories).
    pub files: u64,
    /// Directories the files are spread over: file i lives in directory
    /// i % dirs. Raised to `threads` when smaller, so that every thread
    /// has directories of its own (a note says so).
    pub dirs: u32,
    /// Bytes written into each file when it is created (0: empty files).
    pub file_size: u64,
    /// Threads; thread t works in directories t, t + threads, ...
    pub threads: u32,
    /// The operations timed, in any order and possibly repeated; they run
    /// in `MetaOp::ALL`'s order. The files are always created and deleted
    /// (untimed when create or unlink is not among them).
    pub ops: Vec<MetaOp>,
    /// Seed of the random order.
    pub seed: u64,
    /// Visit each thread's files in a fresh random order in every phase;
    /// otherwise directory by directory, in creation order.
    pub random_order: bool,
}

impl MetaConfig {
    /// Refuses values that cannot run, with a one-line usage error.
    pub fn check(&self) -> anyhow::Result<()> {
        let files = self.files;
        if files == 0 || files > MAX_FILES {
            return usage(format!("{files} files: use 1 to {MAX_FILES}"));
        }
        if self.dirs == 0 || u64::from(self.dirs) > files {
            return usage(format!(
                "{} directories: use 1 to the number of files ({files})",
                self.dirs
            ));
        }
        threads::check_count(u64::from(self.threads))?;
        if u64::from(self.threads) > files {
            return usage(format!(
                "{} threads for {files} files: use at most one thread per file",
                self.threads
            ));
        }
        if self.file_size > MAX_FILE_SIZE {
            return usage(format!(
                "file size {} bytes: use at most {MAX_FILE_SIZE} (1 GiB)",
                self.file_size
            ));
        }
        if self.ops.is_empty() {
            return usage(format!(
                "no operations to time: use some of {}",
                MetaOp::names()
            ));
        }
        Ok(())
    }

    /// The directories the files are spread over (see `dirs`).
    fn leaf_dirs(&self) -> u32 {
        self.dirs.max(self.threads)
    }

    fn selected(&self, op: MetaOp) -> bool {
        self.ops.contains(&op)
    }

    fn role(&self, op: MetaOp, refused: &[MetaOp]) -> Role {
        match op {
            _ if refused.contains(&op) => Role::Skipped,
            _ if self.selected(op) => Role::Timed,
            MetaOp::Create => Role::Untimed("every other operation needs the files"),
            MetaOp::Unlink => Role::Untimed("the files are always removed at the end"),
            MetaOp::Setxattr if self.selected(MetaOp::Getxattr) => {
                Role::Untimed("getxattr needs the attribute set")
            }
            _ => Role::Skipped,
        }
    }
}

/// What becomes of one operation in a run.
enum Role {
    Timed,
    /// Run but not reported, for the reason given.
    Untimed(&'static str),
    Skipped,
}

pub struct Meta {
    config: MetaConfig,
}

impl Meta {
    pub fn new(config: MetaConfig) -> anyhow::Result<Meta> {
        config.check()?;
        Ok(Meta { config })
    }

    /// Runs every operation, timed or untimed as `role` says, and returns
    /// the metrics of the timed ones.
    fn run_ops(
        &self,
        ctx: &RunContext<'_>,
        rep: &mut Repetition<'_>,
        refused: &[MetaOp],
        notes: &mut Vec<String>,
    ) -> anyhow::Result<Vec<Metric>> {
        let mut metrics = Vec::new();
        for op in MetaOp::ALL {
            if op == MetaOp::Unlink && rep.made.extra_names() > 0 {
                rep.remove_extra_names(ctx)?;
                if self.config.selected(op) {
                    notes.push(
                        "unlink times removing each file's last name: the symlinks and hard links to the files were removed untimed before".into(),
                    );
                }
            }
            match self.config.role(op, refused) {
                Role::Skipped => continue,
                Role::Untimed(why) => {
                    notes.push(format!("{} was not timed: it ran because {why}", op.name()));
                    rep.untimed(ctx, op)?;
                }
                Role::Timed => {
                    let metric = rep.timed(ctx, op)?;
                    notes.extend(rep.unexpected_count(op, &metric));
                    metrics.push(metric);
                }
            }
            rep.made.after(op);
        }
        Ok(metrics)
    }

    fn params(&self) -> serde_json::Value {
        let c = &self.config;
        let ops: Vec<&str> = MetaOp::ALL
            .into_iter()
            .filter(|&op| c.selected(op))
            .map(MetaOp::name)
            .collect();
        json!({
            "files": c.files,
            "dirs": c.leaf_dirs(),
            "file_size": c.file_size,
            "threads": c.threads,
            "ops": ops,
            "seed": c.seed,
            "random_order": c.random_order,
        })
    }
}

impl Workload for Meta {
    fn kind(&self) -> &'static str {
        "meta"
    }

    fn planned_bytes(&self) -> u64 {
        // Files occupy whole 4 KiB blocks.
        let per_file = self.config.file_size.div_ceil(4096) * 4096;
        self.config.files.saturating_mul(per_file)
    }

    fn planned_files(&self) -> u64 {
        let c = &self.config;
        // Hard links take no inode; symlinks do.
        let symlinks = if c.selected(MetaOp::Symlink) {
            c.files
        } else {
            0
        };
        c.files + symlinks + u64::from(c.leaf_dirs()) + 1
    }

    fn run(&mut self, ctx: &RunContext<'_>) -> anyhow::Result<WorkloadResult> {
        let config = &self.config;
        let mut rep = Repetition::create(config, ctx.scratch, ctx.repetition)?;
        let mut notes = Vec::new();
        if config.leaf_dirs() > config.dirs {
            notes.push(format!(
                "{} threads need a directory each: the files are spread over {} directories, not {}",
                config.threads,
                config.leaf_dirs(),
                config.dirs
            ));
        }
        let refused = rep.refused(&config.ops)?;
        notes.extend(refusal_notes(&refused, &fs_name(ctx)));
        let metrics = self.run_ops(ctx, &mut rep, &refused, &mut notes)?;
        notes.extend(rep.remove()?.unusual());
        Ok(WorkloadResult {
            workload: self.kind().into(),
            repetition: ctx.repetition,
            params: self.params(),
            metrics,
            notes,
            ..Default::default()
        })
    }
}

/// One note per kind of operation the file system refused (and fsbench
/// skipped).
fn refusal_notes(refused: &[MetaOp], fs: &str) -> Vec<String> {
    let kinds = [
        (
            MetaOp::Setxattr,
            "setxattr/getxattr",
            "user extended attributes",
        ),
        (MetaOp::Symlink, "symlink", "symbolic links"),
        (MetaOp::Link, "link", "hard links"),
    ];
    kinds
        .iter()
        .filter(|(op, _, _)| refused.contains(op))
        .map(|(_, ops, what)| format!("{ops} skipped: {fs} does not support {what}"))
        .collect()
}

/// The target's file system type, for notes ("this file system" when it
/// cannot be told).
fn fs_name(ctx: &RunContext<'_>) -> String {
    ctx.env
        .map_or_else(|| "this file system".into(), |env| env.fs_type.clone())
}

#[cfg(test)]
mod tests;

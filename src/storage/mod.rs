//! Targets (the directories benchmarked), the scratch directory fsbench
//! works in, its cleanup, and the environment probe.
pub mod cleanup;
pub mod devices;
pub mod distinct;
pub mod env;
pub mod forked;
pub mod freeze;
pub mod just_closed;
pub mod loopdev;
pub mod made;
pub mod marker;
pub mod recorder;
pub mod scratch;
pub mod wipe;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use anyhow::Context;

use crate::error::{UsageError, usage};
use crate::size::format_bytes;

/// A directory to benchmark, with the name reports show for it.
/// How many fsbench processes run the same plan on the same targets at
/// once (the ranks of an MPI job; set by `scale::init`): each writes its
/// own data, and they must agree on their scratch directories' names.
static PROCESSES: AtomicU32 = AtomicU32::new(1);

/// Says how many processes share the targets (see [`processes`]).
pub fn set_processes(count: u32) {
    PROCESSES.store(count.max(1), Ordering::Relaxed);
}

/// How many fsbench processes share the targets; 1 alone.
pub fn processes() -> u32 {
    PROCESSES.load(Ordering::Relaxed)
}

#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub name: String,
    pub path: PathBuf,
}

impl Target {
    /// Parses `name=path` or a bare `path` (named after its directory:
    /// `.` in /home/u/photos is "/home/u/photos" in every report). A `=`
    /// that comes after a `/` belongs to the path, so `/mnt/a=b` stays a
    /// path.
    pub fn parse(spec: &str) -> anyhow::Result<Target> {
        let (name, path) = match spec.split_once('=') {
            Some((name, path)) if !name.contains('/') && !name.is_empty() => {
                (name.to_string(), path)
            }
            _ => (named_after(spec), spec),
        };
        if path.is_empty() {
            return usage(format!("target '{spec}' has an empty path"));
        }
        Ok(Target {
            name,
            path: PathBuf::from(path),
        })
    }

    /// Refuses, with a one-line reason, a target fsbench cannot safely use:
    /// missing, not a directory, not writable, or without room for
    /// `planned_bytes` plus a margin, or without `planned_files` free inodes.
    /// The plan is one process's: every rank of an MPI job writes its own
    /// on the shared target, so the room asked for is the plan times ranks.
    /// `remedy` ends a refusal for want of room: what sized the plan.
    pub fn check(
        &self,
        planned_bytes: u64,
        planned_files: u64,
        remedy: &str,
    ) -> anyhow::Result<()> {
        let ranks = u64::from(processes());
        check_room_to_write(
            "target",
            &self.path,
            planned_bytes.saturating_mul(ranks),
            planned_files.saturating_mul(ranks),
            remedy,
        )
    }
}

/// The name of a target given by its path alone: the path as written,
/// but for one with `.` or `..` in it (`.`, `../b`), the directory it
/// names, since "." says nothing in a saved report. The path need not
/// exist yet (the check says so later): without it, the name is the path
/// made absolute.
fn named_after(path: &str) -> String {
    use std::path::Component;
    let given = Path::new(path);
    let relative = given
        .components()
        .any(|c| matches!(c, Component::CurDir | Component::ParentDir));
    if !relative {
        return path.to_string();
    }
    std::fs::canonicalize(given)
        .or_else(|_| std::path::absolute(given))
        .map_or_else(|_| path.to_string(), |p| p.display().to_string())
}

/// The remedy for a plan sized by flags of its own (a command's `-s`).
pub const SMALLER_SIZE: &str = "use a smaller size";

/// The checks of a target for any directory fsbench will write in (a sync
/// log's too): it exists, is a writable directory, and has room for
/// `planned_bytes` plus a margin and `planned_files` inodes. `role` names
/// the directory in the one-line error ("target", "--sync-log"), which
/// ends, for want of room, with `remedy`: what to make smaller ("use a
/// smaller --scale"), which only the caller knows.
pub fn check_room_to_write(
    role: &str,
    path: &Path,
    planned_bytes: u64,
    planned_files: u64,
    remedy: &str,
) -> anyhow::Result<()> {
    check_is_storage(role, path)?;
    check_is_writable_dir(role, path)?;
    check_free_space(role, path, planned_bytes, planned_files, remedy)
}

/// Kernel pseudo file systems (mount table names): views of processes,
/// devices and settings that store no data.
const PSEUDO_FILE_SYSTEMS: [&str; 20] = [
    "proc",
    "sysfs",
    "devtmpfs",
    "devpts",
    "debugfs",
    "tracefs",
    "securityfs",
    "cgroup",
    "cgroup2",
    "pstore",
    "bpf",
    "configfs",
    "fusectl",
    "selinuxfs",
    "mqueue",
    "hugetlbfs",
    "efivarfs",
    "binfmt_misc",
    "nsfs",
    "rpc_pipefs",
];

/// Refuses a pseudo file system by name: writing there fails with a
/// misleading "0 B free", or on devtmpfs (which has room) litters /dev
/// with benchmark files. A path that cannot be probed is left to the
/// checks that follow, which say why.
fn check_is_storage(role: &str, path: &Path) -> anyhow::Result<()> {
    let Ok(env) = env::probe_target(path) else {
        return Ok(());
    };
    if PSEUDO_FILE_SYSTEMS.contains(&env.fs_type.as_str()) {
        return usage(format!(
            "{role} {} is a {} pseudo file system, not storage: choose a directory on the file system to benchmark",
            path.display(),
            env.fs_type
        ));
    }
    Ok(())
}

impl Target {
    /// Refuses a target that does not exist or is not a directory (for
    /// commands that only read it).
    pub fn require_dir(&self) -> anyhow::Result<()> {
        require_dir("target", &self.path)
    }
}

fn require_dir(role: &str, path: &Path) -> anyhow::Result<()> {
    let shown = path.display();
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return usage(format!("{role} {shown} does not exist{}", name_hint(path)));
        }
        Err(e) => return usage(format!("{role} {shown}: {e}")),
    };
    if !meta.is_dir() {
        return usage(format!("{role} {shown} is not a directory"));
    }
    Ok(())
}

/// A missing target written as a bare word (`--target ext4`) was most
/// likely meant as a name: say how to give one.
fn name_hint(path: &Path) -> String {
    let word = path.to_string_lossy();
    let bare = !word.contains('/') && !word.starts_with('.');
    match bare {
        true => format!("; to name a target, use NAME=PATH (e.g. {word}=/mnt/{word})"),
        false => String::new(),
    }
}

fn check_is_writable_dir(role: &str, path: &Path) -> anyhow::Result<()> {
    require_dir(role, path)?;
    let shown = path.display();
    use rustix::fs::Access;
    rustix::fs::access(path, Access::WRITE_OK | Access::EXEC_OK).map_err(|e| {
        UsageError(format!(
            "{role} {shown} is not writable: {}",
            std::io::Error::from(e)
        ))
    })?;
    Ok(())
}

// Not enough space or inodes is a usage error (exit 2), like a missing
// target: the target cannot be used as asked, found before anything runs.

/// Space kept free beyond the plan: 5 % of it, at least 1 MiB, so a run
/// never fills a file system to the last block.
fn space_margin(planned_bytes: u64) -> u64 {
    (planned_bytes / 20).max(1 << 20)
}

fn check_free_space(
    role: &str,
    path: &Path,
    planned_bytes: u64,
    planned_files: u64,
    remedy: &str,
) -> anyhow::Result<()> {
    let stat = rustix::fs::statvfs(path)
        .with_context(|| format!("cannot query free space of {}", path.display()))?;
    // File systems without an inode limit (btrfs, many network ones) report 0.
    if stat.f_files > 0 && stat.f_favail < planned_files {
        return usage(format!(
            "not enough free inodes on {role} {}: the run creates {planned_files} files but only {} are free; {remedy}",
            path.display(),
            stat.f_favail
        ));
    }
    let free = stat.f_bavail.saturating_mul(stat.f_frsize);
    let needed = planned_bytes.saturating_add(space_margin(planned_bytes));
    // Neither has one without a size limit (ramfs, some FUSE ones): 0
    // blocks in all, so nothing to check against.
    if stat.f_blocks > 0 && free < needed {
        return usage(format!(
            "not enough space on {role} {}: the run writes {} (+{} margin) but only {} is free; {remedy}",
            path.display(),
            format_bytes(planned_bytes),
            format_bytes(space_margin(planned_bytes)),
            format_bytes(free)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_named_and_bare_targets() {
        assert_eq!(
            Target::parse("fast=/mnt/ssd").unwrap(),
            Target {
                name: "fast".into(),
                path: "/mnt/ssd".into()
            }
        );
        assert_eq!(
            Target::parse("/mnt/a=b").unwrap().path,
            PathBuf::from("/mnt/a=b")
        );
        assert_eq!(Target::parse("/tmp").unwrap().name, "/tmp");
        let here = std::env::current_dir().unwrap();
        assert_eq!(Target::parse(".").unwrap().name, here.display().to_string());
        assert_eq!(Target::parse(".").unwrap().path, PathBuf::from("."));
        assert!(Target::parse("x=").is_err());
    }

    #[test]
    fn refuses_missing_file_and_oversized_plans() {
        let dir = tempfile::tempdir().unwrap();
        let missing = Target::parse(dir.path().join("nope").to_str().unwrap()).unwrap();
        assert!(
            missing
                .check(0, 0, SMALLER_SIZE)
                .unwrap_err()
                .to_string()
                .contains("does not exist")
        );
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        let file_target = Target::parse(file.to_str().unwrap()).unwrap();
        assert!(
            file_target
                .check(0, 0, SMALLER_SIZE)
                .unwrap_err()
                .to_string()
                .contains("not a directory")
        );
        let ok = Target::parse(dir.path().to_str().unwrap()).unwrap();
        ok.check(4096, 1, SMALLER_SIZE).unwrap();
        let err = ok
            .check(u64::MAX / 2, 1, "use a smaller --scale")
            .unwrap_err()
            .to_string();
        assert!(err.contains("not enough space"), "{err}");
        assert!(err.ends_with("; use a smaller --scale"), "{err}");
    }
}

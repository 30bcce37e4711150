//! Deleting a tree as `rm -rf` does, with one thread (one listing per
//! directory) or several (files first, then the directories, deepest
//! first), each entry removed recorded in the sync log when there is one.
use std::ffi::CStr;
use std::os::fd::{AsFd, BorrowedFd};
use std::time::Instant;

use anyhow::Context;
use rustix::fs::AtFlags;
use rustix::io::Errno;

use super::Tally;
use crate::result::cleanup::CleanupReport;
use crate::storage::cleanup::{empty_dir, open_subdir};
use crate::storage::just_closed;
use crate::workload::synclog::{LogOp, SyncLog, record_in};
use crate::workload::tree::parallel::{self, Parallel, open_beneath};
use crate::workload::tree::walk::{Kind, Visited, Visitor, kind_of, read_listing};

/// `rm -rf parent/name`: removes the tree and the directory itself with
/// one listing per directory, as rm does; returns the entries removed (the
/// directory included). A directory still not empty after that (network
/// file systems whose listings skip entries, files they add themselves) is
/// emptied by the cleanup's repeated passes.
pub fn delete_tree(parent: BorrowedFd<'_>, name: &CStr) -> anyhow::Result<u64> {
    remove_tree(parent, name, &mut name.to_string_lossy().into_owned(), None)
}

/// The delete operation: `delete_tree` with `threads` threads, each entry
/// removed recorded in `log` (by its path from `parent`). Entries a
/// network file system added itself are removed unrecorded.
pub fn delete_logged(
    parent: BorrowedFd<'_>,
    name: &CStr,
    threads: usize,
    log: Option<&SyncLog>,
) -> anyhow::Result<u64> {
    match threads {
        0 | 1 => remove_tree(parent, name, &mut name.to_string_lossy().into_owned(), log),
        n => delete_tree_parallel(parent, name, n, log),
    }
}

/// `delete_tree` of `parent/name`, known to the log as `rel`.
fn remove_tree(
    parent: BorrowedFd<'_>,
    name: &CStr,
    rel: &mut String,
    log: Option<&SyncLog>,
) -> anyhow::Result<u64> {
    let dir = open_subdir(parent, name)
        .with_context(|| format!("cannot open {}", name.to_string_lossy()))?;
    let (stream, listing) = read_listing(dir)?;
    let fd = stream.fd()?;
    let mut removed = 0;
    for item in &listing {
        crate::interrupt::check()?;
        let rel_len = rel.len();
        // The path is only the log's: rm -rf's own loop does not build it.
        if log.is_some() {
            rel.push('/');
            rel.push_str(&item.name.to_string_lossy());
        }
        removed += match kind_of(fd, &item.name, item.file_type)? {
            Kind::Dir => remove_tree(fd, &item.name, rel, log)?,
            _ => {
                just_closed::unlink(fd, item.name.as_c_str())
                    .with_context(|| format!("cannot remove {}", item.name.to_string_lossy()))?;
                record_in(log, LogOp::Delete, rel)?;
                1
            }
        };
        rel.truncate(rel_len);
    }
    let removed = match rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR) {
        Err(Errno::NOTEMPTY) => {
            let mut report = CleanupReport::default();
            empty_dir(fd, &name.to_string_lossy(), None, &mut report)?;
            drop(stream);
            rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR)?;
            removed + report.removed + 1
        }
        Err(e) => {
            return Err(e).with_context(|| format!("cannot remove {}", name.to_string_lossy()));
        }
        Ok(()) => removed + 1,
    };
    record_in(log, LogOp::Delete, rel)?;
    Ok(removed)
}

/// Unlinks every non-directory; remembers directories for later.
struct Unlink<'l> {
    tally: Tally,
    /// The path the log records, rebuilt for each entry.
    logged: String,
    dirs: Vec<String>,
    log: Option<&'l SyncLog>,
    /// The tree's name, which starts the paths the log records.
    top: &'l str,
}

impl Visitor for Unlink<'_> {
    fn leaf(&mut self, entry: &Visited<'_>) -> anyhow::Result<()> {
        let start = Instant::now();
        just_closed::unlink(entry.parent, entry.name)
            .with_context(|| format!("cannot remove {}", entry.rel))?;
        if let Some(log) = self.log {
            self.logged.clear();
            self.logged.extend([self.top, "/", entry.rel]);
            log.record(LogOp::Delete, &self.logged)?;
        }
        self.tally.add(0, start);
        Ok(())
    }
}

impl Parallel for Unlink<'_> {
    fn subdir(&mut self, entry: &Visited<'_>, _dir: BorrowedFd<'_>) -> anyhow::Result<()> {
        self.dirs.push(entry.rel.to_string());
        Ok(())
    }
}

/// `delete_tree` with `threads` threads removing files, then the
/// directories, deepest first; each entry recorded in `log`. The walk
/// already listed every directory while unlinking its files, so each
/// directory is removed without a second listing.
fn delete_tree_parallel(
    parent: BorrowedFd<'_>,
    name: &CStr,
    threads: usize,
    log: Option<&SyncLog>,
) -> anyhow::Result<u64> {
    let root = open_subdir(parent, name)
        .with_context(|| format!("cannot open {}", name.to_string_lossy()))?;
    let top = name.to_string_lossy();
    let make = || Unlink {
        tally: Tally::default(),
        logged: String::new(),
        dirs: Vec::new(),
        log,
        top: &top,
    };
    let unlinkers = parallel::walk(root.as_fd(), (0..threads).map(|_| make()).collect())?;
    let mut dirs: Vec<&str> = unlinkers
        .iter()
        .flat_map(|u| u.dirs.iter().map(String::as_str))
        .collect();
    let mut removed: u64 = unlinkers.iter().map(|u| u.tally.entries).sum();
    dirs.sort_by_key(|rel| std::cmp::Reverse(rel.matches('/').count()));
    for rel in dirs {
        crate::interrupt::check()?;
        let (up, last) = rel.rsplit_once('/').unwrap_or(("", rel));
        let holder = open_beneath(root.as_fd(), up)?;
        let last = std::ffi::CString::new(last)?;
        removed += remove_emptied_dir(holder.as_fd(), &last, format!("{top}/{rel}"), log)?;
    }
    drop(root);
    Ok(removed + remove_emptied_dir(parent, name, top.into_owned(), log)?)
}

/// Removes the directory `parent/name` (known to the log as `rel`) whose
/// contents are already gone: one rmdir, no listing. One still not empty
/// (a network file system's listing skipped entries, or it added files
/// itself) is listed and emptied as `remove_tree` does. Returns the
/// entries removed, the directory included.
fn remove_emptied_dir(
    parent: BorrowedFd<'_>,
    name: &CStr,
    mut rel: String,
    log: Option<&SyncLog>,
) -> anyhow::Result<u64> {
    match rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR) {
        Ok(()) => {
            record_in(log, LogOp::Delete, &rel)?;
            Ok(1)
        }
        Err(Errno::NOTEMPTY) => remove_tree(parent, name, &mut rel, log),
        Err(e) => Err(e).with_context(|| format!("cannot remove {rel}")),
    }
}

#[cfg(test)]
mod tests {
    use rustix::fs::{Mode, OFlags};

    use super::*;

    #[test]
    fn an_emptied_directory_goes_with_one_rmdir_and_a_full_one_is_emptied() {
        let tmp = tempfile::tempdir().unwrap();
        let flags = OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC;
        let parent = rustix::fs::open(tmp.path(), flags, Mode::empty()).unwrap();
        std::fs::create_dir(tmp.path().join("empty")).unwrap();
        let removed = remove_emptied_dir(parent.as_fd(), c"empty", "empty".into(), None);
        assert_eq!(removed.unwrap(), 1);
        // Entries the walk did not see (a file system's own, a skipped one).
        std::fs::create_dir_all(tmp.path().join("full/sub")).unwrap();
        std::fs::write(tmp.path().join("full/sub/late"), b"x").unwrap();
        let removed = remove_emptied_dir(parent.as_fd(), c"full", "full".into(), None);
        assert_eq!(removed.unwrap(), 3);
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }
}

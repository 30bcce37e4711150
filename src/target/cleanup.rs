//! Removing scratch data robustly.
//!
//! Rules: only directories that carry fsbench's marker are removed; symlinks
//! are never followed (every open uses O_NOFOLLOW, every removal is an
//! `unlinkat` of the link itself); a directory's listing is read completely
//! before anything in it is deleted, and passes repeat until it is empty,
//! because readdir on NFS, SMB, AFP and many FUSE file systems skips entries
//! when the directory changes under an open stream.
use std::ffi::{CStr, CString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, RenameFlags};
use rustix::io::Errno;
use serde::{Deserialize, Serialize};

use super::scratch::Marker;

/// Name of the marker file inside every scratch directory.
pub const MARKER: &str = ".fsbench-scratch";
/// Scratch directories are `<target>/fsbench-<run-id>`.
pub const SCRATCH_PREFIX: &str = "fsbench-";

/// Passes in a row that remove nothing before cleanup gives up on a
/// directory whose entries keep reappearing.
const MAX_IDLE_PASSES: u32 = 20;
/// Directory levels descended with open fds (see `Emptier`).
const MAX_OPEN_DEPTH: usize = 32;
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
}

impl CleanupReport {
    fn note_foreign(&mut self, rel: String) {
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

/// Files that network and desktop file systems create by themselves:
/// AppleDouble (`._x`), NFS silly renames (`.nfsXXXX`), Finder metadata,
/// FUSE hidden files, SMB delete-on-close leftovers, Windows thumbnails.
pub fn is_foreign_name(name: &[u8]) -> bool {
    const PREFIXES: [&[u8]; 7] = [
        b"._",
        b".nfs",
        b".DS_Store",
        b".fuse_hidden",
        b".smbdelete",
        b".AppleDouble",
        b".TemporaryItems",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p)) || name == b"Thumbs.db"
}

/// One directory entry, with its name owned so the listing outlives the
/// directory stream.
pub struct Entry {
    pub name: CString,
    pub file_type: FileType,
}

/// Reads the complete listing of `dir` (without `.` and `..`) before the
/// caller changes anything in it.
pub fn list_entries(dir: BorrowedFd<'_>) -> rustix::io::Result<Vec<Entry>> {
    read_entries(&mut Dir::read_from(dir)?)
}

/// Reads `stream` to its end: its entries without `.` and `..`.
pub fn read_entries(stream: &mut Dir) -> rustix::io::Result<Vec<Entry>> {
    let mut entries = Vec::new();
    while let Some(entry) = stream.read() {
        let entry = entry?;
        let name = entry.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        entries.push(Entry {
            name: name.to_owned(),
            file_type: entry.file_type(),
        });
    }
    Ok(entries)
}

/// Opens a subdirectory without following a symlink in its place.
pub fn open_subdir(dir: BorrowedFd<'_>, name: &CStr) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

fn entry_is_dir(dir: BorrowedFd<'_>, entry: &Entry) -> rustix::io::Result<bool> {
    if entry.file_type != FileType::Unknown {
        return Ok(entry.file_type == FileType::Directory);
    }
    // Some file systems do not fill d_type; ask without following links.
    let stat = rustix::fs::statat(dir, entry.name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW)?;
    Ok(FileType::from_raw_mode(stat.st_mode) == FileType::Directory)
}

/// Deletes everything in `dir` (but `keep`, if given), repeating listing
/// passes until nothing else is left. `rel` names `dir` in reports ("" for
/// the top of a scratch directory).
pub fn empty_dir(
    dir: BorrowedFd<'_>,
    rel: &str,
    keep: Option<&CStr>,
    report: &mut CleanupReport,
) -> anyhow::Result<()> {
    let mut emptier = Emptier {
        top: dir,
        report,
        moved: 0,
    };
    emptier.empty(dir, rel, keep, 0)
}

/// One cleanup of a tree. Directories are descended with open fds down to
/// `MAX_OPEN_DEPTH`; a subtree deeper than that is moved up to the top of
/// the tree and removed in a later pass, so any depth is removed with a
/// small, fixed number of open fds.
struct Emptier<'a, 'r> {
    top: BorrowedFd<'a>,
    report: &'r mut CleanupReport,
    /// Subtrees moved up so far (also makes their temporary names unique).
    moved: u64,
}

impl Emptier<'_, '_> {
    fn empty(
        &mut self,
        dir: BorrowedFd<'_>,
        rel: &str,
        keep: Option<&CStr>,
        depth: usize,
    ) -> anyhow::Result<()> {
        let mut idle_passes = 0;
        for pass in 1.. {
            let entries: Vec<Entry> = list_entries(dir)
                .with_context(|| format!("cannot list {}", shown(rel)))?
                .into_iter()
                .filter(|e| Some(e.name.as_c_str()) != keep)
                .collect();
            if entries.is_empty() {
                return Ok(());
            }
            self.report.passes = self.report.passes.max(pass);
            if idle_passes > 0 {
                // Give a network file system time to settle (e.g. an `.nfs`
                // file whose last user is closing it).
                std::thread::sleep(Duration::from_millis(10 << idle_passes.min(6)));
            }
            let progress_before = self.report.removed + self.moved;
            for entry in &entries {
                crate::interrupt::check().or_else(ignore_interrupt_during_cleanup)?;
                self.remove_entry(dir, rel, entry, depth)?;
            }
            idle_passes = if self.report.removed + self.moved == progress_before {
                idle_passes + 1
            } else {
                0
            };
            if idle_passes >= MAX_IDLE_PASSES {
                break;
            }
        }
        anyhow::bail!("could not empty {}: entries keep reappearing", shown(rel))
    }

    fn remove_entry(
        &mut self,
        dir: BorrowedFd<'_>,
        rel: &str,
        entry: &Entry,
        depth: usize,
    ) -> anyhow::Result<()> {
        let child = join(rel, &entry.name.to_string_lossy());
        let outcome = match entry_is_dir(dir, entry) {
            Ok(true) if depth + 1 >= MAX_OPEN_DEPTH => {
                return self.move_to_top(dir, &entry.name, &child);
            }
            Ok(true) => self.remove_subdir(dir, &entry.name, &child, depth),
            Ok(false) => rustix::fs::unlinkat(dir, entry.name.as_c_str(), AtFlags::empty())
                .map_err(anyhow::Error::from),
            Err(e) => Err(e.into()),
        };
        match outcome {
            Ok(()) => {}
            // Gone already (another pass, or the file system removed it itself),
            // or refilled while we were busy: the next pass sees it again.
            Err(e) if is_errno(&e, Errno::NOENT) || is_errno(&e, Errno::NOTEMPTY) => return Ok(()),
            // Name only the entry that failed, not every directory above it.
            Err(e) if e.downcast_ref::<Errno>().is_some() => {
                return Err(e.context(format!("cannot remove {child}")));
            }
            Err(e) => return Err(e),
        }
        self.report.removed += 1;
        if is_foreign_name(entry.name.as_bytes()) {
            self.report.note_foreign(child);
        }
        Ok(())
    }

    fn remove_subdir(
        &mut self,
        dir: BorrowedFd<'_>,
        name: &CStr,
        child: &str,
        depth: usize,
    ) -> anyhow::Result<()> {
        let sub = open_subdir(dir, name)?;
        self.empty(sub.as_fd(), child, None, depth + 1)?;
        drop(sub);
        rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)?;
        Ok(())
    }

    /// Renames a too-deep subtree to the top (same file system, inside the
    /// tree being emptied), where a later pass removes it.
    fn move_to_top(&mut self, dir: BorrowedFd<'_>, name: &CStr, child: &str) -> anyhow::Result<()> {
        loop {
            self.moved += 1;
            let temporary = CString::new(format!(".fsbench-moved-{}", self.moved))?;
            match rustix::fs::renameat_with(dir, name, self.top, &temporary, RenameFlags::NOREPLACE)
            {
                Ok(()) | Err(Errno::NOENT) => return Ok(()),
                Err(Errno::EXIST) => continue,
                Err(e) => {
                    return Err(anyhow::Error::from(e)
                        .context(format!("cannot move {child} up for removal")));
                }
            }
        }
    }
}

fn join(rel: &str, name: &str) -> String {
    if rel.is_empty() {
        name.to_string()
    } else {
        format!("{rel}/{name}")
    }
}

fn shown(rel: &str) -> &str {
    if rel.is_empty() {
        "the scratch directory"
    } else {
        rel
    }
}

/// Cleanup must finish even after Ctrl-C: that is what the signal asked for.
fn ignore_interrupt_during_cleanup(_: anyhow::Error) -> anyhow::Result<()> {
    Ok(())
}

fn is_errno(err: &anyhow::Error, errno: Errno) -> bool {
    err.downcast_ref::<Errno>() == Some(&errno)
}

/// Opens `path` as a scratch directory: a real directory (not a symlink)
/// whose marker is a regular file. Anything else is refused.
fn open_marked_dir(path: &Path) -> anyhow::Result<(OwnedFd, OwnedFd, CString)> {
    let parent = path.parent().context("scratch path has no parent")?;
    let name = path.file_name().context("scratch path has no name")?;
    let name = CString::new(name.as_encoded_bytes())?;
    let parent_fd = rustix::fs::open(
        parent,
        OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .with_context(|| format!("cannot open {}", parent.display()))?;
    let dir = open_subdir(parent_fd.as_fd(), &name)
        .with_context(|| format!("{} is not a directory fsbench can open", path.display()))?;
    let marker =
        rustix::fs::statat(dir.as_fd(), MARKER, AtFlags::SYMLINK_NOFOLLOW).with_context(|| {
            format!(
                "{} has no fsbench marker: refusing to delete it",
                path.display()
            )
        })?;
    if FileType::from_raw_mode(marker.st_mode) != FileType::RegularFile {
        anyhow::bail!(
            "{}: marker is not a regular file: refusing to delete it",
            path.display()
        );
    }
    Ok((parent_fd, dir, name))
}

/// Removes a marked scratch directory and all it holds. The marker goes
/// last, so a run killed during cleanup is still recognised by `clean`.
pub fn remove_scratch(path: &Path) -> anyhow::Result<CleanupReport> {
    let (parent_fd, dir, name) = open_marked_dir(path)?;
    let mut report = CleanupReport::default();
    let rel = path.display().to_string();
    empty_dir(dir.as_fd(), "", Some(c".fsbench-scratch"), &mut report)
        .with_context(|| format!("cannot empty {rel}"))?;
    rustix::fs::unlinkat(dir.as_fd(), MARKER, AtFlags::empty())
        .with_context(|| format!("cannot remove marker in {rel}"))?;
    drop(dir);
    rustix::fs::unlinkat(parent_fd.as_fd(), name.as_c_str(), AtFlags::REMOVEDIR)
        .with_context(|| format!("cannot remove {rel}"))?;
    Ok(report)
}

/// A scratch directory found by `fsbench clean`.
#[derive(Debug)]
pub struct Leftover {
    pub path: PathBuf,
    pub marker: Option<Marker>,
}

impl Leftover {
    /// True when the run that made it is still alive on this host.
    pub fn is_live(&self) -> bool {
        let Some(marker) = &self.marker else {
            return false;
        };
        marker.host == super::env::host_name()
            && marker.pid != std::process::id()
            && process_is_fsbench(marker.pid)
    }
}

fn process_is_fsbench(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|comm| comm.trim() == "fsbench")
        .unwrap_or(false)
}

/// Marked scratch directories directly inside `target`. Directories named
/// like ours but without a marker are not ours and are never listed.
pub fn find_leftovers(target: &Path) -> anyhow::Result<Vec<Leftover>> {
    let mut found = Vec::new();
    let entries =
        std::fs::read_dir(target).with_context(|| format!("cannot list {}", target.display()))?;
    for entry in entries {
        let entry = entry?;
        let is_candidate = entry
            .file_name()
            .to_string_lossy()
            .starts_with(SCRATCH_PREFIX)
            && entry.file_type()?.is_dir();
        if !is_candidate {
            continue;
        }
        let path = entry.path();
        let marker_path = path.join(MARKER);
        let is_marked = std::fs::symlink_metadata(&marker_path).is_ok_and(|m| m.is_file());
        if is_marked {
            let marker = std::fs::read_to_string(&marker_path)
                .ok()
                .and_then(|text| serde_json::from_str(&text).ok());
            found.push(Leftover { path, marker });
        }
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn make_marked(dir: &Path) -> PathBuf {
        let scratch = dir.join("fsbench-test");
        std::fs::create_dir(&scratch).unwrap();
        std::fs::write(scratch.join(MARKER), "{}").unwrap();
        scratch
    }

    #[test]
    fn removes_tree_but_not_what_symlinks_point_to() {
        let root = tempfile::tempdir().unwrap();
        let outside = root.path().join("precious");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("keep.txt"), b"data").unwrap();
        let scratch = make_marked(root.path());
        std::fs::create_dir_all(scratch.join("a/b")).unwrap();
        std::fs::write(scratch.join("a/b/f"), b"x").unwrap();
        std::fs::write(scratch.join("a/._f"), b"x").unwrap();
        std::fs::write(scratch.join(".DS_Store"), b"x").unwrap();
        symlink(&outside, scratch.join("a/link-to-dir")).unwrap();
        symlink(outside.join("keep.txt"), scratch.join("link-to-file")).unwrap();

        let report = remove_scratch(&scratch).unwrap();
        assert!(!scratch.exists());
        assert_eq!(std::fs::read(outside.join("keep.txt")).unwrap(), b"data");
        assert_eq!(report.foreign_count, 2, "{report:?}");
        assert_eq!(report.removed, 7);
        assert_eq!(report.passes, 1);
    }

    #[test]
    fn refuses_unmarked_and_symlinked_dirs() {
        let root = tempfile::tempdir().unwrap();
        let plain = root.path().join("fsbench-plain");
        std::fs::create_dir(&plain).unwrap();
        std::fs::write(plain.join("user-file"), b"x").unwrap();
        assert!(remove_scratch(&plain).is_err());
        assert!(plain.join("user-file").exists());

        let marked = make_marked(root.path());
        let link = root.path().join("fsbench-link");
        symlink(&marked, &link).unwrap();
        assert!(remove_scratch(&link).is_err());
        assert!(marked.join(MARKER).exists());
    }

    #[test]
    fn finds_only_marked_leftovers() {
        let root = tempfile::tempdir().unwrap();
        make_marked(root.path());
        std::fs::create_dir(root.path().join("fsbench-unmarked")).unwrap();
        std::fs::create_dir(root.path().join("other")).unwrap();
        let found = find_leftovers(root.path()).unwrap();
        assert_eq!(found.len(), 1);
        assert!(found[0].path.ends_with("fsbench-test"));
        assert!(!found[0].is_live());
    }

    #[test]
    fn recognises_foreign_names() {
        for name in ["._photo.jpg", ".nfs000000001", ".DS_Store", "Thumbs.db"] {
            assert!(is_foreign_name(name.as_bytes()), "{name}");
        }
        assert!(!is_foreign_name(b"0000000000abc"));
    }
}

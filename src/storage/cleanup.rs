//! Removing scratch data robustly.
//!
//! Rules: only directories that carry fsbench's marker are removed; symlinks
//! are never followed (every open uses O_NOFOLLOW, every removal is an
//! `unlinkat` of the link itself); cleanup never descends into another
//! file system (a mount inside the scratch directory is left alone and
//! reported, as `rm --one-file-system` does); a directory's listing is read
//! completely before anything in it is deleted, and passes repeat until it
//! is empty, because readdir on NFS, SMB, AFP and many FUSE file systems
//! skips entries when the directory changes under an open stream.
use std::ffi::{CStr, CString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, RenameFlags, ResolveFlags, StatxFlags};
use rustix::io::Errno;

use crate::result::cleanup::CleanupReport;

use super::just_closed;
use super::marker::{self, FoundMarker, MARKER_C, NotOurs};

/// Scratch directories are `<target>/fsbench-<run-id>`.
pub const SCRATCH_PREFIX: &str = "fsbench-";

/// Passes in a row that remove nothing before cleanup gives up on a
/// directory whose entries keep reappearing.
const MAX_IDLE_PASSES: u32 = 20;
/// Directory levels descended with open fds (see `Emptier`).
const MAX_OPEN_DEPTH: usize = 32;
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
pub struct Listed {
    pub name: CString,
    pub file_type: FileType,
}

/// Reads the complete listing of `dir` (without `.` and `..`) before the
/// caller changes anything in it.
pub fn list_entries(dir: BorrowedFd<'_>) -> rustix::io::Result<Vec<Listed>> {
    read_entries(&mut Dir::read_from(dir)?)
}

/// Reads `stream` to its end: its entries without `.` and `..`.
pub fn read_entries(stream: &mut Dir) -> rustix::io::Result<Vec<Listed>> {
    let mut entries = Vec::new();
    while let Some(entry) = stream.read() {
        let entry = entry?;
        let name = entry.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        entries.push(Listed {
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

fn entry_is_dir(dir: BorrowedFd<'_>, entry: &Listed) -> rustix::io::Result<bool> {
    if entry.file_type != FileType::Unknown {
        return Ok(entry.file_type == FileType::Directory);
    }
    // Some file systems do not fill d_type; ask without following links.
    let stat = rustix::fs::statat(dir, entry.name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW)?;
    Ok(FileType::from_raw_mode(stat.st_mode) == FileType::Directory)
}

/// Deletes everything in `dir` (but `keep`, if given), repeating listing
/// passes until nothing else is left. `rel` names `dir` in reports ("" for
/// the top of a scratch directory). Mount points inside are left alone:
/// the call then fails, naming them, after removing everything else.
pub fn empty_dir(
    dir: BorrowedFd<'_>,
    rel: &str,
    keep: Option<&CStr>,
    report: &mut CleanupReport,
) -> anyhow::Result<()> {
    let mounts_before = report.mounts_left.len();
    let mut emptier = Emptier {
        top: dir,
        report,
        moved: 0,
    };
    emptier.empty(dir, rel, keep, 0)?;
    let new_mounts = &emptier.report.mounts_left[mounts_before..];
    if !new_mounts.is_empty() {
        anyhow::bail!(
            "left {} alone: a file system is mounted there that fsbench did not mount (unmount it, then run `fsbench clean`)",
            new_mounts.join(", ")
        );
    }
    Ok(())
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

/// What became of one entry.
enum Removal {
    Removed,
    /// Gone already (another pass, or the file system removed it itself),
    /// or refilled while we were busy: the next pass sees it again.
    Retry,
    /// Another file system is mounted on it: left alone.
    MountPoint,
    /// A directory with a mount point somewhere inside: emptied but for
    /// that, and left.
    HoldsMountPoint,
}

impl Emptier<'_, '_> {
    fn empty(
        &mut self,
        dir: BorrowedFd<'_>,
        rel: &str,
        keep: Option<&CStr>,
        depth: usize,
    ) -> anyhow::Result<()> {
        let mut left_alone: Vec<CString> = Vec::new();
        let mut idle_passes = 0;
        for pass in 1.. {
            let entries: Vec<Listed> = list_entries(dir)
                .with_context(|| format!("cannot list {}", shown(rel)))?
                .into_iter()
                .filter(|e| Some(e.name.as_c_str()) != keep && !left_alone.contains(&e.name))
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
            for entry in entries {
                crate::interrupt::check().or_else(ignore_interrupt_during_cleanup)?;
                match self.remove_entry(dir, rel, &entry, depth)? {
                    Removal::MountPoint => {
                        let mount = join(rel, &entry.name.to_string_lossy());
                        self.report.mounts_left.push(mount);
                        left_alone.push(entry.name);
                    }
                    Removal::HoldsMountPoint => left_alone.push(entry.name),
                    Removal::Removed | Removal::Retry => {}
                }
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
        entry: &Listed,
        depth: usize,
    ) -> anyhow::Result<Removal> {
        let child = join(rel, &entry.name.to_string_lossy());
        let outcome = match entry_is_dir(dir, entry) {
            Ok(true) if depth + 1 >= MAX_OPEN_DEPTH => {
                return self.move_to_top(dir, &entry.name, &child);
            }
            Ok(true) => self.remove_subdir(dir, &entry.name, &child, depth),
            // The workload's files were closed a moment ago; the errno
            // alone is kept, for the matches below.
            Ok(false) => just_closed::unlink(dir, entry.name.as_c_str())
                .map(|()| Removal::Removed)
                .map_err(|refused| anyhow::Error::from(refused.errno)),
            Err(e) => Err(e.into()),
        };
        let removal = match outcome {
            Ok(removal) => removal,
            Err(e) if is_errno(&e, Errno::NOENT) || is_errno(&e, Errno::NOTEMPTY) => Removal::Retry,
            // A file with another file bind-mounted on it (busy still,
            // after a file just closed has had time to settle).
            Err(e) if is_errno(&e, Errno::BUSY) => Removal::MountPoint,
            // Name only the entry that failed, not every directory above it.
            Err(e) if e.downcast_ref::<Errno>().is_some() => {
                return Err(e.context(format!("cannot remove {child}")));
            }
            Err(e) => return Err(e),
        };
        if let Removal::Removed = removal {
            self.report.removed += 1;
            if is_foreign_name(entry.name.as_bytes()) {
                self.report.note_foreign(child);
            }
        }
        Ok(removal)
    }

    fn remove_subdir(
        &mut self,
        dir: BorrowedFd<'_>,
        name: &CStr,
        child: &str,
        depth: usize,
    ) -> anyhow::Result<Removal> {
        let Some(sub) = open_subdir_on_same_fs(dir, name)? else {
            return Ok(Removal::MountPoint);
        };
        let mounts_before = self.report.mounts_left.len();
        self.empty(sub.as_fd(), child, None, depth + 1)?;
        if self.report.mounts_left.len() > mounts_before {
            return Ok(Removal::HoldsMountPoint);
        }
        drop(sub);
        rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)?;
        Ok(Removal::Removed)
    }

    /// Renames a too-deep subtree to the top (same file system, inside the
    /// tree being emptied), where a later pass removes it.
    fn move_to_top(
        &mut self,
        dir: BorrowedFd<'_>,
        name: &CStr,
        child: &str,
    ) -> anyhow::Result<Removal> {
        loop {
            self.moved += 1;
            let temporary = CString::new(format!(".fsbench-moved-{}", self.moved))?;
            match rustix::fs::renameat_with(dir, name, self.top, &temporary, RenameFlags::NOREPLACE)
            {
                Ok(()) | Err(Errno::NOENT) => return Ok(Removal::Retry),
                Err(Errno::EXIST) => continue,
                // A mount point cannot be renamed.
                Err(Errno::BUSY | Errno::XDEV) => return Ok(Removal::MountPoint),
                Err(e) => {
                    return Err(anyhow::Error::from(e)
                        .context(format!("cannot move {child} up for removal")));
                }
            }
        }
    }
}

/// Opens subdirectory `name` of `dir` unless another file system is
/// mounted on it (`None`): `RESOLVE_NO_XDEV` refuses to cross any mount,
/// a bind mount of the same file system included. Kernels before 5.6
/// lack openat2; there the mount ids (or, before 5.8, the devices) of the
/// two directories are compared.
pub fn open_subdir_on_same_fs(dir: BorrowedFd<'_>, name: &CStr) -> anyhow::Result<Option<OwnedFd>> {
    let how = OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::RDONLY | OFlags::CLOEXEC;
    match rustix::fs::openat2(dir, name, how, Mode::empty(), ResolveFlags::NO_XDEV) {
        Ok(sub) => Ok(Some(sub)),
        Err(Errno::XDEV) => Ok(None),
        Err(Errno::NOSYS) => {
            let sub = open_subdir(dir, name)?;
            Ok((file_system_of(dir)? == file_system_of(sub.as_fd())?).then_some(sub))
        }
        Err(e) => Err(e.into()),
    }
}

/// Which mounted file system `fd` is on: its mount id where the kernel
/// gives one, else its device.
fn file_system_of(fd: BorrowedFd<'_>) -> rustix::io::Result<u64> {
    let stat = rustix::fs::statx(fd, c"", AtFlags::EMPTY_PATH, StatxFlags::MNT_ID)?;
    Ok(
        match StatxFlags::from_bits_retain(stat.stx_mask).contains(StatxFlags::MNT_ID) {
            true => stat.stx_mnt_id,
            false => rustix::fs::makedev(stat.stx_dev_major, stat.stx_dev_minor),
        },
    )
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

/// Removes the scratch directory `name` in `parent`, opened as `dir`, and
/// all it holds; `path` names it in errors. The marker goes last, so a
/// run killed during cleanup, or a cleanup that had to leave a mount
/// point, is still recognised by `clean`; it is closed (and its lock
/// released) only then, just before it is unlinked: NFS and FUSE keep an
/// unlinked open file as a hidden `.nfs…`/`.fuse_hidden…` entry, which
/// would keep the directory from going.
pub fn remove_marked(
    parent: BorrowedFd<'_>,
    dir: BorrowedFd<'_>,
    name: &CStr,
    path: &Path,
    marker: OwnedFd,
    report: &mut CleanupReport,
) -> anyhow::Result<()> {
    let shown = path.display();
    empty_dir(dir, "", Some(MARKER_C), report).with_context(|| format!("cannot empty {shown}"))?;
    if !is_named(parent, name, dir) {
        anyhow::bail!(
            "{shown} was moved or replaced while fsbench ran: what was in it is removed, the directory and its marker are left"
        );
    }
    drop(marker);
    just_closed::unlink(dir, MARKER_C)
        .with_context(|| format!("cannot remove marker in {shown}"))?;
    rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR)
        .with_context(|| format!("cannot remove {shown}"))?;
    Ok(())
}

/// True if `name` in `parent` is still the directory open as `dir` (not
/// renamed away, nor replaced by something else of that name).
fn is_named(parent: BorrowedFd<'_>, name: &CStr, dir: BorrowedFd<'_>) -> bool {
    let named = rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW);
    let opened = rustix::fs::fstat(dir);
    match (named, opened) {
        (Ok(named), Ok(opened)) => (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino),
        _ => false,
    }
}

/// A directory named like a scratch directory (`fsbench-*`) that holds a
/// marker, found by `fsbench clean`; its marker says whether it is
/// fsbench's to remove.
pub struct Leftover {
    pub path: PathBuf,
    parent: OwnedFd,
    name: CString,
    dir: OwnedFd,
    pub marker: Result<FoundMarker, NotOurs>,
}

impl Leftover {
    /// The scratch directory, open: what is released in it is reached
    /// through this, never through its path again.
    pub fn dir(&self) -> BorrowedFd<'_> {
        self.dir.as_fd()
    }

    /// Removes it with everything inside, if its marker is fsbench's.
    pub fn remove(self) -> anyhow::Result<CleanupReport> {
        let marker = self
            .marker
            .map_err(|not_ours| anyhow::anyhow!("not removed, {not_ours}"))?;
        let mut report = CleanupReport::default();
        remove_marked(
            self.parent.as_fd(),
            self.dir.as_fd(),
            &self.name,
            &self.path,
            marker.into_fd(),
            &mut report,
        )?;
        Ok(report)
    }
}

/// The scratch directories directly inside `target`, opened without
/// following links and without crossing into another file system. A
/// target others may write to without the sticky bit is warned about:
/// there another user can swap a leftover for a symlink.
/// Directories named like ours without any marker are not ours and are
/// not listed; a mount point named like ours is left alone too.
pub fn find_leftovers(target: &Path) -> anyhow::Result<Vec<Leftover>> {
    let shown = target.display();
    let parent = rustix::fs::open(
        target,
        OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .with_context(|| format!("cannot open {shown}"))?;
    super::scratch::warn_if_others_can_swap(parent.as_fd(), target);
    let mut found = Vec::new();
    for entry in list_entries(parent.as_fd()).with_context(|| format!("cannot list {shown}"))? {
        let Some(run_id) = entry
            .name
            .to_bytes()
            .strip_prefix(SCRATCH_PREFIX.as_bytes())
        else {
            continue;
        };
        if !entry_is_dir(parent.as_fd(), &entry).unwrap_or(false) {
            continue;
        }
        let Some(dir) = open_subdir_on_same_fs(parent.as_fd(), &entry.name)
            .ok()
            .flatten()
        else {
            continue;
        };
        if !marker::is_present(dir.as_fd()) {
            continue;
        }
        let marker = marker::open_valid(dir.as_fd(), &String::from_utf8_lossy(run_id));
        found.push(Leftover {
            path: target.join(entry.name.to_string_lossy().as_ref()),
            parent: parent.try_clone()?,
            name: entry.name,
            dir,
            marker,
        });
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::marker::{MARKER, Marker};
    use std::os::unix::fs::symlink;

    fn make_marked(dir: &Path, run_id: &str) -> PathBuf {
        let scratch = dir.join(format!("{SCRATCH_PREFIX}{run_id}"));
        std::fs::create_dir(&scratch).unwrap();
        let marker = serde_json::to_string(&Marker::new(run_id)).unwrap();
        std::fs::write(scratch.join(MARKER), marker).unwrap();
        scratch
    }

    /// `clean`'s removal of the only leftover in `root`.
    fn remove_leftover(root: &Path) -> anyhow::Result<CleanupReport> {
        let found = find_leftovers(root).unwrap();
        assert_eq!(found.len(), 1, "one leftover");
        let leftover = found.into_iter().next().unwrap();
        assert!(leftover.marker.is_ok());
        leftover.remove()
    }

    #[test]
    fn removes_tree_but_not_what_symlinks_point_to() {
        let root = tempfile::tempdir().unwrap();
        let outside = root.path().join("precious");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("keep.txt"), b"data").unwrap();
        let scratch = make_marked(root.path(), "test");
        std::fs::create_dir_all(scratch.join("a/b")).unwrap();
        std::fs::write(scratch.join("a/b/f"), b"x").unwrap();
        std::fs::write(scratch.join("a/._f"), b"x").unwrap();
        std::fs::write(scratch.join(".DS_Store"), b"x").unwrap();
        symlink(&outside, scratch.join("a/link-to-dir")).unwrap();
        symlink(outside.join("keep.txt"), scratch.join("link-to-file")).unwrap();

        let report = remove_leftover(root.path()).unwrap();
        assert!(!scratch.exists());
        assert_eq!(std::fs::read(outside.join("keep.txt")).unwrap(), b"data");
        assert_eq!(report.foreign_count, 2, "{report:?}");
        assert_eq!(report.removed, 7);
        assert_eq!(report.passes, 1);
    }

    #[test]
    fn finds_only_marked_directories_and_not_through_symlinks() {
        let root = tempfile::tempdir().unwrap();
        let marked = make_marked(root.path(), "test");
        let plain = root.path().join("fsbench-plain");
        std::fs::create_dir(&plain).unwrap();
        std::fs::write(plain.join("user-file"), b"x").unwrap();
        symlink(&marked, root.path().join("fsbench-link")).unwrap();
        std::fs::create_dir(root.path().join("other")).unwrap();
        let found = find_leftovers(root.path()).unwrap();
        assert_eq!(found.len(), 1);
        assert!(found[0].path.ends_with("fsbench-test"));
        assert!(!found[0].marker.as_ref().unwrap().is_live());
    }

    #[test]
    fn a_marker_naming_another_run_is_not_trusted() {
        let root = tempfile::tempdir().unwrap();
        let scratch = make_marked(root.path(), "a");
        std::fs::rename(&scratch, root.path().join("fsbench-b")).unwrap();
        let found = find_leftovers(root.path()).unwrap();
        assert!(matches!(found[0].marker, Err(NotOurs::OtherRun { .. })));
    }

    #[test]
    fn recognises_foreign_names() {
        for name in ["._photo.jpg", ".nfs000000001", ".DS_Store", "Thumbs.db"] {
            assert!(is_foreign_name(name.as_bytes()), "{name}");
        }
        assert!(!is_foreign_name(b"0000000000abc"));
    }
}

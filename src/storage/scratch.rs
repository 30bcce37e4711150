//! The scratch directory: `<target>/fsbench-<run-id>/`, created fresh with a
//! marker file. Workloads write only inside it; it is removed on every exit
//! path (normal end, error, signal) unless the user asked to keep it.
//!
//! It is made so that no other local user can redirect what fsbench writes:
//! the directory is created with mode 0700 under a name no one can guess
//! (the run id ends in random bits), the marker is created with
//! `O_EXCL | O_NOFOLLOW` inside it, and its removal goes through the file
//! descriptors opened at creation, never through the path again.
use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

use super::cleanup::{self, SCRATCH_PREFIX};
use super::marker::{self, Marker};
use crate::console::stderr_line;
use crate::result::cleanup::CleanupReport;

/// Names tried before giving up when `fsbench-<id>` names already exist
/// (only someone creating them on purpose makes a second try necessary).
const NAME_TRIES: u32 = 8;

/// Set when a scratch directory could not be removed, so the final
/// message and the exit code do not claim it was.
static CLEANUP_FAILED: AtomicBool = AtomicBool::new(false);

/// True if some scratch directory was left behind by a failed cleanup.
pub fn cleanup_failed() -> bool {
    CLEANUP_FAILED.load(Ordering::Relaxed)
}

pub struct Scratch {
    path: PathBuf,
    /// The target directory and the scratch directory's name in it, for
    /// the final `unlinkat`.
    parent: OwnedFd,
    name: CString,
    dir: OwnedFd,
    /// The marker, open and locked for the run's life (see `marker`);
    /// taken by the removal.
    marker: Option<OwnedFd>,
    keep: bool,
    removed: bool,
    /// Inside another scratch directory, which speaks for it when kept.
    nested: bool,
}

impl Scratch {
    /// Creates `<target>/fsbench-<run_id>` (a fresh one: another random
    /// suffix if that name is taken, except in an MPI job whose ranks find
    /// each other's directories by name) and its marker.
    pub fn create(target: &Path, run_id: &str, keep: bool) -> anyhow::Result<Scratch> {
        let parent = rustix::fs::open(
            target,
            OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .with_context(|| format!("cannot open {}", target.display()))?;
        warn_if_others_can_swap(parent.as_fd(), target);
        let (name, id) = make_private_dir(parent.as_fd(), target, run_id)?;
        let path = target.join(name.to_string_lossy().as_ref());
        let dir = cleanup::open_subdir(parent.as_fd(), &name)
            .with_context(|| format!("cannot open scratch directory {}", path.display()))?;
        let marker = marker::write_locked(dir.as_fd(), &Marker::new(&id))
            .with_context(|| format!("cannot mark scratch directory {}", path.display()))?;
        // The directory's name on the disk too, with the marker inside.
        marker::sync(parent.as_fd())
            .with_context(|| format!("cannot sync {}", target.display()))?;
        Ok(Scratch {
            path,
            parent,
            name,
            dir,
            marker: Some(marker),
            keep,
            removed: false,
            nested: false,
        })
    }

    /// A marked scratch directory `fsbench-<id>` inside this one, for one
    /// of several workloads that share a target: each gets a namespace of
    /// its own (two io workloads both lay out `io.dat`). Removed on its own
    /// drop, and with this one at the latest.
    pub fn nested(&self, id: &str) -> anyhow::Result<Scratch> {
        let mut child = Scratch::create(&self.path, id, self.keep)?;
        child.nested = true;
        Ok(child)
    }

    fn say_kept(&self) {
        if !self.nested {
            stderr_line!("fsbench: kept scratch data in {}", self.path.display());
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The id in its name (`fsbench-<id>`), to name directories that
    /// belong to the same run elsewhere.
    pub fn id(&self) -> String {
        let name = self.name.to_string_lossy();
        name.strip_prefix(SCRATCH_PREFIX)
            .unwrap_or(&name)
            .to_string()
    }

    /// True when the user asked to keep the scratch data (`--keep`).
    pub fn keeps(&self) -> bool {
        self.keep
    }

    /// The scratch directory's fd, for `*at` syscalls that cannot escape it.
    pub fn dir(&self) -> BorrowedFd<'_> {
        self.dir.as_fd()
    }

    /// Lets go of the file system it is on, keeping its file descriptors'
    /// numbers (each now on /dev/null), so that the file system can be
    /// unmounted and mounted again (`--cold remount`); `unpark` then
    /// reopens the same directory. Nothing in it may be used between.
    pub fn park(&self) -> anyhow::Result<()> {
        self.fds().into_iter().try_for_each(park_fd)
    }

    /// Reopens what `park` let go of, by path, and takes it only if it is
    /// this very scratch directory again: its marker names this run (what
    /// the mount now shows could be another file system).
    pub fn unpark(&self) -> anyhow::Result<()> {
        let shown = self.path.display();
        let parent_path = self.path.parent().unwrap_or(Path::new("/"));
        let parent = rustix::fs::open(
            parent_path,
            OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .with_context(|| format!("cannot reopen {}", parent_path.display()))?;
        let dir = cleanup::open_subdir(parent.as_fd(), &self.name)
            .with_context(|| format!("cannot reopen scratch directory {shown}"))?;
        let found = marker::open_valid(dir.as_fd(), &self.id())
            .map_err(|e| anyhow::anyhow!("{shown} after the remount: {e}"))?;
        // Takes the run's lock again (no one else holds it).
        if found.is_live() {
            anyhow::bail!("{shown} after the remount: its marker is locked by another process");
        }
        let marker = found.into_fd();
        replace_fd(self.parent.as_fd(), parent.as_fd())?;
        replace_fd(self.dir.as_fd(), dir.as_fd())?;
        if let Some(held) = &self.marker {
            replace_fd(held.as_fd(), marker.as_fd())?;
        }
        Ok(())
    }

    /// The descriptors it holds on its file system.
    fn fds(&self) -> Vec<BorrowedFd<'_>> {
        [Some(&self.parent), Some(&self.dir), self.marker.as_ref()]
            .into_iter()
            .flatten()
            .map(|fd| fd.as_fd())
            .collect()
    }

    /// Removes the scratch directory and everything in it; `None` when the
    /// user asked to keep it. A cleanup that fails does not throw the run's
    /// results away: the report says what was left and why, the failure is
    /// printed with the hint that `fsbench clean` removes it, and the
    /// command ends with exit code 1 once its results are saved.
    pub fn finish(mut self) -> Option<CleanupReport> {
        self.removed = true;
        if self.keep {
            self.say_kept();
            return None;
        }
        Some(self.remove())
    }

    fn remove(&mut self) -> CleanupReport {
        let mut report = CleanupReport::default();
        let Some(marker) = self.marker.take() else {
            return report;
        };
        let removal = cleanup::remove_marked(
            self.parent.as_fd(),
            self.dir.as_fd(),
            &self.name,
            &self.path,
            marker,
            &mut report,
        );
        if let Err(e) = removal {
            CLEANUP_FAILED.store(true, Ordering::Relaxed);
            stderr_line!(
                "fsbench: cleanup of {} failed: {e:#}; `fsbench clean` removes it later",
                self.path.display()
            );
            report.failed = Some(format!("{e:#}"));
        }
        report
    }
}

/// Lets go of what descriptor `fd` has open, keeping its number (on
/// /dev/null until `replace_fd` puts something there again).
pub fn park_fd(fd: BorrowedFd<'_>) -> anyhow::Result<()> {
    let null = rustix::fs::open("/dev/null", OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
        .context("cannot open /dev/null")?;
    replace_fd(fd, null.as_fd())
}

/// Makes descriptor `old` refer to what `new` refers to, keeping its
/// number (what was open under it is closed): a workload's or the
/// driver's borrowed descriptor stays valid across a remount.
pub fn replace_fd(old: BorrowedFd<'_>, new: BorrowedFd<'_>) -> anyhow::Result<()> {
    // SAFETY: dup3 only acts on the two descriptor numbers, both open
    // (borrowed for the call); `old` keeps its owner, now on `new`'s file.
    let done = unsafe { libc::dup3(new.as_raw_fd(), old.as_raw_fd(), libc::O_CLOEXEC) };
    if done < 0 {
        return Err(std::io::Error::last_os_error()).context("cannot replace a descriptor");
    }
    Ok(())
}

/// Workloads reach their files by path below the scratch directory. In a
/// directory that others may write to without the sticky bit (a shared
/// NAS directory with mode 0777), another user can rename the scratch
/// directory away and put a symlink in its place while fsbench runs:
/// that is said before anything is written.
pub(crate) fn warn_if_others_can_swap(parent: BorrowedFd<'_>, target: &Path) {
    let Ok(stat) = rustix::fs::fstat(parent) else {
        return;
    };
    let writable_by_others = stat.st_mode & 0o022 != 0;
    let sticky = stat.st_mode & 0o1000 != 0;
    if writable_by_others && !sticky {
        stderr_line!(
            "fsbench: warning: {} is writable by other users and has no sticky bit: one of them could swap the scratch directory for a symlink while fsbench works in it (chmod +t it, or use a directory only you can write to)",
            target.display()
        );
    }
}

/// Creates `fsbench-<id>` in `parent` with mode 0700; returns its name and
/// the id it ended up with.
fn make_private_dir(
    parent: BorrowedFd<'_>,
    target: &Path,
    run_id: &str,
) -> anyhow::Result<(CString, String)> {
    // Processes that share a plan agreed on this name: none may pick another.
    let retry_allowed = super::processes() == 1;
    let mut id = run_id.to_string();
    for _ in 0..NAME_TRIES {
        let name = CString::new(format!("{SCRATCH_PREFIX}{id}"))?;
        match rustix::fs::mkdirat(parent, &name, Mode::from_raw_mode(0o700)) {
            Ok(()) => return Ok((name, id)),
            Err(Errno::EXIST) if retry_allowed => id = format!("{run_id}-{}", random_hex(4)),
            Err(e) => {
                return Err(anyhow::Error::from(e).context(format!(
                    "cannot create scratch directory {}",
                    target.join(name.to_string_lossy().as_ref()).display()
                )));
            }
        }
    }
    anyhow::bail!(
        "cannot create a scratch directory in {}: {NAME_TRIES} fresh fsbench-* names already existed",
        target.display()
    )
}

/// `bytes` random bytes from the kernel, in hex: the part of a run id no
/// one can predict.
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    loop {
        match rustix::rand::getrandom(&mut buf, rustix::rand::GetRandomFlags::empty()) {
            Err(Errno::INTR) => continue,
            Ok(_) => break,
            // No getrandom(2) (kernels before 3.17): the clock's nanoseconds
            // still make the name unique, if not secret.
            Err(_) => {
                let nanos = chrono::Utc::now().timestamp_subsec_nanos().to_le_bytes();
                buf.iter_mut()
                    .zip(nanos.iter().cycle())
                    .for_each(|(b, n)| *b ^= n);
                break;
            }
        }
    }
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

impl Drop for Scratch {
    /// The error and signal path: clean up without masking the original
    /// error (a failure is printed and remembered by `remove`).
    fn drop(&mut self) {
        if self.removed {
            return;
        }
        if self.keep {
            self.say_kept();
        } else {
            self.remove();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_taken_name_gets_another_and_the_directory_is_private() {
        let target = tempfile::tempdir().unwrap();
        let taken = target.path().join("fsbench-r1");
        std::fs::create_dir(&taken).unwrap();
        std::fs::write(taken.join("theirs"), b"x").unwrap();
        let scratch = Scratch::create(target.path(), "r1", false).unwrap();
        assert_ne!(scratch.path(), taken);
        assert!(scratch.id().starts_with("r1-"), "{}", scratch.id());
        let mode = std::fs::metadata(scratch.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700, "{mode:o}");
        let report = scratch.finish().unwrap();
        assert_eq!(report.failed, None);
        assert!(
            taken.join("theirs").exists(),
            "the other directory is not touched"
        );
    }

    #[test]
    fn run_ids_differ_in_their_random_part() {
        let a = crate::driver::recording::new_run_id();
        let b = crate::driver::recording::new_run_id();
        assert_ne!(a, b);
        let random = a.rsplit('-').next().unwrap();
        assert_eq!(random.len(), 12, "{a}");
        assert!(random.bytes().all(|b| b.is_ascii_hexdigit()), "{a}");
    }
}

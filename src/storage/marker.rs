//! The marker file that makes a directory fsbench's scratch directory:
//! how it is written (so no one can redirect it), how a run holds it (so
//! `fsbench clean` can tell a live run from a dead one), and what `clean`
//! requires of one before it deletes anything.
use std::ffi::CStr;
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use anyhow::Context;
use rustix::fs::{AtFlags, FileType, FlockOperation, Mode, OFlags};
use rustix::io::Errno;
use serde::{Deserialize, Serialize};

use super::just_closed;

/// Name of the marker file inside every scratch directory.
pub const MARKER: &str = ".fsbench-scratch";
/// The same name, for `*at` system calls.
pub const MARKER_C: &CStr = c".fsbench-scratch";
/// The marker while it is being written, in the directory fsbench just
/// made (mode 0700: no one else can make or replace it there).
const MARKER_NEW_C: &CStr = c".fsbench-scratch.new";
/// A marker fsbench wrote is a few hundred bytes; anything longer is not one.
const MAX_MARKER_BYTES: u64 = 64 << 10;

/// What the marker file records: the run that owns the directory.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Marker {
    pub tool: String,
    pub run_id: String,
    pub pid: u32,
    pub host: String,
    pub created: chrono::DateTime<chrono::Utc>,
}

impl Marker {
    /// The marker of this process's run `run_id`.
    pub fn new(run_id: &str) -> Marker {
        Marker {
            tool: "fsbench".into(),
            run_id: run_id.into(),
            pid: std::process::id(),
            host: super::env::host_name(),
            created: chrono::Utc::now(),
        }
    }
}

/// Creates the marker in `dir` and locks it for as long as the returned
/// fd is open. It is written under a temporary name and renamed into
/// place once complete, so `clean` never reads a half-written marker of a
/// live run (and takes it for a forgery). `O_EXCL | O_NOFOLLOW` make the
/// creation fail rather than write through anything already there (a
/// symlink raced in by another user); the lock is taken before the marker
/// says anything, so `clean` never sees an unlocked marker of a live run.
pub fn write_locked(dir: BorrowedFd<'_>, marker: &Marker) -> anyhow::Result<OwnedFd> {
    let fd = rustix::fs::openat(
        dir,
        MARKER_NEW_C,
        OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::WRONLY | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o644),
    )
    .context("cannot create the marker")?;
    let written = fill(fd.as_fd(), marker)
        .and_then(|()| place(fd, dir))
        .and_then(|fd| settle(fd.as_fd(), dir).map(|()| fd));
    if written.is_err() {
        let _ = rustix::fs::unlinkat(dir, MARKER_NEW_C, AtFlags::empty());
    }
    written
}

/// Puts the open marker `fd` in place. A file system that will not rename
/// an open file (smbnetfs: EBUSY) gets it closed, renamed and opened
/// again, its lock taken again: for that moment the marker is unlocked
/// and not held open, and a `clean` at that instant could take the
/// brand-new, empty scratch directory for a dead run's.
fn place(fd: OwnedFd, dir: BorrowedFd<'_>) -> anyhow::Result<OwnedFd> {
    match put_in_place(dir) {
        Err(Errno::BUSY) => {}
        Ok(()) => return Ok(fd),
        Err(e) => return Err(anyhow::Error::from(e).context("cannot put the marker in place")),
    }
    drop(fd);
    just_closed::retry(|| put_in_place(dir)).context("cannot put the marker in place")?;
    let fd = rustix::fs::openat(
        dir,
        MARKER_C,
        OFlags::NOFOLLOW | OFlags::WRONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .context("cannot open the marker again")?;
    hold_lock(fd.as_fd())?;
    Ok(fd)
}

/// Puts the marker and its name on the disk: after a crash (an ext4
/// error that turns the file system read-only, a power cut) `clean` finds
/// a whole marker, not an empty file it cannot trust.
fn settle(marker: BorrowedFd<'_>, dir: BorrowedFd<'_>) -> anyhow::Result<()> {
    sync(marker)
        .and_then(|()| sync(dir))
        .context("cannot sync the marker")
}

/// fsync, where the file system has it (some FUSE ones do not: nothing
/// to wait for there).
pub fn sync(fd: BorrowedFd<'_>) -> rustix::io::Result<()> {
    match rustix::fs::fsync(fd) {
        Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => Ok(()),
        other => other,
    }
}

/// Renames the written marker to its name, refusing to replace anything
/// there. A file system without RENAME_NOREPLACE gets a plain rename: the
/// directory is the one fsbench just made, mode 0700.
fn put_in_place(dir: BorrowedFd<'_>) -> rustix::io::Result<()> {
    let renamed = rustix::fs::renameat_with(
        dir,
        MARKER_NEW_C,
        dir,
        MARKER_C,
        rustix::fs::RenameFlags::NOREPLACE,
    );
    match renamed {
        Err(Errno::INVAL | Errno::NOSYS) => rustix::fs::renameat(dir, MARKER_NEW_C, dir, MARKER_C),
        other => other,
    }
}

/// Locks the new marker and writes what it says.
fn fill(fd: BorrowedFd<'_>, marker: &Marker) -> anyhow::Result<()> {
    hold_lock(fd)?;
    let text = serde_json::to_string_pretty(marker)?;
    std::fs::File::from(fd.try_clone_to_owned()?)
        .write_all(text.as_bytes())
        .context("cannot write the marker")
}

/// Takes the run's lock on its open marker. File systems without `flock`
/// (some FUSE and network ones) leave the run unlocked: `clean` then falls
/// back to asking whether the marker's process holds the file open.
fn hold_lock(marker: BorrowedFd<'_>) -> anyhow::Result<()> {
    match rustix::fs::flock(marker, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) | Err(Errno::NOLCK | Errno::OPNOTSUPP | Errno::INVAL) => Ok(()),
        Err(e) => Err(anyhow::Error::from(e).context("cannot lock the marker")),
    }
}

/// A marker `clean` found, opened without following links.
pub struct FoundMarker {
    fd: OwnedFd,
    pub marker: Marker,
    owner: u32,
}

/// Why a directory named like a scratch directory is not removed.
#[derive(Debug, thiserror::Error)]
pub enum NotOurs {
    #[error("no marker")]
    Missing,
    #[error("its marker is not a regular file")]
    NotAFile,
    #[error("its marker was not written by fsbench ({0})")]
    Malformed(String),
    #[error("its marker names run {found}, not {expected}")]
    OtherRun { found: String, expected: String },
    #[error("its marker belongs to uid {0}, not to you")]
    OtherOwner(u32),
}

/// Opens and checks the marker of the scratch directory `dir`, named
/// `fsbench-<run_id>`: a regular file of at most 64 KiB, the JSON fsbench
/// writes, naming that very run, owned by the user running `clean` or by
/// root (or, for root, by the owner of the directory: a run that dropped
/// privileges with `bonnie -u`).
pub fn open_valid(dir: BorrowedFd<'_>, run_id: &str) -> Result<FoundMarker, NotOurs> {
    let fd = rustix::fs::openat(
        dir,
        MARKER_C,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )
    .map_err(|e| match e {
        Errno::LOOP => NotOurs::NotAFile,
        _ => NotOurs::Missing,
    })?;
    let stat = rustix::fs::fstat(&fd).map_err(|_| NotOurs::Missing)?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(NotOurs::NotAFile);
    }
    let marker = parse(fd.as_fd())?;
    if marker.run_id != run_id {
        return Err(NotOurs::OtherRun {
            found: marker.run_id,
            expected: run_id.into(),
        });
    }
    let found = FoundMarker {
        fd,
        marker,
        owner: stat.st_uid,
    };
    found.check_owner(dir)?;
    Ok(found)
}

fn parse(fd: BorrowedFd<'_>) -> Result<Marker, NotOurs> {
    let mut text = String::new();
    std::fs::File::from(fd.try_clone_to_owned().map_err(|_| NotOurs::Missing)?)
        .take(MAX_MARKER_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| NotOurs::Malformed(e.to_string()))?;
    if text.len() as u64 > MAX_MARKER_BYTES {
        return Err(NotOurs::Malformed("longer than 64 KiB".into()));
    }
    let marker: Marker =
        serde_json::from_str(&text).map_err(|e| NotOurs::Malformed(e.to_string()))?;
    if marker.tool != "fsbench" {
        return Err(NotOurs::Malformed(format!("tool is {:?}", marker.tool)));
    }
    Ok(marker)
}

impl FoundMarker {
    fn check_owner(&self, dir: BorrowedFd<'_>) -> Result<(), NotOurs> {
        let me = rustix::process::geteuid().as_raw();
        let dir_owner = rustix::fs::fstat(dir).map_or(u32::MAX, |s| s.st_uid);
        let trusted = self.owner == me || self.owner == 0 || (me == 0 && self.owner == dir_owner);
        match trusted {
            true => Ok(()),
            false => Err(NotOurs::OtherOwner(self.owner)),
        }
    }

    /// The open marker, to be closed just before it is removed.
    pub fn into_fd(self) -> OwnedFd {
        self.fd
    }

    /// True while the run that wrote the marker is alive: it holds the
    /// marker's lock (on this host, or on another client of a shared file
    /// system that supports locks). Where the file system has no locks, a
    /// run on this host is alive while its process holds the marker open,
    /// and a run on another host counts as alive (only `--force` removes it).
    /// A dead run's lock is taken here and held while the marker is open,
    /// so two `clean`s never remove the same directory at once.
    pub fn is_live(&self) -> bool {
        match rustix::fs::flock(&self.fd, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => false,
            Err(Errno::WOULDBLOCK) => true,
            Err(_) if self.marker.host == super::env::host_name() => {
                process_holds(self.marker.pid, self.fd.as_fd())
            }
            Err(_) => true,
        }
    }

    /// True when the run's process on this host, still holding the marker
    /// open, was sent SIGKILL and has not exited: it waits, in an
    /// uninterruptible sleep, for something that no longer comes (a crash
    /// run's I/O on its own FUSE recorder, whose server thread the kill
    /// ended). A healthy run never has a kill pending for longer than it
    /// takes to die.
    pub fn is_killed(&self) -> bool {
        self.marker.host == super::env::host_name()
            && process_holds(self.marker.pid, self.fd.as_fd())
            && kill_pending(self.marker.pid)
    }
}

/// Whether process `pid` has SIGKILL pending.
fn kill_pending(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|status| lists_kill(&status))
}

/// Whether a /proc/<pid>/status text has SIGKILL in a pending mask (the
/// process's, ShdPnd, or its main thread's, SigPnd). Allocates nothing: a
/// recorder's forked watchdog calls it too.
pub(crate) fn lists_kill(status: &str) -> bool {
    let kill = 1u64 << (libc::SIGKILL - 1);
    status
        .lines()
        .filter_map(|line| {
            line.strip_prefix("ShdPnd:")
                .or_else(|| line.strip_prefix("SigPnd:"))
        })
        .filter_map(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .any(|mask| mask & kill != 0)
}

/// True if process `pid` has the file behind `file` open (compared by
/// device and inode through its `/proc/<pid>/fd` links).
fn process_holds(pid: u32, file: BorrowedFd<'_>) -> bool {
    let Ok(wanted) = rustix::fs::fstat(file) else {
        return false;
    };
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        std::fs::metadata(fd.path()).is_ok_and(|m| {
            use std::os::unix::fs::MetadataExt;
            m.dev() == wanted.st_dev && m.ino() == wanted.st_ino
        })
    })
}

/// True if `dir` holds an entry named like the marker (of any kind):
/// cleanup keeps it until last.
pub fn is_present(dir: BorrowedFd<'_>) -> bool {
    rustix::fs::statat(dir, MARKER_C, AtFlags::SYMLINK_NOFOLLOW).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open_dir(path: &std::path::Path) -> OwnedFd {
        rustix::fs::open(path, OFlags::DIRECTORY | OFlags::RDONLY, Mode::empty()).unwrap()
    }

    #[test]
    fn a_written_marker_is_valid_and_live_while_held() {
        let root = tempfile::tempdir().unwrap();
        let dir = open_dir(root.path());
        let held = write_locked(dir.as_fd(), &Marker::new("r1")).unwrap();
        let found = open_valid(dir.as_fd(), "r1").unwrap();
        assert!(found.is_live(), "the writer holds the lock");
        drop(held);
        assert!(!found.is_live(), "the lock went with the writer's fd");
    }

    #[test]
    fn a_pending_kill_is_read_from_either_mask() {
        let status = |shared: &str, own: &str| {
            format!("Name:\tfsbench\nState:\tD (disk sleep)\nSigPnd:\t{own}\nShdPnd:\t{shared}\n")
        };
        assert!(lists_kill(&status("0000000000000100", "0000000000000000")));
        assert!(lists_kill(&status("0000000000000000", "0000000000000100")));
        // SIGTERM (bit 15) and SIGINT are not a kill.
        assert!(!lists_kill(&status("0000000000004002", "0000000000000000")));
        assert!(
            !kill_pending(std::process::id()),
            "this test is not being killed"
        );
    }

    #[test]
    fn the_marker_is_not_written_through_a_symlink() {
        let root = tempfile::tempdir().unwrap();
        let victim = root.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        std::os::unix::fs::symlink(&victim, root.path().join(MARKER)).unwrap();
        let dir = open_dir(root.path());
        assert!(write_locked(dir.as_fd(), &Marker::new("r1")).is_err());
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert!(matches!(
            open_valid(dir.as_fd(), "r1"),
            Err(NotOurs::NotAFile)
        ));
    }

    #[test]
    fn forged_and_foreign_markers_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let dir = open_dir(root.path());
        let marker_path = root.path().join(MARKER);
        std::fs::write(&marker_path, b"anything").unwrap();
        assert!(matches!(
            open_valid(dir.as_fd(), "r1"),
            Err(NotOurs::Malformed(_))
        ));
        let other = serde_json::to_string(&Marker::new("r2")).unwrap();
        std::fs::write(&marker_path, other).unwrap();
        assert!(matches!(
            open_valid(dir.as_fd(), "r1"),
            Err(NotOurs::OtherRun { .. })
        ));
        std::fs::write(&marker_path, vec![b' '; 70_000]).unwrap();
        assert!(matches!(
            open_valid(dir.as_fd(), "r1"),
            Err(NotOurs::Malformed(_))
        ));
        std::fs::remove_file(&marker_path).unwrap();
        assert!(matches!(
            open_valid(dir.as_fd(), "r1"),
            Err(NotOurs::Missing)
        ));
    }
}

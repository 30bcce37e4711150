//! Unlinking and renaming a file fsbench has just closed.
//!
//! close(2) on a FUSE file system returns before the file system's server
//! hears of it: the kernel sends the release on without waiting for it.
//! Until it arrives an SMB client (smbnetfs) refuses to delete or rename
//! the file, which its server still holds open, with EBUSY. Every unlink
//! and rename of a file fsbench made and closed (the workloads' own files,
//! the scratch directory's marker, cleanup's removals) goes through here,
//! so that moment is waited out: EBUSY, and nothing else, is tried again,
//! after pauses that double from 1 ms, for at most [`PATIENCE`]. A wait
//! inside a timed phase is what the file system made the program wait, and
//! is timed with it.
use std::fmt;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use rustix::fs::AtFlags;
use rustix::io::Errno;
use rustix::path::Arg;

/// How long EBUSY is waited out. The close reaches smbnetfs's server in
/// milliseconds (8 ms at most over 300 unlinks on a loaded 2-core host);
/// a file still busy after this is held open by something else, or has
/// another file mounted on it.
pub const PATIENCE: Duration = Duration::from_secs(2);

const FIRST_PAUSE: Duration = Duration::from_millis(1);
const LONGEST_PAUSE: Duration = Duration::from_millis(64);

/// An unlink or rename that failed: its errno, and how often and how long
/// it was tried (more than once only while it met EBUSY).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused {
    pub errno: Errno,
    pub tries: u32,
    /// From the first failure to the last try.
    pub waited: Duration,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.errno == Errno::BUSY && self.tries > 1 {
            write!(
                f,
                "still busy {:.1} s after it was closed ({} tries; the file system's server may still hold it open): {}",
                self.waited.as_secs_f64(),
                self.tries,
                self.errno
            )
        } else {
            self.errno.fmt(f)
        }
    }
}

impl std::error::Error for Refused {}

/// Unlinks `name` in `dir`, a file just closed.
pub fn unlink<P: Arg + Copy>(dir: impl AsFd, name: P) -> Result<(), Refused> {
    let dir = dir.as_fd();
    retry(|| rustix::fs::unlinkat(dir, name, AtFlags::empty()))
}

/// Renames `old` in `old_dir`, a file just closed, to `new` in `new_dir`.
pub fn rename<P: Arg + Copy, Q: Arg + Copy>(
    old_dir: impl AsFd,
    old: P,
    new_dir: impl AsFd,
    new: Q,
) -> Result<(), Refused> {
    let (old_dir, new_dir) = (old_dir.as_fd(), new_dir.as_fd());
    retry(|| rustix::fs::renameat(old_dir, old, new_dir, new))
}

/// Runs `op`, an unlink or rename of a file just closed, again while it
/// fails with EBUSY, for at most [`PATIENCE`].
pub fn retry<T>(op: impl FnMut() -> rustix::io::Result<T>) -> Result<T, Refused> {
    retry_busy(PATIENCE, op)
}

fn retry_busy<T>(
    patience: Duration,
    mut op: impl FnMut() -> rustix::io::Result<T>,
) -> Result<T, Refused> {
    // The clock is read at the first failure, not before every call: an
    // unlink that succeeds (all but a few) costs its system call alone.
    let mut started = None;
    let mut pause = FIRST_PAUSE;
    let mut tries = 0;
    loop {
        tries += 1;
        let errno = match op() {
            Ok(done) => return Ok(done),
            Err(errno) => errno,
        };
        let waited = started.get_or_insert_with(Instant::now).elapsed();
        let left = patience.saturating_sub(waited);
        if errno != Errno::BUSY || left.is_zero() {
            return Err(Refused {
                errno,
                tries,
                waited,
            });
        }
        std::thread::sleep(pause.min(left));
        pause = (pause * 2).min(LONGEST_PAUSE);
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::rc::Rc;

    use super::*;

    /// An operation that fails with each of `failures` in turn, then
    /// succeeds; it counts its calls.
    fn failing(failures: Vec<Errno>) -> (impl FnMut() -> rustix::io::Result<()>, Rc<Cell<usize>>) {
        let calls = Rc::new(Cell::new(0));
        let counted = calls.clone();
        let op = move || {
            let call = counted.get();
            counted.set(call + 1);
            failures.get(call).map_or(Ok(()), |&errno| Err(errno))
        };
        (op, calls)
    }

    #[test]
    fn ebusy_is_tried_again_until_the_close_has_settled() {
        let (op, calls) = failing(vec![Errno::BUSY; 5]);
        assert_eq!(retry_busy(Duration::from_secs(2), op), Ok(()));
        assert_eq!(calls.get(), 6);
    }

    #[test]
    fn any_other_errno_is_returned_at_once() {
        for errno in [Errno::NOENT, Errno::ACCESS, Errno::IO, Errno::ISDIR] {
            let (op, calls) = failing(vec![errno]);
            let refused = retry_busy(Duration::from_secs(2), op).unwrap_err();
            assert_eq!((refused.errno, refused.tries, calls.get()), (errno, 1, 1));
            assert_eq!(refused.to_string(), std::io::Error::from(errno).to_string());
        }
    }

    /// Only EBUSY is waited out: what comes after it is the answer.
    #[test]
    fn an_error_after_ebusy_ends_the_tries() {
        let (op, calls) = failing(vec![Errno::BUSY, Errno::BUSY, Errno::NOENT]);
        let refused = retry_busy(Duration::from_secs(2), op).unwrap_err();
        assert_eq!(
            (refused.errno, refused.tries, calls.get()),
            (Errno::NOENT, 3, 3)
        );
        assert!(!refused.to_string().contains("still busy"), "{refused}");
    }

    #[test]
    fn ebusy_past_the_patience_is_reported_as_still_busy() {
        let patience = Duration::from_millis(40);
        let (op, calls) = failing(vec![Errno::BUSY; 1000]);
        let refused = retry_busy(patience, op).unwrap_err();
        assert_eq!(refused.errno, Errno::BUSY);
        assert!(refused.waited >= patience, "{refused:?}");
        // 1, 2, 4, 8, 16 ms and what is left: a handful of tries, not a
        // spin (fewer where a loaded host oversleeps the pauses).
        assert!((2..=10).contains(&calls.get()), "{} tries", calls.get());
        assert_eq!(refused.tries as usize, calls.get());
        let text = refused.to_string();
        let told = format!(
            "still busy {:.1} s after it was closed ({} tries; ",
            refused.waited.as_secs_f64(),
            refused.tries
        );
        assert!(text.starts_with(&told), "{text}");
        assert!(
            text.ends_with("Device or resource busy (os error 16)"),
            "{text}"
        );
    }

    #[test]
    fn unlink_and_rename_reach_the_file_system() {
        let root = tempfile::tempdir().unwrap();
        let dir = std::fs::File::open(root.path()).unwrap();
        std::fs::write(root.path().join("a"), b"x").unwrap();
        rename(&dir, c"a", &dir, c"b").unwrap();
        assert!(root.path().join("b").exists() && !root.path().join("a").exists());
        unlink(&dir, c"b").unwrap();
        assert!(!root.path().join("b").exists());
        let gone = unlink(&dir, c"b").unwrap_err();
        assert_eq!((gone.errno, gone.tries), (Errno::NOENT, 1));
    }
}

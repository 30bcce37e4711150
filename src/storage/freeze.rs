//! A checkpoint of a file system's journal: it is frozen and thawed at
//! once (the FIFREEZE and FITHAW ioctls). A sync writes the journal, but
//! the metadata blocks it committed stay pinned in the cache until the
//! journal is checkpointed (written in place), so drop_caches cannot drop
//! them: on a loop ext4, a `find` after a sync and a drop_caches read 0 B
//! from the device, after a freeze and thaw 104 KiB. A freeze writes
//! everything in place (ext4 flushes its journal, XFS quiesces its log,
//! btrfs commits its transaction).
//!
//! A frozen file system blocks every writer on the host, in uninterruptible
//! sleep, until it is thawed, and the kernel thaws none when the process
//! that froze it dies (measured on 6.18: writers still wait after `fsfreeze
//! -f` has exited, until `fsfreeze -u`). So fsbench never freezes in its
//! own process: a child forked for it alone, with every signal it can
//! block blocked and out of fsbench's session and process group, freezes,
//! thaws, says what happened on a pipe and exits. A kill of fsbench
//! (SIGKILL, or a Ctrl-C or kill of its whole process group) cannot keep
//! the child from thawing; a child killed itself before it answered (only
//! a SIGKILL aimed at it can) is answered by fsbench thawing. Only both
//! killed at once between the two calls (a whole cgroup killed) leaves the
//! file system frozen: `fsfreeze -u MOUNTPOINT` thaws it.
use std::io::Read;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

use anyhow::Context;
use rustix::io::Errno;

use crate::storage::forked;

/// `_IOWR('X', 119, int)` and `_IOWR('X', 120, int)` of linux/fs.h.
const FIFREEZE: u32 = 0xC004_5877;
const FITHAW: u32 = 0xC004_5878;

/// What a freeze and thaw of a file system did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checkpoint {
    /// Frozen and thawed: everything it held is written in place.
    Done,
    /// It cannot be frozen (tmpfs, FUSE, NFS: EOPNOTSUPP, ENOTTY, EINVAL),
    /// or not by this user (EPERM).
    Unsupported,
    /// Someone else holds it frozen, or is freezing it (EBUSY): theirs to
    /// thaw, left alone.
    FrozenElsewhere,
}

/// Freezes and thaws the file system of `dir` in a child of its own (see
/// the module's comment), and waits for it.
pub fn checkpoint(dir: BorrowedFd<'_>) -> anyhow::Result<Checkpoint> {
    let (answer, say) = forked::pipe().context("the freeze")?;
    let pid = fork_blocking_signals(dir, &say)?;
    drop(say);
    let answer = read_answer(answer);
    reap(pid);
    match answer {
        Some(0) => Ok(Checkpoint::Done),
        Some(errno) => refused(Errno::from_raw_os_error(errno)),
        None => {
            thaw(dir);
            anyhow::bail!(
                "the process that froze and thawed the target's file system was killed \
                 before it answered; fsbench thawed the file system"
            )
        }
    }
}

/// Forks the child that freezes and thaws `dir` and answers on `say`; it
/// starts with every signal blocked (the mask is inherited), so not even
/// the moment before it blocks them itself is open to a signal.
fn fork_blocking_signals(dir: BorrowedFd<'_>, say: &OwnedFd) -> anyhow::Result<libc::pid_t> {
    // SAFETY: signal sets of this thread, on the stack.
    let kept = unsafe {
        let mut all = std::mem::zeroed::<libc::sigset_t>();
        let mut kept = std::mem::zeroed::<libc::sigset_t>();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut kept);
        kept
    };
    // SAFETY: the child calls only system calls on descriptors it was
    // given, and never returns (`freeze_and_thaw` ends in _exit).
    let pid = match unsafe { libc::fork() } {
        0 => freeze_and_thaw(dir.as_raw_fd(), say.as_raw_fd()),
        pid => pid,
    };
    let forked = std::io::Error::last_os_error();
    // SAFETY: this thread's mask, as it was.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &kept, std::ptr::null_mut()) };
    match pid {
        -1 => Err(forked).context("cannot fork to freeze the target's file system"),
        pid => Ok(pid),
    }
}

/// The child's life: out of fsbench's session (a signal to its process
/// group is not one to the child), freezes `dir`'s file system and, if it
/// froze it, thaws it; writes 0 or the errno FIFREEZE gave on `say`.
fn freeze_and_thaw(dir: libc::c_int, say: libc::c_int) -> ! {
    // SAFETY: system calls on descriptors and buffers of this process.
    unsafe {
        forked::close_all_but([dir, say]);
        libc::setsid();
        let answer: libc::c_int = match libc::ioctl(dir, FIFREEZE as _, 0) {
            0 => {
                libc::ioctl(dir, FITHAW as _, 0);
                0
            }
            _ => *libc::__errno_location(),
        };
        libc::write(
            say,
            (&answer as *const libc::c_int).cast(),
            size_of::<libc::c_int>(),
        );
        libc::_exit(0)
    }
}

/// The child's answer; None when it ended without one (killed).
fn read_answer(answer: OwnedFd) -> Option<libc::c_int> {
    let mut bytes = [0u8; size_of::<libc::c_int>()];
    std::fs::File::from(answer).read_exact(&mut bytes).ok()?;
    Some(libc::c_int::from_ne_bytes(bytes))
}

/// Reaps the child.
fn reap(pid: libc::pid_t) {
    let mut status = 0;
    // SAFETY: our own child, reaped once, here.
    while unsafe { libc::waitpid(pid, &mut status, 0) } == -1
        && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
    {}
}

/// Thaws `dir`'s file system: after a child that may have frozen it died.
/// EINVAL (it was not frozen) is what a child killed before its freeze
/// leaves, and is no failure.
fn thaw(dir: BorrowedFd<'_>) {
    // SAFETY: an ioctl on a descriptor of this process.
    unsafe { libc::ioctl(dir.as_raw_fd(), FITHAW as _, 0) };
}

/// What FIFREEZE's `errno` means.
fn refused(errno: Errno) -> anyhow::Result<Checkpoint> {
    match errno {
        Errno::OPNOTSUPP | Errno::NOTTY | Errno::INVAL | Errno::PERM => Ok(Checkpoint::Unsupported),
        Errno::BUSY => Ok(Checkpoint::FrozenElsewhere),
        errno => Err(errno)
            .context("cannot freeze the target's file system to write its journal in place"),
    }
}

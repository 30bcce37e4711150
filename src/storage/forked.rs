//! What fsbench's forked helpers share (the recorder's watchdog, the
//! freeze and thaw of `storage::freeze`): the pipe between parent and
//! child, and the child's first step, closing what it does not need.
//!
//! A helper is forked from a process with many threads, so the child runs
//! only system calls on what was prepared before the fork: no allocation,
//! no lock, nothing of the standard library that might take one.
use std::os::fd::{FromRawFd, OwnedFd};

use anyhow::Context;

/// A pipe (read end, write end), both ends close-on-exec.
pub fn pipe() -> anyhow::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error()).context("cannot make a pipe");
    }
    // SAFETY: both are fresh descriptors owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Closes every descriptor of the process but the two in `keep`: nothing
/// of the parent's held by the child delays an unmount, or keeps alive a
/// FUSE connection (`/dev/fuse`) whose server has died.
///
/// # Safety
///
/// Only in a forked child, which uses no descriptor of its parent's
/// after it but the two kept.
pub unsafe fn close_all_but(keep: [libc::c_int; 2]) {
    let (low, high) = (
        keep[0].min(keep[1]) as libc::c_uint,
        keep[0].max(keep[1]) as libc::c_uint,
    );
    // SAFETY: closing descriptors of this process.
    unsafe {
        if low > 0 {
            libc::close_range(0, low - 1, 0);
        }
        if high > low + 1 {
            libc::close_range(low + 1, high - 1, 0);
        }
        libc::close_range(high + 1, libc::c_uint::MAX, 0);
    }
}

//! A process that serves its own FUSE file system cannot die of kill -9
//! while one of its threads waits for that file system's I/O: the kill
//! ends the server thread, the waiting one sleeps uninterruptibly for an
//! answer no one will give, and the process, its mounts and every `sync`
//! or `df` on the machine behind them hang until someone aborts the
//! connection. So each recorder has a watchdog: a child forked when the
//! recorder is mounted, which watches its parent and, the moment the
//! parent has SIGKILL pending, aborts the recorder's FUSE connection
//! (fusectl's `abort`): the waiting I/O fails and the process exits. A
//! recorder that stops tells its watchdog to go, and so does the end of
//! the parent (the pipe between them closes).
//!
//! The child runs only system calls (`storage::forked`).
use std::ffi::CString;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

use anyhow::Context;
use rustix::fs::{AtFlags, Mode};

use crate::storage::forked;

/// How often the watchdog looks at its parent.
const POLL_MS: i32 = 100;

/// The watchdog of one recorder.
pub struct Watchdog {
    pid: libc::pid_t,
    /// Written to (or closed) to tell the watchdog to go.
    go: Option<OwnedFd>,
}

/// What the child needs, made before the fork.
struct Prepared {
    /// /proc/<parent>/status.
    status: CString,
    /// The connection's abort file where fusectl is mounted.
    system_abort: CString,
    /// A directory in the scratch directory to mount fusectl on, and the
    /// abort file there.
    own_fusectl: CString,
    own_abort: CString,
    parent: libc::pid_t,
}

impl Watchdog {
    /// Forks the watchdog of the FUSE mount at `at` in the scratch
    /// directory `dir` (already mounted: its device names the connection).
    pub fn start(dir: BorrowedFd<'_>, at: &str) -> anyhow::Result<Watchdog> {
        let stat = rustix::fs::statat(dir, at, AtFlags::SYMLINK_NOFOLLOW)
            .with_context(|| format!("cannot stat the recorder's mount {at}"))?;
        let minor = rustix::fs::minor(stat.st_dev);
        let fusectl = format!("{at}.fusectl");
        rustix::fs::mkdirat(dir, fusectl.as_str(), Mode::from_raw_mode(0o700))
            .with_context(|| format!("cannot create {fusectl}"))?;
        let parent = std::process::id() as libc::pid_t;
        let own = format!("/proc/self/fd/{}/{fusectl}", dir.as_raw_fd());
        let prepared = Prepared {
            status: c_string(format!("/proc/{parent}/status"))?,
            system_abort: c_string(format!("/sys/fs/fuse/connections/{minor}/abort"))?,
            own_abort: c_string(format!("{own}/{minor}/abort"))?,
            own_fusectl: c_string(own)?,
            parent,
        };
        let (read, write) = forked::pipe().context("the recorder's watchdog")?;
        // SAFETY: the child calls only async-signal-safe system calls on
        // what `prepared` holds, and never returns (`watch` ends in _exit).
        match unsafe { libc::fork() } {
            -1 => {
                Err(std::io::Error::last_os_error()).context("cannot fork the recorder's watchdog")
            }
            0 => watch(&prepared, read.as_raw_fd(), dir.as_raw_fd()),
            pid => Ok(Watchdog {
                pid,
                go: Some(write),
            }),
        }
    }
}

impl Drop for Watchdog {
    /// Tells the watchdog to go, and reaps it.
    fn drop(&mut self) {
        drop(self.go.take());
        let mut status = 0;
        // SAFETY: our own child, reaped once, here.
        unsafe { libc::waitpid(self.pid, &mut status, 0) };
    }
}

fn c_string(text: String) -> anyhow::Result<CString> {
    CString::new(text).context("a path with a NUL")
}

/// The watchdog's life: until told to go (a byte or the pipe's end on
/// `go`) or its parent has gone, aborts the connection once the parent
/// has SIGKILL pending. Keeps only `go` and the scratch directory `dir`
/// open: nothing of the parent's held by it delays an unmount.
fn watch(prepared: &Prepared, go: libc::c_int, dir: libc::c_int) -> ! {
    // SAFETY: system calls on descriptors and buffers of this process.
    unsafe {
        forked::close_all_but([go, dir]);
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
        loop {
            let mut poll = libc::pollfd {
                fd: go,
                events: libc::POLLIN,
                revents: 0,
            };
            if libc::poll(&mut poll, 1, POLL_MS) != 0 && poll.revents != 0 {
                libc::_exit(0);
            }
            if libc::getppid() != prepared.parent {
                libc::_exit(0);
            }
            if kill_pending(&prepared.status) {
                abort_connection(prepared);
                libc::_exit(0);
            }
        }
    }
}

/// Whether the process whose status file is `status` has SIGKILL pending
/// (ShdPnd, or its main thread's SigPnd), read into a buffer on the stack.
///
/// SAFETY: called in the forked child: system calls only.
unsafe fn kill_pending(status: &CString) -> bool {
    let mut buf = [0u8; 4096];
    // SAFETY: a valid path; a buffer of this size.
    let read = unsafe {
        let fd = libc::open(status.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        n
    };
    let text = &buf[..read.max(0) as usize];
    std::str::from_utf8(text).is_ok_and(crate::storage::marker::lists_kill)
}

/// Writes fusectl's `abort` for the connection: where fusectl is mounted,
/// else on a mount of its own in the scratch directory, detached after.
///
/// SAFETY: called in the forked child: system calls only.
unsafe fn abort_connection(prepared: &Prepared) {
    // SAFETY: valid C strings and a one-byte buffer.
    unsafe {
        if write_one(&prepared.system_abort) {
            return;
        }
        let fusectl = c"fusectl";
        if libc::mount(
            fusectl.as_ptr(),
            prepared.own_fusectl.as_ptr(),
            fusectl.as_ptr(),
            0,
            std::ptr::null(),
        ) == 0
        {
            write_one(&prepared.own_abort);
            libc::umount2(prepared.own_fusectl.as_ptr(), libc::MNT_DETACH);
        }
    }
}

/// Writes "1" to `path`; whether it could.
///
/// SAFETY: called in the forked child: system calls only.
unsafe fn write_one(path: &CString) -> bool {
    // SAFETY: a valid path and a one-byte buffer.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let written = libc::write(fd, b"1".as_ptr().cast(), 1);
        libc::close(fd);
        written == 1
    }
}

//! The syscall layer workloads issue I/O through: aligned buffers (needed
//! for O_DIRECT) and loops that turn short reads/writes into clear errors.
mod buffer;

pub use buffer::AlignedBuf;

use std::os::fd::BorrowedFd;

use anyhow::Context;

/// Alignment that satisfies O_DIRECT on every common device (4 KiB
/// logical blocks included) and keeps buffers page-aligned.
pub const DIRECT_ALIGN: usize = 4096;

/// Writes all of `buf`; a short write (full disk) is an error.
#[inline]
pub fn write_all(fd: BorrowedFd<'_>, buf: &[u8]) -> anyhow::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match rustix::io::write(fd, &buf[done..]) {
            Ok(0) => anyhow::bail!("write returned 0 bytes (file system full?)"),
            Ok(n) => done += n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e).context("write failed"),
        }
    }
    Ok(())
}

/// Reads exactly `buf.len()` bytes; end of file first is an error.
#[inline]
pub fn read_exact(fd: BorrowedFd<'_>, buf: &mut [u8]) -> anyhow::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match rustix::io::read(fd, &mut buf[done..]) {
            Ok(0) => anyhow::bail!("unexpected end of file after {done} of {} bytes", buf.len()),
            Ok(n) => done += n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e).context("read failed"),
        }
    }
    Ok(())
}

//! PostMark's file operations as system calls, in its two I/O modes:
//!
//! | op | buffered (stdio, default) | unbuffered (`set buffering false`) |
//! |---|---|---|
//! | create | `O_WRONLY|O_CREAT|O_TRUNC` 0666, `fstat`, stdio writes | `O_RDWR|O_CREAT` 0644, one `write` per block + remainder |
//! | read | `O_RDONLY`, `fstat`, stdio reads | `O_RDONLY`, one `read` per block + remainder |
//! | append | `O_WRONLY|O_CREAT|O_APPEND` 0666, `lseek(END)`, `fstat`, stdio writes | `O_RDWR|O_APPEND`, block writes |
//! | delete | `unlink` | `unlink` |
//!
//! The remainder call is made even when it is 0 bytes, as PostMark makes
//! it. Every path is relative to the instance's directory fd on the
//! file's location, so nothing outside the scratch directory is touched,
//! and `O_NOFOLLOW` keeps a planted symlink from redirecting a file.
//! Unlike PostMark, which prints a message and carries on, any failure
//! (a full file system, a file shorter than recorded) stops the run.
use std::ffi::CStr;
use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd, IntoRawFd, OwnedFd};

use anyhow::Context;
use rustix::fs::{Mode, OFlags, SeekFrom};

use super::engine::FileOps;
use super::pool::FileSlot;
use super::stdio::{self, StdioReader, StdioWriter};
use crate::io::{read_exact, write_all};
use crate::storage::just_closed;

/// The longest name: `s4294967295/4294967295` and a NUL.
const NAME_CAPACITY: usize = 24;

/// How one instance reaches its files.
pub struct Syscalls {
    /// The instance's directory on each location, in location order.
    dirs: Vec<OwnedFd>,
    /// Location names, for error messages only.
    location_names: Vec<String>,
    buffered: bool,
    read_block: usize,
    write_block: usize,
    /// Where reads land: a read block, or a stdio buffer, whichever is larger.
    read_buf: Vec<u8>,
    name: [u8; NAME_CAPACITY],
}

impl Syscalls {
    pub fn new(
        dirs: Vec<OwnedFd>,
        location_names: Vec<String>,
        config: &super::PostmarkConfig,
    ) -> Self {
        let read_block = config.read_block as usize;
        Syscalls {
            dirs,
            location_names,
            buffered: config.buffered,
            read_block,
            write_block: config.write_block as usize,
            read_buf: vec![0; read_block.max(stdio::MAX_BUFFER)],
            name: [0; NAME_CAPACITY],
        }
    }

    /// The instance's directory on each location.
    pub fn dirs(&self) -> impl Iterator<Item = BorrowedFd<'_>> {
        self.dirs.iter().map(|dir| dir.as_fd())
    }

    /// The file's directory and its name relative to it (`17`, `s3/17`),
    /// formatted without allocating.
    fn locate(&mut self, file: &FileSlot) -> (BorrowedFd<'_>, &CStr) {
        let mut cursor = &mut self.name[..];
        let written = match file.subdir {
            Some(sub) => write!(cursor, "s{sub}/{}\0", file.number),
            None => write!(cursor, "{}\0", file.number),
        };
        written.expect("NAME_CAPACITY fits any name");
        let len = NAME_CAPACITY - cursor.len();
        let name = CStr::from_bytes_with_nul(&self.name[..len]).expect("one NUL, at the end");
        (self.dirs[file.location as usize].as_fd(), name)
    }

    /// `s3/17 in /mnt/a`, for messages.
    fn describe(&self, file: &FileSlot) -> String {
        let location = &self.location_names[file.location as usize];
        match file.subdir {
            Some(sub) => format!("s{sub}/{} in {location}", file.number),
            None => format!("{} in {location}", file.number),
        }
    }

    fn open(&mut self, file: &FileSlot, flags: OFlags, mode: u32) -> anyhow::Result<OwnedFd> {
        let (dir, name) = self.locate(file);
        let flags = flags | OFlags::CLOEXEC | OFlags::NOFOLLOW;
        rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(mode))
            .with_context(|| format!("cannot open {}", self.describe(file)))
    }

    /// Writes `data` in write-block pieces and a remainder piece (0 bytes
    /// when the size is a multiple of the block), as PostMark does; in
    /// buffered mode through the stdio model. Then closes.
    fn write_data(&self, fd: OwnedFd, data: &[u8]) -> anyhow::Result<()> {
        let mut pieces = data.chunks_exact(self.write_block);
        if self.buffered {
            let mut stream = StdioWriter::new(stdio_buffer(&fd)?);
            let mut sink =
                |offset: usize, len: usize| write_all(fd.as_fd(), &data[offset..][..len]);
            for piece in &mut pieces {
                stream.fwrite(piece.len(), &mut sink)?;
            }
            stream.fwrite(pieces.remainder().len(), &mut sink)?;
            stream.close(&mut sink)?;
        } else {
            for piece in &mut pieces {
                write_all(fd.as_fd(), piece)?;
            }
            let rest = pieces.remainder();
            if rest.is_empty() {
                rustix::io::write(&fd, rest).context("write failed")?;
            } else {
                write_all(fd.as_fd(), rest)?;
            }
        }
        close(fd)
    }

    /// Reads `size` bytes in read-block pieces and a remainder piece, as
    /// PostMark does; in buffered mode through the stdio model.
    fn read_data(&mut self, fd: &OwnedFd, size: usize) -> anyhow::Result<()> {
        let block = self.read_block;
        if self.buffered {
            let mut stream = StdioReader::new(stdio_buffer(fd)?);
            let buf = &mut self.read_buf;
            let mut source = |want: usize| -> anyhow::Result<usize> {
                rustix::io::retry_on_intr(|| rustix::io::read(fd, &mut buf[..want]))
                    .context("read failed")
            };
            for _ in 0..size / block {
                stream.fread(block, &mut source)?;
            }
            stream.fread(size % block, &mut source)?;
        } else {
            for _ in 0..size / block {
                read_exact(fd.as_fd(), &mut self.read_buf[..block])?;
            }
            let rest = &mut self.read_buf[..size % block];
            if rest.is_empty() {
                rustix::io::read(fd, rest).context("read failed")?;
            } else {
                read_exact(fd.as_fd(), rest)?;
            }
        }
        Ok(())
    }
}

impl FileOps for Syscalls {
    fn create(&mut self, file: &FileSlot, data: &[u8]) -> anyhow::Result<()> {
        let fd = if self.buffered {
            self.open(file, OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC, 0o666)?
        } else {
            self.open(file, OFlags::RDWR | OFlags::CREATE, 0o644)?
        };
        self.write_data(fd, data)
            .with_context(|| format!("cannot write {}", self.describe(file)))
    }

    fn read(&mut self, file: &FileSlot) -> anyhow::Result<()> {
        let fd = self.open(file, OFlags::RDONLY, 0)?;
        self.read_data(&fd, file.size as usize)
            .and_then(|()| close(fd))
            .with_context(|| format!("cannot read {}", self.describe(file)))
    }

    fn append(&mut self, file: &FileSlot, data: &[u8]) -> anyhow::Result<()> {
        let fd = if self.buffered {
            let fd = self.open(
                file,
                OFlags::WRONLY | OFlags::CREATE | OFlags::APPEND,
                0o666,
            )?;
            // fopen("a") seeks to the end at once.
            rustix::fs::seek(&fd, SeekFrom::End(0))
                .with_context(|| format!("cannot seek in {}", self.describe(file)))?;
            fd
        } else {
            self.open(file, OFlags::RDWR | OFlags::APPEND, 0)?
        };
        self.write_data(fd, data)
            .with_context(|| format!("cannot append to {}", self.describe(file)))
    }

    fn delete(&mut self, file: &FileSlot) -> anyhow::Result<()> {
        let (dir, name) = self.locate(file);
        just_closed::unlink(dir, name)
            .with_context(|| format!("cannot delete {}", self.describe(file)))
    }
}

/// The stdio buffer glibc would give this file (it asks `fstat` too).
fn stdio_buffer(fd: &OwnedFd) -> anyhow::Result<usize> {
    let stat = rustix::fs::fstat(fd).context("fstat failed")?;
    Ok(stdio::buffer_size(stat.st_blksize as i64))
}

/// Closes and reports the error: network file systems report failed
/// writes (a full server, a lost connection) only at close.
fn close(fd: OwnedFd) -> anyhow::Result<()> {
    let raw = fd.into_raw_fd();
    // SAFETY: `raw` came from an OwnedFd we gave up, so nothing else
    // closes or uses it.
    if unsafe { libc::close(raw) } != 0 {
        return Err(std::io::Error::last_os_error()).context("close failed");
    }
    Ok(())
}

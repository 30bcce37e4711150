//! The data file: its layout, how jobs open it, the positional I/O calls,
//! and write data that defeats compression (random bytes) and dedup (every
//! 4 KiB of every write starts with its offset and a unique nonce).
use std::num::NonZeroU64;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use anyhow::Context;
use rustix::fs::{Advice, AtFlags, FallocateFlags, Mode, OFlags, StatxFlags};
use rustix::io::Errno;

use super::job::{Job, SyncFlag, short_size};
use super::verify::KeyMap;
use super::{FileSpec, Layout};
use crate::error::usage;
use crate::io::{AlignedBuf, DIRECT_ALIGN};
use crate::rng::{Random, WyRand};
use crate::workload::Progress;

/// Bytes per write while laying out a file.
const LAYOUT_CHUNK: usize = 1 << 20;

/// Reads exactly `buf.len()` bytes at `offset`.
#[inline]
pub fn pread_full(fd: BorrowedFd<'_>, buf: &mut [u8], offset: u64) -> anyhow::Result<()> {
    let len = buf.len();
    positional("read", len, offset, "unexpected end of file", |done| {
        rustix::io::pread(fd, &mut buf[done..], offset + done as u64)
    })
}

/// Writes all of `buf` at `offset`; a short write (full disk) is an error.
#[inline]
pub fn pwrite_full(fd: BorrowedFd<'_>, buf: &[u8], offset: u64) -> anyhow::Result<()> {
    positional(
        "write",
        buf.len(),
        offset,
        "wrote nothing (file system full?)",
        |done| rustix::io::pwrite(fd, &buf[done..], offset + done as u64),
    )
}

/// Repeats `call(bytes done so far)` until `len` bytes are through,
/// retrying EINTR; `when_zero` says what a call that moves nothing means.
#[inline]
fn positional(
    what: &str,
    len: usize,
    offset: u64,
    when_zero: &str,
    mut call: impl FnMut(usize) -> rustix::io::Result<usize>,
) -> anyhow::Result<()> {
    let mut done = 0;
    while done < len {
        match call(done) {
            Ok(0) => anyhow::bail!("{what} of {len} bytes at offset {offset}: {when_zero}"),
            Ok(n) => done += n,
            Err(Errno::INTR) => continue,
            Err(e) => {
                return Err(e).with_context(|| format!("{what} of {len} bytes at offset {offset}"));
            }
        }
    }
    Ok(())
}

/// A thread's write buffer: random bytes once, then per write a fresh
/// 16-byte stamp (offset, nonce) at the start of every 4 KiB — two stores
/// per dedup block instead of regenerating the data. (Stamping every
/// 512-byte sector cost 10-15 % of 1 MiB write throughput on tmpfs.)
pub struct Payload {
    buf: AlignedBuf,
    nonce: u64,
}

impl Payload {
    pub fn new(len: usize, seed: u64, thread: u32) -> Payload {
        let mut buf = AlignedBuf::new(len);
        let mut rng = WyRand::for_stream(seed ^ 0x5eed_da7a, u64::from(thread));
        rng.fill(&mut buf);
        Payload {
            buf,
            // The thread in the top bits keeps nonces unique across threads.
            nonce: u64::from(thread) << 48,
        }
    }

    /// The buffer, stamped for a write of `len` bytes at `offset`.
    #[inline]
    pub fn stamped(&mut self, offset: u64, len: usize) -> &[u8] {
        self.nonce += 1;
        stamp(&mut self.buf[..len], offset, self.nonce);
        &self.buf[..len]
    }

    /// The buffer as read target.
    #[inline]
    pub fn space(&mut self, len: usize) -> &mut [u8] {
        &mut self.buf[..len]
    }
}

/// Dedup works on blocks of 4 KiB or more: one stamp in each defeats it.
const STAMP_EVERY: usize = 4096;

/// A stamp's bytes: the offset, then the nonce.
const STAMP_LEN: usize = 16;

/// Stamps every 4 KiB block of `buf` with room for it: a buffered write
/// of an odd size (fio's bs=2300) may end in a sliver too short, which is
/// left as it is.
fn stamp(buf: &mut [u8], offset: u64, nonce: u64) {
    let blocks = buf.chunks_mut(STAMP_EVERY).enumerate();
    for (i, block) in blocks.filter(|(_, b)| b.len() >= STAMP_LEN) {
        let at = offset + (i * STAMP_EVERY) as u64;
        block[..8].copy_from_slice(&at.to_le_bytes());
        block[8..STAMP_LEN].copy_from_slice(&nonce.to_le_bytes());
    }
}

/// Creates `file` in `dir` as its layout says: its bytes written (random
/// stamped data, or generation-1 blocks when verifying, through the page
/// cache), allocated, or sparse; then flushed to stable storage.
pub fn lay_out(
    dir: BorrowedFd<'_>,
    file: &FileSpec,
    seed: u64,
    keys: Option<&KeyMap>,
    progress: &Progress,
) -> anyhow::Result<()> {
    let name = file.name.as_str();
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )
    .with_context(|| format!("cannot create {name}"))?;
    match file.layout {
        Layout::Written => write_whole(fd.as_fd(), name, file.size, seed, keys, progress)?,
        Layout::Allocated => allocate(fd.as_fd(), name, file.size)?,
        Layout::Sparse => {
            rustix::fs::ftruncate(&fd, file.size).with_context(|| format!("cannot size {name}"))?
        }
    }
    rustix::fs::fsync(&fd).with_context(|| format!("fsync of {name} failed"))
}

/// Reserves the file's blocks, as fio's `fallocate=native` does; where
/// the file system cannot, the file is left sparse, as fio leaves it.
fn allocate(fd: BorrowedFd<'_>, name: &str, size: u64) -> anyhow::Result<()> {
    let Some(len) = NonZeroU64::new(size) else {
        return Ok(());
    };
    match rustix::fs::fallocate(fd, FallocateFlags::empty(), 0, len.get()) {
        Ok(()) => Ok(()),
        Err(Errno::OPNOTSUPP) => {
            rustix::fs::ftruncate(fd, size).with_context(|| format!("cannot size {name}"))
        }
        Err(e) => Err(e).with_context(|| format!("cannot allocate {name}")),
    }
}

/// Writes the file's `size` bytes.
fn write_whole(
    fd: BorrowedFd<'_>,
    name: &str,
    size: u64,
    seed: u64,
    keys: Option<&KeyMap>,
    progress: &Progress,
) -> anyhow::Result<()> {
    let mut payload = Payload::new(LAYOUT_CHUNK, seed, u32::MAX);
    let mut offset = 0;
    while offset < size {
        crate::interrupt::check()?;
        let len = (size - offset).min(LAYOUT_CHUNK as u64) as usize;
        let data = match keys {
            Some(keys) => {
                let space = payload.space(len);
                keys.fill_initial(space, offset);
                &*space
            }
            None => payload.stamped(offset, len),
        };
        pwrite_full(fd, data, offset).with_context(|| format!("laying out {name}"))?;
        offset += len as u64;
        progress.advance_phase(offset, size);
    }
    Ok(())
}

/// Opens the file for `job`: O_DIRECT and O_SYNC/O_DSYNC as it asks. The
/// page cache is flushed and dropped first, so every job starts cold
/// whatever ran before (tmpfs keeps its pages: they are the data).
pub fn open_for(dir: BorrowedFd<'_>, name: &str, job: &Job) -> anyhow::Result<OwnedFd> {
    drop_cached_pages(dir, name)?;
    let mut flags = OFlags::CLOEXEC;
    flags |= if job.writes() {
        OFlags::RDWR
    } else {
        OFlags::RDONLY
    };
    if job.direct {
        flags |= OFlags::DIRECT;
    }
    flags |= match job.sync {
        SyncFlag::None => OFlags::empty(),
        SyncFlag::Dsync => OFlags::DSYNC,
        SyncFlag::Sync => OFlags::SYNC,
    };
    match rustix::fs::openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => Ok(fd),
        Err(Errno::INVAL) if job.direct => anyhow::bail!(
            "this file system refuses O_DIRECT (opening {name} with O_DIRECT: invalid argument); run without --direct"
        ),
        Err(e) => Err(e).with_context(|| format!("cannot open {name}")),
    }
}

fn drop_cached_pages(dir: BorrowedFd<'_>, name: &str) -> anyhow::Result<()> {
    let fd = rustix::fs::openat(dir, name, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
        .with_context(|| format!("cannot open {name}"))?;
    rustix::fs::fsync(&fd).with_context(|| format!("fsync of {name} failed"))?;
    // Advice only: a file system that ignores it is fine.
    let _ = rustix::fs::fadvise(&fd, 0, None::<NonZeroU64>, Advice::DontNeed);
    drop_loop_images(&fd);
    Ok(())
}

/// On a loop device, the host's cache of its image holds the pages the
/// target's own cache just let go: they go too, so that a cold read
/// reaches a disk. Best effort: an image fsbench may not open keeps them.
fn drop_loop_images(fd: &OwnedFd) {
    use std::os::fd::AsRawFd;
    // The file's path, for its mount: a btrfs's st_dev names no device.
    let Ok(path) = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())) else {
        return;
    };
    for image in crate::storage::devices::loop_images(&path) {
        let Ok(file) = std::fs::File::open(&image) else {
            continue;
        };
        let _ = rustix::fs::fsync(&file);
        let _ = rustix::fs::fadvise(&file, 0, None::<NonZeroU64>, Advice::DontNeed);
    }
}

/// Refuses, before any I/O, transfer sizes the file system's O_DIRECT
/// cannot take (statx STATX_DIOALIGN, Linux 6.1+; silent where unknown).
pub fn check_direct_alignment(dir: BorrowedFd<'_>, name: &str, job: &Job) -> anyhow::Result<()> {
    if !job.direct {
        return Ok(());
    }
    let Ok(stat) = rustix::fs::statx(dir, name, AtFlags::empty(), StatxFlags::DIOALIGN) else {
        return Ok(());
    };
    if stat.stx_mask & StatxFlags::DIOALIGN.bits() == 0 || stat.stx_dio_offset_align == 0 {
        return Ok(());
    }
    let align = u64::from(stat.stx_dio_offset_align);
    if let Some(bad) = job
        .xfer
        .sizes()
        .into_iter()
        .find(|s| !s.is_multiple_of(align))
    {
        return usage(format!(
            "O_DIRECT on this file system needs transfers in multiples of {align} bytes; {} is not (use a larger transfer size or drop --direct)",
            short_size(bad)
        ));
    }
    if u64::from(stat.stx_dio_mem_align) > DIRECT_ALIGN as u64 {
        return usage(format!(
            "O_DIRECT on this file system needs {}-byte aligned memory; fsbench aligns to {DIRECT_ALIGN}",
            stat.stx_dio_mem_align
        ));
    }
    Ok(())
}

/// EINVAL from an O_DIRECT read or write means misalignment: say so.
pub fn explain_direct_error(err: anyhow::Error, job: &Job) -> anyhow::Error {
    let einval = err
        .chain()
        .any(|c| c.downcast_ref::<Errno>() == Some(&Errno::INVAL));
    if job.direct && einval {
        err.context(format!(
            "O_DIRECT refused the transfer: the file system needs sizes and offsets aligned to its block size (transfer size {})",
            job.xfer.describe()
        ))
    } else {
        err
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_make_every_write_unique() {
        let mut p = Payload::new(12288, 1, 0);
        let a = p.stamped(8192, 4096).to_vec();
        let b = p.stamped(8192, 4096).to_vec();
        assert_ne!(a, b, "same offset, new nonce");
        assert_eq!(u64::from_le_bytes(a[..8].try_into().unwrap()), 8192);
        assert_eq!(a[16..], b[16..], "the random body is reused");
        let c = p.stamped(0, 12288);
        assert_eq!(u64::from_le_bytes(c[8192..8200].try_into().unwrap()), 8192);
    }

    #[test]
    fn an_odd_sized_write_keeps_its_sliver_unstamped() {
        let mut p = Payload::new(8192, 1, 0);
        let body = p.space(4106)[4096..].to_vec();
        let odd = p.stamped(4096, 4106);
        assert_eq!(u64::from_le_bytes(odd[..8].try_into().unwrap()), 4096);
        assert_eq!(odd[4096..], body[..], "10 bytes: no room for a stamp");
        let short = p.stamped(0, 2300);
        assert_eq!(u64::from_le_bytes(short[..8].try_into().unwrap()), 0);
    }

    #[test]
    fn lays_out_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let dfd = rustix::fs::open(
            dir.path(),
            OFlags::DIRECTORY | OFlags::RDONLY,
            Mode::empty(),
        )
        .unwrap();
        let file = FileSpec {
            name: "f".into(),
            size: 3 << 20,
            layout: Layout::Written,
        };
        lay_out(dfd.as_fd(), &file, 9, None, &Progress::new(true)).unwrap();
        let fd = rustix::fs::openat(&dfd, "f", OFlags::RDONLY, Mode::empty()).unwrap();
        let mut buf = vec![0u8; 4096];
        pread_full(fd.as_fd(), &mut buf, (2 << 20) + 4096).unwrap();
        assert_eq!(
            u64::from_le_bytes(buf[..8].try_into().unwrap()),
            (2 << 20) + 4096
        );
        let err = pread_full(fd.as_fd(), &mut buf, 3 << 20).unwrap_err();
        assert!(err.to_string().contains("end of file"), "{err}");
    }
}

//! The recorder: a FUSE file system fsbench serves itself, in a thread of
//! its own (the `fuser` crate, one request at a time, so the order it
//! answers them is the order they happened), with three files:
//!
//! - `disk`, the recorded disk: a loop device (direct I/O) is put on it
//!   and the configuration's file system made and mounted on that. While
//!   recording, each write is appended to the block log and each FSYNC —
//!   the loop driver turns the file system's cache flushes (REQ_PREFLUSH,
//!   FUA) into fsync of its backing file — is a flush in the log. Before,
//!   writes go to the base image (mkfs's work is the starting point).
//! - `control`: what a workload writes there is a mark in the log, in
//!   order with the writes: "fsync of this file returned" lands after the
//!   flush that made it durable.
//! - `state`: the crash state being checked, the base image with the log
//!   entries a model chose; the checker's writes (journal replay) go to an
//!   overlay file, so a state costs no copy of the image.
//!
//! A process that serves its own file system cannot be killed cleanly: a
//! kill -9 ends the server thread while another waits, uninterruptibly,
//! for I/O only it could answer. Each recorder's watchdog (`watchdog`), a
//! child process, aborts the FUSE connection as soon as its parent has the
//! kill pending, which fails that I/O and lets the process go; should the
//! watchdog be killed too, `fsbench clean` aborts it
//! (`storage::made::release`).
//!
//! Every file is opened with FOPEN_DIRECT_IO: no page cache of the FUSE
//! mount holds a byte, so a state read is the state's. The kernel's
//! writeback cache for FUSE is never asked for (fuser does not), so a
//! write reaches the server before the call that made it returns.
pub mod blocklog;
pub mod extents;
mod watchdog;

use std::cell::RefCell;
use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context;
use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo,
    KernelConfig, LockOwner, OpenFlags, ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyWrite, Request, WriteFlags,
};
use rustix::fs::{Mode, OFlags};

use crate::storage::loopdev::FileId;
use crate::storage::made::{self, Made, Record, Unmounted, WhenBusy};
use blocklog::Writer;
use extents::{Extents, Files, Source};

const DISK: INodeNo = INodeNo(2);
const CONTROL: INodeNo = INodeNo(3);
const STATE: INodeNo = INodeNo(4);
const NAMES: [(&str, INodeNo); 3] = [("disk", DISK), ("control", CONTROL), ("state", STATE)];
/// The largest write the kernel may send in one request (FUSE protocol
/// 7.28's max_pages): a loop device's 1 MiB requests arrive whole.
const MAX_WRITE: u32 = 1 << 20;
/// What the recorder was doing with its own files when one failed.
const LOG: &str = "write its block log";
const BASE: &str = "write the base image";
const OVERLAY: &str = "write the crash state's overlay";
const READ: &str = "read the recorded disk's files";
/// How long the kernel may keep attributes: they never change.
const TTL: Duration = Duration::from_secs(3600);
/// `losetup -d` and the last close of a loop device finish after the
/// ioctl returns: the FUSE mount stays busy meanwhile, and the prototype
/// saw more than 10 s.
const UNMOUNT_PATIENCE: Duration = Duration::from_secs(60);

/// What the FUSE thread and fsbench share.
struct Disk {
    size: u64,
    base: File,
    log: Writer,
    /// The recorded disk now, over the base image.
    live: Extents,
    recording: bool,
    state: Option<State>,
    /// Counts of what was recorded, for the result.
    counts: Counts,
    /// The first failure of the recorder's own files (a full --images):
    /// the disk is then not what the kernel was told it is, and nothing
    /// found on it can be trusted.
    lost: Option<Lost>,
}

/// What the recorder could not do with its own files, and why.
struct Lost {
    doing: &'static str,
    error: std::io::Error,
}

/// The crash state being checked.
struct State {
    map: Extents,
    overlay: File,
    overlay_len: u64,
}

/// What a recording held.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub writes: u64,
    pub written_bytes: u64,
    pub flushes: u64,
    pub marks: u64,
}

/// The FUSE side.
struct Served(Arc<Mutex<Disk>>);

/// A mounted recorder.
pub struct Recorder {
    disk: Arc<Mutex<Disk>>,
    session: Option<fuser::BackgroundSession>,
    /// Its mount point relative to the scratch directory, and its id.
    at: String,
    id: u64,
    /// Dropped last: it watches until the recorder is gone.
    _watchdog: watchdog::Watchdog,
}

impl Recorder {
    /// Mounts a recorder at `at` (made here) in the scratch directory
    /// `dir`, serving a disk of `size` bytes over `base`, logging to
    /// `log`; the mount is recorded before anything relies on it, and made
    /// private.
    pub fn mount(
        dir: BorrowedFd<'_>,
        at: &str,
        files: (File, File),
        size: u64,
        record: &mut Record,
    ) -> anyhow::Result<Recorder> {
        let (base, log) = files;
        rustix::fs::mkdirat(dir, at, Mode::from_raw_mode(0o700))
            .with_context(|| format!("cannot create {at}"))?;
        let disk = Arc::new(Mutex::new(Disk {
            size,
            base,
            log: Writer::start(log)?,
            live: Extents::default(),
            recording: false,
            state: None,
            counts: Counts::default(),
            lost: None,
        }));
        let mut config = fuser::Config::default();
        config.mount_options = vec![
            fuser::MountOption::FSName(made::RECORDER.into()),
            fuser::MountOption::NoDev,
            fuser::MountOption::NoSuid,
            fuser::MountOption::NoExec,
        ];
        let point = made::through_fd(dir, at);
        let session = fuser::Session::new(Served(Arc::clone(&disk)), &point, &config)
            .with_context(|| format!("cannot mount the recorder on {at} (is /dev/fuse there?)"))?;
        let id = made::record_mount(dir, at, record)?;
        let session = session
            .spawn()
            .context("cannot start the recorder's thread")?;
        made::make_private(dir, at)?;
        let watchdog = watchdog::Watchdog::start(dir, at)?;
        Ok(Recorder {
            disk,
            session: Some(session),
            at: at.to_string(),
            id,
            _watchdog: watchdog,
        })
    }

    /// The recorded disk's path through the scratch directory `dir`.
    pub fn disk_path(&self, dir: BorrowedFd<'_>) -> PathBuf {
        made::through_fd(dir, &format!("{}/disk", self.at))
    }

    /// The crash state's path through the scratch directory `dir`.
    pub fn state_path(&self, dir: BorrowedFd<'_>) -> PathBuf {
        made::through_fd(dir, &format!("{}/state", self.at))
    }

    /// The control file's path through the scratch directory `dir`.
    pub fn control_path(&self, dir: BorrowedFd<'_>) -> PathBuf {
        made::through_fd(dir, &format!("{}/control", self.at))
    }

    fn lock(&self) -> MutexGuard<'_, Disk> {
        lock(&self.disk)
    }

    /// Starts (or stops) recording the disk's writes.
    pub fn record(&self, on: bool) {
        self.lock().recording = on;
    }

    /// What was recorded so far.
    pub fn counts(&self) -> Counts {
        self.lock().counts
    }

    /// An error naming the first thing the recorder could not do with its
    /// own files, if there was one: whatever failed after it (the
    /// workload's EIO, an unmountable state) followed from it, and a
    /// recording or a check that seemed to succeed is void.
    pub fn intact(&self) -> anyhow::Result<()> {
        match &self.lock().lost {
            None => Ok(()),
            Some(Lost { doing, error }) => {
                anyhow::bail!("the recorder could not {doing} in --images: {error}")
            }
        }
    }

    /// Serves `map` as the `state` file, its check's writes going to a
    /// fresh `overlay`.
    pub fn serve_state(&self, map: Extents, overlay: File) {
        self.lock().state = Some(State {
            map,
            overlay,
            overlay_len: 0,
        });
    }

    /// Copies the state being served into `out` (a failure kept for the
    /// user), 1 MiB at a time.
    pub fn copy_state(&self, out: &File) -> anyhow::Result<()> {
        let size = self.lock().size;
        let mut buf = vec![0u8; 1 << 20];
        let mut at = 0;
        while at < size {
            let n = (size - at).min(buf.len() as u64) as usize;
            let disk = self.lock();
            let state = disk.state.as_ref().context("no crash state served")?;
            state
                .map
                .read(at, &mut buf[..n], &disk.files(Some(&state.overlay)))?;
            drop(disk);
            if buf[..n].iter().any(|&b| b != 0) {
                out.write_all_at(&buf[..n], at)?;
            }
            at += n as u64;
        }
        out.set_len(size)?;
        Ok(())
    }

    /// Unmounts it (through the scratch directory `dir`, only if the mount
    /// there is still its own) and ends its thread. A loop device just
    /// detached may hold the disk for a while: tried again for up to a
    /// minute, then detached lazily.
    pub fn stop(mut self, dir: BorrowedFd<'_>) -> anyhow::Result<()> {
        let clock = Instant::now();
        loop {
            let busy = match clock.elapsed() < UNMOUNT_PATIENCE {
                true => WhenBusy::Fail,
                false => WhenBusy::Detach,
            };
            match made::unmount(dir, self.id, &self.at, busy) {
                Ok(Unmounted::Other(other)) => {
                    anyhow::bail!(
                        "left {} alone: mount {other} there is not the recorder",
                        self.at
                    )
                }
                Ok(Unmounted::Done | Unmounted::Gone) => break,
                Ok(Unmounted::Detached) => {
                    // The thread ends only when the kernel lets go.
                    if let Some(session) = self.session.take() {
                        std::mem::forget(session);
                    }
                    return Ok(());
                }
                Err(e)
                    if busy == WhenBusy::Fail
                        && e.downcast_ref::<rustix::io::Errno>()
                            == Some(&rustix::io::Errno::BUSY) =>
                {
                    std::thread::sleep(Duration::from_millis(100))
                }
                Err(e) => return Err(e),
            }
        }
        if let Some(session) = self.session.take() {
            session
                .join()
                .map_err(|e| anyhow::anyhow!("the recorder's thread: {e}"))?;
        }
        Ok(())
    }
}

/// Where a recorded disk's parts go, relative to a scratch directory.
pub struct Places<'a> {
    /// The base image: the disk before recording starts.
    pub base: &'a str,
    /// The block log.
    pub log: &'a str,
    /// The recorder's mount point (made here; its parent must exist).
    pub rec: &'a str,
}

/// The recorded disk's file, open: what a loop device is put on.
pub struct DiskFile {
    pub file: File,
    /// Its place in the scratch directory (`<rec>/disk`).
    pub at: String,
    pub id: FileId,
}

/// A recorded disk in the scratch directory `dir`: a new sparse base
/// image of `size` and a new block log at `places`, the recorder mounted
/// over them, its disk in `record` (a loop device on it is fsbench's,
/// for teardown and `fsbench clean`), then `attach`'s loop device on the
/// disk. The recorder goes in `recorder` as soon as it is mounted, so
/// that its holder stops it on every way out, after the loop device is
/// detached (a recorder stopped first would wait on its busy disk).
/// `fsbench crash` and the configurations' recorded kind both stand on it.
pub fn recorded_disk<T>(
    dir: BorrowedFd<'_>,
    record: &RefCell<Record>,
    places: &Places,
    size: u64,
    recorder: &mut Option<Recorder>,
    attach: impl FnOnce(&DiskFile) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let base = create(dir, places.base)?;
    base.set_len(size)
        .with_context(|| format!("cannot size {}", places.base))?;
    let log = create(dir, places.log)?;
    let mounted = Recorder::mount(dir, places.rec, (base, log), size, &mut record.borrow_mut())?;
    let path = mounted.disk_path(dir);
    let at = format!("{}/disk", places.rec);
    *recorder = Some(mounted);
    let file = File::options()
        .read(true)
        .write(true)
        .open(&path)
        .context("cannot open the recorded disk")?;
    let id = FileId::of(file.as_fd())?;
    record.borrow_mut().add(&Made::Image {
        file: id,
        at: at.clone(),
    })?;
    attach(&DiskFile { file, at, id })
}

/// A scratch file `at` created for reading and writing, never over one.
fn create(dir: BorrowedFd<'_>, at: &str) -> anyhow::Result<File> {
    let fd = rustix::fs::openat(
        dir,
        at,
        OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )
    .with_context(|| format!("cannot create {at}"))?;
    Ok(File::from(fd))
}

fn lock(disk: &Mutex<Disk>) -> MutexGuard<'_, Disk> {
    // A panic in the FUSE thread leaves the data as consistent as any
    // single request left it.
    disk.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Disk {
    fn files<'a>(&'a self, overlay: Option<&'a File>) -> Files<'a> {
        Files {
            base: &self.base,
            log: self.log.file(),
            overlay,
        }
    }

    fn read(&mut self, ino: INodeNo, offset: u64, buf: &mut [u8]) -> Result<(), Errno> {
        let read = match ino {
            DISK => self.live.read(offset, buf, &self.files(None)),
            STATE => match &self.state {
                Some(state) => state
                    .map
                    .read(offset, buf, &self.files(Some(&state.overlay))),
                None => return Err(Errno::ENXIO),
            },
            _ => return Err(Errno::EINVAL),
        };
        read.map_err(|e| self.lost(READ, e))
    }

    fn write(&mut self, ino: INodeNo, offset: u64, data: &[u8]) -> Result<(), Errno> {
        self.intact()?;
        match ino {
            DISK if self.recording => {
                let at = self
                    .log
                    .write(offset, data)
                    .map_err(|e| self.lost(LOG, e))?;
                self.live.put(offset, data.len() as u64, Source::Log(at));
                self.counts.writes += 1;
                self.counts.written_bytes += data.len() as u64;
                Ok(())
            }
            DISK => self
                .base
                .write_all_at(data, offset)
                .map_err(|e| self.lost(BASE, e)),
            CONTROL => {
                self.counts.marks += 1;
                self.log.mark(data).map_err(|e| self.lost(LOG, e))
            }
            STATE => {
                let state = self.state.as_mut().ok_or(Errno::ENXIO)?;
                if let Err(e) = state.overlay.write_all_at(data, state.overlay_len) {
                    return Err(self.lost(OVERLAY, e));
                }
                let at = Source::Overlay(state.overlay_len);
                state.map.put(offset, data.len() as u64, at);
                state.overlay_len += data.len() as u64;
                Ok(())
            }
            _ => Err(Errno::EINVAL),
        }
    }

    fn flush(&mut self, ino: INodeNo) -> Result<(), Errno> {
        self.intact()?;
        if ino == DISK && self.recording {
            self.counts.flushes += 1;
            self.log.flush().map_err(|e| self.lost(LOG, e))?;
        }
        Ok(())
    }

    /// A discard (punch hole or zero range) reads as zeros from now on.
    fn zero(&mut self, ino: INodeNo, offset: u64, len: u64) -> Result<(), Errno> {
        self.intact()?;
        match ino {
            DISK if self.recording => {
                self.log.zero(offset, len).map_err(|e| self.lost(LOG, e))?;
                self.live.put(offset, len, Source::Zero);
            }
            DISK => {
                let zeros = vec![0; len as usize];
                self.base
                    .write_all_at(&zeros, offset)
                    .map_err(|e| self.lost(BASE, e))?;
            }
            STATE => {
                if let Some(state) = self.state.as_mut() {
                    state.map.put(offset, len, Source::Zero);
                }
            }
            _ => return Err(Errno::EINVAL),
        }
        Ok(())
    }

    /// Keeps the first failure of the recorder's own files; the kernel
    /// gets EIO, as from a failing disk.
    fn lost(&mut self, doing: &'static str, error: std::io::Error) -> Errno {
        self.lost.get_or_insert(Lost { doing, error });
        Errno::EIO
    }

    /// Once something was lost the disk is a failed one: every later
    /// write, flush and discard fails too, so the workload or the check
    /// stops at once instead of going on with a disk that is not the
    /// recorded one.
    fn intact(&self) -> Result<(), Errno> {
        match self.lost {
            None => Ok(()),
            Some(_) => Err(Errno::EIO),
        }
    }

    fn attr(&self, ino: INodeNo) -> Option<FileAttr> {
        let (kind, perm, size) = match ino {
            INodeNo::ROOT => (FileType::Directory, 0o700, 0),
            DISK | STATE => (FileType::RegularFile, 0o600, self.size),
            CONTROL => (FileType::RegularFile, 0o200, 0),
            _ => return None,
        };
        let now = SystemTime::now();
        Some(FileAttr {
            ino,
            size,
            blocks: size.div_ceil(512),
            atime: now,
            mtime: now,
            ctime: now,
            crtime: now,
            kind,
            perm,
            nlink: 1 + u32::from(kind == FileType::Directory),
            uid: 0,
            gid: 0,
            rdev: 0,
            blksize: 4096,
            flags: 0,
        })
    }
}

impl Filesystem for Served {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        // Granted up to what the kernel allows; less only splits writes.
        let _ = config.set_max_write(MAX_WRITE);
        Ok(())
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let found = NAMES.iter().find(|(n, _)| OsStr::new(n) == name);
        match found.filter(|_| parent == INodeNo::ROOT) {
            Some(&(_, ino)) => {
                let attr = lock(&self.0).attr(ino).expect("a named inode");
                reply.entry(&TTL, &attr, Generation(0));
            }
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match lock(&self.0).attr(ino) {
            Some(attr) => reply.attr(&TTL, &attr),
            None => reply.error(Errno::ENOENT),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        _size: Option<u64>,
        _atime: Option<fuser::TimeOrNow>,
        _mtime: Option<fuser::TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        // A disk's size does not change (O_TRUNC of the control file is
        // nothing to keep).
        self.getattr(_req, ino, None, reply);
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match ino {
            // No FLUSH on close: it means nothing here, and a close at the
            // process's exit must not wait for a server that is gone.
            DISK | STATE | CONTROL => reply.opened(
                FileHandle(0),
                FopenFlags::FOPEN_DIRECT_IO | FopenFlags::FOPEN_NOFLUSH,
            ),
            _ => reply.error(Errno::EISDIR),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let mut disk = lock(&self.0);
        let end = (offset + u64::from(size)).min(disk.size);
        let mut buf = vec![0u8; end.saturating_sub(offset) as usize];
        match disk.read(ino, offset, &mut buf) {
            Ok(()) => reply.data(&buf),
            Err(e) => reply.error(e),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let mut disk = lock(&self.0);
        if ino != CONTROL && offset + data.len() as u64 > disk.size {
            return reply.error(Errno::ENOSPC);
        }
        if ino == CONTROL && data.len() > blocklog::MAX_MARK {
            return reply.error(Errno::EINVAL);
        }
        match disk.write(ino, offset, data) {
            Ok(()) => reply.written(data.len() as u32),
            Err(e) => reply.error(e),
        }
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lo: LockOwner,
        reply: ReplyEmpty,
    ) {
        // close(2): nothing to do with durability.
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        match lock(&self.0).flush(ino) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn fallocate(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let discards = mode & (libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_ZERO_RANGE) != 0;
        let mut disk = lock(&self.0);
        let end = (offset + length).min(disk.size);
        let done = match discards {
            true => disk.zero(ino, offset, end.saturating_sub(offset)),
            false => Ok(()),
        };
        match done {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        if ino != INodeNo::ROOT {
            return reply.error(Errno::ENOTDIR);
        }
        let entries = [
            (".", INodeNo::ROOT, FileType::Directory),
            ("..", INodeNo::ROOT, FileType::Directory),
        ]
        .into_iter()
        .chain(NAMES.iter().map(|&(n, i)| (n, i, FileType::RegularFile)));
        for (i, (name, ino, kind)) in entries.enumerate().skip(offset as usize) {
            if reply.add(ino, i as u64 + 1, kind, name) {
                break;
            }
        }
        reply.ok();
    }
}

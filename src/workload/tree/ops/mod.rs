//! The tree operations that walk a tree: find (walk, as `find DIR`), stat
//! (walk + lstat of every entry, as `du`), read (every
//! file, as `find | xargs cat`), concat (every file appended to one), copy
//! (rsync -a / cp -a: data, modes, times, owners as root, xattrs when
//! supported), delete (rm -rf), and the description of a user's tree.
use std::ffi::CStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::Instant;

use anyhow::Context;
use rustix::fs::{AtFlags, Mode, OFlags, Stat, Timestamps};
use rustix::io::Errno;

use super::dataset::Description;
use super::parallel::{self, Parallel, open_beneath};
use super::walk::{Entry, Kind, Visitor, kind_of, read_listing, walk};
use crate::measure::LatencyRecorder;
use crate::storage::cleanup::{CleanupReport, empty_dir, open_subdir};
use crate::workload::synclog::{LogOp, SyncLog, record_in};

/// What an operation did: entries handled, bytes moved, per-entry latency.
#[derive(Default)]
pub struct Tally {
    pub entries: u64,
    pub bytes: u64,
    pub latency: LatencyRecorder,
}

impl Tally {
    fn merge(&mut self, other: &Tally) {
        self.entries += other.entries;
        self.bytes += other.bytes;
        self.latency.merge(&other.latency);
    }

    /// Counts one entry of `bytes`, timed from `start`; returns when it
    /// ended, which starts the next entry of a loop (one clock read each).
    pub(super) fn add(&mut self, bytes: u64, start: Instant) -> Instant {
        self.entries += 1;
        self.bytes += bytes;
        self.latency.record_since(start)
    }
}

/// Read buffer: large enough for few system calls, small enough to stay in
/// the CPU cache.
const BUF_BYTES: usize = 256 << 10;

/// Moves file data through a user-space buffer, as rsync does.
/// `copy_file_range` would be faster on some file systems, but on XFS and
/// btrfs it shares extents (a reflink) instead of copying: the copy would
/// time metadata, not the data the seeds' rsync moved.
pub struct Pump {
    buf: Vec<u8>,
}

impl Default for Pump {
    fn default() -> Self {
        Pump::with_block(BUF_BYTES)
    }
}

impl Pump {
    /// A pump that reads at most `block` bytes at a time.
    pub fn with_block(block: usize) -> Self {
        Pump {
            buf: vec![0; block],
        }
    }

    /// Reads `src` to its end; returns the bytes read.
    pub fn drain(&mut self, src: BorrowedFd<'_>) -> anyhow::Result<u64> {
        self.pump(src, None, |_| {})
    }

    /// `drain`, calling `each` with the length of every block read.
    pub fn drain_blocks(
        &mut self,
        src: BorrowedFd<'_>,
        each: impl FnMut(u64),
    ) -> anyhow::Result<u64> {
        self.pump(src, None, each)
    }

    /// Copies `src` from its offset to its end into `dst` at its offset.
    pub fn copy(&mut self, src: BorrowedFd<'_>, dst: BorrowedFd<'_>) -> anyhow::Result<u64> {
        self.pump(src, Some(dst), |_| {})
    }

    fn pump(
        &mut self,
        src: BorrowedFd<'_>,
        dst: Option<BorrowedFd<'_>>,
        mut each: impl FnMut(u64),
    ) -> anyhow::Result<u64> {
        let mut total = 0;
        loop {
            let n = match rustix::io::read(src, &mut self.buf) {
                Ok(0) => return Ok(total),
                Ok(n) => n,
                Err(Errno::INTR) => continue,
                Err(e) => return Err(e).context("read failed"),
            };
            if let Some(dst) = dst {
                crate::io::write_all(dst, &self.buf[..n])?;
            }
            total += n as u64;
            each(n as u64);
        }
    }
}

fn open_read(parent: BorrowedFd<'_>, name: &CStr) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(
        parent,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// `find DIR`: lists every directory and counts every entry, statting
/// none the listing gives a type for (the walk stats the others, as GNU
/// and BSD find do to know what to descend into). No per-entry latency:
/// an entry costs no system call of its own.
#[derive(Default)]
pub struct Find {
    pub tally: Tally,
}

impl Visitor for Find {
    fn leaf(&mut self, _entry: &Entry<'_>) -> anyhow::Result<()> {
        self.tally.entries += 1;
        Ok(())
    }

    fn enter(&mut self, _entry: &Entry<'_>, _dir: BorrowedFd<'_>) -> anyhow::Result<()> {
        self.tally.entries += 1;
        Ok(())
    }
}

/// The walk with an lstat of every entry, as `du`, `find -ls` and
/// rsync's scan of a tree do; its latency is per lstat.
#[derive(Default)]
pub struct StatAll {
    pub tally: Tally,
}

impl StatAll {
    fn stat(&mut self, entry: &Entry<'_>) -> anyhow::Result<()> {
        let start = Instant::now();
        rustix::fs::statat(entry.parent, entry.name, AtFlags::SYMLINK_NOFOLLOW)
            .with_context(|| format!("cannot stat {}", entry.rel))?;
        self.tally.add(0, start);
        Ok(())
    }
}

impl Visitor for StatAll {
    fn leaf(&mut self, entry: &Entry<'_>) -> anyhow::Result<()> {
        self.stat(entry)
    }

    fn enter(&mut self, entry: &Entry<'_>, _dir: BorrowedFd<'_>) -> anyhow::Result<()> {
        self.stat(entry)
    }
}

/// Reads every regular file to its end; with `out`, appends each to it
/// (seed 003's batch concatenation).
pub struct Read<'o> {
    pub tally: Tally,
    pump: Pump,
    out: Option<BorrowedFd<'o>>,
}

impl<'o> Read<'o> {
    pub fn new(out: Option<BorrowedFd<'o>>) -> Self {
        Read {
            tally: Tally::default(),
            pump: Pump::default(),
            out,
        }
    }
}

impl Visitor for Read<'_> {
    fn leaf(&mut self, entry: &Entry<'_>) -> anyhow::Result<()> {
        if entry.kind != Kind::File {
            return Ok(());
        }
        let start = Instant::now();
        let mut read = || -> anyhow::Result<u64> {
            let file = open_read(entry.parent, entry.name)?;
            match self.out {
                Some(out) => self.pump.copy(file.as_fd(), out),
                None => self.pump.drain(file.as_fd()),
            }
        };
        let bytes = read().with_context(|| format!("cannot read {}", entry.rel))?;
        self.tally.add(bytes, start);
        Ok(())
    }
}

/// Counts what a user's tree holds (for `--source`), without opening files.
#[derive(Default)]
pub struct Describe {
    pub description: Description,
}

impl Visitor for Describe {
    fn leaf(&mut self, entry: &Entry<'_>) -> anyhow::Result<()> {
        match entry.kind {
            Kind::File => {
                let stat = rustix::fs::statat(entry.parent, entry.name, AtFlags::SYMLINK_NOFOLLOW)
                    .with_context(|| format!("cannot stat {}", entry.rel))?;
                self.description.add_file(entry.rel, stat.st_size as u64);
            }
            _ => self.description.add_other(entry.rel),
        }
        Ok(())
    }

    fn enter(&mut self, entry: &Entry<'_>, _dir: BorrowedFd<'_>) -> anyhow::Result<()> {
        self.description.add_dir(entry.rel);
        Ok(())
    }
}

/// The process's umask, read without changing it (`Umask:` in
/// /proc/self/status); 0o022 when unknown.
pub(super) fn current_umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("Umask:"))?;
            u32::from_str_radix(line["Umask:".len()..].trim(), 8).ok()
        })
        .unwrap_or(0o022)
}

/// Copies a tree like `rsync -a` / `cp -a`: directories, file data, modes,
/// access and modification times, symlinks, owners (as root) and xattrs
/// (when both file systems support them). Special files are skipped and
/// counted.
struct Copy<'d> {
    done: Copied,
    /// Directories made by a parallel copy, with their source's stat: their
    /// attributes are set once every thread is done.
    made: Vec<(String, Stat)>,
    root: BorrowedFd<'d>,
    open: Vec<OwnedFd>,
    pump: Pump,
    umask: u32,
    as_root: bool,
    xattrs: Xattrs,
    /// Where each created entry is recorded (`--sync-log`).
    log: Option<&'d SyncLog>,
}

/// Copies extended attributes through buffers allocated once per copier.
struct Xattrs {
    /// The source's xattr names, each ending in a NUL.
    names: Vec<u8>,
    value: Vec<u8>,
}

/// Room for an xattr list and for one value: Linux's limit for each
/// (XATTR_LIST_MAX, XATTR_SIZE_MAX).
const XATTR_BYTES: usize = 64 << 10;

impl Default for Xattrs {
    fn default() -> Self {
        Xattrs {
            names: vec![0; XATTR_BYTES],
            value: vec![0; XATTR_BYTES],
        }
    }
}

impl Xattrs {
    /// Gives `dst` the xattrs of `src`; returns why they were not copied
    /// when a side does not support them (the copy goes on without).
    fn copy(&mut self, src: BorrowedFd<'_>, dst: BorrowedFd<'_>) -> anyhow::Result<Option<String>> {
        let len = match rustix::fs::flistxattr(src, &mut self.names[..]) {
            Ok(len) => len,
            Err(e @ (Errno::OPNOTSUPP | Errno::RANGE)) => return Ok(no_xattrs("source", e)),
            Err(e) => return Err(e).context("cannot list xattrs"),
        };
        let listed = self.names[..len].split_inclusive(|&b| b == 0);
        for name in listed.filter(|name| name.len() > 1) {
            let name = CStr::from_bytes_with_nul(name).context("an xattr name without its NUL")?;
            let n = match rustix::fs::fgetxattr(src, name, &mut self.value[..]) {
                Ok(n) => n,
                Err(e @ Errno::RANGE) => return Ok(no_xattrs("source (value over 64 KiB)", e)),
                Err(e) => return Err(e).context("cannot read an xattr"),
            };
            let flags = rustix::fs::XattrFlags::empty();
            match rustix::fs::fsetxattr(dst, name, &self.value[..n], flags) {
                Ok(()) => {}
                Err(e @ (Errno::OPNOTSUPP | Errno::PERM)) => {
                    return Ok(no_xattrs("destination", e));
                }
                Err(e) => return Err(e).context("cannot write an xattr"),
            }
        }
        Ok(None)
    }
}

fn no_xattrs(side: &str, e: Errno) -> Option<String> {
    Some(format!(
        "xattrs not copied: {side}: {}",
        std::io::Error::from(e)
    ))
}

/// What a copy did.
#[derive(Default)]
pub struct Copied {
    pub tally: Tally,
    /// Special files (fifos, devices, sockets) not copied.
    pub skipped: u64,
    /// Why xattrs were not copied, if they were not.
    pub xattrs_off: Option<String>,
}

impl<'d> Copy<'d> {
    fn new(dst_root: BorrowedFd<'d>, log: Option<&'d SyncLog>) -> Self {
        Copy {
            done: Copied::default(),
            made: Vec::new(),
            root: dst_root,
            open: Vec::new(),
            pump: Pump::default(),
            umask: current_umask(),
            as_root: rustix::process::geteuid().is_root(),
            xattrs: Xattrs::default(),
            log,
        }
    }

    fn dst(&self) -> BorrowedFd<'_> {
        self.open.last().map_or(self.root, |fd| fd.as_fd())
    }

    /// Gives `dst` (created with mode `created`) the owner, mode, xattrs
    /// and times of `src` (`stat`).
    fn attributes(
        &mut self,
        src: BorrowedFd<'_>,
        dst: BorrowedFd<'_>,
        stat: &Stat,
        created: u32,
    ) -> anyhow::Result<()> {
        let mode = stat.st_mode & 0o7777;
        let owned = self.as_root && (stat.st_uid != 0 || stat.st_gid != 0);
        if owned {
            use rustix::fs::{Gid, Uid};
            rustix::fs::fchown(
                dst,
                Some(Uid::from_raw(stat.st_uid)),
                Some(Gid::from_raw(stat.st_gid)),
            )
            .context("cannot set the owner")?;
        }
        // Creation applied the umask, and chown clears set-id bits.
        if owned || created & !self.umask != mode {
            rustix::fs::fchmod(dst, Mode::from_raw_mode(mode)).context("cannot set the mode")?;
        }
        if self.done.xattrs_off.is_none() {
            self.done.xattrs_off = self.xattrs.copy(src, dst)?;
        }
        rustix::fs::futimens(dst, &stat_times(stat)).context("cannot set the times")?;
        Ok(())
    }

    fn copy_file(&mut self, entry: &Entry<'_>) -> anyhow::Result<u64> {
        let src = open_read(entry.parent, entry.name)?;
        let stat = rustix::fs::fstat(&src)?;
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mode = stat.st_mode & 0o777;
        let dst = rustix::fs::openat(self.dst(), entry.name, flags, Mode::from_raw_mode(mode))?;
        let bytes = self.pump.copy(src.as_fd(), dst.as_fd())?;
        self.attributes(src.as_fd(), dst.as_fd(), &stat, mode)?;
        Ok(bytes)
    }

    fn copy_symlink(&mut self, entry: &Entry<'_>) -> anyhow::Result<()> {
        let target = rustix::fs::readlinkat(entry.parent, entry.name, Vec::new())?;
        let stat = rustix::fs::statat(entry.parent, entry.name, AtFlags::SYMLINK_NOFOLLOW)?;
        rustix::fs::symlinkat(target.as_c_str(), self.dst(), entry.name)?;
        if self.as_root {
            use rustix::fs::{Gid, Uid};
            let (uid, gid) = (Uid::from_raw(stat.st_uid), Gid::from_raw(stat.st_gid));
            rustix::fs::chownat(
                self.dst(),
                entry.name,
                Some(uid),
                Some(gid),
                AtFlags::SYMLINK_NOFOLLOW,
            )?;
        }
        let times = stat_times(&stat);
        rustix::fs::utimensat(self.dst(), entry.name, &times, AtFlags::SYMLINK_NOFOLLOW)?;
        Ok(())
    }
}

impl Copy<'_> {
    /// Gives each directory a parallel copy made the attributes of its
    /// source, now that nothing is added to it any more.
    fn set_made_attributes(&mut self, src_root: BorrowedFd<'_>) -> anyhow::Result<()> {
        for (rel, stat) in std::mem::take(&mut self.made) {
            let src = open_beneath(src_root, &rel)?;
            let dst = open_beneath(self.root, &rel)?;
            self.attributes(src.as_fd(), dst.as_fd(), &stat, NEW_DIR_MODE)
                .with_context(|| format!("cannot copy {rel}"))?;
        }
        Ok(())
    }
}

impl Visitor for Copy<'_> {
    fn leaf(&mut self, entry: &Entry<'_>) -> anyhow::Result<()> {
        let start = Instant::now();
        let bytes = match entry.kind {
            Kind::File => self.copy_file(entry),
            Kind::Symlink => self.copy_symlink(entry).map(|()| 0),
            _ => {
                self.done.skipped += 1;
                return Ok(());
            }
        }
        .with_context(|| format!("cannot copy {}", entry.rel))?;
        record_in(self.log, LogOp::Create, entry.rel)?;
        self.done.tally.add(bytes, start);
        Ok(())
    }

    fn enter(&mut self, entry: &Entry<'_>, _dir: BorrowedFd<'_>) -> anyhow::Result<()> {
        let start = Instant::now();
        let create = || -> anyhow::Result<OwnedFd> {
            rustix::fs::mkdirat(self.dst(), entry.name, Mode::from_raw_mode(NEW_DIR_MODE))?;
            Ok(open_subdir(self.dst(), entry.name)?)
        };
        let dir = create().with_context(|| format!("cannot create {}", entry.rel))?;
        self.open.push(dir);
        record_in(self.log, LogOp::Create, entry.rel)?;
        self.done.tally.add(0, start);
        Ok(())
    }

    /// Directory attributes last: adding entries changes the mtime.
    fn leave(&mut self, entry: &Entry<'_>, dir: BorrowedFd<'_>) -> anyhow::Result<()> {
        let dst = self.open.pop().expect("enter pushed it");
        let mut apply = || -> anyhow::Result<()> {
            let stat = rustix::fs::fstat(dir)?;
            self.attributes(dir, dst.as_fd(), &stat, NEW_DIR_MODE)
        };
        apply().with_context(|| format!("cannot copy {}", entry.rel))
    }
}

impl Parallel for Copy<'_> {
    fn begin(&mut self, rel: &str) -> anyhow::Result<()> {
        self.open = vec![open_beneath(self.root, rel)?];
        Ok(())
    }

    fn subdir(&mut self, entry: &Entry<'_>, dir: BorrowedFd<'_>) -> anyhow::Result<()> {
        let mut make = || -> anyhow::Result<()> {
            rustix::fs::mkdirat(self.dst(), entry.name, Mode::from_raw_mode(NEW_DIR_MODE))?;
            self.made
                .push((entry.rel.to_string(), rustix::fs::fstat(dir)?));
            Ok(())
        };
        let start = Instant::now();
        make().with_context(|| format!("cannot create {}", entry.rel))?;
        record_in(self.log, LogOp::Create, entry.rel)?;
        self.done.tally.add(0, start);
        Ok(())
    }
}

impl Parallel for Find {}
impl Parallel for StatAll {}
impl Parallel for Read<'_> {}

fn stat_times(stat: &Stat) -> Timestamps {
    Timestamps {
        last_access: rustix::fs::Timespec {
            tv_sec: stat.st_atime,
            tv_nsec: stat.st_atime_nsec as _,
        },
        last_modification: rustix::fs::Timespec {
            tv_sec: stat.st_mtime,
            tv_nsec: stat.st_mtime_nsec as _,
        },
    }
}

/// Mode of a copied directory until its own is set (after its contents):
/// private while it fills.
const NEW_DIR_MODE: u32 = 0o700;

/// Copies the tree under `src` into the empty directory `dst` (created
/// with mode `dst_mode`), then gives `dst` the attributes of `src` (as
/// `rsync -a src/ dst/` does). Each entry created is recorded in `log`.
pub fn copy_tree(
    src: BorrowedFd<'_>,
    dst: BorrowedFd<'_>,
    dst_mode: u32,
    threads: usize,
    log: Option<&SyncLog>,
) -> anyhow::Result<Copied> {
    let mut copier = Copy::new(dst, log);
    if threads > 1 {
        let copiers = parallel::walk(src, (0..threads).map(|_| Copy::new(dst, log)).collect())?;
        for other in copiers {
            copier.done.tally.merge(&other.done.tally);
            copier.done.skipped += other.done.skipped;
            copier.done.xattrs_off = copier.done.xattrs_off.or(other.done.xattrs_off);
            copier.made.extend(other.made);
        }
        copier.set_made_attributes(src)?;
    } else {
        walk(src, &mut copier)?;
    }
    let stat = rustix::fs::fstat(src)?;
    copier
        .attributes(src, dst, &stat, dst_mode)
        .context("cannot copy the attributes of the top directory")?;
    Ok(copier.done)
}

/// `rm -rf parent/name`: removes the tree and the directory itself with
/// one listing per directory, as rm does; returns the entries removed (the
/// directory included). A directory still not empty after that (network
/// file systems whose listings skip entries, files they add themselves) is
/// emptied by the cleanup's repeated passes.
pub fn delete_tree(parent: BorrowedFd<'_>, name: &CStr) -> anyhow::Result<u64> {
    remove_tree(parent, name, &mut name.to_string_lossy().into_owned(), None)
}

/// The delete operation: `delete_tree` with `threads` threads, each entry
/// removed recorded in `log` (by its path from `parent`). Entries a
/// network file system added itself are removed unrecorded.
pub fn delete_logged(
    parent: BorrowedFd<'_>,
    name: &CStr,
    threads: usize,
    log: Option<&SyncLog>,
) -> anyhow::Result<u64> {
    match threads {
        0 | 1 => remove_tree(parent, name, &mut name.to_string_lossy().into_owned(), log),
        n => delete_tree_parallel(parent, name, n, log),
    }
}

/// `delete_tree` of `parent/name`, known to the log as `rel`.
fn remove_tree(
    parent: BorrowedFd<'_>,
    name: &CStr,
    rel: &mut String,
    log: Option<&SyncLog>,
) -> anyhow::Result<u64> {
    let dir = open_subdir(parent, name)
        .with_context(|| format!("cannot open {}", name.to_string_lossy()))?;
    let (stream, listing) = read_listing(dir)?;
    let fd = stream.fd()?;
    let mut removed = 0;
    for item in &listing {
        crate::interrupt::check()?;
        let rel_len = rel.len();
        // The path is only the log's: rm -rf's own loop does not build it.
        if log.is_some() {
            rel.push('/');
            rel.push_str(&item.name.to_string_lossy());
        }
        removed += match kind_of(fd, &item.name, item.file_type)? {
            Kind::Dir => remove_tree(fd, &item.name, rel, log)?,
            _ => {
                rustix::fs::unlinkat(fd, item.name.as_c_str(), AtFlags::empty())
                    .with_context(|| format!("cannot remove {}", item.name.to_string_lossy()))?;
                record_in(log, LogOp::Delete, rel)?;
                1
            }
        };
        rel.truncate(rel_len);
    }
    let removed = match rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR) {
        Err(Errno::NOTEMPTY) => {
            let mut report = CleanupReport::default();
            empty_dir(fd, &name.to_string_lossy(), None, &mut report)?;
            drop(stream);
            rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR)?;
            removed + report.removed + 1
        }
        Err(e) => {
            return Err(e).with_context(|| format!("cannot remove {}", name.to_string_lossy()));
        }
        Ok(()) => removed + 1,
    };
    record_in(log, LogOp::Delete, rel)?;
    Ok(removed)
}

/// Walks `root` with one `make()` visitor, or with `threads` of them in
/// parallel; returns the merged tally.
pub fn tally_walk<V: Parallel>(
    root: BorrowedFd<'_>,
    threads: usize,
    make: impl Fn() -> V,
    tally: impl Fn(&V) -> &Tally,
) -> anyhow::Result<Tally> {
    let visitors = match threads {
        0 | 1 => {
            let mut visitor = make();
            walk(root, &mut visitor)?;
            vec![visitor]
        }
        n => parallel::walk(root, (0..n).map(|_| make()).collect())?,
    };
    let mut total = Tally::default();
    for visitor in &visitors {
        total.merge(tally(visitor));
    }
    Ok(total)
}

/// Unlinks every non-directory; remembers directories for later.
struct Unlink<'l> {
    tally: Tally,
    /// The path the log records, rebuilt for each entry.
    logged: String,
    dirs: Vec<String>,
    log: Option<&'l SyncLog>,
    /// The tree's name, which starts the paths the log records.
    top: &'l str,
}

impl Visitor for Unlink<'_> {
    fn leaf(&mut self, entry: &Entry<'_>) -> anyhow::Result<()> {
        let start = Instant::now();
        rustix::fs::unlinkat(entry.parent, entry.name, AtFlags::empty())
            .with_context(|| format!("cannot remove {}", entry.rel))?;
        if let Some(log) = self.log {
            self.logged.clear();
            self.logged.extend([self.top, "/", entry.rel]);
            log.record(LogOp::Delete, &self.logged)?;
        }
        self.tally.add(0, start);
        Ok(())
    }
}

impl Parallel for Unlink<'_> {
    fn subdir(&mut self, entry: &Entry<'_>, _dir: BorrowedFd<'_>) -> anyhow::Result<()> {
        self.dirs.push(entry.rel.to_string());
        Ok(())
    }
}

/// `delete_tree` with `threads` threads removing files, then the
/// directories, deepest first; each entry recorded in `log`. The walk
/// already listed every directory while unlinking its files, so each
/// directory is removed without a second listing.
fn delete_tree_parallel(
    parent: BorrowedFd<'_>,
    name: &CStr,
    threads: usize,
    log: Option<&SyncLog>,
) -> anyhow::Result<u64> {
    let root = open_subdir(parent, name)
        .with_context(|| format!("cannot open {}", name.to_string_lossy()))?;
    let top = name.to_string_lossy();
    let make = || Unlink {
        tally: Tally::default(),
        logged: String::new(),
        dirs: Vec::new(),
        log,
        top: &top,
    };
    let unlinkers = parallel::walk(root.as_fd(), (0..threads).map(|_| make()).collect())?;
    let mut dirs: Vec<&str> = unlinkers
        .iter()
        .flat_map(|u| u.dirs.iter().map(String::as_str))
        .collect();
    let mut removed: u64 = unlinkers.iter().map(|u| u.tally.entries).sum();
    dirs.sort_by_key(|rel| std::cmp::Reverse(rel.matches('/').count()));
    for rel in dirs {
        crate::interrupt::check()?;
        let (up, last) = rel.rsplit_once('/').unwrap_or(("", rel));
        let holder = open_beneath(root.as_fd(), up)?;
        let last = std::ffi::CString::new(last)?;
        removed += remove_emptied_dir(holder.as_fd(), &last, format!("{top}/{rel}"), log)?;
    }
    drop(root);
    Ok(removed + remove_emptied_dir(parent, name, top.into_owned(), log)?)
}

/// Removes the directory `parent/name` (known to the log as `rel`) whose
/// contents are already gone: one rmdir, no listing. One still not empty
/// (a network file system's listing skipped entries, or it added files
/// itself) is listed and emptied as `remove_tree` does. Returns the
/// entries removed, the directory included.
fn remove_emptied_dir(
    parent: BorrowedFd<'_>,
    name: &CStr,
    mut rel: String,
    log: Option<&SyncLog>,
) -> anyhow::Result<u64> {
    match rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR) {
        Ok(()) => {
            record_in(log, LogOp::Delete, &rel)?;
            Ok(1)
        }
        Err(Errno::NOTEMPTY) => remove_tree(parent, name, &mut rel, log),
        Err(e) => Err(e).with_context(|| format!("cannot remove {rel}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_emptied_directory_goes_with_one_rmdir_and_a_full_one_is_emptied() {
        let tmp = tempfile::tempdir().unwrap();
        let flags = OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC;
        let parent = rustix::fs::open(tmp.path(), flags, Mode::empty()).unwrap();
        std::fs::create_dir(tmp.path().join("empty")).unwrap();
        let removed = remove_emptied_dir(parent.as_fd(), c"empty", "empty".into(), None);
        assert_eq!(removed.unwrap(), 1);
        // Entries the walk did not see (a file system's own, a skipped one).
        std::fs::create_dir_all(tmp.path().join("full/sub")).unwrap();
        std::fs::write(tmp.path().join("full/sub/late"), b"x").unwrap();
        let removed = remove_emptied_dir(parent.as_fd(), c"full", "full".into(), None);
        assert_eq!(removed.unwrap(), 3);
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }
}

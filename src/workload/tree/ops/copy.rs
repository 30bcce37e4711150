//! Copying a tree as `rsync -a` / `cp -a` does: directories, file data
//! (through a user-space buffer), modes, times, symlinks, owners (as root)
//! and xattrs (when both file systems support them), with one thread or
//! several.
use std::ffi::CStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::Instant;

use anyhow::Context;
use rustix::fs::{AtFlags, Mode, OFlags, Stat, Timestamps};
use rustix::io::Errno;

use super::{Pump, Tally, current_umask, open_read};
use crate::storage::cleanup::open_subdir;
use crate::workload::synclog::{LogOp, SyncLog, record_in};
use crate::workload::tree::parallel::{self, Parallel, open_beneath};
use crate::workload::tree::walk::{Kind, Visited, Visitor, walk};

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

/// Copies extended attributes through buffers allocated once per copier,
/// at its first entry (a thread of `-j 1024` that copies nothing holds
/// none).
#[derive(Default)]
struct Xattrs {
    /// The source's xattr names, each ending in a NUL.
    names: Vec<u8>,
    value: Vec<u8>,
}

/// Room for an xattr list and for one value: Linux's limit for each
/// (XATTR_LIST_MAX, XATTR_SIZE_MAX).
const XATTR_BYTES: usize = 64 << 10;

impl Xattrs {
    /// Gives `dst` the xattrs of `src`; returns why they were not copied
    /// when a side does not support them (the copy goes on without).
    fn copy(&mut self, src: BorrowedFd<'_>, dst: BorrowedFd<'_>) -> anyhow::Result<Option<String>> {
        if self.names.is_empty() {
            if keeps_no_xattrs(src) {
                return Ok(no_xattrs("source", Errno::OPNOTSUPP));
            }
            self.names = vec![0; XATTR_BYTES];
            self.value = vec![0; XATTR_BYTES];
        }
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

/// A name in each namespace a copy carries (user, security, POSIX ACLs),
/// none of which a file is expected to have.
const PROBES: [&CStr; 3] = [
    c"user.fsbench-probe",
    c"security.fsbench-probe",
    c"system.posix_acl_access",
];

/// Whether `src`'s file system refuses xattrs in every namespace a copy
/// carries, asked at each copier's first entry, before any listing:
/// smbnetfs, which refuses them all, answers every listxattr with EIO and
/// drops its connection, and calls on the mount may fail for seconds
/// after.
fn keeps_no_xattrs(src: BorrowedFd<'_>) -> bool {
    PROBES.iter().all(|name| {
        let asked = rustix::fs::fgetxattr(src, *name, &mut [0u8; 0][..]);
        asked == Err(Errno::OPNOTSUPP)
    })
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
    /// A copier into `dst_root`; `umask` is the process's (read once for
    /// all of a parallel copy's copiers).
    fn new(dst_root: BorrowedFd<'d>, log: Option<&'d SyncLog>, umask: u32) -> Self {
        Copy {
            done: Copied::default(),
            made: Vec::new(),
            root: dst_root,
            open: Vec::new(),
            pump: Pump::default(),
            umask,
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

    fn copy_file(&mut self, entry: &Visited<'_>) -> anyhow::Result<u64> {
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

    fn copy_symlink(&mut self, entry: &Visited<'_>) -> anyhow::Result<()> {
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
    fn leaf(&mut self, entry: &Visited<'_>) -> anyhow::Result<()> {
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

    fn enter(&mut self, entry: &Visited<'_>, _dir: BorrowedFd<'_>) -> anyhow::Result<()> {
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
    fn leave(&mut self, entry: &Visited<'_>, dir: BorrowedFd<'_>) -> anyhow::Result<()> {
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

    fn subdir(&mut self, entry: &Visited<'_>, dir: BorrowedFd<'_>) -> anyhow::Result<()> {
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
    let umask = current_umask();
    let mut copier = Copy::new(dst, log, umask);
    if threads > 1 {
        let copiers = (0..threads).map(|_| Copy::new(dst, log, umask)).collect();
        let copiers = parallel::walk(src, copiers)?;
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

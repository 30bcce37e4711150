//! The `untar` operation: an uncompressed tar of the dataset (built before
//! the clock starts, GNU format as `tar cf` writes it) extracted like
//! `tar xf`: directories, files with their modes and mtimes, symlinks,
//! directory mtimes last. Every path is resolved beneath the extraction
//! directory without following symlinks (`openat2` RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS), so no archive entry can write outside it.
use std::borrow::Cow;
use std::ffi::CString;
use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::Instant;

use anyhow::Context;
use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags};
use tar::{EntryType, Header};

use super::dataset::{Description, times};
use super::ops::Tally;
use super::walk::{Kind, Visited, Visitor, walk};
use crate::workload::synclog::{LogOp, SyncLog, record_in};

/// Bytes a tar of `description` takes at most: a header per entry, a GNU
/// long-name record for long paths, padding, and the end blocks.
pub fn tar_bytes(description: &Description) -> u64 {
    description.bytes + description.entries * 2048 + 10240
}

/// Appends each entry of a walked tree to the archive.
struct Archiver {
    builder: tar::Builder<BufWriter<File>>,
}

impl Archiver {
    fn header(&self, kind: EntryType, stat: &rustix::fs::Stat, size: u64) -> Header {
        let mut header = Header::new_gnu();
        header.set_entry_type(kind);
        header.set_mode(stat.st_mode & 0o7777);
        header.set_uid(stat.st_uid.into());
        header.set_gid(stat.st_gid.into());
        header.set_mtime(stat.st_mtime.max(0) as u64);
        header.set_size(size);
        header
    }
}

impl Visitor for Archiver {
    fn leaf(&mut self, entry: &Visited<'_>) -> anyhow::Result<()> {
        let stat = rustix::fs::statat(entry.parent, entry.name, AtFlags::SYMLINK_NOFOLLOW)?;
        match entry.kind {
            Kind::File => {
                let file = rustix::fs::openat(
                    entry.parent,
                    entry.name,
                    OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                )?;
                let mut header = self.header(EntryType::Regular, &stat, stat.st_size as u64);
                self.builder
                    .append_data(&mut header, entry.rel, File::from(file))?;
            }
            Kind::Symlink => {
                let target = rustix::fs::readlinkat(entry.parent, entry.name, Vec::new())?;
                let target = String::from_utf8_lossy(target.as_bytes()).into_owned();
                let mut header = self.header(EntryType::Symlink, &stat, 0);
                self.builder.append_link(&mut header, entry.rel, target)?;
            }
            _ => {}
        }
        Ok(())
    }

    fn enter(&mut self, entry: &Visited<'_>, dir: BorrowedFd<'_>) -> anyhow::Result<()> {
        let stat = rustix::fs::fstat(dir)?;
        let mut header = self.header(EntryType::Directory, &stat, 0);
        let path = format!("{}/", entry.rel);
        self.builder
            .append_data(&mut header, path, std::io::empty())?;
        Ok(())
    }
}

/// Writes a tar of everything under `src` into `out`.
pub fn create(src: BorrowedFd<'_>, out: OwnedFd) -> anyhow::Result<()> {
    let mut archiver = Archiver {
        builder: tar::Builder::new(BufWriter::with_capacity(1 << 20, File::from(out))),
    };
    walk(src, &mut archiver)?;
    let mut writer = archiver.builder.into_inner()?;
    std::io::Write::flush(&mut writer)?;
    Ok(())
}

/// Data is moved in blocks this large (reads this size skip the reader's
/// own buffer).
const BUF_BYTES: usize = 256 << 10;

/// Extracts the archive `tar` into the empty directory `root`; each entry
/// created is recorded in `log`.
pub fn extract(tar: OwnedFd, root: BorrowedFd<'_>, log: Option<&SyncLog>) -> anyhow::Result<Tally> {
    let mut archive = tar::Archive::new(BufReader::with_capacity(BUF_BYTES, File::from(tar)));
    let mut extractor = Extractor {
        root,
        parent: None,
        buf: vec![0; BUF_BYTES],
        dirs: Vec::new(),
        umask: super::ops::current_umask(),
        tally: Tally::default(),
    };
    // Each entry's path is copied into this one buffer (the entry itself
    // is borrowed mutably to read its data).
    let mut path = Vec::new();
    for entry in archive.entries().context("cannot read the tar")? {
        crate::interrupt::check()?;
        let mut entry = entry.context("cannot read the tar")?;
        path.clear();
        path.extend_from_slice(&entry.path_bytes());
        let shown = String::from_utf8_lossy(&path);
        let start = Instant::now();
        let bytes = extractor
            .entry(&path, &mut entry)
            .with_context(|| format!("cannot extract {shown}"))?;
        record_in(log, LogOp::Create, &shown)?;
        extractor.tally.add(bytes, start);
    }
    extractor.set_dir_times()?;
    Ok(extractor.tally)
}

struct Extractor<'r> {
    root: BorrowedFd<'r>,
    /// The last parent directory opened, reused while entries stay in it.
    parent: Option<(Vec<u8>, OwnedFd)>,
    buf: Vec<u8>,
    /// Directories and their mtimes, set once everything is in place.
    dirs: Vec<(Vec<u8>, i64)>,
    umask: u32,
    tally: Tally,
}

impl Extractor<'_> {
    fn entry(
        &mut self,
        path: &[u8],
        entry: &mut tar::Entry<'_, impl std::io::Read>,
    ) -> anyhow::Result<u64> {
        let (parent, name) = split_checked(path)?;
        let header = entry.header();
        let kind = header.entry_type();
        let mode = header.mode()? & 0o7777;
        let mtime = header.mtime()? as i64;
        let link = header.link_name_bytes().map(Cow::into_owned);
        let dir = self.open_parent(parent)?;
        let name = CString::new(name)?;
        match kind {
            EntryType::Directory => {
                match rustix::fs::mkdirat(dir, &name, Mode::from_raw_mode(mode)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(e.into()),
                }
                self.dirs.push((path.to_vec(), mtime));
                Ok(0)
            }
            EntryType::Regular | EntryType::Continuous => {
                let flags = OFlags::WRONLY
                    | OFlags::CREATE
                    | OFlags::EXCL
                    | OFlags::NOFOLLOW
                    | OFlags::CLOEXEC;
                let file = rustix::fs::openat(dir, &name, flags, Mode::from_raw_mode(mode))?;
                let bytes = self.write_data(entry, file.as_fd())?;
                if mode & self.umask != 0 || mode & 0o7000 != 0 {
                    rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))?;
                }
                rustix::fs::futimens(&file, &times(mtime))?;
                Ok(bytes)
            }
            EntryType::Symlink => {
                let target = link.context("symlink without a target")?;
                rustix::fs::symlinkat(CString::new(target)?.as_c_str(), dir, &name)?;
                rustix::fs::utimensat(dir, &name, &times(mtime), AtFlags::SYMLINK_NOFOLLOW)?;
                Ok(0)
            }
            other => anyhow::bail!("entry type {other:?} is not supported"),
        }
    }

    fn write_data(
        &mut self,
        entry: &mut impl std::io::Read,
        file: BorrowedFd<'_>,
    ) -> anyhow::Result<u64> {
        let mut total = 0;
        loop {
            let n = entry.read(&mut self.buf).context("cannot read the tar")?;
            if n == 0 {
                return Ok(total);
            }
            crate::io::write_all(file, &self.buf[..n])?;
            total += n as u64;
        }
    }

    /// The directory `parent` (relative to the root), beneath the root and
    /// through no symlink.
    fn open_parent(&mut self, parent: &[u8]) -> anyhow::Result<BorrowedFd<'_>> {
        if parent.is_empty() {
            return Ok(self.root);
        }
        if self.parent.as_ref().is_none_or(|(p, _)| p != parent) {
            let fd = open_beneath(self.root, parent)?;
            self.parent = Some((parent.to_vec(), fd));
        }
        Ok(self.parent.as_ref().expect("just set").1.as_fd())
    }

    fn set_dir_times(&mut self) -> anyhow::Result<()> {
        for (path, mtime) in self.dirs.iter().rev() {
            let set = || -> anyhow::Result<()> {
                let dir = open_beneath(self.root, path)?;
                rustix::fs::futimens(&dir, &times(*mtime))?;
                Ok(())
            };
            set().with_context(|| {
                format!("cannot set the time of {}", String::from_utf8_lossy(path))
            })?;
        }
        Ok(())
    }
}

fn open_beneath(root: BorrowedFd<'_>, path: &[u8]) -> anyhow::Result<OwnedFd> {
    Ok(rustix::fs::openat2(
        root,
        path,
        OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS,
    )?)
}

/// Splits `a/b/c` (or `a/b/c/`) into (`a/b`, `c`); refuses absolute paths,
/// `..` and empty names.
fn split_checked(path: &[u8]) -> anyhow::Result<(&[u8], &[u8])> {
    let path = path.strip_suffix(b"/").unwrap_or(path);
    let bad = path.is_empty()
        || path.starts_with(b"/")
        || path
            .split(|&b| b == b'/')
            .any(|c| c.is_empty() || c == b"..");
    if bad {
        anyhow::bail!("unsafe path in the archive");
    }
    Ok(match path.iter().rposition(|&b| b == b'/') {
        Some(i) => (&path[..i], &path[i + 1..]),
        None => (&[][..], path),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_paths_and_refuses_escapes() {
        assert_eq!(split_checked(b"a/b/c").unwrap(), (&b"a/b"[..], &b"c"[..]));
        assert_eq!(split_checked(b"a/").unwrap(), (&b""[..], &b"a"[..]));
        for bad in [&b"/etc/passwd"[..], b"a/../../x", b"..", b"", b"a//b"] {
            assert!(
                split_checked(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}

//! Walking a tree through directory fds (`openat` with O_NOFOLLOW), never
//! following a symlink, reading each directory's complete listing before
//! visiting it (network file systems skip entries of a directory that
//! changes under an open stream).
use std::ffi::CStr;
use std::os::fd::{BorrowedFd, OwnedFd};

use anyhow::Context;
use rustix::fs::{AtFlags, Dir, FileType};

use crate::storage::cleanup::{self, list_entries, open_subdir};

/// What an entry is, from the directory listing (or a stat when the file
/// system does not say).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Dir,
    File,
    Symlink,
    Other,
}

/// One entry as the visitor sees it.
pub struct Visited<'a> {
    /// The directory that holds it.
    pub parent: BorrowedFd<'a>,
    pub name: &'a CStr,
    pub kind: Kind,
    /// Its path relative to the walked root, for messages (`a/b/c`).
    pub rel: &'a str,
}

pub trait Visitor {
    /// A file, symlink or special file.
    fn leaf(&mut self, entry: &Visited<'_>) -> anyhow::Result<()>;
    /// A directory, opened as `dir`, before its contents.
    fn enter(&mut self, _entry: &Visited<'_>, _dir: BorrowedFd<'_>) -> anyhow::Result<()> {
        Ok(())
    }
    /// The same directory after its contents.
    fn leave(&mut self, _entry: &Visited<'_>, _dir: BorrowedFd<'_>) -> anyhow::Result<()> {
        Ok(())
    }
}

/// Visits everything under `root` (not `root` itself), depth first.
pub fn walk(root: BorrowedFd<'_>, visitor: &mut impl Visitor) -> anyhow::Result<()> {
    let listing = list_entries(root).context("cannot list .")?;
    walk_dir(root, &listing, &mut String::new(), visitor)
}

/// The complete listing of an opened directory (without `.` and `..`),
/// read through the fd itself (no second open), and the stream whose fd
/// serves the `*at` calls on its entries.
pub fn read_listing(dir: OwnedFd) -> rustix::io::Result<(Dir, Vec<cleanup::Listed>)> {
    let mut stream = Dir::new(dir)?;
    let entries = cleanup::read_entries(&mut stream)?;
    Ok((stream, entries))
}

fn walk_dir(
    dir: BorrowedFd<'_>,
    listing: &[cleanup::Listed],
    rel: &mut String,
    visitor: &mut impl Visitor,
) -> anyhow::Result<()> {
    for item in listing {
        crate::interrupt::check()?;
        let parent_len = rel.len();
        if !rel.is_empty() {
            rel.push('/');
        }
        rel.push_str(&item.name.to_string_lossy());
        let kind = kind_of(dir, &item.name, item.file_type)
            .with_context(|| format!("cannot stat {rel}"))?;
        let entry = Visited {
            parent: dir,
            name: &item.name,
            kind,
            rel,
        };
        if kind == Kind::Dir {
            let sub = open_subdir(dir, &item.name).with_context(|| format!("cannot open {rel}"))?;
            let (stream, inner) =
                read_listing(sub).with_context(|| format!("cannot list {rel}"))?;
            let sub = stream.fd()?;
            visitor.enter(&entry, sub)?;
            walk_dir(sub, &inner, &mut rel.clone(), visitor)?;
            visitor.leave(&entry, sub)?;
        } else {
            visitor.leaf(&entry)?;
        }
        rel.truncate(parent_len);
    }
    Ok(())
}

pub fn kind_of(dir: BorrowedFd<'_>, name: &CStr, listed: FileType) -> rustix::io::Result<Kind> {
    let file_type = match listed {
        FileType::Unknown => {
            let stat = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
            FileType::from_raw_mode(stat.st_mode)
        }
        known => known,
    };
    Ok(match file_type {
        FileType::Directory => Kind::Dir,
        FileType::RegularFile => Kind::File,
        FileType::Symlink => Kind::Symlink,
        _ => Kind::Other,
    })
}

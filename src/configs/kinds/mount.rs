//! A mount of an existing source (an NFS export, a device with other
//! options, a tmpfs): `source = "..."`.
use std::collections::BTreeMap;
use std::path::Path;

use super::{Kind, Make, Reader};
use crate::configs::build::{Fs, Site};
use crate::configs::place::Place;
use crate::configs::{Config, Entry, substitute};
use crate::storage::env::mounts::read_mountinfo;

pub(super) const READER: Reader = Reader {
    key: "source",
    what: "one to mount",
    offered: true,
    claims: |entry| entry.source.is_some(),
    read,
};

/// A configuration that mounts `source`.
pub(super) struct Mount<'a> {
    pub(super) source: &'a str,
}

fn read(entry: &Entry, name: &str, parameters: &BTreeMap<String, String>) -> anyhow::Result<Make> {
    let source = entry.source.as_deref().unwrap_or_default();
    let source = substitute(source, parameters, "source", &[])?;
    if source.is_empty() || source.contains(char::is_whitespace) {
        anyhow::bail!("{name}: source {source:?} is empty or holds a space");
    }
    if source.starts_with('-') {
        anyhow::bail!(
            "{name}: source {source:?} starts with '-': mount would read it as an option"
        );
    }
    Ok(Make::Mount { source })
}

impl Kind for Mount<'_> {
    /// Its source (two mounts of one block device share its superblock
    /// and options; so may two of one NFS export), but a tmpfs's.
    fn shares(&self, config: &Config, _wipe_default: Option<&Path>) -> Option<String> {
        match config.fs_type.as_deref() {
            Some("tmpfs" | "ramfs") => None,
            _ => Some(self.source.to_string()),
        }
    }

    /// A mount of a block device that is mounted already, or of a file.
    fn check_place(&self, config: &Config, _place: &Place) -> anyhow::Result<()> {
        refuse_mounted_source(self.source).map_err(|e| e.context(config.name.clone()))
    }

    /// The mount fsbench makes is on rank 0's host alone.
    fn one_host_only(&self) -> Option<&'static str> {
        Some("is a mount fsbench makes on one host (mount it on every host and use setup commands and path)")
    }

    fn build(&self, fs: &mut Fs, config: &Config, site: &Site) -> anyhow::Result<()> {
        refuse_mounted_source(self.source)?;
        fs.record.source = self.source.to_string();
        fs.mount(config, self.source, site)
    }
}

/// Refuses a `source` fsbench must not mount: a block device that is
/// mounted already (a second mount shares its superblock, so the
/// configuration's options would not apply, and the user's mount would be
/// measured), and a regular file (mount(8) would put a loop device of its
/// own on it, one fsbench did not make and would not release).
fn refuse_mounted_source(source: &str) -> anyhow::Result<()> {
    let Ok(canonical) = std::fs::canonicalize(source) else {
        return Ok(());
    };
    let Ok(kind) = std::fs::metadata(&canonical).map(|m| m.file_type()) else {
        return Ok(());
    };
    if kind.is_file() {
        return crate::error::usage(format!(
            "source {source} is a regular file: mount would attach a loop device fsbench does not manage; give mkfs (fsbench makes and removes its image) or attach it with losetup and give the device"
        ));
    }
    if !std::os::unix::fs::FileTypeExt::is_block_device(&kind) {
        return Ok(());
    }
    let mounted = read_mountinfo()
        .into_iter()
        .find(|m| std::fs::canonicalize(&m.source).is_ok_and(|s| s == canonical));
    match mounted {
        Some(m) => crate::error::usage(format!(
            "source {source} is mounted on {}: its options would not apply; unmount it first",
            m.mount_point.display()
        )),
        None => Ok(()),
    }
}

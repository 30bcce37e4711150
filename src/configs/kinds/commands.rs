//! A configuration its setup commands make (a ZFS pool, say): `setup`
//! with neither mkfs nor source, and an optional `path` (default `{dir}`,
//! the empty directory fsbench makes for it).
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Kind, Make, Reader};
use crate::configs::build::Fs;
use crate::configs::{Config, DIR, Entry, substitute};

pub(super) const READER: Reader = Reader {
    key: "setup",
    what: "commands that make it",
    offered: true,
    claims: |entry| entry.mkfs.is_none() && entry.source.is_none() && !entry.setup.is_empty(),
    read,
};

/// A configuration whose setup commands make `path`.
pub(super) struct Commands<'a> {
    pub(super) path: &'a str,
}

fn read(entry: &Entry, name: &str, parameters: &BTreeMap<String, String>) -> anyhow::Result<Make> {
    let path = entry.path.as_deref().unwrap_or(DIR);
    let path = substitute(path, parameters, "path", &[DIR])?;
    if !path.starts_with('/') && !path.starts_with(DIR) {
        anyhow::bail!("{name}: path {path:?} is not absolute");
    }
    Ok(Make::Commands { path })
}

impl Kind for Commands<'_> {
    /// The resources its setup commands make (a pool of a given name).
    fn shares(&self, _config: &Config, _wipe_default: Option<&Path>) -> Option<String> {
        Some("the setup commands' resources".into())
    }

    /// `{dir}` is a directory fsbench makes on rank 0's host; a path the
    /// file names is where every host must see what the setup made.
    fn one_host_only(&self) -> Option<&'static str> {
        self.path
            .contains(DIR)
            .then_some("has the path {dir}, a directory on one host: give path = the directory where every host sees it")
    }

    /// No type or options: fsbench makes no mount of it.
    fn check(&self, name: &str, fs_type: Option<&str>, options: &str) -> anyhow::Result<()> {
        if fs_type.is_some() || !options.is_empty() {
            anyhow::bail!(
                "{name}: type and options are for a mount fsbench makes; its setup commands make this one"
            );
        }
        Ok(())
    }

    /// The target is the path its setup commands were to make.
    fn after_setup(&self, fs: &mut Fs) -> anyhow::Result<()> {
        fs.target = PathBuf::from(fs.fill(self.path));
        if !fs.target.is_dir() {
            anyhow::bail!(
                "its setup commands did not make {}, its path",
                fs.target.display()
            );
        }
        Ok(())
    }

    fn can_remount(&self) -> bool {
        false
    }
}

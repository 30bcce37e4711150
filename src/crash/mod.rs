//! Simulated power cuts (`fsbench crash --configs FILE`): each
//! configuration built on a recorded disk, a workload that knows what it
//! was promised run on it, then the disk cut off at hundreds of points
//! and every crash state checked as a rebooted machine would — mount,
//! fsck, the files the workload was told were durable.
//!
//! - `recorder`: the FUSE file system that records the disk's writes and
//!   flushes and serves crash states;
//! - `blocklog`: its append-only log on disk;
//! - `extents`: a disk as ranges of the base image, the log and zeros;
//! - `oracle`: the workload and what each state must hold;
//! - `cuts`: the disk models and the states they give;
//! - `check`: one state mounted, checked and verified;
//! - `disk`: one configuration recorded and judged, torn down on every
//!   way out.
pub mod check;
pub mod cuts;
mod disk;
pub mod oracle;

use std::path::PathBuf;

use anyhow::Context;

use crate::configs::Config;
use crate::configs::place::Place;
use crate::console::stderr_line;
use crate::result::durability::{Durability, Model};

pub use disk::judge;

/// A configuration fsbench can record: made by mkfs on an image of its
/// own, of a file system it knows a read-only check for.
pub struct Recordable<'a> {
    pub config: &'a Config,
    /// Its mkfs words, `{dev}` among them.
    words: Vec<String>,
    fs: check::FsCheck,
}

/// `config` as one fsbench can record at `place`; the refusal names it.
pub fn recordable<'a>(config: &'a Config, place: &Place) -> anyhow::Result<Recordable<'a>> {
    let words = config.mkfs_words();
    if words.is_empty() || !config.on_image(place) {
        return crate::error::usage(format!(
            "{}: only a configuration fsbench makes with mkfs on an image can be cut off (not a source, a device or setup commands)",
            config.name
        ));
    }
    let Some(fs) = check::fs_check(&words[0]) else {
        return crate::error::usage(format!(
            "{}: fsbench knows no read-only check for what {} makes: it cannot judge it after a crash (ext2/3/4, xfs and btrfs it can)",
            config.name, words[0]
        ));
    };
    if let Some(missing) = fs
        .fsck
        .first()
        .filter(|program| !crate::shell::on_path(program))
    {
        return crate::error::usage(format!(
            "{}: its crash states are checked with {missing}, which is not on PATH: install it",
            config.name
        ));
    }
    Ok(Recordable { config, words, fs })
}

/// Every configuration as one fsbench can record at `place`, or the
/// first refusal.
pub fn recordables<'a>(
    configs: &'a [Config],
    place: &Place,
) -> anyhow::Result<Vec<Recordable<'a>>> {
    configs
        .iter()
        .map(|config| recordable(config, place))
        .collect()
}

/// Each configuration recorded and cut off in turn (`judge`), said on
/// stderr as it starts and given to `judged` as it ends, so that what
/// finished before a configuration failed is kept; the error names the
/// configuration that failed.
pub fn judge_all<'r, 'a: 'r>(
    recordables: impl IntoIterator<Item = &'r Recordable<'a>>,
    place: &Place,
    options: &Options,
    run_id: &str,
    mut judged: impl FnMut(&'a Config, Durability),
) -> anyhow::Result<()> {
    for recordable in recordables {
        let config = recordable.config;
        stderr_line!(
            "fsbench: {}: recording the crash workload, then {} cuts ({} model)",
            config.name,
            options.cuts,
            options.model.name()
        );
        let durability =
            judge(recordable, place, options, run_id).with_context(|| config.name.clone())?;
        judged(config, durability);
    }
    Ok(())
}

/// The workload's directory in the recorded file system.
pub const WORK_DIR: &str = "fsbench-crash";

/// How configurations are cut off and checked.
#[derive(Debug, Clone)]
pub struct Options {
    /// Each recorded disk's size.
    pub image_bytes: u64,
    /// At most this many crash states per configuration.
    pub cuts: usize,
    pub seed: u64,
    pub model: Model,
    /// The disk's volatile cache (cache and lying models).
    pub cache_bytes: u64,
    /// The disk's atomic write unit: a longer write may be torn between
    /// sectors (cache model).
    pub sector_bytes: u64,
    /// About how much the workload writes.
    pub workload_bytes: u64,
    /// Where to keep one reproducer per kind of failure.
    pub keep_failures: Option<PathBuf>,
    /// The syncs the workload leaves out (acknowledging all the same).
    pub unsynced: oracle::Unsynced,
}

impl Options {
    /// Where the recorded disks go: images of `image_bytes` in
    /// `work_dir`'s scratch directory.
    pub fn place(&self, work_dir: PathBuf) -> Place {
        Place {
            work_dir,
            images: true,
            image_size: self.image_bytes,
            direct_io: true,
            wipe: Vec::new(),
        }
    }
}

//! Where configurations are built (`Place`: the work directory, the
//! images' size and I/O, the devices --wipe named) and what it refuses
//! before anything is built.
use std::path::{Path, PathBuf};

use super::Config;

/// Where configurations are built: the work directory their scratch
/// directory goes in, the images' size, the devices --wipe named.
#[derive(Debug, Clone)]
pub struct Place {
    pub work_dir: PathBuf,
    /// Whether --images gave the work directory (image configurations
    /// need the user to choose the disk they go on).
    pub images: bool,
    pub image_size: u64,
    /// Whether the images' loop devices use direct I/O (`losetup
    /// --direct-io=on`): the host's page cache then holds nothing of an
    /// image, so what a configuration reads and writes is the disk's.
    pub direct_io: bool,
    /// The devices named with --wipe (checked when named and again before
    /// each mkfs).
    pub wipe: Vec<PathBuf>,
}

impl Place {
    /// The work directory `--images` names (/var/tmp without it), as a
    /// canonical path; a usage error when it is not a directory.
    pub fn work_dir(images: Option<&Path>) -> anyhow::Result<PathBuf> {
        let given = images.unwrap_or(Path::new("/var/tmp"));
        match std::fs::canonicalize(given) {
            Ok(dir) if dir.is_dir() => Ok(dir),
            Ok(_) => crate::error::usage(format!("--images {}: not a directory", given.display())),
            Err(e) => crate::error::usage(format!("--images {}: {e}", given.display())),
        }
    }

    /// Refuses, before anything is built, a configuration this place
    /// cannot make (each kind says what: mkfs on a device --wipe did not
    /// name, mkfs with neither images nor one --wipe device to go on, a
    /// mount of a block device that is mounted already), or whose options
    /// the kernel refuses for its type (`options::check`): a typo is found
    /// in seconds, not after the others were measured.
    pub fn check(&self, configs: &[Config]) -> anyhow::Result<()> {
        configs.iter().try_for_each(|config| {
            config.make.kind().check_place(config, self)?;
            super::options::check(config)
        })
    }

    /// The device mkfs runs on when the configuration names none and
    /// there are no images: the one --wipe device.
    pub fn wipe_default(&self) -> Option<&Path> {
        match (self.images, self.wipe.as_slice()) {
            (false, [one]) => Some(one),
            _ => None,
        }
    }
}

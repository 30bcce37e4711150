//! Where configurations are built (`Place`: the work directory, the
//! images' size and I/O, the devices --wipe named) and what it refuses
//! before anything is built.
use std::path::{Path, PathBuf};

use super::{Config, Make};
use crate::size::format_bytes;
use crate::storage::env::mounts::read_mountinfo;

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
    /// Refuses, before anything is built, a configuration this place
    /// cannot make: mkfs on a device --wipe did not name, mkfs with
    /// neither images nor one --wipe device to go on, a mount of a block
    /// device that is mounted already.
    pub fn check(&self, configs: &[Config]) -> anyhow::Result<()> {
        for config in configs {
            let name = &config.name;
            match &config.make {
                Make::Mkfs {
                    device: Some(device),
                    ..
                } => {
                    let named = std::fs::canonicalize(device).unwrap_or_else(|_| device.clone());
                    if !self.wipe.contains(&named) {
                        return crate::error::usage(format!(
                            "{name}: mkfs on {} needs --wipe {} on the command line (everything on it is lost)",
                            device.display(),
                            device.display()
                        ));
                    }
                }
                Make::Mkfs { device: None, .. }
                    if !self.images && self.wipe_default().is_none() =>
                {
                    return crate::error::usage(format!(
                        "{name}: give --images DIR (a directory on the disk under test) for its image, or one --wipe DEVICE"
                    ));
                }
                Make::Mkfs { words, .. }
                    if config.on_image(self) && self.image_size < config.minimum_image_bytes() =>
                {
                    return crate::error::usage(format!(
                        "{name}: --image-size {} is too small for {}: at least {}",
                        format_bytes(self.image_size),
                        words[0],
                        format_bytes(config.minimum_image_bytes())
                    ));
                }
                Make::Mount { source } => {
                    refuse_mounted_source(source).map_err(|e| e.context(name.clone()))?;
                }
                _ => {}
            }
        }
        Ok(())
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

/// Refuses a `source` fsbench must not mount: a block device that is
/// mounted already (a second mount shares its superblock, so the
/// configuration's options would not apply, and the user's mount would be
/// measured), and a regular file (mount(8) would put a loop device of its
/// own on it, one fsbench did not make and would not release).
pub(super) fn refuse_mounted_source(source: &str) -> anyhow::Result<()> {
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

//! What a result records of a target fsbench built (`fsbench run
//! --configs`); `configs` builds it.
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What the result records of a target fsbench built.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Built {
    /// The mkfs command line as written in the configuration (after the
    /// sweep's substitution, `{dev}` still in it); empty for a mount of an
    /// existing source or a configuration its setup commands make.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mkfs: String,
    /// What mkfs ran on: the image file fsbench made, or the device named
    /// with --wipe.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub device: String,
    /// The existing source mounted (`server:/export`, `/dev/sdb1`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
    /// The mount options (empty: the file system's defaults).
    #[serde(default)]
    pub options: String,
    /// Whether its image was a recorded disk: fsbench's FUSE recorder
    /// between the loop device and the image, every write and flush
    /// appended to a block log (`recorded = true`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recorded: bool,
    /// For a configuration on an image: whether its loop device did
    /// direct I/O (the host's page cache held nothing of the image), as
    /// the kernel said after `losetup`; None for a device or a mount.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_direct_io: Option<bool>,
    /// The file system type given to mount, if the configuration names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs_type: Option<String>,
    /// The sweep's parameters of this configuration.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: BTreeMap<String, String>,
    /// Every command run to build it and take it down, in order, exactly
    /// as run (of the last build, with --fresh).
    #[serde(default)]
    pub commands: Vec<String>,
    /// What mkfs printed (stdout then stderr).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mkfs_output: String,
    /// What the file system says of the parameters mkfs gave it, after
    /// the command that asked (`dumpe2fs -h`, `xfs_info`, `btrfs
    /// filesystem show`); empty where fsbench knows no such command or it
    /// failed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub fs_info: String,
    /// What it shares with other configurations (a device, a source, the
    /// setup commands' resources), so that it was measured one after
    /// another with them, not interleaved; None: it had its own image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shares: Option<String>,
    /// How many times it was built: 1, or one per repetition with --fresh.
    #[serde(default = "one")]
    pub builds: u32,
    /// The time spent building it and taking it down, over every build.
    #[serde(default)]
    pub build_seconds: f64,
    /// The risks its configuration declares (`declared_risks`): each
    /// code with the setting the file says makes it so. What a server
    /// does is not seen from the client's mount, so the user states it
    /// and every report says it was declared.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub declared_risks: BTreeMap<String, String>,
}

fn one() -> u32 {
    1
}

//! What a result says of where it was measured: the host, each target's
//! file system, its devices and network link, and the risks its
//! configuration takes. The types only; `storage::env` and
//! `storage::devices` probe them.
use serde::{Deserialize, Serialize};

/// The machine a result was measured on.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostEnv {
    pub hostname: String,
    /// uname release, e.g. "6.1.0-18-amd64".
    pub kernel: String,
    /// uname version string.
    pub kernel_version: String,
    /// PRETTY_NAME from /etc/os-release.
    pub os: Option<String>,
    /// uname machine.
    pub arch: String,
    pub cpu_model: Option<String>,
    /// Logical CPUs online; 0 if unknown.
    pub cpu_count: usize,
    /// MemTotal; 0 if unknown.
    pub ram_bytes: u64,
}

/// The file system and device a benchmarked path lives on.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TargetEnv {
    /// Canonical path probed.
    pub path: String,
    pub mount_point: String,
    /// e.g. "ext4", "tmpfs", "nfs4", "fuse.sshfs".
    pub fs_type: String,
    /// Per-mount options and super options merged, comma separated, no
    /// duplicates, e.g. "rw,relatime,data=ordered".
    pub mount_options: String,
    /// Mount source, e.g. "/dev/loop3", "tmpfs", "server:/export".
    pub source: String,
    /// For /dev/loopN: /sys/block/loopN/loop/backing_file.
    pub loop_backing_file: Option<String>,
    /// Kernel name of the whole disk holding the fs, e.g. "vda", "nvme0n1",
    /// "md0", "loop3" (a partition is resolved to its parent disk).
    pub block_device: Option<String>,
    /// /sys/block/<disk>/queue/rotational.
    pub rotational: Option<bool>,
    /// The active I/O scheduler, e.g. "mq-deadline" or "none".
    pub scheduler: Option<String>,
    /// queue/write_cache: "write back" or "write through".
    pub write_cache: Option<String>,
    /// /sys/block/mdX/md/level, e.g. "raid1"; for device-mapper devices
    /// stacked on md, that md's level.
    pub raid_level: Option<String>,
    /// statvfs f_blocks * f_frsize.
    pub total_bytes: u64,
    /// statvfs f_bavail * f_frsize (available to unprivileged users).
    pub free_bytes: u64,
    pub total_inodes: u64,
    pub free_inodes: u64,
    /// What this configuration can lose on a crash (see `risk`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub risks: Vec<Risk>,
    /// What the disk under the target is: model, size, sector sizes, the
    /// partition's offset (None: no block device, or a result from before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_facts: Option<DeviceFacts>,
    /// The block devices under the target (`storage::devices`): those
    /// whose counters count its I/O, then those beneath them. Empty for
    /// "no device" (tmpfs) and in results made before they were resolved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<BlockDev>,
    /// A network file system's counters and link (`storage::devices`);
    /// None for a local one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkMount>,
}

/// Kernel name prefixes of block devices that are not a physical disk:
/// loop, virtio-blk, Xen, network block, compressed RAM, RAM disks, Ceph
/// RBD. What they report about themselves (rotational, cache mode) is
/// not the medium's: a loop device says rotational whatever lies beneath.
const VIRTUAL_DEVICES: [&str; 7] = ["loop", "vd", "xvd", "nbd", "zram", "ram", "rbd"];

impl TargetEnv {
    /// The target's disk when it is a virtual or loop device (see
    /// [`VIRTUAL_DEVICES`]); None for a physical or unknown one.
    pub fn virtual_device(&self) -> Option<&str> {
        let device = self.block_device.as_deref()?;
        let is_virtual = VIRTUAL_DEVICES.iter().any(|p| device.starts_with(p));
        is_virtual.then_some(device)
    }
}

/// What the disk under a target is, from sysfs: enough to see a
/// misaligned partition (a 4 KiB-sector disk whose partition does not
/// start on a 4 KiB boundary turns every write into a read-modify-write).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceFacts {
    /// device/model (SCSI/ATA/NVMe), trimmed; None for virtual devices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// device/firmware_rev (NVMe) or device/rev (SCSI/ATA), trimmed: a
    /// firmware update can change what the disk does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware: Option<String>,
    /// The whole disk's size (`size` × 512).
    pub size_bytes: u64,
    /// queue/logical_block_size and queue/physical_block_size.
    pub logical_sector: u64,
    pub physical_sector: u64,
    /// Where the partition starts on its disk (`start` × 512); None when
    /// the file system is on the whole disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_offset: Option<u64>,
    /// queue/nr_requests: how many requests the block layer queues for
    /// the disk (what a deep io job's requests wait in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<u64>,
}

impl DeviceFacts {
    /// A partition that does not start on a physical sector boundary.
    pub fn misaligned(&self) -> bool {
        self.partition_offset
            .is_some_and(|offset| self.physical_sector > 0 && offset % self.physical_sector != 0)
    }

    /// One line: "QEMU HARDDISK, 256.0 GiB, sectors 512/4096 B, partition at
    /// 1.0 MiB (aligned)".
    pub fn described(&self) -> String {
        use crate::size::format_bytes;
        let mut parts: Vec<String> = self.model.iter().cloned().collect();
        parts.extend(self.firmware.iter().map(|f| format!("firmware {f}")));
        parts.push(format_bytes(self.size_bytes));
        parts.push(format!(
            "sectors {}/{} B (logical/physical)",
            self.logical_sector, self.physical_sector
        ));
        if let Some(depth) = self.queue_depth {
            parts.push(format!("queue depth {depth}"));
        }
        if let Some(offset) = self.partition_offset {
            let alignment = match self.misaligned() {
                true => format!("MISALIGNED to its {} B sectors", self.physical_sector),
                false => "aligned".to_string(),
            };
            parts.push(format!("partition at {offset} B ({alignment})"));
        }
        parts.join(", ")
    }
}

/// One block device, as /proc/diskstats names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockDev {
    /// Kernel name: "loop3", "vda1", "dm-0", "md127".
    pub name: String,
    /// major:minor, the key of its diskstats line.
    pub dev: (u32, u32),
    /// Its counters are the target's (summed over every counted device);
    /// false for a device beneath one (a member, a loop's backing disk).
    pub counted: bool,
    /// The bottom of a chain of loop devices: a disk that holds a loop
    /// device's image. Its counters say whether the target's I/O reached
    /// it or the host's page cache of the image served it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub backing: bool,
}

/// Where a network file system's I/O is counted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "counters")]
pub enum Network {
    /// The NFS client's counters of this mount (/proc/self/mountstats):
    /// bytes read from and written to the server, the client's cache left
    /// out.
    Nfs { mount_point: String },
    /// The bytes of every network interface but lo (/proc/net/dev): the
    /// mount's traffic, and any other traffic of the host.
    Interfaces,
}

/// A network mount's counters and link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkMount {
    #[serde(flatten)]
    pub counters: Network,
    /// The fastest link of the host, in bytes/s (see `Link`); None where
    /// nothing says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_bytes_per_s: Option<u64>,
    /// What says so: "given with --link-speed", "eth0, 1000 Mb/s as its
    /// device reports", "veth1, shaped by tbf to 1000 Mbit/s".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_source: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Risk {
    /// Stable short name, e.g. "data_writeback".
    pub code: String,
    /// What can be lost, for people.
    pub message: String,
}

impl Risk {
    pub fn new(code: &str, message: &str) -> Risk {
        Risk {
            code: code.into(),
            message: message.into(),
        }
    }
}

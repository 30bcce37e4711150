//! The disk under a file system, from sysfs: its name, a loop device's
//! backing file, queue settings and RAID level, through partitions and
//! stacked devices (device-mapper, md).
use crate::result::env::DeviceFacts;
use std::path::{Path, PathBuf};

/// Bound on walks down stacked block devices (dm on dm on md on ...), so a
/// surprising sysfs layout can't make the probe loop.
pub(crate) const MAX_STACK_DEPTH: usize = 8;

/// What sysfs tells about the disk under a file system; all `None` for
/// file systems without one (tmpfs, nfs, fuse, overlay, ...).
#[derive(Debug, Default)]
pub(super) struct BlockInfo {
    pub(super) name: Option<String>,
    pub(super) loop_backing_file: Option<String>,
    pub(super) rotational: Option<bool>,
    pub(super) scheduler: Option<String>,
    pub(super) write_cache: Option<String>,
    pub(super) raid_level: Option<String>,
    pub(super) facts: Option<DeviceFacts>,
}

/// The facts of `disk`, `node` being the partition (or the disk itself).
fn device_facts(node: &Path, disk: &Path) -> Option<DeviceFacts> {
    let number = |path: &Path| read_sysfs(path).and_then(|v| v.trim().parse::<u64>().ok());
    let offset = match node == disk {
        true => None,
        false => Some(number(&node.join("start"))? * 512),
    };
    Some(DeviceFacts {
        model: read_sysfs(&disk.join("device/model")).map(|m| m.trim().to_string()),
        firmware: ["device/firmware_rev", "device/rev"]
            .iter()
            .find_map(|name| read_sysfs(&disk.join(name)))
            .map(|f| f.trim().to_string()),
        size_bytes: number(&disk.join("size"))? * 512,
        logical_sector: number(&disk.join("queue/logical_block_size"))?,
        physical_sector: number(&disk.join("queue/physical_block_size"))?,
        partition_offset: offset,
        queue_depth: number(&disk.join("queue/nr_requests")),
    })
}

/// The block device a file system lives on. Major 0 is the anonymous range
/// used by tmpfs, nfs, fuse, overlay, but also by btrfs, whose /dev source
/// still names the real device.
pub(crate) fn block_device_number(fs_dev: (u32, u32), source: &str) -> Option<(u32, u32)> {
    if fs_dev.0 != 0 {
        return Some(fs_dev);
    }
    if !source.starts_with("/dev/") {
        return None;
    }
    block_node_number(Path::new(source))
}

/// The device number (major:minor) of the block device node `node`, through
/// symlinks; `None` if it is missing or not a block device.
pub(crate) fn block_node_number(node: &Path) -> Option<(u32, u32)> {
    let stat = rustix::fs::stat(node).ok()?;
    let is_block =
        rustix::fs::FileType::from_raw_mode(stat.st_mode) == rustix::fs::FileType::BlockDevice;
    is_block.then(|| {
        (
            rustix::fs::major(stat.st_rdev),
            rustix::fs::minor(stat.st_rdev),
        )
    })
}

pub(super) fn probe_block_device((major, minor): (u32, u32)) -> Option<BlockInfo> {
    let node = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    Some(describe_disk(node))
}

/// Reads the attributes of the disk holding the sysfs block `node` (a disk
/// or a partition directory under /sys/devices).
fn describe_disk(node: PathBuf) -> BlockInfo {
    let disk = whole_disk(node.clone());
    BlockInfo {
        facts: device_facts(&node, &disk),
        name: disk.file_name().map(|n| n.to_string_lossy().into_owned()),
        loop_backing_file: read_sysfs(&disk.join("loop/backing_file")),
        rotational: queue_attribute(&disk, "rotational").and_then(|r| parse_rotational(&r)),
        scheduler: queue_attribute(&disk, "scheduler").and_then(|s| active_scheduler(&s)),
        write_cache: queue_attribute(&disk, "write_cache"),
        raid_level: raid_level(&disk, MAX_STACK_DEPTH),
    }
}

/// Partitions sit in their disk's sysfs directory and have a `partition`
/// file; queue settings and md/loop attributes belong to the disk.
pub(crate) fn whole_disk(node: PathBuf) -> PathBuf {
    match node.parent() {
        Some(parent) if node.join("partition").exists() => parent.to_path_buf(),
        _ => node,
    }
}

/// A queue attribute of `disk`, or of the single device it is stacked on
/// when its own is missing (device-mapper targets often lack one). Stops
/// where a device has several slaves: striping has no single answer.
fn queue_attribute(disk: &Path, name: &str) -> Option<String> {
    let mut current = disk.to_path_buf();
    for _ in 0..MAX_STACK_DEPTH {
        if let Some(value) = read_sysfs(&current.join("queue").join(name)) {
            return Some(value);
        }
        let [only] = <[PathBuf; 1]>::try_from(slaves(&current)).ok()?;
        current = only;
    }
    None
}

/// The md level of `disk`, or of an md device somewhere beneath it (LVM or
/// dm-crypt on md raid), searched at most `depth` levels down.
fn raid_level(disk: &Path, depth: usize) -> Option<String> {
    if let Some(level) = read_sysfs(&disk.join("md/level")) {
        return Some(level);
    }
    let below = depth.checked_sub(1)?;
    slaves(disk)
        .iter()
        .find_map(|slave| raid_level(slave, below))
}

/// The whole disks `disk` is built on (its `slaves/`, partitions resolved).
pub(crate) fn slaves(disk: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(disk.join("slaves")) else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| std::fs::canonicalize(entry.ok()?.path()).ok())
        .map(whole_disk)
        .collect()
}

fn parse_rotational(value: &str) -> Option<bool> {
    match value {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    }
}

/// The active scheduler is the bracketed entry ("mq-deadline kyber [bfq]
/// none" → "bfq"). Queues that offer no choice (bio-based device-mapper)
/// print just "none".
fn active_scheduler(line: &str) -> Option<String> {
    let names: Vec<&str> = line.split_whitespace().collect();
    let bracketed = names
        .iter()
        .find_map(|n| n.strip_prefix('[')?.strip_suffix(']'));
    match (bracketed, names.as_slice()) {
        (Some(active), _) => Some(active.to_string()),
        (None, [only]) => Some(only.to_string()),
        (None, _) => None,
    }
}

/// A one-value sysfs attribute without its trailing newline; `None` if
/// missing, unreadable, empty or longer than an attribute can be. Only the
/// newline is cut, so a backing file name ending in a space survives.
pub(crate) fn read_sysfs(path: &Path) -> Option<String> {
    let bytes = crate::kernel_file::read(path, crate::kernel_file::ATTRIBUTE)?;
    let text = String::from_utf8_lossy(&bytes);
    let value = text.trim_end_matches('\n');
    (!value.is_empty()).then(|| value.to_string())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::storage::env::tests::ScratchDir;

    #[test]
    fn scheduler_is_the_bracketed_entry() {
        assert_eq!(
            active_scheduler("mq-deadline kyber [bfq] none").as_deref(),
            Some("bfq")
        );
        assert_eq!(
            active_scheduler("[none] mq-deadline kyber bfq \n").as_deref(),
            Some("none")
        );
        assert_eq!(active_scheduler("none").as_deref(), Some("none"));
        assert_eq!(active_scheduler("mq-deadline none"), None);
        assert_eq!(active_scheduler(""), None);
    }

    #[test]
    fn rotational_flag_parses_only_0_and_1() {
        assert_eq!(parse_rotational("0"), Some(false));
        assert_eq!(parse_rotational("1"), Some(true));
        assert_eq!(parse_rotational("yes"), None);
    }

    // -- stacking, on a fake sysfs tree -------------------------------------
    // This machine's kernel has no partitions, device-mapper or md, so the
    // walks over `partition`, `slaves/` and `md/level` are checked on a
    // directory tree laid out like /sys/devices.

    pub(crate) fn write_file(path: &Path, content: &str) {
        std::fs::create_dir_all(path.parent().expect("has parent")).expect("create dirs");
        std::fs::write(path, content).expect("write file");
    }

    pub(crate) fn add_slave(holder: &Path, slave: &Path) {
        let link = holder
            .join("slaves")
            .join(slave.file_name().expect("named"));
        std::fs::create_dir_all(holder.join("slaves")).expect("create slaves dir");
        std::os::unix::fs::symlink(slave, link).expect("symlink slave");
    }

    #[test]
    fn stacked_devices_resolve_to_disk_raid_level_and_queue() {
        let scratch = ScratchDir::new("fake-sysfs");
        let pci = scratch.0.join("devices/pci");
        let virt = scratch.0.join("devices/virtual/block");
        for disk in ["sda", "sdb"] {
            write_file(&pci.join(disk).join("queue/rotational"), "1\n");
            write_file(
                &pci.join(disk).join("queue/scheduler"),
                "[mq-deadline] kyber none\n",
            );
            write_file(&pci.join(disk).join("queue/write_cache"), "write through\n");
            write_file(&pci.join(disk).join(format!("{disk}2/partition")), "2\n");
        }
        let md0 = virt.join("md0");
        write_file(&md0.join("md/level"), "raid1\n");
        write_file(&md0.join("queue/rotational"), "0\n");
        write_file(&md0.join("queue/scheduler"), "none\n");
        add_slave(&md0, &pci.join("sda/sda2"));
        add_slave(&md0, &pci.join("sdb/sdb2"));
        // dm-0: an LV on md0 exposing only write_cache of its own.
        let dm0 = virt.join("dm-0");
        write_file(&dm0.join("queue/write_cache"), "write back\n");
        add_slave(&dm0, &md0);
        // dm-1: striped over two partitions, nothing of its own.
        let dm1 = virt.join("dm-1");
        std::fs::create_dir_all(&dm1).expect("create dm-1");
        add_slave(&dm1, &pci.join("sda/sda2"));
        add_slave(&dm1, &pci.join("sdb/sdb2"));
        // dm-2: dm-crypt on dm-0.
        let dm2 = virt.join("dm-2");
        std::fs::create_dir_all(&dm2).expect("create dm-2");
        add_slave(&dm2, &dm0);
        let loop3 = virt.join("loop3");
        write_file(&loop3.join("loop/backing_file"), "/img/a b.img \n");

        let partition = describe_disk(pci.join("sda/sda2"));
        assert_eq!(partition.name.as_deref(), Some("sda"));
        assert_eq!(partition.rotational, Some(true));
        assert_eq!(partition.scheduler.as_deref(), Some("mq-deadline"));
        assert_eq!(partition.write_cache.as_deref(), Some("write through"));
        assert_eq!(partition.raid_level, None);

        let md = describe_disk(md0.clone());
        assert_eq!(
            (md.name.as_deref(), md.raid_level.as_deref()),
            (Some("md0"), Some("raid1"))
        );

        let lv = describe_disk(dm0.clone());
        assert_eq!(lv.name.as_deref(), Some("dm-0"));
        assert_eq!(lv.raid_level.as_deref(), Some("raid1"));
        assert_eq!(
            lv.rotational,
            Some(false),
            "missing: taken from the single slave md0"
        );
        assert_eq!(lv.scheduler.as_deref(), Some("none"));
        assert_eq!(
            lv.write_cache.as_deref(),
            Some("write back"),
            "own value wins"
        );

        let striped = describe_disk(dm1);
        assert_eq!(
            (striped.rotational, striped.scheduler, striped.raid_level),
            (None, None, None)
        );

        let crypt = describe_disk(dm2);
        assert_eq!(crypt.raid_level.as_deref(), Some("raid1"));
        assert_eq!(crypt.rotational, Some(false));

        let looped = describe_disk(loop3);
        assert_eq!(looped.loop_backing_file.as_deref(), Some("/img/a b.img "));
        assert_eq!(looped.rotational, None);
    }

    #[test]
    fn a_partition_off_its_physical_sectors_is_misaligned() {
        let sys = ScratchDir::new("facts");
        let disk = sys.0.join("sdz");
        let part = disk.join("sdz1");
        write_file(&disk.join("size"), "7814037168\n");
        write_file(&disk.join("device/model"), "WDC WD40EFRX-68N\n");
        write_file(&disk.join("queue/logical_block_size"), "512\n");
        write_file(&disk.join("queue/physical_block_size"), "4096\n");
        write_file(&disk.join("queue/nr_requests"), "64\n");
        write_file(&part.join("partition"), "1\n");
        // The old DOS layout: sector 63, 32256 bytes in.
        write_file(&part.join("start"), "63\n");
        let facts = device_facts(&part, &disk).unwrap();
        assert_eq!(facts.partition_offset, Some(32256));
        assert!(facts.misaligned());
        assert_eq!(
            facts.described(),
            "WDC WD40EFRX-68N, 3.6 TiB, sectors 512/4096 B (logical/physical), \
             queue depth 64, partition at 32256 B (MISALIGNED to its 4096 B sectors)"
        );
        write_file(&part.join("start"), "2048\n");
        assert!(!device_facts(&part, &disk).unwrap().misaligned());
        // The whole disk: no partition, nothing to align.
        let whole = device_facts(&disk, &disk).unwrap();
        assert_eq!((whole.partition_offset, whole.misaligned()), (None, false));
    }
}

//! The safety check behind `--wipe DEVICE`: fsbench builds file systems on
//! a block device the user names, which destroys what is on it, so it takes
//! only a device nothing uses: not mounted, not swap, not held by md, LVM,
//! device-mapper or bcache, not under `/`, and no partition (or, for a
//! partition, no neighbour on its disk) in use either.
//!
//! The decision is a pure function of a [`Snapshot`] (mounts, swap devices,
//! a sysfs root), so tests can fabricate one; [`check_wipeable`] takes the
//! snapshot from the running system.
use std::ffi::OsStr;
use std::fmt::Display;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::FileType;

use crate::error::usage;
use crate::storage::env::block::{
    MAX_STACK_DEPTH, block_device_number, block_node_number, read_sysfs, slaves, whole_disk,
};
use crate::storage::env::mounts::{MountEntry, decode_octal_escapes, parse_majmin, read_mountinfo};

/// A block device the user named with --wipe, checked: nothing on it is in use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wipeable {
    /// Canonical device node, e.g. /dev/loop3 (a /dev/disk/by-id link resolved).
    pub path: PathBuf,
    /// Kernel name, e.g. loop3, sdb1.
    pub name: String,
    /// major:minor.
    pub dev: (u32, u32),
    /// Kernel name of the whole disk: the device itself for a disk, sdb for sdb1.
    pub disk: String,
}

/// Refuses `device` unless it is a block device nothing uses (see the
/// module doc), with a one-line usage error (exit 2) that says why.
pub fn check_wipeable(device: &Path) -> anyhow::Result<Wipeable> {
    let (path, dev) = block_device(device)?;
    decide(device, path, dev, &Snapshot::read())
}

/// The canonical node and device number of `device`, refused unless it
/// is a block device: mkfs on a regular file would "work" and wipe nothing
/// the user meant.
fn block_device(device: &Path) -> anyhow::Result<(PathBuf, (u32, u32))> {
    let path = match std::fs::canonicalize(device) {
        Ok(path) => path,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return refuse(device, "it does not exist");
        }
        Err(e) => return refuse(device, e),
    };
    match block_node_number(&path) {
        Some(dev) => Ok((path, dev)),
        None => refuse(device, format!("it is {}", not_block(&path))),
    }
}

/// What a path that is not a block device is, for the refusal.
fn not_block(path: &Path) -> &'static str {
    let kind = rustix::fs::stat(path).map(|s| FileType::from_raw_mode(s.st_mode));
    match kind {
        Ok(FileType::RegularFile) => "a regular file, not a block device",
        Ok(FileType::Directory) => "a directory, not a block device",
        Ok(FileType::CharacterDevice) => "a character device, not a block device",
        _ => "not a block device",
    }
}

/// The one-line usage error naming the device as the user wrote it.
fn refuse<T>(device: &Path, reason: impl Display) -> anyhow::Result<T> {
    usage(format!("--wipe {}: {reason}", device.display()))
}

/// A mounted file system's block device (btrfs's too, found through its
/// source since its st_dev is anonymous) and where it is mounted.
#[derive(Debug, Clone, PartialEq)]
struct Mounted {
    dev: (u32, u32),
    point: PathBuf,
}

/// What the check looks at, taken once: who uses which block device.
#[derive(Debug)]
struct Snapshot {
    /// Mounts on block devices, in mountinfo order; tmpfs, nfs and the
    /// like have no device to protect and are left out.
    mounts: Vec<Mounted>,
    /// Block devices active as swap. Swap files are left out: they live on
    /// a mounted file system, which refuses its device already.
    swaps: Vec<(u32, u32)>,
    /// The sysfs root: /sys, or a tree a test made.
    sysfs: PathBuf,
}

impl Snapshot {
    /// The running system's: /proc/self/mountinfo, /proc/swaps and /sys.
    fn read() -> Self {
        let swaps = std::fs::read("/proc/swaps").unwrap_or_default();
        Snapshot {
            mounts: mounted_devices(read_mountinfo()),
            swaps: swap_devices(&swaps),
            sysfs: PathBuf::from("/sys"),
        }
    }

    /// The first reason the device at sysfs `node`, on whole disk `disk`,
    /// may not be wiped. A detached loop device is told first (there is
    /// nothing to wipe, whatever else holds), then `/`, which says more
    /// than the "mounted on /" that would follow.
    fn refusal(&self, node: &Path, disk: &Path) -> Option<String> {
        let detached = name_of(disk).starts_with("loop")
            && read_sysfs(&disk.join("loop/backing_file")).is_none();
        if detached {
            return Some("it is a loop device with no backing file (not attached)".to_string());
        }
        self.root_refusal(node, disk)
            .or_else(|| Some(format!("it is {}", self.use_of(node)?)))
            .or_else(|| match node == disk {
                true => self.used_partition(disk),
                false => self.used_neighbour(node, disk),
            })
    }

    /// The sysfs directory of block device `dev` (under devices/, where a
    /// partition sits inside its disk's directory).
    fn node(&self, (major, minor): (u32, u32)) -> Option<PathBuf> {
        let link = self.sysfs.join(format!("dev/block/{major}:{minor}"));
        std::fs::canonicalize(link).ok()
    }

    /// Refuses `node` when its whole disk `disk` holds `/`: the root file
    /// system is on the disk, a partition of it, or a device built on it.
    /// Found by walking down from the root file system's device through
    /// the slaves of stacked devices (dm, md).
    fn root_refusal(&self, node: &Path, disk: &Path) -> Option<String> {
        let root = self
            .mounts
            .iter()
            .rev()
            .find(|m| m.point == Path::new("/"))?;
        let root_disk = whole_disk(self.node(root.dev)?);
        if !disks_under(root_disk, MAX_STACK_DEPTH)
            .iter()
            .any(|d| d == disk)
        {
            return None;
        }
        Some(match node == disk {
            true => "it holds the root file system /".to_string(),
            false => format!("its disk {} holds the root file system /", name_of(disk)),
        })
    }

    /// How the device at sysfs `node` is in use, if it is: mounted, swap,
    /// or held by a device built on it.
    fn use_of(&self, node: &Path) -> Option<String> {
        let dev = dev_of(node);
        if let Some(point) = dev.and_then(|dev| self.mount_point(dev)) {
            return Some(format!("mounted on {}", point.display()));
        }
        if dev.is_some_and(|dev| self.swaps.contains(&dev)) {
            return Some("in use as swap".to_string());
        }
        let holders = holders(node);
        (!holders.is_empty()).then(|| format!("held by {}", holders.join(", ")))
    }

    /// Where `dev` is mounted: its first mount, of possibly several.
    fn mount_point(&self, dev: (u32, u32)) -> Option<&Path> {
        let mount = self.mounts.iter().find(|m| m.dev == dev)?;
        Some(&mount.point)
    }

    /// For a whole disk: the first of its partitions in use.
    fn used_partition(&self, disk: &Path) -> Option<String> {
        partitions(disk).iter().find_map(|part| {
            let how = self.use_of(part)?;
            Some(format!("its partition {} is {how}", name_of(part)))
        })
    }

    /// For a partition: its disk in use, or another partition of the disk
    /// mounted. Conservative on purpose: a mkfs that goes wrong on
    /// one partition (a miscounted offset, a rewritten table) hurts the
    /// file system mounted next to it.
    fn used_neighbour(&self, node: &Path, disk: &Path) -> Option<String> {
        if let Some(how) = self.use_of(disk) {
            return Some(format!("its disk {} is {how}", name_of(disk)));
        }
        partitions(disk)
            .iter()
            .filter(|part| part.as_path() != node)
            .find_map(|part| {
                let point = self.mount_point(dev_of(part)?)?;
                Some(format!(
                    "{}, another partition of {}, is mounted on {}",
                    name_of(part),
                    name_of(disk),
                    point.display()
                ))
            })
    }
}

/// The decision: the `Wipeable` for block device `dev` (at canonical
/// `path`, named `device` by the user), or the refusal saying why not.
fn decide(
    device: &Path,
    path: PathBuf,
    dev: (u32, u32),
    snapshot: &Snapshot,
) -> anyhow::Result<Wipeable> {
    let Some(node) = snapshot.node(dev) else {
        let (major, minor) = dev;
        return refuse(
            device,
            format!("sysfs lists no block device {major}:{minor}"),
        );
    };
    let disk = whole_disk(node.clone());
    if let Some(reason) = snapshot.refusal(&node, &disk) {
        return refuse(device, reason);
    }
    Ok(Wipeable {
        path,
        name: name_of(&node),
        dev,
        disk: name_of(&disk),
    })
}

/// The block device under each mount: its st_dev, or for btrfs (whose
/// st_dev is anonymous, major 0) the device its /dev source names,
/// through symlinks such as /dev/disk/by-uuid.
fn mounted_devices(entries: Vec<MountEntry>) -> Vec<Mounted> {
    entries
        .into_iter()
        .filter_map(|m| {
            Some(Mounted {
                dev: block_device_number(m.dev, &m.source)?,
                point: m.mount_point,
            })
        })
        .collect()
}

/// Device numbers of the block devices listed in /proc/swaps (its first
/// column, after a header line, escaped like mountinfo paths).
fn swap_devices(proc_swaps: &[u8]) -> Vec<(u32, u32)> {
    proc_swaps
        .split(|&b| b == b'\n')
        .skip(1)
        .filter_map(|line| line.split(u8::is_ascii_whitespace).next())
        .filter(|name| !name.is_empty())
        .filter_map(|name| {
            block_node_number(Path::new(OsStr::from_bytes(&decode_octal_escapes(name))))
        })
        .collect()
}

/// The kernel name of a sysfs block node: its directory name.
fn name_of(node: &Path) -> String {
    node.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// The device number sysfs gives for `node` (its `dev` file, "8:17").
fn dev_of(node: &Path) -> Option<(u32, u32)> {
    parse_majmin(&read_sysfs(&node.join("dev"))?)
}

/// Devices built on `node` (md, dm for LVM or dm-crypt, bcache), by name.
fn holders(node: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(node.join("holders")) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|entry| Some(entry.ok()?.file_name().to_string_lossy().into_owned()))
        .collect();
    names.sort();
    names
}

/// The partitions of a whole disk: its subdirectories with a `partition`
/// file, in name order so the refusal names the same one every time.
fn partitions(disk: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(disk) else {
        return Vec::new();
    };
    let mut parts: Vec<PathBuf> = entries
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|path| path.join("partition").is_file())
        .collect();
    parts.sort();
    parts
}

/// `disk` and the whole disks beneath it through slaves, `depth` levels
/// down at most.
fn disks_under(disk: PathBuf, depth: usize) -> Vec<PathBuf> {
    let below: Vec<PathBuf> = match depth.checked_sub(1) {
        Some(next) => slaves(&disk)
            .into_iter()
            .flat_map(|slave| disks_under(slave, next))
            .collect(),
        None => Vec::new(),
    };
    [vec![disk], below].concat()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::env::block::tests::{add_slave, write_file};

    /// A sysfs tree in a tempdir, laid out like /sys: devices under
    /// devices/virtual/block (partitions inside their disk), reached
    /// through dev/block/MAJOR:MINOR links.
    struct FakeSys(tempfile::TempDir);

    impl FakeSys {
        fn new() -> Self {
            FakeSys(tempfile::tempdir().expect("tempdir"))
        }

        fn disk(&self, name: &str, dev: (u32, u32)) -> PathBuf {
            self.add(&self.0.path().join("devices/virtual/block"), name, dev)
        }

        fn partition(&self, disk: &Path, name: &str, dev: (u32, u32)) -> PathBuf {
            let node = self.add(disk, name, dev);
            write_file(&node.join("partition"), "1\n");
            node
        }

        fn add(&self, parent: &Path, name: &str, (major, minor): (u32, u32)) -> PathBuf {
            let node = parent.join(name);
            write_file(&node.join("dev"), &format!("{major}:{minor}\n"));
            std::fs::create_dir_all(node.join("holders")).expect("holders dir");
            let link = self.0.path().join(format!("dev/block/{major}:{minor}"));
            std::fs::create_dir_all(link.parent().expect("parent")).expect("dev/block");
            std::os::unix::fs::symlink(&node, link).expect("dev link");
            node
        }

        /// An attached loop device: one with a backing file.
        fn attached_loop(&self, name: &str, dev: (u32, u32)) -> PathBuf {
            let node = self.disk(name, dev);
            write_file(&node.join("loop/backing_file"), "/var/tmp/disk.img\n");
            node
        }

        /// `holder` is built on `slave` (md, dm): linked both ways.
        fn stack(&self, holder: &Path, slave: &Path) {
            add_slave(holder, slave);
            let link = slave.join("holders").join(name_of(holder));
            std::os::unix::fs::symlink(holder, link).expect("holder link");
        }

        fn snapshot(&self, mounts: &[((u32, u32), &str)], swaps: &[(u32, u32)]) -> Snapshot {
            Snapshot {
                mounts: mounts
                    .iter()
                    .map(|&(dev, point)| Mounted {
                        dev,
                        point: PathBuf::from(point),
                    })
                    .collect(),
                swaps: swaps.to_vec(),
                sysfs: self.0.path().to_path_buf(),
            }
        }
    }

    const VDA: (u32, u32) = (254, 0);
    const SDB: (u32, u32) = (8, 16);
    const SDB1: (u32, u32) = (8, 17);
    const SDB2: (u32, u32) = (8, 18);
    const ROOT_ON_VDA: ((u32, u32), &str) = (VDA, "/");

    /// vda (holding /) and sdb with two partitions, none of them used.
    fn two_disks() -> FakeSys {
        let sys = FakeSys::new();
        sys.disk("vda", VDA);
        let sdb = sys.disk("sdb", SDB);
        sys.partition(&sdb, "sdb1", SDB1);
        sys.partition(&sdb, "sdb2", SDB2);
        sys
    }

    fn check(snapshot: &Snapshot, name: &str, dev: (u32, u32)) -> anyhow::Result<Wipeable> {
        let path = PathBuf::from(format!("/dev/{name}"));
        decide(&path, path.clone(), dev, snapshot)
    }

    /// The refusal's text, checked to be a one-line usage error.
    fn refusal(snapshot: &Snapshot, name: &str, dev: (u32, u32)) -> String {
        let err = check(snapshot, name, dev).expect_err("must be refused");
        assert!(err.downcast_ref::<crate::error::UsageError>().is_some());
        let text = format!("{err:#}");
        assert!(!text.contains('\n'), "{text}");
        text
    }

    #[test]
    fn unused_disk_partition_and_attached_loop_are_wipeable() {
        let sys = two_disks();
        sys.attached_loop("loop3", (7, 3));
        // The loop's backing file is on the mounted root: that is fine.
        let snapshot = sys.snapshot(&[ROOT_ON_VDA], &[]);
        let wipeable = |name: &str, dev, disk: &str| Wipeable {
            path: PathBuf::from(format!("/dev/{name}")),
            name: name.to_string(),
            dev,
            disk: disk.to_string(),
        };
        assert_eq!(
            check(&snapshot, "sdb", SDB).unwrap(),
            wipeable("sdb", SDB, "sdb")
        );
        assert_eq!(
            check(&snapshot, "sdb2", SDB2).unwrap(),
            wipeable("sdb2", SDB2, "sdb")
        );
        assert_eq!(
            check(&snapshot, "loop3", (7, 3)).unwrap(),
            wipeable("loop3", (7, 3), "loop3")
        );
    }

    #[test]
    fn a_mounted_device_is_refused() {
        let sys = two_disks();
        let snapshot = sys.snapshot(&[ROOT_ON_VDA, (SDB1, "/mnt/x")], &[]);
        assert_eq!(
            refusal(&snapshot, "sdb1", SDB1),
            "--wipe /dev/sdb1: it is mounted on /mnt/x"
        );
    }

    #[test]
    fn a_disk_with_a_partition_in_use_is_refused() {
        let sys = two_disks();
        let mounted = sys.snapshot(&[ROOT_ON_VDA, (SDB2, "/mnt/x")], &[]);
        assert_eq!(
            refusal(&mounted, "sdb", SDB),
            "--wipe /dev/sdb: its partition sdb2 is mounted on /mnt/x"
        );
        let swap = sys.snapshot(&[ROOT_ON_VDA], &[SDB1]);
        assert_eq!(
            refusal(&swap, "sdb", SDB),
            "--wipe /dev/sdb: its partition sdb1 is in use as swap"
        );
        let md0 = sys.disk("md0", (9, 0));
        sys.stack(&md0, &sys.0.path().join("devices/virtual/block/sdb/sdb2"));
        let held = sys.snapshot(&[ROOT_ON_VDA], &[]);
        assert_eq!(
            refusal(&held, "sdb", SDB),
            "--wipe /dev/sdb: its partition sdb2 is held by md0"
        );
    }

    #[test]
    fn a_partition_next_to_a_mounted_one_is_refused() {
        let sys = two_disks();
        let snapshot = sys.snapshot(&[ROOT_ON_VDA, (SDB1, "/mnt/x")], &[]);
        assert_eq!(
            refusal(&snapshot, "sdb2", SDB2),
            "--wipe /dev/sdb2: sdb1, another partition of sdb, is mounted on /mnt/x"
        );
        let disk_mounted = sys.snapshot(&[ROOT_ON_VDA, (SDB, "/mnt/whole")], &[]);
        assert_eq!(
            refusal(&disk_mounted, "sdb2", SDB2),
            "--wipe /dev/sdb2: its disk sdb is mounted on /mnt/whole"
        );
    }

    #[test]
    fn active_swap_is_refused() {
        let sys = two_disks();
        let snapshot = sys.snapshot(&[ROOT_ON_VDA], &[SDB]);
        assert_eq!(
            refusal(&snapshot, "sdb", SDB),
            "--wipe /dev/sdb: it is in use as swap"
        );
    }

    #[test]
    fn a_device_with_holders_is_refused() {
        let sys = two_disks();
        let sdb = sys.0.path().join("devices/virtual/block/sdb");
        sys.stack(&sys.disk("md0", (9, 0)), &sdb);
        sys.stack(&sys.disk("dm-1", (253, 1)), &sdb);
        let snapshot = sys.snapshot(&[ROOT_ON_VDA], &[]);
        assert_eq!(
            refusal(&snapshot, "sdb", SDB),
            "--wipe /dev/sdb: it is held by dm-1, md0"
        );
        assert_eq!(
            refusal(&snapshot, "sdb1", SDB1),
            "--wipe /dev/sdb1: its disk sdb is held by dm-1, md0"
        );
    }

    #[test]
    fn the_devices_under_root_are_refused_through_stacking() {
        // / is on dm-0 (LVM), built on md0 (raid1 of sda1 and sdc1).
        let sys = two_disks();
        let (sda, sdc) = (sys.disk("sda", (8, 0)), sys.disk("sdc", (8, 32)));
        let md0 = sys.disk("md0", (9, 0));
        sys.stack(&md0, &sys.partition(&sda, "sda1", (8, 1)));
        sys.stack(&md0, &sys.partition(&sdc, "sdc1", (8, 33)));
        sys.partition(&sdc, "sdc2", (8, 34));
        let dm0 = sys.disk("dm-0", (253, 0));
        sys.stack(&dm0, &md0);
        let snapshot = sys.snapshot(&[((253, 0), "/"), ((253, 0), "/home")], &[]);
        let root_disk = "it holds the root file system /";
        assert_eq!(
            refusal(&snapshot, "dm-0", (253, 0)),
            format!("--wipe /dev/dm-0: {root_disk}")
        );
        assert_eq!(
            refusal(&snapshot, "md0", (9, 0)),
            format!("--wipe /dev/md0: {root_disk}")
        );
        assert_eq!(
            refusal(&snapshot, "sda", (8, 0)),
            format!("--wipe /dev/sda: {root_disk}")
        );
        assert_eq!(
            refusal(&snapshot, "sdc2", (8, 34)),
            "--wipe /dev/sdc2: its disk sdc holds the root file system /"
        );
        // vda is no longer under /: free.
        assert_eq!(check(&snapshot, "vda", VDA).unwrap().disk, "vda");
    }

    #[test]
    fn a_detached_loop_device_is_refused() {
        let sys = two_disks();
        sys.disk("loop4", (7, 4));
        let snapshot = sys.snapshot(&[ROOT_ON_VDA], &[]);
        assert_eq!(
            refusal(&snapshot, "loop4", (7, 4)),
            "--wipe /dev/loop4: it is a loop device with no backing file (not attached)"
        );
    }

    #[test]
    fn a_device_sysfs_does_not_list_is_refused() {
        let snapshot = two_disks().snapshot(&[], &[]);
        assert_eq!(
            refusal(&snapshot, "sdz", (8, 240)),
            "--wipe /dev/sdz: sysfs lists no block device 8:240"
        );
    }

    #[test]
    fn what_is_not_a_block_device_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("disk.img");
        std::fs::write(&file, b"data").expect("write file");
        let reason = |path: &Path| {
            let err = check_wipeable(path).expect_err("must be refused");
            assert!(err.downcast_ref::<crate::error::UsageError>().is_some());
            format!("{err:#}")
        };
        let shown = |path: &Path, why: &str| format!("--wipe {}: {why}", path.display());
        assert_eq!(
            reason(&file),
            shown(&file, "it is a regular file, not a block device")
        );
        assert_eq!(
            reason(dir.path()),
            shown(dir.path(), "it is a directory, not a block device")
        );
        let null = Path::new("/dev/null");
        assert_eq!(
            reason(null),
            shown(null, "it is a character device, not a block device")
        );
        let missing = dir.path().join("missing");
        assert_eq!(reason(&missing), shown(&missing, "it does not exist"));
    }

    // -- device nodes (root only: mknod) ----------------------------------

    /// A directory under /dev/shm holding block device node `name` for
    /// 7:200 (no such loop device need exist); None when not root.
    fn block_node(name: &str) -> Option<(tempfile::TempDir, PathBuf)> {
        if !rustix::process::geteuid().is_root() {
            eprintln!("skipping: needs root to make a device node");
            return None;
        }
        let dir = tempfile::tempdir_in("/dev/shm").ok()?;
        let node = dir.path().join(name);
        let made = std::process::Command::new("mknod")
            .arg(&node)
            .args(["b", "7", "200"])
            .status()
            .is_ok_and(|s| s.success());
        made.then_some((dir, node))
    }

    #[test]
    fn btrfs_mounts_are_found_by_their_source_device() {
        let Some((dir, node)) = block_node("sdz") else {
            return;
        };
        let by_uuid = dir.path().join("by-uuid");
        std::os::unix::fs::symlink(&node, &by_uuid).expect("symlink");
        let entry = |dev, point: &str, source: &Path| MountEntry {
            dev,
            mount_point: PathBuf::from(point),
            fs_type: String::new(),
            source: source.to_string_lossy().into_owned(),
            options: String::new(),
        };
        let mounted = mounted_devices(vec![
            entry(VDA, "/", Path::new("/dev/vda")),
            entry((0, 23), "/dev/shm", Path::new("tmpfs")),
            entry((0, 45), "/mnt/btrfs", &by_uuid),
        ]);
        let devs: Vec<_> = mounted.iter().map(|m| (m.dev, m.point.clone())).collect();
        assert_eq!(devs, [(VDA, "/".into()), ((7, 200), "/mnt/btrfs".into())]);
    }

    #[test]
    fn swap_devices_are_the_block_devices_in_proc_swaps() {
        let Some((dir, node)) = block_node("swap disk") else {
            return;
        };
        let escaped = dir.path().join(r"swap\040disk");
        let proc_swaps = format!(
            "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
             {}\tpartition\t16380\t\t0\t\t-2\n\
             /swapfile                               file\t\t1024\t\t0\t\t-3\n",
            escaped.display()
        );
        assert!(node.exists());
        assert_eq!(swap_devices(proc_swaps.as_bytes()), [(7, 200)]);
        assert_eq!(swap_devices(b""), []);
    }
}

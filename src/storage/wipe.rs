//! The safety check behind `--wipe DEVICE`: fsbench builds file systems on
//! a block device the user names, which destroys what is on it, so it takes
//! only a device nothing uses: not mounted, not swap, not held by md, LVM,
//! device-mapper or bcache, not under `/`, not the backing of a loop device
//! in use, and no partition (or, for a partition, no neighbour on its disk)
//! in use either. A loop device writes through to what backs it, so that is
//! checked too, down the stack of loop devices: a backing device must pass
//! this whole check itself, and a backing file must be no swap file, no
//! mount's source, and no image of another loop device in use (known by its
//! inode, whatever path either was given).
//!
//! The decision is a pure function of a [`Snapshot`] (mounts, swaps, the
//! loop devices' backings, a sysfs root), so tests can fabricate one;
//! [`check_wipeable`] takes the snapshot from the running system.
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
use crate::storage::loopdev::{self, FileId, LoopDevice};

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

/// The canonical paths of the devices `checked`, each device once (by its
/// number): one named twice, or as a /dev/disk/by-* link and its node, is
/// one device to build on, not two.
pub fn distinct_paths(checked: impl IntoIterator<Item = Wipeable>) -> Vec<PathBuf> {
    let mut distinct: Vec<Wipeable> = Vec::new();
    for wipeable in checked {
        if !distinct.iter().any(|seen| seen.dev == wipeable.dev) {
            distinct.push(wipeable);
        }
    }
    distinct.into_iter().map(|wipeable| wipeable.path).collect()
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

/// A regular file mounted as a mount's source (erofs and others mount an
/// image file directly, with no loop device between), and where.
#[derive(Debug, Clone, PartialEq)]
struct MountedFile {
    file: FileId,
    point: PathBuf,
}

/// What an attached loop device reads and writes through.
#[derive(Debug, Clone, PartialEq)]
enum Backing {
    /// A block device (another loop device too), by number.
    Device((u32, u32)),
    /// A regular file, by identity; `path` (as sysfs shows it) only names
    /// it in a refusal.
    File { id: FileId, path: PathBuf },
}

/// An attached loop device and what backs it.
#[derive(Debug, Clone)]
struct LoopBacking {
    dev: (u32, u32),
    backing: Backing,
}

impl LoopBacking {
    /// Its backing file's identity; None when a device backs it.
    fn file(&self) -> Option<FileId> {
        match self.backing {
            Backing::File { id, .. } => Some(id),
            Backing::Device(_) => None,
        }
    }
}

/// Why a device may not be wiped: `rest` said of `subject`, the device
/// itself (None: "it") or something it is made of or next to ("its disk
/// sdb", "its backing device /dev/vda"), so a refusal of a device further
/// down a loop stack can be told of the device the user named.
#[derive(Debug)]
struct Refusal {
    subject: Option<String>,
    rest: String,
}

impl Refusal {
    fn it(rest: impl Into<String>) -> Self {
        Refusal {
            subject: None,
            rest: rest.into(),
        }
    }

    fn its(subject: impl Into<String>, rest: impl Into<String>) -> Self {
        Refusal {
            subject: Some(subject.into()),
            rest: rest.into(),
        }
    }

    /// The sentence: "it is mounted on /mnt", "its disk sdb is held by md0".
    fn told(&self) -> String {
        format!("{} {}", self.subject.as_deref().unwrap_or("it"), self.rest)
    }

    /// This refusal of `device`, a loop device's backing, told of the loop
    /// device: "its backing device /dev/vda holds the root file system /".
    /// One about something of `device` keeps its own sentence after a
    /// colon, where "its" is `device`'s.
    fn of_backing(self, device: &str) -> Refusal {
        let subject = format!("its backing device {device}");
        match self.subject {
            None => Refusal::its(subject, self.rest),
            Some(_) => Refusal::its(format!("{subject}:"), self.told()),
        }
    }

    /// `relation` ("the image of /dev/loop3") continued by this refusal of
    /// the device it names: "..., which is mounted on /mnt/a", or the
    /// sentence after a colon when it is about something of that device.
    fn continuing(&self, relation: String) -> String {
        match self.subject {
            None => format!("{relation}, which {}", self.rest),
            Some(_) => format!("{relation}: {}", self.told()),
        }
    }
}

/// What the check looks at, taken once: who uses which block device, and
/// what backs each loop device.
#[derive(Debug)]
struct Snapshot {
    /// Mounts on block devices, in mountinfo order; tmpfs, nfs and the
    /// like have no device to protect and are left out.
    mounts: Vec<Mounted>,
    /// Mounts whose source is a regular file.
    file_mounts: Vec<MountedFile>,
    /// Block devices active as swap.
    swaps: Vec<(u32, u32)>,
    /// Files active as swap: a loop device on one would write over
    /// swapped-out memory.
    swap_files: Vec<FileId>,
    /// The attached loop devices whose backing the kernel told; one it
    /// did not tell is missing, and refused when it is the one named.
    loops: Vec<LoopBacking>,
    /// The sysfs root: /sys, or a tree a test made.
    sysfs: PathBuf,
}

impl Snapshot {
    /// The running system's: /proc/self/mountinfo, /proc/swaps, /sys, and
    /// each attached loop device's LOOP_GET_STATUS64.
    fn read() -> Self {
        let mounts = read_mountinfo();
        let swaps = crate::kernel_file::read(Path::new("/proc/swaps"), crate::kernel_file::TABLE)
            .unwrap_or_default();
        let sysfs = PathBuf::from("/sys");
        Snapshot {
            mounts: mounted_devices(&mounts),
            file_mounts: mounted_files(&mounts),
            swaps: swap_devices(&swaps),
            swap_files: swap_files(&swaps),
            loops: attached_loops(&sysfs),
            sysfs,
        }
    }

    /// The first reason the device at sysfs `node`, on whole disk `disk`,
    /// may not be wiped, following loop devices at most `depth` deep. A
    /// detached loop device is told first (there is nothing to wipe,
    /// whatever else holds), then `/`, which says more than the "mounted
    /// on /" that would follow; the backing comes last, as the device's
    /// own use is the plainer reason.
    fn refusal(&self, node: &Path, disk: &Path, depth: usize) -> Option<Refusal> {
        let detached = is_loop(disk) && read_sysfs(&disk.join("loop/backing_file")).is_none();
        if detached {
            return Some(Refusal::it(
                "is a loop device with no backing file (not attached)",
            ));
        }
        self.root_refusal(node, disk)
            .or_else(|| match node == disk {
                true => self.disk_in_use(disk, depth),
                false => self
                    .in_use(node, depth)
                    .or_else(|| self.used_neighbour(node, disk, depth)),
            })
            .or_else(|| self.backing_refusal(disk, depth))
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
    fn root_refusal(&self, node: &Path, disk: &Path) -> Option<Refusal> {
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
        let holds = "holds the root file system /";
        Some(match node == disk {
            true => Refusal::it(holds),
            false => Refusal::its(format!("its disk {}", name_of(disk)), holds),
        })
    }

    /// How the device at sysfs `node` is in use, if it is: mounted, swap,
    /// held by a device built on it, or backing a loop device in use
    /// (looked for at most `depth` loop devices up).
    fn use_of(&self, node: &Path, depth: usize) -> Option<String> {
        let dev = dev_of(node);
        if let Some(point) = dev.and_then(|dev| self.mount_point(dev)) {
            return Some(format!("mounted on {}", point.display()));
        }
        if dev.is_some_and(|dev| self.swaps.contains(&dev)) {
            return Some("in use as swap".to_string());
        }
        let holders = holders(node);
        if !holders.is_empty() {
            return Some(format!("held by {}", holders.join(", ")));
        }
        let dev = dev?;
        self.loop_in_use(
            |l| l.backing == Backing::Device(dev),
            "the backing of",
            depth,
        )
    }

    /// [`Self::use_of`] as a refusal of the device itself.
    fn in_use(&self, node: &Path, depth: usize) -> Option<Refusal> {
        let how = self.use_of(node, depth)?;
        Some(Refusal::it(format!("is {how}")))
    }

    /// How the whole disk `disk` is in use: itself, or one of its partitions.
    fn disk_in_use(&self, disk: &Path, depth: usize) -> Option<Refusal> {
        self.in_use(disk, depth)
            .or_else(|| self.used_partition(disk, depth))
    }

    /// The first of the loop devices `which` that is in use, as `relation`
    /// to it ("the backing of") and its use: "the backing of /dev/loop5,
    /// which is mounted on /mnt". Wiping what backs a loop device wipes
    /// what it shows. More than `depth` loop devices up, the stack itself
    /// is the refusal: a bound, since sysfs and the kernel can't be
    /// assumed never to show a cycle.
    fn loop_in_use(
        &self,
        which: impl Fn(&LoopBacking) -> bool,
        relation: &str,
        depth: usize,
    ) -> Option<String> {
        self.loops.iter().filter(|l| which(l)).find_map(|l| {
            let Some(next) = depth.checked_sub(1) else {
                return Some(format!(
                    "{relation} loop devices stacked over {MAX_STACK_DEPTH} deep"
                ));
            };
            let node = self.node(l.dev)?;
            let why = self.disk_in_use(&node, next)?;
            Some(why.continuing(format!("{relation} /dev/{}", name_of(&node))))
        })
    }

    /// Where `dev` is mounted: its first mount, of possibly several.
    fn mount_point(&self, dev: (u32, u32)) -> Option<&Path> {
        let mount = self.mounts.iter().find(|m| m.dev == dev)?;
        Some(&mount.point)
    }

    /// For a whole disk: the first of its partitions in use.
    fn used_partition(&self, disk: &Path, depth: usize) -> Option<Refusal> {
        partitions(disk).iter().find_map(|part| {
            let how = self.use_of(part, depth)?;
            Some(Refusal::its(
                format!("its partition {}", name_of(part)),
                format!("is {how}"),
            ))
        })
    }

    /// For a partition: its disk in use, or another partition of the disk
    /// mounted. Conservative on purpose: a mkfs that goes wrong on
    /// one partition (a miscounted offset, a rewritten table) hurts the
    /// file system mounted next to it.
    fn used_neighbour(&self, node: &Path, disk: &Path, depth: usize) -> Option<Refusal> {
        if let Some(how) = self.use_of(disk, depth) {
            return Some(Refusal::its(
                format!("its disk {}", name_of(disk)),
                format!("is {how}"),
            ));
        }
        partitions(disk)
            .iter()
            .filter(|part| part.as_path() != node)
            .find_map(|part| {
                let point = self.mount_point(dev_of(part)?)?;
                Some(Refusal::its(
                    format!("{}, another partition of {},", name_of(part), name_of(disk)),
                    format!("is mounted on {}", point.display()),
                ))
            })
    }

    /// For a loop device (or a partition of one), what bars its backing,
    /// which a wipe writes through to: a backing device must pass the
    /// whole check, a backing file must not be in use. One whose backing
    /// the kernel did not tell is refused: what it would wipe is unknown.
    fn backing_refusal(&self, disk: &Path, depth: usize) -> Option<Refusal> {
        if !is_loop(disk) {
            return None;
        }
        let own = dev_of(disk);
        let Some(found) = self.loops.iter().find(|l| Some(l.dev) == own) else {
            return Some(Refusal::it(
                "is a loop device whose backing the kernel did not tell",
            ));
        };
        let Some(next) = depth.checked_sub(1) else {
            return Some(Refusal::it(format!(
                "is a loop device stacked over {MAX_STACK_DEPTH} deep"
            )));
        };
        match &found.backing {
            Backing::Device(dev) => self.backing_device_refusal(*dev, next),
            Backing::File { id, path } => self.backing_file_refusal(found.dev, *id, path, next),
        }
    }

    /// The whole check of block device `dev`, a loop device's backing,
    /// told of the loop device.
    fn backing_device_refusal(&self, dev: (u32, u32), depth: usize) -> Option<Refusal> {
        let Some(node) = self.node(dev) else {
            let (major, minor) = dev;
            return Some(Refusal::its(
                format!("its backing device {major}:{minor}"),
                "is not listed in sysfs",
            ));
        };
        let disk = whole_disk(node.clone());
        let why = self.refusal(&node, &disk, depth)?;
        Some(why.of_backing(&format!("/dev/{}", name_of(&node))))
    }

    /// Refuses loop device `own` when its backing file `id` (at `path`) is
    /// in use: swap, mounted as a source, or the image of another loop
    /// device in use (the same inode, whatever path that one was given).
    fn backing_file_refusal(
        &self,
        own: (u32, u32),
        id: FileId,
        path: &Path,
        depth: usize,
    ) -> Option<Refusal> {
        let subject = format!("its backing file {}", path.display());
        if self.swap_files.contains(&id) {
            return Some(Refusal::its(subject, "is an active swap file"));
        }
        if let Some(mounted) = self.file_mounts.iter().find(|m| m.file == id) {
            let rest = format!("is mounted on {}", mounted.point.display());
            return Some(Refusal::its(subject, rest));
        }
        let shares = |l: &LoopBacking| l.dev != own && l.file() == Some(id);
        let how = self.loop_in_use(shares, "the image of", depth)?;
        Some(Refusal::its(subject, format!("is {how}")))
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
    if let Some(why) = snapshot.refusal(&node, &disk, MAX_STACK_DEPTH) {
        return refuse(device, why.told());
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
fn mounted_devices(entries: &[MountEntry]) -> Vec<Mounted> {
    entries
        .iter()
        .filter_map(|m| {
            Some(Mounted {
                dev: block_device_number(m.dev, &m.source)?,
                point: m.mount_point.clone(),
            })
        })
        .collect()
}

/// The mounts whose source is a regular file, by the file's identity.
fn mounted_files(entries: &[MountEntry]) -> Vec<MountedFile> {
    entries
        .iter()
        .filter(|m| m.source.starts_with('/'))
        .filter_map(|m| {
            Some(MountedFile {
                file: file_id(Path::new(&m.source))?,
                point: m.mount_point.clone(),
            })
        })
        .collect()
}

/// The paths listed in /proc/swaps (its first column, after a header
/// line, escaped like mountinfo paths): block devices and files.
fn swap_paths(proc_swaps: &[u8]) -> impl Iterator<Item = PathBuf> + '_ {
    proc_swaps
        .split(|&b| b == b'\n')
        .skip(1)
        .filter_map(|line| line.split(u8::is_ascii_whitespace).next())
        .filter(|name| !name.is_empty())
        .map(|name| PathBuf::from(OsStr::from_bytes(&decode_octal_escapes(name))))
}

/// Device numbers of the block devices listed in /proc/swaps.
fn swap_devices(proc_swaps: &[u8]) -> Vec<(u32, u32)> {
    swap_paths(proc_swaps)
        .filter_map(|path| block_node_number(&path))
        .collect()
}

/// Identities of the swap files listed in /proc/swaps.
fn swap_files(proc_swaps: &[u8]) -> Vec<FileId> {
    swap_paths(proc_swaps)
        .filter_map(|path| file_id(&path))
        .collect()
}

/// The identity of the regular file at `path`; None for anything else.
fn file_id(path: &Path) -> Option<FileId> {
    let stat = rustix::fs::stat(path).ok()?;
    let regular = FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile;
    regular.then_some(FileId {
        dev: stat.st_dev,
        ino: stat.st_ino,
    })
}

/// The attached loop devices under `sysfs`/block and what backs each, as
/// the kernel tells; one it does not is left out.
fn attached_loops(sysfs: &Path) -> Vec<LoopBacking> {
    let Ok(entries) = std::fs::read_dir(sysfs.join("block")) else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|node| is_loop(node))
        .filter_map(|node| {
            let shown = read_sysfs(&node.join("loop/backing_file"))?;
            let dev = dev_of(&node)?;
            let backing = loop_backing(&name_of(&node), dev, PathBuf::from(shown))?;
            Some(LoopBacking { dev, backing })
        })
        .collect()
}

/// What backs loop device `name` (number `dev`), asked of the kernel
/// through its /dev node rather than read from the path sysfs `shown`,
/// which may name another file by now. The node must be `dev` itself, so
/// a stale /dev entry can't answer for another device.
fn loop_backing(name: &str, dev: (u32, u32), shown: PathBuf) -> Option<Backing> {
    let device = LoopDevice::open(name).filter(|device| device.dev == dev)?;
    Some(match device.backing {
        loopdev::Backing::File(id) => Backing::File { id, path: shown },
        loopdev::Backing::Device(number) => Backing::Device(number),
    })
}

/// Whether the sysfs block node `disk` is a loop device, by its kernel name.
fn is_loop(disk: &Path) -> bool {
    name_of(disk).starts_with("loop")
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
/// Loop devices are not among them: the kernel links no holder for
/// those, hence [`Snapshot::loops`].
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
    struct FakeSys(tempfile::TempDir, std::cell::RefCell<Vec<LoopBacking>>);

    impl FakeSys {
        fn new() -> Self {
            FakeSys(tempfile::tempdir().expect("tempdir"), Default::default())
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

        /// An attached loop device on an image of its own.
        fn attached_loop(&self, name: &str, dev: (u32, u32)) -> PathBuf {
            self.loop_on(
                name,
                dev,
                image(u64::from(dev.1) + 1000, "/var/tmp/disk.img"),
            )
        }

        /// An attached loop device on `backing`, as sysfs and the kernel
        /// tell it.
        fn loop_on(&self, name: &str, dev: (u32, u32), backing: Backing) -> PathBuf {
            let node = self.disk(name, dev);
            let shown = match &backing {
                Backing::File { path, .. } => path.display().to_string(),
                Backing::Device(dev) => format!("/dev/block/{}:{}", dev.0, dev.1),
            };
            write_file(&node.join("loop/backing_file"), &format!("{shown}\n"));
            self.1.borrow_mut().push(LoopBacking { dev, backing });
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
                file_mounts: Vec::new(),
                swap_files: Vec::new(),
                loops: self.1.borrow().clone(),
                sysfs: self.0.path().to_path_buf(),
            }
        }
    }

    /// A file on the root file system, known by inode `ino`, at `path`.
    fn image(ino: u64, path: &str) -> Backing {
        Backing::File {
            id: FileId { dev: 0xfe00, ino },
            path: PathBuf::from(path),
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
            id: 0,
            dev,
            mount_point: PathBuf::from(point),
            fs_type: String::new(),
            source: source.to_string_lossy().into_owned(),
            options: String::new(),
        };
        let mounted = mounted_devices(&[
            entry(VDA, "/", Path::new("/dev/vda")),
            entry((0, 23), "/dev/shm", Path::new("tmpfs")),
            entry((0, 45), "/mnt/btrfs", &by_uuid),
        ]);
        let devs: Vec<_> = mounted.iter().map(|m| (m.dev, m.point.clone())).collect();
        assert_eq!(devs, [(VDA, "/".into()), ((7, 200), "/mnt/btrfs".into())]);
    }

    #[test]
    fn swap_devices_and_files_are_told_apart_in_proc_swaps() {
        let Some((dir, node)) = block_node("swap disk") else {
            return;
        };
        let escaped = dir.path().join(r"swap\040disk");
        let file = dir.path().join("swap file");
        std::fs::write(&file, b"").expect("write swap file");
        let proc_swaps = format!(
            "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
             {}\tpartition\t16380\t\t0\t\t-2\n\
             {}                               file\t\t1024\t\t0\t\t-3\n",
            escaped.display(),
            dir.path().join(r"swap\040file").display()
        );
        assert!(node.exists());
        assert_eq!(swap_devices(proc_swaps.as_bytes()), [(7, 200)]);
        assert_eq!(swap_files(proc_swaps.as_bytes()), [file_id(&file).unwrap()]);
        assert_eq!(swap_devices(b""), []);
    }

    #[test]
    fn mounted_files_are_the_regular_files_mounted_as_sources() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("fs.erofs");
        std::fs::write(&file, b"image").expect("write image");
        let entry = |source: &Path, point: &str| MountEntry {
            id: 0,
            dev: (0, 50),
            mount_point: PathBuf::from(point),
            fs_type: String::new(),
            source: source.to_string_lossy().into_owned(),
            options: String::new(),
        };
        let mounted = mounted_files(&[
            entry(Path::new("tmpfs"), "/dev/shm"),
            entry(dir.path(), "/mnt/bind"),
            entry(&file, "/mnt/erofs"),
        ]);
        let file = file_id(&file).unwrap();
        assert_eq!(
            mounted,
            [MountedFile {
                file,
                point: PathBuf::from("/mnt/erofs")
            }]
        );
    }

    #[test]
    fn one_device_named_twice_is_one() {
        let named = |path: &str, dev| Wipeable {
            path: PathBuf::from(path),
            name: String::new(),
            dev,
            disk: String::new(),
        };
        let paths = distinct_paths([
            named("/dev/sdb", SDB),
            named("/dev/sdb1", SDB1),
            named("/dev/sdb", SDB),
            named("/dev/shm/sdb-node", SDB),
        ]);
        assert_eq!(
            paths,
            [PathBuf::from("/dev/sdb"), PathBuf::from("/dev/sdb1")]
        );
    }

    // -- loop devices, followed down to their backing ---------------------

    const LOOP3: (u32, u32) = (7, 3);
    const LOOP4: (u32, u32) = (7, 4);
    const LOOP5: (u32, u32) = (7, 5);

    #[test]
    fn a_loop_device_on_a_device_in_use_is_refused_as_that_device() {
        let sys = two_disks();
        sys.loop_on("loop3", LOOP3, Backing::Device(VDA));
        sys.loop_on("loop4", LOOP4, Backing::Device(SDB1));
        sys.loop_on("loop5", LOOP5, Backing::Device(SDB2));
        sys.loop_on("loop6", (7, 6), Backing::Device(SDB));
        let snapshot = sys.snapshot(&[ROOT_ON_VDA, (SDB1, "/mnt/x")], &[]);
        assert_eq!(
            refusal(&snapshot, "loop3", LOOP3),
            "--wipe /dev/loop3: its backing device /dev/vda holds the root file system /"
        );
        assert_eq!(
            refusal(&snapshot, "loop4", LOOP4),
            "--wipe /dev/loop4: its backing device /dev/sdb1 is mounted on /mnt/x"
        );
        assert_eq!(
            refusal(&snapshot, "loop5", LOOP5),
            "--wipe /dev/loop5: its backing device /dev/sdb2: sdb1, another partition of sdb, is mounted on /mnt/x"
        );
        assert_eq!(
            refusal(&snapshot, "loop6", (7, 6)),
            "--wipe /dev/loop6: its backing device /dev/sdb: its partition sdb1 is mounted on /mnt/x"
        );
        let swap = sys.snapshot(&[ROOT_ON_VDA], &[SDB2]);
        assert_eq!(
            refusal(&swap, "loop5", LOOP5),
            "--wipe /dev/loop5: its backing device /dev/sdb2 is in use as swap"
        );
    }

    #[test]
    fn a_loop_device_on_a_loop_device_in_use_is_refused_all_the_way_down() {
        let sys = two_disks();
        sys.loop_on("loop3", LOOP3, image(1, "/x/a.img"));
        sys.loop_on("loop4", LOOP4, Backing::Device(LOOP3));
        sys.loop_on("loop5", LOOP5, Backing::Device(LOOP4));
        let snapshot = sys.snapshot(&[ROOT_ON_VDA, (LOOP3, "/mnt/a")], &[]);
        assert_eq!(
            refusal(&snapshot, "loop4", LOOP4),
            "--wipe /dev/loop4: its backing device /dev/loop3 is mounted on /mnt/a"
        );
        assert_eq!(
            refusal(&snapshot, "loop5", LOOP5),
            "--wipe /dev/loop5: its backing device /dev/loop4: its backing device /dev/loop3 is mounted on /mnt/a"
        );
    }

    #[test]
    fn a_loop_device_on_the_image_of_one_in_use_is_refused_by_inode() {
        let sys = two_disks();
        sys.loop_on("loop3", LOOP3, image(1, "/x/a.img"));
        // The same file through a hard link: another path, the same inode.
        sys.loop_on("loop4", LOOP4, image(1, "/y/link.img"));
        sys.loop_on("loop5", LOOP5, Backing::Device(LOOP4));
        // Another file at loop3's path (a.img replaced since): not shared.
        sys.loop_on("loop6", (7, 6), image(2, "/x/a.img"));
        let snapshot = sys.snapshot(&[ROOT_ON_VDA, (LOOP3, "/mnt/a")], &[]);
        let image_in_use =
            "its backing file /y/link.img is the image of /dev/loop3, which is mounted on /mnt/a";
        assert_eq!(
            refusal(&snapshot, "loop4", LOOP4),
            format!("--wipe /dev/loop4: {image_in_use}")
        );
        assert_eq!(
            refusal(&snapshot, "loop5", LOOP5),
            format!("--wipe /dev/loop5: its backing device /dev/loop4: {image_in_use}")
        );
        assert_eq!(check(&snapshot, "loop6", (7, 6)).unwrap().name, "loop6");
    }

    #[test]
    fn an_image_in_use_through_a_partition_of_its_loop_device_is_refused() {
        let sys = two_disks();
        let loop3 = sys.loop_on("loop3", LOOP3, image(1, "/x/a.img"));
        sys.partition(&loop3, "loop3p1", (259, 0));
        sys.loop_on("loop4", LOOP4, image(1, "/x/a.img"));
        let snapshot = sys.snapshot(&[ROOT_ON_VDA, ((259, 0), "/mnt/p")], &[]);
        assert_eq!(
            refusal(&snapshot, "loop4", LOOP4),
            "--wipe /dev/loop4: its backing file /x/a.img is the image of /dev/loop3: its partition loop3p1 is mounted on /mnt/p"
        );
    }

    #[test]
    fn a_loop_device_on_a_swap_file_or_a_mounted_file_is_refused() {
        let sys = two_disks();
        sys.loop_on("loop3", LOOP3, image(1, "/x/swap.img"));
        sys.loop_on("loop4", LOOP4, image(2, "/x/fs.erofs"));
        let mut snapshot = sys.snapshot(&[ROOT_ON_VDA], &[]);
        snapshot.swap_files = vec![FileId {
            dev: 0xfe00,
            ino: 1,
        }];
        snapshot.file_mounts = vec![MountedFile {
            file: FileId {
                dev: 0xfe00,
                ino: 2,
            },
            point: PathBuf::from("/mnt/erofs"),
        }];
        assert_eq!(
            refusal(&snapshot, "loop3", LOOP3),
            "--wipe /dev/loop3: its backing file /x/swap.img is an active swap file"
        );
        assert_eq!(
            refusal(&snapshot, "loop4", LOOP4),
            "--wipe /dev/loop4: its backing file /x/fs.erofs is mounted on /mnt/erofs"
        );
    }

    #[test]
    fn the_backing_of_a_loop_device_in_use_is_refused() {
        let sys = two_disks();
        sys.loop_on("loop3", LOOP3, Backing::Device(SDB1));
        sys.loop_on("loop4", LOOP4, Backing::Device(LOOP3));
        let snapshot = sys.snapshot(&[ROOT_ON_VDA, (LOOP4, "/mnt/y")], &[]);
        let above = "the backing of /dev/loop3, which is the backing of /dev/loop4, which is mounted on /mnt/y";
        assert_eq!(
            refusal(&snapshot, "sdb1", SDB1),
            format!("--wipe /dev/sdb1: it is {above}")
        );
        assert_eq!(
            refusal(&snapshot, "sdb", SDB),
            format!("--wipe /dev/sdb: its partition sdb1 is {above}")
        );
        // As with swap on sdb1, only a mounted neighbour bars sdb2.
        assert_eq!(check(&snapshot, "sdb2", SDB2).unwrap().name, "sdb2");
    }

    #[test]
    fn an_unused_loop_stack_is_wipeable() {
        let sys = two_disks();
        sys.loop_on("loop3", LOOP3, image(1, "/x/a.img"));
        sys.loop_on("loop4", LOOP4, Backing::Device(LOOP3));
        sys.loop_on("loop5", LOOP5, image(1, "/x/a.img"));
        sys.loop_on("loop6", (7, 6), Backing::Device(SDB));
        let snapshot = sys.snapshot(&[ROOT_ON_VDA], &[]);
        for (name, dev) in [("loop3", LOOP3), ("loop4", LOOP4), ("loop5", LOOP5)] {
            assert_eq!(check(&snapshot, name, dev).unwrap().name, name);
        }
        assert_eq!(check(&snapshot, "loop6", (7, 6)).unwrap().disk, "loop6");
        assert_eq!(check(&snapshot, "sdb", SDB).unwrap().disk, "sdb");
    }

    #[test]
    fn a_loop_device_whose_backing_is_unknown_or_too_deep_is_refused() {
        let sys = two_disks();
        // Attached in sysfs, but the kernel told no backing.
        let loop3 = sys.disk("loop3", LOOP3);
        write_file(&loop3.join("loop/backing_file"), "/x/a.img\n");
        // A cycle the kernel would not make: the walk still ends.
        sys.loop_on("loop4", LOOP4, Backing::Device(LOOP5));
        sys.loop_on("loop5", LOOP5, Backing::Device(LOOP4));
        sys.loop_on("loop6", (7, 6), Backing::Device((7, 99)));
        let snapshot = sys.snapshot(&[ROOT_ON_VDA], &[]);
        assert_eq!(
            refusal(&snapshot, "loop3", LOOP3),
            "--wipe /dev/loop3: it is a loop device whose backing the kernel did not tell"
        );
        let text = refusal(&snapshot, "loop4", LOOP4);
        assert!(text.contains("stacked over 8 deep"), "{text}");
        assert_eq!(
            refusal(&snapshot, "loop6", (7, 6)),
            "--wipe /dev/loop6: its backing device 7:99 is not listed in sysfs"
        );
    }
}

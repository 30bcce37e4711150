//! The block devices under a target: the ones whose counters in
//! /proc/diskstats count its I/O (`measure::devices` reads them around
//! every timed phase). From the target's mount to:
//!
//! - its device (a partition is itself: diskstats has a line per
//!   partition), or every device of a multi-device btrfs
//!   (`/sys/fs/btrfs/<uuid>/devices/`): the *counted* devices, whose sum is
//!   what the target's I/O made the storage do;
//! - beneath those, for evidence: md and dm members (`slaves/`), and a loop
//!   device's backing file's devices, resolved the same way (a loop device
//!   whose image lives on another loop device gives both).
//!
//! tmpfs, ramfs, proc and every other file system without a block device
//! resolve to nothing: "no device". A network file system has no device
//! but a [`NetworkMount`]: NFS's own client counters of the mount, or for
//! the others the host's network interfaces, and the link speed.
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::result::env::{BlockDev, Network, NetworkMount};

use super::env::block::{MAX_STACK_DEPTH, block_device_number, read_sysfs};
use super::env::mounts::{parse_majmin, read_mountinfo, select_mount};

/// A link speed and what says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub bytes_per_s: u64,
    pub source: String,
}

/// The link speed the user gave (`--link-speed`): it replaces what the
/// interfaces say, for every network mount of the run.
static GIVEN_LINK: OnceLock<u64> = OnceLock::new();

/// Takes `--link-speed` (bytes/s) for every network mount of this process.
pub fn set_link_speed(bytes_per_s: u64) {
    let _ = GIVEN_LINK.set(bytes_per_s);
}

/// File systems whose data crosses a network, besides NFS.
const NETWORK_FS: &[&str] = &[
    "cifs",
    "smb3",
    "smbfs",
    "ceph",
    "9p",
    "afs",
    "lustre",
    "beegfs",
    "gpfs",
    "glusterfs",
    "fuse.glusterfs",
    "fuse.sshfs",
    "fuse.smbnetfs",
    "fuse.s3fs",
    "fuse.ceph",
];

/// The counters of the network file system at `path`; None for a local
/// one.
pub fn network(path: &Path) -> Option<NetworkMount> {
    let canonical = std::fs::canonicalize(path).ok()?;
    let dev = rustix::fs::stat(&canonical).ok()?.st_dev;
    let st_dev = (rustix::fs::major(dev), rustix::fs::minor(dev));
    let mounts = read_mountinfo();
    let mount = select_mount(&mounts, st_dev, &canonical)?;
    let counters = network_counters(&mount.fs_type, &mount.mount_point)?;
    let link = match GIVEN_LINK.get() {
        Some(&bytes_per_s) => Some(Link {
            bytes_per_s,
            source: "given with --link-speed".into(),
        }),
        None => link_speed(Path::new("/sys/class/net"), shaper_rate),
    };
    Some(NetworkMount {
        counters,
        link_bytes_per_s: link.as_ref().map(|l| l.bytes_per_s),
        link_source: link.map(|l| l.source),
    })
}

/// How a mount of `fs_type` at `mount_point` is counted; None when it is
/// local.
fn network_counters(fs_type: &str, mount_point: &Path) -> Option<Network> {
    match fs_type {
        "nfs" | "nfs4" => Some(Network::Nfs {
            mount_point: mount_point.to_string_lossy().into_owned(),
        }),
        other if NETWORK_FS.contains(&other) => Some(Network::Interfaces),
        _ => None,
    }
}

/// The fastest link among the interfaces under `net` (`/sys/class/net`)
/// that are up, lo left out. An interface's speed is what its device
/// reports (sysfs `speed`), or the rate its root qdisc shapes it to
/// (`shaped`, by name), whichever is lower. A virtual interface (a veth,
/// a bridge, a tunnel: no `device` in sysfs) reports a speed it does not
/// have (a veth says 10 Gb/s and carries what the CPUs copy), so only its
/// shaping counts; unshaped, it says nothing, and the physical interface
/// beneath it, if any, bounds its traffic.
fn link_speed(net: &Path, shaped: impl Fn(&str) -> Option<u64>) -> Option<Link> {
    let interfaces = std::fs::read_dir(net).ok()?;
    let links = interfaces.flatten().filter_map(|interface| {
        let dir = interface.path();
        let name = interface.file_name().to_string_lossy().into_owned();
        let up = read_sysfs(&dir.join("operstate")).is_some_and(|s| s.trim() == "up");
        if name == "lo" || !up {
            return None;
        }
        let reported = dir
            .join("device")
            .exists()
            .then(|| read_sysfs(&dir.join("speed"))?.trim().parse::<i64>().ok())
            .flatten()
            .filter(|&mbit| mbit > 0)
            .map(|mbit| mbit as u64 * 125_000);
        match (reported, shaped(&name)) {
            (Some(device), Some(shaper)) if shaper < device => Some(shaped_link(&name, shaper)),
            (Some(device), _) => Some(Link {
                bytes_per_s: device,
                source: format!("{name}, {} Mb/s as its device reports", device / 125_000),
            }),
            (None, Some(shaper)) => Some(shaped_link(&name, shaper)),
            (None, None) => None,
        }
    });
    links.max_by_key(|link| link.bytes_per_s)
}

fn shaped_link(name: &str, bytes_per_s: u64) -> Link {
    Link {
        bytes_per_s,
        source: format!("{name}, shaped by tbf to {} Mbit/s", bytes_per_s / 125_000),
    }
}

/// The rate a token-bucket filter at the root of `interface` shapes its
/// traffic to, in bytes/s, as `tc -j qdisc show` says; None when it has
/// none, or tc (iproute2) is missing.
fn shaper_rate(interface: &str) -> Option<u64> {
    let output = std::process::Command::new("tc")
        .args(["-j", "qdisc", "show", "dev", interface])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    root_tbf_rate(&String::from_utf8_lossy(&output.stdout))
}

/// The root tbf's `rate` (bytes/s) in `tc -j qdisc show`'s `json`.
fn root_tbf_rate(json: &str) -> Option<u64> {
    let qdiscs: Vec<serde_json::Value> = serde_json::from_str(json).ok()?;
    qdiscs
        .iter()
        .find(|q| q["kind"] == "tbf" && q["root"] == true)?["options"]["rate"]
        .as_u64()
}

/// The devices under `path`, counted ones first; empty for a file system
/// without a block device.
pub fn resolve(path: &Path) -> Vec<BlockDev> {
    let mut found = Vec::new();
    for dev in counted_devices(path) {
        add(&mut found, dev, true, false, MAX_STACK_DEPTH);
    }
    found
}

/// The device numbers the file system at `path` sits on directly.
fn counted_devices(path: &Path) -> Vec<(u32, u32)> {
    let Ok(stat) = rustix::fs::stat(path) else {
        // A loop device's image that was deleted: its directory's device.
        return path.parent().map(counted_devices).unwrap_or_default();
    };
    let st_dev = (
        rustix::fs::major(stat.st_dev),
        rustix::fs::minor(stat.st_dev),
    );
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mounts = read_mountinfo();
    let mount = select_mount(&mounts, st_dev, &canonical);
    let fs_dev = mount.map_or(st_dev, |m| m.dev);
    let source = mount.map_or("", |m| m.source.as_str());
    let Some(dev) = block_device_number(fs_dev, source) else {
        return Vec::new();
    };
    if mount.is_some_and(|m| m.fs_type == "btrfs") {
        let all = btrfs_devices(Path::new("/sys/fs/btrfs"), dev);
        if !all.is_empty() {
            return all;
        }
    }
    vec![dev]
}

/// Every device of the btrfs under `fs_root` (`/sys/fs/btrfs`) that has
/// `dev` among its devices.
fn btrfs_devices(fs_root: &Path, dev: (u32, u32)) -> Vec<(u32, u32)> {
    let Ok(filesystems) = std::fs::read_dir(fs_root) else {
        return Vec::new();
    };
    for fs in filesystems.flatten() {
        let Ok(entries) = std::fs::read_dir(fs.path().join("devices")) else {
            continue;
        };
        let devs: Vec<(u32, u32)> = entries
            .flatten()
            .filter_map(|entry| sysfs_dev(&entry.path()))
            .collect();
        if devs.contains(&dev) {
            return devs;
        }
    }
    Vec::new()
}

/// The major:minor in a sysfs block directory's `dev` file.
fn sysfs_dev(node: &Path) -> Option<(u32, u32)> {
    parse_majmin(&read_sysfs(&node.join("dev"))?)
}

/// `dev` and what lies beneath it, each device once; `backing` when it
/// holds a loop device's image.
fn add(found: &mut Vec<BlockDev>, dev: (u32, u32), counted: bool, backing: bool, depth: usize) {
    let Ok(node) = std::fs::canonicalize(format!("/sys/dev/block/{}:{}", dev.0, dev.1)) else {
        return;
    };
    if found.iter().any(|d| d.dev == dev) {
        return;
    }
    let name = node
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A disk that is itself a loop device is not the bottom of its chain.
    let image = loop_image(&node);
    found.push(BlockDev {
        name,
        dev,
        counted,
        backing: backing && image.is_none(),
    });
    let Some(below) = depth.checked_sub(1) else {
        return;
    };
    for member in members(&node) {
        add(found, member, false, false, below);
    }
    if let Some(file) = image {
        for dev in counted_devices(&file) {
            add(found, dev, false, true, below);
        }
    }
}

/// The image file of the loop device at sysfs `node` (or of the loop
/// device a partition at `node` is part of); None for other devices.
fn loop_image(node: &Path) -> Option<PathBuf> {
    let disk = super::env::block::whole_disk(node.to_path_buf());
    let file = read_sysfs(&disk.join("loop/backing_file"))?;
    Some(PathBuf::from(file.trim_end_matches(" (deleted)")))
}

/// The image files of the loop devices under the file system at `path`
/// (each device of a multi-device btrfs; each image of a chain of loop
/// devices), for dropping their pages from the host's cache.
pub fn loop_images(path: &Path) -> Vec<PathBuf> {
    let mut images = Vec::new();
    let mut below: Vec<(u32, u32)> = counted_devices(path);
    for _ in 0..MAX_STACK_DEPTH {
        let found: Vec<PathBuf> = below
            .iter()
            .filter_map(|(major, minor)| {
                let node = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
                loop_image(&node)
            })
            .collect();
        if found.is_empty() {
            break;
        }
        below = found
            .iter()
            .flat_map(|image| counted_devices(image))
            .collect();
        images.extend(found);
    }
    images
}

/// The devices an md or dm device is built on (`slaves/`), partitions
/// kept as themselves.
fn members(node: &Path) -> Vec<(u32, u32)> {
    let Ok(entries) = std::fs::read_dir(node.join("slaves")) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| sysfs_dev(&std::fs::canonicalize(entry.path()).ok()?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::env::block::tests::write_file;

    #[test]
    fn a_file_system_without_a_device_has_none() {
        // /proc is always there and never on a block device.
        assert!(resolve(Path::new("/proc")).is_empty());
        assert!(network(Path::new("/proc")).is_none(), "nor a network");
    }

    #[test]
    fn nfs_has_its_own_counters_other_network_file_systems_the_interfaces() {
        let nfs = network_counters("nfs4", Path::new("/mnt/nfs"));
        let mount_point = "/mnt/nfs".to_string();
        assert_eq!(nfs, Some(Network::Nfs { mount_point }));
        assert!(network_counters("nfs", Path::new("/x")).is_some());
        for fs in ["cifs", "ceph", "fuse.sshfs", "9p", "lustre"] {
            assert_eq!(
                network_counters(fs, Path::new("/x")),
                Some(Network::Interfaces),
                "{fs}"
            );
        }
        for fs in ["ext4", "xfs", "tmpfs", "fuse", "overlay"] {
            assert_eq!(network_counters(fs, Path::new("/x")), None, "{fs}");
        }
    }

    /// `net` with interfaces of (name, state, speed, physical).
    fn interfaces(net: &Path, list: &[(&str, &str, &str, bool)]) {
        for (name, state, speed, physical) in list {
            let dir = net.join(name);
            write_file(&dir.join("operstate"), &format!("{state}\n"));
            write_file(&dir.join("speed"), &format!("{speed}\n"));
            if *physical {
                std::fs::create_dir_all(dir.join("device")).unwrap();
            }
        }
    }

    fn unshaped(_: &str) -> Option<u64> {
        None
    }

    #[test]
    fn the_link_is_the_fastest_interface_that_is_up() {
        let net = tempfile::tempdir().unwrap();
        interfaces(
            net.path(),
            &[
                ("lo", "unknown", "-1", false),
                ("eth0", "up", "1000", true),
                ("eth1", "up", "10000", true),
                ("eth2", "down", "40000", true),
                ("veth0", "up", "10000", false),
                ("br0", "up", "-1", false),
            ],
        );
        let link = link_speed(net.path(), unshaped).unwrap();
        assert_eq!(link.bytes_per_s, 10_000 * 125_000, "10 Gb/s in bytes/s");
        assert_eq!(link.source, "eth1, 10000 Mb/s as its device reports");
        std::fs::remove_dir_all(net.path().join("eth1")).unwrap();
        std::fs::remove_dir_all(net.path().join("eth0")).unwrap();
        assert_eq!(
            link_speed(net.path(), unshaped),
            None,
            "a veth's 10 Gb/s is no link speed: no up interface says one"
        );
    }

    /// A network namespace's veth shaped to 1 GbE by tbf: the shaping is
    /// its speed; a physical link shaped below its speed is the shaped rate.
    #[test]
    fn a_shaped_interface_is_as_fast_as_its_shaper() {
        let net = tempfile::tempdir().unwrap();
        interfaces(
            net.path(),
            &[("veth1", "up", "10000", false), ("eth0", "up", "-1", true)],
        );
        let shaped = |name: &str| (name == "veth1").then_some(125_000_000);
        let link = link_speed(net.path(), shaped).unwrap();
        assert_eq!(link.bytes_per_s, 125_000_000);
        assert_eq!(link.source, "veth1, shaped by tbf to 1000 Mbit/s");
        interfaces(net.path(), &[("eth0", "up", "10000", true)]);
        let eth0_at_100 = |name: &str| (name == "eth0").then_some(12_500_000);
        let link = link_speed(net.path(), eth0_at_100).unwrap();
        assert_eq!(link.source, "eth0, shaped by tbf to 100 Mbit/s");
    }

    #[test]
    fn the_root_tbf_rate_is_read_from_tc_json() {
        let tbf = r#"[{"kind":"tbf","handle":"8001:","root":true,"refcnt":3,
            "options":{"rate":125000000,"burst":262125,"lat":5000}}]"#;
        assert_eq!(root_tbf_rate(tbf), Some(125_000_000));
        let other = r#"[{"kind":"noqueue","handle":"0:","root":true,"refcnt":2,"options":{}}]"#;
        assert_eq!(root_tbf_rate(other), None);
        assert_eq!(root_tbf_rate(""), None);
        assert_eq!(root_tbf_rate("not json"), None);
    }

    #[test]
    fn a_btrfs_is_found_by_any_of_its_devices() {
        let root = tempfile::tempdir().unwrap();
        for (fs, devs) in [("aaaa", ["8:16", "8:32"]), ("bbbb", ["7:1", "7:2"])] {
            for (i, dev) in devs.iter().enumerate() {
                write_file(
                    &root.path().join(format!("{fs}/devices/d{i}/dev")),
                    &format!("{dev}\n"),
                );
            }
        }
        let mut found = btrfs_devices(root.path(), (7, 2));
        found.sort();
        assert_eq!(found, [(7, 1), (7, 2)]);
        assert!(btrfs_devices(root.path(), (9, 9)).is_empty());
    }
}

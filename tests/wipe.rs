//! `storage::wipe::check_wipeable` on real block devices: loop devices the
//! tests make (mounted, unmounted, partitioned, swap, stacked on one another
//! or sharing an image) and the device under `/`; and `fsbench run --wipe`
//! itself, with a stand-in mkfs that tells whether it was reached. The loop
//! tests need root and skip without it; every loop device, mount and swap is
//! undone by a Drop guard, also when an assertion fails.
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Loop, Mount, Output, Sentinel, is_root, run, succeeds};
use fsbench::error::UsageError;
use fsbench::storage::wipe::{Wipeable, check_wipeable};

const MIB: u64 = 1 << 20;

fn skip_unless_root(test: &str) -> bool {
    let root = is_root();
    if !root {
        eprintln!("skipping {test}: needs root for loop devices");
    }
    !root
}

/// A sparse image of `size` bytes in a fresh directory under /var/tmp
/// (removed on drop, after the guards that use it).
fn sparse_image(size: u64) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("fsbench-wipe-")
        .tempdir_in("/var/tmp")
        .expect("tempdir in /var/tmp");
    let image = dir.path().join("disk.img");
    let file = std::fs::File::create(&image).expect("create image");
    file.set_len(size).expect("size image");
    (dir, image)
}

/// Swap activated on a device; deactivated on drop.
struct Swap(PathBuf);

impl Drop for Swap {
    fn drop(&mut self) {
        succeeds(Command::new("swapoff").arg(&self.0));
    }
}

fn mkfs_ext4(device: &Path) {
    assert!(
        succeeds(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(device)),
        "mkfs.ext4 {} failed",
        device.display()
    );
}

fn device_number(device: &Path) -> (u32, u32) {
    let stat = rustix::fs::stat(device).expect("stat device");
    (
        rustix::fs::major(stat.st_rdev),
        rustix::fs::minor(stat.st_rdev),
    )
}

/// The refusal of `device`: a usage error (exit 2) on one line that names
/// the device as given.
fn refusal(device: &Path) -> String {
    let err = check_wipeable(device).expect_err("must be refused");
    assert!(err.downcast_ref::<UsageError>().is_some(), "{err:#}");
    let text = format!("{err:#}");
    assert!(!text.contains('\n'), "{text}");
    let named = format!("--wipe {}: ", device.display());
    assert!(text.starts_with(&named), "{text}");
    text
}

#[test]
fn a_mounted_loop_device_is_refused_and_left_intact() {
    if skip_unless_root("a_mounted_loop_device_is_refused_and_left_intact") {
        return;
    }
    let (dir, image) = sparse_image(64 * MIB);
    let device = Loop::attach(&image, false);
    mkfs_ext4(&device.0);
    let point = dir.path().join("mnt");
    let _mount = Mount::new(&device.0, &point);
    let sentinel = Sentinel::plant(&point);

    let text = refusal(&device.0);
    assert!(
        text.ends_with(&format!("it is mounted on {}", point.display())),
        "{text}"
    );
    sentinel.assert_intact();
}

#[test]
fn an_unmounted_loop_device_is_wipeable_also_through_a_symlink() {
    if skip_unless_root("an_unmounted_loop_device_is_wipeable_also_through_a_symlink") {
        return;
    }
    let (dir, image) = sparse_image(64 * MIB);
    let device = Loop::attach(&image, false);
    mkfs_ext4(&device.0);
    let expected = Wipeable {
        path: device.0.clone(),
        name: device.name(),
        dev: device_number(&device.0),
        disk: device.name(),
    };
    assert_eq!(check_wipeable(&device.0).expect("wipeable"), expected);
    // Named through a link (as /dev/disk/by-id/... would be): the same device.
    let link = dir.path().join("by-id");
    std::os::unix::fs::symlink(&device.0, &link).expect("symlink");
    assert_eq!(check_wipeable(&link).expect("wipeable"), expected);
}

/// Waits for the partition nodes of `device` (p1, p2); asks the kernel
/// for them with partx when its own partition scan found none (kernels
/// built without partition table support).
fn partitions_of(device: &Loop) -> Option<[PathBuf; 2]> {
    let nodes = [1, 2].map(|n| PathBuf::from(format!("{}p{n}", device.0.display())));
    let appear = |nodes: &[PathBuf; 2]| {
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if nodes.iter().all(|n| n.exists()) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    };
    if appear(&nodes) {
        return Some(nodes);
    }
    succeeds(Command::new("partx").arg("-a").arg(&device.0));
    appear(&nodes).then_some(nodes)
}

#[test]
fn partitions_are_refused_while_a_neighbour_is_mounted() {
    if skip_unless_root("partitions_are_refused_while_a_neighbour_is_mounted") {
        return;
    }
    if !succeeds(Command::new("sfdisk").arg("--version")) {
        eprintln!("skipping: sfdisk (util-linux fdisk) is not installed");
        return;
    }
    let (dir, image) = sparse_image(64 * MIB);
    let mut sfdisk = Command::new("sfdisk")
        .arg("-q")
        .arg(&image)
        .stdin(Stdio::piped())
        .spawn()
        .expect("run sfdisk");
    std::io::Write::write_all(
        sfdisk.stdin.as_mut().expect("stdin"),
        b"label: dos\n,24M\n,\n",
    )
    .expect("write partition table");
    drop(sfdisk.stdin.take());
    assert!(sfdisk.wait().expect("sfdisk").success(), "sfdisk failed");
    let disk = Loop::attach(&image, true);
    let Some([part1, part2]) = partitions_of(&disk) else {
        eprintln!("skipping: no partitions appeared on {}", disk.0.display());
        return;
    };
    mkfs_ext4(&part1);
    let point = dir.path().join("mnt");
    let mount = Mount::new(&part1, &point);
    let (name, shown) = (disk.name(), point.display());

    let text = refusal(&disk.0);
    assert!(
        text.ends_with(&format!("its partition {name}p1 is mounted on {shown}")),
        "{text}"
    );
    let text = refusal(&part2);
    assert!(
        text.ends_with(&format!(
            "{name}p1, another partition of {name}, is mounted on {shown}"
        )),
        "{text}"
    );

    drop(mount);
    let wipeable = check_wipeable(&part2).expect("partition 2 wipeable once p1 is unmounted");
    assert_eq!(
        wipeable,
        Wipeable {
            path: part2.clone(),
            name: format!("{name}p2"),
            dev: device_number(&part2),
            disk: name.clone(),
        }
    );
    assert_eq!(check_wipeable(&disk.0).expect("disk wipeable").disk, name);
}

#[test]
fn a_loop_device_used_as_swap_is_refused() {
    if skip_unless_root("a_loop_device_used_as_swap_is_refused") {
        return;
    }
    let (_dir, image) = sparse_image(16 * MIB);
    let device = Loop::attach(&image, false);
    assert!(succeeds(Command::new("mkswap").arg(&device.0)), "mkswap");
    assert!(succeeds(Command::new("swapon").arg(&device.0)), "swapon");
    let _swap = Swap(device.0.clone());

    let text = refusal(&device.0);
    assert!(text.ends_with("it is in use as swap"), "{text}");
}

#[test]
fn what_is_not_a_block_device_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("disk.img");
    std::fs::write(&file, b"not a disk").expect("write file");
    let missing = dir.path().join("missing");
    let cases = [
        (Path::new("/dev/null"), "it is a character device"),
        (file.as_path(), "it is a regular file"),
        (dir.path(), "it is a directory"),
        (missing.as_path(), "it does not exist"),
    ];
    for (path, why) in cases {
        let text = refusal(path);
        assert!(text.contains(why), "{text}");
    }
    assert_eq!(std::fs::read(&file).expect("file kept"), b"not a disk");
}

/// The /dev source of the visible `/` mount, from mountinfo.
fn root_source() -> Option<PathBuf> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let line = mountinfo
        .lines()
        .rev()
        .find(|line| line.split(' ').nth(4) == Some("/"))?;
    let (_, after) = line.split_once(" - ")?;
    let source = after.split(' ').nth(1)?;
    source.starts_with("/dev/").then(|| PathBuf::from(source))
}

#[test]
fn the_device_under_root_is_refused() {
    let Some(source) = root_source().filter(|s| s.exists()) else {
        eprintln!("skipping: / is not on a /dev block device here");
        return;
    };
    let text = refusal(&source);
    assert!(text.contains("holds the root file system /"), "{text}");
}

/// A stand-in for mkfs, in a directory of its own with a configuration that
/// runs it and a tiny suite: it notes the device it is given, then fails
/// touching nothing, or (`passing`) makes an ext4 on it. What it noted tells
/// whether `fsbench run` reached mkfs, and on what.
struct StandIn {
    dir: tempfile::TempDir,
}

impl StandIn {
    fn new(passing: bool) -> StandIn {
        let dir = tempfile::Builder::new()
            .prefix("fsbench-wipe-mkfs-")
            .tempdir_in("/var/tmp")
            .expect("tempdir in /var/tmp");
        let then = match passing {
            true => r#"exec mkfs.ext4 -q -F "$1""#,
            false => "exit 1",
        };
        let log = dir.path().join("reached");
        let script = format!("#!/bin/sh\necho \"$1\" >> '{}'\n{then}\n", log.display());
        let program = dir.path().join("mkfs.standin");
        std::fs::write(&program, script).expect("write stand-in");
        std::fs::set_permissions(
            &program,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .expect("make stand-in executable");
        let configs = format!(
            "[[config]]\nname = \"wiped\"\nmkfs = \"{} {{dev}}\"\n",
            program.display()
        );
        std::fs::write(dir.path().join("configs.toml"), configs).expect("write configs");
        std::fs::write(
            dir.path().join("suite.toml"),
            "description = \"tiny\"\nrepeat = 1\n[[workload]]\nkind = \"io\"\n\
             args = [\"-s\", \"8m\", \"--duration\", \"0.3s\", \"-b\", \"64k\", \"--read\", \"0\", \"--warmup\", \"0\"]\n",
        )
        .expect("write suite");
        StandIn { dir }
    }

    /// `fsbench run --configs ... --wipe D` for each of `devices` (the
    /// configuration names no device: it goes on the one --wipe gives).
    fn run(&self, devices: &[&Path]) -> Output {
        let mut args: Vec<String> = ["run", "--suite", "suite.toml", "--configs", "configs.toml"]
            .iter()
            .map(|arg| match arg.ends_with(".toml") {
                true => self.dir.path().join(arg).display().to_string(),
                false => arg.to_string(),
            })
            .collect();
        for device in devices {
            args.extend(["--wipe".to_string(), device.display().to_string()]);
        }
        args.extend(["--allow-shell", "--no-save", "-q"].map(String::from));
        run(&args)
    }

    /// The devices mkfs was run on, in order.
    fn reached(&self) -> Vec<String> {
        let log = std::fs::read_to_string(self.dir.path().join("reached")).unwrap_or_default();
        log.lines().map(str::to_string).collect()
    }
}

/// `fsbench run --wipe device` with a stand-in mkfs: refused before mkfs,
/// with exit 2 and one line that names the device and says `why`.
fn assert_run_refused(device: &Path, why: &str) {
    let stand_in = StandIn::new(false);
    let out = stand_in.run(&[device]);
    let line = out.assert_error(2, &[&format!("--wipe {}: ", device.display())]);
    assert!(line.ends_with(why), "{line}\nwanted: {why}\n{out}");
    assert_eq!(stand_in.reached(), Vec::<String>::new(), "mkfs ran\n{out}");
}

#[test]
fn a_loop_device_on_a_mounted_device_is_refused_and_mkfs_never_runs() {
    if skip_unless_root("a_loop_device_on_a_mounted_device_is_refused_and_mkfs_never_runs") {
        return;
    }
    let (dir, image) = sparse_image(64 * MIB);
    let lower = Loop::attach(&image, false);
    mkfs_ext4(&lower.0);
    let point = dir.path().join("mnt");
    let _mount = Mount::new(&lower.0, &point);
    let sentinel = Sentinel::plant(&point);
    // `losetup /dev/loopM /dev/loopN`: a wipe of it writes over loopN's.
    let upper = Loop::attach(&lower.0, false);

    let why = format!(
        "its backing device {} is mounted on {}",
        lower.0.display(),
        point.display()
    );
    let text = refusal(&upper.0);
    assert!(text.ends_with(&why), "{text}");
    assert_run_refused(&upper.0, &why);
    sentinel.assert_intact();
}

#[test]
fn a_loop_device_on_the_image_of_a_mounted_one_is_refused_and_so_is_one_on_it() {
    if skip_unless_root(
        "a_loop_device_on_the_image_of_a_mounted_one_is_refused_and_so_is_one_on_it",
    ) {
        return;
    }
    let (dir, image) = sparse_image(64 * MIB);
    let mounted = Loop::attach(&image, false);
    mkfs_ext4(&mounted.0);
    let point = dir.path().join("mnt");
    let _mount = Mount::new(&mounted.0, &point);
    let sentinel = Sentinel::plant(&point);
    // The same image by another name: it is known by its inode.
    let link = dir.path().join("link.img");
    std::fs::hard_link(&image, &link).expect("hard link");
    let second = Loop::attach(&link, false);
    let third = Loop::attach(&second.0, false);

    let image_in_use = format!(
        "its backing file {} is the image of {}, which is mounted on {}",
        link.display(),
        mounted.0.display(),
        point.display()
    );
    let through = format!("its backing device {}: {image_in_use}", second.0.display());
    for (device, why) in [(&second.0, &image_in_use), (&third.0, &through)] {
        let text = refusal(device);
        assert!(text.ends_with(why.as_str()), "{text}");
        assert_run_refused(device, why);
    }
    sentinel.assert_intact();
}

#[test]
fn an_unused_loop_stack_is_wipeable_and_one_device_named_twice_is_one() {
    if skip_unless_root("an_unused_loop_stack_is_wipeable_and_one_device_named_twice_is_one") {
        return;
    }
    let (dir, image) = sparse_image(64 * MIB);
    let lower = Loop::attach(&image, false);
    let upper = Loop::attach(&lower.0, false);
    assert_eq!(
        check_wipeable(&upper.0).expect("upper wipeable").name,
        upper.name()
    );
    // The loop device on it is in use by nothing: no reason to refuse.
    assert_eq!(
        check_wipeable(&lower.0).expect("lower wipeable").name,
        lower.name()
    );

    // Named as a link and as its node: one device, where the configuration
    // that names none goes (two would be refused as ambiguous).
    let link = dir.path().join("by-id");
    std::os::unix::fs::symlink(&upper.0, &link).expect("symlink");
    let stand_in = StandIn::new(true);
    let out = stand_in.run(&[&link, &upper.0]);
    out.assert_success();
    assert_eq!(stand_in.reached(), [upper.0.display().to_string()], "{out}");
}

//! Environment probe: the host (kernel, CPU, memory) and each target file
//! system (mount, backing device, queue settings, capacity), embedded in every
//! result so numbers can be trusted and compared across machines and runs.
//!
//! Everything past the initial `stat` is best-effort: a missing or unreadable
//! /proc or /sys file gives `None` (shown as "-"), never an error.
pub(crate) mod block;
mod host;
pub(crate) mod mounts;
pub mod risk;
mod text;

use std::path::Path;

use anyhow::Context;

use crate::result::env::{HostEnv, TargetEnv};
use block::{block_device_number, probe_block_device};
pub use host::{dirty_limit_bytes, host_name, online_cpu_count, probe_host};
use mounts::{MountEntry, read_mountinfo, select_mount};
use risk::risks_of;
pub use text::render_text;

/// Magic numbers of file systems that live in RAM (statfs f_type).
const TMPFS_MAGIC: u32 = 0x0102_1994;
const RAMFS_MAGIC: u32 = 0x8584_58f6;

/// Whether the file system of `fd` lives in RAM (tmpfs, ramfs): its data
/// is always in memory, so even O_DIRECT or a dropped cache reads RAM.
pub fn in_memory(fd: std::os::fd::BorrowedFd<'_>) -> bool {
    rustix::fs::fstatfs(fd).is_ok_and(|s| {
        let kind = s.f_type as u32;
        kind == TMPFS_MAGIC || kind == RAMFS_MAGIC
    })
}

/// Stands in for a text field the kernel left empty or we could not read.
const UNKNOWN: &str = "unknown";

/// Describes the file system and device `path` lives on. Fails only if
/// `path` can't be stat'ed or statvfs'ed; the rest is best-effort.
pub fn probe_target(path: &Path) -> anyhow::Result<TargetEnv> {
    let stat = rustix::fs::stat(path).with_context(|| format!("cannot stat {}", path.display()))?;
    let vfs =
        rustix::fs::statvfs(path).with_context(|| format!("cannot statvfs {}", path.display()))?;
    // Canonical, so matching against mount points isn't fooled by symlinks or "..".
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let st_dev = (
        rustix::fs::major(stat.st_dev),
        rustix::fs::minor(stat.st_dev),
    );

    let mounts = read_mountinfo();
    let mount = select_mount(&mounts, st_dev, &canonical);
    let fs_dev = mount.map_or(st_dev, |m| m.dev);
    let source = mount.map_or("", |m| m.source.as_str());
    let block = block_device_number(fs_dev, source)
        .and_then(probe_block_device)
        .unwrap_or_default();
    let text_of = |field: fn(&MountEntry) -> &str| mount.map_or(UNKNOWN, field).to_string();

    let mut env = TargetEnv {
        path: canonical.to_string_lossy().into_owned(),
        mount_point: mount.map_or(UNKNOWN.to_string(), |m| {
            m.mount_point.to_string_lossy().into_owned()
        }),
        fs_type: text_of(|m| m.fs_type.as_str()),
        mount_options: text_of(|m| m.options.as_str()),
        source: text_of(|m| m.source.as_str()),
        loop_backing_file: block.loop_backing_file,
        block_device: block.name,
        rotational: block.rotational,
        scheduler: block.scheduler,
        write_cache: block.write_cache,
        raid_level: block.raid_level,
        device_facts: block.facts,
        total_bytes: vfs.f_blocks.saturating_mul(vfs.f_frsize),
        free_bytes: vfs.f_bavail.saturating_mul(vfs.f_frsize),
        total_inodes: vfs.f_files,
        free_inodes: vfs.f_ffree,
        risks: Vec::new(),
        devices: crate::storage::devices::resolve(&canonical),
        network: crate::storage::devices::network(&canonical),
    };
    env.risks = risks_of(&env, Path::new("/proc/fs/jbd2"));
    Ok(env)
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;
    use std::path::PathBuf;

    use super::*;

    const MIB: u64 = 1024 * 1024;

    pub(super) fn sample_host() -> HostEnv {
        HostEnv {
            hostname: "box".into(),
            kernel: "6.1.0-18-amd64".into(),
            kernel_version: "#1 SMP".into(),
            os: None,
            arch: "x86_64".into(),
            cpu_model: Some("Xeon".into()),
            cpu_count: 4,
            ram_bytes: 16 * 1024 * MIB,
        }
    }

    pub(super) fn sample_target() -> TargetEnv {
        TargetEnv {
            path: "/mnt/t".into(),
            mount_point: "/mnt/t".into(),
            fs_type: "tmpfs".into(),
            mount_options: "rw,size=16384k".into(),
            source: "tmpfs".into(),
            loop_backing_file: None,
            block_device: None,
            rotational: Some(false),
            scheduler: None,
            write_cache: None,
            raid_level: None,
            device_facts: None,
            total_bytes: 16 * MIB,
            free_bytes: 16 * MIB - 512 * 1024,
            total_inodes: 1000,
            free_inodes: 999,
            risks: Vec::new(),
            devices: Vec::new(),
            network: None,
        }
    }

    #[test]
    fn envs_round_trip_through_json() {
        let target = sample_target();
        let json = serde_json::to_string(&target).expect("serialize");
        assert_eq!(
            serde_json::from_str::<TargetEnv>(&json).expect("deserialize"),
            target
        );
        let host = sample_host();
        let json = serde_json::to_string(&host).expect("serialize");
        assert_eq!(
            serde_json::from_str::<HostEnv>(&json).expect("deserialize"),
            host
        );
    }

    // -- this machine ----------------------------------------------------------

    #[test]
    fn host_probe_describes_this_machine() {
        let host = probe_host();
        assert!(!host.kernel.is_empty() && host.kernel != UNKNOWN);
        assert!(!host.arch.is_empty() && host.arch != UNKNOWN);
        assert!(host.cpu_count >= 1);
        assert!(host.ram_bytes > 0);
    }

    #[test]
    fn missing_path_is_an_error() {
        let err = probe_target(Path::new("/nonexistent/fsbench-env-probe")).expect_err("must fail");
        assert!(format!("{err:#}").contains("/nonexistent/fsbench-env-probe"));
    }

    #[test]
    fn root_is_its_own_mount_point() {
        let target = probe_target(Path::new("/")).expect("/ can be probed");
        assert_eq!(target.path, "/");
        assert_eq!(target.mount_point, "/");
        assert_ne!(target.fs_type, UNKNOWN);
        assert!(target.total_bytes > 0);
    }

    // -- real mounts (root only) -----------------------------------------------

    use std::process::Command;

    fn skip_unless_root(test: &str) -> bool {
        let root = rustix::process::geteuid().is_root();
        if !root {
            eprintln!("skipping {test}: needs root to mount file systems");
        }
        !root
    }

    fn run(program: &str, args: &[&OsStr]) -> bool {
        Command::new(program)
            .args(args)
            .status()
            .is_ok_and(|s| s.success())
    }

    /// A fresh directory under the temp dir, removed (with contents) on drop.
    pub(super) struct ScratchDir(pub(super) PathBuf);

    impl ScratchDir {
        pub(super) fn new(name: &str) -> Self {
            let dir =
                std::env::temp_dir().join(format!("fsbench-env-{}-{name}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("create scratch dir");
            ScratchDir(std::fs::canonicalize(&dir).expect("canonical scratch dir"))
        }
    }

    impl Drop for ScratchDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// Unmounts on drop, lazily if busy, and detaches any loop device still
    /// bound to `loop_image`, so a failing assertion leaves nothing behind.
    struct MountGuard {
        point: PathBuf,
        loop_image: Option<PathBuf>,
    }

    impl Drop for MountGuard {
        fn drop(&mut self) {
            if !run("umount", &[self.point.as_os_str()]) {
                run("umount", &[OsStr::new("-l"), self.point.as_os_str()]);
            }
            let Some(image) = &self.loop_image else {
                return;
            };
            let Ok(out) = Command::new("losetup")
                .args([OsStr::new("-j"), image.as_os_str()])
                .output()
            else {
                return;
            };
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                if let Some((device, _)) = line.split_once(':') {
                    run("losetup", &[OsStr::new("-d"), OsStr::new(device)]);
                }
            }
        }
    }

    fn mount_tmpfs(point: &Path) -> MountGuard {
        std::fs::create_dir_all(point).expect("create mount point");
        let args = ["-t", "tmpfs", "-o", "size=16m", "tmpfs"].map(OsStr::new);
        assert!(
            run("mount", &[&args[..], &[point.as_os_str()]].concat()),
            "mount -t tmpfs on {} failed",
            point.display()
        );
        MountGuard {
            point: point.to_path_buf(),
            loop_image: None,
        }
    }

    #[test]
    fn real_tmpfs_mount_with_space_in_path() {
        if skip_unless_root("real_tmpfs_mount_with_space_in_path") {
            return;
        }
        let scratch = ScratchDir::new("tmpfs");
        // The space makes mountinfo escape the mount point as "\040".
        let point = scratch.0.join("mnt with space");
        let _mounted = mount_tmpfs(&point);
        std::fs::create_dir(point.join("sub")).expect("mkdir in tmpfs");

        let target = probe_target(&point.join("sub")).expect("probe tmpfs");
        assert_eq!(target.fs_type, "tmpfs");
        assert_eq!(target.source, "tmpfs");
        assert_eq!(target.mount_point, point.to_string_lossy());
        assert_eq!(target.path, point.join("sub").to_string_lossy());
        assert_eq!(target.total_bytes, 16 * MIB);
        assert!(target.free_bytes <= target.total_bytes);
        assert!(target.total_inodes > 0);
        assert!(
            target.mount_options.split(',').any(|o| o == "size=16384k"),
            "{}",
            target.mount_options
        );
        assert!(
            target.mount_options.starts_with("rw,"),
            "{}",
            target.mount_options
        );
        assert_eq!(target.block_device, None);
        assert_eq!(target.rotational, None);
        assert_eq!(target.scheduler, None);
        assert_eq!(target.loop_backing_file, None);
    }

    #[test]
    fn real_bind_mount_reports_the_bind_point() {
        if skip_unless_root("real_bind_mount_reports_the_bind_point") {
            return;
        }
        let scratch = ScratchDir::new("bind");
        let original = scratch.0.join("orig");
        let _mounted = mount_tmpfs(&original);
        std::fs::create_dir(original.join("inner")).expect("mkdir in tmpfs");
        let bind = scratch.0.join("bind");
        std::fs::create_dir(&bind).expect("create bind point");
        assert!(run(
            "mount",
            &[
                OsStr::new("--bind"),
                original.join("inner").as_os_str(),
                bind.as_os_str()
            ]
        ));
        let _bound = MountGuard {
            point: bind.clone(),
            loop_image: None,
        };

        // Same device at two mount points: each path reports the one it is reached through.
        let via_bind = probe_target(&bind).expect("probe bind");
        assert_eq!(via_bind.mount_point, bind.to_string_lossy());
        assert_eq!(via_bind.fs_type, "tmpfs");
        let via_original = probe_target(&original.join("inner")).expect("probe original");
        assert_eq!(via_original.mount_point, original.to_string_lossy());
    }

    #[test]
    fn real_ext4_on_loop_device() {
        if skip_unless_root("real_ext4_on_loop_device") {
            return;
        }
        let scratch = ScratchDir::new("ext4");
        let image = scratch.0.join("fs.img");
        let file = std::fs::File::create(&image).expect("create image");
        file.set_len(64 * MIB).expect("size image");
        drop(file);
        assert!(
            run(
                "mkfs.ext4",
                &[OsStr::new("-q"), OsStr::new("-F"), image.as_os_str()]
            ),
            "mkfs.ext4 failed"
        );
        let point = scratch.0.join("mnt");
        std::fs::create_dir(&point).expect("create mount point");
        assert!(
            run(
                "mount",
                &[
                    OsStr::new("-o"),
                    OsStr::new("loop"),
                    image.as_os_str(),
                    point.as_os_str()
                ]
            ),
            "mount -o loop failed"
        );
        let _mounted = MountGuard {
            point: point.clone(),
            loop_image: Some(image.clone()),
        };

        let target = probe_target(&point).expect("probe ext4");
        assert_eq!(target.fs_type, "ext4");
        assert_eq!(target.mount_point, point.to_string_lossy());
        let loop_name = target
            .source
            .strip_prefix("/dev/")
            .expect("source is a /dev node");
        assert!(loop_name.starts_with("loop"), "{}", target.source);
        assert_eq!(target.block_device.as_deref(), Some(loop_name));
        assert_eq!(
            target.loop_backing_file.as_deref(),
            Some(&*image.to_string_lossy())
        );
        assert!(target.rotational.is_some());
        assert!(target.scheduler.is_some());
        assert_eq!(target.raid_level, None);
        assert!(target.total_bytes > 32 * MIB && target.total_bytes <= 64 * MIB);
        assert!(target.total_inodes > 0);
    }
}

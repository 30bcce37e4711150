//! Loop devices, known by what they hold rather than by a path: the
//! backing file's device and inode as the kernel gives them
//! (`LOOP_GET_STATUS64`), so a loop device is taken as fsbench's only when
//! it is backed by an image fsbench created, whatever the image's path
//! says now, and it is detached through the descriptor that was checked
//! (`LOOP_CLR_FD`), never through a name looked up again.
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::PathBuf;

use anyhow::Context;

use rustix::fs::{FileType, Mode, OFlags};
use serde::{Deserialize, Serialize};

/// The loop devices' block major (Documentation/admin-guide/devices.txt).
const LOOP_MAJOR: u32 = 7;
/// <linux/loop.h>'s ioctl numbers.
const LOOP_CLR_FD: libc::c_ulong = 0x4C01;
const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;
const LOOP_CONFIGURE: libc::c_ulong = 0x4C0A;
const LOOP_CTL_GET_FREE: libc::c_ulong = 0x4C82;
const LO_FLAGS_READ_ONLY: u32 = 1;
const LO_FLAGS_DIRECT_IO: u32 = 16;

/// <linux/loop.h>'s `struct loop_info64`.
#[repr(C)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

/// <linux/loop.h>'s `struct loop_config`.
#[repr(C)]
struct LoopConfig {
    fd: u32,
    block_size: u32,
    info: LoopInfo64,
    reserved: [u64; 8],
}

/// A file as the kernel names it for good: its file system's device
/// number (st_dev, encoded as stat gives it) and its inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileId {
    pub dev: u64,
    pub ino: u64,
}

impl FileId {
    /// The identity of the open file `fd`.
    pub fn of(fd: BorrowedFd<'_>) -> rustix::io::Result<FileId> {
        let stat = rustix::fs::fstat(fd)?;
        Ok(FileId {
            dev: stat.st_dev,
            ino: stat.st_ino,
        })
    }
}

/// What a loop device reads and writes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backing {
    /// A block device (another loop device too), by number.
    Device((u32, u32)),
    /// A regular file, by identity.
    File(FileId),
}

/// An attached loop device, open.
pub struct LoopDevice {
    pub path: PathBuf,
    fd: OwnedFd,
    /// Its own device number.
    pub dev: (u32, u32),
    /// What it is backed by.
    pub backing: Backing,
}

impl LoopDevice {
    /// Opens `/dev/<name>` if it is an attached loop device: a block
    /// device of the loop major with a backing file. None for anything
    /// else (not attached, not a loop device, gone).
    pub fn open(name: &str) -> Option<LoopDevice> {
        let path = PathBuf::from("/dev").join(name);
        let fd = rustix::fs::open(
            &path,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
            Mode::empty(),
        )
        .ok()?;
        let stat = rustix::fs::fstat(&fd).ok()?;
        let is_loop = FileType::from_raw_mode(stat.st_mode) == FileType::BlockDevice
            && rustix::fs::major(stat.st_rdev) == LOOP_MAJOR;
        if !is_loop {
            return None;
        }
        let backing = status(fd.as_fd())?;
        let dev = (
            rustix::fs::major(stat.st_rdev),
            rustix::fs::minor(stat.st_rdev),
        );
        Some(LoopDevice {
            path,
            fd,
            dev,
            backing,
        })
    }

    /// Attaches a free loop device to the open file `backing`, with direct
    /// I/O when asked (the kernel may refuse it: `direct_io` says what it
    /// did) and read-only when asked. Another process may take the free
    /// device between the two calls (LOOP_CTL_GET_FREE, LOOP_CONFIGURE):
    /// then another is taken.
    pub fn attach(
        backing: BorrowedFd<'_>,
        direct_io: bool,
        read_only: bool,
    ) -> anyhow::Result<LoopDevice> {
        let control = rustix::fs::open(
            "/dev/loop-control",
            OFlags::RDWR | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| anyhow::anyhow!("cannot open /dev/loop-control: {e}"))?;
        for _ in 0..100 {
            // SAFETY: LOOP_CTL_GET_FREE takes no argument and returns a number.
            let number = unsafe { libc::ioctl(control.as_raw_fd(), LOOP_CTL_GET_FREE as _, 0) };
            if number < 0 {
                let e = std::io::Error::last_os_error();
                anyhow::bail!("no free loop device: {e}");
            }
            let path = PathBuf::from(format!("/dev/loop{number}"));
            let Ok(fd) = rustix::fs::open(&path, OFlags::RDWR | OFlags::CLOEXEC, Mode::empty())
            else {
                continue;
            };
            // SAFETY: LoopConfig is plain data for which all-zero is valid.
            let mut config: LoopConfig = unsafe { std::mem::zeroed() };
            config.fd = backing.as_raw_fd() as u32;
            config.info.lo_flags = match direct_io {
                true => LO_FLAGS_DIRECT_IO,
                false => 0,
            } | match read_only {
                true => LO_FLAGS_READ_ONLY,
                false => 0,
            };
            // SAFETY: LOOP_CONFIGURE reads one struct loop_config from the
            // pointer, which points to one.
            let done = unsafe {
                libc::ioctl(
                    fd.as_raw_fd(),
                    LOOP_CONFIGURE as _,
                    &config as *const LoopConfig,
                )
            };
            if done < 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EBUSY) {
                    continue;
                }
                anyhow::bail!("cannot attach {}: {e}", path.display());
            }
            let stat = rustix::fs::fstat(&fd)?;
            let backing = status(fd.as_fd()).context("the loop device lost its backing file")?;
            return Ok(LoopDevice {
                path,
                fd,
                dev: (
                    rustix::fs::major(stat.st_rdev),
                    rustix::fs::minor(stat.st_rdev),
                ),
                backing,
            });
        }
        anyhow::bail!("every free loop device was taken by another process first")
    }

    /// Detaches it through the descriptor that was checked. The kernel
    /// defers the detach to the last close while something else has it
    /// open (a mount fsbench could not take down).
    pub fn detach(self) -> anyhow::Result<()> {
        // SAFETY: LOOP_CLR_FD takes no argument; the fd is open.
        let done = unsafe { libc::ioctl(self.fd.as_raw_fd(), LOOP_CLR_FD as _, 0) };
        if done < 0 {
            let e = std::io::Error::last_os_error();
            anyhow::bail!("cannot detach {}: {e}", self.path.display());
        }
        Ok(())
    }
}

/// What backs the loop device open as `fd`, as the kernel found it by a
/// stat of the backing file when it was attached (a block device has a
/// device number, a regular file none); None when it has none (ENXIO:
/// not attached).
fn status(fd: BorrowedFd<'_>) -> Option<Backing> {
    // SAFETY: LoopInfo64 is plain data for which all-zero is valid.
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: LOOP_GET_STATUS64 writes one struct loop_info64 to the
    // pointer, which points to one.
    let done = unsafe {
        libc::ioctl(
            fd.as_raw_fd(),
            LOOP_GET_STATUS64 as _,
            &mut info as *mut LoopInfo64,
        )
    };
    (done == 0).then_some(match info.lo_rdevice {
        0 => Backing::File(FileId {
            dev: info.lo_device,
            ino: info.lo_inode,
        }),
        rdev => Backing::Device((rustix::fs::major(rdev), rustix::fs::minor(rdev))),
    })
}

/// Every attached loop device on this host, in name order (from
/// /sys/block, opened through /dev).
pub fn attached() -> Vec<LoopDevice> {
    let Ok(entries) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("loop"))
        .collect();
    names.sort();
    names
        .iter()
        .filter_map(|name| LoopDevice::open(name))
        .collect()
}

/// The attached loop devices backed by one of `files`.
pub fn backed_by(files: &[FileId]) -> Vec<LoopDevice> {
    attached()
        .into_iter()
        .filter(|device| matches!(device.backing, Backing::File(file) if files.contains(&file)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A loop device on a file of our own is found by the file's identity
    /// and detached through its descriptor; another file finds nothing.
    #[test]
    fn a_loop_device_is_found_by_its_backing_inode_and_detached() {
        if !rustix::process::geteuid().is_root() {
            eprintln!("skipped: needs root for losetup");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("a.img");
        std::fs::File::create(&image)
            .unwrap()
            .set_len(1 << 20)
            .unwrap();
        let other = dir.path().join("b.img");
        std::fs::write(&other, b"x").unwrap();
        let id = |path: &std::path::Path| {
            FileId::of(std::fs::File::open(path).unwrap().as_fd()).unwrap()
        };
        let out = std::process::Command::new("losetup")
            .args(["--find", "--show"])
            .arg(&image)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let device = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert!(backed_by(&[id(&other)]).is_empty());
        let found = backed_by(&[id(&image)]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].path, PathBuf::from(&device));
        assert_eq!(found[0].backing, Backing::File(id(&image)));
        found.into_iter().next().unwrap().detach().unwrap();
        assert!(
            backed_by(&[id(&image)]).is_empty(),
            "{device} still attached"
        );
    }
}

//! Checking one crash state the way a machine coming back from a power
//! cut would: mount it (the journal or log replays), unmount, the file
//! system's own read-only check, mount read-only, and the workload's files
//! against the oracle. The state is served by the recorder; a loop device
//! (direct I/O) is put on it for the check and taken off after.
use std::cell::RefCell;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;

use anyhow::Context;
use rustix::fs::{Mode, OFlags};
use rustix::mount::MountFlags;
use serde::{Deserialize, Serialize};

use super::cuts::CrashState;
use super::oracle::{self, Op, Verdict};
use crate::shell::{output_of, quoted};
use crate::storage::loopdev::{FileId, LoopDevice};
use crate::storage::made::{self, Record, Unmounted, WhenBusy};
use crate::storage::recorder::Recorder;

/// What fsbench knows of checking a file system after a crash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsCheck {
    /// The type given to mount.
    pub fs_type: &'static str,
    /// Its read-only check, the device last.
    pub fsck: &'static [&'static str],
    /// Mount data every mount of a crash copy needs.
    data: &'static std::ffi::CStr,
    /// btrfs remembers devices by file system id: a crash copy on a new
    /// loop device needs the old ones forgotten.
    forget_devices: bool,
    /// Options mkfs needs so it does not discard or initialise in the
    /// background while the workload is recorded.
    pub mkfs_quiet: &'static [&'static str],
}

/// What is known of the file system mkfs `program` makes; None for one
/// fsbench cannot judge after a crash (no read-only check known).
pub fn fs_check(program: &str) -> Option<FsCheck> {
    let base = Path::new(program).file_name()?.to_str()?;
    let ext = |fs_type| FsCheck {
        fs_type,
        fsck: &["e2fsck", "-fn"],
        data: c"",
        forget_devices: false,
        mkfs_quiet: &["-E", "nodiscard,lazy_itable_init=0,lazy_journal_init=0"],
    };
    Some(match base {
        "mkfs.ext2" => ext("ext2"),
        "mkfs.ext3" => ext("ext3"),
        "mkfs.ext4" => ext("ext4"),
        "mkfs.xfs" => FsCheck {
            fs_type: "xfs",
            fsck: &["xfs_repair", "-n"],
            data: c"nouuid",
            forget_devices: false,
            mkfs_quiet: &["-K"],
        },
        "mkfs.btrfs" => FsCheck {
            fs_type: "btrfs",
            fsck: &["btrfs", "check", "--readonly"],
            data: c"",
            forget_devices: true,
            mkfs_quiet: &["-K"],
        },
        _ => return None,
    })
}

/// What one state's check found.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Checked {
    /// Whether it mounted (read-write, for the replay, then read-only).
    pub mounted: bool,
    /// Why it did not.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mount_error: String,
    /// Whether its check found nothing wrong after the replay.
    pub fsck_clean: bool,
    /// The check's last lines when it did.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub fsck_said: String,
    pub verdict: Verdict,
}

/// Checks the states of one recorded configuration.
pub struct Checker<'a> {
    /// fsbench's scratch directory: everything is reached through it.
    pub dir: BorrowedFd<'a>,
    pub record: &'a RefCell<Record>,
    pub recorder: &'a Recorder,
    pub fs: &'a FsCheck,
    /// The checks' mount point, relative to the scratch directory.
    pub at: String,
    /// The overlay file's place, relative to the scratch directory.
    pub overlay_at: String,
    pub ops: &'a [Op],
    pub seed: u64,
}

impl Checker<'_> {
    /// Serves `state` and checks it.
    pub fn check(&self, state: &CrashState) -> anyhow::Result<Checked> {
        self.serve_fresh(state)?;
        let file = File::options()
            .read(true)
            .write(true)
            .open(self.recorder.state_path(self.dir))
            .context("cannot open the crash state")?;
        let device = LoopDevice::attach(file.as_fd(), true, false)?;
        let checked = self.on_device(&device, state.marked);
        let detached = device.detach();
        // A state the recorder could not serve whole was not checked.
        self.recorder.intact()?;
        let checked = checked?;
        detached?;
        Ok(checked)
    }

    /// Serves `state` as the power cut left it: an empty overlay.
    pub fn serve_fresh(&self, state: &CrashState) -> anyhow::Result<()> {
        let overlay = File::from(
            rustix::fs::openat(
                self.dir,
                self.overlay_at.as_str(),
                OFlags::RDWR | OFlags::CREATE | OFlags::TRUNC | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o600),
            )
            .context("cannot create the crash state's overlay")?,
        );
        self.recorder.serve_state(state.map.clone(), overlay);
        Ok(())
    }

    /// The state's identity (for the record `clean` reads: a loop device
    /// left on it after a kill is fsbench's).
    pub fn state_id(&self) -> anyhow::Result<FileId> {
        let file = File::open(self.recorder.state_path(self.dir))?;
        Ok(FileId::of(file.as_fd())?)
    }

    fn on_device(&self, device: &LoopDevice, marked: usize) -> anyhow::Result<Checked> {
        let mut checked = Checked::default();
        let source = device.path.display().to_string();
        match self.mount(&source, MountFlags::empty())? {
            Ok(id) => self.unmount(id)?,
            Err(e) => {
                checked.mount_error = e;
                return Ok(checked);
            }
        }
        let fsck: Vec<String> = self
            .fs
            .fsck
            .iter()
            .map(|w| w.to_string())
            .chain([source.clone()])
            .collect();
        let said = output_of(&fsck, None);
        checked.fsck_clean = said.is_ok();
        if let Err(e) = said {
            checked.fsck_said = format!("`{}`: {e:#}", quoted(&fsck));
        }
        let id = match self.mount(&source, MountFlags::RDONLY)? {
            Ok(id) => id,
            Err(e) => {
                checked.mount_error = format!("read-only, after the replay: {e}");
                return Ok(checked);
            }
        };
        checked.mounted = true;
        let point = made::through_fd(self.dir, &self.at);
        checked.verdict = oracle::verify(self.ops, self.seed, marked, &point.join(super::WORK_DIR));
        self.unmount(id)?;
        Ok(checked)
    }

    /// Mounts `source` on the checks' mount point and records the mount:
    /// its id, or (the state's finding) what the kernel said when it would
    /// not mount it; an error is fsbench's own failure.
    fn mount(&self, source: &str, flags: MountFlags) -> anyhow::Result<Result<u64, String>> {
        if self.fs.forget_devices {
            let forget = ["btrfs", "device", "scan", "--forget"].map(String::from);
            output_of(&forget, None)?;
        }
        let point = made::through_fd(self.dir, &self.at);
        if let Err(e) = rustix::mount::mount(source, &point, self.fs.fs_type, flags, self.fs.data) {
            return Ok(Err(format!("mount: {e}")));
        }
        let id = made::record_mount(self.dir, &self.at, &mut self.record.borrow_mut())?;
        Ok(Ok(id))
    }

    /// Unmounts the check's mount `id`, only while it is the one there.
    fn unmount(&self, id: u64) -> anyhow::Result<()> {
        match made::unmount(self.dir, id, &self.at, WhenBusy::Detach)? {
            Unmounted::Other(other) => {
                anyhow::bail!("mount {other} on {} is not fsbench's", self.at)
            }
            _ => Ok(()),
        }
    }
}

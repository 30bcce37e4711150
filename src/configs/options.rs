//! A configuration's mount options put to the kernel before anything is
//! measured, through the new mount API, as mount(8) hands them over:
//! `fsopen(type)`, then one `fsconfig` per option. The kernel parses most
//! options there and writes why it refuses one to the context's log
//! ("ext4: Bad value for 'data'"), where mount(8) says only "wrong fs
//! type, bad option". What only the file system itself judges (a quota or
//! a stripe setting, a type that is not what mkfs made) waits for
//! `FSCONFIG_CMD_CREATE`, which needs the device: `check_made` does that on
//! the file system mkfs has just made, before fsbench mounts it, and
//! quotes the file system's lines of the kernel log, where it says why.
use std::os::fd::{AsFd, OwnedFd};

use rustix::fs::{Mode, OFlags, SeekFrom};
use rustix::io::Errno;
use rustix::mount::FsOpenFlags;

use super::Config;
use crate::error::usage;

/// mount(8)'s options that become flags of the mount (`MS_NOATIME`,
/// `MOUNT_ATTR_NODEV`...) or of mount(8)'s call, never parameters of the
/// file system: the kernel refuses them as parameters ("ext4: Unknown
/// parameter 'noatime'"). The superblock's flags mount(8) also turns into
/// `MS_*` (`ro`, `rw`, `sync`, `async`, `dirsync`, `mand`, `lazytime` and
/// their negations) the kernel takes as parameters of every file system,
/// so they are put to it.
const MOUNT_FLAGS: &[&str] = &[
    "atime",
    "noatime",
    "diratime",
    "nodiratime",
    "relatime",
    "norelatime",
    "strictatime",
    "nostrictatime",
    "dev",
    "nodev",
    "exec",
    "noexec",
    "suid",
    "nosuid",
    "symfollow",
    "nosymfollow",
    "iversion",
    "noiversion",
    "silent",
    "loud",
];

/// Options mount(8) keeps to itself (fstab's and its own bookkeeping:
/// `defaults`, `noauto`, `user`, `_netdev`, `nofail`, `comment=`, every
/// `x-*`), and the SELinux contexts, which mount(8) drops where SELinux is
/// off: none reaches the file system as mount(8) runs here.
const MOUNT_ONLY: &[&str] = &[
    "defaults",
    "auto",
    "noauto",
    "user",
    "nouser",
    "users",
    "owner",
    "noowner",
    "group",
    "nogroup",
    "_netdev",
    "nofail",
    "comment",
    "context",
    "fscontext",
    "defcontext",
    "rootcontext",
    "seclabel",
];

/// Where mount(8) looks for a helper program `mount.TYPE` (libmount's
/// search path): a type that has one gets its options through it, which
/// may rewrite them (mount.nfs, mount.cifs, mount.fuse).
const HELPER_DIRS: &[&str] = &["/sbin", "/sbin/fs.d", "/sbin/fs"];

/// The most kernel log records read after a refusal: others may be
/// logging at the same time.
const MAX_LOG_RECORDS: usize = 256;

/// The most of the file system's log lines quoted as the reason.
const MAX_REASONS: usize = 4;

/// Refuses, before anything is built, the options of `config` that the
/// kernel refuses for its `type`: one line naming the configuration, the
/// option and the kernel's reason. Nothing is checked without a type (the
/// type is what mkfs makes: `check_made` has it then) or options, nor
/// where the kernel is not the judge (`open`).
pub fn check(config: &Config) -> anyhow::Result<()> {
    let Some(fs_type) = &config.fs_type else {
        return Ok(());
    };
    if config.options.is_empty() {
        return Ok(());
    }
    let Some(context) = Context::open(fs_type) else {
        return Ok(());
    };
    context
        .configure(&config.options)
        .map_err(|e| e.context(format!("configuration {}", config.name)))
}

/// Refuses `options` if the kernel will not mount the file system just
/// made on `device` with them, as `fs_type`, or without one as mount(8)
/// finds it (blkid's probe): the whole mount is made
/// (`FSCONFIG_CMD_CREATE`) and let go unmounted. The error is one line
/// with the kernel's reason.
pub fn check_made(fs_type: Option<&str>, options: &str, device: &str) -> anyhow::Result<()> {
    let Some(fs_type) = fs_type.map(str::to_string).or_else(|| probed_type(device)) else {
        return Ok(());
    };
    let Some(context) = Context::open(&fs_type) else {
        return Ok(());
    };
    context.configure(options)?;
    context.create(options, device)
}

/// The type blkid reads on `device`, as mount(8) finds it when given none.
fn probed_type(device: &str) -> Option<String> {
    let words = ["blkid", "-p", "-o", "value", "-s", "TYPE", device].map(String::from);
    let text = crate::shell::output_of(&words, None).ok()?;
    Some(text.trim().to_string()).filter(|t| !t.is_empty())
}

/// What mount(8) gives the file system of one option.
#[derive(Debug, PartialEq)]
enum Handed<'a> {
    /// A parameter without a value (`FSCONFIG_SET_FLAG`).
    Flag(&'a str),
    /// A parameter and its value (`FSCONFIG_SET_STRING`).
    Value(&'a str, &'a str),
    /// Nothing: a flag of the mount, or mount(8)'s own.
    Nothing,
}

/// How mount(8) hands `option` over (its key compared in lower case).
fn handed(option: &str) -> Handed<'_> {
    let (key, value) = match option.split_once('=') {
        Some((key, value)) => (key, Some(value)),
        None => (option, None),
    };
    let lower = key.to_ascii_lowercase();
    let own = MOUNT_ONLY.contains(&lower.as_str()) || lower.starts_with("x-");
    if key.is_empty() || own || (value.is_none() && MOUNT_FLAGS.contains(&lower.as_str())) {
        return Handed::Nothing;
    }
    match value {
        Some(value) => Handed::Value(key, value),
        None => Handed::Flag(key),
    }
}

/// A file system context the kernel opened for a type it knows.
struct Context {
    fd: OwnedFd,
    fs_type: String,
}

impl Context {
    /// A context for `fs_type`; None where the kernel is not the judge of
    /// its options: mount(8) hands them to a helper program (`mount.nfs`,
    /// a FUSE file system's `fuse.sshfs`), or this kernel has no such type
    /// (a module it cannot load), no new mount API, or does not let
    /// fsbench open one.
    fn open(fs_type: &str) -> Option<Context> {
        if fs_type.contains('.') || has_helper(fs_type) {
            return None;
        }
        let fd = rustix::mount::fsopen(fs_type, FsOpenFlags::FSOPEN_CLOEXEC).ok()?;
        Some(Context {
            fd,
            fs_type: fs_type.to_string(),
        })
    }

    /// Each of `options` put to the kernel as mount(8) hands it over; the
    /// first it refuses, with its reason.
    fn configure(&self, options: &str) -> anyhow::Result<()> {
        for option in options.split(',') {
            let set = match handed(option) {
                Handed::Flag(key) => rustix::mount::fsconfig_set_flag(&self.fd, key),
                Handed::Value(key, value) => {
                    rustix::mount::fsconfig_set_string(&self.fd, key, value)
                }
                Handed::Nothing => continue,
            };
            if let Err(errno) = set {
                return usage(format!(
                    "the kernel refuses its option {option:?}: {}",
                    self.reason(errno, Vec::new())
                ));
            }
        }
        Ok(())
    }

    /// The file system on `device` mounted with the options configured,
    /// and let go: the kernel's own judgement of them together.
    fn create(self, options: &str, device: &str) -> anyhow::Result<()> {
        let refused = |reason: String| {
            let what = match options {
                "" => format!("the kernel refuses to mount it as {}", self.fs_type),
                _ => format!("the kernel refuses its options {options:?}"),
            };
            usage(format!("{what} on the file system mkfs made: {reason}"))
        };
        if let Err(errno) = rustix::mount::fsconfig_set_string(&self.fd, "source", device) {
            return refused(self.reason(errno, Vec::new()));
        }
        let log = KernelLog::from_now();
        match rustix::mount::fsconfig_create(&self.fd) {
            Ok(()) => Ok(()),
            Err(errno) => {
                let logged = log.map_or_else(Vec::new, |log| log.records());
                let device_name = device.rsplit('/').next().unwrap_or(device);
                let lines = file_system_lines(&logged, &self.fs_type, device_name);
                refused(self.reason(errno, lines))
            }
        }
    }

    /// Why the kernel refused: the context's error messages, else the
    /// file system's lines of the kernel log (`logged`), else the errno.
    fn reason(&self, errno: Errno, logged: Vec<String>) -> String {
        let mut said = self.errors();
        if said.is_empty() {
            said = logged;
        }
        match said.is_empty() {
            true => format!("{}: {errno}", self.fs_type),
            false => said.join("; "),
        }
    }

    /// The error messages in the context's log ("e ext4: Bad value for
    /// 'data'"), without their "e ": one per read, until it is empty.
    fn errors(&self) -> Vec<String> {
        let mut buffer = [0u8; 1024];
        let mut errors = Vec::new();
        // The kernel keeps at most 8 messages per context.
        for _ in 0..16 {
            let Ok(len) = rustix::io::read(&self.fd, &mut buffer[..]) else {
                break;
            };
            let text = String::from_utf8_lossy(&buffer[..len]);
            if let Some(error) = text.trim_end().strip_prefix("e ") {
                errors.push(error.to_string());
            }
        }
        errors
    }
}

/// Whether mount(8) would run a helper program for `fs_type`.
fn has_helper(fs_type: &str) -> bool {
    HELPER_DIRS.iter().any(|dir| {
        std::path::Path::new(dir)
            .join(format!("mount.{fs_type}"))
            .exists()
    })
}

/// The kernel log from the moment it was opened (/dev/kmsg past its end).
struct KernelLog(OwnedFd);

impl KernelLog {
    /// None where it cannot be read (not root, no /dev/kmsg).
    fn from_now() -> Option<KernelLog> {
        let fd = rustix::fs::open(
            "/dev/kmsg",
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .ok()?;
        rustix::fs::seek(&fd, SeekFrom::End(0)).ok()?;
        Some(KernelLog(fd))
    }

    /// The records written since ("3,812,5021,-;EXT4-fs: ..."), one per
    /// read, at most `MAX_LOG_RECORDS`; records the log overwrote before
    /// they were read (EPIPE) are skipped.
    fn records(&self) -> Vec<String> {
        let mut buffer = vec![0u8; 8192];
        let mut records = Vec::new();
        while records.len() < MAX_LOG_RECORDS {
            match rustix::io::read(self.0.as_fd(), &mut buffer[..]) {
                Ok(0) => break,
                Ok(len) => records.push(String::from_utf8_lossy(&buffer[..len]).into_owned()),
                Err(Errno::PIPE) => continue,
                Err(_) => break,
            }
        }
        records
    }
}

/// What the file system `fs_type` logged of `device` (a name such as
/// `loop3`) among the kernel log's `records`: its errors and warnings
/// (level 4 or more urgent) that name that device ("XFS (loop3): sunit
/// and swidth must be specified together") or, beginning with the file
/// system's name, none ("EXT4-fs: journaled quota format not
/// specified"); at most `MAX_REASONS`. Another device's lines are another
/// mount's.
fn file_system_lines(records: &[String], fs_type: &str, device: &str) -> Vec<String> {
    let names = |text: &str, word: &str| {
        text.split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| w == word)
    };
    records
        .iter()
        .filter_map(|record| {
            let (prefix, text) = record.split_once(';')?;
            let level: u32 = prefix.split(',').next()?.parse().ok()?;
            let text = text.lines().next()?.trim();
            let own = text
                .get(..fs_type.len())
                .is_some_and(|start| start.eq_ignore_ascii_case(fs_type));
            let relevant = names(text, device) || (own && !text.contains('('));
            ((level & 7) <= 4 && relevant).then(|| text.to_string())
        })
        .take(MAX_REASONS)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_s_own_options_and_the_mount_s_flags_are_not_the_file_system_s() {
        assert_eq!(handed("data=writeback"), Handed::Value("data", "writeback"));
        assert_eq!(handed("nobarrier"), Handed::Flag("nobarrier"));
        assert_eq!(handed("ro"), Handed::Flag("ro"));
        assert_eq!(handed("sync"), Handed::Flag("sync"));
        assert_eq!(handed("size="), Handed::Value("size", ""));
        for option in [
            "noatime",
            "NoDev",
            "relatime",
            "nosuid",
            "defaults",
            "_netdev",
            "user",
            "user=me",
            "x-systemd.automount",
            "X-initrd.mount",
            "comment=hello",
            "context=system_u:object_r:tmp_t:s0",
            "",
        ] {
            assert_eq!(handed(option), Handed::Nothing, "{option}");
        }
        // A value makes it a parameter: no mount flag takes one.
        assert_eq!(handed("atime=1"), Handed::Value("atime", "1"));
    }

    /// As root (else the kernel lets no context be opened, and nothing is
    /// judged): mount(8)'s own options pass, a typo is refused with the
    /// kernel's reason, and a type mount(8) hands a helper (FUSE's) or the
    /// kernel does not know is not judged.
    #[test]
    fn the_kernel_judges_only_what_mount_hands_the_file_system() {
        if !rustix::process::geteuid().is_root() {
            eprintln!("skipping: not root");
            return;
        }
        let checked = |fs_type: &str, options: &str| {
            let text = format!(
                "[[config]]\nname = \"a\"\nsource = \"tmpfs\"\ntype = \"{fs_type}\"\noptions = \"{options}\"\n"
            );
            let configs = crate::configs::parse(&text).unwrap();
            check(&configs[0]).map_err(|e| format!("{e:#}"))
        };
        let mount_s = "noatime,ro,nodev,nosuid,sync,defaults,_netdev,x-systemd.automount";
        assert_eq!(
            checked("ext4", &format!("{mount_s},data=writeback")),
            Ok(())
        );
        assert_eq!(checked("tmpfs", &format!("{mount_s},size=64m")), Ok(()));
        let e = checked("ext4", &format!("{mount_s},data=writebak")).unwrap_err();
        assert!(
            e.starts_with(
                "configuration a: the kernel refuses its option \"data=writebak\": ext4: "
            ),
            "{e}"
        );
        let e = checked("tmpfs", "size=lots").unwrap_err();
        assert!(e.contains("\"size=lots\": tmpfs: "), "{e}");
        assert_eq!(checked("fuse.sshfs", "no_such_option"), Ok(()));
        assert_eq!(checked("nosuchfs", "no_such_option"), Ok(()));
    }

    #[test]
    fn the_reason_is_the_file_system_s_own_lines_about_its_device() {
        let records = [
            "6,101,5000,-;EXT4-fs (loop3): mounted filesystem with ordered data mode\n",
            "3,102,5001,-;EXT4-fs: journaled quota format not specified\n",
            "3,103,5002,-;EXT4-fs (loop31): VFS: Can't find ext4 filesystem\n",
            "4,104,5003,-;XFS (loop3): sunit and swidth must be specified together\n SUBSYSTEM=block\n",
            "3,105,5004,-;usb 1-1: device descriptor read error\n",
            "not a record",
        ]
        .map(String::from);
        assert_eq!(
            file_system_lines(&records, "ext4", "loop3"),
            [
                "EXT4-fs: journaled quota format not specified",
                "XFS (loop3): sunit and swidth must be specified together"
            ]
        );
        assert_eq!(
            file_system_lines(&records, "xfs", "loop7"),
            Vec::<String>::new()
        );
        let many = vec!["3,1,1,-;BTRFS error (device loop2): bad\n".to_string(); 9];
        assert_eq!(
            file_system_lines(&many, "btrfs", "loop2").len(),
            MAX_REASONS
        );
    }
}

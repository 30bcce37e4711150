//! mkfs on an image fsbench makes (`img/<name>.img` and a loop device on
//! it) or on a device --wipe named, then a mount of it: `mkfs = "mkfs.X
//! ... {dev}"`, with an optional `device`.
use std::collections::BTreeMap;
use std::fs::File;
use std::os::fd::AsFd;
use std::path::Path;

use anyhow::Context;
use rustix::fs::{Mode, OFlags};

use super::{Kind, Make, Reader};
use crate::configs::build::{Fs, Site};
use crate::storage::made::{self, Made};
use crate::configs::options;
use crate::configs::place::Place;
use crate::configs::{Config, DEV, DIR, Entry, is_word, split_words, substitute};
use crate::error::usage;
use crate::console::stderr_line;
use crate::shell::{output_of, quoted};
use crate::size::format_bytes;
use crate::storage::loopdev::{Backing, FileId, LoopDevice};

pub(super) const READER: Reader = Reader {
    key: "mkfs",
    what: "a file system to make",
    offered: true,
    claims: |entry| entry.mkfs.is_some() && !entry.recorded,
    read,
};

/// A configuration mkfs makes: its words, `{dev}` last, and the device
/// they run on when not an image.
pub(super) struct Mkfs<'a> {
    pub(super) words: &'a [String],
    pub(super) device: Option<&'a Path>,
}

fn read(entry: &Entry, name: &str, parameters: &BTreeMap<String, String>) -> anyhow::Result<Make> {
    let words = read_words(entry, name, parameters)?;
    let device = entry
        .device
        .as_deref()
        .map(|d| substitute(d, parameters, "device", &[]))
        .transpose()?
        .map(std::path::PathBuf::from);
    if let Some(d) = &device
        && !d.starts_with("/dev/")
    {
        anyhow::bail!("{name}: device {} is not under /dev", d.display());
    }
    Ok(Make::Mkfs { words, device })
}

/// The entry's mkfs command, its parameters substituted, split into
/// words and checked (`check_mkfs`).
pub(super) fn read_words(
    entry: &Entry,
    name: &str,
    parameters: &BTreeMap<String, String>,
) -> anyhow::Result<Vec<String>> {
    let mkfs = entry.mkfs.as_deref().unwrap_or_default();
    let words = split_words(&substitute(mkfs, parameters, "mkfs", &[DEV])?)?;
    check_mkfs(name, &words)?;
    Ok(words)
}

impl Kind for Mkfs<'_> {
    fn one_host_only(&self) -> Option<&'static str> {
        Some("is made by mkfs on one host (an image or a device there)")
    }

    fn mkfs_words(&self) -> Vec<String> {
        self.words.to_vec()
    }

    /// A mkfs program given by a path instead of a `mkfs.*` name looked
    /// up on PATH.
    fn shell_permission(&self) -> Option<String> {
        let program = self.words.first().filter(|p| p.contains('/'))?;
        Some(format!(
            "runs mkfs by its path {program:?}, not a mkfs.* program found on PATH: give --allow-shell to run it"
        ))
    }

    /// mkfs.xfs (xfsprogs 5.19 on) refuses under 300 MiB, mkfs.btrfs
    /// under 114,294,784 bytes per device; any other, 16 MiB (room for a
    /// journal).
    fn minimum_image_bytes(&self) -> u64 {
        let program = Path::new(&self.words[0]).file_name().unwrap_or_default();
        match program.to_str() {
            Some("mkfs.xfs") => 300 << 20,
            Some("mkfs.btrfs") => 114_294_784,
            _ => 16 << 20,
        }
    }

    fn on_image(&self, place: &Place) -> bool {
        self.device.is_none() && place.images
    }

    /// Its device, or the one --wipe device it goes to; None on an image.
    fn shares(&self, _config: &Config, wipe_default: Option<&Path>) -> Option<String> {
        self.device
            .or(wipe_default)
            .map(|d| d.display().to_string())
    }

    fn placeholders(&self) -> &'static [&'static str] {
        &[DEV, DIR]
    }

    /// mkfs on a device --wipe did not name, mkfs with neither images nor
    /// one --wipe device to go on, an image smaller than mkfs accepts.
    fn check_place(&self, config: &Config, place: &Place) -> anyhow::Result<()> {
        let name = &config.name;
        if let Some(device) = self.device {
            let named = std::fs::canonicalize(device).unwrap_or_else(|_| device.to_path_buf());
            if !place.wipe.contains(&named) {
                return usage(format!(
                    "{name}: mkfs on {} needs --wipe {} on the command line (everything on it is lost)",
                    device.display(),
                    device.display()
                ));
            }
        } else if !place.images && place.wipe_default().is_none() {
            return usage(format!(
                "{name}: give --images DIR (a directory on the disk under test) for its image, or one --wipe DEVICE"
            ));
        } else if self.on_image(place) && place.image_size < self.minimum_image_bytes() {
            return usage(format!(
                "{name}: --image-size {} is too small for {}: at least {}",
                format_bytes(place.image_size),
                self.words[0],
                format_bytes(self.minimum_image_bytes())
            ));
        }
        Ok(())
    }

    /// The device (the one named, or a loop device on a new image), then
    /// mkfs and the mount.
    fn build(&self, fs: &mut Fs, config: &Config, site: &Site) -> anyhow::Result<()> {
        let device = match self.device.or(site.place.wipe_default()) {
            Some(named) => named_device(named)?,
            None => attach_image(fs, config, site)?,
        };
        make_on(fs, config, self.words, device, site)
    }
}

/// mkfs `words` on `device`, then the kernel's verdict on the options
/// for what mkfs made (mount(8) would only say "wrong fs type, bad
/// option"), then the mount of it on the configuration's directory, then
/// the file system's own account of itself: a kind that makes a file
/// system, once it has its device.
pub(super) fn make_on(
    fs: &mut Fs,
    config: &Config,
    words: &[String],
    device: String,
    site: &Site,
) -> anyhow::Result<()> {
    fs.record.device = device.clone();
    fs.device = Some(device.clone());
    run_mkfs(fs, words, &device, site)?;
    options::check_made(config.fs_type.as_deref(), &config.options, &device)?;
    fs.mount(config, &device, site)?;
    fs.record.fs_info = fs_info(&words[0], &device, &fs.dir);
    Ok(())
}

/// A device --wipe named (`Place::check`), checked again now (a mount
/// may have come since the command line was read), and opened
/// exclusively: the kernel refuses while anything holds it.
fn named_device(named: &Path) -> anyhow::Result<String> {
    let checked = crate::storage::wipe::check_wipeable(named)?;
    let exclusive = rustix::fs::open(
        &checked.path,
        OFlags::RDONLY | OFlags::EXCL | OFlags::CLOEXEC,
        Mode::empty(),
    );
    if let Err(e) = exclusive {
        return usage(format!(
            "--wipe {}: it is in use ({e}): not wiped",
            named.display()
        ));
    }
    Ok(checked.path.display().to_string())
}

/// A new sparse image of the work's size in `img/`, recorded before a
/// loop device is put on it; the loop device's name.
fn attach_image(fs: &mut Fs, config: &Config, site: &Site) -> anyhow::Result<String> {
    let at = format!("img/{}.img", config.name);
    let image = site.root.join(&at);
    let file = File::from(
        rustix::fs::openat(
            site.dir,
            at.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )
        .with_context(|| format!("cannot create {}", image.display()))?,
    );
    file.set_len(site.place.image_size)
        .with_context(|| format!("cannot size {}", image.display()))?;
    let id = FileId::of(file.as_fd())?;
    site.add(&Made::Image { file: id, at })?;
    attach_loop(fs, &image, id, site)
}

/// A loop device on `image` (the file `id`, recorded already), detached
/// at teardown, with direct I/O as the place asks, and checked to be
/// backed by that file; its name.
pub(super) fn attach_loop(
    fs: &mut Fs,
    image: &Path,
    id: FileId,
    site: &Site,
) -> anyhow::Result<String> {
    fs.image = Some(id);
    let mut attach = ["losetup", "--find", "--show"].map(String::from).to_vec();
    if site.place.direct_io {
        attach.push("--direct-io=on".into());
    }
    attach.push(image.display().to_string());
    let out = fs.run(&attach, None)?;
    let device = out.trim().to_string();
    fs.record.loop_direct_io = Some(note_direct_io(&fs.name, &device, site.place.direct_io));
    // The one check mkfs depends on: this loop device is backed by the
    // image fsbench just made (by inode, whatever its path says).
    let name = device.strip_prefix("/dev/").unwrap_or_default();
    let backing = LoopDevice::open(name).map(|d| d.backing);
    if backing != Some(Backing::File(id)) {
        anyhow::bail!(
            "losetup gave {device:?}, not a loop device backed by {}: mkfs not run",
            image.display()
        );
    }
    Ok(device)
}

/// Whether loop device `device` does direct I/O (sysfs `loop/dio`);
/// said when it was asked for and the file system under the image
/// refused it.
fn note_direct_io(config: &str, device: &str, asked: bool) -> bool {
    let name = device.strip_prefix("/dev/").unwrap_or_default();
    let dio = crate::kernel_file::read_text(
        format!("/sys/block/{name}/loop/dio"),
        crate::kernel_file::ATTRIBUTE,
    );
    let direct = dio.is_some_and(|text| text.trim() == "1");
    if asked && !direct {
        stderr_line!(
            "fsbench: {config}: the loop device runs without direct I/O (the file system under the image refused it): the host's page cache holds the image"
        );
    }
    direct
}

/// mkfs's words with `{dev}` filled in, run in an empty directory (a
/// bare file name in its arguments finds nothing to write to).
fn run_mkfs(fs: &mut Fs, words: &[String], device: &str, site: &Site) -> anyhow::Result<()> {
    crate::interrupt::check()?;
    let mkfs: Vec<String> = words
        .iter()
        .map(|w| match w.as_str() {
            DEV => device.to_string(),
            w => w.to_string(),
        })
        .collect();
    fs.record.mkfs_output = fs.run(&mkfs, Some(&made::through_fd(site.dir, "cwd")))?;
    crate::interrupt::check()
}

/// The resulting parameters of the file system mkfs `program` made on
/// `device`, mounted on `point`, after the command line that asked; empty
/// where no command is known or it fails (it is information, not a step).
fn fs_info(program: &str, device: &str, point: &Path) -> String {
    let base = Path::new(program)
        .file_name()
        .map(|b| b.to_string_lossy().into_owned())
        .unwrap_or_default();
    let point = point.display().to_string();
    let words: Vec<String> = match base.as_str() {
        "mkfs.ext2" | "mkfs.ext3" | "mkfs.ext4" => {
            vec!["dumpe2fs".into(), "-h".into(), device.into()]
        }
        "mkfs.xfs" => vec!["xfs_info".into(), point],
        "mkfs.btrfs" => ["btrfs", "filesystem", "show"]
            .into_iter()
            .map(String::from)
            .chain([device.to_string()])
            .collect(),
        _ => return String::new(),
    };
    match output_of(&words, None) {
        Ok(text) => format!("$ {}\n{text}", quoted(&words)),
        Err(_) => String::new(),
    }
}

/// The safety rule on a mkfs command line: a `mkfs.*` program, `{dev}` as
/// its one device, once and last, and no other device named.
fn check_mkfs(name: &str, words: &[String]) -> anyhow::Result<()> {
    let Some(program) = words.first() else {
        anyhow::bail!("{name}: mkfs is empty");
    };
    let base = Path::new(program)
        .file_name()
        .map(|b| b.to_string_lossy().into_owned())
        .unwrap_or_default();
    let fs = base.strip_prefix("mkfs.").unwrap_or_default();
    if fs.is_empty() || !is_word(fs) {
        anyhow::bail!("{name}: mkfs runs {program:?}, not a mkfs.* program (e.g. mkfs.ext4)");
    }
    let devs = words.iter().filter(|w| w.contains(DEV)).count();
    if devs != 1 || words.last().map(String::as_str) != Some(DEV) {
        anyhow::bail!(
            "{name}: mkfs must end with {DEV}, the device fsbench makes, and name it once"
        );
    }
    // Some mkfs take several devices or files (mkfs.btrfs), or a journal
    // or data section elsewhere (-J device=, -d name=): no argument may
    // name a path or a device by label or UUID. (mkfs also runs in an
    // empty directory of fsbench's, so a bare name finds nothing.)
    let names_one = |w: &&String| {
        let upper = w.to_uppercase();
        w.contains('/') || upper.contains("UUID=") || upper.contains("LABEL=")
    };
    if let Some(other) = words[1..].iter().find(names_one) {
        anyhow::bail!(
            "{name}: mkfs names {other:?}: no path or device but {DEV}, the image fsbench makes, is allowed"
        );
    }
    Ok(())
}

//! Building configurations and taking them down, in ONE marked scratch
//! directory fsbench makes in the work directory (`--images DIR`): per
//! configuration a mount point `mnt/<name>` and, for one made on an image,
//! a sparse image file `img/<name>.img` with a loop device on it
//! (`losetup --find --show`). mkfs runs only on a loop device whose
//! backing file is checked to be the image just made, or on a device the
//! user named with --wipe, checked again (`storage::wipe`) just before.
//! Teardown (the teardown commands, unmount, detach; the scratch
//! directory's removal takes the images) runs on every way out: the end,
//! an error, a signal (the value is dropped). What a kill -9 leaves,
//! `fsbench clean DIR` releases (`release_leftovers`) before it removes the
//! directory.
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;

use super::{Built, Config, DEV, DIR, Make};
use crate::shell::{line_output, output_of, quoted};
use crate::storage::env::mounts::read_mountinfo;
use crate::storage::scratch::Scratch;

/// Where configurations are built: the work directory their scratch
/// directory goes in, the images' size, the devices --wipe named.
#[derive(Debug, Clone)]
pub struct Place {
    pub work_dir: PathBuf,
    /// Whether --images gave the work directory (image configurations
    /// need the user to choose the disk they go on).
    pub images: bool,
    pub image_size: u64,
    /// The devices named with --wipe (checked when named and again before
    /// each mkfs).
    pub wipe: Vec<PathBuf>,
}

impl Place {
    /// Refuses, before anything is built, a configuration this place
    /// cannot make: mkfs on a device --wipe did not name, mkfs with
    /// neither images nor one --wipe device to go on, a mount of a block
    /// device that is mounted already.
    pub fn check(&self, configs: &[Config]) -> anyhow::Result<()> {
        for config in configs {
            let name = &config.name;
            match &config.make {
                Make::Mkfs {
                    device: Some(device),
                    ..
                } => {
                    let named = std::fs::canonicalize(device).unwrap_or_else(|_| device.clone());
                    if !self.wipe.contains(&named) {
                        return crate::error::usage(format!(
                            "{name}: mkfs on {} needs --wipe {} on the command line (everything on it is lost)",
                            device.display(),
                            device.display()
                        ));
                    }
                }
                Make::Mkfs { device: None, .. }
                    if !self.images && self.wipe_default().is_none() =>
                {
                    return crate::error::usage(format!(
                        "{name}: give --images DIR (a directory on the disk under test) for its image, or one --wipe DEVICE"
                    ));
                }
                Make::Mount { source } => {
                    refuse_mounted_source(source).map_err(|e| e.context(name.clone()))?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The device mkfs runs on when the configuration names none and
    /// there are no images: the one --wipe device.
    pub fn wipe_default(&self) -> Option<&Path> {
        match (self.images, self.wipe.as_slice()) {
            (false, [one]) => Some(one),
            _ => None,
        }
    }
}

/// The configurations built, mounted and ready to be measured.
pub struct Builds {
    built: Vec<Fs>,
    /// The configurations that could not be built, with why.
    pub failed: Vec<(String, String)>,
    /// Declared after `built`: dropped (removed) after the teardown.
    scratch: Option<Scratch>,
}

struct Fs {
    name: String,
    /// The target: the mount point, or the path setup commands made.
    target: PathBuf,
    /// The directory `{dir}` names: the mount point fsbench made.
    dir: PathBuf,
    device: Option<String>,
    /// Detached at teardown: a loop device fsbench attached.
    attached: bool,
    /// Set while fsbench's mount is in place (a remount that could not
    /// mount again clears it).
    mounted: Cell<bool>,
    /// The mount command line, for a remount.
    mount: Vec<String>,
    teardown: Vec<String>,
    /// Teardown commands run only for a configuration that reached its
    /// setup (its mount, if any, made).
    setup_started: bool,
    record: Built,
    seconds: f64,
}

impl Builds {
    /// Builds `configs` in a new marked scratch directory in the work
    /// directory. A configuration that cannot be built is taken down and
    /// listed in `failed`, with what its commands printed; the others are
    /// built. An interrupt takes down what was built and returns.
    pub fn create(configs: &[&Config], place: &Place, run_id: &str) -> anyhow::Result<Builds> {
        let scratch = Scratch::create(&place.work_dir, run_id, false)?;
        let root = scratch.path().to_path_buf();
        let mut builds = Builds {
            built: Vec::new(),
            failed: Vec::new(),
            scratch: Some(scratch),
        };
        for sub in ["img", "mnt", "cwd"] {
            std::fs::create_dir(root.join(sub))
                .with_context(|| format!("cannot create {}", root.join(sub).display()))?;
        }
        for config in configs {
            crate::interrupt::check()?;
            let clock = Instant::now();
            let mut fs = Fs::new(config, &root);
            let outcome = fs.build(config, &root, place);
            fs.seconds = clock.elapsed().as_secs_f64();
            match outcome {
                Ok(()) => builds.built.push(fs),
                Err(e) => {
                    fs.take_down();
                    crate::interrupt::check()?;
                    let why = format!("{e:#}");
                    eprintln!("fsbench: configuration {} not built: {why}", config.name);
                    builds.failed.push((config.name.clone(), why));
                }
            }
        }
        Ok(builds)
    }

    /// The configurations built, as targets: (name, path).
    pub fn targets(&self) -> Vec<(String, PathBuf)> {
        self.built
            .iter()
            .map(|fs| (fs.name.clone(), fs.target.clone()))
            .collect()
    }

    /// Unmounts the configuration named `name` and mounts it again as it
    /// was (`--cold remount`): every cache of the file system goes. The
    /// unmount is not lazy: a file still open on it fails the remount
    /// rather than leave the caches in place.
    pub fn remount(&self, name: &str) -> anyhow::Result<()> {
        let Some(fs) = self.built.iter().find(|fs| fs.name == name) else {
            anyhow::bail!("--cold remount: no configuration {name}");
        };
        if fs.mount.is_empty() {
            return crate::error::usage(format!(
                "--cold remount: {name} is made by its setup commands; fsbench cannot remount it"
            ));
        }
        let point = fs.dir.display().to_string();
        unmount_when_released(&point)
            .with_context(|| format!("--cold remount: cannot unmount {point}"))?;
        fs.mounted.set(false);
        output_of(&fs.mount, None)
            .with_context(|| format!("--cold remount: cannot mount {point} again"))?;
        fs.mounted.set(true);
        Ok(())
    }

    /// Takes everything down (see `teardown`) and returns what each
    /// configuration's record says, the teardown commands and the time
    /// they took included.
    pub fn finish(mut self) -> Vec<(String, Built)> {
        self.teardown();
        std::mem::take(&mut self.built)
            .into_iter()
            .map(|fs| {
                let mut record = fs.record;
                record.build_seconds = fs.seconds;
                (fs.name, record)
            })
            .collect()
    }

    /// Runs the teardown commands, unmounts and detaches everything, then
    /// removes the scratch directory with the images. Each problem is
    /// printed; the exit code says one happened (the scratch cleanup's
    /// failure flag).
    fn teardown(&mut self) {
        for fs in self.built.iter_mut().rev() {
            let clock = Instant::now();
            fs.take_down();
            fs.seconds += clock.elapsed().as_secs_f64();
        }
        if let Some(scratch) = self.scratch.take() {
            // Any loop device still on an image in here (one attached as a
            // signal came) is detached before the images go.
            for device in loops_inside(scratch.path()) {
                if let Err(e) = detach(&device) {
                    eprintln!("fsbench: cannot detach {device}: {e:#}");
                }
            }
            let _ = scratch.finish();
        }
    }
}

impl Drop for Builds {
    fn drop(&mut self) {
        self.teardown();
    }
}

impl Fs {
    fn new(config: &Config, root: &Path) -> Fs {
        let dir = root.join("mnt").join(&config.name);
        Fs {
            name: config.name.clone(),
            target: dir.clone(),
            dir,
            device: None,
            attached: false,
            mounted: Cell::new(false),
            mount: Vec::new(),
            teardown: Vec::new(),
            setup_started: false,
            record: Built {
                mkfs: config.mkfs_line(),
                options: config.options.clone(),
                fs_type: config.fs_type.clone(),
                parameters: config.parameters.clone(),
                builds: 1,
                ..Built::default()
            },
            seconds: 0.0,
        }
    }

    /// Makes `config` in the scratch directory `root`: its file system
    /// (or mount), then its setup commands.
    fn build(&mut self, config: &Config, root: &Path, place: &Place) -> anyhow::Result<()> {
        std::fs::create_dir(&self.dir)
            .with_context(|| format!("cannot create {}", self.dir.display()))?;
        match &config.make {
            Make::Mkfs { words, device } => {
                let device = match device.as_deref().or(place.wipe_default()) {
                    Some(named) => self.named_device(named)?,
                    None => self.attach_image(config, root, place)?,
                };
                self.record.device = device.clone();
                self.mkfs(words, &device, root)?;
                self.mount(config, &device)?;
                self.record.fs_info = fs_info(&words[0], &device, &self.dir);
            }
            Make::Mount { source } => {
                refuse_mounted_source(source)?;
                self.record.source = source.clone();
                self.mount(config, source)?;
            }
            Make::Commands { .. } => {}
        }
        self.setup(config, root)
    }

    /// A device --wipe named (`Place::check`), checked again now (a mount
    /// may have come since the command line was read), and opened
    /// exclusively: the kernel refuses while anything holds it.
    fn named_device(&mut self, named: &Path) -> anyhow::Result<String> {
        let checked = crate::storage::wipe::check_wipeable(named)?;
        let exclusive = rustix::fs::open(
            &checked.path,
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::EXCL | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        );
        if let Err(e) = exclusive {
            return crate::error::usage(format!(
                "--wipe {}: it is in use ({e}): not wiped",
                named.display()
            ));
        }
        let device = checked.path.display().to_string();
        self.device = Some(device.clone());
        Ok(device)
    }

    /// A new sparse image of the work's size in `img/`, and a loop device
    /// on it: the device's name.
    fn attach_image(
        &mut self,
        config: &Config,
        root: &Path,
        place: &Place,
    ) -> anyhow::Result<String> {
        let image = root.join("img").join(format!("{}.img", config.name));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&image)
            .with_context(|| format!("cannot create {}", image.display()))?;
        file.set_len(place.image_size)
            .with_context(|| format!("cannot size {}", image.display()))?;
        drop(file);
        let attach = ["losetup", "--find", "--show"].map(String::from);
        let out = self.run(
            &[&attach[..], &[image.display().to_string()]].concat(),
            None,
        )?;
        let device = out.trim().to_string();
        if !device.starts_with("/dev/loop") {
            anyhow::bail!("losetup gave {device:?}, not a loop device");
        }
        self.device = Some(device.clone());
        self.attached = true;
        // The one check mkfs depends on: this loop device is backed by the
        // image fsbench just made.
        let backing = backing_file(&device);
        if backing.as_deref() != Some(image.as_path()) {
            anyhow::bail!(
                "{device} is not backed by {} (it is by {:?}): mkfs not run",
                image.display(),
                backing
            );
        }
        Ok(device)
    }

    /// mkfs's words with `{dev}` filled in, run in an empty directory (a
    /// bare file name in its arguments finds nothing to write to).
    fn mkfs(&mut self, words: &[String], device: &str, root: &Path) -> anyhow::Result<()> {
        crate::interrupt::check()?;
        let mkfs: Vec<String> = words
            .iter()
            .map(|w| match w.as_str() {
                DEV => device.to_string(),
                w => w.to_string(),
            })
            .collect();
        self.record.mkfs_output = self.run(&mkfs, Some(&root.join("cwd")))?;
        crate::interrupt::check()
    }

    /// Mounts `source` on the configuration's directory with its type and
    /// options.
    fn mount(&mut self, config: &Config, source: &str) -> anyhow::Result<()> {
        let mut mount = vec!["mount".to_string()];
        if let Some(t) = &config.fs_type {
            mount.extend(["-t".into(), t.clone()]);
        }
        if !config.options.is_empty() {
            mount.extend(["-o".into(), config.options.clone()]);
        }
        mount.extend([source.to_string(), self.dir.display().to_string()]);
        self.run(&mount, None)?;
        self.mounted.set(true);
        self.mount = mount;
        Ok(())
    }

    /// The setup commands, `{dir}` and `{dev}` filled in; then the target
    /// (the path they were to make) must be a directory. The teardown
    /// commands are kept to run once setup has started.
    fn setup(&mut self, config: &Config, root: &Path) -> anyhow::Result<()> {
        let teardown = config.teardown.iter().map(|l| self.fill(l)).collect();
        let lines: Vec<String> = config.setup.iter().map(|l| self.fill(l)).collect();
        self.teardown = teardown;
        self.setup_started = true;
        for line in lines {
            crate::interrupt::check()?;
            self.run_line(&line, root)?;
        }
        if let Make::Commands { path } = &config.make {
            self.target = PathBuf::from(self.fill(path));
            if !self.target.is_dir() {
                anyhow::bail!(
                    "its setup commands did not make {}, its path",
                    self.target.display()
                );
            }
        }
        Ok(())
    }

    /// `line` with `{dir}` and `{dev}` filled in.
    fn fill(&self, line: &str) -> String {
        let line = line.replace(DIR, &self.dir.display().to_string());
        match &self.device {
            Some(device) => line.replace(DEV, device),
            None => line,
        }
    }

    /// Runs the program `words`, recording it; its output, or an error
    /// with it.
    fn run(&mut self, words: &[String], dir: Option<&Path>) -> anyhow::Result<String> {
        let line = quoted(words);
        self.record.commands.push(line.clone());
        checked(output_of(words, dir), &line)
    }

    /// Runs a setup or teardown shell line in the scratch directory's
    /// empty `cwd`, recording it.
    fn run_line(&mut self, line: &str, root: &Path) -> anyhow::Result<String> {
        self.record.commands.push(line.to_string());
        checked(line_output(line, Some(&root.join("cwd"))), line)
    }

    /// Teardown commands (if setup started), unmount, detach; each problem
    /// printed, none stops the rest.
    fn take_down(&mut self) {
        let root = self
            .dir
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf);
        if self.setup_started {
            self.setup_started = false;
            for line in std::mem::take(&mut self.teardown) {
                let done = self.run_line(&line, root.as_deref().unwrap_or(Path::new("/")));
                if let Err(e) = done {
                    eprintln!("fsbench: {}: teardown: {e:#}", self.name);
                }
            }
        }
        if self.mounted.replace(false) {
            let point = self.dir.display().to_string();
            self.record.commands.push(format!("umount {point}"));
            if let Err(e) = unmount(&point) {
                eprintln!("fsbench: cannot unmount {point}: {e:#}");
            }
        }
        if self.attached
            && let Some(device) = &self.device
        {
            self.record.commands.push(format!("losetup -d {device}"));
            if let Err(e) = detach(device) {
                eprintln!("fsbench: cannot detach {device}: {e:#}");
            }
            self.attached = false;
        }
    }
}

/// A command's outcome; a failure says the command line, except when a
/// Ctrl-C reached it too: the run was interrupted, it did not fail.
fn checked(result: anyhow::Result<String>, line: &str) -> anyhow::Result<String> {
    if result.is_err() {
        crate::interrupt::check()?;
    }
    result.with_context(|| format!("`{line}` failed"))
}

/// Refuses a block device that is mounted already: a second mount shares
/// its superblock, so the configuration's options would not apply (and
/// the user's mount would be measured).
fn refuse_mounted_source(source: &str) -> anyhow::Result<()> {
    let Ok(canonical) = std::fs::canonicalize(source) else {
        return Ok(());
    };
    let is_block = std::fs::metadata(&canonical)
        .map(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()))
        .unwrap_or(false);
    if !is_block {
        return Ok(());
    }
    let mounted = read_mountinfo()
        .into_iter()
        .find(|m| std::fs::canonicalize(&m.source).is_ok_and(|s| s == canonical));
    match mounted {
        Some(m) => crate::error::usage(format!(
            "source {source} is mounted on {}: its options would not apply; unmount it first",
            m.mount_point.display()
        )),
        None => Ok(()),
    }
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

/// `umount`, not lazily. The last references to files just closed may be
/// dropped a moment later (by the threads that used them), so a busy
/// file system is tried again for up to a second before it counts.
fn unmount_when_released(point: &str) -> anyhow::Result<()> {
    let umount = ["umount".to_string(), point.to_string()];
    for _ in 0..20 {
        if output_of(&umount, None).is_ok() {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    output_of(&umount, None).map(|_| ())
}

/// `umount`, lazily if the file system is busy.
fn unmount(point: &str) -> anyhow::Result<()> {
    match output_of(&["umount".into(), point.into()], None) {
        Ok(_) => Ok(()),
        Err(_) => output_of(&["umount".into(), "-l".into(), point.into()], None).map(|_| ()),
    }
}

fn detach(device: &str) -> anyhow::Result<String> {
    output_of(&["losetup".into(), "-d".into(), device.into()], None)
}

/// The file behind loop device `device` (`/dev/loopN`), from sysfs.
fn backing_file(device: &str) -> Option<PathBuf> {
    let name = device.strip_prefix("/dev/")?;
    let text = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).ok()?;
    Some(PathBuf::from(text.trim_end_matches('\n')))
}

/// Every loop device whose backing file lies inside `dir`.
fn loops_inside(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    let mut found: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("loop"))
        .map(|name| format!("/dev/{name}"))
        .filter(|dev| backing_file(dev).is_some_and(|b| b.starts_with(dir) && b != dir))
        .collect();
    found.sort();
    found
}

/// What a killed `--configs` run left in its scratch directory `dir`: every
/// mount below `dir` (its configurations' mounts: images, wiped devices,
/// sources, what setup commands mounted in `{dir}`) is unmounted, lazily
/// if busy, deepest first; then the loop devices backed by images inside
/// `dir` are detached. No mount elsewhere is touched (the removal that
/// follows does not cross into another file system). Returns what was
/// done, one line each.
pub fn release_leftovers(dir: &Path) -> anyhow::Result<Vec<String>> {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut done = Vec::new();
    let mut ours: Vec<PathBuf> = read_mountinfo()
        .into_iter()
        .map(|m| m.mount_point)
        .filter(|point| point.starts_with(dir.join("mnt")))
        .collect();
    ours.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    ours.dedup();
    for point in ours {
        let shown = point.display().to_string();
        unmount(&shown).with_context(|| format!("cannot unmount {shown}"))?;
        done.push(format!("unmounted {shown}"));
    }
    for device in loops_inside(&dir) {
        detach(&device).with_context(|| format!("cannot detach {device}"))?;
        done.push(format!("detached {device}"));
    }
    Ok(done)
}

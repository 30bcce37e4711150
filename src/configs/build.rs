//! Building configurations and taking them down, in ONE marked scratch
//! directory fsbench makes in the work directory (`--images DIR`): per
//! configuration a mount point `mnt/<name>` and, for one made on an image,
//! a sparse image file `img/<name>.img` with a loop device on it
//! (`losetup --find --show`). mkfs runs only on a loop device backed by
//! the image just made (compared by inode), or on a device the user named
//! with --wipe, checked again (`storage::wipe`) just before. Every image
//! and mount is recorded as it is made (`made`), and every mount fsbench
//! makes is private, so no unmount of its propagates anywhere else.
//! Teardown (the teardown commands, unmount, detach; the scratch
//! directory's removal takes the images) runs on every way out: the end,
//! an error, a signal (the value is dropped), and releases only what the
//! record names. What a kill -9 leaves, `fsbench clean DIR` releases
//! (`release_leftovers`) from the same record before it removes the
//! directory.
use std::cell::{Cell, RefCell};
use std::os::fd::BorrowedFd;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use rustix::fs::Mode;

use super::kinds::Standing;
use super::place::Place;
use super::{Config, DEV, DIR};
use crate::console::stderr_line;
use crate::result::built::Built;
use crate::shell::{line_output, output_of, quoted};
use crate::storage::env::mounts::read_mountinfo;
use crate::storage::loopdev::FileId;
use crate::storage::made::{self, Made, Record, Unmounted, WhenBusy};
use crate::storage::scratch::Scratch;

/// The configurations built, mounted and ready to be measured.
pub struct Builds {
    built: Vec<Fs>,
    /// The configurations that could not be built, with why.
    pub failed: Vec<(String, String)>,
    /// What was made, as it was made (see `made`): what teardown and
    /// `clean` release.
    record: RefCell<Record>,
    /// Declared after `built`: dropped (removed) after the teardown.
    scratch: Option<Scratch>,
}

/// One configuration as it is built, stands and is taken down; its kind
/// (`kinds`) builds its part through it.
pub(super) struct Fs {
    pub(super) name: String,
    /// The target: the mount point, or the path setup commands made.
    pub(super) target: PathBuf,
    /// The directory `{dir}` names: the mount point fsbench made.
    pub(super) dir: PathBuf,
    /// The same, relative to the scratch directory (`mnt/<name>`).
    at: String,
    /// The device `{dev}` names: the one mkfs ran on.
    pub(super) device: Option<String>,
    /// The image fsbench created for it: a loop device backed by it is
    /// detached at teardown.
    pub(super) image: Option<FileId>,
    /// What its kind holds while it stands: taken down last.
    pub(super) held: Option<Box<dyn Standing>>,
    /// Whether its kind lets `--cold remount` mount it again.
    remountable: bool,
    /// The id of fsbench's own mount on `dir` while it is in place (a
    /// remount that could not mount again clears it).
    mounted: Cell<Option<u64>>,
    /// Mounts its setup commands made on or below `dir`: (id, place).
    setup_mounts: Vec<(u64, String)>,
    /// The mount command line, for a remount.
    mount: Vec<String>,
    teardown: Vec<String>,
    /// Teardown commands run only for a configuration that reached its
    /// setup (its mount, if any, made).
    setup_started: bool,
    pub(super) record: Built,
    seconds: f64,
}

impl Builds {
    /// Builds `configs` in a new marked scratch directory in the work
    /// directory. A configuration that cannot be built is taken down; the
    /// error names it and takes down the others (a comparison without it
    /// is not the one asked for), or, with `keep_going`, it is said and
    /// listed in `failed`, with what its commands printed, and the others
    /// are built. An interrupt takes down what was built and returns.
    pub fn create(
        configs: &[&Config],
        place: &Place,
        run_id: &str,
        keep_going: bool,
    ) -> anyhow::Result<Builds> {
        let scratch = Scratch::create(&place.work_dir, run_id, false)?;
        let record = Record::create(scratch.dir())?;
        for sub in [c"img", c"mnt", c"cwd"] {
            rustix::fs::mkdirat(scratch.dir(), sub, Mode::from_raw_mode(0o700)).with_context(
                || format!("cannot create {sub:?} in {}", scratch.path().display()),
            )?;
        }
        let root = scratch.path().to_path_buf();
        let mut builds = Builds {
            built: Vec::new(),
            failed: Vec::new(),
            record: RefCell::new(record),
            scratch: Some(scratch),
        };
        for config in configs {
            crate::interrupt::check()?;
            let clock = Instant::now();
            let mut fs = Fs::new(config, &root);
            let outcome = fs.build(config, &builds.site(place));
            fs.seconds = clock.elapsed().as_secs_f64();
            match outcome {
                Ok(()) => builds.built.push(fs),
                Err(e) => {
                    fs.take_down(builds.dir());
                    crate::interrupt::check()?;
                    if !keep_going {
                        return Err(e.context(format!("configuration {}", config.name)));
                    }
                    let why = format!("{e:#}");
                    stderr_line!("fsbench: configuration {} not built: {why}", config.name);
                    builds.failed.push((config.name.clone(), why));
                }
            }
        }
        Ok(builds)
    }

    /// The scratch directory's descriptor: everything fsbench made is
    /// reached through it.
    fn dir(&self) -> BorrowedFd<'_> {
        let scratch = self.scratch.as_ref();
        scratch
            .expect("the scratch directory lives as long as the builds")
            .dir()
    }

    /// Where a configuration is built: the scratch directory, its record
    /// and the user's place.
    fn site<'a>(&'a self, place: &'a Place) -> Site<'a> {
        Site {
            dir: self.dir(),
            root: self.scratch.as_ref().map_or(Path::new("/"), Scratch::path),
            record: &self.record,
            place,
        }
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
        let Some(id) = fs
            .mounted
            .get()
            .filter(|_| fs.remountable && !fs.mount.is_empty())
        else {
            return crate::error::usage(format!(
                "--cold remount: {name} is made by its setup commands; fsbench cannot remount it"
            ));
        };
        let point = fs.dir.display().to_string();
        unmount_when_released(self.dir(), id, &fs.at)
            .with_context(|| format!("--cold remount: cannot unmount {point}"))?;
        fs.mounted.set(None);
        output_of(&fs.mount, None)
            .with_context(|| format!("--cold remount: cannot mount {point} again"))?;
        let id = fs.own_mount(self.dir(), &mut self.record.borrow_mut())?;
        fs.mounted.set(Some(id));
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
        let Some(scratch) = self.scratch.take() else {
            return;
        };
        for fs in self.built.iter_mut().rev() {
            let clock = Instant::now();
            fs.take_down(scratch.dir());
            fs.seconds += clock.elapsed().as_secs_f64();
        }
        // What is still made (a loop device attached as a signal came, a
        // configuration that failed half-built) is released from the
        // record before the images go.
        let released =
            made::read(scratch.dir()).and_then(|made| made::release(scratch.dir(), &made));
        match released {
            Ok(said) => said
                .iter()
                .filter(|line| line.starts_with("left"))
                .for_each(|line| stderr_line!("fsbench: {line}")),
            Err(e) => stderr_line!("fsbench: {e:#}"),
        }
        let _ = scratch.finish();
    }
}

impl Drop for Builds {
    fn drop(&mut self) {
        self.teardown();
    }
}

/// Where one configuration is built.
pub(super) struct Site<'a> {
    /// The scratch directory, open, and its path (for the commands).
    pub(super) dir: BorrowedFd<'a>,
    pub(super) root: &'a Path,
    pub(super) record: &'a RefCell<Record>,
    pub(super) place: &'a Place,
}

impl Site<'_> {
    /// Records `made` before anything relies on it.
    pub(super) fn add(&self, made: &Made) -> anyhow::Result<()> {
        self.record.borrow_mut().add(made)
    }
}

impl Fs {
    fn new(config: &Config, root: &Path) -> Fs {
        let at = format!("mnt/{}", config.name);
        Fs {
            name: config.name.clone(),
            target: root.join(&at),
            dir: root.join(&at),
            at,
            device: None,
            image: None,
            held: None,
            remountable: config.make.kind().can_remount(),
            mounted: Cell::new(None),
            setup_mounts: Vec::new(),
            mount: Vec::new(),
            teardown: Vec::new(),
            setup_started: false,
            record: Built {
                mkfs: config.mkfs_line(),
                options: config.options.clone(),
                fs_type: config.fs_type.clone(),
                parameters: config.parameters.clone(),
                declared_risks: config.declared_risks.clone(),
                builds: 1,
                ..Built::default()
            },
            seconds: 0.0,
        }
    }

    /// Makes `config` at `site`: its kind's part (a file system and its
    /// mount, a mount), then its setup commands, then its kind's target.
    fn build(&mut self, config: &Config, site: &Site) -> anyhow::Result<()> {
        rustix::fs::mkdirat(site.dir, self.at.as_str(), Mode::from_raw_mode(0o700))
            .with_context(|| format!("cannot create {}", self.dir.display()))?;
        let kind = config.make.kind();
        kind.build(self, config, site)?;
        self.setup(config, site)?;
        kind.after_setup(self)
    }

    /// Mounts `source` on the configuration's directory with its type and
    /// options (`--` before the source: it is never read as an option),
    /// then records the mount and makes it private.
    pub(super) fn mount(
        &mut self,
        config: &Config,
        source: &str,
        site: &Site,
    ) -> anyhow::Result<()> {
        let mut mount = vec!["mount".to_string()];
        if let Some(t) = &config.fs_type {
            mount.extend(["-t".into(), t.clone()]);
        }
        if !config.options.is_empty() {
            mount.extend(["-o".into(), config.options.clone()]);
        }
        mount.extend([
            "--".into(),
            source.to_string(),
            self.dir.display().to_string(),
        ]);
        self.run(&mount, None)?;
        self.mount = mount;
        let id = self.own_mount(site.dir, &mut site.record.borrow_mut())?;
        self.mounted.set(Some(id));
        Ok(())
    }

    /// Records the mount fsbench just made on its directory and makes it
    /// private; its id.
    fn own_mount(&self, dir: BorrowedFd<'_>, record: &mut Record) -> anyhow::Result<u64> {
        let id = made::record_mount(dir, &self.at, record)?;
        made::make_private(dir, &self.at)?;
        Ok(id)
    }

    /// The setup commands, `{dir}` and `{dev}` filled in. The teardown
    /// commands are kept to run once setup has started; the mounts the
    /// setup commands made on or below `{dir}` are recorded.
    fn setup(&mut self, config: &Config, site: &Site) -> anyhow::Result<()> {
        let teardown = config.teardown.iter().map(|l| self.fill(l)).collect();
        let lines: Vec<String> = config.setup.iter().map(|l| self.fill(l)).collect();
        self.teardown = teardown;
        self.setup_started = true;
        let ran = lines.iter().try_for_each(|line| {
            crate::interrupt::check()?;
            self.run_line(line, site.dir).map(drop)
        });
        if !lines.is_empty() {
            self.record_setup_mounts(site)?;
        }
        ran
    }

    /// Records the mounts on or below the configuration's directory that
    /// are not fsbench's own: its setup commands made them (no one else
    /// can mount in a scratch directory of mode 0700 but root).
    fn record_setup_mounts(&mut self, site: &Site) -> anyhow::Result<()> {
        let real = made::real_path(site.dir).context("cannot find the scratch directory")?;
        let dir = real.join(&self.at);
        let own = self.mounted.get();
        for mount in read_mountinfo() {
            let Ok(below) = mount.mount_point.strip_prefix(&dir) else {
                continue;
            };
            if Some(mount.id) == own || self.setup_mounts.iter().any(|(id, _)| *id == mount.id) {
                continue;
            }
            let at = below_place(&self.at, below);
            site.add(&Made::Mount {
                id: mount.id,
                at: at.clone(),
            })?;
            self.setup_mounts.push((mount.id, at));
        }
        Ok(())
    }

    /// `line` with `{dir}` and `{dev}` filled in.
    pub(super) fn fill(&self, line: &str) -> String {
        let line = line.replace(DIR, &self.dir.display().to_string());
        match &self.device {
            Some(device) => line.replace(DEV, device),
            None => line,
        }
    }

    /// Runs the program `words`, recording it; its output, or an error
    /// with it.
    pub(super) fn run(&mut self, words: &[String], dir: Option<&Path>) -> anyhow::Result<String> {
        let line = quoted(words);
        self.record.commands.push(line.clone());
        checked(output_of(words, dir), &line)
    }

    /// Runs a setup or teardown shell line in the scratch directory's
    /// empty `cwd`, recording it.
    fn run_line(&mut self, line: &str, dir: BorrowedFd<'_>) -> anyhow::Result<String> {
        self.record.commands.push(line.to_string());
        checked(line_output(line, Some(&made::through_fd(dir, "cwd"))), line)
    }

    /// Teardown commands (if setup started), then the mounts recorded for
    /// it (its setup commands' first), then its loop device, then what its
    /// kind holds; each problem printed, none stops the rest.
    fn take_down(&mut self, dir: BorrowedFd<'_>) {
        if self.setup_started {
            self.setup_started = false;
            for line in std::mem::take(&mut self.teardown) {
                if let Err(e) = self.run_line(&line, dir) {
                    stderr_line!("fsbench: {}: teardown: {e:#}", self.name);
                }
            }
        }
        let own = self.mounted.take().map(|id| (id, self.at.clone()));
        let setup = std::mem::take(&mut self.setup_mounts);
        for (id, at) in setup.into_iter().rev().chain(own) {
            let below = Path::new(&at)
                .strip_prefix(&self.at)
                .unwrap_or(Path::new(""));
            let point =
                Path::new(&below_place(&self.dir.display().to_string(), below)).to_path_buf();
            self.record
                .commands
                .push(format!("umount {}", point.display()));
            match made::unmount(dir, id, &at, WhenBusy::Detach) {
                Ok(Unmounted::Other(other)) => stderr_line!(
                    "fsbench: left {} alone: mount {other} there is not the one fsbench made",
                    point.display()
                ),
                Ok(_) => {}
                Err(e) => stderr_line!("fsbench: cannot unmount {}: {e:#}", point.display()),
            }
        }
        for device in self.image.take().map_or_else(Vec::new, |image| {
            crate::storage::loopdev::backed_by(&[image])
        }) {
            self.record
                .commands
                .push(format!("losetup -d {}", device.path.display()));
            if let Err(e) = device.detach() {
                stderr_line!("fsbench: {e:#}");
            }
        }
        if let Some(held) = self.held.take() {
            held.take_down(dir, &self.name, &mut self.record);
        }
    }
}

/// `place/below`, or `place` itself when `below` is empty (no trailing
/// slash: a record's places have no empty parts).
fn below_place(place: &str, below: &Path) -> String {
    match below.as_os_str().is_empty() {
        true => place.to_string(),
        false => Path::new(place).join(below).display().to_string(),
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

/// Unmounts fsbench's mount `id` at `at`, not lazily. The last references
/// to files just closed may be dropped a moment later (by the threads
/// that used them), so a busy file system is tried again for up to a
/// second before it counts.
fn unmount_when_released(dir: BorrowedFd<'_>, id: u64, at: &str) -> anyhow::Result<()> {
    let mut tries = 0;
    loop {
        match made::unmount(dir, id, at, WhenBusy::Fail) {
            Ok(Unmounted::Done | Unmounted::Detached) => return Ok(()),
            Ok(Unmounted::Gone) => anyhow::bail!("it is no longer mounted"),
            Ok(Unmounted::Other(other)) => {
                anyhow::bail!("mount {other} there is not the one fsbench made")
            }
            Err(e) if tries == 20 => return Err(e),
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(50)),
        }
        tries += 1;
    }
}

/// What a killed `--configs` run left in its scratch directory, open as
/// `dir`: the mounts it recorded (each only while it is still the one
/// recorded: a mount someone else put there is left alone, and the
/// removal that follows does not cross into it) and the loop devices
/// backed by its images; nothing when the record is another user's.
/// Returns what was done, one line each.
pub fn release_leftovers(dir: BorrowedFd<'_>) -> anyhow::Result<Vec<String>> {
    match made::read_leftover(dir)? {
        made::Found::Trusted(made) => made::release(dir, &made),
        made::Found::Foreign(uid) => Ok(vec![format!(
            "released nothing its record names: the record belongs to uid {uid}, not to you or root"
        )]),
    }
}

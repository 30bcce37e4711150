//! Building the configurations and taking them down: in ONE marked
//! scratch directory fsbench makes in `--images DIR`, per configuration a
//! sparse image file (`img/<name>.img`), a loop device on it (`losetup
//! --find --show`), mkfs on that loop device, and a mount on
//! `mnt/<name>`. mkfs runs only on a loop device whose backing file is
//! checked to be the image just made. Teardown (unmount, detach; the
//! scratch directory's removal takes the images) runs on every way out:
//! the end, an error, a signal (the value is dropped). What a kill -9
//! leaves, `fsbench clean DIR` releases (`release_leftovers`) before it
//! removes the directory.
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context;

use super::{Built, Config, DEV};
use crate::error::usage;
use crate::storage::env::mounts::read_mountinfo;
use crate::storage::scratch::Scratch;

/// The configurations built, mounted and ready to be measured.
pub struct Builds {
    built: Vec<Fs>,
    /// Declared after `built`: dropped (removed) after the teardown.
    scratch: Option<Scratch>,
}

struct Fs {
    name: String,
    mount_point: PathBuf,
    device: Option<String>,
    mounted: bool,
    record: Built,
}

impl Builds {
    /// Builds every configuration in a new marked scratch directory in
    /// `images`, each on an image of `size` bytes. On an error (or a
    /// signal) what was built so far is taken down before it returns.
    pub fn create(
        configs: &[Config],
        images: &Path,
        size: u64,
        run_id: &str,
    ) -> anyhow::Result<Builds> {
        let images = match std::fs::canonicalize(images) {
            Ok(dir) if dir.is_dir() => dir,
            Ok(_) => return usage(format!("--images {}: not a directory", images.display())),
            Err(e) => return usage(format!("--images {}: {e}", images.display())),
        };
        if size < 16 << 20 {
            return usage("--image-size: at least 16m (mkfs needs room)");
        }
        let scratch = Scratch::create(&images, run_id, false)?;
        let mut builds = Builds {
            built: Vec::new(),
            scratch: None,
        };
        let root = scratch.path().to_path_buf();
        builds.scratch = Some(scratch);
        for sub in ["img", "mnt", "cwd"] {
            std::fs::create_dir(root.join(sub))
                .with_context(|| format!("cannot create {}", root.join(sub).display()))?;
        }
        for config in configs {
            crate::interrupt::check()?;
            let fs = Fs {
                name: config.name.clone(),
                mount_point: root.join("mnt").join(&config.name),
                device: None,
                mounted: false,
                record: Built {
                    mkfs: config.mkfs_line(),
                    options: config.options.clone(),
                    fs_type: config.fs_type.clone(),
                    parameters: config.parameters.clone(),
                    ..Built::default()
                },
            };
            builds.built.push(fs);
            let fs = builds.built.last_mut().expect("just pushed");
            fs.build(config, &root, size)
                .with_context(|| format!("configuration {}", config.name))?;
        }
        Ok(builds)
    }

    /// The mounts, as targets: (name, mount point).
    pub fn targets(&self) -> Vec<(String, PathBuf)> {
        self.built
            .iter()
            .map(|fs| (fs.name.clone(), fs.mount_point.clone()))
            .collect()
    }

    /// What the result records of the configuration named `name`.
    pub fn record(&self, name: &str) -> Option<&Built> {
        self.built
            .iter()
            .find(|fs| fs.name == name)
            .map(|fs| &fs.record)
    }

    /// Unmounts and detaches everything, then removes the scratch
    /// directory with the images. Each problem is printed; the exit code
    /// says one happened (the scratch cleanup's failure flag).
    pub fn teardown(&mut self) {
        for fs in self.built.iter_mut().rev() {
            fs.teardown();
        }
        if let Some(scratch) = self.scratch.take() {
            // Any loop device still on an image in here (one attached as a
            // signal came) is detached before the images go.
            for device in loops_inside(scratch.path()) {
                if let Err(e) = run_command(&["losetup".into(), "-d".into(), device.clone()]) {
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
    /// Makes `config` in the scratch directory `root`.
    fn build(&mut self, config: &Config, root: &Path, size: u64) -> anyhow::Result<()> {
        let image = root.join("img").join(format!("{}.img", config.name));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&image)
            .with_context(|| format!("cannot create {}", image.display()))?;
        file.set_len(size)
            .with_context(|| format!("cannot size {}", image.display()))?;
        drop(file);
        let attach = vec![
            "losetup".to_string(),
            "--find".into(),
            "--show".into(),
            image.display().to_string(),
        ];
        let out = self.run(&attach)?;
        let device = out.trim().to_string();
        if !device.starts_with("/dev/loop") {
            anyhow::bail!("losetup gave {device:?}, not a loop device");
        }
        self.device = Some(device.clone());
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
        crate::interrupt::check()?;
        let mkfs: Vec<String> = config
            .mkfs
            .iter()
            .map(|w| match w.as_str() {
                DEV => device.clone(),
                w => w.to_string(),
            })
            .collect();
        // In an empty directory: a bare file name in mkfs's arguments
        // finds nothing to write to.
        self.record.mkfs_output = self.run_in(&mkfs, Some(&root.join("cwd")))?;
        crate::interrupt::check()?;
        std::fs::create_dir(&self.mount_point)
            .with_context(|| format!("cannot create {}", self.mount_point.display()))?;
        let mut mount = vec!["mount".to_string()];
        if let Some(t) = &config.fs_type {
            mount.extend(["-t".into(), t.clone()]);
        }
        if !config.options.is_empty() {
            mount.extend(["-o".into(), config.options.clone()]);
        }
        mount.extend([device, self.mount_point.display().to_string()]);
        self.run(&mount)?;
        self.mounted = true;
        self.record.fs_info = fs_info(
            &config.mkfs[0],
            &mount[mount.len() - 2],
            &mount[mount.len() - 1],
        );
        Ok(())
    }

    /// Runs `words`, recording it; its output, or an error with it.
    fn run(&mut self, words: &[String]) -> anyhow::Result<String> {
        self.run_in(words, None)
    }

    /// `run` in directory `dir` (the current one if None).
    fn run_in(&mut self, words: &[String], dir: Option<&Path>) -> anyhow::Result<String> {
        let line = shown(words);
        self.record.commands.push(line.clone());
        let result = command_output(words, dir);
        if result.is_err() {
            // A Ctrl-C reaches mkfs or mount too: the run was interrupted,
            // it did not fail. (A command that succeeded is taken in hand
            // first: the caller checks for a signal next.)
            crate::interrupt::check()?;
        }
        result.with_context(|| format!("`{line}` failed"))
    }

    fn teardown(&mut self) {
        if self.mounted {
            let point = self.mount_point.display().to_string();
            if let Err(e) = unmount(&point) {
                eprintln!("fsbench: cannot unmount {point}: {e:#}");
            }
            self.mounted = false;
        }
        if let Some(device) = self.device.take()
            && let Err(e) = run_command(&["losetup".into(), "-d".into(), device.clone()])
        {
            eprintln!("fsbench: cannot detach {device}: {e:#}");
        }
    }
}

/// Runs a command with no input; stdout then stderr, or an error that
/// carries the last lines of what it printed.
fn run_command(words: &[String]) -> anyhow::Result<String> {
    command_output(words, None)
}

/// `run_command` in directory `dir` (the current one if None).
fn command_output(words: &[String], dir: Option<&Path>) -> anyhow::Result<String> {
    let mut command = Command::new(&words[0]);
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let output = command
        .args(&words[1..])
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {}", words[0]))?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        let last: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let tail = last[last.len().saturating_sub(3)..].join(" / ");
        anyhow::bail!("{}: {tail}", output.status);
    }
    Ok(text)
}

/// The resulting parameters of the file system mkfs `program` made on
/// `device`, mounted on `point`, after the command line that asked; empty
/// where no command is known or it fails (it is information, not a step).
fn fs_info(program: &str, device: &str, point: &str) -> String {
    let base = Path::new(program)
        .file_name()
        .map(|b| b.to_string_lossy().into_owned())
        .unwrap_or_default();
    let words: Vec<String> = match base.as_str() {
        "mkfs.ext2" | "mkfs.ext3" | "mkfs.ext4" => {
            vec!["dumpe2fs".into(), "-h".into(), device.into()]
        }
        "mkfs.xfs" => vec!["xfs_info".into(), point.into()],
        "mkfs.btrfs" => vec![
            "btrfs".into(),
            "filesystem".into(),
            "show".into(),
            device.into(),
        ],
        _ => return String::new(),
    };
    match run_command(&words) {
        Ok(text) => format!("$ {}\n{text}", shown(&words)),
        Err(_) => String::new(),
    }
}

/// `umount`, lazily if the file system is busy.
fn unmount(point: &str) -> anyhow::Result<()> {
    match run_command(&["umount".into(), point.into()]) {
        Ok(_) => Ok(()),
        Err(_) => run_command(&["umount".into(), "-l".into(), point.into()]).map(|_| ()),
    }
}

/// A command line as it can be pasted into a shell.
fn shown(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=,:+@%".contains(c))
            {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
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

/// What a killed `--configs` run left in its scratch directory `dir`: the
/// mounts of loop devices backed by images inside `dir` are unmounted
/// (lazily if busy), deepest first, then those loop devices detached. No
/// other mount is touched (the removal that follows leaves any other
/// mount alone). Returns what was done, one line each.
pub fn release_leftovers(dir: &Path) -> anyhow::Result<Vec<String>> {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let devices = loops_inside(&dir);
    let mut done = Vec::new();
    if devices.is_empty() {
        return Ok(done);
    }
    let mut ours: Vec<PathBuf> = read_mountinfo()
        .into_iter()
        .filter(|m| m.mount_point.starts_with(&dir) && devices.contains(&m.source))
        .map(|m| m.mount_point)
        .collect();
    ours.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    ours.dedup();
    for point in ours {
        let shown = point.display().to_string();
        unmount(&shown).with_context(|| format!("cannot unmount {shown}"))?;
        done.push(format!("unmounted {shown}"));
    }
    for device in devices {
        run_command(&["losetup".into(), "-d".into(), device.clone()])
            .with_context(|| format!("cannot detach {device}"))?;
        done.push(format!("detached {device}"));
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_shown_quoted() {
        let words = ["mkfs.xfs", "-L", "a b", "/dev/loop0"].map(String::from);
        assert_eq!(shown(&words), "mkfs.xfs -L 'a b' /dev/loop0");
    }
}

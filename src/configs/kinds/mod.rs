//! The registry of build kinds: how a configuration comes to be (mkfs on
//! an image or a device, mkfs on a recorded disk, a mount of an existing
//! source, setup commands that make it). Each kind is described once, in
//! a module of its own (how an entry of its kind is read, what it
//! refuses, what it shares, how it is built), and listed once, in
//! `registry!` below; its data is a variant of `Make`, and `Make::kind` is
//! the one place that tells the kinds apart.
use std::collections::BTreeMap;
use std::os::fd::BorrowedFd;
use std::path::{Path, PathBuf};

use super::build::{Fs, Site};
use super::place::Place;
use super::{Config, DIR, Entry};
use crate::result::built::Built;

/// Declares each kind's module and lists its `READER` in `READERS`, in the
/// order messages name them.
macro_rules! registry {
    ($($kind:ident),* $(,)?) => {
        $(mod $kind;)*
        /// Every build kind. A new kind is a module here (its `READER` and
        /// its `Kind`), its name in the `registry!` line, its variant in
        /// `Make` and its line in `Make::kind`.
        static READERS: &[Reader] = &[$($kind::READER),*];
    };
}
registry!(mkfs, recorded, mount, commands);

/// How a configuration comes to be: its kind and the kind's data.
#[derive(Debug, Clone, PartialEq)]
pub enum Make {
    /// mkfs, split into words with `{dev}` last, on an image fsbench
    /// makes or on `device` (which --wipe must name).
    Mkfs {
        words: Vec<String>,
        device: Option<PathBuf>,
    },
    /// mkfs, as for `Mkfs`, on an image fsbench makes into a recorded
    /// disk (`storage::recorder`): every write and flush it gets is logged.
    Recorded { words: Vec<String> },
    /// A mount of an existing source: an NFS export, a device with other
    /// options, a tmpfs.
    Mount { source: String },
    /// The setup commands make it; the target is `path` (`{dir}` in it
    /// filled in: an empty directory fsbench made for it).
    Commands { path: String },
}

impl Make {
    /// Its kind, holding its data: the one match over the kinds.
    pub(super) fn kind(&self) -> Box<dyn Kind + '_> {
        match self {
            Make::Mkfs { words, device } => Box::new(mkfs::Mkfs {
                words,
                device: device.as_deref(),
            }),
            Make::Recorded { words } => Box::new(recorded::Recorded { words }),
            Make::Mount { source } => Box::new(mount::Mount { source }),
            Make::Commands { path } => Box::new(commands::Commands { path }),
        }
    }
}

/// How a configurations-file entry of one kind is read.
struct Reader {
    /// The entry's key that asks for the kind, as messages name it
    /// (`mkfs`), and what it gives (`a file system to make`).
    key: &'static str,
    what: &'static str,
    /// Whether messages offer its key as a way to make a configuration:
    /// not one that only qualifies another kind's (`recorded` goes with
    /// `mkfs`).
    offered: bool,
    /// Whether the entry is of this kind (its key given): at most one kind
    /// should claim an entry the refusals between kinds in `read` let
    /// through (else the first in the registry's order has it).
    claims: fn(&Entry) -> bool,
    /// The entry (of this kind) read and checked: its name, the sweep's
    /// parameters to substitute.
    read: fn(&Entry, &str, &BTreeMap<String, String>) -> anyhow::Result<Make>,
}

/// One configuration's kind, holding its data: what it needs, refuses
/// and shares, and its part of the build.
pub(super) trait Kind {
    /// The mkfs command's words as the configuration gives them (`{dev}`
    /// among them); empty when it runs none.
    fn mkfs_words(&self) -> Vec<String> {
        Vec::new()
    }

    /// Why it needs `--allow-shell` (said after the configuration's
    /// name), besides setup or teardown lines; None when nothing of its
    /// kind does.
    fn shell_permission(&self) -> Option<String> {
        None
    }

    /// The smallest image it is made on; 0 when it makes no image.
    fn minimum_image_bytes(&self) -> u64 {
        0
    }

    /// Whether it is made on an image fsbench creates in --images.
    fn on_image(&self, _place: &Place) -> bool {
        false
    }

    /// What it shares with other configurations (see `Config::shares`).
    fn shares(&self, config: &Config, wipe_default: Option<&Path>) -> Option<String>;

    /// Why it cannot be measured from several hosts under MPI (said
    /// after the configuration's name), where rank 0 alone builds it and
    /// every rank measures its path; None when it can. No default: each
    /// kind must say whether what it makes is seen beyond one host.
    fn one_host_only(&self) -> Option<&'static str>;

    /// The placeholders its setup and teardown lines keep, filled in when
    /// it is built.
    fn placeholders(&self) -> &'static [&'static str] {
        &[DIR]
    }

    /// Refuses what the rest of configuration `name` cannot be with this
    /// kind: its mount type and options.
    fn check(&self, _name: &str, _fs_type: Option<&str>, _options: &str) -> anyhow::Result<()> {
        Ok(())
    }

    /// Refuses, before anything is built, what `place` cannot make of it
    /// (`Place::check`).
    fn check_place(&self, _config: &Config, _place: &Place) -> anyhow::Result<()> {
        Ok(())
    }

    /// Makes it in `fs`'s directory before its setup commands run: the
    /// device, mkfs, the mount; or nothing. What it must release after
    /// the unmounts goes in `fs.image` (a loop device's backing file) or
    /// `fs.held`.
    fn build(&self, _fs: &mut Fs, _config: &Config, _site: &Site) -> anyhow::Result<()> {
        Ok(())
    }

    /// After its setup commands ran: where its target is, if not the
    /// mount point.
    fn after_setup(&self, _fs: &mut Fs) -> anyhow::Result<()> {
        Ok(())
    }

    /// Whether `--cold remount` may unmount it and mount it again.
    fn can_remount(&self) -> bool {
        true
    }
}

/// What a kind holds while its configuration stands (a process serving
/// its image, say), put in `Fs::held` by its build: taken down last, after
/// the teardown commands, the unmounts and the loop device's detach, on
/// every way out. Dropping it is not relied on.
pub(super) trait Standing {
    /// Releases it, through the scratch directory `dir`; each problem
    /// printed, none stops the rest. `name`: the configuration's;
    /// `record`: its record (the commands run).
    fn take_down(self: Box<Self>, dir: BorrowedFd<'_>, name: &str, record: &mut Built);
}

/// What makes the configuration `name` of `entry`: exactly one kind.
pub(super) fn read(
    entry: &Entry,
    name: &str,
    parameters: &BTreeMap<String, String>,
) -> anyhow::Result<Make> {
    if entry.recorded && entry.mkfs.is_none() {
        anyhow::bail!(
            "{name}: recorded is a disk fsbench makes and records under mkfs on an image: give mkfs (not a source or setup commands)"
        );
    }
    if entry.device.is_some() && entry.mkfs.is_none() {
        anyhow::bail!("{name}: device is where mkfs runs: give mkfs too");
    }
    if entry.path.is_some() && (entry.mkfs.is_some() || entry.source.is_some()) {
        anyhow::bail!("{name}: path is for a configuration its setup commands make");
    }
    if entry.mkfs.is_some() && entry.source.is_some() {
        anyhow::bail!(
            "{name}: give mkfs (a file system to make) or source (one to mount), not both"
        )
    }
    match READERS.iter().find(|reader| (reader.claims)(entry)) {
        Some(reader) => (reader.read)(entry, name, parameters),
        None => anyhow::bail!(
            "{name}: give {}",
            either(offered().map(|r| format!("{} ({})", r.key, r.what)))
        ),
    }
}

/// The keys that ask for a kind, for messages: `mkfs, source or setup`.
pub(super) fn keys() -> String {
    either(offered().map(|r| r.key.to_string()))
}

/// The kinds messages offer.
fn offered() -> impl Iterator<Item = &'static Reader> {
    READERS.iter().filter(|r| r.offered)
}

/// `a, b or c`.
fn either(items: impl Iterator<Item = String>) -> String {
    let items: Vec<String> = items.collect();
    match items.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_every_kind() {
        assert_eq!(keys(), "mkfs, source or setup");
        assert_eq!(either(["a".to_string()].into_iter()), "a");
        let error = |text: &str| format!("{:#}", crate::configs::parse(text).unwrap_err());
        assert_eq!(
            error("[[config]]\nname = \"a\"\n"),
            "a: give mkfs (a file system to make), source (one to mount) or setup (commands that make it)"
        );
        assert_eq!(
            error("matrix = {}\n"),
            "no configurations: give [[config]] tables with a name and mkfs, source or setup"
        );
    }
}

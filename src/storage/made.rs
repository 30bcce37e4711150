//! What a `--configs` run made, as it makes it: the images it created (by
//! inode) and the mounts it made (by mount id), one JSON line each in its
//! scratch directory, synced before anything depends on it. Teardown and
//! `fsbench clean` release exactly these, through the scratch directory's
//! descriptor: a loop device only when it is backed by one of the images
//! as found at its place in the scratch directory (no link followed), a
//! mount only when the mount at its place still has the recorded id; and
//! `clean` releases nothing that another user's record (not root's) names.
//! The scratch directory's path is never resolved again, so a scratch directory
//! renamed away and replaced by a symlink (another user's move in a
//! directory without the sticky bit) leads nowhere, and a mount someone
//! else put under `mnt/` is left alone.
use std::ffi::CStr;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::PathBuf;

use anyhow::Context;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags, StatxFlags};
use rustix::io::Errno;
use rustix::mount::{MountPropagationFlags, UnmountFlags};
use serde::{Deserialize, Serialize};

use crate::storage::loopdev::{self, FileId};
use crate::storage::marker;

/// The record's name in the scratch directory.
pub const RECORD: &CStr = c".fsbench-made";
/// A run records a few lines per configuration; 10,000 configurations
/// stay well under this.
const MAX_RECORD_BYTES: u64 = 16 << 20;

/// One thing fsbench made, relative to its scratch directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Made {
    /// An image file fsbench created at `at`: a loop device backed by
    /// this file is fsbench's.
    Image { file: FileId, at: String },
    /// A mount at `at` with mount id `id` (/proc/self/mountinfo's first
    /// field): fsbench's own, or one its setup commands made there.
    Mount { id: u64, at: String },
}

/// The record being written, open for appending.
pub struct Record {
    file: File,
}

impl Record {
    /// Creates the record in the scratch directory `dir` (never through a
    /// link, never over an existing file).
    pub fn create(dir: BorrowedFd<'_>) -> anyhow::Result<Record> {
        let fd = rustix::fs::openat(
            dir,
            RECORD,
            OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::WRONLY | OFlags::APPEND,
            Mode::from_raw_mode(0o600),
        )
        .context("cannot create the record of what fsbench builds")?;
        let record = Record { file: fd.into() };
        marker::sync(dir).context("cannot sync the scratch directory")?;
        Ok(record)
    }

    /// Adds `made`, on the disk before this returns: a kill -9 right
    /// after still leaves `clean` what it needs.
    pub fn add(&mut self, made: &Made) -> anyhow::Result<()> {
        let line = serde_json::to_string(made)? + "\n";
        self.file
            .write_all(line.as_bytes())
            .context("cannot write the record of what fsbench builds")?;
        marker::sync(self.file.as_fd()).context("cannot sync the record of what fsbench builds")
    }
}

/// What the scratch directory `dir` records; empty without a record (a
/// scratch directory that built nothing). A record that is not fsbench's
/// lines is an error: nothing is released on its word.
pub fn read(dir: BorrowedFd<'_>) -> anyhow::Result<Vec<Made>> {
    open_record(dir)?.map_or(Ok(Vec::new()), parse)
}

/// A leftover's record, as `fsbench clean` may take it.
#[derive(Debug, PartialEq)]
pub enum Found {
    /// Root's or the cleaning user's, in a directory of root's or theirs
    /// (or no record at all): what it names may be released.
    Trusted(Vec<Made>),
    /// Another user's (this uid): anyone can write a record naming any
    /// mount or loop device, so nothing is released on its word.
    Foreign(u32),
}

/// The record of the leftover open as `dir`, read only if neither it nor
/// the directory belongs to a user other than root and this one.
pub fn read_leftover(dir: BorrowedFd<'_>) -> anyhow::Result<Found> {
    let Some(file) = open_record(dir)? else {
        return Ok(Found::Trusted(Vec::new()));
    };
    let owners = [
        rustix::fs::fstat(&file)
            .context("cannot look at its record")?
            .st_uid,
        rustix::fs::fstat(dir).context("cannot look at it")?.st_uid,
    ];
    let me = rustix::process::geteuid().as_raw();
    match owners.into_iter().find(|&uid| uid != me && uid != 0) {
        Some(uid) => Ok(Found::Foreign(uid)),
        None => parse(file).map(Found::Trusted),
    }
}

/// The record in `dir`, open; None where there is none.
fn open_record(dir: BorrowedFd<'_>) -> anyhow::Result<Option<File>> {
    match rustix::fs::openat(
        dir,
        RECORD,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    ) {
        Ok(fd) => Ok(Some(fd.into())),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(anyhow::Error::from(e).context("cannot open its record")),
    }
}

/// The lines of the open record `file`.
fn parse(file: File) -> anyhow::Result<Vec<Made>> {
    let mut text = String::new();
    file.take(MAX_RECORD_BYTES + 1)
        .read_to_string(&mut text)
        .context("cannot read its record")?;
    if text.len() as u64 > MAX_RECORD_BYTES {
        anyhow::bail!("its record is longer than {MAX_RECORD_BYTES} bytes: not fsbench's");
    }
    // A kill -9 mid-line leaves the last line cut: what it was about had
    // not been made yet (a record is written before it is relied on).
    let complete = text.rfind('\n').map_or("", |end| &text[..end]);
    complete
        .lines()
        .map(|line| {
            let made: Made = serde_json::from_str(line).with_context(|| {
                format!("its record has a line fsbench did not write: {line:?}")
            })?;
            made.check()?;
            Ok(made)
        })
        .collect()
}

impl Made {
    /// A place in the record must stay inside the scratch directory.
    fn check(&self) -> anyhow::Result<()> {
        let at = match self {
            Made::Image { at, .. } | Made::Mount { at, .. } => at,
        };
        let inside = !at.is_empty()
            && !at.starts_with('/')
            && at.split('/').all(|part| !matches!(part, "" | "." | ".."));
        match inside {
            true => Ok(()),
            false => anyhow::bail!("its record names {at:?}, not a place in it"),
        }
    }
}

/// `at` below the scratch directory open as `dir`, as a path any process
/// of this host resolves through the descriptor (`/proc/<pid>/fd/<fd>/at`),
/// not through the scratch directory's name.
pub fn through_fd(dir: BorrowedFd<'_>, at: &str) -> PathBuf {
    PathBuf::from(format!(
        "/proc/{}/fd/{}/{at}",
        std::process::id(),
        dir.as_raw_fd()
    ))
}

/// Where the directory open as `dir` is now (it may have been renamed).
pub fn real_path(dir: BorrowedFd<'_>) -> std::io::Result<PathBuf> {
    std::fs::read_link(format!("/proc/self/fd/{}", dir.as_raw_fd()))
}

/// The id of the mount `at` (below `dir`) is on: the one mounted there,
/// if any, else the one it is a directory of. Found without following a
/// symlink or leaving `dir`.
pub fn mount_id(dir: BorrowedFd<'_>, at: &str) -> rustix::io::Result<u64> {
    let fd = rustix::fs::openat2(
        dir,
        at,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS,
    )?;
    let stat = rustix::fs::statx(&fd, c"", AtFlags::EMPTY_PATH, StatxFlags::MNT_ID)?;
    match StatxFlags::from_bits_retain(stat.stx_mask).contains(StatxFlags::MNT_ID) {
        true => Ok(stat.stx_mnt_id),
        false => Err(Errno::NOSYS),
    }
}

/// The id of the mount just made at `at`; an error if nothing is mounted
/// there (its id is its parent directory's).
pub fn new_mount_id(dir: BorrowedFd<'_>, at: &str) -> anyhow::Result<u64> {
    let id = mount_id(dir, at).with_context(|| format!("cannot find the mount on {at}"))?;
    if id == mount_id(dir, ".")? {
        anyhow::bail!("nothing is mounted on {at}");
    }
    Ok(id)
}

/// Records the mount just made at `at`; its id. One the record cannot
/// take (a full scratch directory) is unmounted at once: with no line in
/// the record and no id held, nothing would ever release it.
pub fn record_mount(dir: BorrowedFd<'_>, at: &str, record: &mut Record) -> anyhow::Result<u64> {
    let id = new_mount_id(dir, at)?;
    let added = record.add(&Made::Mount {
        id,
        at: at.to_string(),
    });
    if added.is_err() {
        let _ = unmount(dir, id, at, WhenBusy::Detach);
    }
    added.map(|()| id)
}

/// Makes the mount at `at`, and every mount below it, private: no mount
/// or unmount below it propagates to or from a mount fsbench did not make.
pub fn make_private(dir: BorrowedFd<'_>, at: &str) -> anyhow::Result<()> {
    rustix::mount::mount_change(
        through_fd(dir, at),
        MountPropagationFlags::PRIVATE | MountPropagationFlags::REC,
    )
    .with_context(|| format!("cannot make the mount on {at} private"))
}

/// What became of a recorded mount.
#[derive(Debug, PartialEq)]
pub enum Unmounted {
    Done,
    /// Busy: detached lazily (it goes when its last user lets go).
    Detached,
    /// Nothing is mounted there any more.
    Gone,
    /// Another mount is on top there, not the recorded one: left alone.
    Other(u64),
}

/// How a busy mount is taken down.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WhenBusy {
    /// Detached lazily: teardown and `clean` must not leave it.
    Detach,
    /// An error: a remount must really drop the caches.
    Fail,
}

/// Unmounts the mount `id` at `at` below `dir`, only if it is the one on
/// top there now.
pub fn unmount(
    dir: BorrowedFd<'_>,
    id: u64,
    at: &str,
    busy: WhenBusy,
) -> anyhow::Result<Unmounted> {
    let parent = mount_id(dir, ".").context("cannot read the scratch directory's mount")?;
    let here = match mount_id(dir, at) {
        Ok(here) => here,
        Err(Errno::NOENT) => return Ok(Unmounted::Gone),
        Err(e) => return Err(anyhow::Error::from(e).context(format!("cannot look at {at}"))),
    };
    if here != id {
        return Ok(match here == parent {
            true => Unmounted::Gone,
            false => Unmounted::Other(here),
        });
    }
    let path = through_fd(dir, at);
    match rustix::mount::unmount(&path, UnmountFlags::NOFOLLOW) {
        Ok(()) => Ok(Unmounted::Done),
        Err(Errno::BUSY) if busy == WhenBusy::Detach => {
            rustix::mount::unmount(&path, UnmountFlags::NOFOLLOW | UnmountFlags::DETACH)
                .with_context(|| format!("cannot detach the mount on {at}"))?;
            Ok(Unmounted::Detached)
        }
        Err(e) => Err(anyhow::Error::from(e).context(format!("cannot unmount {at}"))),
    }
}

/// Releases what the scratch directory `dir` records: its mounts, last
/// made first (a setup command's mount inside a configuration's before
/// it), each only if it is still the recorded one; then every loop
/// device backed by one of its images found at its place (`Images`). One
/// line per thing done or left.
pub fn release(dir: BorrowedFd<'_>, made: &[Made]) -> anyhow::Result<Vec<String>> {
    let mut said = abort_recorders(dir, made);
    // Looked for before any mount goes: a recorder's disk is reached
    // through the recorder's mount.
    let images = Images::find(dir, made);
    for thing in made.iter().rev() {
        let Made::Mount { id, at } = thing else {
            continue;
        };
        let mut outcome = unmount(dir, *id, at, WhenBusy::Detach)?;
        // A kill between a mount and its line in the record leaves a mount
        // the record does not name: it is fsbench's only when its device
        // is a loop device on one of fsbench's images.
        if let Unmounted::Other(other) = outcome
            && on_own_loop(other, &images.own)
        {
            outcome = unmount(dir, other, at, WhenBusy::Detach)?;
        }
        said.push(match outcome {
            Unmounted::Done => format!("unmounted {at}"),
            Unmounted::Detached => format!("unmounted {at} (lazily: it was busy)"),
            Unmounted::Gone => continue,
            Unmounted::Other(other) => {
                format!("left {at} alone: mount {other} there is not the one fsbench made ({id})")
            }
        });
    }
    for device in loopdev::backed_by(&images.own) {
        let shown = device.path.display().to_string();
        device.detach()?;
        said.push(format!("detached {shown}"));
    }
    said.extend(images.left_alone());
    Ok(said)
}

/// Whether mount `id` is of a loop device backed by one of `images`.
fn on_own_loop(id: u64, images: &[FileId]) -> bool {
    let mounts = crate::storage::env::mounts::read_mountinfo();
    let Some(mount) = mounts.iter().find(|m| m.id == id) else {
        return false;
    };
    loopdev::backed_by(images)
        .iter()
        .any(|device| device.dev == mount.dev)
}

/// The FUSE source name of fsbench's recorder (`storage::recorder`).
pub const RECORDER: &str = "fsbench-recorder";

/// Aborts the FUSE connection of every recorder among the recorded mounts
/// still in place: a killed run's I/O waiting on its own dead server then
/// fails, instead of hanging every unmount below it (and the killed
/// process) for good. Through /sys/fs/fuse/connections (fusectl); where it
/// is not mounted, fusectl is mounted in the scratch directory for it.
pub fn abort_recorders(dir: BorrowedFd<'_>, made: &[Made]) -> Vec<String> {
    let mounts = crate::storage::env::mounts::read_mountinfo();
    let recorders: Vec<u32> = made
        .iter()
        .filter_map(|thing| match thing {
            Made::Mount { id, at } => mount_id(dir, at).ok().filter(|here| here == id),
            Made::Image { .. } => None,
        })
        .filter_map(|id| mounts.iter().find(|m| m.id == id))
        .filter(|m| m.fs_type == "fuse" && m.source == RECORDER)
        .map(|m| m.dev.1)
        .collect();
    if recorders.is_empty() {
        return Vec::new();
    }
    let system = std::path::Path::new("/sys/fs/fuse/connections");
    let own = "fusectl";
    let connections = match system.join(recorders[0].to_string()).exists() {
        true => system.to_path_buf(),
        false => {
            let _ = rustix::fs::mkdirat(dir, own, Mode::from_raw_mode(0o700));
            let point = through_fd(dir, own);
            if rustix::mount::mount(
                "fusectl",
                &point,
                "fusectl",
                rustix::mount::MountFlags::empty(),
                None,
            )
            .is_err()
            {
                return vec![
                    "cannot reach the FUSE connections (fusectl) to abort the recorder".into(),
                ];
            }
            point
        }
    };
    let said = recorders
        .iter()
        .map(
            |minor| match std::fs::write(connections.join(minor.to_string()).join("abort"), "1") {
                Ok(()) => format!("aborted the recorder's FUSE connection {minor}"),
                Err(e) => format!("cannot abort FUSE connection {minor}: {e}"),
            },
        )
        .collect();
    if connections != system {
        let _ = rustix::mount::unmount(&connections, UnmountFlags::DETACH);
        let _ = rustix::fs::unlinkat(dir, own, AtFlags::REMOVEDIR);
    }
    said
}

/// The images a record names, looked for where it says they are. A
/// record can name any file by its identity, so only the file found at
/// its place inside the scratch directory makes a loop device fsbench's.
struct Images {
    /// Found where the record says: loop devices on these are released.
    own: Vec<FileId>,
    /// Not found so, each with why: loop devices on these are left alone.
    not_found: Vec<(FileId, String)>,
}

impl Images {
    fn find(dir: BorrowedFd<'_>, made: &[Made]) -> Images {
        let mut images = Images {
            own: Vec::new(),
            not_found: Vec::new(),
        };
        for thing in made {
            let Made::Image { file, at } = thing else {
                continue;
            };
            match is_at(dir, at, *file) {
                Ok(()) => images.own.push(*file),
                Err(why) => images.not_found.push((*file, why)),
            }
        }
        images
    }

    /// A line for each loop device on an image that was not found.
    fn left_alone(&self) -> Vec<String> {
        self.not_found
            .iter()
            .flat_map(|(file, why)| {
                loopdev::backed_by(&[*file])
                    .into_iter()
                    .map(move |device| format!("left {} alone: {why}", device.path.display()))
            })
            .collect()
    }
}

/// Whether the regular file at `at` below `dir` is `file`; why not. Its
/// identity is asked without a round trip to a FUSE server: a recorder's
/// disk whose server is gone still answers from the kernel's cache.
fn is_at(dir: BorrowedFd<'_>, at: &str, file: FileId) -> Result<(), String> {
    let fd = open_beneath(dir, at).map_err(|e| match e {
        Errno::NOENT => format!("{at} is not in the scratch directory"),
        e => format!("cannot reach {at} in the scratch directory without following a link: {e}"),
    })?;
    let stat = rustix::fs::statx(
        &fd,
        c"",
        AtFlags::EMPTY_PATH | AtFlags::STATX_DONT_SYNC,
        StatxFlags::TYPE | StatxFlags::INO,
    )
    .map_err(|e| format!("cannot look at {at}: {e}"))?;
    let found = FileId {
        dev: rustix::fs::makedev(stat.stx_dev_major, stat.stx_dev_minor),
        ino: stat.stx_ino,
    };
    match FileType::from_raw_mode(stat.stx_mode.into()) {
        FileType::Symlink => Err(format!("{at} is a symbolic link")),
        FileType::RegularFile if found == file => Ok(()),
        _ => Err(format!("{at} is not the image its record names")),
    }
}

/// `at` (checked: no `..`, no empty or `.` part) opened below `dir` one
/// part at a time, none followed if it is a symlink: a link anywhere on
/// the way fails the open instead of leading out of the scratch directory.
/// Only a path (`O_PATH`): nothing is read, and a symlink at the end is
/// opened as itself.
fn open_beneath(dir: BorrowedFd<'_>, at: &str) -> rustix::io::Result<OwnedFd> {
    let mut parts = at.split('/');
    let name = parts.next_back().unwrap_or(at);
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut here: Option<OwnedFd> = None;
    for part in parts {
        let from = here.as_ref().map_or(dir, |fd| fd.as_fd());
        here = Some(rustix::fs::openat(
            from,
            part,
            flags | OFlags::DIRECTORY,
            Mode::empty(),
        )?);
    }
    let from = here.as_ref().map_or(dir, |fd| fd.as_fd());
    rustix::fs::openat(from, name, flags, Mode::empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open_dir(path: &std::path::Path) -> std::os::fd::OwnedFd {
        rustix::fs::open(path, OFlags::DIRECTORY | OFlags::RDONLY, Mode::empty()).unwrap()
    }

    #[test]
    fn a_record_reads_back_what_was_added_and_drops_a_cut_last_line() {
        let root = tempfile::tempdir().unwrap();
        let dir = open_dir(root.path());
        let mut record = Record::create(dir.as_fd()).unwrap();
        let image = Made::Image {
            file: FileId { dev: 2049, ino: 12 },
            at: "img/a.img".into(),
        };
        let mount = Made::Mount {
            id: 345,
            at: "mnt/a".into(),
        };
        record.add(&image).unwrap();
        record.add(&mount).unwrap();
        assert_eq!(read(dir.as_fd()).unwrap(), [image.clone(), mount]);
        record.file.write_all(b"{\"mount\":{\"id\":9").unwrap();
        assert_eq!(
            read(dir.as_fd()).unwrap().len(),
            2,
            "a cut line is not read"
        );
        assert!(Record::create(dir.as_fd()).is_err(), "never over a record");
    }

    #[test]
    fn a_record_naming_places_outside_or_foreign_lines_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let dir = open_dir(root.path());
        let path = root.path().join(RECORD.to_str().unwrap());
        for bad in [
            "{\"mount\":{\"id\":1,\"at\":\"../x\"}}\n",
            "{\"mount\":{\"id\":1,\"at\":\"/etc\"}}\n",
            "{\"mount\":{\"id\":1,\"at\":\"mnt//a\"}}\n",
            "umount /\n",
        ] {
            std::fs::write(&path, bad).unwrap();
            assert!(read(dir.as_fd()).is_err(), "{bad}");
        }
        std::fs::remove_file(&path).unwrap();
        assert_eq!(read(dir.as_fd()).unwrap(), []);
    }

    fn id_of(path: &std::path::Path) -> FileId {
        FileId::of(File::open(path).unwrap().as_fd()).unwrap()
    }

    fn image(file: FileId, at: &str) -> Made {
        Made::Image {
            file,
            at: at.into(),
        }
    }

    /// A record names a file by its identity; only the file at the
    /// record's place, reached through no link, is the scratch
    /// directory's image: not one a link there (at the end or on the way)
    /// leads to, not one that is missing, not another file.
    #[test]
    fn an_image_counts_only_at_its_place_reached_through_no_link() {
        let root = tempfile::tempdir().unwrap();
        let outside = root.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("b.img"), b"b").unwrap();
        let scratch = root.path().join("scratch");
        std::fs::create_dir_all(scratch.join("img")).unwrap();
        std::fs::write(scratch.join("img/a.img"), b"a").unwrap();
        std::fs::write(scratch.join("img/c.img"), b"c").unwrap();
        std::os::unix::fs::symlink(outside.join("b.img"), scratch.join("img/b.img")).unwrap();
        std::os::unix::fs::symlink(&outside, scratch.join("out")).unwrap();
        let own = id_of(&scratch.join("img/a.img"));
        let stranger = id_of(&outside.join("b.img"));
        let made = [
            image(own, "img/a.img"),
            image(stranger, "img/b.img"),
            image(stranger, "out/b.img"),
            image(stranger, "img/gone.img"),
            image(stranger, "img/c.img"),
        ];
        let images = Images::find(open_dir(&scratch).as_fd(), &made);
        assert_eq!(images.own, [own]);
        let why: Vec<&str> = images
            .not_found
            .iter()
            .map(|(_, why)| why.as_str())
            .collect();
        assert_eq!(why.len(), 4, "{why:?}");
        assert_eq!(why[0], "img/b.img is a symbolic link");
        assert!(why[1].starts_with("cannot reach out/b.img"), "{}", why[1]);
        assert_eq!(why[2], "img/gone.img is not in the scratch directory");
        assert_eq!(why[3], "img/c.img is not the image its record names");
    }

    /// A record another user owns, or one in another user's directory,
    /// is not read for release; root's and one's own are.
    #[test]
    fn only_roots_or_the_cleaners_record_is_trusted() {
        if !rustix::process::geteuid().is_root() {
            eprintln!("skipped: needs root to give the record to another user");
            return;
        }
        let root = tempfile::tempdir().unwrap();
        let dir = open_dir(root.path());
        let mut record = Record::create(dir.as_fd()).unwrap();
        let mount = Made::Mount {
            id: 7,
            at: "mnt/a".into(),
        };
        record.add(&mount).unwrap();
        let path = root.path().join(RECORD.to_str().unwrap());
        let give = |file: &std::path::Path, uid: u32| {
            std::os::unix::fs::chown(file, Some(uid), Some(uid)).unwrap()
        };
        assert_eq!(
            read_leftover(dir.as_fd()).unwrap(),
            Found::Trusted(vec![mount.clone()])
        );
        give(&path, 65534);
        assert_eq!(read_leftover(dir.as_fd()).unwrap(), Found::Foreign(65534));
        give(&path, 0);
        give(root.path(), 65533);
        assert_eq!(read_leftover(dir.as_fd()).unwrap(), Found::Foreign(65533));
        give(root.path(), 0);
        assert_eq!(
            read_leftover(dir.as_fd()).unwrap(),
            Found::Trusted(vec![mount])
        );
    }
}

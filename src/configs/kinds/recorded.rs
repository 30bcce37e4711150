//! mkfs on a recorded disk (`recorded = true` beside `mkfs`): the image
//! `img/<name>.img` and its block log `img/<name>.log` behind fsbench's
//! recorder (`storage::recorder`, a FUSE file system served in-process)
//! mounted on `rec/<name>`, a loop device on the recorder's disk, then
//! mkfs and the mount as on any image. Every write and flush the disk gets
//! is appended to the log: measured against the same configuration
//! unrecorded, it is the recorder's cost.
use std::collections::BTreeMap;
use std::os::fd::BorrowedFd;
use std::path::{Path, PathBuf};

use anyhow::Context;
use rustix::fs::Mode;
use rustix::io::Errno;

use super::mkfs::{self, Mkfs};
use super::{Kind, Make, Reader, Standing};
use crate::configs::build::{Fs, Site};
use crate::storage::made::RECORDER;
use crate::configs::place::Place;
use crate::configs::{Config, DEV, DIR, Entry};
use crate::result::built::Built;
use crate::storage::recorder::{self, Places, Recorder};
use crate::error::usage;
use crate::console::stderr_line;

pub(super) const READER: Reader = Reader {
    key: "recorded",
    what: "mkfs on a recorded disk",
    offered: false,
    claims: |entry| entry.recorded,
    read,
};

/// The directory the recorders are mounted in, one `rec/<name>` each.
const REC: &str = "rec";

/// A configuration mkfs makes on a recorded disk: mkfs's words, `{dev}`
/// last.
pub(super) struct Recorded<'a> {
    pub(super) words: &'a [String],
}

/// mkfs read as mkfs's kind reads it; a device is refused (`kinds::read`
/// refuses a recorded entry without mkfs).
fn read(entry: &Entry, name: &str, parameters: &BTreeMap<String, String>) -> anyhow::Result<Make> {
    if let Some(device) = &entry.device {
        anyhow::bail!(
            "{name}: recorded is a disk fsbench makes on an image, not on device {device}: drop one"
        );
    }
    let words = mkfs::read_words(entry, name, parameters)?;
    Ok(Make::Recorded { words })
}

impl Recorded<'_> {
    /// The same mkfs on an image, unrecorded: what this kind shares with
    /// mkfs's.
    fn mkfs(&self) -> Mkfs<'_> {
        Mkfs {
            words: self.words,
            device: None,
        }
    }
}

impl Kind for Recorded<'_> {
    fn one_host_only(&self) -> Option<&'static str> {
        Some("is a recorded disk fsbench makes on one host")
    }

    fn mkfs_words(&self) -> Vec<String> {
        self.words.to_vec()
    }

    fn shell_permission(&self) -> Option<String> {
        self.mkfs().shell_permission()
    }

    fn minimum_image_bytes(&self) -> u64 {
        self.mkfs().minimum_image_bytes()
    }

    fn on_image(&self, place: &Place) -> bool {
        place.images
    }

    /// Nothing: its image and its recorder are its own.
    fn shares(&self, _config: &Config, _wipe_default: Option<&Path>) -> Option<String> {
        None
    }

    fn placeholders(&self) -> &'static [&'static str] {
        &[DEV, DIR]
    }

    /// No --images (a --wipe device is no image to record), and what mkfs
    /// refuses on an image.
    fn check_place(&self, config: &Config, place: &Place) -> anyhow::Result<()> {
        if !place.images {
            return usage(format!(
                "{}: a recorded disk is an image: give --images DIR (a directory on the disk under test)",
                config.name
            ));
        }
        self.mkfs().check_place(config, place)
    }

    /// The recorded disk (image, log, recorder, loop device), recording
    /// from the start (mkfs's writes too), then mkfs and the mount on it.
    fn build(&self, fs: &mut Fs, config: &Config, site: &Site) -> anyhow::Result<()> {
        let name = &config.name;
        let (base, log, rec) = (
            format!("img/{name}.img"),
            format!("img/{name}.log"),
            format!("{REC}/{name}"),
        );
        let point = site.root.join(&rec);
        fs.record.commands.push(format!(
            "mount -t fuse {RECORDER} {}  # served by fsbench: image {base}, block log {log}",
            point.display()
        ));
        make_dir(site.dir, REC)?;
        let places = Places {
            base: &base,
            log: &log,
            rec: &rec,
        };
        let mut held = None;
        let device = recorder::recorded_disk(
            site.dir,
            site.record,
            &places,
            site.place.image_size,
            &mut held,
            |disk| mkfs::attach_loop(fs, &site.root.join(&disk.at), disk.id, site),
        );
        // Held whatever failed after its mount: it goes down after the
        // loop device. It records from now on, so its log is every write
        // the disk got, mkfs's too.
        if let Some(recorder) = held {
            recorder.record(true);
            fs.held = Some(Box::new(Held { recorder, point }));
        }
        fs.record.recorded = true;
        mkfs::make_on(fs, config, self.words, device?, site)
    }
}

/// The directory `at` in the scratch directory `dir`, made if it is not
/// there yet (the first recorded configuration makes it).
fn make_dir(dir: BorrowedFd<'_>, at: &str) -> anyhow::Result<()> {
    match rustix::fs::mkdirat(dir, at, Mode::from_raw_mode(0o700)) {
        Ok(()) | Err(Errno::EXIST) => Ok(()),
        Err(e) => Err(e).with_context(|| format!("cannot create {at}")),
    }
}

/// A configuration's recorder while it stands, and where it is mounted
/// (for its record).
struct Held {
    recorder: Recorder,
    point: PathBuf,
}

impl Standing for Held {
    /// Unmounts the recorder (its loop device is detached by now) and
    /// ends its thread.
    fn take_down(self: Box<Self>, dir: BorrowedFd<'_>, name: &str, record: &mut Built) {
        record
            .commands
            .push(format!("umount {}", self.point.display()));
        if let Err(e) = self.recorder.stop(dir) {
            stderr_line!("fsbench: {name}: the recorder: {e:#}");
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::configs::place::Place;
    use crate::configs::{Make, parse};

    /// What entry `a` with `body` makes, or its one-line refusal.
    fn one(body: &str) -> Result<Make, String> {
        parse(&format!("[[config]]\nname = \"a\"\n{body}\n"))
            .map(|configs| configs[0].make.clone())
            .map_err(|e| format!("{e:#}"))
    }

    #[test]
    fn recorded_with_mkfs_is_its_own_kind_and_false_is_plain_mkfs() {
        let words = ["mkfs.ext4", "-F", "{dev}"].map(String::from).to_vec();
        assert_eq!(
            one("mkfs = \"mkfs.ext4 -F {dev}\"\nrecorded = true\ntype = \"ext4\""),
            Ok(Make::Recorded {
                words: words.clone()
            })
        );
        assert_eq!(
            one("mkfs = \"mkfs.ext4 -F {dev}\"\nrecorded = false"),
            Ok(Make::Mkfs {
                words,
                device: None
            })
        );
        let swept = parse(
            "matrix = { bs = [\"1024\"] }\n[[config]]\nname = \"a-{bs}\"\n\
             mkfs = \"mkfs.ext4 -b {bs} {dev}\"\nrecorded = true\n",
        )
        .unwrap();
        assert_eq!(swept[0].mkfs_line(), "mkfs.ext4 -b 1024 {dev}");
        assert_eq!(swept[0].shares(None), None, "its image is its own");
    }

    #[test]
    fn recorded_without_mkfs_on_an_image_is_refused_in_one_line() {
        let without_mkfs = "a: recorded is a disk fsbench makes and records under mkfs on an image: give mkfs (not a source or setup commands)";
        for body in [
            "source = \"tmpfs\"\ntype = \"tmpfs\"",
            "setup = [\"true\"]",
            "device = \"/dev/sdb\"",
            "",
        ] {
            assert_eq!(
                one(&format!("recorded = true\n{body}")),
                Err(without_mkfs.into()),
                "{body}"
            );
        }
        assert_eq!(
            one("recorded = true\nmkfs = \"mkfs.ext4 {dev}\"\ndevice = \"/dev/sdb\""),
            Err(
                "a: recorded is a disk fsbench makes on an image, not on device /dev/sdb: drop one"
                    .into()
            )
        );
        let both = one("recorded = true\nmkfs = \"mkfs.ext4 {dev}\"\nsource = \"/dev/sdb\"");
        assert!(both.unwrap_err().contains("not both"));
        // mkfs's own rules hold.
        let evil = one("recorded = true\nmkfs = \"rm -rf {dev}\"");
        assert!(evil.unwrap_err().contains("not a mkfs.* program"));
        let by_path =
            parse("[[config]]\nname = \"a\"\nmkfs = \"/x/mkfs.ext4 {dev}\"\nrecorded = true\n");
        assert!(by_path.unwrap()[0].shell_permission().is_some());
        assert!(one("recorded = \"yes\"").is_err(), "a boolean");
    }

    #[test]
    fn a_place_without_images_or_with_too_small_ones_is_refused() {
        let configs =
            parse("[[config]]\nname = \"x\"\nmkfs = \"mkfs.xfs {dev}\"\nrecorded = true\n")
                .unwrap();
        let place = |images, image_size| Place {
            work_dir: "/var/tmp".into(),
            images,
            image_size,
            direct_io: true,
            wipe: vec!["/dev/sdz".into()],
        };
        let refusal = |place: Place| format!("{:#}", place.check(&configs).unwrap_err());
        assert_eq!(
            refusal(place(false, 1 << 30)),
            "x: a recorded disk is an image: give --images DIR (a directory on the disk under test)"
        );
        assert!(refusal(place(true, 64 << 20)).contains("too small for mkfs.xfs"));
        assert!(place(true, 1 << 30).check(&configs).is_ok());
        assert!(configs[0].on_image(&place(true, 1 << 30)));
    }
}

//! The mount a path is reached through, from /proc/self/mountinfo: its
//! device, mount point, file system type, source and options.
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// One line of /proc/self/mountinfo, with the fields we report.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MountEntry {
    /// The mount id (statx's `stx_mnt_id` of files on it).
    pub(crate) id: u64,
    /// st_dev of files on this mount, as major:minor.
    pub(crate) dev: (u32, u32),
    pub(crate) mount_point: PathBuf,
    pub(crate) fs_type: String,
    pub(crate) source: String,
    /// Per-mount and super options merged (see `merge_options`).
    pub(crate) options: String,
}

/// All parseable mounts of our mount namespace, in kernel order; empty if
/// /proc is unavailable (or what is there never ends).
pub(crate) fn read_mountinfo() -> Vec<MountEntry> {
    crate::kernel_file::read("/proc/self/mountinfo", crate::kernel_file::TABLE)
        .map(|bytes| {
            bytes
                .split(|&b| b == b'\n')
                .filter_map(parse_mountinfo_line)
                .collect()
        })
        .unwrap_or_default()
}

/// Parses "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root
/// rw,errors=continue" (proc(5)). Works on bytes because mount points need
/// not be UTF-8, and splits on single spaces so an empty source (which the
/// kernel prints as an empty field) doesn't shift the fields after it.
fn parse_mountinfo_line(line: &[u8]) -> Option<MountEntry> {
    let fields: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
    let &[
        id,
        _parent,
        majmin,
        _root,
        mount_point,
        per_mount_options,
        ..,
    ] = fields.as_slice()
    else {
        return None;
    };
    // Optional fields ("shared:1 master:2") run until a lone "-".
    let separator = fields.iter().skip(6).position(|f| *f == b"-")? + 6;
    let &[fs_type, source, super_options, ..] = fields.get(separator + 1..)? else {
        return None;
    };
    Some(MountEntry {
        id: std::str::from_utf8(id).ok()?.parse().ok()?,
        dev: parse_majmin(std::str::from_utf8(majmin).ok()?)?,
        mount_point: PathBuf::from(OsStr::from_bytes(&decode_octal_escapes(mount_point))),
        fs_type: decoded_text(fs_type),
        source: decoded_text(source),
        // Options stay as the kernel escaped them: decoding "\054" would put
        // a comma inside a comma-separated list.
        options: merge_options(
            &String::from_utf8_lossy(per_mount_options),
            &String::from_utf8_lossy(super_options),
        ),
    })
}

pub(crate) fn parse_majmin(text: &str) -> Option<(u32, u32)> {
    let (major, minor) = text.split_once(':')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

fn decoded_text(field: &[u8]) -> String {
    String::from_utf8_lossy(&decode_octal_escapes(field)).into_owned()
}

/// Undoes the kernel's mangling of space, tab, newline and backslash in
/// mountinfo and /proc/swaps paths ("\040" is a space). Anything that is
/// not a valid three-digit octal escape is kept as is.
pub(crate) fn decode_octal_escapes(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while let Some(&byte) = field.get(i) {
        let digits = if byte == b'\\' {
            field.get(i + 1..i + 4)
        } else {
            None
        };
        match digits.and_then(octal_byte) {
            Some(decoded) => {
                out.push(decoded);
                i += 4;
            }
            None => {
                out.push(byte);
                i += 1;
            }
        }
    }
    out
}

/// "040" → 0x20; `None` for non-octal digits or values above 0o377.
fn octal_byte(digits: &[u8]) -> Option<u8> {
    let value = digits.iter().try_fold(0u32, |acc, &d| {
        (b'0'..=b'7')
            .contains(&d)
            .then(|| acc * 8 + u32::from(d - b'0'))
    })?;
    u8::try_from(value).ok()
}

/// Per-mount options first, then super options not already given, each
/// setting once. Options are keyed on the name before '=', and "ro"/"rw"
/// share one key so a read-only bind of a read-write file system reports
/// "ro" (what applies to this path) rather than both.
fn merge_options(per_mount: &str, per_super: &str) -> String {
    let mut keys: Vec<&str> = Vec::new();
    let mut merged: Vec<&str> = Vec::new();
    for option in per_mount
        .split(',')
        .chain(per_super.split(','))
        .filter(|o| !o.is_empty())
    {
        let key = option_key(option);
        if !keys.contains(&key) {
            keys.push(key);
            merged.push(option);
        }
    }
    merged.join(",")
}

fn option_key(option: &str) -> &str {
    match option.split_once('=') {
        Some((name, _)) => name,
        None if option == "ro" => "rw",
        None => option,
    }
}

/// The mount `path` is reached through. The device number identifies the
/// file system; among mounts of that device (bind mounts) the one whose
/// mount point is the longest prefix of the path is the one in use. Some
/// file systems (btrfs subvolumes) give files anonymous device numbers that
/// mountinfo doesn't list, so the longest prefix over all mounts is the
/// fallback.
pub(crate) fn select_mount<'a>(
    mounts: &'a [MountEntry],
    dev: (u32, u32),
    path: &Path,
) -> Option<&'a MountEntry> {
    let same_dev: Vec<&MountEntry> = mounts.iter().filter(|m| m.dev == dev).collect();
    longest_prefix_mount(same_dev.iter().copied(), path)
        .or_else(|| same_dev.last().copied())
        .or_else(|| longest_prefix_mount(mounts.iter(), path))
}

/// Component-wise prefix ("/mnt/a" is not a prefix of "/mnt/ab"). On a tie
/// the later entry wins: mountinfo lists stacked mounts bottom-up, so the
/// last one is the visible one.
fn longest_prefix_mount<'a>(
    candidates: impl Iterator<Item = &'a MountEntry>,
    path: &Path,
) -> Option<&'a MountEntry> {
    candidates
        .filter(|m| path.starts_with(&m.mount_point))
        .max_by_key(|m| m.mount_point.as_os_str().len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn octal_escapes_are_decoded_and_invalid_ones_kept() {
        assert_eq!(decode_octal_escapes(br"/mnt/my\040disk"), b"/mnt/my disk");
        assert_eq!(decode_octal_escapes(br"a\011b\012c\134d"), b"a\tb\nc\\d");
        assert_eq!(decode_octal_escapes(br"bad\9zz"), br"bad\9zz");
        assert_eq!(decode_octal_escapes(br"big\777"), br"big\777");
        assert_eq!(decode_octal_escapes(br"short\04"), br"short\04");
        assert_eq!(decode_octal_escapes(br"trailing\"), br"trailing\");
    }

    #[test]
    fn mountinfo_line_with_escapes_and_optional_fields() {
        let line = br"36 35 98:0 /mnt1 /mnt/my\040disk rw,noatime shared:1 master:2 - ext3 /dev/my\040root rw,errors=continue";
        let entry = parse_mountinfo_line(line).expect("valid line");
        assert_eq!(entry.dev, (98, 0));
        assert_eq!(entry.mount_point, PathBuf::from("/mnt/my disk"));
        assert_eq!(entry.fs_type, "ext3");
        assert_eq!(entry.source, "/dev/my root");
        assert_eq!(entry.options, "rw,noatime,errors=continue");
    }

    #[test]
    fn mountinfo_line_without_optional_fields_or_source() {
        let entry = parse_mountinfo_line(b"25 24 0:23 / /dev/shm rw,relatime - tmpfs  rw,size=64k")
            .expect("valid line");
        assert_eq!(entry.dev, (0, 23));
        assert_eq!(entry.fs_type, "tmpfs");
        assert_eq!(entry.source, "");
        assert_eq!(entry.options, "rw,relatime,size=64k");
    }

    #[test]
    fn malformed_mountinfo_lines_are_rejected() {
        assert_eq!(parse_mountinfo_line(b""), None);
        assert_eq!(parse_mountinfo_line(b"36 35 98:0 / /mnt rw"), None);
        assert_eq!(
            parse_mountinfo_line(b"36 35 98:0 / /mnt rw shared:1 ext3 /dev/x rw"),
            None
        );
        assert_eq!(
            parse_mountinfo_line(b"36 35 x:y / /mnt rw - ext3 /dev/x rw"),
            None
        );
        assert_eq!(parse_mountinfo_line(b"36 35 98:0 / /mnt rw - ext3"), None);
    }

    #[test]
    fn options_are_merged_without_duplicates() {
        assert_eq!(
            merge_options("rw,relatime", "rw,data=ordered"),
            "rw,relatime,data=ordered"
        );
        assert_eq!(
            merge_options("rw,nosuid,nodev", "rw,size=16384k,mode=755"),
            "rw,nosuid,nodev,size=16384k,mode=755"
        );
        // A read-only bind of a read-write fs: "ro" applies, "rw" must not follow.
        assert_eq!(
            merge_options("ro,relatime", "rw,size=4k"),
            "ro,relatime,size=4k"
        );
        assert_eq!(merge_options("rw", "rw,mode=1,mode=2"), "rw,mode=1");
        assert_eq!(merge_options("", ""), "");
    }

    fn mount(dev: (u32, u32), mount_point: &str, fs_type: &str) -> MountEntry {
        MountEntry {
            id: 0,
            dev,
            mount_point: PathBuf::from(mount_point),
            fs_type: fs_type.to_string(),
            source: String::new(),
            options: String::new(),
        }
    }

    #[test]
    fn mount_is_chosen_by_device_then_longest_prefix() {
        let mounts = [
            mount((8, 1), "/", "ext4"),
            mount((8, 2), "/data", "xfs"),
            mount((8, 2), "/srv/bind", "xfs"), // bind mount of a /data subdirectory
            mount((0, 40), "/data/tmp", "tmpfs"),
        ];
        let pick =
            |dev, path: &str| select_mount(&mounts, dev, Path::new(path)).map(|m| &m.mount_point);
        assert_eq!(pick((8, 2), "/data/x"), Some(&PathBuf::from("/data")));
        assert_eq!(
            pick((8, 2), "/srv/bind/x"),
            Some(&PathBuf::from("/srv/bind"))
        );
        assert_eq!(
            pick((0, 40), "/data/tmp/f"),
            Some(&PathBuf::from("/data/tmp"))
        );
        // Device known but reached from nowhere we can see: still that device.
        assert_eq!(
            pick((8, 2), "/elsewhere"),
            Some(&PathBuf::from("/srv/bind"))
        );
    }

    #[test]
    fn unknown_device_falls_back_to_longest_component_prefix() {
        // btrfs subvolumes: st_dev (0:99) is not in mountinfo.
        let mounts = [
            mount((8, 1), "/", "ext4"),
            mount((0, 50), "/mnt/a", "btrfs"),
        ];
        let pick = |path: &str| select_mount(&mounts, (0, 99), Path::new(path)).map(|m| &m.fs_type);
        assert_eq!(pick("/mnt/a/sub/file").map(String::as_str), Some("btrfs"));
        // "/mnt/a" is not a prefix of "/mnt/ab".
        assert_eq!(pick("/mnt/ab").map(String::as_str), Some("ext4"));
        assert_eq!(select_mount(&[], (0, 99), Path::new("/x")), None);
    }

    #[test]
    fn stacked_mounts_prefer_the_last_visible_one() {
        let mounts = [
            mount((0, 23), "/dev/shm", "tmpfs"),
            mount((0, 27), "/dev/shm", "tmpfs"),
        ];
        let picked = select_mount(&mounts, (0, 99), Path::new("/dev/shm/f"));
        assert_eq!(picked.map(|m| m.dev), Some((0, 27)));
        let picked = select_mount(&mounts, (0, 23), Path::new("/dev/shm/f"));
        assert_eq!(picked.map(|m| m.dev), Some((0, 23)));
    }
}

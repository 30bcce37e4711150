//! Environment probe: the host (kernel, CPU, memory) and each target file
//! system (mount, backing device, queue settings, capacity), embedded in every
//! result so numbers can be trusted and compared across machines and runs.
//!
//! Everything past the initial `stat` is best-effort: a missing or unreadable
//! /proc or /sys file gives `None` (shown as "-"), never an error.
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::risk::{Risk, risks_of};
use crate::size::format_bytes;

/// Stands in for a text field the kernel left empty or we could not read.
const UNKNOWN: &str = "unknown";

/// Bound on walks down stacked block devices (dm on dm on md on ...), so a
/// surprising sysfs layout can't make the probe loop.
const MAX_STACK_DEPTH: usize = 8;

/// The machine a result was measured on.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostEnv {
    pub hostname: String,
    /// uname release, e.g. "6.1.0-18-amd64".
    pub kernel: String,
    /// uname version string.
    pub kernel_version: String,
    /// PRETTY_NAME from /etc/os-release.
    pub os: Option<String>,
    /// uname machine.
    pub arch: String,
    pub cpu_model: Option<String>,
    /// Logical CPUs online; 0 if unknown.
    pub cpu_count: usize,
    /// MemTotal; 0 if unknown.
    pub ram_bytes: u64,
}

/// The file system and device a benchmarked path lives on.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TargetEnv {
    /// Canonical path probed.
    pub path: String,
    pub mount_point: String,
    /// e.g. "ext4", "tmpfs", "nfs4", "fuse.sshfs".
    pub fs_type: String,
    /// Per-mount options and super options merged, comma separated, no
    /// duplicates, e.g. "rw,relatime,data=ordered".
    pub mount_options: String,
    /// Mount source, e.g. "/dev/loop3", "tmpfs", "server:/export".
    pub source: String,
    /// For /dev/loopN: /sys/block/loopN/loop/backing_file.
    pub loop_backing_file: Option<String>,
    /// Kernel name of the whole disk holding the fs, e.g. "vda", "nvme0n1",
    /// "md0", "loop3" (a partition is resolved to its parent disk).
    pub block_device: Option<String>,
    /// /sys/block/<disk>/queue/rotational.
    pub rotational: Option<bool>,
    /// The active I/O scheduler, e.g. "mq-deadline" or "none".
    pub scheduler: Option<String>,
    /// queue/write_cache: "write back" or "write through".
    pub write_cache: Option<String>,
    /// /sys/block/mdX/md/level, e.g. "raid1"; for device-mapper devices
    /// stacked on md, that md's level.
    pub raid_level: Option<String>,
    /// statvfs f_blocks * f_frsize.
    pub total_bytes: u64,
    /// statvfs f_bavail * f_frsize (available to unprivileged users).
    pub free_bytes: u64,
    pub total_inodes: u64,
    pub free_inodes: u64,
    /// What this configuration can lose on a crash (see `risk`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub risks: Vec<Risk>,
}

/// This machine's host name (uname's nodename).
pub fn host_name() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// Describes this machine. Never fails: unknown fields become `None`,
/// "unknown" or 0.
pub fn probe_host() -> HostEnv {
    let uname = rustix::system::uname();
    HostEnv {
        hostname: text_or_unknown(uname.nodename().to_bytes()),
        kernel: text_or_unknown(uname.release().to_bytes()),
        kernel_version: text_or_unknown(uname.version().to_bytes()),
        os: read_os_pretty_name(),
        arch: text_or_unknown(uname.machine().to_bytes()),
        cpu_model: read_text("/proc/cpuinfo").and_then(|info| cpu_model_from_cpuinfo(&info)),
        cpu_count: online_cpu_count(),
        ram_bytes: read_text("/proc/meminfo")
            .and_then(|info| mem_total_from_meminfo(&info))
            .unwrap_or(0),
    }
}

/// Describes the file system and device `path` lives on. Fails only if
/// `path` can't be stat'ed or statvfs'ed; the rest is best-effort.
pub fn probe_target(path: &Path) -> anyhow::Result<TargetEnv> {
    let stat = rustix::fs::stat(path).with_context(|| format!("cannot stat {}", path.display()))?;
    let vfs =
        rustix::fs::statvfs(path).with_context(|| format!("cannot statvfs {}", path.display()))?;
    // Canonical, so matching against mount points isn't fooled by symlinks or "..".
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let st_dev = (
        rustix::fs::major(stat.st_dev),
        rustix::fs::minor(stat.st_dev),
    );

    let mounts = read_mountinfo();
    let mount = select_mount(&mounts, st_dev, &canonical);
    let fs_dev = mount.map_or(st_dev, |m| m.dev);
    let source = mount.map_or("", |m| m.source.as_str());
    let block = block_device_number(fs_dev, source)
        .and_then(probe_block_device)
        .unwrap_or_default();
    let text_of = |field: fn(&MountEntry) -> &str| mount.map_or(UNKNOWN, field).to_string();

    let mut env = TargetEnv {
        path: canonical.to_string_lossy().into_owned(),
        mount_point: mount.map_or(UNKNOWN.to_string(), |m| {
            m.mount_point.to_string_lossy().into_owned()
        }),
        fs_type: text_of(|m| m.fs_type.as_str()),
        mount_options: text_of(|m| m.options.as_str()),
        source: text_of(|m| m.source.as_str()),
        loop_backing_file: block.loop_backing_file,
        block_device: block.name,
        rotational: block.rotational,
        scheduler: block.scheduler,
        write_cache: block.write_cache,
        raid_level: block.raid_level,
        total_bytes: vfs.f_blocks.saturating_mul(vfs.f_frsize),
        free_bytes: vfs.f_bavail.saturating_mul(vfs.f_frsize),
        total_inodes: vfs.f_files,
        free_inodes: vfs.f_ffree,
        risks: Vec::new(),
    };
    env.risks = risks_of(&env, Path::new("/proc/fs/jbd2"));
    Ok(env)
}

/// Human-readable report: one aligned "key: value" block for the host, then
/// one per target. Absent values are shown as "-".
pub fn render_text(host: &HostEnv, targets: &[TargetEnv]) -> String {
    let mut blocks = vec![render_block("host", &host_rows(host))];
    blocks.extend(
        targets
            .iter()
            .map(|t| render_block(&format!("target {}", t.path), &target_rows(t))),
    );
    blocks.join("\n")
}

// ---------------------------------------------------------------------------
// Host

fn text_or_unknown(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    if text.is_empty() {
        UNKNOWN.to_string()
    } else {
        text.into_owned()
    }
}

/// os-release(5): /etc/os-release wins when it exists; /usr/lib is the fallback.
fn read_os_pretty_name() -> Option<String> {
    ["/etc/os-release", "/usr/lib/os-release"]
        .into_iter()
        .find_map(read_text)
        .and_then(|release| os_release_value(&release, "PRETTY_NAME"))
}

/// The value of `key` in os-release's shell-like `KEY="value"` syntax.
fn os_release_value(release: &str, key: &str) -> Option<String> {
    let raw = release.lines().find_map(|line| {
        let (name, value) = line.split_once('=')?;
        (name.trim() == key).then(|| value.trim())
    })?;
    let value = unquote_shell(raw);
    (!value.is_empty()).then_some(value)
}

/// Strips one level of shell quoting: '...' is literal, "..." honours
/// backslash escapes (os-release allows \" \\ \$ \`).
fn unquote_shell(raw: &str) -> String {
    if let Some(inner) = raw.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        return inner.to_string();
    }
    let inner = raw
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .unwrap_or(raw);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            _ => out.push(c),
        }
    }
    out
}

/// /proc/cpuinfo names the CPU differently per architecture: x86 "model
/// name", 32-bit ARM "Processor", MIPS "cpu model", POWER "cpu", RISC-V
/// "uarch". Tried in this order; arm64 has none of them and gives `None`.
const CPU_MODEL_KEYS: [&str; 5] = ["model name", "Processor", "cpu model", "cpu", "uarch"];

fn cpu_model_from_cpuinfo(cpuinfo: &str) -> Option<String> {
    CPU_MODEL_KEYS
        .iter()
        .find_map(|key| cpuinfo_value(cpuinfo, key))
}

/// The first non-empty value of `key` ("key<tabs>: value" lines).
fn cpuinfo_value(cpuinfo: &str, key: &str) -> Option<String> {
    cpuinfo.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        let value = value.trim();
        (name.trim() == key && !value.is_empty()).then(|| value.to_string())
    })
}

/// CPUs online now (hotplug and `maxcpus=` can leave some offline), falling
/// back to what the scheduler lets us use if sysfs is absent.
fn online_cpu_count() -> usize {
    read_text("/sys/devices/system/cpu/online")
        .and_then(|list| count_cpu_list(&list))
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(0)
}

/// Counts a kernel CPU list such as "0-3,5,7-8" (7 CPUs).
fn count_cpu_list(list: &str) -> Option<usize> {
    let list = list.trim();
    if list.is_empty() {
        return None;
    }
    list.split(',').try_fold(0usize, |total, range| {
        let (first, last) = range.split_once('-').unwrap_or((range, range));
        let first: usize = first.trim().parse().ok()?;
        let last: usize = last.trim().parse().ok()?;
        let count = last.checked_sub(first)?.checked_add(1)?;
        total.checked_add(count)
    })
}

/// MemTotal in bytes; /proc/meminfo states it in kB (really KiB).
fn mem_total_from_meminfo(meminfo: &str) -> Option<u64> {
    let line = meminfo
        .lines()
        .find_map(|line| line.strip_prefix("MemTotal:"))?;
    let mut words = line.split_whitespace();
    let value: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") => value.checked_mul(1024),
        None => Some(value),
        Some(_) => None,
    }
}

// ---------------------------------------------------------------------------
// Mounts

/// One line of /proc/self/mountinfo, with the fields we report.
#[derive(Debug, Clone, PartialEq)]
struct MountEntry {
    /// st_dev of files on this mount, as major:minor.
    dev: (u32, u32),
    mount_point: PathBuf,
    fs_type: String,
    source: String,
    /// Per-mount and super options merged (see `merge_options`).
    options: String,
}

/// All parseable mounts of our mount namespace, in kernel order; empty if
/// /proc is unavailable.
fn read_mountinfo() -> Vec<MountEntry> {
    std::fs::read("/proc/self/mountinfo")
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
        _id,
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

fn parse_majmin(text: &str) -> Option<(u32, u32)> {
    let (major, minor) = text.split_once(':')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

fn decoded_text(field: &[u8]) -> String {
    String::from_utf8_lossy(&decode_octal_escapes(field)).into_owned()
}

/// Undoes the kernel's mangling of space, tab, newline and backslash in
/// mountinfo paths ("\040" is a space). Anything that is not a valid
/// three-digit octal escape is kept as is.
fn decode_octal_escapes(field: &[u8]) -> Vec<u8> {
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
fn select_mount<'a>(
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

// ---------------------------------------------------------------------------
// Block devices

/// What sysfs tells about the disk under a file system; all `None` for
/// file systems without one (tmpfs, nfs, fuse, overlay, ...).
#[derive(Debug, Default)]
struct BlockInfo {
    name: Option<String>,
    loop_backing_file: Option<String>,
    rotational: Option<bool>,
    scheduler: Option<String>,
    write_cache: Option<String>,
    raid_level: Option<String>,
}

/// The block device a file system lives on. Major 0 is the anonymous range
/// used by tmpfs, nfs, fuse, overlay, but also by btrfs, whose /dev source
/// still names the real device.
fn block_device_number(fs_dev: (u32, u32), source: &str) -> Option<(u32, u32)> {
    if fs_dev.0 != 0 {
        return Some(fs_dev);
    }
    if !source.starts_with("/dev/") {
        return None;
    }
    let stat = rustix::fs::stat(source).ok()?;
    let is_block =
        rustix::fs::FileType::from_raw_mode(stat.st_mode) == rustix::fs::FileType::BlockDevice;
    is_block.then(|| {
        (
            rustix::fs::major(stat.st_rdev),
            rustix::fs::minor(stat.st_rdev),
        )
    })
}

fn probe_block_device((major, minor): (u32, u32)) -> Option<BlockInfo> {
    let node = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    Some(describe_disk(node))
}

/// Reads the attributes of the disk holding the sysfs block `node` (a disk
/// or a partition directory under /sys/devices).
fn describe_disk(node: PathBuf) -> BlockInfo {
    let disk = whole_disk(node);
    BlockInfo {
        name: disk.file_name().map(|n| n.to_string_lossy().into_owned()),
        loop_backing_file: read_sysfs(&disk.join("loop/backing_file")),
        rotational: queue_attribute(&disk, "rotational").and_then(|r| parse_rotational(&r)),
        scheduler: queue_attribute(&disk, "scheduler").and_then(|s| active_scheduler(&s)),
        write_cache: queue_attribute(&disk, "write_cache"),
        raid_level: raid_level(&disk, MAX_STACK_DEPTH),
    }
}

/// Partitions sit in their disk's sysfs directory and have a `partition`
/// file; queue settings and md/loop attributes belong to the disk.
fn whole_disk(node: PathBuf) -> PathBuf {
    match node.parent() {
        Some(parent) if node.join("partition").exists() => parent.to_path_buf(),
        _ => node,
    }
}

/// A queue attribute of `disk`, or of the single device it is stacked on
/// when its own is missing (device-mapper targets often lack one). Stops
/// where a device has several slaves: striping has no single answer.
fn queue_attribute(disk: &Path, name: &str) -> Option<String> {
    let mut current = disk.to_path_buf();
    for _ in 0..MAX_STACK_DEPTH {
        if let Some(value) = read_sysfs(&current.join("queue").join(name)) {
            return Some(value);
        }
        let [only] = <[PathBuf; 1]>::try_from(slaves(&current)).ok()?;
        current = only;
    }
    None
}

/// The md level of `disk`, or of an md device somewhere beneath it (LVM or
/// dm-crypt on md raid), searched at most `depth` levels down.
fn raid_level(disk: &Path, depth: usize) -> Option<String> {
    if let Some(level) = read_sysfs(&disk.join("md/level")) {
        return Some(level);
    }
    let below = depth.checked_sub(1)?;
    slaves(disk)
        .iter()
        .find_map(|slave| raid_level(slave, below))
}

/// The whole disks `disk` is built on (its `slaves/`, partitions resolved).
fn slaves(disk: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(disk.join("slaves")) else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| std::fs::canonicalize(entry.ok()?.path()).ok())
        .map(whole_disk)
        .collect()
}

fn parse_rotational(value: &str) -> Option<bool> {
    match value {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    }
}

/// The active scheduler is the bracketed entry ("mq-deadline kyber [bfq]
/// none" → "bfq"). Queues that offer no choice (bio-based device-mapper)
/// print just "none".
fn active_scheduler(line: &str) -> Option<String> {
    let names: Vec<&str> = line.split_whitespace().collect();
    let bracketed = names
        .iter()
        .find_map(|n| n.strip_prefix('[')?.strip_suffix(']'));
    match (bracketed, names.as_slice()) {
        (Some(active), _) => Some(active.to_string()),
        (None, [only]) => Some(only.to_string()),
        (None, _) => None,
    }
}

// ---------------------------------------------------------------------------
// File helpers

/// A whole text file, or `None` if it can't be read.
fn read_text(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// A one-value sysfs attribute without its trailing newline; `None` if
/// missing, unreadable or empty. Only the newline is cut, so a backing file
/// name ending in a space survives.
fn read_sysfs(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let value = text.trim_end_matches('\n');
    (!value.is_empty()).then(|| value.to_string())
}

// ---------------------------------------------------------------------------
// Text report

type Rows = Vec<(&'static str, String)>;

fn host_rows(host: &HostEnv) -> Rows {
    // 0 means the probe could not tell, not an empty machine.
    let known = |n: u64, show: fn(u64) -> String| if n == 0 { "-".to_string() } else { show(n) };
    vec![
        ("hostname", host.hostname.clone()),
        ("os", or_dash(host.os.as_deref())),
        ("kernel", host.kernel.clone()),
        ("kernel version", host.kernel_version.clone()),
        ("arch", host.arch.clone()),
        ("cpu model", or_dash(host.cpu_model.as_deref())),
        (
            "cpus online",
            known(host.cpu_count as u64, |n| n.to_string()),
        ),
        ("memory", known(host.ram_bytes, format_bytes)),
    ]
}

fn target_rows(target: &TargetEnv) -> Rows {
    let rotational = target.rotational.map(|r| if r { "yes" } else { "no" });
    let risks = target.risks.iter().map(|r| ("RISK", r.message.clone()));
    let mut rows = vec![
        ("path", target.path.clone()),
        ("mount point", target.mount_point.clone()),
        ("fs type", target.fs_type.clone()),
        ("source", target.source.clone()),
        ("mount options", target.mount_options.clone()),
        (
            "loop backing file",
            or_dash(target.loop_backing_file.as_deref()),
        ),
        ("block device", or_dash(target.block_device.as_deref())),
        ("rotational", or_dash(rotational)),
        ("scheduler", or_dash(target.scheduler.as_deref())),
        ("write cache", or_dash(target.write_cache.as_deref())),
        ("raid level", or_dash(target.raid_level.as_deref())),
        ("total size", format_bytes(target.total_bytes)),
        ("free size", format_bytes(target.free_bytes)),
        ("total inodes", target.total_inodes.to_string()),
        ("free inodes", target.free_inodes.to_string()),
    ];
    rows.extend(risks);
    rows
}

fn or_dash(value: Option<&str>) -> String {
    value.unwrap_or("-").to_string()
}

/// A title line, then "  key:  value" rows with values in one column.
fn render_block(title: &str, rows: &[(&str, String)]) -> String {
    let width = rows.iter().map(|(key, _)| key.len() + 1).max().unwrap_or(0);
    let mut out = format!("{title}\n");
    for (key, value) in rows {
        let label = format!("{key}:");
        // Writing to a String cannot fail.
        let _ = writeln!(out, "  {label:<width$} {value}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1024 * 1024;

    // -- parsing helpers on fixed input ------------------------------------

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

    #[test]
    fn scheduler_is_the_bracketed_entry() {
        assert_eq!(
            active_scheduler("mq-deadline kyber [bfq] none").as_deref(),
            Some("bfq")
        );
        assert_eq!(
            active_scheduler("[none] mq-deadline kyber bfq \n").as_deref(),
            Some("none")
        );
        assert_eq!(active_scheduler("none").as_deref(), Some("none"));
        assert_eq!(active_scheduler("mq-deadline none"), None);
        assert_eq!(active_scheduler(""), None);
    }

    #[test]
    fn rotational_flag_parses_only_0_and_1() {
        assert_eq!(parse_rotational("0"), Some(false));
        assert_eq!(parse_rotational("1"), Some(true));
        assert_eq!(parse_rotational("yes"), None);
    }

    fn mount(dev: (u32, u32), mount_point: &str, fs_type: &str) -> MountEntry {
        MountEntry {
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

    #[test]
    fn host_files_parse() {
        let release =
            "NAME=\"Debian\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n";
        assert_eq!(
            os_release_value(release, "PRETTY_NAME").as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        assert_eq!(os_release_value(release, "ID").as_deref(), Some("debian"));
        assert_eq!(
            os_release_value("PRETTY_NAME='A \\ B'", "PRETTY_NAME").as_deref(),
            Some("A \\ B")
        );
        assert_eq!(
            os_release_value(r#"PRETTY_NAME="Say \"hi\"""#, "PRETTY_NAME").as_deref(),
            Some("Say \"hi\"")
        );
        assert_eq!(os_release_value("PRETTY_NAME=\"\"", "PRETTY_NAME"), None);
        assert_eq!(os_release_value("NAME=x", "PRETTY_NAME"), None);

        let x86 = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU\n";
        assert_eq!(
            cpu_model_from_cpuinfo(x86).as_deref(),
            Some("Intel(R) Xeon(R) CPU")
        );
        let power = "processor\t: 0\ncpu\t\t: POWER9, altivec supported\n";
        assert_eq!(
            cpu_model_from_cpuinfo(power).as_deref(),
            Some("POWER9, altivec supported")
        );
        let arm64 = "processor\t: 0\nBogoMIPS\t: 50.00\nCPU part\t: 0xd0c\n";
        assert_eq!(cpu_model_from_cpuinfo(arm64), None);

        assert_eq!(
            mem_total_from_meminfo("MemTotal:       24684084 kB\nMemFree: 1 kB\n"),
            Some(24684084 * 1024)
        );
        assert_eq!(mem_total_from_meminfo("MemFree: 1 kB\n"), None);

        assert_eq!(count_cpu_list("0-3,5,7-8\n"), Some(7));
        assert_eq!(count_cpu_list("0"), Some(1));
        assert_eq!(count_cpu_list(""), None);
        assert_eq!(count_cpu_list("3-1"), None);
        assert_eq!(count_cpu_list("a-b"), None);
    }

    // -- rendering -----------------------------------------------------------

    fn sample_host() -> HostEnv {
        HostEnv {
            hostname: "box".into(),
            kernel: "6.1.0-18-amd64".into(),
            kernel_version: "#1 SMP".into(),
            os: None,
            arch: "x86_64".into(),
            cpu_model: Some("Xeon".into()),
            cpu_count: 4,
            ram_bytes: 16 * 1024 * MIB,
        }
    }

    fn sample_target() -> TargetEnv {
        TargetEnv {
            path: "/mnt/t".into(),
            mount_point: "/mnt/t".into(),
            fs_type: "tmpfs".into(),
            mount_options: "rw,size=16384k".into(),
            source: "tmpfs".into(),
            loop_backing_file: None,
            block_device: None,
            rotational: Some(false),
            scheduler: None,
            write_cache: None,
            raid_level: None,
            total_bytes: 16 * MIB,
            free_bytes: 16 * MIB - 512 * 1024,
            total_inodes: 1000,
            free_inodes: 999,
            risks: Vec::new(),
        }
    }

    #[test]
    fn text_report_has_aligned_blocks_and_dashes() {
        let text = render_text(&sample_host(), &[sample_target()]);
        let blocks: Vec<&str> = text.split("\n\n").collect();
        assert_eq!(blocks.len(), 2, "{text}");
        assert!(blocks[0].starts_with("host\n"));
        assert!(blocks[1].starts_with("target /mnt/t\n"));
        assert!(text.contains("  os:             -\n"), "{text}");
        assert!(text.contains("  memory:         16.0 GiB\n"), "{text}");
        assert!(text.contains("  total size:        16.0 MiB\n"), "{text}");
        assert!(text.contains("  free size:         15.5 MiB\n"), "{text}");
        assert!(text.contains("  rotational:        no\n"), "{text}");
        assert!(text.contains("  block device:      -\n"), "{text}");
        assert!(text.contains("  free inodes:       999\n"), "{text}");
        // Every value of a block starts in the same column.
        for block in blocks {
            let columns: Vec<usize> = block
                .lines()
                .skip(1)
                .map(|line| {
                    line.find(": ").map_or(0, |c| {
                        c + 2 + line[c + 2..].len() - line[c + 2..].trim_start().len()
                    })
                })
                .collect();
            assert!(columns.windows(2).all(|w| w[0] == w[1]), "{block}");
        }
    }

    #[test]
    fn unknown_host_numbers_show_as_dash() {
        let host = HostEnv {
            cpu_count: 0,
            ram_bytes: 0,
            ..sample_host()
        };
        let text = render_text(&host, &[]);
        assert!(text.contains("  cpus online:    -\n"), "{text}");
        assert!(text.contains("  memory:         -\n"), "{text}");
    }

    #[test]
    fn envs_round_trip_through_json() {
        let target = sample_target();
        let json = serde_json::to_string(&target).expect("serialize");
        assert_eq!(
            serde_json::from_str::<TargetEnv>(&json).expect("deserialize"),
            target
        );
        let host = sample_host();
        let json = serde_json::to_string(&host).expect("serialize");
        assert_eq!(
            serde_json::from_str::<HostEnv>(&json).expect("deserialize"),
            host
        );
    }

    // -- block device stacking, on a fake sysfs tree -----------------------------
    // This machine's kernel has no partitions, device-mapper or md, so the
    // walks over `partition`, `slaves/` and `md/level` are checked on a
    // directory tree laid out like /sys/devices.

    fn write_file(path: &Path, content: &str) {
        std::fs::create_dir_all(path.parent().expect("has parent")).expect("create dirs");
        std::fs::write(path, content).expect("write file");
    }

    fn add_slave(holder: &Path, slave: &Path) {
        let link = holder
            .join("slaves")
            .join(slave.file_name().expect("named"));
        std::fs::create_dir_all(holder.join("slaves")).expect("create slaves dir");
        std::os::unix::fs::symlink(slave, link).expect("symlink slave");
    }

    #[test]
    fn stacked_devices_resolve_to_disk_raid_level_and_queue() {
        let scratch = ScratchDir::new("fake-sysfs");
        let pci = scratch.0.join("devices/pci");
        let virt = scratch.0.join("devices/virtual/block");
        for disk in ["sda", "sdb"] {
            write_file(&pci.join(disk).join("queue/rotational"), "1\n");
            write_file(
                &pci.join(disk).join("queue/scheduler"),
                "[mq-deadline] kyber none\n",
            );
            write_file(&pci.join(disk).join("queue/write_cache"), "write through\n");
            write_file(&pci.join(disk).join(format!("{disk}2/partition")), "2\n");
        }
        let md0 = virt.join("md0");
        write_file(&md0.join("md/level"), "raid1\n");
        write_file(&md0.join("queue/rotational"), "0\n");
        write_file(&md0.join("queue/scheduler"), "none\n");
        add_slave(&md0, &pci.join("sda/sda2"));
        add_slave(&md0, &pci.join("sdb/sdb2"));
        // dm-0: an LV on md0 exposing only write_cache of its own.
        let dm0 = virt.join("dm-0");
        write_file(&dm0.join("queue/write_cache"), "write back\n");
        add_slave(&dm0, &md0);
        // dm-1: striped over two partitions, nothing of its own.
        let dm1 = virt.join("dm-1");
        std::fs::create_dir_all(&dm1).expect("create dm-1");
        add_slave(&dm1, &pci.join("sda/sda2"));
        add_slave(&dm1, &pci.join("sdb/sdb2"));
        // dm-2: dm-crypt on dm-0.
        let dm2 = virt.join("dm-2");
        std::fs::create_dir_all(&dm2).expect("create dm-2");
        add_slave(&dm2, &dm0);
        let loop3 = virt.join("loop3");
        write_file(&loop3.join("loop/backing_file"), "/img/a b.img \n");

        let partition = describe_disk(pci.join("sda/sda2"));
        assert_eq!(partition.name.as_deref(), Some("sda"));
        assert_eq!(partition.rotational, Some(true));
        assert_eq!(partition.scheduler.as_deref(), Some("mq-deadline"));
        assert_eq!(partition.write_cache.as_deref(), Some("write through"));
        assert_eq!(partition.raid_level, None);

        let md = describe_disk(md0.clone());
        assert_eq!(
            (md.name.as_deref(), md.raid_level.as_deref()),
            (Some("md0"), Some("raid1"))
        );

        let lv = describe_disk(dm0.clone());
        assert_eq!(lv.name.as_deref(), Some("dm-0"));
        assert_eq!(lv.raid_level.as_deref(), Some("raid1"));
        assert_eq!(
            lv.rotational,
            Some(false),
            "missing: taken from the single slave md0"
        );
        assert_eq!(lv.scheduler.as_deref(), Some("none"));
        assert_eq!(
            lv.write_cache.as_deref(),
            Some("write back"),
            "own value wins"
        );

        let striped = describe_disk(dm1);
        assert_eq!(
            (striped.rotational, striped.scheduler, striped.raid_level),
            (None, None, None)
        );

        let crypt = describe_disk(dm2);
        assert_eq!(crypt.raid_level.as_deref(), Some("raid1"));
        assert_eq!(crypt.rotational, Some(false));

        let looped = describe_disk(loop3);
        assert_eq!(looped.loop_backing_file.as_deref(), Some("/img/a b.img "));
        assert_eq!(looped.rotational, None);
    }

    // -- this machine ----------------------------------------------------------

    #[test]
    fn host_probe_describes_this_machine() {
        let host = probe_host();
        assert!(!host.kernel.is_empty() && host.kernel != UNKNOWN);
        assert!(!host.arch.is_empty() && host.arch != UNKNOWN);
        assert!(host.cpu_count >= 1);
        assert!(host.ram_bytes > 0);
    }

    #[test]
    fn missing_path_is_an_error() {
        let err = probe_target(Path::new("/nonexistent/fsbench-env-probe")).expect_err("must fail");
        assert!(format!("{err:#}").contains("/nonexistent/fsbench-env-probe"));
    }

    #[test]
    fn root_is_its_own_mount_point() {
        let target = probe_target(Path::new("/")).expect("/ can be probed");
        assert_eq!(target.path, "/");
        assert_eq!(target.mount_point, "/");
        assert_ne!(target.fs_type, UNKNOWN);
        assert!(target.total_bytes > 0);
    }

    // -- real mounts (root only) -----------------------------------------------

    use std::process::Command;

    fn skip_unless_root(test: &str) -> bool {
        let root = rustix::process::geteuid().is_root();
        if !root {
            eprintln!("skipping {test}: needs root to mount file systems");
        }
        !root
    }

    fn run(program: &str, args: &[&OsStr]) -> bool {
        Command::new(program)
            .args(args)
            .status()
            .is_ok_and(|s| s.success())
    }

    /// A fresh directory under the temp dir, removed (with contents) on drop.
    struct ScratchDir(PathBuf);

    impl ScratchDir {
        fn new(name: &str) -> Self {
            let dir =
                std::env::temp_dir().join(format!("fsbench-env-{}-{name}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("create scratch dir");
            ScratchDir(std::fs::canonicalize(&dir).expect("canonical scratch dir"))
        }
    }

    impl Drop for ScratchDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// Unmounts on drop, lazily if busy, and detaches any loop device still
    /// bound to `loop_image`, so a failing assertion leaves nothing behind.
    struct MountGuard {
        point: PathBuf,
        loop_image: Option<PathBuf>,
    }

    impl Drop for MountGuard {
        fn drop(&mut self) {
            if !run("umount", &[self.point.as_os_str()]) {
                run("umount", &[OsStr::new("-l"), self.point.as_os_str()]);
            }
            let Some(image) = &self.loop_image else {
                return;
            };
            let Ok(out) = Command::new("losetup")
                .args([OsStr::new("-j"), image.as_os_str()])
                .output()
            else {
                return;
            };
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                if let Some((device, _)) = line.split_once(':') {
                    run("losetup", &[OsStr::new("-d"), OsStr::new(device)]);
                }
            }
        }
    }

    fn mount_tmpfs(point: &Path) -> MountGuard {
        std::fs::create_dir_all(point).expect("create mount point");
        let args = ["-t", "tmpfs", "-o", "size=16m", "tmpfs"].map(OsStr::new);
        assert!(
            run("mount", &[&args[..], &[point.as_os_str()]].concat()),
            "mount -t tmpfs on {} failed",
            point.display()
        );
        MountGuard {
            point: point.to_path_buf(),
            loop_image: None,
        }
    }

    #[test]
    fn real_tmpfs_mount_with_space_in_path() {
        if skip_unless_root("real_tmpfs_mount_with_space_in_path") {
            return;
        }
        let scratch = ScratchDir::new("tmpfs");
        // The space makes mountinfo escape the mount point as "\040".
        let point = scratch.0.join("mnt with space");
        let _mounted = mount_tmpfs(&point);
        std::fs::create_dir(point.join("sub")).expect("mkdir in tmpfs");

        let target = probe_target(&point.join("sub")).expect("probe tmpfs");
        assert_eq!(target.fs_type, "tmpfs");
        assert_eq!(target.source, "tmpfs");
        assert_eq!(target.mount_point, point.to_string_lossy());
        assert_eq!(target.path, point.join("sub").to_string_lossy());
        assert_eq!(target.total_bytes, 16 * MIB);
        assert!(target.free_bytes <= target.total_bytes);
        assert!(target.total_inodes > 0);
        assert!(
            target.mount_options.split(',').any(|o| o == "size=16384k"),
            "{}",
            target.mount_options
        );
        assert!(
            target.mount_options.starts_with("rw,"),
            "{}",
            target.mount_options
        );
        assert_eq!(target.block_device, None);
        assert_eq!(target.rotational, None);
        assert_eq!(target.scheduler, None);
        assert_eq!(target.loop_backing_file, None);
    }

    #[test]
    fn real_bind_mount_reports_the_bind_point() {
        if skip_unless_root("real_bind_mount_reports_the_bind_point") {
            return;
        }
        let scratch = ScratchDir::new("bind");
        let original = scratch.0.join("orig");
        let _mounted = mount_tmpfs(&original);
        std::fs::create_dir(original.join("inner")).expect("mkdir in tmpfs");
        let bind = scratch.0.join("bind");
        std::fs::create_dir(&bind).expect("create bind point");
        assert!(run(
            "mount",
            &[
                OsStr::new("--bind"),
                original.join("inner").as_os_str(),
                bind.as_os_str()
            ]
        ));
        let _bound = MountGuard {
            point: bind.clone(),
            loop_image: None,
        };

        // Same device at two mount points: each path reports the one it is reached through.
        let via_bind = probe_target(&bind).expect("probe bind");
        assert_eq!(via_bind.mount_point, bind.to_string_lossy());
        assert_eq!(via_bind.fs_type, "tmpfs");
        let via_original = probe_target(&original.join("inner")).expect("probe original");
        assert_eq!(via_original.mount_point, original.to_string_lossy());
    }

    #[test]
    fn real_ext4_on_loop_device() {
        if skip_unless_root("real_ext4_on_loop_device") {
            return;
        }
        let scratch = ScratchDir::new("ext4");
        let image = scratch.0.join("fs.img");
        let file = std::fs::File::create(&image).expect("create image");
        file.set_len(64 * MIB).expect("size image");
        drop(file);
        assert!(
            run(
                "mkfs.ext4",
                &[OsStr::new("-q"), OsStr::new("-F"), image.as_os_str()]
            ),
            "mkfs.ext4 failed"
        );
        let point = scratch.0.join("mnt");
        std::fs::create_dir(&point).expect("create mount point");
        assert!(
            run(
                "mount",
                &[
                    OsStr::new("-o"),
                    OsStr::new("loop"),
                    image.as_os_str(),
                    point.as_os_str()
                ]
            ),
            "mount -o loop failed"
        );
        let _mounted = MountGuard {
            point: point.clone(),
            loop_image: Some(image.clone()),
        };

        let target = probe_target(&point).expect("probe ext4");
        assert_eq!(target.fs_type, "ext4");
        assert_eq!(target.mount_point, point.to_string_lossy());
        let loop_name = target
            .source
            .strip_prefix("/dev/")
            .expect("source is a /dev node");
        assert!(loop_name.starts_with("loop"), "{}", target.source);
        assert_eq!(target.block_device.as_deref(), Some(loop_name));
        assert_eq!(
            target.loop_backing_file.as_deref(),
            Some(&*image.to_string_lossy())
        );
        assert!(target.rotational.is_some());
        assert!(target.scheduler.is_some());
        assert_eq!(target.raid_level, None);
        assert!(target.total_bytes > 32 * MIB && target.total_bytes <= 64 * MIB);
        assert!(target.total_inodes > 0);
    }
}

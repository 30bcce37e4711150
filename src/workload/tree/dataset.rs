//! The datasets: trees shaped like the seeds' (an Aperture photo library,
//! ten large images, a kernel-like source tree, 72k files of 150 KiB on
//! average, a maildir), planned deterministically from a seed and a scale,
//! described (entries, bytes, size histogram) and written to disk.
use std::collections::HashSet;
use std::os::fd::{AsFd, BorrowedFd};

use anyhow::Context;
use rustix::fs::{AtFlags, Mode, OFlags, Timespec, Timestamps};
use serde::Serialize;

use crate::error::usage;
use crate::rng::{Random, SplitMix64};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DatasetKind {
    Photos,
    Images,
    Source,
    Small,
    Maildir,
}

/// Name, entries at scale 1, what it is (for `--help` and errors).
const DATASETS: [(DatasetKind, &str, u64, &str); 5] = [
    (
        DatasetKind::Photos,
        "photos",
        10_000,
        "photo library bundle: ~10k entries, 7.9 GB (seed 000)",
    ),
    (
        DatasetKind::Images,
        "images",
        11,
        "10 files of 100 MB to 1 GB, 5.5 GB (seed 000)",
    ),
    (
        DatasetKind::Source,
        "source",
        27_000,
        "kernel-like source tree: 25k small files, ~370 MB (seed 001)",
    ),
    (
        DatasetKind::Small,
        "small",
        72_500,
        "72k files of 150 KiB on average, 11 GB (seed 002)",
    ),
    (
        DatasetKind::Maildir,
        "maildir",
        300_500,
        "300k tiny mail files, ~1.5 GB (seed 003's batch)",
    ),
];

/// Above this many planned entries a dataset would not fit in memory
/// comfortably (the plan holds every path).
const MAX_ENTRIES: f64 = 10_000_000.0;

impl DatasetKind {
    pub fn parse(name: &str) -> anyhow::Result<DatasetKind> {
        match DATASETS.iter().find(|d| d.1 == name) {
            Some(d) => Ok(d.0),
            None => usage(format!(
                "unknown dataset '{name}': use one of {}",
                DATASETS.map(|d| d.1).join(", ")
            )),
        }
    }

    pub fn name(self) -> &'static str {
        self.info().1
    }

    /// One line per dataset, for `--help`.
    pub fn help() -> String {
        DATASETS
            .iter()
            .map(|d| format!("  {:<8} {}", d.1, d.3))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn info(self) -> &'static (DatasetKind, &'static str, u64, &'static str) {
        DATASETS
            .iter()
            .find(|d| d.0 == self)
            .expect("every kind is listed")
    }

    /// Refuses scales that are not positive or would plan more entries than
    /// fit in memory.
    pub fn check_scale(self, scale: f64) -> anyhow::Result<()> {
        if !(scale.is_finite() && scale > 0.0) {
            return usage(format!("--scale {scale}: give a number above 0 (e.g. 0.1)"));
        }
        if self.info().2 as f64 * scale > MAX_ENTRIES {
            return usage(format!(
                "--scale {scale}: dataset {} would have about {:.0} entries, more than {MAX_ENTRIES:.0}",
                self.name(),
                self.info().2 as f64 * scale
            ));
        }
        Ok(())
    }
}

/// One file or directory of a planned dataset.
#[derive(Debug, Clone)]
pub struct PlannedEntry {
    /// Relative to the dataset root, `/`-separated.
    pub path: String,
    pub mode: u32,
    pub mtime: i64,
    /// None for a directory.
    pub size: Option<u64>,
    /// Where the file's data starts in the data pool.
    pub offset: u64,
}

/// A dataset before it is written: parents always before their children.
pub struct Plan {
    pub entries: Vec<PlannedEntry>,
}

/// File-size classes of the histogram: (upper bound, label).
const BUCKETS: [(u64, &str); 8] = [
    (4 << 10, "<4K"),
    (32 << 10, "4K-32K"),
    (256 << 10, "32K-256K"),
    (2 << 20, "256K-2M"),
    (16 << 20, "2M-16M"),
    (128 << 20, "16M-128M"),
    (1 << 30, "128M-1G"),
    (u64::MAX, ">=1G"),
];

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bucket {
    pub sizes: &'static str,
    pub files: u64,
    pub bytes: u64,
}

/// What a dataset holds: the generator's (or a `--source` walk's) account.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Description {
    /// Files, directories and other entries under the root (not the root).
    pub entries: u64,
    pub dirs: u64,
    pub files: u64,
    /// Symlinks and special files.
    pub other: u64,
    /// Bytes of file data.
    pub bytes: u64,
    /// Files per size class (only classes that have files).
    pub histogram: Vec<Bucket>,
    /// Bytes of the longest path under the root: what sizes the names in
    /// a sync log's records.
    #[serde(skip)]
    pub longest_path: usize,
}

impl Default for Description {
    fn default() -> Self {
        Description {
            entries: 0,
            dirs: 0,
            files: 0,
            other: 0,
            bytes: 0,
            histogram: BUCKETS
                .iter()
                .map(|b| Bucket {
                    sizes: b.1,
                    files: 0,
                    bytes: 0,
                })
                .collect(),
            longest_path: 0,
        }
    }
}

impl Description {
    pub fn add_file(&mut self, path: &str, size: u64) {
        self.add_entry(path);
        self.files += 1;
        self.bytes += size;
        let class = BUCKETS.iter().position(|b| size < b.0).unwrap_or(0);
        self.histogram[class].files += 1;
        self.histogram[class].bytes += size;
    }

    pub fn add_dir(&mut self, path: &str) {
        self.add_entry(path);
        self.dirs += 1;
    }

    pub fn add_other(&mut self, path: &str) {
        self.add_entry(path);
        self.other += 1;
    }

    fn add_entry(&mut self, path: &str) {
        self.entries += 1;
        self.longest_path = self.longest_path.max(path.len());
    }

    /// Drops empty size classes (call once, when complete).
    pub fn finish(mut self) -> Self {
        self.histogram.retain(|b| b.files > 0);
        self
    }

    /// Bytes the dataset takes on disk, rounding every entry up to 4 KiB
    /// blocks, for the free-space check.
    pub fn disk_bytes(&self) -> u64 {
        const BLOCK: u64 = 4096;
        self.bytes + (self.entries + 1) * BLOCK
    }

    /// `1234 entries (12 dirs, 1222 files), 158.3 MB; sizes <4K 10, 4K-32K 200`
    pub fn summary(&self) -> String {
        let sizes: Vec<String> = self
            .histogram
            .iter()
            .map(|b| format!("{} {}", b.sizes, b.files))
            .collect();
        let other = match self.other {
            0 => String::new(),
            n => format!(", {n} other"),
        };
        format!(
            "{} entries ({} dirs, {} files{other}), {:.1} MB; file sizes: {}",
            self.entries,
            self.dirs,
            self.files,
            self.bytes as f64 / 1e6,
            sizes.join(", ")
        )
    }
}

impl Plan {
    pub fn new(kind: DatasetKind, scale: f64, seed: u64) -> Plan {
        let mut builder = PlanBuilder::new(seed);
        match kind {
            DatasetKind::Photos => photos(&mut builder, scale),
            DatasetKind::Images => images(&mut builder, scale),
            DatasetKind::Source => source(&mut builder, scale),
            DatasetKind::Small => small(&mut builder, scale),
            DatasetKind::Maildir => maildir(&mut builder, scale),
        }
        Plan {
            entries: builder.entries,
        }
    }

    pub fn describe(&self) -> Description {
        let mut description = Description::default();
        for entry in &self.entries {
            match entry.size {
                Some(size) => description.add_file(&entry.path, size),
                None => description.add_dir(&entry.path),
            }
        }
        description.finish()
    }
}

/// Collects entries, creating each parent directory the first time a path
/// needs it, so the plan is always in creation order.
struct PlanBuilder {
    rng: SplitMix64,
    entries: Vec<PlannedEntry>,
    /// Every path planned so far.
    taken: HashSet<String>,
    dir_mode: u32,
}

/// mtimes spread over five years from 2012-01-01.
const EPOCH_2012: i64 = 1_325_376_000;
const FIVE_YEARS_S: u64 = 5 * 365 * 86_400;

impl PlanBuilder {
    fn new(seed: u64) -> Self {
        PlanBuilder {
            rng: SplitMix64::new(seed),
            entries: Vec::new(),
            taken: HashSet::new(),
            dir_mode: 0o755,
        }
    }

    fn mtime(&mut self) -> i64 {
        EPOCH_2012 + self.rng.range(0, FIVE_YEARS_S) as i64
    }

    fn dir(&mut self, path: &str) {
        if path.is_empty() || self.taken.contains(path) {
            return;
        }
        if let Some((parent, _)) = path.rsplit_once('/') {
            self.dir(parent);
        }
        self.taken.insert(path.to_string());
        let mtime = self.mtime();
        self.entries.push(PlannedEntry {
            path: path.to_string(),
            mode: self.dir_mode,
            mtime,
            size: None,
            offset: 0,
        });
    }

    fn file(&mut self, path: String, size: u64, mode: u32) {
        if let Some((parent, _)) = path.rsplit_once('/') {
            self.dir(parent);
        }
        let mtime = self.mtime();
        let offset = self.rng.range(0, POOL_BYTES as u64 - 1);
        self.taken.insert(path.clone());
        self.entries.push(PlannedEntry {
            path,
            mode,
            mtime,
            size: Some(size),
            offset,
        });
    }
}

/// `base` scaled, at least 1.
fn scaled(base: u64, scale: f64) -> u64 {
    ((base as f64 * scale).round() as u64).max(1)
}

const KB: f64 = 1024.0;
const MB: f64 = 1024.0 * 1024.0;

/// An Aperture library: per photo a master, a preview (in its own folder),
/// a thumbnail and three small metadata files in a version folder, filed
/// by import date in four parallel trees, plus the library databases.
fn photos(b: &mut PlanBuilder, scale: f64) {
    let photos = scaled(1125, scale);
    for (name, size) in [
        ("Info.plist", 1_200),
        ("Database/DataModelVersion.plist", 600),
        ("Database/apdb/Library.apdb", scaled(24 << 20, scale)),
        ("Database/apdb/Properties.apdb", scaled(6 << 20, scale)),
        ("Database/apdb/ImageProxies.apdb", scaled(3 << 20, scale)),
    ] {
        b.file(name.to_string(), size, 0o644);
    }
    let start = chrono::NaiveDate::from_ymd_opt(2012, 1, 1).expect("valid date");
    let (mut done, mut day) = (0, 0);
    while done < photos {
        let count = b.rng.range(4, 16).min(photos - done);
        day += b.rng.range(1, 20);
        let date = start + chrono::Days::new(day);
        let import = format!(
            "{}/{}-{:06}",
            date.format("%Y/%m/%d"),
            date.format("%Y%m%d"),
            b.rng.range(0, 235_959)
        );
        for number in done..done + count {
            photo(b, &import, number);
        }
        done += count;
    }
}

fn photo(b: &mut PlanBuilder, import: &str, number: u64) {
    let image = format!("IMG_{:04}", number % 10_000);
    let master = b.rng.log_normal(5.4 * MB, 0.35, 1 << 20, 30 << 20);
    let preview = b.rng.log_normal(900.0 * KB, 0.4, 64 << 10, 4 << 20);
    let thumb = b.rng.log_normal(40.0 * KB, 0.3, 4 << 10, 256 << 10);
    let uuid = b.rng.next_u64();
    b.file(format!("Masters/{import}/{image}.JPG"), master, 0o644);
    b.file(
        format!("Previews/{import}/{uuid:016x}/{image}.jpg"),
        preview,
        0o644,
    );
    b.file(format!("Thumbnails/{import}/{image}.jpg"), thumb, 0o644);
    for meta in [
        "Master.apmaster",
        "Version-0.apversion",
        "Version-1.apversion",
    ] {
        let size = b.rng.range(1_000, 8_000);
        b.file(
            format!("Database/Versions/{import}/{image}/{meta}"),
            size,
            0o644,
        );
    }
}

/// Seed 000's `dd ... bs=100000000 count=$i` for i in 1..=10: the scale
/// shrinks the sizes, not the count.
fn images(b: &mut PlanBuilder, scale: f64) {
    for i in 1..=10u64 {
        b.file(
            format!("images/{i}.img"),
            scaled(i * 100_000_000, scale),
            0o644,
        );
    }
}

const TOP_DIRS: [&str; 20] = [
    "arch",
    "block",
    "crypto",
    "Documentation",
    "drivers",
    "fs",
    "include",
    "init",
    "ipc",
    "kernel",
    "lib",
    "mm",
    "net",
    "samples",
    "scripts",
    "security",
    "sound",
    "tools",
    "usr",
    "virt",
];
const WORDS: [&str; 24] = [
    "core", "dev", "irq", "bus", "pci", "usb", "net", "mem", "sched", "time", "power", "dma",
    "gpio", "i2c", "spi", "clk", "phy", "hid", "input", "video", "audio", "acpi", "ext", "sys",
];

/// A kernel-like tree: directories grown by attaching each new one to a
/// random existing one (a few deep, many shallow), files spread over them.
fn source(b: &mut PlanBuilder, scale: f64) {
    let dirs = scaled(1_700, scale);
    let files = scaled(25_000, scale);
    let mut all: Vec<(String, u32)> = vec![(String::new(), 0)];
    for name in TOP_DIRS.iter().take(dirs as usize) {
        b.dir(name);
        all.push((name.to_string(), 1));
    }
    while (all.len() as u64) <= dirs {
        let (parent, depth) = all[b.rng.range(1, all.len() as u64 - 1) as usize].clone();
        if depth >= 8 {
            continue;
        }
        let path = unique(b, &parent, "");
        b.dir(&path);
        all.push((path, depth + 1));
    }
    for _ in 0..files {
        let parent = all[b.rng.range(0, all.len() as u64 - 1) as usize].0.clone();
        let (ext, mode) = match b.rng.range(0, 19) {
            0..=10 => (".c", 0o644),
            11..=17 => (".h", 0o644),
            18 => (".sh", 0o755),
            _ => ("_Kconfig", 0o644),
        };
        let path = unique(b, &parent, ext);
        let size = b.rng.log_normal(8.0 * KB, 1.1, 100, 1 << 20);
        b.file(path, size, mode);
    }
}

/// A name from `WORDS` (numbered when taken) under `parent`.
fn unique(b: &mut PlanBuilder, parent: &str, ext: &str) -> String {
    let word = WORDS[b.rng.range(0, WORDS.len() as u64 - 1) as usize];
    let prefix = if parent.is_empty() {
        String::new()
    } else {
        format!("{parent}/")
    };
    let mut path = format!("{prefix}{word}{ext}");
    let mut n = 1;
    while b.taken.contains(&path) {
        n += 1;
        path = format!("{prefix}{word}{n}{ext}");
    }
    path
}

/// Seed 002's rsync source: 72,208 files, 150 KiB on average, about 250
/// per directory, ten directories per parent.
fn small(b: &mut PlanBuilder, scale: f64) {
    let files = scaled(72_208, scale);
    for i in 0..files {
        let leaf = i / 250;
        let size = b.rng.log_normal(64.0 * KB, 1.3, 1, 64 << 20);
        b.file(
            format!("d{:03}/d{:03}/{i:06}.bin", leaf / 10, leaf % 10),
            size,
            0o644,
        );
    }
}

/// Users' maildirs (cur/new/tmp) of small messages: seed 003's batch job
/// concatenated hundreds of thousands of files like these.
fn maildir(b: &mut PlanBuilder, scale: f64) {
    let files = scaled(300_000, scale);
    let users = (files / 3_000).max(1);
    b.dir_mode = 0o700;
    for user in 0..users {
        for sub in ["cur", "new", "tmp"] {
            b.dir(&format!("user{user:04}/Maildir/{sub}"));
        }
    }
    for i in 0..files {
        let user = i % users;
        let sub = if b.rng.range(0, 9) == 0 { "new" } else { "cur" };
        let size = b.rng.log_normal(3.0 * KB, 1.0, 300, 1 << 20);
        let stamp = EPOCH_2012 as u64 + i * 7;
        b.file(
            format!("user{user:04}/Maildir/{sub}/{stamp}.M{i}P4242.fsbench,S={size}:2,S"),
            size,
            0o600,
        );
    }
}

/// Size of the random data every file is cut from: large enough that no
/// two small files share data at the same place, and incompressible.
pub const POOL_BYTES: usize = 16 << 20;

/// The incompressible data every file is cut from, fixed by the seed.
pub fn data_pool(seed: u64) -> Vec<u8> {
    let mut pool = vec![0u8; POOL_BYTES];
    SplitMix64::new(seed ^ 0x5EED_DA7A).fill(&mut pool);
    pool
}

/// Writes `len` bytes of the pool, starting at `offset` and wrapping
/// around, to `fd`.
pub fn write_from_pool(
    fd: BorrowedFd<'_>,
    pool: &[u8],
    offset: u64,
    len: u64,
) -> anyhow::Result<()> {
    let mut at = offset as usize % pool.len();
    let mut left = len;
    while left > 0 {
        let n = (pool.len() - at).min(left as usize);
        crate::io::write_all(fd, &pool[at..at + n])?;
        left -= n as u64;
        at = 0;
    }
    Ok(())
}

/// Writes the plan under `root`; calls `each` after every entry (for
/// latency and the interrupt check). Directory mtimes are set last, once
/// their contents no longer change.
pub fn write(
    plan: &Plan,
    root: BorrowedFd<'_>,
    pool: &[u8],
    mut each: impl FnMut() -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    for entry in &plan.entries {
        write_entry(entry, root, pool).with_context(|| format!("cannot create {}", entry.path))?;
        each()?;
    }
    for entry in plan.entries.iter().rev().filter(|e| e.size.is_none()) {
        rustix::fs::utimensat(
            root,
            entry.path.as_str(),
            &times(entry.mtime),
            AtFlags::empty(),
        )
        .with_context(|| format!("cannot set the time of {}", entry.path))?;
    }
    Ok(())
}

fn write_entry(entry: &PlannedEntry, root: BorrowedFd<'_>, pool: &[u8]) -> anyhow::Result<()> {
    let mode = Mode::from_raw_mode(entry.mode);
    let Some(size) = entry.size else {
        return Ok(rustix::fs::mkdirat(root, entry.path.as_str(), mode)?);
    };
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(root, entry.path.as_str(), flags, mode)?;
    write_from_pool(fd.as_fd(), pool, entry.offset, size)?;
    rustix::fs::futimens(&fd, &times(entry.mtime))?;
    Ok(())
}

/// atime and mtime both `seconds`.
pub fn times(seconds: i64) -> Timestamps {
    let at = Timespec {
        tv_sec: seconds,
        tv_nsec: 0,
    };
    Timestamps {
        last_access: at,
        last_modification: at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(plan: &Plan) -> Vec<&str> {
        plan.entries.iter().map(|e| e.path.as_str()).collect()
    }

    #[test]
    fn plans_are_deterministic_and_parents_come_first() {
        for kind in DATASETS.map(|d| d.0) {
            let a = Plan::new(kind, 0.01, 42);
            let b = Plan::new(kind, 0.01, 42);
            assert_eq!(paths(&a), paths(&b), "{kind:?}");
            assert_eq!(a.describe(), b.describe());
            let mut seen = HashSet::new();
            for entry in &a.entries {
                if let Some((parent, _)) = entry.path.rsplit_once('/') {
                    assert!(
                        seen.contains(parent),
                        "{kind:?}: {} before its parent",
                        entry.path
                    );
                }
                assert!(
                    seen.insert(entry.path.as_str()),
                    "{kind:?}: {} twice",
                    entry.path
                );
            }
        }
        let other = Plan::new(DatasetKind::Photos, 0.01, 43).describe();
        assert_ne!(Plan::new(DatasetKind::Photos, 0.01, 42).describe(), other);
    }

    #[test]
    fn full_scale_matches_the_seeds() {
        let photos = Plan::new(DatasetKind::Photos, 1.0, 1).describe();
        assert!(
            (9_500..10_500).contains(&photos.entries),
            "{}",
            photos.summary()
        );
        assert!(
            (7.5e9..8.3e9).contains(&(photos.bytes as f64)),
            "{}",
            photos.summary()
        );
        let small = Plan::new(DatasetKind::Small, 1.0, 1).describe();
        assert_eq!(small.files, 72_208);
        let mean_kib = small.bytes as f64 / small.files as f64 / 1024.0;
        assert!((130.0..170.0).contains(&mean_kib), "{mean_kib}");
        let images = Plan::new(DatasetKind::Images, 1.0, 1).describe();
        assert_eq!((images.files, images.bytes), (10, 5_500_000_000));
        let source = Plan::new(DatasetKind::Source, 1.0, 1).describe();
        assert_eq!(source.files, 25_000);
    }

    #[test]
    fn refuses_bad_scales_and_names() {
        assert!(DatasetKind::parse("videos").is_err());
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e6] {
            assert!(DatasetKind::Maildir.check_scale(bad).is_err(), "{bad}");
        }
        DatasetKind::Photos.check_scale(0.5).unwrap();
    }
}

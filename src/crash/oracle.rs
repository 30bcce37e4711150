//! The crash workload and its oracle: what applications do to make data
//! durable, each acknowledged — a mark in the recorder's control file,
//! after the call that promised durability returned — and what a crash
//! state must therefore hold.
//!
//! The operations are drawn from a seed and run one after another, so
//! every operation before an acknowledged one has finished, and at most
//! one (the next) was under way at a cut. Contents are a function of the
//! file, its version and the position (`content`), so nothing written has
//! to be kept to be checked.
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::rng::{Random, SplitMix64, WyRand};

/// Contents are generated, and overwrites made, in blocks of this size.
pub const BLOCK: u64 = 4096;
/// What a disk writes atomically: a rewrite is checked sector by sector.
const SECTOR: usize = super::cuts::SECTOR as usize;

/// One operation of the crash workload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Op {
    /// A new file written, fsynced, its directory fsynced.
    Create { file: u32, size: u64 },
    /// Blocks of an existing file rewritten in place, then fdatasync.
    Overwrite {
        file: u32,
        version: u32,
        offset: u64,
        len: u64,
    },
    /// A record appended to a log file, then fdatasync.
    Append { file: u32, offset: u64, len: u64 },
    /// Blocks rewritten through a descriptor opened O_DSYNC.
    Dsync {
        file: u32,
        version: u32,
        offset: u64,
        len: u64,
    },
    /// The atomic replace idiom: a temporary file written and fsynced,
    /// renamed over the file, the directory fsynced.
    Replace { file: u32, version: u32, size: u64 },
    /// A small transaction record appended to a database's log and
    /// fdatasynced, then its page written in place unsynced (the shape of
    /// netatalk's CNID database).
    SyncLog { offset: u64, len: u64, page: u64 },
    /// A file written and closed, never synced: its loss is expected.
    Unsynced { file: u32, size: u64 },
}

/// The workload's directories, one per kind of operation (`Op::path`).
const DIRS: [&str; 7] = [
    "create",
    "overwrite",
    "append",
    "dsync",
    "replace",
    "synclog",
    "unsynced",
];

/// The files the workload keeps rewriting, and their size.
const OVERWRITTEN: u32 = 4;
const REWRITTEN_SIZE: u64 = 256 << 10;
const REPLACED: u32 = 4;
/// The file numbers of the log files (one each).
const APPEND_LOG: u32 = 0;
const SYNC_LOG: u32 = 1;
const SYNC_DB_PAGES: u64 = 64;

impl Op {
    /// The file it writes, relative to the workload's directory.
    pub fn path(&self) -> PathBuf {
        PathBuf::from(match self {
            Op::Create { file, .. } => format!("create/{file:05}"),
            Op::Overwrite { file, .. } => format!("overwrite/{file:02}"),
            Op::Append { .. } => "append/log".into(),
            Op::Dsync { file, .. } => format!("dsync/{file:02}"),
            Op::Replace { file, .. } => format!("replace/{file:02}"),
            Op::SyncLog { .. } => "synclog/log".into(),
            Op::Unsynced { file, .. } => format!("unsynced/{file:05}"),
        })
    }

    /// Whether it is acknowledged (its loss is a failure), as opposed to
    /// only noted (an unsynced file: its loss is expected).
    pub fn acknowledged(&self) -> bool {
        !matches!(self, Op::Unsynced { .. })
    }

    /// The stream its contents come from: (file class and number,
    /// version); the same for every op that writes one file's version.
    fn stream(&self) -> (u64, u32) {
        let class = |c: u64, file: u32| (c << 32) | u64::from(file);
        match *self {
            Op::Create { file, .. } => (class(1, file), 0),
            Op::Overwrite { file, version, .. } => (class(2, file), version),
            Op::Append { .. } => (class(3, APPEND_LOG), 0),
            Op::Dsync { file, version, .. } => (class(4, file), version),
            Op::Replace { file, version, .. } => (class(5, file), version),
            Op::SyncLog { .. } => (class(3, SYNC_LOG), 0),
            Op::Unsynced { file, .. } => (class(6, file), 0),
        }
    }

    /// The byte range of the file it writes.
    fn range(&self) -> (u64, u64) {
        match *self {
            Op::Create { size, .. } | Op::Replace { size, .. } | Op::Unsynced { size, .. } => {
                (0, size)
            }
            Op::Overwrite { offset, len, .. }
            | Op::Append { offset, len, .. }
            | Op::Dsync { offset, len, .. }
            | Op::SyncLog { offset, len, .. } => (offset, len),
        }
    }

    /// The bytes it writes.
    pub fn data(&self, seed: u64) -> Vec<u8> {
        let (offset, len) = self.range();
        content(seed, self.stream(), offset, len)
    }
}

/// The bytes at `offset..offset+len` of a file version's contents.
pub fn content(seed: u64, (file, version): (u64, u32), offset: u64, len: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(len as usize);
    let first = offset / BLOCK;
    let last = (offset + len).div_ceil(BLOCK);
    let mut block = vec![0u8; BLOCK as usize];
    for b in first..last {
        let key = seed ^ file.rotate_left(17) ^ (u64::from(version) << 48);
        WyRand::for_stream(key, b).fill(&mut block);
        let from = offset.max(b * BLOCK) - b * BLOCK;
        let to = (offset + len).min((b + 1) * BLOCK) - b * BLOCK;
        out.extend_from_slice(&block[from as usize..to as usize]);
    }
    out
}

/// The workload's operations for `seed`, about `bytes` of writes.
pub fn plan(seed: u64, bytes: u64) -> Vec<Op> {
    let mut rng = SplitMix64::new(seed);
    // The files rewritten in place are made whole first (version 0).
    let mut ops: Vec<Op> = (0..OVERWRITTEN)
        .map(|file| Op::Overwrite {
            file,
            version: 0,
            offset: 0,
            len: REWRITTEN_SIZE,
        })
        .collect();
    let mut next_file = 0;
    let mut versions = [0u32; (OVERWRITTEN + REPLACED) as usize];
    let mut dsync_version = [0u32; OVERWRITTEN as usize];
    let (mut append_end, mut synclog_end) = (0u64, 0u64);
    let mut written: u64 = ops.iter().map(|o| o.range().1).sum();
    let mut dsync_made = false;
    while written < bytes {
        let op = match rng.below(100) {
            0..20 => {
                next_file += 1;
                Op::Create {
                    file: next_file,
                    size: BLOCK * rng.range(1, 96),
                }
            }
            20..35 => {
                let file = rng.below(u64::from(OVERWRITTEN)) as u32;
                versions[file as usize] += 1;
                let len = BLOCK * rng.range(1, 16);
                let offset = BLOCK * rng.below((REWRITTEN_SIZE - len) / BLOCK + 1);
                Op::Overwrite {
                    file,
                    version: versions[file as usize],
                    offset,
                    len,
                }
            }
            35..50 => {
                let len = rng.range(512, 16 << 10);
                append_end += len;
                Op::Append {
                    file: APPEND_LOG,
                    offset: append_end - len,
                    len,
                }
            }
            50..60 if !dsync_made => {
                dsync_made = true;
                Op::Dsync {
                    file: 0,
                    version: 0,
                    offset: 0,
                    len: REWRITTEN_SIZE,
                }
            }
            50..60 => {
                let file = 0;
                dsync_version[file] += 1;
                let len = BLOCK * rng.range(1, 4);
                let offset = BLOCK * rng.below((REWRITTEN_SIZE - len) / BLOCK + 1);
                Op::Dsync {
                    file: file as u32,
                    version: dsync_version[file],
                    offset,
                    len,
                }
            }
            60..72 => {
                let file = rng.below(u64::from(REPLACED)) as u32;
                let slot = (OVERWRITTEN + file) as usize;
                versions[slot] += 1;
                Op::Replace {
                    file,
                    version: versions[slot],
                    size: rng.range(1, 128 << 10),
                }
            }
            72..90 => {
                let len = rng.range(64, 300);
                synclog_end += len;
                Op::SyncLog {
                    offset: synclog_end - len,
                    len,
                    page: rng.below(SYNC_DB_PAGES),
                }
            }
            _ => {
                next_file += 1;
                Op::Unsynced {
                    file: next_file,
                    size: BLOCK * rng.range(1, 64),
                }
            }
        };
        written += op.range().1;
        ops.push(op);
    }
    ops
}

/// What a workload's mark in the control file says: operation `op` was
/// acknowledged (or, for an unsynced file, finished), its contents'
/// CRC-32 `sum`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Mark {
    pub op: usize,
    pub path: String,
    pub sum: String,
}

/// The syncs the workload leaves out, acknowledging the operations all
/// the same.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unsynced {
    /// One operation's (a test that the checker can fail).
    pub op: Option<usize>,
    /// Every sync-log record's: a transaction log never synced, or on a
    /// RAM disk, as seed 000's CNID database could be.
    pub sync_log: bool,
}

impl Unsynced {
    /// Whether operation `i` syncs.
    fn syncs(&self, i: usize, op: &Op) -> bool {
        self.op != Some(i) && !(self.sync_log && matches!(op, Op::SyncLog { .. }))
    }
}

/// Runs the operations in `dir` (the recorded file system), writing a
/// mark to `control` after each; the syncs `unsynced` names are left out.
pub fn run(
    ops: &[Op],
    seed: u64,
    dir: &Path,
    control: &File,
    unsynced: Unsynced,
) -> anyhow::Result<()> {
    for sub in DIRS {
        std::fs::create_dir(dir.join(sub)).with_context(|| format!("cannot create {sub}"))?;
    }
    sync_dir(dir)?;
    for (i, op) in ops.iter().enumerate() {
        crate::interrupt::check()?;
        let data = op.data(seed);
        perform(op, &data, dir, unsynced.syncs(i, op))
            .with_context(|| format!("crash workload, operation {i} on {}", op.path().display()))?;
        let mark = Mark {
            op: i,
            path: op.path().display().to_string(),
            sum: format!("{:08x}", crc32fast::hash(&data)),
        };
        let line = serde_json::to_string(&mark)? + "\n";
        control
            .write_all_at(line.as_bytes(), 0)
            .context("cannot write to the recorder's control file")?;
    }
    Ok(())
}

/// Does `op`, syncing as it says unless `sync` is false.
fn perform(op: &Op, data: &[u8], dir: &Path, sync: bool) -> anyhow::Result<()> {
    let path = dir.join(op.path());
    let parent = path.parent().expect("a path in a directory");
    let fsync = |file: &File| if sync { file.sync_all() } else { Ok(()) };
    let fdatasync = |file: &File| if sync { file.sync_data() } else { Ok(()) };
    match *op {
        Op::Create { .. } => {
            let mut file = File::create_new(&path)?;
            file.write_all(data)?;
            fsync(&file)?;
            if sync {
                sync_dir(parent)?;
            }
        }
        Op::Overwrite { offset, .. } => {
            let file = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)?;
            let created = file.metadata()?.len() == 0;
            file.write_all_at(data, offset)?;
            fdatasync(&file)?;
            if created && sync {
                file.sync_all()?;
                sync_dir(parent)?;
            }
        }
        Op::Append { .. } | Op::SyncLog { .. } => {
            let mut file = OpenOptions::new().append(true).create(true).open(&path)?;
            let created = file.metadata()?.len() == 0;
            file.write_all(data)?;
            fdatasync(&file)?;
            if created && sync {
                file.sync_all()?;
                sync_dir(parent)?;
            }
            if let Op::SyncLog { page, .. } = *op {
                let db = OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .open(parent.join("db"))?;
                db.write_all_at(&data[..data.len().min(BLOCK as usize)], page * BLOCK)?;
            }
        }
        Op::Dsync { offset, .. } => {
            let mut options = OpenOptions::new();
            options.write(true).create(true).truncate(false);
            if sync {
                options.custom_flags(libc::O_DSYNC);
            }
            let file = options.open(&path)?;
            let created = file.metadata()?.len() == 0;
            file.write_all_at(data, offset)?;
            if created && sync {
                file.sync_all()?;
                sync_dir(parent)?;
            }
        }
        Op::Replace { .. } => {
            let temporary = path.with_extension("tmp");
            let mut file = File::create(&temporary)?;
            file.write_all(data)?;
            fsync(&file)?;
            std::fs::rename(&temporary, &path)?;
            if sync {
                sync_dir(parent)?;
            }
        }
        Op::Unsynced { .. } => {
            File::create_new(&path)?.write_all(data)?;
        }
    }
    Ok(())
}

fn sync_dir(dir: &Path) -> anyhow::Result<()> {
    File::open(dir)?.sync_all()?;
    Ok(())
}

/// What a crash state's files said against the oracle.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// Acknowledged operations whose data is gone (the file missing or
    /// short, or an older version in its place).
    pub lost: Vec<usize>,
    /// Acknowledged operations whose data is neither it nor a later
    /// version (garbage, zeros, a mix of versions, an empty file where the
    /// replace idiom promises old or new).
    pub corrupt: Vec<usize>,
    /// Unsynced files finished before the cut and not there whole.
    pub unacknowledged_lost: usize,
    /// Files judged by an acknowledged operation: what the state was
    /// checked against (0 before the first acknowledgement).
    pub judged: usize,
}

/// Checks the workload's files in `dir` (the crash state, mounted
/// read-only) against the operations marked before the cut: `marked` of
/// them (0..marked all finished, `marked` possibly under way).
pub fn verify(ops: &[Op], seed: u64, marked: usize, dir: &Path) -> Verdict {
    let mut verdict = Verdict::default();
    let mut checked = std::collections::HashSet::new();
    // Latest first: each file is judged by its last acknowledged
    // operation, with everything before it in view.
    for i in (0..marked).rev() {
        let op = &ops[i];
        if !op.acknowledged() {
            if !whole(&dir.join(op.path()), &op.data(seed)) {
                verdict.unacknowledged_lost += 1;
            }
            continue;
        }
        if !checked.insert(op.path()) {
            continue;
        }
        verdict.judged += 1;
        match judge(ops, seed, i, marked, dir) {
            Judged::Held => {}
            Judged::Lost => verdict.lost.push(i),
            Judged::Corrupt => verdict.corrupt.push(i),
        }
    }
    verdict.lost.sort_unstable();
    verdict.corrupt.sort_unstable();
    verdict
}

enum Judged {
    Held,
    Lost,
    Corrupt,
}

/// Whether `path` holds exactly `data`.
fn whole(path: &Path, data: &[u8]) -> bool {
    std::fs::read(path).is_ok_and(|found| found == data)
}

/// Judges the file of acknowledged operation `last` (the last one on its
/// file before the cut); `next` (= marked) may have been under way.
fn judge(ops: &[Op], seed: u64, last: usize, marked: usize, dir: &Path) -> Judged {
    let op = &ops[last];
    let path = op.path();
    let in_flight = ops.get(marked).filter(|o| o.path() == path);
    let Ok(found) = std::fs::read(dir.join(&path)) else {
        return Judged::Lost;
    };
    match op {
        Op::Create { .. } => match found == op.data(seed) {
            true => Judged::Held,
            false if found.len() < op.range().1 as usize => Judged::Lost,
            false => Judged::Corrupt,
        },
        Op::Replace { .. } => {
            let versions: Vec<&Op> = ops[..=last].iter().filter(|o| o.path() == path).collect();
            if found == op.data(seed) || in_flight.is_some_and(|o| found == o.data(seed)) {
                Judged::Held
            } else if versions.iter().any(|o| found == o.data(seed)) {
                Judged::Lost
            } else {
                Judged::Corrupt
            }
        }
        Op::Append { .. } | Op::SyncLog { .. } => {
            let (offset, len) = op.range();
            let end = (offset + len) as usize;
            let expected = content(seed, op.stream(), 0, end as u64);
            match found.get(..end) {
                Some(prefix) if prefix == expected => Judged::Held,
                Some(_) => Judged::Corrupt,
                None if expected.starts_with(&found) => Judged::Lost,
                None => Judged::Corrupt,
            }
        }
        Op::Overwrite { .. } | Op::Dsync { .. } => judge_blocks(ops, seed, last, in_flight, &found),
        Op::Unsynced { .. } => Judged::Held,
    }
}

/// A file rewritten in place: every sector must hold what the last
/// acknowledged write to it wrote, or what the operation under way writes
/// (a disk writes sectors, not blocks: an unacknowledged rewrite may be
/// torn between them); an earlier version there is lost data, anything
/// else corrupt.
fn judge_blocks(
    ops: &[Op],
    seed: u64,
    last: usize,
    in_flight: Option<&Op>,
    found: &[u8],
) -> Judged {
    let path = ops[last].path();
    let history: Vec<&Op> = ops[..=last].iter().filter(|o| o.path() == path).collect();
    if (found.len() as u64) < REWRITTEN_SIZE {
        return Judged::Lost;
    }
    let covering = |o: &Op, b: u64| {
        let (offset, len) = o.range();
        offset <= b * BLOCK && (b + 1) * BLOCK <= offset + len
    };
    let block_of = |o: &Op, b: u64| content(seed, o.stream(), b * BLOCK, BLOCK);
    let mut lost = false;
    for b in 0..REWRITTEN_SIZE / BLOCK {
        let here = &found[(b * BLOCK) as usize..((b + 1) * BLOCK) as usize];
        let Some(latest) = history.iter().rev().find(|o| covering(o, b)) else {
            continue;
        };
        let latest = block_of(latest, b);
        if here == latest {
            continue;
        }
        // Sector by sector: the write under way may be torn between them.
        let next = in_flight.filter(|o| covering(o, b)).map(|o| block_of(o, b));
        for (s, sector) in here.chunks(SECTOR).enumerate() {
            let at = s * SECTOR..(s + 1) * SECTOR;
            if *sector == latest[at.clone()]
                || next.as_ref().is_some_and(|n| *sector == n[at.clone()])
            {
                continue;
            }
            let older = history
                .iter()
                .any(|o| covering(o, b) && *sector == block_of(o, b)[at.clone()]);
            match older {
                true => lost = true,
                false => return Judged::Corrupt,
            }
        }
    }
    match lost {
        true => Judged::Lost,
        false => Judged::Held,
    }
}

/// The number of operations marked in a log's marks so far (the highest
/// op + 1), from one mark's text; None for a text that is no mark.
pub fn marked_through(text: &[u8]) -> Option<usize> {
    serde_json::from_slice::<Mark>(text).ok().map(|m| m.op + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_is_the_seeds_and_writes_what_it_was_asked() {
        let a = plan(7, 4 << 20);
        assert_eq!(a, plan(7, 4 << 20));
        assert_ne!(a, plan(8, 4 << 20));
        let bytes: u64 = a.iter().map(|o| o.range().1).sum();
        assert!((4 << 20..(4 << 20) + (1 << 20)).contains(&bytes), "{bytes}");
        for kind in DIRS {
            assert!(
                a.iter().any(|o| o.path().starts_with(kind)),
                "{kind} missing"
            );
        }
    }

    #[test]
    fn contents_depend_on_file_version_and_place_only() {
        let a = content(1, (5, 2), 0, 3 * BLOCK);
        assert_eq!(
            content(1, (5, 2), BLOCK + 10, 100),
            a[BLOCK as usize + 10..BLOCK as usize + 110]
        );
        assert_ne!(content(1, (5, 3), 0, BLOCK), a[..BLOCK as usize]);
        assert_ne!(content(1, (6, 2), 0, BLOCK), a[..BLOCK as usize]);
    }

    /// The oracle run on a plain directory holds; then each kind of
    /// damage is called what it is.
    #[test]
    fn the_oracle_holds_a_complete_run_and_names_each_kind_of_damage() {
        let dir = tempfile::tempdir().unwrap();
        let control = File::create(dir.path().join("control")).unwrap();
        let work = dir.path().join("w");
        std::fs::create_dir(&work).unwrap();
        let ops = plan(3, 2 << 20);
        run(&ops, 3, &work, &control, Unsynced::default()).unwrap();
        let whole = verify(&ops, 3, ops.len(), &work);
        assert_eq!(
            (
                whole.lost.len(),
                whole.corrupt.len(),
                whole.unacknowledged_lost
            ),
            (0, 0, 0)
        );
        let files = ops.iter().filter(|o| o.acknowledged()).map(Op::path);
        assert_eq!(
            whole.judged,
            files.collect::<std::collections::HashSet<_>>().len()
        );

        let last_of = |prefix: &str| {
            ops.iter()
                .rposition(|o| o.acknowledged() && o.path().starts_with(prefix))
                .unwrap()
        };
        let create = ops
            .iter()
            .position(|o| matches!(o, Op::Create { .. }))
            .unwrap();
        std::fs::remove_file(work.join(ops[create].path())).unwrap();
        let replace = last_of("replace");
        std::fs::write(work.join(ops[replace].path()), b"").unwrap();
        let append = last_of("append");
        let log = work.join(ops[append].path());
        let len = std::fs::metadata(&log).unwrap().len();
        File::options()
            .write(true)
            .open(&log)
            .unwrap()
            .set_len(len - 1)
            .unwrap();
        let overwrite = last_of("overwrite");
        let Op::Overwrite { offset, .. } = ops[overwrite] else {
            unreachable!()
        };
        File::options()
            .write(true)
            .open(work.join(ops[overwrite].path()))
            .unwrap()
            .write_all_at(&[0xAB; 16], offset)
            .unwrap();
        let verdict = verify(&ops, 3, ops.len(), &work);
        assert!(verdict.lost.contains(&create), "{verdict:?}");
        assert!(verdict.lost.contains(&append), "{verdict:?}");
        assert!(verdict.corrupt.contains(&replace), "{verdict:?}");
        assert!(verdict.corrupt.contains(&overwrite), "{verdict:?}");
        assert_eq!(verdict.lost.len() + verdict.corrupt.len(), 4, "{verdict:?}");
    }
}

//! The file tests ("Sequential Create / Random Create"): create, stat and
//! delete `-n` × 1024 files in `Bonnie.<pid>/` (spread over `NNNNN/`
//! subdirectories with more than one directory). Every call is relative to a
//! directory fd, so nothing outside the scratch directory can be touched.
use std::ffi::{CStr, CString};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::Instant;

use anyhow::Context;
use rustix::fs::{AtFlags, Mode, OFlags, RawDir};
use rustix::io::Errno;

use super::names::{NameArena, NameTable, Order, Owner, dir_of, shuffle};
use super::rng::RandomSource;
use super::{BonnieConfig, FileKind, Outcome, Test, announce};
use crate::interrupt;
use crate::io::{AlignedBuf, read_exact, write_all};
use crate::measure::{LatencyRecorder, PhaseClock, each_timed};
use crate::result::cleanup::CleanupReport;
use crate::storage::cleanup;
use crate::storage::just_closed;
use crate::workload::RunContext;

/// The test directory and its subdirectories, open for `*at` calls.
struct TestDirs<'a> {
    scratch: BorrowedFd<'a>,
    name: CString,
    top: OwnedFd,
    subdirs: Vec<(CString, OwnedFd)>,
    /// Whose files are in them: ours alone, or (`--shared-dir`) a range of
    /// the files of all ranks of an MPI job, where whoever comes first
    /// creates a directory and whoever leaves last removes it.
    owner: Owner,
}

impl TestDirs<'_> {
    fn create(scratch: BorrowedFd<'_>, count: u64, owner: Owner) -> anyhow::Result<TestDirs<'_>> {
        let shared = owner.is_shared();
        let name = match shared {
            true => CString::new("Bonnie.shared")?,
            false => CString::new(format!("Bonnie.{}", std::process::id()))?,
        };
        make_dir(scratch, &name, shared)?;
        let top = cleanup::open_subdir(scratch, &name).context("cannot open test directory")?;
        let mut subdirs = Vec::new();
        if count > 1 {
            for i in 0..count {
                let sub = CString::new(format!("{i:05}"))?;
                make_dir(top.as_fd(), &sub, shared)?;
                let fd =
                    cleanup::open_subdir(top.as_fd(), &sub).context("cannot open subdirectory")?;
                subdirs.push((sub, fd));
            }
        }
        Ok(TestDirs {
            scratch,
            name,
            top,
            subdirs,
            owner,
        })
    }

    fn count(&self) -> u64 {
        self.subdirs.len().max(1) as u64
    }

    /// The directory file `index` of `total` lives in.
    fn fd_for(&self, index: u64, total: u64) -> BorrowedFd<'_> {
        match self.subdirs.is_empty() {
            true => self.top.as_fd(),
            false => self.subdirs[dir_of(index, total, self.count())].1.as_fd(),
        }
    }

    fn all_fds(&self) -> Vec<BorrowedFd<'_>> {
        match self.subdirs.is_empty() {
            true => vec![self.top.as_fd()],
            false => self.subdirs.iter().map(|(_, fd)| fd.as_fd()).collect(),
        }
    }

    /// rmdir of the subdirectories and the test directory, as bonnie++
    /// times it at the end of each delete phase. Entries the file system or
    /// another program put there are removed (and reported) first — but in
    /// a shared directory they are other ranks' files, left to them.
    fn remove(self, report: &mut CleanupReport) -> anyhow::Result<()> {
        let TestDirs {
            scratch,
            name,
            top,
            subdirs,
            owner,
        } = self;
        let shared = owner.is_shared();
        let top_rel = name.to_string_lossy().into_owned();
        for (sub, fd) in subdirs {
            if !shared {
                let rel = format!("{top_rel}/{}", sub.to_string_lossy());
                cleanup::empty_dir(fd.as_fd(), &rel, None, report)?;
            }
            drop(fd);
            remove_dir(top.as_fd(), &sub, shared)?;
        }
        if !shared {
            cleanup::empty_dir(top.as_fd(), &top_rel, None, report)?;
        }
        drop(top);
        remove_dir(scratch, &name, shared)
    }
}

/// mkdir; in a shared directory another rank may have made it already.
fn make_dir(parent: BorrowedFd<'_>, name: &CStr, shared: bool) -> anyhow::Result<()> {
    match rustix::fs::mkdirat(parent, name, Mode::from_raw_mode(0o700)) {
        Err(Errno::EXIST) if shared => Ok(()),
        other => {
            other.with_context(|| format!("cannot create directory {}", name.to_string_lossy()))
        }
    }
}

/// rmdir; in a shared directory another rank may still have files there
/// (it removes the directory when it leaves) or have removed it already.
fn remove_dir(parent: BorrowedFd<'_>, name: &CStr, shared: bool) -> anyhow::Result<()> {
    match rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR) {
        Err(Errno::NOTEMPTY | Errno::NOENT) if shared => Ok(()),
        other => {
            other.with_context(|| format!("cannot remove directory {}", name.to_string_lossy()))
        }
    }
}

/// Per-file sizes, drawn as bonnie++ does: `min + rand() % (max - min + 1)`.
fn file_sizes(config: &BonnieConfig, count: u64, random: &mut RandomSource) -> Vec<u64> {
    match config.files.kind {
        FileKind::Sized { max, min } if max > min => (0..count)
            .map(|_| min + random.below(max - min + 1))
            .collect(),
        _ => Vec::new(),
    }
}

/// The files of one create/stat/delete round.
struct FileSet<'a> {
    config: &'a BonnieConfig,
    names: NameTable,
    sizes: Vec<u64>,
}

impl FileSet<'_> {
    fn size_of(&self, index: usize) -> u64 {
        match self.config.files.kind {
            FileKind::Sized { max, min } if max > min => self.sizes[index],
            FileKind::Sized { max, .. } => max,
            FileKind::HardLinks | FileKind::SymLinks => 0,
        }
    }

    fn total(&self) -> u64 {
        self.names.len() as u64
    }
}

pub(super) fn run_all(
    config: &BonnieConfig,
    ctx: &RunContext<'_>,
    random: &mut RandomSource,
    outcomes: &mut Vec<Outcome>,
    notes: &mut Vec<String>,
) -> anyhow::Result<()> {
    let mut report = CleanupReport::default();
    let total = config.total_files();
    let (parent, owner) = test_place(config, ctx, total)?;
    for order in [Order::Sequential, Order::Random] {
        let first = match owner {
            Owner::All => 0,
            Owner::Range { first, .. } => first,
        };
        let names = NameTable::generate(first, total, order, random);
        let sizes = file_sizes(config, total, random);
        let set = FileSet {
            config,
            names,
            sizes,
        };
        let mut buf = AlignedBuf::new(config.files.chunk);
        fill_pattern(&mut buf);
        let dirs = TestDirs::create(parent.as_fd(), config.files.dirs, owner)?;
        let (create, stat, delete) = match order {
            Order::Sequential => (Test::SeqCreate, Test::SeqStat, Test::SeqDelete),
            Order::Random => (Test::RandCreate, Test::RandStat, Test::RandDelete),
        };
        announce(ctx, create, outcomes, || {
            create_files(&set, &buf, &dirs, create)
        })?;
        let mut visit: Vec<u32> = (0..total as u32).collect();
        match order {
            Order::Sequential => {
                announce(ctx, stat, outcomes, || {
                    stat_in_readdir_order(&set, &mut buf, &dirs)
                })?;
                // Deleting in readdir order needs no names: free them before
                // the listing is read, so a million files stay cheap.
                let expected = set.total();
                drop(set);
                announce(ctx, delete, outcomes, || {
                    delete_in_readdir_order(expected, dirs, &mut report)
                })?;
            }
            Order::Random => {
                shuffle(&mut visit, random);
                announce(ctx, stat, outcomes, || {
                    stat_in_order(&set, &mut buf, &dirs, &visit)
                })?;
                shuffle(&mut visit, random);
                announce(ctx, delete, outcomes, || {
                    delete_in_order(&set, dirs, &visit, &mut report)
                })?;
            }
        }
    }
    if let Some(unusual) = report.unusual() {
        notes.push(format!("file tests: {unusual}"));
    }
    Ok(())
}

/// Where the test directories go and whose files they hold: the scratch
/// directory, ours alone; or with `--shared-dir` in an MPI job, rank 0's
/// scratch directory, where each rank numbers its files after the lower
/// ranks' so that names never collide.
fn test_place(
    config: &BonnieConfig,
    ctx: &RunContext<'_>,
    total: u64,
) -> anyhow::Result<(OwnedFd, Owner)> {
    if !config.shared_dir || crate::scale::size() == 1 {
        let own = rustix::io::fcntl_dupfd_cloexec(ctx.scratch.dir(), 0)
            .context("cannot duplicate the scratch directory fd")?;
        return Ok((own, Owner::All));
    }
    let path = crate::scale::root_scratch(ctx.scratch.path());
    let shared = rustix::fs::open(
        &path,
        OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .with_context(|| format!("cannot open the shared directory {}", path.display()))?;
    let first = u64::from(crate::scale::rank()) * total;
    Ok((
        shared,
        Owner::Range {
            first,
            count: total,
        },
    ))
}

/// File contents: not all zeros, so compressing file systems do real work.
fn fill_pattern(buf: &mut [u8]) {
    let mut rng = super::rng::GlibcRand::new(0x5eed);
    buf.iter_mut().for_each(|b| *b = rng.next_value() as u8);
}

fn create_files(
    set: &FileSet<'_>,
    buf: &[u8],
    dirs: &TestDirs<'_>,
    test: Test,
) -> anyhow::Result<Outcome> {
    let total = set.total();
    let mut latency = LatencyRecorder::new();
    let clock = PhaseClock::start();
    each_timed(0..set.names.len(), &mut latency, |index| {
        let dir = dirs.fd_for(index as u64, total);
        match set.config.files.kind {
            FileKind::HardLinks | FileKind::SymLinks if index > 0 => {
                link_to_first(set, dirs, index)?
            }
            _ => create_one(set, buf, dir, index)?,
        }
        sync_dir_if_asked(set.config, dir)
    })?;
    sync_file_system(dirs.top.as_fd())?;
    Ok(Outcome::new(test, clock.stop(), total, &latency))
}

/// `-b`: make each new or removed name durable.
fn sync_dir_if_asked(config: &BonnieConfig, dir: BorrowedFd<'_>) -> anyhow::Result<()> {
    if config.fsync_every_write {
        rustix::fs::fsync(dir).context("directory fsync failed")?;
    }
    Ok(())
}

fn create_one(
    set: &FileSet<'_>,
    buf: &[u8],
    dir: BorrowedFd<'_>,
    index: usize,
) -> anyhow::Result<()> {
    let name = set.names.get(index);
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )
    .with_context(|| format!("cannot create file {}", name.to_string_lossy()))?;
    let mut left = set.size_of(index);
    while left > 0 {
        let piece = left.min(buf.len() as u64) as usize;
        write_all(fd.as_fd(), &buf[..piece])
            .with_context(|| format!("cannot write file {}", name.to_string_lossy()))?;
        left -= piece as u64;
    }
    if set.config.fsync_every_write {
        rustix::fs::fsync(&fd).context("file fsync failed")?;
    }
    Ok(())
}

/// `-n num:-1` / `num:-2`: every file after the first is a link to it.
fn link_to_first(set: &FileSet<'_>, dirs: &TestDirs<'_>, index: usize) -> anyhow::Result<()> {
    let total = set.total();
    let first = set.names.get(0);
    let name = set.names.get(index);
    let first_dir = dirs.fd_for(0, total);
    let dir = dirs.fd_for(index as u64, total);
    let result = if set.config.files.kind == FileKind::HardLinks {
        rustix::fs::linkat(first_dir, first, dir, name, AtFlags::empty())
    } else {
        // The target is resolved from the link's own directory.
        let same_dir = dir_of(0, total, dirs.count()) == dir_of(index as u64, total, dirs.count());
        let target = match same_dir {
            true => first.to_owned(),
            false => CString::new(format!("../{:05}/{}", 0, first.to_string_lossy()))?,
        };
        rustix::fs::symlinkat(target.as_c_str(), dir, name)
    };
    result.with_context(|| format!("cannot create link {}", name.to_string_lossy()))
}

/// bonnie++ calls `sync()` at the end of create and delete; fsbench syncs
/// only the file system under test, so other disks' dirty data does not
/// leak into the figure.
fn sync_file_system(dir: BorrowedFd<'_>) -> anyhow::Result<()> {
    rustix::fs::syncfs(dir).context("syncfs failed")
}

/// stat (and, for files with data, read) one file.
fn stat_one(buf: &mut [u8], dir: BorrowedFd<'_>, name: &CStr) -> anyhow::Result<()> {
    let stat = rustix::fs::statat(dir, name, AtFlags::empty())
        .with_context(|| format!("cannot stat file {}", name.to_string_lossy()))?;
    if stat.st_size > 0 {
        read_whole(buf, dir, name, stat.st_size as u64)?;
    }
    Ok(())
}

fn read_whole(buf: &mut [u8], dir: BorrowedFd<'_>, name: &CStr, size: u64) -> anyhow::Result<()> {
    let fd = rustix::fs::openat(dir, name, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
        .with_context(|| format!("cannot open file {}", name.to_string_lossy()))?;
    let mut left = size;
    while left > 0 {
        let piece = left.min(buf.len() as u64) as usize;
        read_exact(fd.as_fd(), &mut buf[..piece])
            .with_context(|| format!("cannot read file {}", name.to_string_lossy()))?;
        left -= piece as u64;
    }
    Ok(())
}

/// Bytes of directory entries each getdents64 fills: a page, a hundred
/// names or more per call (on a tmpfs of 100,000 files, 1 to 32 KiB all
/// cost the kernel about 400 ns per entry). A network or FUSE file
/// system is asked for a listing in requests of this size.
const LISTING_BYTES: usize = 4096;

/// Reads directories with getdents64 into one buffer, with no allocation
/// per entry: rustix's `Dir` copies every name into a `CString` of its
/// own, a malloc and a free per file of the readdir-order phases (about
/// 450 instructions per entry, as many as the floor spends on each file
/// besides its system calls).
struct Listing {
    buf: Vec<MaybeUninit<u8>>,
}

impl Listing {
    fn new() -> Listing {
        Listing {
            buf: vec![MaybeUninit::uninit(); LISTING_BYTES],
        }
    }

    /// Calls `each` with every name in `dir` that is `owner`'s, in readdir
    /// order, from the start (a descriptor of its own: `dir`'s offset is
    /// left alone).
    fn each_own(
        &mut self,
        dir: BorrowedFd<'_>,
        owner: Owner,
        mut each: impl FnMut(&CStr) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let fd = rustix::fs::openat(
            dir,
            c".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .context("cannot open directory")?;
        let mut entries = RawDir::new(&fd, &mut self.buf);
        while let Some(entry) = entries.next() {
            let entry = entry.context("readdir failed")?;
            if owner.owns(entry.file_name().to_bytes()) {
                each(entry.file_name())?;
            }
        }
        Ok(())
    }
}

/// Walks each directory with readdir and stats every entry not starting with
/// `.`; each latency sample spans readdir + stat.
fn stat_in_readdir_order(
    set: &FileSet<'_>,
    buf: &mut [u8],
    dirs: &TestDirs<'_>,
) -> anyhow::Result<Outcome> {
    let mut latency = LatencyRecorder::new();
    let mut listing = Listing::new();
    let mut seen = 0u64;
    let clock = PhaseClock::start();
    let mut last = Instant::now();
    for dir in dirs.all_fds() {
        listing.each_own(dir, dirs.owner, |name| {
            interrupt::check()?;
            stat_one(buf, dir, name)?;
            seen += 1;
            last = latency.record_since(last);
            Ok(())
        })?;
    }
    let timing = clock.stop();
    if seen != set.total() {
        anyhow::bail!(
            "stat in readdir order: expected {} files but readdir returned {seen}",
            set.total()
        );
    }
    Ok(Outcome::new(Test::SeqStat, timing, seen, &latency))
}

fn stat_in_order(
    set: &FileSet<'_>,
    buf: &mut [u8],
    dirs: &TestDirs<'_>,
    order: &[u32],
) -> anyhow::Result<Outcome> {
    let total = set.total();
    let mut latency = LatencyRecorder::new();
    let clock = PhaseClock::start();
    each_timed(order, &mut latency, |&index| {
        let dir = dirs.fd_for(u64::from(index), total);
        stat_one(buf, dir, set.names.get(index as usize))
    })?;
    Ok(Outcome::new(Test::RandStat, clock.stop(), total, &latency))
}

/// Our files still in `dir` (see [`Owner`]; bonnie++ too skips names
/// starting with `.`).
fn list_own_names(
    listing: &mut Listing,
    dir: BorrowedFd<'_>,
    owner: Owner,
) -> anyhow::Result<NameArena> {
    let mut names = NameArena::default();
    listing.each_own(dir, owner, |name| {
        names.push(name.to_bytes());
        Ok(())
    })?;
    Ok(names)
}

/// Deletes in readdir order, robustly: each directory's listing is read
/// completely before anything is unlinked, and passes repeat until it is
/// empty (bonnie++ unlinks while reading one stream and dies with
/// "Directory not empty" where readdir then skips entries: NFS, SMB, AFP,
/// FUSE). Extra passes and foreign files are reported in the result.
fn delete_in_readdir_order(
    expected: u64,
    dirs: TestDirs<'_>,
    report: &mut CleanupReport,
) -> anyhow::Result<Outcome> {
    let mut latency = LatencyRecorder::new();
    let mut listing = Listing::new();
    let mut deleted = 0u64;
    let clock = PhaseClock::start();
    for dir in dirs.all_fds() {
        for pass in 1.. {
            let names = list_own_names(&mut listing, dir, dirs.owner)?;
            if names.is_empty() {
                break;
            }
            report.passes = report.passes.max(pass);
            each_timed(names.iter(), &mut latency, |name| {
                deleted += u64::from(delete_listed(dir, name)?);
                Ok(())
            })?;
        }
    }
    remove_dirs_and_sync(dirs, report)?;
    let timing = clock.stop();
    if deleted != expected {
        anyhow::bail!("delete in readdir order: expected {expected} files but deleted {deleted}");
    }
    Ok(Outcome::new(Test::SeqDelete, timing, deleted, &latency))
}

fn delete_in_order(
    set: &FileSet<'_>,
    dirs: TestDirs<'_>,
    order: &[u32],
    report: &mut CleanupReport,
) -> anyhow::Result<Outcome> {
    let total = set.total();
    let mut latency = LatencyRecorder::new();
    let clock = PhaseClock::start();
    each_timed(order, &mut latency, |&index| {
        let dir = dirs.fd_for(u64::from(index), total);
        delete_one(dir, set.names.get(index as usize))?;
        sync_dir_if_asked(set.config, dir)
    })?;
    remove_dirs_and_sync(dirs, report)?;
    Ok(Outcome::new(
        Test::RandDelete,
        clock.stop(),
        total,
        &latency,
    ))
}

/// Deletes a file a listing named; false when it was gone already. A
/// listing read while others create and delete in the same directory
/// (ranks sharing it, a network file system) can name a file twice;
/// the count of files deleted, checked against the files made, still
/// catches a file that went missing.
fn delete_listed(dir: BorrowedFd<'_>, name: &CStr) -> anyhow::Result<bool> {
    match just_closed::unlink(dir, name) {
        Err(refused) if refused.errno == Errno::NOENT => Ok(false),
        outcome => outcome
            .map(|()| true)
            .with_context(|| format!("cannot delete file {}", name.to_string_lossy())),
    }
}

fn delete_one(dir: BorrowedFd<'_>, name: &CStr) -> anyhow::Result<()> {
    just_closed::unlink(dir, name)
        .with_context(|| format!("cannot delete file {}", name.to_string_lossy()))
}

/// The end of both delete phases, timed as in bonnie++: remove the
/// directories, then sync.
fn remove_dirs_and_sync(dirs: TestDirs<'_>, report: &mut CleanupReport) -> anyhow::Result<()> {
    let scratch = dirs.scratch;
    dirs.remove(report)?;
    sync_file_system(scratch)
}

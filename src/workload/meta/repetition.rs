//! One repetition of the meta workload: its directory tree, the threads
//! that work in it, and each operation on one file.
use std::ffi::{CStr, CString};
use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::Context;
use rustix::fs::{AtFlags, Dir, Mode, OFlags, XattrFlags};
use rustix::io::Errno;

use super::{MetaConfig, MetaOp};
use crate::measure::phase::{Measured, Rate};
use crate::measure::{LatencyRecorder, PhaseClock, PhaseTiming, each_timed};
use crate::result::Metric;
use crate::result::cleanup::CleanupReport;
use crate::rng::{Random, WyRand};
use crate::storage::cleanup;
use crate::storage::just_closed;
use crate::storage::scratch::Scratch;
use crate::workload::RunContext;
use crate::workload::threads::{StartLine, spawn_all};

/// The unit of every rate: one call on one file (for readdir_stat, one
/// entry listed and stat'ed).
const RATE: Rate = Rate::per_second("ops/s");

const XATTR_NAME: &CStr = c"user.fsbench";
/// Small, like the tags and checksums programs keep in xattrs.
const XATTR_VALUE: [u8; 64] = [0x5a; 64];

const CREATE_MODE: Mode = Mode::from_raw_mode(0o600);
/// Differs from CREATE_MODE, so every chmod changes the inode.
const CHMOD_MODE: Mode = Mode::from_raw_mode(0o640);
const DIR_MODE: Mode = Mode::from_raw_mode(0o700);

/// Bytes per write() when a file is created.
const WRITE_CHUNK: u64 = 1 << 20;

/// First letters of names: file 42 is `f42` as created and `r42` after
/// the rename; `s42` is its symlink, `h42` its hard link.
const CREATED: u8 = b'f';
const RENAMED: u8 = b'r';
const SYMLINK: u8 = b's';
const HARD_LINK: u8 = b'h';

/// What exists besides the files, which later phases depend on.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Made {
    renamed: bool,
    symlinks: bool,
    links: bool,
}

impl Made {
    pub(super) fn after(&mut self, op: MetaOp) {
        match op {
            MetaOp::Rename => self.renamed = true,
            MetaOp::Symlink => self.symlinks = true,
            MetaOp::Link => self.links = true,
            _ => {}
        }
    }

    /// The first letter of the files' names now.
    fn file_letter(self) -> u8 {
        if self.renamed { RENAMED } else { CREATED }
    }

    /// Symlinks and hard links per file.
    pub(super) fn extra_names(self) -> u64 {
        u64::from(self.symlinks) + u64::from(self.links)
    }
}

/// One of the directories the files are spread over, open for `*at` calls.
struct Leaf {
    name: CString,
    fd: OwnedFd,
    /// Its absolute path with a trailing `/`: for messages, and for the
    /// xattr calls, which have no `*at` form.
    path: Vec<u8>,
}

/// A thread's buffer for one name: the full path of `<letter><number>` in
/// a leaf directory, reused so that the timed loops allocate nothing.
#[derive(Default)]
struct NameBuf {
    bytes: Vec<u8>,
    /// Where the name starts in `bytes`.
    name_at: usize,
}

impl NameBuf {
    fn set(&mut self, leaf: &Leaf, letter: u8, number: u32) -> &mut Self {
        self.bytes.clear();
        self.bytes.extend_from_slice(&leaf.path);
        self.name_at = self.bytes.len();
        self.bytes.push(letter);
        write!(self.bytes, "{number}\0").expect("writing to a Vec cannot fail");
        self
    }

    fn path(&self) -> &CStr {
        CStr::from_bytes_with_nul(&self.bytes).expect("paths hold no NUL")
    }

    /// The name alone, relative to its leaf's fd.
    fn name(&self) -> &CStr {
        CStr::from_bytes_with_nul(&self.bytes[self.name_at..]).expect("names hold no NUL")
    }
}

/// The two names an operation may need: the file's and a new one.
#[derive(Default)]
struct Names {
    file: NameBuf,
    new: NameBuf,
}

/// Returned by a thread that stopped because another one failed: the
/// other's error is the run's.
#[derive(Debug, thiserror::Error)]
#[error("stopped: another thread failed")]
struct OtherFailed;

/// What one phase measured, over all threads.
struct Timed {
    timing: PhaseTiming,
    work: u64,
    latency: LatencyRecorder,
}

/// One repetition: `rep-<n>/` in the scratch directory, its leaf
/// directories `d<k>/`, and what exists in them so far.
pub(super) struct Repetition<'a> {
    config: &'a MetaConfig,
    scratch: &'a Scratch,
    name: CString,
    top: OwnedFd,
    leaves: Vec<Leaf>,
    pub(super) made: Made,
    /// What each file is created with.
    data: Vec<u8>,
    /// Set by a thread that failed, so the others stop soon.
    failed: AtomicBool,
}

impl<'a> Repetition<'a> {
    pub(super) fn create(
        config: &'a MetaConfig,
        scratch: &'a Scratch,
        repetition: u32,
    ) -> anyhow::Result<Self> {
        let name = CString::new(format!("rep-{repetition}"))?;
        let path = scratch.path().join(name.to_string_lossy().as_ref());
        let top = make_dir(scratch.dir(), &name, &path)?;
        let leaves = (0..config.leaf_dirs())
            .map(|k| {
                let name = CString::new(format!("d{k}"))?;
                let path = path.join(name.to_string_lossy().as_ref());
                let fd = make_dir(top.as_fd(), &name, &path)?;
                let mut path = path.into_os_string().into_vec();
                path.push(b'/');
                Ok(Leaf { name, fd, path })
            })
            .collect::<anyhow::Result<_>>()?;
        // Not all zeros, so that compressing file systems do real work.
        let mut data = vec![0; config.file_size.min(WRITE_CHUNK) as usize];
        WyRand::new(config.seed).fill(&mut data);
        Ok(Repetition {
            config,
            scratch,
            name,
            top,
            leaves,
            made: Made::default(),
            data,
            failed: AtomicBool::new(false),
        })
    }

    /// Which of `ops` the file system refuses outright, each tried (and
    /// undone) in the repetition's directory: `user.` attributes (setxattr
    /// stands for getxattr too), symbolic links, hard links (SMB without
    /// its Unix extensions has neither link).
    pub(super) fn refused(&self, ops: &[MetaOp]) -> anyhow::Result<Vec<MetaOp>> {
        let dir = self
            .scratch
            .path()
            .join(self.name.to_string_lossy().as_ref());
        let mut refused = Vec::new();
        if ops.iter().any(|op| op.is_xattr()) && !supported(try_xattr(&dir))? {
            refused.extend([MetaOp::Setxattr, MetaOp::Getxattr]);
        }
        if ops.contains(&MetaOp::Symlink) && !supported(try_symlink(&dir))? {
            refused.push(MetaOp::Symlink);
        }
        if ops.contains(&MetaOp::Link) && !supported(try_link(&dir))? {
            refused.push(MetaOp::Link);
        }
        Ok(refused)
    }

    /// Runs `op` as a timed phase (in step with other MPI ranks) and
    /// returns its metric.
    pub(super) fn timed(&self, ctx: &RunContext<'_>, op: MetaOp) -> anyhow::Result<Metric> {
        ctx.progress.start(op.doing());
        let timed = crate::scale::phase(|m: &Timed| m.timing, || self.phase(op))?;
        ctx.progress.done(timed.timing.elapsed.as_secs_f64());
        let metric = Measured::over(&timed.timing).rate(op.metric_name(), RATE, timed.work);
        Ok(metric.with_latency(timed.latency.summary_for_metric()))
    }

    pub(super) fn untimed(&self, ctx: &RunContext<'_>, op: MetaOp) -> anyhow::Result<()> {
        ctx.progress.start(&format!("{} (untimed)", op.doing()));
        let timed = self.phase(op)?;
        ctx.progress.done(timed.timing.elapsed.as_secs_f64());
        Ok(())
    }

    /// A note when a metric counted other work than expected: readdir
    /// listing entries fsbench did not make, or missing some.
    pub(super) fn unexpected_count(&self, op: MetaOp, metric: &Metric) -> Option<String> {
        let expected = self.config.files * (1 + self.made.extra_names());
        (op == MetaOp::ReaddirStat && metric.samples != expected).then(|| {
            format!(
                "readdir_stat listed {} entries where fsbench made {expected}",
                metric.samples
            )
        })
    }

    fn phase(&self, op: MetaOp) -> anyhow::Result<Timed> {
        match op {
            MetaOp::ReaddirStat => self.on_all_threads(|t, latency| self.list_and_stat(t, latency)),
            _ => self.each_file(op as u64, |leaf, number, names| {
                self.apply(op, leaf, number, names)
            }),
        }
    }

    /// Runs `op` on one file; an error names the call and the file.
    fn apply(&self, op: MetaOp, leaf: &Leaf, number: u32, names: &mut Names) -> anyhow::Result<()> {
        self.call(op, leaf, number, names)
            .with_context(|| describe(op, names))
    }

    fn call(&self, op: MetaOp, leaf: &Leaf, number: u32, names: &mut Names) -> anyhow::Result<()> {
        let file = names.file.set(leaf, self.made.file_letter(), number);
        let new = &mut names.new;
        let fd = &leaf.fd;
        match op {
            MetaOp::Create => self.create_file(leaf, file.name())?,
            MetaOp::Rename => {
                let new = new.set(leaf, RENAMED, number).name();
                just_closed::rename(fd, file.name(), fd, new)?
            }
            MetaOp::Chmod => rustix::fs::chmodat(fd, file.name(), CHMOD_MODE, AtFlags::empty())?,
            MetaOp::Setxattr => {
                let flags = XattrFlags::empty();
                rustix::fs::lsetxattr(file.path(), XATTR_NAME, &XATTR_VALUE, flags)?
            }
            MetaOp::Getxattr => read_xattr(file.path())?,
            MetaOp::Symlink => {
                let link = new.set(leaf, SYMLINK, number).name();
                rustix::fs::symlinkat(file.name(), fd, link)?
            }
            MetaOp::Link => {
                let link = new.set(leaf, HARD_LINK, number).name();
                rustix::fs::linkat(fd, file.name(), fd, link, AtFlags::empty())?
            }
            MetaOp::Truncate => truncate(leaf, file.name())?,
            MetaOp::Unlink => just_closed::unlink(fd, file.name())?,
            MetaOp::ReaddirStat => unreachable!("readdir_stat works per directory"),
        }
        Ok(())
    }

    fn create_file(&self, leaf: &Leaf, name: &CStr) -> anyhow::Result<()> {
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&leaf.fd, name, flags, CREATE_MODE)?;
        let mut left = self.config.file_size;
        while left > 0 {
            let piece = left.min(self.data.len() as u64);
            crate::io::write_all(fd.as_fd(), &self.data[..piece as usize])?;
            left -= piece;
        }
        Ok(())
    }

    /// Before unlink: the symlinks and hard links go untimed, so that
    /// unlink times removing each file's last name (freeing the inode).
    pub(super) fn remove_extra_names(&self, ctx: &RunContext<'_>) -> anyhow::Result<()> {
        ctx.progress
            .start("Removing symlinks and hard links (untimed)");
        let made = self.made;
        let timed = self.each_file(0, |leaf, number, names| {
            let kinds = [(made.symlinks, SYMLINK), (made.links, HARD_LINK)];
            for (_, letter) in kinds.into_iter().filter(|(made, _)| *made) {
                let link = names.new.set(leaf, letter, number);
                just_closed::unlink(&leaf.fd, link.name())
                    .with_context(|| format!("unlink {} failed", link.path().to_string_lossy()))?;
            }
            Ok(())
        })?;
        ctx.progress.done(timed.timing.elapsed.as_secs_f64());
        Ok(())
    }

    /// `ls -l` of a thread's directories: each sample is one entry's share
    /// of the readdir plus its lstat (the first in a directory also
    /// includes opening it).
    fn list_and_stat(&self, thread: usize, latency: &mut LatencyRecorder) -> anyhow::Result<u64> {
        let mut entries = 0;
        for leaf in self.dirs_of(thread).map(|dir| &self.leaves[dir]) {
            let path = || String::from_utf8_lossy(&leaf.path).into_owned();
            let mut last = Instant::now();
            let mut stream = Dir::read_from(&leaf.fd)
                .with_context(|| format!("readdir_stat: cannot open {}", path()))?;
            while let Some(entry) = stream.read() {
                let entry = entry.with_context(|| format!("readdir {} failed", path()))?;
                let name = entry.file_name();
                if name == c"." || name == c".." {
                    continue;
                }
                self.keep_going()?;
                rustix::fs::statat(&leaf.fd, name, AtFlags::SYMLINK_NOFOLLOW).with_context(
                    || format!("lstat {}{} failed", path(), name.to_string_lossy()),
                )?;
                entries += 1;
                last = latency.record_since(last);
            }
        }
        Ok(entries)
    }

    /// Runs `op` on every file, each thread on its own files, in the
    /// order `salt` picks when the order is random.
    fn each_file(
        &self,
        salt: u64,
        op: impl Fn(&Leaf, u32, &mut Names) -> anyhow::Result<()> + Sync,
    ) -> anyhow::Result<Timed> {
        self.on_all_threads(|thread, latency| {
            let files = self.files_of(thread, salt);
            let mut names = Names::default();
            each_timed(&files, latency, |&number| {
                self.keep_going()?;
                let leaf = &self.leaves[number as usize % self.leaves.len()];
                op(leaf, number, &mut names)
            })?;
            Ok(files.len() as u64)
        })
    }

    /// Runs `work` on every thread (thread t gets t; it returns its count
    /// of operations), timed from their common start to the last one's
    /// end, with all threads' latency samples merged.
    fn on_all_threads(
        &self,
        work: impl Fn(usize, &mut LatencyRecorder) -> anyhow::Result<u64> + Sync,
    ) -> anyhow::Result<Timed> {
        let threads = self.config.threads as usize;
        let start = StartLine::new(threads);
        let (timing, outputs) = std::thread::scope(|scope| {
            let workers = (0..threads).map(|thread| {
                let (start, work) = (&start, &work);
                move || {
                    start.wait()?;
                    let mut latency = LatencyRecorder::new();
                    let done = work(thread, &mut latency);
                    self.failed.fetch_or(done.is_err(), Ordering::Relaxed);
                    anyhow::Ok((done?, latency))
                }
            });
            let handles = spawn_all(scope, "meta", workers, || start.call_off())?;
            // The clock starts before the threads are released, so no
            // operation happens outside the measured time.
            let clock = PhaseClock::start();
            start.go();
            let outputs: Vec<_> = handles
                .into_iter()
                .map(|h| h.join().expect("meta thread panicked"))
                .collect();
            anyhow::Ok((clock.stop(), outputs))
        })?;
        let mut timed = Timed {
            timing,
            work: 0,
            latency: LatencyRecorder::new(),
        };
        let mut errors = Vec::new();
        for output in outputs {
            match output {
                Ok((work, latency)) => {
                    timed.work += work;
                    timed.latency.merge(&latency);
                }
                Err(e) => errors.push(e),
            }
        }
        // The cause, not a thread that stopped because of it.
        match errors.into_iter().min_by_key(|e| e.is::<OtherFailed>()) {
            Some(e) => Err(e),
            None => Ok(timed),
        }
    }

    fn keep_going(&self) -> anyhow::Result<()> {
        crate::interrupt::check()?;
        match self.failed.load(Ordering::Relaxed) {
            true => Err(OtherFailed.into()),
            false => Ok(()),
        }
    }

    /// The numbers of the directories thread `thread` owns: its own, so no
    /// two threads ever work in one.
    fn dirs_of(&self, thread: usize) -> impl Iterator<Item = usize> {
        (thread..self.leaves.len()).step_by(self.config.threads as usize)
    }

    /// The numbers of the files in `thread`'s directories: directory by
    /// directory, or shuffled by the seed, `salt` and the thread.
    pub(super) fn files_of(&self, thread: usize, salt: u64) -> Vec<u32> {
        let dirs = self.leaves.len();
        // The check keeps numbers below MAX_FILES, which fits in a u32.
        let files = self.config.files as u32;
        let mut numbers: Vec<u32> = self
            .dirs_of(thread)
            .flat_map(|dir| (dir as u32..files).step_by(dirs))
            .collect();
        if self.config.random_order {
            let seed = self.config.seed ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            shuffle(&mut numbers, &mut WyRand::for_stream(seed, thread as u64));
        }
        numbers
    }

    /// Removes the (now empty) directories; entries the file system or
    /// someone else put there go first, and the report says so.
    pub(super) fn remove(self) -> anyhow::Result<CleanupReport> {
        let mut report = CleanupReport::default();
        let top_rel = self.name.to_string_lossy().into_owned();
        for leaf in self.leaves {
            let rel = format!("{top_rel}/{}", leaf.name.to_string_lossy());
            cleanup::empty_dir(leaf.fd.as_fd(), &rel, None, &mut report)?;
            drop(leaf.fd);
            rustix::fs::unlinkat(&self.top, &leaf.name, AtFlags::REMOVEDIR)
                .with_context(|| format!("cannot remove directory {rel}"))?;
        }
        drop(self.top);
        rustix::fs::unlinkat(self.scratch.dir(), &self.name, AtFlags::REMOVEDIR)
            .with_context(|| format!("cannot remove directory {top_rel}"))?;
        Ok(report)
    }
}

/// mkdir `name` in `parent` and open it.
fn make_dir(parent: BorrowedFd<'_>, name: &CStr, path: &Path) -> anyhow::Result<OwnedFd> {
    rustix::fs::mkdirat(parent, name, DIR_MODE)
        .with_context(|| format!("cannot create directory {}", path.display()))?;
    cleanup::open_subdir(parent, name).with_context(|| format!("cannot open {}", path.display()))
}

/// What `op` did to which file, for its error: "rename <path> -> r42".
fn describe(op: MetaOp, names: &Names) -> String {
    let path = names.file.path().to_string_lossy();
    match op {
        MetaOp::Rename | MetaOp::Symlink | MetaOp::Link => {
            let new = names.new.name().to_string_lossy();
            format!("{} {path} -> {new} failed", op.name())
        }
        _ => format!("{} {path} failed", op.name()),
    }
}

/// getxattr, checking that the whole value came back.
fn read_xattr(path: &CStr) -> anyhow::Result<()> {
    let mut value = [0u8; XATTR_VALUE.len()];
    let len = rustix::fs::lgetxattr(path, XATTR_NAME, &mut value)?;
    anyhow::ensure!(
        len == value.len(),
        "read {len} bytes of {}",
        XATTR_VALUE.len()
    );
    Ok(())
}

/// What `truncate -s 0` does: open, ftruncate, close; but with the file
/// opened for reading too, which the truncate does not notice: after a
/// truncate smbnetfs asks the server for the file's attributes through
/// the same handle, which a write-only SMB handle may not read, and it
/// answers EIO and drops its connection.
fn truncate(leaf: &Leaf, name: &CStr) -> anyhow::Result<()> {
    let flags = OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(&leaf.fd, name, flags, Mode::empty())?;
    Ok(rustix::fs::ftruncate(&fd, 0)?)
}

/// Fisher-Yates.
fn shuffle(numbers: &mut [u32], random: &mut impl Random) {
    for i in (1..numbers.len()).rev() {
        let j = random.below(i as u64 + 1) as usize;
        numbers.swap(i, j);
    }
}

/// Errors that mean "this file system does not do that".
fn is_refusal(e: Errno) -> bool {
    matches!(e, Errno::NOTSUP | Errno::NOSYS | Errno::PERM)
}

/// Whether a tried operation worked; a refusal is `false`, any other
/// failure an error.
fn supported(tried: anyhow::Result<rustix::io::Result<()>>) -> anyhow::Result<bool> {
    match tried? {
        Ok(()) => Ok(true),
        Err(e) if is_refusal(e) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Sets and removes a `user.` attribute on `dir`.
fn try_xattr(dir: &Path) -> anyhow::Result<rustix::io::Result<()>> {
    match rustix::fs::lsetxattr(dir, XATTR_NAME, &XATTR_VALUE, XattrFlags::empty()) {
        Ok(()) => rustix::fs::lremovexattr(dir, XATTR_NAME)
            .map(Ok)
            .with_context(|| format!("removexattr {} failed", dir.display())),
        Err(e) => Ok(Err(e)),
    }
}

/// Makes and removes a symbolic link in `dir`.
fn try_symlink(dir: &Path) -> anyhow::Result<rustix::io::Result<()>> {
    let link = dir.join(".fsbench-probe-symlink");
    match rustix::fs::symlink("probe", &link) {
        Ok(()) => std::fs::remove_file(&link)
            .map(Ok)
            .with_context(|| format!("cannot remove {}", link.display())),
        Err(e) => Ok(Err(e)),
    }
}

/// Makes a file in `dir`, a hard link to it, and removes both.
fn try_link(dir: &Path) -> anyhow::Result<rustix::io::Result<()>> {
    let (file, link) = (
        dir.join(".fsbench-probe-file"),
        dir.join(".fsbench-probe-link"),
    );
    std::fs::File::create(&file).with_context(|| format!("cannot create {}", file.display()))?;
    let linked = rustix::fs::link(&file, &link);
    let remove = |path: &Path| {
        just_closed::unlink(rustix::fs::CWD, path)
            .with_context(|| format!("cannot remove {}", path.display()))
    };
    if linked.is_ok() {
        remove(&link)?;
    }
    remove(&file)?;
    Ok(linked)
}

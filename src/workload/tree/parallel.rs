//! `--threads N`: the same walk, shared by N threads. Every directory is a
//! job (its path relative to the root); a thread lists it, handles its
//! files and symlinks, and queues its subdirectories. Paths are opened
//! beneath the root without following symlinks (`openat2`), and the queue
//! holds paths, not open directories, so any tree fits in the fd limit.
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::{Condvar, Mutex};

use anyhow::Context;
use rustix::fs::{Mode, OFlags, ResolveFlags};

use super::walk::{Kind, Visited, Visitor, kind_of, read_listing};
use crate::storage::cleanup::open_subdir;
use crate::workload::threads::{StartLine, spawn_all};

/// A visitor that can work on any directory of the tree, in any order.
pub trait Parallel: Visitor + Send {
    /// A job starts on the directory `rel` (empty: the root).
    fn begin(&mut self, _rel: &str) -> anyhow::Result<()> {
        Ok(())
    }
    /// A subdirectory found by a job (it becomes a job of its own, after
    /// this returns).
    fn subdir(&mut self, entry: &Visited<'_>, dir: BorrowedFd<'_>) -> anyhow::Result<()> {
        self.enter(entry, dir)
    }
}

/// Opens the directory `rel` beneath `root`, through no symlink.
pub fn open_beneath(root: BorrowedFd<'_>, rel: &str) -> anyhow::Result<OwnedFd> {
    let path = if rel.is_empty() { "." } else { rel };
    rustix::fs::openat2(
        root,
        path,
        OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS,
    )
    .with_context(|| format!("cannot open {path}"))
}

struct Queue {
    jobs: Vec<String>,
    /// Jobs being worked on: the walk is over when none is queued or busy.
    busy: usize,
    failed: Option<anyhow::Error>,
}

struct Shared {
    queue: Mutex<Queue>,
    wake: Condvar,
}

/// Walks the tree under `root` with one visitor per thread; returns the
/// visitors (their tallies are merged by the caller).
pub fn walk<V: Parallel>(root: BorrowedFd<'_>, visitors: Vec<V>) -> anyhow::Result<Vec<V>> {
    let shared = Shared {
        queue: Mutex::new(Queue {
            jobs: vec![String::new()],
            busy: 0,
            failed: None,
        }),
        wake: Condvar::new(),
    };
    // The walkers start together once all are running: a thread the
    // system refuses is then always noticed (a walker that found the tree
    // already walked would otherwise end before the next one starts), and
    // none gets a head start.
    let start = StartLine::new(visitors.len());
    let done: Vec<V> = std::thread::scope(|scope| {
        let (shared, start) = (&shared, &start);
        let workers = visitors.into_iter().map(|mut visitor| {
            move || {
                if start.wait().is_ok() {
                    work(root, shared, &mut visitor);
                }
                visitor
            }
        });
        let handles = spawn_all(scope, "walker", workers, || {
            start.call_off();
            let mut queue = shared.queue.lock().expect("no thread panicked");
            queue.fail(anyhow::anyhow!("a walker thread could not start"));
            shared.wake.notify_all();
        })?;
        start.go();
        anyhow::Ok(
            handles
                .into_iter()
                .map(|h| h.join().expect("walker threads do not panic"))
                .collect(),
        )
    })?;
    match shared
        .queue
        .into_inner()
        .expect("no thread panicked")
        .failed
    {
        Some(e) => Err(e),
        None => Ok(done),
    }
}

fn work(root: BorrowedFd<'_>, shared: &Shared, visitor: &mut impl Parallel) {
    // Each entry's path is built in this one buffer, not allocated anew.
    let mut child = String::new();
    while let Some(rel) = next_job(shared) {
        let outcome =
            crate::interrupt::check().and_then(|()| job(root, &rel, &mut child, shared, visitor));
        let mut queue = shared.queue.lock().expect("no thread panicked");
        queue.busy -= 1;
        if let Err(e) = outcome {
            queue.fail(e);
        }
        // New jobs woke one waiter each as they were queued; the waiters
        // need waking all at once only when the walk is over, not after
        // every directory (at 64 threads, 63 wake-ups for nothing).
        if queue.is_over() {
            shared.wake.notify_all();
        }
    }
}

impl Queue {
    /// Whether no thread has anything left to do: failed, or nothing
    /// queued and nothing under way that could queue more.
    fn is_over(&self) -> bool {
        self.failed.is_some() || (self.jobs.is_empty() && self.busy == 0)
    }

    /// Ends the walk: the first failure is kept, and every thread stops
    /// before its next job.
    fn fail(&mut self, e: anyhow::Error) {
        self.failed.get_or_insert(e);
        self.jobs.clear();
    }
}

/// The next directory to do, or None when the walk is over (or failed).
fn next_job(shared: &Shared) -> Option<String> {
    let mut queue = shared.queue.lock().expect("no thread panicked");
    loop {
        if queue.failed.is_some() {
            return None;
        }
        if let Some(rel) = queue.jobs.pop() {
            queue.busy += 1;
            return Some(rel);
        }
        if queue.is_over() {
            return None;
        }
        queue = shared.wake.wait(queue).expect("no thread panicked");
    }
}

/// Lists the directory `rel` and hands each entry to `visitor` (its path
/// built in `child`); queues the subdirectories.
fn job(
    root: BorrowedFd<'_>,
    rel: &str,
    child: &mut String,
    shared: &Shared,
    visitor: &mut impl Parallel,
) -> anyhow::Result<()> {
    visitor.begin(rel)?;
    let (stream, listing) = read_listing(open_beneath(root, rel)?)
        .with_context(|| format!("cannot list {}", if rel.is_empty() { "." } else { rel }))?;
    let dir = stream.fd()?;
    for item in &listing {
        child.clear();
        if !rel.is_empty() {
            child.push_str(rel);
            child.push('/');
        }
        child.push_str(&item.name.to_string_lossy());
        let kind = kind_of(dir, &item.name, item.file_type)
            .with_context(|| format!("cannot stat {child}"))?;
        let entry = Visited {
            parent: dir,
            name: &item.name,
            kind,
            rel: child,
        };
        if kind == Kind::Dir {
            let sub =
                open_subdir(dir, &item.name).with_context(|| format!("cannot open {child}"))?;
            visitor.subdir(&entry, sub.as_fd())?;
            let mut queue = shared.queue.lock().expect("no thread panicked");
            queue.jobs.push(child.clone());
            shared.wake.notify_one();
        } else {
            visitor.leaf(&entry)?;
        }
    }
    Ok(())
}

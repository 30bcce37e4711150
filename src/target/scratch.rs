//! The scratch directory: `<target>/fsbench-<run-id>/`, created fresh with a
//! marker file. Workloads write only inside it; it is removed on every exit
//! path (normal end, error, signal) unless the user asked to keep it.
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;
use rustix::fs::{Mode, OFlags};
use serde::{Deserialize, Serialize};

use super::cleanup::{self, CleanupReport, MARKER, SCRATCH_PREFIX};

/// What the marker file records: enough for `fsbench clean` to tell a dead
/// run's leftovers from a live run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Marker {
    pub tool: String,
    pub run_id: String,
    pub pid: u32,
    pub host: String,
    pub created: chrono::DateTime<chrono::Utc>,
}

/// Set when a scratch directory could not be removed on the error or
/// signal path, so the final message does not claim it was.
static CLEANUP_FAILED: AtomicBool = AtomicBool::new(false);

/// True if some scratch directory was left behind by a failed cleanup.
pub fn cleanup_failed() -> bool {
    CLEANUP_FAILED.load(Ordering::Relaxed)
}

pub struct Scratch {
    path: PathBuf,
    dir: OwnedFd,
    keep: bool,
    removed: bool,
    /// Inside another scratch directory, which speaks for it when kept.
    nested: bool,
}

impl Scratch {
    /// Creates `<target>/fsbench-<run_id>` (it must not exist yet) and its
    /// marker.
    pub fn create(target: &Path, run_id: &str, keep: bool) -> anyhow::Result<Scratch> {
        let path = target.join(format!("{SCRATCH_PREFIX}{run_id}"));
        std::fs::create_dir(&path)
            .with_context(|| format!("cannot create scratch directory {}", path.display()))?;
        let dir = rustix::fs::open(
            &path,
            OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .with_context(|| format!("cannot open scratch directory {}", path.display()))?;
        let scratch = Scratch {
            path,
            dir,
            keep,
            removed: false,
            nested: false,
        };
        scratch.write_marker(run_id)?;
        Ok(scratch)
    }

    /// A marked scratch directory `fsbench-<id>` inside this one, for one
    /// of several workloads that share a target: each gets a namespace of
    /// its own (two io workloads both lay out `io.dat`). Removed on its own
    /// drop, and with this one at the latest.
    pub fn nested(&self, id: &str) -> anyhow::Result<Scratch> {
        let mut child = Scratch::create(&self.path, id, self.keep)?;
        child.nested = true;
        Ok(child)
    }

    fn say_kept(&self) {
        if !self.nested {
            eprintln!("fsbench: kept scratch data in {}", self.path.display());
        }
    }

    fn write_marker(&self, run_id: &str) -> anyhow::Result<()> {
        let marker = Marker {
            tool: "fsbench".into(),
            run_id: run_id.into(),
            pid: std::process::id(),
            host: super::env::host_name(),
            created: chrono::Utc::now(),
        };
        let text = serde_json::to_string_pretty(&marker)?;
        std::fs::write(self.path.join(MARKER), text)
            .with_context(|| format!("cannot write marker in {}", self.path.display()))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The id in its name (`fsbench-<id>`), to name directories that
    /// belong to the same run elsewhere.
    pub fn id(&self) -> String {
        let name = self.path.file_name().unwrap_or_default().to_string_lossy();
        name.strip_prefix(SCRATCH_PREFIX)
            .unwrap_or(&name)
            .to_string()
    }

    /// True when the user asked to keep the scratch data (`--keep`).
    pub fn keeps(&self) -> bool {
        self.keep
    }

    /// The scratch directory's fd, for `*at` syscalls that cannot escape it.
    pub fn dir(&self) -> BorrowedFd<'_> {
        self.dir.as_fd()
    }

    /// Removes the scratch directory and everything in it; `None` when the
    /// user asked to keep it.
    pub fn finish(mut self) -> anyhow::Result<Option<CleanupReport>> {
        self.removed = true;
        if self.keep {
            self.say_kept();
            return Ok(None);
        }
        cleanup::remove_scratch(&self.path).map(Some)
    }
}

impl Drop for Scratch {
    /// The error and signal path: clean up without masking the original
    /// error, and say so if cleanup itself fails.
    fn drop(&mut self) {
        if self.removed {
            return;
        }
        if self.keep {
            self.say_kept();
        } else if let Err(e) = cleanup::remove_scratch(&self.path) {
            CLEANUP_FAILED.store(true, Ordering::Relaxed);
            eprintln!(
                "fsbench: cleanup of {} failed: {e:#}; `fsbench clean` removes it later",
                self.path.display()
            );
        }
    }
}

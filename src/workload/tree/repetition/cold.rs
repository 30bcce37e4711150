//! How a repetition makes caches cold before each operation: sync, a
//! checkpoint of the target's journal (`storage::freeze`) and
//! drop_caches, a remount of the target (its own descriptors parked on
//! /dev/null and reopened by name after), or nothing; and what the result
//! says of it.
use std::os::fd::AsFd;

use anyhow::Context;

use super::Repetition;
use crate::storage::cleanup::open_subdir;
use crate::storage::freeze::{self, Checkpoint};
use crate::storage::scratch::{park_fd, replace_fd};
use crate::workload::Cold;
use crate::workload::tree::{Source, cstring};

/// How caches were made cold before each operation, and if they were not,
/// why.
pub(super) enum Caches {
    Dropping(Journal),
    Remounting,
    Kept(String),
}

/// Whether the target's journal is checkpointed before each drop: the
/// metadata a journal holds committed but not yet written in place is
/// pinned in the cache, and drop_caches leaves it.
#[derive(Clone, Copy)]
pub(super) enum Journal {
    /// Not yet tried, or someone else held the file system frozen.
    Untried,
    Checkpointed,
    /// The file system cannot be frozen (tmpfs, a network or FUSE file
    /// system), or not by this user: not tried again.
    Unfreezable,
}

impl Caches {
    /// What the run or the workload asked for.
    pub(super) fn asked(cold: Cold<'_>, drop_caches: bool) -> Caches {
        match (cold, drop_caches) {
            (Cold::AsWorkload, true) | (Cold::Drop, _) => Caches::Dropping(Journal::Untried),
            (Cold::AsWorkload, false) => Caches::Kept("--no-drop-caches".into()),
            (Cold::None, _) => Caches::Kept("--cold none".into()),
            (Cold::Remount(_), _) => Caches::Remounting,
        }
    }

    pub(super) fn emptied(&self) -> bool {
        !matches!(self, Caches::Kept(_))
    }

    /// What the result says of them.
    pub(super) fn described(&self) -> String {
        match self {
            Caches::Dropping(Journal::Checkpointed) => {
                "synced, journal checkpointed (freeze/thaw) \
                 and dropped (drop_caches=3) before each operation"
                    .into()
            }
            Caches::Dropping(_) => {
                "synced and dropped (drop_caches=3) before each operation".into()
            }
            Caches::Remounting => {
                "synced, unmounted and mounted again before each operation (--cold remount)".into()
            }
            Caches::Kept(why) => format!("not dropped ({why})"),
        }
    }
}

impl Repetition<'_, '_> {
    /// Syncs the target's and the source's file systems (syncfs, never
    /// sync(2): a hung file system elsewhere on the host, a stuck NFS mount
    /// or another run's killed recorder, would freeze this run with it), so
    /// that no earlier phase's dirty data is written back during the next
    /// one, and empties the caches as asked: a checkpoint of the target's
    /// journal and drop_caches (needs root; on the first failure, records
    /// why and stops trying) or a remount of the target.
    pub(super) fn make_cold(&mut self) -> anyhow::Result<()> {
        self.made_cold = true;
        rustix::fs::syncfs(self.dir.as_fd()).context("syncfs of the target failed")?;
        rustix::fs::syncfs(self.src.as_fd()).context("syncfs of the source failed")?;
        match self.caches {
            Caches::Dropping(journal) => {
                self.caches = Caches::Dropping(self.checkpoint(journal)?);
                if let Err(e) = std::fs::write("/proc/sys/vm/drop_caches", "3") {
                    self.caches =
                        Caches::Kept(format!("cannot write /proc/sys/vm/drop_caches: {e}"));
                }
                Ok(())
            }
            Caches::Remounting => self.remount(),
            Caches::Kept(_) => Ok(()),
        }
    }

    /// Checkpoints the target's journal (a freeze and thaw of its file
    /// system) unless its file system was found unfreezable; what is
    /// known after.
    fn checkpoint(&self, journal: Journal) -> anyhow::Result<Journal> {
        if let Journal::Unfreezable = journal {
            return Ok(journal);
        }
        Ok(match freeze::checkpoint(self.dir.as_fd())? {
            Checkpoint::Done => Journal::Checkpointed,
            Checkpoint::Unsupported => Journal::Unfreezable,
            Checkpoint::FrozenElsewhere => journal,
        })
    }

    /// Unmounts and mounts the target again with the repetition's own
    /// descriptors on it parked, then reopens them by name (the dataset's
    /// too when it is in the scratch directory; a user's `--source`
    /// elsewhere stays open).
    fn remount(&mut self) -> anyhow::Result<()> {
        let Cold::Remount(remount) = self.ctx.cold else {
            anyhow::bail!("the run asked for no remount");
        };
        let src_inside = matches!(self.work.config.source, Source::Dataset { .. });
        park_fd(self.dir.as_fd())?;
        if src_inside {
            park_fd(self.src.as_fd())?;
        }
        remount()?;
        let dir = open_subdir(self.ctx.scratch.dir(), &cstring(&self.dir_name)?)
            .context("cannot reopen the repetition's directory after the remount")?;
        replace_fd(self.dir.as_fd(), dir.as_fd())?;
        if src_inside {
            let src = open_subdir(self.dir.as_fd(), c"src")
                .context("cannot reopen the dataset after the remount")?;
            replace_fd(self.src.as_fd(), src.as_fd())?;
        }
        Ok(())
    }
}

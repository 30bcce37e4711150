//! A running `fsbench run` claims the files it saves into, so that a second
//! process (`--resume` of a run that is still measuring) does not measure
//! the same targets and write the same file: an advisory lock on a hidden
//! file beside each (`.NAME.fsbench-lock`), held while the process lives
//! and released by the kernel however it ends, kill -9 included. A run
//! that ends removes its lock files while it still holds them (and the
//! directories it made for them, if it saved nothing there); one killed
//! leaves a hidden file that the next claim takes over.
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use rustix::fs::{FlockOperation, flock};

/// How a lock file's name ends.
const LOCK_SUFFIX: &str = ".fsbench-lock";

/// The claims of one run, released when dropped.
#[derive(Debug)]
pub struct Claims {
    held: Vec<(PathBuf, File)>,
    /// The directories made for the lock files, deepest last.
    made: Vec<PathBuf>,
}

/// Claims every one of `paths`; a usage error naming the first that a
/// running fsbench holds.
pub fn claim<'a>(paths: impl IntoIterator<Item = &'a Path>) -> anyhow::Result<Claims> {
    let mut claims = Claims {
        held: Vec::new(),
        made: Vec::new(),
    };
    for path in paths {
        let lock = lock_path(path);
        claims.make_dirs(&lock)?;
        let file = open_lock(&lock)
            .map_err(|e| anyhow::anyhow!("cannot claim {}: {e}", path.display()))?;
        // A lock taken on a file its holder removed in between is no one's
        // claim: the name now leads to another file, or to none.
        if flock(&file, FlockOperation::NonBlockingLockExclusive).is_err() || !names(&lock, &file) {
            return crate::error::usage(format!(
                "{}: a running fsbench is saving this run; wait for it to end (or stop it) first",
                path.display()
            ));
        }
        claims.held.push((lock, file));
    }
    Ok(claims)
}

impl Claims {
    /// Makes the missing directories above `lock`, remembering each.
    fn make_dirs(&mut self, lock: &Path) -> anyhow::Result<()> {
        let missing: Vec<&Path> = lock
            .ancestors()
            .skip(1)
            .take_while(|dir| !dir.as_os_str().is_empty() && !dir.exists())
            .collect();
        for dir in missing.into_iter().rev() {
            std::fs::create_dir(dir).map_err(|e| {
                anyhow::anyhow!("cannot create the results directory {}: {e}", dir.display())
            })?;
            self.made.push(dir.to_path_buf());
        }
        Ok(())
    }
}

impl Drop for Claims {
    /// Removes each lock file while its lock is still held, so no claim
    /// can be taken on a file about to go; then each directory made for
    /// them that stayed empty (a run refused before it saved anything).
    fn drop(&mut self) {
        for (lock, file) in &self.held {
            if names(lock, file) {
                let _ = std::fs::remove_file(lock);
            }
        }
        for dir in self.made.iter().rev() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// Whether `path` still names the open `file`.
fn names(path: &Path, file: &File) -> bool {
    match (std::fs::symlink_metadata(path), file.metadata()) {
        (Ok(named), Ok(open)) => (named.dev(), named.ino()) == (open.dev(), open.ino()),
        _ => false,
    }
}

/// Whether a running fsbench holds `path`.
pub fn is_claimed(path: &Path) -> bool {
    let Ok(file) = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(lock_path(path))
    else {
        return false;
    };
    flock(&file, FlockOperation::NonBlockingLockShared).is_err()
}

/// Whether `name` is a lock file [`claim`] made.
pub fn is_lock(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(LOCK_SUFFIX)
}

/// The lock file `lock`, created if missing, never through a link or into
/// a FIFO another user put there.
fn open_lock(lock: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(lock)
}

/// `DIR/.NAME.fsbench-lock`.
fn lock_path(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    dir.unwrap_or(Path::new("."))
        .join(format!(".{name}{LOCK_SUFFIX}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claimed_file_cannot_be_claimed_again_until_released() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json");
        assert!(!is_claimed(&path));
        let claims = claim([path.as_path()]).unwrap();
        assert!(is_claimed(&path));
        let e = claim([path.as_path()]).unwrap_err();
        assert!(e.is::<crate::error::UsageError>());
        assert!(e.to_string().contains("a running fsbench"), "{e}");
        let lock = lock_path(&path);
        assert!(is_lock(&lock.file_name().unwrap().to_string_lossy()));
        drop(claims);
        assert!(!is_claimed(&path));
        assert!(!lock.exists(), "a run that ends leaves no lock file");
        // A killed run's lock file (no one holds it) is taken over.
        std::fs::write(&lock, "").unwrap();
        claim([path.as_path()]).unwrap();
    }

    #[test]
    fn directories_made_for_a_claim_go_with_it_unless_something_was_saved() {
        let dir = tempfile::tempdir().unwrap();
        let unused = dir.path().join("a/b/run.json");
        drop(claim([unused.as_path()]).unwrap());
        assert!(!dir.path().join("a").exists());
        let used = dir.path().join("c/d/run.json");
        let claims = claim([used.as_path()]).unwrap();
        std::fs::write(&used, "saved").unwrap();
        drop(claims);
        assert_eq!(std::fs::read_to_string(&used).unwrap(), "saved");
    }
}

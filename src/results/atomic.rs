//! Writing a file so that a crash at any moment leaves either its previous
//! version or the new one, never a torn mix: the text goes to a temporary
//! file beside it, is synced, renamed over the file, and the directory is
//! synced so the rename itself survives a power cut.
//!
//! fsbench runs as root on machines other users share, and saves where it
//! is told: in /tmp, in a directory another user owns. So a save replaces
//! the name it was given and never what a symbolic link there points to (a
//! link another user planted would aim root's write at /etc/shadow), its
//! temporary file is always a new one, and a directory another user could
//! swap for a link is refused ([`check_directory`]).
use std::fs::{File, Metadata, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// How the temporary file's name ends: what a listing recognises a save
/// cut short by a crash by.
const TEMP_SUFFIX: &str = ".fsbench-tmp";

/// Replaces `path` with `text` atomically, in a directory no other user can
/// swap. A path that is not a regular file (a FIFO, a terminal, /dev/null)
/// is written in place, as is one a trusted link leads to (/dev/stdout):
/// renaming over it would replace the device node, not feed it. Any other
/// link is replaced, not followed.
pub fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    check_destination(path)?;
    let shown = path.display();
    let written = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_symlink() && leads_to_a_stream(path, &meta) => {
            write_in_place(path, text, 0)
        }
        Ok(meta) if !meta.is_symlink() && !meta.is_file() && !meta.is_dir() => {
            write_in_place(path, text, libc::O_NOFOLLOW)
        }
        _ => replace(path, text),
    };
    written.map_err(|e| anyhow::anyhow!("cannot write {shown}: {e}"))
}

/// Whether `name` is a temporary file [`write`] left behind when it was
/// cut short (the file it was to replace still holds its last version).
pub fn is_temp(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(TEMP_SUFFIX)
}

/// Refuses a file to save as `path` whose directory another user could
/// swap ([`check_directory`]): said before a run measures anything.
pub fn check_destination(path: &Path) -> anyhow::Result<()> {
    check_directory(directory_of(path))
}

/// Refuses `dir` (one line saying why) when another user could replace it,
/// or any directory above it, by a link between two saves: a directory in a
/// parent that another user owns, or that others may write and that is not
/// sticky (or sticky, with the entry another user's).
pub fn check_directory(dir: &Path) -> anyhow::Result<()> {
    let absolute = std::path::absolute(dir)?;
    let real = std::fs::canonicalize(dir).unwrap_or_else(|_| absolute.clone());
    for path in [&absolute, &real] {
        for entry in path.ancestors() {
            let Some(parent) = entry.parent() else {
                continue;
            };
            let Ok(parent_meta) = std::fs::metadata(parent) else {
                continue;
            };
            // An entry still missing is made later, by fsbench or, first,
            // by anyone who may write its parent.
            let owner = std::fs::symlink_metadata(entry).map_or(None, |meta| Some(meta.uid()));
            if let Some(why) = swappable(owner, &parent_meta) {
                return crate::error::usage(format!(
                    "refusing to save in {}: another user can replace {} ({} {why})",
                    dir.display(),
                    entry.display(),
                    parent.display()
                ));
            }
        }
    }
    Ok(())
}

/// Why another user than this process's and root could rename an entry
/// of `parent` that `owner` owns (None: one not made yet), if one can.
fn swappable(owner: Option<u32>, parent: &Metadata) -> Option<String> {
    let euid = rustix::process::geteuid().as_raw();
    let ours = |uid: u32| uid == 0 || uid == euid;
    if !ours(parent.uid()) {
        return Some(format!("belongs to uid {}", parent.uid()));
    }
    let egid = rustix::process::getegid().as_raw();
    let others_write = parent.mode() & 0o002 != 0
        || (parent.mode() & 0o020 != 0 && parent.gid() != 0 && parent.gid() != egid);
    let sticky = parent.mode() & 0o1000 != 0;
    match (others_write, sticky) {
        (false, _) => None,
        (true, true) => match owner {
            Some(uid) if ours(uid) => None,
            Some(uid) => Some(format!("is sticky but the entry belongs to uid {uid}")),
            // Made by fsbench (mkdir, which fails on a name someone took
            // first), it is then fsbench's; one another user made first is
            // found at the next check, before the save.
            None => None,
        },
        (true, false) => Some("is writable by others and not sticky".to_string()),
    }
}

/// Whether the link `path` (lstat `meta`) is one no other user made or can
/// swap and leads to something that is not a file or directory: a stream
/// to write into, as /dev/stdout leads to the process's own output.
fn leads_to_a_stream(path: &Path, meta: &Metadata) -> bool {
    let trusted = std::fs::metadata(directory_of(path))
        .is_ok_and(|parent| swappable(Some(meta.uid()), &parent).is_none());
    let stream = std::fs::metadata(path).is_ok_and(|target| !target.is_file() && !target.is_dir());
    trusted && stream
}

fn write_in_place(path: &Path, text: &str, flags: i32) -> std::io::Result<()> {
    OpenOptions::new()
        .write(true)
        .truncate(true)
        .custom_flags(flags)
        .open(path)?
        .write_all(text.as_bytes())
}

fn replace(path: &Path, text: &str) -> std::io::Result<()> {
    let temp = temp_path(path);
    let synced = write_synced(&temp, text).and_then(|()| std::fs::rename(&temp, path));
    if synced.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    synced?;
    File::open(directory_of(path))?.sync_all()
}

/// `DIR/.NAME.fsbench-tmp`: beside the file, so the rename stays on one
/// file system; hidden, so a listing of `*.json` never takes it for a result.
fn temp_path(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    directory_of(path).join(format!(".{name}{TEMP_SUFFIX}"))
}

fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// Writes `text` to `temp`, a file this call creates (a leftover of an
/// earlier crash is removed first; a name another user puts there in
/// between, a link or a hard link to another file, fails the save rather
/// than being written through), and syncs it.
fn write_synced(temp: &Path, text: &str) -> std::io::Result<()> {
    match std::fs::remove_file(temp) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o644)
        .open(temp)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_replaces_the_file_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        write(&path, "first").unwrap();
        write(&path, "second").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "second");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn a_write_that_fails_before_the_rename_keeps_the_previous_version() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        write(&path, "previous").unwrap();
        // The temporary file cannot be made (a directory holds its name).
        std::fs::create_dir(temp_path(&path)).unwrap();
        let e = write(&path, "next").unwrap_err().to_string();
        assert!(
            e.starts_with("cannot write ") && e.contains("r.json"),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "previous");
    }

    #[test]
    fn a_leftover_temporary_file_is_overwritten_and_recognised() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        let temp = temp_path(&path);
        std::fs::write(&temp, "{ torn").unwrap();
        assert!(is_temp(&temp.file_name().unwrap().to_string_lossy()));
        assert!(!is_temp("r.json") && !is_temp(".hidden.json"));
        write(&path, "whole").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "whole");
        assert!(!temp.exists());
    }

    #[test]
    fn a_symbolic_link_is_replaced_not_followed_and_a_device_is_written_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        let link = dir.path().join("link.json");
        std::fs::write(&real, "precious").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write(&link, "result").unwrap();
        assert!(link.symlink_metadata().unwrap().is_file());
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "result");
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "precious");
        write(Path::new("/dev/null"), "nothing").unwrap();
        assert!(!Path::new("/dev/.null.fsbench-tmp").exists());
    }

    #[test]
    fn a_link_to_a_stream_is_written_through_only_when_no_other_user_can_swap_it() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("out");
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        write(&link, "fed").unwrap();
        assert!(
            link.symlink_metadata().unwrap().is_symlink(),
            "fed /dev/null"
        );
    }

    #[test]
    fn a_hard_link_planted_as_the_temporary_file_is_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        std::fs::hard_link(&victim, temp_path(&path)).unwrap();
        write(&path, "result").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "result");
    }
}

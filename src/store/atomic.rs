//! Writing a file so that a crash at any moment leaves either its previous
//! version or the new one, never a torn mix: the text goes to a temporary
//! file beside it, is synced, renamed over the file, and the directory is
//! synced so the rename itself survives a power cut.
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// How the temporary file's name ends: what a listing recognises a save
/// cut short by a crash by.
const TEMP_SUFFIX: &str = ".fsbench-tmp";

/// Replaces `path` with `text` atomically. A path that exists and is not a
/// regular file (a FIFO, /dev/stdout, /dev/null) is written in place:
/// renaming over it would replace the device node, not feed it.
pub fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    let shown = path.display();
    let written = match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => std::fs::write(path, text),
        _ => replace(&resolved(path), text),
    };
    written.map_err(|e| anyhow::anyhow!("cannot write {shown}: {e}"))
}

/// Whether `name` is a temporary file [`write`] left behind when it was
/// cut short (the file it was to replace still holds its last version).
pub fn is_temp(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(TEMP_SUFFIX)
}

/// `path` through a symbolic link, so that the link stays and the file it
/// names is replaced.
fn resolved(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
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

/// Writes `text` to `temp` (truncating a leftover of an earlier crash, never
/// through a symbolic link) and syncs it.
fn write_synced(temp: &Path, text: &str) -> std::io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
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
    fn a_symbolic_link_stays_and_a_device_is_written_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        let link = dir.path().join("link.json");
        std::fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write(&link, "through").unwrap();
        assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "through");
        write(Path::new("/dev/null"), "nothing").unwrap();
        assert!(!Path::new("/dev/.null.fsbench-tmp").exists());
    }
}

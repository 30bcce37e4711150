//! Targets that are one directory under two spellings.
use std::os::unix::fs::MetadataExt;

use super::Target;
use crate::error::usage;

/// Refuses two targets that are the same directory (`/mnt/a`, `/mnt/a/.`,
/// a symlink or bind mount of it, compared by device and inode): they
/// would race for one scratch directory name. A target that cannot be
/// stat'ed is left to the target checks, which say why.
pub fn check_distinct(targets: &[Target]) -> anyhow::Result<()> {
    let ids: Vec<Option<(u64, u64)>> = targets
        .iter()
        .map(|t| std::fs::metadata(&t.path).ok().map(|m| (m.dev(), m.ino())))
        .collect();
    for (index, id) in ids.iter().enumerate() {
        let Some(id) = id else { continue };
        if let Some(first) = ids[..index].iter().position(|other| other == &Some(*id)) {
            let (a, b) = (&targets[first], &targets[index]);
            return usage(format!(
                "targets '{}' ({}) and '{}' ({}) are the same directory: give each target its own",
                a.name,
                a.path.display(),
                b.name,
                b.path.display()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_directory_is_found_under_another_spelling() {
        let dir = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let target = |spec: String| Target::parse(&spec).unwrap();
        let a = target(format!("a={}", dir.path().display()));
        let b = target(format!("b={}/.", dir.path().display()));
        let c = target(format!("c={}", other.path().display()));
        let missing = target("d=/nonexistent/fsbench".into());
        check_distinct(&[a.clone(), c.clone(), missing.clone(), missing]).unwrap();
        let e = check_distinct(&[a, c, b]).unwrap_err().to_string();
        assert!(e.starts_with("targets 'a' ("), "{e}");
        assert!(e.contains("'b' ("), "{e}");
    }
}

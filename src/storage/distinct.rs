//! Targets that reports could not tell apart: two of one name, or one
//! directory under two spellings.
use std::os::unix::fs::MetadataExt;

use super::Target;
use crate::error::usage;

/// Refuses two targets of one name, with a hint that names a free one:
/// `flag_of(index)` is the flag that gave target `index` (`--target`,
/// `--reference`), for the hint to be a flag as the user would type it.
pub fn check_names(
    targets: &[Target],
    flag_of: impl Fn(usize) -> &'static str,
) -> anyhow::Result<()> {
    for (index, target) in targets.iter().enumerate() {
        if targets[..index].iter().any(|t| t.name == target.name) {
            return usage(format!(
                "two targets are named '{}': name the second apart, e.g. {} {}={}",
                target.name,
                flag_of(index),
                free_name(targets, &target.name),
                target.path.display()
            ));
        }
    }
    Ok(())
}

/// A name none of `targets` has, after `taken` (a name given by a path
/// takes its last component): `a2`, `a3`, ...; `photos` for `/mnt/photos`
/// when that is free.
fn free_name(targets: &[Target], taken: &str) -> String {
    let last = taken.rsplit('/').find(|part| !part.is_empty());
    let base = last.unwrap_or("target");
    let is_free = |name: &str| targets.iter().all(|t| t.name != name);
    if base != taken && is_free(base) {
        return base.to_string();
    }
    (2..)
        .map(|n| format!("{base}{n}"))
        .find(|name| is_free(name))
        .expect("a finite list of targets leaves a number free")
}

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

    #[test]
    fn a_clashing_name_is_answered_with_a_free_one() {
        let target = |spec: &str| Target::parse(spec).unwrap();
        let flag = |_| "--target";
        let hint = |targets: &[Target]| check_names(targets, flag).unwrap_err().to_string();
        let e = hint(&[target("a=/x"), target("a=/y")]);
        assert_eq!(
            e,
            "two targets are named 'a': name the second apart, e.g. --target a2=/y"
        );
        // a2 is taken: the hint passes it.
        let e = hint(&[target("a2=/z"), target("a=/x"), target("a=/y")]);
        assert!(e.ends_with("--target a3=/y"), "{e}");
        // A name given by a path: its last component, when free.
        let e = hint(&[target("/mnt/photos"), target("/mnt/photos")]);
        assert!(e.ends_with("--target photos=/mnt/photos"), "{e}");
        let e = check_names(&[target("r=/x"), target("r=/y")], |i| match i {
            0 => "--target",
            _ => "--reference",
        });
        assert!(e.unwrap_err().to_string().ends_with("--reference r2=/y"));
        check_names(&[target("a=/x"), target("b=/x")], flag).unwrap();
    }
}

//! Risk flags: configurations that make numbers look good by not making
//! data durable. Each says, in one line, what a crash or power cut can
//! lose, so a fast result is never read without its price.
use std::path::Path;

use crate::result::env::Risk;

use super::TargetEnv;

/// The mount options, one by one.
fn options(env: &TargetEnv) -> Vec<&str> {
    env.mount_options.split(',').map(str::trim).collect()
}

/// A risk in a few words, for the verdict's sentence ("not crash-safe:
/// data=writeback, barriers off"); the code itself for codes it does not
/// know (a result written by a later version).
pub fn short_name(code: &str) -> &str {
    match code {
        "volatile" => "volatile (RAM)",
        "nfs_async" => "NFS async",
        "nobarrier" => "barriers off",
        "data_writeback" => "data=writeback",
        "no_journal" => "no journal",
        "write_back_cache" => "unflushed write-back cache",
        other => other,
    }
}

/// The risks of a probed target. `jbd2_dir` is where the kernel lists the
/// journals in use (`/proc/fs/jbd2`), a parameter so tests can fake it.
pub fn risks_of(env: &TargetEnv, jbd2_dir: &Path) -> Vec<Risk> {
    let opts = options(env);
    let has = |o: &str| opts.contains(&o);
    let mut risks = Vec::new();
    if matches!(env.fs_type.as_str(), "tmpfs" | "ramfs") {
        risks.push(Risk::new(
            "volatile",
            "tmpfs/ramfs: everything on it is lost at reboot or crash; its figures are memory speeds",
        ));
    }
    if env.fs_type.starts_with("nfs") && has("async") {
        risks.push(Risk::new(
            "nfs_async",
            "NFS mounted async: writes the server acknowledged can be lost if the client or server crashes",
        ));
    }
    let barriers_off = has("nobarrier") || has("barrier=0");
    if barriers_off {
        risks.push(Risk::new(
            "nobarrier",
            "barriers off (nobarrier/barrier=0): fsync does not flush the device cache; a power cut can lose synced data and corrupt the journal",
        ));
    }
    if has("data=writeback") {
        risks.push(Risk::new(
            "data_writeback",
            "data=writeback: after a crash, recently written files can contain stale or garbage blocks",
        ));
    }
    if env.fs_type == "ext4" && !has_journal(env, jbd2_dir) {
        risks.push(Risk::new(
            "no_journal",
            "ext4 without a journal: a crash can leave the file system inconsistent until fsck, losing recent metadata changes",
        ));
    }
    // A write-back cache alone is the normal case: Linux flushes it at
    // every fsync (whether the device obeys is what `fsbench durability`
    // checks). With barriers off nothing flushes it.
    if barriers_off && env.write_cache.as_deref() == Some("write back") {
        risks.push(Risk::new(
            "write_back_cache",
            "device write cache in write-back mode and never flushed (barriers off): every write it acknowledged since the last idle moment can vanish on power loss",
        ));
    }
    risks
}

/// An ext4 file system has a journal when the kernel runs one for its
/// device: `/proc/fs/jbd2/<dev>-8`. Unknown devices count as journaled
/// (no flag without evidence).
fn has_journal(env: &TargetEnv, jbd2_dir: &Path) -> bool {
    let Some(device) = env.source.strip_prefix("/dev/") else {
        return true;
    };
    let device = device.replace('/', "!");
    let Ok(entries) = std::fs::read_dir(jbd2_dir) else {
        return true;
    };
    let journals: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let prefix = format!("{device}-");
    journals.iter().any(|name| name.starts_with(&prefix)) || !Path::new(&env.source).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(fs_type: &str, options: &str, write_cache: Option<&str>) -> TargetEnv {
        TargetEnv {
            fs_type: fs_type.into(),
            mount_options: options.into(),
            source: "/dev/null".into(),
            write_cache: write_cache.map(str::to_string),
            ..Default::default()
        }
    }

    fn codes(env: &TargetEnv, jbd2: &Path) -> Vec<String> {
        risks_of(env, jbd2).into_iter().map(|r| r.code).collect()
    }

    fn jbd2_with(names: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for name in names {
            std::fs::create_dir(dir.path().join(name)).unwrap();
        }
        dir
    }

    #[test]
    fn defaults_raise_nothing() {
        let jbd2 = jbd2_with(&["null-8"]);
        let safe = env("ext4", "rw,relatime,data=ordered", Some("write through"));
        assert!(codes(&safe, jbd2.path()).is_empty());
        assert!(codes(&env("xfs", "rw,relatime", None), jbd2.path()).is_empty());
        assert!(codes(&env("nfs4", "rw,sync,vers=4.2", None), jbd2.path()).is_empty());
    }

    #[test]
    fn each_risky_option_is_named() {
        let jbd2 = jbd2_with(&["null-8"]);
        let cases = [
            ("ext4", "rw,nobarrier", "nobarrier"),
            ("ext4", "rw,barrier=0", "nobarrier"),
            ("ext4", "rw,data=writeback", "data_writeback"),
            ("nfs4", "rw,async", "nfs_async"),
            ("tmpfs", "rw", "volatile"),
            ("ramfs", "rw", "volatile"),
        ];
        for (fs, opts, code) in cases {
            assert_eq!(
                codes(&env(fs, opts, None), jbd2.path()),
                [code],
                "{fs} {opts}"
            );
        }
        let cached = env("xfs", "rw", Some("write back"));
        assert!(codes(&cached, jbd2.path()).is_empty(), "flushed at fsync");
        let unflushed = env("xfs", "rw,nobarrier", Some("write back"));
        assert_eq!(
            codes(&unflushed, jbd2.path()),
            ["nobarrier", "write_back_cache"]
        );
    }

    #[test]
    fn ext4_without_a_running_journal_is_flagged() {
        let none = jbd2_with(&["sda1-8"]);
        assert_eq!(codes(&env("ext4", "rw", None), none.path()), ["no_journal"]);
        let journaled = jbd2_with(&["null-8"]);
        assert!(codes(&env("ext4", "rw", None), journaled.path()).is_empty());
    }
}

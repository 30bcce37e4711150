//! Risk flags: configurations that make numbers look good by not making
//! data durable. Each says, in one line, what a crash or power cut can
//! lose, so a fast result is never read without its price.
use std::path::Path;

use crate::result::built::Built;
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
        "server_async" => {
            "server acknowledges writes before its disk has them: a server crash loses them"
        }
        "client_write_behind" => {
            "client acknowledges writes before the server has them: a client crash loses them"
        }
        other => other,
    }
}

/// The risks a configuration may declare (`declared_risks` in a
/// configurations file), with what each can lose: what its setup makes a
/// server do, which no probe of the client's mount can see (a Samba
/// share's `sync always = no`, a GlusterFS volume's write-behind: neither
/// shows in the client's mount options).
pub const DECLARABLE: &[(&str, &str)] = &[
    (
        "server_async",
        "the server acknowledges writes before its disk has them: a crash or power cut of the server loses what it acknowledged since it last wrote back (on Linux up to ~30 s of writes), fsynced data too where the client's flush does not reach the server's disk",
    ),
    (
        "client_write_behind",
        "the client acknowledges writes before the server has them: a crash of the client loses them, and a write that fails on the server is reported late (at a later write, fsync or close) or, with flush-behind, not at close at all",
    ),
];

/// A risk a configuration declared, `setting` being what the file says
/// makes it so; its message says where the flag came from. A code this
/// version does not know (a result of a later one) is its own message.
pub fn declared(code: &str, setting: &str) -> Risk {
    let what = DECLARABLE
        .iter()
        .find(|(known, _)| *known == code)
        .map_or(code, |(_, what)| what);
    Risk {
        code: code.into(),
        message: format!("{what} (declared by its configuration: {setting})"),
    }
}

/// The risks a built configuration declared, as reports list them.
pub fn declared_by(built: &Built) -> Vec<Risk> {
    built
        .declared_risks
        .iter()
        .map(|(code, setting)| declared(code, setting))
        .collect()
}

/// A declared risk in the verdict's words: what it can lose, and that
/// the configuration said so, not a probe.
pub fn declared_name(code: &str, setting: &str) -> String {
    format!("{} (declared: {setting})", short_name(code))
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

    /// A declared risk says what it can lose and that the configuration,
    /// not a probe, raised it.
    #[test]
    fn a_declared_risk_says_what_it_loses_and_who_said_so() {
        let risk = declared("server_async", "sync always = no");
        assert_eq!(risk.code, "server_async");
        assert!(
            risk.message
                .starts_with("the server acknowledges writes before its disk has them: a crash or power cut of the server loses"),
            "{}",
            risk.message
        );
        assert!(
            risk.message
                .ends_with("(declared by its configuration: sync always = no)"),
            "{}",
            risk.message
        );
        assert_eq!(
            declared_name("server_async", "sync always = no"),
            "server acknowledges writes before its disk has them: a server crash loses them (declared: sync always = no)"
        );
        assert_eq!(
            declared("later_code", "x").message,
            "later_code (declared by its configuration: x)"
        );
        for (code, _) in DECLARABLE {
            assert_ne!(short_name(code), *code, "{code} has no short name");
        }
    }

    #[test]
    fn ext4_without_a_running_journal_is_flagged() {
        let none = jbd2_with(&["sda1-8"]);
        assert_eq!(codes(&env("ext4", "rw", None), none.path()), ["no_journal"]);
        let journaled = jbd2_with(&["null-8"]);
        assert!(codes(&env("ext4", "rw", None), journaled.path()).is_empty());
    }
}

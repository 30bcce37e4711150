//! What every view calls a metric: `find (s) ↓` rather than `find_s` over
//! `s`. The raw name stays in the JSON and CSV, which programs read; the
//! terminal, Markdown and HTML tables and the charts all name a metric
//! through this module, so a figure is called the same wherever it appears.
use crate::result::Direction;

/// Raw names (after `UNIT_SUFFIXES` are dropped) whose readable form is
/// more than the name with spaces for underscores: the tools' terse
/// abbreviations, spelled out as their own reports title them.
const NAMES: &[(&str, &str)] = &[
    // bonnie++: "Sequential Output" (per char, block, rewrite), "Sequential
    // Input" (per char, block), "Random Seeks", then the file tests.
    ("putc", "sequential write per char"),
    ("put_block", "sequential write"),
    ("rewrite", "sequential rewrite"),
    ("getc", "sequential read per char"),
    ("get_block", "sequential read"),
    ("seeks", "random seeks"),
    ("seq_create", "sequential create"),
    ("seq_stat", "sequential stat"),
    ("seq_del", "sequential delete"),
    ("ran_create", "random create"),
    ("ran_stat", "random stat"),
    ("ran_del", "random delete"),
    // PostMark: creations and deletions alone or mixed with transactions.
    ("create_mixed", "create in transactions"),
    ("delete_mixed", "delete in transactions"),
    // vdbench and `fsbench io`.
    ("io_rate", "I/O rate"),
    ("mib_per_s", "throughput"),
    ("resp", "response"),
    ("read_resp", "read response"),
    ("write_resp", "write response"),
    ("resp_max", "max response"),
    ("resp_stddev", "response std dev"),
    ("sync", "closing fsync"),
    // A tree's dataset, made before its operations.
    ("generate", "dataset generation"),
    ("copy_sync", "copy's closing sync"),
    ("untar_sync", "untar's closing sync"),
    ("concat_sync", "concat's closing sync"),
    // Space on disk per logical byte, and inodes per entry made, of what
    // a tree's operations lay down (`workload::space`).
    ("generate_space", "dataset space on disk"),
    ("copy_space", "copy space on disk"),
    ("untar_space", "untar space on disk"),
    ("concat_space", "concat space on disk"),
    ("generate_inodes_per_entry", "dataset inodes"),
    ("copy_inodes_per_entry", "copy inodes"),
    ("untar_inodes_per_entry", "untar inodes"),
    // The durability probes: the open flags keep their spelling.
    ("osync_write", "O_SYNC write"),
    ("odsync_write", "O_DSYNC write"),
    // A sync log's records and syncs differ by their unit.
    ("sync_log_records", "sync log"),
    ("sync_log_syncs", "sync log"),
];

/// Endings of raw names that restate the unit (`find_s` is in s,
/// `create_ops_s` in ops/s), longest first so `_mb_s` is not read as
/// `_s`; with the unit they imply, for a metric saved without one.
const UNIT_SUFFIXES: &[(&str, &str)] = &[
    ("_entries_s", "entries/s"),
    ("_ops_s", "ops/s"),
    ("_mib_s", "MiB/s"),
    ("_mb_s", "MB/s"),
    ("_per_s", "/s"),
    ("_ms", "ms"),
    ("_s", "s"),
];

/// The metric's readable name with its unit: `find (s)`, `I/O rate (IO/s)`,
/// `sequential create (files/s)`.
pub fn human(name: &str, unit: &str) -> String {
    let (base, implied) = split_unit(name);
    let unit = if unit.is_empty() { implied } else { unit };
    match unit {
        "" => label(name, base),
        unit => format!("{} ({unit})", label(name, base)),
    }
}

/// The readable name alone, for sentences: `find`, `I/O rate`.
pub fn words(name: &str) -> String {
    label(name, split_unit(name).0)
}

/// `human` and the arrow of the better direction: `find (s) ↓`, for table
/// rows and chart labels that have no room to say it in words.
pub fn headed(name: &str, unit: &str, direction: Direction) -> String {
    format!("{} {}", human(name, unit), arrow(direction))
}

/// `↓` where lower is better, `↑` where higher is; legends say what they mean.
pub fn arrow(direction: Direction) -> &'static str {
    match direction {
        Direction::HigherIsBetter => "↑",
        Direction::LowerIsBetter => "↓",
    }
}

/// The better direction in words, where there is room for them.
pub fn better(direction: Direction) -> &'static str {
    match direction {
        Direction::HigherIsBetter => "higher is better",
        Direction::LowerIsBetter => "lower is better",
    }
}

/// What the arrows mean, for legends.
pub const ARROWS: &str = "↓ = lower is better, ↑ = higher is better";

/// The name without an ending that restates its unit, and that unit
/// (empty when the name has no such ending).
fn split_unit(name: &str) -> (&str, &'static str) {
    UNIT_SUFFIXES
        .iter()
        .find_map(|&(suffix, unit)| {
            let base = name.strip_suffix(suffix)?;
            (!base.is_empty()).then_some((base, unit))
        })
        .unwrap_or((name, ""))
}

/// The readable name of `name`, whose unit-free part is `base`: a name of
/// `NAMES` (the whole name first: `mib_per_s` is a name, not a unit), a
/// tree's user command `cmd2` as "command 2", or else the base with spaces
/// for underscores.
fn label(name: &str, base: &str) -> String {
    let known = |raw: &str| NAMES.iter().find(|(n, _)| *n == raw).map(|(_, h)| *h);
    if let Some(human) = known(name).or_else(|| known(base)) {
        return human.to_string();
    }
    if let Some(n) = base
        .strip_prefix("cmd")
        .filter(|n| n.parse::<u32>().is_ok())
    {
        return format!("command {n}");
    }
    base.replace('_', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every metric fsbench emits, with its unit, as the views show it.
    const EMITTED: &[(&str, &str, &str)] = &[
        // bonnie
        ("putc", "MiB/s", "sequential write per char (MiB/s)"),
        ("put_block", "MiB/s", "sequential write (MiB/s)"),
        ("rewrite", "MiB/s", "sequential rewrite (MiB/s)"),
        ("getc", "MiB/s", "sequential read per char (MiB/s)"),
        ("get_block", "MiB/s", "sequential read (MiB/s)"),
        ("seeks", "seeks/s", "random seeks (seeks/s)"),
        ("seq_create", "files/s", "sequential create (files/s)"),
        ("seq_stat", "files/s", "sequential stat (files/s)"),
        ("seq_del", "files/s", "sequential delete (files/s)"),
        ("ran_create", "files/s", "random create (files/s)"),
        ("ran_stat", "files/s", "random stat (files/s)"),
        ("ran_del", "files/s", "random delete (files/s)"),
        // postmark
        (
            "transactions",
            "transactions/s",
            "transactions (transactions/s)",
        ),
        ("create", "files/s", "create (files/s)"),
        ("create_alone", "files/s", "create alone (files/s)"),
        (
            "create_mixed",
            "files/s",
            "create in transactions (files/s)",
        ),
        ("read", "files/s", "read (files/s)"),
        ("append", "files/s", "append (files/s)"),
        ("delete", "files/s", "delete (files/s)"),
        ("delete_alone", "files/s", "delete alone (files/s)"),
        (
            "delete_mixed",
            "files/s",
            "delete in transactions (files/s)",
        ),
        ("data_read", "MiB/s", "data read (MiB/s)"),
        ("data_written", "MiB/s", "data written (MiB/s)"),
        // tree: every operation's time, MB/s and entries/s
        ("find_s", "s", "find (s)"),
        ("stat_entries_s", "entries/s", "stat (entries/s)"),
        ("read_mb_s", "MB/s", "read (MB/s)"),
        ("concat_s", "s", "concat (s)"),
        ("untar_s", "s", "untar (s)"),
        ("copy_mb_s", "MB/s", "copy (MB/s)"),
        ("cmd1_s", "s", "command 1 (s)"),
        ("cmd12_entries_s", "entries/s", "command 12 (entries/s)"),
        ("stream_write_s", "s", "stream write (s)"),
        ("stream_read_mb_s", "MB/s", "stream read (MB/s)"),
        ("delete_s", "s", "delete (s)"),
        ("generate_s", "s", "dataset generation (s)"),
        ("copy_sync_s", "s", "copy's closing sync (s)"),
        ("generate_space", "×", "dataset space on disk (×)"),
        ("copy_space", "×", "copy space on disk (×)"),
        ("untar_space", "×", "untar space on disk (×)"),
        ("concat_space", "×", "concat space on disk (×)"),
        (
            "generate_inodes_per_entry",
            "inodes/entry",
            "dataset inodes (inodes/entry)",
        ),
        (
            "copy_inodes_per_entry",
            "inodes/entry",
            "copy inodes (inodes/entry)",
        ),
        (
            "untar_inodes_per_entry",
            "inodes/entry",
            "untar inodes (inodes/entry)",
        ),
        // io and vdbench
        ("io_rate", "IO/s", "I/O rate (IO/s)"),
        ("mib_per_s", "MiB/s", "throughput (MiB/s)"),
        ("resp_ms", "ms", "response (ms)"),
        ("read_resp_ms", "ms", "read response (ms)"),
        ("write_resp_ms", "ms", "write response (ms)"),
        ("resp_max_ms", "ms", "max response (ms)"),
        ("resp_stddev_ms", "ms", "response std dev (ms)"),
        ("sync_s", "s", "closing fsync (s)"),
        // meta
        ("create_ops_s", "ops/s", "create (ops/s)"),
        ("rename_ops_s", "ops/s", "rename (ops/s)"),
        ("chmod_ops_s", "ops/s", "chmod (ops/s)"),
        ("setxattr_ops_s", "ops/s", "setxattr (ops/s)"),
        ("getxattr_ops_s", "ops/s", "getxattr (ops/s)"),
        ("symlink_ops_s", "ops/s", "symlink (ops/s)"),
        ("link_ops_s", "ops/s", "link (ops/s)"),
        ("readdir_stat_ops_s", "ops/s", "readdir stat (ops/s)"),
        ("truncate_ops_s", "ops/s", "truncate (ops/s)"),
        ("unlink_ops_s", "ops/s", "unlink (ops/s)"),
        // durability
        ("fsync_overwrite", "writes/s", "fsync overwrite (writes/s)"),
        (
            "fdatasync_overwrite",
            "writes/s",
            "fdatasync overwrite (writes/s)",
        ),
        ("fsync_append", "writes/s", "fsync append (writes/s)"),
        (
            "fdatasync_append",
            "writes/s",
            "fdatasync append (writes/s)",
        ),
        ("osync_write", "writes/s", "O_SYNC write (writes/s)"),
        ("odsync_write", "writes/s", "O_DSYNC write (writes/s)"),
        // sync log
        ("sync_log_records", "records/s", "sync log (records/s)"),
        ("sync_log_syncs", "syncs/s", "sync log (syncs/s)"),
    ];

    #[test]
    fn every_emitted_metric_has_a_readable_name() {
        for &(name, unit, expected) in EMITTED {
            assert_eq!(human(name, unit), expected, "{name}");
        }
    }

    #[test]
    fn unknown_names_drop_the_unit_ending_and_underscores() {
        assert_eq!(human("fsck_time_s", "s"), "fsck time (s)");
        assert_eq!(human("lookups_per_s", "lookups/s"), "lookups (lookups/s)");
        assert_eq!(human("open_ms", "ms"), "open (ms)");
        assert_eq!(human("scan_mb_s", "MB/s"), "scan (MB/s)");
        // Without a unit, the ending says it.
        assert_eq!(human("scan_mb_s", ""), "scan (MB/s)");
        assert_eq!(human("widgets", ""), "widgets");
    }

    #[test]
    fn headed_names_carry_the_better_direction() {
        assert_eq!(
            headed("find_s", "s", Direction::LowerIsBetter),
            "find (s) ↓"
        );
        assert_eq!(
            headed("put_block", "MiB/s", Direction::HigherIsBetter),
            "sequential write (MiB/s) ↑"
        );
    }
}

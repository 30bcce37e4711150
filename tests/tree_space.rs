//! Space on disk per logical byte (`storage::space`): on a real ext4 of
//! 4 KiB blocks, made and mounted by the test on a loop device, a tree of
//! many 100-byte files takes a block each (tens of bytes on disk per
//! byte), a few multi-MiB files take about what they hold; the readings
//! around each operation are in the result, and nothing next to the
//! scratch directory is touched. Root only.
mod common;

use std::path::{Path, PathBuf};

use common::{LoopDevice, Sentinel, assert_no_scratch_left, metric_named, read_json, run};
use serde_json::Value;

/// An ext4 file system (4 KiB blocks, no inline data: a small file takes
/// a block) on a loop device, mounted; taken down on Drop. None (after
/// saying why) when not root.
fn ext4(size: &str) -> Option<(LoopDevice, PathBuf)> {
    let mut disk = LoopDevice::new(size)?;
    disk.mkfs_with("ext4", &["-b", "4096", "-O", "^inline_data"]);
    let mnt = disk.mount();
    Some((disk, mnt))
}

/// `fsbench tree MNT ARGS... --json FILE` (quiet), asserted successful;
/// its one workload result.
fn tree(mnt: &Path, args: &[&str]) -> Value {
    let outside = tempfile::tempdir().unwrap();
    let json = outside.path().join("r.json");
    let mut all = vec!["tree", mnt.to_str().unwrap(), "-q"];
    all.extend(args);
    all.extend(["--json", json.to_str().unwrap()]);
    run(&all).assert_success().assert_no_panic();
    read_json(&json)["targets"][0]["workloads"][0].clone()
}

fn value(result: &Value, name: &str) -> f64 {
    metric_named(result, name)["value"].as_f64().unwrap()
}

/// The readings of operation `op` in the result's parameters: the growth
/// of used bytes and inodes, and the logical bytes and entries.
fn readings(result: &Value, op: &str) -> (u64, u64, u64, u64) {
    let space = &result["params"]["space"][op];
    let at = |when: &str, what: &str| space[when][what].as_u64().unwrap();
    let grew = |what| at("after", what) - at("before", what);
    (
        grew("bytes"),
        grew("inodes"),
        space["logical_bytes"].as_u64().unwrap(),
        space["entries"].as_u64().unwrap(),
    )
}

#[test]
fn many_100_byte_files_take_a_block_each_on_ext4() {
    let Some((_disk, mnt)) = ext4("128m") else {
        return;
    };
    // The user's tree (outside the target, only read): 2000 files of
    // 100 bytes in 20 directories.
    let source = tempfile::tempdir().unwrap();
    for d in 0..20 {
        let dir = source.path().join(format!("d{d}"));
        std::fs::create_dir(&dir).unwrap();
        for f in 0..100 {
            std::fs::write(dir.join(format!("f{f}")), [b'x'; 100]).unwrap();
        }
    }
    let result = tree(
        &mnt,
        &["--source", source.path().to_str().unwrap(), "--ops", "copy"],
    );
    let space = value(&result, "copy_space");
    // 4096 bytes on disk for each 100: about 41 (a few directory blocks
    // more), far from 1.
    assert!(space > 10.0 && space < 60.0, "copy_space {space}");
    let metric = metric_named(&result, "copy_space");
    assert_eq!(metric["unit"], "×");
    assert_eq!(metric["direction"], "lower_is_better");
    assert!(metric["detail"].is_null(), "a headline: {metric}");
    // The ratio is the readings' growth over the bytes the copy wrote.
    let (bytes, inodes, logical, entries) = readings(&result, "copy");
    assert_eq!((logical, entries), (200_000, 2020));
    assert!((space - bytes as f64 / logical as f64).abs() < 1e-9);
    // One inode per file and directory made.
    assert_eq!(inodes, 2020);
    assert_eq!(value(&result, "copy_inodes_per_entry"), 1.0);
    assert_eq!(
        metric_named(&result, "copy_inodes_per_entry")["detail"],
        true
    );
    // A user's tree is not generated: no dataset figure.
    assert!(result["params"]["space"]["generate"].is_null());
}

#[test]
fn a_few_multi_mib_files_take_about_what_they_hold_on_ext4() {
    let Some((_disk, mnt)) = ext4("384m") else {
        return;
    };
    // images at scale 0.01: ten files of 1 to 10 MB, 55 MB; copied and
    // untarred, then concatenated into one file.
    let result = tree(
        &mnt,
        &[
            "--dataset",
            "images",
            "--scale",
            "0.01",
            "--ops",
            "copy,untar,concat",
        ],
    );
    for op in ["generate", "copy", "untar", "concat"] {
        let space = value(&result, &format!("{op}_space"));
        assert!((0.95..1.2).contains(&space), "{op}_space {space}");
        let (bytes, _, logical, _) = readings(&result, op);
        assert!(logical >= 50_000_000, "{op}: {logical} logical bytes");
        assert!((space - bytes as f64 / logical as f64).abs() < 1e-9);
        // Shown in the tables, not folded away with the details.
        assert!(metric_named(&result, &format!("{op}_space"))["detail"].is_null());
    }
    // concat makes no entry during its phase: no inode figure.
    let names: Vec<&str> = result["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert!(!names.contains(&"concat_inodes_per_entry"), "{names:?}");
    assert!(names.contains(&"generate_inodes_per_entry"), "{names:?}");
    // The dataset's time stays a detail; its space is a headline.
    assert_eq!(metric_named(&result, "generate_s")["detail"], true);
}

#[test]
fn the_readings_leave_what_is_next_to_the_scratch_directory_alone() {
    let Some((_disk, mnt)) = ext4("64m") else {
        return;
    };
    let sentinel = Sentinel::plant(&mnt);
    let result = tree(
        &mnt,
        &[
            "--dataset",
            "source",
            "--scale",
            "0.01",
            "--ops",
            "copy,untar,delete",
        ],
    );
    assert!(value(&result, "copy_space") > 1.0);
    sentinel.assert_intact();
    assert_no_scratch_left(&mnt);
}

//! `fsbench tree`: the generator is deterministic, and each operation does
//! what it claims: the copy is identical (data, modes, times, symlinks,
//! xattrs), delete leaves nothing, untar matches the tar's listing,
//! concat's size is the sum, `--source` is never written, `--cmd` runs the
//! user's command.
//! Every test runs on its own tmpfs (root only).
mod common;

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use common::{
    TmpfsMount, assert_no_scratch_left, read_json, run, scratch_dirs, tmpfs_with_sentinel,
    tree_cmd_args,
};

/// One line per entry under `root`: kind, mode, size, mtime (ns) and a
/// hash of the data (or the link target).
fn tree_digest(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    collect(root, root, &mut out);
    out
}

fn collect(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let rel = path.strip_prefix(root).unwrap().display().to_string();
        let times = format!("{}.{:09}", meta.mtime(), meta.mtime_nsec());
        let mode = meta.permissions().mode() & 0o7777;
        let line = if meta.file_type().is_symlink() {
            format!("link -> {}", std::fs::read_link(&path).unwrap().display())
        } else if meta.is_dir() {
            collect(root, &path, out);
            format!("dir {mode:o} {times}{}", xattrs(&path))
        } else {
            let data = std::fs::read(&path).unwrap();
            let (len, hash) = (data.len(), fnv(&data));
            format!("file {mode:o} {len} {times} {hash:016x}{}", xattrs(&path))
        };
        out.insert(rel, line);
    }
}

/// ` name=value` for each extended attribute of `path`.
fn xattrs(path: &Path) -> String {
    let mut names = vec![0; 64 << 10];
    let len = rustix::fs::listxattr(path, &mut names).unwrap();
    let mut text = String::new();
    for name in names[..len].split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let name = std::str::from_utf8(name).unwrap();
        let mut value = vec![0; 64 << 10];
        let n = rustix::fs::getxattr(path, name, &mut value).unwrap();
        text.push_str(&format!(" {name}={}", String::from_utf8_lossy(&value[..n])));
    }
    text
}

fn fnv(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// Runs `fsbench tree MNT ARGS... --keep --json FILE`, asserts success,
/// and returns the repetition directory it kept and the JSON.
fn kept_run(mnt: &TmpfsMount, args: &[&str]) -> (PathBuf, serde_json::Value) {
    let outside = tempfile::tempdir().unwrap();
    let json = outside.path().join("r.json");
    let mut all = vec!["tree", mnt.path().to_str().unwrap(), "--keep", "-q"];
    all.extend(args);
    all.extend(["--json", json.to_str().unwrap()]);
    let out = run(&all);
    out.assert_success().assert_no_panic();
    let scratch = scratch_dirs(mnt.path())
        .pop()
        .expect("--keep keeps the scratch dir");
    (scratch.join("r0"), read_json(&json))
}

fn workload(json: &serde_json::Value) -> &serde_json::Value {
    &json["targets"][0]["workloads"][0]
}

fn metric<'a>(json: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    workload(json)["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no metric {name} in {json:#}"))
}

/// Removes a kept scratch directory (so the mount can be reused).
fn remove_scratch(mnt: &TmpfsMount) {
    for dir in scratch_dirs(mnt.path()) {
        std::fs::remove_dir_all(dir).unwrap();
    }
}

#[test]
fn same_seed_same_tree_other_seed_other_tree() {
    let Some(mnt) = TmpfsMount::new("256m") else {
        return;
    };
    let args = ["--dataset", "source", "--scale", "0.01", "--ops", "find"];
    let digest_of = |seed: &str| {
        let mut all = args.to_vec();
        all.extend(["--seed", seed]);
        let (rep, json) = kept_run(&mnt, &all);
        let digest = tree_digest(&rep.join("src"));
        let description = &workload(&json)["params"]["description"];
        assert_eq!(description["entries"], digest.len() as u64);
        let files = digest.values().filter(|l| l.starts_with("file")).count();
        assert_eq!(description["files"], files as u64);
        assert_eq!(metric(&json, "find_s")["samples"], digest.len() as u64);
        remove_scratch(&mnt);
        digest
    };
    let first = digest_of("7");
    assert!(first.len() > 250, "{} entries", first.len());
    assert_eq!(first, digest_of("7"), "same seed, different tree");
    assert_ne!(first, digest_of("8"), "another seed, same tree");
}

#[test]
fn copy_is_identical_and_delete_removes_it() {
    let Some(mnt) = TmpfsMount::new("256m") else {
        return;
    };
    let (rep, json) = kept_run(&mnt, &["--scale", "0.002", "--ops", "copy"]);
    let src = tree_digest(&rep.join("src"));
    assert!(src.len() > 20);
    assert_eq!(src, tree_digest(&rep.join("copy")));
    let bytes = workload(&json)["params"]["description"]["bytes"]
        .as_u64()
        .unwrap();
    assert_eq!(metric(&json, "copy_mb_s")["samples"], bytes);
    assert_eq!(metric(&json, "copy_entries_s")["samples"], src.len() as u64);
    remove_scratch(&mnt);

    let (rep, json) = kept_run(&mnt, &["--scale", "0.002", "--ops", "copy,delete"]);
    assert!(!rep.join("copy").exists(), "delete left the copy");
    assert_eq!(tree_digest(&rep.join("src")).len(), src.len());
    // Every entry of the copy plus the copy's top directory.
    assert_eq!(metric(&json, "delete_s")["samples"], src.len() as u64 + 1);
}

#[test]
fn untar_matches_the_tar_listing_and_the_data() {
    let Some(mnt) = TmpfsMount::new("256m") else {
        return;
    };
    let (rep, _) = kept_run(
        &mnt,
        &["--dataset", "source", "--scale", "0.005", "--ops", "untar"],
    );
    let listing = std::process::Command::new("tar")
        .arg("tf")
        .arg(rep.join("tree.tar"))
        .output()
        .unwrap();
    assert!(listing.status.success());
    let mut listed: Vec<String> = String::from_utf8(listing.stdout)
        .unwrap()
        .lines()
        .map(|l| l.trim_end_matches('/').to_string())
        .collect();
    listed.sort();
    let extracted = tree_digest(&rep.join("untar"));
    assert_eq!(listed, extracted.keys().cloned().collect::<Vec<_>>());
    assert_eq!(extracted, tree_digest(&rep.join("src")));
}

#[test]
fn concat_size_is_the_sum_of_the_files() {
    let Some(mnt) = TmpfsMount::new("256m") else {
        return;
    };
    let (rep, json) = kept_run(
        &mnt,
        &[
            "--dataset",
            "maildir",
            "--scale",
            "0.002",
            "--ops",
            "concat",
        ],
    );
    let sum: u64 = tree_digest(&rep.join("src"))
        .values()
        .filter_map(|l| l.strip_prefix("file "))
        .map(|l| l.split(' ').nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(
        std::fs::metadata(rep.join("concat.out")).unwrap().len(),
        sum
    );
    assert_eq!(metric(&json, "concat_mb_s")["samples"], sum);
    assert_eq!(metric(&json, "concat_s")["samples"], 600);
}

/// A small user tree with a symlink, odd modes, an empty directory and
/// extended attributes (`trusted.*`: tmpfs has them, for root).
fn user_tree(dir: &Path) {
    std::fs::create_dir_all(dir.join("a/b/empty")).unwrap();
    std::fs::write(dir.join("a/one.txt"), b"one\n").unwrap();
    std::fs::write(dir.join("a/b/two.bin"), vec![7u8; 300_000]).unwrap();
    std::fs::set_permissions(
        dir.join("a/b/two.bin"),
        std::fs::Permissions::from_mode(0o640),
    )
    .unwrap();
    std::fs::set_permissions(dir.join("a/b"), std::fs::Permissions::from_mode(0o750)).unwrap();
    std::os::unix::fs::symlink("../one.txt", dir.join("a/b/link")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", dir.join("outside")).unwrap();
    for (path, value) in [("a/one.txt", "file"), ("a/b", "dir")] {
        let flags = rustix::fs::XattrFlags::empty();
        rustix::fs::setxattr(dir.join(path), "trusted.fsbench", value.as_bytes(), flags).unwrap();
    }
}

#[test]
fn source_is_only_read_and_copied_faithfully() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("256m") else {
        return;
    };
    let source_mnt = TmpfsMount::new("64m").unwrap();
    let source = source_mnt.join("mine");
    user_tree(&source);
    let before = tree_digest(&source);
    let (rep, json) = kept_run(
        &mnt,
        &[
            "--source",
            source.to_str().unwrap(),
            // No delete: fsbench's own copy stays to be compared.
            "--ops",
            "find,read,untar,copy",
            "--cmd",
            "cp -a {src}/. {dst}/",
        ],
    );
    assert_eq!(before, tree_digest(&source), "the source changed");
    assert_eq!(
        before,
        tree_digest(&rep.join("copy")),
        "fsbench's copy differs from its source"
    );
    assert_eq!(
        before,
        tree_digest(&rep.join("cmd1")),
        "cp -a differs (test bug?)"
    );
    // A tar keeps whole seconds only (as GNU tar's default format does).
    assert_eq!(before.len(), tree_digest(&rep.join("untar")).len());
    assert!(!rep.join("src").exists(), "a source run generates nothing");
    assert_eq!(metric(&json, "cmd1_s")["samples"], before.len() as u64);
    assert_eq!(metric(&json, "read_mb_s")["samples"], 300_004);
    sentinel.assert_intact();

    // Without --keep: the copy compared through delete's count, and nothing left.
    remove_scratch(&mnt);
    let out = run(&[
        "tree",
        &mnt.arg(),
        "--source",
        source.to_str().unwrap(),
        "-q",
    ]);
    out.assert_success();
    assert_eq!(before, tree_digest(&source));
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

#[test]
fn every_operation_reports_its_metrics_and_the_cache_policy() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("256m") else {
        return;
    };
    let outside = tempfile::tempdir().unwrap();
    let json_path = outside.path().join("r.json");
    let out = run(&[
        "tree",
        &mnt.arg(),
        "--scale",
        "0.002",
        "--repeat",
        "2",
        "--cmd",
        "true {src} {dst}",
        "--json",
        json_path.to_str().unwrap(),
    ]);
    out.assert_success().assert_no_panic();
    assert_eq!(out.stderr, "", "{out}");
    // Each row named as every view names the operation.
    for op in [
        "dataset generation",
        "find",
        "stat",
        "read",
        "concat",
        "untar",
        "copy",
        "command 1",
        "stream write",
        "delete",
    ] {
        assert!(
            out.stdout.contains(&format!("| {op} ")),
            "no row {op}\n{out}"
        );
    }
    let json = read_json(&json_path);
    let workloads = json["targets"][0]["workloads"].as_array().unwrap();
    assert_eq!(workloads.len(), 2);
    for name in [
        "find_entries_s",
        "read_mb_s",
        "copy_s",
        "untar_mb_s",
        "stream_read_mb_s",
        "delete_entries_s",
    ] {
        let m = metric(&json, name);
        assert!(m["value"].as_f64().unwrap() > 0.0, "{name}: {m}");
        assert!(m["cpu_percent"].is_number(), "{name}: {m}");
    }
    assert!(
        metric(&json, "read_s")["latency"]["count"]
            .as_u64()
            .unwrap()
            > 0
    );
    // The stream: one latency sample per 1 MiB block, each way.
    let stream_bytes = workload(&json)["params"]["stream_bytes"].as_u64().unwrap();
    for name in ["stream_write_s", "stream_read_s"] {
        let count = &metric(&json, name)["latency"]["count"];
        assert_eq!(count, stream_bytes.div_ceil(1 << 20), "{name}");
    }
    // On tmpfs every read is a memory read, dropped caches or not.
    let flags = metric(&json, "read_s")["flags"].as_array().unwrap();
    assert!(flags.iter().any(|f| f == "fits_in_page_cache"), "{flags:?}");
    assert_eq!(workload(&json)["params"]["caches_dropped"], true);
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

#[test]
fn a_failing_command_fails_the_run_and_cleans_up() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("128m") else {
        return;
    };
    let out = run(&tree_cmd_args(&mnt.arg(), "exit 3"));
    out.assert_error(1, &["exit 3", "exit status: 3"]);
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

#[test]
fn threads_give_the_same_results() {
    let Some(mnt) = TmpfsMount::new("256m") else {
        return;
    };
    let ops = ["--dataset", "source", "--scale", "0.01", "--threads", "3"];
    let mut args = ops.to_vec();
    args.extend(["--ops", "find,stat,read,copy"]);
    let (rep, json) = kept_run(&mnt, &args);
    let src = tree_digest(&rep.join("src"));
    assert_eq!(src, tree_digest(&rep.join("copy")));
    let description = &workload(&json)["params"]["description"];
    assert_eq!(metric(&json, "find_s")["samples"], src.len() as u64);
    assert_eq!(metric(&json, "stat_s")["samples"], src.len() as u64);
    // One lstat timed per entry; find makes no system call per entry.
    assert_eq!(
        metric(&json, "stat_s")["latency"]["count"],
        src.len() as u64
    );
    assert!(metric(&json, "find_s")["latency"].is_null());
    assert_eq!(metric(&json, "read_mb_s")["samples"], description["bytes"]);
    assert_eq!(metric(&json, "copy_s")["samples"], src.len() as u64);
    assert_eq!(workload(&json)["params"]["threads"], 3);
    remove_scratch(&mnt);

    let mut args = ops.to_vec();
    args.extend(["--ops", "delete"]);
    let (rep, json) = kept_run(&mnt, &args);
    assert!(!rep.join("copy").exists(), "delete left the copy");
    assert_eq!(metric(&json, "delete_s")["samples"], src.len() as u64 + 1);
}

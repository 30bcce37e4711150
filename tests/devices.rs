//! Device counters per phase on real loop devices: `fsbench io` on a loop
//! ext4 reads /proc/diskstats around its measured window, and its figures
//! carry what the loop device did. A cold read moves the device's read
//! counter by the bytes read and is not flagged; a hot read is flagged
//! served_from_cache with the counters that raised it; a buffered write
//! without sync is flagged not_yet_on_device. tmpfs has no device (and
//! keeps the size guess). A loop ext4 whose image lives on another loop
//! ext4 resolves to both loop devices. Needs root (skips otherwise).
mod common;

use std::path::Path;

use common::{
    LoopDevice, Sentinel, TmpfsMount, assert_no_scratch_left, page_cache_lock, read_json, run,
};
use serde_json::Value;

const MIB: f64 = (1u64 << 20) as f64;

/// A mounted loop ext4 of `size`, with a sentinel beside the scratch.
fn loop_ext4(size: &str) -> Option<(LoopDevice, std::path::PathBuf, Sentinel)> {
    let mut device = LoopDevice::new(size)?;
    device.mkfs("ext4");
    let mnt = device.mount();
    let sentinel = Sentinel::plant(&mnt);
    Some((device, mnt, sentinel))
}

/// `fsbench io DIR ARGS --json J`: the result (J is written outside DIR).
fn io_json(dir: &Path, args: &str) -> Value {
    let json_dir = tempfile::tempdir().unwrap();
    let json = json_dir.path().join("result.json");
    let mut full = vec!["io".to_string(), dir.display().to_string()];
    full.extend(args.split_whitespace().map(str::to_string));
    full.extend(["--json".to_string(), json.display().to_string()]);
    let out = run(&full);
    out.assert_success().assert_no_panic();
    let result = read_json(&json);
    assert_no_scratch_left(dir);
    result
}

/// The first metric of the only workload, with its name.
fn rate(result: &Value, name: &str) -> Value {
    let workload = &result["targets"][0]["workloads"][0];
    let metrics = workload["metrics"].as_array().unwrap();
    let metric = metrics.iter().find(|m| m["name"] == name);
    metric
        .unwrap_or_else(|| panic!("no {name} in {workload:#}"))
        .clone()
}

/// The metric's flags but those of the machine's noise (`busy_host`,
/// `disturbed`), which say what else ran beside the test, not what the
/// device did (tests/noise.rs tests those).
fn flags(metric: &Value) -> Vec<String> {
    let flags = metric["flags"].as_array().unwrap();
    flags
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .filter(|f| f != "busy_host" && f != "disturbed")
        .collect()
}

fn bytes(value: &Value) -> f64 {
    value
        .as_u64()
        .unwrap_or_else(|| panic!("not bytes: {value}")) as f64
}

/// The result's devices: (name, counted).
fn devices(result: &Value) -> Vec<(String, bool)> {
    let env = &result["targets"][0]["env"];
    let Some(devices) = env["devices"].as_array() else {
        return Vec::new();
    };
    devices
        .iter()
        .map(|d| {
            let name = d["name"].as_str().unwrap().to_string();
            (name, d["counted"].as_bool().unwrap())
        })
        .collect()
}

fn loop_name(device: &LoopDevice) -> String {
    device.device.trim_start_matches("/dev/").to_string()
}

#[test]
fn a_cold_sequential_read_moves_the_device_by_the_bytes_read_and_is_not_flagged() {
    let _cache = page_cache_lock();
    let Some((device, mnt, sentinel)) = loop_ext4("256m") else {
        return;
    };
    // One pass over 64 MiB after io's own cache drop (fsync + DONTNEED).
    let result = io_json(
        &mnt,
        "-s 64m -b 1m --seek eof --read 100 --warmup 0 --interval 0.2s -q",
    );
    let listed = devices(&result);
    assert_eq!(listed[0], (loop_name(&device), true), "{listed:?}");
    assert!(
        listed.iter().skip(1).all(|(_, counted)| !counted),
        "the backing file's disk is evidence, not counted: {listed:?}"
    );
    let env_devices = result["targets"][0]["env"]["devices"].as_array().unwrap();
    assert!(
        env_devices
            .iter()
            .any(|d| d["backing"] == true && d["counted"] == false),
        "the disk under the image is marked: {env_devices:?}"
    );
    let metric = rate(&result, "mib_per_s");
    let evidence = &metric["device"];
    let read = bytes(&evidence["workload_read_bytes"]);
    let device_read = bytes(&evidence["read_bytes"]);
    assert_eq!(read, 64.0 * MIB, "{metric:#}");
    assert!(
        (device_read - read).abs() <= 0.1 * read,
        "the loop device read {device_read} bytes for {read}: {metric:#}"
    );
    let ratio = evidence["read_ratio"].as_f64().unwrap();
    assert!((0.9..=1.1).contains(&ratio), "{ratio}");
    // The host's cache of the image was dropped too: the disk under it
    // read the bytes (and maybe others' reads: never less).
    let disk_read = bytes(&evidence["backing_read_bytes"]);
    assert!(disk_read >= 0.9 * read, "{metric:#}");
    assert!(bytes(&evidence["ops"]) > 0.0);
    assert!(
        evidence["util_percent"].as_f64().unwrap() > 0.0,
        "{evidence}"
    );
    let flags = flags(&metric);
    assert!(
        !flags
            .iter()
            .any(|f| f == "served_from_cache" || f == "fits_in_page_cache"),
        "read from the device, and the counters say so: {flags:?}"
    );
    sentinel.assert_intact();
}

#[test]
fn a_hot_read_is_flagged_served_from_cache_with_the_counters() {
    let _cache = page_cache_lock();
    let Some((_device, mnt, sentinel)) = loop_ext4("256m") else {
        return;
    };
    // Sequential passes over 64 MiB: the first (in the 1 s warm-up) reads
    // it into the page cache, the measured ones read it from there.
    let json_dir = tempfile::tempdir().unwrap();
    let json = json_dir.path().join("r.json");
    let out = run(&[
        "io",
        mnt.to_str().unwrap(),
        "-s",
        "64m",
        "-b",
        "1m",
        "--seek",
        "0",
        "--read",
        "100",
        "--warmup",
        "1s",
        "--interval",
        "0.25s",
        "--duration",
        "1s",
        "--json",
        json.to_str().unwrap(),
    ]);
    out.assert_success().assert_no_panic();
    let result = read_json(&json);
    let metric = rate(&result, "mib_per_s");
    let evidence = &metric["device"];
    let read = bytes(&evidence["workload_read_bytes"]);
    assert!(read > 64.0 * MIB, "more than one pass measured: {metric:#}");
    assert!(bytes(&evidence["read_bytes"]) < 0.1 * read, "{metric:#}");
    assert_eq!(flags(&metric), ["served_from_cache"], "{metric:#}");
    // The note names the counters that read less: "the device read 12.0
    // KiB of the 1.2 GiB read", or the disk under the image when the
    // loop device's own reads (its readahead) were more.
    let report = run(&["report", json.to_str().unwrap()]);
    report.assert_success();
    let counted = [
        "the device read",
        "the disk under the loop device's image read",
    ];
    assert!(
        counted.iter().any(|c| report
            .stdout
            .contains(&format!("served from the page cache: {c}")))
            && report.stdout.contains("iB read"),
        "{report}"
    );
    assert!(
        report.stdout.contains("dev "),
        "a dev % beside the figure: {report}"
    );
    assert_no_scratch_left(&mnt);
    sentinel.assert_intact();
}

#[test]
fn a_buffered_write_without_sync_is_not_yet_on_the_device() {
    let _cache = page_cache_lock();
    let Some((_device, mnt, sentinel)) = loop_ext4("256m") else {
        return;
    };
    let result = io_json(
        &mnt,
        "-s 64m -b 1m --seek 0 --read 0 --warmup 0 --interval 0.25s --duration 1s --no-end-sync -q",
    );
    let metric = rate(&result, "mib_per_s");
    let evidence = &metric["device"];
    let written = bytes(&evidence["workload_written_bytes"]);
    assert!(written >= 64.0 * MIB, "{metric:#}");
    assert!(
        bytes(&evidence["written_bytes"]) < 0.5 * written,
        "{metric:#}"
    );
    let flags = flags(&metric);
    assert!(flags.iter().any(|f| f == "not_yet_on_device"), "{flags:?}");
    assert!(
        !flags.iter().any(|f| f == "writes_cached"),
        "replaced: {flags:?}"
    );
    // With O_DIRECT the same writes reach the device inside the phase.
    let direct = io_json(
        &mnt,
        "-s 64m -b 1m --seek 0 --read 0 --warmup 0 --interval 0.25s --duration 1s --direct -q",
    );
    let metric = rate(&direct, "mib_per_s");
    let ratio = metric["device"]["write_ratio"].as_f64().unwrap();
    assert!(ratio > 0.9, "{metric:#}");
    assert!(flags_of_none(&metric), "{metric:#}");
    sentinel.assert_intact();
}

fn flags_of_none(metric: &Value) -> bool {
    !flags(metric).iter().any(|f| f == "not_yet_on_device")
}

#[test]
fn tmpfs_has_no_device_and_keeps_the_size_guess() {
    let Some(mnt) = TmpfsMount::new("128m") else {
        return;
    };
    let sentinel = Sentinel::plant(mnt.path());
    let result = io_json(mnt.path(), "-s 16m -b 1m --seek eof --warmup 0 -q");
    assert!(devices(&result).is_empty(), "no device");
    let metric = rate(&result, "mib_per_s");
    assert!(metric.get("device").is_none(), "{metric:#}");
    let flags = flags(&metric);
    assert!(flags.iter().any(|f| f == "fits_in_page_cache"), "{flags:?}");
    assert!(!flags.iter().any(|f| f == "served_from_cache"), "{flags:?}");
    let env = run(&["env", mnt.path().to_str().unwrap()]);
    env.assert_success();
    assert!(
        env.stdout.contains("counters of:") && env.stdout.contains("no device"),
        "{env}"
    );
    sentinel.assert_intact();
}

#[test]
fn a_loop_ext4_on_a_loop_ext4_resolves_to_both_loop_devices() {
    let Some((outer, outer_mnt, sentinel)) = loop_ext4("256m") else {
        return;
    };
    let Some(mut inner) = LoopDevice::new_in(&outer_mnt, "64m") else {
        return;
    };
    inner.mkfs("ext4");
    let inner_mnt = inner.mount();
    let json_dir = tempfile::tempdir().unwrap();
    let json = json_dir.path().join("env.json");
    let out = run(&[
        "env",
        inner_mnt.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    out.assert_success();
    let listed = devices(&read_json(&json));
    assert_eq!(listed[0], (loop_name(&inner), true), "{listed:?}");
    assert!(
        listed.contains(&(loop_name(&outer), false)),
        "the image's loop device beneath: {listed:?}"
    );
    // And the disk under /var/tmp beneath that: three levels.
    assert!(listed.len() >= 3, "{listed:?}");
    drop(inner);
    sentinel.assert_intact();
}

/// `fsbench tree MNT --scale 0.005 --ops OPS EXTRA`: its result.
fn tree_json(mnt: &Path, ops: &str, extra: &[&str]) -> Value {
    let json_dir = tempfile::tempdir().unwrap();
    let json = json_dir.path().join("tree.json");
    let mut args = vec![
        "tree",
        mnt.to_str().unwrap(),
        "--scale",
        "0.005",
        "--ops",
        ops,
        "-q",
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend(extra);
    run(&args).assert_success().assert_no_panic();
    assert_no_scratch_left(mnt);
    read_json(&json)
}

/// The tree's `read` on a loop ext4: `read_s` with its device counters.
fn tree_read(mnt: &Path, extra: &[&str]) -> Value {
    rate(&tree_json(mnt, "read", extra), "read_s")
}

#[test]
fn a_tree_copy_ends_on_the_device_unless_no_end_sync() {
    let _cache = page_cache_lock();
    let Some((_device, mnt, sentinel)) = loop_ext4("256m") else {
        return;
    };
    let synced = tree_json(&mnt, "copy", &[]);
    let copy = rate(&synced, "copy_s");
    let written = bytes(&copy["device"]["workload_written_bytes"]);
    assert!(written > MIB, "{copy:#}");
    assert!(
        bytes(&copy["device"]["written_bytes"]) >= 0.9 * written,
        "the copy's time includes its trip to the device: {copy:#}"
    );
    let unsynced = ["not_yet_on_device", "writes_cached"];
    assert!(
        !flags(&copy).iter().any(|f| unsynced.contains(&f.as_str())),
        "{copy:#}"
    );
    let sync = rate(&synced, "copy_sync_s");
    assert_eq!(sync["detail"], true, "{sync:#}");
    assert!(
        sync["value"].as_f64().unwrap() <= copy["value"].as_f64().unwrap(),
        "the closing sync is part of the copy's time: {sync:#} {copy:#}"
    );
    // Writing the dataset is timed up to the device too, synced copies
    // cost the device at least their bytes (write amplification >= ~1).
    let generate = rate(&synced, "generate_s");
    let generated = bytes(&generate["device"]["workload_written_bytes"]);
    assert!(
        bytes(&generate["device"]["written_bytes"]) >= 0.9 * generated,
        "{generate:#}"
    );
    assert!(
        flags(&generate).is_empty() || flags(&generate) == ["too_short"],
        "{generate:#}"
    );
    assert!(rate(&synced, "generate_sync_s")["value"].as_f64().unwrap() > 0.0);
    let amplification = copy["device"]["write_amplification"].as_f64().unwrap();
    assert!(amplification >= 0.9, "{copy:#}");
    // --no-end-sync: the page cache's time, flagged from the counters.
    let cached = tree_json(&mnt, "copy", &["--no-end-sync"]);
    let copy = rate(&cached, "copy_s");
    assert!(
        flags(&copy).iter().any(|f| f == "not_yet_on_device"),
        "{copy:#}"
    );
    let metrics = cached["targets"][0]["workloads"][0]["metrics"]
        .as_array()
        .unwrap();
    assert!(!metrics.iter().any(|m| m["name"] == "copy_sync_s"));
    assert!(!metrics.iter().any(|m| m["name"] == "generate_sync_s"));
    assert!(
        copy["device"]["write_amplification"].is_null(),
        "not on the device yet"
    );
    sentinel.assert_intact();
}

#[test]
fn the_tree_workload_gets_the_counters_too_cold_and_hot() {
    let _cache = page_cache_lock();
    let Some((_device, mnt, sentinel)) = loop_ext4("256m") else {
        return;
    };
    // Caches dropped before the read (the tree's default): from the device.
    let cold = tree_read(&mnt, &[]);
    let evidence = &cold["device"];
    let read = bytes(&evidence["workload_read_bytes"]);
    assert!(read > 0.0, "{cold:#}");
    assert!(bytes(&evidence["read_bytes"]) >= 0.9 * read, "{cold:#}");
    assert!(
        !flags(&cold).iter().any(|f| f == "served_from_cache"),
        "{cold:#}"
    );
    // Not dropped: the dataset just written is read from the page cache.
    let hot = tree_read(&mnt, &["--no-drop-caches"]);
    assert!(
        bytes(&hot["device"]["read_bytes"]) < 0.1 * bytes(&hot["device"]["workload_read_bytes"]),
        "{hot:#}"
    );
    assert!(
        flags(&hot).iter().any(|f| f == "served_from_cache"),
        "{hot:#}"
    );
    assert!(
        !flags(&hot).iter().any(|f| f == "fits_in_page_cache"),
        "{hot:#}"
    );
    sentinel.assert_intact();
}

#[test]
fn a_two_device_btrfs_counts_both_devices() {
    common::require_tool("mkfs.btrfs");
    let Some(mut first) = LoopDevice::new("256m") else {
        return;
    };
    let Some(second) = LoopDevice::new("256m") else {
        return;
    };
    let out = std::process::Command::new("mkfs.btrfs")
        .args([
            "-q",
            "-f",
            "-d",
            "raid0",
            "-m",
            "raid1",
            &first.device,
            &second.device,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "mkfs.btrfs: {out:?}");
    let mnt = first.mount();
    let json_dir = tempfile::tempdir().unwrap();
    let json = json_dir.path().join("env.json");
    run(&[
        "env",
        mnt.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ])
    .assert_success();
    let listed = devices(&read_json(&json));
    let mut counted: Vec<String> = listed
        .iter()
        .filter(|(_, counted)| *counted)
        .map(|(name, _)| name.clone())
        .collect();
    counted.sort();
    let mut expected = [loop_name(&first), loop_name(&second)];
    expected.sort();
    assert_eq!(counted, expected, "{listed:?}");
    // io's cold start drops the host's cache of both images (a btrfs's
    // files name no device of their own): its reads reach the disk.
    let _cache = page_cache_lock();
    let result = io_json(
        &mnt,
        "-s 32m -b 1m --seek eof --read 100 --direct --warmup 0 --interval 0.2s -q",
    );
    let metric = rate(&result, "mib_per_s");
    let read = bytes(&metric["device"]["workload_read_bytes"]);
    assert!(
        bytes(&metric["device"]["backing_read_bytes"]) >= 0.9 * read,
        "{metric:#}"
    );
    assert!(
        !flags(&metric).iter().any(|f| f == "served_from_cache"),
        "{metric:#}"
    );
    first.unmount();
}

#[test]
fn env_says_what_the_disk_is_sector_sizes_and_size() {
    let Some((device, mnt, sentinel)) = loop_ext4("256m") else {
        return;
    };
    let out = run(&["env", mnt.to_str().unwrap(), "--json", "-"]);
    out.assert_success();
    let record: Value = serde_json::from_str(&out.stdout).unwrap();
    let facts = &record["targets"][0]["env"]["device_facts"];
    assert_eq!(facts["size_bytes"], 256 << 20, "{record:#}");
    assert_eq!(facts["logical_sector"], 512, "{record:#}");
    // A loop device has no model and the file system is on all of it.
    assert!(facts["model"].is_null() && facts["partition_offset"].is_null());
    let loop_queue = format!("/sys/block/{}/queue/nr_requests", loop_name(&device));
    let depth: u64 = std::fs::read_to_string(loop_queue)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(facts["queue_depth"], depth, "{record:#}");
    let text = run(&["env", mnt.to_str().unwrap()]);
    assert!(
        text.stdout.contains("sectors 512/") && text.stdout.contains("256.0 MiB"),
        "{text}"
    );
    sentinel.assert_intact();
}

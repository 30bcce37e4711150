//! The io time series on real devices: a loop ext4 whose reads are
//! throttled with cgroup v1 blkio (`blkio.throttle.read_bps_device` of the
//! loop device, for the fsbench process's cgroup; O_DIRECT reads are
//! attributed to it). Throttled at 100 MiB/s, tightened to 20 MiB/s once
//! the device has read N MiB, a job shows a cliff at about N MiB with the
//! rates on either side; throttled throughout, it is steady and
//! `--until-steady` ends it early. Every interval carries the device's
//! MiB/s (none on tmpfs). A write job ends with an fsync unless
//! `--no-end-sync`. Needs root and cgroup v1 blkio (skips otherwise).
mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{
    LoopDevice, Output, Running, Sentinel, TmpfsMount, assert_no_scratch_left, page_cache_lock,
    read_json, run, wait_until,
};
use serde_json::Value;

const MIB: u64 = 1 << 20;
const BLKIO: &str = "/sys/fs/cgroup/blkio";

/// A child blkio cgroup of the test's own, removed on Drop (its
/// processes moved back to the root first), also when the test fails.
struct Throttle {
    dir: PathBuf,
    /// The loop device's `MAJ:MIN`.
    device: String,
}

impl Throttle {
    /// A cgroup named after the test (`name`) and the process; None
    /// (after saying why) without cgroup v1 blkio throttling.
    fn new(name: &str, device: &LoopDevice) -> Option<Throttle> {
        let root = Path::new(BLKIO);
        if !root.join("blkio.throttle.read_bps_device").exists() {
            eprintln!("skipping: no cgroup v1 blkio throttling at {BLKIO}");
            return None;
        }
        let dir = root.join(format!("fsbench-{name}-{}", std::process::id()));
        std::fs::create_dir(&dir).expect("make the blkio cgroup");
        let name = device.device.trim_start_matches("/dev/");
        let dev = std::fs::read_to_string(format!("/sys/block/{name}/dev")).unwrap();
        Some(Throttle {
            dir,
            device: dev.trim().to_string(),
        })
    }

    /// Reads of the cgroup's processes from the loop device at most
    /// `mib_per_s`.
    fn reads_at(&self, mib_per_s: u64) {
        let line = format!("{} {}", self.device, mib_per_s * MIB);
        std::fs::write(self.dir.join("blkio.throttle.read_bps_device"), line).unwrap();
    }

    /// The run and its children (the one that measures, in a session of
    /// its own: `common::family`): the run first, so that what it forks
    /// from then on starts in the cgroup, then what it had forked already.
    fn admit(&self, run: &Running) {
        let procs = self.dir.join("cgroup.procs");
        std::fs::write(&procs, run.pid.to_string()).unwrap();
        for pid in common::family(run.pid) {
            std::fs::write(&procs, pid.to_string()).unwrap();
        }
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        let procs = std::fs::read_to_string(self.dir.join("cgroup.procs")).unwrap_or_default();
        for pid in procs.lines() {
            let _ = std::fs::write(Path::new(BLKIO).join("cgroup.procs"), pid);
        }
        if let Err(e) = std::fs::remove_dir(&self.dir) {
            eprintln!("cannot remove {}: {e}", self.dir.display());
        }
    }
}

/// Bytes the loop device has read, from /proc/diskstats.
fn device_read_bytes(device: &LoopDevice) -> u64 {
    let name = device.device.trim_start_matches("/dev/");
    let stats = std::fs::read_to_string("/proc/diskstats").unwrap();
    let line = stats
        .lines()
        .find(|l| l.split_whitespace().nth(2) == Some(name))
        .unwrap_or_else(|| panic!("{name} not in /proc/diskstats"));
    let sectors: u64 = line.split_whitespace().nth(5).unwrap().parse().unwrap();
    sectors * 512
}

/// A mounted loop ext4 with its read throttle (cgroup `name`), and a
/// sentinel beside the scratch; None when the machine cannot (not root,
/// no blkio).
fn throttled_ext4(name: &str) -> Option<(Throttle, LoopDevice, PathBuf, Sentinel)> {
    let mut device = LoopDevice::new("256m")?;
    let throttle = Throttle::new(name, &device)?;
    device.mkfs("ext4");
    let mnt = device.mount();
    let sentinel = Sentinel::plant(&mnt);
    Some((throttle, device, mnt, sentinel))
}

/// `fsbench io DIR ARGS -q --json J` started (J outside DIR).
fn start_io(dir: &Path, args: &str, json: &Path) -> Running {
    let mut full = vec!["io".to_string(), dir.display().to_string()];
    full.extend(args.split_whitespace().map(str::to_string));
    full.extend(["-q", "--json", json.to_str().unwrap()].map(str::to_string));
    Running::spawn(&full)
}

/// The finished run's only workload.
fn workload_of(run: Running, dir: &Path, json: &Path) -> Value {
    finished(run, dir, json).1
}

/// The finished run's output and only workload.
fn finished(run: Running, dir: &Path, json: &Path) -> (Output, Value) {
    let out = run.wait();
    out.assert_success().assert_no_panic();
    assert_no_scratch_left(dir);
    (out, read_json(json)["targets"][0]["workloads"][0].clone())
}

fn metric<'w>(workload: &'w Value, name: &str) -> &'w Value {
    let metrics = workload["metrics"].as_array().unwrap();
    let found = metrics.iter().find(|m| m["name"] == name);
    found.unwrap_or_else(|| panic!("no {name} in {workload:#}"))
}

fn flags(metric: &Value) -> Vec<&str> {
    let flags = metric["flags"].as_array().unwrap();
    flags.iter().map(|f| f.as_str().unwrap()).collect()
}

/// The job's O_DIRECT sequential reads: 1 MiB at a time over a 64 MiB
/// file, 0.25 s intervals.
const DIRECT_READS: &str = "-s 64m -b 1m --seek 0 --read 100 --direct --interval 0.25s";

#[test]
fn a_throttle_tightened_mid_run_is_a_cliff_at_the_bytes_it_came_at() {
    let Some((throttle, device, mnt, sentinel)) = throttled_ext4("cliff") else {
        return;
    };
    // 100 MiB/s for the first 96 MiB (about 4 intervals), then 20 MiB/s
    // for the last 48 (about 10): the run lasts about 3.5 s.
    let fall_at = 96 * MIB;
    throttle.reads_at(100);
    let json_dir = tempfile::tempdir().unwrap();
    let json = json_dir.path().join("cliff.json");
    let before = device_read_bytes(&device);
    let running = start_io(&mnt, &format!("{DIRECT_READS} --amount 144m"), &json);
    throttle.admit(&running);
    wait_until(Duration::from_secs(60), "96 MiB read", || {
        device_read_bytes(&device) >= before + fall_at
    });
    throttle.reads_at(20);
    let (out, workload) = finished(running, &mnt, &json);
    assert!(
        out.stderr
            .contains("fsbench: warning: 1m-seq-read-direct: throughput fell off a cliff after"),
        "told as the job ends: {out}"
    );
    let rate = metric(&workload, "mib_per_s");
    assert!(flags(rate).contains(&"cliff"), "{rate:#}");
    let cliff = &rate["cliff"];
    let at = cliff["bytes"].as_u64().unwrap();
    let (before, after) = (
        cliff["before_mib_per_s"].as_f64().unwrap(),
        cliff["after_mib_per_s"].as_f64().unwrap(),
    );
    let intervals = workload["intervals"].as_array().unwrap();
    let rates: Vec<String> = intervals
        .iter()
        .map(|i| format!("{:.1}", i["values"]["mib_per_s"].as_f64().unwrap()))
        .collect();
    eprintln!(
        "cliff at {:.1} MiB (throttle tightened at 96 MiB), {before:.1} -> {after:.1} MiB/s: {cliff}\nMiB/s per interval: {}",
        at as f64 / MIB as f64,
        rates.join(" ")
    );
    // The watcher polls every 2 ms (0.2 MiB at 100 MiB/s) and one 1 MiB
    // read may be in flight; the fall is placed inside its 0.25 s
    // interval (25 MiB at 100 MiB/s) from the rates on either side, which
    // blkio's 100 ms throttling slices make uneven: within 8 MiB, a third
    // of that interval.
    let off = at.abs_diff(fall_at);
    assert!(
        off <= 8 * MIB,
        "cliff at {at} bytes, not about {fall_at}: {cliff}"
    );
    // blkio lets a burst through at first (up to 200 MiB/s over the
    // first 0.25 s) and dispatches per 100 ms slice, so the rate before
    // is 100 MiB/s give or take the burst.
    assert!((80.0..=200.0).contains(&before), "{cliff}");
    assert!((15.0..=25.0).contains(&after), "{cliff}");
    assert!(before > 3.0 * after, "{cliff}");
    // The series: every interval has the device's MiB/s, and over them
    // the device read what the job read (O_DIRECT; an interval alone may
    // differ by a read still in flight at its boundary); steady state was
    // looked for.
    assert!(intervals.len() >= 10, "{}", intervals.len());
    let mib = |interval: &Value, key: &str| {
        let rate = interval["values"][key]
            .as_f64()
            .unwrap_or_else(|| panic!("{key}: {interval}"));
        rate * interval["seconds"].as_f64().unwrap()
    };
    let device: f64 = intervals
        .iter()
        .map(|i| mib(i, "device_read_mib_per_s"))
        .sum();
    let job: f64 = intervals.iter().map(|i| mib(i, "mib_per_s")).sum();
    assert!(
        (device - job).abs() <= 0.05 * job,
        "device {device} MiB, job {job} MiB"
    );
    assert!(
        intervals
            .iter()
            .all(|i| i["values"]["device_write_mib_per_s"].is_number())
    );
    assert_eq!(workload["steady"]["window"], 10, "{:#}", workload["steady"]);
    // The report says it, with its figures.
    let report = run(&["report", json.to_str().unwrap()]);
    report.assert_success();
    assert!(
        report.stdout.contains("throughput fell off a cliff after"),
        "{report}"
    );
    sentinel.assert_intact();
}

/// At 50 MiB/s, 0.2 s intervals take 10 MiB each, two of blkio's 100 ms
/// slices; 0.25 s ones would alternate 10 and 15 reads, ±20 %, which the
/// slope over 10 intervals reads as a 12 % change.
const STEADY_READS: &str = "-s 64m -b 1m --seek 0 --read 100 --direct --interval 0.2s";

#[test]
fn until_steady_ends_a_job_on_a_steady_device_early() {
    let Some((throttle, _device, mnt, sentinel)) = throttled_ext4("steady") else {
        return;
    };
    throttle.reads_at(50);
    let json_dir = tempfile::tempdir().unwrap();
    let json = json_dir.path().join("steady.json");
    let clock = Instant::now();
    let running = start_io(
        &mnt,
        &format!("{STEADY_READS} --duration 30s --until-steady"),
        &json,
    );
    throttle.admit(&running);
    let workload = workload_of(running, &mnt, &json);
    let took = clock.elapsed();
    let steady = &workload["steady"];
    let at_s = steady["at_s"]
        .as_f64()
        .unwrap_or_else(|| panic!("{steady}"));
    eprintln!("steady after {at_s:.2} s of at most 30 s: {steady}");
    // Ten measured intervals after the warm-up one: 2.2 s at the soonest.
    assert!((2.1..10.0).contains(&at_s), "{steady}");
    assert!(took < Duration::from_secs(20), "{took:?}");
    let rate = metric(&workload, "mib_per_s")["value"].as_f64().unwrap();
    assert!((40.0..=60.0).contains(&rate), "{rate}");
    let notes = workload["notes"].to_string();
    assert!(notes.contains("--until-steady"), "{notes}");
    sentinel.assert_intact();
}

#[test]
fn a_bad_until_steady_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().to_str().unwrap();
    for (args, needle) in [
        (vec!["--until-steady=fast"], "--until-steady=fast"),
        (vec!["--until-steady=0"], "over 0"),
        (vec!["--until-steady", "--amount", "1m"], "give --duration"),
    ] {
        let mut full = vec!["io", target, "-s", "1m"];
        full.extend(args);
        let out = run(&full);
        out.assert_error(2, &[needle]);
    }
}

#[test]
fn tmpfs_has_no_device_series() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let json_dir = tempfile::tempdir().unwrap();
    let json = json_dir.path().join("tmpfs.json");
    let running = start_io(
        mnt.path(),
        "-s 16m -b 1m --seek 0 --duration 1s --interval 0.25s",
        &json,
    );
    let workload = workload_of(running, mnt.path(), &json);
    let intervals = workload["intervals"].as_array().unwrap();
    assert!(!intervals.is_empty());
    for interval in intervals {
        let values = interval["values"].as_object().unwrap();
        assert!(values.contains_key("mib_per_s"), "{interval}");
        assert!(
            !values.keys().any(|k| k.starts_with("device_")),
            "no device on tmpfs: {interval}"
        );
    }
    assert!(workload["steady"].is_object(), "{workload:#}");
}

/// A buffered 48 MiB write on a loop ext4 (fits in RAM), with `extra`.
fn buffered_write(mnt: &Path, extra: &str) -> Value {
    let json_dir = tempfile::tempdir().unwrap();
    let json = json_dir.path().join("write.json");
    let args = format!("-s 64m -b 1m --seek 0 --read 0 --amount 48m --interval 0.25s {extra}");
    let running = start_io(mnt, &args, &json);
    workload_of(running, mnt, &json)
}

#[test]
fn a_write_job_ends_on_the_device_unless_no_end_sync() {
    let _cache = page_cache_lock();
    let Some(mut device) = LoopDevice::new("256m") else {
        return;
    };
    device.mkfs("ext4");
    let mnt = device.mount();
    let sentinel = Sentinel::plant(&mnt);
    let synced = buffered_write(&mnt, "");
    let rate = metric(&synced, "mib_per_s");
    let evidence = &rate["device"];
    let written = evidence["workload_written_bytes"].as_u64().unwrap();
    assert_eq!(written, 48 * MIB, "{rate:#}");
    assert!(
        evidence["written_bytes"].as_u64().unwrap() as f64 >= 0.9 * written as f64,
        "the job's time includes the trip to the device: {rate:#}"
    );
    let unsynced = ["not_yet_on_device", "writes_cached"];
    assert!(
        !flags(rate).iter().any(|f| unsynced.contains(f)),
        "{rate:#}"
    );
    let sync = metric(&synced, "sync_s");
    assert_eq!(sync["detail"], true, "{sync:#}");
    assert!(sync["value"].as_f64().unwrap() <= rate["elapsed_s"].as_f64().unwrap());
    // --no-end-sync: the page cache's time, flagged from the counters.
    let cached = buffered_write(&mnt, "--no-end-sync");
    let rate = metric(&cached, "mib_per_s");
    assert!(flags(rate).contains(&"not_yet_on_device"), "{rate:#}");
    let metrics = cached["metrics"].as_array().unwrap();
    assert!(!metrics.iter().any(|m| m["name"] == "sync_s"));
    sentinel.assert_intact();
}

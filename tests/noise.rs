//! Noise per phase on a real loop ext4: every phase with device counters
//! records what fsbench itself read and wrote (/proc/self/io) beside what
//! the device moved, and the host's load, steal and other processes' CPU.
//! A cached random-read job alone is not `disturbed`; the same job while
//! `dd` writes with O_DIRECT to another file of the same file system is.
//! With CPU burners on every CPU the job is `busy_host`. Each run checks
//! that a sentinel beside the scratch directory survives. Needs root
//! (skips otherwise).
mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::{LoopDevice, Sentinel, assert_no_scratch_left, read_json, run};
use serde_json::Value;

const MIB: u64 = 1 << 20;

/// The tests' runs one at a time: one's burners or writer would be the
/// other's noise.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A mounted loop ext4 of 512 MiB, its inode tables and journal written
/// by mkfs (no lazy init writing behind the tests' backs), with a
/// sentinel beside the scratch.
fn loop_ext4() -> Option<(LoopDevice, PathBuf, Sentinel)> {
    let mut device = LoopDevice::new("512m")?;
    device.mkfs_with("ext4", &["-E", "lazy_itable_init=0,lazy_journal_init=0"]);
    let mnt = device.mount();
    let sentinel = Sentinel::plant(&mnt);
    Some((device, mnt, sentinel))
}

/// `fsbench io` reading a 16 MiB file at random for `seconds` after a
/// half-second warm-up: from the page cache, so fsbench itself moves
/// (almost) nothing on the device. Returns the result's metrics.
fn cached_random_reads(mnt: &Path, seconds: u32) -> Vec<Value> {
    let json_dir = tempfile::tempdir().unwrap();
    let json = json_dir.path().join("result.json");
    let args = [
        "io".to_string(),
        mnt.display().to_string(),
        "-s".into(),
        "16m".into(),
        "-b".into(),
        "4k".into(),
        "--seek".into(),
        "random".into(),
        "-i".into(),
        "0.5s".into(),
        "-d".into(),
        format!("{seconds}s"),
        "-q".into(),
        "--json".into(),
        json.display().to_string(),
    ];
    let out = run(&args);
    out.assert_success().assert_no_panic();
    assert_no_scratch_left(mnt);
    let result = read_json(&json);
    let metrics = result["targets"][0]["workloads"][0]["metrics"]
        .as_array()
        .expect("metrics")
        .clone();
    // Every metric over the job's measured window has the counters and
    // the host's figures.
    let with_device: Vec<Value> = metrics
        .into_iter()
        .filter(|m| !m["device"].is_null())
        .collect();
    assert!(!with_device.is_empty(), "no device counters: {result:#}");
    for metric in &with_device {
        let device = &metric["device"];
        for field in ["own_io_bytes", "own_written_bytes", "others_cpu_percent"] {
            assert!(device[field].is_number(), "{field}: {metric:#}");
        }
        assert!(device["load_1m"].as_f64().is_some_and(|l| l >= 0.0));
        assert!(device["steal_percent"].as_f64().is_some_and(|s| s >= 0.0));
    }
    with_device
}

fn flagged(metric: &Value, flag: &str) -> bool {
    let flags = metric["flags"].as_array().expect("flags");
    flags.iter().any(|f| f == flag)
}

fn bytes(value: &Value) -> u64 {
    value
        .as_u64()
        .unwrap_or_else(|| panic!("not bytes: {value}"))
}

/// `dd if=/dev/zero of=FILE bs=1M count=64 oflag=direct` over and over,
/// from a thread, until dropped; the drop waits for the last `dd`.
struct Writer {
    stop: std::sync::Arc<AtomicBool>,
    thread: Option<JoinHandle<u32>>,
}

impl Writer {
    fn start(file: &Path) -> Writer {
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let of = format!("of={}", file.display());
        let dd = move || {
            Command::new("dd")
                .args(["if=/dev/zero", &of, "bs=1M", "count=64"])
                .args(["oflag=direct", "conv=notrunc", "status=none"])
                .stdin(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        // One pass before fsbench starts: the writer is running.
        assert!(dd(), "dd oflag=direct failed");
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut passes = 1;
            while !flag.load(Ordering::Relaxed) && dd() {
                passes += 1;
            }
            passes
        });
        Writer {
            stop,
            thread: Some(thread),
        }
    }

    /// Stops writing: how many 64 MiB passes it made.
    fn stop(mut self) -> u32 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().map_or(0, |t| t.join().unwrap_or(0))
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[test]
fn a_concurrent_direct_writer_on_the_same_file_system_is_flagged_disturbed() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let Some((device, mnt, sentinel)) = loop_ext4() else {
        return;
    };
    // Alone: the device moved next to nothing, and nothing says otherwise.
    let alone = cached_random_reads(&mnt, 3);
    for metric in &alone {
        assert!(!flagged(metric, "disturbed"), "alone: {metric:#}");
    }
    sentinel.assert_intact();

    // The same job while dd writes 64 MiB passes beside it.
    let started = Instant::now();
    let writer = Writer::start(&mnt.join("other-writer.bin"));
    let disturbed = cached_random_reads(&mnt, 3);
    let passes = writer.stop();
    assert!(passes >= 2, "dd kept writing: {passes} passes");
    let flagged_metrics: Vec<&Value> = disturbed
        .iter()
        .filter(|m| flagged(m, "disturbed"))
        .collect();
    assert!(
        !flagged_metrics.is_empty(),
        "dd wrote {passes} × 64 MiB in {:.1} s, no metric flagged: {disturbed:#?}",
        started.elapsed().as_secs_f64()
    );
    for metric in flagged_metrics {
        let device = &metric["device"];
        let moved = bytes(&device["read_bytes"]) + bytes(&device["written_bytes"]);
        let own = bytes(&device["own_io_bytes"]);
        assert!(moved > 64 * MIB, "{metric:#}");
        assert!(moved > 16 * own, "fsbench caused little of it: {metric:#}");
    }
    sentinel.assert_intact();
    drop(device);
}

/// Endless shell loops, one per CPU (at least two), killed and reaped on
/// drop.
struct Burners(Vec<Child>);

impl Burners {
    fn start() -> Burners {
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
        let burners = (0..cpus)
            .map(|_| {
                Command::new("sh")
                    .args(["-c", "while :; do :; done"])
                    .stdin(Stdio::null())
                    .spawn()
                    .expect("start a CPU burner")
            })
            .collect();
        Burners(burners)
    }
}

impl Drop for Burners {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[test]
fn cpu_burners_on_every_cpu_make_the_phase_busy_host() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let Some((device, mnt, sentinel)) = loop_ext4() else {
        return;
    };
    let burners = Burners::start();
    // Let them reach the CPUs.
    std::thread::sleep(Duration::from_millis(200));
    let busy = cached_random_reads(&mnt, 2);
    drop(burners);
    let busy_metrics: Vec<&Value> = busy.iter().filter(|m| flagged(m, "busy_host")).collect();
    assert!(!busy_metrics.is_empty(), "{busy:#?}");
    for metric in busy_metrics {
        let others = metric["device"]["others_cpu_percent"].as_f64().unwrap();
        assert!(others > 50.0, "{metric:#}");
    }
    sentinel.assert_intact();
    drop(device);
}

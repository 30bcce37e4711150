//! Memory: what fsbench holds at its peak stays bounded by the work, not
//! by its arguments or by what the system's files hold.
//!
//! - The file tests over 1,048,576 files (`-n 1024`) keep their names
//!   compactly; the whole process must peak below 64 MiB of RSS.
//! - `tree -j 1024` on a tree of a few dozen directories peaks like
//!   `-j 1`: threads beyond the directories are not started, and a thread
//!   holds no histogram or buffer before it has work.
//! - An endless /proc/diskstats (root bind-mounts /dev/zero over it, in a
//!   private mount namespace) is read to a bound and gives no counters.
//!
//! The peak comes from the kernel: `wait4()` returns the child's rusage,
//! whose `ru_maxrss` is its high-water RSS (what `/usr/bin/time -f %M`
//! prints), so nothing is missed between polls.
mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{
    FSBENCH, LoopDevice, TmpfsMount, assert_no_scratch_left, bonnie_args, is_root, read_json,
};
use serde_json::Value;

const LIMIT_KIB: i64 = 64 * 1024;
const TIMEOUT: Duration = Duration::from_secs(600);

/// How a measured child ended.
struct Finished {
    /// wait4's status.
    status: i32,
    /// Its high-water RSS.
    peak_kib: i64,
    stderr: String,
    seconds: f64,
}

impl Finished {
    fn assert_success(&self, what: &str) {
        assert!(
            libc::WIFEXITED(self.status) && libc::WEXITSTATUS(self.status) == 0,
            "{what} failed (status {}): {}",
            self.status,
            self.stderr
        );
        assert!(!self.stderr.contains("panicked"), "{what}: {}", self.stderr);
    }

    fn assert_peak_below(&self, what: &str, limit_kib: i64) {
        assert!(
            self.peak_kib < limit_kib,
            "{what}: peak RSS {} KiB is above {limit_kib} KiB",
            self.peak_kib
        );
    }
}

/// The highest high-water RSS so far (VmHWM) of the child and its own
/// children (`fsbench io` measures in one: `common::family`), 0 once they
/// are gone.
fn high_water_kib(pid: libc::pid_t) -> i64 {
    common::family(pid)
        .into_iter()
        .map(|pid| {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmHWM:"))
                .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
                .unwrap_or(0)
        })
        .max()
        .unwrap_or(0)
}

/// Runs `command` (stdin closed, stdout discarded) to its end and takes
/// its peak RSS from wait4. With `kill_above_kib`, a child whose RSS grows
/// past it is killed at once (what a runaway allocation would otherwise
/// take is the machine's memory): its peak is then above the bound.
// The child is reaped by wait4 (for its rusage), not by Child::wait.
#[allow(clippy::zombie_processes)]
fn measure(command: &mut Command, what: &str, kill_above_kib: Option<i64>) -> Finished {
    let out_dir = tempfile::tempdir().unwrap();
    let stderr_path = out_dir.path().join("stderr");
    let started = Instant::now();
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain old data; zero is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let kill = |status: &mut i32, usage: &mut libc::rusage| {
        // SAFETY: our own child, not yet reaped; then valid pointers to
        // our locals.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::wait4(pid, status, 0, usage);
        }
    };
    loop {
        // SAFETY: valid pointers to our locals; pid is our unreaped child.
        let reaped = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if reaped == pid {
            break;
        }
        assert!(
            reaped == 0,
            "wait4 failed: {}",
            std::io::Error::last_os_error()
        );
        if let Some(ceiling) = kill_above_kib
            && high_water_kib(pid) > ceiling
        {
            kill(&mut status, &mut usage);
            break;
        }
        if started.elapsed() > TIMEOUT {
            kill(&mut status, &mut usage);
            panic!("{what} did not finish within {TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(if kill_above_kib.is_some() {
            5
        } else {
            50
        }));
    }
    let finished = Finished {
        status,
        peak_kib: usage.ru_maxrss,
        stderr: std::fs::read_to_string(&stderr_path).unwrap(),
        seconds: started.elapsed().as_secs_f64(),
    };
    eprintln!(
        "{what}: peak RSS {:.1} MiB, {:.1} s",
        finished.peak_kib as f64 / 1024.0,
        finished.seconds
    );
    finished
}

#[test]
fn a_million_files_peak_below_64_mib() {
    let Some(mnt) = TmpfsMount::with_options("size=2g,nr_inodes=1100000") else {
        return;
    };
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("result.json");
    let mut command = Command::new(FSBENCH);
    command
        .args(bonnie_args(
            &mnt.arg(),
            &["-s", "0", "-n", "1024", "-r", "0", "-m", "mem"],
        ))
        .arg("--json")
        .arg(&json);
    let finished = measure(&mut command, "fsbench -s 0 -n 1024", None);
    finished.assert_success("fsbench -n 1024");
    assert_no_scratch_left(mnt.path());
    let result = read_json(&json);
    let metrics = result["targets"][0]["workloads"][0]["metrics"]
        .as_array()
        .unwrap();
    assert_eq!(metrics.len(), 6);
    for metric in metrics {
        assert_eq!(metric["samples"], 1_048_576, "{metric}");
    }
    finished.assert_peak_below("fsbench -n 1024", LIMIT_KIB);
}

/// `tree -j 1024` at scale 0.001 (35 entries, 24 directories) once took
/// 560 MiB and more: each of its 1024 threads per operation built a
/// 264 KiB latency histogram, and a read buffer and xattr buffers, before
/// it had any work. It peaks like `-j 1` now (about 30 MiB here).
#[test]
fn tree_with_1024_threads_on_a_small_tree_peaks_below_64_mib() {
    let Some(mnt) = TmpfsMount::new("256m") else {
        return;
    };
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("result.json");
    let mut command = Command::new(FSBENCH);
    command
        .args(["tree", &mnt.arg(), "-j", "1024", "--scale", "0.001", "-q"])
        .arg("--json")
        .arg(&json);
    let what = "fsbench tree -j 1024 --scale 0.001";
    let finished = measure(&mut command, what, None);
    finished.assert_success(what);
    assert_no_scratch_left(mnt.path());
    let result = read_json(&json);
    let workload = &result["targets"][0]["workloads"][0];
    assert_eq!(workload["params"]["threads"], 1024, "as asked");
    let names: Vec<&str> = workload["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["name"].as_str())
        .collect();
    for op in ["find_s", "stat_s", "read_s", "copy_s", "delete_s"] {
        assert!(names.contains(&op), "{op} in {names:?}");
    }
    finished.assert_peak_below(what, LIMIT_KIB);
}

/// Most a run whose /proc/diskstats never ends may hold: the bound on
/// what is read of it (16 MiB) and the rest of a small io run.
const ENDLESS_DISKSTATS_LIMIT_KIB: i64 = 200 * 1024;

/// A short io job: 1 MiB, no warm-up, two 0.2 s intervals.
const SHORT_IO: [&str; 8] = [
    "-s",
    "1m",
    "--warmup",
    "0",
    "--interval",
    "0.2s",
    "-d",
    "0.4s",
];

/// `fsbench io` on `mnt` (a short run with counters at both ends of its
/// window and of each interval), inside a private mount namespace where
/// `bind` (a shell command, or none) ran first; the result JSON too.
fn io_in_namespace(mnt: &Path, bind: Option<&str>, what: &str) -> (Finished, Value) {
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("result.json");
    let setup = bind.map_or(String::new(), |b| format!("{b} && "));
    let mut command = Command::new("unshare");
    command
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(format!("{setup}exec \"$0\" \"$@\""))
        .arg(FSBENCH)
        .args(["io", mnt.to_str().unwrap()])
        .args(SHORT_IO)
        .args(["-q", "--json"])
        .arg(&json);
    let finished = measure(&mut command, what, Some(ENDLESS_DISKSTATS_LIMIT_KIB));
    finished.assert_peak_below(what, ENDLESS_DISKSTATS_LIMIT_KIB);
    finished.assert_success(what);
    assert_no_scratch_left(mnt);
    (finished, read_json(&json))
}

/// Each metric's name, whether it has device evidence, and its flags.
fn evidence(result: &Value) -> Vec<(String, bool, Value)> {
    let metrics = result["targets"][0]["workloads"][0]["metrics"]
        .as_array()
        .unwrap();
    metrics
        .iter()
        .map(|m| {
            let name = m["name"].as_str().unwrap().to_string();
            (name, !m["device"].is_null(), m["flags"].clone())
        })
        .collect()
}

/// Root bind-mounts /dev/zero over /proc/diskstats (here in a private
/// mount namespace, so the host never sees it): fsbench used to read it
/// to the end, which never comes — gigabytes, until memory ran out. It
/// now reads at most 16 MiB of it and has no counters: the run ends as
/// one with `FSBENCH_DEVICE_COUNTERS=off` does, the size guesses deciding
/// the flags.
#[test]
fn an_endless_proc_diskstats_is_read_to_a_bound_and_gives_no_counters() {
    if !is_root() {
        eprintln!("skipping: not root (unshare -m, mount --bind)");
        return;
    }
    let Some(mut device) = LoopDevice::new("64m") else {
        return;
    };
    device.mkfs("ext4");
    let mnt = device.mount();
    // As the run is without the bind mount: its window's counters are read.
    let (_, counted) = io_in_namespace(&mnt, None, "fsbench io");
    let with_counters = evidence(&counted);
    assert!(
        with_counters.iter().any(|(_, device, _)| *device),
        "a loop ext4's run has device evidence: {with_counters:?}"
    );
    let (_, endless) = io_in_namespace(
        &mnt,
        Some("mount --bind /dev/zero /proc/diskstats"),
        "fsbench io, /dev/zero over /proc/diskstats",
    );
    let devices = &endless["targets"][0]["env"]["devices"];
    assert!(
        devices.as_array().is_some_and(|d| !d.is_empty()),
        "the devices are still known (from sysfs): {devices}"
    );
    let without = evidence(&endless);
    assert!(
        without.iter().all(|(_, device, _)| !device),
        "no counters, so no evidence: {without:?}"
    );
    // The same run with the counters switched off, for its flags.
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("off.json");
    let mut off = Command::new(FSBENCH);
    off.env("FSBENCH_DEVICE_COUNTERS", "off")
        .args(["io", mnt.to_str().unwrap()])
        .args(SHORT_IO)
        .args(["-q", "--json"])
        .arg(&json);
    measure(&mut off, "fsbench io, counters off", None).assert_success("counters off");
    assert_eq!(
        without,
        evidence(&read_json(&json)),
        "flags as with counters off"
    );
}

/// Twelve saved runs of about 26 MiB each (long interval series) as
/// `fsbench history` reads them: one run is read at a time and only its
/// headline figures kept, so twelve peak like one (they once took 930 MB,
/// 2.9 times the input).
#[test]
fn history_of_large_results_keeps_their_figures_not_their_files() {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/run-two-targets.json"
    );
    let base: Value = serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    let (one, twelve) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // Written in pieces, the long series never held here: the children
    // measured are forked from this process, and Linux counts the RSS a
    // process had before exec in its children's peak.
    const SERIES: &str = "@series@";
    let mut sample = String::new();
    let mut size = 0;
    for run in 0..12 {
        let mut saved = base.clone();
        saved["run_id"] = format!("20261201T0000{run:02}Z-{run:012x}").into();
        saved["started"] = format!("2026-12-01T00:00:{run:02}Z").into();
        for target in saved["targets"].as_array_mut().unwrap() {
            for workload in target["workloads"].as_array_mut().unwrap() {
                if let Some(first) = workload["intervals"].get(0) {
                    sample = first.to_string();
                    workload["intervals"] = SERIES.into();
                }
            }
        }
        let series = format!("[{}]", vec![sample.as_str(); 5_500].join(","));
        let name = format!("{run:02}.json");
        let path = twelve.path().join(&name);
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let text = saved.to_string();
        let quoted = format!("\"{SERIES}\"");
        let mut pieces = text.split(&quoted);
        file.write_all(pieces.next().unwrap().as_bytes()).unwrap();
        for piece in pieces {
            file.write_all(series.as_bytes()).unwrap();
            file.write_all(piece.as_bytes()).unwrap();
        }
        drop(file);
        size = std::fs::metadata(&path).unwrap().len();
        if run == 0 {
            std::fs::copy(&path, one.path().join(&name)).unwrap();
        }
    }
    assert!(size > 24 << 20, "{size} bytes a file");
    let peak = |dir: &Path, what: &str| {
        let finished = measure(Command::new(FSBENCH).arg("history").arg(dir), what, None);
        finished.assert_success(what);
        finished.peak_kib
    };
    let (alone, all) = (
        peak(one.path(), "history of 1 run"),
        peak(twelve.path(), "history of 12 runs"),
    );
    eprintln!(
        "history peak RSS: 1 run of {} MiB {alone} KiB, 12 runs {all} KiB",
        size >> 20
    );
    assert!(
        all < alone * 3 / 2,
        "12 runs peak at {all} KiB, one at {alone} KiB"
    );
}

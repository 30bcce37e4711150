//! When the kernel refuses io_uring, `fsbench io --engine io_uring` runs
//! the sync engine with threads × queue depth threads and says so. The test
//! refuses io_uring machine-wide for a moment (kernel.io_uring_disabled=2,
//! Linux 6.6+) and restores the setting on every way out but SIGKILL; it
//! lives alone in this binary so no other test sees the change.
mod common;

use common::{TmpfsMount, read_json, run};

const SYSCTL: &str = "/proc/sys/kernel/io_uring_disabled";

/// io_uring refused for everyone until dropped.
struct IoUringDisabled {
    before: String,
}

impl IoUringDisabled {
    fn new() -> Option<IoUringDisabled> {
        let before = std::fs::read_to_string(SYSCTL).ok()?;
        std::fs::write(SYSCTL, "2").ok()?;
        Some(IoUringDisabled { before })
    }
}

impl Drop for IoUringDisabled {
    fn drop(&mut self) {
        std::fs::write(SYSCTL, self.before.trim()).expect("cannot restore io_uring_disabled");
    }
}

#[test]
fn a_refused_io_uring_falls_back_to_the_sync_engine_with_a_warning() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let Some(_disabled) = IoUringDisabled::new() else {
        eprintln!("skipping: {SYSCTL} is not writable on this kernel");
        return;
    };
    let json = mnt.join("r.json");
    let out = run(&[
        "io",
        &mnt.arg(),
        "-s",
        "4m",
        "--engine",
        "io_uring",
        "--iodepth",
        "4",
        "-j",
        "2",
        "--duration",
        "0.2s",
        "--interval",
        "0.1s",
        "--json",
        json.to_str().unwrap(),
    ]);
    out.assert_success();
    assert!(
        out.stderr
            .starts_with("fsbench: warning: the kernel refuses io_uring")
            && out
                .stderr
                .contains("running the sync engine with 8 threads instead"),
        "{out}"
    );
    let job = &read_json(&json)["targets"][0]["workloads"][0];
    assert_eq!(job["params"]["job"]["engine"], "sync");
    assert_eq!(job["params"]["job"]["threads"], 8);
    assert!(
        job["notes"][0]
            .as_str()
            .unwrap()
            .contains("refuses io_uring")
    );
}

//! Memory: the file tests over 1,048,576 files (`-n 1024`) keep their names
//! compactly; the whole process must peak below 64 MiB of RSS.
//!
//! The peak comes from the kernel: `wait4()` returns the child's rusage,
//! whose `ru_maxrss` is its high-water RSS (what `/usr/bin/time -f %M`
//! prints), so nothing is missed between polls.
mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{FSBENCH, TmpfsMount, assert_no_scratch_left, bonnie_args, read_json};

const LIMIT_KIB: i64 = 64 * 1024;
const TIMEOUT: Duration = Duration::from_secs(600);

#[test]
// The child is reaped by wait4 (for its rusage), not by Child::wait.
#[allow(clippy::zombie_processes)]
fn a_million_files_peak_below_64_mib() {
    let Some(mnt) = TmpfsMount::with_options("size=2g,nr_inodes=1100000") else {
        return;
    };
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("result.json");
    let stdout_path = out_dir.path().join("stdout");
    let stderr_path = out_dir.path().join("stderr");
    let started = Instant::now();
    let child = Command::new(FSBENCH)
        .args(bonnie_args(
            &mnt.arg(),
            &["-s", "0", "-n", "1024", "-r", "0", "-m", "mem"],
        ))
        .arg("--json")
        .arg(&json)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout_path).unwrap())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain old data; zero is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
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
        if started.elapsed() > TIMEOUT {
            // SAFETY: our own child, not yet reaped.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            panic!("fsbench -n 1024 did not finish within {TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let seconds = started.elapsed().as_secs_f64();
    let peak_kib = usage.ru_maxrss;
    eprintln!(
        "fsbench -s 0 -n 1024: peak RSS {:.1} MiB, {seconds:.1} s",
        peak_kib as f64 / 1024.0
    );
    let stderr = std::fs::read_to_string(&stderr_path).unwrap();
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "fsbench failed (status {status}): {stderr}"
    );
    assert_no_scratch_left(mnt.path());
    let result = read_json(&json);
    let metrics = result["targets"][0]["workloads"][0]["metrics"]
        .as_array()
        .unwrap();
    assert_eq!(metrics.len(), 6);
    for metric in metrics {
        assert_eq!(metric["samples"], 1_048_576, "{metric}");
    }
    assert!(
        peak_kib < LIMIT_KIB,
        "peak RSS {peak_kib} KiB is above {LIMIT_KIB} KiB"
    );
}

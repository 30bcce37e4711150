//! Cold means cold: before each tree operation fsbench syncs, checkpoints
//! the target's journal (a freeze and thaw of its file system) and drops
//! the caches, so a `find` or a delete after them reads its directories
//! and inodes from the device; a sync and drop_caches alone leave the
//! metadata a journal committed but had not written in place pinned in
//! the cache (ext4: 0 B read). The freeze never outlives fsbench: a kill
//! of fsbench and its process group while it freezes, or of the child
//! that freezes, leaves the file system writable. Needs root (skips
//! otherwise).
mod common;

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{
    FSBENCH, LoopFs, Running, Sentinel, TmpfsMount, assert_no_scratch_left, read_json,
    require_tool, run,
};
use rustix::process::{Pid, PidfdFlags, Signal, pidfd_open, pidfd_send_signal};
use serde_json::Value;

/// `fsbench tree DIR --ops copy,find,delete -r 3`: the result.
fn copy_find_delete(dir: &Path) -> Value {
    let json_dir = tempfile::tempdir().unwrap();
    let json = json_dir.path().join("result.json");
    let dir = dir.display().to_string();
    let json_arg = json.display().to_string();
    let args = [
        "tree",
        &dir,
        "--scale",
        "0.002",
        "--ops",
        "copy,find,delete",
        "-r",
        "3",
        "-q",
        "--json",
        &json_arg,
    ];
    run(&args).assert_success().assert_no_panic();
    read_json(&json)
}

/// Per repetition, the find and delete phases' metrics.
fn walks(result: &Value) -> Vec<Value> {
    let workloads = result["targets"][0]["workloads"].as_array().unwrap();
    let named = |w: &Value, name: &str| {
        let metrics = w["metrics"].as_array().unwrap();
        metrics.iter().find(|m| m["name"] == name).unwrap().clone()
    };
    workloads
        .iter()
        .flat_map(|w| [named(w, "find_s"), named(w, "delete_s")])
        .collect()
}

fn flags(metric: &Value) -> Vec<&str> {
    let flags = metric["flags"].as_array().unwrap();
    flags.iter().map(|f| f.as_str().unwrap()).collect()
}

fn caches(result: &Value) -> &str {
    result["targets"][0]["workloads"][0]["params"]["caches"]
        .as_str()
        .unwrap()
}

/// On a loop file system made by `mkfs`: every repetition's find and
/// delete read from the device, and are not flagged as the cache's.
fn a_cold_walk_reads_its_device(mkfs: &[&str], size_mib: u64) {
    require_tool(mkfs[0]);
    let Some(fs) = LoopFs::new(mkfs, "rw", size_mib) else {
        return;
    };
    let sentinel = Sentinel::plant(fs.path());
    let result = copy_find_delete(fs.path());
    let walks = walks(&result);
    assert_eq!(walks.len(), 6);
    for walk in &walks {
        let read = walk["device"]["read_bytes"].as_u64().unwrap();
        assert!(read > 0, "read 0 B from its device: {walk:#}");
        assert!(!flags(walk).contains(&"served_from_cache"), "{walk:#}");
    }
    assert!(
        caches(&result).contains("journal checkpointed (freeze/thaw)"),
        "{}",
        caches(&result)
    );
    assert_no_scratch_left(fs.path());
    sentinel.assert_intact();
}

#[test]
fn a_cold_find_and_delete_on_ext4_read_their_device_in_every_repetition() {
    a_cold_walk_reads_its_device(&["mkfs.ext4", "-q"], 256);
}

#[test]
fn a_cold_find_and_delete_on_xfs_read_their_device_in_every_repetition() {
    a_cold_walk_reads_its_device(&["mkfs.xfs", "-q", "-f"], 320);
}

/// tmpfs cannot be frozen: the caches are dropped without a word of a
/// checkpoint, and with no device there is no claim that a cache served
/// the find or the delete.
#[test]
fn a_file_system_that_cannot_be_frozen_is_only_dropped() {
    let Some(mnt) = TmpfsMount::new("128m") else {
        return;
    };
    let sentinel = Sentinel::plant(mnt.path());
    let result = copy_find_delete(mnt.path());
    assert_eq!(
        caches(&result),
        "synced and dropped (drop_caches=3) before each operation"
    );
    for walk in walks(&result) {
        assert!(!flags(&walk).contains(&"served_from_cache"), "{walk:#}");
    }
    sentinel.assert_intact();
}

/// fsbench's child inside its FIFREEZE, as a pidfd (a signal through it
/// reaches that process or none, whatever pid is reused): a child of `pid`
/// that is still fsbench (forked, not a program it started; in a tree run
/// of find and stat nothing else forks) whose system call in progress
/// (/proc/PID/syscall: number, then the arguments) is an ioctl with
/// FIFREEZE's request, checked again once the pidfd is open. The freeze
/// writes the journal in place, so it sleeps there for I/O: the moment a
/// kill would leave the file system frozen, were the thaw not the child's.
fn freezing_child(pid: i32) -> Option<OwnedFd> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let children: Vec<i32> = tasks
        .flatten()
        .flat_map(|task| {
            let listed = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            listed
                .split_whitespace()
                .filter_map(|c| c.parse::<i32>().ok())
                .collect::<Vec<_>>()
        })
        .collect();
    let freezing = |child: i32| {
        let comm = std::fs::read_to_string(format!("/proc/{child}/comm")).unwrap_or_default();
        let call = std::fs::read_to_string(format!("/proc/{child}/syscall")).unwrap_or_default();
        comm.trim_end() == "fsbench"
            && parent_of(child) == Some(pid)
            && call.split_whitespace().nth(2) == Some(FIFREEZE)
    };
    let child = children.into_iter().find(|&child| freezing(child))?;
    let pidfd = pidfd_open(Pid::from_raw(child)?, PidfdFlags::empty()).ok()?;
    freezing(child).then_some(pidfd)
}

/// `_IOWR('X', 119, int)`, as /proc/PID/syscall writes it.
const FIFREEZE: &str = "0xc0045877";

/// The parent of `pid` (the 4th field of its stat, the 2nd after the
/// command name in parentheses).
fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(") ")
        .next()?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Starts a run that freezes its target over and over (`-r` repetitions
/// of find and stat on a tiny tree) in a process group of its own, and
/// watches it until its freezing child is seen: the run and that child,
/// or None when the run ended first.
fn run_until_it_freezes(target: &Path, repetitions: &str) -> (Running, Option<OwnedFd>) {
    let target = target.display().to_string();
    let args = [
        "tree",
        &target,
        "--scale",
        "0.001",
        "--ops",
        "find,stat",
        "-r",
        repetitions,
        "-q",
    ];
    let mut command = Command::new(FSBENCH);
    command.args(args).process_group(0);
    let mut run = Running::spawn_command(&mut command, format!("fsbench {}", args.join(" ")));
    loop {
        if let Some(child) = freezing_child(run.pid) {
            return (run, Some(child));
        }
        if !run.is_running() {
            return (run, None);
        }
    }
}

/// Waits until the process of `pidfd` has ended (its pidfd polls
/// readable): a freezing child killed inside its FIFREEZE dies only once
/// the freeze is done, and a write before that proves nothing.
fn wait_for_exit(pidfd: &OwnedFd) {
    let mut poll = libc::pollfd {
        fd: pidfd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one pollfd of a descriptor this test holds.
    let ready = unsafe { libc::poll(&mut poll, 1, 60_000) };
    assert_eq!(ready, 1, "fsbench's freezing child did not end within 60 s");
}

/// Creates a file on `mnt`, which must take under 10 s. A file system left
/// frozen holds the writer in uninterruptible sleep, which no signal ends
/// (`timeout 10 touch` would wait with it), so the test thaws it itself
/// before it fails.
fn assert_writable(mnt: &Path) {
    let file = mnt.join("written-after-the-kill");
    let mut touch = Command::new("touch").arg(&file).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while touch.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = Command::new("fsfreeze").arg("-u").arg(mnt).status();
            touch.wait().unwrap();
            panic!(
                "{} was left frozen: a write waited 10 s (thawed by the test)",
                mnt.display()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    std::fs::remove_file(&file).unwrap();
}

/// How many runs a test starts to see one inside its freeze: each freezes
/// twice a repetition, so the first run all but always does.
const ATTEMPTS: usize = 20;

#[test]
fn a_kill_of_fsbench_and_its_group_while_it_freezes_leaves_the_file_system_thawed() {
    let Some(fs) = LoopFs::new(&["mkfs.ext4", "-q"], "rw", 128) else {
        return;
    };
    let sentinel = Sentinel::plant(fs.path());
    let caught = (0..ATTEMPTS).find_map(|_| {
        let (freezing, child) = run_until_it_freezes(fs.path(), "1000");
        let child = child?;
        // SAFETY: kill has no memory-safety preconditions; the group is
        // our unreaped child's.
        assert_eq!(unsafe { libc::kill(-freezing.pid, libc::SIGKILL) }, 0);
        let out = freezing.wait();
        wait_for_exit(&child);
        Some(out)
    });
    let out = caught.expect("no run was seen freezing");
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&out.status),
        Some(libc::SIGKILL),
        "{out}"
    );
    assert_writable(fs.path());
    run(&["clean", &fs.arg()]).assert_success();
    assert_no_scratch_left(fs.path());
    sentinel.assert_intact();
}

/// The freezing child killed itself: fsbench thaws and says so, or (the
/// child had already answered) goes on; the file system takes writes
/// either way.
#[test]
fn a_kill_of_the_freezing_child_is_answered_by_a_thaw() {
    let Some(fs) = LoopFs::new(&["mkfs.ext4", "-q"], "rw", 128) else {
        return;
    };
    let sentinel = Sentinel::plant(fs.path());
    let (freezing, child) = (0..ATTEMPTS)
        .map(|_| run_until_it_freezes(fs.path(), "20"))
        .find(|(_, child)| child.is_some())
        .expect("no run was seen freezing");
    let child = child.unwrap();
    // An error: it had ended (answered) before the kill.
    let _ = pidfd_send_signal(&child, Signal::KILL);
    wait_for_exit(&child);
    // Before fsbench is waited for: a file system left frozen would hold
    // it too, in its cleanup's first write.
    assert_writable(fs.path());
    let out = freezing.wait();
    out.assert_no_panic();
    if !out.status.success() {
        out.assert_error(
            1,
            &["was killed before it answered; fsbench thawed the file system"],
        );
    }
    run(&["clean", &fs.arg()]).assert_success();
    assert_no_scratch_left(fs.path());
    sentinel.assert_intact();
}

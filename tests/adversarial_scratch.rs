//! Adversarial cases for the promise "fsbench writes and deletes only inside
//! its own marked scratch directory": mounts inside a scratch directory
//! (during a run and before `clean`), a second local user racing a symlink
//! in as the marker, names planted ahead of a run, a renamed binary whose
//! live run `clean` must not delete, forged and foreign markers, and a
//! `clean` that meets a leftover it cannot remove. Every case checks that
//! the sentinel next to the scratch directory survives.
mod common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{
    FSBENCH, Frozen, Running, TmpfsMount, assert_no_scratch_left, assert_only_fsbench_entries,
    listing, quick_bonnie_args, read_json, run, run_ok, start_bonnie, tmpfs_with_sentinel,
    wait_for_scratch,
};

/// A bonnie run that stays in its first phase for many seconds.
const LONG_RUN: [&str; 9] = ["-s", "64", "-f64", "-n", "0", "-r", "0", "-m", "long"];
const PRECIOUS: &[u8] = b"another file system's data: must survive\n";

/// `mount --bind SOURCE DEST`, lazily unmounted on drop.
struct BindMount {
    dest: PathBuf,
}

impl BindMount {
    fn new(source: &Path, dest: &Path) -> BindMount {
        std::fs::create_dir_all(dest).unwrap();
        run_ok(Command::new("mount").arg("--bind").arg(source).arg(dest));
        BindMount {
            dest: dest.to_path_buf(),
        }
    }

    fn unmount(self) {}
}

impl Drop for BindMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.dest).status();
    }
}

/// A directory holding one precious file, for bind mounts to expose.
fn precious_dir(parent: &Path) -> PathBuf {
    let dir = parent.join("precious");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("data"), PRECIOUS).unwrap();
    dir
}

fn assert_precious(dir: &Path) {
    assert_eq!(
        std::fs::read(dir.join("data")).unwrap(),
        PRECIOUS,
        "data under a mount was touched"
    );
}

/// A directory `name` in the mount with exactly `mode` (no umask).
fn dir_with_mode(mnt: &TmpfsMount, name: &str, mode: u32) -> PathBuf {
    let dir = mnt.join(name);
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
    dir
}

/// Once the mount is gone, `clean` removes the rest; the mounted data
/// stays intact.
fn clean_after_unmount(bind: BindMount, mnt: &TmpfsMount, precious: &Path) {
    bind.unmount();
    run(&["clean", &mnt.arg()]).assert_success();
    assert_no_scratch_left(mnt.path());
    assert_precious(precious);
}

/// A scratch directory as a killed run leaves it.
fn killed_run_leftover(mnt: &TmpfsMount) -> PathBuf {
    let (fsbench, scratch) = start_bonnie(mnt, &LONG_RUN);
    fsbench.signal(libc::SIGKILL);
    fsbench.wait();
    scratch
}

#[test]
fn a_mount_inside_a_live_run_is_left_alone_and_the_results_are_saved() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let elsewhere = tempfile::tempdir().unwrap();
    let precious = precious_dir(elsewhere.path());
    let json = elsewhere.path().join("result.json");
    let args = quick_bonnie_args(&mnt.arg(), &["--json", json.to_str().unwrap()]);
    let mut fsbench = Running::spawn(&args);
    let scratch = wait_for_scratch(mnt.path(), &mut fsbench);
    let bind = {
        let _frozen = Frozen::new(&fsbench);
        BindMount::new(&precious, &scratch.join("mnt"))
    };
    let out = fsbench.wait();
    out.assert_code(1).assert_no_panic();
    assert!(
        out.stderr
            .contains("left mnt alone: a file system is mounted there"),
        "{out}"
    );
    assert!(out.stderr.contains("`fsbench clean` removes it"), "{out}");
    assert_precious(&precious);
    let result = read_json(&json);
    assert!(
        !result["targets"][0]["workloads"]
            .as_array()
            .unwrap()
            .is_empty(),
        "the measured result is saved"
    );
    assert_eq!(result["targets"][0]["cleanup"]["mounts_left"][0], "mnt");
    assert_eq!(listing(&scratch), [".fsbench-scratch", "mnt"]);

    clean_after_unmount(bind, &mnt, &precious);
    sentinel.assert_intact();
}

/// A bind mount of a directory of the very file system the scratch
/// directory is on: same `st_dev`, a different mount.
#[test]
fn clean_leaves_a_same_file_system_bind_mount_alone_and_goes_on() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("128m") else {
        return;
    };
    let Some((other, other_sentinel)) = tmpfs_with_sentinel("128m") else {
        return;
    };
    let precious = precious_dir(mnt.path());
    let blocked = killed_run_leftover(&mnt);
    let free = killed_run_leftover(&other);
    let bind = BindMount::new(&precious, &blocked.join("sub/mnt"));

    let out = run(&["clean", &mnt.arg(), &other.arg()]);
    out.assert_code(1).assert_no_panic();
    assert!(
        out.stderr
            .contains("left sub/mnt alone: a file system is mounted there"),
        "{out}"
    );
    assert!(
        out.stderr
            .contains("1 scratch director(ies) stay: 1 could not be removed"),
        "{out}"
    );
    assert!(!free.exists(), "clean went on to the next leftover\n{out}");
    assert_precious(&precious);
    assert_precious(&blocked.join("sub/mnt"));

    other_sentinel.assert_intact();

    clean_after_unmount(bind, &mnt, &precious);
    sentinel.assert_intact();
}

/// A second local user (nobody) watches a world-writable target and tries
/// to plant `.fsbench-scratch` as a symlink to a root-owned file in every
/// scratch directory that appears, while root runs fsbench with umask 0.
#[test]
fn a_symlink_raced_in_as_the_marker_by_another_user_redirects_nothing() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let shared = dir_with_mode(&mnt, "shared", 0o1777);
    let victim = mnt.join("victim");
    std::fs::write(&victim, b"root's file\n").unwrap();
    // A shell loop is too slow to hit the window; this one hit it in about
    // one run of 30 before the scratch directory was made private.
    let racer = mnt.join("racer.py");
    std::fs::write(
        &racer,
        "import os, sys\n\
         shared, victim = sys.argv[1], sys.argv[2]\n\
         while True:\n\
         \x20   for name in os.listdir(shared):\n\
         \x20       try:\n\
         \x20           os.symlink(victim, os.path.join(shared, name, '.fsbench-scratch'))\n\
         \x20       except OSError:\n\
         \x20           pass\n",
    )
    .unwrap();
    let mut racer = Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
        .arg("/usr/bin/python3")
        .args([&racer, &shared, &victim])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let shared_arg = shared.to_str().unwrap();
    for _ in 0..30 {
        let mut command = Command::new(FSBENCH);
        command.args(quick_bonnie_args(shared_arg, &[] as &[&str]));
        // SAFETY: umask is async-signal-safe.
        unsafe {
            command.pre_exec(|| {
                libc::umask(0);
                Ok(())
            });
        }
        let out = Running::spawn_command(&mut command, "fsbench bonnie (umask 0)".into()).wait();
        out.assert_success().assert_no_panic();
    }
    assert!(
        racer.try_wait().unwrap().is_none(),
        "the racer must have run all along"
    );
    racer.kill().unwrap();
    racer.wait().unwrap();
    assert_eq!(std::fs::read(&victim).unwrap(), b"root's file\n");
    assert_no_scratch_left(&shared);
    sentinel.assert_intact();
}

/// Names a run would have had under the old id scheme (UTC second + pid),
/// created ahead of it by someone else, neither stop the run nor get
/// touched. Pids are handed out in order, so the run's pid is among the
/// next few after a process started just before it; the names cover those
/// pids for the next seconds, and the run must show it got one of them.
#[test]
fn names_planted_ahead_of_a_run_neither_block_nor_get_touched() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let last_pid = std::process::Command::new("true").spawn().unwrap().id();
    let pids = last_pid + 1..last_pid + 200;
    let now = chrono::Utc::now();
    for second in 0..10 {
        let stamp = (now + chrono::Duration::seconds(second)).format("%Y%m%dT%H%M%SZ");
        for pid in pids.clone() {
            std::fs::create_dir(mnt.join(&format!("fsbench-{stamp}-{pid}"))).unwrap();
        }
    }
    let before = listing(mnt.path());
    let fsbench = Running::spawn(&quick_bonnie_args(&mnt.arg(), &[] as &[&str]));
    assert!(
        pids.contains(&(fsbench.pid as u32)),
        "the run's pid {} is not among the planted names': proves nothing",
        fsbench.pid
    );
    fsbench.wait().assert_success();
    assert_eq!(listing(mnt.path()), before);
    sentinel.assert_intact();
}

/// `clean` without `--force` never deletes a live run's data, whatever the
/// binary that runs it is called.
#[test]
fn a_live_run_of_a_renamed_binary_is_not_cleaned() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("128m") else {
        return;
    };
    // A hard link, not a copy: a copy being written while another test
    // forks can fail to exec with ETXTBSY.
    let bin = tempfile::tempdir_in(Path::new(FSBENCH).parent().unwrap()).unwrap();
    let renamed = bin.path().join("fsbench-x86_64");
    std::fs::hard_link(FSBENCH, &renamed).unwrap();
    let link = bin.path().join("fsb");
    std::os::unix::fs::symlink(&renamed, &link).unwrap();
    for binary in [&renamed, &link] {
        let mut command = Command::new(binary);
        command.args(common::bonnie_args(&mnt.arg(), &LONG_RUN));
        let mut fsbench = Running::spawn_command(&mut command, binary.display().to_string());
        let scratch = wait_for_scratch(mnt.path(), &mut fsbench);
        let clean = run(&["clean", &mnt.arg()]);
        clean.assert_success().assert_no_panic();
        assert!(clean.stdout.contains("is still running"), "{clean}");
        assert!(scratch.join(".fsbench-scratch").is_file());
        assert!(fsbench.is_running(), "the run survived clean");
        fsbench.signal(libc::SIGINT);
        fsbench.wait().assert_code(130);
        assert_no_scratch_left(mnt.path());
    }
    sentinel.assert_intact();
}

/// A directory named like a scratch directory with a marker fsbench did
/// not write for it: `clean` says why it skips it and deletes nothing.
fn forged(mnt: &TmpfsMount, name: &str, marker: &[u8]) -> PathBuf {
    let dir = mnt.join(name);
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join(".fsbench-scratch"), marker).unwrap();
    std::fs::write(dir.join("user-data"), b"mine").unwrap();
    dir
}

fn marker_json(run_id: &str, host: &str) -> Vec<u8> {
    serde_json::json!({
        "tool": "fsbench",
        "run_id": run_id,
        "pid": 1,
        "host": host,
        "created": "2026-01-01T00:00:00Z",
    })
    .to_string()
    .into_bytes()
}

#[test]
fn forged_markers_are_not_trusted() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let cases = [
        (
            forged(&mnt, "fsbench-garbage", b"\x00\xffnot json"),
            "its marker was not written by fsbench",
        ),
        (
            forged(&mnt, "fsbench-empty", b""),
            "its marker was not written by fsbench",
        ),
        (
            forged(&mnt, "fsbench-othertool", &{
                let mut v: serde_json::Value =
                    serde_json::from_slice(&marker_json("othertool", "h")).unwrap();
                v["tool"] = "rm".into();
                v.to_string().into_bytes()
            }),
            "its marker was not written by fsbench",
        ),
        (
            forged(&mnt, "fsbench-renamed", &marker_json("original", "h")),
            "its marker names run original, not renamed",
        ),
        (
            forged(&mnt, "fsbench-nobodys", &marker_json("nobodys", "h")),
            "its marker belongs to uid 65534",
        ),
    ];
    let nobodys = mnt.join("fsbench-nobodys/.fsbench-scratch");
    std::os::unix::fs::chown(&nobodys, Some(65534), Some(65534)).unwrap();

    let out = run(&["clean", &mnt.arg()]);
    // What stays is said, and so is the exit code: the user must look.
    out.assert_code(1).assert_no_panic();
    assert!(
        out.stderr.contains(&format!(
            "{} scratch director(ies) stay: {} have a marker fsbench cannot trust",
            cases.len(),
            cases.len()
        )),
        "{out}"
    );
    for (dir, reason) in &cases {
        let line = format!("{}: skipped, {reason}", dir.display());
        assert!(out.stdout.contains(&line), "expected {line:?}\n{out}");
        assert_eq!(std::fs::read(dir.join("user-data")).unwrap(), b"mine");
    }
    sentinel.assert_intact();
}

/// A marker from another host on a shared file system: live while the
/// other host's run holds its lock, removed once it is released.
#[test]
fn a_foreign_hosts_marker_is_live_while_its_lock_is_held() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let dir = forged(&mnt, "fsbench-remote", &marker_json("remote", "other-host"));
    // -o: the lock stays with flock itself, not with its child, so killing
    // flock releases it.
    let mut holder = Command::new("flock")
        .arg("-o")
        .arg(dir.join(".fsbench-scratch"))
        .args(["sleep", "600"])
        .spawn()
        .unwrap();
    common::wait_until(common::STARTUP_TIMEOUT, "flock holds the marker", || {
        let probe = Command::new("flock")
            .args(["-n", "-E", "3"])
            .arg(dir.join(".fsbench-scratch"))
            .arg("true")
            .status()
            .unwrap();
        probe.code() == Some(3)
    });
    let out = run(&["clean", &mnt.arg()]);
    out.assert_success();
    assert!(
        out.stdout
            .contains("skipped, its run (pid 1 on other-host) is still running"),
        "{out}"
    );
    assert!(dir.join("user-data").exists());

    holder.kill().unwrap();
    holder.wait().unwrap();
    let out = run(&["clean", &mnt.arg()]);
    out.assert_success();
    assert!(out.stdout.contains("fsbench-remote: removed"), "{out}");
    assert_only_fsbench_entries(mnt.path(), &[]);
    sentinel.assert_intact();
}

/// Root benchmarking a directory anyone may write to, without the sticky
/// bit, is told of the risk before anything is written.
#[test]
fn a_world_writable_target_without_sticky_bit_is_warned_about() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let open = dir_with_mode(&mnt, "open", 0o777);
    let out = run(&quick_bonnie_args(open.to_str().unwrap(), &[] as &[&str]));
    out.assert_success();
    assert!(
        out.stderr
            .contains("is writable by other users and has no sticky bit"),
        "{out}"
    );
    assert_no_scratch_left(&open);
    sentinel.assert_intact();
}

//! `fsbench env` describes host and targets (text and JSON); `fsbench clean`
//! removes dead runs' scratch directories, for several targets at once.
mod common;

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use common::{
    FSBENCH, Running, TmpfsMount, assert_no_scratch_left, assert_only_fsbench_entries, read_json,
    run, tmpfs_with_sentinel,
};
use serde_json::Value;

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn env_json_on_stdout_describes_a_tmpfs() {
    let Some(mnt) = TmpfsMount::new("16m") else {
        return;
    };
    let sub = mnt.join("sub");
    std::fs::create_dir(&sub).unwrap();
    let out = run(&["env", &mnt.arg(), sub.to_str().unwrap(), "--json", "-"]);
    out.assert_success().assert_no_panic();
    assert_eq!(out.stderr, "");
    let result: Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document: {e}\n{out}"));
    assert_eq!(result["kind"], "fsbench-result");
    assert_eq!(result["schema_version"], 1);
    assert_eq!(result["host"]["hostname"], hostname());
    assert!(result["host"]["cpu_count"].as_u64().unwrap() >= 1);
    assert!(result["host"]["ram_bytes"].as_u64().unwrap() > 0);
    let targets = result["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 2);
    for (target, path) in targets.iter().zip([mnt.path(), sub.as_path()]) {
        let env = &target["env"];
        assert_eq!(target["path"], path.to_str().unwrap());
        assert_eq!(env["fs_type"], "tmpfs", "{env}");
        // A subdirectory lives on the same mount.
        assert_eq!(env["mount_point"], mnt.arg(), "{env}");
        assert_eq!(env["total_bytes"], 16u64 << 20, "{env}");
        let free = env["free_bytes"].as_u64().unwrap();
        assert!(free > 15 << 20 && free <= 16 << 20, "{env}");
        assert!(
            env["mount_options"]
                .as_str()
                .unwrap()
                .contains("size=16384k"),
            "{env}"
        );
        assert!(env["total_inodes"].as_u64().unwrap() >= env["free_inodes"].as_u64().unwrap());
        assert_eq!(target["workloads"].as_array().unwrap().len(), 0);
    }
    assert!(
        std::fs::read_dir(mnt.path()).unwrap().count() == 1,
        "env writes nothing"
    );
}

#[test]
fn env_text_names_the_mount_point_and_file_system() {
    let Some(mnt) = TmpfsMount::new("16m") else {
        return;
    };
    let out = run(&["env", &mnt.arg()]);
    out.assert_success().assert_no_panic();
    assert_eq!(out.stderr, "");
    let mount_line = out
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("mount point:"))
        .unwrap_or_else(|| panic!("no mount point line\n{out}"));
    assert!(mount_line.trim_end().ends_with(&mnt.arg()), "{out}");
    assert!(
        out.stdout
            .lines()
            .any(|l| l.trim_start().starts_with("fs type:") && l.contains("tmpfs")),
        "{out}"
    );
    assert!(out.stdout.contains(&hostname()), "{out}");
}

#[test]
fn env_json_file_with_named_targets_and_text_on_stdout() {
    let Some(fast) = TmpfsMount::new("16m") else {
        return;
    };
    let Some(slow) = TmpfsMount::new("32m") else {
        return;
    };
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("env.json");
    let out = run(&[
        "env",
        &format!("fast={}", fast.arg()),
        &format!("slow={}", slow.arg()),
        "--json",
        json.to_str().unwrap(),
    ]);
    out.assert_success().assert_no_panic();
    assert!(
        out.stdout.contains(&fast.arg()) && out.stdout.contains(&slow.arg()),
        "{out}"
    );
    let result = read_json(&json);
    let targets = result["targets"].as_array().unwrap();
    assert_eq!(targets[0]["name"], "fast");
    assert_eq!(targets[1]["name"], "slow");
    assert_eq!(targets[0]["env"]["total_bytes"], 16u64 << 20);
    assert_eq!(targets[1]["env"]["total_bytes"], 32u64 << 20);
}

#[test]
fn env_without_targets_describes_the_host_and_the_current_directory() {
    // As `fsbench run` without targets: the current directory.
    let out = run(&["env"]);
    out.assert_success().assert_no_panic();
    assert!(out.stdout.contains(&hostname()), "{out}");
    assert!(
        out.stdout.contains("mount point"),
        "the current directory\n{out}"
    );
}

/// A scratch directory as a killed run leaves it: marker with `pid`.
fn fake_leftover(dir: &Path, name: &str, pid: u32, host: &str) -> std::path::PathBuf {
    let scratch = dir.join(name);
    std::fs::create_dir_all(scratch.join("Bonnie.1/00000")).unwrap();
    std::fs::write(scratch.join("Bonnie.1/00000/0000000000abc"), b"x").unwrap();
    std::fs::write(scratch.join("Bonnie.2"), vec![7u8; 100_000]).unwrap();
    let marker = serde_json::json!({
        "tool": "fsbench",
        "run_id": name.trim_start_matches("fsbench-"),
        "pid": pid,
        "host": host,
        "created": "2026-01-01T00:00:00Z",
    });
    std::fs::write(scratch.join(".fsbench-scratch"), marker.to_string()).unwrap();
    scratch
}

#[test]
fn clean_several_targets_removes_only_dead_runs_dirs() {
    let Some((one, sentinel_one)) = tmpfs_with_sentinel("16m") else {
        return;
    };
    let Some((two, sentinel_two)) = tmpfs_with_sentinel("16m") else {
        return;
    };
    let host = hostname();
    fake_leftover(
        one.path(),
        "fsbench-20260101T000000Z-1",
        common::dead_pid(),
        &host,
    );
    // pid 1 is alive but not fsbench: its leftover is dead too.
    fake_leftover(one.path(), "fsbench-20260101T000001Z-2", 1, &host);
    // A marker fsbench did not write does not make a directory fsbench's.
    let garbled = two.join("fsbench-garbled");
    std::fs::create_dir(&garbled).unwrap();
    std::fs::write(garbled.join(".fsbench-scratch"), b"not json").unwrap();
    std::fs::write(garbled.join("data"), b"x").unwrap();
    std::fs::create_dir(two.join("fsbench-unmarked")).unwrap();

    let out = run(&["clean", &one.arg(), &format!("second={}", two.arg())]);
    out.assert_code(1).assert_no_panic();
    assert_eq!(
        out.stderr.trim_end(),
        "fsbench: error: 1 scratch director(ies) stay: 1 have a marker fsbench cannot trust (remove them yourself if they are yours) (see above)",
        "{out}"
    );
    assert_eq!(
        out.stdout.lines().filter(|l| l.contains("removed")).count(),
        2,
        "{out}"
    );
    assert!(
        out.stdout
            .contains("fsbench-garbled: skipped, its marker was not written by fsbench"),
        "{out}"
    );
    assert_no_scratch_left(one.path());
    assert_only_fsbench_entries(two.path(), &["fsbench-garbled", "fsbench-unmarked"]);
    assert!(garbled.join("data").exists());
    sentinel_one.assert_intact();
    sentinel_two.assert_intact();
}

#[test]
fn clean_without_leftovers_changes_nothing() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("16m") else {
        return;
    };
    let out = run(&["clean", &mnt.arg()]);
    out.assert_success();
    assert_eq!(
        out.stdout.trim_end(),
        format!("{}: no fsbench scratch directories", mnt.arg())
    );
    sentinel.assert_intact();
}

/// Bug (robustness): cleanup recurses with one open directory fd per level
/// (src/storage/cleanup.rs `remove_subdir` → `empty_dir`), so a tree deeper
/// than the fd limit fails with EMFILE and stays; and each level wraps the
/// error in another "cannot remove <path>" context, so the "one line" error
/// grows quadratically (about 200 KB for 300 levels).
#[test]
fn clean_removes_a_tree_deeper_than_the_fd_limit() {
    let Some(mnt) = TmpfsMount::new("16m") else {
        return;
    };
    let scratch = fake_leftover(
        mnt.path(),
        "fsbench-20260101T000000Z-3",
        common::dead_pid(),
        &hostname(),
    );
    let mut deep = scratch.clone();
    for _ in 0..300 {
        deep.push("d");
    }
    std::fs::create_dir_all(&deep).unwrap();
    let mut command = Command::new(FSBENCH);
    command.args(["clean", &mnt.arg()]);
    // SAFETY: setrlimit is async-signal-safe; nothing else runs in pre_exec.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 256,
                rlim_max: 256,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out =
        Running::spawn_command(&mut command, "fsbench clean (RLIMIT_NOFILE=256)".into()).wait();
    assert!(
        out.stderr.len() < 2000,
        "error of {} bytes",
        out.stderr.len()
    );
    out.assert_success();
    assert_no_scratch_left(mnt.path());
}

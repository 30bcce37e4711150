//! `fsbench tree` keeps to its scratch directory and removes it on every
//! way out: normal end, a full file system during the copy, SIGINT (also
//! while the user's `--cmd` runs); bad input is refused with one line and
//! exit 2 before anything is written. Root only: each test mounts a tmpfs.
mod common;

use std::time::{Duration, Instant};

use common::{
    FSBENCH, Frozen, Running, SIGINT_HEARD, assert_no_scratch_left, fill_file_system, run,
    start_run, tmpfs_with_sentinel, tree_cmd_args, wait_until,
};

#[test]
fn normal_end_leaves_only_the_sentinel() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("128m") else {
        return;
    };
    let out = run(&["tree", &mnt.arg(), "--scale", "0.002", "-q"]);
    out.assert_success().assert_no_panic();
    assert!(out.stdout.contains("| copy "), "{out}");
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

#[test]
fn enospc_during_copy_is_one_clear_line_and_cleans_up() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("300m") else {
        return;
    };
    let args = [
        "tree",
        &mnt.arg(),
        "--dataset",
        "images",
        "--scale",
        "0.02",
        "--ops",
        "copy",
    ];
    let (mut fsbench, scratch) = start_run(mnt.path(), &args);
    // The copy's directory appears before the caches are dropped and the
    // clock starts: freeze the run there and take every free block.
    let copy = scratch.join("r0/copy");
    wait_until(Duration::from_secs(30), "the copy directory", || {
        assert!(fsbench.is_running(), "the run ended before its copy");
        copy.exists()
    });
    {
        let _frozen = Frozen::new(&fsbench);
        fill_file_system(&mnt.join("filler"));
    }
    let out = fsbench.wait();
    let line = out.assert_error(1, &["copy", "no space left on device"]);
    assert!(
        line.contains(".img"),
        "the error should name the file: {line}"
    );
    std::fs::remove_file(mnt.join("filler")).unwrap();
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

#[test]
fn sigint_while_generating_exits_130_and_cleans_up() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("1g") else {
        return;
    };
    let args = [
        "tree",
        &mnt.arg(),
        "--dataset",
        "maildir",
        "--scale",
        "0.2",
        "--ops",
        "read",
    ];
    let (fsbench, scratch) = start_run(mnt.path(), &args);
    wait_until(Duration::from_secs(30), "the dataset", || {
        scratch.join("r0/src").exists()
    });
    std::thread::sleep(Duration::from_millis(100));
    fsbench.signal(libc::SIGINT);
    let out = fsbench.wait();
    out.assert_code(130).assert_no_panic();
    assert!(out.stderr.contains("interrupted by SIGINT"), "{out}");
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

#[test]
fn sigint_stops_the_users_command_too() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("128m") else {
        return;
    };
    let marker = mnt.join("sleeping");
    let cmd = format!("touch {} && sleep 60", marker.display());
    let args = tree_cmd_args(&mnt.arg(), &cmd);
    let mut fsbench = Running::spawn(&args);
    wait_until(Duration::from_secs(30), "the command", || {
        assert!(fsbench.is_running(), "the run ended early");
        marker.exists()
    });
    let sent = Instant::now();
    fsbench.signal(libc::SIGINT);
    let out = fsbench.wait();
    out.assert_code(130);
    assert!(
        sent.elapsed() < Duration::from_secs(20),
        "the command was not stopped"
    );
    std::fs::remove_file(&marker).unwrap();
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("16m") else {
        return;
    };
    let not_dir = mnt.join("SENTINEL");
    let missing = mnt.join("nope");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--dataset", "videos"], "unknown dataset"),
        (vec!["--scale", "0"], "--scale"),
        (vec!["--scale", "-1"], "--scale"),
        (vec!["--scale", "1e9"], "--scale"),
        (vec!["--scale", "nan"], "--scale"),
        (
            vec!["--source", missing.to_str().unwrap()],
            "does not exist",
        ),
        (
            vec!["--source", not_dir.to_str().unwrap()],
            "not a directory",
        ),
        (vec!["--source", "/"], "contains the target"),
        (vec!["--cmd", "cp -a {source} {dst}"], "placeholder"),
        (vec!["--cmd", "cp {src"], "--cmd"),
        (vec!["--ops", "copy,move"], "unknown operation"),
        (vec!["--ops", "cmd"], "--cmd"),
        (vec!["--repeat", "0"], "--repeat"),
        (vec!["--stream-size", "lots"], "size"),
    ];
    for (extra, needle) in cases {
        let mut args = vec!["tree", mnt.path().to_str().unwrap()];
        args.extend(extra);
        run(&args).assert_error(2, &[needle]);
    }
    run(&["tree", missing.to_str().unwrap()]).assert_error(2, &["does not exist"]);
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

#[test]
fn a_dataset_too_large_for_the_target_is_refused_up_front() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("32m") else {
        return;
    };
    let out = run(&["tree", &mnt.arg(), "--dataset", "images", "--scale", "0.1"]);
    out.assert_error(2, &["not enough space"]);
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

#[test]
fn default_run_is_quick_on_tmpfs() {
    let Some((mnt, _sentinel)) = tmpfs_with_sentinel("1g") else {
        return;
    };
    // Not a timing threshold: only that the documented default finishes.
    let out = Running::spawn(&["tree", &mnt.arg(), "-q"]).wait_for(Duration::from_secs(60));
    out.assert_success();
}

/// Ctrl-C is answered the moment it arrives, not when the run reaches its
/// next check: here the user's command takes two seconds to stop (it traps
/// SIGTERM), and "stopping after this operation" is on stderr while fsbench
/// still waits for it.
#[test]
fn sigint_is_answered_before_the_run_stops() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("128m") else {
        return;
    };
    let marker = mnt.join("trapping");
    let cmd = format!(
        "trap 'sleep 2; exit 1' TERM; touch {}; while :; do sleep 0.1; done",
        marker.display()
    );
    let stderr_file = tempfile::NamedTempFile::new().unwrap();
    let mut fsbench = std::process::Command::new(FSBENCH)
        .args(tree_cmd_args(&mnt.arg(), &cmd))
        .stdout(std::process::Stdio::null())
        .stderr(stderr_file.reopen().unwrap())
        .spawn()
        .unwrap();
    wait_until(Duration::from_secs(60), "the command to start", || {
        marker.exists()
    });
    // SAFETY: plain syscall on our own child.
    unsafe { libc::kill(fsbench.id() as i32, libc::SIGINT) };
    let heard = || std::fs::read_to_string(stderr_file.path()).unwrap();
    wait_until(Duration::from_secs(60), "the answer to Ctrl-C", || {
        heard().contains(SIGINT_HEARD)
    });
    assert!(
        fsbench.try_wait().unwrap().is_none(),
        "fsbench had stopped before it answered: {}",
        heard()
    );
    let status = fsbench.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{}", heard());
    let lines: Vec<String> = heard().lines().map(str::to_string).collect();
    assert_eq!(
        lines.first().map(String::as_str),
        Some(SIGINT_HEARD),
        "{lines:?}"
    );
    assert!(
        lines.last().unwrap().contains("interrupted by SIGINT"),
        "{lines:?}"
    );
    std::fs::remove_file(&marker).unwrap();
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

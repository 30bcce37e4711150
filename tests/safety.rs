//! fsbench works only inside `<target>/fsbench-<run-id>/` and removes it on
//! every way out: normal end, errors before and during the run, a full file
//! system, SIGINT and SIGTERM. After kill -9, `fsbench clean` removes the
//! leftover and nothing else. Symlinks are never followed. Each test plants
//! a sentinel file and directory next to the scratch directory and checks
//! they survive.
mod common;

use std::io::Write;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use common::{
    Frozen, Output, Running, Sentinel, TmpfsMount, assert_no_scratch_left,
    assert_only_fsbench_entries, bonnie_args, fsbench_entries, listing, quick_bonnie_args,
    read_json, run, scratch_dirs, start_bonnie, tmpfs_with_sentinel, wait_until,
};

/// Flags of a run that stays in its first phase (64 MiB written one byte
/// per syscall: many seconds) long after its scratch directory appears;
/// every test that uses it stops it early.
const LONG_RUN: [&str; 9] = ["-s", "64", "-f64", "-n", "0", "-r", "0", "-m", "long"];

/// Sends `signal` to the run and waits for it to exit with `code`.
fn stop_with(fsbench: Running, signal: i32, code: i32) -> Output {
    fsbench.signal(signal);
    let out = fsbench.wait();
    out.assert_code(code);
    out
}

/// SIGINT: the run must exit 130.
fn interrupt(fsbench: Running) -> Output {
    stop_with(fsbench, libc::SIGINT, 130)
}

/// A directory outside the tmpfs holding a file, for symlinks to point at.
struct Outside {
    dir: tempfile::TempDir,
}

const PRECIOUS: &[u8] = b"outside the target: must survive\n";

impl Outside {
    fn new(with_marker: bool) -> Outside {
        let dir = tempfile::Builder::new()
            .prefix("fsb-outside-")
            .tempdir()
            .unwrap();
        std::fs::write(dir.path().join("precious.txt"), PRECIOUS).unwrap();
        if with_marker {
            // Looks like a scratch directory: still never to be removed
            // through a symlink.
            std::fs::write(dir.path().join(".fsbench-scratch"), "{}").unwrap();
        }
        Outside { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn assert_intact(&self, with_marker: bool) {
        assert_eq!(
            std::fs::read(self.path().join("precious.txt"))
                .ok()
                .as_deref(),
            Some(PRECIOUS),
            "file outside the target damaged or gone"
        );
        let mut expected = vec!["precious.txt".to_string()];
        if with_marker {
            expected.insert(0, ".fsbench-scratch".to_string());
        }
        assert_eq!(
            listing(self.path()),
            expected,
            "directory outside the target changed"
        );
    }
}

/// Plants symlinks in `scratch` to `outside`, to the file in it and to the
/// sentinel directory of `mnt`: cleanup must remove the links only.
fn plant_escapes(scratch: &Path, outside: &Outside, mnt: &TmpfsMount) {
    symlink(outside.path(), scratch.join("escape")).unwrap();
    symlink(
        outside.path().join("precious.txt"),
        scratch.join("escape-file"),
    )
    .unwrap();
    symlink(mnt.join("sentinel-dir"), scratch.join("sentinel-dir-link")).unwrap();
}

/// Waits until the data-test file `Bonnie.<pid>` in `scratch` holds data,
/// so there is something to clean up.
fn wait_for_data(scratch: &Path, fsbench: &mut Running) {
    let file = scratch.join(format!("Bonnie.{}", fsbench.pid));
    wait_until(common::STARTUP_TIMEOUT, "data in the scratch dir", || {
        assert!(fsbench.is_running(), "the run ended too early");
        std::fs::metadata(&file).is_ok_and(|m| m.len() > 0)
    });
}

fn marker_of(scratch: &Path) -> serde_json::Value {
    read_json(&scratch.join(".fsbench-scratch"))
}

#[test]
fn normal_end_removes_the_scratch_dir_and_nothing_else() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let json = mnt.join("result.json");
    let json_arg = json.to_str().unwrap();
    let (fsbench, scratch) = start_bonnie(
        &mnt,
        &[
            "-s", "4", "-f4", "-n", "1", "-r", "0", "-m", "n", "--json", json_arg,
        ],
    );
    // The scratch directory and its marker say which run owns them.
    let marker = marker_of(&scratch);
    assert_eq!(marker["tool"], "fsbench");
    assert_eq!(marker["pid"], fsbench.pid);
    let run_id = marker["run_id"].as_str().unwrap().to_string();
    assert_eq!(
        scratch.file_name().unwrap().to_str().unwrap(),
        format!("fsbench-{run_id}")
    );
    let out = fsbench.wait();
    out.assert_success().assert_no_panic();
    assert_eq!(out.stderr, "");
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
    let result = read_json(&json);
    assert_eq!(result["run_id"], run_id.as_str());
}

#[test]
fn empty_random_number_file_fails_cleanly() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let empty = mnt.join("empty.rand");
    std::fs::write(&empty, b"").unwrap();
    let out = run(&quick_bonnie_args(
        &mnt.arg(),
        &["-Z", empty.to_str().unwrap()],
    ));
    out.assert_error(2, &[empty.to_str().unwrap()]);
    assert!(out.stdout.is_empty(), "{out}");
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
    assert_eq!(std::fs::read(&empty).unwrap(), b"");
}

/// `-Z` is read whole before anything is written: a file of 2 bytes (no
/// 4-byte value) and a FIFO (which would block the open; refused at once,
/// without waiting for a writer) are each one usage line, with no scratch
/// directory made.
#[test]
fn random_file_is_read_before_anything_is_written() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let short = mnt.join("random.short");
    std::fs::write(&short, b"ab").unwrap();
    let fifo = mnt.join("random.fifo");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    for (file, why) in [(&short, ""), (&fifo, "not a regular file (a FIFO)")] {
        let file = file.to_str().unwrap();
        let out = Running::spawn(&quick_bonnie_args(&mnt.arg(), &["-Z", file]))
            .wait_for(common::STARTUP_TIMEOUT);
        out.assert_error(2, &[file, why]);
        assert!(out.stdout.is_empty(), "{out}");
        assert_no_scratch_left(mnt.path());
    }
    sentinel.assert_intact();
}

/// A genuine failure in the middle of a run: the free-inode check passes,
/// then another program takes every free inode while the data tests run,
/// so the file tests cannot create their directory or files.
#[test]
fn running_out_of_inodes_mid_run_fails_cleanly() {
    let Some(mnt) = TmpfsMount::with_options("size=64m,nr_inodes=2000") else {
        return;
    };
    let sentinel = Sentinel::plant(mnt.path());
    let (mut fsbench, scratch) =
        start_bonnie(&mnt, &["-s", "4", "-f4", "-n", "1", "-r", "0", "-m", "i"]);
    // Frozen in its data tests, so the file tests surely come after the fill.
    wait_for_data(&scratch, &mut fsbench);
    let filler = mnt.join("inode-filler");
    std::fs::create_dir(&filler).unwrap();
    let mut taken = 0;
    {
        let _frozen = Frozen::new(&fsbench);
        loop {
            match std::fs::File::create(filler.join(taken.to_string())) {
                Ok(_) => taken += 1,
                Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
                Err(e) => panic!("unexpected error filling inodes: {e}"),
            }
        }
    }
    assert!(taken > 900, "only {taken} inodes were free");
    let out = fsbench.wait();
    out.assert_error(1, &["No space left on device"]);
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
    assert_eq!(std::fs::read_dir(&filler).unwrap().count(), taken);
}

/// Writes zeros to `path` until the file system is full; returns the size.
fn fill_file_system(path: &Path) -> u64 {
    let mut file = std::fs::File::create(path).unwrap();
    let block = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        match file.write(&block) {
            Ok(0) => break,
            Ok(n) => total += n as u64,
            Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
            Err(e) => panic!("unexpected error filling the file system: {e}"),
        }
    }
    total
}

#[test]
fn file_system_filled_from_outside_mid_run_fails_cleanly() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("16m") else {
        return;
    };
    // 8 MiB written one byte per syscall: seconds. The run is frozen while
    // the file system fills, so it is surely mid-write when it meets ENOSPC.
    let (mut fsbench, scratch) = start_bonnie(
        &mnt,
        &["-s", "8", "-f12", "-n", "0", "-r", "0", "-m", "full"],
    );
    wait_for_data(&scratch, &mut fsbench);
    let filler = mnt.join("filler");
    let filled = {
        let _frozen = Frozen::new(&fsbench);
        let data = scratch.join(format!("Bonnie.{}", fsbench.pid));
        assert!(
            std::fs::metadata(&data).unwrap().len() < 8 << 20,
            "the data file was complete before the fill: the test proves nothing"
        );
        fill_file_system(&filler)
    };
    assert!(filled > 0);
    let out = fsbench.wait();
    let line = out.assert_error(1, &[]).to_lowercase();
    assert!(
        line.contains("no space left on device") || line.contains("full"),
        "the error must say the file system is full\n{out}"
    );
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
    assert_eq!(std::fs::metadata(&filler).unwrap().len(), filled);
}

fn interrupted_mid_run(signal: i32, name: &str, code: i32) {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("128m") else {
        return;
    };
    let (mut fsbench, scratch) = start_bonnie(&mnt, &LONG_RUN);
    wait_for_data(&scratch, &mut fsbench);
    let out = stop_with(fsbench, signal, code);
    out.assert_no_panic();
    assert_eq!(
        out.stderr.trim_end(),
        format!(
            "fsbench: {name}: stopping after this operation (again to quit at once)\n\
             fsbench: interrupted by {name}; scratch data removed"
        ),
        "{out}"
    );
    assert!(
        out.stdout.is_empty(),
        "no results for an interrupted run\n{out}"
    );
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

#[test]
fn sigint_mid_run_exits_130_after_cleanup() {
    interrupted_mid_run(libc::SIGINT, "SIGINT", 130);
}

#[test]
fn sigterm_mid_run_exits_143_after_cleanup() {
    interrupted_mid_run(libc::SIGTERM, "SIGTERM", 143);
}

#[test]
fn sigint_during_the_file_tests_removes_every_file() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("256m") else {
        return;
    };
    let (mut fsbench, scratch) =
        start_bonnie(&mnt, &["-s", "0", "-n", "128", "-r", "0", "-m", "files"]);
    // The file tests' directory `Bonnie.<pid>`, with files in it.
    let test_dir = scratch.join(format!("Bonnie.{}", fsbench.pid));
    wait_until(
        common::STARTUP_TIMEOUT,
        "files in the test directory",
        || {
            assert!(
                fsbench.is_running(),
                "the run ended before it was interrupted"
            );
            std::fs::read_dir(&test_dir).is_ok_and(|mut d| d.next().is_some())
        },
    );
    interrupt(fsbench).assert_no_panic();
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

#[test]
fn after_kill_9_clean_removes_the_leftover_and_only_it() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("128m") else {
        return;
    };
    let (mut fsbench, scratch) = start_bonnie(&mnt, &LONG_RUN);
    wait_for_data(&scratch, &mut fsbench);
    fsbench.signal(libc::SIGKILL);
    let out = fsbench.wait();
    assert_eq!(out.status.code(), None, "killed by a signal\n{out}");
    assert!(
        scratch.join(".fsbench-scratch").is_file(),
        "kill -9 leaves the scratch dir"
    );
    let leftover = scratch.file_name().unwrap().to_str().unwrap().to_string();

    // Things named like scratch directories that are not fsbench's.
    let decoy = mnt.join("fsbench-decoy");
    std::fs::create_dir(&decoy).unwrap();
    std::fs::write(decoy.join("user-data"), b"mine").unwrap();
    let outside = Outside::new(false);
    symlink(outside.path(), mnt.join("fsbench-link")).unwrap();
    let outside_marked = Outside::new(true);
    symlink(outside_marked.path(), mnt.join("fsbench-evil")).unwrap();
    std::fs::write(mnt.join("fsbench-file"), b"a file").unwrap();
    let fake = mnt.join("fsbench-fakemarker");
    std::fs::create_dir(&fake).unwrap();
    symlink(
        outside.path().join("precious.txt"),
        fake.join(".fsbench-scratch"),
    )
    .unwrap();
    std::fs::write(fake.join("user-data"), b"mine").unwrap();

    let clean = run(&["clean", &mnt.arg()]);
    clean.assert_code(1).assert_no_panic();
    assert!(
        clean.stderr.contains("1 scratch director(ies) stay"),
        "{clean}"
    );
    assert!(
        clean.stdout.contains(&leftover) && clean.stdout.contains("removed"),
        "{clean}"
    );
    assert_eq!(
        clean.stdout.lines().count(),
        2,
        "only the leftover and the forged marker are mentioned\n{clean}"
    );
    assert!(
        clean
            .stdout
            .contains("fsbench-fakemarker: skipped, its marker is not a regular file"),
        "{clean}"
    );
    assert!(!scratch.exists());
    assert_only_fsbench_entries(
        mnt.path(),
        &[
            "fsbench-decoy",
            "fsbench-evil",
            "fsbench-fakemarker",
            "fsbench-file",
            "fsbench-link",
        ],
    );
    assert_eq!(std::fs::read(decoy.join("user-data")).unwrap(), b"mine");
    assert_eq!(std::fs::read(fake.join("user-data")).unwrap(), b"mine");
    assert!(fake.join(".fsbench-scratch").is_symlink());
    assert_eq!(std::fs::read(mnt.join("fsbench-file")).unwrap(), b"a file");
    assert!(mnt.join("fsbench-link").is_symlink());
    assert!(mnt.join("fsbench-evil").is_symlink());
    outside.assert_intact(false);
    outside_marked.assert_intact(true);
    sentinel.assert_intact();

    // Nothing left to do the second time but to say what is not ours.
    let again = run(&["clean", &mnt.arg()]);
    again.assert_code(1);
    assert_eq!(
        again.stdout.trim_end(),
        format!(
            "{}: skipped, its marker is not a regular file",
            fake.display()
        ),
        "{again}"
    );
    outside.assert_intact(false);
    outside_marked.assert_intact(true);
}

#[test]
fn clean_skips_the_scratch_dir_of_a_live_run() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("128m") else {
        return;
    };
    let (mut fsbench, scratch) = start_bonnie(&mnt, &LONG_RUN);
    let clean = run(&["clean", &mnt.arg()]);
    clean.assert_success().assert_no_panic();
    assert!(
        clean.stdout.contains(scratch.to_str().unwrap()) && clean.stdout.contains("skipped"),
        "{clean}"
    );
    assert!(
        clean.stdout.contains(&format!("pid {}", fsbench.pid)),
        "{clean}"
    );
    assert!(
        scratch.join(".fsbench-scratch").is_file(),
        "a live run's dir stays"
    );
    assert!(fsbench.is_running(), "clean must not disturb the run");
    interrupt(fsbench);
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

#[test]
fn clean_force_removes_a_live_runs_dir_and_the_run_fails_cleanly() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("128m") else {
        return;
    };
    // Short: after losing its directory the run goes on writing its open
    // file (4 MiB, a byte at a time) before its next open fails.
    let (fsbench, scratch) = start_bonnie(
        &mnt,
        &["-s", "4", "-f4", "-n", "0", "-r", "0", "-m", "force"],
    );
    let clean = run(&["clean", "--force", &mnt.arg()]);
    clean.assert_success();
    assert!(clean.stdout.contains("removed"), "{clean}");
    assert!(!scratch.exists());
    // The run loses its directory: it must fail (not hang, not panic).
    let out = fsbench.wait();
    out.assert_code(1).assert_no_panic();
    assert!(
        out.stderr
            .lines()
            .last()
            .unwrap_or("")
            .starts_with("fsbench: error: "),
        "{out}"
    );
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

#[test]
fn foreign_files_in_the_scratch_dir_are_removed_and_reported() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("result.json");
    let json_arg = json.to_str().unwrap();
    let (mut fsbench, scratch) = start_bonnie(
        &mnt,
        &[
            "-s", "4", "-f4", "-n", "0", "-r", "0", "-m", "foreign", "--json", json_arg,
        ],
    );
    let foreign = ["._foo", ".DS_Store", ".nfs0001"];
    for name in foreign {
        std::fs::write(scratch.join(name), b"made by someone else").unwrap();
    }
    assert!(
        fsbench.is_running(),
        "planted after the run ended: proves nothing"
    );
    let out = fsbench.wait();
    out.assert_success().assert_no_panic();
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
    let result = read_json(&json);
    let cleanup = &result["targets"][0]["cleanup"];
    assert_eq!(cleanup["foreign_count"], 3, "{cleanup}");
    let listed: Vec<&str> = cleanup["foreign"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    for name in foreign {
        assert!(listed.contains(&name), "{name} not reported: {cleanup}");
        assert!(out.stderr.contains(name), "{name} not mentioned\n{out}");
    }
    assert_eq!(
        out.stderr.lines().count(),
        1,
        "one line about the cleanup\n{out}"
    );
    assert!(out.stderr.contains("did not create"), "{out}");
}

#[test]
fn symlinks_planted_in_the_scratch_dir_are_not_followed() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("128m") else {
        return;
    };
    let outside = Outside::new(false);
    let (mut fsbench, scratch) = start_bonnie(&mnt, &LONG_RUN);
    plant_escapes(&scratch, &outside, &mnt);
    std::fs::create_dir(scratch.join("sub")).unwrap();
    symlink(outside.path(), scratch.join("sub/escape")).unwrap();
    symlink(mnt.join("SENTINEL"), scratch.join("sub/sentinel-link")).unwrap();
    assert!(fsbench.is_running());
    interrupt(fsbench).assert_no_panic();
    assert_no_scratch_left(mnt.path());
    outside.assert_intact(false);
    sentinel.assert_intact();
}

#[test]
fn symlinks_planted_in_the_scratch_dir_survive_a_normal_end_too() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let outside = Outside::new(false);
    let (mut fsbench, scratch) =
        start_bonnie(&mnt, &["-s", "4", "-f4", "-n", "1", "-r", "0", "-m", "sl"]);
    plant_escapes(&scratch, &outside, &mnt);
    assert!(
        fsbench.is_running(),
        "planted after the run ended: proves nothing"
    );
    fsbench.wait().assert_success().assert_no_panic();
    assert_no_scratch_left(mnt.path());
    outside.assert_intact(false);
    sentinel.assert_intact();
}

/// The scratch directory is renamed away mid-run and a symlink to a
/// marked directory outside the target takes its name: cleanup must not
/// follow it. `fsbench clean` then removes the renamed leftover only.
#[test]
fn scratch_dir_swapped_for_a_symlink_is_not_followed() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("128m") else {
        return;
    };
    let outside = Outside::new(true);
    let (mut fsbench, scratch) = start_bonnie(&mnt, &LONG_RUN);
    let moved = mnt.join("fsbench-moved");
    std::fs::rename(&scratch, &moved).unwrap();
    symlink(outside.path(), &scratch).unwrap();
    assert!(fsbench.is_running());
    interrupt(fsbench).assert_no_panic();
    outside.assert_intact(true);
    assert!(scratch.is_symlink(), "the planted symlink is not fsbench's");
    // The run emptied its directory through the fd it held, wherever the
    // directory went, and left it with its marker.
    assert_eq!(listing(&moved), [".fsbench-scratch"]);
    sentinel.assert_intact();

    // A marker names its directory: a renamed one is not trusted by `clean`.
    let clean = run(&["clean", &mnt.arg()]);
    clean.assert_code(1);
    assert!(
        clean
            .stdout
            .contains("fsbench-moved: skipped, its marker names run"),
        "{clean}"
    );
    let link_name = scratch.file_name().unwrap().to_str().unwrap();
    assert_only_fsbench_entries(mnt.path(), &[link_name, "fsbench-moved"]);
    outside.assert_intact(true);
    sentinel.assert_intact();
}

#[test]
fn keep_leaves_the_marked_scratch_dir_for_clean() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("result.json");
    let json_arg = json.to_str().unwrap();
    let out = run(&bonnie_args(
        &mnt.arg(),
        &[
            "-s", "1", "-f", "-n", "1", "-r", "0", "-m", "k", "--keep", "--json", json_arg,
        ],
    ));
    out.assert_success().assert_no_panic();
    let kept: Vec<PathBuf> = scratch_dirs(mnt.path());
    assert_eq!(kept.len(), 1, "--keep keeps the scratch dir");
    assert_eq!(fsbench_entries(mnt.path()).len(), 1);
    assert!(
        out.stderr.contains("kept scratch data in")
            && out.stderr.contains(kept[0].to_str().unwrap()),
        "{out}"
    );
    assert!(read_json(&json)["targets"][0]["cleanup"].is_null());
    let clean = run(&["clean", &mnt.arg()]);
    clean.assert_success();
    assert!(clean.stdout.contains("removed"), "{clean}");
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

/// Bug: with stdout closed early (`fsbench bonnie ... | head -0`), the
/// first `println!` panics ("failed printing to stdout: Broken pipe"),
/// exit code 101. Cleanup still happens (by unwinding), but fsbench must
/// fail with a one-line error, not a panic.
#[test]
fn closed_stdout_is_a_clean_error() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let mut child = std::process::Command::new(common::FSBENCH)
        .args(quick_bonnie_args(&mnt.arg(), &["-x", "2"]))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away at once
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(output.status.code(), Some(101), "{stderr}");
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

/// Bug: when cleanup after a signal fails (here: the scratch path became a
/// symlink, which fsbench rightly refuses to follow), fsbench still ends
/// with "interrupted by SIGINT; scratch data removed" (src/error.rs:12,
/// printed unconditionally by src/cli/mod.rs), right after saying the
/// cleanup failed. The leftover is real: `fsbench clean` must be pointed
/// at it.
#[test]
fn interrupt_message_does_not_claim_a_failed_cleanup() {
    let Some(mnt) = TmpfsMount::new("128m") else {
        return;
    };
    let outside = Outside::new(true);
    let (fsbench, scratch) = start_bonnie(&mnt, &LONG_RUN);
    std::fs::rename(&scratch, mnt.join("fsbench-moved")).unwrap();
    symlink(outside.path(), &scratch).unwrap();
    let out = interrupt(fsbench);
    out.assert_no_panic();
    assert!(out.stderr.contains("cleanup"), "{out}");
    assert!(
        !out.stderr.contains("scratch data removed"),
        "claims a removal that did not happen\n{out}"
    );
    outside.assert_intact(true);
}

#[test]
fn two_runs_on_one_target_keep_to_their_own_dirs() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("128m") else {
        return;
    };
    let (mut long, long_scratch) = start_bonnie(&mnt, &LONG_RUN);
    wait_for_data(&long_scratch, &mut long);
    let short = run(&bonnie_args(
        &mnt.arg(),
        &["-s", "1", "-f", "-n", "1", "-r", "0", "-m", "short"],
    ));
    short.assert_success().assert_no_panic();
    // The short run removed its own directory and nothing of the long one.
    assert_eq!(
        scratch_dirs(mnt.path()),
        std::slice::from_ref(&long_scratch)
    );
    let data = long_scratch.join(format!("Bonnie.{}", long.pid));
    assert!(data.is_file(), "the long run's data file is gone");
    assert!(long.is_running());
    interrupt(long);
    assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

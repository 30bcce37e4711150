//! `fsbench io` loses nothing and explains itself: the sentinel next to
//! the scratch directory survives a normal end, a failure mid-run and
//! SIGINT (with either engine); bad input exits 2 with one line and writes nothing; O_DIRECT
//! with a transfer size the file system cannot align is refused clearly.
//! Where sessions share the CPU, the run measures in a child of its own
//! session, which the signals sent to the process started reach (SIGTERM,
//! Ctrl-Z and SIGCONT) and which a kill -9 of it ends.
mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{
    LoopFs, Running, Sentinel, TmpfsMount, assert_no_scratch_left, run, wait_for_scratch,
    wait_until,
};

/// Waits until the scratch dir's data file is laid out (full size) and the
/// job has run a little.
fn wait_for_job(scratch: &Path, size: u64, fsbench: &mut Running) -> PathBuf {
    let file = scratch.join("io.dat");
    wait_until(common::STARTUP_TIMEOUT, "the laid-out data file", || {
        assert!(fsbench.is_running(), "the run ended too early");
        std::fs::metadata(&file).is_ok_and(|m| m.len() == size)
    });
    std::thread::sleep(Duration::from_millis(300));
    file
}

/// `fsbench io MNT` and `args` split at blanks.
fn io_args(mnt_arg: &str, args: &str) -> Vec<String> {
    let mut full = vec!["io".to_string(), mnt_arg.to_string()];
    full.extend(args.split_whitespace().map(str::to_string));
    full
}

/// Starts a minute-long run (`extra` added to its flags) and returns it
/// once its data file is laid out and the job has run a little.
fn start_long_run(mnt: &TmpfsMount, extra: &str) -> (Running, PathBuf) {
    start_minute_run(mnt, &format!("--read 50 {extra}"))
}

/// A minute-long run of `flags` on a 16 MiB file, once it is laid out
/// and the job has run a little.
fn start_minute_run(mnt: &TmpfsMount, flags: &str) -> (Running, PathBuf) {
    let args = format!("-s 16m --duration 60s --interval 0.1s {flags}");
    let mut fsbench = Running::spawn(&io_args(&mnt.arg(), &args));
    let scratch = wait_for_scratch(mnt.path(), &mut fsbench);
    let file = wait_for_job(&scratch, 16 << 20, &mut fsbench);
    (fsbench, file)
}

#[test]
fn normal_end_removes_the_scratch_dir_and_nothing_else() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let sentinel = Sentinel::plant(mnt.path());
    let out = run(&io_args(
        &mnt.arg(),
        "-s 4m --read 50 --duration 0.2s --interval 0.1s",
    ));
    out.assert_success().assert_no_panic();
    assert_eq!(out.stderr, "", "{out}");
    sentinel.assert_intact();
    assert_no_scratch_left(mnt.path());
}

fn interrupted_mid_run(extra: &str) {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let sentinel = Sentinel::plant(mnt.path());
    let (fsbench, _) = start_long_run(&mnt, extra);
    fsbench.signal(libc::SIGINT);
    let out = fsbench.wait();
    out.assert_code(130).assert_no_panic();
    let message = "interrupted by SIGINT; scratch data removed";
    assert!(out.stderr.contains(message), "{out}");
    assert!(out.stdout.contains("Starting RD=io"), "{out}");
    sentinel.assert_intact();
    assert_no_scratch_left(mnt.path());
}

#[test]
fn sigint_mid_run_exits_130_after_cleanup() {
    interrupted_mid_run("");
}

#[test]
fn sigint_waits_for_the_io_uring_ios_in_flight_and_cleans_up() {
    interrupted_mid_run("--engine io_uring --iodepth 32 -j 2");
}

#[test]
fn a_failure_mid_run_is_one_line_and_cleans_up() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let sentinel = Sentinel::plant(mnt.path());
    // Reads only: a write after the shrink would grow the file back (a
    // sparse one, whose holes read as zeros) before a read passes its end.
    let (fsbench, file) = start_minute_run(&mnt, "--read 100");
    // Shrinking the file under the run: its next read ends early.
    let data = std::fs::OpenOptions::new().write(true).open(file).unwrap();
    data.set_len(0).unwrap();
    let out = fsbench.wait();
    out.assert_error(1, &["at offset", "end of file"]);
    sentinel.assert_intact();
    assert_no_scratch_left(mnt.path());
}

/// `fsbench io MNT ARGS` on a fresh tmpfs: exit 2, one line naming every
/// needle, nothing written.
fn usage_error(args: &str, needles: &[&str]) {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let out = run(&io_args(&mnt.arg(), args));
    out.assert_error(2, needles);
    assert_eq!(out.stdout, "", "{out}");
    assert_eq!(std::fs::read_dir(mnt.path()).unwrap().count(), 0, "{out}");
}

#[test]
fn bad_flags_are_one_line_usage_errors() {
    usage_error("--read 150", &["read %", "0 to 100"]);
    usage_error("-b 1000 --direct", &["multiple of 512"]);
    usage_error("-b 4k:30,8k:30", &["add up to 100"]);
    usage_error("--iodepth 8", &["io_uring"]);
    usage_error(
        "--duration 1s --interval 1s",
        &["two intervals", "--warmup 0"],
    );
    usage_error("--seek sometimes", &["--seek"]);
    usage_error("--rate fast", &["--rate"]);
    usage_error("--rate 0", &["rate"]);
    usage_error("-s 2k", &["smaller than"]);
    usage_error("--duration soon", &["not a time"]);
    usage_error("--warmup 1.5s", &["whole number of intervals"]);
    usage_error("--repeat 0", &["--repeat"]);
    usage_error("--json /nonexistent-dir/r.json", &["--json"]);
    usage_error("--verify -b 4k:50,6k:50", &["multiple of the smallest"]);
}

#[test]
fn missing_or_absent_targets_and_conflicting_modes() {
    run(&["io"]).assert_error(2, &["directory to test"]);
    run(&io_args("/nonexistent/fsbench-io", "-s 1m")).assert_error(2, &["does not exist"]);
    let out = run(&io_args("/tmp", "--suite patterns --read 50"));
    out.assert_code(2).assert_no_panic();
    assert!(out.stderr.contains("cannot be used with"), "{out}");
}

/// An ext4 file system on a loop device with 4 KiB logical sectors (so
/// O_DIRECT needs 4 KiB alignment), inside a tmpfs; torn down on Drop.
fn ext4_4k_sectors() -> Option<LoopFs> {
    LoopFs::with_losetup_args(
        &["--sector-size", "4096"],
        &["mkfs.ext4", "-q", "-F"],
        "defaults",
        64,
    )
}

#[test]
fn direct_io_with_sizes_the_file_system_cannot_align_is_refused_clearly() {
    let Some(fs) = ext4_4k_sectors() else {
        return;
    };
    let sentinel = Sentinel::plant(fs.path());
    let out = run(&io_args(
        &fs.arg(),
        "-s 4m -b 512 --direct --duration 0.2s --interval 0.1s",
    ));
    out.assert_error(2, &["O_DIRECT", "multiples of 4096 bytes", "512"]);
    let out = run(&io_args(
        &fs.arg(),
        "-s 4m -b 4k --read 50 --direct --duration 0.2s --interval 0.1s",
    ));
    out.assert_success();
    assert!(out.stdout.contains("O_DIRECT"), "{out}");
    sentinel.assert_intact();
    assert_no_scratch_left(fs.path());
}

#[test]
fn sync_only_options_are_refused_with_io_uring() {
    for extra in ["--verify", "--rate 100", "--fdatasync-every 4"] {
        usage_error(&format!("--engine io_uring {extra}"), &["sync engine only"]);
    }
}

/// The kernel tears a closed io_uring down later, in a worker of its own:
/// a ring that still held the data file kept the deleted file's blocks in
/// use for seconds after fsbench had exited, and the next run's space
/// check failed. Each thread now lets go of the file before its ring goes.
#[test]
fn an_io_uring_run_leaves_its_space_free_when_it_exits() {
    let Some(fs) = LoopFs::new(&["mkfs.ext4", "-q", "-F"], "defaults", 96) else {
        return;
    };
    let free = || {
        let stat = rustix::fs::statvfs(fs.path()).unwrap();
        stat.f_bfree * stat.f_frsize
    };
    let before = free();
    run(&io_args(
        &fs.arg(),
        "-s 48m --engine io_uring --iodepth 16 -j 4 --direct --duration 0.3s --interval 0.1s -q",
    ))
    .assert_success();
    let after = free();
    assert!(
        before - after < 1 << 20,
        "{} KiB still in use right after the run",
        (before - after) >> 10
    );
}

/// Whether the kernel shares CPU time between sessions first (autogroup):
/// where it does not, `fsbench io` measures in the process started.
fn sessions_share_cpu() -> bool {
    std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled")
        .is_ok_and(|text| text.trim() == "1")
}

/// A field of /proc/PID/stat after the command name: 0 is the state, 3
/// the session.
fn stat_field(pid: i32, field: usize) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(") ")?.1;
    rest.split_whitespace().nth(field).map(str::to_string)
}

/// The run's measuring child: the one process it forked.
fn measuring_child(fsbench: &Running) -> i32 {
    match common::family(fsbench.pid)[..] {
        [_, child] => child,
        ref all => panic!("one child expected: {all:?}"),
    }
}

/// A minute-long run on a fresh tmpfs with a sentinel beside it, and its
/// measuring child; None where sessions do not share the CPU.
fn run_apart() -> Option<(TmpfsMount, Sentinel, Running, i32)> {
    if !sessions_share_cpu() {
        eprintln!("skipping: no autogroup scheduling here");
        return None;
    }
    let mnt = TmpfsMount::new("64m")?;
    let sentinel = Sentinel::plant(mnt.path());
    let (fsbench, _) = start_long_run(&mnt, "");
    let child = measuring_child(&fsbench);
    Some((mnt, sentinel, fsbench, child))
}

/// fio's jobs each call setsid(): under autogroup scheduling a session
/// is a CPU share of its own, and burners started from the shell no
/// longer take the job's. `fsbench io` measures in a child that leads a
/// session of its own (and does the I/O: the data file is open there);
/// the process started stays in the caller's session, and a SIGTERM sent
/// to it reaches the child, which stops and cleans up.
#[test]
fn the_run_measures_in_a_session_of_its_own_and_signals_reach_it() {
    let Some((mnt, sentinel, fsbench, child)) = run_apart() else {
        return;
    };
    // SAFETY: getsid(0) has no preconditions.
    let own_session = unsafe { libc::getsid(0) }.to_string();
    assert_eq!(stat_field(fsbench.pid, 3), Some(own_session));
    assert_eq!(
        stat_field(child, 3),
        Some(child.to_string()),
        "child leads its session"
    );
    let autogroup = |pid: i32| std::fs::read_to_string(format!("/proc/{pid}/autogroup")).unwrap();
    assert_ne!(autogroup(child), autogroup(fsbench.pid));
    let opened = std::fs::read_dir(format!("/proc/{child}/fd"))
        .unwrap()
        .filter_map(|fd| std::fs::read_link(fd.unwrap().path()).ok())
        .any(|target| target.ends_with("io.dat"));
    assert!(opened, "the child does the I/O");
    fsbench.signal(libc::SIGTERM);
    let out = fsbench.wait();
    out.assert_code(143).assert_no_panic();
    assert!(
        out.stderr
            .contains("interrupted by SIGTERM; scratch data removed"),
        "{out}"
    );
    assert!(
        stat_field(child, 0).is_none(),
        "the child has ended and was reaped"
    );
    sentinel.assert_intact();
    assert_no_scratch_left(mnt.path());
}

/// Ctrl-Z stops the run, the child too; the shell's SIGCONT (`fg`) lets
/// both go on.
#[test]
fn ctrl_z_stops_the_measuring_child_and_fg_continues_it() {
    let Some((mnt, sentinel, fsbench, child)) = run_apart() else {
        return;
    };
    let state = |pid| stat_field(pid, 0).unwrap_or_default();
    fsbench.signal(libc::SIGTSTP);
    wait_until(common::STARTUP_TIMEOUT, "both stopped", || {
        state(child) == "T" && state(fsbench.pid) == "T"
    });
    fsbench.signal(libc::SIGCONT);
    wait_until(common::STARTUP_TIMEOUT, "both going on", || {
        state(child) != "T" && state(fsbench.pid) != "T"
    });
    fsbench.signal(libc::SIGINT);
    fsbench.wait().assert_code(130).assert_no_panic();
    sentinel.assert_intact();
    assert_no_scratch_left(mnt.path());
}

/// kill -9 of the process started ends the measuring child too (it
/// cannot clean up, as a kill -9 never can): `fsbench clean` then removes
/// the leftover.
#[test]
fn kill_9_ends_the_measuring_child_and_clean_removes_the_leftover() {
    let Some((mnt, sentinel, fsbench, child)) = run_apart() else {
        return;
    };
    fsbench.signal(libc::SIGKILL);
    assert_eq!(fsbench.wait().status.code(), None, "killed by a signal");
    wait_until(common::STARTUP_TIMEOUT, "the child gone", || {
        stat_field(child, 0).is_none_or(|state| state == "Z")
    });
    assert_eq!(common::scratch_dirs(mnt.path()).len(), 1, "the leftover");
    run(&["clean", &mnt.arg()]).assert_success();
    sentinel.assert_intact();
    assert_no_scratch_left(mnt.path());
}

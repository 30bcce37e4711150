//! A stderr that cannot be written (a pipe whose reader has gone, a full
//! device, a descriptor closed before the start) never makes fsbench
//! panic: what it had to say there is lost, but the run still removes its
//! scratch data and exits 0 or 1 (never 101, never a signal), leaving
//! everything else on the target alone.
mod common;

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use common::{FSBENCH, Output, RUN_TIMEOUT, Sentinel, TmpfsMount, assert_no_scratch_left};

/// How the child's stderr is broken.
#[derive(Debug, Clone, Copy)]
enum Stderr {
    /// A pipe whose read end was closed before the child started: every
    /// write fails with EPIPE (`2>&1 | head -1` once head has gone).
    ReaderGone,
    /// /dev/full: every write fails with ENOSPC.
    Full,
    /// Descriptor 2 closed in the child before exec (`2>&-`).
    Closed,
}

const EVERY_WAY: [Stderr; 3] = [Stderr::ReaderGone, Stderr::Full, Stderr::Closed];

/// A pipe's write end, its read end already closed.
fn pipe_without_reader() -> OwnedFd {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array it is given.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(rc, 0, "pipe2: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors are fresh and owned by nobody else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read);
    write
}

/// Runs fsbench with `args`, stdout captured and stderr broken `how`;
/// waits at most `RUN_TIMEOUT`. The Output's stderr is empty: nobody can
/// read it.
fn run_with_stderr(args: &[String], how: Stderr) -> Output {
    let mut command = Command::new(FSBENCH);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    match how {
        Stderr::ReaderGone => {
            command.stderr(Stdio::from(pipe_without_reader()));
        }
        Stderr::Full => {
            let full = std::fs::File::options()
                .write(true)
                .open("/dev/full")
                .expect("cannot open /dev/full");
            command.stderr(Stdio::from(full));
        }
        Stderr::Closed => {
            command.stderr(Stdio::null());
            // SAFETY: close is async-signal-safe and touches nothing but
            // the child's descriptor 2.
            unsafe {
                command.pre_exec(|| {
                    libc::close(2);
                    Ok(())
                });
            }
        }
    }
    let cmd = format!("fsbench {} (stderr: {how:?})", args.join(" "));
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd}: {e}"));
    let mut pipe = child.stdout.take().unwrap();
    let stdout = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    });
    let deadline = Instant::now() + RUN_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait failed") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd} did not finish within {RUN_TIMEOUT:?} (killed)");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    Output {
        cmd,
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: String::new(),
    }
}

/// A 64 MiB tmpfs whose root anyone may write to, without the sticky bit:
/// fsbench warns about it on stderr before it makes its scratch directory.
fn open_target() -> Option<(TmpfsMount, Sentinel)> {
    let mnt = TmpfsMount::with_options("size=64m,mode=0777")?;
    let sentinel = Sentinel::plant(mnt.path());
    Some((mnt, sentinel))
}

/// The contract: no panic text, exit 0 or 1 (not 101 for a panic, not a
/// signal), no scratch directory left, the sentinel intact.
fn assert_quiet_and_clean(out: &Output, target: &Path, sentinel: &Sentinel) -> i32 {
    out.assert_no_panic();
    let code = out.code();
    assert!(
        code == 0 || code == 1,
        "exit {code}: expected 0 or 1 (101 is a panic)\n{out}"
    );
    assert_no_scratch_left(target);
    sentinel.assert_intact();
    code
}

fn io_args(target: &TmpfsMount, extra: &[&str]) -> Vec<String> {
    [
        "io",
        &target.arg(),
        "-s",
        "1m",
        "--duration",
        "0.3",
        "--warmup",
        "0",
    ]
    .into_iter()
    .chain(extra.iter().copied())
    .map(str::to_string)
    .collect()
}

/// The warning on stderr is lost; the run itself goes on to its end: its
/// table on stdout, exit 0.
#[test]
fn an_io_run_whose_warning_cannot_be_written_finishes_and_cleans_up() {
    for how in EVERY_WAY {
        let Some((mnt, sentinel)) = open_target() else {
            return;
        };
        let out = run_with_stderr(&io_args(&mnt, &[]), how);
        let code = assert_quiet_and_clean(&out, mnt.path(), &sentinel);
        assert_eq!(code, 0, "only a warning was lost\n{out}");
        assert!(out.stdout.contains("avg_"), "the run's table\n{out}");
    }
}

/// With `--json -` the live tables go to stderr, written while the scratch
/// directory exists: a stderr that refuses them stops the run (exit 1,
/// its error line lost too), and the scratch directory still goes.
#[test]
fn an_io_run_whose_tables_cannot_be_written_stops_and_cleans_up() {
    for how in EVERY_WAY {
        let Some((mnt, sentinel)) = open_target() else {
            return;
        };
        let out = run_with_stderr(&io_args(&mnt, &["--json", "-"]), how);
        assert_quiet_and_clean(&out, mnt.path(), &sentinel);
    }
}

/// `fsbench run` with a one-entry suite: its warning is lost, its report
/// is on stdout, exit 0.
#[test]
fn a_suite_run_whose_warning_cannot_be_written_finishes_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let suite: PathBuf = dir.path().join("suite.toml");
    std::fs::write(
        &suite,
        r#"
description = "one io entry"
repeat = 1

[[workload]]
kind = "io"
label = "rand-read"
args = "-s 1m -b 4k --read 100 --duration 0.2s --interval 0.1s --warmup 0"
"#,
    )
    .unwrap();
    for how in EVERY_WAY {
        let Some((mnt, sentinel)) = open_target() else {
            return;
        };
        let args: Vec<String> = [
            "run",
            "--suite",
            suite.to_str().unwrap(),
            "--no-save",
            "--target",
            &format!("a={}", mnt.arg()),
        ]
        .into_iter()
        .map(str::to_string)
        .collect();
        let out = run_with_stderr(&args, how);
        let code = assert_quiet_and_clean(&out, mnt.path(), &sentinel);
        assert_eq!(code, 0, "only a warning was lost\n{out}");
        assert!(
            out.stdout.contains("rand-read"),
            "the suite's report\n{out}"
        );
    }
}

/// `fsbench report X --format F | head -c 100`: every format stops quietly
/// with exit 0 when the reader has gone, the large ones (HTML, JSON) too,
/// whose writes outlast the pipe's buffer.
#[test]
fn a_report_whose_reader_went_away_exits_0_quietly_in_every_format() {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/run-two-targets.json"
    );
    for format in ["terminal", "markdown", "csv", "json", "html"] {
        let out = Command::new(FSBENCH)
            .args(["report", fixture, "--format", format])
            .stdin(Stdio::null())
            .stdout(Stdio::from(pipe_without_reader()))
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{format}: {stderr}");
        assert_eq!(stderr, "", "{format}");
    }
}

//! Shared helpers of the integration tests: private tmpfs mounts, running
//! the `fsbench` binary, waiting for its scratch directory, sentinels that
//! must survive every run, and checks of its error output.
//!
//! Every test that lets fsbench write does so on its own tmpfs, so tests run
//! in parallel and nothing outside the mount can be touched. Mounting needs
//! root: without it those tests print `skipping: not root` and return.
#![allow(dead_code)]

pub mod netlab;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The binary under test.
pub const FSBENCH: &str = env!("CARGO_BIN_EXE_fsbench");

/// Words of `text` joined by single spaces: the terminal report wraps its
/// lines.
pub fn unwrapped(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What fsbench says the moment a Ctrl-C reaches it.
pub const SIGINT_HEARD: &str =
    "fsbench: SIGINT: stopping after this operation (again to quit at once)";

/// Name of the marker file fsbench writes in every scratch directory.
pub const MARKER: &str = ".fsbench-scratch";

/// How long a test waits for something a healthy run does within
/// milliseconds (generous: the suite runs tests in parallel on 2 cores).
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// How long any single fsbench run may take before the test gives up.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// bonnie++'s data tests, in the order it runs and reports them.
pub const DATA_METRICS: [&str; 6] = ["putc", "put_block", "rewrite", "getc", "get_block", "seeks"];

/// bonnie++'s file tests, in the order it runs and reports them.
pub const FILE_METRICS: [&str; 6] = [
    "seq_create",
    "seq_stat",
    "seq_del",
    "ran_create",
    "ran_stat",
    "ran_del",
];

/// A `run` suite small enough for tests, seconds in all: bonnie, postmark,
/// io and tree, every kind that also runs under MPI.
pub const SMALL_SUITE: &str = r#"
description = "test suite"
repeat = 1

[[workload]]
kind = "bonnie"
label = "files"
args = "-s 0 -n {1} -r 0"

[[workload]]
kind = "postmark"
commands = ["set number {200}", "set transactions {400}"]

[[workload]]
kind = "io"
label = "rand-read"
args = "-s 8m -b 4k --read 100 --duration 0.4s --interval 0.2s --warmup 0"

[[workload]]
kind = "tree"
label = "tree"
args = "--dataset photos --scale {0.001} --ops copy,find,read,delete"

[[workload]]
kind = "meta"
args = "-n {300} --dirs 3"
"#;

/// Flags of the quickest data-only run: 1 MiB without per-char tests, no
/// file tests, no RAM check.
pub const QUICK: [&str; 7] = ["-s", "1", "-f", "-n", "0", "-r", "0"];

/// `bonnie -d TARGET EXTRA...`: the arguments of an `fsbench bonnie` run.
pub fn bonnie_args<S: AsRef<str>>(target: &str, extra: &[S]) -> Vec<String> {
    ["bonnie", "-d", target]
        .into_iter()
        .chain(extra.iter().map(AsRef::as_ref))
        .map(str::to_string)
        .collect()
}

/// `bonnie -d TARGET -s 1 -f -n 0 -r 0 EXTRA...`: a run that is over in
/// moments (see [`QUICK`]).
pub fn quick_bonnie_args<S: AsRef<str>>(target: &str, extra: &[S]) -> Vec<String> {
    let mut args = bonnie_args(target, &QUICK);
    args.extend(extra.iter().map(|a| a.as_ref().to_string()));
    args
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A private tmpfs mounted on a fresh temporary directory; unmounted
/// (lazily, so a busy mount cannot make Drop fail) and removed on Drop,
/// also when the test panics.
pub struct TmpfsMount {
    // Dropped after `Drop::drop` has unmounted it.
    dir: tempfile::TempDir,
}

impl TmpfsMount {
    /// `mount -t tmpfs -o size=SIZE`; None (after saying why) when not root.
    pub fn new(size: &str) -> Option<TmpfsMount> {
        Self::with_options(&format!("size={size}"))
    }

    /// `mount -t tmpfs -o OPTIONS`, e.g. `size=64m,nr_inodes=2000`.
    pub fn with_options(options: &str) -> Option<TmpfsMount> {
        Self::of_type("tmpfs", options)
    }

    /// `mount -t ramfs`: memory without user extended attributes.
    pub fn ramfs() -> Option<TmpfsMount> {
        Self::of_type("ramfs", "defaults")
    }

    fn of_type(fs_type: &str, options: &str) -> Option<TmpfsMount> {
        if !is_root() {
            eprintln!("skipping: not root");
            return None;
        }
        // Not named fsbench-*: `fsbench clean /tmp` must never see it.
        let dir = tempfile::Builder::new()
            .prefix("fsb-it-")
            .tempdir()
            .expect("cannot create a temporary mount point");
        let out = Command::new("mount")
            .args(["-t", fs_type, "-o", options, fs_type])
            .arg(dir.path())
            .output()
            .expect("cannot run mount");
        assert!(
            out.status.success(),
            "mount -t {fs_type} -o {options} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Some(TmpfsMount { dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The mount point as a string, for command lines.
    pub fn arg(&self) -> String {
        self.path()
            .to_str()
            .expect("temp paths are UTF-8")
            .to_string()
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.path().join(name)
    }
}

impl Drop for TmpfsMount {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// A private tmpfs of `size` with a [`Sentinel`] planted in it: the stage
/// of every safety test. None (after saying why) when not root.
pub fn tmpfs_with_sentinel(size: &str) -> Option<(TmpfsMount, Sentinel)> {
    let mnt = TmpfsMount::new(size)?;
    let sentinel = Sentinel::plant(mnt.path());
    Some((mnt, sentinel))
}

/// What a finished fsbench run left behind.
#[derive(Debug)]
pub struct Output {
    pub cmd: String,
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// The exit code; panics (with the whole output) if a signal killed it.
    pub fn code(&self) -> i32 {
        match self.status.code() {
            Some(code) => code,
            None => panic!("fsbench was killed by a signal\n{self}"),
        }
    }

    pub fn assert_code(&self, expected: i32) -> &Self {
        assert_eq!(
            self.status.code(),
            Some(expected),
            "unexpected exit status\n{self}"
        );
        self
    }

    pub fn assert_success(&self) -> &Self {
        self.assert_code(0)
    }

    /// Exit 130 after SIGINT, with only fsbench's line saying the scratch
    /// data was removed.
    pub fn assert_interrupted_and_cleaned_up(&self) -> &Self {
        self.assert_code(130).assert_no_panic();
        assert_eq!(
            self.stderr.trim_end(),
            format!("{SIGINT_HEARD}\nfsbench: interrupted by SIGINT; scratch data removed"),
            "{self}"
        );
        self
    }

    /// No panic message and no backtrace anywhere in the output.
    pub fn assert_no_panic(&self) -> &Self {
        for text in [&self.stdout, &self.stderr] {
            assert!(!text.contains("panicked"), "fsbench panicked\n{self}");
            assert!(
                !text.contains("stack backtrace") && !text.contains("RUST_BACKTRACE"),
                "fsbench printed a backtrace\n{self}"
            );
        }
        self
    }

    /// fsbench's error contract: stderr is exactly one non-empty line that
    /// starts with `fsbench: error:`. Returns that line.
    pub fn assert_one_line_error(&self) -> &str {
        self.assert_no_panic();
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "stderr must be exactly one line\n{self}");
        let line = lines[0];
        assert!(
            line.starts_with("fsbench: error: ") && line.len() > "fsbench: error: ".len(),
            "the error line must start with 'fsbench: error: ' and say something\n{self}"
        );
        line
    }

    /// Exit code `code` and a one-line error containing every one of
    /// `needles` (case-insensitive). Returns the line.
    pub fn assert_error(&self, code: i32, needles: &[&str]) -> &str {
        self.assert_code(code);
        let line = self.assert_one_line_error();
        let lower = line.to_lowercase();
        for needle in needles {
            assert!(
                lower.contains(&needle.to_lowercase()),
                "the error should mention {needle:?}\n{self}"
            );
        }
        line
    }

    /// The CSV lines (format 1.98) on stdout, split into fields.
    pub fn csv_lines(&self) -> Vec<Vec<String>> {
        csv_lines(&self.stdout)
    }

    /// The one CSV line on stdout.
    pub fn csv(&self) -> Vec<String> {
        let lines = self.csv_lines();
        assert_eq!(lines.len(), 1, "expected exactly one CSV line\n{self}");
        lines.into_iter().next().unwrap()
    }
}

impl std::fmt::Display for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "command: {}\nstatus: {}\n--- stdout ---\n{}\n--- stderr ---\n{}\n---",
            self.cmd, self.status, self.stdout, self.stderr
        )
    }
}

/// Lines of `text` that are bonnie CSV data lines, split on commas.
pub fn csv_lines(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter(|l| l.starts_with("1.98,"))
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

fn command_line(args: &[String]) -> String {
    std::iter::once("fsbench".to_string())
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs fsbench to completion (with a timeout) and captures its output.
/// Held by a test whose evidence depends on what the page cache holds (a
/// figure flagged, or not, from the device counters): another test's
/// fsbench making caches cold runs sync() and drop_caches for the whole
/// machine, which would write back or drop this one's pages mid-phase.
pub fn page_cache_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn run<S: AsRef<str>>(args: &[S]) -> Output {
    Running::spawn(args).wait()
}

/// A fsbench process the test is watching; killed (SIGKILL) and reaped on
/// Drop if the test did not wait for it, so a failing test leaves nothing
/// running on its mount.
pub struct Running {
    child: Option<Child>,
    pub pid: i32,
    cmd: String,
    stdout: Option<JoinHandle<String>>,
    stderr: Option<JoinHandle<String>>,
}

fn drain(mut pipe: impl Read + Send + 'static) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

impl Running {
    pub fn spawn<S: AsRef<str>>(args: &[S]) -> Running {
        let args: Vec<String> = args.iter().map(|a| a.as_ref().to_string()).collect();
        // COLUMNS sizes the tables: a test gets the default width unless it
        // sets it (`spawn_command`).
        let mut command = Command::new(FSBENCH);
        command.env_remove("COLUMNS").args(&args);
        Self::spawn_command(&mut command, command_line(&args))
    }

    /// Spawns a prepared command (stdin closed, stdout/stderr captured).
    pub fn spawn_command(command: &mut Command, cmd: String) -> Running {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {cmd}: {e}"));
        let stdout = drain(child.stdout.take().unwrap());
        let stderr = drain(child.stderr.take().unwrap());
        Running {
            pid: child.id() as i32,
            child: Some(child),
            cmd,
            stdout: Some(stdout),
            stderr: Some(stderr),
        }
    }

    /// Sends `signal` to this process (and only to it).
    pub fn signal(&self, signal: i32) {
        // SAFETY: kill has no memory-safety preconditions; the pid is our
        // own child, not yet reaped (so it cannot have been reused).
        let rc = unsafe { libc::kill(self.pid, signal) };
        assert_eq!(rc, 0, "kill({}, {signal}) failed", self.pid);
    }

    /// True while the process has not exited.
    pub fn is_running(&mut self) -> bool {
        let child = self.child.as_mut().expect("already waited");
        matches!(child.try_wait(), Ok(None))
    }

    /// Waits (at most `RUN_TIMEOUT`) and returns the output.
    pub fn wait(self) -> Output {
        self.wait_for(RUN_TIMEOUT)
    }

    pub fn wait_for(mut self, timeout: Duration) -> Output {
        let mut child = self.child.take().expect("already waited");
        let deadline = Instant::now() + timeout;
        let status = loop {
            if let Some(status) = child.try_wait().expect("try_wait failed") {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                let stderr = self.stderr.take().unwrap().join().unwrap_or_default();
                panic!(
                    "{} did not finish within {timeout:?} (killed)\nstderr: {stderr}",
                    self.cmd
                );
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        self.output(status)
    }

    /// The output of the exited process: its `status` and all it printed.
    fn output(&mut self, status: ExitStatus) -> Output {
        Output {
            cmd: self.cmd.clone(),
            status,
            stdout: self.stdout.take().unwrap().join().unwrap_or_default(),
            stderr: self.stderr.take().unwrap().join().unwrap_or_default(),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Polls `condition` every 2 ms until it holds; panics with `what` after
/// `timeout`.
pub fn wait_until(timeout: Duration, what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Names of the entries of `dir`, sorted; panics if it cannot be listed.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Names of the entries of `dir` that start with `fsbench-`, sorted.
pub fn fsbench_entries(dir: &Path) -> Vec<String> {
    let mut names = listing(dir);
    names.retain(|n| n.starts_with("fsbench-"));
    names
}

/// Scratch directories (marked `fsbench-*` directories, not symlinks) in `dir`.
pub fn scratch_dirs(dir: &Path) -> Vec<PathBuf> {
    fsbench_entries(dir)
        .into_iter()
        .map(|n| dir.join(n))
        .filter(|p| {
            std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
                && std::fs::symlink_metadata(p.join(MARKER)).is_ok_and(|m| m.is_file())
        })
        .collect()
}

/// Asserts that fsbench left no `fsbench-*` entry in `dir`.
pub fn assert_no_scratch_left(dir: &Path) {
    assert_only_fsbench_entries(dir, &[]);
}

/// Asserts that the `fsbench-*` entries of `dir` are exactly `expected`.
pub fn assert_only_fsbench_entries(dir: &Path, expected: &[&str]) {
    let mut expected: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(
        fsbench_entries(dir),
        expected,
        "unexpected fsbench-* entries in {}",
        dir.display()
    );
}

/// Waits until `run` has a marked scratch directory in `dir` and returns
/// it; panics with the run's output if it exits first.
pub fn wait_for_scratch(dir: &Path, run: &mut Running) -> PathBuf {
    let deadline = Instant::now() + STARTUP_TIMEOUT;
    loop {
        if let Some(found) = scratch_dirs(dir).into_iter().next() {
            return found;
        }
        if !run.is_running() {
            let child = run.child.take().unwrap();
            let out = run.output(child_status(child));
            panic!("fsbench exited before its scratch directory appeared\n{out}");
        }
        assert!(
            Instant::now() < deadline,
            "no scratch directory appeared in {} within {STARTUP_TIMEOUT:?}",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn child_status(mut child: Child) -> ExitStatus {
    child.wait().expect("wait failed")
}

/// Starts fsbench with `args` and waits until its marked scratch directory
/// appears in `dir`; returns the run and that directory.
pub fn start_run<S: AsRef<str>>(dir: &Path, args: &[S]) -> (Running, PathBuf) {
    let mut run = Running::spawn(args);
    let scratch = wait_for_scratch(dir, &mut run);
    (run, scratch)
}

/// Starts `fsbench bonnie -d MNT EXTRA...` and waits for its scratch
/// directory in the mount; returns the run and that directory.
pub fn start_bonnie<S: AsRef<str>>(mnt: &TmpfsMount, extra: &[S]) -> (Running, PathBuf) {
    start_run(mnt.path(), &bonnie_args(&mnt.arg(), extra))
}

/// What every safety test plants next to the scratch directory: a file
/// with known content and a directory holding files. Both must survive.
pub struct Sentinel {
    file: PathBuf,
    dir: PathBuf,
}

pub const SENTINEL_CONTENT: &[u8] = b"fsbench must never touch this file\n";
pub const SENTINEL_INNER: &[u8] = b"nor this one\n";

impl Sentinel {
    pub fn plant(dir: &Path) -> Sentinel {
        let file = dir.join("SENTINEL");
        std::fs::write(&file, SENTINEL_CONTENT).unwrap();
        let sdir = dir.join("sentinel-dir");
        std::fs::create_dir_all(sdir.join("sub")).unwrap();
        std::fs::write(sdir.join("inner.txt"), SENTINEL_INNER).unwrap();
        std::fs::write(sdir.join("sub/deeper.txt"), SENTINEL_INNER).unwrap();
        Sentinel { file, dir: sdir }
    }

    pub fn assert_intact(&self) {
        assert_eq!(
            std::fs::read(&self.file).ok().as_deref(),
            Some(SENTINEL_CONTENT),
            "sentinel file {} damaged or gone",
            self.file.display()
        );
        assert_eq!(
            listing(&self.dir),
            ["inner.txt", "sub"],
            "sentinel dir changed"
        );
        for inner in ["inner.txt", "sub/deeper.txt"] {
            assert_eq!(
                std::fs::read(self.dir.join(inner)).ok().as_deref(),
                Some(SENTINEL_INNER),
                "sentinel {inner} damaged or gone"
            );
        }
    }
}

/// Reads and parses a JSON file.
/// The metric called `name` of a workload result (JSON); panics naming it
/// when there is none.
pub fn metric_named<'r>(result: &'r serde_json::Value, name: &str) -> &'r serde_json::Value {
    metrics_of(result)
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no metric {name} in {result}"))
}

/// The names of a workload result's metrics, in order.
pub fn metric_names(result: &serde_json::Value) -> Vec<&str> {
    metrics_of(result)
        .iter()
        .map(|m| m["name"].as_str().expect("a metric has a name"))
        .collect()
}

fn metrics_of(result: &serde_json::Value) -> &Vec<serde_json::Value> {
    result["metrics"].as_array().expect("a result has metrics")
}

pub fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// Finds an executable in /usr/sbin, /usr/bin or $PATH; panics with an
/// installation hint if it is missing (never a silent skip).
pub fn require_tool(name: &str) -> PathBuf {
    let mut dirs: Vec<PathBuf> = vec!["/usr/sbin".into(), "/usr/bin".into()];
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    dirs.into_iter()
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("{name} not found: install its Debian package (scripts/test.sh lists them)")
        })
}

/// A pid that belongs to no process (a reaped child's).
pub fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// Takes every free block of the file system holding `path` with one
/// `fallocate`, retried while the running benchmark changes what is free;
/// returns the size taken.
pub fn fill_file_system(path: &Path) -> u64 {
    let file = std::fs::File::create(path).unwrap();
    for _ in 0..100 {
        let stat = rustix::fs::statvfs(path).unwrap();
        let free = stat.f_bavail * stat.f_frsize;
        match rustix::fs::fallocate(&file, rustix::fs::FallocateFlags::empty(), 0, free) {
            Ok(()) => return free,
            Err(rustix::io::Errno::NOSPC) => continue,
            Err(e) => panic!("cannot fill the file system: {e}"),
        }
    }
    panic!("the free space kept changing: cannot fill the file system");
}

/// `pid` and its descendants, parents first: `fsbench io` measures in a
/// child of its own session (src/own_session.rs) where sessions share the
/// CPU, so what a test does to "the run" it does to every one of them.
pub fn family(pid: i32) -> Vec<i32> {
    let mut found = vec![pid];
    let mut next = 0;
    while next < found.len() {
        let tasks = PathBuf::from(format!("/proc/{}/task", found[next]));
        for task in std::fs::read_dir(tasks).into_iter().flatten().flatten() {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            found.extend(
                children
                    .split_whitespace()
                    .filter_map(|c| c.parse::<i32>().ok()),
            );
        }
        next += 1;
    }
    found
}

/// Whether every thread of `pid` is stopped (state T).
fn all_stopped(pid: i32) -> bool {
    let tasks = PathBuf::from(format!("/proc/{pid}/task"));
    std::fs::read_dir(&tasks)
        .into_iter()
        .flatten()
        .flatten()
        .all(|task| {
            let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
            // The state follows the command name in parentheses.
            stat.rsplit(") ")
                .next()
                .is_some_and(|rest| rest.starts_with('T'))
        })
}

/// The process and its children frozen with SIGSTOP until dropped (then
/// SIGCONT).
pub struct Frozen {
    pids: Vec<i32>,
}

impl Frozen {
    /// The run first (stopped, it forks no more), then its children.
    pub fn new(run: &Running) -> Frozen {
        stop(run.pid);
        let pids = family(run.pid);
        pids[1..].iter().for_each(|&pid| stop(pid));
        Frozen { pids }
    }
}

/// SIGSTOP to `pid`, and waits until every thread of it has stopped.
fn stop(pid: i32) {
    // SAFETY: kill has no memory-safety preconditions; the pid is a run's
    // or its child's, not yet reaped.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    wait_until(STARTUP_TIMEOUT, "every thread stopped", || all_stopped(pid));
}

impl Drop for Frozen {
    fn drop(&mut self) {
        for &pid in self.pids.iter().rev() {
            // SAFETY: as in `new`.
            unsafe { libc::kill(pid, libc::SIGCONT) };
        }
    }
}

/// `tree TARGET --scale 0.001 --ops find --cmd CMD`: the smallest tree run
/// that also runs the user's command `cmd`.
pub fn tree_cmd_args(target: &str, cmd: &str) -> Vec<String> {
    [
        "tree", target, "--scale", "0.001", "--ops", "find", "--cmd", cmd,
    ]
    .map(str::to_string)
    .to_vec()
}

/// A file system made by `mkfs` on a loop device over an image in a tmpfs,
/// mounted with `options` in a temporary directory; torn down on Drop.
/// None (with the reason printed) when not root.
pub struct LoopFs {
    _backing: TmpfsMount,
    pub device: String,
    mnt: tempfile::TempDir,
}

impl LoopFs {
    pub fn new(mkfs: &[&str], options: &str, size_mib: u64) -> Option<LoopFs> {
        Self::with_losetup_args(&[], mkfs, options, size_mib)
    }

    /// The same, with extra `losetup` arguments (e.g. `--sector-size 4096`).
    pub fn with_losetup_args(
        losetup: &[&str],
        mkfs: &[&str],
        options: &str,
        size_mib: u64,
    ) -> Option<LoopFs> {
        let backing = TmpfsMount::new(&format!("{}m", size_mib + 16))?;
        let image = backing.join("fs.img");
        std::fs::File::create(&image)
            .unwrap()
            .set_len(size_mib << 20)
            .unwrap();
        let out = Command::new("losetup")
            .args(["--find", "--show"])
            .args(losetup)
            .arg(&image)
            .output()
            .expect("cannot run losetup");
        assert!(
            out.status.success(),
            "losetup: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let device = String::from_utf8(out.stdout).unwrap().trim().to_string();
        let mnt = tempfile::Builder::new()
            .prefix("fsb-it-loop-")
            .tempdir()
            .unwrap();
        let fs = LoopFs {
            _backing: backing,
            device,
            mnt,
        };
        let (program, args) = mkfs.split_first().expect("mkfs needs a program");
        run_ok(Command::new(program).args(args).arg(&fs.device));
        run_ok(
            Command::new("mount")
                .args(["-o", options])
                .arg(&fs.device)
                .arg(fs.mnt.path()),
        );
        Some(fs)
    }

    pub fn path(&self) -> &Path {
        self.mnt.path()
    }

    pub fn arg(&self) -> String {
        self.mnt.path().display().to_string()
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.mnt.path()).status();
        let _ = Command::new("losetup").args(["-d", &self.device]).status();
    }
}

/// Runs a setup command; panics with its stderr when it fails.
pub fn run_ok(command: &mut Command) {
    let out = command.output().expect("cannot run command");
    assert!(
        out.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs a command with its output discarded: whether it succeeded.
pub fn succeeds(command: &mut Command) -> bool {
    command
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A loop device attached to an image (with its partitions, `-P`);
/// detached on drop.
pub struct Loop(pub PathBuf);

impl Loop {
    pub fn attach(image: &Path, partitions: bool) -> Loop {
        let mut losetup = Command::new("losetup");
        losetup.args(["--find", "--show"]);
        if partitions {
            losetup.arg("-P");
        }
        let out = losetup.arg(image).output().expect("run losetup");
        assert!(out.status.success(), "losetup: {out:?}");
        let device = String::from_utf8(out.stdout).expect("utf-8 device name");
        Loop(PathBuf::from(device.trim_end()))
    }

    /// The kernel name: "loop3" for /dev/loop3.
    pub fn name(&self) -> String {
        self.0
            .file_name()
            .expect("named")
            .to_string_lossy()
            .into_owned()
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        succeeds(Command::new("losetup").arg("-d").arg(&self.0));
    }
}

/// A mount of `device` on `point` (made if missing); unmounted on drop,
/// lazily if busy.
pub struct Mount(pub PathBuf);

impl Mount {
    pub fn new(device: &Path, point: &Path) -> Mount {
        std::fs::create_dir_all(point).expect("create mount point");
        assert!(
            succeeds(Command::new("mount").arg(device).arg(point)),
            "mount {} on {} failed",
            device.display(),
            point.display()
        );
        Mount(point.to_path_buf())
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        if !succeeds(Command::new("umount").arg(&self.0)) {
            succeeds(Command::new("umount").arg("-l").arg(&self.0));
        }
    }
}

/// A loop device on a sparse image the test made in a directory of its
/// own, optionally with a file system mounted from it; unmounted and
/// detached on Drop, also when the test panics.
pub struct LoopDevice {
    pub device: String,
    pub image: PathBuf,
    // Dropped in this order: the mount, the loop device, the directory.
    mount: Option<Mount>,
    attached: Loop,
    dir: tempfile::TempDir,
}

impl LoopDevice {
    /// A loop device on a `size` image in /var/tmp; None (after saying
    /// why) when not root.
    pub fn new(size: &str) -> Option<LoopDevice> {
        LoopDevice::new_in(Path::new("/var/tmp"), size)
    }

    /// A loop device on a `size` image in a directory made in `parent` (a
    /// loop device's image on another loop device's file system); None
    /// when not root.
    pub fn new_in(parent: &Path, size: &str) -> Option<LoopDevice> {
        if !is_root() {
            eprintln!("skipping: not root");
            return None;
        }
        let dir = tempfile::Builder::new()
            .prefix("fsb-loop-")
            .tempdir_in(parent)
            .unwrap();
        let image = dir.path().join("disk.img");
        let status = Command::new("truncate")
            .args(["-s", size])
            .arg(&image)
            .status()
            .unwrap();
        assert!(status.success(), "truncate failed");
        let attached = Loop::attach(&image, false);
        Some(LoopDevice {
            device: attached.0.display().to_string(),
            image,
            mount: None,
            attached,
            dir,
        })
    }

    /// Runs `mkfs.<fs_type> -q` (ext*, with -F) on the device.
    pub fn mkfs(&self, fs_type: &str) {
        self.mkfs_with(fs_type, &[]);
    }

    /// `mkfs` with `options` before the device.
    pub fn mkfs_with(&self, fs_type: &str, options: &[&str]) {
        let force = match fs_type {
            "xfs" | "btrfs" => "-f",
            _ => "-F",
        };
        let out = Command::new(format!("mkfs.{fs_type}"))
            .args(["-q", force])
            .args(options)
            .arg(&self.attached.0)
            .output()
            .unwrap();
        assert!(out.status.success(), "mkfs.{fs_type} failed: {out:?}");
    }

    /// Mounts the device on `dir/mnt` (made here), returning it.
    pub fn mount(&mut self) -> PathBuf {
        let point = self.dir.path().join("mnt");
        self.mount = Some(Mount::new(&self.attached.0, &point));
        point
    }

    /// Unmounts what `mount` mounted.
    pub fn unmount(&mut self) {
        self.mount = None;
    }
}

/// Mount points strictly below `dir`, from the mount table.
pub fn mounts_under(dir: &Path) -> Vec<String> {
    mount_points(dir, false)
}

/// Mount points on `dir` or below it.
pub fn mounts_at_or_under(dir: &Path) -> Vec<String> {
    mount_points(dir, true)
}

fn mount_points(dir: &Path, with_dir: bool) -> Vec<String> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let exact = dir.display().to_string();
    let prefix = format!("{exact}/");
    text.lines()
        .filter_map(|line| line.split(' ').nth(4))
        .filter(|point| point.starts_with(&prefix) || (with_dir && *point == exact))
        .map(str::to_string)
        .collect()
}

/// Whatever a failing test leaves in a directory fsbench builds in (a run
/// killed on the test's panic), released by `fsbench clean --force`
/// before the tmpfs it is on goes.
pub struct Cleaner(pub PathBuf);

impl Drop for Cleaner {
    fn drop(&mut self) {
        let _ = Command::new(FSBENCH)
            .args(["clean", "--force"])
            .arg(&self.0)
            .output();
    }
}

/// A file outside `mnt` holding `body` with `MNT` replaced by the mount's
/// path: a job or parameter file naming places on it.
pub fn file_naming_mount(mnt: &TmpfsMount, suffix: &str, body: &str) -> tempfile::NamedTempFile {
    let file = tempfile::Builder::new()
        .prefix("fsb-input-")
        .suffix(suffix)
        .tempfile()
        .unwrap();
    std::fs::write(file.path(), body.replace("MNT", &mnt.arg())).unwrap();
    file
}

/// A temporary file's path as an argument.
pub fn path_arg(file: &tempfile::NamedTempFile) -> &str {
    file.path().to_str().unwrap()
}

//! Adversarial input: sizes just past a block boundary, absurd rates,
//! results with nothing in them, threads that cannot start, endless input
//! files and for-loops that expand without end. Each gets one line on
//! stderr starting `fsbench: error:` and a non-zero exit (2 for bad input,
//! 1 for a run that failed), never a panic, a hang or unbounded memory;
//! where a target is involved, the sentinel next to the scratch directory
//! survives and no scratch directory is left.
mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::{
    FSBENCH, Output, Running, Sentinel, TmpfsMount, assert_no_scratch_left, run,
    tmpfs_with_sentinel,
};

/// Longest a run that should fail at once may take before the test calls
/// it a hang (generous: tests share 2 cores).
const HANG_TIMEOUT: Duration = Duration::from_secs(30);

/// Address space a run that reads an endless file gets: far more than
/// fsbench needs, far less than reading without a bound would take.
const ADDRESS_SPACE: &str = "--as=1073741824";

/// Runs `program args...` (stdin closed), killing it as a hang after
/// [`HANG_TIMEOUT`].
fn run_command(program: &str, args: &[&str]) -> Output {
    let cmd = std::iter::once(program)
        .chain(args.iter().copied())
        .collect::<Vec<_>>()
        .join(" ");
    Running::spawn_command(Command::new(program).args(args), cmd).wait_for(HANG_TIMEOUT)
}

/// fsbench with its address space limited to [`ADDRESS_SPACE`].
fn run_bounded<S: AsRef<str>>(args: &[S]) -> Output {
    let mut all = vec![ADDRESS_SPACE, FSBENCH];
    all.extend(args.iter().map(AsRef::as_ref));
    run_command("prlimit", &all)
}

/// A run on `mnt` that must be refused with exit `code` and an error
/// naming every one of `needles`, leaving the sentinel and no scratch.
fn refused_on<S: AsRef<str>>(
    mnt: &TmpfsMount,
    sentinel: &Sentinel,
    args: &[S],
    code: i32,
    needles: &[&str],
) {
    let out = run_bounded(args);
    out.assert_error(code, needles);
    sentinel.assert_intact();
    assert_no_scratch_left(mnt.path());
}

/// A file in a fresh temporary directory (kept until the guard drops).
fn temp_file(name: &str, text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    (dir, path.to_str().unwrap().to_string())
}

/// A vdbench parameter file with one sd (a lun in `mnt`), one wd and the
/// run definition `rd` (`size` is the sd's size).
fn vdbench_file(mnt: &TmpfsMount, size: &str, rd: &str) -> (tempfile::TempDir, String) {
    let text = format!(
        "sd=sd1,lun={}/vdb.dat,size={size}\nwd=wd1,sd=sd1,xfersize=4k\nrd=rd1,wd=wd1,{rd}\n",
        mnt.arg()
    );
    temp_file("parm", &text)
}

/// `io --vdbench` with the file of [`vdbench_file`], refused (exit 2) with
/// an error naming every one of `needles`.
fn vdbench_refused(size: &str, rd: &str, needles: &[&str]) {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let (_dir, parm) = vdbench_file(&mnt, size, rd);
    let args = ["io", "--vdbench", &parm, "-d", "0.4s", "-i", "0.2s"];
    refused_on(&mnt, &sentinel, &args, 2, needles);
}

const QUICK_IO: [&str; 6] = ["--duration", "0.4s", "--interval", "0.2s", "--warmup", "0"];

/// `io MNT` with a quick timing and `extra` flags.
fn io_args(mnt: &TmpfsMount, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["io".to_string(), mnt.arg()];
    args.extend(QUICK_IO.iter().chain(extra).map(|a| a.to_string()));
    args
}

// 1. File sizes 1 to 15 bytes past a 4 KiB boundary.

#[test]
fn io_file_size_not_whole_sectors_is_refused() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    for size in ["4097", "4111", "1048577"] {
        let args = io_args(&mnt, &["-s", size]);
        refused_on(&mnt, &sentinel, &args, 2, &[size, "multiple of 512"]);
    }
}

#[test]
fn vdbench_sd_size_not_whole_sectors_is_refused() {
    vdbench_refused("4097", "iorate=max", &["4097", "multiple of 512"]);
}

// 2. Rates too small to space I/Os by.

#[test]
fn io_absurd_rate_is_refused_naming_the_flag() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    for rate in ["1e-25", "1e-300", "0.0000001"] {
        let args = io_args(&mnt, &["-s", "1m", "--rate", rate]);
        refused_on(&mnt, &sentinel, &args, 2, &["--rate", rate]);
    }
}

#[test]
fn vdbench_absurd_iorate_is_refused_naming_the_parameter() {
    vdbench_refused("1m", "iorate=1e-300", &["iorate=1e-300"]);
}

// 3. A result with no targets (what `fsbench clean --json` writes).

/// The result `fsbench clean --json` writes for an empty directory.
fn result_without_targets(dir: &Path) -> String {
    let json = dir.join("clean.json");
    let json = json.to_str().unwrap();
    let target = dir.join("target");
    std::fs::create_dir(&target).unwrap();
    run(&["clean", "--json", json, target.to_str().unwrap()]).assert_success();
    json.to_string()
}

#[test]
fn report_of_a_result_without_targets_says_so_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let json = result_without_targets(dir.path());
    let html = dir.path().join("r.html");
    let html = html.to_str().unwrap();
    let formats: [&[&str]; 7] = [
        &[],
        &["--markdown"],
        &["--csv"],
        &["--csv", "--repetitions"],
        &["--html", html],
        &["--json", "-"],
        &["--format", "json"],
    ];
    for format in formats {
        let mut args = vec!["report", json.as_str()];
        args.extend_from_slice(format);
        run(&args).assert_error(2, &["clean.json", "no targets"]);
    }
    assert!(!Path::new(html).exists(), "no HTML file for nothing");
}

/// The fixture `name` with the first `from` replaced by `to`, written to
/// `dir` under the same name.
fn edited_fixture(dir: &Path, name: &str, from: &str, to: &str) -> String {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let text = std::fs::read_to_string(fixture).unwrap();
    assert!(text.contains(from), "{name} has no {from}");
    let edited = dir.join(name);
    std::fs::write(&edited, text.replacen(from, to, 1)).unwrap();
    edited.to_str().unwrap().to_string()
}

/// Found by tests/fuzz_parsers.rs: serde quotes the bad value, and a
/// newline in it spread the error over two lines.
#[test]
fn an_error_quoting_a_newline_stays_on_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let broken = edited_fixture(dir.path(), "run-before.json", "higher_is_better", "\\n");
    let out = run(&["report", &broken]);
    out.assert_error(2, &["run-before.json", "malformed", "`\\n`"]);
}

/// Found by tests/fuzz_parsers.rs: an interval figure near f64::MAX made
/// the chart's axis infinite, and the chart library looped for ever.
#[test]
fn a_figure_too_large_to_chart_is_an_error_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let from = "\"mib_per_s\": 739.25";
    let huge = edited_fixture(dir.path(), "run-after.json", from, "\"mib_per_s\": 1.7e308");
    let html = dir.path().join("r.html");
    let args = ["report", &huge, "--html", html.to_str().unwrap()];
    let out = Running::spawn(&args).wait_for(HANG_TIMEOUT);
    out.assert_error(1, &["chart", "out of the range a chart can show"]);
}

#[test]
fn compare_with_a_result_without_targets_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let json = result_without_targets(dir.path());
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/run-before.json"
    );
    run(&["compare", &json, fixture]).assert_error(2, &["clean.json", "no targets"]);
    run(&["compare", fixture, &json]).assert_error(2, &["clean.json", "no targets"]);
}

// 4. Threads: a documented cap, and threads that cannot be started.

#[test]
fn thread_counts_over_the_cap_are_refused() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let io = io_args(&mnt, &["-s", "1m", "-j", "4096"]);
    refused_on(&mnt, &sentinel, &io, 2, &["4096 threads", "1024"]);
    vdbench_refused(
        "1m",
        "iorate=max,forthreads=(1,2000)",
        &["2000 threads", "1024"],
    );
}

/// A user id no process runs as, so a limit on its processes counts only
/// the run's own threads.
const UNPRIVILEGED: &str = "54321";

/// Threads fsbench may have, in all, when the test limits them.
const THREAD_LIMIT: &str = "--nproc=6";

/// Runs fsbench as [`UNPRIVILEGED`] with at most [`THREAD_LIMIT`] threads;
/// the target must be writable by that user.
fn run_with_few_threads<S: AsRef<str>>(args: &[S]) -> Output {
    let mut all = vec![
        "--reuid",
        UNPRIVILEGED,
        "--regid",
        UNPRIVILEGED,
        "--clear-groups",
        "prlimit",
        THREAD_LIMIT,
        FSBENCH,
    ];
    all.extend(args.iter().map(AsRef::as_ref));
    run_command("setpriv", &all)
}

/// `text` split into arguments (the paths in tests hold no blanks).
fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_string).collect()
}

/// A run whose threads cannot all start, on a tmpfs everyone may write to
/// with the sticky bit, as /tmp (`args_for` gives its arguments): exit 1, one line saying so, the
/// started threads stopped (no hang), the sentinel intact and the scratch
/// directory removed.
fn fails_to_start_threads(args_for: impl FnOnce(&TmpfsMount) -> Vec<String>) {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let open = std::os::unix::fs::PermissionsExt::from_mode(0o1777);
    std::fs::set_permissions(mnt.path(), open).unwrap();
    let out = run_with_few_threads(&args_for(&mnt));
    out.assert_error(1, &["cannot start", "thread"]);
    sentinel.assert_intact();
    assert_no_scratch_left(mnt.path());
}

#[test]
fn io_threads_that_cannot_start_fail_cleanly() {
    fails_to_start_threads(|mnt| io_args(mnt, &["-s", "1m", "-j", "64"]));
}

#[test]
fn bonnie_seekers_that_cannot_start_fail_cleanly() {
    fails_to_start_threads(|mnt| {
        words(&format!(
            "bonnie -d {} -s 8:4096:100:64 -f -n 0 -r 0",
            mnt.arg()
        ))
    });
}

#[test]
fn tree_threads_that_cannot_start_fail_cleanly() {
    fails_to_start_threads(|mnt| {
        words(&format!(
            "tree {} --scale 0.001 --ops find --threads 64 --no-drop-caches",
            mnt.arg()
        ))
    });
}

#[test]
fn postmark_instances_that_cannot_start_fail_cleanly() {
    fails_to_start_threads(|mnt| {
        let config = mnt.join("pm.cfg");
        let commands = format!(
            "set location {}\nset number 20\nset transactions 20\nset threads 64\nrun\n",
            mnt.arg()
        );
        std::fs::write(&config, commands).unwrap();
        vec!["postmark".into(), config.to_str().unwrap().into()]
    });
}

// 5. Endless and huge input files.

/// Every way fsbench reads a file it is given, fed /dev/zero (which never
/// ends) and a FIFO no one writes (whose open would block forever, deaf to
/// SIGTERM): a usage error at once, saying what the file is.
#[test]
fn endless_and_blocking_input_files_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/run-before.json"
    );
    let target = dir.path().to_str().unwrap();
    for (input, what) in [
        ("/dev/zero", "(a character device)"),
        (fifo.to_str().unwrap(), "(a FIFO)"),
    ] {
        let (_load, loader) = temp_file("pm.cfg", &format!("load {input}\n"));
        let (_inc, include) = temp_file("parm", &format!("include={input}\n"));
        let (_fio, fio_include) = temp_file("jobs.fio", &format!("[j]\ninclude {input}\n"));
        let cases: [&[&str]; 13] = [
            &["report", input],
            &["compare", input, fixture],
            &["run", "--resume", input],
            &["postmark", input],
            &["postmark", &loader],
            &["io", "--vdbench", input],
            &["io", "--vdbench", &include],
            &["io", "--fio", input],
            &["io", "--fio", &fio_include],
            &["io", "--fio", input, "--lint"],
            &["run", "--suite", input, "--target", target],
            &["run", "--configs", input],
            &[
                "bonnie", "-d", target, "-s", "1", "-n", "0", "-r", "0", "-Z", input,
            ],
        ];
        for args in cases {
            let out = run_bounded(args);
            out.assert_error(2, &[input, "not a regular file", what]);
        }
    }
}

#[test]
fn a_huge_result_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let huge = dir.path().join("huge.json");
    let file = std::fs::File::create(&huge).unwrap();
    file.set_len(4 << 30).unwrap();
    let huge = huge.to_str().unwrap();
    run_bounded(&["report", huge]).assert_error(2, &["huge.json", "64 MiB"]);
}

#[test]
fn postmark_stdin_without_line_ends_is_refused() {
    let script = format!("exec {FSBENCH} postmark < /dev/zero");
    let out = run_command("prlimit", &[ADDRESS_SPACE, "sh", "-c", &script]);
    out.assert_error(2, &["stdin", "line"]);
}

// 6. vdbench for-loops that never end or expand to millions of runs.

#[test]
fn vdbench_loops_that_overflow_or_explode_are_refused() {
    let rds = [
        ("iorate=max,forxfersize=(1-16000000t,d)", "forxfersize"),
        ("iorate=max,forthreads=(1-4294967295,1)", "10000"),
        (
            "iorate=max,forthreads=(1-1000,1),forrdpct=(0,10,20,30,40,50,60,70,80,90,100),forseekpct=(0,50,100)",
            "10000",
        ),
    ];
    for (rd, needle) in rds {
        vdbench_refused("1m", rd, &[needle]);
    }
}

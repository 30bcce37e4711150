//! fsbench runs as root on machines other users share. What those users
//! can plant or swap must not steer it: a save replaces the name it was
//! given, never what a link there points to; a results directory another
//! user could swap for a link is refused before anything is measured; a
//! result file grants no permission when it is resumed; and a run still
//! measuring cannot be resumed by a second process.
mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{Running, read_json, run, tmpfs_with_sentinel, wait_until};

/// A user other than root, who owns what the tests plant.
const OTHER_UID: u32 = 65534;

/// A directory of the test's with `mode`.
fn dir_with_mode(parent: &Path, name: &str, mode: u32) -> PathBuf {
    let dir = parent.join(name);
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
    dir
}

/// A second's `fsbench io` on `target`, saved with --json `json`.
fn io_saved_as(target: &str, json: &Path) -> common::Output {
    let json = json.to_str().unwrap();
    run(&[
        "io",
        target,
        "-s",
        "1m",
        "-b",
        "64k",
        "--duration",
        "0.2s",
        "--warmup",
        "0",
        "-q",
        "--json",
        json,
    ])
}

/// `ln -s /etc/shadow /tmp/out.json` by another user once made root's save
/// replace /etc/shadow.
#[test]
fn a_save_replaces_a_link_another_user_planted_never_what_it_points_to() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let base = tempfile::tempdir().unwrap();
    let shared = dir_with_mode(base.path(), "tmp", 0o1777);
    let victim = base.path().join("shadow");
    std::fs::write(&victim, "root:secret\n").unwrap();
    let planted = shared.join("out.json");
    std::os::unix::fs::symlink(&victim, &planted).unwrap();
    std::os::unix::fs::lchown(&planted, Some(OTHER_UID), Some(OTHER_UID)).unwrap();

    io_saved_as(&mnt.arg(), &planted).assert_success();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "root:secret\n");
    assert!(
        planted.symlink_metadata().unwrap().is_file(),
        "the link is replaced"
    );
    assert_eq!(read_json(&planted)["kind"], "fsbench-result");
    sentinel.assert_intact();
}

/// A results directory in a directory others may write (not sticky) or
/// that another user owns could be swapped for a link to /etc between two
/// saves: refused in one line, before a workload starts.
#[test]
fn a_results_directory_another_user_can_swap_is_refused_before_measuring() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let base = tempfile::tempdir().unwrap();
    let open = dir_with_mode(base.path(), "open", 0o777);
    let theirs = dir_with_mode(base.path(), "theirs", 0o755);
    std::os::unix::fs::chown(&theirs, Some(OTHER_UID), Some(OTHER_UID)).unwrap();
    let target = mnt.arg();
    let cases = [
        (open.join("results"), "is writable by others and not sticky"),
        (theirs.join("results"), "belongs to uid 65534"),
    ];
    for (dir, why) in &cases {
        let dir_arg = dir.to_str().unwrap();
        let out = run(&[
            "run",
            "--suite",
            "quick",
            "-t",
            &target,
            "--save-dir",
            dir_arg,
            "-q",
        ]);
        out.assert_error(2, &["refusing to save in", dir_arg, why]);
        assert!(out.stdout.is_empty(), "nothing measured\n{out}");
        let json = dir.join("out.json");
        let out = io_saved_as(&target, &json);
        out.assert_error(2, &["refusing to save in", why]);
        assert!(!json.exists(), "{out}");
    }
    common::assert_no_scratch_left(mnt.path());
    sentinel.assert_intact();
}

/// A suite whose tree command fails the first time it runs and creates
/// `touched` the next: a run of it stops with a partial result, which
/// `--resume` finishes by running the command again.
fn shell_suite(dir: &Path, touched: &Path) -> PathBuf {
    let tried = dir.join("tried");
    let command = format!(
        "test -e {tried} && touch {touched} || (touch {tried}; false)",
        tried = tried.display(),
        touched = touched.display()
    );
    let suite = dir.join("shell.toml");
    let text = format!(
        "description = \"shell\"\nrepeat = 1\n\
         [[workload]]\nkind = \"io\"\nargs = \"-s 1m -b 64k --duration 0.2s --warmup 0\"\n\
         [[workload]]\nkind = \"tree\"\nargs = [\"--dataset\", \"images\", \"--scale\", \"0.001\", \
         \"--ops\", \"find\", \"--cmd\", \"{command}\"]\n"
    );
    std::fs::write(&suite, text).unwrap();
    suite
}

/// A result file is data anyone may have edited: a run that had
/// --allow-shell is resumed only when the resuming command line gives it
/// again.
#[test]
fn resume_takes_no_permission_from_the_result_file() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let touched = dir.path().join("touched");
    let suite = shell_suite(dir.path(), &touched);
    let json = dir.path().join("run.json");
    let (suite_arg, json_arg) = (suite.to_str().unwrap(), json.to_str().unwrap());
    let target = format!("t={}", mnt.arg());
    let first = run(&[
        "run",
        "--suite",
        suite_arg,
        "-t",
        &target,
        "--allow-shell",
        "--no-save",
        "-q",
        "--json",
        json_arg,
    ]);
    first.assert_code(1);
    assert!(read_json(&json)["finished"].is_null(), "{first}");
    assert!(!touched.exists());

    let refused = run(&["run", "--resume", json_arg]);
    refused.assert_error(2, &[json_arg, "give --allow-shell again"]);
    assert!(!touched.exists(), "the file's --allow-shell ran a command");

    let resumed = run(&["run", "--resume", json_arg, "--allow-shell", "-q"]);
    resumed.assert_success();
    assert!(touched.exists(), "{resumed}");
    assert!(read_json(&json)["finished"].is_string());
    sentinel.assert_intact();
}

/// The verdict `fsbench results` gives the one run saved in `dir`.
fn verdict_listed(dir: &str) -> String {
    listed(dir)["verdict"].as_str().unwrap().to_string()
}

/// The one run `fsbench results` lists in `dir`, as its JSON says it.
fn listed(dir: &str) -> serde_json::Value {
    let out = run(&["results", "--dir", dir, "--json", "-"]);
    out.assert_success();
    let listing: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let runs = listing["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{out}");
    runs[0].clone()
}

/// A run still measuring is not resumed a second time: `fsbench results`
/// says it is running and offers nothing, and `--resume` is refused until
/// it is killed; then `--resume FILE --max-time T` finishes it.
#[test]
fn a_live_run_is_not_resumed_and_results_says_it_is_running() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("slow.toml");
    std::fs::write(
        &suite,
        "description = \"slow\"\nrepeat = 1\n\
         [[workload]]\nkind = \"io\"\nlabel = \"quick\"\nargs = \"-s 1m --duration 0.2s -b 64k --warmup 0\"\n\
         [[workload]]\nkind = \"io\"\nlabel = \"slow\"\nargs = \"-s 1m --duration 60s -b 64k --warmup 0\"\n",
    )
    .unwrap();
    let results = dir.path().join("results");
    let target = format!("t={}", mnt.arg());
    let (suite_arg, results_arg) = (suite.to_str().unwrap(), results.to_str().unwrap());
    let mut live = Running::spawn(&[
        "run",
        "--suite",
        suite_arg,
        "-t",
        &target,
        "--save-dir",
        results_arg,
        "-q",
        "--precision",
        "50%",
        "--repeat",
        "1",
        "--max-repeat",
        "2",
    ]);
    let mut file = PathBuf::new();
    wait_until(Duration::from_secs(60), "the first result saved", || {
        assert!(live.is_running(), "the run ended early");
        let saved = std::fs::read_dir(&results).into_iter().flatten().flatten();
        let found = saved
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "json"));
        found.is_some_and(|path| {
            let held = std::fs::read_to_string(&path).unwrap_or_default();
            file = path;
            held.contains("\"quick\"")
        })
    });
    let file_arg = file.to_str().unwrap();
    assert_eq!(verdict_listed(results_arg), "running: 1 results so far");
    run(&["run", "--resume", file_arg]).assert_error(2, &[file_arg, "a running fsbench"]);
    assert!(live.is_running(), "the refusal left the live run alone");

    live.signal(libc::SIGKILL);
    live.wait();
    run(&["clean", &mnt.arg()]).assert_success();
    let listed = listed(results_arg);
    assert!(
        listed["verdict"].as_str().unwrap().contains("resumable"),
        "{listed}"
    );
    let resume = listed["resume"].as_str().unwrap_or_default();
    assert_eq!(
        resume,
        format!("fsbench run --resume {file_arg}"),
        "{listed}"
    );
    // The slow entry is cut to a quick one: the suite text is the file's.
    let mut record = read_json(&file);
    let text = record["suite_text"]
        .as_str()
        .unwrap()
        .replace("60s", "0.2s");
    record["suite_text"] = text.into();
    std::fs::write(&file, record.to_string()).unwrap();
    let resumed = run(&["run", "--resume", file_arg, "--max-time", "1h", "-q"]);
    resumed.assert_success();
    assert!(read_json(&file)["finished"].is_string(), "{resumed}");
    let left: Vec<_> = std::fs::read_dir(&results)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left.len(), 1, "the result alone, no lock file: {left:?}");
    sentinel.assert_intact();
}

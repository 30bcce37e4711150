//! Deleting in readdir order on a file system whose readdir skips entries
//! when the directory changes under an open stream (NFS, SMB, AFP, many
//! FUSE file systems).
//!
//! bonnie++'s "Delete files in sequential order" unlinks each entry while
//! its directory stream is still open; where readdir resumes by offset
//! ("cookie"), the entries that slid into the removed positions are never
//! returned, and bonnie++ dies with `Bonnie: drastic I/O error (rmdir):
//! Directory not empty`. fsbench reads each directory's complete listing
//! before deleting and repeats until the directory is empty.
//!
//! The file system is `tests/fixtures/skipfs.py`, a small in-memory FUSE
//! file system (Debian's python3-fusepy) with exactly that readdir. The
//! tests need root and /dev/fuse, and skip without them; with them, a
//! missing python3-fusepy is a failure, not a skip.
mod common;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{FILE_METRICS, Output, Running, Sentinel, bonnie_args, listing};

/// Debian's interpreter: python3-fusepy installs only for it (the python3
/// first on PATH may be another one).
const PYTHON: &str = "/usr/bin/python3";
const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/skipfs.py");
const INSTALL_HINT: &str = "install them with: apt-get install -y python3-fusepy fuse";
/// Debian names the module `fusepy`; upstream (pip) names it `fuse`.
const IMPORT_FUSEPY: &str = "try:\n    import fusepy\nexcept ImportError:\n    import fuse\n";
/// How long the fixture may take to mount (a Python start-up).
const MOUNT_TIMEOUT: Duration = Duration::from_secs(20);
/// Each run takes well under a second; this only stops a hang.
const RUN_TIMEOUT: Duration = Duration::from_secs(90);
/// `-n 1`: 1024 files, all in one directory.
const FILES: u64 = 1024;

/// True if these tests can run here; says why not otherwise. Panics if
/// only the Python side is missing: that is an installation to fix.
fn fuse_ready() -> bool {
    if !common::is_root() {
        eprintln!("skipping: not root (mounting a FUSE file system needs it)");
        return false;
    }
    if !Path::new("/dev/fuse").exists() {
        eprintln!("skipping: /dev/fuse is missing (no FUSE in this kernel or container)");
        return false;
    }
    let check = Command::new(PYTHON)
        .args(["-c", IMPORT_FUSEPY])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {PYTHON}: {e}; {INSTALL_HINT}"));
    assert!(
        check.status.success(),
        "{PYTHON} cannot import fusepy, which tests/fixtures/skipfs.py needs; \
         {INSTALL_HINT}\n{}",
        String::from_utf8_lossy(&check.stderr)
    );
    true
}

/// A skipfs instance mounted on a fresh temporary directory; unmounted,
/// its process ended and the directory removed on Drop, also when the test
/// panics.
struct SkipFs {
    // Dropped (removed) after `Drop::drop` has unmounted the mount point.
    dir: tempfile::TempDir,
    mnt: PathBuf,
    log: PathBuf,
    child: Option<Child>,
}

impl SkipFs {
    fn mount() -> SkipFs {
        Self::mount_with(&[])
    }

    /// Mounted with the fixture's `env` settings (SKIPFS_NO_LINKS...).
    fn mount_with(env: &[(&str, &str)]) -> SkipFs {
        // Not named fsbench-*: `fsbench clean /tmp` must never see it.
        let dir = tempfile::Builder::new()
            .prefix("fsb-fuse-")
            .tempdir()
            .expect("cannot create a temporary directory");
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        // Outside the mount: the fixture's own messages and its trace of
        // readdir requests (SKIPFS_TRACE=1).
        let log = dir.path().join("skipfs.log");
        let log_file = File::create(&log).unwrap();
        let child = Command::new(PYTHON)
            .arg(FIXTURE)
            .arg(&mnt)
            .env("SKIPFS_TRACE", "1")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().unwrap())
            .stderr(log_file)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {PYTHON} {FIXTURE}: {e}"));
        let mut fs = SkipFs {
            dir,
            mnt,
            log,
            child: Some(child),
        };
        fs.wait_mounted();
        fs
    }

    fn wait_mounted(&mut self) {
        let deadline = Instant::now() + MOUNT_TIMEOUT;
        while !self.is_mounted() {
            let child = self.child.as_mut().unwrap();
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "skipfs exited ({status}) before mounting {}\n{}",
                    self.mnt.display(),
                    self.trace()
                );
            }
            assert!(
                Instant::now() < deadline,
                "skipfs did not mount {} within {MOUNT_TIMEOUT:?}\n{}",
                self.mnt.display(),
                self.trace()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn is_mounted(&self) -> bool {
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        let mnt = self.mnt.to_str().expect("temp paths are UTF-8");
        mounts.lines().any(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            fields.len() > 2 && fields[1] == mnt && fields[2] == "fuse.skipfs"
        })
    }

    fn path(&self) -> &Path {
        &self.mnt
    }

    fn arg(&self) -> String {
        self.mnt.to_str().expect("temp paths are UTF-8").to_string()
    }

    /// A file outside the mount.
    fn outside(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Everything the fixture printed so far: errors and readdir trace.
    fn trace(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The readdir requests traced so far for directories whose path
    /// contains `needle`: (offset asked for, entries the list had then).
    fn readdirs(&self, needle: &str) -> Vec<(u64, u64)> {
        self.trace()
            .lines()
            .filter_map(|line| {
                let rest = line.strip_prefix("skipfs: readdir ")?;
                let (path, numbers) = rest.rsplit_once(" offset=")?;
                let (offset, count) = numbers.split_once(" of ")?;
                path.contains(needle)
                    .then(|| Some((offset.parse().ok()?, count.parse().ok()?)))?
            })
            .collect()
    }
}

impl Drop for SkipFs {
    fn drop(&mut self) {
        let unmounted = Command::new("fusermount")
            .arg("-u")
            .arg(&self.mnt)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !unmounted {
            // Lazily: a busy mount must not make Drop fail.
            let _ = Command::new("umount").arg("-l").arg(&self.mnt).status();
        }
        if let Some(mut child) = self.child.take() {
            // Unmounting ends the fixture; give it a moment, then kill it.
            let deadline = Instant::now() + Duration::from_secs(5);
            while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn run_bonnie_plus_plus(fs: &SkipFs) -> Output {
    let bonnie = common::require_tool("bonnie++");
    let args = ["-u", "root", "-d", &fs.arg(), "-s", "0", "-n", "1", "-q"];
    let cmd = format!("{} {}", bonnie.display(), args.join(" "));
    Running::spawn_command(Command::new(&bonnie).args(args), cmd).wait_for(RUN_TIMEOUT)
}

/// The problem: real bonnie++ dies in "Delete files in sequential order"
/// on skipfs. If it passes, skipfs no longer reproduces the skipping, and
/// the fixture (not this test) needs fixing.
#[test]
fn bonnie_plus_plus_fails_where_readdir_skips() {
    if !fuse_ready() {
        return;
    }
    let fs = SkipFs::mount();
    let started = Instant::now();
    let out = run_bonnie_plus_plus(&fs);
    eprintln!("bonnie++ on skipfs took {:?}", started.elapsed());
    assert!(
        out.status.code().is_some(),
        "bonnie++ was killed by a signal\n{out}\n{}",
        fs.trace()
    );
    assert!(
        !out.status.success(),
        "bonnie++ passed on skipfs: the fixture does not reproduce readdir skipping \
         entries after unlinks, so it proves nothing about fsbench; fix \
         tests/fixtures/skipfs.py (do not weaken this assertion)\n{out}\n{}",
        fs.trace()
    );
    let text = format!("{}{}", out.stdout, out.stderr);
    assert!(
        text.contains("Directory not empty"),
        "bonnie++ failed, but not with 'Directory not empty' at rmdir\n{out}\n{}",
        fs.trace()
    );
}

/// The fix: fsbench completes the same workload on skipfs, deletes every
/// file, and removes only its own scratch directory.
#[test]
fn fsbench_deletes_everything_where_readdir_skips() {
    if !fuse_ready() {
        return;
    }
    let fs = SkipFs::mount();
    let sentinel = Sentinel::plant(fs.path());
    let json = fs.outside("result.json");
    let json_arg = json.to_str().unwrap().to_string();
    let started = Instant::now();
    let out = Running::spawn(&bonnie_args(
        &fs.arg(),
        &["-s", "0", "-n", "1", "-r", "0", "-q", "--json", &json_arg],
    ))
    .wait_for(RUN_TIMEOUT);
    eprintln!("fsbench on skipfs took {:?}", started.elapsed());
    out.assert_no_panic();
    assert_eq!(
        out.status.code(),
        Some(0),
        "fsbench failed on skipfs (readdir skipping entries after unlinks)\n{out}\n{}",
        fs.trace()
    );

    let result = common::read_json(&json);
    let target = &result["targets"][0];
    assert_eq!(
        target["env"]["fs_type"], "fuse.skipfs",
        "the run was not on skipfs\n{result:#}"
    );
    let workload = &target["workloads"][0];
    let metrics = workload["metrics"]
        .as_array()
        .unwrap_or_else(|| panic!("no metrics array\n{result:#}"));
    let names: Vec<&str> = metrics.iter().filter_map(|m| m["name"].as_str()).collect();
    assert_eq!(
        names, FILE_METRICS,
        "with -s 0 exactly the six file metrics are expected\n{result:#}"
    );
    for metric in metrics {
        assert_eq!(
            metric["samples"].as_u64(),
            Some(FILES),
            "every file test covers all {FILES} files\n{metric:#}"
        );
        assert!(
            metric["value"]
                .as_f64()
                .is_some_and(|v| v.is_finite() && v > 0.0),
            "a file test without a rate\n{metric:#}"
        );
    }
    let notes = workload["notes"]
        .as_array()
        .unwrap_or_else(|| panic!("no notes array\n{result:#}"));
    eprintln!("notes: {notes:?}; cleanup: {}", target["cleanup"]);

    // The listing of fsbench's test directory really came in several
    // requests, each resumed at an offset: unlinking between them (what
    // bonnie++ does) would have skipped entries.
    let requests = fs.readdirs("/fsbench-");
    assert!(
        requests
            .iter()
            .any(|&(offset, count)| offset > 0 && offset < count && count > FILES),
        "skipfs never served fsbench's full test directory in several chunks, so this \
         run did not exercise readdir skipping\n{}",
        fs.trace()
    );

    sentinel.assert_intact();
    common::assert_no_scratch_left(fs.path());
    assert_eq!(
        listing(fs.path()),
        ["SENTINEL", "sentinel-dir"],
        "fsbench left something on skipfs"
    );
}

/// A file system without links and user attributes (skipfs refusing
/// them, as SMB without its Unix extensions does): `fsbench meta` skips
/// those operations, says why, and counts the rest.
#[test]
fn meta_skips_what_the_file_system_refuses_and_says_so() {
    if !fuse_ready() {
        return;
    }
    let fs = SkipFs::mount_with(&[("SKIPFS_NO_LINKS", "1")]);
    let sentinel = Sentinel::plant(fs.path());
    let json = fs.outside("meta.json");
    let out = Running::spawn(&[
        "meta",
        &fs.arg(),
        "-n",
        "40",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ])
    .wait_for(RUN_TIMEOUT);
    out.assert_success();
    let result = common::read_json(&json);
    let workload = &result["targets"][0]["workloads"][0];
    let names = common::metric_names(workload);
    for skipped in ["symlink", "link", "setxattr", "getxattr"] {
        assert!(
            !names.contains(&format!("{skipped}_ops_s").as_str()),
            "{names:?}"
        );
    }
    assert!(names.contains(&"create_ops_s") && names.contains(&"unlink_ops_s"));
    let notes = workload["notes"].to_string();
    for note in [
        "symlink skipped: fuse.skipfs does not support symbolic links",
        "link skipped: fuse.skipfs does not support hard links",
        "setxattr/getxattr skipped: fuse.skipfs does not support user extended attributes",
    ] {
        assert!(notes.contains(note), "{note} missing in {notes}");
    }
    sentinel.assert_intact();
    common::assert_no_scratch_left(fs.path());
}

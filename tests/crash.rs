//! `fsbench crash`: real file systems on the real loop and FUSE drivers,
//! cut off by the recorder. Each configuration's verdict is checked for
//! what it must find (nothing lost with barriers; losses without them, or
//! on a lying disk; a skipped fsync caught), and every way out leaves
//! nothing mounted or attached and the sentinel beside the scratch
//! directory intact.
mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{Running, Sentinel, TmpfsMount, run, wait_until};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn config(name: &str, mkfs: &str, options: &str) -> String {
    let fs = mkfs
        .split_whitespace()
        .next()
        .unwrap()
        .trim_start_matches("mkfs.");
    format!(
        "[[config]]\nname = \"{name}\"\nmkfs = \"{mkfs} {{dev}}\"\noptions = \"{options}\"\ntype = \"{fs}\"\n\n"
    )
}

/// Whether this machine has FUSE and the programs a crash run needs.
fn can_record(programs: &[&str]) -> bool {
    let have = |p: &str| {
        std::process::Command::new("sh")
            .args(["-c", &format!("command -v {p}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let ok =
        common::is_root() && Path::new("/dev/fuse").exists() && programs.iter().all(|p| have(p));
    if !ok {
        eprintln!("skipping: needs root, /dev/fuse and {programs:?}");
    }
    ok
}

/// A tmpfs for the images with a sentinel, a configurations file, and a
/// cleaner that releases what a failed test left.
struct Lab {
    _cleaner: common::Cleaner,
    sentinel: Sentinel,
    mnt: TmpfsMount,
    configs: PathBuf,
    dir: tempfile::TempDir,
}

impl Lab {
    /// One ext4 with its defaults: most tests need no more.
    fn ext4() -> Option<Lab> {
        Lab::ext4_on("3g")
    }

    /// The same on a tmpfs of `size`.
    fn ext4_on(size: &str) -> Option<Lab> {
        Lab::sized(
            &config("ext4", "mkfs.ext4 -F", ""),
            &["mkfs.ext4", "e2fsck"],
            size,
        )
    }

    /// ext4 with its defaults, then without barriers.
    fn seed003() -> Option<Lab> {
        let configs = [
            config("ext4-defaults", "mkfs.ext4 -F", ""),
            config("ext4-nobarrier", "mkfs.ext4 -F", "barrier=0"),
        ]
        .concat();
        Lab::new(&configs, &["mkfs.ext4", "e2fsck"])
    }

    fn new(configs: &str, programs: &[&str]) -> Option<Lab> {
        Lab::sized(configs, programs, "3g")
    }

    fn sized(configs: &str, programs: &[&str], size: &str) -> Option<Lab> {
        if !can_record(programs) {
            return None;
        }
        let mnt = TmpfsMount::new(size)?;
        let dir = tempfile::tempdir().unwrap();
        Some(Lab {
            _cleaner: common::Cleaner(mnt.path().to_path_buf()),
            sentinel: Sentinel::plant(mnt.path()),
            configs: write(dir.path(), "configs.toml", configs),
            mnt,
            dir,
        })
    }

    fn args(&self, extra: &[&str]) -> Vec<String> {
        let mut args: Vec<String> = [
            "crash",
            "--configs",
            self.configs.to_str().unwrap(),
            "--images",
            &self.mnt.arg(),
            "--image-size",
            "320m",
            "--workload-size",
            "8m",
        ]
        .map(String::from)
        .to_vec();
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    }

    /// Runs it with a JSON result; the result's targets.
    fn crash(&self, extra: &[&str]) -> (common::Output, Vec<serde_json::Value>) {
        let json = self.dir.path().join("crash.json");
        let mut args = self.args(extra);
        args.extend(["--json".to_string(), json.display().to_string()]);
        let out = run(&args);
        out.assert_success();
        let record: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let targets = record["targets"].as_array().unwrap().clone();
        self.assert_all_gone();
        (out, targets)
    }

    fn assert_all_gone(&self) {
        let under = format!("{}/", self.mnt.path().display());
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        let left: Vec<&str> = mounts.lines().filter(|l| l.contains(&under)).collect();
        assert!(left.is_empty(), "mounts left: {left:?}");
        let loops: Vec<String> = std::fs::read_dir("/sys/block")
            .unwrap()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let backing =
                    std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).ok()?;
                backing.starts_with(&under).then_some(name)
            })
            .collect();
        assert!(loops.is_empty(), "loop devices left: {loops:?}");
        assert_eq!(
            common::listing(self.mnt.path()),
            ["SENTINEL", "sentinel-dir"],
            "only the sentinel is left"
        );
        self.sentinel.assert_intact();
    }
}

fn durability(target: &serde_json::Value) -> &serde_json::Value {
    &target["durability"]
}

fn count(target: &serde_json::Value, field: &str) -> u64 {
    durability(target)[field]
        .as_u64()
        .unwrap_or_else(|| panic!("{field} in {target}"))
}

/// With barriers, ext4, xfs and btrfs keep every acknowledged operation
/// over at least 100 crash states each (the cache model: any subset of the
/// unflushed writes, torn at sector size), and the atomic replace never
/// leaves a mixed or empty file (no corrupt operation at all).
#[test]
fn with_barriers_ext4_xfs_and_btrfs_lose_nothing_acknowledged() {
    let configs = [
        config("ext4", "mkfs.ext4 -F", ""),
        config("xfs", "mkfs.xfs -f", ""),
        config("btrfs", "mkfs.btrfs -f", ""),
    ]
    .concat();
    let Some(lab) = Lab::new(
        &configs,
        &[
            "mkfs.ext4",
            "mkfs.xfs",
            "mkfs.btrfs",
            "e2fsck",
            "xfs_repair",
            "btrfs",
        ],
    ) else {
        return;
    };
    let (out, targets) = lab.crash(&["--cuts", "100"]);
    for target in &targets {
        let name = target["name"].as_str().unwrap();
        assert!(count(target, "states") >= 100, "{name}: {target}");
        assert!(count(target, "flushes") > 0, "{name} flushed: {target}");
        // Not a vacuous pass: the states held acknowledged files to judge.
        assert!(
            count(target, "acknowledged_judged") > 10 * count(target, "states"),
            "{name}: {target}"
        );
        for field in [
            "states_failed",
            "states_losing",
            "acknowledged_lost",
            "acknowledged_corrupt",
            "states_fsck_errors",
            "states_unmountable",
        ] {
            assert_eq!(count(target, field), 0, "{name}: {field}\n{out}");
        }
        assert!(
            out.stdout.contains(&format!(
                "{name}: durability: 0 of {} cuts lost acknowledged data",
                count(target, "states")
            )),
            "{out}"
        );
    }
}

/// btrfs without barriers mostly loses the whole file system: a cut it
/// cannot mount counts as a loss, in the headline, the verdict's clause and
/// Fisher's test alike; a configuration is never "safe" because its cuts
/// left nothing to judge.
#[test]
fn a_cut_that_leaves_the_file_system_unmountable_counts_as_lost() {
    let configs = [
        config("btrfs-defaults", "mkfs.btrfs -f", ""),
        config("btrfs-nobarrier", "mkfs.btrfs -f", "nobarrier"),
    ]
    .concat();
    let Some(lab) = Lab::new(&configs, &["mkfs.btrfs", "btrfs"]) else {
        return;
    };
    let (out, targets) = lab.crash(&["--cuts", "40"]);
    let nobarrier = &targets[1];
    let unmountable = count(nobarrier, "states_unmountable");
    assert!(
        unmountable > 0,
        "no cut left btrfs unmountable: the test proves nothing\n{out}"
    );
    let failed = count(nobarrier, "states_failed");
    assert!(
        failed >= unmountable + count(nobarrier, "states_losing"),
        "{out}"
    );
    let text = common::unwrapped(&out.stdout);
    assert!(
        text.contains(&format!(
            "btrfs-nobarrier: durability: lost data in {failed} of 40 cuts"
        )) && text.contains(&format!("{unmountable} left it unmountable")),
        "{out}"
    );
    assert!(
        text.contains(&format!(
            "btrfs-nobarrier loses data in more cuts than btrfs-defaults ({failed} of 40 against 0 of 40"
        )),
        "{out}"
    );
}

/// ext4 with barrier=0 never flushes: under the cache model its power cuts
/// lose acknowledged data, silently (fsck clean), and the verdict says so
/// against ext4's defaults with Fisher's exact test.
#[test]
fn ext4_without_barriers_loses_acknowledged_data_and_the_verdict_says_so() {
    let Some(lab) = Lab::seed003() else {
        return;
    };
    let (out, targets) = lab.crash(&["--cuts", "40"]);
    let (defaults, nobarrier) = (&targets[0], &targets[1]);
    assert_eq!(count(defaults, "states_losing"), 0, "{out}");
    assert_eq!(count(nobarrier, "flushes"), 0, "{out}");
    let losing = count(nobarrier, "states_losing");
    assert!(
        losing >= 20,
        "most cuts lose data without barriers: {losing}\n{out}"
    );
    assert!(count(nobarrier, "states_silent") > 0, "{out}");
    let failed = count(nobarrier, "states_failed");
    assert!(failed >= losing, "{out}");
    assert!(
        common::unwrapped(&out.stdout).contains(&format!(
            "ext4-nobarrier: durability: lost data in {failed} of 40 cuts ({losing} lost acknowledged data"
        )),
        "{out}"
    );
    assert!(
        common::unwrapped(&out.stdout).contains(&format!(
            "ext4-nobarrier loses data in more cuts than ext4-defaults ({failed} of 40 against 0 of 40; Fisher's exact test p < 0.001)"
        )),
        "{out}"
    );
}

/// A disk that ignores flushes loses what ext4's defaults rely on.
#[test]
fn a_lying_disk_loses_acknowledged_data_on_ext4_defaults() {
    let Some(lab) = Lab::ext4() else {
        return;
    };
    let (out, targets) = lab.crash(&["--cuts", "20", "--model", "lying", "--cache", "2m"]);
    assert!(count(&targets[0], "states_losing") > 0, "{out}");
    assert!(count(&targets[0], "acknowledged_lost") > 0, "{out}");
}

/// A workload that leaves out one fsync (of a new file) and acknowledges
/// it all the same is caught: the checker can fail. The same run without
/// the switch finds nothing, and a reproducer is kept on request.
#[test]
fn a_skipped_fsync_is_caught_and_a_reproducer_kept() {
    let Some(lab) = Lab::ext4() else {
        return;
    };
    let ops = fsbench::crash::oracle::plan(1, 8 << 20);
    let create = ops
        .iter()
        .position(|o| matches!(o, fsbench::crash::oracle::Op::Create { .. }))
        .unwrap();
    let kept = tempfile::tempdir().unwrap();
    let keep = kept.path().to_str().unwrap();
    let (out, targets) = lab.crash(&[
        "--cuts",
        "60",
        "--model",
        "flush",
        "--skip-fsync-of",
        &create.to_string(),
        "--keep-failures",
        keep,
    ]);
    assert!(
        count(&targets[0], "states_losing") > 0,
        "the skipped fsync went unseen\n{out}"
    );
    let json = std::fs::read_dir(kept.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .expect("a reproducer's JSON");
    let about: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let named: Vec<u64> = about["lost"]
        .as_array()
        .unwrap()
        .iter()
        .chain(about["corrupt"].as_array().unwrap())
        .map(|o| o["op"].as_u64().unwrap())
        .collect();
    assert!(named.contains(&(create as u64)), "{about}");
    let image = json.with_extension("img");
    assert_eq!(
        std::fs::metadata(&image).unwrap().len(),
        320 << 20,
        "the state's image"
    );
    let (out, targets) = lab.crash(&["--cuts", "60", "--model", "flush"]);
    assert_eq!(count(&targets[0], "states_losing"), 0, "{out}");
}

/// Refused before anything is built, in one line: no cuts, a mounted
/// source, a file system without a read-only check.
#[test]
fn what_cannot_be_cut_off_is_refused_in_one_line() {
    let Some(lab) = Lab::new(&config("ext4", "mkfs.ext4 -F", ""), &["mkfs.ext4"]) else {
        return;
    };
    run(&lab.args(&["--cuts", "0"])).assert_error(2, &["--cuts 0"]);
    for (text, needle) in [
        (
            "[[config]]\nname = \"t\"\nsource = \"tmpfs\"\ntype = \"tmpfs\"\n",
            "only a configuration fsbench makes with mkfs on an image",
        ),
        (
            "[[config]]\nname = \"v\"\nmkfs = \"mkfs.vfat {dev}\"\n",
            "knows no read-only check",
        ),
    ] {
        write(lab.dir.path(), "configs.toml", text);
        run(&lab.args(&[])).assert_error(2, &[needle]);
    }
    write(
        lab.dir.path(),
        "configs.toml",
        &config("ext4", "mkfs.ext4 -F", ""),
    );
    let small: Vec<String> = lab
        .args(&[])
        .into_iter()
        .map(|a| if a == "8m" { "1m".into() } else { a })
        .collect();
    run(&small).assert_error(2, &["--workload-size"]);
    // Without its fsck, no state could be judged: refused, not counted as
    // fsck errors.
    let empty = tempfile::tempdir().unwrap();
    let mut command = std::process::Command::new(common::FSBENCH);
    command.args(lab.args(&[])).env("PATH", empty.path());
    Running::spawn_command(&mut command, "fsbench crash (empty PATH)".into())
        .wait()
        .assert_error(2, &["e2fsck", "not on PATH"]);
    lab.assert_all_gone();
}

/// Options the kernel refuses are found before anything is recorded,
/// each in one line with the kernel's reason: a typo before anything is
/// built, and what the kernel judges only on the file system itself
/// (ext4's journaled quota without its format) on the one mkfs made,
/// before the recording starts. Nothing is judged, nothing left.
#[test]
fn options_the_kernel_refuses_are_found_before_anything_is_recorded() {
    let typo = config("ext4-typo", "mkfs.ext4 -F", "noatime,data=writebak");
    let Some(lab) = Lab::new(&typo, &["mkfs.ext4", "e2fsck"]) else {
        return;
    };
    let json = lab.dir.path().join("crash.json");
    let mut args = lab.args(&[]);
    args.extend(["--json".to_string(), json.display().to_string()]);
    // The run's last line, once it is known that nothing was judged.
    let refused = || {
        let out = run(&args);
        out.assert_code(2).assert_no_panic();
        assert!(!json.exists(), "nothing judged\n{out}");
        lab.assert_all_gone();
        out
    };
    let out = refused();
    let line = out.assert_one_line_error();
    assert!(
        line.starts_with(
            "fsbench: error: configuration ext4-typo: the kernel refuses its option \"data=writebak\": ext4: "
        ),
        "{out}"
    );

    let quota = config("quota", "mkfs.ext4 -F", "usrjquota=aquota.user");
    write(lab.dir.path(), "configs.toml", &quota);
    let out = refused();
    let last = out.stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(
            "fsbench: error: quota: the kernel refuses its options \"usrjquota=aquota.user\" on the file system mkfs made: "
        ),
        "{out}"
    );
}

/// The first crash state being checked: the checks' mount point in use.
fn wait_until_checking(images: &Path, fsbench: &mut Running) {
    wait_until(Duration::from_secs(120), "a crash state checked", || {
        assert!(fsbench.is_running(), "the run ended too early");
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        mounts
            .lines()
            .any(|l| l.contains(&format!("{}/", images.display())) && l.contains("/chk "))
    });
}

/// A long crash run, checking its first crash state.
fn checking(lab: &Lab) -> Running {
    let mut fsbench = Running::spawn(&lab.args(&["--cuts", "100000", "--model", "cache"]));
    wait_until_checking(lab.mnt.path(), &mut fsbench);
    fsbench
}

/// A long crash run sent `signal` while it checks a state.
fn signalled_while_checking(lab: &Lab, signal: i32) -> Running {
    let fsbench = checking(lab);
    fsbench.signal(signal);
    fsbench
}

/// A stop signal (`name`) while a state is checked: the run says it was
/// interrupted, exits with 128 + the signal and leaves nothing.
fn stopped_while_checking_takes_everything_down(signal: i32, name: &str) {
    let Some(lab) = Lab::ext4() else {
        return;
    };
    let out = signalled_while_checking(&lab, signal).wait_for(Duration::from_secs(60));
    out.assert_code(128 + signal).assert_no_panic();
    assert_eq!(
        out.stderr.lines().last(),
        Some(format!("fsbench: interrupted by {name}; scratch data removed").as_str()),
        "{out}"
    );
    lab.assert_all_gone();
}

#[test]
fn sigint_while_checking_takes_everything_down() {
    stopped_while_checking_takes_everything_down(libc::SIGINT, "SIGINT");
}

#[test]
fn sigterm_while_checking_takes_everything_down() {
    stopped_while_checking_takes_everything_down(libc::SIGTERM, "SIGTERM");
}

/// A run that ran out of room in --images: exit 1 and, after its
/// progress line, one line that says so (and names `what` could not be
/// written); nothing left.
fn assert_out_of_room(lab: &Lab, out: &common::Output, what: &str) {
    out.assert_code(1).assert_no_panic();
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "a progress line and an error\n{out}");
    assert!(
        lines[1].starts_with("fsbench: error: ")
            && lines[1].contains(what)
            && lines[1].ends_with("No space left on device (os error 28)"),
        "{out}"
    );
    lab.assert_all_gone();
}

/// The base image (about 29 MiB after mkfs) fits on 32 MiB, the block
/// log of the workload (about 9 MiB) does not: the recorder cannot keep a
/// write, and the run fails saying so instead of judging a disk that lost
/// it.
#[test]
fn a_full_images_directory_while_recording_fails_in_one_line() {
    let Some(lab) = Lab::ext4_on("32m") else {
        return;
    };
    let out = Running::spawn(&lab.args(&["--cuts", "5"])).wait_for(Duration::from_secs(60));
    assert_out_of_room(
        &lab,
        &out,
        "the recorder could not write its block log in --images",
    );
}

/// Every free byte of the file system holding `file` taken (appended to
/// it); what is in use stays as it is.
fn take_free_space(file: &Path) {
    let held = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .unwrap();
    let stat = rustix::fs::statvfs(file).unwrap();
    let free = stat.f_bavail * stat.f_frsize;
    let end = held.metadata().unwrap().len();
    if free > 0 {
        // Short of room for its own blocks, it takes less next time.
        let _ = rustix::fs::fallocate(&held, rustix::fs::FallocateFlags::empty(), end, free);
    }
}

/// The --images directory filled while states are checked: each state's
/// overlay (its replay's writes) starts empty, so what it freed is taken
/// again until one cannot be written. The run fails saying so, rather than
/// counting states the recorder could not serve as unmountable.
/// The loss: a run of several configurations that failed at one
/// kept nothing of those that had finished. Now the one judged before the
/// failure has its row in the table and its counts in the JSON (without
/// an end time: incomplete), and the run fails in one line naming the
/// configuration that failed (an mkfs feature that does not exist).
#[test]
fn a_failing_configuration_keeps_the_ones_judged_before_it() {
    let configs = [
        config("ext4", "mkfs.ext4 -F", ""),
        config("broken", "mkfs.ext4 -F -O no_such_feature", ""),
    ]
    .concat();
    let Some(lab) = Lab::new(&configs, &["mkfs.ext4", "e2fsck"]) else {
        return;
    };
    let json = lab.dir.path().join("crash.json");
    let mut args = lab.args(&["--cuts", "5"]);
    args.extend(["--json".to_string(), json.display().to_string()]);
    let out = run(&args);
    out.assert_code(1).assert_no_panic();

    let record = common::read_json(&json);
    assert!(record["finished"].is_null(), "{record}");
    let targets = record["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 1, "{record}");
    assert_eq!(targets[0]["name"], "ext4");
    let states = count(&targets[0], "states");
    assert!(states > 0, "{record}");
    assert!(
        out.stdout.lines().any(|l| l.contains("│ ext4 ")),
        "the table has ext4's row\n{out}"
    );
    assert!(
        out.stdout.contains(&format!(
            "ext4: durability: 0 of {states} cuts lost acknowledged data"
        )),
        "{out}"
    );
    assert!(!out.stdout.contains("broken"), "{out}");
    let errors: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("fsbench: error: "))
        .collect();
    assert_eq!(errors.len(), 1, "{out}");
    assert_eq!(out.stderr.lines().last(), Some(errors[0]), "{out}");
    assert!(
        errors[0].starts_with("fsbench: error: broken: mkfs on the recorded disk failed"),
        "{out}"
    );
    lab.assert_all_gone();
}

#[test]
fn a_full_images_directory_while_checking_fails_in_one_line() {
    let Some(lab) = Lab::ext4_on("64m") else {
        return;
    };
    let mut fsbench = Running::spawn(&lab.args(&["--cuts", "100000"]));
    wait_until_checking(lab.mnt.path(), &mut fsbench);
    let filler = lab.mnt.join("filler");
    wait_until(Duration::from_secs(60), "the run to stop", || {
        take_free_space(&filler);
        !fsbench.is_running()
    });
    let out = fsbench.wait();
    std::fs::remove_file(&filler).unwrap();
    // Mostly the overlay; now and then the record of the check's mount.
    assert_out_of_room(&lab, &out, "write");
}

#[test]
fn kill_9_then_clean_releases_the_recorder_the_loops_and_the_mounts() {
    let Some(lab) = Lab::ext4() else {
        return;
    };
    let killed = signalled_while_checking(&lab, libc::SIGKILL);
    std::thread::sleep(Duration::from_millis(500));
    // The killed process may wait, in D state, on its own dead FUSE
    // server, holding its scratch directory's lock: clean --force's abort
    // of the connection is what lets it go.
    let out = run(&["clean", "--force", &lab.mnt.arg()]);
    let _ = killed.wait_for(Duration::from_secs(60));
    out.assert_success();
    assert!(
        out.stdout
            .contains("aborted the recorder's FUSE connection"),
        "{out}"
    );
    lab.assert_all_gone();
}

/// A suite's crash entry, as `fsbench run --suite FILE --configs FILE`
/// runs it: each configuration measured, then cut off; the verdict puts
/// what each lost beside the speed-up, the baseline's included; Markdown
/// and HTML show the durability table, the losing row marked.
#[test]
fn a_suite_crash_entry_puts_durability_in_the_verdict_and_every_report() {
    let Some(lab) = Lab::seed003() else {
        return;
    };
    let suite = write(
        lab.dir.path(),
        "suite.toml",
        "[[workload]]\nkind = \"io\"\nargs = \"-s 16m --duration 2s -b 4k --read 0 --seek 100 --sync dsync\"\n\
         [[workload]]\nkind = \"crash\"\nargs = \"--cuts 30 --image-size 320m --workload-size 4m\"\n",
    );
    let json = lab.dir.path().join("run.json");
    let (suite, json_arg) = (suite.display().to_string(), json.display().to_string());
    let args = [
        "run",
        "--suite",
        &suite,
        "--configs",
        lab.configs.to_str().unwrap(),
        "--images",
        &lab.mnt.arg(),
        "--image-size",
        "64m",
        "--repeat",
        "2",
        "--no-save",
        "--json",
        &json_arg,
    ];
    let out = run(&args);
    out.assert_success();
    lab.assert_all_gone();
    let record: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let targets = record["targets"].as_array().unwrap();
    assert_eq!(count(&targets[0], "states"), 30, "{out}");
    assert_eq!(count(&targets[0], "states_losing"), 0, "{out}");
    let failed = count(&targets[1], "states_failed");
    assert!(failed > 0, "{out}");
    let text = &out.stdout;
    assert!(
        text.contains("ext4-defaults (the baseline)\n    risks: none found · durability: 0 of 30 cuts lost acknowledged data"),
        "{out}"
    );
    assert!(
        text.contains(&format!("durability: lost data in {failed} of 30 cuts")),
        "{out}"
    );
    assert!(
        text.contains("ext4-nobarrier loses data in more cuts than ext4-defaults"),
        "{out}"
    );
    let markdown = run(&["report", "--format", "markdown", &json_arg]);
    markdown.assert_success();
    assert!(
        markdown
            .stdout
            .contains("## Durability (simulated power cuts)"),
        "{markdown}"
    );
    assert!(
        markdown
            .stdout
            .contains(&format!("| ext4-nobarrier | 30 (cache) | {failed} of 30 |")),
        "{markdown}"
    );
    let html = run(&["report", "--format", "html", &json_arg]);
    html.assert_success();
    let losing_rows: Vec<&str> = html
        .stdout
        .lines()
        .filter(|l| l.contains("class=\"losing\""))
        .collect();
    assert_eq!(losing_rows.len(), 1, "{losing_rows:?}");
    assert!(
        losing_rows[0].contains("<th>ext4-nobarrier</th>"),
        "{losing_rows:?}"
    );
}

/// A crash entry cuts off only what fsbench builds: refused in one line
/// on a plain target, and with a configuration it cannot record, before
/// anything is built.
#[test]
fn a_suite_crash_entry_is_refused_where_nothing_can_be_cut_off() {
    let Some(lab) = Lab::ext4() else {
        return;
    };
    let dir = lab.dir.path();
    let suite = write(
        dir,
        "suite.toml",
        "[[workload]]\nkind = \"io\"\nargs = \"-s 1m\"\n[[workload]]\nkind = \"crash\"\n",
    );
    let bad = write(
        dir,
        "bad.toml",
        "[[workload]]\nkind = \"io\"\n[[workload]]\nkind = \"crash\"\nargs = \"--cuts 0\"\n",
    );
    let source = write(
        dir,
        "source.toml",
        "[[config]]\nname = \"t\"\nsource = \"tmpfs\"\ntype = \"tmpfs\"\n",
    );
    let images = lab.mnt.arg();
    let (source, configs) = (source.to_str().unwrap(), lab.configs.to_str().unwrap());
    for (suite, targets, needle) in [
        (
            &suite,
            vec!["--target", &images],
            "its crash entry cuts off configurations fsbench builds",
        ),
        (
            &suite,
            vec!["--configs", source],
            "t: only a configuration fsbench makes with mkfs on an image",
        ),
        (
            &bad,
            vec!["--configs", configs, "--images", &images],
            "workload 2 (crash): --cuts 0",
        ),
    ] {
        let mut args = vec!["run", "--no-save", "--suite", suite.to_str().unwrap()];
        args.extend(targets);
        run(&args).assert_error(2, &[needle]);
    }
    lab.assert_all_gone();
}

/// Seed 000's CNID log never synced (`--unsynced-log`): with barriers on,
/// what the cuts lose is the log's records and nothing else.
#[test]
fn an_unsynced_log_loses_its_records_and_only_them() {
    let Some(lab) = Lab::ext4() else {
        return;
    };
    let kept = tempfile::tempdir().unwrap();
    let (out, targets) = lab.crash(&[
        "--cuts",
        "40",
        "--model",
        "flush",
        "--unsynced-log",
        "--keep-failures",
        kept.path().to_str().unwrap(),
    ]);
    assert!(count(&targets[0], "states_losing") > 0, "{out}");
    assert_eq!(durability(&targets[0])["sync_log_unsynced"], true);
    for json in std::fs::read_dir(kept.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
    {
        let about: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let paths: Vec<&str> = about["lost"]
            .as_array()
            .unwrap()
            .iter()
            .chain(about["corrupt"].as_array().unwrap())
            .map(|o| o["path"].as_str().unwrap())
            .collect();
        assert!(!paths.is_empty(), "{about}");
        assert!(paths.iter().all(|p| *p == "synclog/log"), "{about}");
    }
}

/// A long crash run killed -9 while it waits in mount(2) for a crash
/// state's I/O, which only its own FUSE server answers.
fn killed_in_mount(lab: &Lab) -> Running {
    let fsbench = checking(lab);
    let syscall = format!("/proc/{}/syscall", fsbench.pid);
    let mount = libc::SYS_mount.to_string();
    wait_until(Duration::from_secs(60), "a wait in mount(2)", || {
        std::fs::read_to_string(&syscall).is_ok_and(|s| s.split(' ').next() == Some(&mount))
    });
    fsbench.signal(libc::SIGKILL);
    fsbench
}

/// kill -9 while the run waits in mount(2) for a crash state's I/O that
/// only its own FUSE server answers, nine times: its recorder's watchdog
/// aborts the connection, so the killed process exits by itself (no
/// `fsbench clean`), `sync` on the machine returns within seconds, and a
/// plain `clean` then removes everything.
#[test]
fn kill_9_while_waiting_on_its_own_recorder_never_wedges_the_machine() {
    let Some(lab) = Lab::ext4() else {
        return;
    };
    for kill in 1..=9 {
        let mut killed = killed_in_mount(&lab);
        let started = std::time::Instant::now();
        wait_until(
            Duration::from_secs(5),
            "the killed run to exit by itself",
            || !killed.is_running(),
        );
        let exited = started.elapsed();
        let status = killed.wait_for(Duration::from_secs(1)).status;
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(libc::SIGKILL)
        );
        let sync = std::time::Instant::now();
        let mut synced =
            Running::spawn_command(&mut std::process::Command::new("sync"), "sync".into());
        wait_until(Duration::from_secs(5), "sync to return", || {
            !synced.is_running()
        });
        eprintln!(
            "kill {kill}: exited after {exited:.2?}, sync returned in {:.2?}",
            sync.elapsed()
        );
        let out = run(&["clean", &lab.mnt.arg()]);
        out.assert_success();
        lab.assert_all_gone();
    }
}

/// Plain `clean` leaves a live crash run alone (no kill pending: nothing
/// aborted), and the run finishes as if nothing had happened.
#[test]
fn plain_clean_leaves_a_live_crash_run_alone() {
    let Some(lab) = Lab::ext4() else {
        return;
    };
    let mut fsbench = Running::spawn(&lab.args(&["--cuts", "60"]));
    wait_until_checking(lab.mnt.path(), &mut fsbench);
    let out = run(&["clean", &lab.mnt.arg()]);
    out.assert_success();
    assert!(out.stdout.contains("is still running"), "{out}");
    assert!(!out.stdout.contains("aborted"), "{out}");
    let out = fsbench.wait();
    out.assert_success();
    assert!(
        out.stdout
            .contains("ext4: durability: 0 of 60 cuts lost acknowledged data"),
        "{out}"
    );
    lab.assert_all_gone();
}

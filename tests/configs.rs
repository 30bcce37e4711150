//! `fsbench run --configs FILE --images DIR`: file systems built on loop
//! images in a marked scratch directory, measured, and taken down on every
//! way out (end, refusal, SIGINT, kill -9 then `fsbench clean`).
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{
    Running, Sentinel, TmpfsMount, mounts_under, read_json, run, scratch_dirs, wait_until,
};

const TWO_EXT4: &str = r#"
matrix = { journal = ["writeback"] }

[[config]]
name = "ext4"
mkfs = "mkfs.ext4 -F {dev}"
type = "ext4"

[[config]]
name = "ext4-{journal}"
mkfs = "mkfs.ext4 -F {dev}"
options = "data={journal}"
type = "ext4"
"#;

/// A tiny suite: one io job on an 8 MiB file, `seconds` long.
fn suite(dir: &Path, seconds: &str) -> PathBuf {
    let path = dir.join("suite.toml");
    std::fs::write(
        &path,
        format!(
            "description = \"tiny\"\nrepeat = 1\n[[workload]]\nkind = \"io\"\n\
             args = [\"-s\", \"8m\", \"--duration\", \"{seconds}\", \"-b\", \"64k\", \"--read\", \"0\", \"--warmup\", \"0\"]\n"
        ),
    )
    .unwrap();
    path
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn have_mkfs_ext4() -> bool {
    let found = Command::new("mkfs.ext4").arg("-V").output().is_ok();
    if !found {
        eprintln!("skipping: no mkfs.ext4");
    }
    found
}

/// Loop devices whose backing file is below `dir`.
fn loops_under(dir: &Path) -> Vec<String> {
    let prefix = format!("{}/", dir.display());
    std::fs::read_dir("/sys/block")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let backing =
                std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).ok()?;
            backing.starts_with(&prefix).then_some(name)
        })
        .collect()
}

/// `losetup -j IMAGE` says nothing.
fn assert_detached(image: &Path) {
    let out = Command::new("losetup")
        .arg("-j")
        .arg(image)
        .output()
        .unwrap();
    assert!(
        out.stdout.is_empty(),
        "{} still attached: {}",
        image.display(),
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Nothing of the run is left in `images`: no mount, no loop device, only
/// the sentinel's entries.
fn assert_all_gone(images: &Path, sentinel: &Sentinel, seen_images: &[PathBuf]) {
    assert_eq!(mounts_under(images), Vec::<String>::new(), "mounts left");
    assert_eq!(
        loops_under(images),
        Vec::<String>::new(),
        "loop devices left"
    );
    for image in seen_images {
        assert_detached(image);
    }
    assert_eq!(
        common::listing(images),
        ["SENTINEL", "sentinel-dir"],
        "only the sentinel is left"
    );
    sentinel.assert_intact();
}

fn run_args(suite: &Path, configs: &Path, images: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "run",
        "--suite",
        suite.to_str().unwrap(),
        "--configs",
        configs.to_str().unwrap(),
        "--images",
        images.to_str().unwrap(),
        "--image-size",
        "64m",
        "--no-save",
        "-q",
    ]
    .map(String::from)
    .to_vec();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// A tmpfs for the images with a sentinel beside them, a suite whose io job
/// runs `seconds`, and a configurations file: what every run here needs.
/// The cleaner goes first, before the tmpfs it cleans is unmounted.
struct Setup {
    _cleaner: common::Cleaner,
    sentinel: Sentinel,
    mnt: TmpfsMount,
    suite: PathBuf,
    configs: PathBuf,
    _dir: tempfile::TempDir,
}

impl Setup {
    /// None where the test cannot run here (not root, no mkfs.ext4).
    fn new(size: &str, seconds: &str, configs: &str) -> Option<Setup> {
        let mnt = TmpfsMount::new(size)?;
        if !have_mkfs_ext4() {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        Some(Setup {
            _cleaner: common::Cleaner(mnt.path().to_path_buf()),
            sentinel: Sentinel::plant(mnt.path()),
            suite: suite(dir.path(), seconds),
            configs: write(dir.path(), "configs.toml", configs),
            mnt,
            _dir: dir,
        })
    }

    fn args(&self) -> Vec<String> {
        run_args(&self.suite, &self.configs, self.mnt.path(), &[])
    }

    fn assert_all_gone(&self, seen_images: &[PathBuf]) {
        assert_all_gone(self.mnt.path(), &self.sentinel, seen_images);
    }
}

/// The images of a running run, once both are mounted and measured.
fn wait_until_measuring(images: &Path, fsbench: &mut Running) -> Vec<PathBuf> {
    let mut found = Vec::new();
    wait_until(Duration::from_secs(60), "both file systems in use", || {
        assert!(fsbench.is_running(), "the run ended too early");
        let Some(top) = scratch_dirs(images).into_iter().next() else {
            return false;
        };
        let mnt = top.join("mnt");
        let in_use = ["ext4", "ext4-writeback"].iter().all(|name| {
            let point = mnt.join(name);
            point.is_dir() && !scratch_dirs(&point).is_empty()
        });
        found = ["ext4", "ext4-writeback"]
            .iter()
            .map(|name| top.join("img").join(format!("{name}.img")))
            .collect();
        in_use && mounts_under(images).len() == 2
    });
    found
}

#[test]
fn two_ext4_configurations_are_built_measured_and_removed() {
    let Some(setup) = Setup::new("256m", "0.3s", TWO_EXT4) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let mut args = setup.args();
    args.extend(["--json".to_string(), json.display().to_string()]);
    let out = run(&args);
    out.assert_success();
    let record = read_json(&json);
    let targets = record["targets"].as_array().unwrap();
    let names: Vec<&str> = targets
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ext4", "ext4-writeback"], "{out}");
    for target in targets {
        let built = &target["built"];
        let commands: Vec<&str> = built["commands"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        assert_eq!(commands.len(), 5, "{built}");
        assert!(
            commands[0].starts_with("losetup --find --show --direct-io=on "),
            "{built}"
        );
        assert_eq!(built["loop_direct_io"], true, "{built}");
        assert!(commands[1].starts_with("mkfs.ext4 -F /dev/loop"), "{built}");
        assert!(commands[2].starts_with("mount -t ext4 "), "{built}");
        assert!(commands[3].starts_with("umount "), "{built}");
        assert!(commands[4].starts_with("losetup -d /dev/loop"), "{built}");
        assert_eq!(built["builds"], 1, "{built}");
        assert!(
            !built["mkfs_output"].as_str().unwrap().is_empty(),
            "{built}"
        );
        assert!(!target["workloads"].as_array().unwrap().is_empty());
    }
    assert_eq!(targets[0]["built"]["options"], "");
    assert_eq!(targets[1]["built"]["options"], "data=writeback");
    assert_eq!(targets[1]["built"]["parameters"]["journal"], "writeback");
    assert!(
        targets[1]["built"]["commands"][2]
            .as_str()
            .unwrap()
            .contains("-o data=writeback -- /dev/loop"),
        "{record}"
    );
    assert!(
        targets[1]["env"]["mount_options"]
            .as_str()
            .unwrap()
            .contains("data=writeback"),
        "the mount in effect: {record}"
    );
    let images: Vec<PathBuf> = targets
        .iter()
        .map(|t| {
            let cmd = t["built"]["commands"][0].as_str().unwrap();
            PathBuf::from(cmd.trim_start_matches("losetup --find --show "))
        })
        .collect();
    setup.assert_all_gone(&images);

    // The report's environment table says how each was built.
    let html = run(&["report", "--format", "html", json.to_str().unwrap()]);
    html.assert_success();
    assert!(html.stdout.contains("built by mkfs"), "{html}");
    assert!(html.stdout.contains("mkfs.ext4 -F {dev}"), "{html}");
    assert!(html.stdout.contains("data=writeback"), "{html}");
}

#[test]
fn bad_configurations_are_refused_before_anything_is_made() {
    let images = tempfile::tempdir().unwrap();
    let sentinel = Sentinel::plant(images.path());
    let dir = tempfile::tempdir().unwrap();
    let suite = suite(dir.path(), "0.3s");
    let cases = [
        (
            "[[config]]\nname = \"evil\"\nmkfs = \"rm -rf {dev}\"\n",
            "not a mkfs.* program",
        ),
        (
            "[[config]]\nname = \"evil\"\nmkfs = \"mkfs.ext4 /dev/sda\"\n",
            "{dev}",
        ),
        (
            "[[config]]\nname = \"ext4-{journal}\"\nmkfs = \"mkfs.ext4 {dev}\"\n",
            "not a matrix key",
        ),
        ("", "no configurations"),
        (
            "[[config]]\nname = \"r\"\nrecorded = true\nsource = \"tmpfs\"\ntype = \"tmpfs\"\n",
            "r: recorded is a disk fsbench makes and records under mkfs on an image",
        ),
        (
            "[[config]]\nname = \"r\"\nrecorded = true\nsetup = [\"true\"]\n",
            "give mkfs (not a source or setup commands)",
        ),
        (
            "[[config]]\nname = \"r\"\nrecorded = true\nmkfs = \"mkfs.ext4 {dev}\"\ndevice = \"/dev/sdb\"\n",
            "r: recorded is a disk fsbench makes on an image, not on device /dev/sdb",
        ),
    ];
    for (text, needle) in cases {
        let configs = write(dir.path(), "bad.toml", text);
        let out = run(&run_args(&suite, &configs, images.path(), &[]));
        out.assert_error(2, &[needle]);
        assert_eq!(
            common::listing(images.path()),
            ["SENTINEL", "sentinel-dir"],
            "nothing made for {text:?}\n{out}"
        );
    }
    sentinel.assert_intact();
}

#[test]
fn sigint_mid_run_unmounts_detaches_and_removes_everything() {
    let Some(setup) = Setup::new("256m", "60s", TWO_EXT4) else {
        return;
    };
    let mut fsbench = Running::spawn(&setup.args());
    let images = wait_until_measuring(setup.mnt.path(), &mut fsbench);
    fsbench.signal(libc::SIGINT);
    let out = fsbench.wait();
    out.assert_code(130).assert_no_panic();
    setup.assert_all_gone(&images);
}

#[test]
fn kill_9_then_clean_unmounts_detaches_and_removes_everything() {
    let Some(setup) = Setup::new("256m", "60s", TWO_EXT4) else {
        return;
    };
    let mnt = &setup.mnt;
    let mut fsbench = Running::spawn(&setup.args());
    let images = wait_until_measuring(mnt.path(), &mut fsbench);
    fsbench.signal(libc::SIGKILL);
    let _ = fsbench.wait();
    assert_eq!(
        mounts_under(mnt.path()).len(),
        2,
        "the kill left the mounts"
    );
    let out = run(&["clean", &mnt.arg()]);
    out.assert_success();
    assert!(out.stdout.contains("unmounted"), "{out}");
    assert!(out.stdout.contains("detached"), "{out}");
    setup.assert_all_gone(&images);
}

/// Runs `args` and checks it was refused in one line that starts with
/// `fsbench: error: ` and `start` (not mount(8)'s guess), with nothing
/// measured: no table, no result file, nothing left beside the sentinel.
fn refused_before_measuring(setup: &Setup, mut args: Vec<String>, start: &str) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    args.extend(["--json".to_string(), json.display().to_string()]);
    let out = run(&args);
    let line = out.assert_error(2, &[]);
    assert!(
        line.starts_with(&format!("fsbench: error: {start}")),
        "{out}"
    );
    assert!(!line.contains("wrong fs type"), "mount(8)'s guess: {out}");
    assert_eq!(out.stdout, "", "no table: nothing was measured\n{out}");
    assert!(!json.exists(), "no result: nothing was measured\n{out}");
    setup.assert_all_gone(&[]);
}

/// A typo in a configuration's options (`data=writebak`; xfs's
/// `nobarrier`, which the kernel no longer has) is refused with the
/// kernel's own reason before anything is built, let alone measured.
#[test]
fn a_typo_in_options_is_refused_with_the_kernel_s_reason_before_anything_is_built() {
    let configs = "[[config]]\nname = \"good\"\nmkfs = \"mkfs.ext4 -F {dev}\"\ntype = \"ext4\"\n\n\
         [[config]]\nname = \"ext4-typo\"\nmkfs = \"mkfs.ext4 -F {dev}\"\n\
         options = \"noatime,data=writebak\"\ntype = \"ext4\"\n";
    let Some(setup) = Setup::new("256m", "0.3s", configs) else {
        return;
    };
    refused_before_measuring(
        &setup,
        setup.args(),
        "configuration ext4-typo: the kernel refuses its option \"data=writebak\": ext4: ",
    );
    if !have("mkfs.xfs") {
        eprintln!("skipping xfs's nobarrier: no mkfs.xfs");
        return;
    }
    let xfs = "[[config]]\nname = \"xfs-nobarrier\"\nmkfs = \"mkfs.xfs -f {dev}\"\n\
         options = \"nobarrier\"\ntype = \"xfs\"\n";
    std::fs::write(&setup.configs, xfs).unwrap();
    // XFS needs 300 MiB at least.
    let mut args = setup.args();
    let size = args.iter().position(|a| a == "64m").unwrap();
    args[size] = "320m".into();
    refused_before_measuring(
        &setup,
        args,
        "configuration xfs-nobarrier: the kernel refuses its option \"nobarrier\": xfs: ",
    );
}

/// What the kernel judges only on the file system itself (ext4's
/// journaled quota without its format) is found on the one mkfs made,
/// before anything is measured: the run ends there, with the kernel's
/// reason. With --keep-going that configuration is left out and the other
/// measured, with mount(8)'s own options (mount flags, fstab's words),
/// which are not the file system's, not refused.
#[test]
fn a_configuration_that_cannot_be_built_ends_the_run_unless_keep_going() {
    let configs = "[[config]]\nname = \"good\"\nmkfs = \"mkfs.ext4 -F {dev}\"\n\
         options = \"noatime,nodev,nosuid,sync,defaults,_netdev,x-fsbench.note=1\"\ntype = \"ext4\"\n\n\
         [[config]]\nname = \"quota\"\nmkfs = \"mkfs.ext4 -F {dev}\"\n\
         options = \"usrjquota=aquota.user\"\n";
    let Some(setup) = Setup::new("256m", "0.3s", configs) else {
        return;
    };
    refused_before_measuring(
        &setup,
        setup.args(),
        "configuration quota: the kernel refuses its options \"usrjquota=aquota.user\" on the file system mkfs made: ",
    );

    let (out, record) = run_json(&setup, &["--keep-going"]);
    out.assert_code(1).assert_no_panic();
    assert!(
        out.stderr.contains(
            "configuration quota not built: the kernel refuses its options \"usrjquota=aquota.user\""
        ),
        "{out}"
    );
    assert!(
        out.stderr
            .contains("1 of the configurations could not be built (quota)"),
        "{out}"
    );
    let targets = record["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 1, "{record}");
    let good = target(&record, "good");
    assert!(!good["workloads"].as_array().unwrap().is_empty());
    let options = good["env"]["mount_options"].as_str().unwrap();
    for flag in ["noatime", "nodev", "nosuid", "sync"] {
        assert!(options.contains(flag), "{flag} in effect: {options}");
    }
    setup.assert_all_gone(&[]);
}

/// When the only configuration fails, nothing was built: no line timing
/// "0 builds" (it said "-0.0 s (-0.0 %)").
#[test]
fn a_run_whose_only_configuration_failed_times_no_builds() {
    // No type: mount(8), not the kernel's check, finds no file system.
    let configs = "[[config]]\nname = \"bad\"\nsource = \"tmpfs\"\noptions = \"no_such_option\"\n";
    let Some(setup) = Setup::new("64m", "0.1s", configs) else {
        return;
    };
    let mut args = setup.args();
    args.push("--keep-going".into());
    let out = run(&args);
    out.assert_code(1).assert_no_panic();
    assert!(out.stderr.contains("configuration bad not built"), "{out}");
    assert!(!out.stderr.contains("builds of"), "{out}");
    assert!(!out.stderr.contains("-0.0"), "{out}");
    setup.assert_all_gone(&[]);
}

#[test]
fn sigterm_while_building_takes_down_what_was_built() {
    let configs = "matrix = { n = [\"1\", \"2\", \"3\", \"4\", \"5\", \"6\"] }\n\
         [[config]]\nname = \"ext4-{n}\"\nmkfs = \"mkfs.ext4 -F {dev}\"\n";
    let Some(setup) = Setup::new("512m", "60s", configs) else {
        return;
    };
    let mut fsbench = Running::spawn(&setup.args());
    // The first loop device is attached: mkfs or mount is under way.
    wait_until(Duration::from_secs(60), "the first loop device", || {
        assert!(fsbench.is_running(), "the run ended too early");
        !loops_under(setup.mnt.path()).is_empty()
    });
    fsbench.signal(libc::SIGTERM);
    let out = fsbench.wait();
    out.assert_code(143).assert_no_panic();
    setup.assert_all_gone(&[]);
}

/// The record `--json` wrote for a run with `extra` arguments.
fn run_json(setup: &Setup, extra: &[&str]) -> (common::Output, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let mut args = setup.args();
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(["--json".to_string(), json.display().to_string()]);
    let out = run(&args);
    let record = match json.exists() {
        true => read_json(&json),
        false => serde_json::Value::Null,
    };
    (out, record)
}

/// `--buffered-images` attaches the images as before direct I/O was the
/// default: the loop device says it does no direct I/O, and so does the
/// result.
#[test]
fn buffered_images_keep_the_host_page_cache_and_say_so() {
    let configs = "[[config]]\nname = \"ext4\"\nmkfs = \"mkfs.ext4 -F {dev}\"\n";
    let Some(setup) = Setup::new("128m", "0.1s", configs) else {
        return;
    };
    let (out, record) = run_json(&setup, &["--buffered-images"]);
    out.assert_success();
    let built = &target(&record, "ext4")["built"];
    assert_eq!(built["loop_direct_io"], false, "{built}");
    let attach = built["commands"][0].as_str().unwrap();
    assert!(!attach.contains("--direct-io"), "{attach}");
    setup.assert_all_gone(&[]);
}

/// The target named `name` of a record.
fn target<'r>(record: &'r serde_json::Value, name: &str) -> &'r serde_json::Value {
    record["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no target {name} in {record}"))
}

#[test]
fn an_existing_device_is_mounted_with_each_options_one_after_another() {
    let Some(mut disk) = common::LoopDevice::new("128m") else {
        return;
    };
    disk.mkfs("ext4");
    // The user's data on the device: it must survive being measured.
    let inside = Sentinel::plant(&disk.mount());
    disk.unmount();
    let configs = format!(
        "[[config]]\nname = \"before\"\nsource = \"{dev}\"\ntype = \"ext4\"\n\n\
         [[config]]\nname = \"after\"\nsource = \"{dev}\"\ntype = \"ext4\"\n\
         options = \"noatime,data=writeback\"\n\n\
         [[config]]\nname = \"ram\"\nsource = \"tmpfs\"\ntype = \"tmpfs\"\noptions = \"size=64m\"\n",
        dev = disk.device
    );
    let Some(setup) = Setup::new("256m", "0.3s", &configs) else {
        return;
    };
    let (out, record) = run_json(&setup, &[]);
    out.assert_success();
    let (before, after, ram) = (
        target(&record, "before"),
        target(&record, "after"),
        target(&record, "ram"),
    );
    for t in [before, after, ram] {
        assert!(!t["workloads"].as_array().unwrap().is_empty(), "{t}");
    }
    // One device: measured one after another, and the record says why.
    assert_eq!(before["built"]["shares"], disk.device.as_str(), "{record}");
    assert_eq!(after["built"]["shares"], disk.device.as_str(), "{record}");
    assert!(ram["built"]["shares"].is_null(), "{record}");
    assert_eq!(before["built"]["source"], disk.device.as_str());
    let options = |t: &serde_json::Value| t["env"]["mount_options"].as_str().unwrap().to_string();
    assert!(options(after).contains("data=writeback"), "{record}");
    assert!(options(after).contains("noatime"), "{record}");
    assert!(!options(before).contains("data=writeback"), "{record}");
    assert_eq!(ram["env"]["fs_type"], "tmpfs");
    setup.assert_all_gone(&[]);
    disk.mount();
    inside.assert_intact();
    disk.unmount();

    // Mounted already: its options would not apply; refused up front.
    disk.mount();
    let (out, _) = run_json(&setup, &[]);
    out.assert_error(2, &["is mounted on", "unmount it first"]);
    setup.assert_all_gone(&[]);
    inside.assert_intact();
}

#[test]
fn setup_commands_make_a_target_and_teardown_runs_even_when_setup_fails() {
    let marks = tempfile::tempdir().unwrap();
    let mark = |name: &str| marks.path().join(name).display().to_string();
    let configs = format!(
        "[[config]]\nname = \"made\"\n\
         setup = [\"mount -t tmpfs -o size=64m fsbench-made {{dir}}\"]\n\
         teardown = [\"umount {{dir}}\", \"touch {made}\"]\n\n\
         [[config]]\nname = \"broken\"\n\
         setup = [\"echo about to fail; exit 7\", \"touch {never}\"]\n\
         teardown = [\"touch {broken}\"]\n",
        made = mark("made-down"),
        never = mark("never"),
        broken = mark("broken-down")
    );
    let Some(setup) = Setup::new("256m", "0.3s", &configs) else {
        return;
    };
    let (out, _) = run_json(&setup, &[]);
    out.assert_error(2, &["--allow-shell"]);

    let (out, record) = run_json(&setup, &["--allow-shell", "--keep-going"]);
    out.assert_code(1).assert_no_panic();
    assert!(
        out.stderr
            .contains("configuration broken not built: `echo about to fail; exit 7` failed"),
        "{out}"
    );
    assert!(out.stderr.contains("about to fail"), "its output: {out}");
    let made = target(&record, "made");
    assert_eq!(made["env"]["fs_type"], "tmpfs", "{record}");
    assert!(!made["workloads"].as_array().unwrap().is_empty());
    assert_eq!(
        made["built"]["commands"][0],
        format!(
            "mount -t tmpfs -o size=64m fsbench-made {}",
            made["path"].as_str().unwrap()
        )
    );
    assert_eq!(record["targets"].as_array().unwrap().len(), 1, "{record}");
    assert!(
        Path::new(&mark("made-down")).exists(),
        "made's teardown ran"
    );
    assert!(
        Path::new(&mark("broken-down")).exists(),
        "broken's teardown ran"
    );
    assert!(
        !Path::new(&mark("never")).exists(),
        "setup stopped at the failure"
    );
    setup.assert_all_gone(&[]);
}

#[test]
fn fresh_builds_every_configuration_for_every_repetition() {
    let Some(setup) = Setup::new("256m", "0.3s", TWO_EXT4) else {
        return;
    };
    let (out, record) = run_json(&setup, &["--fresh", "-r", "2"]);
    out.assert_success();
    assert!(
        out.stderr.contains("4 builds of 2 configurations took"),
        "{out}"
    );
    for name in ["ext4", "ext4-writeback"] {
        let t = target(&record, name);
        assert_eq!(t["built"]["builds"], 2, "{record}");
        let repetitions: Vec<u64> = t["workloads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["repetition"].as_u64().unwrap())
            .collect();
        assert_eq!(repetitions, [0, 1], "{record}");
    }
    setup.assert_all_gone(&[]);
}

#[test]
fn a_device_is_wiped_only_when_named_with_wipe_and_unused() {
    let Some(mut disk) = common::LoopDevice::new("128m") else {
        return;
    };
    disk.mkfs("ext4");
    let inside = Sentinel::plant(&disk.mount());
    let configs = format!(
        "[[config]]\nname = \"wiped\"\nmkfs = \"mkfs.ext4 -F {{dev}}\"\ndevice = \"{}\"\n",
        disk.device
    );
    let Some(setup) = Setup::new("256m", "0.3s", &configs) else {
        return;
    };
    // Mounted, with the user's files: refused, --wipe or not.
    let (out, _) = run_json(&setup, &["--wipe", &disk.device]);
    out.assert_error(2, &["--wipe", "mounted on"]);
    inside.assert_intact();
    disk.unmount();
    // Unmounted, but named only in the file: refused.
    let (out, _) = run_json(&setup, &[]);
    out.assert_error(2, &["needs --wipe"]);
    disk.mount();
    inside.assert_intact();
    disk.unmount();
    setup.assert_all_gone(&[]);
    // Named on the command line: made anew and measured, then released.
    let (out, record) = run_json(&setup, &["--wipe", &disk.device]);
    out.assert_success();
    let wiped = target(&record, "wiped");
    assert_eq!(wiped["built"]["device"], disk.device.as_str(), "{record}");
    assert_eq!(wiped["env"]["source"], disk.device.as_str(), "{record}");
    assert!(!wiped["workloads"].as_array().unwrap().is_empty());
    assert!(wiped["built"]["shares"].is_null(), "alone on it: {record}");
    setup.assert_all_gone(&[]);
    let listing = common::listing(&disk.mount());
    assert_eq!(listing, ["lost+found"], "a new file system");
}

/// Sectors the loop device under a configuration read between its setup
/// and its teardown, as its setup and teardown commands saw them in
/// /sys/block/loopN/stat, for a tree read run with `--cold how`.
fn sectors_read_with_cold(how: &str) -> Option<(u64, serde_json::Value)> {
    let marks = tempfile::tempdir().unwrap();
    let stat = |name: &str| {
        format!(
            "cat /sys/block/$(basename {{dev}})/stat > {}",
            marks.path().join(name).display()
        )
    };
    let configs = format!(
        "[[config]]\nname = \"ext4\"\nmkfs = \"mkfs.ext4 -F {{dev}}\"\n\
         setup = [\"{}\"]\nteardown = [\"{}\"]\n",
        stat("before"),
        stat("after")
    );
    let setup = Setup::new("256m", "0.3s", &configs)?;
    let suite = write(
        marks.path(),
        "tree.toml",
        "description = \"read\"\nrepeat = 1\n[[workload]]\nkind = \"tree\"\n\
         args = \"--dataset small --scale 0.002 --ops read,delete\"\n",
    );
    let mut args = run_args(
        &suite,
        &setup.configs,
        setup.mnt.path(),
        &["--allow-shell", "--cold", how],
    );
    let json = marks.path().join("result.json");
    args.extend(["--json".to_string(), json.display().to_string()]);
    run(&args).assert_success();
    let read = |name: &str| -> u64 {
        let text = std::fs::read_to_string(marks.path().join(name)).unwrap();
        text.split_whitespace().nth(2).unwrap().parse().unwrap()
    };
    setup.assert_all_gone(&[]);
    Some((read("after") - read("before"), read_json(&json)))
}

#[test]
fn cold_remount_reads_from_the_device_where_cold_none_reads_the_cache() {
    let Some((remounted, record)) = sectors_read_with_cold("remount") else {
        return;
    };
    let tree = &target(&record, "ext4")["workloads"][0];
    assert_eq!(
        tree["params"]["caches"],
        "synced, unmounted and mounted again before each operation (--cold remount)",
        "{tree}"
    );
    let (cached, record) = sectors_read_with_cold("none").unwrap();
    let tree = &target(&record, "ext4")["workloads"][0];
    assert_eq!(tree["params"]["caches"], "not dropped (--cold none)");
    let bytes = tree["params"]["dataset_bytes"].as_u64().unwrap_or(0);
    eprintln!("dataset {bytes} B; read {remounted} sectors remounted, {cached} cached");
    assert!(
        remounted * 512 > 15 << 20,
        "the read came from the device: {remounted} sectors"
    );
    assert!(
        cached * 512 < 2 << 20,
        "the read came from the page cache: {cached} sectors"
    );
}

#[test]
fn cold_remount_needs_configurations() {
    let out = run(&["run", "--cold", "remount", "--no-save", "/tmp"]);
    out.assert_error(2, &["--cold remount needs --configs"]);
}

#[test]
fn sigint_during_teardown_still_takes_everything_down() {
    let configs = "[[config]]\nname = \"slow-down\"\nmkfs = \"mkfs.ext4 -F {dev}\"\n\
         teardown = [\"sleep 4\"]\n";
    let Some(setup) = Setup::new("256m", "0.3s", configs) else {
        return;
    };
    let mut args = setup.args();
    args.push("--allow-shell".into());
    let mut fsbench = Running::spawn(&args);
    // The teardown's sleep runs: the file system is still mounted.
    wait_until(Duration::from_secs(60), "the teardown command", || {
        assert!(fsbench.is_running(), "the run ended too early");
        let out = Command::new("pgrep")
            .args(["-f", "^sleep 4$"])
            .output()
            .unwrap();
        !out.stdout.is_empty()
    });
    assert_eq!(mounts_under(setup.mnt.path()).len(), 1);
    fsbench.signal(libc::SIGINT);
    let out = fsbench.wait();
    out.assert_code(130).assert_no_panic();
    setup.assert_all_gone(&[]);
}

fn have(program: &str) -> bool {
    let found = Command::new(program).arg("-V").output().is_ok();
    if !found {
        eprintln!("skipping: no {program}");
    }
    found
}

#[test]
fn ext4_xfs_and_btrfs_are_built_measured_and_removed() {
    if !(have("mkfs.xfs") && have("mkfs.btrfs")) {
        return;
    }
    let configs = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/filesystems.toml"),
    )
    .unwrap();
    let Some(setup) = Setup::new("1200m", "0.3s", &configs) else {
        return;
    };
    let mut args = run_args(&setup.suite, &setup.configs, setup.mnt.path(), &[]);
    // XFS needs 300 MiB at least.
    let size = args.iter().position(|a| a == "64m").unwrap();
    args[size] = "320m".into();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    args.extend(["--json".to_string(), json.display().to_string()]);
    run(&args).assert_success();
    let record = read_json(&json);
    for fs in ["ext4", "xfs", "btrfs"] {
        let t = target(&record, fs);
        assert_eq!(t["env"]["fs_type"], fs, "{record}");
        assert!(!t["workloads"].as_array().unwrap().is_empty());
        assert!(t["built"]["shares"].is_null(), "images coexist: {record}");
        let info = t["built"]["fs_info"].as_str().unwrap();
        assert!(!info.is_empty(), "{fs} says what mkfs made: {record}");
    }
    setup.assert_all_gone(&[]);
}

#[test]
fn a_two_by_two_sweep_makes_four_configurations_with_their_parameters_as_columns() {
    let configs = "matrix = { journal = [\"ordered\", \"writeback\"], bs = [\"1024\", \"4096\"] }\n\
         [[config]]\nname = \"ext4-{journal}-{bs}\"\nmkfs = \"mkfs.ext4 -F -b {bs} {dev}\"\n\
         options = \"data={journal}\"\ntype = \"ext4\"\n";
    let Some(setup) = Setup::new("512m", "0.3s", configs) else {
        return;
    };
    let (out, record) = run_json(&setup, &[]);
    out.assert_success();
    assert_eq!(record["targets"].as_array().unwrap().len(), 4, "{record}");
    let t = target(&record, "ext4-writeback-1024");
    assert_eq!(t["built"]["parameters"]["bs"], "1024");
    assert!(
        t["env"]["mount_options"]
            .as_str()
            .unwrap()
            .contains("data=writeback")
    );
    assert!(
        t["built"]["fs_info"]
            .as_str()
            .unwrap()
            .contains("Block size:               1024"),
        "{t}"
    );
    // The report's CSV has a column per parameter, each row its target's.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    std::fs::write(&json, record.to_string()).unwrap();
    let csv = run(&["report", "--format", "csv", json.to_str().unwrap()]);
    csv.assert_success();
    let mut reader = csv::Reader::from_reader(csv.stdout.as_bytes());
    let header = reader.headers().unwrap().clone();
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (target_at, bs_at, journal_at) = (column("target"), column("bs"), column("journal"));
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert!(rows.len() >= 4, "{}", csv.stdout);
    for row in &rows {
        let expected = format!("ext4-{}-{}", &row[journal_at], &row[bs_at]);
        assert_eq!(&row[target_at], expected, "{}", csv.stdout);
    }
    setup.assert_all_gone(&[]);
}

/// One ext4 on a recorded disk and the same on a plain image.
const RECORDED_AND_PLAIN: &str = r#"
[[config]]
name = "ext4-recorded"
mkfs = "mkfs.ext4 -F {dev}"
recorded = true
type = "ext4"

[[config]]
name = "ext4"
mkfs = "mkfs.ext4 -F {dev}"
type = "ext4"
"#;

/// Whether the recorder can be mounted here.
fn have_fuse() -> bool {
    let found = Path::new("/dev/fuse").exists();
    if !found {
        eprintln!("skipping: no /dev/fuse");
    }
    found
}

/// The commands that built and took down a target, in order.
fn commands(target: &serde_json::Value) -> Vec<&str> {
    let commands = target["built"]["commands"].as_array().unwrap();
    commands.iter().map(|c| c.as_str().unwrap()).collect()
}

#[test]
fn a_recorded_configuration_is_built_on_the_recorder_measured_and_removed() {
    if !have_fuse() {
        return;
    }
    let Some(setup) = Setup::new("512m", "0.3s", RECORDED_AND_PLAIN) else {
        return;
    };
    let (out, record) = run_json(&setup, &["-r", "2", "--precision", "off"]);
    out.assert_success();
    let (recorded, plain) = (target(&record, "ext4-recorded"), target(&record, "ext4"));
    assert_eq!(recorded["built"]["recorded"], true, "{record}");
    assert!(plain["built"]["recorded"].is_null(), "{record}");
    assert_eq!(recorded["built"]["loop_direct_io"], true, "{record}");
    let commands = commands(recorded);
    assert_eq!(commands.len(), 7, "{commands:#?}");
    assert!(
        commands[0].starts_with("mount -t fuse fsbench-recorder ")
            && commands[0].contains("/rec/ext4-recorded  # served by fsbench: image img/ext4-recorded.img, block log img/ext4-recorded.log"),
        "{commands:#?}"
    );
    assert!(
        commands[1].starts_with("losetup --find --show --direct-io=on ")
            && commands[1].ends_with("/rec/ext4-recorded/disk"),
        "{commands:#?}"
    );
    assert!(
        commands[2].starts_with("mkfs.ext4 -F /dev/loop"),
        "{commands:#?}"
    );
    assert!(
        commands[3].starts_with("mount -t ext4 -- /dev/loop"),
        "{commands:#?}"
    );
    assert!(commands[4].starts_with("umount "), "{commands:#?}");
    assert!(
        commands[5].starts_with("losetup -d /dev/loop"),
        "{commands:#?}"
    );
    assert!(
        commands[6].starts_with("umount ") && commands[6].ends_with("/rec/ext4-recorded"),
        "the recorder goes last: {commands:#?}"
    );
    for t in [recorded, plain] {
        let workloads = t["workloads"].as_array().unwrap();
        assert_eq!(workloads.len(), 2, "two repetitions: {t}");
        for workload in workloads {
            let rate = common::metric_named(workload, "mib_per_s");
            let mib_per_s = rate["value"].as_f64().unwrap();
            assert!(mib_per_s > 1.0 && mib_per_s < 1e6, "{rate}");
            let written = rate["device"]["written_bytes"].as_u64().unwrap();
            assert!(written >= 4 << 20, "the disk under it wrote: {rate}");
        }
    }
    setup.assert_all_gone(&[]);
}

#[test]
fn cold_remount_remounts_a_recorded_configuration() {
    if !have_fuse() {
        return;
    }
    let configs = "[[config]]\nname = \"r\"\nmkfs = \"mkfs.ext4 -F {dev}\"\nrecorded = true\n";
    let Some(setup) = Setup::new("256m", "0.3s", configs) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let suite = write(
        dir.path(),
        "tree.toml",
        "description = \"read\"\nrepeat = 1\n[[workload]]\nkind = \"tree\"\n\
         args = \"--dataset small --scale 0.002 --ops read,delete\"\n",
    );
    let json = dir.path().join("result.json");
    let mut args = run_args(
        &suite,
        &setup.configs,
        setup.mnt.path(),
        &["--cold", "remount"],
    );
    args.extend(["--json".to_string(), json.display().to_string()]);
    run(&args).assert_success();
    let record = read_json(&json);
    let tree = &target(&record, "r")["workloads"][0];
    assert_eq!(
        tree["params"]["caches"],
        "synced, unmounted and mounted again before each operation (--cold remount)",
        "{tree}"
    );
    setup.assert_all_gone(&[]);
}

#[test]
fn kill_9_then_clean_releases_a_recorded_configuration() {
    if !have_fuse() {
        return;
    }
    let configs = "[[config]]\nname = \"r\"\nmkfs = \"mkfs.ext4 -F {dev}\"\nrecorded = true\n";
    let Some(setup) = Setup::new("256m", "60s", configs) else {
        return;
    };
    let mut fsbench = Running::spawn(&setup.args());
    wait_until(Duration::from_secs(60), "the recorded ext4 in use", || {
        assert!(fsbench.is_running(), "the run ended too early");
        // mnt/r appears only once the recorded ext4 is mounted.
        scratch_dirs(setup.mnt.path()).first().is_some_and(|top| {
            let ext4 = top.join("mnt/r");
            ext4.is_dir() && !scratch_dirs(&ext4).is_empty()
        })
    });
    assert_eq!(
        mounts_under(setup.mnt.path()).len(),
        2,
        "the recorder and the ext4 on it"
    );
    fsbench.signal(libc::SIGKILL);
    std::thread::sleep(Duration::from_millis(500));
    // The killed process may wait, in D state, on its own dead FUSE
    // server, holding its scratch directory's lock: clean --force's abort
    // of the connection is what lets it go.
    let out = run(&["clean", "--force", &setup.mnt.arg()]);
    let _ = fsbench.wait_for(Duration::from_secs(60));
    out.assert_success();
    assert!(
        out.stdout
            .contains("aborted the recorder's FUSE connection"),
        "{out}"
    );
    assert!(out.stdout.contains("detached"), "{out}");
    setup.assert_all_gone(&[]);
}

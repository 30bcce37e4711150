//! `fsbench run --configs FILE --images DIR`: file systems built on loop
//! images in a marked scratch directory, measured, and taken down on every
//! way out (end, refusal, SIGINT, kill -9 then `fsbench clean`).
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{Running, Sentinel, TmpfsMount, read_json, run, scratch_dirs, wait_until};

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

/// Mount points strictly below `dir`.
fn mounts_under(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let prefix = format!("{}/", dir.display());
    text.lines()
        .filter_map(|line| line.split(' ').nth(4))
        .filter(|point| point.starts_with(&prefix))
        .map(str::to_string)
        .collect()
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

/// Whatever a failing test leaves in `images` (a run killed on the
/// test's panic), released by `fsbench clean` before the tmpfs goes.
struct Cleaner(PathBuf);

impl Drop for Cleaner {
    fn drop(&mut self) {
        let _ = Command::new(common::FSBENCH)
            .args(["clean", "--force"])
            .arg(&self.0)
            .output();
    }
}

/// A tmpfs for the images with a sentinel beside them, a suite whose io job
/// runs `seconds`, and a configurations file: what every run here needs.
/// The cleaner goes first, before the tmpfs it cleans is unmounted.
struct Setup {
    _cleaner: Cleaner,
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
            _cleaner: Cleaner(mnt.path().to_path_buf()),
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
        assert_eq!(commands.len(), 3, "{built}");
        assert!(commands[0].starts_with("losetup --find --show "), "{built}");
        assert!(commands[1].starts_with("mkfs.ext4 -F /dev/loop"), "{built}");
        assert!(commands[2].starts_with("mount -t ext4 "), "{built}");
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
            .contains("-o data=writeback /dev/loop"),
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

#[test]
fn a_configuration_that_fails_to_mount_takes_down_what_was_built() {
    let configs = "[[config]]\nname = \"good\"\nmkfs = \"mkfs.ext4 -F {dev}\"\n\n\
         [[config]]\nname = \"bad\"\nmkfs = \"mkfs.ext4 -F {dev}\"\n\
         options = \"no_such_option\"\ntype = \"ext4\"\n";
    let Some(setup) = Setup::new("256m", "0.3s", configs) else {
        return;
    };
    let out = run(&setup.args());
    out.assert_error(1, &["configuration bad", "mount -t ext4 -o no_such_option"]);
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

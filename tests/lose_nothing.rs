//! Lose nothing through what configurations brought: the mounts fsbench
//! makes, a killed run's leftovers and `fsbench clean`. Each case is one a
//! hostile but plausible input or user made lose data before: a bind of a
//! shared source, a leftover swapped for a symlink while root cleans, a
//! user's mount under a leftover, a marker a crash left empty.
mod common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{
    Running, TmpfsMount, mounts_at_or_under, run, scratch_dirs, tmpfs_with_sentinel, wait_until,
};

/// `mount ARGS...`, asserted to work.
fn mount(args: &[&str]) {
    let out = Command::new("mount").args(args).output().unwrap();
    assert!(out.status.success(), "mount {args:?}: {out:?}");
}

/// Whatever is mounted on `point`, taken down when the test ends (also on
/// a panic), lazily so a busy one cannot fail the test's unwinding.
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).output();
    }
}

/// A tmpfs mounted on `point` (made), with `file` in it.
fn tmpfs_at(point: &Path, file: &str) -> Mounted {
    std::fs::create_dir_all(point).unwrap();
    mount(&[
        "-t",
        "tmpfs",
        "-o",
        "size=4m",
        "tmpfs",
        point.to_str().unwrap(),
    ]);
    std::fs::write(point.join(file), b"the user's data\n").unwrap();
    Mounted(point.to_path_buf())
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// A suite of one io job of `seconds` on a 1 MiB file.
fn suite(dir: &Path, seconds: &str) -> String {
    write(
        dir,
        "suite.toml",
        &format!(
            "description = \"tiny\"\nrepeat = 1\n[[workload]]\nkind = \"io\"\n\
             args = [\"-s\", \"1m\", \"--duration\", \"{seconds}\", \"-b\", \"64k\", \"--warmup\", \"0\"]\n"
        ),
    )
}

/// `fsbench run` of `configs` with images (and scratch) in `images`.
fn run_args(
    dir: &Path,
    configs: &str,
    images: &Path,
    seconds: &str,
    extra: &[&str],
) -> Vec<String> {
    let mut args: Vec<String> = ["run", "--suite", &suite(dir, seconds), "--configs"]
        .map(String::from)
        .to_vec();
    args.push(write(dir, "configs.toml", configs));
    args.extend([
        "--images".into(),
        images.display().to_string(),
        "--no-save".into(),
        "-q".into(),
    ]);
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// The reproduction: a configuration that rbinds a source with
/// shared propagation. Before, the teardown's lazy unmount propagated to
/// the peer group and took the user's submount (and its file) with it.
/// Now the mount verb is refused before anything is mounted.
#[test]
fn an_rbind_of_a_shared_source_is_refused_and_the_users_submount_survives() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let source = mnt.join("p");
    let _p = tmpfs_at(&source, "top");
    mount(&["--make-shared", source.to_str().unwrap()]);
    let _s = tmpfs_at(&source.join("s"), "f");
    let images = mnt.join("images");
    std::fs::create_dir(&images).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for verb in ["rbind", "bind", "move", "make-rshared", "remount,rbind"] {
        let configs = format!(
            "[[config]]\nname = \"c\"\nsource = \"{}\"\noptions = \"{verb}\"\n",
            source.display()
        );
        let out = run(&run_args(dir.path(), &configs, &images, "0.1s", &[]));
        out.assert_error(2, &["mount verb"]);
        assert_eq!(
            std::fs::read(source.join("s/f")).unwrap(),
            b"the user's data\n",
            "{verb}: the user's submount lost its file"
        );
        assert_eq!(mounts_at_or_under(&images), Vec::<String>::new(), "{verb}");
    }
    assert_eq!(
        mounts_at_or_under(&source).len(),
        2,
        "both user mounts stay"
    );
    sentinel.assert_intact();
}

/// A mount fsbench makes is private, so nothing mounted or unmounted
/// below it reaches a mount fsbench did not make; and under a shared
/// parent its copy in the parent's peer comes and goes with it (no
/// mount is left behind in the peer).
#[test]
fn every_mount_fsbench_makes_is_private_and_leaves_no_copy_in_a_peer() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let shared = mnt.join("shared");
    let _shared = tmpfs_at(&shared, "x");
    mount(&["--make-shared", shared.to_str().unwrap()]);
    let peer = mnt.join("peer");
    std::fs::create_dir(&peer).unwrap();
    mount(&["--bind", shared.to_str().unwrap(), peer.to_str().unwrap()]);
    let _peer = Mounted(peer.clone());
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("propagation");
    let configs = format!(
        "[[config]]\nname = \"t\"\nsource = \"tmpfs\"\ntype = \"tmpfs\"\n\
         setup = [\"findmnt -no PROPAGATION {{dir}} > {}\"]\n",
        seen.display()
    );
    let out = run(&run_args(
        dir.path(),
        &configs,
        &shared,
        "0.1s",
        &["--allow-shell"],
    ));
    out.assert_success();
    assert_eq!(std::fs::read_to_string(&seen).unwrap().trim(), "private");
    assert_eq!(mounts_at_or_under(&shared), [shared.display().to_string()]);
    assert_eq!(mounts_at_or_under(&peer), [peer.display().to_string()]);
    assert_eq!(common::listing(&shared), ["x"]);
    sentinel.assert_intact();
}

/// A run of one tmpfs configuration killed with -9 while it measures:
/// its scratch directory in `images`, with the configuration mounted.
fn killed_run(dir: &Path, images: &Path) -> PathBuf {
    let configs = "[[config]]\nname = \"t\"\nsource = \"tmpfs\"\ntype = \"tmpfs\"\n";
    let mut fsbench = Running::spawn(&run_args(dir, configs, images, "60s", &[]));
    let mut scratch = PathBuf::new();
    wait_until(
        Duration::from_secs(60),
        "the configuration measured",
        || {
            assert!(fsbench.is_running(), "the run ended too early");
            let Some(top) = scratch_dirs(images).into_iter().next() else {
                return false;
            };
            scratch = top.clone();
            !scratch_dirs(&top.join("mnt/t")).is_empty()
        },
    );
    fsbench.signal(libc::SIGKILL);
    let _ = fsbench.wait();
    scratch
}

/// `clean` unmounts the mounts the run recorded and nothing else: a mount
/// a user put under the leftover's `mnt/` is left alone, and the exit code
/// says the leftover stays. Once the user takes it away, `clean` finishes.
#[test]
fn clean_unmounts_only_what_the_run_recorded() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let scratch = killed_run(dir.path(), mnt.path());
    let users = mnt.join("users");
    std::fs::create_dir(&users).unwrap();
    std::fs::write(users.join("keep"), b"mine").unwrap();
    let bound = scratch.join("mnt/users-bind");
    std::fs::create_dir(&bound).unwrap();
    mount(&["--bind", users.to_str().unwrap(), bound.to_str().unwrap()]);
    let bind = Mounted(bound.clone());

    let out = run(&["clean", &mnt.arg()]);
    out.assert_code(1).assert_no_panic();
    assert!(out.stdout.contains("unmounted mnt/t"), "{out}");
    assert!(!out.stdout.contains("users-bind"), "{out}");
    assert!(out.stderr.contains("left mnt/users-bind alone"), "{out}");
    assert_eq!(mounts_at_or_under(&scratch), [bound.display().to_string()]);
    assert_eq!(std::fs::read(bound.join("keep")).unwrap(), b"mine");

    drop(bind);
    run(&["clean", &mnt.arg()]).assert_success();
    assert!(scratch_dirs(mnt.path()).is_empty());
    assert_eq!(std::fs::read(users.join("keep")).unwrap(), b"mine");
    sentinel.assert_intact();
}

fn hostname() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    name.trim().to_string()
}

/// A dead run's scratch directory `fsbench-<id>` in `dir` with `dirs`
/// empty subdirectories (what `clean` takes time to remove).
fn dead_leftover(dir: &Path, id: &str, dirs: usize) -> PathBuf {
    let scratch = dir.join(format!("fsbench-{id}"));
    std::fs::create_dir(&scratch).unwrap();
    for n in 0..dirs {
        std::fs::create_dir(scratch.join(format!("d{n}"))).unwrap();
    }
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    let marker = serde_json::json!({
        "tool": "fsbench", "run_id": id, "pid": pid, "host": hostname(),
        "created": "2026-01-01T00:00:00Z",
    });
    std::fs::write(scratch.join(".fsbench-scratch"), marker.to_string()).unwrap();
    scratch
}

/// A loop device on `image`, detached when the test ends.
struct Attached(String);

impl Attached {
    fn new(image: &Path) -> Attached {
        std::fs::File::create(image)
            .unwrap()
            .set_len(1 << 20)
            .unwrap();
        let out = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(image)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        Attached(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    fn is_attached(&self) -> bool {
        let name = self.0.trim_start_matches("/dev/");
        Path::new(&format!("/sys/block/{name}/loop/backing_file")).exists()
    }
}

impl Drop for Attached {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).output();
    }
}

/// The swap race: in a directory others may write to without the
/// sticky bit, while root's `clean` empties leftover A, another user
/// (nobody) renames leftover B away and puts a symlink to a victim
/// directory in its place. Before, `clean` resolved B's path again and
/// unmounted the victim's mounts and detached its loop devices. Now it
/// works through what it opened, warns about the directory, and the
/// victim keeps everything.
#[test]
fn clean_does_not_follow_a_leftover_swapped_for_a_symlink() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("256m") else {
        return;
    };
    let victim = mnt.join("victim");
    let _m1 = tmpfs_at(&victim.join("mnt/m1"), "precious");
    let victim_loop = Attached::new(&victim.join("disk.img"));
    let shared = mnt.join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    let first = dead_leftover(&shared, "20260101T000000Z-a", 3000);
    dead_leftover(&shared, "20260101T000000Z-b", 0);

    // Nobody waits for A to start going, then swaps B.
    let swap = format!(
        "import os, time\n\
         a = {first:?}\n\
         start = os.stat(a).st_nlink\n\
         while os.path.exists(a) and os.stat(a).st_nlink == start: pass\n\
         os.rename({b:?}, {b:?} + '.x')\n\
         os.symlink({victim:?}, {b:?})\n",
        first = first.display().to_string(),
        b = shared
            .join("fsbench-20260101T000000Z-b")
            .display()
            .to_string(),
        victim = victim.display().to_string(),
    );
    let mut attacker = Command::new("/usr/bin/python3")
        .args(["-c", &swap])
        .uid(65534)
        .gid(65534)
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let out = run(&["clean", shared.to_str().unwrap()]);
    assert!(
        attacker.wait().unwrap().success(),
        "the swap did not happen"
    );
    out.assert_no_panic();
    assert!(
        out.stderr
            .contains("is writable by other users and has no sticky bit"),
        "{out}"
    );
    assert!(
        !out.stdout.contains("victim") && !out.stdout.contains("m1"),
        "{out}"
    );
    assert_eq!(
        std::fs::read(victim.join("mnt/m1/precious")).unwrap(),
        b"the user's data\n"
    );
    assert_eq!(
        mounts_at_or_under(&victim).len(),
        1,
        "the victim's mount stays"
    );
    assert!(victim_loop.is_attached(), "the victim's loop device stays");
    sentinel.assert_intact();
}

/// Writes a leftover's record of what was made: one image, `image`'s
/// identity (st_dev, inode), said to be at `at` in the leftover.
fn forge_record(leftover: &Path, image: &Path, at: &str) {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(image).unwrap();
    let line = serde_json::json!({
        "image": { "file": { "dev": meta.dev(), "ino": meta.ino() }, "at": at },
    });
    std::fs::write(leftover.join(".fsbench-made"), format!("{line}\n")).unwrap();
}

/// Gives `paths` to the user nobody.
fn give_to_nobody(paths: &[PathBuf]) {
    for path in paths {
        std::os::unix::fs::chown(path, Some(65534), Some(65534)).unwrap();
    }
}

/// The forgery: a user plants a leftover of their own, marker
/// and record, naming the identity of another loop device's backing file
/// (hard-linked at the recorded place, so that the file found there is
/// that very image). Before, root's `clean` detached that loop device.
/// Now a record of a user other than root and the one cleaning releases
/// nothing, and `clean` says so; the leftover itself goes.
#[test]
fn a_users_forged_record_makes_roots_clean_detach_nothing() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let outside = mnt.join("outside");
    std::fs::create_dir(&outside).unwrap();
    let image = outside.join("victim.img");
    let victim = Attached::new(&image);
    let leftover = dead_leftover(mnt.path(), "20260101T000000Z-f", 0);
    std::fs::create_dir(leftover.join("img")).unwrap();
    std::fs::hard_link(&image, leftover.join("img/a.img")).unwrap();
    forge_record(&leftover, &image, "img/a.img");
    give_to_nobody(&[
        leftover.clone(),
        leftover.join("img"),
        leftover.join(".fsbench-scratch"),
        leftover.join(".fsbench-made"),
    ]);

    let out = run(&["clean", &mnt.arg()]);
    out.assert_success().assert_no_panic();
    assert!(
        out.stdout.contains(
            "released nothing its record names: the record belongs to uid 65534, not to you or root"
        ),
        "{out}"
    );
    assert!(!out.stdout.contains("detached"), "{out}");
    assert!(
        victim.is_attached(),
        "the victim's loop device stays\n{out}"
    );
    assert!(!leftover.exists(), "the leftover's files go\n{out}");
    assert!(image.exists());
    sentinel.assert_intact();
}

/// A record of root's own that names a loop device's backing file which
/// is not in the leftover: a symlink to it at the recorded place, a
/// symlink on the way there, nothing there. Before, `clean` detached it
/// on the identity alone; now the image must be found at its place
/// without following a link, and each leftover says it left it alone.
#[test]
fn an_image_not_in_its_leftover_is_not_detached() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let outside = tempfile::tempdir().unwrap();
    let image = outside.path().join("a.img");
    let victim = Attached::new(&image);
    let linked = dead_leftover(mnt.path(), "20260101T000000Z-l", 0);
    std::fs::create_dir(linked.join("img")).unwrap();
    std::os::unix::fs::symlink(&image, linked.join("img/a.img")).unwrap();
    let on_the_way = dead_leftover(mnt.path(), "20260101T000000Z-w", 0);
    std::os::unix::fs::symlink(outside.path(), on_the_way.join("img")).unwrap();
    let missing = dead_leftover(mnt.path(), "20260101T000000Z-m", 0);
    for leftover in [&linked, &on_the_way, &missing] {
        forge_record(leftover, &image, "img/a.img");
    }

    let out = run(&["clean", &mnt.arg()]);
    out.assert_success().assert_no_panic();
    let left = |why: &str| format!("left {} alone: {why}", victim.0);
    for (leftover, why) in [
        (&linked, left("img/a.img is a symbolic link")),
        (
            &on_the_way,
            left("cannot reach img/a.img in the scratch directory"),
        ),
        (&missing, left("img/a.img is not in the scratch directory")),
    ] {
        let line = format!("{}: {why}", leftover.display());
        assert!(out.stdout.contains(&line), "{line}\n{out}");
        assert!(!leftover.exists(), "{}", leftover.display());
    }
    assert!(!out.stdout.contains("detached"), "{out}");
    assert!(
        victim.is_attached(),
        "the victim's loop device stays\n{out}"
    );
    assert!(image.exists());
    sentinel.assert_intact();
}

/// The marker, its directory and the directory's name are on the disk
/// before the run writes anything (strace: fsync of each, in order), so a
/// crash cannot leave an empty marker that `clean` must distrust.
#[test]
fn the_marker_and_its_directory_are_synced_when_created() {
    let Some(mnt) = TmpfsMount::new("64m") else {
        return;
    };
    let log = mnt.join("strace.log");
    let target = mnt.join("t");
    std::fs::create_dir(&target).unwrap();
    let out = Command::new("strace")
        .args(["-f", "-y", "-e", "trace=fsync,openat", "-o"])
        .arg(&log)
        .arg(common::FSBENCH)
        .args([
            "io",
            target.to_str().unwrap(),
            "-s",
            "64k",
            "--duration",
            "0.05",
            "--warmup",
            "0",
            "-q",
        ])
        .output()
        .expect("strace");
    assert!(out.status.success(), "{out:?}");
    let text = std::fs::read_to_string(&log).unwrap();
    let synced = |path: &str| {
        text.lines().position(|line| {
            line.contains("fsync(") && line.contains(&format!("<{path}>")) && line.ends_with("= 0")
        })
    };
    let scratch = text
        .lines()
        .find_map(|l| {
            l.split('<')
                .nth(1)?
                .split_once("/.fsbench-scratch>")
                .map(|(d, _)| d.to_string())
        })
        .expect("the marker was opened");
    let marker = synced(&format!("{scratch}/.fsbench-scratch")).expect("marker synced");
    let dir = synced(&scratch).expect("scratch directory synced");
    let parent = synced(&target.display().to_string()).expect("target synced");
    let first_data = text
        .lines()
        .position(|l| l.contains("io.dat"))
        .expect("the workload's file");
    assert!(
        marker < dir && dir < parent && parent < first_data,
        "{text}"
    );
}

/// A marker a crash left empty: `clean` does not remove what it cannot
/// trust, says why, and exits non-zero so the user looks.
#[test]
fn a_crash_emptied_marker_makes_clean_fail_and_say_why() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("16m") else {
        return;
    };
    let scratch = mnt.join("fsbench-20260101T000000Z-e");
    std::fs::create_dir(&scratch).unwrap();
    std::fs::write(scratch.join(".fsbench-scratch"), b"").unwrap();
    std::fs::write(scratch.join("io.dat"), b"data").unwrap();
    let out = run(&["clean", &mnt.arg()]);
    out.assert_code(1).assert_no_panic();
    assert!(
        out.stdout
            .contains("skipped, its marker was not written by fsbench"),
        "{out}"
    );
    assert!(
        out.stderr
            .contains("1 scratch director(ies) stay: 1 have a marker fsbench cannot trust"),
        "{out}"
    );
    assert!(scratch.join("io.dat").exists());
    sentinel.assert_intact();
}

/// A `source` that is a regular file: mount(8) would loop-mount it with a
/// loop device fsbench did not make and would never detach. Refused
/// before anything is mounted.
#[test]
fn a_source_that_is_a_regular_file_is_refused() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let image = mnt.join("user.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    let out = Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(&image)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let images = mnt.join("images");
    std::fs::create_dir(&images).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let configs = format!(
        "[[config]]\nname = \"c\"\nsource = \"{}\"\n",
        image.display()
    );
    let out = run(&run_args(dir.path(), &configs, &images, "0.1s", &[]));
    out.assert_error(2, &["is a regular file"]);
    assert_eq!(mounts_at_or_under(&images), Vec::<String>::new());
    let attached = Command::new("losetup")
        .arg("-j")
        .arg(&image)
        .output()
        .unwrap();
    assert!(attached.stdout.is_empty(), "{attached:?}");
    sentinel.assert_intact();
}

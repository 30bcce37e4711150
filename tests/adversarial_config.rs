//! Input written by someone else (configuration files, suites, command
//! lines with traps) is refused up front with one line naming the problem:
//! it runs no command, writes no file outside the results directory, and
//! leaves the target as it found it.
mod common;

use std::path::Path;

use common::{
    Output, Sentinel, TmpfsMount, assert_no_scratch_left, mounts_under, run, tmpfs_with_sentinel,
};

/// Runs `args(MNT)` on a fresh tmpfs holding a sentinel and expects it
/// refused with exit `code` and a one-line error naming every needle;
/// nothing on the mount may change.
fn refused_on_tmpfs(args: impl Fn(&TmpfsMount) -> Vec<String>, code: i32, needles: &[&str]) {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let out = run(&args(&mnt));
    assert_refused(&out, code, needles, &mnt, &sentinel);
}

/// The error contract of a refused run, and a target left untouched.
fn assert_refused(
    out: &Output,
    code: i32,
    needles: &[&str],
    mnt: &TmpfsMount,
    sentinel: &Sentinel,
) {
    out.assert_error(code, needles);
    sentinel.assert_intact();
    assert_no_scratch_left(mnt.path());
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

/// `fsbench io MNT -s 1m -b MIX` is refused, naming every needle.
fn mix_refused(mix: &str, needles: &[&str]) {
    refused_on_tmpfs(
        |m| strings(&["io", &m.arg(), "-s", "1m", "-b", mix]),
        2,
        needles,
    );
}

#[test]
fn a_transfer_size_mix_names_the_percentage_out_of_range() {
    mix_refused("4k:101,8k:-1", &["4k", "101", "0 to 100"]);
    mix_refused("4k:100,8k:-0.5", &["8k", "-0.5", "0 to 100"]);
}

#[test]
fn a_transfer_size_mix_refuses_percentages_that_are_not_numbers() {
    mix_refused("4k:50,8k:NaN", &["8k", "NaN", "0 to 100"]);
    mix_refused("4k:50,8k:inf", &["8k", "inf", "0 to 100"]);
}

/// `fsbench io DIR -s 1m` on a kernel pseudo file system is refused as
/// such, not for its 0 B of free space.
fn refused_as_pseudo(dir: &str, fs_type: &str) {
    let out = run(&["io", dir, "-s", "1m"]);
    out.assert_error(
        2,
        &[
            dir,
            &format!("a {fs_type} pseudo file system"),
            "not storage",
        ],
    );
    assert_no_scratch_left(Path::new(dir));
}

#[test]
fn pseudo_file_systems_are_named_as_such() {
    refused_as_pseudo("/proc", "proc");
    refused_as_pseudo("/sys", "sysfs");
    // /dev is a tmpfs in some containers: storage, if odd.
    if mount_type("/dev").as_deref() == Some("devtmpfs") {
        refused_as_pseudo("/dev", "devtmpfs");
    }
}

/// The file system type of the mount point `dir`, from the mount table.
fn mount_type(dir: &str) -> Option<String> {
    let table = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    table.lines().rev().find_map(|line| {
        let fields: Vec<&str> = line.split(' ').collect();
        let separator = fields.iter().position(|f| *f == "-")?;
        (fields.get(4) == Some(&dir)).then(|| fields.get(separator + 1).map(|t| t.to_string()))?
    })
}

/// A suite of one io job, over in a moment.
const TINY_SUITE: &str = r#"
[[workload]]
kind = "io"
args = "-s 1m -b 4k --read 100 --duration 0.4s --interval 0.2s --warmup 0"
"#;

/// Writes `text` as `suite.toml` in `dir`; returns its path as an argument.
fn write_suite(dir: &Path, text: &str) -> String {
    let path = dir.join("suite.toml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// `fsbench run --no-save --suite SUITE -t SPEC...`.
fn run_suite_args(suite: &str, targets: &[String], extra: &[&str]) -> Vec<String> {
    let mut args = strings(&["run", "--no-save", "--suite", suite]);
    for target in targets {
        args.extend(["-t".to_string(), target.clone()]);
    }
    args.extend(strings(extra));
    args
}

/// `fsbench run` with targets `a=MNT` and `b=SAME`, where `same` spells
/// the mount's directory another way.
fn refused_as_one_directory(same: impl Fn(&TmpfsMount) -> String) {
    let dir = tempfile::tempdir().unwrap();
    let suite = write_suite(dir.path(), TINY_SUITE);
    refused_on_tmpfs(
        |mnt| {
            let targets = [format!("a={}", mnt.arg()), format!("b={}", same(mnt))];
            run_suite_args(&suite, &targets, &[])
        },
        2,
        &["'a'", "'b'", "same directory"],
    );
}

#[test]
fn one_directory_named_as_two_targets_is_refused() {
    refused_as_one_directory(|mnt| format!("{}/.", mnt.arg()));
    let links = tempfile::tempdir().unwrap();
    let link = links.path().join("link");
    refused_as_one_directory(|mnt| {
        std::os::unix::fs::symlink(mnt.path(), &link).unwrap();
        link.display().to_string()
    });
}

#[test]
fn a_tree_source_holding_the_target_is_refused_in_a_suite_as_on_its_own() {
    let needles = ["--source", "contains the target"];
    let dir = tempfile::tempdir().unwrap();
    refused_on_tmpfs(
        |mnt| {
            let entry = format!(
                "[[workload]]\nkind = \"tree\"\nargs = \"--source {} --ops copy\"\n",
                mnt.arg()
            );
            let suite = write_suite(dir.path(), &entry);
            run_suite_args(&suite, &[mnt.arg()], &[])
        },
        2,
        &needles,
    );
    refused_on_tmpfs(
        |mnt| strings(&["tree", &mnt.arg(), "--source", &mnt.arg(), "--ops", "copy"]),
        2,
        &needles,
    );
}

/// A PostMark run of a moment on `mnt`, then `extra` lines.
fn postmark_config(mnt: &TmpfsMount, extra: &str) -> String {
    format!(
        "set location {}\nset number 10\nset transactions 10\n{extra}\n",
        mnt.arg()
    )
}

/// Writes `text` as `name` in `dir`; returns its path as an argument.
fn write_file(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// Runs fsbench with `args` in the directory `cwd`, stdin closed, its data
/// home (which holds the results directory) `cwd/data`, not the real one.
fn run_in(cwd: &Path, args: &[String]) -> Output {
    let mut command = std::process::Command::new(common::FSBENCH);
    command
        .args(args)
        .current_dir(cwd)
        .env("HOME", cwd)
        .env("XDG_DATA_HOME", cwd.join("data"));
    common::Running::spawn_command(&mut command, format!("fsbench {}", args.join(" "))).wait()
}

/// Runs `fsbench ARGS < STDIN`: commands piped, not typed at a terminal.
fn run_with_stdin(args: &[&str], stdin: &Path) -> Output {
    let out = std::process::Command::new(common::FSBENCH)
        .args(args)
        .stdin(std::fs::File::open(stdin).unwrap())
        .output()
        .unwrap();
    Output {
        cmd: format!("fsbench {} < {}", args.join(" "), stdin.display()),
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The stage of a shell-escape test: a tmpfs target with a sentinel, a
/// directory for the files, and an escape that would create `touched`.
struct EscapeStage {
    mnt: TmpfsMount,
    sentinel: Sentinel,
    dir: tempfile::TempDir,
    touched: std::path::PathBuf,
    escape: String,
}

impl EscapeStage {
    /// None (after saying why) when not root.
    fn new() -> Option<EscapeStage> {
        let (mnt, sentinel) = tmpfs_with_sentinel("64m")?;
        let dir = tempfile::tempdir().unwrap();
        let touched = dir.path().join("touched");
        let escape = format!("!touch {}", touched.display());
        Some(EscapeStage {
            mnt,
            sentinel,
            dir,
            touched,
            escape,
        })
    }

    /// Writes `text` as `name` in the stage's directory.
    fn file(&self, name: &str, text: &str) -> String {
        write_file(self.dir.path(), name, text)
    }

    /// Refused with exit 2 naming every needle; the escape did not run.
    fn assert_refused(&self, out: &Output, needles: &[&str]) {
        assert_refused(out, 2, needles, &self.mnt, &self.sentinel);
        assert!(!self.touched.exists(), "the shell escape ran\n{out}");
    }

    /// Succeeded, having run the escape, and cleaned up.
    fn assert_ran(&self, out: &Output) {
        out.assert_success().assert_no_panic();
        assert!(self.touched.exists(), "the escape did not run\n{out}");
        self.sentinel.assert_intact();
        assert_no_scratch_left(self.mnt.path());
    }
}

#[test]
fn a_shell_escape_in_a_configuration_file_is_refused_unless_allowed() {
    let Some(stage) = EscapeStage::new() else {
        return;
    };
    let run_line = format!("{}\nrun", stage.escape);
    let config = stage.file("pm.cfg", &postmark_config(&stage.mnt, &run_line));
    let out = run(&["postmark", &config]);
    stage.assert_refused(
        &out,
        &[&format!("{config}:4"), &stage.escape, "--allow-shell"],
    );
    stage.assert_ran(&run(&["postmark", &config, "--allow-shell"]));
}

#[test]
fn a_shell_escape_in_a_loaded_file_or_piped_on_stdin_is_refused() {
    let Some(stage) = EscapeStage::new() else {
        return;
    };
    let inner = stage.file("inner.cfg", &format!("set seed 7\n{}\n", stage.escape));
    let outer = stage.file("outer.cfg", &format!("load {inner}\nrun\n"));
    let out = run(&["postmark", &outer]);
    stage.assert_refused(&out, &[&format!("{inner}:2"), "--allow-shell"]);

    let piped = stage.file("piped", &postmark_config(&stage.mnt, &stage.escape));
    let out = run_with_stdin(&["postmark"], Path::new(&piped));
    stage.assert_refused(&out, &["<stdin>:4", &stage.escape, "--allow-shell"]);
}

#[test]
fn a_report_file_named_in_a_configuration_file_stays_in_the_results_directory() {
    let Some((mnt, sentinel)) = tmpfs_with_sentinel("64m") else {
        return;
    };
    let cwd = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    let escapes = [
        format!("show {}", victim.display()),
        format!("run {}", victim.display()),
        "show ../victim".to_string(),
    ];
    for escape in &escapes {
        let config = write_file(cwd.path(), "pm.cfg", &postmark_config(&mnt, escape));
        let out = run_in(
            cwd.path(),
            &strings(&["postmark", &config, "--allow-shell"]),
        );
        assert_refused(
            &out,
            2,
            &[&format!("{config}:4"), "results directory"],
            &mnt,
            &sentinel,
        );
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "precious\n",
            "{out}"
        );
    }
    let config = write_file(
        cwd.path(),
        "pm.cfg",
        &postmark_config(&mnt, "show report.txt"),
    );
    run_in(cwd.path(), &strings(&["postmark", &config])).assert_success();
    let report = cwd.path().join("data/fsbench/results/report.txt");
    let report = std::fs::read_to_string(report).unwrap();
    assert!(
        report.starts_with("Current configuration is:\n"),
        "{report}"
    );
}

/// A suite whose PostMark entry runs `escape` among its commands.
fn postmark_suite(escape: &str) -> String {
    format!(
        "[[workload]]\nkind = \"postmark\"\ncommands = [\"set number 10\", \"set transactions 10\", \"{escape}\"]\n"
    )
}

#[test]
fn a_shell_escape_in_a_suite_is_refused_unless_allowed() {
    let Some(stage) = EscapeStage::new() else {
        return;
    };
    let suite = write_suite(stage.dir.path(), &postmark_suite(&stage.escape));
    let target = [stage.mnt.arg()];
    let out = run(&run_suite_args(&suite, &target, &[]));
    stage.assert_refused(&out, &[&suite, &stage.escape, "--allow-shell"]);
    stage.assert_ran(&run(&run_suite_args(&suite, &target, &["--allow-shell"])));
}

/// A suite's tree `--cmd` is a shell command written in a file too.
#[test]
fn a_tree_command_in_a_suite_is_refused_unless_allowed() {
    let Some(stage) = EscapeStage::new() else {
        return;
    };
    let command = format!("touch {}", stage.touched.display());
    let suite = write_suite(
        stage.dir.path(),
        &format!(
            "[[workload]]\nkind = \"tree\"\nargs = [\"--dataset\", \"images\", \"--scale\", \"0.001\", \"--ops\", \"find\", \"--cmd\", \"{command}\"]\n"
        ),
    );
    let target = [stage.mnt.arg()];
    let out = run(&run_suite_args(&suite, &target, &[]));
    stage.assert_refused(&out, &["--cmd", &command, "--allow-shell"]);
    stage.assert_ran(&run(&run_suite_args(&suite, &target, &["--allow-shell"])));
}

#[test]
fn a_report_file_in_a_suite_stays_in_the_results_directory() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    let suite = write_suite(
        dir.path(),
        &postmark_suite(&format!("show {}", victim.display())),
    );
    refused_on_tmpfs(
        |mnt| run_suite_args(&suite, &[mnt.arg()], &[]),
        2,
        &["results directory"],
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
}

// ---- `fsbench run --configs FILE`: a file written by someone else, run
// as root ----

/// The stage of a configurations file: a tmpfs with a sentinel for
/// `--images`, a directory for the files, a tiny suite.
struct ConfigsStage {
    images: TmpfsMount,
    sentinel: Sentinel,
    dir: tempfile::TempDir,
    suite: String,
}

impl ConfigsStage {
    /// None (after saying why) when not root.
    fn new() -> Option<ConfigsStage> {
        let (images, sentinel) = tmpfs_with_sentinel("64m")?;
        let dir = tempfile::tempdir().unwrap();
        let suite = write_suite(dir.path(), TINY_SUITE);
        Some(ConfigsStage {
            images,
            sentinel,
            dir,
            suite,
        })
    }

    /// Writes `text` as `name` in the stage's directory.
    fn file(&self, name: &str, text: &str) -> String {
        write_file(self.dir.path(), name, text)
    }

    /// `fsbench run --no-save --suite SUITE --configs CONFIGS --images
    /// IMAGES EXTRA...`.
    fn run(&self, configs: &str, extra: &[&str]) -> Output {
        let mut args = strings(&["run", "--no-save", "--suite", &self.suite]);
        args.extend(strings(&["--configs", configs, "--images"]));
        args.push(self.images.arg());
        args.extend(strings(extra));
        run(&args)
    }

    /// Refused with exit 2 and one line naming every needle; nothing
    /// mounted under --images, no scratch directory, the sentinel intact.
    fn assert_refused(&self, out: &Output, needles: &[&str]) {
        assert_refused(out, 2, needles, &self.images, &self.sentinel);
        assert_eq!(
            mounts_under(self.images.path()),
            Vec::<String>::new(),
            "a mount was made\n{out}"
        );
    }

    /// The configurations file `text` is refused, naming every needle.
    fn refuses(&self, text: &str, needles: &[&str]) -> Output {
        let configs = self.file("configs.toml", text);
        let out = self.run(&configs, &[]);
        self.assert_refused(&out, needles);
        out
    }
}

/// A source of someone's files: a directory holding a precious file.
fn precious_source(dir: &Path) -> std::path::PathBuf {
    let source = dir.join("home");
    std::fs::create_dir_all(source.join("user")).unwrap();
    std::fs::write(source.join("user/precious"), "precious\n").unwrap();
    source
}

fn assert_precious_intact(source: &Path) {
    assert_eq!(
        std::fs::read_to_string(source.join("user/precious")).unwrap(),
        "precious\n"
    );
}

#[test]
fn a_mount_verb_in_options_is_refused_before_anything_is_mounted() {
    let Some(stage) = ConfigsStage::new() else {
        return;
    };
    let source = precious_source(stage.dir.path());
    // A mount of the user's own, which `move` would carry into scratch.
    let Some(other) = TmpfsMount::new("16m") else {
        return;
    };
    let other_sentinel = Sentinel::plant(other.path());
    let image = stage.dir.path().join("disk.img");
    std::fs::write(&image, vec![0u8; 1 << 20]).unwrap();
    let cases = [
        ("rbind", source.display().to_string(), "mount verb"),
        ("bind", source.display().to_string(), "mount verb"),
        ("move", other.arg(), "mount verb"),
        ("remount,ro", other.arg(), "mount verb"),
        ("X-mount.mkdir", "tmpfs".into(), "mount(8) acts on itself"),
        (
            "loop",
            image.display().to_string(),
            "mount(8) acts on itself",
        ),
    ];
    for (options, source, why) in &cases {
        let text = format!(
            "[[config]]\nname = \"victim\"\nsource = \"{source}\"\ntype = \"tmpfs\"\noptions = \"{options}\"\n"
        );
        let option = options.split(',').next().unwrap();
        stage.refuses(
            &text,
            &[
                "victim",
                &format!("mount option \"{option}\""),
                why,
                "not an option of the file system",
            ],
        );
    }
    assert_precious_intact(&source);
    other_sentinel.assert_intact();
    assert_eq!(
        mount_type(&other.arg()).as_deref(),
        Some("tmpfs"),
        "the user's mount is where it was"
    );
}

#[test]
fn a_source_that_is_an_option_is_refused() {
    let Some(stage) = ConfigsStage::new() else {
        return;
    };
    stage.refuses(
        "[[config]]\nname = \"all\"\nsource = \"-a\"\ntype = \"ext4\"\n",
        &["all", "source \"-a\"", "starts with '-'"],
    );
}

#[test]
fn a_mkfs_program_given_by_a_path_is_refused_without_allow_shell() {
    let Some(stage) = ConfigsStage::new() else {
        return;
    };
    // A stand-in that would leave a mark if it ran.
    let bin = stage.dir.path().join("x");
    std::fs::create_dir(&bin).unwrap();
    let program = bin.join("mkfs.evil");
    let ran = stage.dir.path().join("ran");
    std::fs::write(
        &program,
        format!("#!/bin/sh\ntouch {}\nexit 1\n", ran.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    // By its absolute path, and by a relative one (mkfs runs in a
    // directory of the scratch directory).
    let relative = format!("../../../../../../../..{}", program.display());
    for given in [program.display().to_string(), relative] {
        stage.refuses(
            &format!(
                "[[config]]\nname = \"evil\"\nmkfs = \"{given} -F {{dev}}\"\ntype = \"ext4\"\n"
            ),
            &["evil", "runs mkfs by its path", &given, "--allow-shell"],
        );
        assert!(!ran.exists(), "the mkfs given by its path ran");
    }
}

#[test]
fn a_matrix_past_the_cap_is_refused_naming_its_count() {
    let Some(stage) = ConfigsStage::new() else {
        return;
    };
    // 14 KB of text that would make a million configurations.
    let values: Vec<String> = (0..1000).map(|v| format!("\"{v:04}\"")).collect();
    let values = values.join(",");
    let text = format!(
        "[matrix]\na = [{values}]\nb = [{values}]\n\n[[config]]\nname = \"t-{{a}}-{{b}}\"\nsource = \"tmpfs\"\ntype = \"tmpfs\"\n"
    );
    let out = stage.refuses(
        &text,
        &[
            "the matrix makes 1000000 configurations",
            "entry \"t-{a}-{b}\": 1000 × 1000",
            "at most 10000",
        ],
    );
    assert!(out.stderr.contains("configs.toml"), "{out}");
}

#[test]
fn an_endless_configurations_file_is_refused_at_once() {
    let Some(stage) = ConfigsStage::new() else {
        return;
    };
    let out = stage.run("/dev/zero", &[]);
    stage.assert_refused(
        &out,
        &[
            "--configs",
            "/dev/zero",
            "not a regular file (a character device)",
        ],
    );
}

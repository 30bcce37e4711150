//! What a package installs, generated from the clap definitions: shell
//! completions that the shells load, and man pages that man renders. (The
//! static binary and the .deb are tested by scripts/test-install.sh.)
mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::{FSBENCH, run};

/// `fsbench completions SHELL`, which must succeed.
fn completions(shell: &str) -> String {
    let out = run(&["completions", shell]);
    out.assert_success().assert_no_panic();
    assert_eq!(out.stderr, "", "{out}");
    out.stdout
}

/// Whether `program` runs here (`program --version`).
fn installed(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn bash_completions_load_in_bash() {
    let script = format!("source <('{FSBENCH}' completions bash) && complete -p fsbench");
    let out = Command::new("bash").args(["-c", &script]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("-F _fsbench fsbench"),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn zsh_and_fish_completions_know_the_subcommands() {
    let zsh = completions("zsh");
    assert!(zsh.starts_with("#compdef fsbench"), "{zsh}");
    let fish = completions("fish");
    assert!(fish.contains("complete -c fsbench"), "{fish}");
    for script in [&zsh, &fish] {
        for subcommand in ["run", "bonnie", "postmark", "compare", "completions"] {
            assert!(
                script.contains(subcommand),
                "{subcommand} missing\n{script}"
            );
        }
    }
}

#[test]
fn completions_complete_the_suite_flag_of_run() {
    assert!(completions("bash").contains("--suite"));
}

#[test]
fn a_shell_without_completions_is_a_one_line_usage_error() {
    let out = run(&["completions", "tcsh"]);
    out.assert_error(2, &["tcsh", "bash, zsh or fish"]);
    assert_eq!(out.stdout, "", "{out}");
}

/// The page without roff's definition of the apostrophe that precedes it.
fn page_lines(page: &str) -> Vec<&str> {
    page.lines()
        .filter(|line| !line.starts_with(".ie ") && !line.starts_with(".el "))
        .collect()
}

#[test]
fn the_man_page_is_fsbench_1_with_its_subcommands_and_examples() {
    let out = run(&["man"]);
    out.assert_success();
    let lines = page_lines(&out.stdout);
    assert!(lines[0].starts_with(".TH fsbench 1 "), "{}", out.stdout);
    for section in ["NAME", "SYNOPSIS", "OPTIONS", "SUBCOMMANDS", "EXAMPLES"] {
        assert!(
            lines.contains(&format!(".SH {section}").as_str()),
            "{section}\n{}",
            out.stdout
        );
    }
    assert!(out.stdout.contains("fsbench\\-bonnie(1)"), "{}", out.stdout);
    assert_eq!(
        out.stdout.matches(".ds Aq").count(),
        2,
        "the apostrophe is defined once"
    );
}

#[test]
fn man_renders_the_page() {
    if !installed("man") {
        eprintln!("skipping: man is not installed (apt package man-db)");
        return;
    }
    let page = run(&["man"]).stdout;
    let mut man = Command::new("man")
        .args(["-l", "-"])
        .env("MANWIDTH", "100")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    man.stdin
        .take()
        .unwrap()
        .write_all(page.as_bytes())
        .unwrap();
    let out = man.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for needle in [
        "SYNOPSIS",
        "fsbench-run(1)",
        "fsbench bonnie -d . -s 1g -n 16",
    ] {
        assert!(text.contains(needle), "{needle} missing\n{text}");
    }
}

#[test]
fn man_dir_writes_one_page_per_command() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&["man", "--dir", dir.path().to_str().unwrap()]);
    out.assert_success();
    for page in [
        "fsbench.1",
        "fsbench-run.1",
        "fsbench-bonnie.1",
        "fsbench-completions.1",
    ] {
        let text = std::fs::read_to_string(dir.path().join(page)).unwrap();
        let name = page.trim_end_matches(".1");
        assert!(
            page_lines(&text)[0].starts_with(&format!(".TH {name} 1 ")),
            "{text}"
        );
    }
}

#[test]
fn man_dir_that_is_not_a_directory_is_a_usage_error() {
    let out = run(&["man", "--dir", "/nonexistent/fsbench-man"]);
    out.assert_error(2, &["--dir", "not a directory"]);
}

#[test]
fn json_is_refused_where_nothing_is_measured() {
    for args in [["completions", "bash"].as_slice(), ["man"].as_slice()] {
        let out = run(&[args, &["--json", "out.json"]].concat());
        out.assert_error(2, &["--json", args[0]]);
        assert_eq!(out.stdout, "", "{out}");
    }
}

/// The Debian packages scripts/test.sh installs: its `packages=( ... )` list.
fn test_packages() -> Vec<String> {
    let script = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/test.sh"))
        .expect("scripts/test.sh");
    let list = script
        .split_once("packages=(")
        .and_then(|(_, rest)| rest.split_once(')'))
        .expect("scripts/test.sh declares packages=( ... )")
        .0;
    list.split_whitespace().map(str::to_owned).collect()
}

/// `apt-get install -s` of the test packages with `extra` options: whether
/// apt finds a way to install them all, and what it said.
fn apt_simulates_install(extra: &[&str]) -> (bool, String) {
    let out = Command::new("apt-get")
        .args(["install", "-s", "-q"])
        .args(extra)
        .args(test_packages())
        .output()
        .expect("apt-get runs");
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.success(), said)
}

/// The test command starts by installing its packages; on a fresh machine
/// that fails before anything is built when two of them break each other
/// (fuse against fuse3 and sshfs) or one breaks what the machine image ships
/// (qemu-system-x86 against the image's newer qemu-utils). Simulated twice:
/// against this machine's packages, and against none (an empty dpkg status),
/// so a conflict inside the list shows on a machine where all of it is
/// already installed.
#[test]
fn the_test_packages_install_together_on_a_fresh_machine() {
    if !installed("apt-get") {
        eprintln!("skipped: no apt-get on this machine");
        return;
    }
    let (here, said) = apt_simulates_install(&[]);
    assert!(here, "the test packages cannot be installed here:\n{said}");
    let empty = tempfile::NamedTempFile::new().unwrap();
    let status = format!("Dir::State::status={}", empty.path().display());
    let (fresh, said) = apt_simulates_install(&["-o", &status]);
    assert!(
        fresh,
        "the test packages conflict among themselves:\n{said}"
    );
}

//! fsbench's PostMark mode against the reference binary, PostMark 1.53
//! (Debian's `postmark`), on a tmpfs each test mounts (root only): the
//! same configuration must give the same progress lines, the same counts
//! in the verbose report, and the same bytes read and written. PostMark
//! prints its byte totals from float counters, so its exact bytes are
//! taken from the kernel's count of its I/O (`/proc/PID/io`) around the
//! `run` command.
mod common;
#[path = "postmark_support.rs"]
mod support;

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{FSBENCH, TmpfsMount, read_json};
use support::{
    DEFAULTS, MIXED, SEED_000, TWO_LOCATIONS, Vector, json_bytes, report_counts, subdir,
    with_locations, workloads, write_config,
};

const POSTMARK: &str = "/usr/bin/postmark";
const PROMPT: &str = "pm>";

/// What the reference binary did for one `run`.
struct Reference {
    /// Everything it printed for the run: progress lines and report.
    output: String,
    bytes_read: u64,
    bytes_written: u64,
}

/// PostMark driven over a pipe, one command at a time.
struct Driven {
    child: Child,
    stdin: ChildStdin,
    stdout: Arc<Mutex<Vec<u8>>>,
}

impl Driven {
    fn start(dir: &Path) -> Driven {
        let mut child = Command::new(POSTMARK)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot start postmark");
        let stdin = child.stdin.take().unwrap();
        let mut pipe = child.stdout.take().unwrap();
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&stdout);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = pipe.read(&mut buf) {
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Driven {
            child,
            stdin,
            stdout,
        }
    }

    fn output(&self) -> String {
        String::from_utf8_lossy(&self.stdout.lock().unwrap()).into_owned()
    }

    /// Sends one command and waits for the prompt that follows it, i.e.
    /// until PostMark has done it.
    fn command(&mut self, line: &str) {
        let prompts = self.output().matches(PROMPT).count();
        writeln!(self.stdin, "{line}").unwrap();
        self.wait_for_prompts(prompts + 1);
    }

    fn wait_for_prompts(&self, count: usize) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.output().matches(PROMPT).count() < count {
            assert!(
                Instant::now() < deadline,
                "postmark stalled\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// (bytes read, bytes written) by its system calls so far.
    fn io(&self) -> (u64, u64) {
        let text = std::fs::read_to_string(format!("/proc/{}/io", self.child.id())).unwrap();
        let field = |name: &str| -> u64 {
            text.lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or_else(|| panic!("no {name} in /proc/PID/io"))
        };
        (field("rchar:"), field("wchar:"))
    }
}

impl Drop for Driven {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs PostMark with `settings`, then `run`; the bytes are what the
/// kernel counted during `run`, less the command read and the output.
fn run_reference(dir: &Path, settings: &[String]) -> Reference {
    let mut postmark = Driven::start(dir);
    postmark.wait_for_prompts(1);
    for line in settings {
        postmark.command(line);
    }
    let before_output = postmark.output().len();
    let (read_before, written_before) = postmark.io();
    postmark.command("run");
    let (read_after, written_after) = postmark.io();
    let printed = postmark.output()[before_output..].to_string();
    Reference {
        output: printed.trim_end_matches(PROMPT).to_string(),
        bytes_read: read_after - read_before - "run\n".len() as u64,
        bytes_written: written_after - written_before - printed.len() as u64,
    }
}

/// fsbench's output and JSON for the same settings and `run`.
fn run_fsbench(dir: &Path, settings: &[String]) -> (String, serde_json::Value) {
    let mut lines = settings.to_vec();
    lines.push("run".into());
    let config = write_config(dir, "fsbench.cfg", &lines);
    let json = dir.join("fsbench.json");
    let out = Command::new(FSBENCH)
        .args(["postmark", config.to_str().unwrap(), "--json"])
        .arg(&json)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "fsbench failed: {stderr}");
    (String::from_utf8(out.stdout).unwrap(), read_json(&json))
}

/// The lines before the report ("Creating files...Done" etc.).
fn progress(output: &str) -> &str {
    output.split("Time:\n").next().unwrap()
}

/// Runs `settings` (with `{A}` and `{B}` standing for location
/// directories) with both programs on a fresh tmpfs; None (after saying
/// why) without root or without the reference binary.
fn run_both(settings: &[&str]) -> Option<(Reference, String, serde_json::Value)> {
    if !Path::new(POSTMARK).exists() {
        eprintln!("skipping: {POSTMARK} is not installed (apt-get install postmark)");
        return None;
    }
    let mnt = TmpfsMount::new("512m")?;
    let settings_in = |tool: &str| {
        let a = subdir(mnt.path(), &format!("{tool}-a"));
        let b = subdir(mnt.path(), &format!("{tool}-b"));
        with_locations(settings, &a, &b)
    };
    let reference = run_reference(&subdir(mnt.path(), "pm"), &settings_in("pm"));
    let (output, json) = run_fsbench(mnt.path(), &settings_in("fs"));
    Some((reference, output, json))
}

/// Both programs print the same progress lines and counts, and read and
/// write the same bytes, which are the vector's.
fn compare(vector: &Vector, extra: &[&str]) {
    let mut settings = vector.settings.to_vec();
    settings.extend(extra);
    let Some((reference, output, json)) = run_both(&settings) else {
        return;
    };
    assert_eq!(progress(&output), progress(&reference.output));
    assert_eq!(
        report_counts(&output),
        report_counts(&reference.output),
        "fsbench:\n{output}\npostmark:\n{}",
        reference.output
    );
    assert_eq!(report_counts(&output), vector.counts);
    let bytes = json_bytes(&workloads(&json)[0]);
    assert_eq!(bytes, (reference.bytes_read, reference.bytes_written));
    assert_eq!(bytes, vector.bytes);
}

/// PostMark stops with "out of files!" and prints no report; fsbench
/// prints the same lines, then its report.
#[test]
fn out_of_files() {
    let settings = [
        "set location {A}",
        "set number 20",
        "set transactions 100",
        "set bias create 0",
    ];
    let Some((reference, output, _)) = run_both(&settings) else {
        return;
    };
    assert!(
        reference.output.contains("out of files!"),
        "{}",
        reference.output
    );
    assert!(!reference.output.contains("Time:"));
    assert_eq!(progress(&output), reference.output);
}

#[test]
fn defaults() {
    compare(&DEFAULTS, &[]);
}

#[test]
fn seed_000_configuration() {
    compare(&SEED_000, &[]);
}

#[test]
fn two_weighted_locations_with_subdirectories() {
    compare(&TWO_LOCATIONS, &[]);
}

#[test]
fn buffered() {
    compare(&MIXED, &["set buffering true"]);
}

#[test]
fn unbuffered() {
    compare(&MIXED, &["set buffering false"]);
}

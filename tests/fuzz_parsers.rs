//! Property-based fuzzing of the parser of every file format fsbench reads:
//! PostMark configurations, vdbench parameter files, fio job files, suite TOML files,
//! configurations files (`fsbench run --configs`) and saved results
//! (loaded as `fsbench report` does, then rendered in every format and
//! compared). Inputs are token soups of each format, arbitrary
//! bytes, and valid seeds (the suites, the result fixtures, sample files)
//! mutated: bytes flipped, cut short, lines duplicated or dropped, numbers
//! made huge. Properties: no panic, every error is one line, a vdbench file
//! expands to a bounded number of runs, a configurations file to a bounded
//! number of configurations with no mount verb in them.
//!
//! The inputs are deterministic (a fixed seed) so CI sees the same cases;
//! `FSBENCH_FUZZ_SEED=N` draws others and `FSBENCH_FUZZ_SCALE=K` runs K
//! times as many. Each property prints how many cases it ran (visible with
//! `--nocapture`). PostMark lines are parsed, and only `set` commands are
//! executed (on a session whose runner never runs), so no `!` shell escape
//! or `run` can happen while fuzzing.
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

use fsbench::analysis::Summary;
use fsbench::compat::fio;
use fsbench::compat::postmark::command::{self, Command};
use fsbench::compat::postmark::interpreter::{Runner, Session};
use fsbench::compat::vdbench::parmfile::{MAX_RUNS, Overrides, ParmFile};
use fsbench::configs::{MAX_CONFIGURATIONS, Make};
use fsbench::error::error_line;
use fsbench::policy::{Origin, Policy};
use fsbench::report::Reporter;
use fsbench::report::compare::{Comparisons, Input};
use fsbench::report::csv::Csv;
use fsbench::report::html::Html;
use fsbench::report::markdown::Markdown;
use fsbench::report::terminal::Terminal;
use fsbench::results::load;
use fsbench::suite::Suite;
use fsbench::workload::postmark::{PostmarkConfig, RunSummary};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
const SUITES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/suites");

/// Numbers that have broken parsers before: zero, signs, the edges of
/// u32/u64/i64, floats too small or large, and ones that are not numbers.
const HUGE_NUMBERS: &[&str] = &[
    "0",
    "-1",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
    "9223372036854775808",
    "1e-300",
    "1e308",
    "1e999",
    "NaN",
    "inf",
    "-0",
    "0.0000001",
];

// ---- running properties ----

/// A runner with `cases` cases (times `FSBENCH_FUZZ_SCALE`), its draws
/// seeded by `FSBENCH_FUZZ_SEED` or a fixed seed.
fn runner(cases: u32) -> TestRunner {
    let scale: u32 = env_number("FSBENCH_FUZZ_SCALE").unwrap_or(1);
    let seed: u64 = env_number("FSBENCH_FUZZ_SEED").unwrap_or(0x5eed_f00d);
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let config = Config {
        cases: cases.saturating_mul(scale),
        failure_persistence: None,
        ..Config::default()
    };
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
}

fn env_number<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok()?.parse().ok()
}

/// Runs `property` on `cases` values of `strategy`; fails the test with
/// proptest's smallest failing input. Prints how many cases ran.
fn fuzz<S: Strategy>(
    name: &str,
    cases: u32,
    strategy: S,
    property: impl Fn(S::Value) -> Result<(), TestCaseError>,
) {
    let ran = AtomicU32::new(0);
    let outcome = runner(cases).run(&strategy, |value| {
        ran.fetch_add(1, Ordering::Relaxed);
        property(value)
    });
    eprintln!(
        "fuzz_parsers: {name}: {} cases",
        ran.load(Ordering::Relaxed)
    );
    if let Err(e) = outcome {
        panic!("{name}: {e}");
    }
}

/// An error is printed as its `error_line` after `fsbench: error: `: it
/// must be one line and say something.
fn one_line(result: anyhow::Result<impl Sized>) -> Result<(), TestCaseError> {
    if let Err(e) = result {
        let text = error_line(&e);
        prop_assert!(!text.contains('\n'), "an error of several lines: {text:?}");
        prop_assert!(!text.trim().is_empty(), "an empty error");
    }
    Ok(())
}

// ---- inputs ----

/// Lines of tokens from `tokens` (and huge numbers), glued by `glue`.
fn token_soup(tokens: &'static [&'static str], glue: &'static str) -> BoxedStrategy<String> {
    let token = prop_oneof![
        4 => proptest::sample::select(tokens),
        1 => proptest::sample::select(HUGE_NUMBERS),
    ];
    let line = proptest::collection::vec(token, 0..8).prop_map(move |t| t.join(glue));
    proptest::collection::vec(line, 0..12)
        .prop_map(|lines| lines.join("\n"))
        .boxed()
}

/// Any bytes, read as text the way the readers do (lossily here: invalid
/// UTF-8 is refused before any parser sees it).
fn any_text() -> BoxedStrategy<String> {
    proptest::collection::vec(any::<u8>(), 0..600)
        .prop_map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .boxed()
}

#[derive(Debug, Clone)]
enum Mutation {
    FlipByte { at: usize, bits: u8 },
    Truncate { at: usize },
    DuplicateLine { at: usize },
    DropLine { at: usize },
    HugeNumber { at: usize, number: &'static str },
    InsertByte { at: usize, byte: u8 },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let at = any::<usize>();
    prop_oneof![
        (at, 1..=255u8).prop_map(|(at, bits)| Mutation::FlipByte { at, bits }),
        at.prop_map(|at| Mutation::Truncate { at }),
        at.prop_map(|at| Mutation::DuplicateLine { at }),
        at.prop_map(|at| Mutation::DropLine { at }),
        (at, proptest::sample::select(HUGE_NUMBERS))
            .prop_map(|(at, number)| Mutation::HugeNumber { at, number }),
        (at, any::<u8>()).prop_map(|(at, byte)| Mutation::InsertByte { at, byte }),
    ]
}

impl Mutation {
    fn apply(&self, bytes: &mut Vec<u8>) {
        if bytes.is_empty() {
            return;
        }
        let len = bytes.len();
        match *self {
            Mutation::FlipByte { at, bits } => bytes[at % len] ^= bits,
            Mutation::Truncate { at } => bytes.truncate(at % len),
            Mutation::InsertByte { at, byte } => bytes.insert(at % len, byte),
            Mutation::DuplicateLine { at } => {
                let (start, end) = line_around(bytes, at % len);
                let line = bytes[start..end].to_vec();
                bytes.splice(start..start, line);
            }
            Mutation::DropLine { at } => {
                let (start, end) = line_around(bytes, at % len);
                bytes.drain(start..end);
            }
            Mutation::HugeNumber { at, number } => {
                let start = at % len;
                if let Some(found) = bytes[start..].iter().position(u8::is_ascii_digit) {
                    let first = start + found;
                    let digits = bytes[first..]
                        .iter()
                        .take_while(|b| b.is_ascii_digit())
                        .count();
                    bytes.splice(first..first + digits, number.bytes());
                }
            }
        }
    }
}

/// The line (with its end) that holds byte `at`.
fn line_around(bytes: &[u8], at: usize) -> (usize, usize) {
    let start = bytes[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let end = bytes[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |i| at + i + 1);
    (start, end)
}

/// One of `seeds` with 1 to 4 mutations.
fn mutated(seeds: Vec<String>) -> BoxedStrategy<String> {
    let mutations = proptest::collection::vec(mutation(), 1..5);
    (proptest::sample::select(seeds), mutations)
        .prop_map(|(seed, mutations)| {
            let mut bytes = seed.into_bytes();
            for m in &mutations {
                m.apply(&mut bytes);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
        .boxed()
}

/// Token soups, arbitrary bytes and mutated seeds, in proportion.
fn inputs(
    tokens: &'static [&'static str],
    glue: &'static str,
    seeds: Vec<String>,
) -> BoxedStrategy<String> {
    prop_oneof![
        2 => token_soup(tokens, glue),
        1 => any_text(),
        3 => mutated(seeds),
    ]
    .boxed()
}

fn read_dir_texts(dir: &str, extension: &str) -> Vec<String> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == extension))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

// ---- PostMark configuration ----

const POSTMARK_TOKENS: &[&str] = &[
    "set",
    "size",
    "number",
    "seed",
    "transactions",
    "location",
    "subdirectories",
    "read",
    "write",
    "buffering",
    "bias",
    "create",
    "report",
    "threads",
    "true",
    "false",
    "verbose",
    "terse",
    "show",
    "help",
    "quit",
    "exit",
    "?",
    "#",
    "run",
    "1",
    "10",
    "500",
    "9.77",
    "K",
    "M",
    "G",
    "10K",
    "1M",
    "/tmp",
    "/nonexistent",
    ",",
    "-",
    "=",
    "\t",
    "",
];

const POSTMARK_SEED: &str = "set size 500 10000\nset number 5000\nset seed 42\n\
set transactions 5000\nset subdirectories 10\nset read 512\nset write 512\n\
set buffering false\nset bias read 5\nset bias create 5\nset report terse\n\
set threads 4\nset location /tmp\nshow\n";

/// A session whose `run` never runs.
struct NeverRuns;

impl Runner for NeverRuns {
    fn run(
        &mut self,
        _config: &PostmarkConfig,
        _out: &mut dyn std::io::Write,
    ) -> anyhow::Result<RunSummary> {
        anyhow::bail!("fuzzing does not run PostMark")
    }
}

/// The suites' PostMark commands and a full configuration.
fn postmark_seeds() -> Vec<String> {
    let mut seeds = vec![POSTMARK_SEED.to_string()];
    for text in read_dir_texts(SUITES, "toml") {
        let suite = Suite::parse("seed", &text).unwrap();
        let commands: Vec<String> = suite
            .workloads
            .iter()
            .flat_map(|w| w.scaled_commands(1.0).unwrap())
            .collect();
        seeds.push(commands.join("\n"));
    }
    seeds
}

/// Every line is parsed; `set` commands also run on a session, as a
/// configuration file would. `!` lines (shell escapes) are left out.
fn postmark_property(text: String) -> Result<(), TestCaseError> {
    let (mut runner, mut out) = (NeverRuns, Vec::new());
    let policy = Policy {
        allow_shell: false,
        results_dir: std::env::temp_dir().join("fuzz-results-never-written"),
    };
    let mut session = Session::new(&mut runner, &mut out, policy);
    for line in text.lines().filter(|l| !l.trim_start().starts_with('!')) {
        let parsed = command::parse(line);
        let is_set = matches!(parsed, Ok(Some(Command::Set(_))));
        one_line(parsed)?;
        if is_set {
            one_line(session.execute(line, Origin::Written))?;
        }
    }
    Ok(())
}

#[test]
fn postmark_configurations() {
    let inputs = inputs(POSTMARK_TOKENS, " ", postmark_seeds());
    fuzz("PostMark configuration", 20_000, inputs, postmark_property);
}

// ---- vdbench parameter files ----

const VDBENCH_TOKENS: &[&str] = &[
    "sd=sd1",
    "sd=default",
    "wd=wd1",
    "wd=default",
    "rd=rd1",
    "rd=default",
    "lun=/tmp/fz/f",
    "lun=f",
    "lun=/dev/sdb",
    "size=",
    "1m",
    "4097",
    "threads=",
    "xfersize=",
    "rdpct=",
    "wrpct=",
    "seekpct=",
    "iorate=",
    "max",
    "curve",
    "elapsed=",
    "interval=",
    "warmup=",
    "forxfersize=",
    "forthreads=",
    "forrdpct=",
    "forseekpct=",
    "openflags=",
    "o_direct",
    "o_sync",
    "distribution=",
    "uniform",
    "validate=yes",
    "data_errors=",
    "messagescan=no",
    "(",
    ")",
    ",",
    "-",
    "d",
    "k",
    "m",
    "g",
    "t",
    "1",
    "2",
    "4k",
    "8k",
    "50",
    "100",
    "random",
    "seq",
    "eof",
    "*",
    "#",
    "/",
    "\"",
    " ",
    "hitarea=1",
    "xf=",
    "el=",
];

const VDBENCH_SEEDS: &[&str] = &[
    "* a comment\nmessagescan=no\n\
sd=sd1,lun=/tmp/fz/vdb.dat,size=64m,threads=4   anything after a blank is ignored\n\
wd=wd1,sd=sd1,xf=8k,rdpct=70,se=50\n\
rd=rd1,wd=wd1,iorate=max,el=10,in=1,warmup=2\n",
    "validate=yes\ndata_errors=5\n\
sd=default,threads=2\nsd=sd1,lun=/tmp/fz/a.dat,size=8m,openflags=o_direct\n\
wd=wd1,sd=sd1,\n  xfersize=(4k,25,64k,75),wrpct=30\n\
rd=rd1,wd=wd1,iorate=(100,200,max),elapsed=10,interval=1,forthreads=(1-8,d),\
forxfersize=(8k,16k),forrdpct=(0,50,100),forseekpct=(0,random,eof)\n\
rd=rd2,wd=wd1,iorate=1000,distribution=uniform,forthreads=(1-4,1)\n",
];

/// The file is read, planned and checked as `fsbench io --vdbench` does;
/// a plan has at most MAX_RUNS jobs. `include=` lines are left out (they
/// would read whatever file a mutation names).
fn vdbench_property(text: String, dir: &Path) -> Result<(), TestCaseError> {
    let text: Vec<&str> = text
        .lines()
        .filter(|l| !l.to_ascii_lowercase().contains("include"))
        .collect();
    let path = dir.join("parm");
    std::fs::write(&path, text.join("\n")).unwrap();
    let planned = ParmFile::read(&path).and_then(|file| file.plan(&Overrides::default()));
    if let Ok((plan, _)) = &planned {
        prop_assert!(plan.jobs.len() <= MAX_RUNS, "{} runs", plan.jobs.len());
        one_line(plan.check())?;
    }
    one_line(planned)
}

#[test]
fn vdbench_parameter_files() {
    let dir = tempfile::tempdir().unwrap();
    let seeds = VDBENCH_SEEDS.iter().map(|s| s.to_string()).collect();
    let inputs = inputs(VDBENCH_TOKENS, ",", seeds);
    fuzz("vdbench parameter file", 20_000, inputs, |text| {
        vdbench_property(text, dir.path())
    });
}

// ---- fio job files ----

const FIO_TOKENS: &[&str] = &[
    "[global]",
    "[job]",
    "[j2]",
    "[",
    "]",
    "=",
    "rw",
    "readwrite",
    "read",
    "randwrite",
    "randrw",
    "read:4k",
    "ioengine",
    "libaio",
    "io_uring",
    "psync",
    "mmap",
    "bs",
    "bssplit",
    "4k/50:64k/",
    "size",
    "filesize",
    "filename",
    "data",
    "directory",
    "iodepth",
    "direct",
    "numjobs",
    "stonewall",
    "runtime",
    "time_based",
    "ramp_time",
    "loops",
    "rate",
    "rate_iops",
    "rwmixread",
    "fsync",
    "fdatasync",
    "end_fsync",
    "sync",
    "dsync",
    "randseed",
    "verify",
    "kb_base",
    "1000",
    "1024",
    "4k",
    "4kib",
    "1m",
    "22m",
    "2300",
    "1",
    "0",
    "2s",
    "500ms",
    "${PATH}",
    "${FSBENCH_UNSET}",
    "$ncpus",
    ";",
    "#",
    " ",
    ",",
    ":",
    "/",
];

const FIO_SEEDS: &[&str] = &[
    "[global]\nioengine=libaio\ndirect=1\ngtod_reduce=1\n[read_iops]\nbs=4K\niodepth=64\n\
size=2G\nreadwrite=randread\ntime_based\nramp_time=2s\nruntime=15s\n[write_bw]\nbs=128k\n\
size=2G\nrw=write\n",
    "[global]\nsize=4m\nstonewall ; comment\n[w]\nrw=write\nfdatasync=8\nloops=2\n\
[r]\nrw=randrw\nbssplit=4k/50:64k/\nrwmixwrite=30\nnumjobs=2\nfilename=w.0.0\n",
];

/// The file is read, planned and linted as `fsbench io --fio` does, and
/// the plan checked. `include` lines are left out (they would read
/// whatever file a mutation names).
fn fio_property(text: String, dir: &Path) -> Result<(), TestCaseError> {
    let text: Vec<&str> = text.lines().filter(|l| !l.contains("include")).collect();
    let path = dir.join("jobs.fio");
    std::fs::write(&path, text.join("\n")).unwrap();
    let loaded = fio::load(&[&path], &fio::Overrides::default(), 1 << 30);
    if let Ok(loaded) = &loaded {
        one_line(loaded.plan.check())?;
    }
    one_line(loaded.map(|_| ()))
}

#[test]
fn fio_job_files() {
    let dir = tempfile::tempdir().unwrap();
    let seeds = FIO_SEEDS.iter().map(|s| s.to_string()).collect();
    let inputs = inputs(FIO_TOKENS, "=", seeds);
    fuzz("fio job file", 20_000, inputs, |text| {
        fio_property(text, dir.path())
    });
}

// ---- suite TOML ----

const SUITE_TOKENS: &[&str] = &[
    "[[workload]]",
    "[workload]",
    "kind",
    "label",
    "args",
    "commands",
    "repeat",
    "description",
    "=",
    "\"bonnie\"",
    "\"io\"",
    "\"postmark\"",
    "\"tree\"",
    "\"meta\"",
    "\"-s {1g} -n {16}\"",
    "\"set number {5000}\"",
    "[",
    "]",
    "{",
    "}",
    ",",
    "\"",
    "'",
    "\"{x}\"",
    "\"{\"",
    "true",
    "1",
    "0",
    "-1",
    "#",
    "\n",
];

/// Parsed as `fsbench run --suite FILE` does, then each entry's parameters
/// scaled by a few factors.
fn suite_property(text: String) -> Result<(), TestCaseError> {
    let parsed = Suite::parse("fuzz.toml", &text);
    if let Ok(suite) = &parsed {
        for entry in &suite.workloads {
            for factor in [0.001, 1.0, 1e300] {
                one_line(entry.scaled_args(factor))?;
                one_line(entry.scaled_commands(factor))?;
            }
        }
    }
    one_line(parsed)
}

#[test]
fn suite_files() {
    let inputs = inputs(SUITE_TOKENS, " ", read_dir_texts(SUITES, "toml"));
    fuzz("suite TOML", 20_000, inputs, suite_property);
}

// ---- configurations files (`fsbench run --configs`) ----

const CONFIGS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/configs");

const CONFIGS_TOKENS: &[&str] = &[
    "[[config]]",
    "[matrix]",
    "matrix",
    "=",
    "name",
    "mkfs",
    "device",
    "source",
    "path",
    "setup",
    "teardown",
    "options",
    "type",
    "\"a\"",
    "\"a-{k}\"",
    "\"a-{k}-{j}\"",
    "\"mkfs.ext4 -F {dev}\"",
    "\"/tmp/x/mkfs.evil {dev}\"",
    "\"../../tmp/x/mkfs.evil {dev}\"",
    "\"{k} {dev}\"",
    "\"/dev/sdb\"",
    "\"tmpfs\"",
    "\"ext4\"",
    "\"-a\"",
    "\"--bind\"",
    "\"rbind\"",
    "\"bind\"",
    "\"move\"",
    "\"remount,ro\"",
    "\"X-mount.mkdir\"",
    "\"loop=/dev/loop0\"",
    "\"noatime,{k}\"",
    "\"data={k}\"",
    "\"{dir}\"",
    "[\"zpool create -m {dir} p {k}\"]",
    "k = [\"1\", \"rbind\", \"-a\"]",
    "j = [\"x\", \"y\"]",
    "{",
    "}",
    "[",
    "]",
    ",",
    "\"",
    "'",
    "#",
    "\n",
];

/// Files written to hurt: mount verbs, options that start with '-', mkfs
/// programs given by a path, matrices past the cap or past what a number
/// holds.
fn hostile_configs() -> Vec<String> {
    let table = |body: &str| format!("[[config]]\nname = \"a\"\n{body}\n");
    let mut files: Vec<String> = [
        "source = \"/home\"\noptions = \"rbind\"",
        "source = \"/home\"\noptions = \"bind,ro\"",
        "source = \"/mnt/user\"\noptions = \"move\"",
        "source = \"tmpfs\"\noptions = \"remount,ro\"",
        "source = \"tmpfs\"\noptions = \"make-rshared\"",
        "source = \"tmpfs\"\noptions = \"X-mount.mkdir\"",
        "source = \"tmpfs\"\noptions = \"x-mount.subdir=a,X-mount.idmap=u:0:1:1\"",
        "source = \"/home/user/disk.img\"\noptions = \"loop,offset=0,sizelimit=1\"",
        "source = \"tmpfs\"\noptions = \"encryption=aes,B,R,M\"",
        "source = \"tmpfs\"\noptions = '\"bind\"'",
        "source = \"-a\"\ntype = \"ext4\"",
        "source = \"tmpfs\"\ntype = \"-a\"",
        "source = \"tmpfs\"\noptions = \"-a\"",
        "source = \"tmpfs\"\noptions = \"noatime,--bind\"",
        "mkfs = \"/tmp/x/mkfs.evil {dev}\"",
        "mkfs = \"../../tmp/x/mkfs.evil {dev}\"",
        "mkfs = \"'/tmp/x y/mkfs.ext4' {dev}\"",
        "mkfs = \"mkfs.ext4 {dev}\"\noptions = \"rbind\"",
    ]
    .iter()
    .map(|body| table(body))
    .collect();
    files.push(
        "matrix = { o = [\"noatime\", \"rbind\"], s = [\"tmpfs\", \"-a\"] }\n\
         [[config]]\nname = \"a-{o}-{s}\"\nsource = \"{s}\"\noptions = \"{o}\"\n"
            .into(),
    );
    // Matrices at, past and far past the cap, and one whose count
    // overflows.
    for sizes in [
        &[100, 100][..],
        &[1000, 1000],
        &[1000, 1000, 1000],
        &[1000; 7],
    ] {
        let mut text = String::from("[matrix]\n");
        let mut name = String::from("m");
        for (key, size) in sizes.iter().enumerate() {
            let values: Vec<String> = (0..*size).map(|v| format!("\"{v}\"")).collect();
            text += &format!("k{key} = [{}]\n", values.join(","));
            name += &format!("-{{k{key}}}");
        }
        files.push(format!(
            "{text}[[config]]\nname = \"{name}\"\nsource = \"tmpfs\"\n"
        ));
    }
    files
}

/// The examples in configs/ and the hostile files.
fn configs_seeds() -> Vec<String> {
    let mut seeds = read_dir_texts(CONFIGS, "toml");
    seeds.extend(hostile_configs());
    seeds
}

/// Options of mount(8) itself, never a file system's: what no parsed
/// configuration may hold (compared as the parser does: per option, by
/// its key, case and quotes aside).
fn is_mount_s_own(option: &str) -> bool {
    const VERBS: &[&str] = &[
        "bind",
        "rbind",
        "move",
        "remount",
        "b",
        "r",
        "m",
        "loop",
        "offset",
        "sizelimit",
        "encryption",
    ];
    const PROPAGATION: &[&str] = &["shared", "slave", "private", "unbindable"];
    let key = option.split('=').next().unwrap_or_default();
    let key: String = key.chars().filter(|c| !matches!(c, '"' | '\'')).collect();
    let key = key.to_ascii_lowercase();
    let propagation = key.strip_prefix("make-").unwrap_or(&key);
    let propagation = propagation.strip_prefix('r').unwrap_or(propagation);
    key.starts_with('-')
        || key.starts_with("x-mount.")
        || VERBS.contains(&key.as_str())
        || PROPAGATION.contains(&propagation)
}

/// Parsed as `fsbench run --configs FILE` does: Ok, or a one-line error,
/// and soon (the bound catches a hang, not a slow parse). What parses is
/// safe: at most MAX_CONFIGURATIONS configurations, none with a mount verb
/// or a leading '-' where mount reads it, and a mkfs given by a path
/// needs --allow-shell.
fn configs_property(text: String) -> Result<(), TestCaseError> {
    let started = std::time::Instant::now();
    let parsed = fsbench::configs::parse(&text);
    let took = started.elapsed();
    prop_assert!(took < std::time::Duration::from_secs(10), "took {took:?}");
    if let Ok(configs) = &parsed {
        prop_assert!(
            configs.len() <= MAX_CONFIGURATIONS,
            "{} configurations",
            configs.len()
        );
        for config in configs {
            let name = &config.name;
            if let Some(option) = config.options.split(',').find(|o| is_mount_s_own(o)) {
                return Err(TestCaseError::fail(format!(
                    "{name}: option {option:?} passed"
                )));
            }
            if let Make::Mount { source } = &config.make {
                prop_assert!(!source.starts_with('-'), "{name}: source {source:?}");
            }
            if let Some(fs_type) = &config.fs_type {
                prop_assert!(!fs_type.starts_with('-'), "{name}: type {fs_type:?}");
            }
            if let Make::Mkfs { words, .. } = &config.make
                && words[0].contains('/')
            {
                prop_assert!(config.shell_permission().is_some(), "{name}: {words:?}");
            }
        }
    }
    one_line(parsed)
}

#[test]
fn configurations_files() {
    let inputs = inputs(CONFIGS_TOKENS, " ", configs_seeds());
    fuzz("configurations file", 10_000, inputs, configs_property);
}

// ---- result JSON ----

#[derive(Debug, Clone)]
enum JsonMutation {
    Number(f64),
    Text(&'static str),
    Null,
    EmptyArray,
    DuplicateArrayItem,
    RemoveKey,
}

fn json_mutation() -> impl Strategy<Value = JsonMutation> {
    prop_oneof![
        proptest::sample::select(vec![
            0.0,
            -1.0,
            1e-300,
            1e300,
            f64::MAX,
            -f64::MAX,
            4294967296.0,
            18446744073709551616.0,
            0.5
        ])
        .prop_map(JsonMutation::Number),
        proptest::sample::select(vec!["", "x", "fsbench-result", "\n", "🙂"])
            .prop_map(JsonMutation::Text),
        Just(JsonMutation::Null),
        Just(JsonMutation::EmptyArray),
        Just(JsonMutation::DuplicateArrayItem),
        Just(JsonMutation::RemoveKey),
    ]
}

/// JSON pointers of every value in `value`.
fn pointers(value: &serde_json::Value, at: String, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, child) in map {
                let key = key.replace('~', "~0").replace('/', "~1");
                pointers(child, format!("{at}/{key}"), out);
            }
        }
        serde_json::Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                pointers(child, format!("{at}/{index}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

impl JsonMutation {
    fn apply(&self, root: &mut serde_json::Value, pointer: &str) {
        if let JsonMutation::RemoveKey = self {
            if let Some((parent, key)) = pointer.rsplit_once('/')
                && let Some(serde_json::Value::Object(map)) = root.pointer_mut(parent)
            {
                map.remove(&key.replace("~1", "/").replace("~0", "~"));
            }
            return;
        }
        let Some(value) = root.pointer_mut(pointer) else {
            return;
        };
        match self {
            JsonMutation::Number(n) => *value = serde_json::json!(n),
            JsonMutation::Text(t) => *value = serde_json::json!(t),
            JsonMutation::Null => *value = serde_json::Value::Null,
            JsonMutation::EmptyArray => *value = serde_json::json!([]),
            JsonMutation::DuplicateArrayItem => {
                if let serde_json::Value::Array(items) = value
                    && let Some(first) = items.first().cloned()
                {
                    items.push(first);
                }
            }
            JsonMutation::RemoveKey => unreachable!("handled above"),
        }
    }
}

/// A fixture with 1 to 6 of its values changed (numbers made extreme,
/// arrays emptied, keys removed...), so most mutants still load and reach
/// the reports.
fn mutated_result(seeds: Vec<serde_json::Value>) -> BoxedStrategy<String> {
    let changes = proptest::collection::vec((any::<usize>(), json_mutation()), 1..7);
    (proptest::sample::select(seeds), changes)
        .prop_map(|(mut value, changes)| {
            for (index, change) in changes {
                let mut all = Vec::new();
                pointers(&value, String::new(), &mut all);
                change.apply(&mut value, &all[index % all.len()]);
            }
            serde_json::to_string(&value).unwrap()
        })
        .boxed()
}

/// Loaded as `fsbench report` does; a result that loads is rendered in
/// every format and compared with itself and with the first fixture.
fn result_property(text: String, dir: &Path, reference: &Path) -> Result<(), TestCaseError> {
    let path = dir.join("result.json");
    std::fs::write(&path, &text).unwrap();
    let loaded = load(&path);
    if let Ok(run) = &loaded {
        let summary = Summary::with_baseline(run, 0);
        let reporters: [&dyn Reporter; 5] = [
            &Terminal { width: 100 },
            &Markdown,
            &Csv {
                per_repetition: false,
            },
            &Csv {
                per_repetition: true,
            },
            &Html,
        ];
        for reporter in reporters {
            one_line(reporter.render(run, &summary))?;
        }
        let inputs = [
            Input {
                name: "reference".into(),
                run: load(reference).unwrap(),
            },
            Input {
                name: "fuzzed".into(),
                run: run.clone(),
            },
        ];
        let comparisons = Comparisons::of(&inputs);
        comparisons.render_text(fsbench::report::terminal::DEFAULT_WIDTH);
        one_line(fsbench::report::charts::relative_change(
            &comparisons.chart_title(),
            &comparisons.rows(),
        ))?;
    }
    one_line(loaded)
}

#[test]
fn result_files() {
    let dir = tempfile::tempdir().unwrap();
    let texts = read_dir_texts(FIXTURES, "json");
    let values: Vec<serde_json::Value> = texts
        .iter()
        .map(|t| serde_json::from_str(t).unwrap())
        .collect();
    let reference = Path::new(FIXTURES).join("run-before.json");
    let inputs = prop_oneof![
        1 => any_text(),
        1 => mutated(texts),
        6 => mutated_result(values),
    ];
    fuzz("result JSON", 2_000, inputs, |text| {
        result_property(text, dir.path(), &reference)
    });
}

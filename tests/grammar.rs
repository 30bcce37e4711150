//! One grammar for every native subcommand (docs/grammar.md): a
//! short flag means one thing everywhere, sizes and durations take units,
//! the flags of a workload run are shared, targets are given alike; and
//! one exit-code rule: 2 when the command line or a target cannot be used
//! as given, 1 when a run fails after it started.
mod common;

use std::collections::BTreeMap;

use common::{TmpfsMount, run};

/// The compatibility modes keep their tools' letters (bonnie++'s `-r` is
/// RAM, `-d` the directory): they are left out of the common grammar.
const COMPAT: [&str; 2] = ["bonnie", "postmark"];

/// The commands that run a workload on targets.
const RUNS_WORKLOADS: [&str; 5] = ["run", "io", "tree", "meta", "durability"];

fn native_subcommands() -> Vec<clap::Command> {
    let mut command = fsbench::cli::command();
    command.build();
    command
        .get_subcommands()
        .filter(|sub| !COMPAT.contains(&sub.get_name()))
        .cloned()
        .collect()
}

fn value_name(arg: &clap::Arg) -> String {
    arg.get_value_names()
        .and_then(|names| names.first())
        .map_or(String::new(), |name| name.to_string())
}

#[test]
fn a_short_flag_means_one_thing_in_every_native_subcommand() {
    // letter -> (long name, first subcommand seen with it)
    let mut meaning: BTreeMap<char, (String, String)> = BTreeMap::new();
    let mut clashes = Vec::new();
    for sub in native_subcommands() {
        for arg in sub.get_arguments() {
            let Some(short) = arg.get_short() else {
                continue;
            };
            let long = arg.get_long().unwrap_or("(no long name)").to_string();
            let name = sub.get_name().to_string();
            let (seen, first) = meaning.entry(short).or_insert((long.clone(), name.clone()));
            if *seen != long {
                clashes.push(format!("-{short}: --{seen} in {first}, --{long} in {name}"));
            }
        }
    }
    assert!(
        clashes.is_empty(),
        "short flags that clash:\n{}",
        clashes.join("\n")
    );
    // The grammar's letters (docs/grammar.md): fio/hyperfine-like, where they exist.
    for (short, long) in [
        ('t', "target"),
        ('r', "repeat"),
        ('q', "quiet"),
        ('j', "threads"),
    ] {
        assert_eq!(
            meaning.get(&short).map(|m| m.0.as_str()),
            Some(long),
            "-{short}"
        );
    }
}

#[test]
fn every_command_that_runs_a_workload_takes_the_shared_flags() {
    for sub in native_subcommands() {
        if !RUNS_WORKLOADS.contains(&sub.get_name()) {
            continue;
        }
        let longs: Vec<&str> = sub.get_arguments().filter_map(|a| a.get_long()).collect();
        for flag in ["target", "repeat", "quiet", "keep", "json"] {
            assert!(
                longs.contains(&flag),
                "fsbench {} lacks --{flag}",
                sub.get_name()
            );
        }
    }
}

/// Every size argument (value name SIZE...) and duration argument (TIME)
/// parses units through its value parser; no native argument takes sizes
/// or times under another value name (which would escape this test).
#[test]
fn sizes_and_durations_take_units_everywhere() {
    let mut checked = 0;
    for sub in native_subcommands() {
        for arg in sub.get_arguments() {
            let name = value_name(arg);
            let id = format!("fsbench {} --{}", sub.get_name(), arg.get_id());
            assert!(
                !["S", "SECONDS", "SECS", "MS", "BYTES", "MiB", "MB", "KB"]
                    .contains(&name.as_str()),
                "{id}: <{name}> is a size or a time without units: name it SIZE or TIME"
            );
            let (good, unit) = match name.as_str() {
                n if n.starts_with("SIZE") => ("1m", "size"),
                "TIME" => ("2s", "time"),
                _ => continue,
            };
            assert!(arg.get_long().is_some(), "{id}: give it a long name");
            let long = arg.get_long().unwrap();
            // Whether the value itself is refused: what the argument requires
            // of other flags (--image-size needs --configs) does not count.
            let value_refused = |text: &str| {
                let words = ["fsbench", sub.get_name(), &format!("--{long}={text}")];
                fsbench::cli::command()
                    .try_get_matches_from(words)
                    .is_err_and(|e| {
                        use clap::error::ErrorKind::{InvalidValue, ValueValidation};
                        matches!(e.kind(), InvalidValue | ValueValidation)
                    })
            };
            assert!(!value_refused(good), "{id}: {good} refused as a {unit}");
            assert!(value_refused("banana"), "{id}: takes any text as a {unit}");
            checked += 1;
        }
    }
    // io's -s, -b, --amount, -d, -w, -i; meta's -s; tree's --stream-size;
    // durability's -d.
    assert!(checked >= 9, "only {checked} size and time arguments found");
}

#[test]
fn the_grammar_parses_as_documented() {
    let parses = |line: &str| {
        let words = std::iter::once("fsbench").chain(line.split_whitespace());
        fsbench::cli::command().try_get_matches_from(words).is_ok()
    };
    for line in [
        "run -q -r 2 -t a=/x -t b=/y",
        "run /x /y",
        "io -t /x -s 1g -b 4k -j 4 -d 2s -w 1s -r 3 -q --keep",
        "durability /x --seconds 2s",
        "durability -t /x -d 500ms",
        "meta /x -j 2 -s 4k -n 10",
        "tree -t /x -j 2 --stream-size 16m",
        "env",
        "env /x -t y=/z",
        "clean -t /x",
    ] {
        assert!(parses(line), "fsbench {line} refused");
    }
    for line in ["io /x -t /y", "durability /x -d banana", "io /x -s 12q"] {
        assert!(!parses(line), "fsbench {line} accepted");
    }
}

#[test]
fn bonnie_and_postmark_say_they_keep_their_tools_letters() {
    for (kind, needle) in [
        ("bonnie", "bonnie++'s letters"),
        ("postmark", "PostMark's commands"),
    ] {
        let out = run(&[kind, "--help"]);
        out.assert_success();
        assert!(out.stdout.contains(needle), "{kind} --help\n{out}");
    }
}

#[test]
fn a_bare_name_as_target_hints_at_name_equals_path() {
    for args in [
        &["env", "-t", "ext4"][..],
        &["io", "--target", "ext4", "-s", "1m"],
    ] {
        run(args).assert_error(2, &["ext4 does not exist", "NAME=PATH"]);
    }
}

/// A target that cannot be used as given is the user's input: exit 2,
/// checked before anything runs, whatever the command.
#[test]
fn a_target_that_cannot_be_used_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    std::fs::write(&file, b"x").unwrap();
    let missing = dir.path().join("missing");
    let io = |target: &str| {
        run(&[
            "io", target, "-s", "1m", "-d", "0.2s", "-w", "0", "-i", "0.1s",
        ])
    };
    io(missing.to_str().unwrap()).assert_error(2, &["does not exist"]);
    io(file.to_str().unwrap()).assert_error(2, &["not a directory"]);
    let Some(small) = TmpfsMount::new("1m") else {
        return;
    };
    run(&["io", &small.arg(), "-s", "64m"]).assert_error(2, &["not enough space"]);
    run(&["meta", &small.arg(), "-n", "10", "-s", "1m"]).assert_error(2, &["not enough space"]);
    let read_only = TmpfsMount::with_options("size=16m,ro").unwrap();
    io(&read_only.arg()).assert_error(2, &["not writable"]);
    run(&["run", "-q", "--no-save", "-t", &read_only.arg()]).assert_error(2, &["not writable"]);
}

//! How each configuration `fsbench run --configs` built was made, in the
//! terminal and Markdown reports (and HTML's environment table): its mkfs
//! command line, what it was made on (a loop image with or without direct
//! I/O, a device, a mounted source) and its mount options, a row per built
//! target before any figure; a target that was a plain directory has no
//! row, and a run without built targets no block at all.
use std::path::PathBuf;

use fsbench::analysis::Summary;
use fsbench::report::Reporter;
use fsbench::report::html::Html;
use fsbench::report::markdown::Markdown;
use fsbench::report::terminal::Terminal;
use fsbench::result::RunResult;
use serde_json::{Value, json};

const TITLE: &str = "How the targets were built (fsbench run --configs)";
const MKFS: &str = "mkfs.ext4 -F -O ^has_journal {dev}";
const OPTIONS: &str = "noatime,data=writeback";

/// The report tests' fixture run (targets `tmpfs` and `tmpfs-huge`), with
/// `built[t]` as target `t`'s record (None: a plain directory).
fn run_with(built: [Option<Value>; 2]) -> RunResult {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-two-targets.json");
    let mut value: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let targets = value["targets"].as_array_mut().unwrap();
    assert_eq!(targets.len(), 2);
    for (target, built) in targets.iter_mut().zip(built) {
        let object = target.as_object_mut().unwrap();
        object.remove("built");
        if let Some(built) = built {
            object.insert("built".into(), built);
        }
    }
    serde_json::from_value(value).unwrap()
}

/// ext4 made by mkfs on a loop image, as `fsbench run --configs` records it.
fn on_loop_image(direct_io: bool) -> Value {
    json!({
        "mkfs": MKFS,
        "device": "/dev/loop7",
        "options": OPTIONS,
        "loop_direct_io": direct_io,
        "fs_type": "ext4",
        "commands": ["losetup --find --show --direct-io=on /var/tmp/img/ext4.img"],
        "builds": 1,
        "build_seconds": 0.4,
    })
}

fn render(reporter: &dyn Reporter, run: &RunResult) -> String {
    reporter.render(run, &Summary::of(run)).unwrap()
}

fn terminal(run: &RunResult, width: usize) -> String {
    render(&Terminal { width }, run)
}

/// The terminal's block of built targets: its lines after the title, to
/// the blank line after it.
fn terminal_block(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| *l == TITLE)
        .unwrap_or_else(|| panic!("no {TITLE:?} in:\n{text}"));
    lines[start + 1..]
        .iter()
        .take_while(|l| !l.is_empty())
        .copied()
        .collect()
}

/// The Markdown section of built targets: its table's lines.
fn markdown_block(text: &str) -> Vec<&str> {
    let heading = format!("## {TITLE}");
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| *l == heading)
        .unwrap_or_else(|| panic!("no {heading:?} in:\n{text}"));
    lines[start + 2..]
        .iter()
        .take_while(|l| !l.is_empty())
        .copied()
        .collect()
}

#[test]
fn terminal_shows_how_the_built_target_was_made_and_nothing_for_a_directory() {
    let run = run_with([Some(on_loop_image(true)), None]);
    let text = terminal(&run, 100);
    assert_eq!(
        terminal_block(&text),
        [
            "  tmpfs: mkfs.ext4 -F -O ^has_journal {dev}",
            "    on a loop image, direct I/O · mount options noatime,data=writeback",
        ],
        "{text}"
    );
    // Before the figures: the first workload's table comes after it.
    let block_at = text.find(TITLE).unwrap();
    let first_table = text.find("(baseline)").unwrap();
    assert!(block_at < first_table, "{text}");
}

#[test]
fn markdown_shows_how_the_built_target_was_made_and_nothing_for_a_directory() {
    let run = run_with([Some(on_loop_image(true)), None]);
    let text = render(&Markdown, &run);
    assert_eq!(
        markdown_block(&text),
        [
            "| target | mkfs | on | mount options |",
            "|---|---|---|---|",
            "| tmpfs | mkfs.ext4 -F -O ^has_journal {dev} | a loop image, direct I/O | noatime,data=writeback |",
        ],
        "{text}"
    );
    let section = text.find(&format!("## {TITLE}")).unwrap();
    let first_workload = text.find("\n## bonnie").unwrap();
    assert!(
        section < first_workload,
        "the block comes before the figures:\n{text}"
    );
}

#[test]
fn every_way_of_building_says_where() {
    let wiped = json!({
        "mkfs": "mkfs.xfs -f -s size=4096 {dev}",
        "device": "/dev/sdb",
        "options": "",
        "fs_type": "xfs",
    });
    let run = run_with([Some(on_loop_image(false)), Some(wiped)]);
    assert_eq!(
        terminal_block(&terminal(&run, 100)),
        [
            "  tmpfs: mkfs.ext4 -F -O ^has_journal {dev}",
            "    on a loop image, no direct I/O (the host's page cache holds it) · mount options",
            "      noatime,data=writeback",
            "  tmpfs-huge: mkfs.xfs -f -s size=4096 {dev}",
            "    on device /dev/sdb · mount options (defaults)",
        ]
    );

    let mount = json!({"source": "server:/export", "options": "vers=4.2", "fs_type": "nfs"});
    let commands = json!({"options": "", "commands": ["zpool create p /dev/sdc"]});
    let run = run_with([Some(mount), Some(commands)]);
    let markdown = render(&Markdown, &run);
    assert_eq!(
        markdown_block(&markdown)[2..],
        [
            "| tmpfs | – | mount of server:/export | vers=4.2 |",
            "| tmpfs-huge | – | made by its setup commands | – |",
        ],
        "{markdown}"
    );
    assert_eq!(
        terminal_block(&terminal(&run, 100)),
        [
            "  tmpfs: mount of server:/export",
            "    mount options vers=4.2",
            "  tmpfs-huge: made by its setup commands",
        ]
    );

    let mut recorded = on_loop_image(true);
    recorded["recorded"] = json!(true);
    let run = run_with([Some(recorded), Some(on_loop_image(true))]);
    let text = terminal(&run, 100);
    let on: Vec<&str> = terminal_block(&text)
        .into_iter()
        .filter_map(|line| line.strip_prefix("    on "))
        .collect();
    assert_eq!(on.len(), 2, "{text}");
    assert!(
        on[0].starts_with("a recorded loop image, direct I/O · "),
        "{on:?}"
    );
    assert!(on[1].starts_with("a loop image, direct I/O · "), "{on:?}");
}

#[test]
fn a_run_without_built_targets_has_no_block() {
    let run = run_with([None, None]);
    assert!(!terminal(&run, 100).contains(TITLE));
    assert!(!render(&Markdown, &run).contains(TITLE));
}

#[test]
fn html_says_where_the_image_was_and_its_direct_io() {
    let run = run_with([Some(on_loop_image(false)), None]);
    let html = render(&Html, &run)
        .replace("&#x2f;", "/")
        .replace("&#x27;", "'");
    let row = |name: &str| {
        let start = html
            .find(&format!("<th>{name}</th>"))
            .unwrap_or_else(|| panic!("no row {name:?} in:\n{html}"));
        html[start..].lines().next().unwrap().to_string()
    };
    let cell = |value: &str| format!("<td class=\"env\">{value}</td>");
    let unbuilt = cell("-");
    for (name, value) in [
        ("built by mkfs", MKFS),
        (
            "built on",
            "a loop image, no direct I/O (the host's page cache holds it)",
        ),
        ("built mount options", OPTIONS),
    ] {
        assert!(
            row(name).ends_with(&format!("{}{unbuilt}</tr>", cell(value))),
            "{}",
            row(name)
        );
    }
}

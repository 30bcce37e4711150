//! The verdict on top of every report: counts of significant differences,
//! the sentence made of them, the risk flags beside them; a reference
//! target shown as the ceiling and left out of ratings and best marks.
mod common;

use std::path::Path;

use common::{SMALL_SUITE, Sentinel, TmpfsMount, assert_no_scratch_left, read_json, run};
use fsbench::analysis::Summary;
use fsbench::report::Reporter;
use fsbench::report::html::Html;
use fsbench::report::markdown::Markdown;
use fsbench::report::terminal::Terminal;
use fsbench::result::RunResult;
use fsbench::result::env::Risk;
use fsbench::results::load;

fn fixture() -> RunResult {
    load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-two-targets.json"))
        .unwrap()
}

/// The fixture with its second target made a copy of the first, but for a
/// 4k random read three times as fast, and mounted data=writeback with
/// barriers off: one significant difference, and a lost safety.
fn one_clear_difference() -> RunResult {
    let mut run = fixture();
    let first = run.targets[0].workloads.clone();
    for (copy, original) in run.targets[1].workloads.iter_mut().zip(&first) {
        copy.metrics = original.metrics.clone();
    }
    for (target, values) in [(0, [100.0, 101.0, 99.0]), (1, [300.0, 303.0, 297.0])] {
        let reps = run.targets[target]
            .workloads
            .iter_mut()
            .filter(|w| w.name() == "4k-rand-read");
        for (workload, value) in reps.zip(values) {
            let metric = workload.metrics.iter_mut().find(|m| m.name == "io_rate");
            metric.expect("the fixture has io_rate").value = value;
        }
    }
    let env = run.targets[1].env.as_mut().expect("the fixture has an env");
    for (code, message) in [
        (
            "data_writeback",
            "data=writeback: recent files can hold garbage",
        ),
        ("nobarrier", "barriers off: synced data can be lost"),
    ] {
        env.risks.push(Risk {
            code: code.into(),
            message: message.into(),
        });
    }
    run
}

const SENTENCE: &str =
    "tmpfs-huge: 3.0x faster 4k-rand-read I/O rate (2.9x–3.1x); no difference in";
const CRASH: &str = "not crash-safe: data=writeback, barriers off.";

#[test]
fn the_terminal_report_starts_with_the_verdict() {
    let run = one_clear_difference();
    let text = Terminal { width: 100 }
        .render(&run, &Summary::of(&run))
        .unwrap();
    let verdict = text
        .find("Verdict against tmpfs (the baseline)")
        .expect(&text);
    let first_table = text.find("bonnie (").expect(&text);
    assert!(verdict < first_table, "{text}");
    let block = &text[verdict..first_table];
    assert!(
        block.contains("faster in 1, slower in 0, no difference in"),
        "{block}"
    );
    assert!(
        block.contains("risks: data=writeback, barriers off"),
        "{block}"
    );
    // The sentence, its wrapped continuation lines joined.
    let start = block.find("→ ").expect(block);
    let sentence: Vec<&str> = block[start..]
        .lines()
        .take_while(|l| l.starts_with("→ ") || l.starts_with("  "))
        .map(str::trim)
        .collect();
    let sentence = sentence.join(" ");
    assert!(sentence.contains(SENTENCE), "{sentence}");
    assert!(sentence.ends_with(CRASH), "{sentence}");
}

#[test]
fn markdown_and_html_put_the_verdict_before_anything_else() {
    let run = one_clear_difference();
    let summary = Summary::of(&run);
    let markdown = Markdown.render(&run, &summary).unwrap();
    let verdict = markdown.find("## Verdict against tmpfs").expect(&markdown);
    assert!(verdict < markdown.find("## bonnie").unwrap(), "{markdown}");
    assert!(markdown.contains(&format!("> {SENTENCE}")), "{markdown}");

    let html = Html.render(&run, &summary).unwrap();
    let verdict = html.find("id=\"verdict\"").expect("a verdict section");
    assert!(verdict < html.find("id=\"risks\"").unwrap());
    // The template escapes `/` (I/O) as an HTML entity.
    let escaped = |text: &str| text.replace('/', "&#x2f;");
    assert!(html.contains(&escaped(SENTENCE)) && html.contains(&escaped(CRASH)));
}

/// Nothing significant, nothing claimed: the same run against itself.
#[test]
fn identical_targets_get_no_difference_and_no_claim() {
    let mut run = fixture();
    run.targets[1].workloads = run.targets[0].workloads.clone();
    let text = Terminal { width: 100 }
        .render(&run, &Summary::of(&run))
        .unwrap();
    assert!(text.contains("faster in 0, slower in 0"), "{text}");
    assert!(
        text.contains("→ tmpfs-huge: no difference of 5 % or more from tmpfs in"),
        "{text}"
    );
    assert!(!text.contains("x faster"), "{text}");
}

#[test]
fn compare_says_what_changed_then_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let save = |name: &str, run: &RunResult| {
        let path = dir.path().join(name);
        std::fs::write(&path, serde_json::to_string(run).unwrap()).unwrap();
        path.display().to_string()
    };
    // One target per run: the second run's is the faster, riskier one.
    let mut before = one_clear_difference();
    before.targets.truncate(1);
    let mut after = one_clear_difference();
    after.targets.remove(0);
    let (a, b) = (save("a.json", &before), save("b.json", &after));
    let out = run(&["compare", &a, &b]);
    out.assert_success();
    let text = &out.stdout;
    let risk = text.find("data=writeback").expect(text);
    let verdict = text.find("b.json: Verdict against a.json").expect(text);
    assert!(risk < verdict, "{text}");
    assert!(text.contains("faster in 1, slower in 0"), "{text}");
    assert!(text.contains("3.0x faster 4k-rand-read I/O rate"), "{text}");
}

#[test]
fn a_reference_is_the_ceiling_not_a_contender() {
    let (Some(a), Some(b), Some(ram)) = (
        TmpfsMount::new("256m"),
        TmpfsMount::new("256m"),
        TmpfsMount::new("256m"),
    ) else {
        return;
    };
    let sentinels = [a.path(), b.path(), ram.path()].map(Sentinel::plant);
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite.toml");
    std::fs::write(&suite, SMALL_SUITE).unwrap();
    let json = dir.path().join("run.json");
    let targets = [
        "--target".to_string(),
        format!("a={}", a.arg()),
        "--target".into(),
        format!("b={}", b.arg()),
        "--reference".into(),
        format!("ram={}", ram.arg()),
    ];
    let base = ["run", "--suite", suite.to_str().unwrap(), "--no-save"];

    let refused = run(&[
        &base[..],
        &targets.each_ref().map(String::as_str),
        &["--baseline", "ram"],
    ]
    .concat());
    assert_eq!(refused.code(), 2, "{refused}");
    assert!(refused.stderr.contains("reference"), "{refused}");

    let out = run(&[
        &base[..],
        &targets.each_ref().map(String::as_str),
        &["--repeat", "2", "--json", json.to_str().unwrap()],
    ]
    .concat());
    out.assert_success().assert_no_panic();
    for (mount, sentinel) in [&a, &b, &ram].iter().zip(&sentinels) {
        assert_no_scratch_left(mount.path());
        sentinel.assert_intact();
    }
    let record = read_json(&json);
    let references: Vec<bool> = record["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["reference"].as_bool().unwrap_or(false))
        .collect();
    assert_eq!(references, [false, false, true]);
    assert!(out.stdout.contains("ram (reference)"), "{out}");
    assert!(out.stdout.contains("of ram (the reference)"), "{out}");

    let run = load(&json).unwrap();
    let summary = Summary::of(&run);
    assert_eq!(summary.references, [2]);
    let rated: Vec<String> = summary.profiles().into_iter().map(|p| p.target).collect();
    assert_eq!(rated, ["a", "b"], "the reference is not rated");
    for metric in summary.workloads.iter().flat_map(|w| &w.metrics) {
        assert_ne!(
            metric.best,
            Some(2),
            "{} marks the reference best",
            metric.name
        );
    }
}

/// `fsbench report --min-effect`: the counts follow it and the legend
/// names it; 0 counts every significant difference; nonsense is a
/// one-line usage error.
#[test]
fn the_minimum_effect_is_the_readers_to_change() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-two-targets.json");
    let file = file.to_str().unwrap();
    let faster = |text: &str| -> usize {
        let counts = text.lines().find(|l| l.contains("faster in ")).unwrap();
        let after = counts.split("faster in ").nth(1).unwrap();
        after
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let report = |min_effect: &str| {
        let out = run(&["report", file, "--min-effect", min_effect]);
        out.assert_success();
        out.stdout.clone()
    };
    let (none, default, large) = (report("0"), report("5%"), report("60%"));
    assert!(none.contains("at least 0 % apart"), "{none}");
    assert!(large.contains("at least 60 % apart"), "{large}");
    assert!(faster(&none) >= faster(&default), "{none}\n{default}");
    assert!(faster(&default) > faster(&large), "{default}\n{large}");
    for bad in ["-1", "100%", "five"] {
        run(&["report", file, "--min-effect", bad]).assert_error(2, &["--min-effect"]);
    }
}

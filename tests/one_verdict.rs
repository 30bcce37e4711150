//! One result, one verdict: what `fsbench run` says at the end of a run is
//! what `fsbench report` says of the result it saved, every time, and in
//! every format that has a verdict. A user once read "1.4x slower postmark
//! data read" live and "1.4x slower postmark create" in the report of the
//! same file: PostMark's create, delete, data read and data written rates
//! are the same counts over the same time, so their speed-ups tie but for
//! rounding, and the saved figures were read back a unit in the last place
//! off. And `--baseline` was not kept, so the report compared every target
//! with another one.
mod common;

use std::path::{Path, PathBuf};

use common::{TmpfsMount, run};

/// PostMark alone: its tied rates are the case, and three repetitions
/// (`--repeat 3`, a fixed count) are over in about a second.
const SUITE: &str = r#"
description = "PostMark, repeated"
repeat = 3

[[workload]]
kind = "postmark"
commands = ["set number 400", "set transactions 800", "set buffering false"]
"#;

/// The verdict's block of a terminal report: its heading and every line
/// after it up to the first that is neither indented nor a sentence.
fn verdict_block(report: &str) -> String {
    let mut lines = report.lines().skip_while(|l| !l.starts_with("Verdict"));
    let heading = lines
        .next()
        .unwrap_or_else(|| panic!("no verdict:\n{report}"));
    let rest = lines.take_while(|l| l.starts_with("  ") || l.starts_with("→ "));
    std::iter::once(heading)
        .chain(rest)
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The sentences of a terminal report, each with its wrapped lines joined.
fn sentences(report: &str) -> Vec<String> {
    let mut sentences: Vec<String> = Vec::new();
    for line in verdict_block(report).lines() {
        match (line.strip_prefix("→ "), sentences.last_mut()) {
            (Some(start), _) => sentences.push(start.to_string()),
            (None, Some(last)) if line.starts_with("  ") => {
                last.push(' ');
                last.push_str(line.trim_start());
            }
            _ => {}
        }
    }
    sentences
}

/// Markdown's sentences (its `> ` lines), its escapes undone.
fn markdown_sentences(markdown: &str) -> Vec<String> {
    let unescape = |text: &str| {
        let mut out = String::new();
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            out.extend(match c {
                '\\' => chars.next(),
                c => Some(c),
            });
        }
        out
    };
    markdown
        .lines()
        .filter_map(|l| l.strip_prefix("> "))
        .map(unescape)
        .collect()
}

/// Text as the HTML report escapes it.
fn html_escaped(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            '/' => out.push_str("&#x2f;"),
            c => out.push(c),
        }
    }
    out
}

/// `fsbench ARGS...`, which must succeed: its standard output.
fn fsbench(args: &[&str]) -> String {
    let out = run(args);
    out.assert_success();
    out.stdout
}

fn saved_result(dir: &Path) -> PathBuf {
    let saved: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the results directory")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    match &saved[..] {
        [one] => one.clone(),
        other => panic!("one saved result expected in {}: {other:?}", dir.display()),
    }
}

#[test]
fn a_saved_result_gives_the_verdict_the_run_gave() {
    // Dropped (unmounted) also when an assertion fails.
    let (Some(a), Some(b)) = (TmpfsMount::new("64m"), TmpfsMount::new("64m")) else {
        return;
    };
    let results = tempfile::tempdir().expect("a results directory");
    let suite = results.path().join("postmark.toml");
    std::fs::write(&suite, SUITE).expect("the suite file");
    let saved_dir = results.path().join("saved");
    let (target_a, target_b) = (format!("a={}", a.arg()), format!("b={}", b.arg()));
    // The second target as the baseline: the run's own choice, not the
    // default a report would otherwise take.
    let live = fsbench(&[
        "run",
        "--suite",
        suite.to_str().unwrap(),
        "-t",
        &target_a,
        "-t",
        &target_b,
        "--baseline",
        "b",
        "--repeat",
        "3",
        "-q",
        "--save-dir",
        saved_dir.to_str().unwrap(),
    ]);
    let saved = saved_result(&saved_dir);
    let file = saved.to_str().unwrap();

    let live_block = verdict_block(&live);
    assert!(
        live_block.starts_with("Verdict against b (the baseline):"),
        "{live_block}"
    );
    let live_sentences = sentences(&live);
    assert_eq!(
        live_sentences.len(),
        1,
        "one compared target:\n{live_block}"
    );
    assert!(live_sentences[0].starts_with("a: "), "{live_sentences:?}");

    for time in ["first", "second"] {
        let report = fsbench(&["report", file]);
        assert_eq!(
            verdict_block(&report),
            live_block,
            "the {time} report of {file} gives another verdict"
        );
        assert_eq!(sentences(&report), live_sentences);
        // The whole report, not only its verdict: nothing in it is of the
        // moment it was rendered.
        assert_eq!(
            report, live,
            "the {time} report of {file} is not the live one"
        );
    }

    let markdown = fsbench(&["report", file, "--markdown"]);
    assert_eq!(markdown_sentences(&markdown), live_sentences, "{markdown}");
    let html_file = results.path().join("report.html");
    fsbench(&["report", file, "--html", html_file.to_str().unwrap()]);
    let html = std::fs::read_to_string(&html_file).expect("the HTML report");
    assert!(
        html.contains(&html_escaped(&live_sentences[0])),
        "the HTML report lacks the sentence {:?}",
        live_sentences[0]
    );
    // `fsbench results` shows the first compared target's sentence.
    let listing: serde_json::Value = serde_json::from_str(&fsbench(&[
        "results",
        "--dir",
        saved_dir.to_str().unwrap(),
        "--json",
        "-",
    ]))
    .expect("the listing as JSON");
    assert_eq!(listing["runs"][0]["verdict"], live_sentences[0].as_str());

    // The cause, whatever the run measured: the result read and written
    // again is the file itself, every figure to its last bit.
    let text = std::fs::read_to_string(&saved).expect("the saved result");
    assert_eq!(
        fsbench(&["report", file, "--format", "json"]),
        text,
        "{file} does not read back as written"
    );
}
